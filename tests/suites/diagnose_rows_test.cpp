// tests/suites/diagnose_rows_test.cpp — the diagnosis of reduction, softmax and norm kernels (suites/diagnose/diagnose_rows;
// docs/diagnose.md, "Reductions, softmax and normalisation"). Kernels written here, declared as model_sum_f32_seq (a
// sequential f32 sum from +0), each with its own arithmetic: the plain f32 loop is "declared"; a loop that rounds its
// inputs and every partial sum into bf16 (rounded here by frexp / nearbyint, not by the oracle) is named acc=bf16; the
// plain loop with every 7th result negated is a logic error listing only those results. The fault catalogue's mutants of
// the models are named by their fault (a reduction and an RMSNorm), an RMSNorm model with bf16 row sums is named sum=bf16,
// and the ranking itself is checked on outputs made here (look-alikes, the unexplained elements). Each changed arithmetic
// is first shown to change results on the cases.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

#include "base/codes.hpp"
#include "kernels/reduce/reduce_kernel.hpp"
#include "suites/diagnose/diagnose.hpp"
#include "suites/diagnose/diagnose_rows.hpp"

using namespace fpcert;

namespace {

/// v rounded to bf16 (8 significand bits), to nearest even, for the normal range the cases below stay in.
double round_bf16(double v) {
  if (v == 0 || !std::isfinite(v)) return v;
  int e = 0;
  const double m = std::frexp(v, &e);                // |m| in [0.5, 1)
  return std::ldexp(std::nearbyint(std::ldexp(m, 8)), e - 8);  // nearbyint: ties to even (the default rounding mode)
}

enum class Mode { F32, Bf16Acc, FlipEvery7, Blocked64, SeqDeclaredBlocked64 };

/// A sum written here, declaring model_sum_f32_seq's traits.
class TestSum final : public ReduceKernel {
 public:
  TestSum(std::string name, Mode m) : name_(std::move(name)), mode_(m), t_(make_reduce_kernel("model_sum_f32_seq")->reduce_traits()) {
    if (m == Mode::Blocked64 || m == Mode::SeqDeclaredBlocked64) t_.order = ReduceOrder::blocked(64);  // no CPU model declares it
  }
  const std::string& name() const override { return name_; }
  std::string description() const override { return "test fixture"; }
  Backend backend() const override { return Backend::Cpu; }
  const ReduceTraits& reduce_traits() const override { return t_; }
  void run(const ReduceOperands& o) override {
    for (std::int64_t v = 0; v < o.count; ++v) {
      float a = 0.0f, block = 0.0f;
      double b = 0.0;
      for (std::int64_t i = 0; i < o.length; ++i) {
        const std::int64_t at = o.axis == ReduceAxis::Rows ? v * o.ldx + i : i * o.ldx + v;
        const double x = to_double(f32, load_code(o.x, at, 4));
        if (mode_ == Mode::Blocked64) {  // blocks of 64 summed from +0, each block's sum added to the total in turn
          block = block + static_cast<float>(x);
          if (i % 64 == 63 || i + 1 == o.length) a = a + block, block = 0.0f;
        } else {
          a = a + static_cast<float>(x);
        }
        b = round_bf16(b + round_bf16(x));  // two bf16 values of these cases sum exactly in double
      }
      float r = mode_ == Mode::Bf16Acc ? static_cast<float>(b) : a;
      if (mode_ == Mode::FlipEvery7 && v % 7 == 0) r = -r;
      store_code(o.out, v, 4, std::bit_cast<std::uint32_t>(r));
    }
  }

 private:
  std::string name_;
  Mode mode_;
  ReduceTraits t_;
};

std::string fixture(const std::string& name, Mode m) {
  register_kernel(name, Backend::Cpu, false, [name, m] { return std::make_unique<TestSum>(name, m); }, Operation::Reduction);
  return name;
}

const std::vector<std::string> kCases = {"uniform_n1000", "cancel_kappa1e6"};

bool same_outputs(const RowRun& a, const RowRun& b) {
  if (a.out.size() != b.out.size()) return false;
  for (std::size_t c = 0; c < a.out.size(); ++c)
    if (a.out[c].size() != b.out[c].size() || !std::equal(a.out[c].begin(), a.out[c].end(), b.out[c].begin())) return false;
  return true;
}

}  // namespace

