// tests/suites/case_data_test.cpp — the process's cache of GEMM cases' problems and references
// (suites/ops/gemm/gemm_operation.hpp, gemm_case_data): a second run of the same cases takes every reference from it, a mutation campaign
// after a certify run computes none, and the results are the same bit for bit with and without it.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "results/results_json.hpp"
#include "suites/mutation/mutation.hpp"
#include "suites/ops/gemm/gemm_operation.hpp"
#include "suites/run/suite.hpp"

using namespace fpcert;

namespace {

/// What a case's result says, without its times (they differ from run to run).
std::string verdicts(const RunResult& r) {
  std::string s;
  for (const CaseResult& c : r.cases) {
    nlohmann::json j = to_json(c);
    for (const char* t : {"time_ms_mean", "time_ms_median", "tflops", "wall_seconds", "speed_ratio"}) j.erase(t);
    s += j.dump() + "\n";
  }
  return s;
}

RunResult run(const char* kernel, const char* cases) {
  SuiteRunOptions o;
  o.only_case = cases;
  return run_suite(*find_suite("certify"), {kernel}, o);
}

/// Sets FPCERT_CASE_CACHE_MB for the test's scope and starts the cache afresh (it reads the budget once).
struct Budget {
  explicit Budget(const char* mb) {
    setenv("FPCERT_CASE_CACHE_MB", mb, 1);
    clear_gemm_case_cache();
  }
  ~Budget() {
    unsetenv("FPCERT_CASE_CACHE_MB");
    clear_gemm_case_cache();
  }
};

}  // namespace

TEST_CASE("the GEMM case cache: a second run hits for every case, the results are the same bits as without it") {
  std::string cached, uncached;
  {
    const Budget b("512");
    const RunResult first = run("model_gemm_f32_strided", "layout_*");
    const GemmCaseCacheStats s1 = gemm_case_cache_stats();
    const auto n = static_cast<std::int64_t>(first.cases.size());
    REQUIRE(n >= 4);
    CHECK(s1.misses == n);
    CHECK(s1.hits == 0);
    CHECK(s1.entries == static_cast<std::size_t>(n + s1.emulation_misses));  // and the bitwise tier's emulations
    CHECK(s1.bytes <= s1.budget);
    const RunResult second = run("model_gemm_f32_strided", "layout_*");
    const GemmCaseCacheStats s2 = gemm_case_cache_stats();
    CHECK(s2.misses == n);
    CHECK(s2.hits == n);
    cached = verdicts(second);
    CHECK(cached == verdicts(first));
    // Another kernel on the same cases (a multi-kernel run, or the next campaign of a main job): every case whose spec
    // the suite gives it unchanged hits (the suite tailors some specs to a kernel's formats: those are its own).
    const RunResult other = run("model_gemm_f16_f32acc", "layout_*");
    std::int64_t shared = 0;
    for (const CaseResult& c : other.cases)
      for (const CaseResult& f : first.cases) shared += c.case_id == f.case_id && c.spec == f.spec;
    CHECK(shared >= n / 2);
    const GemmCaseCacheStats s3 = gemm_case_cache_stats();
    CHECK(s3.hits == n + shared);
    CHECK(s3.misses == n + (static_cast<std::int64_t>(other.cases.size()) - shared));
  }
  {
    const Budget b("0");  // off: every run makes its data
    const RunResult r = run("model_gemm_f32_strided", "layout_*");
    const GemmCaseCacheStats s = gemm_case_cache_stats();
    CHECK(s.entries == 0);
    CHECK(s.hits == 0);
    uncached = verdicts(r);
  }
  CHECK(cached == uncached);
}

TEST_CASE("the GEMM case cache: a mutation campaign after the certify run computes no reference") {
  const Budget b("512");
  const RunResult r = run("model_gemm_f32", "uniform*");
  const GemmCaseCacheStats before = gemm_case_cache_stats();
  REQUIRE(before.misses == static_cast<std::int64_t>(r.cases.size()));
  MutationOptions mo;
  mo.run.only_case = "uniform*";
  const MutationScore s = run_mutation(*find_suite("certify"), "model_gemm_f32", mo);
  CHECK(s.count(MutantOutcome::Killed) > 0);
  const GemmCaseCacheStats after = gemm_case_cache_stats();
  CHECK(after.misses == before.misses);  // every case the campaign ran was made by the certify run
  CHECK(after.hits > before.hits);
}

