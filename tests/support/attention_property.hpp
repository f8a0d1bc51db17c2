// tests/support/attention_property.hpp — the long-double property check of attention kernels (tests/suites/
// attention_gpu_test.cpp on the device, tests/kernels/attention/attention_cuda_emulation_test.cpp on the host's emulation of the
// flash kernel): inputs N(0, 1) rounded to f16, a long-double evaluation of O and the LSE, and a first-order tolerance
// derived from each kernel's declared arithmetic. A property check that can fail, not the certification.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "generators/rng.hpp"
#include "kernels/attention/attention_kernel.hpp"
#include "oracle/round.hpp"
#include "tests/support/test_seed.hpp"

namespace fpcert::attn_test {

/// One problem: Q, K, V drawn N(0, 1) and rounded to nearest into f16 (every kernel gets the same values: f16 codes, or
/// their exact f32 values), an optional additive mask (N(0, 1) in f32, 1 in 8 entries -Inf, and row 3 all -Inf).
struct Case {
  AttentionShape sh;
  CausalAlign causal = CausalAlign::None;
  bool masked = false;
  std::int64_t pad = 8;  ///< leading dimension = head_dim + pad (8: 16-byte rows; odd: the scalar load path)
  std::vector<double> q, k, v;
  std::vector<float> mask;
  float scale = 0;
};

inline Case make_case(AttentionShape sh, CausalAlign causal, bool masked, std::int64_t pad, std::uint32_t stream) {
  Case c{sh, causal, masked, pad, {}, {}, {}, {}, 0};
  const Stream s{test::seed(), stream};
  const auto draw = [&](std::vector<double>& x, std::int64_t n, std::uint32_t sub) {
    x.resize(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) x[static_cast<std::size_t>(i)] = quantize(f16, normal(s.sub(sub), static_cast<std::uint64_t>(i)));
  };
  draw(c.q, sh.batch * sh.heads_q * sh.len_q * sh.head_dim, 1);
  draw(c.k, sh.batch * sh.heads_kv * sh.len_k * sh.head_dim, 2);
  draw(c.v, sh.batch * sh.heads_kv * sh.len_k * sh.head_dim, 3);
  if (masked) {
    c.mask.resize(static_cast<std::size_t>(sh.len_q * sh.len_k));
    for (std::int64_t e = 0; e < sh.len_q * sh.len_k; ++e) {
      const bool inf = e / sh.len_k == 3 || bernoulli(s.sub(5), static_cast<std::uint64_t>(e), 0.125);
      c.mask[static_cast<std::size_t>(e)] = inf ? -INFINITY : static_cast<float>(normal(s.sub(4), static_cast<std::uint64_t>(e)));
    }
  }
  c.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(sh.head_dim)));
  return c;
}

/// The long-double evaluation of one row: O_c = sum_j e^{z_j - M} v_jc / sum_j e^{z_j - M}, A_c = sum_j e^{z_j - M}
/// |v_jc| / sum_j e^{z_j - M} (the scale every error of O is relative to), LSE = M + log sum_j e^{z_j - M}, with z_j =
/// s (q . k_j) + mask_j over the visible keys; the products of f16 values are exact in long double and the sums of at
/// most 128 of them carry a relative error below 2^-56: far below every tolerance here.
struct RowRef {
  bool all_masked = true;
  long double lse = 0, m = 0, qk_abs_max = 0, mask_abs_max = 0, v_abs_max = 0;
  std::vector<long double> o, a;
};

inline RowRef reference_row(const Case& c, std::int64_t b, std::int64_t h, std::int64_t i) {
  const AttentionShape& sh = c.sh;
  const std::int64_t d = sh.head_dim, hk = h / (sh.heads_q / sh.heads_kv);
  const double* q = c.q.data() + ((b * sh.heads_q + h) * sh.len_q + i) * d;
  const std::int64_t off = c.causal == CausalAlign::BottomRight ? sh.len_k - sh.len_q : 0;
  RowRef r;
  std::vector<long double> z(static_cast<std::size_t>(sh.len_k), -INFINITY);
  r.m = -INFINITY;
  for (std::int64_t j = 0; j < sh.len_k; ++j) {
    if (c.causal != CausalAlign::None && j > i + off) continue;
    const double* k = c.k.data() + ((b * sh.heads_kv + hk) * sh.len_k + j) * d;
    long double x = 0, xa = 0;
    for (std::int64_t e = 0; e < d; ++e) {
      x += static_cast<long double>(q[e]) * k[e];
      xa += std::fabs(static_cast<long double>(q[e]) * k[e]);
    }
    r.qk_abs_max = std::max(r.qk_abs_max, xa);
    long double zj = static_cast<long double>(c.scale) * x;
    if (c.masked) {
      const float m = c.mask[static_cast<std::size_t>(i * sh.len_k + j)];
      if (m == -INFINITY) continue;
      zj += m;
      r.mask_abs_max = std::max(r.mask_abs_max, static_cast<long double>(std::fabs(m)));
    }
    z[static_cast<std::size_t>(j)] = zj;
    r.m = std::max(r.m, zj);
  }
  r.all_masked = r.m == -INFINITY;
  r.o.assign(static_cast<std::size_t>(d), 0);
  r.a.assign(static_cast<std::size_t>(d), 0);
  if (r.all_masked) return r;
  long double l = 0;
  for (std::int64_t j = 0; j < sh.len_k; ++j) {
    if (z[static_cast<std::size_t>(j)] == -INFINITY) continue;
    const long double p = std::exp(z[static_cast<std::size_t>(j)] - r.m);
    l += p;
    const double* v = c.v.data() + ((b * sh.heads_kv + hk) * sh.len_k + j) * d;
    for (std::int64_t e = 0; e < d; ++e) {
      r.o[static_cast<std::size_t>(e)] += p * v[e];
      r.a[static_cast<std::size_t>(e)] += p * std::fabs(static_cast<long double>(v[e]));
      r.v_abs_max = std::max(r.v_abs_max, std::fabs(static_cast<long double>(v[e])));
    }
  }
  for (std::int64_t e = 0; e < d; ++e) r.o[static_cast<std::size_t>(e)] /= l, r.a[static_cast<std::size_t>(e)] /= l;
  r.lse = r.m + std::log(l);
  return r;
}

