// generators/family.hpp — internal: how a generator family plugs into generate() (not a public API).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "generators/problem.hpp"
#include "generators/rng.hpp"
#include "generators/spec.hpp"
#include "oracle/convert/representable.hpp"
#include "oracle/round.hpp"

namespace fpcert::detail {

struct GenContext {
  unsigned threads = 0;  ///< 0: thread_count()
};

/// A family: its documentation and parameters, and the function that fills a Problem whose
/// spec, family, seed and source generate() has already set. make() sets m, n, k, dot, a, b
/// (every value exactly representable in p.source) and may add family-specific `achieved` keys;
/// it throws InputError (through ParsedSpec::fail) for combinations of fields it cannot honour.
struct Family {
  GeneratorInfo info;
  std::function<void(const ParsedSpec&, Problem&, const GenContext&)> make;
  /// The family writes Inf and NaN on purpose (`specials`): generate() then accepts them; every finite
  /// value must still be exactly representable in the source format.
  bool non_finite = false;
};

std::vector<Family> distribution_families();  // uniform, normal, ozaki, scaled_int
std::vector<Family> exponent_families();      // exp_uniform, exp_gauss, exp_sweep, span, outlier
std::vector<Family> edge_families();          // edges
std::vector<Family> special_families();       // specials
std::vector<Family> cancel_families();        // cancel, cancel_gemm
std::vector<Family> spectral_families();      // spectral
std::vector<Family> probe_families();         // probe
std::vector<Family> pattern_families();       // int_pattern
std::vector<Family> order_free_families();    // order_free
std::vector<Family> reduce_families();        // sum_cancel, sum_range, nrm2_trap (generators/reduce.cpp)
std::vector<Family> softmax_families();       // softmax (generators/softmax.cpp)
std::vector<Family> norm_families();          // norm (generators/norm/norm.cpp)
std::vector<Family> attention_families();     // attention (generators/attention/attention.cpp)
std::vector<Family> softmax_bwd_families();   // softmax_bwd (generators/softmax_bwd/softmax_bwd.cpp; issue 45)
std::vector<Family> norm_bwd_families();      // norm_bwd (generators/norm/norm_bwd.cpp)
std::vector<Family> attention_bwd_families(); // attention_bwd (generators/attention/attention_bwd.cpp)

// ---- parameter declarations ----
ParamInfo p_int(const std::string& name, std::int64_t dflt, std::int64_t lo, std::int64_t hi, const std::string& help);
ParamInfo p_real(const std::string& name, double dflt, double lo, double hi, const std::string& help);
ParamInfo p_choice(const std::string& name, const std::string& dflt, std::vector<std::string> choices, const std::string& help);
ParamInfo p_format(const std::string& name, const std::string& dflt, std::vector<std::string> choices, const std::string& help);
ParamInfo p_seed();
/// m, n, k with the given defaults (each in [1, kMaxDim]).
std::vector<ParamInfo> p_shape(std::int64_t m, std::int64_t n, std::int64_t k);
/// source: the format every input is exactly representable in (f32, f64, f16, bf16).
ParamInfo p_source(const std::string& dflt = "f32");

inline constexpr std::int64_t kMaxDim = std::int64_t{1} << 24;      ///< any one dimension
/// Entries of one operand: 2^31 (16 GiB of exact values), so that the scale suite's operands of m lda >= 2^31
/// elements can be generated (suites/ops/gemm/scale_suite.cpp: 1,044,600 x 2048 = 2,139,340,800 entries).
inline constexpr std::int64_t kMaxElements = std::int64_t{1} << 31;

/// Sets p.m, p.n, p.k from the spec (fields m, n, k), checks the operand sizes and allocates a, b.
void set_gemm_shape(const ParsedSpec& ps, Problem& p);
/// Allocates a dot product of length n: m = n = 1, k = n, a is 1 x n (x), b is n x 1 (y).
void set_dot_shape(const ParsedSpec& ps, Problem& p, std::int64_t n);

// ---- values ----
/// Round-to-nearest-even into the source format; beyond its range, +-largest finite (the
/// generators never write Inf or NaN).
double to_source(const Format& src, double x);
/// m(i, j) = fn(i * cols + j) for every entry, in parallel (each entry independent of the others).
void fill(Matrix& m, const GenContext& ctx, const std::function<double(std::uint64_t)>& fn);
/// Same, rounding every value into src.
void fill_source(Matrix& m, const Format& src, const GenContext& ctx, const std::function<double(std::uint64_t)>& fn);

/// floor(log2 |x|) of a finite nonzero x (exact).
int exponent_of(double x);

// exactly_representable(f, x): oracle/convert/representable.hpp.

/// Stream numbers: family f (its index in docs/generators.md's table) owns ids [f << 8, (f+1) << 8);
/// within it, operand A uses offsets 0..15, B 16..31, shared draws 32 and up.
inline Stream stream_for(std::uint64_t seed, std::uint32_t family_id, std::uint32_t offset) {
  return {seed, (family_id << 8) + offset};
}
inline constexpr std::uint32_t kOpA = 0, kOpB = 16, kShared = 32;

}  // namespace fpcert::detail
