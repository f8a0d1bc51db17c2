// tests/oracle/nan_conventions_test.cpp — every declarable NaN convention (oracle/round.hpp NanPayload)
// against values spelled out here from their sources, on every pattern of every source of at most 16
// bits and every destination; which results each convention accepts, over every code of every
// destination of at most 16 bits; and the conversion check enforcing exactly what is declared.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "oracle/convert/convert_check.hpp"
#include "oracle/round.hpp"

using namespace fpcert;

namespace {

/// What each convention writes, per destination, typed from the sources rather than derived from the
/// descriptor (oracle/round.cpp derives them; this table checks the derivation):
/// - nvidia: CUDA's NaN constants, positive with every exponent and fraction bit set: cuda_fp16.hpp
///   CUDART_NAN_FP16 0x7FFF, cuda_bf16.hpp CUDART_NAN_BF16 0x7FFF, math_constants.h CUDART_NAN_F
///   0x7FFFFFFF (and CUDART_NAN 0x7FFFFFFFFFFFFFFF), cuda_fp8.hpp's e4m3/e5m2 NaN 0x7F, ue8m0 0xFF; for the
///   finite-only formats PTX ISA 9.0 cvt ".satfinite": "NaN results are converted to positive MAX_NORM"
///   (e2m3 +7.5 = 0x1F, e3m2 +28 = 0x1F, e2m1 +6 = 0x7), as cuda_fp6.hpp/cuda_fp4.hpp's emulation.
/// - canonical: IEEE 754's quiet NaN with the quiet bit alone, positive (f16 0x7E00, ...); e4m3's only
///   positive NaN 0x7F; finite-only: +largest, as fpcert wrote before the conventions were declarable.
/// - ml_dtypes (finite-only only): ml_dtypes/include/float8.h ConvertImpl::run returns
///   `from_sign ? -quiet_NaN() : quiet_NaN()`, mxfloat.h's quiet_NaN() is FromRep(0b1'00'000) (e2m3),
///   FromRep(0b1'000'00) (e3m2), FromRep(0b1'00'0) (e2m1), and operator-() flips the sign bit: +NaN gives
///   -0 (0x20, 0x20, 0x8), -NaN gives +0 (0x00).
/// - inf: the exponent field all ones (the base of a preserved IEEE NaN); 0 where there is no Inf.
struct Expect {
  const Format* f;
  std::uint64_t nvidia, canonical, ml_pos, ml_neg, inf;
};
const Expect kExpect[] = {
    {&f64, 0x7FFFFFFFFFFFFFFFull, 0x7FF8000000000000ull, 0, 0, 0x7FF0000000000000ull},
    {&f32, 0x7FFFFFFF, 0x7FC00000, 0, 0, 0x7F800000},
    {&tf32, 0x3FFFF, 0x3FE00, 0, 0, 0x3FC00},  // tf32 codes: 19 bits, 1/8/10
    {&f16, 0x7FFF, 0x7E00, 0, 0, 0x7C00},
    {&bf16, 0x7FFF, 0x7FC0, 0, 0, 0x7F80},
    {&e4m3, 0x7F, 0x7F, 0, 0, 0},
    {&e5m2, 0x7F, 0x7E, 0, 0, 0x7C},
    {&e2m3, 0x1F, 0x1F, 0x20, 0x00, 0},
    {&e3m2, 0x1F, 0x1F, 0x20, 0x00, 0},
    {&e2m1, 0x7, 0x7, 0x8, 0x0, 0},
    {&ue8m0, 0xFF, 0xFF, 0, 0, 0},
};

const Expect& expect(const Format& f) {
  for (const auto& e : kExpect)
    if (*e.f == f) return e;
  FAIL("no expectation for " << f.tag);
  return kExpect[0];
}

/// The code a NaN source code `code` of `src` must give in `dst` under n, from the table above. Preserve
/// into an IEEE destination: sign, the exponent all ones, the source's fraction bits top-aligned in the
/// destination's (cut when it is narrower; an e4m3 or ue8m0 NaN has none), the quiet bit (the top fraction
/// bit) set; into e4m3: the sign
/// and 0x7F; finite-only: +largest; ue8m0: 0xFF.
std::uint64_t expected(const Format& src, std::uint64_t code, const Format& dst, NanPayload n) {
  const Expect& e = expect(dst);
  const bool neg = (code & src.sign_mask()) != 0;
  switch (n) {
    case NanPayload::Nvidia: return e.nvidia;
    case NanPayload::Canonical:
    case NanPayload::Any: return e.canonical;  // Any: the model's stand-in; any NaN is accepted
    case NanPayload::MlDtypes: return neg ? e.ml_neg : e.ml_pos;
    case NanPayload::Preserve: break;
  }
  if (dst == ue8m0 || dst.specials == Specials::FiniteOnly) return e.nvidia;  // 0xFF; +largest
  if (dst == e4m3) return (neg ? 0x80u : 0u) | 0x7Fu;
  // e4m3's S.1111.111 and ue8m0's 0xFF are the format's one NaN: their fraction bits are no payload.
  const std::uint64_t frac = src.specials == Specials::IEEE ? code & ((std::uint64_t{1} << src.frac_bits) - 1) : 0;
  const std::uint64_t moved = dst.frac_bits >= src.frac_bits ? frac << (dst.frac_bits - src.frac_bits) : frac >> (src.frac_bits - dst.frac_bits);
  return (neg ? std::uint64_t{1} << (dst.total_bits() - 1) : 0) | e.inf | moved | (std::uint64_t{1} << (dst.frac_bits - 1));
}

bool valid(const Format& dst, NanPayload n) { return nan_payload_problem(dst, n).empty(); }

}  // namespace

