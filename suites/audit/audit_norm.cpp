// suites/audit/audit_norm.cpp — `fpcert audit --op layernorm|rmsnorm` (docs/audit.md, "Normalisation"): a LayerNorm or
// RMSNorm test's rule audited for false alarms over the admissible arithmetic of the declaration (its variance formula
// with the row sums in several orders, the rsqrt at either end of its declared error) and for power over the norm
// faults of the catalogue and black-box mutants (a constant, a wrong eps, the statistics in bf16), with fpcert's verdict
// (suites/ops/norm/norm_runner.hpp) beside each. The rule, the tallies and the labels are the GEMM audit's
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
#include "generators/norm/norm.hpp"
#include "kernels/device/device_api.hpp"
#include "oracle/norm/norm_bound.hpp"
#include "oracle/norm/norm_ref.hpp"
#include "oracle/reduce/reduce_order.hpp"
#include "oracle/round.hpp"
#include "suites/audit/audit.hpp"
#include "suites/audit/audit_case.hpp"
#include "suites/audit/audit_rows.hpp"
#include "suites/mutation/faults.hpp"
#include "suites/ops/norm/norm_faults.hpp"
#include "suites/ops/norm/norm_runner.hpp"

namespace fpcert {

namespace {

double rn(const Format& f, double x) { return to_double(f, round_double(f, x, Rounder::nearest(f)).code); }

/// One way to compute a normalisation row in the declaration's compute format (every operation rounded to nearest):
/// the statistics by the declared variance formula, the row sums in `order` in the declared accumulator (two-pass and
/// one-pass; Welford's updates run in index order, the combined form over its declared parts), t = RN(var + eps),
/// r = RN(1 / sqrt(t)) moved `rsqrt_dir` ulps by as many as the declared rsqrt error allows beyond half an ulp,
/// y = RN(RN(RN(x - mean) r) gamma) + beta, rounded once into the output format. The rest are mutants.
struct NormArithmetic {
  ReduceOrder order = ReduceOrder::sequential();
  int rsqrt_dir = 0;
  double eps_factor = 1;              ///< eps multiplied by this (a mutant: a wrong eps)
  const Format* stats_narrow = nullptr;  ///< mean and variance rounded into this format (a mutant)
  bool constant = false;              ///< every output the mean of the correct outputs of the call (a mutant)
  // the catalogue's faults, carried by a declaration's stand-in (NormKernel::with_bug)
  bool eps_outside = false, bessel = false, no_mean = false, one_pass = false, f16_sum = false;
};

/// The row's mean and variance (RMSNorm: 0 and the mean of squares).
void row_stats(const NormArith& a, const NormArithmetic& v, const double* x, std::size_t n, double& mean, double& var) {
  const Format& c = *a.compute;
  const Format& acc_f = v.f16_sum ? f16 : *a.acc;
  auto add = [&](double s, double e) { return rn(acc_f, s + e); };
  const double nd = static_cast<double>(n);
  const double div = v.bessel && n > 1 ? nd - 1 : nd;
  std::vector<double> t(n);
  if (a.kind == NormKind::RmsNorm || v.no_mean) {
    for (std::size_t j = 0; j < n; ++j) t[j] = rn(c, x[j] * x[j]);
    mean = 0;
    var = rn(c, sum_rounded(t.data(), n, v.order, acc_f) / div);
    if (v.stats_narrow) var = rn(*v.stats_narrow, var);
    return;
  }
  const NormVariance alg = v.one_pass ? NormVariance::OnePass : a.variance;
  if (alg == NormVariance::TwoPass) {
    mean = rn(c, sum_rounded(x, n, v.order, acc_f) / nd);
    for (std::size_t j = 0; j < n; ++j) {
      const double d = rn(c, x[j] - mean);
      t[j] = rn(c, d * d);
    }
    var = rn(c, sum_rounded(t.data(), n, v.order, acc_f) / div);
  } else if (alg == NormVariance::OnePass) {
    for (std::size_t j = 0; j < n; ++j) t[j] = rn(c, x[j] * x[j]);
    mean = rn(c, sum_rounded(x, n, v.order, acc_f) / nd);
    const double q = sum_rounded(t.data(), n, v.order, acc_f);
    var = v.bessel ? rn(c, rn(c, q - rn(c, rn(c, nd * mean) * mean)) / div) : rn(c, rn(c, q / nd) - rn(c, mean * mean));
  } else {  // Welford, sequential or per part combined pairwise (kernels/norm/cpu/norm_models.cpp runs the same steps)
    struct Part {
      double n = 0, m = 0, q = 0;
    };
    auto step = [&](Part& p, double xv) {
      p.n += 1;
      const double d1 = rn(c, xv - p.m);
      p.m = add(p.m, rn(c, d1 / p.n));
      p.q = add(p.q, rn(c, d1 * rn(c, xv - p.m)));
    };
    const std::size_t parts = alg == NormVariance::WelfordCombined ? static_cast<std::size_t>(a.welford.front().parts) : 1;
    std::vector<Part> p(parts);
    for (std::size_t j = 0; j < n; ++j) step(p[j % parts], x[j]);
    for (std::size_t o = parts / 2; o > 0; o /= 2)
      for (std::size_t l = 0; l < o; ++l) {
        const Part &A = p[l], &B = p[l + o];
        if (B.n == 0) continue;
        if (A.n == 0) {
          p[l] = B;
          continue;
        }
        const double nn = A.n + B.n, d = rn(c, B.m - A.m), w = rn(c, B.n / nn);
        p[l] = {nn, add(A.m, rn(c, d * w)), add(add(A.q, B.q), rn(c, rn(c, d * d) * rn(c, A.n * w)))};
      }
    mean = p[0].m;
    var = rn(c, p[0].q / div);
  }
  if (v.stats_narrow) mean = rn(*v.stats_narrow, mean), var = rn(*v.stats_narrow, var);
}

/// One row by arithmetic v (x, gamma, beta values of the input format; g, b null when absent).
void norm_row(const NormArith& a, const NormArithmetic& v, const double* x, const double* g, const double* b, double eps, std::size_t n,
              double* y) {
  const Format &c = *a.compute, &out = *a.out;
  double mean = 0, var = 0;
  row_stats(a, v, x, n, mean, var);
  const double e = rn(f32, eps * v.eps_factor);
  double r = v.eps_outside ? rn(c, 1.0 / rn(c, rn(c, std::sqrt(var)) + e)) : rn(c, 1.0 / std::sqrt(rn(c, var + e)));
  const auto k = static_cast<std::int64_t>(std::floor(a.rsqrt_ulps - 0.5 - 0x1p-20));
  if (v.rsqrt_dir != 0 && k > 0 && r >= c.min_normal() && std::isfinite(r)) {
    std::uint64_t code = round_double(c, r, Rounder::nearest(c)).code;
    code = v.rsqrt_dir > 0 ? code + static_cast<std::uint64_t>(k) : code - static_cast<std::uint64_t>(k);
    r = to_double(c, code);
  }
  for (std::size_t j = 0; j < n; ++j) {
    double yj = rn(c, rn(c, x[j] - mean) * r);
    if (g) yj = rn(c, yj * g[j]);
    if (b) yj = rn(c, yj + b[j]);
    y[j] = rn(out, yj);
  }
}

/// A host norm kernel claiming traits t and computing `v`: a declaration by --traits (its stand-in, carrying the
/// catalogue's faults in its own arithmetic) or the audit's black-box mutants.
class NormArithmeticKernel final : public NormKernel {
 public:
  NormArithmeticKernel(std::string name, const NormTraits& t, NormArithmetic v, bool mutant = true)
      : name_(std::move(name)), t_(t), v_(v), mutant_(mutant) {}
  const std::string& name() const override { return name_; }
  std::string description() const override { return mutant_ ? "an audit mutant" : "the declared arithmetic, computed by fpcert's emulator"; }
  Backend backend() const override { return Backend::Cpu; }
  bool is_mutant() const override { return mutant_; }
  const NormTraits& norm_traits() const override { return t_; }
  std::unique_ptr<NormKernel> with_bug(NormBug bug) const override {
    NormArithmetic v = v_;
    if (bug == NormBug::EpsOutsideSqrt) v.eps_outside = true;
    else if (bug == NormBug::Bessel) v.bessel = true;
    else if (bug == NormBug::NoMeanSubtract) v.no_mean = true;
    else if (bug == NormBug::OnePassVariance) v.one_pass = true;
    else if (bug == NormBug::F16RowSum) v.f16_sum = true;
    else return nullptr;  // the others are made around the kernel (suites/ops/norm/norm_faults.cpp)
    return std::make_unique<NormArithmeticKernel>(name_ + "~" + std::string(to_string(bug)), t_, v, true);
  }
  void run(const NormOperands& o) override {
    const Format& in = *t_.x_input;
    const int xb = container_bytes(in), ob = container_bytes(*t_.arith.out);
    const auto n = static_cast<std::size_t>(o.cols);
    auto ld = [&](const void* p, std::int64_t i) { return to_double(in, load_code(p, i, xb)); };
    std::vector<double> x(n), g(n), b(n), y(static_cast<std::size_t>(o.rows) * n);
    for (std::size_t j = 0; j < n; ++j) {
      if (o.gamma) g[j] = ld(o.gamma, static_cast<std::int64_t>(j));
      if (o.beta) b[j] = ld(o.beta, static_cast<std::int64_t>(j));
    }
    for (std::int64_t r = 0; r < o.rows; ++r) {
      for (std::size_t j = 0; j < n; ++j) x[j] = ld(o.x, r * o.ldx + static_cast<std::int64_t>(j));
      norm_row(t_.arith, v_, x.data(), o.gamma ? g.data() : nullptr, o.beta ? b.data() : nullptr, static_cast<double>(o.eps), n,
               y.data() + static_cast<std::size_t>(r) * n);
    }
    if (v_.constant) {
      double s = 0;
      for (double v : y) s += v;
      std::fill(y.begin(), y.end(), y.empty() ? 0.0 : s / static_cast<double>(y.size()));
    }
    const Format& out = *t_.arith.out;
    for (std::int64_t r = 0; r < o.rows; ++r)
      for (std::size_t j = 0; j < n; ++j)
        store_code(o.out, r * o.ldo + static_cast<std::int64_t>(j), ob,
                   to_container(out, round_double(out, y[static_cast<std::size_t>(r) * n + j], Rounder::nearest(out)).code));
  }

