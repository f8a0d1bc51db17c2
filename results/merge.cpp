// results/merge.cpp — merging shards: the checks that refuse mixtures, then the cases in plan order.
#include "results/merge.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "base/error.hpp"
#include "base/shard.hpp"

namespace fpcert {

namespace {

/// The environment fields that must agree for results to be one certificate: the same fpcert, the
/// same build of the kernels, the same kind of device and library versions. Host names, times and
/// commands may differ.
std::vector<std::pair<const char*, std::string Environment::*>> identity_fields() {
  return {{"fpcert version", &Environment::fpcert_version}, {"compiler", &Environment::compiler},
          {"build flags", &Environment::build_flags},       {"CUDA architectures", &Environment::cuda_archs},
          {"device", &Environment::device},                 {"compute capability", &Environment::compute_capability},
          {"CUDA runtime", &Environment::cuda_runtime},     {"cuBLAS", &Environment::cublas}};
}

std::string list_some(const std::vector<std::string>& v, std::size_t most = 8) {
  std::string s;
  for (std::size_t i = 0; i < v.size() && i < most; ++i) s += (i ? ", " : "") + v[i];
  if (v.size() > most) s += ", ... (" + std::to_string(v.size()) + " in all)";
  return s;
}

/// Every problem on its own line.
[[noreturn]] void refuse(const std::vector<std::string>& problems) {
  std::string s = "merge: refused:";
  for (const auto& p : problems) s += "\n  " + p;
  throw InputError(s);
}

}  // namespace

RunResult merge_shards(std::vector<NamedRun> parts) {
  if (parts.empty()) throw InputError("merge: no results given");
  std::vector<std::string> problems;
  std::vector<Shard> shards(parts.size());
  for (std::size_t p = 0; p < parts.size(); ++p) {
    if (!parts[p].run.shard.present()) {
      problems.push_back(parts[p].name + ": not a shard's results (no shard stamp: run with --shard I/N)");
      continue;
    }
    try {
      shards[p] = parse_shard(parts[p].run.shard.shard);
    } catch (const InputError& e) {
      problems.push_back(parts[p].name + ": bad shard stamp: " + e.what());
    }
  }
  if (!problems.empty()) refuse(problems);
  // Order by the innermost index, so the first shard's environment heads the merged result.
  std::vector<std::size_t> order(parts.size());
  for (std::size_t p = 0; p < order.size(); ++p) order[p] = p;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return shards[a].levels.back().index < shards[b].levels.back().index;
  });
  const NamedRun& head = parts[order.front()];
  const Shard parent = shards[order.front()].parent();
  const int count = shards[order.front()].levels.back().count;
  std::map<int, std::string> seen;
  for (const std::size_t p : order) {
    const NamedRun& x = parts[p];
    const auto differs = [&](const std::string& what, const std::string& mine, const std::string& theirs) {
      if (mine != theirs)
        problems.push_back(x.name + ": " + what + " '" + mine + "' differs from " + head.name + "'s '" + theirs + "'");
    };
    if (&x != &head) {
      differs("kind", std::string(to_string(x.run.kind)), std::string(to_string(head.run.kind)));
      differs("suite", x.run.suite, head.run.suite);
      differs("kernels", list_some(x.run.kernels, 1000), list_some(head.run.kernels, 1000));
      for (const auto& [what, field] : identity_fields()) differs(what, x.run.env.*field, head.run.env.*field);
      if (x.run.shard.plan != head.run.shard.plan || x.run.shard.run != head.run.shard.run)
        problems.push_back(x.name + ": its plan (" + std::to_string(x.run.shard.plan.size()) + " items) differs from " + head.name +
                           "'s (" + std::to_string(head.run.shard.plan.size()) + " items), or its run fingerprint " + x.run.shard.run + " differs from " +
                           head.run.shard.run + ": not the same run (inputs, options, suite version or kernels changed)");
    }
    const Shard& s = shards[p];
    if (s.parent() != parent || s.levels.back().count != count) {
      problems.push_back(x.name + ": shard " + s.text() + " is not a sibling of " + head.name + "'s " + shards[order.front()].text());
      continue;
    }
    const int i = s.levels.back().index;
    if (seen.count(i)) problems.push_back("shard " + s.text() + " given twice: " + seen[i] + " and " + x.name);
    else seen[i] = x.name;
  }
  std::vector<std::string> missing_shards;
  for (int i = 1; i <= count; ++i)
    if (!seen.count(i)) missing_shards.push_back(parent.within(i, count).text());
  if (!missing_shards.empty()) problems.push_back("missing shard(s): " + list_some(missing_shards));
  if (!problems.empty()) refuse(problems);

  // Every case once, in the plan's order.
  const std::vector<std::string>& plan = head.run.shard.plan;
  std::map<std::string, std::size_t> slot;
  for (std::size_t x = 0; x < plan.size(); ++x) slot.emplace(plan[x], x);
  std::vector<const CaseResult*> placed(plan.size(), nullptr);
  std::vector<std::string> placed_by(plan.size());
  for (const std::size_t p : order)
    for (const CaseResult& c : parts[p].run.cases) {
      const std::string key = case_key(c);
      const auto it = slot.find(key);
      if (it == slot.end()) {
        problems.push_back(parts[p].name + ": case " + key + " is not in the run's plan");
        continue;
      }
      if (placed[it->second]) {
        problems.push_back("case " + key + " is in both " + placed_by[it->second] + " and " + parts[p].name + " (overlapping shards)");
        continue;
      }
      placed[it->second] = &c;
      placed_by[it->second] = parts[p].name;
    }
  // Which items an inner shard must hold is the partition's business (its costs are not stamped): the
  // merge that completes the run checks that every item of the plan came back.
  std::vector<std::string> missing_cases;
  for (std::size_t x = 0; x < plan.size() && parent.whole(); ++x)
    if (!placed[x]) missing_cases.push_back(plan[x]);
  if (!missing_cases.empty())
    problems.push_back(std::to_string(missing_cases.size()) + " case(s) of the plan in no shard (a shard stopped early?): " +
                       list_some(missing_cases));
  if (!problems.empty()) refuse(problems);

  RunResult m;
  m.kind = head.run.kind;
  m.env = head.run.env;
  m.suite = head.run.suite;
  m.kernels = head.run.kernels;
  for (const std::size_t p : order)
    for (const auto& [k, v] : parts[p].run.notes) m.notes.emplace(k, v);
  m.cases.reserve(plan.size());
  for (const CaseResult* c : placed)
    if (c) m.cases.push_back(*c);
  // Mutation scores (certify: each measured by one shard, docs/scale.md), in a single run's order: by
  // suite as the plan runs them, then by kernel as the run lists them.
  std::map<std::string, std::size_t> suite_rank, kernel_rank;
  for (const CaseResult& c : m.cases) suite_rank.emplace(c.suite, suite_rank.size());
  for (const std::string& k : m.kernels) kernel_rank.emplace(k, kernel_rank.size());
  for (const std::size_t p : order)
    for (const MutationScore& s : parts[p].run.mutation) m.mutation.push_back(s);
  const auto rank = [](const std::map<std::string, std::size_t>& r, const std::string& k) {
    const auto it = r.find(k);
    return it == r.end() ? r.size() : it->second;
  };
  std::stable_sort(m.mutation.begin(), m.mutation.end(), [&](const MutationScore& x, const MutationScore& y) {
    return std::pair(rank(suite_rank, x.suite), rank(kernel_rank, x.kernel)) < std::pair(rank(suite_rank, y.suite), rank(kernel_rank, y.kernel));
  });
  if (!parent.whole()) m.shard = ShardStamp{parent.text(), plan, head.run.shard.run, head.run.shard.evidence};
  return m;
}

}  // namespace fpcert
