// suites/run/row_operation.hpp — the runner's driver for an operation whose kernels are one class with one traits
// struct and one case runner (reduction, softmax, normalisation, and those that follow them): the kernels on the cases
// their suite fits to each, problems generated once per spec, isolation, results case by case, and the evidence rule.
// Each operation gives a hooks struct (suites/ops/<op>/<op>_operation.cpp) and its OperationRunner's methods call
// RowOperation<Hooks>; the mutation campaign over the same hooks is suites/mutation/row_mutation.hpp.
//
// A hooks struct H provides:
//   using Kernel; using Setup;                        the kernel class and the case runner's setup struct
//   static constexpr std::string_view noun;           "softmax", "norm", "reduction": in messages ("... kernels")
//   static constexpr std::string_view evidence;       the evidence case's reason when no case held evidence
//   static std::unique_ptr<Kernel> make(name);        nullptr for a name that is not such a kernel
//   static std::string suite_name(const SuiteInfo&);  the operation's suite a suite name stands for
//   static std::vector<CaseSpec> cases(suite, const Kernel&);
//   static std::string describe(const Kernel&);       the traits as the results record them
//   static Setup setup(suite, const CaseSpec&, const Problem*, repro);
//   static CaseResult skeleton(const Kernel&, const Setup&);
//   static CaseResult run_case(Kernel&, const Setup&, DeviceApi&, const RunOptions&);
#pragma once

#include <fmt/format.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/atomic_file.hpp"
#include "base/error.hpp"
#include "base/fpenv.hpp"
#include "generators/generate.hpp"
#include "results/results_json.hpp"
#include "suites/run/device_apis.hpp"
#include "suites/run/isolate.hpp"
#include "suites/run/suite.hpp"

namespace fpcert {

/// certify's evidence rule: a kernel about whose arithmetic no case held evidence gets a failed "evidence" case. Reads
/// only H::Kernel, H::make, H::describe and H::evidence (elementwise, which runs its own cases, uses it too).
template <class H>
void require_row_evidence(RunResult& r) {
  for (const std::string& name : r.kernels) {
    const auto k = H::make(name);
    if (!k) continue;
    bool evidence = false;
    for (const CaseResult& c : r.cases)
      evidence = evidence || (c.kernel == name && !c.evidence.empty() && c.status != CaseStatus::NotSupported);
    if (evidence) continue;
    CaseResult e;
    e.suite = r.suite;
    e.case_id = "evidence";
    e.kernel = name;
    e.kernel_traits = H::describe(*k);
    e.backend = std::string(to_string(k->backend()));
    e.checks.push_back({CheckKind::Envelope, false, std::string(H::evidence)});
    decide(e);
    r.cases.push_back(std::move(e));
  }
}

template <class H>
struct RowOperation {
  using Kernel = typename H::Kernel;

  struct Prepared {
    std::vector<std::unique_ptr<Kernel>> ks;
    std::vector<std::vector<CaseSpec>> cases;  ///< per kernel
  };

  /// The kernels and each one's cases (--case applied); bad input throws InputError before anything runs.
  static Prepared prepare(const SuiteInfo& suite, const std::vector<std::string>& kernels, const SuiteRunOptions& opt) {
    if (kernels.empty()) throw InputError("no kernel given");
    if (!opt.baseline.empty()) throw InputError(fmt::format("--baseline is not available for {} kernels", H::noun));
    Prepared pr;
    for (const auto& name : kernels) {
      auto k = H::make(name);
      if (!k) {
        if (const KernelInfo* info = find_kernel_info(name))
          throw InputError(fmt::format("'{}' is a {} kernel; suite '{}' grades {} kernels", name, to_string(info->operation),
                                       suite.name, H::noun));
        throw InputError("unknown kernel '" + name + "' (fpcert kernels lists them)");
      }
      std::vector<CaseSpec> cases = H::cases(H::suite_name(suite), *k);
      if (!opt.only_case.empty()) {
        std::vector<CaseSpec> one;
        std::string ids;
        for (const auto& c : cases) {
          ids += (ids.empty() ? "" : ", ") + c.id;
          if (case_matches(opt.only_case, c.id)) one.push_back(c);
        }
        if (one.empty())
          throw InputError("suite '" + suite.name + "' has no case '" + opt.only_case + "' for " + name + " (cases: " + ids + ")");
        cases = std::move(one);
      }
      for (const auto& c : cases) (void)canonical_spec(c.spec);
      pr.ks.push_back(std::move(k));
      pr.cases.push_back(std::move(cases));
    }
    return pr;
  }