/// The first-order tolerance of one row (u = 2^-24, the f32 unit roundoff; L keys, D the head dim, nb = ceil(L / 64)
/// key blocks). Every probability p_j carries a relative error eps; perturbing each p_j by eps relative moves
/// O = sum p v / sum p by at most 2 eps A (numerator and denominator), so:
///   flash (f16 in): the scores' f32 accumulation in mma.sync, at most one f32 ulp per 16-term step rounded toward
///     zero, |dx| <= 2 D u sum|q k|; in base-2 units X = s log2(e) max_j sum|q k| + log2(e) max|mask|, the argument
///     fma(x, c, -m2) errs by c |dx| plus the roundings of c, of m2 = RN(m_x c) and of the fma (with the mask folded in
///     as x = RN(x + RN(mask / s)), two more, u (|x| + |mask| / s) before the factor c), at most 6 u X, so
///     eps = ln 2 (2 D + 6) u X + 2 u (exp2f's 2 ulp),
///     each key block's rescale exp2f(m2_old - m2_new) 3 u on O~ and l alike (6 u nb on O), the row sum l (L u), P V's
///     accumulation (2 L u A, toward zero), P rounded to f16 (2^-11 A, and 2^-25 for each p below f16's least normal:
///     L 2^-25 max|v| / l with l >= 1), the reciprocal and its product (2 u |O|), O rounded to f16 (2^-11 |O| <=
///     2^-11 A, plus 2^-25 below f16's least normal):
///       tol = 2 2^-11 A + 2 [2 eps + (3 L + 6 nb + 2) u] A + 2^-25 (1 + L max|v|);
///   naive (f32 in): |dx| <= D u sum|q k| (fmaf chain), z = RN(RN(s x) + mask) and RN(z - m) add 3 u Z, Z = s max
///     sum|q k| + max|mask|, so eps = (D + 3) u Z + 2 u (expf's 2 ulp); l (L u), P V's fmaf chain (L u A), the division
///     (u |O|): tol = 2 [2 eps + (2 L + 1) u] A.
/// The factor 2 on the f32 terms covers the second-order terms (every product of two of them is below 2^-30 here).
/// LSE: M + log l, with M = RN(m_x s) (flash) or m (naive): |dLSE| <= the argument error of the maximum (eps), l's
/// relative error (eps + (L + 6 nb) u), logf's 1 ulp and the roundings of M and of the sum, 2^-23 (|M| + |LSE|) in all:
/// tol_lse = 2 [2 eps + (L + 6 nb) u + 2^-23 (|M| + |LSE| + 1)].
struct Tol {
  double eps = 0, o_rel = 0, o_abs = 0, lse = 0;
};
inline Tol tolerance(bool flash, const Case& c, const RowRef& r) {
  const double u = 0x1p-24, L = static_cast<double>(c.sh.len_k), D = static_cast<double>(c.sh.head_dim);
  const double nb = std::ceil(L / 64);
  Tol t;
  if (flash) {
    const double X = 1.4426950408889634 * (static_cast<double>(c.scale) * static_cast<double>(r.qk_abs_max) + static_cast<double>(r.mask_abs_max));
    t.eps = 0.6931471805599453 * (2 * D + 6) * u * X + 2 * u;
    t.o_rel = 2 * 0x1p-11 + 2 * (2 * t.eps + (3 * L + 6 * nb + 2) * u);
    t.o_abs = 0x1p-25 * (1 + L * static_cast<double>(r.v_abs_max));
  } else {
    const double Z = static_cast<double>(c.scale) * static_cast<double>(r.qk_abs_max) + static_cast<double>(r.mask_abs_max);
    t.eps = (D + 3) * u * Z + 2 * u;
    t.o_rel = 2 * (2 * t.eps + (2 * L + 1) * u);
  }
  t.lse = 2 * (2 * t.eps + (L + 6 * nb) * u + 0x1p-23 * (std::fabs(static_cast<double>(r.m)) + std::fabs(static_cast<double>(r.lse)) + 1));
  return t;
}

