// tests/base/shard_test.cpp — shard specs (I/N, nested, slurm) and the cost-balanced partition:
// every unit in exactly one shard at every level, the greedy bound on the heaviest shard, and the
// same answer every time.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <numeric>
#include <set>

#include "base/error.hpp"
#include "base/philox.hpp"
#include "base/shard.hpp"

using namespace fpcert;

namespace {
EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars](const char* name) -> std::optional<std::string> {
    const auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

std::string error_of(std::string_view spec, const EnvLookup& env = env_of({})) {
  try {
    parse_shard(spec, env);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

/// Costs spread over six decades, as GEMM cases of 16^3 to 1024^3 are; seed from FPCERT_TEST_SEED.
std::vector<double> random_costs(std::size_t n, std::uint64_t seed) {
  std::vector<double> c;
  for (std::size_t i = 0; i < n; ++i) {
    const auto r = philox_4x32(seed, 0, i);
    c.push_back(std::pow(10.0, 6.0 * (r[0] / 4294967296.0)) + (r[1] % 3 == 0 ? 0 : 1e5));
  }
  return c;
}
}  // namespace

TEST_CASE("parse_shard: I/N, nested levels, text round trip") {
  CHECK(parse_shard("2/8").levels == std::vector<ShardLevel>{{2, 8}});
  CHECK(parse_shard("1/1").text() == "1/1");
  const Shard s = parse_shard("2/3:1/2");
  CHECK(s.levels == std::vector<ShardLevel>{{2, 3}, {1, 2}});
  CHECK(s.text() == "2/3:1/2");
  CHECK(s.parent().text() == "2/3");
  CHECK(s.parent().parent().whole());
  CHECK(Shard{}.within(3, 4).text() == "3/4");
}

TEST_CASE("parse_shard: malformed specs are InputErrors that say what is wrong") {
  CHECK(error_of("0/3").find("I = '0'") != std::string::npos);
  CHECK(error_of("4/3").find("I = '4'") != std::string::npos);
  CHECK(error_of("1/0").find("N = '0'") != std::string::npos);
  CHECK(error_of("3").find("no '/'") != std::string::npos);
  CHECK(error_of("a/b").find("N = 'b'") != std::string::npos);
  CHECK(error_of("1/2:").find("no '/'") != std::string::npos);
  CHECK(error_of("-1/2").find("I = '-1'") != std::string::npos);
  CHECK(error_of("1/2 ").find("N = '2 '") != std::string::npos);
}

TEST_CASE("parse_shard slurm: array task id and count, ids from any first id, steps refused") {
  CHECK(parse_shard("slurm", env_of({{"SLURM_ARRAY_TASK_ID", "0"}, {"SLURM_ARRAY_TASK_COUNT", "4"}, {"SLURM_ARRAY_TASK_MIN", "0"}})).text() == "1/4");
  CHECK(parse_shard("slurm", env_of({{"SLURM_ARRAY_TASK_ID", "3"}, {"SLURM_ARRAY_TASK_COUNT", "4"}})).text() == "4/4");
  // --array=1-4: ids 1..4 are shards 1/4..4/4.
  CHECK(parse_shard("slurm", env_of({{"SLURM_ARRAY_TASK_ID", "4"}, {"SLURM_ARRAY_TASK_COUNT", "4"}, {"SLURM_ARRAY_TASK_MIN", "1"}})).text() == "4/4");
  CHECK(error_of("slurm").find("SLURM_ARRAY_TASK_ID") != std::string::npos);
  CHECK(error_of("slurm", env_of({{"SLURM_ARRAY_TASK_ID", "5"}, {"SLURM_ARRAY_TASK_COUNT", "4"}})).find("do not name a task") != std::string::npos);
  CHECK(error_of("slurm", env_of({{"SLURM_ARRAY_TASK_ID", "2"}, {"SLURM_ARRAY_TASK_COUNT", "4"}, {"SLURM_ARRAY_TASK_STEP", "2"}}))
            .find("STEP is 2") != std::string::npos);
}

TEST_CASE("partition_by_cost: every unit in one bin; heaviest bin within the greedy bound; deterministic") {
  const char* env_seed = std::getenv("FPCERT_TEST_SEED");
  const std::uint64_t seed = env_seed ? std::strtoull(env_seed, nullptr, 10) : 20261201;
  std::printf("partition test seed: FPCERT_TEST_SEED=%llu\n", static_cast<unsigned long long>(seed));
  for (const std::size_t n : {1u, 2u, 7u, 40u, 333u})
    for (const int bins : {1, 2, 3, 8}) {
      const std::vector<double> costs = random_costs(n, seed + n);
      const std::vector<int> bin = partition_by_cost(costs, bins);
      REQUIRE(bin.size() == n);
      std::vector<double> load(static_cast<std::size_t>(bins), 0);
      for (std::size_t u = 0; u < n; ++u) {
        REQUIRE(bin[u] >= 0);
        REQUIRE(bin[u] < bins);
        load[static_cast<std::size_t>(bin[u])] += costs[u];
      }
      // List scheduling puts each unit on the least-loaded bin, so the last unit placed on the heaviest
      // bin found it at most at the mean: max load <= sum / bins + max cost (Graham 1966).
      const double sum = std::accumulate(costs.begin(), costs.end(), 0.0);
      const double biggest = *std::max_element(costs.begin(), costs.end());
      CHECK(*std::max_element(load.begin(), load.end()) <= sum / bins + biggest);
      CHECK(partition_by_cost(costs, bins) == bin);
    }
  // Equal costs deal out round robin: 5 units into 2 bins are 3 + 2.
  CHECK(partition_by_cost({1, 1, 1, 1, 1}, 2) == std::vector<int>{0, 1, 0, 1, 0});
  // The largest goes first, to bin 0; the next two fill bin 1 until it passes bin 0.
  CHECK(partition_by_cost({1, 10, 6, 5}, 2) == std::vector<int>{0, 0, 1, 1});
  CHECK_THROWS_AS(partition_by_cost({1}, 0), InputError);
}

TEST_CASE("shard_units: shards cover the units exactly once, nested shards cover their parent exactly once") {
  const std::vector<double> costs = random_costs(97, 7);
  for (const int n : {1, 2, 3, 5, 120}) {
    std::multiset<std::size_t> all;
    for (int i = 1; i <= n; ++i) {
      const auto mine = shard_units(costs, Shard{}.within(i, n));
      CHECK(std::is_sorted(mine.begin(), mine.end()));
      all.insert(mine.begin(), mine.end());
      std::multiset<std::size_t> sub;
      for (int j = 1; j <= 3; ++j) {
        const auto part = shard_units(costs, Shard{}.within(i, n).within(j, 3));
        sub.insert(part.begin(), part.end());
      }
      CHECK(sub == std::multiset<std::size_t>(mine.begin(), mine.end()));
    }
    std::multiset<std::size_t> want;
    for (std::size_t u = 0; u < costs.size(); ++u) want.insert(u);
    CHECK(all == want);
  }
}
