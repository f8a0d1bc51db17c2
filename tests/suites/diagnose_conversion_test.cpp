// tests/suites/diagnose_conversion_test.cpp — the diagnosis of a conversion kernel (suites/diagnose/diagnose_conversion;
// docs/diagnose.md, "Conversions"): fpcert's conversion model run under another rounding mode or saturation, or wrapped
// to flush results (FTZ), flush inputs (DAZ) or flip a bit, while it declares the default conversion; each change is
// made by the model or the wrapper, apart from the hypothesis that should name it; the conversion faults kernels make in
// practice (ties away, no saturation or saturating where NaN is due, a signaling NaN not quieted, the sign of zero lost)
// each named by theirs.
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <string>

#include "base/codes.hpp"
#include "base/error.hpp"
#include "kernels/convert/model_convert.hpp"
#include "suites/diagnose/diagnose_conversion.hpp"

using namespace fpcert;

namespace {

/// A conversion kernel that runs `inner` on the source codes (optionally changed by `in`), changes its results by `out`,
/// and declares `declared`.
class Altered final : public ConversionKernel {
 public:
  using Map = std::function<std::uint64_t(std::uint64_t)>;
  using Map2 = std::function<std::uint64_t(std::uint64_t src, std::uint64_t res)>;  ///< a result changed knowing its source
  Altered(std::unique_ptr<ConversionKernel> inner, ConversionTraits declared, Map in, Map out, Map2 both = nullptr)
      : inner_(std::move(inner)), t_(declared), in_(std::move(in)), out_(std::move(out)), both_(std::move(both)) {}
  const std::string& name() const override { return name_; }
  std::string description() const override { return "altered"; }
  Backend backend() const override { return Backend::Cpu; }
  const ConversionTraits& conversion() const override { return t_; }
  void run(const ConvertOperands& ops) override {
    const int sb = container_bytes(*t_.src), db = container_bytes(*t_.dst);
    for (std::int64_t i = 0; i < ops.count; ++i) {  // one code at a time: the input map may change each code
      const std::uint64_t source = load_code(ops.src, i, sb);
      std::uint64_t code = source, res = 0;
      if (in_) code = in_(code);
      inner_->run({code, 1, &code, &res, nullptr});
      std::uint64_t r = out_ ? out_(load_code(&res, 0, db)) : load_code(&res, 0, db);
      if (both_) r = both_(from_container(*t_.src, source), r);
      store_code(ops.dst, i, db, r);
    }
  }

 private:
  std::string name_ = "altered";
  std::unique_ptr<ConversionKernel> inner_;
  ConversionTraits t_;
  Map in_, out_;
  Map2 both_;
};

/// bf16 -> f16 as declared by default (nearest-even, overflow to Inf, NaN preserved) over every bf16 code: bf16's 8-bit
/// significands fit f16's 11, so the rounding happens where f16's range ends: values below 2^-14 round into f16's
/// subnormals or to zero, those past 65504 overflow; bf16's NaNs carry 7-bit payloads.
ConversionTraits bf16_to_f16() { return {&bf16, &f16, Rounder::nearest(f16)}; }

DiagnosisRecord diagnose_altered(const ConversionTraits& declared, const Rounder& computed, Altered::Map in, Altered::Map out,
                                 const std::string& c = "all") {
  Altered k(make_model_conversion_kernel(*declared.src, *declared.dst, computed, 0), declared, std::move(in), std::move(out));
  return diagnose_conversion_kernel(k, c);
}

}  // namespace

TEST_CASE("diagnose conversion: fpcert's model is its declared conversion, bit for bit on every code") {
  const DiagnosisRecord r = diagnose_altered(bf16_to_f16(), Rounder::nearest(f16), nullptr, nullptr);
  CHECK(r.kind == "declared");
  REQUIRE(!r.ranked.empty());
  CHECK(r.ranked[0].id == "declared");
  CHECK(r.ranked[0].matched == 65536);
  CHECK(r.ranked[0].elements == 65536);
  // The test can fail: truncation differs from nearest-even where f16 drops bits (its subnormals) and at overflow
  // (65504 instead of Inf), so it must miss some codes here.
  for (const DiagnosisHypothesis& h : r.ranked)
    if (h.id == "round=rz") CHECK(h.matched < h.elements);
}

