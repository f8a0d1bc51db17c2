// suites/ops/gemm/gemm_mutation.cpp — the mutation score of a suite on a GEMM kernel (suites/mutation/mutation.hpp
// for the method; the GEMM fault injectors: suites/ops/gemm/fault_injectors.hpp).
#include "suites/ops/gemm/gemm_operation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <sstream>

#include "base/error.hpp"
#include "generators/generate.hpp"
#include "suites/mutation/mutation.hpp"
#include "suites/ops/gemm/fault_injectors.hpp"
#include "suites/verdict/scheme_bound.hpp"

namespace fpcert {

namespace {

/// What a case costs a mutant: M N K products, plus K calls of the kernel for the faults injected on K-chunks (acc_*,
/// out_rz: one call per chunk of the kernel's shortest K, suites/ops/gemm/fault_injectors.hpp), each counted as 2^16
/// products (a launch, its copies and its synchronisation). A case with K = 2^17 + 1 and M = N = 4 is then among the
/// last, not among the first: a mutant killed elsewhere never makes its 2^17 calls.
double case_cost(const CaseSpec& c) {
  const ParsedSpec p = parse_generator_spec(c.spec);
  double cost = 1;
  for (const char* key : {"m", "n", "k"})
    if (p.has(key)) cost *= static_cast<double>(p.integer(key));
  if (p.has("k")) cost += 0x1p16 * static_cast<double>(p.integer("k"));
  return cost;
}

bool expected_kind(const MutantResult& m, const std::vector<CheckKind>& fired) {
  for (CheckKind k : fired)
    if (std::find(m.expected.begin(), m.expected.end(), k) != m.expected.end()) return true;
  return false;
}

std::string kinds_text(const std::vector<CheckKind>& ks) {
  std::string s;
  for (CheckKind k : ks) s += (s.empty() ? "" : ", ") + std::string(to_string(k));
  return s;
}

}  // namespace

MutationScore run_gemm_mutation(const SuiteInfo& suite, const std::string& kernel, const MutationOptions& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  const ScopedDormantVerdicts dormant;  // a mutant whose fault changed nothing on a case: the unmutated kernel's pass
  const KernelInfo* info = find_kernel_info(kernel);
  if (info && info->operation != Operation::Gemm)
    throw InputError("'" + kernel + "' is a conversion kernel: fault injectors wrap GEMM kernels (docs/mutation.md)");
  auto k = info ? make_gemm_kernel(kernel) : nullptr;
  if (!k) throw InputError("unknown kernel '" + kernel + "' (fpcert kernels lists them)");
  if (k->is_mutant()) throw InputError("'" + kernel + "' is itself a mutant: give the kernel it was made from");
  const KernelTraits traits = k->traits();

  // The suite's cases as run_suite tailors them to this kernel (every mutant claims its traits), cheapest first.
  SuiteContext ctx;
  ctx.device = k->memory() == MemorySpace::Device;
  ctx.mn = opt.run.mn;
  ctx.traits = &traits;
  ctx.all = {&traits};
  std::vector<CaseSpec> cases = suite.cases(ctx);
  if (!opt.run.only_case.empty()) {  // certify --case ID: the kernel was judged on that case only
    std::erase_if(cases, [&](const CaseSpec& c) { return !case_matches(opt.run.only_case, c.id); });
    if (cases.empty()) throw InputError("suite '" + suite.name + "' has no case '" + opt.run.only_case + "'");
  }
  std::vector<std::pair<double, std::size_t>> order;
  for (std::size_t i = 0; i < cases.size(); ++i) order.push_back({case_cost(cases[i]), i});
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first < b.first; });

  MutationScore s;
  s.kernel = kernel;
  s.suite = suite.name;
  s.cases = static_cast<int>(cases.size());
  struct Live {
    std::size_t result;  // index into s.mutants
    bool done = false;
  };
  std::vector<Live> live;
  std::vector<Fault> faults = opt.faults;
  if (faults.empty())
    for (const FaultInfo& f : fault_catalogue())
      if (f.operation == Operation::Gemm) faults.push_back(f.fault);
  for (Fault f : faults) {
    // acc_f32 is listed only where it can apply (an accumulator wider than fp32: fp64), so that the catalogue every
    // narrower kernel reports stays what it was before fp64 arrived (docs/fp64.md, "Faults").
    if (f == Fault::AccF32 && traits.acc->precision() <= f32.precision()) continue;
    const FaultInfo& fi = fault_info(f);
    MutantResult r;
    r.mutant = mutant_name(kernel, f);
    r.fault = std::string(fi.id);
    r.fault_class = std::string(to_string(fi.cls));
    r.what = std::string(fi.what);
    r.expected = fi.expected;
    // A scheme with a bound of its own (Ozaki-II) is held to it where fp64's envelope judges, and instead of it beyond
    // its span domain: what the envelope would catch, that bound catches too.
    if (claims_scheme_bound(traits) && std::find(r.expected.begin(), r.expected.end(), CheckKind::Envelope) != r.expected.end())
      r.expected.push_back(CheckKind::SchemeBound);
    if (const std::string why = fault_not_applicable(f, traits); !why.empty()) {
      r.outcome = MutantOutcome::NotApplicable;
      r.detail = why;
      s.mutants.push_back(std::move(r));
      continue;
    }
    register_mutant(kernel, f, opt.inject);
    reset_fault_activity(r.mutant);
    live.push_back({s.mutants.size()});
    s.mutants.push_back(std::move(r));
  }

  std::size_t step = 0;
  for (const auto& [cost, ci] : order) {
    ++step;
    const CaseSpec& c = cases[ci];
    const CaseResult* known = opt.honest_result ? opt.honest_result(c.id) : nullptr;
    if (known && known->status != CaseStatus::Pass) {  // a case the kernel did not pass judges no mutant: none runs it
      if (known->status != CaseStatus::NotSupported)
        s.invalid_cases.push_back(fmt::format("{}: {}: {}", c.id, to_string(known->status), known->reason));
      continue;
    }
    std::vector<std::string> names;
    if (!known) names.push_back(kernel);
    std::vector<Live*> running;
    for (Live& l : live)
      if (!l.done) {
        names.push_back(s.mutants[l.result].mutant);
        running.push_back(&l);
      }
    if (running.empty()) break;
    if (opt.on_progress) opt.on_progress(fmt::format("[{}/{}] {}: {} mutant(s) of {}", step, order.size(), c.id, running.size(), kernel));
    SuiteRunOptions o = opt.run;
    o.only_case = c.id;
    o.baseline.clear();
    o.jsonl_path.clear();
    o.on_case = nullptr;
    o.on_progress = nullptr;
    if (o.repro_prefix.empty())
      o.repro_prefix = fmt::format("fpcert certify --suite {}{}", suite.name, o.mn ? fmt::format(" --mn {}", *o.mn) : "");
    o.run.warmups = 0;  // two runs per case (the checked one and one more) are enough to compare bit for bit
    o.run.timed = 1;
    const RunResult rr = run_suite(suite, names, o);
    if (opt.env) *opt.env = rr.env;
    const auto ran = std::find_if(rr.cases.begin(), rr.cases.end(), [&](const CaseResult& x) { return x.kernel == kernel; });
    const CaseResult* honest = known ? known : ran != rr.cases.end() ? &*ran : nullptr;
    if (!honest) continue;
    if (opt.on_honest_case && !known) opt.on_honest_case(*honest);
    if (honest->status != CaseStatus::Pass) {
      if (honest->status != CaseStatus::NotSupported)
        s.invalid_cases.push_back(fmt::format("{}: {}: {}", c.id, to_string(honest->status), honest->reason));
      continue;
    }
    for (Live* l : running) {
      MutantResult& m = s.mutants[l->result];
      const auto it = std::find_if(rr.cases.begin(), rr.cases.end(), [&](const CaseResult& x) { return x.kernel == m.mutant; });
      if (it == rr.cases.end() || it->status == CaseStatus::NotSupported) continue;  // the injector could not run here
      ++m.cases_run;
      m.seconds += it->wall_seconds;
      const std::vector<CheckKind> fired = failed_checks(*it);
      if (fired.empty()) continue;
      const bool own = expected_kind(m, fired);
      if (own && m.outcome != MutantOutcome::Killed) {
        m.outcome = MutantOutcome::Killed;
        m.case_id = c.id;
        m.fired = fired;
        m.detail = it->reason;
        m.repro = it->repro;
      } else if (!own && m.outcome == MutantOutcome::Survived) {
        m.outcome = MutantOutcome::KilledOther;
        m.case_id = c.id;
        m.fired = fired;
        m.detail = fmt::format("refused by {} only: {}", kinds_text(fired), it->reason);
        m.repro = it->repro;
      }
      if (own && !opt.all_cases) l->done = true;
    }
  }

  for (const Live& l : live) {
    MutantResult& m = s.mutants[l.result];
    const FaultActivity a = fault_activity(m.mutant);
    if (a.runs > 0) {
      m.runs = a.runs;
      m.active_runs = a.active;
    }
    if (m.outcome != MutantOutcome::Survived) continue;
    const std::string needs(find_fault(m.fault)->needs);
    if (m.cases_run == 0)
      m.detail = "ran on no case the unmutated kernel passes";
    else if (a.runs > 0 && a.active == 0)
      m.detail = fmt::format("dormant: the fault changed nothing in any of {} run(s); a suite needs {}", a.runs, needs);
    else
      m.detail = fmt::format("passed {} case(s){}; a suite needs {}", m.cases_run,
                             a.runs > 0 ? fmt::format(", the fault active in {} of {} run(s)", a.active, a.runs) : "", needs);
  }
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return s;
}

}  // namespace fpcert
