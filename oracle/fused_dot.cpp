// oracle/fused_dot.cpp — the block fused dot product model (oracle/fused_dot.hpp).
#include "oracle/fused_dot.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <climits>
#include <cmath>
#include <limits>

#include "oracle/card_chains.hpp"
#include "oracle/fused_dot_fast.hpp"

namespace fpcert {

using namespace fused_detail;

namespace {

using u128 = unsigned __int128;
using i128 = __int128;

constexpr int kMaxAlignBits = 56;  // keeps every aligned term and every sum below 2^126 (see align())
constexpr int kMaxGroups = 16;

/// The accumulator format with `bits` fraction bits: same exponent range, IEEE specials.
Format reduced_format(const Format& acc, int bits) {
  return Format{"acc", "accumulator", 1, acc.exp_bits, bits, acc.bias, true, Specials::IEEE, acc.container_bits};
}

/// A term on the way to a sum: (-1)^neg * mag * 2^lsb, aligned by ref. A group whose sum cancelled
/// to zero is still live: its exponent takes part in the next alignment (the exponent comparison does
/// not look at the sum), as in Khattak and Mikaitis' model.
struct Wide {  // no default member values: arrays of these stay uninitialised on the stack
  bool neg;
  u128 mag;
  int lsb;
  int ref;
  bool live;
};

int bit_width128(u128 x) {
  const auto hi = static_cast<std::uint64_t>(x >> 64);
  if (hi) return 128 - std::countl_zero(hi);
  return 64 - std::countl_zero(static_cast<std::uint64_t>(x));
}

/// The term's value in units of 2^L, discarding bits below as the alignment rounding says. A term
/// never has more than align_bits + 2 bits above L that it must keep (its lsb is at most its ref + 1,
/// L = max ref - F), and magnitudes are below 2^(F + 8) * 2^lsb shifts, so |result| < 2^(2F + 10).
i128 align(const Wide& t, int L, AlignRounding r) {
  u128 q;
  if (t.lsb >= L) {
    q = t.mag << (t.lsb - L);
  } else {
    const int s = L - t.lsb;
    bool up = false;
    if (s >= 128) {
      q = 0;
      up = r == AlignRounding::Down && t.neg && t.mag != 0;  // |rem| < half for nearest (s > 128 bits)
    } else {
      q = t.mag >> s;
      const u128 rem = t.mag & ((u128{1} << s) - 1);
      const u128 half = u128{1} << (s - 1);
      switch (r) {
        case AlignRounding::TowardZero: break;
        case AlignRounding::Down: up = t.neg && rem != 0; break;
        case AlignRounding::NearestEven: up = rem > half || (rem == half && (q & 1)); break;
      }
    }
    q += up;
  }
  return t.neg ? -static_cast<i128>(q) : static_cast<i128>(q);
}

/// Terms aligned to one window and added exactly.
struct Window {
  bool any = false;
  int ref = INT_MIN;
  int lsb = 0;
  i128 sum = 0;
};

Window add_aligned(const Wide* terms, int n, const FusedDotParams& p) {
  Window w;
  for (int i = 0; i < n; ++i)
    if (terms[i].live) {
      w.any = true;
      w.ref = std::max(w.ref, terms[i].ref);
    }
  if (!w.any) return w;
  w.lsb = std::max(w.ref, p.align_floor) - p.align_bits;
  for (int i = 0; i < n; ++i)
    if (terms[i].live && terms[i].mag != 0) w.sum += align(terms[i], w.lsb, p.align_rounding);
  return w;
}

Wide as_term(const Window& w) {
  const bool neg = w.sum < 0;
  return Wide{neg, neg ? static_cast<u128>(-w.sum) : static_cast<u128>(w.sum), w.lsb, w.ref, w.any};
}

Wide as_term(const FusedTerm& t) { return Wide{t.neg, t.sig, t.lsb, t.ref, true}; }

/// The reduced-precision code widened to the accumulator format (same value).
std::uint64_t widen(const Format& r, std::uint64_t code, const Format& acc) {
  const std::uint64_t sign = (code & r.sign_mask()) ? acc.sign_mask() : 0;
  const std::uint64_t mag = code & r.magnitude_mask();
  const std::uint64_t biased = mag >> r.frac_bits;
  const std::uint64_t frac = mag & r.frac_mask();
  return sign | (biased << acc.frac_bits) | (frac << (acc.frac_bits - r.frac_bits));
}


std::uint64_t read_operand(const FusedDotParams& p, const Format& f, std::uint64_t bits) {
  if (f == tf32 && p.operand_read != Rounding::TowardZero)
    return convert(f32, bits & 0xFFFFFFFFu, tf32, Rounder{p.operand_read, Saturation::Inf, NanPayload::Preserve}).code;
  return from_container(f, bits);
}

FusedTerm c_term(const FusedDotParams& p, std::uint64_t c) {
  const Unpacked u = Decoder(p.acc)(c & p.acc.code_mask());
  FusedTerm t{FpClass::Zero, u.neg, 0, 0, 0};
  switch (u.cls) {
    case FpClass::NaN:
    case FpClass::Inf: t.cls = u.cls; return t;
    case FpClass::Zero: t.cls = FpClass::Zero; return t;
    case FpClass::Subnormal:
      if (!p.output_subnormals) {
        t.cls = FpClass::Zero;
        return t;
      }
      break;
    case FpClass::Normal: break;
  }
  t.cls = FpClass::Normal;
  t.sig = u.sig;
  t.lsb = u.exp;
  t.ref = p.reference == AlignReference::ProductExponents ? u.exp + p.acc.frac_bits
                                                          : u.exp + (64 - std::countl_zero(u.sig)) - 1;
  return t;
}

}  // namespace

std::string check(const FusedDotParams& p) {
  const auto bad = [](const std::string& s) { return s; };
  if (p.a.total_bits() > 32 || p.b.total_bits() > 32 || p.a.frac_bits > 23 || p.b.frac_bits > 23)
    return bad("input formats wider than fp32 are not modelled");
  if (p.a.sign_bits != 1 || p.b.sign_bits != 1 || !p.a.subnormals || !p.b.subnormals)
    return bad("input formats must be signed with subnormals (not ue8m0)");
  if (!(p.acc == f32 || p.acc == f16 || p.acc == bf16)) return bad("the accumulator must be f32, f16 or bf16");
  if (p.fused_length < 1 || p.fused_length > kMaxFused) return bad("fused_length must be in 1.." + std::to_string(kMaxFused));
  if (p.groups < 1 || p.groups > kMaxGroups) return bad("groups must be in 1.." + std::to_string(kMaxGroups));
  if (p.grouping == Grouping::None && p.groups != 1) return bad("grouping none needs groups = 1");
  if (p.grouping != Grouping::None && p.groups < 2) return bad("grouping needs at least 2 groups");
  if (p.grouping == Grouping::Contiguous && p.fused_length % p.groups != 0)
    return bad("contiguous groups must divide fused_length");
  if (p.interleave_run < 0 || p.interleave_run > kMaxFused)
    return bad("interleave_run must be in 0.." + std::to_string(kMaxFused));
  if (p.align_bits < 0 || p.align_bits > kMaxAlignBits)
    return bad("align_bits " + std::to_string(p.align_bits) + " outside 0.." + std::to_string(kMaxAlignBits));
  if (p.acc_bits < 1 || p.acc_bits > p.acc.frac_bits)
    return bad("acc_bits " + std::to_string(p.acc_bits) + " outside 1.." + std::to_string(p.acc.frac_bits));
  if (p.product_frac_bits < -1 || p.product_frac_bits > 46) return bad("product_frac_bits must be -1 (exact) or 0..46");
  if (p.block_rounding == Rounding::Stochastic || p.operand_read == Rounding::Stochastic)
    return bad("stochastic rounding is not a tensor-core mode this model knows");
  if (classify(p.acc, p.nan_code) != FpClass::NaN) return bad("nan_code is not a NaN of the accumulator format");
  return {};
}

namespace {
/// fused_product with the operands' decoders built once (fused_dot's inner loop).
FusedTerm product_term(const FusedDotParams& p, const Decoder& da, const Decoder& db, std::uint64_t a, std::uint64_t b) {
  const auto read = [&](const Decoder& d, const Format& f, std::uint64_t bits) {
    if (d.tf32_container) return p.operand_read == Rounding::TowardZero ? (bits >> 13) & 0x7FFFF : read_operand(p, f, bits);
    return bits & (d.sign_mask | d.mag_mask);
  };
  Unpacked ua = da(read(da, p.a, a));
  Unpacked ub = db(read(db, p.b, b));
  if (!p.input_subnormals) {
    if (ua.cls == FpClass::Subnormal) ua.cls = FpClass::Zero, ua.sig = 0;
    if (ub.cls == FpClass::Subnormal) ub.cls = FpClass::Zero, ub.sig = 0;
  }
  FusedTerm t{FpClass::Zero, ua.neg != ub.neg, 0, 0, 0};
  if (ua.cls == FpClass::NaN || ub.cls == FpClass::NaN) {
    t.cls = FpClass::NaN;
    return t;
  }
  if (ua.cls == FpClass::Inf || ub.cls == FpClass::Inf) {
    t.cls = (ua.cls == FpClass::Zero || ub.cls == FpClass::Zero) ? FpClass::NaN : FpClass::Inf;  // Inf * 0 = NaN
    return t;
  }
  if (ua.cls == FpClass::Zero || ub.cls == FpClass::Zero) {
    t.cls = FpClass::Zero;
    return t;
  }
  t.cls = FpClass::Normal;
  t.sig = ua.sig * ub.sig;  // <= 24 + 24 bits: exact
  t.lsb = ua.exp + ub.exp;
  const int bw = 64 - std::countl_zero(t.sig);
  const int lead = t.lsb + bw - 1;
  // e_a + e_b: each input's exponent is that of its leading bit position, emin for subnormals.
  const int unnormalised = ua.exp + p.a.frac_bits + ub.exp + p.b.frac_bits;
  if (p.product_frac_bits >= 0 && bw - 1 > p.product_frac_bits) {
    const int s = bw - 1 - p.product_frac_bits;
    t.sig >>= s;
    t.lsb += s;
  }
  t.ref = p.reference == AlignReference::ProductExponents ? unnormalised : lead;
  if (!p.wide_block && lead >= p.acc.emax() + 1) {
    t.cls = FpClass::Inf;
    t.sig = 0;
  }
  return t;
}
}  // namespace

FusedTerm fused_product(const FusedDotParams& p, std::uint64_t a, std::uint64_t b) {
  return product_term(p, Decoder(p.a), Decoder(p.b), a, b);
}

namespace {

/// Where the calling thread's fused_dot(..., notes) records what it met (null: nothing recorded).
thread_local FusedDotNotes* tl_notes = nullptr;

/// The exact window sum rounded into `acc` with `bits` fraction bits (w.sum != 0). `note`: a block result
/// (not the IEEE addition of c_join last-rn), counted in tl_notes when it rounds inexactly below the normal range.
std::uint64_t round_window(const Window& w, const Format& acc, int bits, Rounding mode, OverflowTo overflow, bool subnormals,
                           bool note = true) {
  const bool neg = w.sum < 0;
  const u128 mag = neg ? static_cast<u128>(-w.sum) : static_cast<u128>(w.sum);
  const int bw = bit_width128(mag);
  std::uint64_t sig64;
  bool sticky = false;
  if (bw > 64) {
    sig64 = static_cast<std::uint64_t>(mag >> (bw - 64));
    sticky = (mag << (128 - (bw - 64))) != 0;
  } else {
    sig64 = static_cast<std::uint64_t>(mag) << (64 - bw);
  }
  const Format r = reduced_format(acc, bits);
  const Rounded rr = detail::round_normalized(r, neg, sig64, w.lsb + bw - 1, sticky, Rounder{mode, Saturation::Inf, NanPayload::Preserve}, 0);
  if (note && tl_notes && (rr.flags & kUnderflow)) ++tl_notes->subnormal_inexact;
  std::uint64_t code = rr.code;
  const std::uint64_t sign = neg ? r.sign_mask() : 0;
  if (rr.flags & kOverflow) code = sign | (overflow == OverflowTo::Inf ? r.inf_code() : r.max_finite_code());
  if (!subnormals && classify(r, code) == FpClass::Subnormal) code = sign;
  return widen(r, code, acc);
}

/// One block with C joining as `join` says (InBlock or After; last-rn is fused_block's and fused_dot's).
std::uint64_t block_sum(const FusedDotParams& p, std::span<const FusedTerm> products, std::uint64_t c, CJoin join) {
  const FusedTerm ct = c_term(p, c);
  // ---- Inf and NaN: IEEE rules on the exact terms ----
  bool nan = ct.cls == FpClass::NaN, pinf = ct.cls == FpClass::Inf && !ct.neg, ninf = ct.cls == FpClass::Inf && ct.neg;
  bool any = ct.cls == FpClass::Normal, all_neg_zero = ct.cls != FpClass::Zero || ct.neg;
  for (const FusedTerm& t : products) {
    nan |= t.cls == FpClass::NaN;
    pinf |= t.cls == FpClass::Inf && !t.neg;
    ninf |= t.cls == FpClass::Inf && t.neg;
    any |= t.cls == FpClass::Normal;
    if (t.cls == FpClass::Zero) all_neg_zero &= t.neg;
  }
  if (nan || (pinf && ninf)) return p.nan_code;
  if (pinf || ninf) return (ninf ? p.acc.sign_mask() : 0) | p.acc.inf_code();
  const bool c_nonzero = ct.cls == FpClass::Normal;
  if (!any) return (p.ieee_negative_zero && all_neg_zero && (ct.cls == FpClass::Zero)) ? p.acc.sign_mask() : 0;

  // ---- alignment: groups of products (C with them when it joins the block and there are no groups) ----
  const int n = static_cast<int>(std::min<std::size_t>(products.size(), kMaxFused));
  Wide terms[kMaxFused + 1];
  Window w;
  if (p.grouping == Grouping::None) {
    int m = 0;
    for (int i = 0; i < n; ++i)
      if (products[i].cls == FpClass::Normal) terms[m++] = as_term(products[i]);
    if (c_nonzero && join == CJoin::InBlock) terms[m++] = as_term(ct);
    w = add_aligned(terms, m, p);
  } else {
    Wide level2[kMaxGroups + 1];
    int m2 = 0;
    const int per_group = p.grouping == Grouping::Contiguous ? p.fused_length / p.groups : 0;
    for (int g = 0; g < p.groups; ++g) {
      int m = 0;
      for (int i = 0; i < n; ++i) {
        const int gi = p.grouping == Grouping::Interleaved ? i % p.groups : i / per_group;
        if (gi == g && products[i].cls == FpClass::Normal) terms[m++] = as_term(products[i]);
      }
      const Window wg = add_aligned(terms, m, p);
      if (wg.any) level2[m2++] = as_term(wg);
    }
    if (c_nonzero && join == CJoin::InBlock) level2[m2++] = as_term(ct);
    w = add_aligned(level2, m2, p);
  }
  if (c_nonzero && join == CJoin::After) {
    std::array<Wide, 2> two{as_term(w), as_term(ct)};  // an absent block sum is not live
    w = add_aligned(two.data(), 2, p);
  }
  if (w.sum == 0) return (p.ieee_negative_zero && p.block_rounding == Rounding::Down) ? p.acc.sign_mask() : 0;
  // ---- one rounding into the accumulator format with acc_bits fraction bits ----
  return round_window(w, p.acc, p.acc_bits, p.block_rounding, p.overflow, p.output_subnormals);
}

}  // namespace

std::uint64_t ieee_add_rn(const FusedDotParams& p, std::uint64_t x, std::uint64_t y) {
  const Decoder dec(p.acc);
  const Unpacked u[2] = {dec(x & p.acc.code_mask()), dec(y & p.acc.code_mask())};
  bool pinf = false, ninf = false;
  for (const Unpacked& v : u) {
    if (v.cls == FpClass::NaN) return p.nan_code;
    pinf |= v.cls == FpClass::Inf && !v.neg;
    ninf |= v.cls == FpClass::Inf && v.neg;
  }
  if (pinf && ninf) return p.nan_code;
  if (pinf || ninf) return (ninf ? p.acc.sign_mask() : 0) | p.acc.inf_code();
  // Two terms of at most 24 bits aligned to the larger leading bit with 56 fraction bits: exact whenever
  // the exponents differ by at most 33; beyond, the smaller is below a quarter of the result's ulp and
  // round-to-nearest returns the larger whatever the truncation did to it.
  FusedDotParams wide = p;
  wide.align_bits = kMaxAlignBits;
  wide.align_floor = kNoAlignFloor;
  wide.align_rounding = AlignRounding::TowardZero;
  Wide t[2];
  int m = 0;
  for (const Unpacked& v : u)
    if (v.cls == FpClass::Normal || v.cls == FpClass::Subnormal)
      t[m++] = Wide{v.neg, v.sig, v.exp, v.exp + (64 - std::countl_zero(v.sig)) - 1, true};
  if (m == 0) return (u[0].neg && u[1].neg) ? p.acc.sign_mask() : 0;  // zeros: -0 only for -0 + -0
  const Window w = add_aligned(t, m, wide);
  if (w.sum == 0) return 0;  // x + (-x) = +0 when rounding to nearest
  return round_window(w, p.acc, p.acc.frac_bits, Rounding::NearestEven, OverflowTo::Inf, true, false);
}

std::uint64_t fused_block(const FusedDotParams& p, std::span<const FusedTerm> products, std::uint64_t c) {
  if (p.c_join == CJoin::LastRn) return ieee_add_rn(p, block_sum(p, products, 0, CJoin::InBlock), c);
  return block_sum(p, products, c, p.c_join);
}

namespace {

}  // namespace

namespace fused_detail {

// ---- the fast path: the same arithmetic for the parameters of every measured fp32-accumulator card ----
// Products exact, one alignment window per block (no groups) at the largest e_a + e_b (and C's leading bit
// when C joins the block), at least the card's alignment floor where it has one, bits below it discarded toward
// zero, the exact window sum rounded toward zero or to nearest even to acc_bits (1..23) fraction bits in fp32's
// exponent range (23 for the fp32 cards, 13 for Hopper's FP8 wgmma: e8m13), inputs of at most 11 significant bits,
// blocks of at most 32 products. Every aligned term then stays below 2^(align_bits + 2) and a block's sum below
// 2^(align_bits + 8) <= 2^44 in an int64, so no 128-bit arithmetic is needed. Blocks with Inf or NaN anywhere, and
// results outside fp32's normal range (subnormal, overflow), take the general path for that block: the result is
// identical bit for bit (tests/oracle/fused_dot_fast_test.cpp compares both paths on random and adversarial inputs).

bool fast_applies(const FusedDotParams& p) {
  const auto narrow = [](const Format& f) { return f.frac_bits <= 10 && f.total_bits() <= 32 && f.sign_bits == 1 && f.subnormals; };
  return p.acc == f32 && p.acc_bits >= 1 && p.acc_bits <= 23 && (p.block_rounding == Rounding::TowardZero || p.block_rounding == Rounding::NearestEven) &&
         p.align_rounding == AlignRounding::TowardZero && p.reference == AlignReference::ProductExponents &&
         p.grouping == Grouping::None && (p.c_join == CJoin::InBlock || p.c_join == CJoin::LastRn) &&
         (p.align_floor == kNoAlignFloor || (p.align_floor >= -400 && p.align_floor <= 200)) && p.align_bits >= 0 &&
         p.align_bits <= kFastMaxAlign && p.wide_block && p.product_frac_bits < 0 && p.input_subnormals && p.output_subnormals &&
         p.overflow == OverflowTo::Inf && !p.ieee_negative_zero && p.fused_length <= kFastMaxBlock && narrow(p.a) &&
         narrow(p.b) && (!(p.a == tf32) || p.operand_read == Rounding::TowardZero) && (!(p.b == tf32) || p.operand_read == Rounding::TowardZero);
}

FastBlockParams fast_block_params(const FusedDotParams& p) {
  FastBlockParams q;
  q.align_bits = p.align_bits;
  q.align_floor = p.align_floor;
  q.acc_bits = p.acc_bits;
  q.nearest_even = p.block_rounding == Rounding::NearestEven;
  q.fused_length = std::clamp(p.fused_length, 1, kMaxFused);
  q.interleave_run = p.interleave_run;
  return q;
}

}  // namespace fused_detail

std::uint64_t fused_dot(const FusedDotParams& p, const std::uint32_t* a, const std::uint32_t* b, int k, std::uint64_t c) {
  const int L = std::clamp(p.fused_length, 1, kMaxFused);
  if (k <= 0 || k > 64 || !fast_applies(p)) return fused_dot_reference(p, a, b, k, c);
  const Decoder da(p.a), db(p.b);
  FastOp fa[64], fb[64];
  for (int i = 0; i < k; ++i) {
    fa[i] = fast_operand(da, a[i]);
    fb[i] = fast_operand(db, b[i]);
  }
  const FastBlockParams fp = fast_block_params(p);
  const bool last = p.c_join == CJoin::LastRn;
  const int nblocks = (k + L - 1) / L;
  auto d = static_cast<std::uint32_t>(last ? 0 : c);
  int idx[kFastMaxBlock];
  for (int j = 0; j < nblocks; ++j) {
    const int n = fast_block_members(fp, k, nblocks, j, idx);
    if (n < 0) return fused_dot_reference(p, a, b, k, c);  // a block longer than the fast path holds
    std::uint32_t r;
    if (!fast_block(fp, fa, fb, idx, n, d, r)) {  // this block on the general path
      FusedTerm buf[kFastMaxBlock];
      for (int t = 0; t < n; ++t) buf[t] = product_term(p, da, db, a[idx[t]], b[idx[t]]);
      r = static_cast<std::uint32_t>(block_sum(p, std::span<const FusedTerm>(buf, static_cast<std::size_t>(n)), d, CJoin::InBlock));
    }
    d = r;
  }
  return last ? ieee_add_rn(p, d, c) : d;  // last-rn: C added by the IEEE addition (once per call: the general code)
}

bool card_chains_apply(const FusedDotParams& p, int step) {
  return step >= 1 && step <= kCardChainMaxStep && fast_applies(p) && p.c_join == CJoin::InBlock;
}

std::uint64_t fused_dot(const FusedDotParams& p, const std::uint32_t* a, const std::uint32_t* b, int k, std::uint64_t c, FusedDotNotes* notes) {
  FusedDotNotes* const saved = tl_notes;
  tl_notes = notes;
  const std::uint64_t d = fused_dot(p, a, b, k, c);
  tl_notes = saved;
  return d;
}

std::uint64_t fused_dot_reference(const FusedDotParams& p, const std::uint32_t* a, const std::uint32_t* b, int k, std::uint64_t c) {
  FusedTerm buf[kMaxFused];
  const int L = std::clamp(p.fused_length, 1, kMaxFused);
  if (k <= 0) return fused_block(p, {}, c);
  const Decoder da(p.a), db(p.b);
  const bool last = p.c_join == CJoin::LastRn;
  const CJoin join = last ? CJoin::InBlock : p.c_join;
  const int nblocks = (k + L - 1) / L;
  std::uint64_t d = last ? 0 : c;  // last-rn: the chain starts from +0
  if (p.interleave_run > 0 && nblocks > 1) {
    const int r = p.interleave_run;
    for (int j = 0; j < nblocks; ++j) {
      int n = 0;
      for (int i = 0; i < k && n < kMaxFused; ++i)
        if ((i / r) % nblocks == j) buf[n++] = product_term(p, da, db, a[i], b[i]);
      d = block_sum(p, std::span<const FusedTerm>(buf, static_cast<std::size_t>(n)), d, join);
    }
  } else {
    for (int start = 0; start < k; start += L) {
      const int n = std::min(L, k - start);
      for (int i = 0; i < n; ++i) buf[i] = product_term(p, da, db, a[start + i], b[start + i]);
      d = block_sum(p, std::span<const FusedTerm>(buf, static_cast<std::size_t>(n)), d, join);
    }
  }
  return last ? ieee_add_rn(p, d, c) : d;
}

std::uint64_t fused_kloop(const FusedDotParams& p, const std::uint32_t* a, const std::uint32_t* b, int K, int step, std::uint64_t c) {
  if (step < 1 || step > kMaxFused) return p.nan_code;
  std::uint32_t pa[kMaxFused], pb[kMaxFused];
  std::uint64_t d = c;
  for (int k0 = 0; k0 < K; k0 += step) {
    const int n = std::min(step, K - k0);
    const std::uint32_t *xa = a + k0, *xb = b + k0;
    if (n < step) {  // the tail, zero-padded as the kernels' shared-memory tiles are
      std::fill(pa, pa + step, 0u);
      std::fill(pb, pb + step, 0u);
      std::copy(xa, xa + n, pa);
      std::copy(xb, xb + n, pb);
      xa = pa, xb = pb;
    }
    d = fused_dot(p, xa, xb, step, d);
  }
  return d;
}

// ---- names ----

std::string_view to_string(AlignRounding r) {
  switch (r) {
    case AlignRounding::TowardZero: return "toward-zero";
    case AlignRounding::Down: return "down";
    case AlignRounding::NearestEven: return "nearest-even";
  }
  return "?";
}
std::string_view to_string(AlignReference r) {
  return r == AlignReference::ProductExponents ? "product-exponents" : "leading-bit";
}
std::string_view to_string(CJoin c) {
  switch (c) {
    case CJoin::InBlock: return "in-block";
    case CJoin::After: return "after";
    case CJoin::LastRn: return "last-rn";
  }
  return "?";
}
std::string_view to_string(Grouping g) {
  switch (g) {
    case Grouping::None: return "none";
    case Grouping::Interleaved: return "interleaved";
    case Grouping::Contiguous: return "contiguous";
  }
  return "?";
}
std::string_view to_string(OverflowTo o) { return o == OverflowTo::Inf ? "inf" : "max-finite"; }

namespace {
template <typename E, std::size_t N>
std::optional<E> parse_enum(std::string_view s, const std::array<E, N>& all) {
  for (E e : all)
    if (to_string(e) == s) return e;
  return std::nullopt;
}
}  // namespace

std::optional<AlignRounding> parse_align_rounding(std::string_view s) {
  return parse_enum(s, std::array{AlignRounding::TowardZero, AlignRounding::Down, AlignRounding::NearestEven});
}
std::optional<AlignReference> parse_align_reference(std::string_view s) {
  return parse_enum(s, std::array{AlignReference::ProductExponents, AlignReference::LeadingBit});
}
std::optional<CJoin> parse_c_join(std::string_view s) { return parse_enum(s, std::array{CJoin::InBlock, CJoin::After, CJoin::LastRn}); }
std::optional<Grouping> parse_grouping(std::string_view s) {
  return parse_enum(s, std::array{Grouping::None, Grouping::Interleaved, Grouping::Contiguous});
}
std::optional<OverflowTo> parse_overflow_to(std::string_view s) {
  return parse_enum(s, std::array{OverflowTo::Inf, OverflowTo::MaxFinite});
}

std::string describe(const FusedDotParams& p) {
  std::string s;
  s += p.product_frac_bits < 0 ? "products exact" : "products truncated to " + std::to_string(p.product_frac_bits) + " fraction bits";
  s += p.input_subnormals ? "; subnormal inputs kept" : "; subnormal inputs read as zero";
  if (p.a == tf32) s += std::string("; fp32 containers read as tf32 ") + std::string(to_string(p.operand_read));
  s += "; blocks of " + std::to_string(p.fused_length) + " products";
  if (p.interleave_run > 0)
    s += " whose inputs are interleaved in runs of " + std::to_string(p.interleave_run) + " (block j takes k with (k / " +
         std::to_string(p.interleave_run) + ") mod nblocks == j)";
  if (p.grouping != Grouping::None)
    s += " in " + std::to_string(p.groups) + " " + std::string(to_string(p.grouping)) + " alignment groups";
  switch (p.c_join) {
    case CJoin::InBlock: s += " with C in the block"; break;
    case CJoin::After: s += ", C added after the block sum"; break;
    case CJoin::LastRn:
      s += ", the first block starting from +0 and each next block from the previous one's result; C added last by an IEEE addition in " +
           std::string(p.acc.tag) + " rounded to nearest even";
      break;
  }
  s += "; aligned to the largest ";
  s += p.reference == AlignReference::ProductExponents ? "product exponent e_a + e_b (unnormalised)" : "leading-bit exponent";
  if (p.align_floor != kNoAlignFloor) s += " (at least 2^" + std::to_string(p.align_floor) + ")";
  s += " keeping " + std::to_string(p.align_bits) + " fraction bits, the rest discarded " + std::string(to_string(p.align_rounding));
  s += "; the exact block sum rounded " + std::string(to_string(p.block_rounding)) + " to " + std::to_string(p.acc_bits) +
       " fraction bits of " + std::string(p.acc.tag);
  s += p.output_subnormals ? ", subnormal results kept" : ", subnormal C and results flushed to zero";
  s += "; overflow to " + std::string(to_string(p.overflow));
  s += p.wide_block ? ", no overflow inside the block" : ", products beyond the accumulator's range are Inf";
  return s;
}

}  // namespace fpcert