TEST_CASE("the GEMM case cache: the reference of the inputs as a kernel receives them is made once per case and formats") {
  // fp16 inputs from fp32 values: the tiers grade against ref', the exact product of the rounded inputs
  // (suites/verdict/grade.hpp, GradeInput::inputs_ref). Two kernels with fp16 inputs share it; an fp32 kernel needs none.
  std::string cached_a, cached_b, uncached_a, uncached_b;
  {
    const Budget b("512");
    const RunResult f32 = run("model_gemm_f32", "uniform*");
    const auto n = static_cast<std::int64_t>(f32.cases.size());
    REQUIRE(n >= 2);
    const GemmCaseCacheStats s0 = gemm_case_cache_stats();
    CHECK(s0.misses == n);  // the cases' data only: fp32 inputs reach an fp32 kernel unrounded
    const RunResult a = run("model_gemm_f16_f32acc", "uniform*");
    REQUIRE(a.cases.size() == f32.cases.size());
    const GemmCaseCacheStats s1 = gemm_case_cache_stats();
    CHECK(s1.misses == 2 * n);  // one ref' per case
    CHECK(s1.hits == n);        // the cases' data
    const RunResult b2 = run("model_gemm_f16_f16acc", "uniform*");
    const GemmCaseCacheStats s2 = gemm_case_cache_stats();
    CHECK(s2.misses == 2 * n);  // nothing made: data and ref' shared
    CHECK(s2.hits == 3 * n);
    CHECK(s2.bytes <= s2.budget);
    cached_a = verdicts(a);
    cached_b = verdicts(b2);
  }
  {
    const Budget b("0");
    uncached_a = verdicts(run("model_gemm_f16_f32acc", "uniform*"));
    uncached_b = verdicts(run("model_gemm_f16_f16acc", "uniform*"));
  }
  CHECK(cached_a == uncached_a);
  CHECK(cached_b == uncached_b);
}

TEST_CASE("the GEMM case cache: a block-scaled kernel's reference is made once per case and quantizer, shared by its mutants") {
  // A block-scaled kernel is graded against the exact product of its quantized operands (suites/verdict/block_reference.hpp):
  // the second run and the campaign's mutants (which claim the kernel's traits) take it from the cache; a kernel with
  // another scale rule quantizes otherwise and makes its own.
  const char* kernel = "model_gemm_mxfp4_floor_deqbf16_f32acc";
  std::string cached, uncached;
  {
    const Budget b("512");
    const RunResult first = run(kernel, "uniform*");
    const auto n = static_cast<std::int64_t>(first.cases.size());
    REQUIRE(n >= 2);
    std::int64_t graded = 0;
    for (const CaseResult& c : first.cases) graded += c.status == CaseStatus::Pass;
    REQUIRE(graded >= 1);
    const GemmCaseCacheStats s1 = gemm_case_cache_stats();
    CHECK(s1.misses >= n + graded);  // each case's data, and a block reference for each case that reached the kernel
    const RunResult second = run(kernel, "uniform*");
    const GemmCaseCacheStats s2 = gemm_case_cache_stats();
    CHECK(s2.misses == s1.misses);  // nothing made again
    CHECK(s2.hits >= n + graded);
    cached = verdicts(second);
    CHECK(cached == verdicts(first));
    MutationOptions mo;
    mo.run.only_case = "uniform*";
    mo.faults = {Fault::ZeroRow, Fault::WritesNan};
    const MutationScore ms = run_mutation(*find_suite("certify"), kernel, mo);
    CHECK(ms.count(MutantOutcome::Killed) == 2);
    CHECK(gemm_case_cache_stats().misses == s1.misses);  // the mutants quantize as the kernel declares: no reference made
    run("model_gemm_mxfp4_rceil_deqbf16_f32acc", "uniform*");
    CHECK(gemm_case_cache_stats().misses > s1.misses);  // another scale rule: its own block references
  }
  {
    const Budget b("0");
    uncached = verdicts(run(kernel, "uniform*"));
  }
  CHECK(cached == uncached);
}

