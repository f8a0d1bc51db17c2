// suites/experiments/presets.cpp — the preset list, the shared metric definitions, the panorama source's
// split-product scalar experiment and its GEMM experiments A/B/C (docs/experiments.md).
#include "suites/experiments/presets.hpp"

#include <fmt/format.h>
#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/error.hpp"
#include "base/parallel.hpp"
#include "base/philox.hpp"
#include "results/results_json.hpp"

namespace fpcert {

const std::vector<PresetInfo>& presets() {
  static const std::vector<PresetInfo> p = {
      {"experiment split-scalar", "panorama", "the panorama source's split-product table",
       "log-uniform operands s 2^u, u in [-60, 60]; round-to-nearest-even slices; the source's term orders; statistics "
       "over nonzero finite errors, P99 by linear interpolation; 1xTF32 rounds to nearest-even"},
      {"experiment three-pipeline", "course", "the reference course's three-pipeline table",
       "square M = N = K in {256, 1024, 2048}; A, B a repeating pattern of small non-negative integers times 0.013 / 0.017; "
       "fp64 reference; the course's gate max(table rtol, 4 eps sqrt(K)); cuBLAS pipelines on the device"},
      {"experiment accumulation", "tf32-article", "the TF32 article's accumulation experiment",
       "the fp16 running sum of 1.0; K = 256 .. 65536 through TF32, FP16, BF16 inputs with fp32 accumulation and FP16 with "
       "fp16 accumulation; relative Frobenius error; fitted growth exponent per pipeline"},
      {"run-suite accuracy-vs-k", "panorama", "the panorama source's GEMM experiment A (accuracy vs K)",
       "M = N = 1024 on every backend; E_F and E_max (both infinity norms) beside fpcert's metrics"},
      {"run-suite exponent-range", "panorama", "the panorama source's GEMM experiment B (exponent range)",
       "M = N = K = 1024; the source's fixed exponent ranges (not fpcert's range tailored to the kernels' formats); E_F, E_max"},
      {"run-suite cancellation", "panorama", "the panorama source's GEMM experiment C (cancellation)",
       "M = N = 1024; condition numbers 1e2 .. 1e16 per element and spectra of condition 1 .. 1e8; E_F, E_max"},
  };
  return p;
}

const PresetInfo& find_preset(const std::string& command, const std::string& name) {
  std::string valid;
  for (const auto& p : presets())
    if (p.command == command) {
      if (p.name == name) return p;
      valid += (valid.empty() ? "" : ", ") + p.name;
    }
  throw InputError(fmt::format("`fpcert {}` has no preset '{}' ({})", command, name,
                               valid.empty() ? "it has no presets" : "valid: " + valid));
}

// ---- metric definitions ----

double quantile_linear(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return std::numeric_limits<double>::quiet_NaN();
  const double h = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(h));
  if (lo + 1 >= sorted.size()) return sorted.back();
  return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[lo + 1] - sorted[lo]);
}

ErrorSummary summarize_nonzero_finite(std::vector<double> errors) {
  ErrorSummary s;
  s.samples = static_cast<std::int64_t>(errors.size());
  std::size_t kept = 0;
  for (double e : errors) {
    if (!std::isfinite(e)) ++s.nonfinite;
    else if (e == 0) ++s.exact;
    else errors[kept++] = e;
  }
  errors.resize(kept);
  s.counted = static_cast<std::int64_t>(kept);
  std::sort(errors.begin(), errors.end());
  s.median = quantile_linear(errors, 0.5);
  s.p99 = quantile_linear(errors, 0.99);
  s.max = errors.empty() ? std::numeric_limits<double>::quiet_NaN() : errors.back();
  return s;
}

PowerFit fit_power_law(const std::vector<double>& x, const std::vector<double>& y) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  int n = 0;
  for (std::size_t i = 0; i < std::min(x.size(), y.size()); ++i) {
    if (!(x[i] > 0) || !(y[i] > 0) || !std::isfinite(x[i]) || !std::isfinite(y[i])) continue;
    const double lx = std::log2(x[i]), ly = std::log2(y[i]);
    sx += lx, sy += ly, sxx += lx * lx, sxy += lx * ly;
    ++n;
  }
  PowerFit f;
  f.points = n;
  const double den = n * sxx - sx * sx;
  if (n < 2 || den == 0) {
    f.exponent = f.coefficient = std::numeric_limits<double>::quiet_NaN();
    return f;
  }
  f.exponent = (n * sxy - sx * sy) / den;
  f.coefficient = std::exp2((sy - f.exponent * sx) / n);
  return f;
}