TEST_CASE("names: every convention parses back from its name; aliases; unknown names refused") {
  for (const NanPayload n : kAllNanPayloads) CHECK(parse_nan_payload(to_string(n)) == n);
  CHECK(parse_nan_payload("cuda") == NanPayload::Nvidia);
  CHECK(parse_nan_payload("IEEE") == NanPayload::Canonical);
  CHECK(parse_nan_payload("ml-dtypes") == NanPayload::MlDtypes);
  CHECK_FALSE(parse_nan_payload("quiet"));
  CHECK_FALSE(parse_nan_payload(""));
}

TEST_CASE("which conventions each destination can declare: any needs a NaN, ml_dtypes a finite-only format") {
  for (const Format* f : all_formats()) {
    CHECK(valid(*f, NanPayload::Preserve));
    CHECK(valid(*f, NanPayload::Canonical));
    CHECK(valid(*f, NanPayload::Nvidia));
    CHECK(valid(*f, NanPayload::Any) == (*f != e2m3 && *f != e3m2 && *f != e2m1));
    CHECK(valid(*f, NanPayload::MlDtypes) == (*f == e2m3 || *f == e3m2 || *f == e2m1));
  }
}

TEST_CASE("every NaN convention on every pattern of every source of at most 16 bits, into every destination") {
  // Non-NaN sources must not see the convention: their results equal preserve's (the rounding path).
  std::uint64_t nan_inputs_checked = 0;
  for (const Format* src : all_formats()) {
    if (src->total_bits() > 16) continue;
    for (const Format* dst : all_formats())
      for (const NanPayload n : kAllNanPayloads) {
        if (!valid(*dst, n)) continue;
        const Rounder r{Rounding::NearestEven, default_saturation(*dst), n};
        const Rounder pres{Rounding::NearestEven, default_saturation(*dst), NanPayload::Preserve};
        for (std::uint64_t c = 0; c < src->code_count(); ++c) {
          const std::uint64_t got = convert(*src, c, *dst, r).code;
          if (classify(*src, c) != FpClass::NaN) {
            REQUIRE_MESSAGE(got == convert(*src, c, *dst, pres).code, src->tag << " " << hex_code(*src, c) << " -> " << dst->tag);
            continue;
          }
          ++nan_inputs_checked;
          const std::uint64_t want = expected(*src, c, *dst, n);
          REQUIRE_MESSAGE(got == want, src->tag << " NaN " << hex_code(*src, c) << " -> " << dst->tag << " under " << to_string(n)
                                                << ": got " << hex_code(*dst, got) << ", want " << hex_code(*dst, want));
          if (n == NanPayload::Any) REQUIRE(classify(*dst, got) == FpClass::NaN);
        }
      }
  }
  // f16 and bf16 have 2046 and 254 NaN codes, e4m3 2, e5m2 6, ue8m0 1: 2309 NaN inputs per (destination,
  // convention) pair; 11 destinations take preserve, canonical and nvidia, 8 take any, 3 take ml_dtypes.
  CHECK(nan_inputs_checked == 2309ull * (11 * 3 + 8 + 3));
}

