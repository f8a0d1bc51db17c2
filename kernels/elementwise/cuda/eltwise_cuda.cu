// kernels/elementwise/cuda/eltwise_cuda.cu — CUDA's exp family as subjects of the elementwise check (issue 42,
// docs/elementwise.md): expf, exp2f, exp10f, the intrinsics __expf and __exp10f, and the half and bfloat16 functions
// hexp, hexp2, hexp10, h2exp. Each runs as a plain kernel (run(): the runner's guarded buffers) and as the device
// sweep (sweep()): every input code of a range, the correctly rounded reference computed on the GPU with the proved
// fast path of oracle/math/exp_kernel.hpp (eltwise_ref.hpp: inputs whose bracket straddles a rounding boundary are
// sent back for MPFR), the subject, the comparison and the histogram in one pass; only counters, the worst input,
// the results beyond the claim and the undecided inputs travel back.
#define FPCERT_HD __host__ __device__
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "kernels/device/cuda_check.cuh"
#include "kernels/elementwise/eltwise_kernel.hpp"
#include "oracle/math/eltwise_ref.hpp"
#include "oracle/math/expf_ops.hpp"

namespace fpcert {
namespace {

enum class Subj : std::uint8_t {
  Expf, Exp2f, Exp10f, ExpfFast, Exp10fFast, Hexp, Hexp2, Hexp10, H2exp, BHexp, BHexp2, BHexp10,
  Logf, Log2f, Log10f, LogfFast, Log2fFast, Log10fFast, Hlog, Hlog2, Hlog10, BHlog, BHlog2, BHlog10,
  Sqrtf, SqrtfRn, Rsqrtf, RsqrtfRn, Hsqrt, Hrsqrt, BHsqrt, BHrsqrt,
  Expm1f, Log1pf, Tanhf, TanhfFast, Htanh, BHtanh, Sinhf, Coshf, Cbrtf, Erff, Erfcf,
  SigmoidFast, SiluFast, Softplusf, GeluErff, GeluTanhf,
  Sinf, Cosf, Tanf, Sinpif, Cospif, SinfFast, CosfFast, ExpfOps
};
template <Subj S>
constexpr bool kHalfIn = S == Subj::Hexp || S == Subj::Hexp2 || S == Subj::Hexp10 || S == Subj::H2exp || S == Subj::Hlog ||
                         S == Subj::Hlog2 || S == Subj::Hlog10 || S == Subj::Hsqrt || S == Subj::Hrsqrt || S == Subj::Htanh;
template <Subj S>
constexpr bool kBf16In = S == Subj::BHexp || S == Subj::BHexp2 || S == Subj::BHexp10 || S == Subj::BHlog || S == Subj::BHlog2 ||
                         S == Subj::BHlog10 || S == Subj::BHsqrt || S == Subj::BHrsqrt || S == Subj::BHtanh;

__device__ __forceinline__ float decode_in(std::uint32_t c, int in_bits) {
  if (in_bits == 32) return __uint_as_float(c);
  return __half2float(__ushort_as_half(static_cast<unsigned short>(c)));  // f16 (bf16 handled by the caller)
}

/// The subject on input code c (a code of its input format), as a code of its output format.
template <Subj S>
__device__ __forceinline__ std::uint32_t subject(std::uint32_t c) {
  if constexpr (S == Subj::Expf) return __float_as_uint(expf(__uint_as_float(c)));
  else if constexpr (S == Subj::Exp2f) return __float_as_uint(exp2f(__uint_as_float(c)));
  else if constexpr (S == Subj::Exp10f) return __float_as_uint(exp10f(__uint_as_float(c)));
  else if constexpr (S == Subj::ExpfFast) return __float_as_uint(__expf(__uint_as_float(c)));
  else if constexpr (S == Subj::Exp10fFast) return __float_as_uint(__exp10f(__uint_as_float(c)));
  else if constexpr (S == Subj::Logf) return __float_as_uint(logf(__uint_as_float(c)));
  else if constexpr (S == Subj::Log2f) return __float_as_uint(log2f(__uint_as_float(c)));
  else if constexpr (S == Subj::Log10f) return __float_as_uint(log10f(__uint_as_float(c)));
  else if constexpr (S == Subj::LogfFast) return __float_as_uint(__logf(__uint_as_float(c)));
  else if constexpr (S == Subj::Log2fFast) return __float_as_uint(__log2f(__uint_as_float(c)));
  else if constexpr (S == Subj::Log10fFast) return __float_as_uint(__log10f(__uint_as_float(c)));
  else if constexpr (S == Subj::Sqrtf) return __float_as_uint(sqrtf(__uint_as_float(c)));
  else if constexpr (S == Subj::SqrtfRn) return __float_as_uint(__fsqrt_rn(__uint_as_float(c)));
  else if constexpr (S == Subj::Rsqrtf) return __float_as_uint(rsqrtf(__uint_as_float(c)));
  else if constexpr (S == Subj::RsqrtfRn) return __float_as_uint(__frsqrt_rn(__uint_as_float(c)));
  else if constexpr (S == Subj::Expm1f) return __float_as_uint(expm1f(__uint_as_float(c)));
  else if constexpr (S == Subj::Log1pf) return __float_as_uint(log1pf(__uint_as_float(c)));
  else if constexpr (S == Subj::Tanhf) return __float_as_uint(tanhf(__uint_as_float(c)));
  else if constexpr (S == Subj::TanhfFast) return __float_as_uint(__tanhf(__uint_as_float(c)));
  else if constexpr (S == Subj::Sinhf) return __float_as_uint(sinhf(__uint_as_float(c)));
  else if constexpr (S == Subj::Coshf) return __float_as_uint(coshf(__uint_as_float(c)));
  else if constexpr (S == Subj::Cbrtf) return __float_as_uint(cbrtf(__uint_as_float(c)));
  else if constexpr (S == Subj::Erff) return __float_as_uint(erff(__uint_as_float(c)));
  else if constexpr (S == Subj::Erfcf) return __float_as_uint(erfcf(__uint_as_float(c)));
  else if constexpr (S == Subj::Sinf) return __float_as_uint(sinf(__uint_as_float(c)));
  else if constexpr (S == Subj::Cosf) return __float_as_uint(cosf(__uint_as_float(c)));
  else if constexpr (S == Subj::Tanf) return __float_as_uint(tanf(__uint_as_float(c)));
  else if constexpr (S == Subj::Sinpif) return __float_as_uint(sinpif(__uint_as_float(c)));
  else if constexpr (S == Subj::Cospif) return __float_as_uint(cospif(__uint_as_float(c)));
  else if constexpr (S == Subj::SinfFast) return __float_as_uint(__sinf(__uint_as_float(c)));
  else if constexpr (S == Subj::CosfFast) return __float_as_uint(__cosf(__uint_as_float(c)));
  else if constexpr (S == Subj::ExpfOps) return __float_as_uint(math::expf_ops(__uint_as_float(c)));
  // The activations as kernels write them (docs/elementwise.md, "Activations": the derived bounds).
  else if constexpr (S == Subj::SigmoidFast) {
    const float x = __uint_as_float(c);
    return __float_as_uint(1.0f / (1.0f + __expf(-x)));
  } else if constexpr (S == Subj::SiluFast) {
    const float x = __uint_as_float(c);
    return __float_as_uint(x / (1.0f + __expf(-x)));
  } else if constexpr (S == Subj::Softplusf) {
    const float x = __uint_as_float(c);
    return __float_as_uint(x > 20.0f ? x : log1pf(expf(x)));  // PyTorch's softplus, threshold 20
  } else if constexpr (S == Subj::GeluErff) {
    const float x = __uint_as_float(c);
    return __float_as_uint(0.5f * x * (1.0f + erff(x * 0.70710678f)));
  } else if constexpr (S == Subj::GeluTanhf) {
    const float x = __uint_as_float(c);
    return __float_as_uint(0.5f * x * (1.0f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x))));
  }
  else if constexpr (kHalfIn<S>) {
    const __half h = __ushort_as_half(static_cast<unsigned short>(c));
    __half y;
    if constexpr (S == Subj::Hexp) y = hexp(h);
    else if constexpr (S == Subj::Hexp2) y = hexp2(h);
    else if constexpr (S == Subj::Hexp10) y = hexp10(h);
    else if constexpr (S == Subj::Hlog) y = hlog(h);
    else if constexpr (S == Subj::Hlog2) y = hlog2(h);
    else if constexpr (S == Subj::Hlog10) y = hlog10(h);
    else if constexpr (S == Subj::Hsqrt) y = hsqrt(h);
    else if constexpr (S == Subj::Hrsqrt) y = hrsqrt(h);
    else if constexpr (S == Subj::Htanh) y = htanh(h);
    else y = __low2half(h2exp(__halves2half2(h, h)));  // both lanes the same input: the low lane is checked
    return __half_as_ushort(y);
  } else {
    const __nv_bfloat16 h = __ushort_as_bfloat16(static_cast<unsigned short>(c));
    __nv_bfloat16 y;
    if constexpr (S == Subj::BHexp) y = hexp(h);
    else if constexpr (S == Subj::BHexp2) y = hexp2(h);
    else if constexpr (S == Subj::BHexp10) y = hexp10(h);
    else if constexpr (S == Subj::BHlog) y = hlog(h);
    else if constexpr (S == Subj::BHlog2) y = hlog2(h);
    else if constexpr (S == Subj::BHsqrt) y = hsqrt(h);
    else if constexpr (S == Subj::BHrsqrt) y = hrsqrt(h);
    else if constexpr (S == Subj::BHtanh) y = htanh(h);
    else y = hlog10(h);
    return __bfloat16_as_ushort(y);
  }
}

