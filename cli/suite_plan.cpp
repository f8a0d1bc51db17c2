// cli/suite_plan.cpp — which suites a certify run holds and which kernels each certifies (cli/suite_plan.hpp).
#include "cli/suite_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>

#include "base/error.hpp"
#include "base/input_file.hpp"
#include "cli/commands.hpp"
#include "cli/mutate.hpp"
#include "kernels/kernel.hpp"
#include "reports/mutation_report.hpp"
#include "suites/mutation/mutation.hpp"
#include "suites/ops/conversion/conversion_suite.hpp"

namespace fpcert::cli {

/// The suite of another operation at the level of a GEMM suite: the certify and quick levels exist for every
/// operation (docs/suites.md, "Suites of every operation"): certify -> reduce, softmax, norm, attention (and softmax_backward), quick ->
/// reduce_quick, softmax_quick, norm_quick, attention_quick (and softmax_backward_quick). Empty when the suite has no counterpart for that operation.
std::string suite_at_level(const std::string& suite, Operation op) {
  if (op == Operation::Reduction) {
    if (suite == "certify") return "reduce";
    if (suite == "quick") return "reduce_quick";
  }
  if (op == Operation::Softmax) {
    if (suite == "certify") return "softmax";
    if (suite == "quick") return "softmax_quick";
  }
  if (op == Operation::Norm) {
    if (suite == "certify") return "norm";
    if (suite == "quick") return "norm_quick";
  }
  if (op == Operation::Attention) {
    if (suite == "certify") return "attention";
    if (suite == "quick") return "attention_quick";
  }
  // The backward passes (issue 45).
  if (op == Operation::SoftmaxBackward) {
    if (suite == "certify") return "softmax_backward";
    if (suite == "quick") return "softmax_backward_quick";
  }
  if (op == Operation::NormBackward) {
    if (suite == "certify") return "norm_backward";
    if (suite == "quick") return "norm_backward_quick";
  }
  if (op == Operation::AttentionBackward) {  // issue 45
    if (suite == "certify") return "attention_backward";
    if (suite == "quick") return "attention_backward_quick";
  }
  return "";
}

namespace {

Operation kernel_operation(const std::string& name) {
  const KernelInfo* info = find_kernel_info(name);
  return info ? info->operation : Operation::Gemm;  // an unknown name fails later, where GEMM kernels are made
}

}  // namespace

/// The suites and, for each, its kernels. The groups (cpu, cuda, cublas) take every operation the run's
/// suites reach; a certify-level GEMM suite (certify, quick) reaches the reductions too (suite_at_level), so
/// `certify --kernel cpu` certifies the reduction models on `reduce` beside the GEMM models on `certify`,
/// and reduction kernels named alone take `reduce`. A kernel whose operation no suite of the run certifies is
/// refused, naming the suites that would. `reach` false: no suite is added (--preset); `groups_reach` false (--case
/// names a case of the suite given): the groups stay within the named suites' operations, reduction kernels named
/// one by one still take their suite.
std::vector<SuitePlan> plan_suites(const std::vector<const SuiteInfo*>& named, const std::vector<std::string>& given, bool reach,
                                   bool groups_reach) {
  std::vector<SuitePlan> out;
  const auto add = [&out](const SuiteInfo* s) {
    for (auto& [have, ks] : out)
      if (have == s) return;
    out.push_back({s, {}});
  };
  std::vector<std::pair<const SuiteInfo*, const SuiteInfo*>> companions;  // GEMM suite -> its reduction and softmax suites
  for (const SuiteInfo* s : named) {
    add(s);
    if (s->operation != Operation::Gemm || !reach) continue;  // --preset: the suites as the source states them, nothing added
    for (const Operation op : {Operation::Reduction, Operation::Softmax, Operation::Norm, Operation::Attention,
                               Operation::SoftmaxBackward, Operation::NormBackward,
                               Operation::AttentionBackward}) {
      const std::string r = suite_at_level(s->name, op);
      if (const SuiteInfo* rs = r.empty() ? nullptr : find_suite(r)) companions.push_back({s, rs});
    }
  }
  std::vector<Operation> ops;
  for (const auto& [s, ks] : out) ops.push_back(s->operation);
  if (groups_reach)
    for (const auto& [g, rs] : companions) ops.push_back(rs->operation);
  std::vector<std::string> kernels;
  for (const Operation op : {Operation::Gemm, Operation::Reduction, Operation::Softmax, Operation::Norm, Operation::Attention,
                            Operation::Conversion, Operation::Elementwise,
                            Operation::SoftmaxBackward, Operation::NormBackward, Operation::AttentionBackward})
    if (std::find(ops.begin(), ops.end(), op) != ops.end())
      for (auto& k : expand_kernel_list(given, op))
        if (std::find(kernels.begin(), kernels.end(), k) == kernels.end()) kernels.push_back(std::move(k));
  // Groups expand once per operation; a name given directly appears in each expansion and is kept once.
  for (const std::string& k : kernels) {
    const Operation op = kernel_operation(k);
    bool placed = false;
    for (auto& [s, ks] : out)
      if (s->operation == op || (op == Operation::Gemm && s->operation == Operation::Conversion)) {
        ks.push_back(k);
        placed = true;
      }
    if (placed) continue;
    for (const auto& [g, rs] : companions)
      if (op == rs->operation) {
        add(rs);
        for (auto& [s, ks] : out)
          if (s == rs) ks.push_back(k);
        placed = true;
      }
    if (!placed) {
      std::string names;
      for (const auto& [s, ks] : out) names += (names.empty() ? "" : ", ") + s->name;
      throw InputError(fmt::format("kernel '{}' is a {} kernel and no suite of this run ({}) certifies that operation: {}", printable(k),
                                   to_string(op), names,
                                   op == Operation::Reduction     ? "give --suite certify, quick, reduce or reduce_quick"
                                   : op == Operation::Softmax     ? "give --suite certify, quick, softmax or softmax_quick"
                                   : op == Operation::Norm        ? "give --suite certify, quick, norm or norm_quick"
                                   : op == Operation::Attention   ? "give --suite certify, quick, attention or attention_quick"
                                   : op == Operation::NormBackward ? "give --suite certify, quick, norm_backward or norm_backward_quick"
                                   : op == Operation::AttentionBackward
                                       ? "give --suite certify, quick, attention_backward or attention_backward_quick"
                                   : op == Operation::Elementwise ? "give --suite elementwise or elementwise_full"
                                   : op == Operation::SoftmaxBackward ? "give --suite certify, quick, softmax_backward or softmax_backward_quick"
                                                                  : "give a GEMM suite (fpcert suites lists them)"));
    }
  }
  // A GEMM suite that reached the reductions and has no GEMM kernel of its own drops out (certify of
  // reduction kernels alone is the reduce suite); any other suite left without kernels keeps them empty and
  // the run refuses below.
  std::erase_if(out, [&](const auto& p) {
    if (!p.kernels.empty()) return false;
    for (const auto& [g, rs] : companions)
      if (g == p.suite) return true;
    return false;
  });
  return out;
}

// certify: the mutation scores (suite_plan.hpp).
void add_mutation_scores(bool no_mutation, const SuiteInfo& suite, const std::vector<std::string>& kernels, const SuiteRunOptions& o,
                         RunResult& run, bool print, const std::function<bool(const std::string&)>& mine) {
  if (no_mutation) {
    run.notes["mutation"] = "not run (--no-mutation)";
    if (print) fmt::print("mutation score: not measured (--no-mutation)\n");
    return;
  }
  if (!suite.mutation_score) {  // cases of minutes each: the mutation score is the certify suite's (docs/suites.md)
    run.notes["mutation"] = "not run: suite " + suite.name + " measures none (fpcert certify --suite certify measures it)";
    if (print) fmt::print("mutation score: not measured on suite {} (the certify suite measures it)\n", suite.name);
    return;
  }
  for (const std::string& k : kernels) {
    if (!mine(k)) continue;
    if (suite.operation == Operation::Conversion)  // a device conversion kernel: why not (docs/mutation.md, "Conversion kernels")
      if (const std::string why = conversion_mutation_not_measured(k); !why.empty()) {
        run.notes["mutation " + k] = "not measured: " + why;
        if (print) fmt::print("mutation score of {}: not measured ({})\n", k, why);
        continue;
      }
    int pass = 0, bad = 0;
    std::map<std::string, const CaseResult*> honest;  // this pass's results of the kernel: its campaign runs only the mutants
    for (const CaseResult& c : run.cases)
      if (c.kernel == k) {
        (c.status == CaseStatus::Pass ? pass : bad) += c.status != CaseStatus::NotSupported;
        honest[c.case_id] = &c;
      }
    if (bad || !pass) {
      const std::string why = bad ? "the kernel itself failed" : "no case of the suite ran";
      run.notes["mutation " + k] = "not measured: " + why;
      if (print) fmt::print("mutation score of {}: not measured ({})\n", k, why);
      continue;
    }
    MutationOptions mo;
    mo.run = o;
    mo.run.select = nullptr;  // every case of the suite, whichever part of the run this is
    mo.inject.timeout_ms = o.run.timeout_ms;
    mo.honest_result = [&honest](const std::string& id) { const auto it = honest.find(id); return it == honest.end() ? nullptr : it->second; };
    if (print) mo.on_progress = progress_to_terminal();
    MutationScore s = run_mutation(suite, k, mo);
    if (print) {
      clear_progress();
      std::fputs(mutation_summary(s).c_str(), stdout);
      for (const MutantResult& m : s.mutants)
        if (m.outcome == MutantOutcome::Survived || m.outcome == MutantOutcome::KilledOther)
          fmt::print("    {:<18} {}: {}\n", m.fault, to_string(m.outcome), m.detail);
      std::fflush(stdout);
    }
    if (suite.operation == Operation::Conversion)  // the report's run section lists the notes of a conversion run
      run.notes["mutation " + k] = mutation_summary(s).substr(0, mutation_summary(s).find('\n'));
    run.mutation.push_back(std::move(s));
  }
}

}  // namespace fpcert::cli
