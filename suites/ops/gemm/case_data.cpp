// suites/ops/gemm/case_data.cpp — the process's cache of GEMM cases' problems and references (case_data.hpp).
#include "suites/ops/gemm/case_data.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <list>
#include <map>
#include <mutex>
#include <string>

#include "generators/generate.hpp"
#include "oracle/gemm_engine.hpp"

namespace fpcert {
namespace {

std::size_t budget_bytes() {
  if (const char* v = std::getenv("FPCERT_CASE_CACHE_MB")) {
    char* end = nullptr;
    const unsigned long long mb = std::strtoull(v, &end, 10);
    if (end != v && *end == '\0') return static_cast<std::size_t>(mb) << 20;
  }
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  const std::size_t mem = pages > 0 && page > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page) : std::size_t{4} << 30;
  return std::min(mem / 4, std::size_t{8} << 30);
}

std::size_t bytes_of(const Problem& p) { return (p.a.data.size() + p.b.data.size()) * sizeof(double) + 256; }
std::size_t bytes_of(const GemmRef& r) {
  return r.c.size() * sizeof(RefValue) + r.abs_sum.size() * sizeof(double) + r.status.size() + 256;
}
std::size_t bytes_of(const GemmCaseData& d) {
  std::size_t b = bytes_of(d.problem) + bytes_of(d.ref);
  if (d.batched) {
    for (const Problem& p : d.batched->problems) b += bytes_of(p);
    for (const GemmRef& r : d.batched->refs) b += bytes_of(r);
  }
  return b;
}

struct Cache {
  std::mutex mu;
  std::list<std::string> lru;  // front: most recently used
  struct Entry {
    std::shared_ptr<const GemmCaseData> data;
    std::size_t bytes = 0;
    std::list<std::string>::iterator at;
  };
  std::map<std::string, Entry> entries;
  GemmCaseCacheStats stats;
  bool budget_read = false;
};
Cache& cache() {
  static Cache c;
  return c;
}

}  // namespace

std::shared_ptr<const GemmCaseData> gemm_case_data(const CaseSpec& c, const SampleSpec& sspec) {
  // Everything that decides the data's bits: the spec, the sample, the batches; the reference engine is named too (its
  // results are the CPU oracle's bit for bit, but GemmRefInfo::engine reports who made them).
  const std::shared_ptr<ExactGemmEngine> engine = default_gemm_engine();
  const std::string key = fmt::format("{}|sample {} {} {}|batch {} {} {} {}|{}", c.spec, sspec.on, sspec.rows, sspec.cols, c.batch.count,
                                      c.batch.gap_rows, c.batch.broadcast_a, c.batch.broadcast_b, engine ? engine->name() : "default");
  Cache& k = cache();
  {
    std::lock_guard<std::mutex> lock(k.mu);
    if (!k.budget_read) k.stats.budget = budget_bytes(), k.budget_read = true;
    if (const auto it = k.entries.find(key); it != k.entries.end()) {
      k.lru.splice(k.lru.begin(), k.lru, it->second.at);
      ++k.stats.hits;
      return it->second.data;
    }
    ++k.stats.misses;
  }
  auto d = std::make_shared<GemmCaseData>();
  d->problem = generate(c.spec);
  if (sspec.active()) d->sample = choose_gemm_sample(d->problem.m, d->problem.n, d->problem.k, sspec, d->problem.seed);
  d->ref = d->sample ? sampled_reference(d->problem, *d->sample) : gemm_reference(d->problem.a.view(), d->problem.b.view());
  if (c.batch.active()) d->batched = batch_problems(d->problem, c.batch);
  const std::size_t bytes = bytes_of(*d);
  std::lock_guard<std::mutex> lock(k.mu);
  if (bytes <= k.stats.budget && !k.entries.count(key)) {
    while (k.stats.bytes + bytes > k.stats.budget && !k.lru.empty()) {
      const auto old = k.entries.find(k.lru.back());
      k.stats.bytes -= old->second.bytes;
      k.entries.erase(old);
      k.lru.pop_back();
    }
    k.lru.push_front(key);
    k.entries[key] = {d, bytes, k.lru.begin()};
    k.stats.bytes += bytes;
  }
  k.stats.entries = k.entries.size();
  return d;
}

GemmCaseCacheStats gemm_case_cache_stats() {
  Cache& k = cache();
  std::lock_guard<std::mutex> lock(k.mu);
  if (!k.budget_read) k.stats.budget = budget_bytes(), k.budget_read = true;
  k.stats.entries = k.entries.size();
  return k.stats;
}

void clear_gemm_case_cache() {
  Cache& k = cache();
  std::lock_guard<std::mutex> lock(k.mu);
  k.entries.clear();
  k.lru.clear();
  k.stats = {};
  k.budget_read = false;
}

}  // namespace fpcert
