// tests/suites/tiers_test.cpp — the three verdict tiers through the runner: correct kernels in every valid
// order pass each tier (the bitwise tier with their declared order, the envelope and the statistical test
// with the order withheld), a round-toward-zero accumulator declared as round-to-nearest passes the
// envelope and is caught by the statistical test, vacuous cases are flagged, and the envelope's growth
// per order class is the formula of docs/bound_model.md.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "generators/generate.hpp"
#include "kernels/gemm/cpu/model.hpp"
#include "kernels/kernel.hpp"
#include "oracle/format.hpp"
#include "oracle/gemm_ref.hpp"
#include "oracle/refvalue.hpp"
#include "oracle/round.hpp"
#include "suites/verdict/envelope.hpp"
#include "suites/ops/gemm/fault_injectors.hpp"
#include "suites/mutation/faults.hpp"
#include "suites/verdict/grade.hpp"
#include "suites/verdict/tolerance.hpp"
#include "suites/ops/gemm/runner.hpp"
#include "tests/support/problems.hpp"
#include "tests/support/run_case.hpp"
#include "tests/support/test_seed.hpp"
#include "tests/support/withheld.hpp"

using namespace fpcert;

namespace {

using test::Withheld;

/// fp32 inputs, fp32 accumulation rounded toward zero (k ascending from +0), declared as model_gemm_f32
/// (round to nearest) with its order withheld: the fault the statistical tier exists for.
class RzAccumulator final : public CpuModel {
 public:
  RzAccumulator() : CpuModel("rz_declared_rn", "fp32 accumulation toward zero, declared nearest", make_cpu_model("model_gemm_f32")->traits()) {
    traits_.sum_order = SummationOrder::unknown();
  }
  std::vector<std::uint64_t> compute(const DecodedOperands& d) const override {
    std::vector<std::uint64_t> out(static_cast<std::size_t>(d.m * d.n));
    const Rounder rz{Rounding::TowardZero, Saturation::Inf, NanPayload::Preserve};
    for (std::int64_t i = 0; i < d.m; ++i)
      for (std::int64_t j = 0; j < d.n; ++j) {
        double acc = 0;
        for (std::int64_t q = 0; q < d.k; ++q) {
          const double p = d.A(i, q) * d.B(q, j);  // exact in double (24 + 24 bits)
          acc = to_double(f32, round_ref(f32, ref_from_two_sum(p, acc), rz).code);
        }
        out[static_cast<std::size_t>(i * d.n + j)] = round_double(f32, acc, Rounder::nearest(f32)).code;
      }
    return out;
  }
};

CaseResult run(GemmKernel& k, const Problem& p, BoundVariant v = BoundVariant::Independent) {
  const GemmRef ref = gemm_reference(p.a.view(), p.b.view());
  auto api = make_host_api();
  return test::run_graded(k, p, ref, *api, RunOptions{}, v);
}

const CheckResult& check(const CaseResult& r, CheckKind k) {
  const CheckResult* c = find_check(r, k);
  REQUIRE_MESSAGE(c, "no ", to_string(k), " check in ", r.case_id);
  return *c;
}

const char* kOrderModels[] = {"model_gemm_f32",          "model_gemm_f32_splitk4", "model_gemm_f32_pairwise",
                              "model_gemm_f16_f32acc_blocked32", "model_gemm_f32_muladd",  "model_gemm_f16_f32acc",
                              "model_gemm_f16_f16acc",   "model_gemm_bf16_f32acc", "model_gemm_tf32_f32acc"};

}  // namespace