template <Subj S>
__device__ __forceinline__ float input_value(std::uint32_t c) {
  if constexpr (kBf16In<S>) return __uint_as_float(c << 16);
  else if constexpr (kHalfIn<S>) return decode_in(c, 16);
  else return __uint_as_float(c);
}

template <Subj S, typename In, typename Out>
__global__ void run_kernel(std::int64_t n, const In* x, Out* y) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n; i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    y[i] = static_cast<Out>(subject<S>(static_cast<std::uint32_t>(x[i])));
}

/// What the sweep kernel writes (device memory, zeroed before each chunk).
struct SweepCounters {
  unsigned long long histogram[math::kUlpBins];
  unsigned long long above, worst, nan_mismatch, unclaimed;
  unsigned int listed, undecided;
};

struct SweepArgs {
  std::uint64_t first, count;
  math::ExpTables tables;
  math::LogTables log_tables;
  math::Claim claim;
  math::CodeFormat out;
  math::Fn fn;
  bool daz, ftz;
  SweepCounters* counters;
  EltwiseSweepChunk::Item* listed;
  unsigned max_listed;
  EltwiseSweepChunk::Item* undecided;
  unsigned max_undecided;
};

template <Subj S>
__global__ void __launch_bounds__(256) sweep_kernel(SweepArgs a) {
  __shared__ math::ExpTables t;
  __shared__ math::LogTables lt;
  __shared__ unsigned long long hist[math::kUlpBins];
  for (int i = threadIdx.x; i < math::kUlpBins; i += blockDim.x) hist[i] = 0;
  if (threadIdx.x == 0) {
    t = a.tables;
    lt = a.log_tables;
  }
  __syncthreads();
  unsigned long long zero = 0, one = 0, above = 0, worst = 0, nan_mm = 0, unclaimed = 0;  // bins 0 and 1 in registers
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < a.count; i += stride) {
    const auto c = static_cast<std::uint32_t>(a.first + i);
    float x = input_value<S>(c);
    const std::uint32_t got = subject<S>(c);
    if (a.daz && (__float_as_uint(x) & 0x7f800000u) == 0) x = __uint_as_float(__float_as_uint(x) & 0x80000000u);
    const math::RefRn ref = math::ref_rn(a.fn, x, a.out, t, lt);
    if (!ref.decided) {
      const unsigned k = atomicAdd(&a.counters->undecided, 1u);
      if (k < a.max_undecided) a.undecided[k] = {c, got};
      continue;
    }
    const math::Judged j = math::judge(got, x, ref, a.out, a.claim, a.ftz);
    if (j.undecided) {
      const unsigned k = atomicAdd(&a.counters->undecided, 1u);
      if (k < a.max_undecided) a.undecided[k] = {c, got};
      continue;
    }
    if (j.ulps == 0) ++zero;
    else if (j.ulps == 1) ++one;
    else atomicAdd(&hist[math::ulp_bin(j.ulps)], 1ull);
    if (j.ulps == math::kNanDistance) ++nan_mm;
    const unsigned long long u = j.ulps >= 0x7fffffffull ? 0x7fffffffull : j.ulps;
    const unsigned long long key = (u << 32) | (0xffffffffu - c);  // the largest distance, then the lowest code
    if (j.claimed && u > 0 && key > worst) worst = key;
    if (!j.claimed) ++unclaimed;
    if (j.above) {
      ++above;
      const unsigned k = atomicAdd(&a.counters->listed, 1u);
      if (k < a.max_listed) a.listed[k] = {c, got};
    }
  }
  atomicAdd(&hist[0], zero);
  atomicAdd(&hist[1], one);
  __syncthreads();
  for (int i = threadIdx.x; i < math::kUlpBins; i += blockDim.x)
    if (hist[i]) atomicAdd(&a.counters->histogram[i], hist[i]);
  if (above) atomicAdd(&a.counters->above, above);
  if (nan_mm) atomicAdd(&a.counters->nan_mismatch, nan_mm);
  if (unclaimed) atomicAdd(&a.counters->unclaimed, unclaimed);
  if (worst) atomicMax(&a.counters->worst, worst);
}

