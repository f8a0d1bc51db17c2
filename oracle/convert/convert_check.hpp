// oracle/convert/convert_check.hpp — check one conversion on every source pattern (or a range of them).
//
// The subject is the CPU fast path by default, or any device's results passed in chunks. The
// model (fast path) is the working reference; MPFR is the truth: on every pattern
// (mpfr_every, what `fpcert convert --exhaustive` does on the CPU), or only where subject and
// model disagree plus a sample (what the GPU sweep does to stay within seconds). A model that
// disagrees with MPFR is a bug in fpcert and fails the check on its own count.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "oracle/convert/convert_model.hpp"
#include "oracle/format.hpp"
#include "oracle/round.hpp"

namespace fpcert {

struct ConvertCheckSpec {
  const Format* src = &f32;
  const Format* dst = &f16;
  Rounder rounder{};
  std::uint64_t seed = 0;            ///< key of the stochastic-rounding bits (random_bits32(seed, code))
  bool mpfr_every = true;            ///< MPFR on every pattern
  std::uint64_t mpfr_sample = 4099;  ///< when !mpfr_every: also MPFR on codes with code % mpfr_sample == 0
  /// The NaN convention (rounder.nan) is enforced exactly: a NaN input must give nan_input_code()'s code
  /// (under Any: any NaN). nan_counted_apart restores the leniency of a PRESERVE declared by a plugin of
  /// ABI minor 0 or 1 (what PRESERVE meant then): a NaN result with other payload or sign bits than the
  /// reference's NaN is counted in nan_differences, not as a mismatch, unless strict_nan.
  bool nan_counted_apart = false;
  bool strict_nan = false;           ///< --strict-nan: no leniency even for a legacy PRESERVE (nan_counted_apart)
  std::uint64_t first = 0;           ///< first source code
  std::uint64_t count = 0;           ///< number of codes; 0: all of src's codes
  unsigned threads = 0;              ///< 0: thread_count()
  std::size_t max_listed = 20;
};

struct ConvertMismatch {
  std::uint64_t src = 0;
  std::uint64_t expected = 0;  ///< the truth (MPFR where it ran, else the model)
  std::uint64_t got = 0;
  Outcome outcome = Outcome::NaN;  ///< the truth's outcome class
  bool model_bug = false;          ///< the fast model itself disagreed with MPFR
};

struct ConvertCheckResult {
  std::uint64_t patterns = 0;
  std::array<std::uint64_t, kOutcomeCount> outcomes{};
  std::uint64_t mismatches = 0;        ///< subject != truth
  std::uint64_t model_mismatches = 0;  ///< fast model != MPFR (code or flags): an fpcert bug
  std::uint64_t nan_differences = 0;   ///< NaN results with other bits than the model's that the declaration accepts
                                       ///< (a NaN input under Any; any NaN under a legacy PRESERVE without strict_nan)
  std::uint64_t mpfr_checked = 0;
  std::vector<ConvertMismatch> listed;  ///< the first max_listed mismatches (model bugs first)
  bool passed() const { return mismatches == 0 && model_mismatches == 0; }
  void merge(const ConvertCheckResult& o, std::size_t max_listed);
};

/// A chunk of subject results: codes of dst, `bytes` wide each (1, 2, 4 or 8), for source codes
/// first .. first+n-1, in container layout (tf32: fp32 bits) when `container` is set.
struct SubjectChunk {
  const void* data = nullptr;
  int bytes = 8;
  bool container = false;
  std::uint64_t code(std::uint64_t i) const;
};

/// Check source codes [first, first + n) against the truth and add to acc. Thread-safe for
/// distinct acc objects. subject.data == nullptr: the subject is the fast model itself.
void check_conversion_chunk(const ConvertCheckSpec& spec, std::uint64_t first, std::uint64_t n,
                            const SubjectChunk& subject, ConvertCheckResult& acc);

/// Whole check of the fast model (subject == model), multithreaded. progress(fraction) is called
/// from worker threads, serialised.
ConvertCheckResult check_conversion(const ConvertCheckSpec& spec,
                                    const std::function<void(double)>& progress = {});

// ---- a check whose comparison ran elsewhere (the device check, kernels/convert/convert_check_device.hpp) ----

/// The outcome class (as an integer) of each outcome key (oracle/convert/convert_model.hpp) for src -> dst,
/// filled by classify_outcome() itself; kNoOutcome for a class a format lacks.
inline constexpr std::uint8_t kNoOutcome = 0xFF;
std::array<std::uint8_t, kOutcomeKeys> outcome_key_table(const Format& src, const Format& dst);
/// Add counts of outcome keys (kOutcomeKeys of them, the model's keys over some codes) to acc's outcomes.
void add_outcome_keys(const Format& src, const Format& dst, const std::uint64_t* keys, ConvertCheckResult& acc);

/// A source code whose subject result (a dst code) differs from the model's.
struct ModelDifference {
  std::uint64_t src = 0;
  std::uint32_t got = 0;
  friend bool operator==(const ModelDifference&, const ModelDifference&) = default;
};
/// What check_conversion_chunk adds for [first, first + n) on the sampled path, for a subject known
/// only where it differs from the model (`differ`: every such code in the range, ascending), less the
/// outcome counts of the model's keys (add_outcome_keys): MPFR on every difference and on the sample,
/// mismatches, model bugs, NaN differences, listing, and the outcome moves where MPFR disagrees with the
/// model. Sources and destinations the conversion model covers (convert_model_covers). `model`: the
/// model the differences were taken against (null: make_convert_model of the spec; tests pass a
/// deliberately wrong one, as a stale device build would have, to see MPFR catch it).
void check_conversion_differences(const ConvertCheckSpec& spec, std::uint64_t first, std::uint64_t n,
                                  std::span<const ModelDifference> differ, ConvertCheckResult& acc,
                                  const ConvertModel* model = nullptr);

/// Whether any NaN result with other bits than the reference's NaN is counted apart (nan_differences)
/// rather than as a mismatch: only a legacy PRESERVE (nan_counted_apart) without --strict-nan. Every
/// declared convention is one code per NaN input, or under Any any NaN (docs/conversions.md).
bool nan_difference_tolerated(const ConvertCheckSpec& spec);
/// Whether a NaN input's NaN result with other bits than the model's is accepted: under Any, or when
/// nan_difference_tolerated.
bool nan_input_difference_accepted(const ConvertCheckSpec& spec);
/// Whether `got` for source `code` differs from `truth` in a way the declaration accepts (counted in
/// nan_differences, never a mismatch): a NaN input under Any (nan_result_accepted), or any NaN-vs-NaN
/// difference under nan_difference_tolerated.
bool accepted_difference(const ConvertCheckSpec& spec, std::uint64_t code, std::uint64_t truth, std::uint64_t got);

/// Number of codes the spec covers.
std::uint64_t check_pattern_count(const ConvertCheckSpec& spec);

}  // namespace fpcert
