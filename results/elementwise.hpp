// results/elementwise.hpp — an elementwise kernel's case as data (issue 42, docs/elementwise.md, "Checking a
// function"): which inputs were checked, the largest error in ulps and where, the count of results beyond the claimed
// accuracy with the first counterexamples, and the histogram of ulp distances; its JSON.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace fpcert {

struct ElementwiseResult {
  /// One result beyond the claim, or the worst one: codes as hex bits of the input and output formats.
  struct Point {
    std::string input_bits, got_bits, ref_bits;
    double input = 0;          ///< the input's value
    std::uint64_t ulps = 0;    ///< distance to the correctly rounded result (2^64 - 1: NaN on one side only)
  };
  std::string function;        ///< "exp", "exp2", "exp10"
  std::string in_format, out_format;
  std::string claim;           ///< the claim in words ("correctly rounded", "<= 2 ulp", ...)
  std::string sweep;           ///< "exhaustive" (every input code), "sampled" (a sample, described in `inputs_note`), "device" (every code, on the GPU)
  std::string inputs_note;
  std::uint64_t inputs = 0;        ///< inputs checked
  std::uint64_t above_claim = 0;   ///< results beyond the claim
  std::uint64_t mpfr_decided = 0;  ///< inputs whose reference the fast path left to MPFR
  std::uint64_t undecided = 0;     ///< absolute/relative claims: results within the reference's uncertainty of the bound
  std::uint64_t unclaimed = 0;     ///< inputs the claim does not cover (outside its domain): in the histogram, not in max_ulps
  std::uint64_t max_ulps = 0;      ///< over the inputs the claim covers
  Point worst;                     ///< where max_ulps is reached (the lowest input code that reaches it)
  std::vector<Point> listed;       ///< the first counterexamples, ascending input codes
  /// Counts of ulp distances by bin: 0, 1, 2, 3, 4, (4, 8], (8, 16], ..., (2^30, 2^31], above 2^31, NaN on one side only.
  std::vector<std::uint64_t> histogram;
  double seconds = 0;              ///< the sweep (device: the kernels' time, reference included)
};

/// The label of histogram bin i ("0", "1", ..., "5-8", "9-16", ..., ">2^31", "NaN").
std::string ulp_bin_label(std::size_t i);
nlohmann::json to_json(const ElementwiseResult& e);
/// Throws InputError on a malformed record.
ElementwiseResult elementwise_from_json(const nlohmann::json& j);

}  // namespace fpcert
