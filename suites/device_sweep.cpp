// suites/device_sweep.cpp — the pipelined sweep of a device conversion and its verdict.
#include "suites/device_sweep.hpp"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <mutex>
#include <stdexcept>
#include <string>

#include "base/error.hpp"
#include "base/parallel.hpp"
#include "oracle/mpfr_ref.hpp"
#include "suites/convert_runner.hpp"

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

/// Source codes that are NaN, as [first, end) intervals.
std::vector<std::pair<std::uint64_t, std::uint64_t>> nan_code_ranges(const Format& f) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> r;
  const std::uint64_t mag = f.magnitude_mask();
  switch (f.specials) {
    case Specials::IEEE: r.push_back({f.inf_code() + 1, mag + 1}); break;
    case Specials::FiniteNaN:
    case Specials::ScaleOnly: r.push_back({mag, mag + 1}); break;
    case Specials::FiniteOnly: return r;
  }
  if (f.is_signed()) r.push_back({r[0].first + f.sign_mask(), r[0].second + f.sign_mask()});  // the same, negative
  return r;
}

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

struct NanAcc {
  NanReport r;
  void add_output(std::uint32_t code) {
    auto it = r.outputs.find(code);
    if (it != r.outputs.end()) ++it->second;
    else if (r.outputs.size() < 16) r.outputs.emplace(code, 1);
    else ++r.outputs_other;
  }
  void merge(const NanAcc& o, std::size_t max_listed) {
    r.inputs += o.r.inputs;
    r.as_stated += o.r.as_stated;
    r.not_as_stated += o.r.not_as_stated;
    r.differ_from_fpcert += o.r.differ_from_fpcert;
    r.outputs_other += o.r.outputs_other;
    for (const auto& [c, n] : o.r.outputs) {
      auto it = r.outputs.find(c);
      if (it != r.outputs.end()) it->second += n;
      else if (r.outputs.size() < 16) r.outputs.emplace(c, n);
      else r.outputs_other += n;
    }
    r.listed.insert(r.listed.end(), o.r.listed.begin(), o.r.listed.end());
    std::sort(r.listed.begin(), r.listed.end(), [](const auto& a, const auto& b) { return a.src < b.src; });
    if (r.listed.size() > max_listed) r.listed.resize(max_listed);
  }
};

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
      ++acc.r.inputs;
      if (classify(dst, got) != FpClass::NaN) continue;  // not a NaN at all: the ordinary check lists it
      acc.add_output(static_cast<std::uint32_t>(got));
      const Rounded truth = mpfr_ref::convert(src_fmt, code, dst, e.rounder);  // specials: the documented policy
      if (got != truth.code) ++acc.r.differ_from_fpcert;
      if (st.rule == NanRule::Unstated) continue;
      const std::uint64_t want = stated_nan(st, e, code);
      if (got == want) {
        ++acc.r.as_stated;
      } else {
        ++acc.r.not_as_stated;
        if (acc.r.listed.size() < max_listed)
          acc.r.listed.push_back({code, static_cast<std::uint32_t>(want), static_cast<std::uint32_t>(got)});
      }
    }
  }
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

void common_failures(DeviceSweepResult& res, const NanStatement& st, bool strict) {
  auto& f = res.failures;
  const auto& c = res.check;
  if (c.model_mismatches)
    f.push_back(std::to_string(c.model_mismatches) + " patterns where fpcert's fast model disagrees with MPFR (a bug in fpcert)");
  if (c.mismatches)
    f.push_back(std::to_string(c.mismatches) + " results differ from the correctly rounded reference" +
                (strict ? " (NaN payloads and signs included: --strict-nan)" : ""));
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
  res.nan_other_differences = opt.strict_nan ? 0 : res.check.nan_differences - std::min(res.check.nan_differences, res.nan.differ_from_fpcert);
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
  pipeline(producer, e, pieces, res, opt, [&](const Piece& piece, const ProducedChunk& pc) {
    const std::uint64_t grain = std::max<std::uint64_t>(std::uint64_t{1} << 16, piece.count / (threads * 8ull) + 1);
    parallel_for(
        piece.count, grain,
        [&](std::uint64_t b, std::uint64_t end, unsigned w) {
          const auto* p = static_cast<const std::uint8_t*>(pc.data) + b * static_cast<std::uint64_t>(bytes);
          check_conversion_chunk(spec, piece.first + b, end - b, SubjectChunk{p, bytes, true}, per[w]);
          nan_probe(e, st, *e.src, nan_ranges, piece.first + b, piece.first + end, pc.data, piece.first, bytes, opt.max_listed,
                    nans[w]);
        },
        threads);
  });
  for (unsigned w = 0; w < threads; ++w) {
    res.check.merge(per[w], opt.max_listed);
    if (w) nans[0].merge(nans[w], opt.max_listed);
  }
  res.nan = nans[0].r;
  res.patterns = res.check.patterns;
  res.nan_other_differences = opt.strict_nan ? 0 : res.check.nan_differences - std::min(res.check.nan_differences, res.nan.differ_from_fpcert);
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
  return sweep_conversion(*p, k.entry(), o);
}

}  // namespace fpcert
