// oracle/convert/convert_check.cpp — the exhaustive conversion check: model, subject and MPFR side by side.
#include "oracle/convert/convert_check.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>
#include <optional>
#include <stdexcept>

#include "base/parallel.hpp"
#include "base/philox.hpp"
#include "oracle/convert/convert_batch.hpp"
#include "oracle/convert/convert_model.hpp"
#include "oracle/mpfr_ref.hpp"

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

namespace {

/// Outcome classes depend on (class of the source, class of the result, result flags) only: a
/// table over keys sc * 40 + dc * 8 + flags, filled by classify_outcome() itself on codes of each
/// class, so the fast count and the per-pattern count cannot drift apart.
constexpr int kClasses = 5;
constexpr int kKeys = kOutcomeKeys;
static_assert(kKeys == kClasses * kClasses * 8);

std::optional<std::uint64_t> code_of_class(const Format& f, FpClass cls) {
  const std::uint64_t candidates[] = {0, 1, std::uint64_t{1} << f.frac_bits, f.max_finite_code(), f.inf_code(),
                                      f.inf_code() + 1, f.canonical_nan_code(), f.magnitude_mask()};
  for (const std::uint64_t c : candidates)
    if ((c & ~f.code_mask()) == 0 && classify(f, c) == cls) return c;
  return std::nullopt;
}

}  // namespace

bool nan_difference_tolerated(const ConvertCheckSpec& spec) { return spec.nan_counted_apart && !spec.strict_nan; }

bool nan_input_difference_accepted(const ConvertCheckSpec& spec) {
  return spec.rounder.nan == NanPayload::Any || nan_difference_tolerated(spec);
}

bool accepted_difference(const ConvertCheckSpec& spec, std::uint64_t code, std::uint64_t truth, std::uint64_t got) {
  const Format& dst = *spec.dst;
  if (classify(dst, got) != FpClass::NaN) return false;
  if (nan_difference_tolerated(spec) && classify(dst, truth) == FpClass::NaN) return true;
  return classify(*spec.src, code) == FpClass::NaN && nan_result_accepted(dst, spec.rounder.nan, truth, got);
}

std::array<std::uint8_t, kOutcomeKeys> outcome_key_table(const Format& src, const Format& dst) {
  std::array<std::uint8_t, kKeys> t;
  t.fill(kNoOutcome);
  for (int sc = 0; sc < kClasses; ++sc)
    for (int dc = 0; dc < kClasses; ++dc) {
      const auto s = code_of_class(src, static_cast<FpClass>(sc));
      const auto d = code_of_class(dst, static_cast<FpClass>(dc));
      if (!s || !d) continue;
      for (int fl = 0; fl < 8; ++fl)
        t[static_cast<std::size_t>(sc * 40 + dc * 8 + fl)] = static_cast<std::uint8_t>(
            classify_outcome(src, *s, dst, Rounded{*d, static_cast<std::uint8_t>(fl)}));
    }
  return t;
}

void add_outcome_keys(const Format& src, const Format& dst, const std::uint64_t* keys, ConvertCheckResult& acc) {
  const std::array<std::uint8_t, kKeys> table = outcome_key_table(src, dst);
  for (int k = 0; k < kKeys; ++k) {
    if (!keys[k]) continue;
    if (table[k] == kNoOutcome) throw std::logic_error("outcome keys: a code of a class its format lacks");
    acc.outcomes[table[k]] += keys[k];
  }
}

