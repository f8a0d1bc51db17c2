// tests/suites/diagnose_eltwise_test.cpp — the diagnosis of an elementwise kernel (suites/diagnose/diagnose_eltwise;
// docs/diagnose.md, "Elementwise kernels"): a correctly rounded kernel is "declared"; glibc's functions wrapped with a
// known change (results flushed, inputs flushed, a directed rounding made from the kernel's own result and libm's double,
// the last bit cleared, 8 significand bits) are named by that change; a kernel that computes what another registered
// kernel computes is named by it; a bit flipped on every 7th result is a logic error with only flipped inputs listed.
// Each change is first shown to alter results on the case (so each test can fail).
#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <string>

#include "base/error.hpp"
#include "suites/diagnose/diagnose_eltwise.hpp"

using namespace fpcert;

namespace {

/// Another kernel's results under a name of its own and a declaration of its own (a fixture: "what does it compute?").
class Renamed final : public ElementwiseKernel {
 public:
  Renamed(std::string name, std::unique_ptr<ElementwiseKernel> inner, EltwiseTraits t, int flip_every = 0)
      : name_(std::move(name)), inner_(std::move(inner)), t_(t), flip_(flip_every) {}
  const std::string& name() const override { return name_; }
  std::string description() const override { return "test fixture"; }
  Backend backend() const override { return Backend::Cpu; }
  const EltwiseTraits& eltwise_traits() const override { return t_; }
  void run(const EltwiseOperands& o) override {
    inner_->run(o);
    if (flip_ == 0) return;
    auto* y = static_cast<std::uint32_t*>(o.y);  // f32 results: the lowest bit but one flipped on every flip_-th
    for (std::int64_t i = 0; i < o.count; i += flip_) y[i] ^= 2u;
  }

 private:
  std::string name_;
  std::unique_ptr<ElementwiseKernel> inner_;
  EltwiseTraits t_;
  int flip_;
};

std::unique_ptr<ElementwiseKernel> kernel(const std::string& name) {
  auto k = make_eltwise_kernel(name);
  REQUIRE_MESSAGE(k, name);
  return k;
}

/// How many results of `a` and `b` differ on the cases' codes.
std::size_t differing(ElementwiseKernel& a, ElementwiseKernel& b, const std::vector<std::string>& cases) {
  std::size_t n = 0;
  for (const EltwiseDiagnoseCase& c : eltwise_diagnose_cases(a.eltwise_traits(), cases)) {
    const auto* c2 = c.codes2.empty() ? nullptr : &c.codes2;
    const auto x = eltwise_run_codes(a, c.codes, c2), y = eltwise_run_codes(b, c.codes, c2);
    for (std::size_t i = 0; i < x.size(); ++i) n += x[i] != y[i];
  }
  return n;
}

bool names(const DiagnosisHypothesis& h, const std::string& id) {
  return h.id == id || std::find(h.same_as.begin(), h.same_as.end(), id) != h.same_as.end();
}

// exp: the special inputs, x in [1, 1 + 2^-7) (normal results, every one rounded), and x in (-88.5, -88] (every result
// subnormal in f32: e^-88 = 6.1e-39 < 2^-126 = 1.18e-38).
const std::vector<std::string> kExpCases = {"special", "0x3f800000+65536", "0xc2b00000+65536"};

}  // namespace

TEST_CASE("diagnose_eltwise: correctly rounded kernels are declared") {
  for (const char* name : {"fixture_exp_mpfr_f32", "glibc_sqrtf", "fixture_exp_mpfr_f16"}) {
    auto k = kernel(name);
    const std::vector<std::string> cases = k->eltwise_traits().in->container_bits == 16 ? std::vector<std::string>{} : kExpCases;
    const DiagnosisRecord d = diagnose_eltwise_kernel(*k, cases);
    INFO(name, ": ", d.verdict);
    CHECK(d.kind == "declared");
    REQUIRE(!d.ranked.empty());
    CHECK(names(d.ranked.front(), "declared"));
    CHECK(d.ranked.front().matched == d.ranked.front().elements);
    CHECK(d.unexplained.empty());
    // the inputs force rounding: truncation differs from the correctly rounded result on some of them
    const auto rz = std::find_if(d.ranked.begin(), d.ranked.end(), [](const DiagnosisHypothesis& h) { return h.id == "round=rz"; });
    if (rz != d.ranked.end()) CHECK(rz->matched < rz->elements);
  }
}

