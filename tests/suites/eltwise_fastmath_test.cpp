// tests/suites/eltwise_fastmath_test.cpp — the -use_fast_math twins' declarations (kernels/elementwise/cuda/
// eltwise_cuda_fastmath.cu; docs/elementwise.md, "-use_fast_math builds"), on the host: each twin of a remapped function
// declares the bound of the intrinsic it becomes (the same claim as the intrinsic's own subject, cuda___expf, ...), every twin
// but tanhf's (tanh.approx.f32 has no .ftz form) DAZ and FTZ (binary twins too: x / y becomes __fdividef); and the host check honours them: a subnormal input reads as 0, a flushed subnormal result counts 0 ulp where
// the same result under the intrinsic's own declaration (no FTZ) is refused. A build without CUDA has no twins: skipped.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>

#include "kernels/elementwise/eltwise_kernel.hpp"
#include "suites/ops/elementwise/eltwise_check.hpp"

using namespace fpcert;

namespace {
bool same_claim(const math::Claim& a, const math::Claim& b) {
  return a.kind == b.kind && a.ulps == b.ulps && a.ulp_slope == b.ulp_slope && a.bound == b.bound && a.lo == b.lo && a.hi == b.hi;
}
}  // namespace

TEST_CASE("-use_fast_math twins declare their intrinsic's bound, DAZ and FTZ; the host check honours DAZ and FTZ") {
  auto twin = make_eltwise_kernel("cuda_fastmath_expf");
  if (!twin) {
    MESSAGE("no CUDA kernels in this build: the -use_fast_math twins are not registered");
    return;
  }
  std::size_t unary = 0, binary = 0;
  for (const auto& n : kernel_names(false, Operation::Elementwise)) {
    if (n.rfind("cuda_fastmath_", 0) != 0) continue;
    const auto k = make_eltwise_kernel(n);
    const EltwiseTraits& t = k->eltwise_traits();
    INFO(n);
    // tanhf becomes __tanhf, tanh.approx.f32, which has no .ftz form: subnormals kept (measured on the H200).
    CHECK(t.daz == (n != "cuda_fastmath_tanhf"));
    CHECK(t.ftz == (n != "cuda_fastmath_tanhf"));
    CHECK(t.in == &f32);
    (math::arity(t.fn) == 1 ? unary : binary) += 1;
  }
  CHECK(unary == 20);
  CHECK(binary == 6);
  CHECK_FALSE(make_eltwise_kernel("cuda_fastmath_powf"));  // __powf: no bound stated as a number, no twin
  CHECK_FALSE(make_eltwise_kernel("cuda_fastmath_tanf"));  // __tanf: no documented bound, no twin
  // expf -> __expf, exp10f -> __exp10f, logf -> __logf, ...: the claim of the intrinsic's own subject.
  for (const auto& [fast, intrinsic] : {std::pair{"cuda_fastmath_expf", "cuda___expf"}, {"cuda_fastmath_exp10f", "cuda___exp10f"},
                                        {"cuda_fastmath_logf", "cuda___logf"}, {"cuda_fastmath_log2f", "cuda___log2f"},
                                        {"cuda_fastmath_log10f", "cuda___log10f"}, {"cuda_fastmath_sinf", "cuda___sinf"},
                                        {"cuda_fastmath_cosf", "cuda___cosf"}, {"cuda_fastmath_tanhf", "cuda___tanhf"}}) {
    INFO(fast);
    CHECK(same_claim(make_eltwise_kernel(fast)->eltwise_traits().claim, make_eltwise_kernel(intrinsic)->eltwise_traits().claim));
  }
  const EltwiseTraits& t = twin->eltwise_traits();
  const auto intrinsic = make_eltwise_kernel("cuda___expf");
  const EltwiseTraits& plain = intrinsic->eltwise_traits();
  // exp(-88) = 6.05e-39: subnormal in f32 (below 2^-126 = 1.18e-38), about 4.3 million codes above 0. A flushed 0 is 0 ulp
  // under FTZ; under __expf's own declaration (no FTZ) it is millions of ulp, far beyond 2 + floor(1.173 * 88) = 105.
  const std::uint32_t x = std::bit_cast<std::uint32_t>(-88.0f);
  EltwiseTally ftz, no_ftz;
  eltwise_check_one(t, x, 0u, ftz);
  eltwise_check_one(plain, x, 0u, no_ftz);
  CHECK(ftz.above == 0);
  CHECK(ftz.histogram[0] == 1);
  CHECK(no_ftz.above == 1);
  // A subnormal input (2^-140) reads as 0 under DAZ: exp(0) = 1 exactly, so 1.0 is 0 ulp.
  EltwiseTally daz;
  eltwise_check_one(t, 0x00000200u, std::bit_cast<std::uint32_t>(1.0f), daz);
  CHECK(daz.histogram[0] == 1);
  CHECK(eltwise_input(t, 0x80000200u) == 0.0f);
  CHECK(std::signbit(eltwise_input(t, 0x80000200u)));
  // x / y under fast math is __fdividef: its claim and documented results, with DAZ on both operands. 2^-140 / 1 reads as
  // 0 / 1 = 0 under DAZ (a 0 result is 0 ulp); under cuda___fdividef's own declaration (no DAZ) 0 is 2^9 codes from 2^-140.
  const auto div = make_eltwise_kernel("cuda_fastmath_div_f32"), fdividef = make_eltwise_kernel("cuda___fdividef");
  const EltwiseTraits& td = div->eltwise_traits();
  CHECK(same_claim(td.claim, fdividef->eltwise_traits().claim));
  CHECK(td.x2_lo == fdividef->eltwise_traits().x2_lo);
  CHECK(td.x2_hi == fdividef->eltwise_traits().x2_hi);
  CHECK(td.fdividef_large_x2);
  EltwiseTally d_daz, d_plain;
  eltwise_check_two(td, 0x00000200u, std::bit_cast<std::uint32_t>(1.0f), 0u, d_daz);
  eltwise_check_two(fdividef->eltwise_traits(), 0x00000200u, std::bit_cast<std::uint32_t>(1.0f), 0u, d_plain);
  CHECK(d_daz.above == 0);
  CHECK(d_daz.histogram[0] == 1);
  CHECK(d_plain.above == 1);
  CHECK(d_plain.worst.ulps == 512);
}
