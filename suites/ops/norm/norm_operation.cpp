// suites/ops/norm/norm_operation.cpp — LayerNorm / RMSNorm as the runner runs it (suites/ops/norm/norm_operation.hpp): each
// kernel on the cases its suite fits to it, problems generated once per spec, isolation, results case by case.
#include "suites/ops/norm/norm_operation.hpp"

#include <fmt/format.h>

#include <map>

#include "base/atomic_file.hpp"
#include "base/error.hpp"
#include "base/fpenv.hpp"
#include "generators/generate.hpp"
#include "results/results_json.hpp"
#include "suites/ops/norm/norm_runner.hpp"
#include "suites/run/device_apis.hpp"
#include "suites/run/isolate.hpp"

namespace fpcert {

namespace {

struct Prepared {
  std::vector<std::unique_ptr<NormKernel>> ks;
  std::vector<std::vector<CaseSpec>> cases;  ///< per kernel
};

Prepared prepare(const SuiteInfo& suite, const std::vector<std::string>& kernels, const SuiteRunOptions& opt) {
  if (kernels.empty()) throw InputError("no kernel given");
  if (!opt.baseline.empty()) throw InputError("--baseline is not available for norm kernels");
  Prepared pr;
  for (const auto& name : kernels) {
    auto k = make_norm_kernel(name);
    if (!k) {
      if (const KernelInfo* info = find_kernel_info(name))
        throw InputError(fmt::format("'{}' is a {} kernel; suite '{}' grades norm kernels", name, to_string(info->operation),
                                     suite.name));
      throw InputError("unknown kernel '" + name + "' (fpcert kernels lists them)");
    }
    std::vector<CaseSpec> cases = norm_cases(norm_suite_name(suite), k->norm_traits());
    if (!opt.only_case.empty()) {
      std::vector<CaseSpec> one;
      std::string ids;
      for (const auto& c : cases) {
        ids += (ids.empty() ? "" : ", ") + c.id;
        if (case_matches(opt.only_case, c.id)) one.push_back(c);
      }
      if (one.empty()) throw InputError("suite '" + suite.name + "' has no case '" + opt.only_case + "' for " + name + " (cases: " + ids + ")");
      cases = std::move(one);
    }
    for (const auto& c : cases) (void)canonical_spec(c.spec);
    pr.ks.push_back(std::move(k));
    pr.cases.push_back(std::move(cases));
  }
  return pr;
}

}  // namespace

std::vector<PlanItem> NormOperation::plan(const SuiteInfo& suite, const std::vector<std::string>& kernels,
                                            const SuiteRunOptions& opt) const {
  const Prepared pr = prepare(suite, kernels, opt);
  std::vector<PlanItem> plan;
  for (std::size_t i = 0; i < pr.ks.size(); ++i)
    for (const auto& c : pr.cases[i]) plan.push_back({norm_suite_name(suite), c.id, pr.ks[i]->name(), c.spec, estimated_case_cost(c.spec)});
  return plan;
}

RunResult NormOperation::run(const SuiteInfo& suite, const std::vector<std::string>& kernels, const SuiteRunOptions& opt) const {
  Prepared pr = prepare(suite, kernels, opt);
  DeviceApis apis;
  RunResult result;
  result.suite = norm_suite_name(suite);
  result.kernels = kernels;
  if (!opt.jsonl_path.empty() && !opt.jsonl_append) write_file_atomic(opt.jsonl_path, "");
  std::size_t total = 0, done = 0;
  for (std::size_t i = 0; i < pr.ks.size(); ++i)
    for (const auto& c : pr.cases[i]) total += !opt.select || opt.select(c.id, pr.ks[i]->name());
  std::map<std::string, std::shared_ptr<const Problem>> problems;  // one generation per spec for the run
  for (std::size_t i = 0; i < pr.ks.size(); ++i) {
    NormKernel& k = *pr.ks[i];
    for (const CaseSpec& c : pr.cases[i]) {
      if (opt.select && !opt.select(c.id, k.name())) continue;
      if (opt.on_progress) opt.on_progress(fmt::format("[{}/{}] {}: {}", done + 1, total, c.id, k.name()));
      pin_fp_env();
      std::string repro = opt.repro_prefix.empty() ? "" : fmt::format("{} --kernel {} --case {}", opt.repro_prefix, k.name(), c.id);
      CaseResult r;
      const std::string suite_name = norm_suite_name(suite);
      std::shared_ptr<const Problem>& problem = problems[c.spec];
      std::string refused;
      if (!problem) {
        try {
          problem = std::make_shared<const Problem>(generate(c.spec));
        } catch (const std::exception& e) {
          refused = e.what();
        }
      }
      if (!problem) {
        r.suite = suite_name;
        r.case_id = c.id;
        r.family = c.family;
        r.kernel = k.name();
        r.kernel_traits = describe_norm_traits(k.norm_traits());
        r.backend = std::string(to_string(k.backend()));
        r.spec = c.spec;
        r.status = CaseStatus::NotSupported;
        r.reason = "the generator refuses this case for the kernel's formats: " + refused;
      } else {
        NormCaseSetup s{suite_name, c.id, problem.get(), repro, c.family, c.id == "specials"};
        if (opt.isolate) {
          r = run_case_isolated(
              [&] {
                auto fresh = make_norm_kernel(k.name());
                DeviceApis child;
                std::string why;
                DeviceApi* api = child.for_kernel(*fresh, why);
                if (!api) {
                  CaseResult x = norm_skeleton(k, s);
                  x.status = CaseStatus::NotSupported;
                  x.reason = "no CUDA device: " + why;
                  return x;
                }
                return run_norm_case(*fresh, s, *api, opt.run);
              },
              opt.isolate_timeout_s, norm_skeleton(k, s));
        } else {
          std::string why;
          DeviceApi* api = apis.for_kernel(k, why);
          if (!api) {
            r = norm_skeleton(k, s);
            r.status = CaseStatus::NotSupported;
            r.reason = "no CUDA device: " + why;
          } else {
            r = run_norm_case(k, s, *api, opt.run);
          }
        }
      }
      if (!c.note.empty()) r.flags.insert(r.flags.begin(), "case: " + c.note);
      if (!opt.jsonl_path.empty()) append_line(opt.jsonl_path, to_json(r).dump());
      if (opt.on_case) opt.on_case(r);
      result.cases.push_back(std::move(r));
      ++done;
    }
  }
  bool any_device = false;
  for (const auto& k : pr.ks) any_device = any_device || k->memory() == MemorySpace::Device;
  result.env = run_environment(opt.command, apis.device(), any_device);
  return result;
}

void NormOperation::require_evidence(RunResult& r) const {
  for (const std::string& name : r.kernels) {
    const auto k = make_norm_kernel(name);
    if (!k) continue;
    bool evidence = false;
    for (const CaseResult& c : r.cases)
      evidence = evidence || (c.kernel == name && !c.evidence.empty() && c.status != CaseStatus::NotSupported);
    if (evidence) continue;
    CaseResult e;
    e.suite = r.suite;
    e.case_id = "evidence";
    e.kernel = name;
    e.kernel_traits = describe_norm_traits(k->norm_traits());
    e.backend = std::string(to_string(k->backend()));
    e.checks.push_back({CheckKind::Envelope, false,
                        "no case graded an element with a non-vacuous bound (the suite certifies nothing about the arithmetic)"});
    decide(e);
    r.cases.push_back(std::move(e));
  }
}

}  // namespace fpcert