TEST_CASE("diagnose_rows: kernels written here, declared as a sequential f32 sum") {
  const std::string plain = fixture("test_rows_sum_f32", Mode::F32), bf = fixture("test_rows_sum_bf16acc", Mode::Bf16Acc),
                    flip = fixture("test_rows_sum_flip7", Mode::FlipEvery7);
  CHECK(row_base_kernel(plain) == "model_sum_f32_seq");  // the CPU twin: the model declaring the same arithmetic
  const RowHypothesisSet set = row_hypothesis_set("model_sum_f32_seq", "certify", kCases);
  const RowRun rp = run_row_kernel(plain, "certify", kCases), rb = run_row_kernel(bf, "certify", kCases);
  REQUIRE(rp.out.size() == 2);
  REQUIRE_FALSE(rp.out[0].empty());
  REQUIRE_FALSE(same_outputs(rp, rb));  // the bf16 accumulator changes results on these cases (the test can fail)

  SUBCASE("the plain f32 loop is the declared arithmetic") {
    const DiagnosisRecord r = diagnose_row_kernel(plain, "certify", kCases, 8, &set);
    CHECK(r.kind == "declared");
    REQUIRE_FALSE(r.ranked.empty());
    CHECK(top_is(r, "declared"));
    CHECK(r.ranked.front().matched == r.ranked.front().elements);
    CHECK(r.ranked.front().envelope_holds);
  }
  SUBCASE("a bf16 accumulator is named acc=bf16, bit for bit everywhere, within its own envelope") {
    const DiagnosisRecord r = diagnose_row_kernel(bf, "certify", kCases, 20, &set);
    CHECK(r.kind == "consistent");
    REQUIRE_FALSE(r.ranked.empty());
    CHECK(top_is(r, "acc=bf16"));
    CHECK(r.ranked.front().matched == r.ranked.front().elements);
    const auto acc = std::find_if(r.ranked.begin(), r.ranked.end(), [](const DiagnosisHypothesis& h) { return h.id == "acc=bf16"; });
    REQUIRE(acc != r.ranked.end());
    CHECK(acc->envelope_exceed == 0);
    const auto decl = std::find_if(r.ranked.begin(), r.ranked.end(), [](const DiagnosisHypothesis& h) { return h.id == "declared"; });
    REQUIRE(decl != r.ranked.end());
    CHECK(decl->matched < decl->elements);
    CHECK(decl->envelope_exceed > 0);  // 8 bits of accumulator are far beyond the f32 bound
  }
  SUBCASE("every 7th result negated is a logic error; only those results are listed") {
    const DiagnosisRecord r = diagnose_row_kernel(flip, "certify", kCases, 8, &set);
    CHECK(r.kind == "logic_error");
    REQUIRE_FALSE(r.unexplained.empty());
    for (const DiagnosisElement& e : r.unexplained) {
      CHECK(e.i % 7 == 0);      // a reduction's output is one value per vector: i is the vector
      CHECK(e.got == -e.ref);   // the declared model's value, negated
    }
    CHECK(r.ranked.front().id == "declared");
    std::int64_t flipped = 0;  // vectors 0, 7, 14, ... of each case
    for (const auto& o : rp.out) flipped += (static_cast<std::int64_t>(o.size()) + 6) / 7;
    CHECK(r.ranked.front().matched == r.ranked.front().elements - flipped);
  }
}

TEST_CASE("diagnose_rows: a kernel no CPU model declares is judged by its own checks, not by its own output") {
  // Declared blocked by 64 (no model declares it): the hypotheses are made from the kernel itself, so `declared` is its own
  // output. The blocked loop written here is its declaration (the runner's bitwise tier reproduces it): declared. The
  // sequential loop under the same declaration fails that tier: a logic error, not "declared at 100 %".
  const std::string good = fixture("test_rows_sum_blocked64", Mode::Blocked64), bad = fixture("test_rows_sum_seq_as_blocked64", Mode::SeqDeclaredBlocked64);
  CHECK(row_base_kernel(good) == good);
  REQUIRE_FALSE(same_outputs(run_row_kernel(good, "certify", kCases), run_row_kernel(bad, "certify", kCases)));
  const DiagnosisRecord g = diagnose_row_kernel(good, "certify", kCases, 8);
  CHECK(g.failed_checks.empty());
  CHECK(g.kind == "declared");
  const DiagnosisRecord b = diagnose_row_kernel(bad, "certify", kCases, 8);
  CHECK_FALSE(b.failed_checks.empty());
  CHECK(b.kind == "logic_error");
  CHECK(b.verdict.find("fails the checks of its own declaration") != std::string::npos);
}

