// kernels/gemm/cpu/ozaki2.cpp — fpcert's Ozaki-II FP64 emulation on the host: the plan, the exact INT8 residue GEMMs
// (int32 per K block, as the tensor cores compute them), the reconstruction of kernels/gemm/cpu/ozaki2_arith.hpp, the
// deterministic bound, and the models (docs/fp64.md, "The built-in Ozaki-II emulation").
#include "kernels/gemm/cpu/ozaki2.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "base/error.hpp"
#include "base/huge_pages.hpp"
#include "base/parallel.hpp"
#include "kernels/gemm/cpu/model.hpp"
#include "oracle/gemm_engine.hpp"

namespace fpcert {
namespace ozaki2 {

namespace {

/// x^-1 mod m (gcd(x, m) = 1), by the extended Euclid algorithm.
int inverse_mod(int x, int m) {
  long long r0 = m, r1 = mod_positive(x, m), t0 = 0, t1 = 1;
  while (r1 != 0) {
    const long long q = r0 / r1;
    std::tie(r0, r1) = std::make_pair(r1, r0 - q * r1);
    std::tie(t0, t1) = std::make_pair(t1, t0 - q * t1);
  }
  if (r0 != 1) throw InputError(fmt::format("ozaki2: {} has no inverse modulo {} (moduli not coprime)", x, m));
  return mod_positive(t0, m);
}

}  // namespace

Plan make_plan(int n, std::int64_t kblock) {
  if (n < kMinModuli || n > kMaxModuli)
    throw InputError(fmt::format("ozaki2: the number of moduli must be {}..{}, got {}", kMinModuli, kMaxModuli, n));
  if (kblock < 1 || kblock > kMaxKBlock)
    throw InputError(fmt::format("ozaki2: the K block must be 1..{} (int32 headroom: K_b 128^2 < 2^31), got {}", kMaxKBlock, kblock));
  Plan pl;
  pl.n = n;
  pl.kblock = kblock;
  for (int l = 0; l < n; ++l) {
    pl.m[l] = kModuliTable[l];
    pl.magic[l] = ((std::uint64_t{1} << 32) + static_cast<std::uint64_t>(pl.m[l]) - 1) / static_cast<std::uint64_t>(pl.m[l]);
  }
  for (int l = 0; l < n; ++l)
    for (int q = 0; q < l; ++q) pl.inv[q][l] = inverse_mod(pl.m[q], pl.m[l]);
  pl.p[0] = 1;
  for (int l = 0; l < n; ++l) {
    std::uint64_t carry = 0;
    for (int w = 0; w < kLimbs; ++w) {
      const std::uint64_t x = static_cast<std::uint64_t>(pl.p[w]) * static_cast<std::uint64_t>(pl.m[l]) + carry;
      pl.p[w] = static_cast<std::uint32_t>(x);
      carry = x >> 32;
    }
  }
  for (int w = kLimbs - 1; w >= 0; --w)
    if (pl.p[w]) {
      pl.log2p = 32 * w + static_cast<int>(std::bit_width(pl.p[w])) - 1;
      break;
    }
  return pl;
}

Scaling choose_scaling(const Plan& pl, const double* a, const double* b, std::int64_t m, std::int64_t n, std::int64_t k) {
  Scaling sc;
  sc.alpha = operand_bits(pl, k);
  sc.s.resize(static_cast<std::size_t>(m));
  sc.t.resize(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < m; ++i) {
    double mx = 0;
    for (std::int64_t q = 0; q < k; ++q) mx = line_max(mx, a[i * k + q]);
    sc.s[static_cast<std::size_t>(i)] = scale_exponent(mx, sc.alpha);
  }
  std::vector<double> mx(static_cast<std::size_t>(n), 0.0);
  for (std::int64_t q = 0; q < k; ++q)
    for (std::int64_t j = 0; j < n; ++j) mx[static_cast<std::size_t>(j)] = line_max(mx[static_cast<std::size_t>(j)], b[q * n + j]);
  for (std::int64_t j = 0; j < n; ++j) sc.t[static_cast<std::size_t>(j)] = scale_exponent(mx[static_cast<std::size_t>(j)], sc.alpha);
  return sc;
}

HostPlan make_host_plan(const Plan& pl) {
  HostPlan h;
  h.pl = pl;
  for (int l = 0; l < pl.n; ++l) {
    const std::uint32_t m = static_cast<std::uint32_t>(pl.m[l]);
    std::uint32_t x = 1 % m;
    for (int e = 0; e < kPow2Table + 40; ++e, x = 2 * x % m) h.pow2[l][e] = x;
    h.fastmod[l] = ~std::uint64_t{0} / m + 1;
    // P / m_l (the other moduli's product) in limbs and modulo m_l, then w_l = (P / m_l) ((P / m_l)^-1 mod m_l).
    std::uint32_t q[kLimbs] = {1};
    std::uint32_t q_mod = 1 % m;
    for (int o = 0; o < pl.n; ++o) {
      if (o == l) continue;
      std::uint64_t carry = 0;
      for (int w = 0; w < kLimbs; ++w) {
        const std::uint64_t y = static_cast<std::uint64_t>(q[w]) * static_cast<std::uint64_t>(pl.m[o]) + carry;
        q[w] = static_cast<std::uint32_t>(y);
        carry = y >> 32;
      }
      q_mod = q_mod * static_cast<std::uint32_t>(pl.m[o]) % m;
    }
    const auto inv = static_cast<std::uint64_t>(inverse_mod(static_cast<int>(q_mod), static_cast<int>(m)));
    std::uint64_t carry = 0;
    for (int w = 0; w < kLimbs; ++w) {
      const std::uint64_t y = static_cast<std::uint64_t>(q[w]) * inv + carry;
      h.w[l][w] = static_cast<std::uint32_t>(y);
      carry = y >> 32;
    }
  }
  for (int w = kLimbs - 1; w >= 0; --w) h.p_approx = h.p_approx * 0x1p32 + pl.p[w];
  return h;
}

void host_residues(const HostPlan& h, double v, std::int8_t* r) {
  // v = M 2^e, M < 2^53 an integer: from the bits (v is integer-valued: the bits below 2^0 are zero).
  const auto bits = std::bit_cast<std::uint64_t>(v);
  const int ex = static_cast<int>((bits >> 52) & 0x7ff);
  std::uint64_t M = 0;
  int e = 0;
  if (ex != 0) {
    M = (bits & ((std::uint64_t{1} << 52) - 1)) | (std::uint64_t{1} << 52);
    const int E = ex - 1075;
    if (E >= 0) e = E;
    else if (E > -53) M >>= -E;
    else M = 0;
  }
  if (e >= kPow2Table || ex == 0x7ff) throw std::logic_error(fmt::format("ozaki2: no host residue for {}", v));
  const bool neg = (bits >> 63) != 0;
  // M 2^e = m0 2^e + m1 2^(20+e) + m2 2^(40+e) with 20-bit pieces: the sum of the pieces times those powers' residues
  // is below 2^20 256 2 + 2^13 256 < 2^30, reduced by Lemire, Kaser and Kurz's direct remainder ("Faster remainder by
  // direct computation", 2019: exact for every 32-bit x and divisor).
  const auto m0 = static_cast<std::uint32_t>(M & 0xFFFFF), m1 = static_cast<std::uint32_t>((M >> 20) & 0xFFFFF),
             m2 = static_cast<std::uint32_t>(M >> 40);
  const Plan& pl = h.pl;
  for (int l = 0; l < pl.n; ++l) {
    const int m = pl.m[l];
    const std::uint32_t* p2 = h.pow2[l] + e;
    const auto x = static_cast<std::uint64_t>(m0) * p2[0] + static_cast<std::uint64_t>(m1) * p2[20] + static_cast<std::uint64_t>(m2) * p2[40];
    const std::uint64_t low = h.fastmod[l] * x;
    int t = static_cast<int>((static_cast<unsigned __int128>(low) * static_cast<unsigned>(m)) >> 64);
    if (neg && t) t = m - t;
    r[l] = static_cast<std::int8_t>(t >= (m + 1) / 2 ? t - m : t);
  }
}

void host_reconstruct(const HostPlan& h, const int* r, std::uint32_t* mag, bool& neg) {
  const Plan& pl = h.pl;
  // S = sum_l r_l w_l < n 2^8 P < 2^173: each limb's column sums below 20 2^40 in 64 bits, the carries after.
  std::uint64_t col[kLimbs] = {};
  for (int l = 0; l < pl.n; ++l) {
    const auto rl = static_cast<std::uint64_t>(r[l]);
    for (int w = 0; w < kLimbs; ++w) col[w] += rl * h.w[l][w];
  }
  std::uint32_t* x = mag;  // S, then X, in the caller's limbs
  std::uint64_t carry = 0;
  for (int w = 0; w < kLimbs; ++w) {
    const std::uint64_t y = col[w] + carry;
    x[w] = static_cast<std::uint32_t>(y);
    carry = y >> 32;
  }
  // X = S - q P, q = floor(S / P) from doubles (off by at most one: S / P < 2^13, both known to 2^-52), then corrected.
  double s_approx = 0;
  for (int w = kLimbs - 1; w >= 0; --w) s_approx = s_approx * 0x1p32 + x[w];
  const auto q = static_cast<std::int64_t>(s_approx / h.p_approx);
  const auto sub_p = [&](std::int64_t times) {  // x -= times P; returns the carry out of the top limb (-1, 0 or 1)
    std::int64_t c = 0;
    for (int w = 0; w < kLimbs; ++w) {
      const std::int64_t y = static_cast<std::int64_t>(x[w]) - times * static_cast<std::int64_t>(pl.p[w]) + c;
      x[w] = static_cast<std::uint32_t>(static_cast<std::uint64_t>(y));
      c = (y - static_cast<std::int64_t>(x[w])) / (std::int64_t{1} << 32);
    }
    return c;
  };
  const auto at_least_p = [&] {
    for (int w = kLimbs - 1; w >= 0; --w)
      if (x[w] != pl.p[w]) return x[w] > pl.p[w];
    return true;
  };
  std::int64_t top = sub_p(q);
  while (top < 0) top += sub_p(-1);  // q was one too large: add P back (the carry out ends the borrow)
  while (at_least_p()) sub_p(1);
  symmetric_range(pl, mag, neg);
}

std::vector<double> gemm(const Plan& pl, const double* a, const double* b, std::int64_t m, std::int64_t n, std::int64_t k, Scaling* used,
                         Route route, ExactGemmEngine* engine) {
  const Scaling sc = choose_scaling(pl, a, b, m, n, k);
  const HostPlan hp = make_host_plan(pl);
  const auto mk = static_cast<std::size_t>(m * k), nk = static_cast<std::size_t>(n * k), mn = static_cast<std::size_t>(m * n);
  const std::size_t vals = mk + nk;
  // The scaled integers (step 1) and their residues for every modulus (step 2): res8[l vals + x], x < mk for A
  // (row-major), else B transposed so that each column is contiguous along K.
  // Pooled buffers (base/huge_pages.hpp): a fresh page's first touch costs more than the work on it on these hosts.
  HugeBuffer<std::int8_t> res8;
  res8.resize(static_cast<std::size_t>(pl.n) * vals);
  parallel_for(static_cast<std::uint64_t>(m + n), 1, [&](std::uint64_t l0, std::uint64_t l1, unsigned) {
    std::int8_t r[kMaxModuli];
    for (std::uint64_t line = l0; line < l1; ++line) {
      const bool row = line < static_cast<std::uint64_t>(m);
      const auto i = static_cast<std::int64_t>(row ? line : line - static_cast<std::uint64_t>(m));
      const int sc_line = row ? sc.s[static_cast<std::size_t>(i)] : sc.t[static_cast<std::size_t>(i)];
      const std::size_t x0 = row ? static_cast<std::size_t>(i * k) : mk + static_cast<std::size_t>(i * k);
      for (std::int64_t q = 0; q < k; ++q) {
        const double v = scaled_integer(row ? a[i * k + q] : b[q * n + i], sc_line);
        if (route == Route::Host) host_residues(hp, v, r);
        else
          for (int l = 0; l < pl.n; ++l) r[l] = static_cast<std::int8_t>(symmetric_residue(v, pl.m[l]));
        for (int l = 0; l < pl.n; ++l) res8[static_cast<std::size_t>(l) * vals + x0 + static_cast<std::size_t>(q)] = r[l];
      }
    }
  });
  // The N INT8 GEMMs (step 3): res[l mn + i n + j] in [0, m_l).
  HugeBuffer<std::uint8_t> res;
  res.resize(static_cast<std::size_t>(pl.n) * mn);
  ResidueGemms job;
  job.count = pl.n;
  job.moduli = pl.m;
  job.m = m, job.n = n, job.k = k, job.kblock = pl.kblock;
  job.ops = res8.data();
  // Residue (i, j) of modulus l by the host's loop: int32 sums over K blocks, each reduced into the running residue.
  const auto host_residue = [&](int l, std::int64_t i, std::int64_t j) {
    const int ml = pl.m[l];
    const std::int8_t* ra = res8.data() + static_cast<std::size_t>(l) * vals + i * k;
    const std::int8_t* rb = res8.data() + static_cast<std::size_t>(l) * vals + mk + j * k;
    int acc = 0;  // mod m_l
    for (std::int64_t k0 = 0; k0 < k; k0 += pl.kblock) {
      const std::int64_t k1 = std::min(k, k0 + pl.kblock);
      std::int32_t blk = 0;  // exact: at most kblock 2^14 < 2^31 in magnitude
      for (std::int64_t q = k0; q < k1; ++q) blk += static_cast<std::int32_t>(ra[q]) * static_cast<std::int32_t>(rb[q]);
      acc = mod_positive(static_cast<long long>(acc) + blk, ml);
    }
    return static_cast<std::uint8_t>(acc);
  };
  const bool on_engine = engine && engine->residue_gemms(job, res.data());
  if (on_engine)  // the host's loop stays the definition: a sample of the engine's residues checked against it
    for (const std::int64_t x : sample_elements(m, n, k))
      for (int l = 0; l < pl.n; ++l) {
        const std::uint8_t got = res[static_cast<std::size_t>(l) * mn + static_cast<std::size_t>(x)], want = host_residue(l, x / n, x % n);
        if (got != want)
          throw DeviceError(fmt::format("ozaki2: the residue GEMM of engine {} differs from the host's at element ({}, {}) modulo {}: {} "
                                        "instead of {}", engine->name(), x / n, x % n, pl.m[l], got, want));
      }
  for (int l = 0; l < pl.n && !on_engine; ++l) {
    std::uint8_t* rl = res.data() + static_cast<std::size_t>(l) * mn;
    parallel_for(static_cast<std::uint64_t>(m), 1, [&](std::uint64_t i0, std::uint64_t i1, unsigned) {
      for (auto i = static_cast<std::int64_t>(i0); i < static_cast<std::int64_t>(i1); ++i)
        for (std::int64_t j = 0; j < n; ++j) rl[static_cast<std::size_t>(i * n + j)] = host_residue(l, i, j);
    });
  }
  // Reconstruction, the scaling undone, one rounding (steps 4 and 5).
  std::vector<double> c(mn);
  parallel_for(static_cast<std::uint64_t>(mn), 256, [&](std::uint64_t x0, std::uint64_t x1, unsigned) {
    int r[kMaxModuli];
    std::uint32_t mag[kLimbs];
    for (std::uint64_t x = x0; x < x1; ++x) {
      for (int l = 0; l < pl.n; ++l) r[l] = res[static_cast<std::size_t>(l) * mn + x];
      bool neg = false;
      if (route == Route::Host) host_reconstruct(hp, r, mag, neg);
      else reconstruct(pl, r, mag, neg);
      const auto i = static_cast<std::size_t>(static_cast<std::int64_t>(x) / n), j = static_cast<std::size_t>(static_cast<std::int64_t>(x) % n);
      c[x] = element(mag, neg, sc.s[i], sc.t[j]);
    }
  });
  if (used) *used = sc;
  return c;
}

namespace {

/// Of element (i, j): sum |b_kj| over a_ik != 0, sum |a_ik| over b_kj != 0, and the count of k with both nonzero.
struct LineSums {
  double sb = 0, sa = 0, both = 0;
};
LineSums line_sums(const double* a, const double* b, std::int64_t n, std::int64_t k, std::int64_t i, std::int64_t j) {
  LineSums r;
  for (std::int64_t q = 0; q < k; ++q) {
    const double x = a[i * k + q], y = b[q * n + j];
    if (x != 0) r.sb += std::fabs(y);
    if (y != 0) r.sa += std::fabs(x);
    if (x != 0 && y != 0) r.both += 1;
  }
  return r;
}

}  // namespace

std::vector<double> bound(const Scaling& sc, const double* a, const double* b, const std::vector<double>& exact_abs, std::int64_t m,
                          std::int64_t n, std::int64_t k) {
  std::vector<double> e(static_cast<std::size_t>(m * n));
  const double slack = bound_slack(k);
  parallel_for(static_cast<std::uint64_t>(m), 1, [&](std::uint64_t i0, std::uint64_t i1, unsigned) {
    // line_sums of a whole row at once: B's rows streamed (contiguous), every element's sums still taken k ascending,
    // so each is line_sums' bit for bit (a column walk per element reads B with stride n; with the branch-free loop
    // below, the envelope phase of model_gemm_f64_ozaki2's 2048 x 2048 x 512 case went 7.8 s -> 2.4 s on one thread).
    std::vector<double> sb(static_cast<std::size_t>(n)), sa(static_cast<std::size_t>(n)), both(static_cast<std::size_t>(n));
    double* __restrict psb = sb.data();
    double* __restrict psa = sa.data();
    double* __restrict pboth = both.data();
    for (auto i = static_cast<std::int64_t>(i0); i < static_cast<std::int64_t>(i1); ++i) {
      std::fill(sb.begin(), sb.end(), 0.0);
      std::fill(sa.begin(), sa.end(), 0.0);
      std::fill(both.begin(), both.end(), 0.0);
      for (std::int64_t q = 0; q < k; ++q) {
        // a_iq = 0 adds nothing to any sum of the row. Otherwise adding +0 where y = 0 changes no sum (each is +0 or
        // positive): the same bits as line_sums' conditional adds, branch-free so that the loop vectorises.
        const double x = a[i * k + q], ax = std::fabs(x);
        if (x == 0) continue;
        const double* __restrict bq = b + q * n;
        for (std::int64_t j = 0; j < n; ++j) {
          const double y = bq[j];
          psb[j] += std::fabs(y);
          psa[j] += y != 0 ? ax : 0.0;
          pboth[j] += y != 0 ? 1.0 : 0.0;
        }
      }
      for (std::int64_t j = 0; j < n; ++j) {
        // Each term scaled by one ldexp: exact unless it falls below 2^-1022, where it rounds by at most 2^-1075; those
        // three and the final rounding's 2^-1075 are covered by the absolute 2^-1072.
        const int si = sc.s[static_cast<std::size_t>(i)], tj = sc.t[static_cast<std::size_t>(j)];
        const auto uj = static_cast<std::size_t>(j);
        const double ops = std::ldexp(sb[uj], -si - 1) + std::ldexp(sa[uj], -tj - 1) + std::ldexp(both[uj], -si - tj - 2);
        const auto ux = static_cast<std::size_t>(i * n + j);
        e[ux] = (ops * (1 + 0x1p-53) + 0x1p-53 * exact_abs[ux] + 0x1p-1072) * slack;
      }
    }
  });
  return e;
}

std::string bound_terms(const Scaling& sc, const double* a, const double* b, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t i,
                        std::int64_t j) {
  (void)m;
  const auto [sb, sa, both] = line_sums(a, b, n, k, i, j);
  const int si = sc.s[static_cast<std::size_t>(i)], tj = sc.t[static_cast<std::size_t>(j)];
  return fmt::format("alpha = {} bits per scaled operand; row {}: s = {}, A's rounding 2^{} x sum|b| {:.6g} = {:.6g}; column {}: t = {}, "
                     "B's rounding 2^{} x sum|a| {:.6g} = {:.6g}; cross term {} x 2^{} = {:.6g}; then the final rounding "
                     "2^-53 (|c| + E) + 2^-1074",
                     sc.alpha, i, si, -si - 1, sb, std::ldexp(sb, -si - 1), j, tj, -tj - 1, sa, std::ldexp(sa, -tj - 1), both, -si - tj - 2,
                     std::ldexp(both, -si - tj - 2));
}

int guaranteed_bits(double bound, double rn) {
  const double ulp = rn == 0 ? 0x1p-1074 : std::max(std::ldexp(1.0, std::ilogb(rn) - 53), 0x1p-1074);
  const double d = std::floor((bound + ulp / 2) / ulp);
  return d >= 0x1p53 ? 0 : std::max(0, 53 - static_cast<int>(std::bit_width(static_cast<std::uint64_t>(d))));
}

int fp64_span_domain(const Plan& pl) {
  // For a line spanning at most S binades (every nonzero |a_ik| >= 2^(e_i - S), e_i = ilogb of the line's largest):
  //  - S <= alpha - 53: every scaled entry is already an integer (its last bit 2^(e_ik - 52) scales to at least 1):
  //    the products are exact and the one final rounding is fp64's output rounding: within any fp64 envelope;
  //  - else d_a = 2^(e_i - alpha) <= 2^(S - alpha) |a_ik|, so E_ij <= (2^(S+1-alpha) + 2^(2S-2alpha)) sum_k |a_ik b_kj|,
  //    and the result is within E (1 + u) + u |c| + 2^-1074; fp64's envelope for an unknown order allows at least
  //    gamma_K(u) sum |a b| (u = 2^-53; its step is u + 2^-52 per rounding, larger) plus K 2^-1075 of underflow.
  // alpha falls by one each time ceil(log2 K) grows by two while gamma_K grows with K: the worst K of each
  // ceil(log2 K) is the smallest, 2^(c-1) + 1; K up to 2^31 checked.
  const double u = 0x1p-53;
  int best = 1 << 20;
  for (int c = 0; c <= 31; ++c) {
    const double K = c == 0 ? 1.0 : std::ldexp(1.0, c - 1) + 1;
    const int alpha = operand_bits(pl, static_cast<std::int64_t>(K));
    const double gamma = K * u / (1 - K * u);
    int s = alpha - 53;  // exact operands
    while (true) {       // inexact but within the envelope
      const int t = s + 1;
      const double e = (std::ldexp(1.0, t + 1 - alpha) + std::ldexp(1.0, 2 * t - 2 * alpha)) * (1 + u) + u;
      if (e > gamma * (1 - 0x1p-40)) break;
      s = t;
    }
    best = std::min(best, s);
  }
  return best < 0 ? -1 : best;
}

}  // namespace ozaki2

InputDomain ozaki2_domain(int n) {
  const int span = ozaki2::fp64_span_domain(ozaki2::make_plan(n));
  InputDomain d;
  d.finite_only = true;
  if (span >= 0) {
    d.span_scope = SpanScope::Line;
    d.max_span = span;
    d.span_scheme_graded = true;  // wider lines: the bitwise emulation and the scheme's own bound judge
  }
  d.note = fmt::format(
      "Ozaki-II with {} moduli keeps each entry to a fixed number of bits below its row's (column's) largest: on lines spanning "
      "at most {} binades that meets fp64 GEMM's envelope at every K (docs/fp64.md, \"What it claims\"), wider lines are held to the "
      "scheme's own bound; Inf and NaN have no residues",
      n, span);
  return d;
}

KernelTraits ozaki2_traits(int n) {
  const ozaki2::Plan pl = ozaki2::make_plan(n);
  KernelTraits t;
  t.a_input = t.b_input = t.a_operand = t.b_operand = &f64;
  t.acc = &f64;
  t.out = &f64;
  t.order = fmt::format(
      "Ozaki-II with {} moduli (256, 255, 253, ...; P = 2^{:.1f}): rows of A and columns of B scaled by powers of two to "
      "integers of alpha = floor((floor(log2 P) - 1 - ceil(log2 K)) / 2) bits (rounded to nearest), residues as INT8, {} exact "
      "INT8 GEMMs (int32 per K block of at most 2^17 - 1), Garner's exact CRT reconstruction, one rounding to nearest into fp64",
      n, static_cast<double>(pl.log2p), n);
  // Exact integer arithmetic and one rounding: no summation order, the scheme itself is declared (the bitwise tier
  // emulates it with ozaki2::gemm; every order of K gives its bits).
  t.sum_order = SummationOrder::ozaki2(n);
  t.domain = ozaki2_domain(n);
  t.determinism = Determinism::Deterministic;
  t.determinism_note = "exact integer arithmetic and one rounding: the same bits in any order";
  t.batch_invariant = true;
  t.batch_invariant_note = "a row's scaling depends on that row only and alpha on K only; exact integers: no order from M";
  return t;
}

namespace {

/// The host Ozaki-II: N moduli, declared with the traits of `declared_n` moduli (equal for the honest model).
class Ozaki2Model final : public CpuModel {
 public:
  Ozaki2Model(std::string name, std::string desc, KernelTraits t, int n, std::int64_t kblock)
      : CpuModel(std::move(name), std::move(desc), std::move(t)), plan_(ozaki2::make_plan(n, kblock)) {}
  std::vector<std::uint64_t> compute(const DecodedOperands& d) const override {
    const std::vector<double> c = ozaki2::gemm(plan_, d.a.data(), d.b.data(), d.m, d.n, d.k);
    std::vector<std::uint64_t> r(c.size());
    for (std::size_t x = 0; x < c.size(); ++x) r[x] = std::bit_cast<std::uint64_t>(c[x]);
    return r;
  }
  bool is_mutant() const override { return mutant_; }
  bool mutant_ = false;