TEST_CASE("correct kernels in every valid order: bitwise with their order, envelope and statistical without it") {
  const std::uint64_t seed = test::seed();
  CAPTURE(seed);
  std::vector<Problem> problems;
  for (std::string spec : {"uniform:m=12,n=10,k=512,lo=0,hi=1,seed=", "uniform:m=12,n=10,k=700,seed=", "normal:m=10,n=12,k=256,seed=",
                           "exp_uniform:m=8,n=8,k=128,emin=-12,emax=3,seed=", "ozaki:m=8,n=8,k=512,phi=2,seed=",
                           "probe:m=8,n=8,k=2048,kind=ones,seed=", "probe:m=8,n=8,k=512,kind=alternating,seed=",
                           "cancel_gemm:m=8,n=8,k=256,kappa=1e6,seed="})
    problems.push_back(generate(spec + std::to_string(seed % 1000003)));
  for (const char* name : kOrderModels) {
    for (const Problem& p : problems) {
      const std::string kname = name;
      CAPTURE(kname);
      CAPTURE(p.spec);
      auto k = make_gemm_kernel(name);
      const CaseResult r = run(*k, p);
      if (r.status == CaseStatus::NotSupported) continue;
      INFO(r.reason);
      CHECK(r.status == CaseStatus::Pass);
      CHECK(r.tier == Tier::Bitwise);
      CHECK(check(r, CheckKind::Bitwise).passed);
      CHECK(check(r, CheckKind::Envelope).passed);
      Withheld w(make_gemm_kernel(name), std::string(name) + "_withheld");
      const CaseResult e = run(w, p);
      INFO(e.reason);
      CHECK(e.status == CaseStatus::Pass);
      // No order to emulate; elements whose every order gives one value (sums of ones, say) are still held bit for bit.
      if (const CheckResult* b = find_check(e, CheckKind::Bitwise)) {
        CHECK(b->passed);
        CHECK(b->detail.find("order-free") != std::string::npos);
      }
      CHECK(check(e, CheckKind::Envelope).passed);
      CHECK(check(e, CheckKind::Envelope).measured <= 1);
      if (const CheckResult* s = find_check(e, CheckKind::Statistical)) {
        // Every element order-free (sums of ones): the case is bitwise; otherwise the statistical test is its tier.
        CHECK(e.tier == (find_check(e, CheckKind::Bitwise) && e.flags.end() != std::find_if(e.flags.begin(), e.flags.end(), [](const std::string& f) {
                           return f.find("bitwise on order-free elements only") != std::string::npos;
                         }) ? Tier::Bitwise : Tier::EnvelopeStatistical));
        CHECK(s->passed);
        CHECK(s->measured < s->limit);
      }
    }
  }
}

TEST_CASE("a round-toward-zero accumulator declared round-to-nearest passes the envelope; the statistical tier catches it") {
  // Same-sign data: every partial sum is positive, so every truncation points toward zero (the
  // statistic's direction is the sign of the exact result). K = 512, uniform [0, 1).
  RzAccumulator rz;
  auto honest = make_gemm_kernel("model_gemm_f32");
  Withheld rn(std::move(honest), "rn_withheld");
  for (std::uint64_t s = 0; s < 4; ++s) {
    const Problem p = generate("uniform:m=32,n=32,k=512,lo=0,hi=1,seed=" + std::to_string(test::seed() + s));
    const CaseResult r = run(rz, p);
    CAPTURE(p.spec);
    INFO(r.reason);
    CHECK(r.tier == Tier::EnvelopeStatistical);
    CHECK(check(r, CheckKind::Envelope).passed);  // hidden inside the envelope
    CHECK_FALSE(check(r, CheckKind::Statistical).passed);
    CHECK(r.status == CaseStatus::Fail);
    const CaseResult ok = run(rn, p);
    CHECK(check(ok, CheckKind::Statistical).passed);
    // The honest kernel's statistic is far below the limit; the faulty one's far above.
    CHECK(check(ok, CheckKind::Statistical).measured < 1);
  }
}