 private:
  std::string name_;
  NormTraits t_;
  NormArithmetic v_;
  bool mutant_;
};

/// One seed's case: x, gamma and beta as stored (the generator makes them in the kernel's input format), the exact
/// normalisation and fpcert's bound of the declaration (its row sums in any order).
struct NormCase : RuleCase {
  Problem q;
  std::vector<double> x, g, b;
  bool has_g = false, has_b = false;
  double eps = 0;
};

NormCase norm_case(const AuditOptions& o, const NormTraits& t, std::uint64_t seed) {
  NormCase c;
  if (o.inputs.substr(0, o.inputs.find(':')) != "norm")
    throw InputError("audit --op " + o.op + ": --inputs '" + o.inputs + "' is not a norm generator spec (norm:...; docs/generators.md)");
  c.q = generate(spec_with(o.inputs, {{"rows", std::to_string(o.m)}, {"cols", std::to_string(o.n)}, {"seed", std::to_string(seed)},
                                      {"source", std::string(t.x_input->tag)}}));
  if (!is_norm_problem(c.q)) throw InputError("audit --op " + o.op + ": --inputs '" + o.inputs + "' is not a norm generator spec (norm:...)");
  const std::int64_t rows = norm_rows(c.q), cols = norm_cols(c.q);
  const auto n = static_cast<std::size_t>(cols);
  c.has_g = norm_has_gamma(c.q), c.has_b = norm_has_beta(c.q);
  c.eps = norm_eps(c.q);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) c.x.push_back(norm_x(c.q, i, j));
  c.g.assign(n, 1.0), c.b.assign(n, 0.0);
  for (std::size_t j = 0; j < n; ++j) {
    if (c.has_g) c.g[j] = norm_gamma(c.q, static_cast<std::int64_t>(j));
    if (c.has_b) c.b[j] = norm_beta(c.q, static_cast<std::int64_t>(j));
  }
  const NormArith& a = t.arith;
  const Format& out = *a.out;
  const NormRef ref = norm_reference(a.kind, c.x.data(), rows, cols, c.has_g ? c.g.data() : nullptr, c.has_b ? c.b.data() : nullptr, c.eps, out);
  c.allowed.resize(c.x.size());
  const std::vector<double> pert(n, 0.0);  // the test's reference is of the stored inputs: no storage term
  for (std::int64_t i = 0; i < rows; ++i) {
    const std::size_t at = static_cast<std::size_t>(i) * n;
    const NormRowStats& st = ref.rows[static_cast<std::size_t>(i)];
    if (!st.finite) throw InputError(fmt::format("audit --op {}: row {} of seed {} is not finite (var + eps = 0 or a non-finite entry): the rule "
                                                 "measures finite outputs; give eps > 0 or other inputs", o.op, i, seed));
    const NormRowBound rb = norm_row_bound(a, c.x.data() + at, pert.data(), n, c.eps, st);
    for (std::size_t j = 0; j < n; ++j)
      c.allowed[at + j] = norm_element_bound(a, rb, c.x.data() + at, pert.data(), n, st, j, c.g[j], c.b[j], c.has_b, ref.value[at + j]);
  }
  c.refd = ref.value;
  c.cr = decode(out, ref.code);
  c.testref = c.refd, c.crt = c.cr;
  c.out = &out;
  c.rule = o.rule;
  return c;
}

}  // namespace