struct CudaSpec {
  std::string name, note;
  Subj subj;
  EltwiseTraits t;
};

class CudaEltwise final : public ElementwiseKernel {
 public:
  explicit CudaEltwise(CudaSpec s) : s_(std::move(s)) {}
  ~CudaEltwise() override {
    cudaFree(counters_);
    cudaFree(listed_);
    cudaFree(undecided_);
  }
  const std::string& name() const override { return s_.name; }
  std::string description() const override { return s_.note; }
  Backend backend() const override { return Backend::Cuda; }
  MemorySpace memory() const override { return MemorySpace::Device; }
  const EltwiseTraits& eltwise_traits() const override { return s_.t; }
  bool can_sweep() const override {
    // A function without a device reference (math::has_device_ref: every input would come back undecided) is not swept.
    if (!math::has_device_ref(s_.t.fn)) return false;
    int n = 0;
    return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
  }

  void run(const EltwiseOperands& o) override {
    if (o.count <= 0) return;
    const auto stream = static_cast<cudaStream_t>(o.stream);
    const unsigned blocks = static_cast<unsigned>(std::min<std::int64_t>((o.count + 255) / 256, 65535));
    const bool wide = s_.t.in == &f32;
    switch (s_.subj) {
#define FPCERT_ELT_RUN(S)                                                                                                    \
  case Subj::S:                                                                                                              \
    if (wide) run_kernel<Subj::S><<<blocks, 256, 0, stream>>>(o.count, static_cast<const std::uint32_t*>(o.x), static_cast<std::uint32_t*>(o.y)); \
    else run_kernel<Subj::S><<<blocks, 256, 0, stream>>>(o.count, static_cast<const std::uint16_t*>(o.x), static_cast<std::uint16_t*>(o.y));     \
    break;
      FPCERT_ELT_RUN(Expf) FPCERT_ELT_RUN(Exp2f) FPCERT_ELT_RUN(Exp10f) FPCERT_ELT_RUN(ExpfFast) FPCERT_ELT_RUN(Exp10fFast)
      FPCERT_ELT_RUN(Hexp) FPCERT_ELT_RUN(Hexp2) FPCERT_ELT_RUN(Hexp10) FPCERT_ELT_RUN(H2exp)
      FPCERT_ELT_RUN(BHexp) FPCERT_ELT_RUN(BHexp2) FPCERT_ELT_RUN(BHexp10)
      FPCERT_ELT_RUN(Logf) FPCERT_ELT_RUN(Log2f) FPCERT_ELT_RUN(Log10f) FPCERT_ELT_RUN(LogfFast) FPCERT_ELT_RUN(Log2fFast) FPCERT_ELT_RUN(Log10fFast)
      FPCERT_ELT_RUN(Hlog) FPCERT_ELT_RUN(Hlog2) FPCERT_ELT_RUN(Hlog10) FPCERT_ELT_RUN(BHlog) FPCERT_ELT_RUN(BHlog2) FPCERT_ELT_RUN(BHlog10)
      FPCERT_ELT_RUN(Sqrtf) FPCERT_ELT_RUN(SqrtfRn) FPCERT_ELT_RUN(Rsqrtf) FPCERT_ELT_RUN(RsqrtfRn)
      FPCERT_ELT_RUN(Hsqrt) FPCERT_ELT_RUN(Hrsqrt) FPCERT_ELT_RUN(BHsqrt) FPCERT_ELT_RUN(BHrsqrt)
      FPCERT_ELT_RUN(Expm1f) FPCERT_ELT_RUN(Log1pf) FPCERT_ELT_RUN(Tanhf) FPCERT_ELT_RUN(TanhfFast) FPCERT_ELT_RUN(Htanh) FPCERT_ELT_RUN(BHtanh)
      FPCERT_ELT_RUN(Sinhf) FPCERT_ELT_RUN(Coshf) FPCERT_ELT_RUN(Cbrtf) FPCERT_ELT_RUN(Erff) FPCERT_ELT_RUN(Erfcf)
      FPCERT_ELT_RUN(SigmoidFast) FPCERT_ELT_RUN(SiluFast) FPCERT_ELT_RUN(Softplusf) FPCERT_ELT_RUN(GeluErff) FPCERT_ELT_RUN(GeluTanhf)
      FPCERT_ELT_RUN(Sinf) FPCERT_ELT_RUN(Cosf) FPCERT_ELT_RUN(Tanf) FPCERT_ELT_RUN(Sinpif) FPCERT_ELT_RUN(Cospif) FPCERT_ELT_RUN(SinfFast) FPCERT_ELT_RUN(CosfFast) FPCERT_ELT_RUN(ExpfOps)
#undef FPCERT_ELT_RUN
    }
    FPCERT_CUDA_LAUNCH_CHECK(s_.name.c_str());
  }

