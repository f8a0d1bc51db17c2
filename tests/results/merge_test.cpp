// tests/results/merge_test.cpp — merging shards: the cases come back in the plan's order whatever
// order the shards are given in, and every kind of mixture is refused with the shard it comes from.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "base/error.hpp"
#include "results/merge.hpp"
#include "results/results_json.hpp"

using namespace fpcert;

namespace {

CaseResult make_case(const std::string& id, const std::string& kernel, CaseStatus st) {
  CaseResult c;
  c.suite = "quick";
  c.case_id = id;
  c.kernel = kernel;
  c.status = st;
  c.reason = st == CaseStatus::Fail ? "envelope exceeded" : "";
  c.metrics.max_abs = static_cast<double>(id.size()) * 0.125;
  return c;
}

/// A run of six cases (two kernels, three cases) and its split into shards by a given assignment.
RunResult whole_run() {
  RunResult r;
  r.suite = "quick";
  r.kernels = {"ka", "kb"};
  r.env.fpcert_version = "0.1.0";
  r.env.device = "host CPU";
  for (const char* id : {"c1", "c2", "c3"})
    for (const char* k : {"ka", "kb"}) r.cases.push_back(make_case(id, k, std::string(k) == "kb" && std::string(id) == "c2" ? CaseStatus::Fail : CaseStatus::Pass));
  return r;
}

std::vector<std::string> plan_of(const RunResult& r) {
  std::vector<std::string> p;
  for (const auto& c : r.cases) p.push_back(case_key(c));
  return p;
}

/// Shards "i/n" (prefix: an outer shard) holding the cases whose position % n == i - 1.
std::vector<NamedRun> split(const RunResult& r, int n, const std::string& prefix = "") {
  std::vector<NamedRun> out;
  for (int i = 1; i <= n; ++i) {
    RunResult s = r;
    s.cases.clear();
    for (std::size_t x = 0; x < r.cases.size(); ++x)
      if (static_cast<int>(x % static_cast<std::size_t>(n)) == i - 1) s.cases.push_back(r.cases[x]);
    s.shard = ShardStamp{prefix + std::to_string(i) + "/" + std::to_string(n), plan_of(r), "", false};
    out.push_back({"s" + std::to_string(i) + ".json", s});
  }
  return out;
}

std::string refusal(std::vector<NamedRun> parts) {
  try {
    merge_shards(std::move(parts));
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("merge_shards: the single run back, in plan order, from shards in any order") {
  const RunResult r = whole_run();
  auto parts = split(r, 3);
  std::swap(parts[0], parts[2]);
  const RunResult m = merge_shards(parts);
  CHECK_FALSE(m.shard.present());
  CHECK(to_json(m).dump() == to_json(r).dump());  // every field, the counts and the case order
  CHECK(m.count(CaseStatus::Fail) == 1);
}

TEST_CASE("merge_shards: workers of shard 2/3 merge into shard 2/3, which merges with 1/3 and 3/3") {
  const RunResult r = whole_run();
  auto outer = split(r, 3);
  RunResult two = outer[1].run;
  auto inner = split(two, 2, "2/3:");
  for (auto& p : inner) p.run.shard.plan = plan_of(r);
  const RunResult m2 = merge_shards(inner);
  CHECK(m2.shard.shard == "2/3");
  CHECK(m2.cases.size() == two.cases.size());
  outer[1].run = m2;
  CHECK(to_json(merge_shards(outer)).dump() == to_json(r).dump());
}

TEST_CASE("merge_shards refuses mixtures, naming each") {
  const RunResult r = whole_run();
  {
    auto p = split(r, 3);
    p.pop_back();
    CHECK(refusal(p).find("missing shard(s): 3/3") != std::string::npos);
  }
  {
    auto p = split(r, 3);
    p.push_back(p[0]);
    p.back().name = "again.json";
    CHECK(refusal(p).find("shard 1/3 given twice: s1.json and again.json") != std::string::npos);
  }
  {
    auto p = split(r, 3);
    p[1].run.suite = "certify";
    CHECK(refusal(p).find("s2.json: suite 'certify' differs from s1.json's 'quick'") != std::string::npos);
  }
  {
    auto p = split(r, 3);
    p[2].run.env.fpcert_version = "0.2.0";
    p[1].run.env.build_flags = "-O0";
    const std::string why = refusal(p);
    CHECK(why.find("s3.json: fpcert version '0.2.0'") != std::string::npos);
    CHECK(why.find("s2.json: build flags '-O0'") != std::string::npos);
  }
  {
    auto p = split(r, 3);
    p[1].run.env.device = "NVIDIA H100";
    CHECK(refusal(p).find("s2.json: device 'NVIDIA H100' differs") != std::string::npos);
  }
  {
    auto p = split(r, 3);
    p[1].run.kernels = {"ka"};
    CHECK(refusal(p).find("s2.json: kernels 'ka'") != std::string::npos);
  }
  {
    auto p = split(r, 3);
    p[2].run.shard.plan.pop_back();
    CHECK(refusal(p).find("s3.json: its plan (5 items) differs") != std::string::npos);
  }
  {
    auto p = split(r, 3);
    for (auto& x : p) x.run.shard.run = "0123456789abcdef";
    p[1].run.shard.run = "fedcba9876543210";  // same cases, other inputs or options (e.g. another --mn)
    CHECK(refusal(p).find("s2.json: its plan (6 items) differs from s1.json's (6 items), or its run fingerprint fedcba9876543210") !=
          std::string::npos);
  }
  {
    auto p = split(r, 3);
    p[2].run.cases.push_back(p[0].run.cases.front());
    CHECK(refusal(p).find("case quick/c1/ka is in both s1.json and s3.json") != std::string::npos);
  }
  {
    auto p = split(r, 3);
    p[2].run.cases.pop_back();
    CHECK(refusal(p).find("1 case(s) of the plan in no shard") != std::string::npos);
  }
  {
    auto p = split(r, 3);
    p[0].run.cases.front().case_id = "c9";
    CHECK(refusal(p).find("s1.json: case quick/c9/ka is not in the run's plan") != std::string::npos);
  }
  {
    auto p = split(r, 3);
    p[0].run.shard = ShardStamp{};
    CHECK(refusal(p).find("s1.json: not a shard's results") != std::string::npos);
  }
  {
    auto p = split(r, 3);
    auto q = split(r, 2);
    std::vector<NamedRun> mixed = {p[0], p[1], q[1]};
    mixed.back().name = "half.json";
    CHECK(refusal(mixed).find("half.json: shard 2/2 is not a sibling") != std::string::npos);
  }
}

TEST_CASE("ShardStamp survives JSON; a run without one writes no 'shard' key") {
  RunResult r = whole_run();
  CHECK_FALSE(to_json(r).contains("shard"));
  r.shard = ShardStamp{"2/3:1/2", plan_of(r), "00ff00ff00ff00ff", false};
  const RunResult back = run_from_json(to_json(r));
  CHECK(back.shard.shard == "2/3:1/2");
  CHECK(back.shard.run == "00ff00ff00ff00ff");
  CHECK(back.shard.plan == plan_of(r));
}

TEST_CASE("merge_shards: certify's per-case records and mutation scores come through unchanged, in a single run's order") {
  RunResult r = whole_run();
  for (CaseResult& c : r.cases) {
    c.checks.push_back({CheckKind::Bitwise, c.status == CaseStatus::Pass, "bit for bit with the card", 3, 0.5, 1});
    c.checks.push_back({CheckKind::GuardOutput, true, "guards intact"});
    c.tier = c.kernel == "ka" ? Tier::Bitwise : Tier::EnvelopeStatistical;
    c.vacuous = c.case_id == "c3";
    c.coverage = {"shape.prime", "values." + c.case_id};
    c.evidence = {"accumulation"};
  }
  for (const char* k : {"ka", "kb"}) {
    MutationScore s;
    s.kernel = k;
    s.suite = "quick";
    s.cases = 3;
    MutantResult m;
    m.mutant = std::string(k) + "~acc_rz";
    m.fault = "acc_rz";
    m.fault_class = "arithmetic";
    m.expected = {CheckKind::Bitwise};
    m.outcome = MutantOutcome::Killed;
    m.case_id = "c2";
    m.fired = {CheckKind::Bitwise};
    s.mutants.push_back(m);
    r.mutation.push_back(s);
  }
  r.notes["mutation kc"] = "not measured: the kernel itself failed";
  auto parts = split(r, 3);
  for (auto& p : parts) {  // each score measured by one shard, out of order: kb's by 1/3, ka's by 3/3
    p.run.mutation.clear();
    p.run.notes.clear();
  }
  parts[0].run.mutation.push_back(r.mutation[1]);
  parts[2].run.mutation.push_back(r.mutation[0]);
  parts[1].run.notes = r.notes;
  for (auto& p : parts) p.run = run_from_json(to_json(p.run));  // through the shards' files
  std::swap(parts[0], parts[1]);
  const RunResult m = merge_shards(parts);
  CHECK(to_json(m).dump() == to_json(r).dump());
  REQUIRE(m.mutation.size() == 2);
  CHECK(m.mutation[0].kernel == "ka");
  CHECK(m.cases[4].vacuous);
  CHECK(m.cases[0].checks.size() == 2);
}

TEST_CASE("merge_shards: a certify stamp's evidence flag survives a JSON round trip and an inner merge") {
  RunResult r = whole_run();
  auto parts = split(r, 2, "2/3:");
  for (auto& p : parts) {
    p.run.shard.evidence = true;
    p.run.shard.run = "f00d";
    p.run = run_from_json(to_json(p.run));
    CHECK(p.run.shard.evidence);
  }
  const RunResult m = merge_shards(parts);
  CHECK(m.shard.shard == "2/3");
  CHECK(m.shard.evidence);
}
