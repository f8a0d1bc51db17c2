// tests/cli/scale_selection_test.cpp — the workers of --devices share claimable units (one kernel's cases and its
// campaign) first come, first served (cli/scale.hpp, Selection; docs/scale.md, "Kernels dealt out as workers free
// up"): each unit goes to exactly one worker, asking never claims, the other units keep the partition.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "base/error.hpp"
#include "cli/scale.hpp"

using namespace fpcert;
using namespace fpcert::cli;

namespace {

/// Units 0..2: one kernel's two cases each (claimable); unit 3: one case of every kernel (partitioned).
RunPlan plan_of_three_kernels() {
  RunPlan p;
  for (int k = 0; k < 3; ++k) {
    RunPlan::Unit u;
    u.claimable = true;
    for (const char* c : {"a", "b"}) {
      u.items.push_back(p.items.size());
      p.items.push_back({"certify", c, "k" + std::to_string(k), ""});
    }
    p.units.push_back(u);
  }
  RunPlan::Unit shared;
  for (int k = 0; k < 3; ++k) {
    shared.items.push_back(p.items.size());
    p.items.push_back({"reduce", "x", "k" + std::to_string(k), ""});
  }
  p.units.push_back(shared);
  return p;
}

std::string key(const char* suite, const char* c, int k) { return case_key(suite, c, "k" + std::to_string(k)); }

}  // namespace

TEST_CASE("Selection: claimable units go to the first worker that claims them, exactly one each") {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("fpcert_claims_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const RunPlan plan = plan_of_three_kernels();
  const std::vector<std::size_t> all_units = {0, 1, 2, 3};
  // Worker 1/2 holds the shared unit by the partition, worker 2/2 nothing fixed.
  const Selection w1(plan, {key("reduce", "x", 0), key("reduce", "x", 1), key("reduce", "x", 2)}, all_units, dir.string(), "1/2");
  const Selection w2(plan, {}, all_units, dir.string(), "2/2");
  // Asking claims nothing.
  CHECK_FALSE(w1.has(key("certify", "a", 0)));
  CHECK_FALSE(w2.has(key("certify", "b", 0)));
  CHECK(std::filesystem::is_empty(dir));
  // Worker 2 frees up first and claims kernel 0; worker 1 then finds it taken and claims kernel 1.
  CHECK(w2.claim(key("certify", "b", 0)));
  CHECK_FALSE(w1.claim(key("certify", "a", 0)));
  CHECK(w1.claim(key("certify", "a", 1)));
  CHECK_FALSE(w2.claim(key("certify", "b", 1)));
  // A claim covers every item of its unit and is remembered; kernel 2 is still free.
  CHECK(w2.has(key("certify", "a", 0)));
  CHECK(w2.claim(key("certify", "a", 0)));
  CHECK_FALSE(w1.has(key("certify", "b", 0)));
  CHECK(w1.has(key("certify", "b", 1)));
  CHECK_FALSE(w1.has(key("certify", "a", 2)));
  CHECK_FALSE(w2.has(key("certify", "a", 2)));
  CHECK(w1.claim(key("certify", "b", 2)));
  CHECK_FALSE(w2.claim(key("certify", "a", 2)));
  // The partitioned unit is answered from the fixed sets, claimed by nobody.
  CHECK(w1.claim(key("reduce", "x", 1)));
  CHECK_FALSE(w2.claim(key("reduce", "x", 1)));
  // The claim files name their holders (what the parent reads), one per claimed unit, no leftovers.
  auto holder = [&](std::size_t u) {
    std::string h;
    std::ifstream(claim_file(dir.string(), u)) >> h;
    return h;
  };
  CHECK(holder(0) == "2/2");
  CHECK(holder(1) == "1/2");
  CHECK(holder(2) == "1/2");
  CHECK(std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator()) == 3);
  // A unit outside the worker's eligible units (another shard's) is never claimed.
  const Selection w3(plan, {}, {3}, dir.string(), "3/3");
  CHECK_FALSE(w3.claim(key("certify", "a", 2)));
  // A claims folder that cannot be written: the reason, not a silent "not mine".
  const Selection lost(plan, {}, all_units, (dir / "missing").string(), "1/1");
  CHECK_THROWS_WITH_AS(lost.claim(key("certify", "a", 0)), doctest::Contains("missing"), std::exception);
  std::filesystem::remove_all(dir);
}