  EltwiseSweepChunk sweep(std::uint64_t first, std::uint64_t count, std::size_t max_listed) override {
    constexpr unsigned kMaxUndecided = 1u << 22;
    if (count > (std::uint64_t{1} << 32) || first + count > (std::uint64_t{1} << (8 * container_bytes(*s_.t.in))))
      throw NotSupportedError(s_.name + ": sweep range beyond the input format's codes");
    max_listed = std::min<std::size_t>(std::max<std::size_t>(max_listed, 1), 1u << 20);
    if (!counters_) {
      FPCERT_CUDA_CHECK(cudaSetDevice(0));
      FPCERT_CUDA_CHECK(cudaMalloc(&counters_, sizeof(SweepCounters)));
      FPCERT_CUDA_CHECK(cudaMalloc(&listed_, (1u << 20) * sizeof(EltwiseSweepChunk::Item)));
      FPCERT_CUDA_CHECK(cudaMalloc(&undecided_, kMaxUndecided * sizeof(EltwiseSweepChunk::Item)));
      cudaDeviceProp prop{};
      FPCERT_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
      blocks_ = static_cast<unsigned>(std::max(1, prop.multiProcessorCount) * 8);
    }
    FPCERT_CUDA_CHECK(cudaMemset(counters_, 0, sizeof(SweepCounters)));
    SweepArgs a{};
    a.first = first;
    a.count = count;
    a.tables = math::exp_tables();
    a.claim = s_.t.claim;
    a.out = *code_format(*s_.t.out);
    a.log_tables = math::log_tables();
    a.fn = s_.t.fn;
    a.daz = s_.t.daz;
    a.ftz = s_.t.ftz;
    a.counters = counters_;
    a.listed = listed_;
    a.max_listed = static_cast<unsigned>(max_listed);
    a.undecided = undecided_;
    a.max_undecided = kMaxUndecided;
    const unsigned blocks = static_cast<unsigned>(std::min<std::uint64_t>(blocks_, (count + 255) / 256));
    cudaEvent_t e0, e1;
    FPCERT_CUDA_CHECK(cudaEventCreate(&e0));
    FPCERT_CUDA_CHECK(cudaEventCreate(&e1));
    FPCERT_CUDA_CHECK(cudaEventRecord(e0));
    switch (s_.subj) {
#define FPCERT_ELT_SWEEP(S) \
  case Subj::S: sweep_kernel<Subj::S><<<blocks, 256>>>(a); break;
      FPCERT_ELT_SWEEP(Expf) FPCERT_ELT_SWEEP(Exp2f) FPCERT_ELT_SWEEP(Exp10f) FPCERT_ELT_SWEEP(ExpfFast) FPCERT_ELT_SWEEP(Exp10fFast)
      FPCERT_ELT_SWEEP(Hexp) FPCERT_ELT_SWEEP(Hexp2) FPCERT_ELT_SWEEP(Hexp10) FPCERT_ELT_SWEEP(H2exp)
      FPCERT_ELT_SWEEP(BHexp) FPCERT_ELT_SWEEP(BHexp2) FPCERT_ELT_SWEEP(BHexp10)
      FPCERT_ELT_SWEEP(Logf) FPCERT_ELT_SWEEP(Log2f) FPCERT_ELT_SWEEP(Log10f) FPCERT_ELT_SWEEP(LogfFast) FPCERT_ELT_SWEEP(Log2fFast) FPCERT_ELT_SWEEP(Log10fFast)
      FPCERT_ELT_SWEEP(Hlog) FPCERT_ELT_SWEEP(Hlog2) FPCERT_ELT_SWEEP(Hlog10) FPCERT_ELT_SWEEP(BHlog) FPCERT_ELT_SWEEP(BHlog2) FPCERT_ELT_SWEEP(BHlog10)
      FPCERT_ELT_SWEEP(Sqrtf) FPCERT_ELT_SWEEP(SqrtfRn) FPCERT_ELT_SWEEP(Rsqrtf) FPCERT_ELT_SWEEP(RsqrtfRn)
      FPCERT_ELT_SWEEP(Hsqrt) FPCERT_ELT_SWEEP(Hrsqrt) FPCERT_ELT_SWEEP(BHsqrt) FPCERT_ELT_SWEEP(BHrsqrt)
      FPCERT_ELT_SWEEP(Expm1f) FPCERT_ELT_SWEEP(Log1pf) FPCERT_ELT_SWEEP(Tanhf) FPCERT_ELT_SWEEP(TanhfFast) FPCERT_ELT_SWEEP(Htanh)
      FPCERT_ELT_SWEEP(BHtanh) FPCERT_ELT_SWEEP(Sinhf) FPCERT_ELT_SWEEP(Coshf)
      FPCERT_ELT_SWEEP(Cbrtf) FPCERT_ELT_SWEEP(Erff) FPCERT_ELT_SWEEP(Erfcf)
      FPCERT_ELT_SWEEP(SigmoidFast) FPCERT_ELT_SWEEP(SiluFast) FPCERT_ELT_SWEEP(Softplusf) FPCERT_ELT_SWEEP(GeluErff) FPCERT_ELT_SWEEP(GeluTanhf)
      FPCERT_ELT_SWEEP(Sinf) FPCERT_ELT_SWEEP(Cosf) FPCERT_ELT_SWEEP(Tanf) FPCERT_ELT_SWEEP(Sinpif) FPCERT_ELT_SWEEP(Cospif)
      FPCERT_ELT_SWEEP(SinfFast) FPCERT_ELT_SWEEP(CosfFast) FPCERT_ELT_SWEEP(ExpfOps)
#undef FPCERT_ELT_SWEEP
    }
    FPCERT_CUDA_LAUNCH_CHECK(s_.name.c_str());
    FPCERT_CUDA_CHECK(cudaEventRecord(e1));
    FPCERT_CUDA_CHECK(cudaEventSynchronize(e1));
    float ms = 0;
    FPCERT_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    SweepCounters h{};
    FPCERT_CUDA_CHECK(cudaMemcpy(&h, counters_, sizeof h, cudaMemcpyDeviceToHost));
    EltwiseSweepChunk r;
    r.first = first;
    r.count = count;
    for (int i = 0; i < math::kUlpBins; ++i) r.histogram[static_cast<std::size_t>(i)] = h.histogram[i];
    r.above = h.above;
    r.worst = h.worst;
    r.nan_mismatch = h.nan_mismatch;
    r.unclaimed = h.unclaimed;
    r.listed.resize(std::min<std::size_t>(h.listed, max_listed));
    r.undecided_overflow = h.undecided > kMaxUndecided;
    r.undecided.resize(std::min<std::size_t>(h.undecided, kMaxUndecided));
    if (!r.listed.empty())
      FPCERT_CUDA_CHECK(cudaMemcpy(r.listed.data(), listed_, r.listed.size() * sizeof(EltwiseSweepChunk::Item), cudaMemcpyDeviceToHost));
    if (!r.undecided.empty())
      FPCERT_CUDA_CHECK(cudaMemcpy(r.undecided.data(), undecided_, r.undecided.size() * sizeof(EltwiseSweepChunk::Item), cudaMemcpyDeviceToHost));
    r.kernel_ms = ms;
    return r;
  }

