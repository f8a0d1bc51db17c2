// tests/oracle/convert_simd_test.cpp — the Highway conversion kernels on every SIMD target this CPU
// supports (and Highway's scalar fallback), each held equal to the one-pattern core, to round_double()
// and to MPFR; the test prints the targets it ran.
#include <doctest/doctest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "oracle/convert/convert_batch.hpp"
#include "oracle/convert/convert_model.hpp"
#include "oracle/convert/convert_simd.hpp"
#include "oracle/mpfr_ref.hpp"
#include "base/philox.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;

namespace {

/// fp32 codes that force every case: random patterns, and around every binade edge of fp32 (which
/// holds every destination's overflow threshold, subnormal boundary and rounding ties, since every
/// destination quantum is a power of two): fraction tops and bottoms, the halfway patterns of each
/// destination precision (bit k set alone, with a bit below it, and with the bit above it), both signs.
std::vector<std::uint32_t> f32_cases() {
  std::vector<std::uint32_t> codes;
  const std::uint64_t key = test::seed() + 21;
  for (std::uint32_t i = 0; i < 20000; ++i) codes.push_back(random_bits32(key, i));
  for (std::uint32_t e = 0; e < 256; ++e) {
    std::vector<std::uint32_t> fr = {0u, 1u, 2u, 0x7FFFFFu, 0x7FFFFEu, 0x400000u, 0x400001u, 0x3FFFFFu};
    for (int k = 0; k < 23; ++k) {
      const std::uint32_t b = 1u << k;
      fr.push_back(b);                           // a tie at precision 23 - k (to even: down)
      fr.push_back(b | (b << 1));                // a tie with an odd last kept bit (to even: up)
      fr.push_back(b | (b >> 1) | (k ? 1u : 0u));  // above the tie
      fr.push_back(b - 1);                        // below the tie
    }
    for (const std::uint32_t m : fr)
      for (const std::uint32_t sgn : {0u, 0x80000000u}) codes.push_back(sgn | (e << 23) | (m & 0x7FFFFFu));
  }
  if (codes.size() % 2 == 0) codes.push_back(0x3F800001u);  // odd: a tail after the last whole vector
  return codes;
}

struct Mode {
  const Format* dst;
  Rounder r;
};
std::vector<Mode> modes() {
  std::vector<Mode> m;
  for (const Format* dst : all_formats()) {
    if (dst->total_bits() > 32) continue;
    for (const Rounding rd : kAllRoundings) {
      if (rd == Rounding::Stochastic) continue;  // one pattern at a time: not a SIMD path
      for (const Saturation sat : kAllSaturations) {
        if (!saturation_valid(*dst, sat)) continue;
        for (const NanPayload np : kAllNanPayloads)  // every NaN convention the destination can have (the newer under rn:
          // a NaN input's result never depends on the rounding direction)
          if (nan_payload_problem(*dst, np).empty() && (np <= NanPayload::Canonical || rd == Rounding::NearestEven))
            m.push_back({dst, {rd, sat, np}});
      }
    }
  }
  return m;
}

/// The dispatched kernel on `in` (odd length, so the tail runs too) against the one-pattern loop,
/// round_double() and, on every 31st code, MPFR. Returns the number of MPFR comparisons.
std::size_t check_target(const std::vector<std::uint32_t>& in, const Mode& md, const std::string& target) {
  const ConvertTarget t = make_convert_target(*md.dst, md.r);
  const std::size_t n = in.size();
  std::vector<std::uint32_t> simd(n), loop(n), simd_noflags(n);
  std::vector<std::uint8_t> simd_flags(n), loop_flags(n);
  convert_f32_simd(t, in.data(), 0, simd.data(), simd_flags.data(), n);
  convert_f32_simd(t, in.data(), 0, simd_noflags.data(), nullptr, n);
  convert_f32_loop(t, in.data(), 0, loop.data(), loop_flags.data(), n);
  std::size_t mpfr = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const Rounded ref = round_double(*md.dst, to_double(f32, in[i]), md.r);
    const bool sampled = i % 31 == 0;
    const bool ok = simd[i] == ref.code && simd_flags[i] == ref.flags && simd_noflags[i] == ref.code && loop[i] == ref.code &&
                    loop_flags[i] == ref.flags && (!sampled || mpfr_ref::convert(f32, in[i], *md.dst, md.r) == ref);
    mpfr += sampled;
    if (ok) continue;  // (doctest assertions per element would dominate the run time)
    INFO(target << ": f32 " << hex_code(f32, in[i]) << " -> " << md.dst->tag << " " << to_string(md.r.rounding) << "/"
                << to_string(md.r.saturation) << "/" << to_string(md.r.nan) << ": simd " << simd[i] << " flags "
                << int(simd_flags[i]) << ", loop " << loop[i] << ", round_double " << ref.code << " flags " << int(ref.flags));
    REQUIRE(simd[i] == ref.code);
    REQUIRE(simd_flags[i] == ref.flags);
    REQUIRE(simd_noflags[i] == ref.code);
    REQUIRE(loop[i] == ref.code);
    REQUIRE(loop_flags[i] == ref.flags);
    REQUIRE(mpfr_ref::convert(f32, in[i], *md.dst, md.r) == ref);
  }
  return mpfr;
}