// ---- split-scalar --preset panorama ----

std::vector<std::pair<int, int>> triangular_terms(int levels) {
  std::vector<std::pair<int, int>> t;
  for (int l = 0; l < levels; ++l)
    for (int i = 0; i <= l; ++i) t.emplace_back(i, l - i);
  return t;
}

std::vector<std::pair<int, int>> all_terms_descending(int slices) {
  std::vector<std::pair<int, int>> t;
  for (int l = 2 * (slices - 1); l >= 0; --l)
    for (int i = 0; i < slices; ++i)
      if (l - i >= 0 && l - i < slices) t.emplace_back(i, l - i);
  return t;
}

const std::vector<SplitScheme>& panorama_split_schemes() {
  // operand_u is what the bound model would use (kernels/cpu/split.cpp); the scalar experiment does not read it.
  static const std::vector<SplitScheme> s = {
      {"1xtf32", &tf32, Rounding::NearestEven, 1, triangular_terms(1), std::ldexp(1.0, -11), "one tf32 slice, rn"},
      {"3xtf32", &tf32, Rounding::NearestEven, 2, triangular_terms(2), std::ldexp(1.0, -21), "levels 0, 1 of two tf32 slices"},
      {"1xbf16", &bf16, Rounding::NearestEven, 1, triangular_terms(1), std::ldexp(1.0, -8), "one bf16 slice"},
      {"3xbf16", &bf16, Rounding::NearestEven, 2, triangular_terms(2), std::ldexp(1.0, -14), "levels 0, 1 of two bf16 slices"},
      {"6xbf16", &bf16, Rounding::NearestEven, 3, triangular_terms(3), std::ldexp(1.0, -23), "levels 0, 1, 2 of three bf16 slices"},
      {"9xbf16", &bf16, Rounding::NearestEven, 3, all_terms_descending(3), std::ldexp(1.0, -24), "all nine, level 4 down to 0"},
  };
  return s;
}

namespace {
constexpr std::uint64_t kPanoramaStream = 0x70616e6f;  // "pano": Philox counter_hi of the operands
}

float panorama_operand(std::uint64_t seed, std::uint64_t index, int which) {
  const auto w = philox_4x32(seed, kPanoramaStream, index);
  const std::uint64_t bits = which == 0 ? (static_cast<std::uint64_t>(w[1]) << 32) | w[0] : (static_cast<std::uint64_t>(w[3]) << 32) | w[2];
  const double U = static_cast<double>(bits >> 11) * 0x1p-53;  // 53 random bits, exact
  const double u = -60.0 + 120.0 * U;                           // two IEEE roundings: the u this pair uses
  const bool negative = bits & 1;                               // a bit the 53 above do not use
  // 2^u rounded once to fp32 (24 bits): |u| <= 60, far inside fp32's normal range.
  mpfr_t x, y;
  mpfr_init2(x, 53);
  mpfr_init2(y, 24);
  mpfr_set_d(x, u, MPFR_RNDN);  // exact
  mpfr_exp2(y, x, MPFR_RNDN);
  const float v = mpfr_get_flt(y, MPFR_RNDN);  // exact: y has 24 bits
  mpfr_clear(x);
  mpfr_clear(y);
  return negative ? -v : v;
}

std::vector<SplitScalarPresetRow> split_scalar_panorama(std::uint64_t pairs, std::uint64_t seed, unsigned threads) {
  std::vector<float> a(pairs), b(pairs);
  parallel_for(pairs, 1 << 12, [&](std::uint64_t lo, std::uint64_t hi, unsigned) {
    for (std::uint64_t i = lo; i < hi; ++i) {
      a[i] = panorama_operand(seed, i, 0);
      b[i] = panorama_operand(seed, i, 1);
    }
    // mpfr_exp2 caches constants per thread; a worker thread ends after its chunks, so free them here
    // (LeakSanitizer found the 592 bytes a run left behind).
    mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE);
  }, threads);
  std::vector<std::string> methods = {"fp32"};
  for (const auto& s : panorama_split_schemes()) methods.push_back(s.name);
  std::vector<SplitScalarPresetRow> rows;
  std::vector<double> rel(pairs);
  for (const auto& m : methods) {
    const SplitScheme* sc = nullptr;
    for (const auto& s : panorama_split_schemes())
      if (s.name == m) sc = &s;
    std::vector<std::int64_t> zeros(thread_count() + 1, 0);
    parallel_for(pairs, 1 << 14, [&](std::uint64_t lo, std::uint64_t hi, unsigned w) {
      for (std::uint64_t i = lo; i < hi; ++i) {
        const double exact = static_cast<double>(a[i]) * static_cast<double>(b[i]);  // exact: 24 + 24 bits
        const float p = sc ? split_product(*sc, a[i], b[i]) : a[i] * b[i];
        zeros[w] += p == 0.0f;
        rel[i] = std::fabs(static_cast<double>(p) - exact) / std::fabs(exact);
      }
    }, threads);
    SplitScalarPresetRow r;
    r.method = m;
    r.error = summarize_nonzero_finite(rel);
    for (auto z : zeros) r.zero_products += z;
    rows.push_back(r);
  }
  return rows;
}

