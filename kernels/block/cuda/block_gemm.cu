// kernels/block/cuda/block_gemm.cu — block-scaled GEMMs (OCP MX, NVFP4) emulated on the H200's existing tensor-core
// instructions, with the CPU models of kernels/block/block_scaled.hpp as their declared arithmetic:
//   gemm_<f>_<rule>_deqbf16_f32acc_mma_sm80   quantize A and B along K (kernels/block/cuda/block_quant.cu), dequantize
//                                             every element into bf16 (MX: element * 2^e; NVFP4: element * S),
//                                             then mma_gemm<BF16> (kernels/gemm/cuda/mma_kernel.cuh); NVFP4: C = RN(C * tt)
//   gemm_<f>_<rule>_deqbf16_f32acc_wgmma_sm90 the same, the bf16 GEMM on Hopper's wgmma + TMA kernel (issue 43)
//   gemm_<f>_<rule>_blocksum_f32acc_mma_sm80  quantize, element values (unscaled) into fp16 (exact), then
//                                             block_mma_gemm (kernels/block/cuda/block_gemm_kernel.cuh): per K-block an
//                                             exact partial sum, scaled and added in fp32 — bit for bit the CPU
//                                             model's order for E2M3, E3M2, E2M1, int8 and NVFP4 elements
//   gemm_<f>_<rule>_blocksum_f32acc_wgmma_sm90 the same arithmetic on wgmma + TMA (block_gemm_wgmma_kernel.cuh)
// Inputs are fp32 (the runner's codes of the problem's values); the quantized operands live in a grow-only
// workspace. Every launch is checked; the runner synchronises.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "kernels/block/block_scaled.hpp"
#include "kernels/block/cuda/block_gemm_kernel.cuh"
#include "kernels/block/cuda/block_gemm_wgmma_kernel.cuh"
#include "kernels/block/cuda/block_quant.cuh"
#include "kernels/device/cuda_check.cuh"
#include "kernels/emu/cuda/emu_host.cuh"
#include "kernels/gemm/cuda/mma_host.cuh"
#include "kernels/gemm/cuda/wgmma_host.cuh"
#include "kernels/register.hpp"