/// The supported targets, each forced in turn; the dispatch is restored afterwards.
std::vector<std::int64_t> targets_to_run() {
  const std::vector<std::int64_t> t = simd_supported_targets();
  std::string names;
  for (const std::int64_t x : t) names += " " + simd_target_name(x);
  std::string compiled;
  for (const std::int64_t x : simd_compiled_targets()) compiled += " " + simd_target_name(x);
  std::printf("convert_simd_test: compiled targets:%s; this CPU runs:%s\n", compiled.c_str(), names.c_str());
  return t;
}

}  // namespace

TEST_CASE("Highway kernels == one-pattern core == round_double == MPFR, fp32 sources, every target the CPU supports") {
  const std::vector<std::uint32_t> in = f32_cases();
  REQUIRE(in.size() % 2 == 1);  // a tail after the last whole vector on every target
  const std::vector<std::int64_t> targets = targets_to_run();
  REQUIRE(!targets.empty());
  for (const std::int64_t target : targets) {
    simd_force_targets(target);
    const std::string name = simd_target_name(target);
    REQUIRE_MESSAGE(simd_dispatched_target() == target, "dispatch did not pick " << name);
    std::size_t mpfr = 0, combos = 0;
    for (const Mode& md : modes()) {
      mpfr += check_target(in, md, name);
      ++combos;
    }
    std::printf("convert_simd_test: %-8s %zu conversions x %zu fp32 codes equal to round_double, %zu of them to MPFR\n",
                name.c_str(), combos, in.size(), mpfr);
  }
  simd_force_targets(0);
}