 private:
  CudaSpec s_;
  SweepCounters* counters_ = nullptr;
  EltwiseSweepChunk::Item* listed_ = nullptr;
  EltwiseSweepChunk::Item* undecided_ = nullptr;
  unsigned blocks_ = 0;
};

EltwiseTraits traits(math::Fn f, const Format& io, math::Claim c, const char* source, bool ftz = false, bool daz = false) {
  EltwiseTraits t;
  t.daz = daz;
  t.fn = f;
  t.in = t.out = &io;
  t.claim = c;
  t.claim_source = source;
  t.ftz = ftz;
  return t;
}

}  // namespace

#ifndef FPCERT_ELT_FASTMATH
void register_eltwise_cuda_kernels() {
  using math::ClaimKind;
  using math::Fn;
  // Claims: CUDA C++ Programming Guide, "Mathematical Functions" (single precision: expf, exp2f, exp10f 2 ulp;
  // intrinsics: __expf 2 + floor(abs(1.173 x)), __exp10f 2 + floor(abs(2.97 x)) in newer guides, 2.95 in
  // older ones: all 2^32 inputs on the H200 break 2.95 at 12 inputs and keep 2.97). This build passes no -ftz, so the
  // intrinsics compile to ex2.approx.f32 / lg2.approx.f32 without .ftz (checked in the PTX), which keep subnormal
  // inputs and results: declared with daz = ftz = false (declaring DAZ made the H200 sweep refuse every subnormal
  // input of the logs, whose log the hardware computes); half and bfloat16 functions: 0 ulp as issue 42 reads the CUDA Math API (to be
  // confirmed or refused by the sweep).
  const char* guide = "CUDA Programming Guide, Mathematical Functions";
  const char* half = "CUDA Math API half/bf16 functions, 0 ulp (issue 42)";
  const math::Claim two{ClaimKind::Ulp, 2}, cr{ClaimKind::CorrectlyRounded};
  const char* derived = "derived from the guide's bounds (docs/elementwise.md, Activations)";
  math::Claim fast_act{ClaimKind::Ulp, 14, 4.7}, softplus{ClaimKind::Ulp, 12}, gelu{ClaimKind::Absolute}, gelu_t{ClaimKind::Absolute};
  fast_act.lo = softplus.lo = -87.0;
  gelu.bound = 0x1p-20, gelu_t.bound = 0x1p-19;
  gelu.lo = gelu_t.lo = -4.0;
  gelu.hi = gelu_t.hi = 4.0;
  math::Claim trig_fast{ClaimKind::Absolute};
  trig_fast.bound = std::exp2(-21.41);
  trig_fast.lo = -3.14159265358979323846;  // [-pi, pi]: the double pi's neighbourhood holds no float beyond the true pi
  trig_fast.hi = 3.14159265358979323846;
  const std::vector<CudaSpec> specs = {
      {"cuda_expf", "CUDA expf (accurate, no fast math)", Subj::Expf, traits(Fn::Exp, f32, two, guide)},
      {"cuda_exp2f", "CUDA exp2f", Subj::Exp2f, traits(Fn::Exp2, f32, two, guide)},
      {"cuda_exp10f", "CUDA exp10f", Subj::Exp10f, traits(Fn::Exp10, f32, two, guide)},
      {"cuda___expf", "CUDA intrinsic __expf (ex2.approx.f32)", Subj::ExpfFast,
       traits(Fn::Exp, f32, {ClaimKind::Ulp, 2, 1.173}, guide)},
      {"cuda___exp10f", "CUDA intrinsic __exp10f (ex2.approx.f32)", Subj::Exp10fFast,
       traits(Fn::Exp10, f32, {ClaimKind::Ulp, 2, 2.97}, guide)},
      {"cuda_hexp_f16", "CUDA hexp (__half)", Subj::Hexp, traits(Fn::Exp, f16, cr, half)},
      {"cuda_hexp2_f16", "CUDA hexp2 (__half)", Subj::Hexp2, traits(Fn::Exp2, f16, cr, half)},
      {"cuda_hexp10_f16", "CUDA hexp10 (__half)", Subj::Hexp10, traits(Fn::Exp10, f16, cr, half)},
      {"cuda_h2exp_f16", "CUDA h2exp (__half2, both lanes the input; the low lane checked)", Subj::H2exp, traits(Fn::Exp, f16, cr, half)},
      {"cuda_hexp_bf16", "CUDA hexp (__nv_bfloat16)", Subj::BHexp, traits(Fn::Exp, bf16, cr, half)},
      {"cuda_hexp2_bf16", "CUDA hexp2 (__nv_bfloat16)", Subj::BHexp2, traits(Fn::Exp2, bf16, cr, half)},
      {"cuda_hexp10_bf16", "CUDA hexp10 (__nv_bfloat16)", Subj::BHexp10, traits(Fn::Exp10, bf16, cr, half)},
      // The log family: logf, log2f 1 ulp, log10f 2 ulp; __logf 2^-21.41 absolute on [0.5, 2] else 3 ulp, __log2f 2^-22
      // absolute on [0.5, 2] else 2 ulp, __log10f 2^-24 absolute on [0.5, 2] else 3 ulp (lg2.approx.f32: subnormal
      // inputs kept).
      {"cuda_logf", "CUDA logf", Subj::Logf, traits(Fn::Log, f32, {ClaimKind::Ulp, 1}, guide)},
      {"cuda_log2f", "CUDA log2f", Subj::Log2f, traits(Fn::Log2, f32, {ClaimKind::Ulp, 1}, guide)},
      {"cuda_log10f", "CUDA log10f", Subj::Log10f, traits(Fn::Log10, f32, two, guide)},
      {"cuda___logf", "CUDA intrinsic __logf (lg2.approx.f32)", Subj::LogfFast,
       traits(Fn::Log, f32, {ClaimKind::Absolute, 3, 0, std::exp2(-21.41), 0.5, 2.0}, guide)},
      {"cuda___log2f", "CUDA intrinsic __log2f (lg2.approx.f32)", Subj::Log2fFast,
       traits(Fn::Log2, f32, {ClaimKind::Absolute, 2, 0, 0x1p-22, 0.5, 2.0}, guide)},
      {"cuda___log10f", "CUDA intrinsic __log10f (lg2.approx.f32)", Subj::Log10fFast,
       traits(Fn::Log10, f32, {ClaimKind::Absolute, 3, 0, 0x1p-24, 0.5, 2.0}, guide)},
      {"cuda_hlog_f16", "CUDA hlog (__half)", Subj::Hlog, traits(Fn::Log, f16, cr, half)},
      {"cuda_hlog2_f16", "CUDA hlog2 (__half)", Subj::Hlog2, traits(Fn::Log2, f16, cr, half)},
      {"cuda_hlog10_f16", "CUDA hlog10 (__half)", Subj::Hlog10, traits(Fn::Log10, f16, cr, half)},
      {"cuda_hlog_bf16", "CUDA hlog (__nv_bfloat16)", Subj::BHlog, traits(Fn::Log, bf16, cr, half)},
      {"cuda_hlog2_bf16", "CUDA hlog2 (__nv_bfloat16)", Subj::BHlog2, traits(Fn::Log2, bf16, cr, half)},
      {"cuda_hlog10_bf16", "CUDA hlog10 (__nv_bfloat16)", Subj::BHlog10, traits(Fn::Log10, bf16, cr, half)},
      // sqrt and rsqrt: sqrtf 0 ulp (-prec-sqrt=true, nvcc's default without fast math: this build), __fsqrt_rn and
      // __frsqrt_rn round to nearest-even (0 ulp), rsqrtf 2 ulp; the half/bfloat16 hsqrt, hrsqrt "in round-to-nearest-even
      // mode" (CUDA Math API): 0 ulp. No FTZ: the build passes no -ftz=true.
      {"cuda_sqrtf", "CUDA sqrtf (-prec-sqrt=true)", Subj::Sqrtf, traits(Fn::Sqrt, f32, cr, guide)},
      {"cuda___fsqrt_rn", "CUDA intrinsic __fsqrt_rn", Subj::SqrtfRn, traits(Fn::Sqrt, f32, cr, guide)},
      {"cuda_rsqrtf", "CUDA rsqrtf", Subj::Rsqrtf, traits(Fn::Rsqrt, f32, two, guide)},
      {"cuda___frsqrt_rn", "CUDA intrinsic __frsqrt_rn", Subj::RsqrtfRn, traits(Fn::Rsqrt, f32, cr, "CUDA Math API: round-to-nearest-even")},
      {"cuda_hsqrt_f16", "CUDA hsqrt (__half)", Subj::Hsqrt, traits(Fn::Sqrt, f16, cr, half)},
      {"cuda_hrsqrt_f16", "CUDA hrsqrt (__half)", Subj::Hrsqrt, traits(Fn::Rsqrt, f16, cr, half)},
      {"cuda_hsqrt_bf16", "CUDA hsqrt (__nv_bfloat16)", Subj::BHsqrt, traits(Fn::Sqrt, bf16, cr, half)},
      {"cuda_hrsqrt_bf16", "CUDA hrsqrt (__nv_bfloat16)", Subj::BHrsqrt, traits(Fn::Rsqrt, bf16, cr, half)},
      // expm1f, log1pf: 1 ulp (Programming Guide).
      {"cuda_expm1f", "CUDA expm1f", Subj::Expm1f, traits(Fn::Expm1, f32, {ClaimKind::Ulp, 1}, guide)},
      {"cuda_log1pf", "CUDA log1pf", Subj::Log1pf, traits(Fn::Log1p, f32, {ClaimKind::Ulp, 1}, guide)},
      // tanhf 2 ulp; __tanhf (tanh.approx.f32) a relative error of 2^-11 (Programming Guide, intrinsics: "subnormal
      // results are not flushed"); htanh f16/bf16 "in round-to-nearest-even mode" (CUDA Math API): 0 ulp.
      {"cuda_tanhf", "CUDA tanhf", Subj::Tanhf, traits(Fn::Tanh, f32, two, guide)},
      {"cuda___tanhf", "CUDA intrinsic __tanhf (tanh.approx.f32)", Subj::TanhfFast,
       traits(Fn::Tanh, f32, {ClaimKind::Relative, 0, 0, 0x1p-11}, guide)},
      {"cuda_htanh_f16", "CUDA htanh (__half)", Subj::Htanh, traits(Fn::Tanh, f16, cr, half)},
      {"cuda_htanh_bf16", "CUDA htanh (__nv_bfloat16)", Subj::BHtanh, traits(Fn::Tanh, bf16, cr, half)},
      // sinhf 3 ulp, coshf 2 ulp (Programming Guide, as recalled: to be confirmed against the installed guide).
      {"cuda_sinhf", "CUDA sinhf", Subj::Sinhf, traits(Fn::Sinh, f32, {ClaimKind::Ulp, 3}, guide)},
      {"cuda_coshf", "CUDA coshf", Subj::Coshf, traits(Fn::Cosh, f32, two, guide)},
      // cbrtf 1 ulp, erff 2 ulp, erfcf 4 ulp (Programming Guide, single-precision table, full range). Their reference has no
      // fast path yet (MPFR only, host): no device sweep; the CI suite `elementwise` checks them on sampled inputs.
      {"cuda_cbrtf", "CUDA cbrtf", Subj::Cbrtf, traits(Fn::Cbrt, f32, {ClaimKind::Ulp, 1}, guide)},
      {"cuda_erff", "CUDA erff", Subj::Erff, traits(Fn::Erf, f32, two, guide)},
      {"cuda_erfcf", "CUDA erfcf", Subj::Erfcf, traits(Fn::Erfc, f32, {ClaimKind::Ulp, 4}, guide)},
      // The activations as kernels write them; claims derived from the guide's bounds (docs/elementwise.md, "Activations"):
      // __expf-based sigmoid and SiLU 14 + floor(4.7 |x|) ulp on [-87, inf); softplus with expf/log1pf 12 ulp on [-87, inf);
      // GELU with erff abs 2^-20 on [-4, 4], with tanhf abs 2^-19 on [-4, 4]. MPFR reference: CI suite only.
      {"cuda_sigmoid_expf_fast", "CUDA 1.0f / (1.0f + __expf(-x))", Subj::SigmoidFast, traits(Fn::Sigmoid, f32, fast_act, derived)},
      {"cuda_silu_expf_fast", "CUDA x / (1.0f + __expf(-x))", Subj::SiluFast, traits(Fn::Silu, f32, fast_act, derived)},
      {"cuda_softplus", "CUDA x > 20 ? x : log1pf(expf(x)) (PyTorch's form)", Subj::Softplusf, traits(Fn::Softplus, f32, softplus, derived)},
      {"cuda_gelu_erff", "CUDA 0.5f * x * (1.0f + erff(x * 0.70710678f))", Subj::GeluErff, traits(Fn::GeluErf, f32, gelu, derived)},
      {"cuda_gelu_tanhf", "CUDA 0.5f * x * (1.0f + tanhf(0.7978845608f * (x + 0.044715f * x^3)))", Subj::GeluTanhf,
       traits(Fn::GeluTanh, f32, gelu_t, derived)},
      // sinf, cosf 2 ulp, tanf 4 ulp, sinpif, cospif 1 ulp (Programming Guide, full range); __sinf, __cosf: absolute 2^-21.41 for
      // x in [-pi, pi], "larger otherwise" (no claim outside). MPFR reference: CI suite only, no sweep.
      {"cuda_sinf", "CUDA sinf", Subj::Sinf, traits(Fn::Sin, f32, two, guide)},
      {"cuda_cosf", "CUDA cosf", Subj::Cosf, traits(Fn::Cos, f32, two, guide)},
      {"cuda_tanf", "CUDA tanf", Subj::Tanf, traits(Fn::Tan, f32, {ClaimKind::Ulp, 4}, guide)},
      {"cuda_sinpif", "CUDA sinpif", Subj::Sinpif, traits(Fn::Sinpi, f32, {ClaimKind::Ulp, 1}, guide)},
      {"cuda_cospif", "CUDA cospif", Subj::Cospif, traits(Fn::Cospi, f32, {ClaimKind::Ulp, 1}, guide)},
      {"cuda___sinf", "CUDA intrinsic __sinf (sin.approx.f32)", Subj::SinfFast, traits(Fn::Sin, f32, trig_fast, guide)},
      {"cuda___cosf", "CUDA intrinsic __cosf (cos.approx.f32)", Subj::CosfFast, traits(Fn::Cos, f32, trig_fast, guide)},
      // fpcert's expf_ops on the GPU (the exp softmax_*_warp_ops_cuda declares exactly): the same bits as the host's
      // fpcert_expf_ops, its 1 ulp claim checked on every input by the sweep.
      {"cuda_fpcert_expf_ops", "fpcert's expf_ops (oracle/math/expf_ops.hpp) on the GPU", Subj::ExpfOps,
       traits(Fn::Exp, f32, {ClaimKind::Ulp, math::kExpfOpsUlps}, "oracle/math/expf_ops.hpp: 0.94 ulp measured on the host, all inputs")},
  };
  for (const CudaSpec& s : specs)
    register_kernel(s.name, Backend::Cuda, false, [s] { return std::make_unique<CudaEltwise>(s); }, Operation::Elementwise);
}
#else
// The -use_fast_math twin (eltwise_cuda_fastmath.cu includes this file; docs/elementwise.md, "-use_fast_math builds"):
// nvcc then sets -ftz=true -prec-div=false -prec-sqrt=false -fmad=true and maps expf, exp10f, logf, log2f, log10f, sinf,
// cosf, tanf, sincosf, powf and fdividef to their intrinsics (the CUDA Math API marks them \note_fastmath), and (measured
// on the H200) tanhf to __tanhf. Each f32 subject is declared with the bound of what it becomes: the intrinsics' bounds
// (Programming Guide, intrinsic functions), the others' own bounds; every one with DAZ and FTZ (.ftz instructions:
// subnormal inputs read as zero, subnormal results flushed) except tanhf (tanh.approx.f32 has no .ftz form). sqrtf with -prec-sqrt=false: 1 ulp (Programming Guide, as recalled). tanf (-> __tanf: no bound documented) is
// not registered. Expected on the H200: to be measured (scripts/device_run.sh eltwise-fastmath).
void register_eltwise_cuda_fastmath_kernels() {
  using math::ClaimKind;
  using math::Fn;
  const char* intrinsic = "CUDA Programming Guide, intrinsic functions (-use_fast_math maps the function to it)";
  const char* own = "CUDA Programming Guide, the function's own bound (not remapped by -use_fast_math), under FTZ";
  const math::Claim one{ClaimKind::Ulp, 1}, two{ClaimKind::Ulp, 2};
  math::Claim trig_fast{ClaimKind::Absolute};
  trig_fast.bound = std::exp2(-21.41);
  trig_fast.lo = -3.14159265358979323846;
  trig_fast.hi = 3.14159265358979323846;
  auto fm = [](math::Fn f, math::Claim c, const char* source) { return traits(f, f32, c, source, true, true); };
  const std::vector<CudaSpec> specs = {
      {"cuda_fastmath_expf", "CUDA expf under -use_fast_math (__expf: ex2.approx.ftz.f32)", Subj::Expf,
       fm(Fn::Exp, {ClaimKind::Ulp, 2, 1.173}, intrinsic)},
      {"cuda_fastmath_exp2f", "CUDA exp2f under -use_fast_math (FTZ)", Subj::Exp2f, fm(Fn::Exp2, two, own)},
      {"cuda_fastmath_exp10f", "CUDA exp10f under -use_fast_math (__exp10f)", Subj::Exp10f, fm(Fn::Exp10, {ClaimKind::Ulp, 2, 2.97}, intrinsic)},
      {"cuda_fastmath_logf", "CUDA logf under -use_fast_math (__logf: lg2.approx.ftz.f32)", Subj::Logf,
       fm(Fn::Log, {ClaimKind::Absolute, 3, 0, std::exp2(-21.41), 0.5, 2.0}, intrinsic)},
      {"cuda_fastmath_log2f", "CUDA log2f under -use_fast_math (__log2f)", Subj::Log2f,
       fm(Fn::Log2, {ClaimKind::Absolute, 2, 0, 0x1p-22, 0.5, 2.0}, intrinsic)},
      {"cuda_fastmath_log10f", "CUDA log10f under -use_fast_math (__log10f)", Subj::Log10f,
       fm(Fn::Log10, {ClaimKind::Absolute, 3, 0, 0x1p-24, 0.5, 2.0}, intrinsic)},
      {"cuda_fastmath_sqrtf", "CUDA sqrtf under -use_fast_math (-prec-sqrt=false)", Subj::Sqrtf,
       fm(Fn::Sqrt, one, "CUDA Programming Guide: sqrtf 1 ulp without -prec-sqrt=true (as recalled), under FTZ")},
      {"cuda_fastmath_rsqrtf", "CUDA rsqrtf under -use_fast_math (FTZ)", Subj::Rsqrtf, fm(Fn::Rsqrt, two, own)},
      {"cuda_fastmath_expm1f", "CUDA expm1f under -use_fast_math (FTZ)", Subj::Expm1f, fm(Fn::Expm1, one, own)},
      {"cuda_fastmath_log1pf", "CUDA log1pf under -use_fast_math (FTZ)", Subj::Log1pf, fm(Fn::Log1p, one, own)},
      // tanhf becomes __tanhf (tanh.approx.f32, which has no .ftz form) under -use_fast_math: measured on the H200
      // (2026-12-05), the twin's results equal __tanhf's error profile (134 ulp at most on [0.5, 2)) and a subnormal input
      // comes back unchanged (0x00000003 -> 0x00000003): __tanhf's claim, no DAZ, no FTZ ("subnormal results are not
      // flushed", Programming Guide, intrinsic functions).
      {"cuda_fastmath_tanhf", "CUDA tanhf under -use_fast_math (__tanhf: tanh.approx.f32, subnormals kept)", Subj::Tanhf,
       traits(Fn::Tanh, f32, {ClaimKind::Relative, 0, 0, 0x1p-11}, intrinsic)},
      {"cuda_fastmath_sinhf", "CUDA sinhf under -use_fast_math (FTZ)", Subj::Sinhf, fm(Fn::Sinh, {ClaimKind::Ulp, 3}, own)},
      {"cuda_fastmath_coshf", "CUDA coshf under -use_fast_math (FTZ)", Subj::Coshf, fm(Fn::Cosh, two, own)},
      {"cuda_fastmath_cbrtf", "CUDA cbrtf under -use_fast_math (FTZ)", Subj::Cbrtf, fm(Fn::Cbrt, one, own)},
      // No device reference (MPFR only): the CI suite `elementwise` samples these, no sweep.
      {"cuda_fastmath_erff", "CUDA erff under -use_fast_math (FTZ)", Subj::Erff, fm(Fn::Erf, two, own)},
      {"cuda_fastmath_erfcf", "CUDA erfcf under -use_fast_math (FTZ)", Subj::Erfcf, fm(Fn::Erfc, {ClaimKind::Ulp, 4}, own)},
      {"cuda_fastmath_sinf", "CUDA sinf under -use_fast_math (__sinf: sin.approx.ftz.f32)", Subj::Sinf, fm(Fn::Sin, trig_fast, intrinsic)},
      {"cuda_fastmath_cosf", "CUDA cosf under -use_fast_math (__cosf: cos.approx.ftz.f32)", Subj::Cosf, fm(Fn::Cos, trig_fast, intrinsic)},
      {"cuda_fastmath_sinpif", "CUDA sinpif under -use_fast_math (FTZ)", Subj::Sinpif, fm(Fn::Sinpi, one, own)},
      {"cuda_fastmath_cospif", "CUDA cospif under -use_fast_math (FTZ)", Subj::Cospif, fm(Fn::Cospi, one, own)},
  };
  for (const CudaSpec& s : specs)
    register_kernel(s.name, Backend::Cuda, false, [s] { return std::make_unique<CudaEltwise>(s); }, Operation::Elementwise);
}
#endif

}  // namespace fpcert
