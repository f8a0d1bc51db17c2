// suites/audit/audit_softmax.cpp — `fpcert audit --op softmax` (docs/audit.md, "Softmax"): a softmax test's rule audited
// for false alarms over the admissible arithmetic of a softmax kernel's declaration (the shifted evaluation in its
// compute format, the exp anywhere within its declared error, the row sum in several orders) and for power over the
// softmax faults of the catalogue and black-box mutants (a constant 1/n, exp results in bf16), with fpcert's verdict
// (suites/ops/softmax/softmax_runner.hpp) beside each. The rule, the tallies and the labels are the GEMM audit's
// (audit_case.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>

#include "base/codes.hpp"
#include "base/error.hpp"
#include "generators/generate.hpp"
#include "generators/softmax.hpp"
#include "kernels/device/device_api.hpp"
#include "oracle/reduce/reduce_order.hpp"
#include "oracle/round.hpp"
#include "oracle/softmax/softmax_bound.hpp"
#include "oracle/softmax/softmax_ref.hpp"
#include "suites/audit/audit.hpp"
#include "suites/audit/audit_case.hpp"
#include "suites/mutation/faults.hpp"
#include "suites/ops/softmax/softmax_faults.hpp"
#include "suites/ops/softmax/softmax_runner.hpp"

namespace fpcert {

namespace {

/// One admissible (or, for the mutants, wrong) way to compute a softmax row: the shifted evaluation of docs/softmax.md
/// in the declaration's compute format, M = max z, d_j = RN_c(z_j - M), e_j = exp(d_j) rounded to nearest in the compute
/// format then moved `exp_dir` (+1 up, -1 down; 2: up where d_j >= -1, near the row's max, down elsewhere, so that the
/// large outputs' numerators and the sum's bulk move apart instead of cancelling) by as many ulps as the declared exp
/// error allows beyond half an ulp, S the sum
/// of the e_j in `order` in the declared accumulator, y_j = RN_c(e_j / S) (or RN_c(e_j RN_c(1 / S)) when the reciprocal
/// is declared), rounded once into the output format. exp_narrow: e_j rounded into that format (a mutant).
struct SoftmaxArithmetic {
  ReduceOrder order = ReduceOrder::sequential();
  int exp_dir = 0;
  const Format* exp_narrow = nullptr;
  bool constant = false;  ///< every output RN_out(1 / n) (a mutant)
};

double rn(const Format& f, double x) { return to_double(f, round_double(f, x, Rounder::nearest(f)).code); }

/// exp(d) as a correct exp of the declared error may return it: fl_c(exp(d)) (a double exp rounded to nearest:
/// within 0.5 ulp and 2^-52 relative) moved dir x k ulps, k = floor(E - 1/2) for the declared E = ulps + floor(per_x |d|)
/// ulp, so that the result stays within E ulp of e^d (fn_rel of oracle/softmax/softmax_bound.cpp: E ulp <= E 2u |v|);
/// results below the least normal are left as rounded (the declaration's absolute part is not used).
double declared_exp(const SoftmaxArith& a, double d, int dir) {
  const Format& c = *a.compute;
  const double v = rn(c, std::exp(d));
  if (dir == 2) dir = d >= -1 ? 1 : -1;
  if (dir == 0 || !(v >= c.min_normal())) return v;
  const double e = a.exp.ulps + std::floor(a.exp.ulps_per_x * std::fabs(d));
  const auto k = static_cast<std::int64_t>(std::floor(e - 0.5 - 0x1p-20));
  if (k <= 0) return v;
  std::uint64_t code = round_double(c, v, Rounder::nearest(c)).code;  // positive: codes increase with the value
  for (std::int64_t i = 0; i < k; ++i) {
    const std::uint64_t next = dir > 0 ? code + 1 : code - 1;
    const double w = to_double(c, next);
    if (!std::isfinite(w) || w < c.min_normal()) break;
    code = next;
  }
  return to_double(c, code);
}

/// One row's outputs (values of the output format) by arithmetic v under declaration a (finite z, no mask).
void softmax_row(const SoftmaxArith& a, const SoftmaxArithmetic& v, const double* z, std::size_t n, double* y) {
  const Format &c = *a.compute, &out = *a.out;
  if (v.constant) {
    std::fill(y, y + n, rn(out, 1.0 / static_cast<double>(n)));
    return;
  }
  const double m = *std::max_element(z, z + n);
  std::vector<double> e(n);
  for (std::size_t j = 0; j < n; ++j) {
    e[j] = declared_exp(a, rn(c, z[j] - m), v.exp_dir);
    if (v.exp_narrow) e[j] = rn(*v.exp_narrow, e[j]);
  }
  ReduceArith acc;
  acc.acc = a.sum_acc;
  acc.rounder = Rounder::nearest(*a.sum_acc);
  const double s = rn(c, emulate_sum(e.data(), n, v.order, acc));
  const double r = rn(c, 1.0 / s);
  // e_j / s in double, then into a 24-bit-or-narrower format: innocuous double rounding (53 >= 2 p + 2, Figueroa 1995)
  for (std::size_t j = 0; j < n; ++j) y[j] = rn(out, rn(c, a.reciprocal ? e[j] * r : e[j] / s));
}

/// A host softmax kernel claiming the audited kernel's traits and computing `v` (the audit's black-box mutants).
class SoftmaxArithmeticKernel final : public SoftmaxKernel {
 public:
  SoftmaxArithmeticKernel(std::string name, const SoftmaxTraits& t, SoftmaxArithmetic v) : name_(std::move(name)), t_(t), v_(v) {}
  const std::string& name() const override { return name_; }
  std::string description() const override { return "an audit mutant"; }
  Backend backend() const override { return Backend::Cpu; }
  bool is_mutant() const override { return true; }
  const SoftmaxTraits& softmax_traits() const override { return t_; }
  void run(const SoftmaxOperands& o) override {
    const int xb = container_bytes(*t_.x_input), ob = container_bytes(*t_.arith.out);
    const auto n = static_cast<std::size_t>(o.cols);
    std::vector<double> z(n), y(n);
    for (std::int64_t r = 0; r < o.rows; ++r) {
      for (std::size_t j = 0; j < n; ++j) z[j] = to_double(*t_.x_input, load_code(o.x, r * o.ldx + static_cast<std::int64_t>(j), xb));
      softmax_row(t_.arith, v_, z.data(), n, y.data());
      for (std::size_t j = 0; j < n; ++j)
        store_code(o.out, r * o.ldo + static_cast<std::int64_t>(j), ob,
                   to_container(*t_.arith.out, round_double(*t_.arith.out, y[j], Rounder::nearest(*t_.arith.out)).code));
    }
  }

