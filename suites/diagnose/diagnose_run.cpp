// suites/diagnose/diagnose_run.cpp — kernels run for a diagnosis, and the identification measure (diagnose_run.hpp).
#include "suites/diagnose/diagnose_run.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <optional>

#include "base/error.hpp"
#include "base/fpenv.hpp"
#include "generators/generate.hpp"
#include "kernels/tc/cards.hpp"
#include "oracle/gemm_ref.hpp"
#include "suites/diagnose/diagnose_conversion.hpp"
#include "suites/diagnose/diagnose_epilogue.hpp"
#include "suites/ops/gemm/batch.hpp"
#include "suites/ops/gemm/fault_injectors.hpp"
#include "suites/ops/gemm/runner.hpp"
#include "suites/run/device_apis.hpp"
#include "suites/run/suite.hpp"
#include "suites/verdict/emulate/emulate.hpp"
#include "suites/verdict/envelope.hpp"

namespace fpcert {
namespace {

/// Checks that name a fault which is not arithmetic (memory, determinism): the diagnosis reports them as they are.
bool non_arithmetic(CheckKind k) {
  return k == CheckKind::Unwritten || k == CheckKind::GuardOutput || k == CheckKind::GuardInputs || k == CheckKind::InputsModified ||
         k == CheckKind::Nondeterministic;
}

/// A kernel that runs another and declares a third kernel's traits (DiagnoseKernelOptions::declared_as).
class DeclaredAs final : public GemmKernel {
 public:
  DeclaredAs(std::unique_ptr<GemmKernel> k, KernelTraits t)
      : k_(std::move(k)), t_(std::move(t)), name_(k_->name()) {}
  const std::string& name() const override { return name_; }
  std::string description() const override { return k_->description(); }
  Backend backend() const override { return k_->backend(); }
  MemorySpace memory() const override { return k_->memory(); }
  const KernelTraits& traits() const override { return t_; }
  Support can_implement(std::int64_t m, std::int64_t n, std::int64_t k) const override { return k_->can_implement(m, n, k); }
  Support can_implement_operands(const GemmOperands& ops) const override { return k_->can_implement_operands(ops); }
  bool is_mutant() const override { return k_->is_mutant(); }
  void run(const GemmOperands& ops) override { k_->run(ops); }

