// suites/ops/conversion/device_sweep.cpp — the pipelined sweep of a device conversion and its verdict.
#include "suites/ops/conversion/device_sweep.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <iterator>
#include <cmath>
#include <mutex>
#include <span>
#include <stdexcept>
#include <string>

#include "base/error.hpp"
#include "base/parallel.hpp"
#include "oracle/convert/convert_batch.hpp"
#include "oracle/convert/convert_model.hpp"
#include "oracle/mpfr_ref.hpp"
#include "suites/ops/conversion/convert_runner.hpp"

namespace fpcert {

std::vector<std::pair<std::uint64_t, std::uint64_t>> strided_sample_ranges(const Format& src) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> r;
  const std::uint64_t all = src.code_count();
  if (all <= (std::uint64_t{1} << 24)) {
    r.push_back({0, all});
    return r;
  }
  // Block i at i * 2^24 + o_i * 2^16, o_i = (i * 167) mod 256: the blocks' bit 23 (the fp32 exponent's
  // lowest bit) and fraction tops vary from block to block.
  const std::uint64_t step = all >> 8;
  for (std::uint64_t i = 0; i < 256; ++i) r.push_back({i * step + (((i * 167) & 0xFF) << 16) % step, 1 << 16});
  return r;
}

// ---- the sweep ----
namespace {

std::uint32_t load_result(const void* data, int bytes, std::uint64_t i) {
  switch (bytes) {
    case 1: return static_cast<const std::uint8_t*>(data)[i];
    case 2: return static_cast<const std::uint16_t*>(data)[i];
    default: return static_cast<const std::uint32_t*>(data)[i];
  }
}

/// The NaN the statement says a NaN source code becomes (statements with a rule that names one).
std::uint64_t stated_nan(const NanStatement& s, const DeviceConversion& e, std::uint64_t code) {
  const Format& src = *e.src;
  const Format& dst = *e.dst;
  switch (s.rule) {
    case NanRule::Canonical: return s.code;
    case NanRule::Preserve: return convert(src, code, dst, Rounder{e.rounder.rounding, e.rounder.saturation, NanPayload::Preserve}).code;
    case NanRule::ShiftPayload: {
      const std::uint64_t sign = code_is_negative(src, code) ? dst.sign_mask() : 0;
      return sign | dst.inf_code() | ((code & src.frac_mask()) << (dst.frac_bits - src.frac_bits));
    }
    default: return 0;
  }
}

constexpr std::size_t kListedOutputs = 16;

/// One worker's NaN report. Its own cache lines: the workers count into adjacent elements of a vector,
/// up to four increments per NaN input.
struct alignas(64) NanAcc {
  NanReport r;
  /// Counts `n` results of code `code`. The listed codes are the 16 smallest distinct codes seen,
  /// whatever order the chunks arrive in: a code pushed out by a smaller one moves its count to
  /// outputs_other and can never return (every later listed code is smaller still), so the report is
  /// the same on every run and every thread count.
  void add_output(std::uint32_t code, std::uint64_t n = 1) {
    if (auto it = r.outputs.find(code); it != r.outputs.end()) {
      it->second += n;
      return;
    }
    if (r.outputs.size() < kListedOutputs) {
      r.outputs.emplace(code, n);
      return;
    }
    auto largest = std::prev(r.outputs.end());
    if (code > largest->first) {
      r.outputs_other += n;
      return;
    }
    r.outputs_other += largest->second;
    r.outputs.erase(largest);
    r.outputs.emplace(code, n);
  }
  /// One result of a NaN input: runs of one code (a canonical NaN, 2^24 of them in an fp32 sweep) are
  /// counted here and added to the histogram when the code changes, not looked up code by code.
  void count_output(std::uint32_t code) {
    if (run_count && code == run_code) {
      ++run_count;
      return;
    }
    flush();
    run_code = code;
    run_count = 1;
  }
  void flush() {
    if (run_count) add_output(run_code, run_count);
    run_count = 0;
  }
  void merge(NanAcc& o, std::size_t max_listed) {
    flush();
    o.flush();
    r.inputs += o.r.inputs;
    r.as_stated += o.r.as_stated;
    r.not_as_stated += o.r.not_as_stated;
    r.differ_from_fpcert += o.r.differ_from_fpcert;
    r.outputs_other += o.r.outputs_other;
    for (const auto& [c, n] : o.r.outputs) add_output(c, n);
    r.listed.insert(r.listed.end(), o.r.listed.begin(), o.r.listed.end());
    std::sort(r.listed.begin(), r.listed.end(), [](const auto& a, const auto& b) { return a.src < b.src; });
    if (r.listed.size() > max_listed) r.listed.resize(max_listed);
  }