TEST_CASE("diagnose conversion: truncation where nearest-even is declared is named, 100 %") {
  // f32 -> f16 on [1, 1 + 2^-7): 13 bits dropped, every low-16-bit pattern, so ties and non-ties of f16 alike.
  const ConversionTraits decl{&f32, &f16, Rounder::nearest(f16)};
  Rounder rz = decl.rounder;
  rz.rounding = Rounding::TowardZero;
  const DiagnosisRecord r = diagnose_altered(decl, rz, nullptr, nullptr, "0x3f800000+65536");
  CHECK(r.kind == "consistent");
  REQUIRE(!r.ranked.empty());
  CHECK(r.ranked[0].id == "round=rz");
  CHECK(r.ranked[0].matched == r.ranked[0].elements);
  // On positive codes toward zero is toward -Inf: the two are look-alikes there, and said so; nothing else reproduces it.
  CHECK(r.ranked[0].same_as == std::vector<std::string>{"round=rd"});
  CHECK(r.verdict.find("indistinguishable on these codes from round=rd") != std::string::npos);
  CHECK(r.ranked[2].matched < r.ranked[2].elements);
  CHECK(r.verdict.find("toward zero") != std::string::npos);
}

TEST_CASE("diagnose conversion: satfinite where Inf is declared, a canonical NaN where preserved is, are named, 100 %") {
  Rounder sat = Rounder::nearest(f16), canon = Rounder::nearest(f16);
  sat.saturation = Saturation::Finite;  // bf16 values past 65520 overflow in f16: 65504 instead of Inf
  canon.nan = NanPayload::Canonical;    // bf16's NaNs with payloads: 0x7e00 instead of their payload's top bits
  for (const auto& [computed, id] : {std::pair{sat, "sat=satfinite"}, std::pair{canon, "nan=canonical"}}) {
    CAPTURE(id);
    const DiagnosisRecord r = diagnose_altered(bf16_to_f16(), computed, nullptr, nullptr);
    CHECK(r.kind == "consistent");
    CHECK(r.ranked[0].id == id);
    CHECK(r.ranked[0].matched == 65536);
    for (const DiagnosisHypothesis& h : r.ranked)
      if (h.id == "declared") CHECK(h.matched < h.elements);
  }
}

TEST_CASE("diagnose conversion: flushed results (FTZ) and flushed inputs (DAZ) are named, 100 %") {
  SUBCASE("FTZ: bf16 -> f16 with subnormal f16 results written as zero") {
    const auto ftz = [](std::uint64_t c) { return classify(f16, c) == FpClass::Subnormal ? c & f16.sign_mask() : c; };
    const DiagnosisRecord r = diagnose_altered(bf16_to_f16(), Rounder::nearest(f16), nullptr, ftz);
    CHECK(r.kind == "consistent");
    CHECK(r.ranked[0].id == "ftz");
    CHECK(r.ranked[0].matched == 65536);
  }
  SUBCASE("DAZ: f16 -> f32 (exact: f16's subnormals are normal in f32) with subnormal inputs read as zero") {
    const ConversionTraits decl{&f16, &f32, Rounder::nearest(f32)};
    const auto daz = [](std::uint64_t c) { return classify(f16, c) == FpClass::Subnormal ? c & f16.sign_mask() : c; };
    const DiagnosisRecord r = diagnose_altered(decl, decl.rounder, daz, nullptr);
    CHECK(r.kind == "consistent");
    CHECK(r.ranked[0].id == "daz");
    CHECK(r.ranked[0].matched == 65536);
    CHECK(r.ranked[1].matched == 65536 - 2 * 1023);  // the next one misses exactly the 2 x 1023 subnormal inputs
  }
}