TEST_CASE("diagnose_rows: the catalogue's faults injected into models are named by their fault") {
  for (const auto& [kernel, fault, cases] : std::vector<std::tuple<std::string, std::string, std::vector<std::string>>>{
           {"model_sum_f32_pairwise", "red_acc_f16", {"uniform_n1000"}},
           {"model_rmsnorm_f32", "norm_eps_outside_sqrt", {}}}) {
    CAPTURE(kernel);
    CAPTURE(fault);
    const std::string mutant = kernel + "~" + fault;
    REQUIRE(row_operation(mutant).has_value());  // registered on first use
    const std::string suite = kernel.find("norm") != std::string::npos ? "quick" : "certify";
    REQUIRE_FALSE(same_outputs(run_row_kernel(mutant, suite, cases), run_row_kernel(kernel, suite, cases)));
    const DiagnosisRecord r = diagnose_row_kernel(mutant, suite, cases);
    CHECK(r.kind == "consistent");
    CHECK(top_is(r, "fault=" + fault));
    CHECK_FALSE(r.ranked.front().envelope_holds);  // a fault has no envelope
  }
}

TEST_CASE("diagnose_rows: an RMSNorm model summing in bf16 is named sum=bf16, within the bf16 envelope") {
  // The model's own arithmetic with its row sums rounded to bf16 (NormBug::Bf16RowSum), the hypothesis of that name.
  const RowHypothesisSet set = row_hypothesis_set("model_rmsnorm_f32", "quick", {});
  const auto it = std::find_if(set.hs.begin(), set.hs.end(), [](const RowHypothesis& h) { return h.spec.id == "sum=bf16"; });
  REQUIRE(it != set.hs.end());
  REQUIRE_FALSE(same_outputs(it->run, set.hs.front().run));  // 8 bits of row sum change the results (the test can fail)
  const DiagnosisRecord r = diagnose_row_kernel(it->spec.kernel, "quick", {}, 20, &set);
  CHECK(r.kind == "consistent");
  CHECK(top_is(r, "sum=bf16"));
  CHECK(r.ranked.front().matched == r.ranked.front().elements);
  CHECK(r.ranked.front().envelope_exceed == 0);
}

TEST_CASE("diagnose_rows: ranking, look-alikes and unexplained elements on outputs made here") {
  RowHypothesisSet s;
  s.base = "model_sum_f32_seq";
  s.suite = "certify";
  const auto hyp = [](std::string id, int changes, std::vector<double> v) {
    RowHypothesis h;
    h.spec.id = std::move(id);
    h.spec.what = h.spec.id;
    h.spec.changes = changes;
    h.run.case_ids = {"c"};
    h.run.out = {std::move(v)};
    h.run.results.resize(1);
    return h;
  };
  // 1 + 2^-24 is not an f32 value: the declared f32 sum rounds it to 1, the "wider" one keeps 1 + 2^-23 after a second term.
  const double one = 1.0, up = 1.0 + 0x1p-23;
  s.hs = {hyp("declared", 0, {one, 2.0, 3.0}), hyp("wider", 1, {up, 2.0, 3.0}), hyp("wider_too", 1, {up, 2.0, 3.0}),
          hyp("other", 1, {one, 2.5, 3.0})};
  RowRun got;
  got.case_ids = {"c"};
  got.results.resize(1);
  got.results[0].achieved["envelope_exceed_elements"] = 1;
  SUBCASE("two hypotheses equal on every case are look-alikes of each other") {
    got.out = {{up, 2.0, 3.0}};
    const DiagnosisRecord r = diagnose_rows("k", "decl", f32, got, s);
    CHECK(r.kind == "consistent");
    CHECK((r.ranked.front().id == "wider" || r.ranked.front().id == "wider_too"));
    CHECK(top_is(r, "wider"));
    CHECK(top_is(r, "wider_too"));
    CHECK(r.ranked.front().matched == 3);
    const auto decl = std::find_if(r.ranked.begin(), r.ranked.end(), [](const DiagnosisHypothesis& h) { return h.id == "declared"; });
    REQUIRE(decl != r.ranked.end());
    CHECK(decl->max_ulps == 1);  // 1 and 1 + 2^-23 are adjacent f32 values
    CHECK(decl->envelope_exceed == 1);
  }
  SUBCASE("an element no hypothesis gives is listed, with the declared and the best values") {
    got.out = {{one, 7.0, 5.0}};
    const DiagnosisRecord r = diagnose_rows("k", "decl", f32, got, s);
    CHECK(r.kind == "logic_error");
    REQUIRE(r.unexplained.size() == 2);
    CHECK(r.unexplained[0].i == 1);
    CHECK(r.unexplained[0].got == 7.0);
    CHECK(r.unexplained[0].ref == 2.0);
    CHECK(r.unexplained[1].i == 2);
  }
}