ExperimentRecord split_scalar_panorama_record(const std::vector<SplitScalarPresetRow>& rows, std::uint64_t pairs, std::uint64_t seed) {
  ExperimentRecord rec;
  rec.experiment = "split-scalar";
  rec.preset = "panorama";
  rec.source = find_preset("experiment split-scalar", "panorama").source;
  rec.device = "host CPU";
  rec.method = fmt::format(
      "{} pairs (a, b), Philox seed {}. Each operand is s 2^u with s = +-1 equally likely and u uniform on [-60, 60] "
      "(continuous: u = -60 + 120 U, U from 53 random bits), so significands are log-uniform; 2^u is rounded once to fp32 "
      "(MPFR). Slices: hi = the value rounded to p significant bits by round-to-nearest-even (p = 11 for TF32, 8 for BF16), "
      "residual = fp32(r - hi), repeated. The triangular schemes 1x, 3x, 6x keep slice-index levels 0; 0-1; 0-2 (1, 3, 6 "
      "products), each product rounded once in fp32, added in fp32 round-to-nearest from level 0 upwards and within a level "
      "by increasing index of a's slice; 9xBF16 adds all nine products from level 4 down to level 0 (smallest first), within "
      "a level by increasing index of a's slice. Reference: the fp64 product of the fp32 operands (exact). Relative error "
      "|p - ab| / |ab|; median, 99th percentile (linear interpolation between closest ranks) and maximum over the products "
      "whose error is nonzero and finite only; 'exact' counts those left out.",
      pairs, seed);
  ExperimentTable t;
  t.title = "Relative error of the product";
  t.note = "fpcert's default (fpcert experiment split-scalar) differs: integer exponents with uniform 24-bit significands, "
           "statistics over every product (exact ones included), 1xTF32 rounded nearest-away (cvt.rna), and fpcert's "
           "kernel term orders (docs/emulation.md).";
  t.columns = {{"method", "method", ""},        {"median", "median", "e"}, {"p99", "P99", "e"},
               {"max", "max", "e"},             {"counted", "nonzero errors", "int"},
               {"exact", "exact (left out)", "int"}, {"zero_products", "product 0", "int"}};
  for (const auto& r : rows)
    t.rows.push_back({{"method", r.method}, {"median", json_number(r.error.median)}, {"p99", json_number(r.error.p99)},
                      {"max", json_number(r.error.max)}, {"counted", r.error.counted}, {"exact", r.error.exact},
                      {"zero_products", r.zero_products}});
  rec.tables.push_back(std::move(t));
  rec.extra = {{"pairs", pairs}, {"seed", seed}, {"u_range", {-60, 60}}};
  return rec;
}

// ---- the panorama source's GEMM experiments ----