namespace fpcert {
namespace {

using namespace mma_device;

/// The 16-bit operand codes of every element code: unscaled fp16 values (blocksum) or the element's fp32
/// value for the bf16 dequantization; NaN scales handled in the kernel.
struct ElemTable {
  float value[256];         ///< element value (exact)
  std::uint16_t f16[256];   ///< its fp16 code (exact for every element format: at most 8 significant bits, 2^-16..57344)
};

ElemTable elem_table(const BlockFormat& f) {
  ElemTable t{};
  for (unsigned c = 0; c < 256; ++c) {
    const double v = c < f.element_codes() || f.int_elements ? element_value(f, static_cast<std::uint8_t>(c)) : 0.0;
    t.value[c] = static_cast<float>(v);
    t.f16[c] = static_cast<std::uint16_t>(round_double(f16, v, Rounder::nearest(f16)).code);
  }
  return t;
}

constexpr int kThreads1d = 256;

/// Element codes -> 16-bit operand codes. bf16 = true: RN_bf16(element * scale) with the block's scale (MX:
/// 2^e by an exact fp32 rescale, then one bf16 rounding; NVFP4: element * S, exact); false: the element's
/// fp16 code. axis: as the quantizer's layout (1: scales per row block, 0: per column block). out: rows x cols,
/// row-major with leading dimension ld_out (>= cols: the wgmma kernels' 16-byte rows; the padding is not written).
__global__ void __launch_bounds__(kThreads1d) to_operand16(ElemTable t, bool bf16, bool pow2, const std::uint8_t* __restrict__ codes,
                                                          const std::uint8_t* __restrict__ scales, std::int64_t rows, std::int64_t cols,
                                                          int axis, int block, std::int64_t scale_cols, std::uint16_t* __restrict__ out,
                                                          std::int64_t ld_out) {
  const std::int64_t total = rows * cols, stride = static_cast<std::int64_t>(gridDim.x) * kThreads1d;
  for (std::int64_t x = static_cast<std::int64_t>(blockIdx.x) * kThreads1d + threadIdx.x; x < total; x += stride) {
    const std::uint8_t code = codes[x];
    const std::int64_t i = x / cols, j = x % cols;
    if (!bf16) {
      out[i * ld_out + j] = t.f16[code];
      continue;
    }
    const std::uint32_t sc = axis == 1 ? scales[i * scale_cols + j / block] : scales[(i / block) * scale_cols + j];
    float v;
    if (pow2) v = sc == 0xFFu ? __uint_as_float(0x7FC00000u) : emu::ldexp_rn(t.value[code], static_cast<int>(sc) - 127);
    else v = __fmul_rn(t.value[code], blockq::e4m3_value(sc));
    out[i * ld_out + j] = emu::bf16_rn_code(v);
  }
}

/// C = RN(C * tt) over the m x n written part of C (NVFP4's tensor scales, deqbf16 path).
__global__ void __launch_bounds__(kThreads1d) scale_output(float* c, std::int64_t m, std::int64_t n, std::int64_t ldc, float tt) {
  const std::int64_t total = m * n, stride = static_cast<std::int64_t>(gridDim.x) * kThreads1d;
  for (std::int64_t x = static_cast<std::int64_t>(blockIdx.x) * kThreads1d + threadIdx.x; x < total; x += stride)
    c[(x / n) * ldc + x % n] = __fmul_rn(c[(x / n) * ldc + x % n], tt);
}

unsigned grid1d(std::int64_t work) {
  return static_cast<unsigned>(std::max<std::int64_t>(1, std::min<std::int64_t>((work + kThreads1d - 1) / kThreads1d, 65535 * 8)));
}

/// The deqbf16 kernels' order text: the quantizer, the dequantization, and the bf16 GEMM that runs (mma.sync or wgmma).
std::string deq_cuda_order(bool wgmma) {
  return std::string("A and B quantized along K by the CUDA quantizer (element- and scale-exact with the model; docs/block_formats.md), "
                     "every element dequantized into bf16 (MX: element * 2^e, exact inside bf16's range; NVFP4: element * S, exact), then ") +
         (wgmma ? "wgmma m64n256k16 bf16 from TMA-loaded shared memory with fp32 accumulation over K (gemm_bf16_f32acc_wgmma_sm90: "
                  "one consumer warpgroup owns each C element for all of K, K zero-padded to stages of 64, "
                : "mma.sync.m16n8k16 bf16 with fp32 accumulation over K (mma_gemm: one warp owns each C element for all of K, ") +
         "bitwise reproducible; the order and alignment inside one MMA are not specified by NVIDIA, modelled as fp32 "
         "accumulation rounded toward zero, or, with a validated behaviour card of " + (wgmma ? "wgmma_bf16_f32" : "mma_bf16_f32") +
         ", by the card's block model)";
}

/// The bf16 GEMM of the deqbf16 path on Hopper (wgmma = true): fpcert's wgmma + TMA kernel (kernels/gemm/cuda/wgmma.cu).
constexpr const char* kWgmmaBf16 = "gemm_bf16_f32acc_wgmma_sm90";

class BlockGemmCuda final : public GemmKernel {
 public:
  BlockGemmCuda(const BlockFormat& f, ScaleRule rule, BlockGemmPath path, bool wgmma = false)
      : f_(f), rule_(rule), path_(path), wgmma_(wgmma) {
    name_ = name_of(f, rule, path, wgmma);
    traits_ = block_gemm_traits(f, rule, path);
    if (path == BlockGemmPath::DeqBf16) {
      traits_.acc_rounding = Rounding::TowardZero;
      traits_.order = deq_cuda_order(wgmma);
      if (f.tensor_scale) traits_.order += "; then C = RN_f32(acc * RN_f32(s_tA * s_tB))";
      // mma.sync sums inside the instruction in its own way, not the CPU model's sequential FMA: the K-loop
      // of gemm_bf16_f32acc_mma_sm80 (the same mma_gemm<Mma::BF16> mainloop, K zero-padded to whole stages),
      // whose block model the behaviour card of mma_bf16_f32 gives once certify installs it (bitwise tier on
      // the dequantized operands); until then the envelope judges.
      const FinalScale fs = traits_.sum_order.final_scale;
      if (!wgmma) {
        traits_.sum_order = SummationOrder::tensor_core(MmaInfo<Mma::BF16>::kK, "mma_bf16_f32", kStageBytes / MmaInfo<Mma::BF16>::kBytes);
      } else {  // the K-loop of the kernel that runs the GEMM, as it declares it (wgmma k-steps of 16, stages of 64)
        traits_.sum_order = wgmma_kernel().traits().sum_order;
      }
      traits_.sum_order.final_scale = fs;
    } else {
      traits_.order += std::string("; on the device: element values in fp16, each block's partial sum by ") +
                       (wgmma ? "wgmma m64n128k16 f16 from TMA-loaded shared memory, a chain from +0 per block (128 x 128 tiles, "
                                "the block's scales staged in shared memory beside the stage)"
                              : "mma.sync.m16n8k16 f16 from a zeroed fragment") +
                       " (exact: at most 23 significant bits), the scaling by one fp32 rounding "
                       "(emu::ldexp_rn or __fmul_rn by S_A S_B), the addition by __fadd_rn: bit for bit the CPU model";
    }
    table_ = elem_table(f);
  }
  /// gemm_<f>_<rule>_<path>_f32acc_{mma_sm80,wgmma_sm90} (registration names the wgmma kernels without constructing
  /// them: their traits come from the registry's gemm_bf16_f32acc_wgmma_sm90, not available while it is being filled).
  static std::string name_of(const BlockFormat& f, ScaleRule rule, BlockGemmPath path, bool wgmma) {
    return "gemm_" + std::string(f.tag) + "_" + std::string(to_string(rule)) + "_" + std::string(to_string(path)) + "_f32acc" +
           (wgmma ? "_wgmma_sm90" : "_mma_sm80");
  }
  const std::string& name() const override { return name_; }
  std::string description() const override {
    return std::string(f_.tag) + " (" + std::string(to_string(rule_)) + " scales) block-scaled GEMM emulated on " +
           (path_ == BlockGemmPath::DeqBf16 ? (wgmma_ ? "bf16 tensor cores (dequantize, then wgmma + TMA)" : "bf16 tensor cores (dequantize, then mma.sync)")
                                            : (wgmma_ ? "fp16 tensor cores (exact block sums on wgmma + TMA, scaled per block)"
                                                      : "fp16 tensor cores (exact block sums, scaled per block)"));
  }
  Backend backend() const override { return Backend::Cuda; }
  MemorySpace memory() const override { return MemorySpace::Device; }
  const KernelTraits& traits() const override { return traits_; }

