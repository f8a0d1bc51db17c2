// oracle/convert_check.cpp — the exhaustive conversion check: model, subject and MPFR side by side.
#include "oracle/convert_check.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "oracle/convert_batch.hpp"
#include "oracle/mpfr_ref.hpp"
#include "oracle/parallel.hpp"
#include "oracle/philox.hpp"

namespace fpcert {

void ConvertCheckResult::merge(const ConvertCheckResult& o, std::size_t max_listed) {
  patterns += o.patterns;
  for (int i = 0; i < kOutcomeCount; ++i) outcomes[i] += o.outcomes[i];
  mismatches += o.mismatches;
  model_mismatches += o.model_mismatches;
  nan_differences += o.nan_differences;
  mpfr_checked += o.mpfr_checked;
  listed.insert(listed.end(), o.listed.begin(), o.listed.end());
  std::stable_sort(listed.begin(), listed.end(), [](const ConvertMismatch& a, const ConvertMismatch& b) {
    if (a.model_bug != b.model_bug) return a.model_bug;
    return a.src < b.src;
  });
  if (listed.size() > max_listed) listed.resize(max_listed);
}

std::uint64_t SubjectChunk::code(std::uint64_t i) const {
  std::uint64_t v = 0;
  switch (bytes) {
    case 1: v = static_cast<const std::uint8_t*>(data)[i]; break;
    case 2: v = static_cast<const std::uint16_t*>(data)[i]; break;
    case 4: v = static_cast<const std::uint32_t*>(data)[i]; break;
    default: v = static_cast<const std::uint64_t*>(data)[i]; break;
  }
  return v;
}

std::uint64_t check_pattern_count(const ConvertCheckSpec& spec) {
  if (spec.count) return spec.count;
  const std::uint64_t all = spec.src->code_count();
  return all ? all - spec.first : ~std::uint64_t{0} - spec.first;  // fp64: effectively unbounded
}

void check_conversion_chunk(const ConvertCheckSpec& spec, std::uint64_t first, std::uint64_t n,
                            const SubjectChunk& subject, ConvertCheckResult& acc) {
  const Format& src = *spec.src;
  const Format& dst = *spec.dst;
  const bool stochastic = spec.rounder.rounding == Rounding::Stochastic;
  const bool batch = src.total_bits() <= 32 && dst.total_bits() <= 32;
  constexpr std::uint64_t kBlock = 4096;
  std::vector<std::uint32_t> model_codes(batch ? kBlock : 0);
  std::vector<std::uint8_t> model_flags(batch ? kBlock : 0);
  for (std::uint64_t b = 0; b < n; b += kBlock) {
    const std::uint64_t len = std::min(kBlock, n - b);
    if (batch)  // the vectorised model for the block, then pattern by pattern
      convert_code_range(src, dst, spec.rounder, spec.seed, first + b, model_codes.data(), model_flags.data(), len);
    for (std::uint64_t j = 0; j < len; ++j) {
      const std::uint64_t i = b + j;
      const std::uint64_t code = first + i;
      const std::uint32_t rbits = stochastic ? random_bits32(spec.seed, code) : 0;
      const Rounded model = batch ? Rounded{model_codes[j], model_flags[j]}
                                  : round_double(dst, to_double(src, code), spec.rounder, rbits);
      std::uint64_t got = model.code;
      if (subject.data) {
        got = subject.code(i);
        if (subject.container) got = from_container(dst, got);
      }
      Rounded truth = model;
      const bool sampled = spec.mpfr_sample && (code % spec.mpfr_sample) == 0;
      if (spec.mpfr_every || got != model.code || sampled) {
        truth = mpfr_ref::convert(src, code, dst, spec.rounder, rbits);
        ++acc.mpfr_checked;
        if (!(truth == model)) {
          ++acc.model_mismatches;
          if (acc.listed.size() < spec.max_listed)
            acc.listed.push_back({code, truth.code, model.code, classify_outcome(src, code, dst, truth), true});
        }
      }
      ++acc.outcomes[static_cast<int>(classify_outcome(src, code, dst, truth))];
      if (got != truth.code) {
        const bool both_nan = classify(dst, got) == FpClass::NaN && classify(dst, truth.code) == FpClass::NaN;
        if (both_nan && !spec.strict_nan) {
          ++acc.nan_differences;
        } else {
          ++acc.mismatches;
          if (acc.listed.size() < spec.max_listed)
            acc.listed.push_back({code, truth.code, got, classify_outcome(src, code, dst, truth), false});
        }
      }
    }
  }
  acc.patterns += n;
}

ConvertCheckResult check_conversion(const ConvertCheckSpec& spec, const std::function<void(double)>& progress) {
  const std::uint64_t total = check_pattern_count(spec);
  const unsigned threads = spec.threads ? spec.threads : thread_count();
  std::vector<ConvertCheckResult> per(threads);
  std::atomic<std::uint64_t> done{0};
  std::mutex progress_mutex;
  const std::uint64_t grain = std::max<std::uint64_t>(1024, std::min<std::uint64_t>(total / (threads * 64) + 1, 1 << 20));
  parallel_for(
      total, grain,
      [&](std::uint64_t b, std::uint64_t e, unsigned w) {
        check_conversion_chunk(spec, spec.first + b, e - b, SubjectChunk{}, per[w]);
        const std::uint64_t d = done.fetch_add(e - b) + (e - b);
        if (progress) {
          std::lock_guard<std::mutex> lock(progress_mutex);
          progress(static_cast<double>(d) / static_cast<double>(total));
        }
      },
      threads);
  ConvertCheckResult r;
  for (const auto& p : per) r.merge(p, spec.max_listed);
  return r;
}

}  // namespace fpcert