AuditRecord run_norm_audit(const AuditOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  const NormKind kind = o.op == "rmsnorm" ? NormKind::RmsNorm : NormKind::LayerNorm;
  if (o.kernel.empty() == o.traits.empty())
    throw InputError("audit --op " + o.op + ": give --kernel K (a registered norm kernel: fpcert kernels) or --traits SPEC (docs/audit.md, \"Normalisation\")");
  if (o.tensors) throw InputError("audit --op " + o.op + ": --a/--b are not read for a normalisation (its inputs come from --inputs norm:...)");
  if (!o.allow.empty()) throw InputError("audit --op " + o.op + ": --allow applies to GEMMs (tf32 operands)");
  if (o.reference != "exact") throw InputError("audit --op " + o.op + ": --reference takes exact only (the exact normalisation of the stored inputs)");
  if (o.rule.kind == AuditRule::Kind::KRef) throw InputError("audit --op " + o.op + ": kref needs a GEMM reference at precision p; use allclose, maxabs, relfro, cosine or fpcert");
  if (o.seeds.empty()) throw InputError("audit: at least one seed");
  std::string kname = o.kernel;
  if (!o.traits.empty()) {  // the declaration's stand-in, registered for the runner and the catalogue's mutants
    const NormTraits t = parse_norm_audit_traits(o.traits, kind);
    NormArithmetic v;
    kname = "traits:" + o.op + ":" + o.traits;
    register_kernel(kname, Backend::Cpu, false, [kname, t, v] { return std::unique_ptr<Kernel>(new NormArithmeticKernel(kname, t, v, false)); },
                    Operation::Norm);
  }
  auto k0 = make_norm_kernel(kname);
  if (!k0) throw InputError("audit --op " + o.op + ": '" + kname + "' is not a registered norm kernel (fpcert kernels lists them)");
  if (k0->memory() != MemorySpace::Host) throw InputError("audit: kernel '" + kname + "' runs on a device; this audit runs host kernels");
  const NormTraits t = k0->norm_traits();
  const NormArith& a = t.arith;
  if (a.kind != kind)
    throw InputError(fmt::format("audit --op {}: '{}' declares a {}; use --op {}", o.op, kname, to_string(a.kind), to_string(a.kind)));
  const Format& out = *a.out;
  AuditRecord rec;
  init_rows_record(rec, o, o.op, kname, describe_norm_traits(t),
                   fmt::format("the exact {} of the stored inputs (values of {}) over each row of {}, rounded to double: what a float64 "
                               "reference (torch.nn.functional.{}(x.double(), ...)) approximates",
                               to_string(kind), t.x_input->tag, o.n, kind == NormKind::LayerNorm ? "layer_norm" : "rms_norm"));

  std::vector<NormCase> cases;
  for (std::uint64_t s : o.seeds) {
    cases.push_back(norm_case(o, t, s));
    tally_static(rec, cases.back());
  }
  push_static_findings(rec, out, static_cast<int>(cases.size()), "");

  auto api = make_host_api();
  auto run_one = [&](NormKernel& k, const NormCase& c, std::uint64_t seed, std::vector<double>& got) {
    RunOptions r = audit_run_options(&got);
    return run_norm_case(k, audit_case_setup<NormCaseSetup>(c.q, seed, o.command), *api, r);
  };
  std::vector<const RuleCase*> rule_cases;
  for (const NormCase& c : cases) rule_cases.push_back(&c);

  // False alarms: the kernel through the runner, then the declared formula with its row sums in several orders, and the
  // rsqrt at either end of its declared error.
  std::vector<std::vector<double>> base, full;
  kernel_row(
      rec, kname, "declared", rule_cases,
      [&](std::size_t s, std::vector<double>& got) {
        auto k = make_norm_kernel(kname);
        return run_one(*k, cases[s], o.seeds[s], got);
      },
      [](std::size_t, const std::vector<double>& got) { return got; }, full, base);
  const auto n = static_cast<std::size_t>(o.n);
  auto arithmetic_row = [&](const std::string& name, const NormArithmetic& v, const std::string& cause) {
    AuditVariantRow row;
    row.name = name;
    row.order = describe(v.order);
    for (const NormCase& c : cases) {
      std::vector<double> got(c.x.size());
      for (std::size_t at = 0; at < got.size(); at += n)
        norm_row(a, v, c.x.data() + at, c.has_g ? c.g.data() : nullptr, c.has_b ? c.b.data() : nullptr, c.eps, n, got.data() + at);
      tally_variant(row, c, got, cause);
    }
    rec.variants.push_back(row);
  };
  const std::string formula = kind == NormKind::RmsNorm ? std::string("mean of squares") : std::string(to_string(a.variance));
  const bool ordered = kind == NormKind::RmsNorm || a.variance == NormVariance::TwoPass || a.variance == NormVariance::OnePass;
  for (const auto& [name, order] : row_sum_orders()) {
    if (!ordered && name != "sequential") break;  // Welford's updates run in index order (per part): one row
    NormArithmetic v;
    v.order = order;
    arithmetic_row(ordered ? formula + ", sums " + name : formula, v, "reduction order");
  }
  if (a.rsqrt_ulps >= 1.5)  // an rsqrt declared to err by a whole ulp or more: its two ends
    for (int dir : {+1, -1}) {
      NormArithmetic v;
      v.rsqrt_dir = dir;
      arithmetic_row(fmt::format("{}, rsqrt {} declared error", formula, dir > 0 ? "+" : "-"), v, "rsqrt error");
    }
  total_false_alarms(rec);

  // Power: the catalogue's norm faults that apply, then the black-box mutants.
  if (o.mutants) {
    auto power_row = [&](const std::string& id, const std::string& what, const std::function<std::unique_ptr<NormKernel>()>& mk) {
      rec.mutants.push_back(mutant_row(id, what, rule_cases, base, [&](std::size_t s, std::vector<double>& got) {
        auto k = mk();
        return run_one(*k, cases[s], o.seeds[s], got);
      }));
    };
    for (const FaultInfo& f : fault_catalogue()) {
      if (f.operation != Operation::Norm || !norm_fault_not_applicable(f.fault, *k0).empty()) continue;
      const std::string name = register_norm_mutant(kname, f.fault);
      power_row(std::string(f.id), std::string(f.what), [name] { return make_norm_kernel(name); });
    }
    auto arith_mutant = [&](const std::string& id, const std::string& what, NormArithmetic v) {
      power_row(id, what, [&, id, v] { return std::make_unique<NormArithmeticKernel>(kname + "~" + id, t, v); });
    };
    NormArithmetic cv;
    cv.constant = true;
    arith_mutant("constant", fmt::format("every output the mean of the correct outputs of the call, rounded into {}", out.tag), cv);
    NormArithmetic ev;
    ev.eps_factor = 100;
    arith_mutant("eps_x100", "eps 100 times the case's (1e-3 for 1e-5: Keras's default where torch's is meant)", ev);
    if (a.compute->precision() > bf16.precision()) {
      NormArithmetic sv;
      sv.stats_narrow = &bf16;
      arith_mutant("stats_bf16", "the row's mean and variance rounded into bf16 (statistics kept in the storage format)", sv);
    }
  }
  rec.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rec;
}

}  // namespace fpcert