namespace {

/// Subject codes of a block as dst codes (container layout undone, as SubjectChunk::code and
/// from_container do), one loop per element width so that each vectorises.
template <class T>
void load_codes(const void* data, std::uint64_t offset, std::size_t len, int shift, std::uint32_t mask,
                std::uint32_t* out) {
  const T* p = static_cast<const T*>(data) + offset;
  for (std::size_t j = 0; j < len; ++j) out[j] = static_cast<std::uint32_t>(p[j] >> shift) & mask;
}

/// The per-pattern path: MPFR (or the model when MPFR does not run) is the truth for each pattern.
/// Used for the CPU command (MPFR on every pattern) and for formats wider than 32 bits.
void check_each(const ConvertCheckSpec& spec, std::uint64_t first, std::uint64_t n, const SubjectChunk& subject,
                ConvertCheckResult& acc) {
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
        if (accepted_difference(spec, code, truth.code, got)) {
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

using Moved = std::array<std::int64_t, kOutcomeCount>;

/// One pattern that needs its own look (subject != model, or the MPFR sample): MPFR decides; a model
/// that disagrees with it is an fpcert bug, and the outcome counted for the model's result (from its
/// key) moves to the truth's.
void check_one(const ConvertCheckSpec& spec, std::uint64_t code, const Rounded& m, std::uint64_t g, ConvertCheckResult& acc,
               Moved& moved) {
  const Format& src = *spec.src;
  const Format& dst = *spec.dst;
  const std::uint32_t rbits = spec.rounder.rounding == Rounding::Stochastic ? random_bits32(spec.seed, code) : 0;
  const Rounded truth = mpfr_ref::convert(src, code, dst, spec.rounder, rbits);
  ++acc.mpfr_checked;
  const Outcome oc = classify_outcome(src, code, dst, truth);
  if (!(truth == m)) {
    ++acc.model_mismatches;
    --moved[static_cast<int>(classify_outcome(src, code, dst, m))];
    ++moved[static_cast<int>(oc)];
    if (acc.listed.size() < spec.max_listed) acc.listed.push_back({code, truth.code, m.code, oc, true});
  }
  if (g != truth.code) {
    if (accepted_difference(spec, code, truth.code, g)) {
      ++acc.nan_differences;
    } else {
      ++acc.mismatches;
      if (acc.listed.size() < spec.max_listed) acc.listed.push_back({code, truth.code, g, oc, false});
    }
  }
}

/// Outcome counts are unsigned; a chunk's moves may take one below zero, which the sum over chunks
/// (mod 2^64) restores.
void apply_moved(const Moved& moved, ConvertCheckResult& acc) {
  for (int o = 0; o < kOutcomeCount; ++o) acc.outcomes[o] += static_cast<std::uint64_t>(moved[o]);
}

/// The sampled path (MPFR on disagreements and on a sample), with the same result as check_each
/// for the same spec: per block, the vectorised model, one vectorised pass that compares the
/// subject with it and keys each pattern's outcome class from the model's code and flags, and
/// per-pattern work (MPFR, listing) only where subject and model disagree or the sample falls.
/// Where MPFR then disagrees with the model, the outcome counted for the model is moved to the
/// truth's, as check_each counts the truth's.
void check_sampled(const ConvertCheckSpec& spec, std::uint64_t first, std::uint64_t n, const SubjectChunk& subject,
                   ConvertCheckResult& acc) {
  const Format& src = *spec.src;
  const Format& dst = *spec.dst;
  const CodeClass src_class = make_code_class(src), dst_class = make_code_class(dst);
  // Within one sign, classes follow the code order: zero, subnormals, normals, Inf, NaN. So a block
  // of consecutive codes that does not cross the sign bit and has the same class at both ends has
  // that class throughout.
  const std::uint64_t src_sign = src.sign_mask();
  const std::uint32_t code_mask = static_cast<std::uint32_t>(dst.code_mask());
  const int shift = subject.container ? std::countr_zero(to_container(dst, 1)) : 0;
  constexpr std::uint64_t kBlock = 4096;
  std::vector<std::uint32_t> model(kBlock), got(kBlock);
  std::vector<std::uint8_t> flags(kBlock);
  std::vector<std::uint8_t> key(kBlock);
  std::vector<std::uint32_t> special;
  std::array<std::uint64_t, kKeys> keys_total{};
  std::array<std::array<std::uint32_t, kKeys>, 4> hist;  // four partial histograms: no store-to-load chains
  Moved moved{};
  for (std::uint64_t b = 0; b < n; b += kBlock) {
    const std::size_t len = static_cast<std::size_t>(std::min(kBlock, n - b));
    const std::uint64_t c0 = first + b;
    convert_code_range(src, dst, spec.rounder, spec.seed, c0, model.data(), flags.data(), len);
    const std::uint32_t c0_32 = static_cast<std::uint32_t>(c0);  // src codes fit 32 bits on this path
    // The source class is constant over almost every block (it changes only at zero, the
    // subnormal/normal boundary, Inf and NaN): then the key's source part is added once per block.
    const std::uint32_t sc_first = src_class(c0_32), sc_last = src_class(c0_32 + static_cast<std::uint32_t>(len - 1));
    const bool one_src_class = sc_first == sc_last && (c0 & src_sign) == ((c0 + len - 1) & src_sign);
    if (one_src_class) {
      for (std::size_t j = 0; j < len; ++j) key[j] = static_cast<std::uint8_t>(dst_class(model[j]) * 8 + (flags[j] & 7u));
    } else {
      for (std::size_t j = 0; j < len; ++j)
        key[j] = static_cast<std::uint8_t>(src_class(c0_32 + static_cast<std::uint32_t>(j)) * 40 +
                                           dst_class(model[j]) * 8 + (flags[j] & 7u));
    }
    const std::size_t key_base = one_src_class ? sc_first * 40 : 0;
    for (auto& h : hist) h.fill(0);
    std::size_t j = 0;
    for (; j + 4 <= len; j += 4) {
      ++hist[0][key[j]];
      ++hist[1][key[j + 1]];
      ++hist[2][key[j + 2]];
      ++hist[3][key[j + 3]];
    }
    for (; j < len; ++j) ++hist[0][key[j]];
    const int nkeys = one_src_class ? 40 : kKeys;
    for (int k = 0; k < nkeys; ++k) keys_total[key_base + static_cast<std::size_t>(k)] += std::uint64_t{hist[0][k]} + hist[1][k] + hist[2][k] + hist[3][k];

    // Patterns that need their own look: subject != model, and the MPFR sample; ascending.
    special.clear();
    if (subject.data) {
      switch (subject.bytes) {
        case 1: load_codes<std::uint8_t>(subject.data, b, len, shift, code_mask, got.data()); break;
        case 2: load_codes<std::uint16_t>(subject.data, b, len, shift, code_mask, got.data()); break;
        case 4: load_codes<std::uint32_t>(subject.data, b, len, shift, code_mask, got.data()); break;
        default: load_codes<std::uint64_t>(subject.data, b, len, shift, code_mask, got.data()); break;
      }
      std::uint32_t differ = 0;
      for (std::size_t i = 0; i < len; ++i) differ += got[i] != model[i];
      if (differ)
        for (std::size_t i = 0; i < len; ++i)
          if (got[i] != model[i]) special.push_back(static_cast<std::uint32_t>(i));
    }
    if (spec.mpfr_sample) {
      const std::size_t before = special.size();
      const std::uint64_t s = spec.mpfr_sample;
      for (std::uint64_t c = (c0 + s - 1) / s * s; c < c0 + len; c += s) special.push_back(static_cast<std::uint32_t>(c - c0));
      if (before && special.size() > before) {
        std::inplace_merge(special.begin(), special.begin() + static_cast<std::ptrdiff_t>(before), special.end());
        special.erase(std::unique(special.begin(), special.end()), special.end());
      }
    }
    for (const std::uint32_t i : special) {
      const Rounded m{model[i], flags[i]};
      check_one(spec, c0 + i, m, subject.data ? got[i] : m.code, acc, moved);
    }
  }
  add_outcome_keys(src, dst, keys_total.data(), acc);
  apply_moved(moved, acc);
  acc.patterns += n;
}

}  // namespace

void check_conversion_chunk(const ConvertCheckSpec& spec, std::uint64_t first, std::uint64_t n,
                            const SubjectChunk& subject, ConvertCheckResult& acc) {
  const bool batch = spec.src->total_bits() <= 32 && spec.dst->total_bits() <= 32;
  if (spec.mpfr_every || !batch) check_each(spec, first, n, subject, acc);
  else check_sampled(spec, first, n, subject, acc);
}

void check_conversion_differences(const ConvertCheckSpec& spec, std::uint64_t first, std::uint64_t n,
                                  std::span<const ModelDifference> differ, ConvertCheckResult& acc,
                                  const ConvertModel* model_in) {
  const ConvertModel model = model_in ? *model_in : make_convert_model(*spec.src, *spec.dst, spec.rounder);
  const bool stochastic = spec.rounder.rounding == Rounding::Stochastic;
  auto model_of = [&](std::uint64_t code) {
    const ModelResult r = model_convert(model, static_cast<std::uint32_t>(code), stochastic ? random_bits32(spec.seed, code) : 0);
    return Rounded{r.code, r.flags};
  };
  Moved moved{};
  // The differences and the sample, merged in ascending code order (the order check_sampled visits).
  const std::uint64_t s = spec.mpfr_sample;
  std::uint64_t next_sample = s ? (first + s - 1) / s * s : ~std::uint64_t{0};
  const std::uint64_t end = first + n;
  std::size_t k = 0;
  for (;;) {
    const std::uint64_t dcode = k < differ.size() ? differ[k].src : ~std::uint64_t{0};
    const std::uint64_t code = std::min(dcode, next_sample);
    if (code >= end) break;
    const Rounded m = model_of(code);
    if (code == dcode) {
      if (differ[k].got == m.code) throw std::logic_error("check_conversion_differences: a listed difference equals the model");
      check_one(spec, code, m, differ[k].got, acc, moved);
      ++k;
    } else {
      check_one(spec, code, m, m.code, acc, moved);
    }
    if (code == next_sample) next_sample += s;
  }
  if (k != differ.size()) throw std::logic_error("check_conversion_differences: differences outside the range or not ascending");
  apply_moved(moved, acc);
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