 private:
  std::string name_;
  SoftmaxTraits t_;
  SoftmaxArithmetic v_;
};

/// One seed's case: the logits as stored (exact in the kernel's input format: the generator makes them there), the
/// exact softmax of them and fpcert's bound (the declaration with its row sum's order unknown).
struct SoftmaxCase : RuleCase {
  Problem q;
  std::vector<double> z;  ///< the stored logits, row-major
};

SoftmaxCase softmax_case(const AuditOptions& o, const SoftmaxTraits& t, std::uint64_t seed) {
  SoftmaxCase c;
  c.q = generate(spec_with(o.inputs, {{"rows", std::to_string(o.m)}, {"cols", std::to_string(o.n)}, {"seed", std::to_string(seed)},
                                      {"source", std::string(t.x_input->tag)}}));
  if (!is_softmax_problem(c.q)) throw InputError("audit --op softmax: --inputs '" + o.inputs + "' is not a softmax generator spec (softmax:...)");
  if (softmax_masked(c.q) || softmax_scale(c.q) != 1)
    throw InputError("audit --op softmax: masks and scales are not audited yet (the rule sees finite rows of logits)");
  const std::int64_t rows = softmax_rows(c.q), cols = softmax_cols(c.q);
  const auto n = static_cast<std::size_t>(cols);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) c.z.push_back(rn(*t.x_input, softmax_logit(c.q, i, j)));
  const Format& out = *t.arith.out;
  const SoftmaxRef ref = softmax_reference(t.arith.fn, c.z.data(), rows, cols, out, t.masked_rows);
  SoftmaxArith any = t.arith;
  any.sum_order = ReduceOrder::unknown();
  c.allowed.resize(c.z.size());
  const std::vector<double> pert(n, 0.0);  // the test's reference is of the stored logits: no storage term
  for (std::int64_t i = 0; i < rows; ++i) {
    const std::size_t at = static_cast<std::size_t>(i) * n;
    softmax_row_bound(any, c.z.data() + at, pert.data(), ref.value.data() + at, n, c.allowed.data() + at);
  }
  c.refd = ref.value;
  c.cr = decode(out, ref.code);
  c.testref = c.refd, c.crt = c.cr;
  c.out = &out;
  c.rule = o.rule;
  return c;
}

}  // namespace

