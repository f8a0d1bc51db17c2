// kernels/elementwise/cuda/eltwise2_cuda.cu — CUDA's binary functions as subjects of the elementwise check (issue 42,
// docs/elementwise.md, "Binary functions"): x / y, fdividef, __fdividef, __fdiv_rn, powf, atan2f, fmaxf, fminf, f32 x f32 ->
// f32. run() only: 2^64 pairs allow no device sweep; the host decides every reference with MPFR (suites `elementwise`:
// the special pairs and 2^18 designed pairs, `elementwise_full`: 2^24).
#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <vector>

#include "kernels/device/cuda_check.cuh"
#include "kernels/elementwise/eltwise_kernel.hpp"

namespace fpcert {
namespace {

enum class Subj2 : std::uint8_t { Div, Fdividef, FdividefFast, FdivRn, Powf, Atan2f, Fmaxf, Fminf };

template <Subj2 S>
__device__ __forceinline__ float subject2(float a, float b) {
  if constexpr (S == Subj2::Div) return a / b;
  else if constexpr (S == Subj2::Fdividef) return fdividef(a, b);  // x / y without -use_fast_math (CUDA Math API)
  else if constexpr (S == Subj2::FdividefFast) return __fdividef(a, b);
  else if constexpr (S == Subj2::FdivRn) return __fdiv_rn(a, b);
  else if constexpr (S == Subj2::Powf) return powf(a, b);
  else if constexpr (S == Subj2::Atan2f) return atan2f(a, b);  // atan2f(y = a, x = b)
  else if constexpr (S == Subj2::Fmaxf) return fmaxf(a, b);
  else return fminf(a, b);
}

template <Subj2 S>
__global__ void run_kernel2(std::int64_t n, const std::uint32_t* x1, const std::uint32_t* x2, std::uint32_t* z) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n; i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    z[i] = __float_as_uint(subject2<S>(__uint_as_float(x1[i]), __uint_as_float(x2[i])));
}

struct CudaSpec2 {
  std::string name, note;
  Subj2 subj;
  EltwiseTraits t;
};

class CudaEltwise2 final : public ElementwiseKernel {
 public:
  explicit CudaEltwise2(CudaSpec2 s) : s_(std::move(s)) {}
  const std::string& name() const override { return s_.name; }
  std::string description() const override { return s_.note; }
  Backend backend() const override { return Backend::Cuda; }
  MemorySpace memory() const override { return MemorySpace::Device; }
  const EltwiseTraits& eltwise_traits() const override { return s_.t; }

  void run(const EltwiseOperands& o) override {
    if (o.count <= 0) return;
    if (!o.x2) throw InputError(s_.name + ": a binary function needs its second operand (EltwiseOperands::x2)");
    const auto stream = static_cast<cudaStream_t>(o.stream);
    const unsigned blocks = static_cast<unsigned>(std::min<std::int64_t>((o.count + 255) / 256, 65535));
    const auto* a = static_cast<const std::uint32_t*>(o.x);
    const auto* b = static_cast<const std::uint32_t*>(o.x2);
    auto* z = static_cast<std::uint32_t*>(o.y);
    switch (s_.subj) {
#define FPCERT_ELT2_RUN(S) \
  case Subj2::S: run_kernel2<Subj2::S><<<blocks, 256, 0, stream>>>(o.count, a, b, z); break;
      FPCERT_ELT2_RUN(Div) FPCERT_ELT2_RUN(Fdividef) FPCERT_ELT2_RUN(FdividefFast) FPCERT_ELT2_RUN(FdivRn)
      FPCERT_ELT2_RUN(Powf) FPCERT_ELT2_RUN(Atan2f) FPCERT_ELT2_RUN(Fmaxf) FPCERT_ELT2_RUN(Fminf)
#undef FPCERT_ELT2_RUN
    }
    FPCERT_CUDA_LAUNCH_CHECK(s_.name.c_str());
  }

 private:
  CudaSpec2 s_;
};

EltwiseTraits traits2(math::Fn f, math::Claim c, const char* source) {
  EltwiseTraits t;
  t.fn = f;
  t.in = t.out = &f32;
  t.claim = c;
  t.claim_source = source;
  return t;
}

}  // namespace