TEST_CASE("claim_order: costliest first, by earlier runs' seconds where known, else by the plan's estimate scaled") {
  RunPlan plan = plan_of_three_kernels();
  plan.units[0].cost = 10;
  plan.units[1].cost = 30;
  plan.units[2].cost = 20;
  plan.units[3].cost = 1000;  // not claimable: never in the order
  const std::vector<std::size_t> all_units = {0, 1, 2, 3};
  std::size_t known = 99;
  // No history: the plan's estimate.
  CHECK(claim_order(plan, all_units, {}, &known) == std::vector<std::size_t>{1, 2, 0});
  CHECK(known == 0);
  // History names kernel 0 the costliest (8 s; 0.8 s per plan cost): kernels 1 and 2 estimated at 24 s and 16 s.
  CHECK(claim_order(plan, all_units, {{"certify\tk0", 8.0}}, &known) == std::vector<std::size_t>{1, 2, 0});
  CHECK(known == 1);
  // Two timed (5 and 0.1 s per plan cost: the upper median, 5): kernel 2 estimated at 100 s, before kernel 0's 50 s.
  CHECK(claim_order(plan, all_units, {{"certify\tk0", 50.0}, {"certify\tk1", 3.0}}) == std::vector<std::size_t>{2, 0, 1});
  // Every unit timed: the times alone decide; ties keep the plan's order.
  CHECK(claim_order(plan, all_units, {{"certify\tk0", 5.0}, {"certify\tk1", 5.0}, {"certify\tk2", 9.0}}) ==
        std::vector<std::size_t>{2, 0, 1});
  // Only the eligible units (a shard's).
  CHECK(claim_order(plan, {0, 2}, {}) == std::vector<std::size_t>{2, 0});
  // A worker walks its units by rank; items outside claimable units come after every unit.
  const Selection w(plan, {}, all_units, "/nonexistent", "1/1", {2, 0, 1});
  CHECK(w.rank(key("certify", "a", 2)) == 0);
  CHECK(w.rank(key("certify", "b", 0)) == 1);
  CHECK(w.rank(key("certify", "a", 1)) == 2);
  CHECK(w.rank(key("reduce", "x", 0)) == SIZE_MAX);
  // A unit the order leaves out (another parent's plan?) comes after those it names, in plan order.
  const Selection partial(plan, {}, all_units, "/nonexistent", "1/1", {1});
  CHECK(partial.rank(key("certify", "a", 1)) == 0);
  CHECK(partial.rank(key("certify", "a", 0)) < partial.rank(key("certify", "a", 2)));
  CHECK(partial.rank(key("certify", "a", 2)) < SIZE_MAX);
}

TEST_CASE("unit_seconds and the cost file: a unit's cases' wall time plus its campaign; a unit not all back says nothing") {
  const RunPlan plan = plan_of_three_kernels();
  RunResult r;
  auto add = [&](const char* c, int k, double s) {
    CaseResult x;
    x.suite = "certify";
    x.case_id = c;
    x.kernel = "k" + std::to_string(k);
    x.wall_seconds = s;
    r.cases.push_back(x);
  };
  add("a", 0, 1.5);
  add("b", 0, 2.0);
  add("a", 1, 4.0);  // kernel 1's case b never came back
  add("a", 2, 0.25);
  add("b", 2, 0.25);
  MutationScore m;
  m.suite = "certify";
  m.kernel = "k2";
  m.seconds = 7;
  r.mutation.push_back(m);
  const auto s = unit_seconds(plan, {0, 1, 2, 3}, r);
  CHECK(s.size() == 2);
  CHECK(s.at("certify\tk0") == doctest::Approx(3.5));
  CHECK(s.at("certify\tk2") == doctest::Approx(7.5));
  CHECK(unit_history_key(plan, 1) == "certify\tk1");

  const std::filesystem::path f = std::filesystem::temp_directory_path() / ("fpcert_costs_" + std::to_string(::getpid()) + ".json");
  std::string problem;
  CHECK(read_unit_seconds(f.string(), &problem).empty());  // no history yet: nothing said
  CHECK(problem.empty());
  std::ofstream(f) << "{\"unit_seconds\": {\"certify\\tk0\": 3.5, \"certify\\tk1\": -1, \"certify\\tk2\": \"x\"}}";
  const auto back = read_unit_seconds(f.string(), &problem);
  CHECK(back.size() == 1);  // negative and non-numeric times are dropped
  CHECK(back.at("certify\tk0") == 3.5);
  std::ofstream(f) << "{not json";
  CHECK(read_unit_seconds(f.string(), &problem).empty());
  CHECK(problem.find("not a cost file") != std::string::npos);
  std::filesystem::remove(f);
}

TEST_CASE("with_built_in_prior: a machine with no history takes fpcert's measured run; its own times win") {
  std::size_t from_prior = 0;
  const auto fresh = with_built_in_prior({}, &from_prior);
  REQUIRE(fresh.size() >= 70);  // the main job's built-in certify units
  CHECK(from_prior == fresh.size());
  for (const auto& [key, seconds] : fresh) {
    CHECK(key.rfind("certify\t", 0) == 0);
    CHECK(seconds > 0);
  }
  // Measured: the fp64 Ozaki-II unit (host emulation of the scheme) far above a plain SIMT fp32 GEMM's.
  REQUIRE(fresh.count("certify\tgemm_f64_ozaki2_int8"));
  REQUIRE(fresh.count("certify\tgemm_f32_tiled"));
  CHECK(fresh.at("certify\tgemm_f64_ozaki2_int8") > 4 * fresh.at("certify\tgemm_f32_tiled"));
  // This machine's own time of a unit replaces the prior's; keys the prior does not know are kept.
  const auto mine = with_built_in_prior({{"certify\tgemm_f64_ozaki2_int8", 1.5}, {"certify\tmy_plugin_gemm", 7.0}}, &from_prior);
  CHECK(mine.at("certify\tgemm_f64_ozaki2_int8") == 1.5);
  CHECK(mine.at("certify\tmy_plugin_gemm") == 7.0);
  CHECK(from_prior == fresh.size() - 1);
}