  /// f(pow2, block) with this format's scale kind (E8M0 powers of two or UE4M3) and block size (16 or 32) as
  /// compile-time constants: the blocksum kernels are instantiated per pair.
  template <typename F>
  decltype(auto) by_scales(F&& f) const {
    using B16 = std::integral_constant<int, 16>;
    using B32 = std::integral_constant<int, 32>;
    if (f_.block == 32) return f_.pow2_scales() ? f(std::true_type{}, B32{}) : f(std::false_type{}, B32{});
    return f_.pow2_scales() ? f(std::true_type{}, B16{}) : f(std::false_type{}, B16{});
  }

  Support can_implement(std::int64_t m, std::int64_t n, std::int64_t k) const override {
    if (wgmma_ && path_ == BlockGemmPath::DeqBf16) return wgmma_kernel().can_implement(m, n, k);
    if (path_ == BlockGemmPath::DeqBf16) return cuda::mma_support(m, n, k, 80, mma_gemm<Mma::BF16, false>);
    if (wgmma_) {
      namespace wg = wgmma_device;
      if (const Support s = wgmma_host::tile_support(m, n, k, wg::kBM, wg::kBlockSumN, wg::kStageK); !s.ok) return s;
      return by_scales([](auto pow2, auto block) { return wgmma_host::hopper_support(wg::wgmma_blocksum<decltype(pow2)::value, decltype(block)::value>); });
    }
    return by_scales([&](auto pow2, auto block) { return cuda::mma_support(m, n, k, 80, block_mma_gemm<decltype(pow2)::value, decltype(block)::value>); });
  }

