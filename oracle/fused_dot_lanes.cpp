// oracle/fused_dot_lanes.cpp — the batched fused dot product: one card instruction for kFusedLanes columns at once
// (oracle/fused_dot.hpp, fused_dot_lanes), bit for bit fused_dot's fast path.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#if defined(__AVX2__)
#include <immintrin.h>
#define FPCERT_FUSED_LANES_AVX2 1
#endif

#include "oracle/fused_dot.hpp"
#include "oracle/fused_dot_fast.hpp"

namespace fpcert {

using namespace fused_detail;

// ---- the batched path (fused_dot_lanes) ----

bool fused_lanes_apply(const FusedDotParams& p, int k) {
  if (k < 1 || k > 64 || !fast_applies(p)) return false;
  const int L = std::clamp(p.fused_length, 1, kMaxFused);
  const int nblocks = (k + L - 1) / L;
  if (p.interleave_run <= 0 || nblocks == 1) return true;  // contiguous blocks of fused_length <= kFastMaxBlock (fast_applies)
  for (int j = 0; j < nblocks; ++j) {
    int n = 0;
    for (int i = 0; i < k; ++i) n += (i / p.interleave_run) % nblocks == j;
    if (n > kFastMaxBlock) return false;
  }
  return true;
}

void fused_lane_operands(const FusedDotParams& p, bool b_side, const std::uint32_t* codes, std::size_t n, float* value, std::int16_t* ref) {
  const Decoder d(b_side ? p.b : p.a);
  for (std::size_t x = 0; x < n; ++x) {
    const FastOp o = fast_operand(d, codes[x]);  // tf32 read toward zero (fused_lanes_apply: fast_applies)
    // sig 2^exp: at most 11 bits times a power of two binary64 holds (|exp| < 160), then exactly a float.
    const double pow2 = std::bit_cast<double>(static_cast<std::uint64_t>(1023 + o.exp) << 52);
    value[x] = o.special ? std::numeric_limits<float>::quiet_NaN() : static_cast<float>(static_cast<double>(o.sig) * pow2);
    ref[x] = o.special ? std::int16_t{0} : o.sig == 0 ? kFusedZeroRef : static_cast<std::int16_t>(o.ref);
  }
}

namespace {

// One block for kFusedLanes lanes (fused_dot_lanes), in binary64 where every operation is exact, and the same
// arithmetic as fast_block:
//  - the window's reference R = max(C's leading-bit exponent, e_a + e_b of the nonzero products, the card's floor) is
//    an integer max (zeros carry kFusedZeroRef; 2 kFusedZeroRef is far below any product's e_a + e_b >= -252, and the
//    clamp at -600 below keeps 2^-L inside binary64 when every term is zero; a floor is in [-400, 200], fast_applies);
//  - L = R - align_bits (align_bits in 0..36), scale = 2^-L: a product a b has at most 22 significant bits (inputs of
//    at most 11), so a b and a b scale are exact (|a b| >= 2^-272, tf32's smallest subnormal squared, and
//    scale >= 2^-254: far from binary64's subnormals; C >= 2^-149 likewise), and trunc() of it
//    is the magnitude truncated onto the window's grid with the product's sign (fast_block's toward-zero alignment);
//  - C (24 bits) scale is exact too, and truncated the same way (products far above C push C's low bits below L);
//  - each term is below 2^(align_bits + 2) (|a b| < 4 2^(e_a + e_b) <= 4 2^R), 33 of them below 2^(align_bits + 8)
//    <= 2^44: every partial sum is an integer binary64 holds exactly, in any order;
//  - D = S 2^L is exact; it is rounded to acc_bits + 1 significant bits on its binary64 bits (drop = 52 - acc_bits low
//    fraction bits; toward zero: cleared; to nearest even: add 2^(drop - 1) - 1 plus the kept lsb, then clear, a carry
//    moving into the exponent), fast_block's rounding at the sum's own exponent. |D| in [2^-126, 2^128) is
//    fast_block's accepted normal result (fp32 code: binary64 exponent - 896 and the top 23 fraction bits, the low
//    23 - acc_bits of them zero), S = 0 is +0; anything else (S not finite: an
//    Inf or NaN input; a subnormal or overflowing result) is a lane fast_block refuses too: returned in the mask.
// No operation depends on the rounding mode (every one is exact; trunc has its own).
template <bool RNE>
std::uint32_t lanes_block_portable(const float* av, const std::int16_t* ar, const float* bv, const std::int16_t* br, std::ptrdiff_t ldb,
                          const std::uint8_t* idx, int n, int align, int rmin, int drop, std::uint32_t* d) {
  constexpr int W = kFusedLanes;
  std::int32_t R[W];
  double S[W], scale[W], unscale[W];
  for (int w = 0; w < W; ++w) {
    const std::uint32_t cb = d[w];
    const auto be = static_cast<std::int32_t>((cb >> 23) & 0xFFu);
    R[w] = (cb & 0x7FFFFFFFu) == 0 ? std::int32_t{kFusedZeroRef} : be == 0 ? -126 : be - 127;
  }
  for (int t = 0; t < n; ++t) {
    const std::int32_t ra = ar[idx[t]];
    const std::int16_t* row = br + idx[t] * ldb;
    for (int w = 0; w < W; ++w) R[w] = std::max(R[w], ra + row[w]);
  }
  for (int w = 0; w < W; ++w) {
    const std::int64_t L = std::max(R[w], rmin) - align;  // in [-636, 254]: 2^-L and 2^L are normal binary64
    scale[w] = std::bit_cast<double>(static_cast<std::uint64_t>(1023 - L) << 52);
    unscale[w] = std::bit_cast<double>(static_cast<std::uint64_t>(1023 + L) << 52);
    S[w] = std::trunc(static_cast<double>(std::bit_cast<float>(d[w])) * scale[w]);
  }
  for (int t = 0; t < n; ++t) {
    const double x = av[idx[t]];
    const float* row = bv + idx[t] * ldb;
    for (int w = 0; w < W; ++w) S[w] += std::trunc(x * static_cast<double>(row[w]) * scale[w]);
  }
  std::uint32_t bad = 0;
  for (int w = 0; w < W; ++w) {
    const std::uint64_t bits = std::bit_cast<std::uint64_t>(S[w] * unscale[w]);
    const std::uint64_t kLow = (std::uint64_t{1} << drop) - 1;
    std::uint64_t mag = bits & 0x7FFFFFFFFFFFFFFFull;
    if constexpr (RNE) mag += (kLow >> 1) + ((mag >> drop) & 1);
    mag &= ~kLow;
    const bool ok = mag == 0 || (mag >= 0x3810000000000000ull && mag < 0x47F0000000000000ull);  // 2^-126, 2^128
    const std::uint32_t f = mag == 0 ? 0u : static_cast<std::uint32_t>((mag >> 29) - (std::uint64_t{896} << 23)) | static_cast<std::uint32_t>((bits >> 32) & 0x80000000u);
    bad |= ok ? 0u : 1u << w;
    d[w] = f;
  }
  return bad;
}

#ifdef FPCERT_FUSED_LANES_AVX2
/// lanes_block_portable in AVX2 (GCC does not vectorise the portable loops reliably): the same operations, 16 lanes as
/// one vector of int16 refs (every sum of two refs fits: |ref| <= 8192) and four vectors of 4 binary64 sums.
template <bool RNE>
std::uint32_t lanes_block_avx2(const float* av, const std::int16_t* ar, const float* bv, const std::int16_t* br, std::ptrdiff_t ldb,
                               const std::uint8_t* idx, int n, int align, int rmin, int drop, std::uint32_t* d) {
  static_assert(kFusedLanes == 16, "one vector of 16 int16 refs");
  __m256i rp = _mm256_set1_epi16(kFusedZeroRef);  // the products' e_a + e_b, max over the block
  for (int t = 0; t < n; ++t) {
    const __m256i r = _mm256_add_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(br + idx[t] * ldb)), _mm256_set1_epi16(ar[idx[t]]));
    rp = _mm256_max_epi16(rp, r);
  }
  const __m128i lo16 = _mm256_castsi256_si128(rp), hi16 = _mm256_extracti128_si256(rp, 1);
  __m256d S[4], scale[4], unscale[4];
  for (int g = 0; g < 4; ++g) {
    const __m128i cb = _mm_loadu_si128(reinterpret_cast<const __m128i*>(d + 4 * g));
    // C's ref: its leading bit's exponent, -126 when subnormal, kFusedZeroRef when zero.
    const __m128i be = _mm_and_si128(_mm_srli_epi32(cb, 23), _mm_set1_epi32(0xFF));
    const __m128i cref = _mm_blendv_epi8(_mm_sub_epi32(be, _mm_set1_epi32(127)), _mm_set1_epi32(-126), _mm_cmpeq_epi32(be, _mm_setzero_si128()));
    const __m128i czero = _mm_cmpeq_epi32(_mm_and_si128(cb, _mm_set1_epi32(0x7FFFFFFF)), _mm_setzero_si128());
    const __m128i pr = _mm_cvtepi16_epi32(g % 2 ? _mm_srli_si128(g < 2 ? lo16 : hi16, 8) : (g < 2 ? lo16 : hi16));
    __m128i R = _mm_max_epi32(pr, _mm_blendv_epi8(cref, _mm_set1_epi32(kFusedZeroRef), czero));
    R = _mm_max_epi32(R, _mm_set1_epi32(rmin));
    const __m256i L = _mm256_cvtepi32_epi64(_mm_sub_epi32(R, _mm_set1_epi32(align)));
    scale[g] = _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_sub_epi64(_mm256_set1_epi64x(1023), L), 52));
    unscale[g] = _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_add_epi64(_mm256_set1_epi64x(1023), L), 52));
    S[g] = _mm256_round_pd(_mm256_mul_pd(_mm256_cvtps_pd(_mm_castsi128_ps(cb)), scale[g]), _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  }
  for (int t = 0; t < n; ++t) {
    const __m256d x = _mm256_set1_pd(av[idx[t]]);
    const float* row = bv + idx[t] * ldb;
    for (int g = 0; g < 4; ++g) {
      const __m256d p = _mm256_mul_pd(_mm256_mul_pd(x, _mm256_cvtps_pd(_mm_loadu_ps(row + 4 * g))), scale[g]);
      S[g] = _mm256_add_pd(S[g], _mm256_round_pd(p, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC));
    }
  }
  const std::int64_t kLow = (std::int64_t{1} << drop) - 1;
  const __m128i drop_count = _mm_cvtsi32_si128(drop);
  std::uint32_t bad = 0;
  for (int g = 0; g < 4; ++g) {
    const __m256i bits = _mm256_castpd_si256(_mm256_mul_pd(S[g], unscale[g]));
    __m256i mag = _mm256_and_si256(bits, _mm256_set1_epi64x(0x7FFFFFFFFFFFFFFFll));
    if constexpr (RNE) mag = _mm256_add_epi64(mag, _mm256_add_epi64(_mm256_set1_epi64x(kLow >> 1), _mm256_and_si256(_mm256_srl_epi64(mag, drop_count), _mm256_set1_epi64x(1))));
    mag = _mm256_andnot_si256(_mm256_set1_epi64x(kLow), mag);
    const __m256i zero = _mm256_cmpeq_epi64(mag, _mm256_setzero_si256());
    const __m256i normal = _mm256_and_si256(_mm256_cmpgt_epi64(mag, _mm256_set1_epi64x(0x3810000000000000ll - 1)),
                                            _mm256_cmpgt_epi64(_mm256_set1_epi64x(0x47F0000000000000ll), mag));
    const __m256i f = _mm256_andnot_si256(zero, _mm256_or_si256(_mm256_sub_epi64(_mm256_srli_epi64(mag, 29), _mm256_set1_epi64x(std::int64_t{896} << 23)),
                                                                  _mm256_and_si256(_mm256_srli_epi64(bits, 32), _mm256_set1_epi64x(0x80000000ll))));
    const __m256i packed = _mm256_permutevar8x32_epi32(f, _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 4 * g), _mm256_castsi256_si128(packed));
    bad |= static_cast<std::uint32_t>(~_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_or_si256(zero, normal))) & 0xF) << (4 * g);
  }
  return bad;
}
#endif

}  // namespace

