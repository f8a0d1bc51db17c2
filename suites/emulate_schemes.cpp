// suites/emulate_schemes.cpp — split products and power-of-two scaling onto fp16, emulated
// (suites/emulate_schemes.hpp; the semantics are kernels/order.hpp's and docs/emulation.md's).
#include "suites/emulate_schemes.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

#include "base/parallel.hpp"
#include "kernels/emu/emu_arith.cuh"
#include "oracle/round.hpp"
#include "suites/emulate_round.hpp"

namespace fpcert::emulate_detail {

// The split-products order (suites/emulate_schemes.hpp).
std::vector<double> split_products(const SplitScheme& sc, std::int64_t m, std::int64_t n, std::int64_t k, const std::vector<double>& a,
                                   const std::vector<double>& b, bool generic) {
  // split_value rounds each remainder into the slice format (saturating a finite overflow) and subtracts it
  // (exact in fp32). Where no slice overflows that rounding is f32_grid_round's, for bf16 and tf32 slices to
  // nearest even or toward zero; an overflow, Inf or NaN takes split_value itself.
  const bool bits = !generic && f32_grid(*sc.slice) && (sc.rounding == Rounding::NearestEven || sc.rounding == Rounding::TowardZero);
  const int drop = 23 - sc.slice->frac_bits;
  auto split = [&](float x, float* sl) {
    float rest = x;
    for (int l = 0; bits && std::isfinite(x) && l < sc.slices; ++l) {
      sl[l] = f32_grid_round(rest, drop, sc.rounding == Rounding::NearestEven);
      if (std::isinf(sl[l])) break;
      rest = rest - sl[l];
      if (l == sc.slices - 1) return;
    }
    split_value(sc, x, sl);
  };
  auto slices = [&](const std::vector<double>& v) {
    std::vector<std::vector<float>> s(static_cast<std::size_t>(sc.slices), std::vector<float>(v.size()));
    float sl[3];
    for (std::size_t x = 0; x < v.size(); ++x) {
      split(static_cast<float>(v[x]), sl);
      for (int q = 0; q < sc.slices; ++q) s[static_cast<std::size_t>(q)][x] = sl[q];
    }
    return s;
  };
  const auto as = slices(a), bs = slices(b);
  std::vector<double> c(static_cast<std::size_t>(m * n));
  parallel_for(static_cast<std::uint64_t>(m), 1, [&](std::uint64_t i0, std::uint64_t i1, unsigned) {
    std::vector<float> merged(static_cast<std::size_t>(n)), s(static_cast<std::size_t>(n));
    for (std::uint64_t i = i0; i < i1; ++i) {
      bool first = true;
      for (const auto& [ia, ib] : sc.terms) {
        const float* pa = as[static_cast<std::size_t>(ia)].data() + static_cast<std::int64_t>(i) * k;
        std::fill(s.begin(), s.end(), 0.0f);
        for (std::int64_t q = 0; q < k; ++q) {
          const float* pb = bs[static_cast<std::size_t>(ib)].data() + q * n;
          for (std::int64_t j = 0; j < n; ++j) s[static_cast<std::size_t>(j)] = std::fma(pa[q], pb[j], s[static_cast<std::size_t>(j)]);
        }
        for (std::int64_t j = 0; j < n; ++j)
          merged[static_cast<std::size_t>(j)] = first ? s[static_cast<std::size_t>(j)] : merged[static_cast<std::size_t>(j)] + s[static_cast<std::size_t>(j)];
        first = false;
      }
      for (std::int64_t j = 0; j < n; ++j) c[static_cast<std::size_t>(static_cast<std::int64_t>(i) * n + j)] = merged[static_cast<std::size_t>(j)];
    }
  });
  return c;
}

// The pow2_scaled order (suites/emulate_schemes.hpp).
std::vector<double> pow2_scaled(const Bf16OnF16Policy& pol, std::int64_t m, std::int64_t n, std::int64_t k, const std::vector<double>& a,
                                const std::vector<double>& b, bool generic) {
  const Rounder rn16 = Rounder::nearest(bf16), rnh = Rounder::nearest(f16);
  // Whether v is a bf16 value (an fp32 value whose low 16 bits are zero, Inf included; not NaN): then its bf16
  // code is the top half of its fp32 pattern, and it has at most 8 significant bits.
  auto bf16_exact = [](double v) {
    const auto f = static_cast<float>(v);
    return static_cast<double>(f) == v && (std::bit_cast<std::uint32_t>(f) & 0xFFFFu) == 0;
  };
  // The operands' preparation is elementwise: on every thread, as the row loop.
  constexpr std::uint64_t kGrain = std::uint64_t{1} << 14;
  auto codes = [&](const std::vector<double>& v) {
    std::vector<std::uint16_t> c(v.size());
    parallel_for(v.size(), kGrain, [&](std::uint64_t x0, std::uint64_t x1, unsigned) {
      for (std::uint64_t x = x0; x < x1; ++x)
        c[x] = !generic && bf16_exact(v[x]) ? static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(static_cast<float>(v[x])) >> 16)
                                            : static_cast<std::uint16_t>(round_double(bf16, v[x], rn16).code);
    });
    return c;
  };
  const std::vector<std::uint16_t> ac = codes(a), bc = codes(b);
  const OperandPlan pa = plan_operand(pol, ac.data(), m, k, k, 1), pb = plan_operand(pol, bc.data(), n, k, 1, n);
  const std::int64_t segs = std::max(pa.segs, pb.segs), seg_len = std::min(pa.seg_len, pb.seg_len);
  auto seg_of = [&](const OperandPlan& p, std::int64_t r) { return p.segs > 1 ? r / p.seg_len : 0; };
  // RN_f16(x) for x = v 2^s: a bf16 value v (8 significant bits) scaled by a power of two is its own rounding
  // where fp16 is normal (|x| in [2^-14, 65504]) and at zero, so the cast to float is exact there; elsewhere
  // (fp16 subnormals, overflow, Inf, NaN, a v that is not bf16's) the oracle rounds.
  auto to_f16 = [&](double v, int sc) {
    const double x = std::ldexp(v, sc);
    const double ax = std::fabs(x);
    if (!generic && (ax == 0 || (ax >= 0x1p-14 && ax <= 65504)) && bf16_exact(v)) return static_cast<float>(x);
    return static_cast<float>(to_double(f16, round_double(f16, x, rnh).code));
  };
  // The fp16 operand (as float; 0 for an outlier) and the outlier marks, A row-major m x k, B row-major k x n.
  auto convert = [&](const std::vector<double>& v, const std::vector<std::uint16_t>& c, const OperandPlan& p, bool is_a,
                     std::vector<float>& h, std::vector<std::uint8_t>& out, std::vector<std::uint8_t>& line_has) {
    h.assign(v.size(), 0.0f);
    out.assign(v.size(), 0);
    line_has.assign(static_cast<std::size_t>(p.lines), 0);
    parallel_for(v.size(), kGrain, [&](std::uint64_t x0, std::uint64_t x1, unsigned) {
      for (std::uint64_t x = x0; x < x1; ++x) {
        const std::int64_t line = is_a ? static_cast<std::int64_t>(x) / k : static_cast<std::int64_t>(x) % n;
        const std::int64_t r = is_a ? static_cast<std::int64_t>(x) % k : static_cast<std::int64_t>(x) / n;
        const std::int64_t g = seg_of(p, r);
        const int sc = p.scale_at(line, g), e = emu::bf16_binade(c[x]);
        if (e != emu::kNoBinade && p.outliers_at(line, g) && !emu::in_window(e, emu::kF16High - sc)) {
          out[x] = 1;
          continue;
        }
        h[x] = to_f16(v[x], sc);
      }
    });
    // Which lines hold an outlier: a pass of its own (threads would share a line's flag above).
    if (is_a) {  // A is m x k row-major: line = row
      for (std::int64_t i = 0; i < m; ++i)
        line_has[static_cast<std::size_t>(i)] = std::any_of(out.begin() + i * k, out.begin() + (i + 1) * k, [](std::uint8_t o) { return o != 0; });
    } else {  // B is k x n row-major: line = column
      for (std::int64_t r = 0; r < k; ++r)
        for (std::int64_t j = 0; j < n; ++j) line_has[static_cast<std::size_t>(j)] |= out[static_cast<std::size_t>(r * n + j)];
    }
  };
  std::vector<float> ah, bh;
  std::vector<std::uint8_t> aout, bout, arow, bcol;
  convert(a, ac, pa, true, ah, aout, arow);
  convert(b, bc, pb, false, bh, bout, bcol);
  std::vector<float> af(a.begin(), a.end()), bf(b.begin(), b.end());  // bf16 values: exact in fp32
  // The rows of B holding outliers, ascending (every row on the generic path): the outlier path visits these only.
  std::vector<std::int64_t> brows;
  for (std::int64_t r = 0; r < k; ++r)
    if (generic || std::any_of(bout.begin() + r * n, bout.begin() + (r + 1) * n, [](std::uint8_t o) { return o != 0; })) brows.push_back(r);
  // RN_f32(x 2^e): exact in double (|x| >= 2^-149, |e| < 300), one rounding by the conversion. The fast path
  // multiplies by 2^-s_A and then by 2^-s_B, both exact in double for the same reason (scales within
  // [-112, 148]: emu::scale_for_top), the powers of B's scales computed once per column and segment.
  auto rescale = [](float x, int e) { return static_cast<float>(std::ldexp(static_cast<double>(x), e)); };
  std::vector<double> bpow(static_cast<std::size_t>(segs * n));
  for (std::int64_t g = 0; g < segs; ++g)
    for (std::int64_t j = 0; j < n; ++j) bpow[static_cast<std::size_t>(g * n + j)] = std::ldexp(1.0, -pb.scale_at(j, g));
  const std::int64_t tn = (n + kModeTile - 1) / kModeTile;
  std::vector<double> c(static_cast<std::size_t>(m * n));
  parallel_for(static_cast<std::uint64_t>(m), 1, [&](std::uint64_t i0, std::uint64_t i1, unsigned) {
    std::vector<float> acc(static_cast<std::size_t>(n)), part(static_cast<std::size_t>(n)), corr(static_cast<std::size_t>(n));
    for (std::uint64_t iu = i0; iu < i1; ++iu) {
      const auto i = static_cast<std::int64_t>(iu);
      const float* ai = ah.data() + i * k;
      for (std::int64_t bn = 0; bn < tn; ++bn) {
        const std::int64_t j0 = bn * kModeTile, j1 = std::min(n, j0 + kModeTile);
        const bool row_mode = tile_mode(pa, pb, i / kModeTile, bn) == kModeRow;
        const std::int64_t nseg = row_mode ? 1 : segs, len = row_mode ? std::max<std::int64_t>(k, 1) : seg_len;
        float* accp = acc.data();
        float* partp = part.data();
        std::fill(accp + j0, accp + j1, 0.0f);
        for (std::int64_t g = 0; g < nseg; ++g) {
          std::fill(partp + j0, partp + j1, 0.0f);
          for (std::int64_t r = g * len; r < std::min(k, (g + 1) * len); ++r) {
            const float x = ai[r];
            const float* br = bh.data() + r * n;
            for (std::int64_t j = j0; j < j1; ++j) partp[j] = std::fma(x, br[j], partp[j]);
          }
          if (generic) {
            for (std::int64_t j = j0; j < j1; ++j) {
              const float sc = rescale(partp[j], -(pa.scale_at(i, g) + pb.scale_at(j, g)));
              accp[j] = row_mode ? sc : accp[j] + sc;
            }
            continue;
          }
          const double apow = std::ldexp(1.0, -pa.scale_at(i, g));
          const double* bp = bpow.data() + g * n;
          if (row_mode)
            for (std::int64_t j = j0; j < j1; ++j) accp[j] = static_cast<float>(static_cast<double>(partp[j]) * apow * bp[j]);
          else
            for (std::int64_t j = j0; j < j1; ++j) accp[j] += static_cast<float>(static_cast<double>(partp[j]) * apow * bp[j]);
        }
      }
      // The outliers' fp32 path.
      std::fill(corr.begin(), corr.end(), 0.0f);
      const bool row_has = arow[static_cast<std::size_t>(i)] != 0;
      for (std::int64_t r = 0; r < k && row_has; ++r)
        if (aout[static_cast<std::size_t>(i * k + r)])
          for (std::int64_t j = 0; j < n; ++j) corr[static_cast<std::size_t>(j)] = std::fma(af[static_cast<std::size_t>(i * k + r)], bf[static_cast<std::size_t>(r * n + j)], corr[static_cast<std::size_t>(j)]);
      for (const std::int64_t r : brows) {
        if (aout[static_cast<std::size_t>(i * k + r)]) continue;
        const float x = af[static_cast<std::size_t>(i * k + r)];
        for (std::int64_t j = 0; j < n; ++j)
          if (bout[static_cast<std::size_t>(r * n + j)]) corr[static_cast<std::size_t>(j)] = std::fma(x, bf[static_cast<std::size_t>(r * n + j)], corr[static_cast<std::size_t>(j)]);
      }
      for (std::int64_t j = 0; j < n; ++j) {
        float v = acc[static_cast<std::size_t>(j)];
        if (row_has || bcol[static_cast<std::size_t>(j)]) v = v + corr[static_cast<std::size_t>(j)];
        c[static_cast<std::size_t>(i * n + j)] = v;
      }
    }
  });
  return c;
}

}  // namespace fpcert::emulate_detail