TEST_CASE("each runner finding and tier reports its own check kind; the course gate never decides") {
  const Problem p = test::uniform_problem(24, 20, 256, f32, test::seed() + 9);
  struct Expect {
    Fault fault;
    CheckKind kind;
  };
  // The faults of the mutation catalogue (suites/mutation/faults.hpp) injected into a correct fp32 model.
  for (const Expect& e : {Expect{Fault::OutputUlp, CheckKind::Bitwise}, Expect{Fault::DropLastProduct, CheckKind::Bitwise},
                          Expect{Fault::WritesNan, CheckKind::Nonfinite}, Expect{Fault::UnwrittenRow, CheckKind::Unwritten},
                          Expect{Fault::WritePastEnd, CheckKind::GuardOutput},
                          Expect{Fault::OneRunInN, CheckKind::Nondeterministic}}) {
    auto k = make_fault_injector(make_gemm_kernel("model_gemm_f32"), e.fault);
    CAPTURE(k->name());
    const CaseResult r = run(*k, p);
    CHECK(r.status == CaseStatus::Fail);
    CHECK_FALSE(check(r, e.kind).passed);
  }
  // K - 1 products: the envelope alone sees it too (one product is far above K u |A||B|).
  Withheld w(make_fault_injector(make_gemm_kernel("model_gemm_f32"), Fault::DropLastProduct), "k_short_withheld");
  const CaseResult r = run(w, p);
  CHECK_FALSE(check(r, CheckKind::Envelope).passed);
  // The course gate is a column: reported on every graded case, never the reason for a verdict.
  auto m = make_gemm_kernel("model_gemm_f32");
  const CaseResult ok = run(*m, p);
  CHECK(check(ok, CheckKind::CourseGate).measured == ok.gate_fraction);
  CHECK_FALSE(is_decisive(CheckKind::CourseGate));
}

TEST_CASE("a case whose bound admits an all-zeros output is vacuous and no evidence") {
  // An fp16 accumulator at K = 4096: K u_acc = 2, so the accumulation's gamma does not exist and every
  // output is allowed.
  KernelTraits t = make_cpu_model("model_gemm_f16_f16acc")->traits();
  t.sum_order = SummationOrder::unknown();
  const EnvelopeModel e = make_envelope(t, 4096);
  CHECK_FALSE(e.exists);
  CHECK(std::isinf(envelope_allowed(e, 1, 1)));
  // Through the runner: the fp16-accumulating model with its order withheld on K = 4096 sums of ones.
  Withheld w(make_gemm_kernel("model_gemm_f16_f16acc"), "f16acc_withheld");
  const Problem p = generate("probe:m=4,n=4,k=4096,kind=ones,seed=1");
  const CaseResult r = run(w, p);
  CHECK(r.vacuous);
  CHECK(r.evidence.empty());
  // With its order declared the same case is bitwise: not vacuous, evidence for the accumulation.
  auto k = make_gemm_kernel("model_gemm_f16_f16acc");
  const CaseResult b = run(*k, p);
  CHECK(b.tier == Tier::Bitwise);
  CHECK_FALSE(b.vacuous);
  CHECK(std::find(b.evidence.begin(), b.evidence.end(), "accumulation") != b.evidence.end());
  CHECK(missing_evidence(k->traits(), {b}).empty());
  CHECK(missing_evidence(w.traits(), {r}) == std::vector<std::string>{"accumulation"});
}

TEST_CASE("the envelope's growth per order class") {
  KernelTraits t = make_cpu_model("model_gemm_f32")->traits();
  const double u = std::ldexp(1.0, -24);
  auto g = [&](SummationOrder o, std::int64_t k) {
    t.sum_order = o;
    return make_envelope(t, k);
  };
  auto gamma = [](double d, double uu) { return d * uu / (1 - d * uu); };
  CHECK(g(SummationOrder::sequential(), 1000).coef == doctest::Approx(gamma(1000, u)).epsilon(1e-12));
  CHECK(g(SummationOrder::pairwise(), 1000).depth == 11);  // ceil(log2 1000) + 1
  CHECK(g(SummationOrder::split_k(4), 1000).depth == 250 + 4);
  CHECK(g(SummationOrder::split_k(4, Combine::Pairwise), 1000).depth == 250 + 2);
  CHECK(g(SummationOrder::blocked(32), 1000).depth == 32 + 32);
  CHECK(g(SummationOrder::blocked(32, Combine::Pairwise, Combine::Pairwise), 1000).depth == 6 + 5);
  // Unknown: the worst valid order, tensor-core alignment included: u + 2^-23 per rounding.
  const EnvelopeModel unk = g(SummationOrder::unknown(), 1000);
  CHECK(unk.coef == doctest::Approx(gamma(1000, u + std::ldexp(1.0, -23))).epsilon(1e-12));
  CHECK(unk.coef > g(SummationOrder::sequential(), 1000).coef);
  // fp16 output of an fp32 accumulator: the output rounding is a term of its own.
  KernelTraits h = make_cpu_model("model_gemm_f16_f16acc")->traits();
  CHECK(make_envelope(h, 10).out_unit == 0);  // output = accumulator
  h.acc = &f32;
  CHECK(make_envelope(h, 10).out_unit == std::ldexp(1.0, -11));
}

