// suites/ops/gemm/gemm_operation.cpp — GEMM as the runner runs it (suites/ops/gemm/gemm_operation.hpp): problems
// and exact references once per case, kernels side by side, the baseline, isolation, results case by case.
#include "suites/ops/gemm/gemm_operation.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <type_traits>

#include "base/atomic_file.hpp"
#include "base/error.hpp"
#include "base/fpenv.hpp"
#include "generators/generate.hpp"
#include "oracle/gemm_engine.hpp"
#include "results/results_json.hpp"
#include "suites/ops/gemm/fault_injectors.hpp"
#include "suites/ops/gemm/batch.hpp"
#include "suites/ops/gemm/runner.hpp"
#include "suites/run/device_apis.hpp"
#include "suites/run/environment.hpp"
#include "suites/run/host_store.hpp"
#include "suites/run/isolate.hpp"
#include "suites/verdict/emulate/emulate.hpp"
#include "suites/verdict/grade.hpp"

namespace fpcert {

namespace {

CaseResult skeleton_for(const GemmKernel& k, const CaseSetup& s) {
  CaseResult r;
  r.suite = s.suite;
  r.case_id = s.case_id;
  r.kernel = k.name();
  r.kernel_traits = describe_traits(k.traits());
  r.backend = std::string(to_string(k.backend()));
  r.spec = s.problem->spec;
  r.m = s.problem->m;
  r.n = s.problem->n;
  r.k = s.problem->k;
  r.source_format = std::string(s.problem->source->tag);
  r.out_format = std::string(k.traits().out->tag);
  r.repro = s.repro;
  r.achieved = s.problem->achieved;
  r.family = s.family;
  r.axis = s.axis;
  if (!s.layout.row_major()) r.layout = to_string(s.layout);
  return r;
}

}  // namespace

namespace {

struct Prepared {
  std::vector<std::unique_ptr<GemmKernel>> ks;
  std::unique_ptr<GemmKernel> base;
  std::vector<CaseSpec> cases;
};

/// The kernels, the baseline and the case list of a run (what run_suite and plan_suite share).
Prepared prepare(const SuiteInfo& suite, const std::vector<std::string>& kernels, const SuiteRunOptions& opt) {
  Prepared pr;
  if (kernels.empty()) throw InputError("no kernel given");
  std::vector<std::unique_ptr<GemmKernel>> ks;
  for (const auto& name : kernels) {
    auto k = make_gemm_kernel(name);
    if (!k && make_conversion_kernel(name))
      throw InputError(fmt::format("'{}' is a conversion kernel; suite '{}' grades GEMM kernels (the conversions suite checks "
                                   "conversion kernels)", name, suite.name));
    if (!k) throw InputError("unknown kernel '" + name + "' (fpcert kernels lists them)");
    ks.push_back(std::move(k));
  }
  std::unique_ptr<GemmKernel> base;
  if (!opt.baseline.empty()) {
    base = make_gemm_kernel(opt.baseline);
    if (!base) throw InputError("unknown baseline kernel '" + opt.baseline + "' (fpcert kernels lists them)");
  }
  SuiteContext ctx;
  ctx.device = ks.front()->memory() == MemorySpace::Device;
  ctx.mn = opt.mn;
  ctx.traits = &ks.front()->traits();
  for (const auto& k : ks) ctx.all.push_back(&k->traits());
  if (base) ctx.all.push_back(&base->traits());
  std::vector<CaseSpec> cases = suite.cases(ctx);
  if (!opt.only_case.empty()) {
    std::vector<CaseSpec> one;
    std::string ids;
    for (const auto& c : cases) {
      ids += (ids.empty() ? "" : ", ") + c.id;
      if (case_matches(opt.only_case, c.id)) one.push_back(c);
    }
    if (one.empty()) throw InputError("suite '" + suite.name + "' has no case '" + opt.only_case + "' (cases: " + ids + ")");
    cases = one;
  }
  for (const auto& c : cases) (void)canonical_spec(c.spec);  // a bad spec fails before anything runs
  pr.ks = std::move(ks);
  pr.base = std::move(base);
  pr.cases = std::move(cases);
  return pr;
}

}  // namespace

std::vector<PlanItem> GemmOperation::plan(const SuiteInfo& suite, const std::vector<std::string>& kernels,
                                          const SuiteRunOptions& opt) const {
  const Prepared pr = prepare(suite, kernels, opt);
  std::vector<PlanItem> plan;
  for (const auto& c : pr.cases) {
    const double cost = estimated_case_cost(c.spec);
    for (const auto& k : pr.ks) plan.push_back({suite.name, c.id, k->name(), c.spec, cost});
  }
  return plan;
}

RunResult GemmOperation::run(const SuiteInfo& suite, const std::vector<std::string>& kernels, const SuiteRunOptions& opt) const {
  Prepared pr = prepare(suite, kernels, opt);
  auto& ks = pr.ks;
  auto& base = pr.base;
  const auto& cases = pr.cases;
  DeviceApis apis;
  RunResult result;
  result.suite = suite.name;
  result.kernels = kernels;
  if (!opt.jsonl_path.empty() && !opt.jsonl_append) write_file_atomic(opt.jsonl_path, "");  // start afresh
  const auto selected = [&](const CaseSpec& c, const GemmKernel& k) { return !opt.select || opt.select(c.id, k.name()); };
  std::size_t total = 0;
  for (const auto& c : cases)
    for (const auto& k : ks) total += selected(c, *k);
  std::size_t done = 0;
  for (const auto& c : cases) {
    if (std::none_of(ks.begin(), ks.end(), [&](const auto& k) { return selected(c, *k); })) continue;
    if (opt.on_progress) opt.on_progress(fmt::format("[{}/{}] {}: generating {} and its exact reference", done + 1, total, c.id, c.spec));
    pin_fp_env();  // inputs and references in round to nearest without FTZ/DAZ (docs/suites.md)
    // The problem and its exact reference (whole, or of the sampled rows and columns: --sample, or the case's own, the
    // scale suite; a strided batch case's every batch): made once per process, shared by every kernel and mutation
    // campaign that runs the case (suites/ops/gemm/gemm_operation.hpp, gemm_case_data).
    const SampleSpec& sspec = opt.gemm_sample.active() ? opt.gemm_sample : c.sample;
    const std::shared_ptr<const GemmCaseData> data = gemm_case_data(c, sspec);
    const Problem& problem = data->problem;
    const std::optional<GemmSample>& sample = data->sample;
    const GemmRef& ref = data->ref;
    const std::optional<BatchProblems>& batched = data->batched;
    const BoundVariant variant = opt.variant.value_or(c.variant);
    std::optional<CaseResult> base_result;
    auto run_one = [&](GemmKernel& k, const std::string& repro) {
      CaseSetup s;
      s.suite = suite.name;
      s.case_id = c.id;
      s.problem = &problem;
      s.ref = &ref;
      if (!sample && !batched) s.block_ref = [&](const KernelTraits& t) { return gemm_block_reference(c, sspec, *data, t); };
      s.inputs_ref = [&](const Format& fa, const Format& fb, Rounding rr) {
        return gemm_inputs_reference(c, sspec, *data, fa, fb, rr);
      };
      // A mutant ("kernel~fault") declares its kernel's traits: it shares the kernel's emulation of the case.
      const std::string family = k.is_mutant() ? k.name().substr(0, k.name().rfind('~')) : k.name();
      s.emulated = [&c, &sspec, family](const KernelTraits& t, const std::function<Emulated()>& make) {
        return gemm_emulation(c, sspec, family, t, make);
      };
      s.variant = variant;
      s.repro = repro;
      s.family = c.family;
      s.axis = c.axis;
      s.misaligned = c.misaligned;
      s.min_runs = c.min_runs;
      s.ld_pad = c.ld_pad;
      s.layout = c.layout;
      s.alpha_beta = c.alpha_beta;
      s.batch = c.batch;
      s.epilogue = c.epilogue;
      if (batched) s.batch_problems = &batched->problems, s.batch_refs = &batched->refs;
      s.sample = sample ? &*sample : nullptr;
      if (opt.isolate)
        return run_case_isolated(
            [&] {  // in the child: a fresh kernel, and the device touched there only
              auto fresh = make_gemm_kernel(k.name());
              DeviceApis child;
              std::string why;
              DeviceApi* api = child.for_kernel(*fresh, why);
              if (!api) {
                CaseResult r = skeleton_for(k, s);
                r.status = CaseStatus::NotSupported;
                r.reason = "no CUDA device: " + why;
                return r;
              }
              return run_case(*fresh, s, *api, opt.run);
            },
            opt.isolate_timeout_s, skeleton_for(k, s));
      std::string why;
      DeviceApi* api = apis.for_kernel(k, why);
      if (!api) {
        CaseResult r = skeleton_for(k, s);
        r.status = CaseStatus::NotSupported;
        r.reason = "no CUDA device: " + why;
        return r;
      }
      return run_case(k, s, *api, opt.run);
    };
    if (base) base_result = run_one(*base, "");
    for (auto& k : ks) {
      if (!selected(c, *k)) continue;
      if (opt.on_progress) opt.on_progress(fmt::format("[{}/{}] {}: {}", done + 1, total, c.id, k->name()));
      std::string repro = opt.repro_prefix.empty() ? "" : fmt::format("{} --kernel {} --case {}", opt.repro_prefix, k->name(), c.id);
      CaseResult r = run_one(*k, repro);
      if (!c.note.empty()) r.flags.insert(r.flags.begin(), "case: " + c.note);
      r.coverage = c.covers;
      if (base_result && base_result->status != CaseStatus::NotSupported) {
        r.baseline = base->name();
        r.baseline_max_abs = base_result->metrics.max_abs;
        if (base_result->time_ms_median > 0 && r.time_ms_median > 0) r.speed_ratio = base_result->time_ms_median / r.time_ms_median;
        // Error within factor f of the baseline's. A baseline error of 0 allows one output ulp-level
        // error at the largest reference (2^-frac(out) * max|ref|) times f.
        const double floor = std::ldexp(r.metrics.ref_max_abs, -ks.front()->traits().out->frac_bits);
        const double denom = std::max(base_result->metrics.max_abs, floor);
        r.baseline_ratio = denom > 0 ? r.metrics.max_abs / denom : 0.0;
        if (r.status == CaseStatus::Pass && *r.baseline_ratio > opt.baseline_factor) {
          r.status = CaseStatus::Fail;
          r.reason = fmt::format("error {:.3g}x the baseline {}'s (max abs {:.4g} vs {:.4g}; limit {}x)", *r.baseline_ratio,
                                 base->name(), r.metrics.max_abs, base_result->metrics.max_abs, opt.baseline_factor);
        }
      }
      if (!opt.jsonl_path.empty()) append_line(opt.jsonl_path, to_json(r).dump());
      if (opt.on_case) opt.on_case(r);
      result.cases.push_back(std::move(r));
      ++done;
    }
  }
  const DeviceApi* dev = apis.device();
  bool any_device = false;
  for (const auto& k : ks) any_device = any_device || k->memory() == MemorySpace::Device;
  result.env = run_environment(opt.command, dev, any_device, !opt.isolate);
  return result;
}

void GemmOperation::require_evidence(RunResult& r) const {
  for (const std::string& name : r.kernels) {
    const auto k = make_gemm_kernel(name);
    if (!k) continue;
    std::vector<CaseResult> mine;
    for (const CaseResult& c : r.cases)
      if (c.kernel == name) mine.push_back(c);
    const std::vector<std::string> missing = missing_evidence(k->traits(), mine);
    if (missing.empty()) continue;
    CaseResult e;
    e.suite = r.suite;
    e.case_id = "evidence";
    e.kernel = name;
    e.kernel_traits = describe_traits(k->traits());
    e.backend = std::string(to_string(k->backend()));
    std::string list;
    for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
    e.checks.push_back({CheckKind::Envelope, false,
                        fmt::format("no non-vacuous case exercised: {} (the suite certifies nothing about {})", list,
                                    missing.size() == 1 ? "it" : "them")});
    decide(e);
    r.cases.push_back(std::move(e));
  }
}

std::string GemmOperation::register_mutant(const std::string& kernel, Fault f, const FaultOptions& opt) const {
  return register_gemm_mutant(kernel, f, opt);
}

// ---- The case data (gemm_operation.hpp: gemm_case_data) ----
namespace {
std::size_t memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page) : std::size_t{4} << 30;
}
}  // namespace

