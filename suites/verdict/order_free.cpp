// suites/verdict/order_free.cpp — elements whose every summation order gives one value (docs/bound_model.md,
// "Order-free elements").
#include "suites/verdict/order_free.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "base/parallel.hpp"
#include "oracle/refvalue.hpp"
#include "oracle/convert/representable.hpp"
#include "oracle/round.hpp"

namespace fpcert {
namespace {

/// A finite nonzero double's floor(log2 |x|) and the exponent of its lowest set bit (integer operations).
struct Bits {
  int top = 0, low = 0;
};
Bits bits_of(double x) {
  const std::uint64_t u = std::bit_cast<std::uint64_t>(x) & 0x7FFFFFFFFFFFFFFFULL;
  const int be = static_cast<int>(u >> 52);
  const std::uint64_t frac = u & 0x000FFFFFFFFFFFFFULL;
  const std::uint64_t sig = be ? frac | (std::uint64_t{1} << 52) : frac;
  return {be ? be - 1023 : 63 - std::countl_zero(frac) - 1074, (be ? be - 1075 : -1074) + std::countr_zero(sig)};
}

bool same_values(const double* x, const double* y, std::size_t n) { return std::memcmp(x, y, n * sizeof(double)) == 0; }

/// A split kernel's operand that every slicing keeps whole: zero, or at most 8 significant bits in the normal
/// range of bf16, fp16 and tf32 alike (2^-14 .. 2^15): its first slice, in any of those formats, is the value
/// (nearest or toward zero), the others are zero and add zero products.
bool one_slice(double v) {
  if (v == 0) return true;
  if (!std::isfinite(v)) return false;
  const Bits b = bits_of(v);
  return b.top >= -14 && b.top <= 15 && b.top - b.low < 8;
}

}  // namespace

std::string order_free_unavailable(const KernelTraits& t) {
  if (t.block.active()) return "block-scaled operands (their scales apply inside the kernel's order)";
  return {};
}

OrderFreeElements order_free_elements(const KernelTraits& t, std::int64_t m, std::int64_t n, std::int64_t k, const std::vector<double>& a_in,
                                      const std::vector<double>& b_in, const std::vector<double>& a_op, const std::vector<double>& b_op) {
  OrderFreeElements r;
  const auto mn = static_cast<std::size_t>(m * n);
  r.kind.assign(mn, OrderFreeKind::None);
  r.expect.assign(mn, 0);
  if (!order_free_unavailable(t).empty() || m <= 0 || n <= 0 || k <= 0) return r;
  const Format& acc = *t.acc;
  const Format& of = *t.out;
  const Format* pf = t.exact_products ? nullptr : t.product_format;
  const bool split = t.operand_u > 0;  // operands sliced (operand_u): only values one slice holds whole
  // On tensor cores (a behaviour card installed for the order), a block keeps align_bits fraction bits below its
  // largest term and rounds into acc_bits: sums exact in the narrowest of these are exact there too.
  const auto& card = t.sum_order.block_model.params;
  const int p_eff = card ? std::min({acc.precision(), card->align_bits, card->acc_bits + 1}) : acc.precision();
  const bool one_rounding = t.acc_rounding == Rounding::NearestEven && t.promote_every == 0 &&
                            (!card || t.sum_order.block_model.block_rounding == Rounding::NearestEven);
  // Rows of A and columns of B that reach the multiplier unchanged, with finite values only.
  std::vector<std::uint8_t> row_ok(static_cast<std::size_t>(m)), col_ok(static_cast<std::size_t>(n), 1);
  for (std::int64_t i = 0; i < m; ++i) {
    const std::size_t o = static_cast<std::size_t>(i * k);
    bool ok = same_values(&a_in[o], &a_op[o], static_cast<std::size_t>(k));
    for (std::int64_t q = 0; ok && q < k; ++q) {
      const double v = a_in[o + static_cast<std::size_t>(q)];
      ok = std::isfinite(v) && (!split || one_slice(v));
    }
    row_ok[static_cast<std::size_t>(i)] = ok;
  }
  for (std::int64_t q = 0; q < k; ++q)
    for (std::int64_t j = 0; j < n; ++j) {
      const std::size_t x = static_cast<std::size_t>(q * n + j);
      if (std::bit_cast<std::uint64_t>(b_in[x]) != std::bit_cast<std::uint64_t>(b_op[x]) || !std::isfinite(b_in[x]) || (split && !one_slice(b_in[x])))
        col_ok[static_cast<std::size_t>(j)] = 0;
    }
  const Rounder rn = Rounder::nearest(acc);
  std::vector<std::int64_t> counts(3 * static_cast<std::size_t>(m), 0);
  parallel_for(static_cast<std::uint64_t>(m), 1, [&](std::uint64_t lo, std::uint64_t hi, unsigned) {
    for (std::uint64_t ii = lo; ii < hi; ++ii) {
      const auto i = static_cast<std::int64_t>(ii);
      if (!row_ok[ii]) continue;
      const double* a = &a_in[static_cast<std::size_t>(i * k)];
      for (std::int64_t j = 0; j < n; ++j) {
        if (!col_ok[static_cast<std::size_t>(j)]) continue;
        double sum_abs = 0, sum = 0, p1 = 0, p2 = 0;
        int low = 0, nonzero = 0;
        bool ok = true;
        for (std::int64_t q = 0; q < k && ok; ++q) {
          const double bv = b_in[static_cast<std::size_t>(q * n + j)];
          if (a[q] == 0 || bv == 0) continue;
          const double p = a[q] * bv;
          if (!std::isfinite(p) || p == 0 || std::fma(a[q], bv, -p) != 0) {  // the product is not exact in binary64
            ok = false;
            break;
          }
          const Bits b = bits_of(p);
          ok = exactly_representable(acc, p) && (!pf || exactly_representable(*pf, p));
          if (card) {  // what the card's block does to its terms: flushed inputs, truncated products, a window floor
            ok = ok && (card->input_subnormals || (std::fabs(a[q]) >= card->a.min_normal() && std::fabs(bv) >= card->b.min_normal()));
            ok = ok && (card->product_frac_bits < 0 || b.top - b.low <= card->product_frac_bits);
            ok = ok && b.low >= card->align_floor - card->align_bits;
          }
          low = nonzero == 0 ? b.low : std::min(low, b.low);
          (nonzero == 0 ? p1 : p2) = p;
          ++nonzero;
          sum_abs += std::fabs(p);
          sum += p;
          // Past two products only an exact sum can qualify, and its bound 2^(p_eff + low) only shrinks as low does:
          // once reached, the element is not order-free (dense data leaves here, not after all K products).
          if (nonzero > 2 && !(sum_abs < std::ldexp(1.0, p_eff + low))) ok = false;
        }
        if (!ok) continue;
        const std::size_t x = static_cast<std::size_t>(i * n + j);
        // Every partial sum is a multiple of 2^low below sum_abs: exact in acc when sum_abs < 2^(p_acc + low) (sum_abs
        // and sum are then exact in binary64 too). The smallest nonzero partial sum, 2^low, must be a value of acc.
        // A card that flushes subnormal results: no partial sum may be subnormal (every one is a multiple of 2^low).
        const bool floor_ok = !card || card->output_subnormals || std::ldexp(1.0, low) >= acc.min_normal();
        if (nonzero == 0 || (floor_ok && sum_abs < std::ldexp(1.0, p_eff + low) && exactly_representable(acc, std::ldexp(1.0, low)))) {
          if (sum == 0) {
            r.kind[x] = OrderFreeKind::ExactZero;
            ++counts[3 * ii + 1];
            continue;
          }
          if (!exactly_representable(of, sum)) continue;
          r.kind[x] = OrderFreeKind::ExactSum;
          r.expect[x] = round_double(of, sum, Rounder::nearest(of)).code;
          ++counts[3 * ii];
          continue;
        }
        if (!one_rounding || nonzero != 2 || std::fabs(p1) < acc.min_normal() || std::fabs(p2) < acc.min_normal()) continue;
        if (card && !(sum_abs < std::ldexp(1.0, card->align_bits + low))) continue;  // the block's alignment would cut p2
        const Rounded s = round_ref(acc, ref_from_two_sum(p1, p2), rn);
        if (s.flags & (kOverflow | kUnderflow)) continue;
        const double v = to_double(acc, s.code);
        if (v == 0 || std::fabs(v) < acc.min_normal() || !exactly_representable(of, v)) continue;
        r.kind[x] = OrderFreeKind::OneRounding;
        r.expect[x] = round_double(of, v, Rounder::nearest(of)).code;
        ++counts[3 * ii + 2];
      }
    }
  });
  for (std::size_t i = 0; i < static_cast<std::size_t>(m); ++i) {
    r.exact += counts[3 * i];
    r.zero += counts[3 * i + 1];
    r.one_rounding += counts[3 * i + 2];
  }
  return r;
}

}  // namespace fpcert
