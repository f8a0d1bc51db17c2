// oracle/block/block_check.cpp — structured exhaustive sweeps of the block quantizer model against MPFR.
#include "oracle/block/block_check.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <limits>
#include <mutex>
#include <stdexcept>

#include "oracle/block/block_mpfr.hpp"
#include "oracle/mpfr_ref.hpp"
#include "base/parallel.hpp"
#include "base/philox.hpp"

namespace fpcert {

std::uint64_t BlockCheckResult::checked() const {
  std::uint64_t n = 0;
  for (const auto& p : parts) n += p.checked;
  return n;
}
std::uint64_t BlockCheckResult::mismatches() const {
  std::uint64_t n = 0;
  for (const auto& p : parts) n += p.mismatches;
  return n;
}
double BlockCheckResult::seconds() const {
  double s = 0;
  for (const auto& p : parts) s += p.seconds;
  return s;
}

namespace {

using mpfr_ref::Mpfr;
constexpr Rounding kModes[] = {Rounding::NearestEven, Rounding::NearestAway, Rounding::TowardZero,
                               Rounding::Up,          Rounding::Down,        Rounding::Stochastic};
constexpr std::uint64_t kSeed = 0x6D78636865636BULL;  // "mxcheck": the stochastic bits of every check

std::string strf(const char* format, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, format);
  std::vsnprintf(buf, sizeof buf, format, ap);
  va_end(ap);
  return buf;
}

/// A part under way: counts from many threads, the first mismatches described.
class Acc {
 public:
  Acc(std::string name, std::size_t max_listed) : max_(max_listed) { part_.name = std::move(name); }
  void count(std::uint64_t n = 1) { checked_ += n; }
  void fail(const std::string& what) {
    ++bad_;
    std::lock_guard<std::mutex> lock(mu_);
    if (part_.listed.size() < max_) part_.listed.push_back(what);
  }
  BlockCheckPart finish(double seconds) {
    part_.checked = checked_;
    part_.mismatches = bad_;
    part_.seconds = seconds;
    return part_;
  }

