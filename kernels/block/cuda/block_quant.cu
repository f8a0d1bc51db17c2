// kernels/block/cuda/block_quant.cu — the CUDA block quantizer (MX, NVFP4) for fp32 arrays: kernels, launches and
// the CUDA-free API of kernels/block/device_block_quant.hpp. Layout and arithmetic: kernels/block/cuda/block_quant.cuh.
#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "kernels/block/cuda/block_quant.cuh"
#include "kernels/device/cuda_check.cuh"
#include "kernels/block/device_block_quant.hpp"

namespace fpcert {
namespace blockq {
namespace {

constexpr int kThreads = 256;

/// One element's code and its block's scale, given the block's amax bits (NaN/Inf: >= 0x7F800000).
struct BlockCode {
  std::uint32_t scale;
  std::uint32_t code;
};
__device__ __forceinline__ BlockCode code_of(const QuantParams& p, std::uint32_t amax, std::uint32_t xb, bool valid) {
  const bool nonfinite = amax >= 0x7F800000u;
  BlockCode r{0, 0};
  bool sat = false;
  if (p.pow2) {
    r.scale = e8m0_code(p.elem, p.rule, amax, nonfinite);
    if (!nonfinite && valid) r.code = quantize_pow2(p.elem, xb, static_cast<int>(r.scale) - 127, &sat);
  } else {
    r.scale = nvfp4_scale_code(p.scale_elem, p.scale_mode, amax, nonfinite, 6.0 * p.ts);
    if (!nonfinite && valid) {
      const double d = static_cast<double>(e4m3_value(r.scale)) * p.ts;  // exact: 4 x 24 bits
      r.code = round_quotient(p.elem, static_cast<double>(emu::bits_f32(xb)), d, Mode::NearestEven, &sat);
    }
  }
  return r;
}

/// Blocks along rows: one warp holds 32 / B blocks, lane l entry l % B of block l / B.
__global__ void __launch_bounds__(kThreads) quantize_rows(QuantParams p) {
  const int lane = static_cast<int>(threadIdx.x) & 31, B = p.block;
  const std::int64_t nb = (p.cols + B - 1) / B;                // blocks per row
  const std::int64_t total = p.rows * nb;
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * (kThreads / 32);
  const int per_warp = 32 / B;
  for (std::int64_t w = (static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x) / 32; w * per_warp < total; w += warps) {
    const std::int64_t b = w * per_warp + lane / B;          // this lane's block
    const std::int64_t row = b / nb, bc = b % nb;
    const std::int64_t col = bc * B + lane % B;
    const bool valid = b < total && col < p.cols;
    const std::uint32_t xb = valid ? emu::f32_bits(p.x[row * p.ld + col]) : 0u;
    std::uint32_t amax = xb & 0x7FFFFFFFu;
    for (int off = B / 2; off > 0; off >>= 1) amax = max(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, off, B));
    const BlockCode c = code_of(p, amax, xb, valid);
    if (valid) {
      p.codes[row * p.cols + col] = static_cast<std::uint8_t>(c.code);
      if (lane % B == 0) p.scales[row * p.scale_cols + bc] = static_cast<std::uint8_t>(c.scale);
    }
  }
}

/// Blocks down columns: one thread per (block row, column), columns fastest.
__global__ void __launch_bounds__(kThreads) quantize_cols(QuantParams p) {
  const int B = p.block;
  const std::int64_t nbr = (p.rows + B - 1) / B;
  const std::int64_t total = nbr * p.cols;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kThreads;
  for (std::int64_t t = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x; t < total; t += stride) {
    const std::int64_t br = t / p.cols, col = t % p.cols;
    const std::int64_t r0 = br * B, r1 = min(p.rows, r0 + B);
    std::uint32_t amax = 0;
    for (std::int64_t r = r0; r < r1; ++r) amax = max(amax, emu::f32_bits(p.x[r * p.ld + col]) & 0x7FFFFFFFu);
    std::uint32_t scale = 0;
    for (std::int64_t r = r0; r < r1; ++r) {
      const BlockCode c = code_of(p, amax, emu::f32_bits(p.x[r * p.ld + col]), true);
      p.codes[r * p.cols + col] = static_cast<std::uint8_t>(c.code);
      scale = c.scale;
    }
    p.scales[br * p.scale_cols + col] = static_cast<std::uint8_t>(scale);
  }
}

__global__ void __launch_bounds__(kThreads) amax_kernel(const float* x, std::int64_t rows, std::int64_t cols, std::int64_t ld, unsigned* out) {
  const std::int64_t total = rows * cols, stride = static_cast<std::int64_t>(gridDim.x) * kThreads;
  unsigned m = 0;
  for (std::int64_t t = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x; t < total; t += stride) {
    const unsigned b = emu::f32_bits(x[(t / cols) * ld + t % cols]) & 0x7FFFFFFFu;
    if (b < 0x7F800000u) m = max(m, b);  // finite values only: NaN and Inf blocks are NaN blocks
  }
  for (int off = 16; off > 0; off >>= 1) m = max(m, __shfl_xor_sync(0xFFFFFFFFu, m, off));
  if ((threadIdx.x & 31) == 0) atomicMax(out, m);
}

unsigned grid_for(std::int64_t work, int per_block) {
  const std::int64_t g = (work + per_block - 1) / per_block;
  return static_cast<unsigned>(std::max<std::int64_t>(1, std::min<std::int64_t>(g, 65535 * 16)));
}

}  // namespace

QuantParams quant_params(const BlockFormat& f, ScaleRule r, int block, int axis) {
  QuantParams p;
  p.elem = elem_of(f);
  p.rule = rule_of(r);
  p.pow2 = f.pow2_scales();
  p.scale_elem = elem_of(e4m3);
  p.scale_mode = nvfp4_scale_mode(r);
  p.block = block > 0 ? block : f.block;
  p.axis = axis == 0 ? 0 : 1;
  return p;
}

void launch_quantize(const QuantParams& p, cudaStream_t stream) {
  if (p.rows == 0 || p.cols == 0) return;
  if (p.axis == 1) {
    const std::int64_t blocks = p.rows * ((p.cols + p.block - 1) / p.block);
    const std::int64_t warps = (blocks + (32 / p.block) - 1) / (32 / p.block);
    quantize_rows<<<grid_for(warps * 32, kThreads), kThreads, 0, stream>>>(p);
    FPCERT_CUDA_LAUNCH_CHECK("quantize_rows");
  } else {
    const std::int64_t work = ((p.rows + p.block - 1) / p.block) * p.cols;
    quantize_cols<<<grid_for(work, kThreads), kThreads, 0, stream>>>(p);
    FPCERT_CUDA_LAUNCH_CHECK("quantize_cols");
  }
}

void launch_amax(const float* x, std::int64_t rows, std::int64_t cols, std::int64_t ld, unsigned* amax_bits, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  amax_kernel<<<grid_for(rows * cols, kThreads * 8), kThreads, 0, stream>>>(x, rows, cols, ld, amax_bits);
  FPCERT_CUDA_LAUNCH_CHECK("amax_kernel");
}

double device_tensor_scale(const float* x, std::int64_t rows, std::int64_t cols, std::int64_t ld, unsigned* scratch, cudaStream_t stream) {
  FPCERT_CUDA_CHECK(cudaMemsetAsync(scratch, 0, sizeof(unsigned), stream));
  launch_amax(x, rows, cols, ld, scratch, stream);
  unsigned bits = 0;
  FPCERT_CUDA_CHECK(cudaMemcpyAsync(&bits, scratch, sizeof bits, cudaMemcpyDeviceToHost, stream));
  FPCERT_CUDA_CHECK(cudaStreamSynchronize(stream));
  return nvfp4_tensor_scale(static_cast<double>(emu::bits_f32(bits)));
}

}  // namespace blockq