/// Run `k` on the case through the device; max over elements of |err| / tol for O and LSE, after checking the fully
/// masked rows exactly (O = +0, LSE the declared infinity) and that no output was left unwritten (pre-filled NaN).
struct AttnOutcome {
  double o_frac = 0, lse_frac = 0;
  std::int64_t masked_rows = 0, inexact_f16 = 0, elems = 0;
};

/// The case's Q, K or V (rows x head_dim values) as codes of `in` (f16 codes, or the exact f32 values) with leading
/// dimension ld, the padding zeros.
inline std::vector<std::uint8_t> pack_rows(const std::vector<double>& x, std::int64_t rows, std::int64_t d, std::int64_t ld, const Format& in) {
  const int es = container_bytes(in);
  std::vector<std::uint8_t> buf(static_cast<std::size_t>(rows * ld * es), 0);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t e = 0; e < d; ++e) {
      const double val = x[static_cast<std::size_t>(r * d + e)];
      std::uint8_t* p = buf.data() + (r * ld + e) * es;
      if (es == 2) {
        const auto code = static_cast<std::uint16_t>(round_double(in, val, Rounder::nearest(in)).code);
        std::memcpy(p, &code, 2);
      } else {
        const float f = static_cast<float>(val);  // exact: an f16 value
        std::memcpy(p, &f, 4);
      }
    }
  return buf;
}

/// Every row of O (codes of `out` in its container, leading dimension ldo) and the LSE against the long-double
/// evaluation: the largest |err| / tol of each, fully masked rows checked exactly (O = +0, LSE the declared infinity),
/// and no NaN where the reference is a number (an unwritten output keeps its NaN pre-fill).
inline AttnOutcome grade(const Case& c, bool flash, const Format& out_fmt, MaskedLse masked_lse, const std::vector<std::uint8_t>& ho,
                         const std::vector<float>& hl, std::int64_t ldo) {
  const AttentionShape& sh = c.sh;
  const std::int64_t d = sh.head_dim;
  const int es = container_bytes(out_fmt);
  AttnOutcome out;
  for (std::int64_t b = 0; b < sh.batch; ++b)
    for (std::int64_t h = 0; h < sh.heads_q; ++h)
      for (std::int64_t i = 0; i < sh.len_q; ++i) {
        const RowRef r = reference_row(c, b, h, i);
        const std::int64_t row = (b * sh.heads_q + h) * sh.len_q + i;
        const float lse = hl[static_cast<std::size_t>(row)];
        for (std::int64_t e = 0; e < d; ++e) {
          const std::uint8_t* p = ho.data() + (row * ldo + e) * es;
          double got;
          if (es == 2) {
            std::uint16_t code;
            std::memcpy(&code, p, 2);
            got = to_double(out_fmt, code);
          } else {
            float f;
            std::memcpy(&f, p, 4);
            got = f;
          }
          CAPTURE(row);
          CAPTURE(e);
          REQUIRE(!std::isnan(got));  // written, and no NaN where the reference is a number
          if (r.all_masked) {
            CHECK(got == 0.0);
            continue;
          }
          const Tol t = tolerance(flash, c, r);
          const double ref = static_cast<double>(r.o[static_cast<std::size_t>(e)]);
          const double bound = t.o_rel * static_cast<double>(r.a[static_cast<std::size_t>(e)]) + t.o_abs;
          out.o_frac = std::max(out.o_frac, std::fabs(got - ref) / bound);
          ++out.elems;
          if (quantize(f16, ref) != ref) ++out.inexact_f16;
        }
        if (r.all_masked) {
          ++out.masked_rows;
          CHECK(lse == (masked_lse == MaskedLse::PosInf ? INFINITY : -INFINITY));
          continue;
        }
        const Tol t = tolerance(flash, c, r);
        out.lse_frac = std::max(out.lse_frac, std::fabs(static_cast<double>(lse) - static_cast<double>(r.lse)) / t.lse);
      }
  return out;
}

inline std::vector<Case> property_cases() {
  std::vector<Case> cs;
  // Tails everywhere (77 rows, 200 keys: 3 key blocks and a tail of 8), grouped heads, 16-byte rows.
  cs.push_back(make_case({2, 4, 2, 77, 200, 64}, CausalAlign::None, false, 8, 100));
  // Top-left causal, head dim 128, odd leading dimension (the scalar load path), one key past a block.
  cs.push_back(make_case({1, 2, 1, 130, 129, 128}, CausalAlign::TopLeft, false, 3, 200));
  // Bottom-right with len_q > len_k: the first 60 rows see no key (O = +0, LSE the declared infinity).
  cs.push_back(make_case({1, 2, 2, 100, 40, 64}, CausalAlign::BottomRight, false, 8, 300));
  // Additive mask (finite N(0, 1) and -Inf entries, row 3 fully masked), 5 key blocks.
  cs.push_back(make_case({2, 2, 1, 65, 300, 128}, CausalAlign::None, true, 8, 400));
  return cs;
}

}  // namespace fpcert::attn_test