  void run(const GemmOperands& ops) override {
    if (ops.a_layout != Layout::RowMajor || ops.b_layout != Layout::RowMajor) throw NotSupportedError(name_ + ": row-major A and B only");
    if (ops.m == 0 || ops.n == 0) return;
    const std::int64_t m = ops.m, n = ops.n, k = ops.k, B = f_.block, nkb = (k + B - 1) / B;
    const bool deq = path_ == BlockGemmPath::DeqBf16, tma16 = wgmma_ && !deq;
    // 16-bit operands' leading dimensions: the wgmma blocksum kernel's TMA takes rows of whole 16 bytes.
    const std::int64_t lda16 = tma16 ? (k + 7) / 8 * 8 : k, ldb16 = tma16 ? (n + 7) / 8 * 8 : n;
    auto stream = static_cast<cudaStream_t>(ops.stream);
    ws_.begin();
    const std::size_t o_ca = ws_.reserve(static_cast<std::size_t>(m * k)), o_sa = ws_.reserve(static_cast<std::size_t>(m * nkb));
    const std::size_t o_cb = ws_.reserve(static_cast<std::size_t>(k * n)), o_sb = ws_.reserve(static_cast<std::size_t>(nkb * n));
    const std::size_t o_a16 = ws_.reserve(static_cast<std::size_t>(m * lda16) * 2), o_b16 = ws_.reserve(static_cast<std::size_t>(k * ldb16) * 2);
    const std::size_t o_tmp = ws_.reserve(16);
    std::uint8_t* base = ws_.commit();
    const auto* A = static_cast<const float*>(ops.a);
    const auto* Bm = static_cast<const float*>(ops.b);
    // 1. Quantize (NVFP4: each operand's tensor scale from its amax, one small copy back each).
    blockq::QuantParams pa = blockq::quant_params(f_, rule_, 0, 1), pb = blockq::quant_params(f_, rule_, 0, 0);
    float tt = 1.0f;
    if (f_.tensor_scale) {
      auto* tmp = reinterpret_cast<unsigned*>(base + o_tmp);
      pa.ts = blockq::device_tensor_scale(A, m, k, ops.lda, tmp, stream);
      pb.ts = blockq::device_tensor_scale(Bm, k, n, ops.ldb, tmp, stream);
      tt = static_cast<float>(round_double_to_f32(pa.ts * pb.ts));  // exact product, one rounding
    }
    blockq::bind(pa, A, m, k, ops.lda, base + o_ca, base + o_sa);
    blockq::bind(pb, Bm, k, n, ops.ldb, base + o_cb, base + o_sb);
    blockq::launch_quantize(pa, stream);
    blockq::launch_quantize(pb, stream);
    // 2. 16-bit operands.
    auto* a16 = reinterpret_cast<std::uint16_t*>(base + o_a16);
    auto* b16 = reinterpret_cast<std::uint16_t*>(base + o_b16);
    to_operand16<<<grid1d(m * k), kThreads1d, 0, stream>>>(table_, deq, f_.pow2_scales(), pa.codes, pa.scales, m, k, 1, static_cast<int>(B), nkb, a16, lda16);
    FPCERT_CUDA_LAUNCH_CHECK("to_operand16 (A)");
    to_operand16<<<grid1d(k * n), kThreads1d, 0, stream>>>(table_, deq, f_.pow2_scales(), pb.codes, pb.scales, k, n, 0, static_cast<int>(B), n, b16, ldb16);
    FPCERT_CUDA_LAUNCH_CHECK("to_operand16 (B)");
    // 3. The MMA GEMM.
    const dim3 grid(static_cast<unsigned>((n + kBN - 1) / kBN), static_cast<unsigned>((m + kBM - 1) / kBM));
    const auto* a8 = reinterpret_cast<const std::uint8_t*>(a16);
    const auto* b8 = reinterpret_cast<const std::uint8_t*>(b16);
    const bool vec_a = (k * 2) % 16 == 0, vec_b = (n * 2) % 16 == 0;  // workspace pieces are 256-byte aligned
    auto* c = static_cast<float*>(ops.c);
    if (deq) {
      if (wgmma_) {  // the dequantized operands (row-major, lda = k, ldb = n) through the wgmma kernel; C as given
        GemmOperands g;
        g.m = m, g.n = n, g.k = k, g.a = a16, g.lda = k, g.b = b16, g.ldb = n, g.c = c, g.ldc = ops.ldc, g.stream = ops.stream;
        wgmma_kernel().run(g);
      } else {
        mma_gemm<Mma::BF16, false><<<grid, kThreads, 0, stream>>>(m, n, k, a8, k, vec_a, b8, n, vec_b, c, ops.ldc, 0);
        FPCERT_CUDA_LAUNCH_CHECK(name_.c_str());
      }
      if (f_.tensor_scale) {
        scale_output<<<grid1d(m * n), kThreads1d, 0, stream>>>(c, m, n, ops.ldc, tt);
        FPCERT_CUDA_LAUNCH_CHECK("scale_output");
      }
      return;
    }
    const bool tts = f_.tensor_scale;
    if (wgmma_) {
      wgmma_blocksum(ops, a16, lda16, b16, ldb16, pa.scales, pb.scales, nkb, tt, stream);
      return;
    }
    by_scales([&](auto pow2, auto block) {
      block_mma_gemm<decltype(pow2)::value, decltype(block)::value><<<grid, kThreads, 0, stream>>>(m, n, k, a8, k, vec_a, b8, n, vec_b, c, ops.ldc, pa.scales, pb.scales, nkb, tt, tts);
    });
    FPCERT_CUDA_LAUNCH_CHECK(name_.c_str());
  }