std::size_t gemm_case_cache_default_budget() { return gemm_case_cache_share(1); }

std::size_t gemm_case_cache_share(int processes) {
  return std::min(memory_bytes() / 4 / static_cast<std::size_t>(std::max(processes, 1)), std::size_t{8} << 30);
}

namespace {

std::size_t budget_bytes() {
  if (const char* v = std::getenv("FPCERT_CASE_CACHE_MB")) {
    char* end = nullptr;
    const unsigned long long mb = std::strtoull(v, &end, 10);
    if (end != v && *end == '\0') return static_cast<std::size_t>(mb) << 20;
  }
  return gemm_case_cache_default_budget();
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
std::size_t bytes_of(const Emulated& e) { return e.codes.size() * sizeof(std::uint64_t) + e.declined.size() + 256; }
std::size_t bytes_of(const BlockReference& r) { return (r.a.data.size() + r.b.data.size()) * sizeof(double) + bytes_of(r.ref); }

// ---- The case data in the host store (suites/run/host_store.hpp): what a --devices worker reads instead of making ----
void put(StoreWriter& w, const Matrix& m) {
  w.pod(m.rows), w.pod(m.cols), w.vec(m.data);
}
Matrix get_matrix(StoreReader& r) {
  Matrix m;
  m.rows = r.pod<std::int64_t>(), m.cols = r.pod<std::int64_t>(), m.data = r.vec<double>();
  if (static_cast<std::int64_t>(m.data.size()) != m.rows * m.cols) throw std::runtime_error("a matrix's size is not rows x cols");
  return m;
}
void put(StoreWriter& w, const std::map<std::string, double>& m) {
  w.pod(static_cast<std::uint64_t>(m.size()));
  for (const auto& [k, v] : m) w.str(k), w.pod(v);
}
std::map<std::string, double> get_map(StoreReader& r) {
  std::map<std::string, double> m;
  for (auto n = r.pod<std::uint64_t>(); n > 0; --n) {
    std::string k = r.str();
    m[std::move(k)] = r.pod<double>();
  }
  return m;
}
/// GemmRefInfo's names are static strings (a process's own addresses): written as text, read back as one kept copy.
const char* interned(const std::string& s) {
  static std::mutex mu;
  static std::set<std::string> kept;
  std::lock_guard<std::mutex> lock(mu);
  return kept.insert(s).first->c_str();
}
void put(StoreWriter& w, const Problem& p) {
  w.str(p.spec), w.str(p.family), w.pod(p.seed), w.str(std::string(p.source->tag)), w.pod(p.m), w.pod(p.n), w.pod(p.k);
  put(w, p.a), put(w, p.b), w.pod(p.dot), put(w, p.achieved), put(w, p.not_representable);
}
Problem get_problem(StoreReader& r) {
  Problem p;
  p.spec = r.str(), p.family = r.str(), p.seed = r.pod<std::uint64_t>();
  p.source = find_format(r.str());
  if (!p.source) throw std::runtime_error("an unknown source format");
  p.m = r.pod<std::int64_t>(), p.n = r.pod<std::int64_t>(), p.k = r.pod<std::int64_t>();
  p.a = get_matrix(r), p.b = get_matrix(r), p.dot = r.pod<bool>();
  p.achieved = get_map(r), p.not_representable = get_map(r);
  return p;
}
void put(StoreWriter& w, const GemmRef& g) {
  w.pod(g.m), w.pod(g.n), w.vec(g.c), w.vec(g.abs_sum), w.vec(g.status), w.pod(g.fallbacks);
  const GemmRefInfo& i = g.info;
  w.str(i.path), w.pod(i.slices), w.pod(i.beta), w.pod(i.kblock), w.pod(i.gemms), w.pod(i.uncaptured_a), w.pod(i.uncaptured_b);
  w.pod(i.fast_elements), w.pod(i.exact_elements), w.pod(i.nonfinite), w.str(i.engine), w.pod(i.sample_checked);
}
GemmRef get_ref(StoreReader& r) {
  GemmRef g;
  g.m = r.pod<std::int64_t>(), g.n = r.pod<std::int64_t>();
  g.c = r.vec<RefValue, ResultAllocator<RefValue>>(), g.abs_sum = r.vec<double, ResultAllocator<double>>();
  g.status = r.vec<std::uint8_t, ResultAllocator<std::uint8_t>>(), g.fallbacks = r.pod<std::int64_t>();
  GemmRefInfo& i = g.info;
  i.path = interned(r.str()), i.slices = r.pod<int>(), i.beta = r.pod<int>(), i.kblock = r.pod<std::int64_t>(), i.gemms = r.pod<int>();
  i.uncaptured_a = r.pod<std::int64_t>(), i.uncaptured_b = r.pod<std::int64_t>(), i.fast_elements = r.pod<std::int64_t>();
  i.exact_elements = r.pod<std::int64_t>(), i.nonfinite = r.pod<std::int64_t>(), i.engine = interned(r.str());
  i.sample_checked = r.pod<std::int64_t>();
  return g;
}
void put(StoreWriter& w, const GemmCaseData& d) {
  put(w, d.problem), put(w, d.ref);
  w.pod(d.sample.has_value());
  if (d.sample) w.vec(d.sample->rows), w.vec(d.sample->cols);
  w.pod(d.batched.has_value());
  if (d.batched) {
    w.pod(static_cast<std::uint64_t>(d.batched->problems.size()));
    for (const Problem& p : d.batched->problems) put(w, p);
    w.pod(static_cast<std::uint64_t>(d.batched->refs.size()));
    for (const GemmRef& g : d.batched->refs) put(w, g);
  }
}
GemmCaseData get_case_data(StoreReader& r) {
  GemmCaseData d;
  d.problem = get_problem(r), d.ref = get_ref(r);
  if (r.pod<bool>()) d.sample = GemmSample{r.vec<std::int64_t>(), r.vec<std::int64_t>()};
  if (r.pod<bool>()) {
    d.batched.emplace();
    for (auto b = r.pod<std::uint64_t>(); b > 0; --b) d.batched->problems.push_back(get_problem(r));
    for (auto b = r.pod<std::uint64_t>(); b > 0; --b) d.batched->refs.push_back(get_ref(r));
  }
  return d;
}
void put(StoreWriter& w, const BlockReference& b) {
  put(w, b.a), put(w, b.b), w.pod(b.a_tensor_scale), w.pod(b.b_tensor_scale), put(w, b.ref);
  for (const std::int64_t v : {b.elements, b.inexact, b.saturated, b.flushed, b.nonfinite_blocks, b.blocks}) w.pod(v);
  w.pod(b.a_operand_exact), w.pod(b.b_operand_exact);
}
BlockReference get_block_reference(StoreReader& r) {
  BlockReference b;
  b.a = get_matrix(r), b.b = get_matrix(r), b.a_tensor_scale = r.pod<double>(), b.b_tensor_scale = r.pod<double>(), b.ref = get_ref(r);
  for (std::int64_t* v : {&b.elements, &b.inexact, &b.saturated, &b.flushed, &b.nonfinite_blocks, &b.blocks}) *v = r.pod<std::int64_t>();
  b.a_operand_exact = r.pod<bool>(), b.b_operand_exact = r.pod<bool>();
  return b;
}

/// make(), or the host store's copy under `key` (a --devices worker's: another worker made it), timed in `stats`.
template <class T>
std::shared_ptr<const T> made_or_read(const std::string& key, const std::function<std::shared_ptr<const T>()>& make,
                                      GemmCaseCacheStats& stats, std::mutex& mu) {
  const auto t0 = std::chrono::steady_clock::now();
  StoreFetch how = StoreFetch::Made;
  std::shared_ptr<const T> d;
  if constexpr (std::is_same_v<T, Emulated>) {
    d = make();  // a kernel's own (its unit runs in one worker): nothing another process would share
  } else {
    d = host_store_get<std::shared_ptr<const T>>(
        host_store_dir(), key, make, [](const std::shared_ptr<const T>& v, StoreWriter& w) { put(w, *v); },
        [](StoreReader& r) -> std::shared_ptr<const T> {
          if constexpr (std::is_same_v<T, GemmCaseData>) return std::make_shared<const GemmCaseData>(get_case_data(r));
          else return std::make_shared<const BlockReference>(get_block_reference(r));
        },
        &how);
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::lock_guard<std::mutex> lock(mu);
  if (how == StoreFetch::Read) ++stats.store_reads, stats.read_seconds += s;
  else stats.made_seconds += s;
  return d;
}

struct Cache {
  std::mutex mu;
  std::list<std::string> lru;  // front: most recently used
  struct Entry {
    std::shared_ptr<const void> data;  // a GemmCaseData, a BlockReference or an Emulated, as its key says
    std::size_t bytes = 0;
    std::list<std::string>::iterator at;
  };
  std::map<std::string, Entry> entries;
  GemmCaseCacheStats stats;
  bool budget_read = false;
};
/// The cache, its budget read once since the last clear (the caller holds mu).
Cache& cache_locked(Cache& c) {
  if (!c.budget_read) c.stats.budget = budget_bytes(), c.budget_read = true;
  return c;
}
Cache& cache() {
  static Cache c;
  return c;
}

/// The key of a case's data: everything that decides its bits (the spec, the sample, the batches); the reference
/// engine is named too (its results are the CPU oracle's bit for bit, but GemmRefInfo::engine reports who made them).
std::string case_data_key(const CaseSpec& c, const SampleSpec& sspec) {
  const std::shared_ptr<ExactGemmEngine> engine = default_gemm_engine();
  return fmt::format("{}|sample {} {} {}|batch {} {} {} {}|{}", c.spec, sspec.on, sspec.rows, sspec.cols, c.batch.count, c.batch.gap_rows,
                     c.batch.broadcast_a, c.batch.broadcast_b, engine ? engine->name() : "default");
}

/// The cache's entry under key, or what make() returns, kept (least recently used entries leave past the budget).
/// A key names one type of entry (the data's keys and the block references' differ in their tails).
template <class T>
std::shared_ptr<const T> cached(const std::string& key, const std::function<std::shared_ptr<const T>()>& make) {
  Cache& k = cache();
  {
    std::lock_guard<std::mutex> lock(k.mu);
    cache_locked(k);
    if (const auto it = k.entries.find(key); it != k.entries.end()) {
      k.lru.splice(k.lru.begin(), k.lru, it->second.at);
      ++(std::is_same_v<T, Emulated> ? k.stats.emulation_hits : k.stats.hits);
      return std::static_pointer_cast<const T>(it->second.data);
    }
    ++(std::is_same_v<T, Emulated> ? k.stats.emulation_misses : k.stats.misses);
  }
  std::shared_ptr<const T> d = made_or_read<T>(key, make, k.stats, k.mu);
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
  return d;
}

}  // namespace

std::shared_ptr<const GemmCaseData> gemm_case_data(const CaseSpec& c, const SampleSpec& sspec) {
  struct Timed {  // the call's time, hit or miss, in the stats
    std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
    ~Timed() {
      Cache& k = cache();
      std::lock_guard<std::mutex> lock(k.mu);
      k.stats.case_data_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
  } timed;
  return cached<GemmCaseData>(case_data_key(c, sspec), [&] {
    auto d = std::make_shared<GemmCaseData>();
    d->problem = generate(c.spec);
    if (sspec.active()) d->sample = choose_gemm_sample(d->problem.m, d->problem.n, d->problem.k, sspec, d->problem.seed);
    d->ref = d->sample ? sampled_reference(d->problem, *d->sample) : gemm_reference(d->problem.a.view(), d->problem.b.view());
    if (c.batch.active()) d->batched = batch_problems(d->problem, c.batch);
    return d;
  });
}

std::shared_ptr<const GemmRef> gemm_inputs_reference(const CaseSpec& c, const SampleSpec& sspec, const GemmCaseData& data, const Format& fa,
                                                     const Format& fb, Rounding r) {
  const std::string key = fmt::format("{}|inputs {} {} {}", case_data_key(c, sspec), fa.tag, fb.tag, static_cast<int>(r));
  const std::shared_ptr<const GemmCaseData> d = cached<GemmCaseData>(key, [&] {
    auto e = std::make_shared<GemmCaseData>();  // the reference alone (no problem): what grade's ref' is
    const Problem& p = data.problem;
    const std::vector<double> a = round_values(p.a.data, fa, r), b = round_values(p.b.data, fb, r);
    e->ref = gemm_reference(MatrixView::row_major(a.data(), p.m, p.k), MatrixView::row_major(b.data(), p.k, p.n));
    return e;
  });
  return {d, &d->ref};
}

std::shared_ptr<const BlockReference> gemm_block_reference(const CaseSpec& c, const SampleSpec& sspec, const GemmCaseData& data,
                                                           const KernelTraits& t) {
  const BlockScaling& q = t.block;
  const std::string key = fmt::format("{}|block {} {} {} | {} {} {} {} | {} {}", case_data_key(c, sspec), t.a_input->tag, t.b_input->tag,
                                      static_cast<int>(t.input_rounding), q.format ? q.format->tag : "none", static_cast<int>(q.rule),
                                      static_cast<int>(q.rounding), q.block, t.a_operand->tag, t.b_operand->tag);
  return cached<BlockReference>(key, [&] { return std::make_shared<const BlockReference>(block_reference(t, data.problem)); });
}

std::shared_ptr<const Emulated> gemm_emulation(const CaseSpec& c, const SampleSpec& sspec, const std::string& kernel, const KernelTraits& t,
                                               const std::function<Emulated()>& make) {
  const std::string key = fmt::format("{}|emulation {}|{}", case_data_key(c, sspec), kernel, describe_traits(t));
  return cached<Emulated>(key, [&] { return std::make_shared<const Emulated>(make()); });
}

GemmCaseCacheStats gemm_case_cache_stats() {
  Cache& k = cache();
  std::lock_guard<std::mutex> lock(k.mu);
  cache_locked(k).stats.entries = k.entries.size();
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