namespace {

std::string gemm_spec(const std::string& family, std::int64_t mn, std::int64_t k, std::uint64_t seed, const std::string& extra = "") {
  return fmt::format("{}:m={},n={},k={},seed={}{}{}", family, mn, mn, k, seed, extra.empty() ? "" : ",", extra);
}

constexpr std::int64_t kPanoramaMN = 1024;

std::vector<CaseSpec> panorama_accuracy(const SuiteContext& c) {
  const std::int64_t mn = c.mn.value_or(kPanoramaMN);
  std::vector<CaseSpec> r;
  std::uint64_t seed = 10;  // the seeds of fpcert's accuracy-vs-k: the same inputs at the same M = N
  for (std::int64_t k : {64, 256, 1024, 4096, 16384}) {
    r.push_back({fmt::format("k{}_uniform", k), gemm_spec("uniform", mn, k, seed++), BoundVariant::Independent,
                 fmt::format("uniform [-1, 1], K = {}", k), "uniform", CaseAxis::K});
    r.push_back({fmt::format("k{}_normal", k), gemm_spec("normal", mn, k, seed++), BoundVariant::Independent,
                 fmt::format("N(0, 1), K = {}", k), "normal", CaseAxis::K});
  }
  return r;
}

std::vector<CaseSpec> panorama_exponents(const SuiteContext& c) {
  const std::int64_t mn = c.mn.value_or(kPanoramaMN), k = 1024;
  std::vector<CaseSpec> r = {
      {"narrow", gemm_spec("uniform", mn, k, 120), BoundVariant::Independent, "uniform [-1, 1]"},
      {"normal", gemm_spec("normal", mn, k, 121), BoundVariant::Independent, "N(0, 1)"},
      {"gauss_exp", gemm_spec("exp_gauss", mn, k, 122, "mean=0,std=8"), BoundVariant::Componentwise,
       "Gaussian exponents, mean 0, std 8"},
      {"exp60", gemm_spec("exp_uniform", mn, k, 123, "emin=-60,emax=60"), BoundVariant::Componentwise,
       "exponents uniform in [-60, 60] (products stay inside fp32)"},
      {"exp110", gemm_spec("exp_uniform", mn, k, 124, "emin=-110,emax=110"), BoundVariant::Componentwise,
       "exponents uniform in [-110, 110] (products leave fp32's range at both ends)"},
  };
  std::uint64_t seed = 125;
  for (const char* f : {"f16", "bf16", "f32"})  // values the format holds after rounding, as fpcert's edges case
    r.push_back({fmt::format("edges_{}", f), gemm_spec("edges", mn, k, seed++, fmt::format("target={},b=identity,overflow=exclude", f)),
                 BoundVariant::Componentwise,
                 fmt::format("values at {}'s smallest subnormal, smallest normal, largest finite and rounding boundaries; "
                             "B = identity",
                             f)});
  for (CaseSpec& cs : r) cs.axis = CaseAxis::ExponentSpan;  // the whole suite is about exponent ranges (as exponent-range)
  return r;
}

std::vector<CaseSpec> panorama_cancellation(const SuiteContext& c) {
  const std::int64_t mn = c.mn.value_or(kPanoramaMN);
  // cancel_gemm needs K > blocks * min(M, N) (docs/generators.md): K = 4096 holds up to three blocks
  // at M = N = 1024 (kappa up to 2^68 in fp32), the smallest K of the source's list that does.
  const std::int64_t kc = std::max<std::int64_t>(4096, 4 * mn);
  std::vector<CaseSpec> r;
  std::uint64_t seed = 150;
  for (const char* kappa : {"1e2", "1e4", "1e6", "1e8", "1e12", "1e16"})
    r.push_back({std::string("kappa_") + kappa, gemm_spec("cancel_gemm", mn, kc, seed++, std::string("kappa=") + kappa),
                 BoundVariant::Componentwise, std::string("every C_ij with condition number ") + kappa, "cancel", CaseAxis::Kappa});
  for (const char* cond : {"1", "1e2", "1e4", "1e6", "1e8"})
    r.push_back({std::string("spectral_") + cond, gemm_spec("spectral", mn, 1024, seed++, std::string("mode=3,cond=") + cond),
                 BoundVariant::Componentwise, std::string("A with a geometric spectrum, cond ") + cond, "spectral", CaseAxis::Kappa});
  return r;
}

}  // namespace

SuiteInfo preset_suite(const std::string& name, const std::string& preset) {
  (void)find_preset("run-suite " + name, preset);  // InputError for a suite without the preset; every suite preset is panorama
  if (name == "accuracy-vs-k")
    return {name, "the panorama source's experiment A: M = N = 1024, K in {64, 256, 1024, 4096, 16384}, uniform [-1, 1] and N(0, 1)",
            panorama_accuracy};
  if (name == "exponent-range")
    return {name, "the panorama source's experiment B: M = N = K = 1024, narrow, Gaussian exponents, [-60, 60], [-110, 110], "
                  "each format's edges",
            panorama_exponents};
  return {name, "the panorama source's experiment C: M = N = 1024, kappa 1e2 .. 1e16 (K = 4096), spectra of condition 1 .. 1e8",
          panorama_cancellation};
}

