// base/shard.cpp — shard specs and the cost-balanced partition (docs/scale.md).
#include "base/shard.hpp"

#include <algorithm>
#include <cstdlib>
#include <numeric>

#include "base/error.hpp"

namespace fpcert {

std::string Shard::text() const {
  std::string s;
  for (const auto& l : levels) s += (s.empty() ? "" : ":") + std::to_string(l.index) + "/" + std::to_string(l.count);
  return s;
}

Shard Shard::within(int index, int count) const {
  Shard s = *this;
  s.levels.push_back({index, count});
  return s;
}

Shard Shard::parent() const {
  Shard s = *this;
  if (!s.levels.empty()) s.levels.pop_back();
  return s;
}

EnvLookup process_env() {
  return [](const char* name) -> std::optional<std::string> {
    const char* v = std::getenv(name);
    if (!v) return std::nullopt;
    return std::string(v);
  };
}

namespace {

/// A whole decimal number in [lo, hi], or nullopt.
std::optional<long> whole_number(std::string_view s, long lo, long hi) {
  if (s.empty() || s.size() > 9) return std::nullopt;
  long v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  if (v < lo || v > hi) return std::nullopt;
  return v;
}

ShardLevel parse_level(std::string_view part, std::string_view whole) {
  const auto slash = part.find('/');
  const auto bad = [&](const std::string& why) {
    return InputError("--shard '" + std::string(whole) + "': " + why + " (expected I/N with 1 <= I <= N, e.g. 2/8, or slurm)");
  };
  if (slash == std::string_view::npos) throw bad("'" + std::string(part) + "' has no '/'");
  const auto n = whole_number(part.substr(slash + 1), 1, 1000000);
  if (!n) throw bad("N = '" + std::string(part.substr(slash + 1)) + "' is not a whole number from 1 to 1000000");
  const auto i = whole_number(part.substr(0, slash), 1, *n);
  if (!i) throw bad("I = '" + std::string(part.substr(0, slash)) + "' is not a whole number from 1 to " + std::to_string(*n));
  return {static_cast<int>(*i), static_cast<int>(*n)};
}

}  // namespace

Shard parse_shard(std::string_view spec, const EnvLookup& env) {
  Shard s;
  if (spec == "slurm") {
    const auto id = env("SLURM_ARRAY_TASK_ID"), count = env("SLURM_ARRAY_TASK_COUNT");
    if (!id || !count)
      throw InputError("--shard slurm: SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT are not set (run it as a job array: "
                       "sbatch --array=0-N-1; docs/scale.md)");
    const auto step = env("SLURM_ARRAY_TASK_STEP");
    if (step && *step != "1")
      throw InputError("--shard slurm: SLURM_ARRAY_TASK_STEP is " + *step + ": give the array consecutive ids (--array=0-N-1)");
    const auto lo_text = env("SLURM_ARRAY_TASK_MIN");
    const auto n = whole_number(*count, 1, 1000000), i = whole_number(*id, 0, 100000000);
    const auto lo = lo_text ? whole_number(*lo_text, 0, 100000000) : std::optional<long>(0);
    if (!n || !i || !lo || *i < *lo || *i - *lo >= *n)
      throw InputError("--shard slurm: SLURM_ARRAY_TASK_ID = " + *id + ", SLURM_ARRAY_TASK_MIN = " + lo_text.value_or("(unset)") +
                       ", SLURM_ARRAY_TASK_COUNT = " + *count + " do not name a task of a consecutive array");
    s.levels.push_back({static_cast<int>(*i - *lo + 1), static_cast<int>(*n)});
    return s;
  }
  std::size_t from = 0;
  for (;;) {
    const auto colon = spec.find(':', from);
    s.levels.push_back(parse_level(spec.substr(from, colon == std::string_view::npos ? std::string_view::npos : colon - from), spec));
    if (colon == std::string_view::npos) break;
    from = colon + 1;
  }
  return s;
}

std::vector<int> partition_by_cost(const std::vector<double>& costs, int bins) {
  if (bins < 1) throw InputError("partition: need at least one bin");
  std::vector<std::size_t> order(costs.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return costs[a] > costs[b]; });
  std::vector<double> load(static_cast<std::size_t>(bins), 0.0);
  std::vector<int> bin(costs.size(), 0);
  for (const std::size_t u : order) {
    const auto least = static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());  // first minimum
    bin[u] = static_cast<int>(least);
    load[least] += costs[u];
  }
  return bin;
}

std::vector<std::size_t> shard_units(const std::vector<double>& costs, const Shard& shard) {
  std::vector<std::size_t> keep(costs.size());
  std::iota(keep.begin(), keep.end(), std::size_t{0});
  for (const ShardLevel& l : shard.levels) {
    std::vector<double> sub;
    sub.reserve(keep.size());
    for (const std::size_t u : keep) sub.push_back(costs[u]);
    const std::vector<int> bin = partition_by_cost(sub, l.count);
    std::vector<std::size_t> next;
    for (std::size_t x = 0; x < keep.size(); ++x)
      if (bin[x] == l.index - 1) next.push_back(keep[x]);
    keep = std::move(next);
  }
  return keep;
}

}  // namespace fpcert