  static std::vector<PlanItem> plan(const SuiteInfo& suite, const std::vector<std::string>& kernels, const SuiteRunOptions& opt) {
    const Prepared pr = prepare(suite, kernels, opt);
    std::vector<PlanItem> plan;
    for (std::size_t i = 0; i < pr.ks.size(); ++i)
      for (const auto& c : pr.cases[i]) plan.push_back({H::suite_name(suite), c.id, pr.ks[i]->name(), c.spec, estimated_case_cost(c.spec)});
    return plan;
  }

  static RunResult run(const SuiteInfo& suite, const std::vector<std::string>& kernels, const SuiteRunOptions& opt) {
    Prepared pr = prepare(suite, kernels, opt);
    DeviceApis apis;
    RunResult result;
    const std::string suite_name = H::suite_name(suite);
    result.suite = suite_name;
    result.kernels = kernels;
    if (!opt.jsonl_path.empty() && !opt.jsonl_append) write_file_atomic(opt.jsonl_path, "");
    std::size_t total = 0, done = 0;
    for (std::size_t i = 0; i < pr.ks.size(); ++i)
      for (const auto& c : pr.cases[i]) total += !opt.select || opt.select(c.id, pr.ks[i]->name());
    std::map<std::string, std::shared_ptr<const Problem>> problems;  // one generation per spec for the run
    for (std::size_t i = 0; i < pr.ks.size(); ++i) {
      Kernel& k = *pr.ks[i];
      for (const CaseSpec& c : pr.cases[i]) {
        if (opt.select && !opt.select(c.id, k.name())) continue;
        if (opt.on_progress) opt.on_progress(fmt::format("[{}/{}] {}: {}", done + 1, total, c.id, k.name()));
        pin_fp_env();
        const std::string repro =
            opt.repro_prefix.empty() ? "" : fmt::format("{} --kernel {} --case {}", opt.repro_prefix, k.name(), c.id);
        CaseResult r = run_one(k, c, suite_name, repro, problems[c.spec], apis, opt);
        if (!c.note.empty()) r.flags.insert(r.flags.begin(), "case: " + c.note);
        if (!opt.jsonl_path.empty()) append_line(opt.jsonl_path, to_json(r).dump());
        if (opt.on_case) opt.on_case(r);
        result.cases.push_back(std::move(r));
        ++done;
      }
    }
    bool any_device = false;
    for (const auto& k : pr.ks) any_device = any_device || k->memory() == MemorySpace::Device;
    result.env = run_environment(opt.command, apis.device(), any_device, !opt.isolate);
    return result;
  }

  /// certify's evidence rule (require_row_evidence above).
  static void require_evidence(RunResult& r);

 private:
  static CaseResult not_supported(const Kernel& k, const typename H::Setup& s, const std::string& why) {
    CaseResult x = H::skeleton(k, s);
    x.status = CaseStatus::NotSupported;
    x.reason = "no CUDA device: " + why;
    return x;
  }

  /// One case on one kernel: the problem generated on first use (a refusal makes the case NotSupported), then the case
  /// runner, in a child process under --isolate.
  static CaseResult run_one(Kernel& k, const CaseSpec& c, const std::string& suite_name, const std::string& repro,
                            std::shared_ptr<const Problem>& problem, DeviceApis& apis, const SuiteRunOptions& opt) {
    std::string refused;
    if (!problem) {
      try {
        problem = std::make_shared<const Problem>(generate(c.spec));
      } catch (const std::exception& e) {
        refused = e.what();
      }
    }
    if (!problem) {
      CaseResult r;
      r.suite = suite_name;
      r.case_id = c.id;
      r.family = c.family;
      r.kernel = k.name();
      r.kernel_traits = H::describe(k);
      r.backend = std::string(to_string(k.backend()));
      r.spec = c.spec;
      r.status = CaseStatus::NotSupported;
      r.reason = "the generator refuses this case for the kernel's formats: " + refused;
      return r;
    }
    const typename H::Setup s = H::setup(suite_name, c, problem.get(), repro);
    if (opt.isolate) {
      return run_case_isolated(
          [&] {
            auto fresh = H::make(k.name());
            DeviceApis child;
            std::string why;
            DeviceApi* api = child.for_kernel(*fresh, why);
            if (!api) return not_supported(k, s, why);
            return H::run_case(*fresh, s, *api, opt.run);
          },
          opt.isolate_timeout_s, H::skeleton(k, s));
    }
    std::string why;
    DeviceApi* api = apis.for_kernel(k, why);
    if (!api) return not_supported(k, s, why);
    return H::run_case(k, s, *api, opt.run);
  }
};

template <class H>
void RowOperation<H>::require_evidence(RunResult& r) {
  require_row_evidence<H>(r);
}

}  // namespace fpcert
