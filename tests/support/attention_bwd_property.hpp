// tests/support/attention_bwd_property.hpp — the attention backward property check shared by the host emulation
// (tests/kernels/attention/attention_bwd_cuda_emulation_test.cpp) and the device test (attention_bwd_gpu_test.cpp): a
// problem of exact f16/bf16 codes with its saved LSE, the gradients of attention_backward_kernel.hpp's formulas in double
// at those codes, and a grade of a kernel's gradients element by element within a tolerance derived from the declared
// arithmetic (below), independent of the suites' runner and bound.
//
// Tolerance, per element y = sum_t a_t b_t of a gradient (dV: P dO; dK: s dS q; dQ: s dS k), with M = sum_t |a_t b_t|
// where dS's magnitude is bounded by |P| (|dP| + |D|): a flash kernel rounds each P (or dS) once into the input format
// (relative u_in: 2^-11 f16, 2^-8 bf16); P itself is exp2f (2 ulp) of an fma whose argument carries the folded scale's
// and mask's roundings (a few 2^-24 |z|, |z| < 8 here), dP and D are f32 sums of exact products (at most 128 terms:
// 2^-17 relative to their magnitudes), the MMA chains add at most 4 x 129 terms in f32 (below 2^-15 M), the scale one
// 2^-24; the output is rounded once (u_out |y|). So |y~ - y| <= u_out |y| + (u_in + 2^-14) M, which the check takes
// with a factor 2 on the M term. The naive f32 kernel rounds nothing below f32: u_out = 2^-24 and the M term 2^-14
// (its fmaf chains of at most 4 x 129 terms, expf's 2 ulp and z's roundings, 2^-21 relative, with room).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/attention/attention_kernel.hpp"
#include "oracle/round.hpp"
#include "tests/support/attention_codes.hpp"