AuditRecord run_softmax_audit(const AuditOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  if (o.kernel.empty() || !o.traits.empty())
    throw InputError("audit --op softmax: give --kernel K, a registered softmax kernel (fpcert kernels); --traits declares GEMMs only");
  if (o.tensors) throw InputError("audit --op softmax: --a/--b are a GEMM's tensors; the softmax audit draws its logits from --inputs");
  if (!o.allow.empty()) throw InputError("audit --op softmax: --allow applies to GEMMs (tf32 operands)");
  if (o.reference != "exact") throw InputError("audit --op softmax: --reference takes exact only (the exact softmax of the stored logits)");
  if (o.rule.kind == AuditRule::Kind::KRef) throw InputError("audit --op softmax: kref needs a GEMM reference at precision p; use allclose, maxabs, relfro, cosine or fpcert");
  if (o.seeds.empty()) throw InputError("audit: at least one seed");
  auto k0 = make_softmax_kernel(o.kernel);
  if (!k0) throw InputError("audit --op softmax: '" + o.kernel + "' is not a registered softmax kernel (fpcert kernels lists them)");
  if (k0->memory() != MemorySpace::Host) throw InputError("audit: kernel '" + o.kernel + "' runs on a device; this audit runs host kernels");
  const SoftmaxTraits t = k0->softmax_traits();
  const SoftmaxArith& a = t.arith;
  if (a.fn != SoftmaxFn::Softmax) throw InputError("audit --op softmax: '" + o.kernel + "' is a log-softmax; this slice audits softmax");
  const Format& out = *a.out;
  AuditRecord rec;
  rec.op = "softmax";
  rec.kernel = o.kernel;
  rec.traits = describe_softmax_traits(t);
  rec.m = o.m, rec.n = o.n, rec.k = o.n;
  rec.inputs = o.inputs;
  rec.seeds = o.seeds;
  rec.rule = o.rule.spec;
  rec.rule_text = o.rule.text();
  rec.reference_kind = "exact";
  rec.reference = fmt::format("the exact softmax of the stored logits (values of {}) over each row of {}, rounded to double: what a "
                              "float64 reference (torch.softmax(x.double(), -1)) approximates",
                              t.x_input->tag, o.n);

  std::vector<SoftmaxCase> cases;
  rec.ref_abs_min = std::numeric_limits<double>::infinity();
  for (std::uint64_t s : o.seeds) {
    cases.push_back(softmax_case(o, t, s));
    tally_static(rec, cases.back());
  }
  push_static_findings(rec, out, static_cast<int>(cases.size()), "");

  auto api = make_host_api();
  auto run_one = [&](SoftmaxKernel& k, const SoftmaxCase& c, std::uint64_t seed, std::vector<double>& got) {
    SoftmaxCaseSetup s;
    s.suite = "audit";
    s.case_id = fmt::format("seed{}", seed);
    s.problem = &c.q;
    s.repro = o.command;
    s.family = "audit";
    RunOptions r;
    r.worst_count = 1;
    r.output = &got;
    return run_softmax_case(k, s, *api, r);
  };

  // False alarms: the kernel through the runner, then the shifted evaluation in several row-sum orders and with the exp
  // at either end of its declared error.
  std::vector<std::vector<double>> base(cases.size());
  {
    AuditVariantRow row;
    row.name = "kernel " + o.kernel;
    row.order = describe(a.sum_order);
    int passed = 0;
    for (std::size_t s = 0; s < cases.size(); ++s) {
      auto k = make_softmax_kernel(o.kernel);
      const CaseResult cr = run_one(*k, cases[s], o.seeds[s], base[s]);
      if (base[s].empty()) throw InputError("audit: kernel '" + o.kernel + "' did not run: " + cr.reason);
      passed += cr.status == CaseStatus::Pass;
      tally_variant(row, cases[s], base[s]);
    }
    row.fpcert = fmt::format("pass {}/{}", passed, row.runs);
    rec.variants.push_back(row);
    // reproducibility: a second call on the first seed's case, bit for bit
    std::vector<double> again;
    auto k = make_softmax_kernel(o.kernel);
    run_one(*k, cases[0], o.seeds[0], again);
    rec.repro_runs = 2;
    rec.determinism = "deterministic";
    for (std::size_t x = 0; x < again.size() && rec.reproducible; ++x)
      if (!(again[x] == base[0][x] || (std::isnan(again[x]) && std::isnan(base[0][x]))))
        rec.reproducible = false, rec.repro_first = fmt::format("element {}: {:.9g} then {:.9g}", x, base[0][x], again[x]);
  }
  auto arithmetic_row = [&](const std::string& name, const SoftmaxArithmetic& v, const std::string& cause) {
    AuditVariantRow row;
    row.name = name;
    row.order = describe(v.order);
    for (const SoftmaxCase& c : cases) {
      std::vector<double> got(c.z.size());
      const auto n = static_cast<std::size_t>(o.n);
      for (std::size_t at = 0; at < got.size(); at += n) softmax_row(a, v, c.z.data() + at, n, got.data() + at);
      tally_variant(row, c, got, cause);
    }
    rec.variants.push_back(row);
  };
  const std::vector<std::pair<std::string, ReduceOrder>> orders = {
      {"sequential", ReduceOrder::sequential()}, {"pairwise", ReduceOrder::pairwise()},
      {"blocked 32", ReduceOrder::blocked(32)},  {"warp tree 32", ReduceOrder::warp_tree(32)}};
  for (const auto& [name, order] : orders) arithmetic_row("exp rn, sum " + name, {order, 0, nullptr, false}, "reduction order");
  if (a.exp.ulps >= 1.5 || a.exp.ulps_per_x > 0)  // an exp declared to err by a whole ulp or more: its two ends
    for (int dir : {+1, -1, 2})
      arithmetic_row(fmt::format("exp {} declared error, sum sequential", dir == 2 ? "+/-" : dir > 0 ? "+" : "-"),
                     {ReduceOrder::sequential(), dir, nullptr, false}, "exp error");
  for (const AuditVariantRow& v : rec.variants) rec.variant_runs += v.runs, rec.false_alarm_runs += v.rule_failed;

  // Power: the catalogue's softmax faults that apply, then the black-box mutants.
  if (o.mutants) {
    std::vector<const RuleCase*> rule_cases;
    for (const SoftmaxCase& c : cases) rule_cases.push_back(&c);
    auto power_row = [&](const std::string& id, const std::string& what, const std::function<std::unique_ptr<SoftmaxKernel>()>& mk) {
      rec.mutants.push_back(mutant_row(id, what, rule_cases, base, [&](std::size_t s, std::vector<double>& got) {
        auto k = mk();
        return run_one(*k, cases[s], o.seeds[s], got);
      }));
    };
    for (const FaultInfo& f : fault_catalogue()) {
      if (f.operation != Operation::Softmax || !softmax_fault_not_applicable(f.fault, *k0).empty()) continue;
      const std::string name = register_softmax_mutant(o.kernel, f.fault);
      power_row(std::string(f.id), std::string(f.what), [name] { return make_softmax_kernel(name); });
    }
    power_row("constant", fmt::format("every output 1/n = 1/{} rounded into {}", o.n, out.tag),
              [&] { return std::make_unique<SoftmaxArithmeticKernel>(o.kernel + "~constant", t, SoftmaxArithmetic{ReduceOrder::sequential(), 0, nullptr, true}); });
    if (a.compute->precision() > bf16.precision())
      power_row("exp_bf16", "every exp result rounded into bf16 (exp computed at bf16's precision)", [&] {
        return std::make_unique<SoftmaxArithmeticKernel>(o.kernel + "~exp_bf16", t, SoftmaxArithmetic{ReduceOrder::sequential(), 0, &bf16, false});
      });
  }
  rec.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rec;
}

}  // namespace fpcert