 private:
  BlockCheckPart part_;
  std::size_t max_;
  std::atomic<std::uint64_t> checked_{0}, bad_{0};
  std::mutex mu_;
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// Whether a model value equals an MPFR reference (ok == false: the reference is NaN), zeros by sign.
bool same_value(double a, mpfr_srcptr m, bool ok) {
  if (!ok) return std::isnan(a);
  if (std::isnan(a)) return false;
  if (mpfr_inf_p(m)) return std::isinf(a) && (a > 0) == (mpfr_sgn(m) > 0);
  if (mpfr_cmp_d(m, a) != 0) return false;
  return a != 0 || std::signbit(a) == (mpfr_signbit(m) != 0);
}

/// An MPFR number that must be a double exactly.
double exact_double(mpfr_srcptr m) {
  const double d = mpfr_get_d(m, MPFR_RNDN);
  if (mpfr_cmp_d(m, d) != 0) throw std::logic_error("block check: a ladder value is not a double");
  return d;
}

/// Magnitude codes of the positive element values in increasing order: 0 .. K.
std::uint64_t largest_magnitude_code(const BlockFormat& f) { return f.int_elements ? 127 : f.element->max_finite_code(); }

/// The element code of magnitude index k with a sign (float: sign bit; MXINT8: two's complement).
std::uint8_t signed_code(const BlockFormat& f, std::uint64_t k, bool neg) {
  if (f.int_elements) return int8_byte_from_code((neg ? 0x80u : 0u) | k);
  return static_cast<std::uint8_t>((neg ? f.element->sign_mask() : 0) | k);
}

/// The element's value of magnitude index k, unscaled, in MPFR (float: the descriptor's fields read by
/// mpfr_ref::set_code; MXINT8: k * 2^-6).
void element_mag(mpfr_ptr out, const BlockFormat& f, std::uint64_t k) {
  if (f.int_elements) mpfr_set_ui_2exp(out, k, -6, MPFR_RNDN);
  else mpfr_ref::set_code(out, *f.element, k);
}

std::string describe(const BlockFormat& f, const char* what, double x, int scale, double ts, Rounding r, int got, int want,
                     int got_flags = -1, int want_flags = -1) {
  std::string s = strf("%s: x = %a under scale code 0x%02x", what, x, scale);
  if (f.tensor_scale) s += strf(" (tensor scale %a)", ts);
  s += strf(", %s: model 0x%02x, MPFR 0x%02x", std::string(to_string(r)).c_str(), got, want);
  if (got_flags >= 0) s += strf(" (flags %d vs %d)", got_flags, want_flags);
  return s;
}

std::vector<double> tensor_scales(const BlockFormat& f) {
  if (!f.tensor_scale) return {1.0};
  return {1.0, to_double(f32, round_double(f32, 0.3, Rounder::nearest(f32)).code), std::ldexp(1.2345678, -100)};
}

// ---- part 1: every element code under every scale -------------------------------------------------

void part_codes(const BlockFormat& f, const BlockCheckOptions& o, Acc& acc) {
  std::vector<double> tss = tensor_scales(f);
  for (double& ts : tss) ts = to_double(f32, round_double(f32, ts, Rounder::nearest(f32)).code);
  const std::uint64_t nscales = f.scale_codes();
  const std::uint64_t K = largest_magnitude_code(f);
  parallel_for(tss.size() * nscales, 1, [&](std::uint64_t w0, std::uint64_t w1, unsigned) {
    Mpfr m(128), e(64);
    for (std::uint64_t w = w0; w < w1; ++w) {
      const double ts = tss[w / nscales];
      const auto s = static_cast<std::uint8_t>(w % nscales);
      if (s % std::max<std::uint32_t>(1, o.scale_stride) != 0 && s > 1 && s + 2u < nscales) continue;
      // (a) the exact value of every element code.
      for (std::uint32_t c = 0; c < f.element_codes(); ++c) {
        const double v = dequantize(f, static_cast<std::uint8_t>(c), s, ts);
        const bool ok = mpfr_ref::dequantize(m, f, static_cast<std::uint8_t>(c), s, ts);
        acc.count();
        if (!same_value(v, m, ok))
          acc.fail(strf("dequantize: element 0x%02x, scale 0x%02x, tensor scale %a: model %a", c, s, ts, v));
      }
      if (s == f.scale_nan_code() || scale_value(f, s) == 0) continue;  // NaN, or NVFP4's zero scale: never written
      // (b) quantize the values, the midpoints, the ends, each nudged by one double ulp.
      const double X = scale_value(f, s) * ts;
      std::vector<double> V(K + 2);
      for (std::uint64_t k = 0; k <= K; ++k) {
        element_mag(e, f, k);
        mpfr_mul_d(m, e, X, MPFR_RNDN);  // exact: <= 8 + 28 bits
        V[k] = exact_double(m);
      }
      element_mag(e, f, K);  // the next value past the largest in an unbounded element format
      mpfr_set_ui_2exp(m, 1, static_cast<long>(mpfr_get_exp(e)) - 1 - f.element->frac_bits, MPFR_RNDN);
      mpfr_add(m, m, e, MPFR_RNDN);
      mpfr_mul_d(m, m, X, MPFR_RNDN);
      V[K + 1] = exact_double(m);
      std::vector<double> pts;
      for (std::uint64_t k = 0; k <= K + 1; ++k) {
        pts.push_back(V[k]);
        if (k + 1 <= K + 1) pts.push_back((V[k] + V[k + 1]) / 2);  // exact: neighbours within a binade or two
      }
      pts.push_back(2 * V[K + 1]);
      pts.push_back(V[1] / 4);
      const std::size_t base = pts.size();
      for (std::size_t q = 1; q < base; ++q) {  // neighbours (not of zero: its neighbours are denormal doubles)
        pts.push_back(std::nextafter(pts[q], 0.0));
        pts.push_back(std::nextafter(pts[q], INFINITY));
      }
      std::uint64_t counter = w << 20;
      for (double p : pts)
        for (int sign = 0; sign < 2; ++sign) {
          const double x = sign ? -p : p;
          for (Rounding r : kModes) {
            const std::uint32_t rbits = r == Rounding::Stochastic ? random_bits32(kSeed, counter++) : 0;
            const ElementCode got = quantize_element(f, x, s, ts, r, rbits);
            const ElementCode want = mpfr_ref::quantize_element(f, x, s, ts, r, rbits);
            acc.count();
            if (!(got == want)) acc.fail(describe(f, "quantize element", x, s, ts, r, got.code, want.code, got.flags, want.flags));
          }
        }
    }
  }, o.threads);
}

// ---- part 2: every fp32 value of the binade range, in blocks around a controlled maximum -----------

/// The scaled element values V_0 = 0 < V_1 < ... < V_K (the largest element) continued past it with the
/// top binade's spacing as an unbounded element format would, up to 2 * top; and the midpoints. All
/// computed in MPFR and exact in double.
struct Ladder {
  std::vector<double> v, mid;
  std::uint64_t K = 0;
};

Ladder make_ladder(const BlockFormat& f, double X, double top) {
  Ladder L;
  L.K = largest_magnitude_code(f);
  Mpfr e(64), m(128), u(64);
  for (std::uint64_t k = 0; k <= L.K; ++k) {
    element_mag(e, f, k);
    mpfr_mul_d(m, e, X, MPFR_RNDN);
    L.v.push_back(exact_double(m));
  }
  element_mag(e, f, L.K);
  while (L.v.back() <= 2 * top) {
    mpfr_set_ui_2exp(u, 1, static_cast<long>(mpfr_get_exp(e)) - 1 - f.element->frac_bits, MPFR_RNDN);
    mpfr_add(e, e, u, MPFR_RNDN);  // exact (64 bits)
    mpfr_mul_d(m, e, X, MPFR_RNDN);
    L.v.push_back(exact_double(m));
  }
  for (std::size_t k = 0; k + 1 < L.v.size(); ++k) {
    mpfr_set_d(m, L.v[k], MPFR_RNDN);
    mpfr_add_d(m, m, L.v[k + 1], MPFR_RNDN);  // exact at 128 bits
    mpfr_div_2ui(m, m, 1, MPFR_RNDN);
    L.mid.push_back(exact_double(m));
  }
  return L;
}

/// The expected element for magnitude a with V_k <= a < V_{k+1}, by the ladder.
ElementCode ladder_expect(const BlockFormat& f, const Ladder& L, std::size_t k, double a, bool neg, Rounding r) {
  std::size_t idx = k;
  const bool exact = a == L.v[k];
  if (!exact) {
    switch (r) {
      case Rounding::NearestEven: idx = a < L.mid[k] ? k : a > L.mid[k] ? k + 1 : ((k & 1) ? k + 1 : k); break;
      case Rounding::NearestAway: idx = a < L.mid[k] ? k : k + 1; break;
      case Rounding::TowardZero: idx = k; break;
      case Rounding::Up: idx = neg ? k : k + 1; break;
      case Rounding::Down: idx = neg ? k + 1 : k; break;
      case Rounding::Stochastic: throw std::logic_error("ladder_expect: stochastic");
    }
  }
  ElementCode e;
  const bool sat = idx > L.K;
  e.code = signed_code(f, sat ? L.K : idx, neg && !(f.int_elements && idx == 0));
  e.flags = static_cast<std::uint8_t>((exact ? 0 : kElemInexact) | (sat ? kElemSaturated : 0) | (a != 0 && idx == 0 ? kElemFlushed : 0));
  return e;
}

struct Sweep {
  double ts = 1;     ///< tensor scale
  double amax = 0;   ///< the block maximum (a double)
  int lo = 0;        ///< the sweep starts at 2^lo
};

void run_sweep(const BlockFormat& f, const Sweep& sw, const BlockCheckOptions& o, Acc& acc) {
  const ScaleRule rule = f.default_rule;
  const std::uint8_t scale = mpfr_ref::block_scale_code(f, rule, sw.amax, false, sw.ts);
  const double X = scale_value(f, scale) * sw.ts;
  const Ladder L = make_ladder(f, X, sw.amax);
  const int B = f.block;
  // The block maximum's own expected codes (both signs), from MPFR.
  const ElementCode amax_pos = mpfr_ref::quantize_element(f, sw.amax, scale, sw.ts, Rounding::NearestEven);
  const ElementCode amax_neg = mpfr_ref::quantize_element(f, -sw.amax, scale, sw.ts, Rounding::NearestEven);
  // fp32 patterns p0 .. p1 (positive magnitudes), every stride-th.
  const auto p0 = std::bit_cast<std::uint32_t>(std::ldexp(1.0f, sw.lo));
  const float top32 = static_cast<float>(sw.amax) > sw.amax ? std::nextafter(static_cast<float>(sw.amax), 0.0f) : static_cast<float>(sw.amax);
  const std::uint32_t p1 = std::bit_cast<std::uint32_t>(top32);
  const std::uint64_t stride = std::max<std::uint64_t>(1, o.stride);
  const std::uint64_t nvals = (p1 - p0) / stride + 1;
  const std::uint64_t per_block = static_cast<std::uint64_t>(B - 1);
  const std::uint64_t nblocks = (nvals + per_block - 1) / per_block;
  BlockQuantOptions qo;
  qo.rule = rule;
  qo.rounding = Rounding::NearestEven;
  qo.block = B;
  for (int pass = 0; pass < 2; ++pass) {  // the sign of each value flips between the passes
    parallel_for(nblocks, 2048, [&](std::uint64_t b0, std::uint64_t b1, unsigned) {
      std::vector<double> x(static_cast<std::size_t>(B));
      std::vector<std::uint8_t> codes(static_cast<std::size_t>(B));
      std::vector<std::uint64_t> idx(static_cast<std::size_t>(B));
      std::uint64_t local = 0;
      for (std::uint64_t b = b0; b < b1; ++b) {
        const int P = static_cast<int>(b % static_cast<std::uint64_t>(B));  // where the maximum sits
        const bool max_neg = ((b / static_cast<std::uint64_t>(B)) + pass) & 1;
        std::uint64_t vi = b * per_block;
        for (int q = 0; q < B; ++q) {
          if (q == P) {
            x[q] = max_neg ? -sw.amax : sw.amax;
            idx[q] = ~std::uint64_t{0};
            continue;
          }
          if (vi < nvals) {
            const auto bits = static_cast<std::uint32_t>(p0 + vi * stride);
            const bool neg = ((q & 1) ^ pass) != 0;
            x[q] = static_cast<double>(std::bit_cast<float>(bits | (neg ? 0x80000000u : 0u)));
            idx[q] = vi++;
          } else {
            x[q] = 0;
            idx[q] = ~std::uint64_t{1};
          }
        }
        const BlockSummary s = quantize_block(f, qo, sw.ts, x.data(), B, 1, codes.data(), static_cast<std::int64_t>(b * B));
        ++local;
        if (s.scale != scale) acc.fail(strf("fp32 sweep: block with maximum %a got scale 0x%02x, MPFR 0x%02x", sw.amax, s.scale, scale));
        std::size_t k = 0;
        bool have_k = false;
        for (int q = 0; q < B; ++q) {
          if (idx[q] == ~std::uint64_t{1}) continue;
          ++local;
          if (idx[q] == ~std::uint64_t{0}) {
            const ElementCode& want = max_neg ? amax_neg : amax_pos;
            if (codes[q] != want.code)
              acc.fail(describe(f, "fp32 sweep, block maximum", x[q], scale, sw.ts, Rounding::NearestEven, codes[q], want.code));
            continue;
          }
          const double a = std::fabs(x[q]);
          if (!have_k) {  // values rise through the block: one search, then steps
            k = static_cast<std::size_t>(std::upper_bound(L.v.begin(), L.v.end(), a) - L.v.begin()) - 1;
            have_k = true;
          }
          while (k + 1 < L.v.size() && L.v[k + 1] <= a) ++k;
          const bool neg = x[q] < 0;
          const ElementCode want = ladder_expect(f, L, k, a, neg, Rounding::NearestEven);
          if (codes[q] != want.code)
            acc.fail(describe(f, "fp32 sweep", x[q], scale, sw.ts, Rounding::NearestEven, codes[q], want.code));
          if (idx[q] % o.other_stride != 0) continue;
          for (Rounding r : kModes) {
            if (r == Rounding::NearestEven) continue;
            const std::uint32_t rbits = r == Rounding::Stochastic ? random_bits32(kSeed, idx[q]) : 0;
            const ElementCode got = quantize_element(f, x[q], scale, sw.ts, r, rbits);
            const ElementCode exp = r == Rounding::Stochastic ? mpfr_ref::quantize_element(f, x[q], scale, sw.ts, r, rbits)
                                                              : ladder_expect(f, L, k, a, neg, r);
            ++local;
            if (!(got == exp)) acc.fail(describe(f, "fp32 sweep", x[q], scale, sw.ts, r, got.code, exp.code, got.flags, exp.flags));
          }
        }
      }
      acc.count(local);
    }, o.threads);
  }
}

void part_sweep(const BlockFormat& f, const BlockCheckOptions& o, Acc& acc) {
  std::vector<Sweep> sweeps;
  const int lo_elem = f.element->emin() - f.element->frac_bits - 2;  // two binades below the smallest subnormal
  if (f.pow2_scales()) {
    // Maximum at the top of the largest element binade: floor gives X = 1.
    sweeps.push_back({1.0, std::ldexp(2.0 - std::ldexp(1.0, -23), f.emax_elem()), lo_elem});
  } else {
    // NVFP4: a scale of 1.625 (not a power of two, so every quotient rounds), s_t = 1 and s_t = fp32(0.3).
    const double t3 = to_double(f32, round_double(f32, 0.3, Rounder::nearest(f32)).code);
    for (double ts : {1.0, t3}) {
      const double amax = 1.625 * f.max_elem() * ts;  // exact: amax / (6 s_t) = 1.625, an e4m3 value
      sweeps.push_back({ts, amax, std::ilogb(1.625 * ts) + lo_elem});
    }
  }
  for (const Sweep& s : sweeps) run_sweep(f, s, o, acc);
}

// ---- part 3: where the scale changes ------------------------------------------------------------

/// Other entries of a block around its maximum m (every magnitude <= m).
double companion(double m, std::uint64_t i) {
  static const double kMul[] = {0.75, -0.5, 0.3, 1.0 / 3, -0.125, 0x1p-10, -0x1p-20, 0.0, -0.0, 1.0, -0.999, 0x1.1p-5, 0.9375, -0x1p-7};
  const double c = kMul[i % (sizeof kMul / sizeof kMul[0])];
  if (c == 1.0) return m;
  if (c == -0.999) return -std::nextafter(m, 0.0);
  return c * m;  // rounded in double: any double is a valid entry
}

struct BoundaryCase {
  ScaleRule rule;
  double ts;
  std::vector<double> x;  ///< the block
};

/// fp32 and double neighbours of b (those that are positive and finite).
void with_neighbours(double b, std::vector<double>& out) {
  if (!(b > 0) || !std::isfinite(b)) return;
  out.push_back(b);
  out.push_back(std::nextafter(b, 0.0));
  out.push_back(std::nextafter(b, INFINITY));
  if (b > static_cast<double>(std::numeric_limits<float>::max())) return;  // no fp32 neighbours (and no cast: UB)
  const float bf = static_cast<float>(b);
  if (static_cast<double>(bf) == b) {
    out.push_back(std::nextafter(bf, 0.0f));
    out.push_back(std::nextafter(bf, INFINITY));
  }
}

std::vector<double> boundary_maxima(const BlockFormat& f, ScaleRule r, double ts) {
  std::vector<double> out;
  if (f.pow2_scales()) {
    const int emax = f.emax_elem(), p = f.elem_precision();
    for (int t = -127 - emax - 3; t <= 127 + 3; ++t) {
      switch (r) {
        case ScaleRule::Floor:
        case ScaleRule::Ceil: with_neighbours(std::ldexp(1.0, t + emax), out); break;
        case ScaleRule::Even: with_neighbours(std::ldexp(2.0 - std::ldexp(1.0, -p), t - 1 + emax), out); break;
        case ScaleRule::RCeil: with_neighbours(std::ldexp(f.max_elem(), t), out); break;
      }
    }
  } else {
    for (std::uint32_t c = 1; c < 0x7F; ++c) {
      const double v = to_double(e4m3, c);
      with_neighbours(v * 6 * ts, out);
      if (c + 1 < 0x7F) with_neighbours((v + to_double(e4m3, c + 1)) / 2 * 6 * ts, out);
    }
    for (double mul : {1.0, 1.0 + 0x1p-20, 2.0, 1e6}) with_neighbours(448.0 * 6 * ts * mul, out);
    for (double mul : {1.0, 0.5, 0.25, 0x1p-20}) with_neighbours(0x1p-9 * 6 * ts * mul, out);
  }
  for (double v : {0x1p-149, 0x1p-126, 1.0, 3.4028234663852886e38, 1e300, 0x1p-1000}) with_neighbours(v, out);
  return out;
}

void check_block_case(const BlockFormat& f, ScaleRule rule, double ts, const std::vector<double>& x, std::uint64_t id, Acc& acc,
                      Mpfr& m) {
  const Rounding mode = kModes[id % 6];
  BlockQuantOptions qo;
  qo.rule = rule;
  qo.rounding = mode;
  qo.seed = kSeed;
  qo.block = static_cast<int>(x.size());
  std::vector<std::uint8_t> codes(x.size());
  const auto flat0 = static_cast<std::int64_t>(id * 64);
  const BlockSummary s = quantize_block(f, qo, ts, x.data(), static_cast<std::int64_t>(x.size()), 1, codes.data(), flat0);
  double amax = 0;
  bool nonfinite = false;
  for (double v : x) {
    if (!std::isfinite(v)) nonfinite = true;
    else amax = std::max(amax, std::fabs(v));
  }
  const std::uint8_t want_scale = mpfr_ref::block_scale_code(f, rule, amax, nonfinite, ts);
  acc.count();
  if (s.scale != want_scale)
    acc.fail(strf("scale: rule %s, block maximum %a%s, tensor scale %a: model 0x%02x, MPFR 0x%02x", std::string(to_string(rule)).c_str(),
                  amax, nonfinite ? " (with NaN/Inf)" : "", ts, s.scale, want_scale));
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (!nonfinite) {
      const std::uint32_t rbits = mode == Rounding::Stochastic ? random_bits32(kSeed, static_cast<std::uint64_t>(flat0) + i) : 0;
      const ElementCode want = mpfr_ref::quantize_element(f, x[i], want_scale, ts, mode, rbits);
      acc.count();
      if (codes[i] != want.code)
        acc.fail(describe(f, ("block element, rule " + std::string(to_string(rule))).c_str(), x[i], want_scale, ts, mode, codes[i], want.code));
    } else {
      acc.count();
      if (codes[i] != 0) acc.fail(strf("NaN/Inf block: element %zu has code 0x%02x, fpcert writes 0", i, codes[i]));
    }
    const double v = dequantize(f, codes[i], s.scale, ts);
    const bool ok = mpfr_ref::dequantize(m, f, codes[i], s.scale, ts);
    acc.count();
    if (!same_value(v, m, ok)) acc.fail(strf("dequantize: element 0x%02x, scale 0x%02x: model %a", codes[i], s.scale, v));
  }
}

void part_boundaries(const BlockFormat& f, const BlockCheckOptions& o, Acc& acc) {
  std::vector<BoundaryCase> cases;
  const int B = f.block;
  std::uint64_t id = 0;
  for (ScaleRule rule : kAllScaleRules) {
    if (!rule_valid(f, rule)) continue;
    for (double ts : tensor_scales(f)) {
      ts = to_double(f32, round_double(f32, ts, Rounder::nearest(f32)).code);
      for (double amax : boundary_maxima(f, rule, ts)) {
        BoundaryCase c{rule, ts, std::vector<double>(static_cast<std::size_t>(B))};
        const int P = static_cast<int>(id % static_cast<std::uint64_t>(B));
        for (int q = 0; q < B; ++q) c.x[q] = q == P ? ((id & 1) ? -amax : amax) : companion(amax, id + static_cast<std::uint64_t>(q));
        cases.push_back(std::move(c));
        ++id;
      }
      // Special blocks: zeros, NaN / Inf present, fp32 subnormals only, a single element, all equal.
      const double nan = std::numeric_limits<double>::quiet_NaN(), inf = INFINITY;
      std::vector<std::vector<double>> special = {std::vector<double>(B, 0.0), std::vector<double>(B, -0.0)};
      for (double bad : {nan, inf, -inf}) {
        std::vector<double> v(static_cast<std::size_t>(B));
        for (int q = 0; q < B; ++q) v[q] = companion(1.5, static_cast<std::uint64_t>(q));
        v[static_cast<std::size_t>(id % static_cast<std::uint64_t>(B))] = bad;
        special.push_back(v);
      }
      std::vector<double> sub(static_cast<std::size_t>(B));
      for (int q = 0; q < B; ++q) sub[q] = std::ldexp(static_cast<double>(q + 1), -149) * ((q & 1) ? -1 : 1);
      special.push_back(sub);
      special.push_back({2.75});
      special.push_back({-0x1p-140});
      special.push_back(std::vector<double>(B, 1e-3));
      for (auto& v : special) cases.push_back({rule, ts, std::move(v)});
    }
  }
  parallel_for(cases.size(), 64, [&](std::uint64_t c0, std::uint64_t c1, unsigned) {
    Mpfr m(128);
    for (std::uint64_t c = c0; c < c1; ++c) check_block_case(f, cases[c].rule, cases[c].ts, cases[c].x, c, acc, m);
  }, o.threads);
  if (f.tensor_scale) {
    // The tensor scale: RN_f32(amax / 2688) at and around every rounding boundary of a strided set of fp32 scales.
    std::vector<double> amaxes;
    for (std::uint64_t bits = 0x00000001; bits < 0x7F800000; bits += 65521) {
      const double v = std::bit_cast<float>(static_cast<std::uint32_t>(bits));
      const double nx = std::bit_cast<float>(static_cast<std::uint32_t>(bits + 1));
      with_neighbours(v * 2688, amaxes);
      with_neighbours((v + nx) / 2 * 2688, amaxes);
    }
    for (double v : {0.0, 1e-50, 1e300}) amaxes.push_back(v);
    parallel_for(amaxes.size(), 4096, [&](std::uint64_t a0, std::uint64_t a1, unsigned) {
      for (std::uint64_t a = a0; a < a1; ++a) {
        const double got = nvfp4_tensor_scale(amaxes[a]), want = mpfr_ref::nvfp4_tensor_scale(amaxes[a]);
        acc.count();
        if (std::bit_cast<std::uint64_t>(got) != std::bit_cast<std::uint64_t>(want))
          acc.fail(strf("tensor scale of amax %a: model %a, MPFR %a", amaxes[a], got, want));
      }
    }, o.threads);
  }
}

}  // namespace

BlockCheckResult check_block_format(const BlockFormat& f, const BlockCheckOptions& o) {
  BlockCheckResult r;
  r.format = &f;
  {
    Acc acc("codes", o.max_listed);
    const auto t0 = std::chrono::steady_clock::now();
    part_codes(f, o, acc);
    r.parts.push_back(acc.finish(seconds_since(t0)));
  }
  {
    Acc acc("fp32-sweep", o.max_listed);
    const auto t0 = std::chrono::steady_clock::now();
    part_sweep(f, o, acc);
    r.parts.push_back(acc.finish(seconds_since(t0)));
  }
  {
    Acc acc("boundaries", o.max_listed);
    const auto t0 = std::chrono::steady_clock::now();
    part_boundaries(f, o, acc);
    r.parts.push_back(acc.finish(seconds_since(t0)));
  }
  return r;
}

}  // namespace fpcert