#ifndef FPCERT_ELT_FASTMATH
void register_eltwise2_cuda_kernels() {
  using math::ClaimKind;
  using math::Fn;
  const math::Claim cr{ClaimKind::CorrectlyRounded};
  const char* guide = "CUDA Programming Guide, Mathematical Functions";
  // x / y and fdividef: 0 ulp with -prec-div=true, nvcc's default without -use_fast_math (this build); fdividef is x / y
  // then (CUDA Math API: "follows the regular division operation behavior by default"). __fdiv_rn: IEEE round-to-nearest.
  // __fdividef: 2 ulp for |y| in [2^-126, 2^126] (Programming Guide, intrinsics); for 2^126 < |y| < 2^128 it returns 0 for
  // finite x and NaN for infinite x (CUDA Math API); no claim for |y| below 2^-126 (subnormal) nor for +-Inf, NaN divisors.
  EltwiseTraits fast = traits2(Fn::Div, {ClaimKind::Ulp, 2}, "CUDA Programming Guide (2 ulp, |y| in [2^-126, 2^126]) and Math API (0, NaN beyond)");
  fast.x2_lo = 0x1p-126;
  fast.x2_hi = 0x1p126;
  fast.fdividef_large_x2 = true;
  const std::vector<CudaSpec2> specs = {
      {"cuda_div_f32", "CUDA x / y (-prec-div=true)", Subj2::Div, traits2(Fn::Div, cr, "CUDA Programming Guide: x/y 0 ulp with -prec-div=true")},
      {"cuda_fdividef", "CUDA fdividef (x / y without -use_fast_math)", Subj2::Fdividef, traits2(Fn::Div, cr, "CUDA Math API: fdividef is x / y by default")},
      {"cuda___fdividef", "CUDA intrinsic __fdividef", Subj2::FdividefFast, fast},
      {"cuda___fdiv_rn", "CUDA intrinsic __fdiv_rn", Subj2::FdivRn, traits2(Fn::Div, cr, "CUDA Math API: round-to-nearest-even")},
      // powf 4 ulp, atan2f 3 ulp (Programming Guide, single-precision table, full range, as recalled: the H200 run confirms or
      // refuses them, docs/elementwise.md); fmaxf, fminf exact with the NaN rule (CUDA Math API: a NaN operand yields the other).
      {"cuda_powf", "CUDA powf", Subj2::Powf, traits2(Fn::Pow, {ClaimKind::Ulp, 4}, guide)},
      {"cuda_atan2f", "CUDA atan2f(x1, x2) = atan2(y = x1, x = x2)", Subj2::Atan2f, traits2(Fn::Atan2, {ClaimKind::Ulp, 3}, guide)},
      {"cuda_fmaxf", "CUDA fmaxf", Subj2::Fmaxf, traits2(Fn::Fmax, cr, "CUDA Math API: exact, a NaN operand yields the other")},
      {"cuda_fminf", "CUDA fminf", Subj2::Fminf, traits2(Fn::Fmin, cr, "CUDA Math API: exact, a NaN operand yields the other")},
  };
  for (const CudaSpec2& s : specs)
    register_kernel(s.name, Backend::Cuda, false, [s] { return std::make_unique<CudaEltwise2>(s); }, Operation::Elementwise);
}
#else
// The -use_fast_math twin (eltwise2_cuda_fastmath.cu includes this file; docs/elementwise.md, "-use_fast_math builds"):
// x / y and fdividef become __fdividef (div.approx.ftz.f32, -prec-div=false), declared with its bound and documented
// results; __fdiv_rn stays round-to-nearest (div.rn.ftz.f32); atan2f, fmaxf, fminf keep their own bounds; every one under
// DAZ and FTZ. powf becomes __powf, whose bound the guide does not state as a number: no twin.
void register_eltwise2_cuda_fastmath_kernels() {
  using math::ClaimKind;
  using math::Fn;
  auto fm = [](EltwiseTraits t) {
    t.daz = t.ftz = true;
    return t;
  };
  EltwiseTraits fast = traits2(Fn::Div, {ClaimKind::Ulp, 2}, "-use_fast_math: __fdividef (Programming Guide: 2 ulp for |y| in [2^-126, 2^126]; Math API: 0, NaN beyond)");
  fast.x2_lo = 0x1p-126;
  fast.x2_hi = 0x1p126;
  fast.fdividef_large_x2 = true;
  const math::Claim cr{ClaimKind::CorrectlyRounded};
  const char* own = "CUDA Programming Guide / Math API, the function's own bound (not remapped by -use_fast_math), under FTZ";
  const std::vector<CudaSpec2> specs = {
      {"cuda_fastmath_div_f32", "CUDA x / y under -use_fast_math (__fdividef: div.approx.ftz.f32)", Subj2::Div, fm(fast)},
      {"cuda_fastmath_fdividef", "CUDA fdividef under -use_fast_math (__fdividef)", Subj2::Fdividef, fm(fast)},
      {"cuda_fastmath___fdiv_rn", "CUDA __fdiv_rn under -use_fast_math (div.rn.ftz.f32)", Subj2::FdivRn, fm(traits2(Fn::Div, cr, own))},
      {"cuda_fastmath_atan2f", "CUDA atan2f under -use_fast_math (FTZ)", Subj2::Atan2f, fm(traits2(Fn::Atan2, {ClaimKind::Ulp, 3}, own))},
      {"cuda_fastmath_fmaxf", "CUDA fmaxf under -use_fast_math (FTZ)", Subj2::Fmaxf, fm(traits2(Fn::Fmax, cr, own))},
      {"cuda_fastmath_fminf", "CUDA fminf under -use_fast_math (FTZ)", Subj2::Fminf, fm(traits2(Fn::Fmin, cr, own))},
  };
  for (const CudaSpec2& s : specs)
    register_kernel(s.name, Backend::Cuda, false, [s] { return std::make_unique<CudaEltwise2>(s); }, Operation::Elementwise);
}
#endif

}  // namespace fpcert