TEST_CASE("diagnose_eltwise: a known change injected into glibc's expf, logf, sqrtf and expf_f16 is named") {
  struct Row {
    const char* kernel;
    EltwiseChange change;
    std::vector<std::string> cases;
  };
  const std::vector<Row> rows = {
      {"glibc_expf", EltwiseChange::FtzResults, kExpCases},     {"glibc_expf", EltwiseChange::TowardZero, kExpCases},
      {"glibc_expf", EltwiseChange::Up, kExpCases},             {"glibc_expf", EltwiseChange::Down, kExpCases},
      {"glibc_expf", EltwiseChange::LastBitCleared, kExpCases}, {"glibc_expf", EltwiseChange::Round8Bits, kExpCases},
      // log of a subnormal input is finite; of a flushed one, -Inf: inputs 2^-149 ... 2^-133
      {"glibc_logf", EltwiseChange::DazInputs, {"special", "1+65536"}},
      {"glibc_expf_f16", EltwiseChange::FtzResults, {}},         {"glibc_expf_f16", EltwiseChange::TowardZero, {}},
      {"glibc_sqrtf", EltwiseChange::DazInputs, {"special", "1+65536"}},
  };
  for (const Row& r : rows) {
    auto plain = kernel(r.kernel);
    auto changed = make_eltwise_change(kernel(r.kernel), r.change);
    const std::string named = eltwise_change_named(r.change);
    INFO(changed->name(), " should be named ", named);
    REQUIRE(differing(*plain, *changed, r.cases) > 0);
    const DiagnosisRecord d = diagnose_eltwise_kernel(*changed, r.cases);
    INFO(d.verdict);
    CHECK(d.kind == "consistent");
    REQUIRE(!d.ranked.empty());
    CHECK(names(d.ranked.front(), named));
    CHECK(d.ranked.front().fraction() >= 0.999);
  }
}

TEST_CASE("diagnose_eltwise: a kernel computing what another registered kernel computes is named by it") {
  // fpcert's expf_ops (0.94 ulp, not correctly rounded) under another name, declaring glibc's expf: the hypothesis
  // "computes what fpcert_expf_ops computes" reproduces it bit for bit; the correctly rounded result does not.
  auto k = std::make_unique<Renamed>("mystery_expf", kernel("fpcert_expf_ops"), kernel("glibc_expf")->eltwise_traits());
  const DiagnosisRecord d = diagnose_eltwise_kernel(*k, kExpCases);
  INFO(d.verdict);
  CHECK(d.kind == "consistent");
  REQUIRE(!d.ranked.empty());
  CHECK(names(d.ranked.front(), "kernel=fpcert_expf_ops"));
  CHECK(d.ranked.front().matched == d.ranked.front().elements);
  const auto decl = std::find_if(d.ranked.begin(), d.ranked.end(), [](const DiagnosisHypothesis& h) { return h.id == "declared"; });
  REQUIRE(decl != d.ranked.end());
  CHECK(decl->matched < decl->elements);  // expf_ops is not correctly rounded on these inputs: the fixture can fail
}

TEST_CASE("diagnose_eltwise: another kernel built with DAZ and FTZ (a pair of changes on it) is named by both") {
  // fixture_expf_3ulp with subnormal inputs read as 0 and subnormal results flushed, declaring neither (as the H200's
  // -use_fast_math expf is __expf with both): neither the kernel it was built from (it flushes e^x below 2^-126 on
  // [-88, -87.x)) nor FTZ on the correctly rounded result (3 ulp off on [1, 2)) reproduces it; the pair does.
  const auto k = kernel("fixture_expf_3ulp_fastmath");
  const DiagnosisRecord d = diagnose_eltwise_kernel(*k, kExpCases);
  INFO(d.verdict);
  CHECK(d.kind == "consistent");
  REQUIRE(!d.ranked.empty());
  CHECK(names(d.ranked.front(), "kernel=fixture_expf_3ulp+daz+ftz"));
  CHECK(d.ranked.front().matched == d.ranked.front().elements);
  for (const char* single : {"kernel=fixture_expf_3ulp", "ftz"}) {
    INFO(single);
    const auto h = std::find_if(d.ranked.begin(), d.ranked.end(), [&](const DiagnosisHypothesis& x) { return x.id == single; });
    REQUIRE(h != d.ranked.end());
    CHECK(h->matched < h->elements);  // each change alone is refuted on these cases: the test can fail
  }
}