 private:
  std::uint32_t run_code = 0;
  std::uint64_t run_count = 0;
};

/// One NaN input's result `got` (a dst code) against fpcert's result for it (`truth()`, asked only when
/// `got` is a NaN: a result that is not a NaN is the ordinary check's to list) and the statement.
template <class Truth>
void judge_nan(const DeviceConversion& e, const NanStatement& st, std::uint64_t code, std::uint64_t got, bool got_nan, Truth&& truth,
               std::size_t max_listed, NanAcc& acc) {
  ++acc.r.inputs;
  if (!got_nan) return;
  acc.count_output(static_cast<std::uint32_t>(got));
  if (got != truth()) ++acc.r.differ_from_fpcert;
  if (st.rule == NanRule::Unstated) return;
  const std::uint64_t want = stated_nan(st, e, code);
  if (got == want) {
    ++acc.r.as_stated;
  } else {
    ++acc.r.not_as_stated;
    if (acc.r.listed.size() < max_listed)
      acc.r.listed.push_back({code, static_cast<std::uint32_t>(want), static_cast<std::uint32_t>(got)});
  }
}

/// NaN source codes in [lo, hi) (results at data[code - base]): their results against the statement.
void nan_probe(const DeviceConversion& e, const NanStatement& st, const Format& src_fmt,
               const std::vector<std::pair<std::uint64_t, std::uint64_t>>& nan_ranges, std::uint64_t lo, std::uint64_t hi,
               const void* data, std::uint64_t base, int bytes, std::size_t max_listed, NanAcc& acc) {
  if (st.rule == NanRule::NotApplicable) return;
  const Format& dst = *e.dst;
  for (const auto& [a, b] : nan_ranges) {
    const std::uint64_t from = std::max(a, lo), to = std::min(b, hi);
    for (std::uint64_t code = from; code < to; ++code) {
      const std::uint64_t got = from_container(dst, load_result(data, bytes, code - base));
      // specials: the documented policy
      judge_nan(e, st, code, got, classify(dst, got) == FpClass::NaN, [&] { return mpfr_ref::convert(src_fmt, code, dst, e.rounder).code; },
                max_listed, acc);
    }
  }
}

/// The device check's NaN inputs [a0, b0) (raw results at data[code - base]), docs/conversions.md "NaN
/// inputs": NaN inputs are policy, not rounding, so fpcert's model is the truth for one whose result and
/// model result are both NaNs, off the MPFR sample, without --strict-nan, when a NaN difference is
/// tolerated (counted apart, never listed): its difference is counted here, its statement judged
/// against the model. Every other NaN input goes the independent way, as before: a difference from the
/// model joins `extra` (ascending; MPFR decides it in check_conversion_differences, which also runs
/// MPFR on the sample, where a model that disagrees with MPFR fails the run), and the statement is
/// judged against MPFR. `mpfr_every`: every NaN input the independent way.
void finish_nan_inputs(const DeviceConversion& e, const NanStatement& st, const ConvertCheckSpec& spec, const ConvertModel* model,
                       bool mpfr_every, std::uint64_t a0, std::uint64_t b0, const void* data, std::uint64_t base, int bytes,
                       std::vector<ModelDifference>& extra, ConvertCheckResult& acc, NanAcc& nacc) {
  const Format& dst = *e.dst;
  const CodeClass dst_class = make_code_class(dst);
  const auto nan_class = static_cast<std::uint32_t>(FpClass::NaN);
  const int shift = std::countr_zero(to_container(dst, 1));  // container layout undone, as from_container does
  const auto mask = static_cast<std::uint32_t>(dst.code_mask());
  const bool fast_ok = !mpfr_every && !spec.strict_nan;
  const bool tolerated = nan_input_difference_accepted(spec);  // declared any (or a legacy preserve)
  const bool probe = st.rule != NanRule::NotApplicable;
  const std::uint64_t s = spec.mpfr_sample;
  std::uint64_t next_sample = s ? (a0 + s - 1) / s * s : ~std::uint64_t{0};
  std::uint64_t nan_differences = 0;  // added to acc at the end (acc shares cache lines with other workers')
  constexpr std::uint64_t kBlock = 4096;
  std::array<std::uint32_t, kBlock> m_codes;
  for (std::uint64_t c0 = a0; c0 < b0; c0 += kBlock) {
    const std::size_t len = static_cast<std::size_t>(std::min(kBlock, b0 - c0));
    if (model) {  // a model given by the caller, code by code
      for (std::size_t j = 0; j < len; ++j) m_codes[j] = model_convert(*model, static_cast<std::uint32_t>(c0 + j)).code;
    } else {  // the batch path of the same model (tests/oracle/convert_simd_test.cpp holds them equal)
      convert_code_range(*e.src, dst, e.rounder, spec.seed, c0, m_codes.data(), nullptr, len);
    }
    for (std::size_t j = 0; j < len; ++j) {
      const std::uint64_t code = c0 + j;
      const std::uint32_t got = (load_result(data, bytes, code - base) >> shift) & mask;
      const std::uint32_t m = m_codes[j];
      const bool got_nan = dst_class(got) == nan_class;
      const bool sampled = code == next_sample;
      if (sampled) next_sample += s;
      if (fast_ok && !sampled && got_nan && dst_class(m) == nan_class && (got == m || tolerated)) {
        nan_differences += got != m;
        if (probe) judge_nan(e, st, code, got, true, [m] { return std::uint64_t{m}; }, spec.max_listed, nacc);
      } else {
        if (got != m) extra.push_back({code, got});
        if (probe)
          judge_nan(e, st, code, got, got_nan, [&] { return mpfr_ref::convert(*e.src, code, dst, e.rounder).code; }, spec.max_listed, nacc);
      }
    }
  }
  acc.nan_differences += nan_differences;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

struct Piece {
  std::uint64_t first, count;
};

std::vector<Piece> split(const std::vector<std::pair<std::uint64_t, std::uint64_t>>& ranges, std::uint64_t max_chunk) {
  std::vector<Piece> out;
  for (const auto& [first, count] : ranges)
    for (std::uint64_t off = 0; off < count; off += max_chunk) out.push_back({first + off, std::min(max_chunk, count - off)});
  return out;
}

void add_lanes_and_strays(DeviceSweepResult& res, const ProducedChunk& pc, std::size_t max_listed) {
  res.lane_mismatches += pc.lane_mismatches;
  for (const auto& l : pc.lanes)
    if (res.lanes.size() < max_listed) res.lanes.push_back(l);
  res.stray += pc.stray;
  for (const auto& s : pc.strays)
    if (res.strays.size() < max_listed) res.strays.push_back(s);
}

/// Runs the chunks through the producer two slots deep: chunk k + 1 is produced while chunk k is
/// checked. check(piece, chunk) runs on the calling thread (and fans out itself).
template <class Check>
void pipeline(ConversionProducer& producer, const DeviceConversion& e, const std::vector<Piece>& pieces,
              DeviceSweepResult& res, const SweepOptions& opt, Check&& check) {
  if (pieces.empty()) return;
  std::uint64_t total = 0, done = 0;
  for (const auto& p : pieces) total += p.count;
  const auto t0 = std::chrono::steady_clock::now();
  producer.enqueue(e, pieces[0].first, pieces[0].count, 0);
  for (std::size_t k = 0; k < pieces.size(); ++k) {
    if (k + 1 < pieces.size()) producer.enqueue(e, pieces[k + 1].first, pieces[k + 1].count, static_cast<int>((k + 1) % 2));
    const auto tw = std::chrono::steady_clock::now();
    const ProducedChunk pc = producer.wait(static_cast<int>(k % 2));
    res.timing.wait_s += seconds_since(tw);
    res.timing.gpu_s += pc.gpu_ms / 1000.0;
    res.timing.transfer_s += pc.transfer_ms / 1000.0;
    add_lanes_and_strays(res, pc, opt.max_listed);
    const auto tc = std::chrono::steady_clock::now();
    check(pieces[k], pc);
    res.timing.check_s += seconds_since(tc);
    done += pieces[k].count;
    if (opt.progress) opt.progress(static_cast<double>(done) / static_cast<double>(total));
  }
  res.timing.wall_s = seconds_since(t0);
}

/// The device check's pipeline, two slots deep like pipeline(): chunk k + 1 is converted and compared
/// on the device while the host finishes chunk k (MPFR on its differences and sample, NaN inputs).
template <class Finish>
void check_on_device(DeviceChecker& checker, const DeviceConversion& e, const std::vector<Piece>& pieces, DeviceSweepResult& res,
                     const SweepOptions& opt, Finish&& finish) {
  if (pieces.empty()) return;
  std::uint64_t total = 0, done = 0;
  for (const auto& p : pieces) total += p.count;
  const auto t0 = std::chrono::steady_clock::now();
  checker.enqueue(e, pieces[0].first, pieces[0].count, 0);
  for (std::size_t k = 0; k < pieces.size(); ++k) {
    if (k + 1 < pieces.size()) checker.enqueue(e, pieces[k + 1].first, pieces[k + 1].count, static_cast<int>((k + 1) % 2));
    const auto tw = std::chrono::steady_clock::now();
    const DeviceCheckChunk c = checker.wait(static_cast<int>(k % 2));
    res.timing.wait_s += seconds_since(tw);
    res.timing.gpu_s += c.side.gpu_ms / 1000.0;
    res.timing.transfer_s += c.side.transfer_ms / 1000.0;
    add_lanes_and_strays(res, c.side, opt.max_listed);
    const auto tc = std::chrono::steady_clock::now();
    finish(c);
    res.timing.check_s += seconds_since(tc);
    done += pieces[k].count;
    if (opt.progress) opt.progress(static_cast<double>(done) / static_cast<double>(total));
  }
  res.timing.wall_s = seconds_since(t0);
}

void common_failures(DeviceSweepResult& res, const NanStatement& st, bool strict) {
  auto& f = res.failures;
  const auto& c = res.check;
  if (c.model_mismatches)
    f.push_back(std::to_string(c.model_mismatches) + " patterns where fpcert's fast model disagrees with MPFR (a bug in fpcert)");
  if (c.mismatches)
    f.push_back(std::to_string(c.mismatches) + " results differ from the correctly rounded reference (NaN inputs: the declared " +
                std::string(to_string(res.entry->rounder.nan)) + " NaN" + (strict ? ", --strict-nan" : "") + ")");
  if (res.lane_mismatches)
    f.push_back(std::to_string(res.lane_mismatches) + " codes whose result in the high lane differs from the low lane's");
  if (res.stray) f.push_back(std::to_string(res.stray) + " results with bits set outside the format's code in its container");
  if (res.nan_other_differences)
    f.push_back(std::to_string(res.nan_other_differences) +
                " NaN results from non-NaN inputs (overflow, Inf) with other bits than fpcert's policy");
  if (st.decisive && st.rule != NanRule::NotApplicable && st.rule != NanRule::Unstated && res.nan.not_as_stated)
    f.push_back(std::to_string(res.nan.not_as_stated) + " NaN inputs gave another NaN than the stated " +
                std::string(to_string(st.rule)) + (st.rule == NanRule::Canonical ? " " + hex_code(*res.entry->dst, st.code) : std::string()) +
                " (" + std::string(st.basis) + ")");
}

unsigned worker_count(const SweepOptions& opt) { return opt.threads ? opt.threads : thread_count(); }

DeviceSweepResult sweep_scaled(ConversionProducer& producer, const DeviceConversion& e, const SweepOptions& opt,
                               DeviceSweepResult res) {
  // Pseudo formats "bf16 times 2^s": bf16's fields with bias 127 - s, so that the ordinary check
  // (fast model, MPFR, outcome classes) judges h = RN_f16(x * 2^s) code by code.
  constexpr int kScales = 254, kSmin = -126;
  static const std::array<std::string, kScales> tags = [] {
    std::array<std::string, kScales> t;
    for (int i = 0; i < kScales; ++i) t[i] = "bf16*2^" + std::to_string(kSmin + i);
    return t;
  }();
  static const std::array<Format, kScales> scaled_fmt = [] {
    std::array<Format, kScales> f{};
    for (int i = 0; i < kScales; ++i) {
      f[i] = bf16;
      f[i].tag = tags[i];
      f[i].name = tags[i];
      f[i].bias = 127 - (kSmin + i);
    }
    return f;
  }();
  const NanStatement& st = nan_statement(e, res.hardware);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges = opt.ranges;
  if (ranges.empty()) ranges.push_back({0, entry_code_count(e)});
  for (const auto& [first, count] : ranges)
    if (first % 65536 || count % 65536 || first + count > entry_code_count(e))
      throw InputError("bf16_to_f16_pow2_scaled: ranges must be whole scales (multiples of 65536 below 254 * 65536)");
  const auto pieces = split(ranges, producer.max_chunk());
  const unsigned threads = worker_count(opt);
  res.timing.threads = threads;
  std::vector<ConvertCheckResult> per(threads);
  std::vector<NanAcc> nans(threads);
  std::vector<ScaledReport> rep(threads);
  std::vector<ScaleRow> rows(kScales);
  std::mutex rows_mutex;
  const auto nan_ranges = nan_code_ranges(bf16);
  const Rounder rn_f32 = Rounder::nearest(f32), rn_bf16 = Rounder::nearest(bf16);
  pipeline(producer, e, pieces, res, opt, [&](const Piece& piece, const ProducedChunk& pc) {
    parallel_for(
        piece.count / 65536, 1,
        [&](std::uint64_t b, std::uint64_t end, unsigned w) {
          for (std::uint64_t blk = b; blk < end; ++blk) {
            const std::uint64_t p0 = piece.first + blk * 65536;
            const int si = static_cast<int>(p0 >> 16), s = kSmin + si;
            const auto* v = static_cast<const std::uint32_t*>(pc.data) + blk * 65536;
            ConvertCheckSpec spec;
            spec.src = &scaled_fmt[si];
            spec.dst = &f16;
            spec.rounder = e.rounder;
            spec.mpfr_every = false;
            spec.mpfr_sample = opt.mpfr_sample;
            spec.strict_nan = opt.strict_nan;
            spec.max_listed = opt.max_listed;
            check_conversion_chunk(spec, 0, 65536, SubjectChunk{v, 4, false}, per[w]);
            DeviceConversion as_f16 = e;  // the fp16 half of the round trip, for the NaN statement
            as_f16.src = &scaled_fmt[si];
            as_f16.dst = &f16;
            nan_probe(as_f16, st, scaled_fmt[si], nan_ranges, 0, 65536, v, 0, 4, opt.max_listed, nans[w]);
            ScaleRow row;
            row.s = s;
            row.window_lo = std::max(-17 - s, -133);
            row.window_hi = std::min(15 - s, 127);
            ScaledReport& r = rep[w];
            for (std::uint32_t x = 0; x < 65536; ++x) {
              const std::uint32_t y = v[x] & 0xFFFF, z = v[x] >> 16;
              // The unscaled bf16 must be RN_bf16(RN_f32(h * 2^-s)) of the device's own fp16 h.
              const double yd = to_double(f16, y);
              const Rounded w32 = round_double(f32, std::ldexp(yd, -s), rn_f32);
              std::uint64_t zref = round_double(bf16, to_double(f32, w32.code), rn_bf16).code;
              if (z != zref && classify(f16, y) != FpClass::NaN) {  // MPFR arbitrates
                mpfr_ref::Mpfr m(64);
                mpfr_ref::set_code(m, f16, y);
                mpfr_mul_2si(m, m, -s, MPFR_RNDN);
                const Rounded w2 = mpfr_ref::round(f32, m, rn_f32);
                const std::uint64_t z2 = mpfr_ref::convert(f32, w2.code, bf16, rn_bf16).code;
                if (z2 != zref) {
                  ++r.model_window_errors;
                  zref = z2;
                }
              }
              if (z != zref) {
                const bool both_nan = classify(bf16, z) == FpClass::NaN && classify(bf16, zref) == FpClass::NaN;
                if (both_nan && !opt.strict_nan) {
                  ++r.roundtrip_nan_differences;
                } else {
                  ++r.roundtrip_mismatches;
                  if (r.listed.size() < opt.max_listed)
                    r.listed.push_back({p0 | x, zref, z, Outcome::RoundedNormal, false});
                }
              }
              // The window: every finite bf16 whose binade lies in [window_lo, window_hi] (and zeros).
              const FpClass xc = classify(bf16, x);
              if (xc == FpClass::NaN || xc == FpClass::Inf) continue;
              const std::uint32_t mag = x & 0x7FFF, biased = mag >> 7;
              const int e2 = biased ? static_cast<int>(biased) - 127 : -134 + static_cast<int>(std::bit_width(mag));
              const bool in_window = mag == 0 || (e2 >= row.window_lo && e2 <= row.window_hi);
              if (in_window) {
                ++row.window_patterns;
                // The model agrees that x * 2^s is an fp16 number (else the window formula is wrong).
                const Rounded h = round_double(f16, std::ldexp(to_double(bf16, x), s), e.rounder);
                if (h.flags) ++r.model_window_errors;
                if (z == x) {
                  ++row.window_exact;
                } else {
                  ++r.window_failures;
                  if (r.listed.size() < opt.max_listed) r.listed.push_back({p0 | x, x, z, Outcome::ExactNormal, false});
                }
              } else {
                ++row.outside_patterns;
                if (z == x) ++row.outside_exact;
              }
            }
            std::lock_guard<std::mutex> lock(rows_mutex);
            rows[si] = row;
          }
        },
        threads);
  });
  nans[0].flush();
  for (unsigned w = 0; w < threads; ++w) {
    res.check.merge(per[w], opt.max_listed);
    if (w) nans[0].merge(nans[w], opt.max_listed);
    res.scaled.window_failures += rep[w].window_failures;
    res.scaled.roundtrip_mismatches += rep[w].roundtrip_mismatches;
    res.scaled.roundtrip_nan_differences += rep[w].roundtrip_nan_differences;
    res.scaled.model_window_errors += rep[w].model_window_errors;
    res.scaled.listed.insert(res.scaled.listed.end(), rep[w].listed.begin(), rep[w].listed.end());
  }
  std::sort(res.scaled.listed.begin(), res.scaled.listed.end(), [](const auto& a, const auto& b) { return a.src < b.src; });
  if (res.scaled.listed.size() > opt.max_listed) res.scaled.listed.resize(opt.max_listed);
  for (const auto& piece : pieces)
    for (std::uint64_t p = piece.first; p < piece.first + piece.count; p += 65536) res.scaled.rows.push_back(rows[p >> 16]);
  res.nan = nans[0].r;
  res.patterns = res.check.patterns;
  res.nan_other_differences = 0;  // every entry declares its NaN convention: another NaN from a non-NaN input is a mismatch
  common_failures(res, st, opt.strict_nan);
  if (res.scaled.window_failures)
    res.failures.push_back(std::to_string(res.scaled.window_failures) + " bf16 values inside the window did not come back exactly");
  if (res.scaled.roundtrip_mismatches)
    res.failures.push_back(std::to_string(res.scaled.roundtrip_mismatches) +
                           " unscaled bf16 results differ from RN_bf16(RN_f32(h * 2^-s)) of the device's fp16 h");
  if (res.scaled.model_window_errors)
    res.failures.push_back(std::to_string(res.scaled.model_window_errors) + " disagreements of fpcert's window or model with MPFR (a bug in fpcert)");
  return res;
}

}  // namespace

DeviceSweepResult sweep_conversion(ConversionProducer& producer, const DeviceConversion& e, const SweepOptions& opt) {
  DeviceSweepResult res;
  res.entry = &e;
  res.device = producer.device_name();
  res.arch = producer.running_arch();
  const EntrySupport sup = entry_support(e, res.arch);
  if (!sup.ok) throw NotSupportedError(std::string(e.name) + ": " + sup.reason);
  res.hardware = sup.hardware;
  res.path = sup.reason;
  res.exhaustive = opt.ranges.empty();
  if (e.kind == ConversionKind::ScaledRoundTrip) return sweep_scaled(producer, e, opt, std::move(res));

  const std::uint64_t all = entry_code_count(e);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges = opt.ranges;
  if (ranges.empty()) ranges.push_back({0, all});
  for (const auto& [first, count] : ranges)
    if (count == 0 || first >= all || count > all - first)
      throw InputError("range " + std::to_string(first) + ":" + std::to_string(count) + " lies outside the " +
                       std::to_string(all) + " codes of " + std::string(e.src->tag));
  const auto pieces = split(ranges, producer.max_chunk());
  const NanStatement& st = nan_statement(e, sup.hardware);
  const auto nan_ranges = nan_code_ranges(*e.src);
  const int bytes = result_bytes(e);
  const unsigned threads = worker_count(opt);
  res.timing.threads = threads;

  ConvertCheckSpec spec;
  spec.src = e.src;
  spec.dst = e.dst;
  spec.rounder = e.rounder;
  spec.mpfr_every = false;
  spec.mpfr_sample = opt.mpfr_sample;
  spec.strict_nan = opt.strict_nan;
  spec.max_listed = opt.max_listed;
  std::vector<ConvertCheckResult> per(threads);
  std::vector<NanAcc> nans(threads);
  // The host check of one chunk of results (all of them on the host).
  std::vector<std::uint8_t> edited;  // the results with opt.fault injected
  auto host_check = [&](const Piece& piece, const ProducedChunk& given) {
    ProducedChunk pc;
    pc.data = given.data;
    if (opt.fault) {  // each worker injects the fault into its part of the copy, then checks it
      const auto* from = static_cast<const std::uint8_t*>(given.data);
      edited.assign(from, from + piece.count * static_cast<std::uint64_t>(bytes));
      pc.data = edited.data();
    }
    const std::uint64_t grain = std::max<std::uint64_t>(std::uint64_t{1} << 16, piece.count / (threads * 8ull) + 1);
    parallel_for(
        piece.count, grain,
        [&](std::uint64_t b, std::uint64_t end, unsigned w) {
          const auto* p = static_cast<const std::uint8_t*>(pc.data) + b * static_cast<std::uint64_t>(bytes);
          if (opt.fault) opt.fault(piece.first + b, end - b, edited.data() + b * static_cast<std::uint64_t>(bytes), bytes);
          check_conversion_chunk(spec, piece.first + b, end - b, SubjectChunk{p, bytes, true}, per[w]);
          nan_probe(e, st, *e.src, nan_ranges, piece.first + b, piece.first + end, pc.data, piece.first, bytes, opt.max_listed,
                    nans[w]);
        },
        threads);
  };
  if (opt.checker && opt.checker->supports(e) && !opt.fault) {
    res.checked_on = "device";
    const ConvertModel model = opt.model ? *opt.model : make_convert_model(*e.src, *e.dst, e.rounder);
    const ConvertModel* given_model = opt.model;
    std::vector<std::vector<ModelDifference>> nan_extra(threads), nan_merged(threads);
    check_on_device(*opt.checker, e, split(ranges, opt.checker->max_chunk()), res, opt, [&](const DeviceCheckChunk& c) {
      if (c.overflow) {  // more differences than the list holds: the results come back, the host checks them
        ++res.host_fallback_chunks;
        for (const Piece& p : split({{c.first, c.count}}, producer.max_chunk())) {
          producer.enqueue(e, p.first, p.count, 0);
          host_check(p, producer.wait(0));  // its lanes and strays were counted by the device check
        }
        return;
      }
      add_outcome_keys(*e.src, *e.dst, c.keys.data(), per[0]);
      // Small grains: a chunk's NaN inputs (2^23 of the 2^28 codes of fp32's top chunk of each sign)
      // cost far more per code than its other codes, and must spread over every thread.
      const std::uint64_t grain = std::max<std::uint64_t>(std::uint64_t{1} << 16, c.count / (threads * 64ull) + 1);
      const auto by_src = [](const ModelDifference& x, const ModelDifference& y) { return x.src < y.src; };
      parallel_for(
          c.count, grain,
          [&](std::uint64_t b, std::uint64_t end, unsigned w) {
            const std::uint64_t lo = c.first + b, hi = c.first + end;
            // The device's differences in [lo, hi) (NaN inputs aside), and those NaN inputs that go to MPFR.
            auto from = std::lower_bound(c.listed.begin(), c.listed.end(), lo, [](const ModelDifference& d, std::uint64_t v) { return d.src < v; });
            auto to = std::lower_bound(from, c.listed.end(), hi, [](const ModelDifference& d, std::uint64_t v) { return d.src < v; });
            std::vector<ModelDifference>& extra = nan_extra[w];
            extra.clear();
            for (const auto& part : c.nan) {
              const std::uint64_t a0 = std::max(lo, part.first), b0 = std::min(hi, part.first + part.count);
              if (a0 < b0)
                finish_nan_inputs(e, st, spec, given_model, opt.nan_mpfr_every, a0, b0, part.data, part.first, bytes, extra, per[w], nans[w]);
            }
            std::span<const ModelDifference> differ(from, to);
            if (!extra.empty()) {
              if (!std::is_sorted(extra.begin(), extra.end(), by_src)) std::sort(extra.begin(), extra.end(), by_src);
              std::vector<ModelDifference>& merged = nan_merged[w];
              merged.clear();
              std::merge(from, to, extra.begin(), extra.end(), std::back_inserter(merged), by_src);
              differ = merged;
            }
            check_conversion_differences(spec, lo, end - b, differ, per[w], &model);
          },
          threads);
    });
  } else {
    pipeline(producer, e, pieces, res, opt, host_check);
  }
  nans[0].flush();
  for (unsigned w = 0; w < threads; ++w) {
    res.check.merge(per[w], opt.max_listed);
    if (w) nans[0].merge(nans[w], opt.max_listed);
  }
  res.nan = nans[0].r;
  res.patterns = res.check.patterns;
  res.nan_other_differences = 0;  // every entry declares its NaN convention: another NaN from a non-NaN input is a mismatch
  common_failures(res, st, opt.strict_nan);
  return res;
}

SweepOptions sweep_options_for(const ConversionCase& c) {
  SweepOptions o;
  o.ranges = c.ranges;
  o.strict_nan = c.check.strict_nan;
  o.mpfr_sample = c.check.mpfr_sample;
  o.threads = c.check.threads;
  o.max_listed = c.check.max_listed;
  return o;
}

DeviceSweepResult sweep_device_kernel(DeviceTableKernel& k, const ConversionCase& c, const std::function<void(double)>& progress) {
  std::string why;
  ConversionProducer* p = k.producer(&why);
  if (!p) throw NotSupportedError("no CUDA device: " + why);
  const EntrySupport sup = entry_support(k.entry(), p->running_arch());
  if (!sup.ok) throw NotSupportedError(sup.reason);
  SweepOptions o = sweep_options_for(c);
  o.progress = progress;
  o.fault = c.device_fault;
  if (c.check.place != CheckPlace::Host && !o.fault) {
    std::string cwhy;
    o.checker = shared_device_checker(&cwhy);
    if (!o.checker && c.check.place == CheckPlace::Device) throw DeviceError("--check device: no device check (" + cwhy + ")");
  }
  return sweep_conversion(*p, k.entry(), o);
}

DeviceChecker* shared_device_checker(std::string* why) {
  static std::string reason;
  static const std::unique_ptr<DeviceChecker> checker = make_cuda_device_checker(&reason);
  if (!checker && why) *why = reason;
  return checker.get();
}

}  // namespace fpcert
