// suites/ops/elementwise/eltwise_operation.cpp — the elementwise suites and their runs (eltwise_operation.hpp).
#include "suites/ops/elementwise/eltwise_operation.hpp"

#include <fmt/format.h>

#include "base/atomic_file.hpp"
#include "base/error.hpp"
#include "base/fpenv.hpp"
#include "results/results_json.hpp"
#include "suites/run/device_apis.hpp"
#include "suites/mutation/row_mutation.hpp"
#include "suites/ops/elementwise/eltwise_faults.hpp"
#include "suites/run/isolate.hpp"
#include "suites/run/row_operation.hpp"

namespace fpcert {

std::vector<CaseSpec> eltwise_cases(const std::string& suite, const EltwiseTraits& t) {
  const bool wide = t.in->container_bits == 32;
  std::vector<CaseSpec> c;
  auto add = [&](std::string id, const EltwiseInputs& in, std::string note) {
    c.push_back({std::move(id), in.spec(), BoundVariant::Independent, std::move(note), "elementwise"});
  };
  if (math::arity(t.fn) == 2) {
    // Binary functions: 2^64 pairs, no exhaustive sweep; the special pairs and a designed sample (2^24 pairs in the full suite).
    add("special_pairs", {EltwiseInputs::Kind::Special}, "every pair of the special values");
    const bool full = suite == "elementwise_full";
    add(full ? "sample_pairs_2e24" : "sample_pairs", {EltwiseInputs::Kind::Sample, std::uint64_t{1} << (full ? 24 : 18), 42},
        full ? "2^24 Philox input pairs designed for the hard regions" : "2^18 Philox input pairs designed for the hard regions");
    return c;
  }
  if (!wide) {
    add("all_" + std::string(t.in->tag), {EltwiseInputs::Kind::All}, "every input code");
    return c;
  }
  if (suite == "elementwise_full") {
    add("all_f32", {EltwiseInputs::Kind::All}, "every fp32 input code (2^32; the device sweep for a CUDA kernel)");
    return c;
  }
  add("special", {EltwiseInputs::Kind::Special}, "special values and the thresholds of f32, f16, bf16");
  add("sample", {EltwiseInputs::Kind::Sample, std::uint64_t{1} << 19, 42}, "2^19 Philox inputs: random bit patterns and the finite range");
  return c;
}

std::vector<SuiteInfo> eltwise_suites() {
  auto make = [](std::string name, std::string description) {
    SuiteInfo s;
    s.name = name;
    s.description = std::move(description);
    s.operation = Operation::Elementwise;
    s.cases = [name](const SuiteContext&) { return eltwise_cases(name, EltwiseTraits{}); };  // an fp32 exp, for listings
    s.mutation_score = false;
    return s;
  };
  return {make("elementwise",
               "elementwise math y = f(x) against the correctly rounded result and the kernel's claim: every code of a "
               "16-bit input format; fp32: the special and threshold inputs and a 2^19 sample (docs/elementwise.md)"),
          make("elementwise_full", "elementwise math on every input code: all 2^32 fp32 inputs (the GPU sweep for CUDA kernels)")};
}

namespace {

struct Prepared {
  std::vector<std::unique_ptr<ElementwiseKernel>> ks;
  std::vector<std::vector<CaseSpec>> cases;
};

Prepared prepare(const SuiteInfo& suite, const std::vector<std::string>& kernels, const SuiteRunOptions& opt) {
  if (kernels.empty()) throw InputError("no kernel given");
  if (!opt.baseline.empty()) throw InputError("--baseline is not available for elementwise kernels");
  Prepared pr;
  for (const auto& name : kernels) {
    auto k = make_eltwise_kernel(name);
    if (!k) {
      if (const KernelInfo* info = find_kernel_info(name))
        throw InputError(fmt::format("'{}' is a {} kernel; suite '{}' grades elementwise kernels", name, to_string(info->operation), suite.name));
      throw InputError("unknown kernel '" + name + "' (fpcert kernels lists them)");
    }
    std::vector<CaseSpec> cases = eltwise_cases(suite.name, k->eltwise_traits());
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
    pr.ks.push_back(std::move(k));
    pr.cases.push_back(std::move(cases));
  }
  return pr;
}

}  // namespace

std::vector<PlanItem> ElementwiseOperation::plan(const SuiteInfo& suite, const std::vector<std::string>& kernels,
                                                 const SuiteRunOptions& opt) const {
  const Prepared pr = prepare(suite, kernels, opt);
  std::vector<PlanItem> plan;
  for (std::size_t i = 0; i < pr.ks.size(); ++i)
    for (const auto& c : pr.cases[i]) {
      const double n = static_cast<double>(eltwise_input_count(parse_eltwise_inputs(c.spec), pr.ks[i]->eltwise_traits()));
      plan.push_back({suite.name, c.id, pr.ks[i]->name(), c.spec, n + 1e5});
    }
  return plan;
}

RunResult ElementwiseOperation::run(const SuiteInfo& suite, const std::vector<std::string>& kernels, const SuiteRunOptions& opt) const {
  Prepared pr = prepare(suite, kernels, opt);
  DeviceApis apis;
  RunResult result;
  result.suite = suite.name;
  result.kernels = kernels;
  if (!opt.jsonl_path.empty() && !opt.jsonl_append) write_file_atomic(opt.jsonl_path, "");
  std::size_t total = 0, done = 0;
  for (std::size_t i = 0; i < pr.ks.size(); ++i)
    for (const auto& c : pr.cases[i]) total += !opt.select || opt.select(c.id, pr.ks[i]->name());
  for (std::size_t i = 0; i < pr.ks.size(); ++i) {
    ElementwiseKernel& k = *pr.ks[i];
    for (const CaseSpec& c : pr.cases[i]) {
      if (opt.select && !opt.select(c.id, k.name())) continue;
      if (opt.on_progress) opt.on_progress(fmt::format("[{}/{}] {}: {}", done + 1, total, c.id, k.name()));
      pin_fp_env();
      EltwiseCaseSetup s{suite.name, c.id,
                         opt.repro_prefix.empty() ? "" : fmt::format("{} --kernel {} --case {}", opt.repro_prefix, k.name(), c.id),
                         c.family, parse_eltwise_inputs(c.spec), suite.name == "elementwise_full"};
      auto one = [&](ElementwiseKernel& kk, DeviceApis& a) {
        std::string why;
        DeviceApi* api = a.for_kernel(kk, why);
        if (!api) {
          CaseResult x = eltwise_skeleton(kk, s);
          x.status = CaseStatus::NotSupported;
          x.reason = "no CUDA device: " + why;
          return x;
        }
        return run_eltwise_case(kk, s, *api, opt.run);
      };
      CaseResult r;
      if (opt.isolate) {
        r = run_case_isolated(
            [&] {
              auto fresh = make_eltwise_kernel(k.name());
              DeviceApis child;
              return one(*fresh, child);
            },
            opt.isolate_timeout_s, eltwise_skeleton(k, s));
      } else {
        r = one(k, apis);
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
  result.env = run_environment(opt.command, apis.device(), any_device, !opt.isolate);
  return result;
}

namespace {

/// What the evidence rule of the row-operation driver reads (suites/run/row_operation.hpp): elementwise runs its own
/// cases (inputs swept, not rows) but shares the rule.
struct EvidenceHooks {
  using Kernel = ElementwiseKernel;
  static constexpr std::string_view evidence = "no case checked any input of this kernel (the suite certifies nothing about its claim)";
  static std::unique_ptr<Kernel> make(const std::string& name) { return make_eltwise_kernel(name); }
  static std::string describe(const Kernel& k) { return describe_eltwise_traits(k.eltwise_traits()); }
};

}  // namespace

void ElementwiseOperation::require_evidence(RunResult& r) const { require_row_evidence<EvidenceHooks>(r); }

namespace {

/// The hooks of the mutation campaign (suites/mutation/row_mutation.hpp): a suite of another operation (`fpcert mutate`'s
/// default, certify) means `elementwise`.
struct MutationHooks {
  using Kernel = ElementwiseKernel;
  static constexpr Operation operation = Operation::Elementwise;
  static constexpr std::string_view noun = "elementwise";
  static std::unique_ptr<Kernel> make(const std::string& name) { return make_eltwise_kernel(name); }
  static std::string suite_name(const SuiteInfo& s) { return s.operation == Operation::Elementwise ? s.name : "elementwise"; }
  static std::vector<CaseSpec> cases(const std::string& suite, const Kernel& k) { return eltwise_cases(suite, k.eltwise_traits()); }
  static std::string not_applicable(Fault f, const Kernel& k) { return eltwise_fault_not_applicable(f, k); }
  static std::string register_mutant(const std::string& kernel, Fault f) { return register_eltwise_mutant(kernel, f); }
};

}  // namespace

MutationScore ElementwiseOperation::mutate(const SuiteInfo& suite, const std::string& kernel, const MutationOptions& opt) const {
  if (suite.operation == Operation::Elementwise) return row_mutation<MutationHooks>(*this, suite, kernel, opt);
  for (const SuiteInfo& s : eltwise_suites())
    if (s.name == "elementwise") return row_mutation<MutationHooks>(*this, s, kernel, opt);
  throw std::logic_error("eltwise_suites: no suite 'elementwise'");
}

std::string ElementwiseOperation::register_mutant(const std::string& kernel, Fault f, const FaultOptions& opt) const {
  (void)opt;
  return register_eltwise_mutant(kernel, f);
}

}  // namespace fpcert
