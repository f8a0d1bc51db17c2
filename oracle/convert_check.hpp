// oracle/convert_check.hpp — check one conversion on every source pattern (or a range of them).
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
#include <string>
#include <vector>

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
  bool strict_nan = false;           ///< NaN payload or sign differences are mismatches (else counted apart)
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
  std::uint64_t nan_differences = 0;   ///< both NaN, other bits (not a mismatch unless strict_nan)
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

/// Number of codes the spec covers.
std::uint64_t check_pattern_count(const ConvertCheckSpec& spec);

}  // namespace fpcert
