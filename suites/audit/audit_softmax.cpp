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
#include "suites/audit/audit_rows.hpp"
#include "suites/mutation/faults.hpp"
#include "suites/ops/softmax/softmax_faults.hpp"
#include "suites/ops/softmax/softmax_runner.hpp"

namespace fpcert {

namespace {

/// One admissible (or, for the mutants, wrong) way to compute a softmax or log-softmax row: the evaluation of
/// docs/softmax.md in the declaration's compute format, z_j = RN_c(s x_j) + mask_j, M = max z_j, d_j = RN_c(z_j - M),
/// e_j = exp(d_j) rounded to nearest in the compute format then moved `exp_dir` (+1 up, -1 down; 2: up where d_j >= -1,
/// near the row's max, down elsewhere, so that the large outputs' numerators and the sum's bulk move apart instead of
/// cancelling) by as many ulps as the declared exp error allows beyond half an ulp, S the sum of the e_j in `order` in
/// the declared accumulator, or (online_block > 0) the online evaluation: a running max updated once a block of that
/// many columns, the running sum rescaled by RN_c(exp(RN_c(m_old - m_new))) and the block's terms added in order;
/// softmax y_j = RN_c(e_j / S) (or RN_c(e_j RN_c(1 / S)) when the reciprocal is declared), log-softmax
/// y_j = RN_c(d_j - RN_c(log S)); rounded once into the output format. A fully masked row gives the declared policy.
/// The rest are the catalogue's faults carried in this arithmetic (the mutants of a declaration by --traits) and the
/// audit's black-box mutants.
struct SoftmaxArithmetic {
  ReduceOrder order = ReduceOrder::sequential();
  int exp_dir = 0;
  const Format* exp_narrow = nullptr;  ///< e_j rounded into that format (a mutant)
  bool constant = false;               ///< every output RN_out(1 / n), log-softmax RN_out(-log n) (a mutant)
  int online_block = 0;
  bool unshifted = false;       ///< exp(z_j) without the max (declared unshifted, or the fault smx_no_max_shift)
  bool no_rescale = false;      ///< online: the running sum not rescaled (smx_wrong_rescale)
  bool mask_after_exp = false;  ///< masked entries in the normaliser, their outputs zeroed afterwards (smx_mask_after_exp)
  bool f16_sum = false;         ///< the row sum in fp16 (smx_f16_row_sum)
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

constexpr double kInf = std::numeric_limits<double>::infinity();

/// One row's outputs (values of the output format) by arithmetic v under traits t: x the stored logits, mask null or
/// the row's additive mask (+0 or -Inf), scale the fp32 scale (1: none).
void softmax_row(const SoftmaxTraits& t, const SoftmaxArithmetic& v, const double* x, const double* mask, double scale, std::size_t n,
                 double* y) {
  const SoftmaxArith& a = t.arith;
  const Format &c = *a.compute, &out = *a.out;
  const bool soft = a.fn == SoftmaxFn::Softmax;
  if (v.constant) {
    std::fill(y, y + n, rn(out, soft ? 1.0 / static_cast<double>(n) : -std::log(static_cast<double>(n))));
    return;
  }
  std::vector<double> z(n);
  double m = -kInf;
  for (std::size_t j = 0; j < n; ++j) {
    z[j] = scale == 1 ? x[j] : rn(c, scale * x[j]);
    if (mask && !v.mask_after_exp) z[j] += mask[j];
    m = std::max(m, z[j]);
  }
  if (m == -kInf) {  // every entry masked: the declared policy (the fault: NaN where zeros are declared)
    std::fill(y, y + n, t.masked_rows == MaskedRowPolicy::Nan ? std::numeric_limits<double>::quiet_NaN() : soft ? 0.0 : -kInf);
    return;
  }
  const Format& acc_f = v.f16_sum ? f16 : *a.sum_acc;
  auto ex = [&](double d) {
    const double e = declared_exp(a, d, v.exp_dir);
    return v.exp_narrow ? rn(*v.exp_narrow, e) : e;
  };
  auto add = [&](double s, double e) { return rn(acc_f, s + e); };
  double shift = v.unshifted ? 0.0 : m, s = 0;
  if (v.online_block > 0 && !v.unshifted) {
    const auto b = static_cast<std::size_t>(v.online_block);
    double run = -kInf;
    for (std::size_t s0 = 0; s0 < n; s0 += b) {
      double bm = -kInf;
      for (std::size_t j = s0; j < std::min(n, s0 + b); ++j) bm = std::max(bm, z[j]);
      const double mn = std::max(run, bm);
      if (mn == -kInf) continue;  // nothing unmasked yet
      if (!v.no_rescale && run != -kInf) s = rn(acc_f, s * ex(rn(c, run - mn)));
      for (std::size_t j = s0; j < std::min(n, s0 + b); ++j) s = add(s, ex(rn(c, z[j] - mn)));
      run = mn;
    }
    shift = run;
  } else {
    std::vector<double> e(n);
    for (std::size_t j = 0; j < n; ++j) e[j] = ex(rn(c, z[j] - shift));
    s = sum_rounded(e.data(), n, v.order, acc_f);
  }
  s = rn(c, s);
  // e_j / s in double, then into a 24-bit-or-narrower format: innocuous double rounding (53 >= 2 p + 2, Figueroa 1995)
  if (soft) {
    const double r = rn(c, 1.0 / s);
    for (std::size_t j = 0; j < n; ++j) {
      const double e = ex(rn(c, z[j] - shift));
      y[j] = rn(out, rn(c, a.reciprocal ? e * r : e / s));
    }
  } else {
    const double ls = rn(c, std::log(s));
    for (std::size_t j = 0; j < n; ++j) y[j] = rn(out, rn(c, rn(c, z[j] - shift) - ls));
  }
  if (v.mask_after_exp && mask)
    for (std::size_t j = 0; j < n; ++j)
      if (mask[j] == -kInf) y[j] = soft ? 0.0 : -kInf;
}

/// A host softmax kernel claiming traits t and computing `v`: a declaration by --traits (its stand-in, carrying the
/// catalogue's faults in its own arithmetic) or the audit's black-box mutants.
class SoftmaxArithmeticKernel final : public SoftmaxKernel {
 public:
  SoftmaxArithmeticKernel(std::string name, const SoftmaxTraits& t, SoftmaxArithmetic v, bool mutant = true)
      : name_(std::move(name)), t_(t), v_(v), mutant_(mutant) {}
  const std::string& name() const override { return name_; }
  std::string description() const override { return mutant_ ? "an audit mutant" : "the declared arithmetic, computed by fpcert's emulator"; }
  Backend backend() const override { return Backend::Cpu; }
  bool is_mutant() const override { return mutant_; }
  const SoftmaxTraits& softmax_traits() const override { return t_; }
  std::unique_ptr<SoftmaxKernel> with_bug(SoftmaxBug bug) const override {
    SoftmaxArithmetic v = v_;
    if (bug == SoftmaxBug::NoMaxShift) v.unshifted = true;
    else if (bug == SoftmaxBug::WrongRescale && v.online_block > 0) v.no_rescale = true;
    else if (bug == SoftmaxBug::F16RowSum) v.f16_sum = true;
    else return nullptr;  // the others are made around the kernel (suites/ops/softmax/softmax_faults.cpp)
    return std::make_unique<SoftmaxArithmeticKernel>(name_ + "~" + std::string(to_string(bug)), t_, v, true);
  }
  void run(const SoftmaxOperands& o) override {
    const int xb = container_bytes(*t_.x_input), ob = container_bytes(*t_.arith.out);
    const auto n = static_cast<std::size_t>(o.cols);
    std::vector<double> x(n), mask(o.mask ? n : 0), y(n);
    for (std::int64_t r = 0; r < o.rows; ++r) {
      for (std::size_t j = 0; j < n; ++j) {
        x[j] = to_double(*t_.x_input, load_code(o.x, r * o.ldx + static_cast<std::int64_t>(j), xb));
        if (o.mask) mask[j] = to_double(f32, load_code(o.mask, r * o.ldm + static_cast<std::int64_t>(j), 4));
      }
      softmax_row(t_, v_, x.data(), o.mask ? mask.data() : nullptr, static_cast<double>(o.scale), n, y.data());
      for (std::size_t j = 0; j < n; ++j)
        store_code(o.out, r * o.ldo + static_cast<std::int64_t>(j), ob,
                   to_container(*t_.arith.out, round_double(*t_.arith.out, y[j], Rounder::nearest(*t_.arith.out)).code));
    }
  }