TEST_CASE("fp32 NaN inputs (both signs, payloads at both ends and the quiet bit alone) under every convention") {
  for (const std::uint32_t mag : {0x7F800001u, 0x7FC00000u, 0x7FFFFFFFu, 0x7F802000u, 0x7FA5A5A5u})
    for (const std::uint32_t sgn : {0u, 0x80000000u})
      for (const Format* dst : all_formats())
        for (const NanPayload n : kAllNanPayloads) {
          if (!valid(*dst, n)) continue;
          const std::uint64_t got = convert(f32, sgn | mag, *dst, {Rounding::NearestEven, default_saturation(*dst), n}).code;
          CHECK_MESSAGE(got == expected(f32, sgn | mag, *dst, n), "f32 " << hex_code(f32, sgn | mag) << " -> " << dst->tag << " " << to_string(n));
        }
  // Spot values stated in docs/formats.md: __float2half_rn(-NaN) is 0x7FFF (the sign dropped), an
  // fp6 e2m1 NaN is +6 (0x7) under nvidia and -0 / +0 under ml_dtypes.
  CHECK(convert(f32, 0xFFC00000, f16, {Rounding::NearestEven, Saturation::Inf, NanPayload::Nvidia}).code == 0x7FFF);
  CHECK(convert(f32, 0xFFC00000, e2m1, {Rounding::NearestEven, Saturation::Finite, NanPayload::Nvidia}).code == 0x7);
  CHECK(convert(f32, 0x7FC00000, e2m1, {Rounding::NearestEven, Saturation::Finite, NanPayload::MlDtypes}).code == 0x8);
  CHECK(convert(f32, 0xFFC00000, e2m1, {Rounding::NearestEven, Saturation::Finite, NanPayload::MlDtypes}).code == 0x0);
}

TEST_CASE("what each convention accepts, over every code of every destination of at most 16 bits") {
  for (const Format* dst : all_formats()) {
    if (dst->total_bits() > 16) continue;
    for (const NanPayload n : kAllNanPayloads) {
      if (!valid(*dst, n)) continue;
      for (const bool neg : {false, true}) {
        const std::uint64_t want = nan_input_code(*dst, neg, std::uint64_t{1} << 63, n);
        std::uint64_t accepted = 0, nan_codes = 0;
        for (std::uint64_t g = 0; g < dst->code_count(); ++g) {
          const bool ok = nan_result_accepted(*dst, n, want, g);
          const bool is_nan = classify(*dst, g) == FpClass::NaN;
          nan_codes += is_nan;
          accepted += ok;
          if (n == NanPayload::Any) REQUIRE_MESSAGE(ok == is_nan, dst->tag << " " << hex_code(*dst, g));  // a number never passes
          else REQUIRE(ok == (g == want));
        }
        CHECK(accepted == (n == NanPayload::Any ? nan_codes : 1));
      }
    }
  }
}

TEST_CASE("describe: the words and codes the report and fpcert kernels print") {
  CHECK(describe_nan_convention(f16, NanPayload::Nvidia) == "every NaN input -> 0x7fff");
  CHECK(describe_nan_convention(bf16, NanPayload::Canonical) == "every NaN input -> 0x7fc0");
  CHECK(describe_nan_convention(e2m1, NanPayload::MlDtypes) == "+NaN -> 0x08, -NaN -> 0x00");
  CHECK(describe_nan_convention(e4m3, NanPayload::Preserve) == "+NaN -> 0x7f, -NaN -> 0xff");
  CHECK(describe_nan_convention(f32, NanPayload::Preserve) == "sign and the payload's top bits kept, quiet bit set");
  CHECK(describe_nan_convention(f16, NanPayload::Any) == "any NaN of f16");
}