TEST_CASE("the GEMM case cache: the bitwise tier's emulation is made once per case and kernel, shared by its mutants") {
  // A campaign grades every live mutant of a kernel on one case; the mutants declare the kernel's traits, so the
  // declared arithmetic's output (suites/verdict/grade.hpp, GradeInput::emulated) is the kernel's. Another kernel
  // (another order) emulates its own; the verdicts are the same bits with the cache off.
  const char* kernel = "model_gemm_f32";
  std::string cached, uncached, mutants_cached, mutants_uncached;
  auto tier_bitwise = [](const RunResult& r) {
    std::int64_t n = 0;
    for (const CaseResult& c : r.cases) n += c.tier == Tier::Bitwise;
    return n;
  };
  auto campaign = [&] {
    MutationOptions mo;
    mo.run.only_case = "uniform*";
    mo.faults = {Fault::OutputTowardZero, Fault::AccTowardZero, Fault::ZeroRow};
    mo.all_cases = true;  // every mutant on every case: each case graded three times
    const MutationScore ms = run_mutation(*find_suite("certify"), kernel, mo);
    std::string s;
    for (const MutantResult& m : ms.mutants) s += m.mutant + " " + std::string(to_string(m.outcome)) + " " + m.detail + "\n";
    return s;
  };
  {
    const Budget b("512");
    const RunResult first = run(kernel, "uniform*");
    const std::int64_t n = tier_bitwise(first);
    REQUIRE(n >= 2);  // the cases must reach the emulator, or this test says nothing
    const GemmCaseCacheStats s1 = gemm_case_cache_stats();
    CHECK(s1.emulation_misses == n);
    CHECK(s1.emulation_hits == 0);
    const RunResult second = run(kernel, "uniform*");
    const GemmCaseCacheStats s2 = gemm_case_cache_stats();
    CHECK(s2.emulation_misses == n);
    CHECK(s2.emulation_hits == n);
    cached = verdicts(second);
    CHECK(cached == verdicts(first));
    mutants_cached = campaign();
    const GemmCaseCacheStats s3 = gemm_case_cache_stats();
    CHECK(s3.emulation_misses == n);  // the mutants' gradings made no emulation
    CHECK(s3.emulation_hits >= s2.emulation_hits + 2 * n);
    run("model_gemm_f32_pairwise", "uniform*");
    CHECK(gemm_case_cache_stats().emulation_misses > n);  // another order: its own
  }
  {
    const Budget b("0");
    uncached = verdicts(run(kernel, "uniform*"));
    mutants_uncached = campaign();
    CHECK(gemm_case_cache_stats().emulation_hits == 0);
  }
  CHECK(cached == uncached);
  CHECK(mutants_cached == mutants_uncached);
}

TEST_CASE("the GEMM case cache: processes sharing a host get their part of a quarter of the memory, at most 8 GiB each") {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  REQUIRE(pages > 0);
  REQUIRE(page > 0);
  const std::size_t quarter = static_cast<std::size_t>(pages) * static_cast<std::size_t>(page) / 4, cap = std::size_t{8} << 30;
  CHECK(gemm_case_cache_default_budget() == std::min(quarter, cap));
  for (const int n : {1, 2, 8, 16, 64}) {
    const std::size_t share = gemm_case_cache_share(n);
    CHECK(share == std::min(quarter / static_cast<std::size_t>(n), cap));
    CHECK(share * static_cast<std::size_t>(n) <= quarter);          // together no more than a quarter of the memory
    CHECK(share >= gemm_case_cache_default_budget() / static_cast<std::size_t>(n));  // never less than the 8 GiB divided
  }
  CHECK(gemm_case_cache_share(0) == gemm_case_cache_share(1));
}

TEST_CASE("the host store: another process reads the cases' problems and references the first made, the verdicts the same bits") {
  // A --devices worker (suites/run/host_store.hpp) reads what another made: a case's problem and exact reference, the
  // reference of its rounded inputs, a block-scaled kernel's reference, strided batches. A process that reads from the
  // store must grade exactly as one that makes everything itself. clear_gemm_case_cache() stands for the next process.
  std::string tmpl = (std::filesystem::temp_directory_path() / "fpcert-case-store-XXXXXX").string();
  REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
  struct Runs {
    const char* kernel;
    const char* cases;
  };
  for (const Runs x : {Runs{"model_gemm_f16_f32acc", "uniform*"}, Runs{"model_gemm_mxfp8_e4m3_floor_deqbf16_f32acc", "uniform*"},
                       Runs{"model_gemm_f32_strided", "batch*"}}) {
    CAPTURE(x.kernel);
    const std::string dir = tmpl + "/" + x.kernel;  // a store of its own: nothing made by the kernel before
    std::filesystem::create_directories(dir);
    unsetenv("FPCERT_CASE_STORE");
    std::string alone;
    {
      const Budget b("512");
      alone = verdicts(run(x.kernel, x.cases));
      CHECK(gemm_case_cache_stats().store_reads == 0);
    }
    setenv("FPCERT_CASE_STORE", dir.c_str(), 1);
    {
      const Budget b("512");
      const std::string maker = verdicts(run(x.kernel, x.cases));  // makes and writes
      const GemmCaseCacheStats s1 = gemm_case_cache_stats();
      CHECK(s1.store_reads == 0);
      CHECK(s1.misses >= 2);
      CHECK(maker == alone);
      clear_gemm_case_cache();  // the next process
      const std::string reader = verdicts(run(x.kernel, x.cases));
      const GemmCaseCacheStats s2 = gemm_case_cache_stats();
      CHECK(s2.misses == s1.misses);
      CHECK(s2.store_reads == s2.misses);  // every case's data and reference read, none made
      CHECK(reader == alone);
    }
    unsetenv("FPCERT_CASE_STORE");
  }
  std::filesystem::remove_all(tmpl);
}