// ---- the CUDA-free API ----

bool device_quantizer_supports(const BlockFormat& f, const BlockQuantOptions& o, std::string* why) {
  std::string w;
  const int B = o.block > 0 ? o.block : f.block;
  if (!rule_valid(f, o.rule, &w)) {
  } else if (o.rounding != Rounding::NearestEven) {
    w = "the CUDA quantizer rounds elements to nearest-even only (the model takes every mode)";
  } else if (B != 16 && B != 32) {
    w = "the CUDA quantizer takes blocks of 16 or 32 (one warp-level reduction)";
  }
  if (why) *why = w;
  return w.empty();
}

namespace {
/// A device allocation freed on scope exit.
struct DevBuf {
  void* p = nullptr;
  explicit DevBuf(std::size_t bytes) { FPCERT_CUDA_CHECK(cudaMalloc(&p, bytes ? bytes : 1)); }
  ~DevBuf() { cudaFree(p); }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
};

void require_device() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    cudaGetLastError();
    throw DeviceError("no CUDA device");
  }
}

/// Median over `runs` of the time of the work `fn` queues on the default stream (CUDA events, ms).
template <typename F>
double median_ms(int runs, F fn) {
  cudaEvent_t e0, e1;
  FPCERT_CUDA_CHECK(cudaEventCreate(&e0));
  FPCERT_CUDA_CHECK(cudaEventCreate(&e1));
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    FPCERT_CUDA_CHECK(cudaEventRecord(e0, nullptr));
    fn();
    FPCERT_CUDA_CHECK(cudaEventRecord(e1, nullptr));
    FPCERT_CUDA_CHECK(cudaEventSynchronize(e1));
    float t = 0;
    FPCERT_CUDA_CHECK(cudaEventElapsedTime(&t, e0, e1));
    ms.push_back(t);
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}
}  // namespace