void fused_dot_lanes(const FusedDotParams& p, int k, int steps, const FusedLaneRow& a, const FusedLanePanel& b, std::ptrdiff_t width,
                     std::uint32_t* c, FusedDotNotes* notes, bool portable) {
  constexpr int W = kFusedLanes;
  static_assert(W <= 32, "lanes are bits of a 32-bit mask");
  // The blocks of one instruction as fused_dot forms them: contiguous runs of fused_length, or dealt in runs.
  const int L = std::clamp(p.fused_length, 1, kMaxFused);
  const int nblocks = (k + L - 1) / L;
  std::uint8_t idx[64];
  int start[65], m = 0;
  for (int j = 0; j < nblocks; ++j) {
    start[j] = m;
    for (int i = 0; i < k; ++i)
      if (p.interleave_run > 0 && nblocks > 1 ? (i / p.interleave_run) % nblocks == j : i / L == j) idx[m++] = static_cast<std::uint8_t>(i);
  }
  start[nblocks] = m;
  const bool last = p.c_join == CJoin::LastRn;
#ifdef FPCERT_FUSED_LANES_AVX2
  const auto block = portable ? (p.block_rounding == Rounding::NearestEven ? lanes_block_portable<true> : lanes_block_portable<false>)
                              : (p.block_rounding == Rounding::NearestEven ? lanes_block_avx2<true> : lanes_block_avx2<false>);
#else
  (void)portable;
  const auto block = p.block_rounding == Rounding::NearestEven ? lanes_block_portable<true> : lanes_block_portable<false>;
#endif
  const int rmin = std::max(p.align_floor, -600), drop = 52 - p.acc_bits;
  std::uint32_t d[W], col[64];
  // Instruction by instruction, all the columns of each (the panel's rows read in order).
  for (int s = 0; s < steps; ++s) {
    const std::ptrdiff_t q = static_cast<std::ptrdiff_t>(s) * k;
    for (std::ptrdiff_t j0 = 0; j0 + W <= width; j0 += W) {
      std::uint32_t* cj = c + j0;
      for (int w = 0; w < W; ++w) d[w] = last ? 0u : cj[w];  // last-rn: the chain from +0
      std::uint32_t bad = 0;
      for (int j = 0; j < nblocks; ++j)
        bad |= block(a.value + q, a.ref + q, b.value + q * b.ld + j0, b.ref + q * b.ld + j0, b.ld, idx + start[j], start[j + 1] - start[j],
                     p.align_bits, rmin, drop, d);
      if (bad == 0 && !last) {
        std::copy(d, d + W, cj);
        continue;
      }
      for (int w = 0; w < W; ++w) {
        if (bad >> w & 1) {  // this lane's instruction on fused_dot (its fast path's blocks, the general path where it refuses)
          for (int i = 0; i < k; ++i) col[i] = b.code[(q + i) * b.ld + j0 + w];
          cj[w] = static_cast<std::uint32_t>(fused_dot(p, a.code + q, col, k, cj[w], notes));
        } else {
          cj[w] = last ? static_cast<std::uint32_t>(ieee_add_rn(p, d[w], cj[w])) : d[w];
        }
      }
    }
  }
}

}  // namespace fpcert