TEST_CASE("Highway kernels on code ranges: every 16-bit source through its decode table, every fp32 code near 1 and 2^-126") {
  const std::vector<std::int64_t> targets = targets_to_run();
  for (const std::int64_t target : targets) {
    simd_force_targets(target);
    INFO(simd_target_name(target));
    for (const Format* src : all_formats()) {
      if (src->total_bits() > 16) continue;
      for (const Format* dst : {&f16, &bf16, &e4m3, &e5m2, &e2m1, &ue8m0, &f32}) {
        const Rounder r = Rounder::nearest(*dst);
        const std::size_t n = static_cast<std::size_t>(src->code_count());
        std::vector<std::uint32_t> out(n);
        std::vector<std::uint8_t> flags(n);
        convert_code_range(*src, *dst, r, 0, 0, out.data(), flags.data(), n);
        for (std::size_t c = 0; c < n; ++c) {
          const Rounded ref = convert(*src, c, *dst, r);
          if (out[c] == ref.code && flags[c] == ref.flags) continue;
          INFO(src->tag << " " << hex_code(*src, c) << " -> " << dst->tag);
          REQUIRE(out[c] == ref.code);
          REQUIRE(flags[c] == ref.flags);
        }
      }
    }
    // Ranges through the iota path (no input array): 2^16 + 7 codes from just below 1.0 and from the
    // fp32 normal/subnormal boundary, into every rounding of six destinations (whole vectors of
    // destination-normal lanes take the kernels' fast path, the others the general one).
    for (const std::uint32_t first : {0x3F7FFFF0u, 0x007FFFF0u, 0xFF7FFFF0u})
      for (const Format* dst : {&f16, &ue8m0, &bf16, &e4m3, &tf32, &e2m1})
        for (const Rounding rd : {Rounding::NearestEven, Rounding::NearestAway, Rounding::TowardZero, Rounding::Up, Rounding::Down}) {
          const Rounder r{rd, default_saturation(*dst), NanPayload::Preserve};
          const std::size_t n = 65536 + 7;
          std::vector<std::uint32_t> out(n);
          std::vector<std::uint8_t> flags(n);
          convert_code_range(f32, *dst, r, 0, first, out.data(), flags.data(), n);
          for (std::size_t i = 0; i < n; ++i) {
            const std::uint32_t c = first + static_cast<std::uint32_t>(i);
            const Rounded ref = convert(f32, c, *dst, r);
            if (out[i] == ref.code && flags[i] == ref.flags) continue;
            INFO(hex_code(f32, c) << " -> " << dst->tag << " " << to_string(rd));
            REQUIRE(out[i] == ref.code);
            REQUIRE(flags[i] == ref.flags);
          }
        }
  }
  simd_force_targets(0);
}

TEST_CASE("the per-pattern model (the device check's) equals the batch path: codes, flags and outcome keys") {
  const std::vector<std::uint32_t> in = f32_cases();
  for (const Format* src : {&f32, &tf32, &f16, &bf16, &e4m3, &e5m2, &e2m3, &e2m1, &ue8m0}) {
    for (const Format* dst : {&f16, &bf16, &tf32, &e4m3, &e5m2, &e3m2, &ue8m0, &f32}) {
      for (const Rounder r : {Rounder::nearest(*dst), Rounder{Rounding::TowardZero, Saturation::Finite, NanPayload::Preserve},
                              Rounder{Rounding::Up, default_saturation(*dst), NanPayload::Canonical}}) {
        const ConvertModel m = make_convert_model(*src, *dst, r);
        std::vector<std::uint32_t> codes;
        if (src->code_count() <= 65536) {
          for (std::uint32_t c = 0; c < src->code_count(); ++c) codes.push_back(c);
        } else {
          for (const std::uint32_t c : in) codes.push_back(static_cast<std::uint32_t>(c & src->code_mask()));
        }
        std::vector<std::uint32_t> out(codes.size());
        std::vector<std::uint8_t> flags(codes.size());
        convert_codes(*src, *dst, r, 0, codes.data(), out.data(), flags.data(), codes.size());
        for (std::size_t i = 0; i < codes.size(); ++i) {
          const ModelResult mr = model_convert(m, codes[i]);
          const std::uint32_t key = static_cast<std::uint32_t>(classify(*src, codes[i])) * 40u +
                                    static_cast<std::uint32_t>(classify(*dst, out[i])) * 8u + (flags[i] & 7u);
          if (mr.code == out[i] && mr.flags == flags[i] && mr.key == key) continue;
          INFO(src->tag << " " << hex_code(*src, codes[i]) << " -> " << dst->tag << " " << to_string(r.rounding));
          REQUIRE(mr.code == out[i]);
          REQUIRE(mr.flags == flags[i]);
          REQUIRE(mr.key == key);
        }
      }
    }
  }
}
