// tests/suites/sampled_reference_test.cpp — the sampled exact reference (suites/verdict/sampled_reference.hpp) and the
// opt-in `scale` suite it grades (issue 38): the sample's elements are the full reference's, bit for bit, on shapes
// where both fit; the chosen rows and columns are the boundaries the header names; the scale suite's shapes reach the
// limits it claims; a CPU run of a scale case grades the sample and still finds rows never written outside it.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cstring>

#include "base/codes.hpp"
#include "generators/generate.hpp"
#include "suites/run/suite.hpp"
#include "suites/verdict/sampled_reference.hpp"

using namespace fpcert;

namespace {

bool has(const std::vector<std::int64_t>& v, std::int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

/// A CPU model that stops after `rows` rows of C, as a kernel whose grid is capped leaves the rest unwritten: it
/// runs model_gemm_f32 into a scratch C and copies only the first rows.
class RowCap : public GemmKernel {
 public:
  explicit RowCap(std::int64_t rows) : inner_(make_gemm_kernel("model_gemm_f32")), rows_(rows), name_("row_cap_fixture") {}
  const std::string& name() const override { return name_; }
  std::string description() const override { return "model_gemm_f32 writing only the first rows of C"; }
  Backend backend() const override { return Backend::Cpu; }
  const KernelTraits& traits() const override { return inner_->traits(); }
  void run(const GemmOperands& ops) override {
    std::vector<float> scratch(static_cast<std::size_t>(ops.m * ops.ldc));
    GemmOperands o = ops;
    o.c = scratch.data();
    inner_->run(o);
    std::memcpy(ops.c, scratch.data(), static_cast<std::size_t>(std::min(rows_, ops.m) * ops.ldc) * sizeof(float));
  }

 private:
  std::unique_ptr<GemmKernel> inner_;
  std::int64_t rows_;
  std::string name_;
};

}  // namespace

TEST_CASE("the sampled reference's elements are the full reference's, bit for bit (value and status; |A||B| within its bound)") {
  // Families that take the fast path's different routes: uniform (the Ozaki GEMMs), wide exponents (slices that do
  // not capture every entry: per-element exact additions), cancellation (elements that fall back to exact sums).
  for (const char* spec : {"uniform:m=97,n=61,k=131,seed=5", "exp_uniform:m=80,n=70,k=64,seed=6,emin=-60,emax=60",
                           "cancel_gemm:m=40,n=40,k=256,seed=7,kappa=1e12"}) {
    const Problem p = generate(spec);
    const GemmRef full = gemm_reference(p.a.view(), p.b.view());
    SampleSpec s;
    s.on = true;
    s.rows = 9;
    s.cols = 7;
    const GemmSample g = choose_gemm_sample(p.m, p.n, p.k, s, 11);
    REQUIRE(g.rows.size() >= 9);
    REQUIRE(g.rows.size() < static_cast<std::size_t>(p.m));  // a true sample, not the whole
    const GemmRef sub = sampled_reference(p, g);
    const Problem q = sampled_problem(p, g);
    const GemmRef exact = gemm_reference_mpfr(q.a.view(), q.b.view());  // the ground truth of the sample's elements
    REQUIRE(sub.m == static_cast<std::int64_t>(g.rows.size()));
    REQUIRE(sub.n == static_cast<std::int64_t>(g.cols.size()));
    std::int64_t compared = 0;
    for (std::size_t a = 0; a < g.rows.size(); ++a)
      for (std::size_t b = 0; b < g.cols.size(); ++b) {
        const RefValue& x = sub.at(static_cast<std::int64_t>(a), static_cast<std::int64_t>(b));
        const RefValue& y = full.at(g.rows[a], g.cols[b]);
        const auto sub_i = static_cast<std::size_t>(a * g.cols.size() + b), full_i = static_cast<std::size_t>(g.rows[a] * p.n + g.cols[b]);
        CHECK_MESSAGE(std::bit_cast<std::uint64_t>(x.hi) == std::bit_cast<std::uint64_t>(y.hi), spec, " (", g.rows[a], ", ", g.cols[b], ")");
        CHECK(std::bit_cast<std::uint64_t>(x.lo) == std::bit_cast<std::uint64_t>(y.lo));
        CHECK(x.tail == y.tail);
        CHECK((sub.status[sub_i] & ~kRefFallback) == (full.status[full_i] & ~kRefFallback));
        // |A||B| sums are not the reference but an upper bound of it that the fast path's double GEMMs give with
        // their own rounding, which depends on the blocking of the whole product (here they differ by an ulp or two):
        // both must lie in [RU(exact), RU(exact) (1 + 3 (K + nb + 2) 2^-53)] (oracle/gemm_ref.hpp, docs/oracle.md,
        // "abs_sum"), RU(exact) from MPFR below; nb = K blocks, at most K.
        const double ru = exact.abs_sum[sub_i], slack = 3.0 * static_cast<double>(2 * p.k + 2) * 0x1p-53;
        CHECK(sub.abs_sum[sub_i] >= ru);
        CHECK(full.abs_sum[full_i] >= ru);
        CHECK(sub.abs_sum[sub_i] <= ru * (1 + slack));
        CHECK(full.abs_sum[full_i] <= ru * (1 + slack));
        ++compared;
      }
    CHECK(compared == g.elements());
  }
}

TEST_CASE("sample_indices: edges, powers of two, the grid limit times tile heights, offsets crossing 2^29..2^32, random") {
  const std::int64_t m = (std::int64_t{1} << 21) + 3, lda = 2056;
  const auto v = sample_indices(m, {lda}, 16, 42);
  CHECK(std::is_sorted(v.begin(), v.end()));
  CHECK(std::adjacent_find(v.begin(), v.end()) == v.end());
  for (std::int64_t x : {std::int64_t{0}, std::int64_t{1}, m - 2, m - 1, std::int64_t{65535}, std::int64_t{1048559}, std::int64_t{1048560},
                         std::int64_t{1048561}, std::int64_t{1} << 20, (std::int64_t{1} << 20) - 1})
    CHECK_MESSAGE(has(v, x), x);
  // 2^31 - 1 = 2,147,483,647 = 1,044,495 x 2056 + 127: row 1,044,495 holds offsets 2^31 - 1 and 2^31.
  CHECK(has(v, 1044495));
  CHECK(has(v, 1044496));
  CHECK(has(v, ((std::int64_t{1} << 32) - 1) / lda));  // 2^32 - 1 = 2,088,991 x 2056 + 1,199
  CHECK(v == sample_indices(m, {lda}, 16, 42));        // reproducible
  CHECK(v != sample_indices(m, {lda}, 16, 43));        // the seed picks the random ones
  CHECK(sample_indices(m, {lda}, 0, 42).size() + 16 == v.size());
  CHECK(sample_indices(10, {}, -1, 1).size() == 10);  // -1: every index
}

TEST_CASE("the scale suite: shapes past the grid limit and of 2^31 elements on a device, each graded on a sample") {
  SuiteContext dev;
  dev.device = true;
  const auto cases = find_suite("scale")->cases(dev);
  REQUIRE(cases.size() == 7);
  for (const CaseSpec& c : cases) CHECK_MESSAGE(c.sample.active(), c.id);
  auto field = [](const std::string& spec, const std::string& key) {
    const auto at = spec.find(key + "=");
    REQUIRE(at != std::string::npos);
    return std::stoll(spec.substr(at + key.size() + 1));
  };
  auto find = [&](const std::string& id) -> const CaseSpec& {
    const auto it = std::find_if(cases.begin(), cases.end(), [&](const CaseSpec& c) { return c.id == id; });
    REQUIRE(it != cases.end());
    return *it;
  };
  CHECK(field(find("tall_2e21").spec, "m") == std::int64_t{1} << 21);
  CHECK(field(find("tall_2e21").spec, "m") / 16 > 65535);  // 16-row tiles: more than gridDim.y holds
  CHECK(field(find("wide_2e21_odd").spec, "n") == (std::int64_t{1} << 21) + 3);
  const CaseSpec& a = find("a_2e31");
  const std::int64_t am = field(a.spec, "m"), ak = field(a.spec, "k");
  CHECK(am * (ak + 8) >= std::int64_t{1} << 31);  // m lda >= 2^31 for lda = padded_ld(k) = k + 8 (fp16, fp32)
  CHECK(am * ak <= std::int64_t{1} << 31);        // within the generators' limit of entries per operand
  CHECK(am < 65535 * 16);                          // the grid limit is not what this case finds
  const CaseSpec& b = find("b_2e31");
  CHECK(field(b.spec, "k") * (field(b.spec, "n") + 8) >= std::int64_t{1} << 31);
}

TEST_CASE("a CPU run of a scale case: graded on the sample (the report says which), every unwritten row of C found") {
  SuiteRunOptions o;
  o.only_case = "tall_2e21";  // on the CPU: M = 4096, N = 8, K = 16
  RunResult r = run_suite(*find_suite("scale"), {"model_gemm_f32"}, o);
  REQUIRE(r.cases.size() == 1);
  const CaseResult& ok = r.cases.front();
  CHECK_MESSAGE(ok.status == CaseStatus::Pass, ok.reason);
  const auto flag = std::find_if(ok.flags.begin(), ok.flags.end(), [](const std::string& f) { return f.rfind("sampled reference", 0) == 0; });
  REQUIRE(flag != ok.flags.end());
  CHECK(flag->find("of 32768 elements") != std::string::npos);  // 4096 x 8
  // A kernel that stops after row 3000: rows 3000..4095 unwritten, judged over all of C, not only the sample.
  register_kernel("row_cap_fixture", Backend::Cpu, true, [] { return std::unique_ptr<Kernel>(new RowCap(3000)); });
  r = run_suite(*find_suite("scale"), {"row_cap_fixture"}, o);
  REQUIRE(r.cases.size() == 1);
  const CaseResult& bad = r.cases.front();
  CHECK(bad.status == CaseStatus::Fail);
  CHECK(bad.metrics.unwritten == (4096 - 3000) * 8);
  CHECK_MESSAGE(bad.reason.find("first at (3000, 0)") != std::string::npos, bad.reason);
  // --sample on an ordinary suite: certify's uniform case graded on a sample, same verdict.
  SuiteRunOptions s;
  s.only_case = "uniform";
  s.gemm_sample = parse_sample_spec("4,3");
  const RunResult u = run_suite(*find_suite("certify"), {"model_gemm_f32"}, s);
  REQUIRE(u.cases.size() == 1);
  CHECK_MESSAGE(u.cases.front().status == CaseStatus::Pass, u.cases.front().reason);
  CHECK(std::any_of(u.cases.front().flags.begin(), u.cases.front().flags.end(),
                    [](const std::string& f) { return f.rfind("sampled reference", 0) == 0; }));
}
