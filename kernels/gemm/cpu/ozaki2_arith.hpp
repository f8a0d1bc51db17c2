// kernels/gemm/cpu/ozaki2_arith.hpp — the integer arithmetic of fpcert's Ozaki-II FP64 emulation (docs/fp64.md,
// "The built-in Ozaki-II emulation"), the CUDA kernel's (kernels/gemm/cuda/ozaki2.cu). The CPU model and the bitwise
// tier (kernels/gemm/cpu/ozaki2.cpp) share its scaling (step 1), INT8 blocking (3) and rounding (5); they reach the
// residues (2) and the CRT integer (4) by a route of their own (host_residues, host_reconstruct), so the bitwise tier
// compares two derivations of each integer.
//
// The scheme (Ozaki, Uchino, Imamura, "Ozaki Scheme II: A GEMM-oriented emulation of floating-point matrix
// multiplication using an integer modular technique", 2025; GEMMul8's method), written here:
//   1. scaling: row i of A by 2^s_i, column j of B by 2^t_j, s_i = alpha - 1 - ilogb(max_k |a_ik|) (so every scaled
//      entry is below 2^alpha in magnitude), each scaled entry rounded to the nearest integer (ties to even):
//      a'_ik = rint(2^s_i a_ik), b'_kj = rint(2^t_j b_kj), |a'|, |b'| <= 2^alpha;
//      alpha = floor((floor(log2 P) - 1 - ceil(log2 K)) / 2), P the product of the moduli, so that
//      |sum_k a'_ik b'_kj| <= K 2^(2 alpha) <= 2^(floor(log2 P) - 1) < P / 2;
//   2. residues: a'_ik mod m_l in symmetric form (m = 256: -128..127; odd m: -(m-1)/2..(m-1)/2), INT8;
//   3. N exact INT8 x INT8 -> INT32 GEMMs, K cut into blocks of at most kMaxKBlock = 2^17 - 1 (|r| <= 128, so a block
//      sum is at most (2^17 - 1) 2^14 < 2^31), each block's INT32 sum reduced mod m_l and added mod m_l (the result
//      does not depend on the blocking: the residue of the total is unique);
//   4. the Chinese remainder reconstruction, exact: Garner's mixed-radix digits, the integer X = v_0 + v_1 m_0 +
//      v_2 m_0 m_1 + ... in multiword (32-bit limbs), then X - P where X >= P / 2 (the symmetric range);
//   5. the scaling undone and one rounding: C_ij = RN_f64((A'B')_ij 2^-(s_i + t_j)), round to nearest even from the
//      exact integer, subnormal results and overflow to Inf included.
// The only errors: the rounding of the scaled operands to integers (step 1) and the final rounding (step 5).
#pragma once

#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define FPCERT_OZ2_HD __host__ __device__ inline
#else
#define FPCERT_OZ2_HD inline
#endif