namespace fpcert::test::attn_bwd {

inline const Format& fmt16(bool bf) { return bf ? bf16 : f16; }

/// A problem: Q, K, V, O, dO codes (attention_test_codes: exact values, NaN codes in the ld padding), the additive mask
/// (attention_test_mask: finite values and -Inf, row 3 all -Inf), the saved LSE (RN_f32 of the exact log-sum-exp; +Inf for a
/// row that sees no key).
struct Problem {
  bool bf = false;
  int d = 64;
  std::int64_t batch, hq, hkv, lq, lk, ld, ldg;  // ld: inputs' row stride; ldg: the gradients'
  CausalAlign causal = CausalAlign::None;
  bool masked = false;
  float scale = 0.125f;
  std::vector<std::uint16_t> q, k, v, o, d_o;
  std::vector<float> mask, lse;
};

inline std::int64_t causal_off(const Problem& p) { return p.causal == CausalAlign::BottomRight ? p.lk - p.lq : 0; }
inline std::int64_t kv_row(const Problem& p, std::int64_t b, std::int64_t h) { return (b * p.hkv + h / (p.hq / p.hkv)) * p.lk; }

/// z_ij = s q_i . k_j + mask_ij in double, -Inf where key j is hidden from query i.
inline double score(const Problem& p, std::int64_t b, std::int64_t h, std::int64_t i, std::int64_t j) {
  if (p.causal != CausalAlign::None && j > i + causal_off(p)) return -INFINITY;
  const auto val = [&](std::uint16_t c) { return to_double(fmt16(p.bf), c); };
  const std::int64_t r = (b * p.hq + h) * p.lq + i, kr = kv_row(p, b, h) + j;
  double x = 0;
  for (int c = 0; c < p.d; ++c) x += val(p.q[static_cast<std::size_t>(r * p.ld + c)]) * val(p.k[static_cast<std::size_t>(kr * p.ld + c)]);
  return p.scale * x + (p.masked ? p.mask[static_cast<std::size_t>(i * p.lk + j)] : 0.0);
}

inline Problem make_problem(bool bf, int d, std::int64_t batch, std::int64_t hq, std::int64_t hkv, std::int64_t lq, std::int64_t lk,
                     std::int64_t pad, CausalAlign causal, bool masked, std::uint64_t stream) {
  Problem p{bf, d, batch, hq, hkv, lq, lk, d + pad, d + 5, causal, masked, 0.125f, {}, {}, {}, {}, {}, {}, {}};
  std::uint64_t ctr = 0;
  const std::int64_t rq = batch * hq * lq, rk = batch * hkv * lk;
  p.q = attention_test_codes(bf, d, rq, p.ld, stream, ctr);
  p.k = attention_test_codes(bf, d, rk, p.ld, stream, ctr);
  p.v = attention_test_codes(bf, d, rk, p.ld, stream, ctr);
  p.o = attention_test_codes(bf, d, rq, p.ld, stream, ctr);
  p.d_o = attention_test_codes(bf, d, rq, p.ld, stream, ctr);
  if (masked) p.mask = attention_test_mask(lq, lk, stream + 1);
  p.lse.resize(static_cast<std::size_t>(rq));
  for (std::int64_t b = 0; b < batch; ++b)
    for (std::int64_t h = 0; h < hq; ++h)
      for (std::int64_t i = 0; i < lq; ++i) {
        double m = -INFINITY, l = 0;
        std::vector<double> z(static_cast<std::size_t>(lk));
        for (std::int64_t j = 0; j < lk; ++j) m = std::fmax(m, z[static_cast<std::size_t>(j)] = score(p, b, h, i, j));
        for (double zj : z) l += zj == -INFINITY ? 0.0 : std::exp(zj - m);
        p.lse[static_cast<std::size_t>((b * hq + h) * lq + i)] = m == -INFINITY ? INFINITY : static_cast<float>(m + std::log(l));
      }
  return p;
}

/// A gradient: values (double) and M = sum of |terms| per element (the tolerance's scale), row-major [rows][d].
struct Grad {
  std::vector<double> y, m;
};
struct Grads {
  Grad dq, dk, dv;
};

/// The exact formulas (attention_backward_kernel.hpp) in double at the problem's codes and saved LSE.
inline Grads reference(const Problem& p) {
  const auto val = [&](std::uint16_t c) { return to_double(fmt16(p.bf), c); };
  const std::int64_t rq = p.batch * p.hq * p.lq, rk = p.batch * p.hkv * p.lk, d = p.d;
  Grads g;
  for (Grad* x : {&g.dq, &g.dk, &g.dv}) {
    const std::int64_t rows = x == &g.dq ? rq : rk;
    x->y.assign(static_cast<std::size_t>(rows * d), 0.0);
    x->m.assign(static_cast<std::size_t>(rows * d), 0.0);
  }
  const auto at = [&](std::int64_t row, std::int64_t c) { return static_cast<std::size_t>(row * d + c); };
  const auto in = [&](const std::vector<std::uint16_t>& t, std::int64_t row, std::int64_t c) { return val(t[static_cast<std::size_t>(row * p.ld + c)]); };
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t h = 0; h < p.hq; ++h)
      for (std::int64_t i = 0; i < p.lq; ++i) {
        const std::int64_t r = (b * p.hq + h) * p.lq + i;
        const double lse = p.lse[static_cast<std::size_t>(r)];
        double dd = 0, dd_abs = 0;
        for (std::int64_t c = 0; c < d; ++c) dd += in(p.d_o, r, c) * in(p.o, r, c), dd_abs += std::fabs(in(p.d_o, r, c) * in(p.o, r, c));
        for (std::int64_t j = 0; j < p.lk; ++j) {
          const double z = score(p, b, h, i, j);
          const double pr = std::isinf(lse) || z == -INFINITY ? 0.0 : std::exp(z - lse);
          const std::int64_t kr = kv_row(p, b, h) + j;
          double dp = 0, dp_abs = 0;
          for (std::int64_t c = 0; c < d; ++c) dp += in(p.d_o, r, c) * in(p.v, kr, c), dp_abs += std::fabs(in(p.d_o, r, c) * in(p.v, kr, c));
          const double ds = pr * (dp - dd), ds_abs = pr * (dp_abs + dd_abs);
          for (std::int64_t c = 0; c < d; ++c) {
            g.dv.y[at(kr, c)] += pr * in(p.d_o, r, c);
            g.dv.m[at(kr, c)] += std::fabs(pr * in(p.d_o, r, c));
            g.dk.y[at(kr, c)] += p.scale * ds * in(p.q, r, c);
            g.dk.m[at(kr, c)] += p.scale * ds_abs * std::fabs(in(p.q, r, c));
            g.dq.y[at(r, c)] += p.scale * ds * in(p.k, kr, c);
            g.dq.m[at(r, c)] += p.scale * ds_abs * std::fabs(in(p.k, kr, c));
          }
        }
      }
  return g;
}