 private:
  std::string name_;
  SoftmaxTraits t_;
  SoftmaxArithmetic v_;
  bool mutant_;
};

/// One seed's case: the logits as stored (exact in the kernel's input format), the mask and scale, the exact softmax of
/// the arguments scale x + mask and fpcert's bound (the declaration with its row sum's order unknown, or an online
/// evaluation in blocks of 32: the larger). The rule sees the elements whose reference is finite (`keep`); the others
/// (log-softmax's -Inf at masked entries, NaN in fully masked rows under the NaN policy) must be given exactly, as the
/// softmax runner grades special values.
struct SoftmaxCase : RuleCase {
  Problem q;
  std::vector<double> z;     ///< the stored logits, row-major
  std::vector<double> mask;  ///< the additive mask (+0 or -Inf), row-major; empty: none
  double scale = 1;
  std::vector<std::size_t> keep;  ///< the elements with a finite reference, in order
  std::vector<double> full_ref;   ///< the reference of every element (specials included)
  std::int64_t nan_elements = 0;  ///< elements of fully masked rows that the NaN policy makes NaN

  /// An output as the rule sees it: the kept elements; where a special element differs from its reference (NaN is NaN,
  /// -Inf is -Inf), the first kept element is made NaN so that the run fails as a wrong special value must.
  std::vector<double> view(const std::vector<double>& got) const {
    if (got.empty()) return {};
    std::vector<double> v;
    v.reserve(keep.size());
    for (std::size_t e : keep) v.push_back(got[e]);
    std::size_t k = 0;
    for (std::size_t e = 0; e < got.size(); ++e) {
      if (k < keep.size() && keep[k] == e) {
        ++k;
        continue;
      }
      const bool same = std::isnan(full_ref[e]) ? std::isnan(got[e]) : got[e] == full_ref[e];
      if (!same && !v.empty()) v[0] = std::numeric_limits<double>::quiet_NaN();
    }
    return v;
  }
};

/// The test's logits: generated from o.inputs with seed, or o.tensors' A (rows x cols values; -Inf entries are the
/// mask, as a test's masked_fill(-inf) leaves them).
SoftmaxCase softmax_case(const AuditOptions& o, const SoftmaxTraits& t, std::uint64_t seed) {
  SoftmaxCase c;
  if (!o.tensors && o.inputs.substr(0, o.inputs.find(':')) != "softmax")
    throw InputError("audit --op " + o.op + ": --inputs '" + o.inputs + "' is not a softmax generator spec (softmax:...; docs/generators.md)");
  c.q = generate(spec_with(o.tensors ? "softmax" : o.inputs, {{"rows", std::to_string(o.m)}, {"cols", std::to_string(o.n)}, {"seed", std::to_string(seed)},
                                                             {"source", std::string(t.x_input->tag)}}));
  if (!is_softmax_problem(c.q)) throw InputError("audit --op softmax: --inputs '" + o.inputs + "' is not a softmax generator spec (softmax:...)");
  const std::int64_t rows = softmax_rows(c.q), cols = softmax_cols(c.q);
  const auto n = static_cast<std::size_t>(cols);
  const std::size_t total = static_cast<std::size_t>(rows) * n;
  if (o.tensors) {  // the test's own logits, rounded into the input format; -Inf moved into the mask
    bool any = false;
    if (c.q.b.data.size() != total) c.q.b = Matrix(cols, rows);
    for (std::size_t e = 0; e < total; ++e) {
      const double v = o.tensors->a[e];
      const bool masked = v == -kInf;
      any = any || masked;
      c.q.a.data[e] = masked ? 0.0 : rn(*t.x_input, v);
      c.q.b(static_cast<std::int64_t>(e % n), static_cast<std::int64_t>(e / n)) = masked ? -kInf : 0.0;
    }
    c.q.achieved["softmax_masked"] = any ? 1 : 0;
    c.q.spec = o.tensors->source;
  }
  const bool masked = softmax_masked(c.q);
  c.scale = softmax_scale(c.q);
  if (masked && !t.accepts_mask)
    throw InputError("audit --op softmax: the logits carry a mask (-Inf entries or --inputs mask=...) and the kernel takes none");
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) {
      c.z.push_back(rn(*t.x_input, softmax_logit(c.q, i, j)));
      if (masked) c.mask.push_back(softmax_mask(c.q, i, j));
    }
  // The exact arguments, as the runner takes them: scale x + mask (a 24-bit scale times a 24-bit logit is exact), and
  // the perturbation RN_c(scale x) adds.
  const double u_c = t.arith.compute->unit_roundoff();
  std::vector<double> zx(total), pert(total, 0.0);
  for (std::size_t e = 0; e < total; ++e) {
    zx[e] = c.scale * c.z[e] + (masked ? c.mask[e] : 0.0);
    if (c.scale != 1 && std::isfinite(zx[e])) pert[e] = u_c * std::fabs(c.scale * c.z[e]) * (1 + 0x1p-50);
  }
  const Format& out = *t.arith.out;
  const SoftmaxRef ref = softmax_reference(t.arith.fn, zx.data(), rows, cols, out, t.masked_rows);
  SoftmaxArith any = t.arith, online = t.arith;
  any.sum_order = ReduceOrder::unknown();
  online.shift = SoftmaxShift::Online, online.block = 32, online.sum_order = ReduceOrder::unknown();
  std::vector<double> allowed(total), b2(n);
  for (std::int64_t i = 0; i < rows; ++i) {
    const std::size_t at = static_cast<std::size_t>(i) * n;
    softmax_row_bound(any, zx.data() + at, pert.data() + at, ref.value.data() + at, n, allowed.data() + at);
    if (t.arith.shift != SoftmaxShift::Unshifted) {  // an online evaluation is admissible beside the declared one
      softmax_row_bound(online, zx.data() + at, pert.data() + at, ref.value.data() + at, n, b2.data());
      for (std::size_t j = 0; j < n; ++j) allowed[at + j] = std::max(allowed[at + j], b2[j]);
    }
  }
  const std::vector<double> cr = decode(out, ref.code);
  c.full_ref = ref.value;
  for (std::size_t e = 0; e < total; ++e) {
    if (std::isnan(ref.value[e])) ++c.nan_elements;
    if (!std::isfinite(ref.value[e])) continue;
    c.keep.push_back(e);
    c.refd.push_back(ref.value[e]), c.cr.push_back(cr[e]), c.allowed.push_back(allowed[e]);
  }
  if (c.keep.empty()) throw InputError("audit --op softmax: every row is fully masked: no output for the rule to measure");
  c.testref = c.refd, c.crt = c.cr;
  c.out = &out;
  c.rule = o.rule;
  return c;
}

}  // namespace

AuditRecord run_softmax_audit(const AuditOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  const bool log_op = o.op == "log_softmax";
  if (o.kernel.empty() == o.traits.empty())
    throw InputError("audit --op " + o.op + ": give --kernel K (a registered softmax kernel: fpcert kernels) or --traits SPEC (docs/audit.md, \"Softmax\")");
  if (o.tensors && !o.tensors->b.empty())
    throw InputError("audit --op softmax: --b is a GEMM's; the softmax audit reads the test's logits from --a alone");
  if (!o.allow.empty()) throw InputError("audit --op softmax: --allow applies to GEMMs (tf32 operands)");
  if (o.reference != "exact") throw InputError("audit --op softmax: --reference takes exact only (the exact softmax of the stored logits)");
  if (o.rule.kind == AuditRule::Kind::KRef) throw InputError("audit --op softmax: kref needs a GEMM reference at precision p; use allclose, maxabs, relfro, cosine or fpcert");
  if (o.seeds.empty()) throw InputError("audit: at least one seed");
  // The kernel: a registered one, or the declaration's stand-in (fpcert's emulator of it), registered for the runner
  // and the catalogue's mutants under "traits:SPEC".
  std::string kname = o.kernel;
  if (!o.traits.empty()) {
    SoftmaxTraits t = parse_softmax_audit_traits(o.traits);
    if (log_op && t.arith.fn == SoftmaxFn::Softmax && o.traits.find("fn=") == std::string::npos) t.arith.fn = SoftmaxFn::LogSoftmax;
    SoftmaxArithmetic v;
    v.order = t.arith.sum_order.kind == ReduceOrderKind::Unknown ? ReduceOrder::sequential() : t.arith.sum_order;
    v.online_block = t.arith.shift == SoftmaxShift::Online ? t.arith.block : 0;
    v.unshifted = t.arith.shift == SoftmaxShift::Unshifted;
    kname = "traits:" + o.traits;
    register_kernel(kname, Backend::Cpu, false, [kname, t, v] { return std::unique_ptr<Kernel>(new SoftmaxArithmeticKernel(kname, t, v, false)); },
                    Operation::Softmax);
  }
  auto k0 = make_softmax_kernel(kname);
  if (!k0) throw InputError("audit --op softmax: '" + kname + "' is not a registered softmax kernel (fpcert kernels lists them)");
  if (k0->memory() != MemorySpace::Host) throw InputError("audit: kernel '" + kname + "' runs on a device; this audit runs host kernels");
  const SoftmaxTraits t = k0->softmax_traits();
  const SoftmaxArith& a = t.arith;
  if (log_op != (a.fn == SoftmaxFn::LogSoftmax))
    throw InputError(fmt::format("audit --op {}: '{}' declares a {}; use --op {}", o.op, kname, to_string(a.fn), to_string(a.fn)));
  const Format& out = *a.out;
  AuditRecord rec;
  init_rows_record(rec, o, std::string(to_string(a.fn)), kname, describe_softmax_traits(t),
                   fmt::format("the exact {} of the stored logits (values of {}; times the scale, plus the mask) over each row of {}, rounded "
                               "to double: what a float64 reference (torch.{}(x.double(), -1)) approximates",
                               to_string(a.fn), t.x_input->tag, o.n, to_string(a.fn)));

  std::vector<SoftmaxCase> cases;
  std::int64_t nan_elements = 0, special = 0, all = 0;
  // NaN against NaN: fpcert's rule grades the declared policy; allclose with equal_nan=1 accepts it; the others fail it
  const bool nan_fails = o.rule.kind != AuditRule::Kind::Fpcert && !(o.rule.kind == AuditRule::Kind::Allclose && o.rule.equal_nan);
  for (std::uint64_t s : rec.seeds) {
    cases.push_back(softmax_case(o, t, s));
    const std::int64_t before = rec.cr_fail_runs;
    tally_static(rec, cases.back());
    // NaN in the reference and in every correct output (fully masked rows, NaN policy): a rule as torch.allclose and
    // assert_close apply it (equal_nan=False) fails there whatever the kernel gives
    if (cases.back().nan_elements > 0 && nan_fails && rec.cr_fail_runs == before) ++rec.cr_fail_runs;
    nan_elements += cases.back().nan_elements;
    special += static_cast<std::int64_t>(cases.back().full_ref.size() - cases.back().keep.size());
    all += static_cast<std::int64_t>(cases.back().full_ref.size());
  }
  if (o.tensors) {
    std::int64_t moved = 0;
    for (std::size_t e = 0; e < o.tensors->a.size(); ++e) moved += o.tensors->a[e] != -kInf && cases[0].z[e] != o.tensors->a[e];
    rec.findings.push_back(moved ? fmt::format("{} of the {} logits are not values of {} and were rounded into it (what the kernel stores); "
                                               "everything below runs on the rounded logits", moved, o.tensors->a.size(), t.x_input->tag)
                                 : fmt::format("the logits are stored in {}, every value exact in the input format {}: no rounding",
                                               o.tensors->a_format, t.x_input->tag));
  }
  if (special > 0)
    rec.findings.push_back(fmt::format("{} of the elements have a non-finite reference ({} -Inf at masked entries of a log-softmax, {} NaN in "
                                       "fully masked rows under the NaN policy): the rule is applied to the others and these must be given "
                                       "exactly (a wrong one fails a run as a NaN output does)",
                                       pct(special, all), special - nan_elements, nan_elements));
  if (nan_elements > 0 && nan_fails)
    rec.findings.push_back(fmt::format("{} element(s) lie in fully masked rows, which the declaration (masked rows nan, as torch.softmax) "
                                       "makes NaN in the reference and in every correct output: the rule as torch.allclose / assert_close "
                                       "apply it (equal_nan=False; the audit's allclose takes equal_nan=1) fails NaN against NaN there, so no kernel passes it on those seeds",
                                       nan_elements));
  push_static_findings(rec, out, static_cast<int>(cases.size()), "");

  auto api = make_host_api();
  auto run_one = [&](SoftmaxKernel& k, const SoftmaxCase& c, std::uint64_t seed, std::vector<double>& got) {
    RunOptions r = audit_run_options(&got);
    return run_softmax_case(k, audit_case_setup<SoftmaxCaseSetup>(c.q, seed, o.command), *api, r);
  };
  std::vector<const RuleCase*> rule_cases;
  for (const SoftmaxCase& c : cases) rule_cases.push_back(&c);

  // False alarms: the kernel through the runner, then the declaration's evaluation with the row sum in several orders,
  // online in blocks, and with the exp at either end of its declared error.
  std::vector<std::vector<double>> base, full_base;
  kernel_row(
      rec, kname, describe(a.sum_order), rule_cases,
      [&](std::size_t s, std::vector<double>& got) {
        auto k = make_softmax_kernel(kname);
        return run_one(*k, cases[s], rec.seeds[s], got);
      },
      [&](std::size_t s, const std::vector<double>& got) { return cases[s].view(got); }, full_base, base);
  auto compute = [&](const SoftmaxCase& c, const SoftmaxArithmetic& v) {
    std::vector<double> got(c.z.size());
    const auto n = static_cast<std::size_t>(o.n);
    for (std::size_t at = 0; at < got.size(); at += n)
      softmax_row(t, v, c.z.data() + at, c.mask.empty() ? nullptr : c.mask.data() + at, c.scale, n, got.data() + at);
    return c.view(got);
  };
  auto arithmetic_row = [&](const std::string& name, const SoftmaxArithmetic& v, const std::string& cause) {
    AuditVariantRow row;
    row.name = name;
    row.order = v.online_block > 0 ? fmt::format("online, blocks of {}", v.online_block) : describe(v.order);
    for (const SoftmaxCase& c : cases) tally_variant(row, c, compute(c, v), cause);
    rec.variants.push_back(row);
  };
  const bool unshifted = a.shift == SoftmaxShift::Unshifted;
  auto arith = [&](ReduceOrder order, int dir, int online) {
    SoftmaxArithmetic v;
    v.order = order, v.exp_dir = dir, v.online_block = online, v.unshifted = unshifted;
    return v;
  };
  for (const auto& [name, order] : row_sum_orders()) arithmetic_row("exp rn, sum " + name, arith(order, 0, 0), "reduction order");
  if (!unshifted) {  // the online evaluation (a running max and a rescaled sum, as FlashAttention's): admissible too
    std::vector<int> blocks = {32, 128};
    if (a.shift == SoftmaxShift::Online && a.block != 32 && a.block != 128) blocks.push_back(a.block);
    for (int b : blocks)
      if (b < o.n) arithmetic_row(fmt::format("exp rn, online blocks of {}", b), arith(ReduceOrder::sequential(), 0, b), "online rescaling");
  }
  if (a.exp.ulps >= 1.5 || a.exp.ulps_per_x > 0)  // an exp declared to err by a whole ulp or more: its two ends
    for (int dir : {+1, -1, 2})
      arithmetic_row(fmt::format("exp {} declared error, sum sequential", dir == 2 ? "+/-" : dir > 0 ? "+" : "-"),
                     arith(ReduceOrder::sequential(), dir, 0), "exp error");
  total_false_alarms(rec);

  // Power: the catalogue's softmax faults that apply, then the black-box mutants.
  if (o.mutants) {
    auto power_row = [&](const std::string& id, const std::string& what, const std::function<std::unique_ptr<SoftmaxKernel>()>& mk) {
      rec.mutants.push_back(mutant_row(id, what, rule_cases, base, [&](std::size_t s, std::vector<double>& got) {
        auto k = mk();
        std::vector<double> full;
        const CaseResult cr = run_one(*k, cases[s], rec.seeds[s], full);
        got = cases[s].view(full);
        return cr;
      }));
    };
    for (const FaultInfo& f : fault_catalogue()) {
      if (f.operation != Operation::Softmax || !softmax_fault_not_applicable(f.fault, *k0).empty()) continue;
      const std::string name = register_softmax_mutant(kname, f.fault);
      power_row(std::string(f.id), std::string(f.what), [name] { return make_softmax_kernel(name); });
    }
    SoftmaxArithmetic cv;
    cv.constant = true;
    power_row("constant", fmt::format("every output {} rounded into {}", log_op ? fmt::format("-log n = -log {}", o.n) : fmt::format("1/n = 1/{}", o.n), out.tag),
              [&] { return std::make_unique<SoftmaxArithmeticKernel>(kname + "~constant", t, cv); });
    if (a.compute->precision() > bf16.precision()) {
      SoftmaxArithmetic nv = arith(ReduceOrder::sequential(), 0, 0);
      nv.exp_narrow = &bf16;
      power_row("exp_bf16", "every exp result rounded into bf16 (exp computed at bf16's precision)",
                [&] { return std::make_unique<SoftmaxArithmeticKernel>(kname + "~exp_bf16", t, nv); });
    }
  }
  rec.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rec;
}

}  // namespace fpcert