TEST_CASE("an e4m3 output beyond its range: NaN or the saturated value of D's sign pass, the other sign does not") {
  // cuBLASLt's FP8 GEMM with an e4m3 D saturates to +-448 where the exact result is beyond e4m3's range (measured on the
  // H200: 31 elements of special_e4m3_nt). Round to nearest overflows to NaN in a format without Inf; satfinite gives
  // the largest finite value. Both are accepted by the envelope (not graded); a value of the other sign is not.
  KernelTraits t = make_cpu_model("model_gemm_e4m3_f32acc")->traits();
  const Format& e4 = *find_format("e4m3");
  t.out = &e4;
  const EnvelopeModel e = make_envelope(t, 4);
  REQUIRE(e.exists);
  GemmRef ref;
  ref.m = 1;
  ref.n = 5;
  // Exact results: 600 and -600 beyond 448; 1.1 (not representable: RN gives 1.125) inside the range.
  ref.c = {{600.0, 0, 0}, {-600.0, 0, 0}, {-600.0, 0, 0}, {1.1, 0, 0}, {1.1, 0, 0}};
  ref.abs_sum = {600.0, 600.0, 600.0, 1.1, 1.1};
  auto code = [&](double v) { return round_double(e4, v, Rounder::nearest(e4)).code; };
  const std::vector<std::uint64_t> codes = {code(448), code(-448), code(448), code(1.125), code(448)};
  CHECK(to_double(e4, codes[1]) == -448.0);
  const std::vector<double> row(1, 0.0), col(5, 0.0);
  std::vector<double> fracs;
  const EnvelopeVerdict v = evaluate_envelope(e, e4, 1, 5, ref, codes, row, col, &fracs);
  CHECK(std::isnan(fracs[0]));  // +448 for +600: saturation, not graded
  CHECK(std::isnan(fracs[1]));  // -448 for -600
  CHECK(fracs[2] > 1);          // +448 for -600: the wrong sign, graded and refused
  CHECK(fracs[3] <= 1);         // 1.125 for 1.1: one rounding
  CHECK(fracs[4] > 1);          // 448 for 1.1: saturation where the result is inside the range is an error
  CHECK(v.graded == 3);
  CHECK(v.exceed == 2);
}