namespace fpcert::ozaki2 {

inline constexpr int kMaxModuli = 20;
inline constexpr int kMinModuli = 2;
/// Products of two residues are at most 128^2 = 2^14 in magnitude: a block of K_b products sums below 2^31 when
/// K_b <= 2^17 - 1 (131,071 2^14 = 2^31 - 2^14).
inline constexpr std::int64_t kMaxKBlock = (std::int64_t{1} << 17) - 1;
inline constexpr int kLimbs = 6;  ///< 32-bit limbs of the reconstruction: P < 2^160 for 20 moduli <= 256

/// What one run needs, passed by value to device kernels: the moduli (ozaki2::kModuliTable, kernels/gemm/cpu/ozaki2.hpp),
/// Garner's inverses and P.
struct Plan {
  int n = 0;                              ///< moduli used
  int m[kMaxModuli] = {};
  int inv[kMaxModuli][kMaxModuli] = {};   ///< inv[q][l] = m_q^-1 mod m_l (q < l)
  std::uint64_t magic[kMaxModuli] = {};   ///< ceil(2^32 / m_l): mod_small's reciprocal
  std::uint32_t p[kLimbs] = {};           ///< P = m_0 ... m_{n-1}, little-endian limbs
  int log2p = 0;                          ///< floor(log2 P)
  std::int64_t kblock = kMaxKBlock;       ///< K block of the INT32 accumulation (a test hook may make it smaller)
};

/// Bits each scaled operand may use at depth K: alpha of step 1 (may be <= 0 for very large K: then every entry
/// rounds to 0 or +-1 and the bound says so).
FPCERT_OZ2_HD int operand_bits(const Plan& pl, std::int64_t k) {
  int ck = 0;  // ceil(log2 K)
  while ((std::int64_t{1} << ck) < k) ++ck;
  const int r = pl.log2p - 1 - ck;
  return r >= 0 ? r / 2 : -((-r + 1) / 2);
}

/// The scaling exponent of a line marked as holding Inf or NaN: the scheme has no residues for them; the kernels
/// declare finite inputs only, and where they are called on such a line anyway its elements of C are NaN.
inline constexpr int kNonFiniteLine = -(1 << 30);

/// The scaling exponent of a line from its largest magnitude (0 for an all-zero line; kNonFiniteLine when the
/// line holds Inf or NaN: amax is then the largest magnitude or NaN, as the caller accumulates it).
FPCERT_OZ2_HD int scale_exponent(double amax, int alpha) {
  if (!(amax <= 1.7976931348623157e308)) return kNonFiniteLine;
  return amax > 0 ? alpha - 1 - ::ilogb(amax) : 0;
}

/// rint(x 2^s): the scaled operand as an integer-valued double (|x 2^s| < 2^alpha). ldexp is exact wherever the
/// result is normal; below 2^-1022 the value rounds to 0 either way. A non-finite line's entries count as 0.
FPCERT_OZ2_HD double scaled_integer(double x, int s) { return s == kNonFiniteLine ? 0.0 : ::rint(::ldexp(x, s)); }

/// The running largest magnitude of a line: NaN once a NaN is seen (it stays: no comparison with NaN holds), Inf once
/// an infinity is (then scale_exponent marks the line).
FPCERT_OZ2_HD double line_max(double mx, double x) { return (::fabs(x) > mx || x != x) ? ::fabs(x) : mx; }

/// v mod m in symmetric form for an integer-valued double v (|v| <= 2^80 here).
FPCERT_OZ2_HD int symmetric_residue(double v, int m) {
  long long r;
  if (::fabs(v) < 9.2e18) {
    r = static_cast<long long>(v) % m;
  } else {  // v = M 2^e with M an integer below 2^53: (M mod m)(2^e mod m) mod m
    int e = 0;
    const double f = ::frexp(v, &e);  // v = f 2^e, 0.5 <= |f| < 1
    const long long mant = static_cast<long long>(::ldexp(f, 53));
    long long pw = 1, base = 2 % m;  // 2^(e-53) mod m by squaring
    for (int q = e - 53; q > 0; q >>= 1) {
      if (q & 1) pw = pw * base % m;
      base = base * base % m;
    }
    r = ((mant % m) * pw) % m;
  }
  if (r < 0) r += m;
  return static_cast<int>(r >= (m + 1) / 2 ? r - m : r);
}

/// x mod m in [0, m) for any int64.
FPCERT_OZ2_HD int mod_positive(long long x, int m) {
  const long long r = x % m;
  return static_cast<int>(r < 0 ? r + m : r);
}

/// x mod m for 0 <= x < 2^20 and 2 <= m <= 256, without a division (Garner's digits below take n(n-1)/2 of them per
/// element: a division each was most of the reconstruction's time). With magic = ceil(2^32 / m) = (2^32 + e) / m,
/// 0 <= e < m: x magic / 2^32 = x / m + x e / (m 2^32), whose excess is below x / 2^32 < 2^-12, less than the
/// 1/m >= 2^-8 between x / m and the next integer above it; so q = floor(x magic / 2^32) = floor(x / m) exactly
/// (x magic < 2^51 in 64 bits). tests/kernels/gemm/ozaki2_test.cpp compares it with % on every x and m of its range.
FPCERT_OZ2_HD int mod_small(std::uint32_t x, int m, std::uint64_t magic) {
  const auto q = static_cast<std::uint32_t>((static_cast<std::uint64_t>(x) * magic) >> 32);
  return static_cast<int>(x - q * static_cast<std::uint32_t>(m));
}

/// The integer X in [0, P) (limbs, in place) as the T of the symmetric range -P/2 <= T < P/2: T = X where 2X < P, else
/// -(P - X), as sign and magnitude. The last step of both routes to the CRT integer (reconstruct here, the host's
/// host_reconstruct).
FPCERT_OZ2_HD void symmetric_range(const Plan& pl, std::uint32_t* mag, bool& neg) {
  bool less = false;
  for (int w = kLimbs - 1; w >= 0; --w) {
    // limb w of 2X, its top bit carried into limb w + 1 (compared there): unmasked, a set bit 31 of mag[w] made limb w
    // of 2X look larger than any limb of P (T = P/2 - 1 came back as -P/2 - 1; tests/kernels/gemm/ozaki2_test.cpp)
    const std::uint64_t two_x = ((static_cast<std::uint64_t>(mag[w]) << 1) | (w > 0 ? mag[w - 1] >> 31 : 0u)) & 0xFFFFFFFFu;
    if (two_x != pl.p[w]) {
      less = two_x < pl.p[w];
      break;
    }
  }
  neg = !less;
  if (neg) {  // |T| = P - X
    std::int64_t borrow = 0;
    for (int w = 0; w < kLimbs; ++w) {
      const std::int64_t d = static_cast<std::int64_t>(pl.p[w]) - static_cast<std::int64_t>(mag[w]) - borrow;
      borrow = d < 0;
      mag[w] = static_cast<std::uint32_t>(d + (borrow ? (std::int64_t{1} << 32) : 0));
    }
  }
}

/// The exact integer T with T = r_l (mod m_l) for every l and -P/2 <= T < P/2: sign and magnitude (limbs).
/// r_l in [0, m_l). Garner: v_0 = r_0, v_l = (...((r_l - v_0) m_0^-1 - v_1) m_1^-1 ...) mod m_l; X = v_0 + m_0 (v_1 +
/// m_1 (v_2 + ...)) by Horner from the top; T = X where 2X < P, else -(P - X).
FPCERT_OZ2_HD void reconstruct(const Plan& pl, const int* r, std::uint32_t* mag, bool& neg) {
  int v[kMaxModuli];
  for (int l = 0; l < pl.n; ++l) {
    long long t = r[l];
    for (int q = 0; q < l; ++q) {
      long long d = t - v[q];  // in (-m_q, m_l), m_q <= 256
      while (d < 0) d += pl.m[l];
      t = mod_small(static_cast<std::uint32_t>(d * pl.inv[q][l]), pl.m[l], pl.magic[l]);  // d inv < 2^16
    }
    v[l] = static_cast<int>(t);
  }
  for (int w = 0; w < kLimbs; ++w) mag[w] = 0;
  for (int l = pl.n - 1; l >= 0; --l) {  // X = X m_l + v_l
    std::uint64_t carry = static_cast<std::uint64_t>(v[l]);
    for (int w = 0; w < kLimbs; ++w) {
      const std::uint64_t x = static_cast<std::uint64_t>(mag[w]) * static_cast<std::uint64_t>(l == pl.n - 1 ? 0 : pl.m[l]) + carry;
      mag[w] = static_cast<std::uint32_t>(x);
      carry = x >> 32;
    }
  }
  symmetric_range(pl, mag, neg);
}

/// Limb w of a multiword magnitude (0 beyond its limbs).
FPCERT_OZ2_HD std::uint64_t limb_at(const std::uint32_t* mag, int w) { return w < kLimbs ? mag[w] : 0u; }

/// Bits lo .. lo + n - 1 of a multiword magnitude as an integer (0 <= lo, 1 <= n <= 53; 0 beyond its limbs): the three
/// limbs from lo's hold them (lo's offset in its limb is at most 31, 31 + 53 < 96).
FPCERT_OZ2_HD std::uint64_t limb_field(const std::uint32_t* mag, int lo, int n) {
  const int w = lo >> 5, off = lo & 31;
  const std::uint64_t low = limb_at(mag, w) | (limb_at(mag, w + 1) << 32), high = limb_at(mag, w + 2);
  const std::uint64_t r = (low >> off) | (off ? high << (64 - off) : 0u);
  return r & ((std::uint64_t{1} << n) - 1);
}

/// Whether any of bits 0 .. b - 1 of a multiword magnitude is set (false for b <= 0).
FPCERT_OZ2_HD bool any_below(const std::uint32_t* mag, int b) {
  if (b <= 0) return false;
  const int w = b >> 5, off = b & 31;
  for (int x = 0; x < w && x < kLimbs; ++x)
    if (mag[x]) return true;
  return off && w < kLimbs && (mag[w] & ((1u << off) - 1u)) != 0;
}

/// RN_f64(+-mag 2^-S), ties to even, subnormals and overflow (to Inf) included; an exact zero gives +0, a nonzero
/// value that rounds to zero the zero of its sign. Word operations on the limbs (the significand as one field, the
/// sticky bit as a test of the limbs below); tests/kernels/gemm/ozaki2_test.cpp holds it to MPFR.
FPCERT_OZ2_HD double round_scaled(const std::uint32_t* mag, bool neg, int S) {
  int len = 0;  // bit length
  for (int w = kLimbs - 1; w >= 0; --w)
    if (mag[w]) {
      int b = 31;
      while (!((mag[w] >> b) & 1u)) --b;
      len = 32 * w + b + 1;
      break;
    }
  if (len == 0) return 0.0;
  const int e = len - 1 - S;                      // the value's binade
  const int lsb = e - 52 > -1074 ? e - 52 : -1074;  // its last significant bit as a power of 2
  const int sh = lsb + S;                         // that bit's index in mag
  const int from = sh > 0 ? sh : 0;
  // At most 53 bits (lsb >= e - 52); none where the value is below 2^-1074's position (sh >= len: then q = 0 and only
  // the round and sticky bits decide between 0 and the smallest subnormal).
  std::uint64_t q = len > from ? limb_field(mag, from, len - from) : 0u;
  if (sh > 0) {
    const bool round = limb_field(mag, sh - 1, 1) != 0;
    if (round && (any_below(mag, sh - 1) || (q & 1u))) ++q;
  }
  const double r = ::ldexp(static_cast<double>(q), sh > 0 ? lsb : -S);  // q <= 2^53: exact; beyond the range: Inf
  return neg ? -r : r;
}

/// One element of C from its integer (mag, neg) and its line exponents: NaN where a line holds Inf or NaN.
FPCERT_OZ2_HD double element(const std::uint32_t* mag, bool neg, int s_i, int t_j) {
  if (s_i == kNonFiniteLine || t_j == kNonFiniteLine) return ::nan("");
  return round_scaled(mag, neg, s_i + t_j);
}

}  // namespace fpcert::ozaki2