TEST_CASE("diagnose conversion: each conversion fault kernels make is named by its hypothesis, 100 %") {
  struct Row {
    const char* fault;
    ConversionTraits declared;
    Rounder computed;
    Altered::Map2 both;
    const char* c;
    const char* named;
  };
  const auto with = [](Rounder r, auto set) {
    set(r);
    return r;
  };
  const Rounder rn16 = Rounder::nearest(f16);
  Rounder sat_e4m3 = Rounder::nearest(e4m3);
  sat_e4m3.saturation = Saturation::Finite;  // declared: __NV_SATFINITE
  Rounder nan_e4m3 = Rounder::nearest(e4m3);
  nan_e4m3.saturation = Saturation::NaN;     // declared: overflow to e4m3's NaN (no saturation)
  // The quiet bit of a signaling bf16 NaN (bit 6 clear) left clear in the f16 result (bit 9): its payload kept.
  const Altered::Map2 not_quieted = [](std::uint64_t src, std::uint64_t res) {
    return classify(bf16, src) == FpClass::NaN && !(src & 0x40) ? res & ~std::uint64_t{0x200} : res;
  };
  // Every zero result written as +0: -0 and the negative values that round to zero in f16 (below 2^-25 in magnitude).
  const Altered::Map2 plus_zero = [](std::uint64_t, std::uint64_t res) { return classify(f16, res) == FpClass::Zero ? res & 0x7fff : res; };
  for (const Row& x : {
           // f32 -> f16 on [1, 1 + 2^-7): 13 bits dropped, every pattern of them: ties (a 1 then twelve 0s) among them
           Row{"ties away", {&f32, &f16, rn16}, with(rn16, [](Rounder& r) { r.rounding = Rounding::NearestAway; }), nullptr,
               "0x3f800000+65536", "round=rna"},
           // bf16 -> e4m3 over every bf16 code: values past 448 (+ half an ulp) overflow
           Row{"no saturation where satfinite is declared", {&bf16, &e4m3, sat_e4m3}, nan_e4m3, nullptr, "all", "sat=nan"},
           Row{"saturating where NaN is due", {&bf16, &e4m3, nan_e4m3}, sat_e4m3, nullptr, "all", "sat=satfinite"},
           Row{"quiet bit not set", bf16_to_f16(), rn16, not_quieted, "all", "nan_not_quieted"},
           Row{"sign of zero lost", bf16_to_f16(), rn16, plus_zero, "all", "zero_sign_lost"},
       }) {
    const std::string fault = x.fault;
    CAPTURE(fault);
    Altered k(make_model_conversion_kernel(*x.declared.src, *x.declared.dst, x.computed, 0), x.declared, nullptr, nullptr, x.both);
    const DiagnosisRecord r = diagnose_conversion_kernel(k, x.c, 40);
    CHECK(r.kind == "consistent");
    REQUIRE(!r.ranked.empty());
    CHECK(r.ranked[0].id == x.named);
    CHECK(r.ranked[0].matched == r.ranked[0].elements);
    // The codes force the fault: the declared conversion misses some of them.
    const auto d = std::find_if(r.ranked.begin(), r.ranked.end(), [](const DiagnosisHypothesis& h) { return h.id == "declared"; });
    REQUIRE(d != r.ranked.end());
    CHECK(d->matched < d->elements);
  }
}

TEST_CASE("diagnose conversion: a bit flipped on some inputs is no known arithmetic") {
  // The last bit of every 7th result flipped (a logic error): no rounding mode, saturation, NaN rule or flush does it.
  const auto flip = [n = std::uint64_t{0}](std::uint64_t c) mutable { return ++n % 7 == 0 ? c ^ 1 : c; };
  const DiagnosisRecord r = diagnose_altered(bf16_to_f16(), Rounder::nearest(f16), nullptr, flip);
  CHECK(r.kind == "logic_error");
  CHECK(r.verdict.find("no known arithmetic explains it") != std::string::npos);
  REQUIRE(!r.unexplained.empty());
  for (const DiagnosisElement& e : r.unexplained) CHECK((e.j + 1) % 7 == 0);  // only flipped codes are unexplained
  CHECK(r.ranked[0].matched < r.ranked[0].elements);
  CHECK(r.ranked[0].matched >= r.ranked[0].elements * 6 / 7);  // the closest misses little more than the flipped codes
}

TEST_CASE("diagnose conversion: a case that is not one is refused with the reason") {
  CHECK_THROWS_AS(conversion_diagnose_ranges(f16, "uniform"), InputError);
  CHECK_THROWS_AS(conversion_diagnose_ranges(f16, "0x10000+1"), InputError);  // past f16's 2^16 codes
  CHECK_THROWS_AS(conversion_diagnose_ranges(f16, "0+0"), InputError);
  CHECK_THROWS_AS(conversion_diagnose_ranges(f64, "all"), InputError);
  CHECK(conversion_diagnose_ranges(f16, "0x3c00+16") == std::vector<std::pair<std::uint64_t, std::uint64_t>>{{0x3c00, 16}});
}