TEST_CASE("fp64 sums beyond double's range: the envelope grades them scaled, not vacuously") {
  // One row of A and three columns of B, K = 64, fp64 values: a_0 = a_1 = 1.75 2^1023 (sum_k |a_0k| beyond double)
  // against b = (0.75, -0.75 + 2^-30) in column 0 (exact sum 1.75 2^993 plus the rest; sum |a b| about 2.6 2^1023,
  // beyond double), (0.75, 0.5) in column 1 (its exact result is beyond double too: the special-value rules, not a
  // bound), (0, 0) in column 2 (an ordinary element of a row whose sum overflows). The other products: 53-bit values in
  // [-1, 1), so the exact results need rounding.
  const std::int64_t k = 64, n = 3;
  const Problem p = generate("uniform:m=1,n=3,k=64,source=f64,seed=" + std::to_string(test::seed()));
  std::vector<double> a = p.a.data, b = p.b.data;
  a[0] = a[1] = std::ldexp(1.75, 1023);
  b[0 * n + 0] = 0.75;
  b[1 * n + 0] = -0.75 + 0x1p-30;
  b[0 * n + 1] = 0.75;
  b[1 * n + 1] = 0.5;
  b[0 * n + 2] = b[1 * n + 2] = 0;
  const MatrixView av = MatrixView::row_major(a.data(), 1, k), bv = MatrixView::row_major(b.data(), k, n);
  const GemmRef ref = gemm_reference_mpfr(av, bv);
  REQUIRE(std::isfinite(ref.c[0].hi));
  CHECK(std::isinf(ref.abs_sum[0]));  // what the unscaled allowance would stand on
  const WideSums w = wide_sums(a, b, 1, n, k, ref);
  REQUIRE(w.index == std::vector<std::int64_t>{0, 2});  // element 1's exact result overflows: not graded by a bound
  // The scaled sum is an upper bound of the exact one, and close: |A| 2^-s/2 |B| 2^-s/2 exactly, through MPFR; the
  // element's scale brings its largest sum (here sum |a b|) near 2^1000.
  const WideSums::Sums& w0 = w.sums[0];
  CHECK(std::ilogb(w0.abs_sum) == 1000);
  std::vector<double> as(a.size()), bs(b.size());
  for (std::size_t x = 0; x < a.size(); ++x) as[x] = std::ldexp(std::fabs(a[x]), -(w0.shift / 2));
  for (std::size_t x = 0; x < b.size(); ++x) bs[x] = std::ldexp(std::fabs(b[x]), -(w0.shift - w0.shift / 2));
  const GemmRef scaled = gemm_reference_mpfr(MatrixView::row_major(as.data(), 1, k), MatrixView::row_major(bs.data(), k, n));
  // The cover is (2K + 8) 2^-53 = 136 2^-53 < 2^-45.9 relative (and 196 2^-1074 absolute): within 2^-40, with room.
  CHECK(w0.abs_sum >= scaled.c[0].hi);
  CHECK(w0.abs_sum <= scaled.c[0].hi * (1 + 0x1p-40));
  // Graded against the fp64 model's envelope, its order withheld.
  KernelTraits t = make_gemm_kernel("model_gemm_f64")->traits();
  t.sum_order = SummationOrder::unknown();
  const EnvelopeModel e = make_envelope(t, k);
  REQUIRE(e.exists);
  auto code = [&](double v) { return round_double(f64, v, Rounder::nearest(f64)).code; };
  const std::vector<double> row(1, 0.0), col(3, 0.0);
  auto frac = [&](std::size_t x, double got, const WideSums* ws) {
    std::vector<std::uint64_t> codes = {code(ref.c[0].hi), code(INFINITY), code(ref.c[2].hi)};
    codes[x] = code(got);
    std::vector<double> fracs;
    (void)evaluate_envelope(e, f64, 1, n, ref, codes, row, col, &fracs, ws);
    return fracs[x];
  };
  // The correctly rounded result, and the sum in k order with fma (what model_gemm_f64 computes): within.
  double seq = 0;
  for (std::int64_t q = 0; q < k; ++q) seq = std::fma(a[static_cast<std::size_t>(q)], b[static_cast<std::size_t>(q * n)], seq);
  REQUIRE(std::isfinite(seq));  // +P first, then -P (1 - 2^-30 / 0.75): no partial sum overflows in this order
  CHECK(frac(0, ref.c[0].hi, &w) <= 1);
  CHECK(frac(0, seq, &w) <= 1);
  // Unscaled, the allowance is not a number (u_out 0 times an infinite E): the correctly rounded result was refused.
  CHECK_FALSE(frac(0, ref.c[0].hi, nullptr) <= 1);
  // 2^-10 relative off (the allowance is about 64 2^-53 sum |a b| = 2^-47 2.6 2^1023, the result 1.75 2^993): refused.
  const double off = ref.c[0].hi * (1 + 0x1p-10);
  CHECK(frac(0, off, &w) > 1);
  // The largest finite value of the other sign: |c - ref| itself is beyond double; refused, with a finite fraction.
  const double far = frac(0, -std::numeric_limits<double>::max(), &w);
  CHECK(far > 1);
  CHECK(std::isfinite(far));
  // The ordinary element of the wide row: graded in its scale as unscaled (no allowance, no error lost to the scale). The
  // two fractions differ only by the scaled sum's cover (below 2^-45.9 relative) and a few roundings: 1e-9 holds it.
  REQUIRE(std::isfinite(ref.abs_sum[2]));
  for (double rel : {0x1p-40, 0x1p-52}) {
    const double got = ref.c[2].hi * (1 + rel), plain = frac(2, got, nullptr), scaled_frac = frac(2, got, &w);
    CAPTURE(rel);
    REQUIRE(plain > 0);
    CHECK(scaled_frac == doctest::Approx(plain).epsilon(1e-9));
  }
  // The tolerance audit's per-element allowance: finite, below |ref| (not vacuous), covering the correctly rounded
  // result; the ordinary element's as the unscaled formula gives it.
  Problem q = p;
  q.a.data = a;
  q.b.data = b;
  const ElementTolerance et = element_tolerance(t, q, ref);
  CHECK(std::isfinite(et.allowed[0]));
  CHECK(et.allowed[0] < std::fabs(ref.c[0].hi));
  CHECK(error_from_below(ref.c[0].hi, ref.c[0]) <= et.allowed[0]);
  CHECK(et.allowed[2] == doctest::Approx(envelope_allowed(e, std::fabs(ref.c[2].hi), ref.abs_sum[2])).epsilon(1e-9));
  // No value beyond 2^500: nothing to scale, one pass over the inputs.
  CHECK(wide_sums(p.a.data, p.b.data, 1, n, k, gemm_reference(p.a.view(), p.b.view())).empty());
}