 private:
  ozaki2::Plan plan_;
};

}  // namespace

std::unique_ptr<GemmKernel> make_ozaki2_model(std::string name, int n, int declared_n, std::int64_t kblock) {
  std::string desc = n == declared_n
                         ? fmt::format("fp64 GEMM emulated by Ozaki-II: {} moduli, INT8 residue GEMMs, exact CRT, one rounding", n)
                         : fmt::format("Ozaki-II with only {} moduli passed off as the {}-moduli emulation (must be refused)", n, declared_n);
  auto k = std::make_unique<Ozaki2Model>(std::move(name), std::move(desc), ozaki2_traits(declared_n), n, kblock);
  k->mutant_ = n != declared_n;
  return k;
}

#if !defined(FPCERT_HAVE_CUDA)
std::unique_ptr<GemmKernel> make_ozaki2_int8_kernel(int n) {
  throw DeviceError("gemm_f64_ozaki2_int8 (" + std::to_string(n) + " moduli): this fpcert was built without CUDA");
}
#endif

void register_ozaki2_models() {
  register_kernel("model_gemm_f64_ozaki2", Backend::Cpu, false, [] { return make_ozaki2_model("model_gemm_f64_ozaki2", 20, 20); });
  register_kernel("model_gemm_f64_ozaki2_short", Backend::Cpu, true,
                  [] { return make_ozaki2_model("model_gemm_f64_ozaki2_short", 10, 20); });
}

}  // namespace fpcert
