// oracle/exact_combine.hpp — the fast exact GEMM's per-element finishing (docs/oracle.md, steps 5-7), shared by the
// CPU oracle (oracle/gemm_fast.cpp) and the GPU reference (kernels/device/exact_gemm_fused.cu): the same source, so
// the same integers become the same hi, lo, tail on both. Functions are FPCERT_EXACT_HD (oracle/exact_sum.hpp); no
// CUDA header here. Also the split's choice (step 2), which both compute from the scan's histograms.
#pragma once

#include <cstdint>
#include <limits>

#include "oracle/exact_sum.hpp"
#include "oracle/refvalue.hpp"

namespace fpcert::exact_gemm {

using i128 = __int128;
using u128 = unsigned __int128;

inline constexpr int kNeedBins = 2304;  ///< need = e - low_exponent <= 1024 + 1074
inline constexpr int kMaxSlices = 5;    ///< W = S * beta <= 5 * 26

/// The split (docs/oracle.md, step 2): S slices of beta bits per operand, window W = S beta, G = S (S + 1) / 2 slice
/// GEMMs (S diagonal + S (S - 1) / 2 Karatsuba) over K blocks of kc.
struct Split {
  int S = 1, beta = 0, W = 0, G = 1;
  std::int64_t kc = 0, nblocks = 0;
};
/// The split of an M x N x K product from the needs' histograms (kNeedBins entries each) and the lines' largest need
/// (M rows of A, N columns of B): the cheapest S under the cost model of gemm_fast.cpp.
Split choose_split(const std::int64_t* hist_a, const std::int64_t* hist_b, const int* max_need_a, const int* max_need_b,
                   std::int64_t M, std::int64_t N, std::int64_t K);

/// RN to 53 bits of an integer: the rounded value (as a double, exact) and x - rounded.
struct Rn53 {
  double v;
  i128 rest;
};
FPCERT_EXACT_HD inline Rn53 rn53(i128 x) {
  const bool neg = x < 0;
  const u128 ux = neg ? -static_cast<u128>(x) : static_cast<u128>(x);
  if ((ux >> 53) == 0) return {static_cast<double>(static_cast<std::int64_t>(x)), 0};
  const int n = 128 - hd::clz128(ux);
  const int sh = n - 53;
  u128 top = ux >> sh;
  const u128 rem = ux & ((static_cast<u128>(1) << sh) - 1);
  const u128 half = static_cast<u128>(1) << (sh - 1);
  if (rem > half || (rem == half && (top & 1))) ++top;
  const i128 rest = static_cast<i128>(ux) - static_cast<i128>(top << sh);
  const double v = static_cast<double>(static_cast<std::uint64_t>(top)) * hd::pow2(sh);  // exact: top <= 2^53
  return neg ? Rn53{-v, -rest} : Rn53{v, rest};
}

/// RefValue of X * 2^E when every double involved is normal: E >= -1022 and |X| 2^E < 2^1023; false otherwise.
FPCERT_EXACT_HD inline bool ref_from_int_fast(i128 X, int E, RefValue& out) {
  if (X == 0) {
    out = {};
    return true;
  }
  const u128 ux = X < 0 ? -static_cast<u128>(X) : static_cast<u128>(X);
  const int n = 128 - hd::clz128(ux);
  if (E < -1022 || E + n > 1023) return false;
  const double p = hd::pow2(E);
  const Rn53 h = rn53(X);
  if (h.rest == 0) {
    out = {h.v * p, 0.0, 0};
    return true;
  }
  const Rn53 l = rn53(h.rest);
  out = {h.v * p, l.v * p, static_cast<std::int8_t>((l.rest > 0) - (l.rest < 0))};
  return true;
}

/// X of an element for S <= 2 (step 5): v[0] (S = 1), or D_1 2^(2 beta) + (P_12 - D_1 - D_2) 2^beta + D_2 from the
/// level sums v = {D_1, D_2, P_12} (S = 2, Karatsuba). Its weight is 2^(e_i + e_j - 2 S beta).
FPCERT_EXACT_HD inline i128 combine_levels(const std::int64_t* v, int S, int beta) {
  if (S == 1) return v[0];
  const i128 cross = static_cast<i128>(v[2]) - v[0] - v[1];  // d1 e2 + d2 e1
  return (static_cast<i128>(v[0]) << (2 * beta)) + (cross << beta) + v[1];
}

/// abs_sum (step 7): U = RN(RN(absv + eta) * abs_factor) * 2^es, one place up when the scaled bound is subnormal (it
/// stays an upper bound), +Inf when it overflows.
FPCERT_EXACT_HD inline double abs_sum_bound(double absv, double eta, double abs_factor, int es) {
  const double ub = (absv + eta) * abs_factor;
  double sc = (es >= -1022 && es <= 1023) ? ub * hd::pow2(es) : hd::ldexp_hd(ub, es);
  if (ub != 0 && sc < 0x1p-1022) sc = hd::double_of(hd::bits_of(sc) + 1);  // nextafter(sc, +Inf), sc >= 0
  return sc;
}

/// The GPU's accumulator for elements with per-element corrections when every input is a binary32 value (finite
/// or not): products and X 2^E are then multiples of 2^-298 below 2^288 (K < 2^31), inside 2^-320 .. 2^448, and S is
/// neither tiny nor overflowing, so finalize() gives ExactSum's RefValue bit for bit (tests/oracle/exact_combine_test).
using F32ExactSum = BasicExactSum<24, -320>;

}  // namespace fpcert::exact_gemm