TEST_CASE("a campaign's mutant whose fault changed nothing is given the unmutated kernel's pass, not graded again") {
  // ScopedDormantVerdicts (suites/ops/gemm/fault_injectors.hpp): flush_outputs on outputs with no subnormal changes no
  // bit; the same fault on subnormal outputs does, and is graded (refused); acc_f16 reports a split call, not changed
  // bits, so it is always graded; outside a campaign every case is graded.
  auto graded = [](const CaseResult& r) { return !r.checks.empty(); };
  auto flag = [](const CaseResult& r) {
    return std::any_of(r.flags.begin(), r.flags.end(), [](const std::string& f) { return f.find("not graded again") != std::string::npos; });
  };
  const Problem plain = generate("uniform:m=8,n=6,k=32,seed=" + std::to_string(test::seed()));
  const Problem tiny = generate("uniform:m=8,n=6,k=32,lo=1e-21,hi=2e-21,seed=" + std::to_string(test::seed()));
  auto flush = make_fault_injector(make_gemm_kernel("model_gemm_f32"), Fault::FlushOutputs);
  auto acc16 = make_fault_injector(make_gemm_kernel("model_gemm_f32"), Fault::AccF16);
  const CaseResult outside = run(*flush, plain);
  CHECK(graded(outside));
  CHECK_FALSE(flag(outside));
  const ScopedDormantVerdicts scope;
  const CaseResult dormant = run(*flush, plain);
  CHECK(dormant.status == CaseStatus::Pass);
  CHECK(flag(dormant));
  CHECK_FALSE(graded(dormant));
  const CaseResult active = run(*flush, tiny);  // sums near 5e-41: outputs in fp32's subnormal range, flushed
  CHECK(graded(active));
  CHECK(active.status == CaseStatus::Fail);
  const CaseResult acc = run(*acc16, plain);
  CHECK(graded(acc));
  CHECK(acc.status == CaseStatus::Fail);
}