namespace {

/// A bf16 -> dst subject: the model's results, except that every NaN input gets `nan_code` (a negative
/// NaN gets `nan_code_neg`).
ConvertCheckResult check_subject(const Format& dst, NanPayload declared, std::uint64_t nan_code, std::uint64_t nan_code_neg,
                                 bool counted_apart = false, bool strict = false) {
  ConvertCheckSpec spec;
  spec.src = &bf16;
  spec.dst = &dst;
  spec.rounder = {Rounding::NearestEven, default_saturation(dst), declared};
  spec.nan_counted_apart = counted_apart;
  spec.strict_nan = strict;
  spec.mpfr_every = true;
  spec.threads = 1;
  std::vector<std::uint32_t> out(65536);
  for (std::uint32_t c = 0; c < 65536; ++c) {
    const bool nan = classify(bf16, c) == FpClass::NaN;
    out[c] = static_cast<std::uint32_t>(nan ? ((c & 0x8000) ? nan_code_neg : nan_code) : convert(bf16, c, dst, spec.rounder).code);
  }
  ConvertCheckResult acc;
  check_conversion_chunk(spec, 0, 65536, SubjectChunk{out.data(), 4, false}, acc);
  return acc;
}

}  // namespace

// bf16 has 254 NaN codes (sign, exponent 0xFF, fraction 1..0x7F), 127 of each sign: each case below
// states how many of them the subject gets wrong under the declaration.
TEST_CASE("the check enforces exactly the declared convention: bf16 -> f16, all 65536 patterns") {
  // NVIDIA's 0x7FFF for every NaN: right under nvidia, wrong on all 254 under canonical (0x7E00) ...
  CHECK(check_subject(f16, NanPayload::Nvidia, 0x7FFF, 0x7FFF).mismatches == 0);
  CHECK(check_subject(f16, NanPayload::Canonical, 0x7FFF, 0x7FFF).mismatches == 254);
  // ... and under preserve, whose f16 fraction is the bf16 fraction << 3 with the quiet bit set: its low
  // three bits are always 0, so never 0x3FF: all 254 wrong.
  CHECK(check_subject(f16, NanPayload::Preserve, 0x7FFF, 0x7FFF).mismatches == 254);
  // A kernel declaring nvidia that writes the IEEE canonical NaN: all 254 wrong.
  CHECK(check_subject(f16, NanPayload::Nvidia, 0x7E00, 0x7E00).mismatches == 254);
  // Any NaN: 0x7FFF and 0xFE01 (a negative signalling NaN) both pass, counted as accepted differences;
  // a number (+0) for a NaN input fails on every one.
  const ConvertCheckResult any_ok = check_subject(f16, NanPayload::Any, 0x7FFF, 0xFE01);
  CHECK(any_ok.mismatches == 0);
  CHECK(any_ok.nan_differences == 254);
  CHECK(check_subject(f16, NanPayload::Any, 0x0000, 0x0000).mismatches == 254);
  CHECK(check_subject(f16, NanPayload::Any, 0x7C00, 0xFC00).mismatches == 254);  // infinities are not NaNs
  // A legacy preserve (a plugin of ABI minor 0 or 1) keeps its leniency: counted apart, unless --strict-nan.
  const ConvertCheckResult legacy = check_subject(f16, NanPayload::Preserve, 0x7FFF, 0x7FFF, true);
  CHECK(legacy.mismatches == 0);
  CHECK(legacy.nan_differences == 254);
  CHECK(check_subject(f16, NanPayload::Preserve, 0x7FFF, 0x7FFF, true, true).mismatches == 254);
}

TEST_CASE("finite-only destinations: CUDA's +largest and ml_dtypes' signed zero are different declarations (bf16 -> e2m1)") {
  // CUDA (nvidia): +6 (0x7) for every NaN.
  CHECK(check_subject(e2m1, NanPayload::Nvidia, 0x7, 0x7).mismatches == 0);
  CHECK(check_subject(e2m1, NanPayload::MlDtypes, 0x7, 0x7).mismatches == 254);
  // ml_dtypes: -0 (0x8) for +NaN, +0 for -NaN.
  CHECK(check_subject(e2m1, NanPayload::MlDtypes, 0x8, 0x0).mismatches == 0);
  CHECK(check_subject(e2m1, NanPayload::Nvidia, 0x8, 0x0).mismatches == 254);
  // The sign the other way round: every NaN of both signs wrong.
  CHECK(check_subject(e2m1, NanPayload::MlDtypes, 0x0, 0x8).mismatches == 254);
  // -6 (0xF, the largest of the input's sign) for -NaN is not CUDA's convention: the 127 negative NaNs fail.
  CHECK(check_subject(e2m1, NanPayload::Nvidia, 0x7, 0xF).mismatches == 127);
}
