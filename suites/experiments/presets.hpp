// suites/experiments/presets.hpp — presets: published experiments run by their source's method, to the letter
// (docs/experiments.md). fpcert's own conventions stay every experiment's default; a preset changes
// what its source states (inputs, sizes, orders, metrics) and its record says so in one paragraph.
//
// This file: the preset list, the metric definitions the presets share, the split-product scalar
// experiment of the panorama source, and the panorama source's GEMM experiments A/B/C as suites.
// The GEMM pipelines of the course and the TF32 article are in suites/experiments/preset_gemm.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kernels/emu/split.hpp"
#include "results/experiment_record.hpp"
#include "suites/run/suite.hpp"

namespace fpcert {

struct PresetInfo {
  std::string command;   ///< "experiment split-scalar", "run-suite accuracy-vs-k", ...
  std::string name;      ///< "panorama", "course", "tf32-article"
  std::string source;    ///< the publication, in words
  std::string summary;   ///< what the preset changes from fpcert's conventions
};
/// Every preset, in the order of docs/experiments.md.
const std::vector<PresetInfo>& presets();
/// The preset `name` of `command` ("experiment split-scalar", "run-suite cancellation"); InputError
/// naming the valid presets when there is none.
const PresetInfo& find_preset(const std::string& command, const std::string& name);

// ---- metric definitions ----

/// The q-quantile of sorted values by linear interpolation between closest ranks (numpy's default,
/// Hyndman-Fan type 7): h = q (n - 1), x[floor h] + (h - floor h) (x[floor h + 1] - x[floor h]).
/// NaN for an empty list. q in [0, 1].
double quantile_linear(const std::vector<double>& sorted, double q);

/// Relative errors summarised over the elements whose error is nonzero and finite only.
struct ErrorSummary {
  std::int64_t samples = 0;    ///< every element
  std::int64_t counted = 0;    ///< nonzero and finite: the elements the statistics are over
  std::int64_t exact = 0;      ///< error exactly 0 (left out)
  std::int64_t nonfinite = 0;  ///< Inf or NaN error (left out)
  double median = 0, p99 = 0, max = 0;  ///< quantile_linear at 0.5 and 0.99, and the maximum; NaN when counted = 0
};
ErrorSummary summarize_nonzero_finite(std::vector<double> errors);

/// y ~ c x^e fitted by least squares on (log2 x, log2 y) over the points with x > 0 and y > 0 finite.
struct PowerFit {
  double exponent = 0, coefficient = 0;
  int points = 0;  ///< fewer than 2: no fit (exponent and coefficient NaN)
};
PowerFit fit_power_law(const std::vector<double>& x, const std::vector<double>& y);

// ---- split-scalar --preset panorama ----

/// Slice products (i, j) of slice-index levels 0 .. levels-1 (level = i + j), from level 0 upwards,
/// within a level by increasing i: the panorama source's "triangular" merge order.
std::vector<std::pair<int, int>> triangular_terms(int levels);
/// All slices^2 products from the highest level down to level 0, within a level by increasing i:
/// the source's 9xBF16 order (smallest terms first).
std::vector<std::pair<int, int>> all_terms_descending(int slices);
/// The source's methods as split schemes (kernels/emu/split.hpp arithmetic: slices by
/// round-to-nearest-even to p bits, residuals in fp32, each slice product rounded once in fp32, terms
/// added in fp32 in `terms` order): 1xtf32, 3xtf32, 1xbf16, 3xbf16, 6xbf16, 9xbf16.
const std::vector<SplitScheme>& panorama_split_schemes();

/// Operand `which` (0: a, 1: b) of pair `index`: s 2^u, s = +-1 equally likely, u = -60 + 120 U with U
/// uniform in [0, 1) from 53 random bits (Philox keyed by seed), 2^u rounded once to fp32 (MPFR).
float panorama_operand(std::uint64_t seed, std::uint64_t index, int which);

struct SplitScalarPresetRow {
  std::string method;          ///< "fp32", "1xtf32", ...
  ErrorSummary error;          ///< relative error |p - a b| / |a b|
  std::int64_t zero_products = 0;  ///< products that came out 0 (slice products underflowed)
};
/// The panorama source's split-product scalar experiment (the method is stated in docs/experiments.md).
std::vector<SplitScalarPresetRow> split_scalar_panorama(std::uint64_t pairs, std::uint64_t seed, unsigned threads = 0);
/// Its record: the method paragraph and the table (environment stamp left to the caller).
ExperimentRecord split_scalar_panorama_record(const std::vector<SplitScalarPresetRow>& rows, std::uint64_t pairs,
                                              std::uint64_t seed);

// ---- run-suite accuracy-vs-k / exponent-range / cancellation --preset panorama ----

/// The suite `name` as preset `preset` states it (panorama: M = N = 1024 whatever the backend; --mn
/// still overrides); InputError for a suite without this preset.
SuiteInfo preset_suite(const std::string& name, const std::string& preset);
/// The method paragraph of the suite's preset.
std::string preset_suite_method(const std::string& name, const std::string& preset);
/// The source's table from a run of a preset suite (notes "preset"): per case and kernel E_F, E_max
/// (elementwise maximum) and E_max (max-row-sum norm), beside fpcert's gate fraction and verdict.
ExperimentRecord preset_suite_record(const RunResult& r);

}  // namespace fpcert
