// suites/audit/audit.cpp — `fpcert audit`: a GEMM test's rule audited for false alarms and power (audit.hpp,
// docs/audit.md).
#include "suites/audit/audit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <cmath>
#include <limits>
#include <sstream>

#include "base/error.hpp"
#include "base/codes.hpp"
#include "generators/generate.hpp"
#include "kernels/device/device_api.hpp"
#include "oracle/gemm_ref.hpp"
#include "oracle/refvalue.hpp"
#include "oracle/round.hpp"
#include "suites/audit/audit_case.hpp"
#include "suites/audit/audit_kernels.hpp"
#include "suites/audit/batch_invariance.hpp"
#include "suites/mutation/faults.hpp"
#include "suites/ops/gemm/fault_injectors.hpp"
#include "suites/ops/gemm/runner.hpp"
#include "suites/verdict/emulate/emulate.hpp"
#include "suites/verdict/envelope.hpp"
#include "suites/verdict/tolerance.hpp"

namespace fpcert {

// ---- the rule ----

std::string AuditRule::text() const {
  switch (kind) {
    case Kind::Allclose:
      return fmt::format("allclose: |got - ref| <= {:g} + {:g} |ref| for every element{}", atol, rtol, equal_nan ? " (equal_nan: NaN meets NaN)" : "");
    case Kind::MaxAbs: return fmt::format("maxabs: max |got - ref| <= {:g}", tol);
    case Kind::RelFro: return fmt::format("relfro: ||got - ref||_F <= {:g} ||ref||_F", tol);
    case Kind::KRef:
      return fmt::format("kref: max |got - ref| <= {:g} max |ref_{} - ref|, ref_{} the test's reference computed in {} "
                         "(inputs in {}, exact products summed sequentially by FMA in {}, rounded once into {})",
                         k, p, p, p, p, p == "f64" ? "f64" : "f32", p);
    case Kind::Cosine: return fmt::format("cosine: cos(got, ref) >= {:g} over the flattened outputs", min);
    case Kind::Fpcert: return "fpcert: |got - ref| <= allowed_ij, fpcert's envelope of the declared formats in any order";
  }
  return {};
}

AuditRule parse_audit_rule(const std::string& spec) {
  AuditRule r;
  r.spec = spec;
  const auto colon = spec.find(':');
  const std::string kind = spec.substr(0, colon);
  if (kind == "allclose") r.kind = AuditRule::Kind::Allclose;
  else if (kind == "maxabs") r.kind = AuditRule::Kind::MaxAbs;
  else if (kind == "relfro") r.kind = AuditRule::Kind::RelFro;
  else if (kind == "kref") r.kind = AuditRule::Kind::KRef;
  else if (kind == "cosine") r.kind = AuditRule::Kind::Cosine;
  else if (kind == "fpcert") r.kind = AuditRule::Kind::Fpcert;
  else throw InputError("rule '" + spec + "': unknown kind '" + kind + "' (valid: allclose, maxabs, relfro, kref, cosine, fpcert)");
  bool has_tol = false, has_min = false;
  std::stringstream fields(colon == std::string::npos ? std::string() : spec.substr(colon + 1));
  for (std::string f; std::getline(fields, f, ',');) {
    const auto eq = f.find('=');
    if (eq == std::string::npos) throw InputError("rule '" + spec + "': field '" + f + "' is not key=value");
    const std::string key = f.substr(0, eq), val = f.substr(eq + 1);
    if (r.kind == AuditRule::Kind::KRef && key == "p") {
      if (!find_format(val)) throw InputError("rule '" + spec + "': p=" + val + " is not a format (one of " + format_tags() + ")");
      r.p = val;
      continue;
    }
    double v = 0;
    try {
      std::size_t used = 0;
      v = std::stod(val, &used);
      if (used != val.size()) throw std::invalid_argument(val);
    } catch (const std::exception&) {
      throw InputError("rule '" + spec + "': " + key + "=" + val + " is not a number");
    }
    if (!(v >= 0) || !std::isfinite(v)) throw InputError("rule '" + spec + "': " + key + " must be finite and >= 0");
    if (r.kind == AuditRule::Kind::Allclose && key == "rtol") r.rtol = v;
    else if (r.kind == AuditRule::Kind::Allclose && key == "atol") r.atol = v;
    else if (r.kind == AuditRule::Kind::Allclose && key == "equal_nan") {
      if (v != 0 && v != 1) throw InputError("rule '" + spec + "': equal_nan is 0 or 1");
      r.equal_nan = v == 1;
    }
    else if ((r.kind == AuditRule::Kind::MaxAbs || r.kind == AuditRule::Kind::RelFro) && key == "tol") r.tol = v, has_tol = true;
    else if (r.kind == AuditRule::Kind::KRef && key == "k") r.k = v;
    else if (r.kind == AuditRule::Kind::Cosine && key == "min") {
      if (v > 1) throw InputError("rule '" + spec + "': min must be <= 1 (a cosine similarity)");
      r.min = v, has_min = true;
    } else throw InputError("rule '" + spec + "': unknown key '" + key + "' for " + kind);
  }
  if ((r.kind == AuditRule::Kind::MaxAbs || r.kind == AuditRule::Kind::RelFro) && !has_tol)
    throw InputError("rule '" + spec + "': " + kind + " needs tol=");
  if (r.kind == AuditRule::Kind::KRef && r.p.empty()) throw InputError("rule '" + spec + "': kref needs p= (the reference's precision, e.g. p=bf16)");
  if (r.kind == AuditRule::Kind::Cosine && !has_min) throw InputError("rule '" + spec + "': cosine needs min= (e.g. min=0.99)");
  return r;
}

double rule_tolerance(const AuditRule& r, double ref, double allowed) {
  switch (r.kind) {
    case AuditRule::Kind::Allclose: return r.atol + r.rtol * std::fabs(ref);
    case AuditRule::Kind::MaxAbs:
    case AuditRule::Kind::KRef: return r.tol;
    case AuditRule::Kind::Fpcert: return allowed;
    case AuditRule::Kind::RelFro:
    case AuditRule::Kind::Cosine: break;
  }
  return std::numeric_limits<double>::infinity();
}

RuleOutcome apply_rule(const AuditRule& r, const std::vector<double>& got, const std::vector<double>& ref,
                       const std::vector<double>& allowed) {
  RuleOutcome o;
  if (r.kind == AuditRule::Kind::Fpcert && allowed.size() != ref.size()) throw std::invalid_argument("apply_rule: fpcert needs allowed");
  if (r.kind == AuditRule::Kind::Cosine) {
    const double d = one_minus_cosine(got, ref), t = 1 - r.min;
    o.ratio = t > 0 ? d / t : (d > 0 ? std::numeric_limits<double>::infinity() : 0);
    o.pass = d <= t;
    o.failing = o.pass ? 0 : 1;
    return o;
  }
  if (r.kind == AuditRule::Kind::RelFro) {
    double num = 0, den = 0;
    bool nonfinite = false;
    for (std::size_t x = 0; x < ref.size(); ++x) {
      if (!std::isfinite(got[x])) nonfinite = true;
      num += (got[x] - ref[x]) * (got[x] - ref[x]);
      den += ref[x] * ref[x];
    }
    const double lhs = std::sqrt(num), rhs = r.tol * std::sqrt(den);
    o.ratio = nonfinite ? std::numeric_limits<double>::infinity() : rhs > 0 ? lhs / rhs : (lhs > 0 ? std::numeric_limits<double>::infinity() : 0);
    o.pass = !nonfinite && lhs <= rhs;
    o.failing = o.pass ? 0 : 1;
    return o;
  }
  for (std::size_t x = 0; x < ref.size(); ++x) {
    const double tol = rule_tolerance(r, ref[x], allowed.empty() ? 0.0 : allowed[x]);
    const double err = std::fabs(got[x] - ref[x]);
    const bool ok = std::isfinite(got[x]) && err <= tol;
    const double ratio = !std::isfinite(got[x]) ? std::numeric_limits<double>::infinity() : tol > 0 ? err / tol : (err > 0 ? std::numeric_limits<double>::infinity() : 0);
    if (!ok) ++o.failing;
    if (o.worst < 0 || ratio > o.ratio) o.ratio = ratio, o.worst = static_cast<std::int64_t>(x);
  }
  o.pass = o.failing == 0;
  return o;
}

double one_minus_cosine(const std::vector<double>& got, const std::vector<double>& ref) {
  double g2 = 0, r2 = 0;
  for (std::size_t x = 0; x < ref.size(); ++x) {
    if (!std::isfinite(got[x])) return std::numeric_limits<double>::infinity();
    g2 += got[x] * got[x], r2 += ref[x] * ref[x];
  }
  if (g2 == 0 || r2 == 0) return 1;  // cos taken as 0 (torch divides by max(||got|| ||ref||, eps))
  const double g = std::sqrt(g2), rn = std::sqrt(r2);
  double d = 0;
  for (std::size_t x = 0; x < ref.size(); ++x) {
    const double e = got[x] / g - ref[x] / rn;
    d += e * e;
  }
  return d / 2;  // 1 - cos = |u - v|^2 / 2 for unit vectors u, v
}

std::vector<double> kref_reference(const std::string& p, const Format& input, std::int64_t m, std::int64_t n, std::int64_t k,
                                   const std::vector<double>& a, const std::vector<double>& b) {
  const Format* fp = find_format(p);
  if (!fp) throw InputError("kref: p=" + p + " is not a format");
  const bool narrower = fp->frac_bits < input.frac_bits || fp->exp_bits < input.exp_bits;
  KernelTraits t = parse_traits_spec(fmt::format("in={}{},acc={},out={}", input.tag, narrower ? ",operand=" + p : std::string(),
                                                 p == "f64" ? "f64" : "f32", p));
  t.sum_order = SummationOrder::sequential(StepKind::Fma);
  if (const std::string why = emulation_unavailable(t); !why.empty())
    throw InputError("kref: fpcert cannot compute the " + p + " reference of " + std::string(input.tag) + " inputs: " + why);
  std::vector<double> av = a, bv = b;
  if (narrower) av = round_values(a, *fp, t.input_rounding), bv = round_values(b, *fp, t.input_rounding);
  const std::vector<std::uint64_t> codes = emulate_gemm(t, m, n, k, av, bv);
  std::vector<double> v(codes.size());
  for (std::size_t x = 0; x < codes.size(); ++x) v[x] = to_double(*fp, codes[x]);
  return v;
}

namespace {

/// One seed's case: the inputs as stored (rounded into the declared input formats), their exact product, and
/// what the static findings and labels read per element.
struct SeedCase : RuleCase {
  Problem q;
  GemmRef ref;
  double kref_err = 0;  ///< kref: max |ref_p - ref| (rule: resolved on this case, its tolerance k max |ref_p - ref|)
};

/// A case's reference, envelope (order unknown), reference as doubles and correctly rounded output, from its inputs.
void finish_case(SeedCase& c, const KernelTraits& t) {
  c.ref = gemm_reference(c.q.a.view(), c.q.b.view());
  KernelTraits any = t;
  any.sum_order = SummationOrder::unknown();
  c.allowed = element_tolerance(any, c.q, c.ref).allowed;
  const Rounder rn = Rounder::nearest(*t.out);
  for (const RefValue& v : c.ref.c) {
    c.refd.push_back(v.hi);
    c.cr.push_back(to_double(*t.out, round_ref(*t.out, v, rn).code));
  }
  c.testref = c.refd, c.crt = c.cr;
  c.abs_sum.assign(c.ref.abs_sum.begin(), c.ref.abs_sum.end());
  c.out = t.out;
}

SeedCase make_seed_case(const AuditOptions& o, const KernelTraits& t, std::uint64_t seed) {
  SeedCase c;
  if (o.tensors) {
    c.q.family = "tensors";
    c.q.spec = o.tensors->source;
    c.q.m = o.m, c.q.n = o.n, c.q.k = o.k;
    c.q.a = Matrix(o.m, o.k), c.q.b = Matrix(o.k, o.n);
    c.q.a.data = o.tensors->a, c.q.b.data = o.tensors->b;
    c.q.source = &f64;
  } else {
    c.q = generate(spec_with(o.inputs, {{"m", std::to_string(o.m)}, {"n", std::to_string(o.n)}, {"k", std::to_string(o.k)}, {"seed", std::to_string(seed)}}));
  }
  c.q.a.data = round_values(c.q.a.data, *t.a_input, t.input_rounding);
  c.q.b.data = round_values(c.q.b.data, *t.b_input, t.input_rounding);
  if (*t.a_input == *t.b_input) c.q.source = t.a_input;
  finish_case(c, t);
  if (o.reference == "f32") {
    c.testref = kref_reference("f32", *t.a_input, o.m, o.n, o.k, c.q.a.data, c.q.b.data);
    c.crt = round_values(c.testref, *t.out, Rounding::NearestEven);
  } else if (o.reference == "out") {
    c.testref = c.cr;
  }
  c.rule = o.rule;
  if (o.rule.kind == AuditRule::Kind::KRef) {
    const std::vector<double> rp = kref_reference(o.rule.p, *t.a_input, o.m, o.n, o.k, c.q.a.data, c.q.b.data);
    for (std::size_t x = 0; x < rp.size(); ++x)
      c.kref_err = std::max(c.kref_err, std::isfinite(rp[x]) ? std::fabs(rp[x] - c.testref[x]) : std::numeric_limits<double>::infinity());
    c.rule.tol = o.rule.k * c.kref_err;
  }
  return c;
}

/// The rows of a seed's case the power table runs: a sample of them (suites/verdict/sampled_reference.hpp: the first
/// and last, both sides of every power of two, `random` more from the seed) with every column; its reference and
/// envelope, and the rule as resolved on the whole case (kref's tolerance is the whole test's).
SeedCase row_sample_case(const SeedCase& full, const KernelTraits& t, std::int64_t random, std::uint64_t seed) {
  GemmSample gs;
  gs.rows = sample_indices(full.q.m, {full.q.k, full.q.n}, random, seed);
  for (std::int64_t j = 0; j < full.q.n; ++j) gs.cols.push_back(j);
  SeedCase c;
  c.q = sampled_problem(full.q, gs);
  finish_case(c, t);
  c.testref.clear(), c.crt.clear();  // the whole case's test reference on the sampled rows
  for (std::int64_t i : gs.rows)
    for (std::int64_t j = 0; j < full.q.n; ++j) {
      c.testref.push_back(full.testref[static_cast<std::size_t>(i * full.q.n + j)]);
      c.crt.push_back(full.crt[static_cast<std::size_t>(i * full.q.n + j)]);
    }
  c.rule = full.rule;
  c.kref_err = full.kref_err;
  return c;
}

/// Random rows of the power table's sample (besides the structured ones); 0: every row (AuditOptions::sample_rows).
std::int64_t power_sample(const AuditOptions& o) {
  if (o.sample_rows >= 0) return o.sample_rows;
  // auto: from 2^24 multiply-adds per case (e.g. 128 x 128 x 1024), 16 random rows besides the structured ones
  return o.m * o.n * o.k >= (std::int64_t{1} << 24) ? 16 : 0;
}

/// The orders audit samples for the declared formats: the declared one first (when known), then sequential FMA,
/// pairwise, split-K 2/4/8 and blocked 32, each where the emulator runs it and K allows it.
std::vector<std::pair<std::string, SummationOrder>> sampled_orders(const KernelTraits& t, std::int64_t k) {
  std::vector<std::pair<std::string, SummationOrder>> out;
  auto add = [&](const std::string& name, const SummationOrder& o) {
    for (const auto& e : out)
      if (e.second == o) return;
    KernelTraits v = t;
    v.sum_order = o;
    if (emulation_unavailable(v).empty()) out.emplace_back(name, o);
  };
  if (t.sum_order.known()) add("declared order", t.sum_order);
  add("sequential fma", SummationOrder::sequential(StepKind::Fma));
  add("pairwise", SummationOrder::pairwise());
  for (int s : {2, 4, 8})
    if (s <= k) add(fmt::format("split-K {}", s), SummationOrder::split_k(s));
  if (k > 32) add("blocked 32", SummationOrder::blocked(32));
  return out;
}


}  // namespace

AuditRecord run_audit(const AuditOptions& o) {
  if (o.op == "softmax" || o.op == "log_softmax") return run_softmax_audit(o);
  if (o.op == "layernorm" || o.op == "rmsnorm") return run_norm_audit(o);
  if (o.op != "gemm") throw InputError("audit: --op '" + o.op + "': expected gemm, softmax, log_softmax, layernorm or rmsnorm");
  const auto t0 = std::chrono::steady_clock::now();
  if (o.kernel.empty() == o.traits.empty()) throw InputError("audit: give exactly one of --kernel K or --traits SPEC");
  if (o.seeds.empty() && !o.tensors) throw InputError("audit: at least one seed");
  if (o.tensors && (o.tensors->m != o.m || o.tensors->n != o.n || o.tensors->k != o.k))
    throw InputError(fmt::format("audit: the tensors give m={} n={} k={}, the options m={} n={} k={}", o.tensors->m, o.tensors->n,
                                 o.tensors->k, o.m, o.n, o.k));
  if (o.reference != "exact" && o.reference != "f32" && o.reference != "out")
    throw InputError("audit: --reference '" + o.reference + "': expected exact, f32 or out");
  const std::vector<std::uint64_t> seeds = o.tensors ? std::vector<std::uint64_t>{0} : o.seeds;
  KernelTraits t;
  std::function<std::unique_ptr<GemmKernel>()> make;
  AuditRecord rec;
  if (!o.kernel.empty()) {
    register_audit_fixtures();
    auto k0 = make_gemm_kernel(o.kernel);
    if (!k0) throw InputError("audit: kernel '" + o.kernel + "' is not registered (fpcert kernels lists them)");
    if (k0->memory() != MemorySpace::Host) throw InputError("audit: kernel '" + o.kernel + "' runs on a device; this audit runs host kernels");
    t = k0->traits();
    make = [name = o.kernel] { return make_gemm_kernel(name); };
    rec.kernel = o.kernel;
  } else {
    t = parse_traits_spec(o.traits);
    const SummationOrder computed = t.sum_order.known() ? t.sum_order : SummationOrder::sequential(StepKind::Fma);
    make = [t, computed] { return make_emulated_kernel("declared", t, computed); };
    rec.kernel = "traits:" + o.traits;
  }
  check_audit_allow(o.allow, t);
  const bool tf32_allowed = std::find(o.allow.begin(), o.allow.end(), "tf32") != o.allow.end();
  // The arithmetic the envelope admits: the declaration, with TF32 operands where the user allows them.
  KernelTraits env = t;
  if (tf32_allowed) env.a_operand = env.b_operand = &tf32;
  rec.allow = o.allow;
  rec.traits = describe_traits(t);
  rec.m = o.m, rec.n = o.n, rec.k = o.k;
  rec.inputs = o.tensors ? "the test's tensors " + o.tensors->source + " (one case: seed unused)" : o.inputs;
  rec.seeds = seeds;
  rec.rule = o.rule.spec;
  rec.rule_text = o.rule.text();
  const std::string stored = fmt::format("the stored inputs (the {} values rounded into {})", o.tensors ? "tensors'" : "generator's", t.a_input->tag);
  rec.reference_kind = o.reference;
  rec.reference = o.reference == "f32"   ? "an fp32 GEMM of " + stored + ": exact products summed sequentially by FMA in fp32, rounded once into "
                                           "fp32 (a test whose reference is torch.matmul of float32 tensors); the rule is applied against it"
                  : o.reference == "out" ? fmt::format("the exact product of {} correctly rounded into {} (a test whose reference is "
                                                       "computed exactly and stored in the output dtype); the rule is applied against it",
                                                       stored, t.out->tag)
                                         : "the exact product of " + stored + ", rounded to double: what an fp64 reference GEMM of the "
                                           "test's tensors approximates";
  const Format& out = *t.out;

  // Static findings and the cases.
  std::vector<SeedCase> cases;
  rec.ref_abs_min = std::numeric_limits<double>::infinity();
  for (std::uint64_t s : seeds) {
    cases.push_back(make_seed_case(o, env, s));
    tally_static(rec, cases.back());
  }
  const auto n_seeds = static_cast<int>(seeds.size());
  if (o.tensors) {
    // the tensors' values as the kernel stores them: rounded into its input formats (said when any moved)
    auto moved = [](const std::vector<double>& given, const std::vector<double>& stored) {
      std::int64_t c = 0;
      for (std::size_t x = 0; x < given.size(); ++x) c += given[x] != stored[x];
      return c;
    };
    const std::int64_t ma = moved(o.tensors->a, cases[0].q.a.data), mb = moved(o.tensors->b, cases[0].q.b.data);
    if (ma + mb > 0)
      rec.findings.push_back(fmt::format("the tensors are not exactly representable in the input formats: {} of A's {} values and {} of B's {} "
                                         "were rounded ({}) into {} and {}, as the kernel stores them; the audit runs on the rounded values",
                                         ma, o.tensors->a.size(), mb, o.tensors->b.size(), to_string(t.input_rounding), t.a_input->tag,
                                         t.b_input->tag));
    else
      rec.findings.push_back(fmt::format("the tensors are stored in {} (A) and {} (B), every value exact in the input formats {} and {}: "
                                         "stored in {}, no rounding",
                                         o.tensors->a_format, o.tensors->b_format, t.a_input->tag, t.b_input->tag,
                                         o.tensors->a_format == o.tensors->b_format ? o.tensors->a_format
                                                                                    : o.tensors->a_format + "/" + o.tensors->b_format));
  }
  if (o.rule.kind == AuditRule::Kind::KRef) {
    for (const SeedCase& c : cases) rec.kref_err.push_back(c.kref_err);
    const auto [lo, hi] = std::minmax_element(rec.kref_err.begin(), rec.kref_err.end());
    rec.findings.push_back(fmt::format("kref: the {} reference errs by max |ref_{} - ref| in [{:g}, {:g}] over the seeds, so the tolerance "
                                       "is {:g} x that: [{:g}, {:g}] on every element ({} {:g}, half an ulp of {} at max |ref| = {:g})",
                                       o.rule.p, o.rule.p, *lo, *hi, o.rule.k, o.rule.k * *lo, o.rule.k * *hi,
                                       o.rule.k * *lo < half_ulp(out, rec.ref_abs_max) ? "below" : "at or above",
                                       half_ulp(out, rec.ref_abs_max), out.tag, rec.ref_abs_max));
  }
  push_static_findings(rec, out, n_seeds, tf32_allowed ? " with TF32 operands allowed" : "");

  RunOptions ro;
  ro.worst_count = 1;
  auto run_one = [&](GemmKernel& k, const SeedCase& c, std::uint64_t seed, std::vector<double>& got) {
    CaseSetup s;
    s.suite = "audit";
    s.case_id = fmt::format("seed{}", seed);
    s.problem = &c.q;
    s.ref = &c.ref;
    s.repro = o.command;
    s.family = "audit";
    RunOptions r = ro;
    r.output = &got;
    return run_case(k, s, *make_host_api(), r);
  };

  // False alarms: the kernel itself through the runner (fpcert's verdict beside it), then the sampled orders.
  std::vector<std::vector<double>> kernel_out(cases.size());
  {
    AuditVariantRow row;
    row.name = "kernel " + rec.kernel;
    row.order = t.sum_order.known() ? order_spec(t.sum_order) : "unknown (computed sequentially)";
    int passed = 0;
    for (std::size_t s = 0; s < cases.size(); ++s) {
      auto k = make();
      const CaseResult cr = run_one(*k, cases[s], seeds[s], kernel_out[s]);
      if (cr.status == CaseStatus::Pass) ++passed;
      if (kernel_out[s].empty()) throw InputError("audit: kernel '" + rec.kernel + "' did not run: " + cr.reason);
      tally_variant(row, cases[s], kernel_out[s]);
    }
    row.fpcert = fmt::format("pass {}/{}", passed, row.runs);
    rec.variants.push_back(row);
  }
  // One correct arithmetic (traits with a known order) computed by fpcert's emulator on every case: a row of the table.
  // `cause`: the label of a failure that the order alone does not explain (an allowed operand rounding).
  auto arithmetic_row = [&](const std::string& name, const KernelTraits& v, const std::string& cause) {
    AuditVariantRow row;
    row.name = name;
    row.order = order_spec(v.sum_order);
    for (const SeedCase& c : cases) {
      tally_variant(row, c, decode(out, emulate_gemm(v, o.m, o.n, o.k, c.q.a.data, c.q.b.data)), cause);
    }
    rec.variants.push_back(row);
  };
  // The sampled orders of an arithmetic (the declaration; TF32 operands where allowed, `prefix` naming it).
  auto order_rows = [&](KernelTraits v, const std::string& prefix, const std::string& cause) {
    for (const auto& [name, order] : sampled_orders(v, o.k)) {
      v.sum_order = order;
      arithmetic_row(prefix + "order " + name, v, cause);
    }
  };
  order_rows(t, "", "reduction order");
  if (tf32_allowed) {
    // TF32 as the user allows it: fp32 inputs rounded to TF32 as cvt.rna does (cuBLAS's TF32 mode, torch's allow_tf32) in
    // every sampled order, and to nearest even in sequential FMA; products exact, fp32 accumulation (docs/audit.md,
    // "Allowed arithmetic").
    KernelTraits v = t;
    v.a_operand = v.b_operand = &tf32;
    v.input_rounding = Rounding::NearestAway;
    order_rows(v, "tf32 rna ", "tf32 operands");
    v.input_rounding = Rounding::NearestEven;
    v.sum_order = SummationOrder::sequential(StepKind::Fma);
    arithmetic_row("tf32 rn order sequential fma", v, "tf32 operands");
  }
  for (const AuditVariantRow& v : rec.variants) rec.variant_runs += v.runs, rec.false_alarm_runs += v.rule_failed;

  // Reproducibility (every kernel) and batch invariance (where declared), bit for bit on the first seed's case.
  rec.determinism = std::string(to_string(t.determinism));
  {
    auto k = make();
    check_reproducible(*k, o.m, o.n, o.k, cases[0].q.a.data, cases[0].q.b.data, o.repro_runs, rec);
  }
  if (t.batch_invariant || o.batch_invariant) {
    rec.batch_declared = true;
    rec.batch_note = t.batch_invariant ? (t.batch_invariant_note.empty() ? "the kernel's traits" : t.batch_invariant_note) : "--batch-invariant";
    std::vector<std::int64_t> probes = {0};
    for (std::int64_t p : {o.m - 1, o.m / 2})
      if (std::find(probes.begin(), probes.end(), p) == probes.end()) probes.push_back(p);
    check_batch_invariance(make, o.m, o.n, o.k, cases[0].q.a.data, cases[0].q.b.data, probes, kBatchSizes, rec);
    std::string sizes;
    for (const AuditBatchRow& b : rec.batch_rows) sizes += (sizes.empty() ? "" : ", ") + std::to_string(b.batch);
    const auto first = std::find_if(rec.batch_rows.begin(), rec.batch_rows.end(), [](const AuditBatchRow& b) { return b.differ > 0; });
    rec.findings.push_back(first != rec.batch_rows.end()
                               ? fmt::format("BATCH-VARIANT though declared invariant ({}): at {} of {} batch sizes a row differs bit for bit "
                                             "from its M = 1 result (first: {})",
                                             rec.batch_note, rec.batch_sizes_differ(), rec.batch_rows.size(), first->first)
                               : fmt::format("batch invariance (declared: {}) holds: {} probe rows at the first, last and middle positions of "
                                             "batches of M = {} give their M = 1 results bit for bit",
                                             rec.batch_note, probes.size(), sizes));
  }

  // Power: every applicable GEMM fault of the catalogue, then zeros and constant.
  if (o.mutants) {
    // The power table's cases: every seed's whole case, or a sample of its rows (docs/audit.md, "Cost"), with the
    // kernel's own output on them (what "dormant" compares with).
    std::vector<SeedCase> sampled;
    std::vector<const SeedCase*> pcases;
    std::vector<std::vector<double>> base(cases.size());
    const std::int64_t random_rows = power_sample(o);
    for (std::size_t s = 0; s < cases.size(); ++s) {
      if (random_rows > 0) sampled.push_back(row_sample_case(cases[s], env, random_rows, seeds[s]));
    }
    for (std::size_t s = 0; s < cases.size(); ++s) {
      if (random_rows > 0 && sampled[s].q.m < o.m) {
        pcases.push_back(&sampled[s]);
        auto k = make();
        run_one(*k, sampled[s], seeds[s], base[s]);
        if (base[s].empty()) throw InputError("audit: kernel '" + rec.kernel + "' did not run on the row sample");
        rec.sample_rows = std::max(rec.sample_rows, sampled[s].q.m);
      } else {
        pcases.push_back(&cases[s]);
        base[s] = kernel_out[s];
      }
    }
    const std::vector<const RuleCase*> rule_cases(pcases.begin(), pcases.end());
    auto power_row = [&](const std::string& id, const std::string& what, const std::function<std::unique_ptr<GemmKernel>()>& mk) {
      rec.mutants.push_back(mutant_row(id, what, rule_cases, base, [&](std::size_t s, std::vector<double>& got) {
        auto k = mk();
        return run_one(*k, *pcases[s], seeds[s], got);
      }));
    };
    for (const FaultInfo& f : fault_catalogue()) {
      if (f.operation != Operation::Gemm || !fault_not_applicable(f.fault, t).empty()) continue;
      power_row(std::string(f.id), std::string(f.what), [&] { return make_fault_injector(make(), f.fault); });
    }
    power_row("zeros", "every output +0", [&] { return make_zeros_mutant(make()); });
    power_row("constant", "every output the mean of the kernel's outputs", [&] { return make_constant_mutant(make()); });
    if (*t.a_input == f32 && *t.b_input == f32 && *t.a_operand == f32 && *t.b_operand == f32 && t.operand_u == 0 && !tf32_allowed)
      power_row("inputs_tf32", "fp32 inputs read as tf32 (rna): TF32 passed off as fp32", [&] { return make_tf32_inputs_mutant(make()); });
    if (*t.a_input == *t.b_input && container_bytes(*t.a_input) == 2)
      power_row("inputs_narrowed", fmt::format("{} inputs rounded to {} significant bits: staged through a narrower format", t.a_input->tag,
                                               t.a_input->precision() - 3),
                [&] { return make_narrowed_inputs_mutant(make()); });
    power_row("epilogue_constant", "every output times (1 + 2^-7): a wrong epilogue constant or scale", [&] { return make_epilogue_constant_mutant(make()); });
    {
      auto last = std::make_shared<ReusedOutput>();
      power_row("reused_output", "the previous call's output (the first seed's run computes)", [&] { return make_reused_output_mutant(make(), last); });
    }
  }
  rec.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rec;
}

}  // namespace fpcert