TEST_CASE("diagnose_eltwise: a bit flipped on every 7th result is a logic error, only flipped inputs listed") {
  auto k = std::make_unique<Renamed>("flipped_expf", kernel("glibc_expf"), kernel("glibc_expf")->eltwise_traits(), 7);
  const DiagnosisRecord d = diagnose_eltwise_kernel(*k, {"0x3f800000+4096"});
  INFO(d.verdict);
  CHECK(d.kind == "logic_error");
  CHECK(d.verdict.find("no known arithmetic explains it") != std::string::npos);
  REQUIRE(!d.unexplained.empty());
  for (const DiagnosisElement& e : d.unexplained) CHECK(e.i % 7 == 0);
}

TEST_CASE("diagnose_eltwise: cases and refusals") {
  auto k = kernel("glibc_expf");
  CHECK_THROWS_AS(eltwise_diagnose_cases(k->eltwise_traits(), {"nonsense"}), InputError);
  CHECK_THROWS_AS(eltwise_diagnose_cases(k->eltwise_traits(), {"0xffffffff+2"}), InputError);
  CHECK(eltwise_diagnose_cases(k->eltwise_traits(), {}).size() == 2);  // special and sample
  CHECK(eltwise_diagnose_cases(kernel("glibc_expf_f16")->eltwise_traits(), {}).front().codes.size() == 65536);
  CHECK_THROWS_AS(make_eltwise_change(kernel("glibc_expf_f16"), EltwiseChange::Round8Bits), InputError);
}

TEST_CASE("diagnose_eltwise: the identification measure on glibc's bf16 sqrt") {
  // Every change that applies to a bf16 -> bf16 kernel (8 bits does not: the output has them) is injected; FTZ is dormant
  // (no square root of a bf16 value is subnormal: sqrt halves the exponent), every other change is named.
  std::vector<EltwiseChange> all(std::begin(kAllEltwiseChanges), std::end(kAllEltwiseChanges));
  const auto rows = measure_eltwise_identification({"glibc_sqrtf_bf16"}, all);
  CHECK(rows.size() == 6);
  int identified = 0, dormant = 0;
  for (const EltwiseIdentificationRow& r : rows) {
    INFO(r.change, ": top ", r.top, " (", r.kind, ")");
    CHECK((r.identified || r.dormant));
    identified += r.identified;
    dormant += r.dormant;
    if (r.change == "ftz_results") CHECK(r.dormant);
  }
  CHECK(identified == 5);
  CHECK(dormant == 1);
}

namespace {
/// The host's float division with its subnormal results flushed to zero, declaring the plain division (no FTZ).
class DivFtz final : public ElementwiseKernel {
 public:
  DivFtz() : inner_(make_eltwise_kernel("host_div_f32")) {}
  const std::string& name() const override { return name_; }
  std::string description() const override { return "test fixture"; }
  Backend backend() const override { return Backend::Cpu; }
  const EltwiseTraits& eltwise_traits() const override { return inner_->eltwise_traits(); }
  void run(const EltwiseOperands& o) override {
    inner_->run(o);
    auto* y = static_cast<std::uint32_t*>(o.y);
    for (std::int64_t i = 0; i < o.count; ++i)
      if ((y[i] & 0x7f800000u) == 0) y[i] &= 0x80000000u;  // subnormal (or zero) -> zero of its sign
  }

 private:
  std::string name_ = "div_ftz_fixture";
  std::unique_ptr<ElementwiseKernel> inner_;
};
}  // namespace

TEST_CASE("diagnose_eltwise: binary functions — the host's division is declared, the same with FTZ is named ftz") {
  auto div = kernel("host_div_f32");
  const DiagnosisRecord d = diagnose_eltwise_kernel(*div, {"special_pairs", "sample_pairs"});
  INFO(d.verdict);
  CHECK(d.kind == "declared");
  REQUIRE(!d.ranked.empty());
  CHECK(names(d.ranked.front(), "declared"));
  CHECK(d.ranked.front().matched == d.ranked.front().elements);
  DivFtz ftz;
  REQUIRE(differing(*div, ftz, {"sample_pairs"}) > 0);  // the sample reaches subnormal quotients
  const DiagnosisRecord f = diagnose_eltwise_kernel(ftz, {});
  INFO(f.verdict);
  CHECK(f.kind == "consistent");
  REQUIRE(!f.ranked.empty());
  CHECK(names(f.ranked.front(), "ftz"));
  CHECK(f.ranked.front().matched == f.ranked.front().elements);
  CHECK_THROWS_AS(eltwise_diagnose_cases(div->eltwise_traits(), {"0+16"}), InputError);  // no code range for pairs
}
