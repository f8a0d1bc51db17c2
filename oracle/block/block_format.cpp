// oracle/block/block_format.cpp — block-scaled formats: scale rules, element rounding (one correct rounding
// through oracle/round.hpp's core), blocks and tensors. docs/block_formats.md states the rules.
#include "oracle/block/block_format.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cctype>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "base/parallel.hpp"
#include "base/philox.hpp"

namespace fpcert {

std::string_view to_string(ScaleRule r) {
  switch (r) {
    case ScaleRule::Floor: return "floor";
    case ScaleRule::Ceil: return "ceil";
    case ScaleRule::Even: return "even";
    case ScaleRule::RCeil: return "rceil";
  }
  return "?";
}

namespace {
std::string lower(std::string_view s) {
  std::string r(s);
  for (auto& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

constexpr std::array<const BlockFormat*, 7> kBlockFormats = {&mxfp8_e4m3, &mxfp8_e5m2, &mxfp6_e2m3, &mxfp6_e3m2,
                                                             &mxfp4,      &mxint8,     &nvfp4};

/// One correct rounding of the exact quotient x / d into fmt (x finite, d > 0 finite, both doubles).
/// mx / md with mx, md in [0.5, 1) is q = RN(mx / md) in (0.5, 2) and the remainder mx - q md is exact
/// (an fma; no underflow at these magnitudes), so the exact quotient is q, or strictly inside (q, q + ulp/2)
/// or (q - ulp/2, q) (RN): an Exact with the sticky bit stands for the open interval, and no rounding
/// boundary of a format of fewer than 53 bits lies strictly inside it (a boundary is a double; none lies
/// within half an ulp of q other than q itself).
Rounded round_quotient(const Format& fmt, double x, double d, const Rounder& rr, std::uint32_t rbits) {
  const bool neg = std::signbit(x);
  if (x == 0) return detail::round_special(fmt, FpClass::Zero, neg, 0, rr);
  int ex = 0, ed = 0;
  const double mx = std::frexp(std::fabs(x), &ex);
  const double md = std::frexp(d, &ed);
  const double q = mx / md;
  const double rem = std::fma(-q, md, mx);
  Exact e = exact_from_double(q);  // q = sig * 2^exp, sig of 53 bits
  e.neg = neg;
  e.exp += ex - ed;
  if (rem > 0) {
    e.sticky = true;  // strictly between q and q + ulp / 2
  } else if (rem < 0) {
    e.sig = 2 * e.sig - 1;  // strictly between q - ulp / 2 and q: (2 sig - 1 + f) * 2^(exp - 1)
    e.exp -= 1;
    e.sticky = true;
  }
  return round_exact(fmt, e, rr, rbits);
}

ElementCode element_from(const BlockFormat& f, const Rounded& r) {
  ElementCode e;
  e.code = static_cast<std::uint8_t>(f.int_elements ? int8_byte_from_code(r.code) : r.code);
  e.flags = static_cast<std::uint8_t>(((r.flags & kInexact) ? kElemInexact : 0) | ((r.flags & kOverflow) ? kElemSaturated : 0));
  return e;
}

Rounder element_rounder(Rounding r) { return {r, Saturation::Finite, NanPayload::Canonical}; }

/// x / 2^k rounded into the element (exact shift of the exponent, then one rounding).
ElementCode quantize_pow2(const BlockFormat& f, double x, int k, Rounding r, std::uint32_t rbits) {
  Exact e = exact_from_double(x);
  e.exp -= k;
  return element_from(f, round_exact(*f.element, e, element_rounder(r), rbits));
}

void check_tensor_scale(double ts) {
  if (!(ts > 0) || !std::isfinite(ts) || to_double(f32, round_double(f32, ts, Rounder::nearest(f32)).code) != ts)
    throw std::invalid_argument("the NVFP4 tensor scale must be a positive finite fp32 value");
}

}  // namespace

std::optional<ScaleRule> parse_scale_rule(std::string_view s) {
  const std::string n = lower(s);
  if (n == "floor" || n == "ocp") return ScaleRule::Floor;
  if (n == "ceil") return ScaleRule::Ceil;
  if (n == "even") return ScaleRule::Even;
  if (n == "rceil") return ScaleRule::RCeil;
  return std::nullopt;
}

std::span<const BlockFormat* const> all_block_formats() { return kBlockFormats; }

const BlockFormat* find_block_format(std::string_view name) {
  const std::string n = lower(name);
  for (const BlockFormat* f : kBlockFormats)
    if (n == f->tag) return f;
  if (n == "mxfp8" || n == "mxfp8e4m3") return &mxfp8_e4m3;
  if (n == "mxfp8e5m2") return &mxfp8_e5m2;
  if (n == "mxfp6" || n == "mxfp6e3m2") return &mxfp6_e3m2;
  if (n == "mxfp6e2m3") return &mxfp6_e2m3;
  if (n == "mxfp4_e2m1" || n == "mxfp4e2m1") return &mxfp4;
  return nullptr;
}

std::string block_format_tags() {
  std::string r;
  for (const BlockFormat* f : kBlockFormats) r += (r.empty() ? "" : ", ") + std::string(f->tag);
  return r;
}

bool rule_valid(const BlockFormat& f, ScaleRule r, std::string* why) {
  if (r == ScaleRule::Ceil && !f.pow2_scales()) {
    if (why)
      *why = "ceil is a power-of-two rule (ceil(log2 amax) - emax, E8M0 scales); " + std::string(f.tag) +
             " rounds amax / (6 s_t) into its e4m3 scale: floor (down), even (nearest-even) or rceil (up)";
    return false;
  }
  return true;
}

int pow2_scale_exponent(const BlockFormat& f, ScaleRule r, double amax) {
  if (!f.pow2_scales()) throw std::invalid_argument(std::string(f.tag) + " has no power-of-two scales");
  const int a = std::ilogb(amax);            // floor(log2 amax), exact
  const double m = std::scalbn(amax, -a);    // amax = m * 2^a, m in [1, 2), exact
  const int emax = f.emax_elem();
  switch (r) {
    case ScaleRule::Floor: return a - emax;
    case ScaleRule::Ceil: return a + (m > 1.0 ? 1 : 0) - emax;
    case ScaleRule::Even:
      // RN to p bits carries into the next binade iff m >= 2 - 2^-p (at the tie the even neighbour is 2).
      return a + (m >= 2.0 - std::ldexp(1.0, -f.elem_precision()) ? 1 : 0) - emax;
    case ScaleRule::RCeil: {
      // amax / max_elem = (m / M) * 2^(a - emax) with max_elem = M * 2^emax, M in [1, 2): m / M is in
      // (1/2, 2), so ceil(log2) of it is 1 iff m > M, else 0.
      const double M = std::scalbn(f.max_elem(), -emax);
      return a + (m > M ? 1 : 0) - emax;
    }
  }
  return 0;
}

std::uint8_t block_scale_code(const BlockFormat& f, ScaleRule r, double amax, bool nonfinite, double tensor_scale) {
  std::string why;
  if (!rule_valid(f, r, &why)) throw std::invalid_argument(why);
  if (nonfinite) return f.scale_nan_code();
  if (f.pow2_scales()) {
    if (amax == 0) return 0;  // 2^-127: the smallest scale (the spec's algorithm is silent: docs/block_formats.md)
    const int e = pow2_scale_exponent(f, r, amax);
    if (e < -127) return 0;
    if (e > 127) return f.scale_nan_code();
    return static_cast<std::uint8_t>(e + 127);
  }
  check_tensor_scale(tensor_scale);
  if (amax == 0) return 0x01;  // clamped to the smallest positive e4m3 value, 2^-9
  const Rounding dir = r == ScaleRule::Floor ? Rounding::TowardZero : r == ScaleRule::Even ? Rounding::NearestEven : Rounding::Up;
  // 6 * s_t is exact: s_t has at most 24 significant bits and 6 = 110b.
  const Rounded q = round_quotient(*f.scale, amax, 6.0 * tensor_scale, Rounder{dir, Saturation::Finite, NanPayload::Canonical}, 0);
  const std::uint8_t c = static_cast<std::uint8_t>(q.code & 0x7F);
  return c == 0 ? std::uint8_t{0x01} : c;
}

double scale_value(const BlockFormat& f, std::uint8_t code) {
  if (f.pow2_scales()) return code == 0xFF ? std::numeric_limits<double>::quiet_NaN() : std::ldexp(1.0, code - 127);
  const std::uint8_t c = code & 0x7F;  // unsigned use: the sign bit is ignored
  return c == 0x7F ? std::numeric_limits<double>::quiet_NaN() : to_double(e4m3, c);
}

double nvfp4_tensor_scale(double amax_tensor) {
  if (!(amax_tensor > 0) || !std::isfinite(amax_tensor)) return 1.0;
  const Rounded r = round_quotient(f32, amax_tensor, 448.0 * 6.0, Rounder{Rounding::NearestEven, Saturation::Finite, NanPayload::Canonical}, 0);
  const double ts = to_double(f32, r.code);
  return ts > 0 ? ts : f32.min_subnormal();
}

std::uint8_t int8_byte_from_code(std::uint64_t sm) {
  const unsigned k = static_cast<unsigned>(sm & 0x7F);
  return static_cast<std::uint8_t>((sm & 0x80) ? (256u - k) & 0xFFu : k);
}

std::uint64_t int8_code_from_byte(std::uint8_t byte) {
  const int v = static_cast<std::int8_t>(byte);
  if (v >= 0) return static_cast<std::uint64_t>(v);
  return 0x80u | static_cast<std::uint64_t>(std::min(-v, 127));  // -128 has no sign-magnitude code: -127
}

double element_value(const BlockFormat& f, std::uint8_t code) {
  if (f.int_elements) return std::ldexp(static_cast<double>(static_cast<std::int8_t>(code)), -6);
  return to_double(*f.element, code & f.element->code_mask());
}

ElementCode quantize_element(const BlockFormat& f, double x, std::uint8_t scale, double tensor_scale, Rounding r,
                             std::uint32_t rbits) {
  ElementCode e;
  if (f.pow2_scales()) {
    e = quantize_pow2(f, x, scale - 127, r, rbits);
  } else {
    const double d = scale_value(f, scale) * tensor_scale;  // exact: 4 x 24 significant bits
    e = element_from(f, round_quotient(*f.element, x, d, element_rounder(r), rbits));
  }
  const std::uint64_t mag = f.int_elements ? int8_code_from_byte(e.code) & 0x7F : e.code & f.element->magnitude_mask();
  if (x != 0 && mag == 0) e.flags |= kElemFlushed;
  return e;
}

double dequantize(const BlockFormat& f, std::uint8_t code, std::uint8_t scale_code, double tensor_scale) {
  const double s = scale_value(f, scale_code);
  if (std::isnan(s)) return s;
  // Exact: element (<= 8 significant bits) * power of two; NVFP4: 2 x 4 x 24 bits; in double's range.
  return element_value(f, code) * s * (f.tensor_scale ? tensor_scale : 1.0);
}

BlockSummary quantize_block(const BlockFormat& f, const BlockQuantOptions& o, double tensor_scale, const double* x,
                            std::int64_t n, std::int64_t stride, std::uint8_t* codes, std::int64_t flat0,
                            std::int64_t flat_stride) {
  BlockSummary s;
  double amax = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double v = x[i * stride];
    if (!std::isfinite(v)) s.nonfinite = true;
    else amax = std::max(amax, std::fabs(v));
  }
  s.scale = block_scale_code(f, o.rule, amax, s.nonfinite, tensor_scale);
  if (s.nonfinite) {  // a NaN scale makes every value of the block NaN (OCP MX v1.0): codes 0
    for (std::int64_t i = 0; i < n; ++i) codes[i * stride] = 0;
    return s;
  }
  const bool stochastic = o.rounding == Rounding::Stochastic;
  for (std::int64_t i = 0; i < n; ++i) {
    const double v = x[i * stride];
    const std::uint32_t rbits = stochastic ? random_bits32(o.seed, static_cast<std::uint64_t>(flat0 + i * flat_stride)) : 0;
    const ElementCode e = quantize_element(f, v, s.scale, tensor_scale, o.rounding, rbits);
    codes[i * stride] = e.code;
    if (e.flags & kElemSaturated) {
      ++s.saturated;
      if (std::fabs(v) == amax) s.max_saturated = true;
    }
    if (e.flags & kElemFlushed) ++s.flushed;
    if (e.flags & kElemInexact) ++s.inexact;
  }
  return s;
}

BlockTensor quantize_tensor(const BlockFormat& f, const BlockQuantOptions& o, const double* x, std::int64_t rows,
                            std::int64_t cols) {
  std::string why;
  if (!rule_valid(f, o.rule, &why)) throw std::invalid_argument(why);
  const int B = o.block > 0 ? o.block : f.block;
  if (o.block < 0) throw std::invalid_argument("block size must be >= 1");
  if (o.axis != 0 && o.axis != 1 && o.axis != -1) throw std::invalid_argument("axis must be 0, 1 or -1");
  if (rows < 0 || cols < 0) throw std::invalid_argument("negative shape");
  BlockTensor t;
  t.format = &f;
  t.rule = o.rule;
  t.rounding = o.rounding;
  t.block = B;
  t.axis = o.axis == 0 ? 0 : 1;
  t.rows = rows;
  t.cols = cols;
  t.codes.assign(static_cast<std::size_t>(rows * cols), 0);
  if (f.tensor_scale) {
    if (o.tensor_scale != 0) {
      check_tensor_scale(o.tensor_scale);
      t.tensor_scale = o.tensor_scale;
    } else {
      double amax = 0;
      for (std::int64_t i = 0; i < rows * cols; ++i)
        if (std::isfinite(x[i])) amax = std::max(amax, std::fabs(x[i]));
      t.tensor_scale = nvfp4_tensor_scale(amax);
    }
  }
  if (t.axis == 1) {
    t.scale_rows = rows;
    t.scale_cols = (cols + B - 1) / B;
  } else {
    t.scale_rows = (rows + B - 1) / B;
    t.scale_cols = cols;
  }
  const std::int64_t nblocks = t.scale_rows * t.scale_cols;
  t.scales.assign(static_cast<std::size_t>(nblocks), 0);
  t.blocks.assign(static_cast<std::size_t>(nblocks), {});
  const double ts = t.tensor_scale;
  parallel_for(static_cast<std::uint64_t>(nblocks), 4096, [&](std::uint64_t b0, std::uint64_t b1, unsigned) {
    for (std::uint64_t b = b0; b < b1; ++b) {
      const std::int64_t br = static_cast<std::int64_t>(b) / t.scale_cols, bc = static_cast<std::int64_t>(b) % t.scale_cols;
      std::int64_t first, n, stride;
      if (t.axis == 1) {
        first = br * cols + bc * B;
        n = std::min<std::int64_t>(B, cols - bc * B);
        stride = 1;
      } else {
        first = br * B * cols + bc;
        n = std::min<std::int64_t>(B, rows - br * B);
        stride = cols;
      }
      BlockSummary s = quantize_block(f, o, ts, x + first, n, stride, t.codes.data() + first, first, stride);
      t.scales[b] = s.scale;
      t.blocks[b] = s;
    }
  });
  return t;
}

std::vector<double> dequantize_tensor(const BlockTensor& t) {
  std::vector<double> v(static_cast<std::size_t>(t.rows * t.cols));
  for (std::int64_t i = 0; i < t.rows; ++i)
    for (std::int64_t j = 0; j < t.cols; ++j) v[static_cast<std::size_t>(i * t.cols + j)] = t.value(i, j);
  return v;
}

}  // namespace fpcert