 private:
  /// The blocksum GEMM on wgmma + TMA (kernels/block/cuda/block_gemm_wgmma_kernel.cuh): tiles of 128 x 128, one block each.
  void wgmma_blocksum(const GemmOperands& ops, const std::uint16_t* a16, std::int64_t lda16, const std::uint16_t* b16, std::int64_t ldb16,
                      const std::uint8_t* sa, const std::uint8_t* sb, std::int64_t nkb, float tt, cudaStream_t stream) {
    namespace wg = wgmma_device;
    const std::int64_t m = ops.m, n = ops.n, k = ops.k;
    auto* c = static_cast<float*>(ops.c);
    CUtensorMap map_a{}, map_b{};
    if (k > 0) {
      map_a = wgmma_host::make_map(name_, a16, 2, k, m, lda16, wg::kBlockSumStageElems, wg::kBM);
      map_b = wgmma_host::make_map(name_, b16, 2, n, k, ldb16, wg::kNBox, wg::kBlockSumStageElems);
    }
    const auto grid = static_cast<unsigned>(((m + wg::kBM - 1) / wg::kBM) * ((n + wg::kBlockSumN - 1) / wg::kBlockSumN));
    const int mi = static_cast<int>(m), ni = static_cast<int>(n), ki = static_cast<int>(k), att = f_.tensor_scale ? 1 : 0;
    by_scales([&](auto pow2, auto block) {
      constexpr auto kernel = wg::wgmma_blocksum<decltype(pow2)::value, decltype(block)::value>;
      FPCERT_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, wg::blocksum_smem_bytes()));
      kernel<<<grid, wg::kThreads, wg::blocksum_smem_bytes(), stream>>>(map_a, map_b, mi, ni, ki, c, ops.ldc, sa, sb, nkb, tt, att);
    });
    FPCERT_CUDA_LAUNCH_CHECK(name_.c_str());
  }
  static double round_double_to_f32(double x) { return to_double(f32, round_double(f32, x, Rounder::nearest(f32)).code); }
  GemmKernel& wgmma_kernel() const {
    if (!wgmma_gemm_) wgmma_gemm_ = make_gemm_kernel(kWgmmaBf16);
    if (!wgmma_gemm_) throw std::logic_error(name_ + ": " + kWgmmaBf16 + " is not registered");
    return *wgmma_gemm_;
  }
  const BlockFormat& f_;
  ScaleRule rule_;
  BlockGemmPath path_;
  bool wgmma_ = false;
  mutable std::unique_ptr<GemmKernel> wgmma_gemm_;
  std::string name_;
  KernelTraits traits_;
  ElemTable table_;
  emu_host::Workspace ws_;
};

}  // namespace

std::unique_ptr<GemmKernel> make_block_gemm_cuda(const BlockFormat& f, ScaleRule rule, BlockGemmPath path) {
  return std::make_unique<BlockGemmCuda>(f, rule, path);
}

void register_block_gemm_kernels() {
  for (const BlockGemmConfig& c : builtin_block_gemms(true))
    register_kernel(make_block_gemm_cuda(*c.format, c.rule, c.path)->name(), Backend::Cuda, false,
                    [c] { return make_block_gemm_cuda(*c.format, c.rule, c.path); });
  // On Hopper's wgmma + TMA (issue 43): the deqbf16 kernels through the wgmma bf16 GEMM,
  // gemm_<f>_<rule>_deqbf16_f32acc_wgmma_sm90, and the blocksum kernels, gemm_<f>_<rule>_blocksum_f32acc_wgmma_sm90.
  for (const BlockGemmConfig& c : builtin_block_gemms(true))
    register_kernel(BlockGemmCuda::name_of(*c.format, c.rule, c.path, true), Backend::Cuda, false,
                    [c] { return std::unique_ptr<GemmKernel>(new BlockGemmCuda(*c.format, c.rule, c.path, true)); });
}

}  // namespace fpcert