DeviceQuantized quantize_on_device(const BlockFormat& f, const BlockQuantOptions& o, const float* x, std::int64_t rows,
                                   std::int64_t cols, int timed) {
  std::string why;
  if (!device_quantizer_supports(f, o, &why)) throw std::invalid_argument(why);
  require_device();
  FPCERT_CUDA_CHECK(cudaSetDevice(0));
  blockq::QuantParams p = blockq::quant_params(f, o.rule, o.block, o.axis);
  const std::int64_t B = p.block;
  DeviceQuantized r;
  r.scale_rows = p.axis == 1 ? rows : (rows + B - 1) / B;
  r.scale_cols = p.axis == 1 ? (cols + B - 1) / B : cols;
  const auto n = static_cast<std::size_t>(rows * cols), ns = static_cast<std::size_t>(r.scale_rows * r.scale_cols);
  DevBuf dx(n * 4), dc(n), ds(ns), dscratch(sizeof(unsigned));
  FPCERT_CUDA_CHECK(cudaMemcpy(dx.p, x, n * 4, cudaMemcpyHostToDevice));
  cudaStream_t stream = nullptr;
  blockq::bind(p, static_cast<const float*>(dx.p), rows, cols, cols, static_cast<std::uint8_t*>(dc.p), static_cast<std::uint8_t*>(ds.p));
  if (f.tensor_scale)
    p.ts = o.tensor_scale != 0 ? o.tensor_scale : blockq::device_tensor_scale(p.x, rows, cols, cols, static_cast<unsigned*>(dscratch.p), stream);
  r.tensor_scale = f.tensor_scale ? p.ts : 1.0;
  blockq::launch_quantize(p, stream);
  FPCERT_CUDA_CHECK(cudaDeviceSynchronize());
  if (timed > 0) {
    blockq::launch_quantize(p, stream);  // warm-up
    r.kernel_ms = median_ms(timed, [&] { blockq::launch_quantize(p, stream); });
  }
  r.codes.resize(n);
  r.scales.resize(ns);
  FPCERT_CUDA_CHECK(cudaMemcpy(r.codes.data(), dc.p, n, cudaMemcpyDeviceToHost));
  FPCERT_CUDA_CHECK(cudaMemcpy(r.scales.data(), ds.p, ns, cudaMemcpyDeviceToHost));
  return r;
}

double device_copy_bandwidth_gbs(std::size_t bytes, int runs) {
  require_device();
  DevBuf a(bytes), b(bytes);
  FPCERT_CUDA_CHECK(cudaMemset(a.p, 0, bytes));
  FPCERT_CUDA_CHECK(cudaMemcpy(b.p, a.p, bytes, cudaMemcpyDeviceToDevice));  // warm-up
  const double ms = median_ms(runs, [&] { FPCERT_CUDA_CHECK(cudaMemcpyAsync(b.p, a.p, bytes, cudaMemcpyDeviceToDevice, nullptr)); });
  // A copy reads and writes every byte.
  return 2.0 * static_cast<double>(bytes) / (ms * 1e-3) / 1e9;
}

}  // namespace fpcert