/// A kernel's gradients read back as values, rows of ldg (f16/bf16 codes or f32), pre-filled with NaN.
inline std::vector<double> values(const Format& f, const std::vector<std::uint16_t>& codes) {
  std::vector<double> y(codes.size());
  for (std::size_t e = 0; e < codes.size(); ++e) y[e] = to_double(f, codes[e]);
  return y;
}
inline std::vector<double> values(const std::vector<float>& x) { return std::vector<double>(x.begin(), x.end()); }

struct Tolerance {
  double u_out, m_coef;  ///< |y~ - y| <= u_out |y| + m_coef M
};
inline Tolerance flash_tolerance(bool bf) {
  const double u = bf ? 0x1p-8 : 0x1p-11;
  return {u, 2 * (u + 0x1p-14)};
}
inline Tolerance naive_tolerance() { return {0x1p-24, 0x1p-14}; }

/// Elements outside the tolerance (a NaN, the pre-fill left where a gradient belongs, included) plus padding written
/// (not NaN any more), over the three gradients; `worst` the largest |err| / tol within it.
struct Verdict {
  std::int64_t bad = 0, elems = 0, nonzero = 0;
  double worst = 0;
};
inline Verdict grade(const Problem& p, const Grads& ref, const std::vector<double>& dq, const std::vector<double>& dk,
                     const std::vector<double>& dv, Tolerance tol) {
  Verdict v;
  const auto one = [&](const Grad& r, const std::vector<double>& got) {
    const std::int64_t rows = static_cast<std::int64_t>(got.size()) / p.ldg;
    for (std::int64_t row = 0; row < rows; ++row)
      for (std::int64_t c = 0; c < p.ldg; ++c) {
        const double y = got[static_cast<std::size_t>(row * p.ldg + c)];
        if (c >= p.d) {
          v.bad += !std::isnan(y);  // the padding is never written
          continue;
        }
        const std::size_t e = static_cast<std::size_t>(row * p.d + c);
        const double t = tol.u_out * std::fabs(r.y[e]) + tol.m_coef * r.m[e], err = std::fabs(y - r.y[e]);
        ++v.elems;
        v.nonzero += y != 0;
        if (!(err <= t)) ++v.bad;
        else if (t > 0) v.worst = std::max(v.worst, err / t);
      }
  };
  one(ref.dq, dq), one(ref.dk, dk), one(ref.dv, dv);
  return v;
}

/// The three problems both tests run: tails, grouped heads, both causal alignments, the additive mask, fully masked
/// rows, both load paths (rows of 72 and odd strides), head dims 64 and 128.
struct Named {
  const char* name;
  Problem p;
};
inline std::vector<Named> problems(bool bf) {
  std::vector<Named> ps;
  // Head dim 64, two query heads on one key/value head, query tail (77 = 64 + 13), key tail (70 = 64 + 6), rows of 72.
  ps.push_back({"d64 grouped tails", make_problem(bf, 64, 1, 2, 1, 77, 70, 8, CausalAlign::None, false, 110)});
  // Head dim 128, bottom-right causal with len_q > len_k (rows 0..39 see no key: LSE +Inf), two batches, odd stride.
  ps.push_back({"d128 bottom-right masked rows", make_problem(bf, 128, 2, 1, 1, 80, 40, 3, CausalAlign::BottomRight, false, 120)});
  // Head dim 64, top-left causal and the additive mask (-Inf entries, row 3 all -Inf), 4 heads on 2.
  ps.push_back({"d64 top-left additive mask", make_problem(bf, 64, 1, 4, 2, 65, 129, 3, CausalAlign::TopLeft, true, 130)});
  return ps;
}

}  // namespace fpcert::test::attn_bwd