std::string preset_suite_method(const std::string& name, const std::string& preset) {
  (void)find_preset("run-suite " + name, preset);
  const std::string metrics =
      "Metrics, against the exact reference C* (the source's fp64 reference is C* rounded once to fp64 here): "
      "E_F = ||C - C*||_F / ||C*||_F and E_max = ||C - C*||_inf / ||C*||_inf. The source does not say which infinity norm: "
      "both are reported, labelled: 'elementwise' = max_ij |c_ij - c*_ij| / max_ij |c*_ij|, 'row-sum' = "
      "max_i sum_j |c_ij - c*_ij| / max_i sum_j |c*_ij| (the induced matrix norm). Non-finite outputs are left out of both "
      "and counted by fpcert's metrics. fpcert's own gate fraction and verdict stand beside them.";
  if (name == "accuracy-vs-k")
    return "Panorama experiment A (accuracy vs K): C = AB with M = N = 1024 on every backend (fpcert's default uses 32 for "
           "CPU models), K in {64, 256, 1024, 4096, 16384}, A and B with entries uniform on [-1, 1] and, separately, N(0, 1), "
           "drawn in fp64 and rounded once to fp32 (Philox; the seeds of fpcert's accuracy-vs-k). " + metrics;
  if (name == "exponent-range")
    return "Panorama experiment B (exponent range): C = AB with M = N = K = 1024; inputs uniform on [-1, 1]; N(0, 1); "
           "+-m 2^e with e ~ round(N(0, 8^2)); e uniform in [-60, 60]; e uniform in [-110, 110] (m with random fp32 "
           "significand bits); and the edges of fp16, bf16 and fp32 (smallest subnormal, smallest normal, largest finite, "
           "rounding boundaries) times B = I. The ranges are fixed, as the source states them; fpcert's default instead "
           "tailors them to the formats of the kernels run, and the runner reports inputs beyond a kernel's input format as "
           "not supported rather than grading Inf. " + metrics;
  return "Panorama experiment C (cancellation): C = AB with M = N = 1024; every C_ij with a prescribed condition number "
         "kappa_ij = sum_l |a_il b_lj| / |c_ij| in {1e2, 1e4, 1e6, 1e8, 1e12, 1e16} (K = 4096: the construction needs "
         "K > 2 min(M, N), docs/generators.md, cancel_gemm), and A with a geometric singular spectrum of condition "
         "1, 1e2, 1e4, 1e6, 1e8 times B ~ N(0, 1) (K = 1024). " + metrics;
}

ExperimentRecord preset_suite_record(const RunResult& r) {
  ExperimentRecord rec;
  rec.experiment = r.suite;
  const auto it = r.notes.find("preset");
  rec.preset = it == r.notes.end() ? "panorama" : it->second;
  rec.source = find_preset("run-suite " + r.suite, rec.preset).source;
  rec.method = preset_suite_method(r.suite, rec.preset);
  rec.device = r.env.device;
  rec.env = r.env;
  rec.passed = r.passed();
  for (const auto& c : r.cases)
    if (c.m != kPanoramaMN || c.n != kPanoramaMN) {
      rec.deviations = fmt::format("M = N = {} (--mn) instead of the source's {}.", c.m, kPanoramaMN);
      break;
    }
  ExperimentTable t;
  t.title = "Normwise errors against the exact product";
  t.note = "E_F, E_max: the source's metrics, over the outputs that are finite where C* is finite in the output format "
           "('left out' counts the others: non-finite outputs and exact values beyond the output's range; '-' when none is "
           "left); gate fraction and status: fpcert's verdict on the same output.";
  t.columns = {{"case", "case", ""},          {"kernel", "kernel", ""},         {"k", "K", "int"},
               {"e_f", "E_F", "e"},           {"e_max_elem", "E_max (elementwise)", "e"},
               {"e_max_rowsum", "E_max (row-sum)", "e"}, {"left_out", "left out", "int"},
               {"gate_fraction", "fpcert gate frac", "g"}, {"status", "status", ""}};
  for (const auto& c : r.cases) {
    const bool graded = c.status == CaseStatus::Pass || c.status == CaseStatus::Fail;
    // Outputs the norms leave out: non-finite where C* is finite, and C* beyond the output's range.
    const std::int64_t left_out = c.metrics.nonfinite + c.metrics.ref_overflow;
    const bool norms = graded && left_out < c.m * c.n;  // some element left to measure
    auto num = [&](bool shown, double v) { return shown ? json_number(v) : nlohmann::json(nullptr); };
    t.rows.push_back({{"case", c.case_id}, {"kernel", c.kernel}, {"k", c.k}, {"e_f", num(norms, c.metrics.frobenius_rel)},
                      {"e_max_elem", num(norms, c.metrics.max_rel)}, {"e_max_rowsum", num(norms, c.metrics.rowsum_rel)},
                      {"left_out", graded ? nlohmann::json(left_out) : nlohmann::json(nullptr)},
                      {"gate_fraction", num(graded, c.gate_fraction)}, {"status", std::string(to_string(c.status))}});
  }
  rec.tables.push_back(std::move(t));
  return rec;
}

}  // namespace fpcert
