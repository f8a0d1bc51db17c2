// oracle/fused_dot_fast.hpp — internal to fused_dot (not a public API): the operand decoder and the fast path's
// applicability, operands and block, shared by fused_dot's int64 path (fused_dot.cpp), the batched path
// (fused_dot_lanes.cpp) and the GPU's card chains (kernels/device/card_chains.cu, docs/tensor_cores.md "On the GPU"):
// the decoding and the block are FPCERT_EXACT_HD, the same source compiled for the host and the device.
#pragma once

#include <cstdint>

#include "oracle/format.hpp"
#include "oracle/fused_dot.hpp"

#if !defined(FPCERT_EXACT_HD)
#if defined(__CUDACC__)
#define FPCERT_EXACT_HD __host__ __device__
#else
#define FPCERT_EXACT_HD
#endif
#endif

namespace fpcert::fused_detail {

inline constexpr int kMaxFused = 256;
inline constexpr int kFastMaxAlign = 36;  // aligned terms below 2^(36 + 2) each
inline constexpr int kFastMaxBlock = 32;  // products per block: 33 terms with C, |sum| < 2^44 (exact in binary64 too)

/// unpack() for the signed formats with subnormals the model takes, without its per-call tag
/// comparisons: the descriptor's fields read once, then a few integer operations per code.
struct Decoder {
  std::uint64_t mag_mask, frac_mask, sign_mask;
  int frac, bias, emin;
  std::uint64_t top;  ///< biased exponent of Inf/NaN (IEEE)
  bool ieee, finite_nan, tf32_container;
  explicit Decoder(const Format& f)
      : mag_mask(f.magnitude_mask()), frac_mask(f.frac_mask()), sign_mask(f.sign_mask()), frac(f.frac_bits), bias(f.bias), emin(f.emin()),
        top(static_cast<std::uint64_t>(f.max_biased_exp())), ieee(f.specials == Specials::IEEE), finite_nan(f.specials == Specials::FiniteNaN),
        tf32_container(f == tf32) {}
  FPCERT_EXACT_HD Unpacked operator()(std::uint64_t code) const {
    Unpacked u;
    u.neg = (code & sign_mask) != 0;
    const std::uint64_t mag = code & mag_mask;
    const std::uint64_t biased = mag >> frac;
    const std::uint64_t fr = mag & frac_mask;
    if ((ieee && biased == top) || (finite_nan && mag == mag_mask)) {
      u.cls = (ieee && fr == 0) ? FpClass::Inf : FpClass::NaN;
      u.sig = fr;
      u.exp = 0;
    } else if (biased == 0) {
      u.cls = fr ? FpClass::Subnormal : FpClass::Zero;
      u.sig = fr;
      u.exp = fr ? emin - frac : 0;
    } else {
      u.cls = FpClass::Normal;
      u.sig = fr | (std::uint64_t{1} << frac);
      u.exp = static_cast<int>(biased) - bias - frac;
    }
    return u;
  }
};

/// Whether fused_dot's int64 fast path (and so the batched path) applies to these parameters.
bool fast_applies(const FusedDotParams& p);

/// One operand, decoded for the fast path: value = sig * 2^exp, ref = the exponent of its leading bit
/// position (emin for subnormals); special: Inf or NaN.
struct FastOp {
  std::int32_t sig;  // signed significand (0: zero)
  int exp, ref;
  bool special;
};
FPCERT_EXACT_HD inline FastOp fast_operand(const Decoder& d, std::uint64_t bits) {
  if (d.tf32_container) bits = (bits >> 13) & 0x7FFFF;
  const Unpacked u = d(bits & (d.sign_mask | d.mag_mask));
  FastOp o{0, 0, 0, u.cls == FpClass::Inf || u.cls == FpClass::NaN};
  if (u.cls == FpClass::Normal || u.cls == FpClass::Subnormal) {
    o.sig = u.neg ? -static_cast<std::int32_t>(u.sig) : static_cast<std::int32_t>(u.sig);
    o.exp = u.exp;
    o.ref = u.exp + d.frac;
  }
  return o;
}

/// What a fast block needs of FusedDotParams (fast_applies holds): a plain struct a device kernel takes by value.
struct FastBlockParams {
  int align_bits = 0;
  int align_floor = kNoAlignFloor;
  int acc_bits = 23;
  bool nearest_even = false;  ///< block_rounding NearestEven (else TowardZero)
  int fused_length = 16;      ///< clamped to 1..kMaxFused
  int interleave_run = 0;
};
FastBlockParams fast_block_params(const FusedDotParams& p);

/// The inputs of block j of an instruction of k inputs in nblocks blocks (fused_dot's dealing: contiguous runs of
/// fused_length, or runs of interleave_run dealt round the blocks) into idx; their count, or -1 when the block holds
/// more than kFastMaxBlock (the general path takes the instruction).
FPCERT_EXACT_HD inline int fast_block_members(const FastBlockParams& q, int k, int nblocks, int j, int* idx) {
  int n = 0;
  if (q.interleave_run > 0 && nblocks > 1) {
    for (int i = 0; i < k; ++i)
      if ((i / q.interleave_run) % nblocks == j) {
        if (n == kFastMaxBlock) return -1;
        idx[n++] = i;
      }
  } else {
    const int end = k < (j + 1) * q.fused_length ? k : (j + 1) * q.fused_length;
    for (int i = j * q.fused_length; i < end; ++i) idx[n++] = i;
  }
  return n;
}

/// Leading zeros of a nonzero 64-bit value, on the host and the device.
FPCERT_EXACT_HD inline int fast_clz64(std::uint64_t x) {
#if defined(__CUDA_ARCH__)
  return __clzll(static_cast<long long>(x));
#else
  return __builtin_clzll(x);
#endif
}

/// One block on the fast path: D = round(C + the products idx[0..n) of a and b), or false when the block needs the
/// general path (an Inf or NaN operand or C, a result outside fp32's normal range).
FPCERT_EXACT_HD inline bool fast_block(const FastBlockParams& p, const FastOp* a, const FastOp* b, const int* idx, int n, std::uint32_t c,
                                       std::uint32_t& d) {
  std::int64_t sig[kFastMaxBlock + 1];
  int lsb[kFastMaxBlock + 1], m = 0, ref = -0x7FFFFFFF - 1;
  for (int t = 0; t < n; ++t) {
    const FastOp &x = a[idx[t]], &y = b[idx[t]];
    if (x.special || y.special) return false;
    if (x.sig == 0 || y.sig == 0) continue;
    sig[m] = static_cast<std::int64_t>(x.sig) * y.sig;
    lsb[m] = x.exp + y.exp;
    ref = ref > x.ref + y.ref ? ref : x.ref + y.ref;
    ++m;
  }
  const std::uint32_t cmag = c & 0x7FFFFFFFu;
  if (cmag >= 0x7F800000u) return false;  // C is Inf or NaN
  if (cmag != 0) {
    const int be = static_cast<int>(cmag >> 23);
    const std::int64_t cs = be ? static_cast<std::int64_t>((cmag & 0x7FFFFFu) | 0x800000u) : static_cast<std::int64_t>(cmag);
    sig[m] = (c >> 31) ? -cs : cs;
    lsb[m] = (be ? be : 1) - 127 - 23;
    ref = ref > lsb[m] + 23 ? ref : lsb[m] + 23;
    ++m;
  }
  if (m == 0) {
    d = 0;  // every term zero: +0
    return true;
  }
  const int L = (ref > p.align_floor ? ref : p.align_floor) - p.align_bits;  // kNoAlignFloor is below every ref
  std::int64_t sum = 0;
  for (int t = 0; t < m; ++t) {
    const std::int64_t v = sig[t] < 0 ? -sig[t] : sig[t];
    std::int64_t q;
    if (lsb[t] >= L) q = v << (lsb[t] - L);  // lsb - L <= align_bits; v < 2^24
    else q = L - lsb[t] >= 63 ? 0 : v >> (L - lsb[t]);  // truncation of the magnitude: toward zero
    sum += sig[t] < 0 ? -q : q;
  }
  if (sum == 0) {
    d = 0;
    return true;
  }
  const bool neg = sum < 0;
  auto mag = static_cast<std::uint64_t>(neg ? -sum : sum);
  const int bw = 64 - fast_clz64(mag);
  int E = L + bw - 1;  // the exponent of the leading bit
  const int P = p.acc_bits + 1;  // significant bits of the result
  std::uint64_t mant;
  if (bw <= P) {
    mant = mag << (P - bw);
  } else {
    const int s = bw - P;
    mant = mag >> s;
    if (p.nearest_even) {
      const std::uint64_t rem = mag & ((std::uint64_t{1} << s) - 1), half = std::uint64_t{1} << (s - 1);
      if (rem > half || (rem == half && (mant & 1))) ++mant;
      if (mant == (std::uint64_t{1} << P)) mant >>= 1, ++E;
    }
  }
  if (E < -126 || E > 127) return false;  // subnormal or overflowing result: the general path rounds it
  d = (neg ? 0x80000000u : 0u) | (static_cast<std::uint32_t>(E + 127) << 23) |
      static_cast<std::uint32_t>((mant << (23 - p.acc_bits)) & 0x7FFFFFu);
  return true;
}

/// One instruction of k inputs (decoded) chained from C as fused_dot chains it with c_join in-block, every block on
/// the fast path: D, or false when some block needs the general path (the caller then runs fused_dot).
FPCERT_EXACT_HD inline bool fast_instruction(const FastBlockParams& p, const FastOp* a, const FastOp* b, int k, std::uint32_t c,
                                             std::uint32_t& d) {
  const int nblocks = (k + p.fused_length - 1) / p.fused_length;
  int idx[kFastMaxBlock];
  for (int j = 0; j < nblocks; ++j) {
    const int n = fast_block_members(p, k, nblocks, j, idx);
    if (n < 0 || !fast_block(p, a, b, idx, n, c, c)) return false;
  }
  d = c;
  return true;
}

}  // namespace fpcert::fused_detail
