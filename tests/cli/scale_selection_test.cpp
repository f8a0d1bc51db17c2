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