 private:
  std::unique_ptr<GemmKernel> k_;
  KernelTraits t_;
  std::string name_;
};

/// The case `c` names: a case of the suite (made for this kernel, as certify makes it), or a generator spec (holds a ':').
CaseSpec case_spec(const GemmKernel& k, const std::string& suite_name, const std::string& c) {
  CaseSpec cs;
  if (c.find(':') != std::string::npos) {
    cs.id = c;
    cs.spec = c;
    return cs;
  }
  const SuiteInfo* suite = find_suite(suite_name);
  if (!suite || suite->operation != Operation::Gemm) throw InputError(fmt::format("unknown GEMM suite '{}' (valid: {})", suite_name, suite_names()));
  SuiteContext ctx;
  ctx.device = k.memory() == MemorySpace::Device;
  ctx.traits = &k.traits();
  ctx.all = {&k.traits()};
  std::string ids;
  for (const CaseSpec& x : suite->cases(ctx)) {
    if (case_matches(c, x.id)) return x;
    ids += (ids.empty() ? "" : ", ") + x.id;
  }
  throw InputError(fmt::format("suite '{}' has no case '{}' (cases: {}; or give a generator spec)", suite_name, c, ids));
}

}  // namespace

CaseResult run_spec_for_diagnosis(GemmKernel& k, const std::string& suite, const CaseSpec& cs, const Problem& p, const GemmRef& ref,
                                  std::vector<double>& got, const BatchProblems* batches, bool whole) {
  CaseSetup s;
  s.suite = suite;
  s.case_id = cs.id;
  s.problem = &p;
  s.ref = &ref;
  s.variant = cs.variant;
  s.misaligned = cs.misaligned;
  s.ld_pad = cs.ld_pad;
  if (whole) {
    s.layout = cs.layout;
    s.alpha_beta = cs.alpha_beta;
    s.batch = cs.batch;
    s.epilogue = cs.epilogue;
    if (batches) s.batch_problems = &batches->problems, s.batch_refs = &batches->refs;
  } else if (!k.can_implement_layout(GemmLayout{}).ok) {
    s.layout = cs.layout;  // a kernel that takes some layouts only (cuBLASLt's FP8: nt/c_row): the case's own
  }
  RunOptions ro;
  ro.output = &got;
  DeviceApis apis;
  std::string why;
  DeviceApi* api = apis.for_kernel(k, why);
  if (!api) throw InputError("diagnose: no device for " + k.name() + ": " + why);
  CaseResult r = run_case(k, s, *api, ro);
  if (got.empty()) throw InputError(fmt::format("diagnose: {} did not run on {} ({}: {})", k.name(), cs.id, to_string(r.status), r.reason));
  return r;
}

DiagnoseCase run_for_diagnosis(GemmKernel& k, const std::string& suite_name, const std::string& c, CaseResult* status) {
  const CaseSpec cs = case_spec(k, suite_name, c);
  pin_fp_env();
  const Problem problem = generate(cs.spec);
  const GemmRef ref = gemm_reference(problem.a.view(), problem.b.view());
  std::vector<double> got;
  CaseResult r = run_spec_for_diagnosis(k, suite_name, cs, problem, ref, got);
  const KernelTraits& t = k.traits();
  DiagnoseCase d;
  d.label = cs.id == cs.spec ? cs.spec : fmt::format("{} ({})", cs.id, cs.spec);
  d.m = problem.m, d.n = problem.n, d.k = problem.k;
  d.a = round_values(problem.a.data, *t.a_input, t.input_rounding);
  d.b = round_values(problem.b.data, *t.b_input, t.input_rounding);
  d.got.resize(got.size());
  const Rounder rn = Rounder::nearest(*t.out);
  for (std::size_t x = 0; x < got.size(); ++x) d.got[x] = round_double(*t.out, got[x], rn).code;  // exact: got holds values of out
  if (status) *status = std::move(r);
  return d;
}

namespace {

/// The GEMM hypotheses on the cases (diagnose.hpp), with the look-alike and separating cases added; `first` receives the
/// first case's result.
DiagnosisRecord diagnose_gemm_cases(GemmKernel& k, const DiagnoseKernelOptions& o, CaseResult& first) {
  if (k.traits().block.active())
    throw InputError("diagnose: " + k.name() + " is block-scaled: its hypotheses would need the operands quantized into blocks as the "
                     "grade does (suites/verdict/block_reference), which this diagnosis does not do yet");
  std::vector<DiagnoseCase> cases;
  for (std::size_t i = 0; i < o.cases.size(); ++i) cases.push_back(run_for_diagnosis(k, o.suite, o.cases[i], i == 0 ? &first : nullptr));
  // The declaration as certify grades it: a tensor-core order takes its installed behaviour card (kernels/tc/cards.hpp).
  const KernelTraits declared = tc::with_installed_cards(k.traits());
  DiagnosisRecord r = diagnose_gemm(k.name(), declared, cases, o.opt);
  if (o.auto_separate && !r.ranked.empty()) {
    std::vector<std::string> added;
    std::vector<std::string> before;
    // Look-alikes on the case: the suite's cases that tell formats, tiles and subnormals apart, where the suite has them.
    if (o.cases.size() == 1 && !r.ranked.front().same_as.empty()) {
      before = r.ranked.front().same_as;
      for (const std::string c : {"shape_primes", "tiny_*", "special_*"}) {
        try {
          cases.push_back(run_for_diagnosis(k, o.suite, c));
          added.push_back(c);
        } catch (const InputError&) {  // not in this suite, or the kernel declines it: no separation from it
        }
      }
    }
    // Ties: the cases derived from where the tied arithmetics' formats differ (docs/diagnose.md, "Separating cases").
    std::vector<DiagnosisSeparation> run, declined;
    for (DiagnosisSeparation s : r.separations) {
      try {
        cases.push_back(run_for_diagnosis(k, o.suite, s.spec));
        run.push_back(std::move(s));
      } catch (const InputError& e) {
        s.outcome = std::string("not run: ") + e.what();
        declined.push_back(std::move(s));
      }
    }
    if (!added.empty() || !run.empty()) {
      const double first_seconds = r.seconds;
      DiagnoseOptions opt = o.opt;
      opt.ask_separation = false;
      opt.separations = run;
      r = diagnose_gemm(k.name(), declared, cases, opt);
      r.seconds += first_seconds;
      if (!added.empty())
        r.notes.push_back(fmt::format("look-alikes on the first case ({}), separated on {}", fmt::join(before, ", "), fmt::join(added, ", ")));
      r.separations.insert(r.separations.end(), declined.begin(), declined.end());
    } else {
      r.separations = declined;
    }
  }
  return r;
}

}  // namespace

DiagnosisRecord diagnose_kernel(GemmKernel& k, const DiagnoseKernelOptions& o) {
  if (o.cases.empty()) throw InputError("diagnose: give a case (--case ID or a generator spec)");
  CaseResult first;
  DiagnosisRecord r;
  // A fused-epilogue case, or one with alpha, beta and C (an fp32 epilogue of its own): the epilogue's hypotheses with the
  // alpha/beta ones (suites/diagnose/diagnose_epilogue.hpp), on that case alone. An alpha/beta case of a kernel whose
  // epilogue is not fp32 (an fp64 GEMM) is diagnosed as a plain GEMM, as before, and the record says so.
  const CaseSpec cs = case_spec(k, o.suite, o.cases.front());
  const bool ab_epilogue = cs.alpha_beta.active && *k.traits().acc == f32;
  if (cs.epilogue.active || ab_epilogue) {
    if (o.cases.size() > 1)
      throw InputError(fmt::format("diagnose: {} is an {} case, diagnosed on its own: give it as the only --case", cs.id,
                                   cs.epilogue.active ? "epilogue" : "alpha/beta"));
    r = diagnose_epilogue_kernel(k, o.suite, cs, o.opt, &first);
  } else {
    r = diagnose_gemm_cases(k, o, first);
    if (cs.alpha_beta.active)
      r.notes.push_back(fmt::format("{}: alpha, beta and C set aside (the case run as a plain GEMM): the alpha/beta hypotheses emulate an "
                                    "fp32 epilogue, and {} accumulates in {}", cs.id, k.name(), k.traits().acc->tag));
  }
  for (const CheckResult& c : first.checks)
    if (!c.passed && is_decisive(c.kind)) {
      if (std::find(r.failed_checks.begin(), r.failed_checks.end(), to_string(c.kind)) == r.failed_checks.end())
        r.failed_checks.push_back(std::string(to_string(c.kind)));
      if (!non_arithmetic(c.kind)) continue;
      for (const FaultInfo& f : fault_catalogue())
        if (f.operation == Operation::Gemm && std::find(f.expected.begin(), f.expected.end(), c.kind) != f.expected.end() &&
            std::find(r.named_by_checks.begin(), r.named_by_checks.end(), f.id) == r.named_by_checks.end())
          r.named_by_checks.push_back(std::string(f.id));
    }
  if (!r.named_by_checks.empty()) {
    r.kind = "not_arithmetic";
    r.verdict = fmt::format("the runner's checks ({}) name a fault that is not arithmetic: {}; as arithmetic: {}", fmt::join(r.failed_checks, ", "),
                            fmt::join(r.named_by_checks, ", "), r.verdict);
  }
  return r;
}

DiagnosisRecord diagnose_kernel(const DiagnoseKernelOptions& o) {
  auto k = make_gemm_kernel(o.kernel);
  // "<kernel>~<fault id>": the kernel with a fault of the catalogue injected (as fpcert mutate names its mutants).
  if (const auto tilde = o.kernel.find('~'); !k && tilde != std::string::npos)
    if (const FaultInfo* f = find_fault(o.kernel.substr(tilde + 1)); f && f->operation == Operation::Gemm)
      k = make_fault_injector(make_gemm_kernel(o.kernel.substr(0, tilde)), f->fault);
  if (!k) throw InputError("unknown GEMM kernel '" + o.kernel + "' (fpcert kernels lists them)");
  if (!o.declared_as.empty()) {
    auto as = make_gemm_kernel(o.declared_as);
    if (!as) throw InputError("--declared-as: unknown GEMM kernel '" + o.declared_as + "' (fpcert kernels lists them)");
    const KernelTraits& t = k->traits();
    const KernelTraits& d = as->traits();
    if (!(*t.a_input == *d.a_input) || !(*t.b_input == *d.b_input) || !(*t.out == *d.out))
      throw InputError(fmt::format("--declared-as {}: its inputs and output ({}/{} -> {}) are not the kernel's ({}/{} -> {})", o.declared_as,
                                   d.a_input->tag, d.b_input->tag, d.out->tag, t.a_input->tag, t.b_input->tag, t.out->tag));
    k = std::make_unique<DeclaredAs>(std::move(k), d);
  }
  return diagnose_kernel(*k, o);
}

std::vector<std::string> identification_cases(const KernelTraits& t) {
  const Format& st = *t.a_input;
  std::vector<std::string> r = {"uniform:m=19,n=23,k=300,seed=11"};
  if (st.subnormals) r.push_back(fmt::format("outlier:m=16,n=16,k=64,seed=12,base=uniform,p=1,e={},operands=a", st.emin()));
  if (!t.domain.finite_only) r.push_back(fmt::format("specials:m=16,n=16,k=64,seed=13,target={},acc={}", st.tag, overflow_limit(t) <= f16.max_finite() ? "f16" : "f32"));
  return r;
}

std::vector<IdentificationRow> measure_identification(const std::vector<std::string>& models, const std::vector<Fault>& faults,
                                                      const DiagnoseOptions& opt) {
  std::vector<IdentificationRow> rows;
  for (const std::string& model : models) {
    auto probe = make_gemm_kernel(model);
    if (!probe) throw InputError("unknown GEMM kernel '" + model + "'");
    if (probe->traits().block.active()) {  // not diagnosed yet (diagnose_kernel says why): one row says so
      rows.push_back({model, "*", false, "-", "block-scaled: not diagnosed yet", 0, true});
      continue;
    }
    DiagnoseKernelOptions o;
    // The cases the model runs on (a case it declines, e.g. special values outside its domain, is left out).
    for (const std::string& c : identification_cases(probe->traits())) {
      try {
        (void)run_for_diagnosis(*probe, "certify", c);
        o.cases.push_back(c);
      } catch (const InputError&) {
      }
    }
    o.auto_separate = false;
    o.opt = opt;
    for (const FaultInfo& f : fault_catalogue()) {
      if (f.operation != Operation::Gemm || !fault_not_applicable(f.fault, probe->traits()).empty()) continue;
      if (!faults.empty() && std::find(faults.begin(), faults.end(), f.fault) == faults.end()) continue;
      const auto t0 = std::chrono::steady_clock::now();
      IdentificationRow row;
      row.model = model;
      row.fault = std::string(f.id);
      auto mutant = make_fault_injector(make_gemm_kernel(model), f.fault);
      const DiagnosisRecord r = diagnose_kernel(*mutant, o);
      const bool by_checks = std::find(r.named_by_checks.begin(), r.named_by_checks.end(), row.fault) != r.named_by_checks.end();
      // "declared" by the envelope (an order-free declaration, not bit for bit) names no fault, even when the fault's
      // hypothesis is a look-alike of the declared one on these cases
      const bool declared_by_envelope = r.kind == "declared" && !r.ranked.empty() && r.ranked.front().matched < r.ranked.front().elements;
      row.identified = by_checks || (r.kind != "logic_error" && !declared_by_envelope && top_is(r, fault_hypothesis_id(f.fault)));
      // Dormant: the mutant wrote the declared arithmetic's bits on every case and no check failed (one_run_in_n on
      // sums that are exact in every order): the fault changed nothing there, so there is nothing to identify.
      row.dormant = !row.identified && r.failed_checks.empty() && !r.ranked.empty() && r.ranked.front().id == "declared" &&
                    r.ranked.front().matched == r.ranked.front().elements;
      row.top = by_checks ? "checks: " + fmt::format("{}", fmt::join(r.failed_checks, ", ")) : r.ranked.empty() ? "-" : r.ranked.front().id;
      if (!row.identified) row.reason = r.verdict;
      row.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

std::vector<DiagnosisRecord> diagnose_run_cases(RunResult& r, std::vector<std::string>& unavailable) {
  std::vector<DiagnosisRecord> all;
  const auto diagnose = [&](const CaseResult& c) -> std::optional<DiagnosisRecord> {
    DiagnoseKernelOptions o;
    o.kernel = c.kernel;
    o.suite = c.suite;
    o.cases = {c.case_id};
    try {
      return diagnose_kernel(o);
    } catch (const std::exception& e) {
      unavailable.push_back(fmt::format("diagnosis of {} on {}: not available ({})\n", c.kernel, c.case_id, e.what()));
    }
    return std::nullopt;
  };
  std::vector<std::string> kernels;
  for (const CaseResult& c : r.cases) {
    if (const std::unique_ptr<ConversionKernel> ck = c.status == CaseStatus::Fail ? make_conversion_kernel(c.kernel) : nullptr) {
      // A failed conversion case: the kernel rerun on the suite's codes (every code; a 32-bit source's strided sample).
      try {
        all.push_back(diagnose_conversion_kernel(*ck, "all"));  // a 32-bit source: its strided sample
      } catch (const std::exception& e) {
        unavailable.push_back(fmt::format("diagnosis of {} on {}: not available ({})\n", c.kernel, c.case_id, e.what()));
      }
      continue;
    }
    if (!make_gemm_kernel(c.kernel)) continue;
    if (std::find(kernels.begin(), kernels.end(), c.kernel) == kernels.end()) kernels.push_back(c.kernel);
    if (c.status != CaseStatus::Fail) continue;
    if (auto d = diagnose(c)) all.push_back(std::move(*d));
  }
  for (const std::string& k : kernels) {  // the passing kernels' hint
    const CaseResult* pick = nullptr;
    bool failed = false;
    for (const CaseResult& c : r.cases) {
      if (c.kernel != k) continue;
      failed = failed || c.status == CaseStatus::Fail;
      if (c.status == CaseStatus::Pass && (!pick || (pick->case_id.rfind("uniform", 0) != 0 && c.case_id.rfind("uniform", 0) == 0))) pick = &c;
    }
    if (failed || !pick) continue;
    auto d = diagnose(*pick);
    if (!d || d->hint.empty()) continue;
    r.notes["diagnosis hint: " + k] = d->hint;
    all.push_back(std::move(*d));
  }
  return all;
}

}  // namespace fpcert
