// oracle/gemm_fast.cpp — the fast exact GEMM reference (gemm_reference): an Ozaki-scheme split of A
// and B into integer slices whose products a double GEMM computes exactly (Eigen's, or another engine's:
// oracle/gemm_engine.hpp), combined in
// integers (Karatsuba), the entries outside the slice window and out-of-range results finished per
// element in ExactSum. docs/oracle.md gives the algorithm, the proof of each step and its sources.
#include <sys/mman.h>

#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>
#include <limits>
#include <mutex>
#include <utility>
#include <stdexcept>
#include <vector>

#include "base/huge_pages.hpp"
#include "base/parallel.hpp"
#include "oracle/exact_combine.hpp"
#include "oracle/exact_sum.hpp"
#include "oracle/gemm_engine.hpp"
#include "oracle/gemm_ref.hpp"

namespace fpcert {
namespace {

using exact_gemm::i128;
using exact_gemm::kMaxSlices;
using exact_gemm::kNeedBins;
using hd::pow2;
using Config = exact_gemm::Split;

/// Rows of A or columns of B, as "lines" of length K: element k of line l is data[l*line_stride + k*elem_stride].
struct Lines {
  const double* data = nullptr;
  std::int64_t count = 0, len = 0, line_stride = 0, elem_stride = 0;
  double at(std::int64_t l, std::int64_t k) const { return data[l * line_stride + k * elem_stride]; }
};
Lines rows_of(const MatrixView& a) {
  return a.layout == Layout::RowMajor ? Lines{a.data, a.rows, a.cols, a.ld, 1} : Lines{a.data, a.rows, a.cols, 1, a.ld};
}
Lines cols_of(const MatrixView& b) {
  return b.layout == Layout::RowMajor ? Lines{b.data, b.cols, b.rows, 1, b.ld} : Lines{b.data, b.cols, b.rows, b.ld, 1};
}

/// Lines [l0, l1) restricted to [k0, k1), each contiguous: a pointer into the matrix when lines are
/// contiguous there, else a copy (read in memory order) into buf. *stride: distance between lines.
const double* line_block(const Lines& L, std::int64_t l0, std::int64_t l1, std::int64_t k0, std::int64_t k1,
                         std::vector<double>& buf, std::int64_t* stride) {
  if (L.elem_stride == 1) {
    *stride = L.line_stride;
    return L.data + l0 * L.line_stride + k0;
  }
  const std::int64_t w = k1 - k0;
  buf.resize(static_cast<std::size_t>((l1 - l0) * w));
  for (std::int64_t k = k0; k < k1; ++k) {
    const double* src = L.data + k * L.elem_stride;
    for (std::int64_t l = l0; l < l1; ++l) buf[static_cast<std::size_t>((l - l0) * w + (k - k0))] = src[l * L.line_stride];
  }
  *stride = w;
  return buf.data();
}
constexpr std::int64_t kLineBlock = 32;

/// What the first pass learns about the lines of one operand.
struct LineScan {
  std::vector<int> e;                             ///< |x| < 2^e for every finite x of the line (0: none nonzero)
  std::vector<int> max_need;                      ///< max over finite nonzero x of e - low_exponent(x)
  std::vector<std::uint8_t> nonfinite;            ///< the line holds a NaN or an Inf
  std::vector<std::vector<std::int32_t>> nf_pos;  ///< their positions (lines with any)
  std::vector<std::int64_t> hist;                 ///< finite nonzero entries by need
  int min_rel = 0;                                ///< min over finite nonzero x of top_exponent(x) - e
  std::vector<std::vector<std::int32_t>> rem;     ///< uncaptured positions (need > W), per line
  std::int64_t uncaptured = 0;
};

void scan_lines(const Lines& L, LineScan& s, unsigned threads) {
  const std::int64_t n = L.count, K = L.len;
  s.e.assign(static_cast<std::size_t>(n), 0);
  s.max_need.assign(static_cast<std::size_t>(n), 0);
  s.nonfinite.assign(static_cast<std::size_t>(n), 0);
  s.nf_pos.assign(static_cast<std::size_t>(n), {});
  s.rem.assign(static_cast<std::size_t>(n), {});
  const unsigned nw = threads ? threads : thread_count();
  std::vector<std::vector<std::int64_t>> hists(nw, std::vector<std::int64_t>(kNeedBins, 0));
  std::vector<int> min_rel(nw, 0);
  const auto blocks = static_cast<std::uint64_t>((n + kLineBlock - 1) / kLineBlock);
  parallel_for(
      blocks, 1,
      [&](std::uint64_t b0, std::uint64_t b1, unsigned w) {
        std::vector<double> buf;
        auto& hist = hists[w];
        for (std::uint64_t b = b0; b < b1; ++b) {
          const std::int64_t l0 = static_cast<std::int64_t>(b) * kLineBlock, l1 = std::min(n, l0 + kLineBlock);
          std::int64_t stride;
          const double* base = line_block(L, l0, l1, 0, K, buf, &stride);
          for (std::int64_t l = l0; l < l1; ++l) {
            const double* x = base + (l - l0) * stride;
            int top = INT_MIN;
            bool nf = false;
            for (std::int64_t k = 0; k < K; ++k) {
              const double v = x[k];
              if (!std::isfinite(v)) {
                nf = true;
                s.nf_pos[static_cast<std::size_t>(l)].push_back(static_cast<std::int32_t>(k));
              } else if (v != 0) {
                top = std::max(top, top_exponent(v));
              }
            }
            const int e = top == INT_MIN ? 0 : top + 1;
            int mx = 0, mr = min_rel[w];
            if (top != INT_MIN)
              for (std::int64_t k = 0; k < K; ++k) {
                const double v = x[k];
                if (v == 0 || !std::isfinite(v)) continue;
                const int need = e - low_exponent(v);
                ++hist[static_cast<std::size_t>(need)];
                mx = std::max(mx, need);
                mr = std::min(mr, top_exponent(v) - e);
              }
            min_rel[w] = mr;
            s.e[static_cast<std::size_t>(l)] = e;
            s.max_need[static_cast<std::size_t>(l)] = mx;
            s.nonfinite[static_cast<std::size_t>(l)] = nf;
          }
        }
      },
      nw);
  s.hist.assign(kNeedBins, 0);
  s.min_rel = 0;
  for (unsigned w = 0; w < nw; ++w) {
    for (int i = 0; i < kNeedBins; ++i) s.hist[static_cast<std::size_t>(i)] += hists[w][static_cast<std::size_t>(i)];
    s.min_rel = std::min(s.min_rel, min_rel[w]);
  }
}

/// Positions of the finite nonzero entries outside the window W (need > W), for lines that have any.
void collect_uncaptured(const Lines& L, LineScan& s, int W, unsigned threads) {
  const std::int64_t n = L.count, K = L.len;
  parallel_for(
      static_cast<std::uint64_t>(n), 16,
      [&](std::uint64_t l0, std::uint64_t l1, unsigned) {
        std::vector<double> buf;
        for (std::uint64_t l = l0; l < l1; ++l) {
          if (s.max_need[l] <= W) continue;
          std::int64_t stride;
          const auto li = static_cast<std::int64_t>(l);
          const double* x = line_block(L, li, li + 1, 0, K, buf, &stride);
          const int e = s.e[l];
          for (std::int64_t k = 0; k < K; ++k) {
            const double v = x[k];
            if (v != 0 && std::isfinite(v) && e - low_exponent(v) > W) s.rem[l].push_back(static_cast<std::int32_t>(k));
          }
        }
      },
      threads);
  s.uncaptured = 0;
  for (const auto& r : s.rem) s.uncaptured += static_cast<std::int64_t>(r.size());
}

/// Largest beta <= 26 with kc * c * 2^(2 beta) <= 2^53, c = 1 (one slice: |d| <= 2^beta) or 9/4
/// (Karatsuba operands d_1 + d_t: |.| <= 1.5 * 2^beta).
int beta_for(int S, std::int64_t kc) {
  using exact_gemm::u128;
  for (int beta = 26; beta >= 1; --beta) {
    const u128 lhs = static_cast<u128>(kc) << (2 * beta);
    if (S == 1 ? lhs <= (static_cast<u128>(1) << 53) : 9 * lhs <= (static_cast<u128>(1) << 55)) return beta;
  }
  return 0;
}

std::int64_t kblock_for(int S, std::int64_t M, std::int64_t N, std::int64_t K) {
  const int G = S * (S + 1) / 2;
  std::int64_t kc = std::min<std::int64_t>(K, 2048);
  // Slice buffers of one block: (G + 1) * (M + N) * kc doubles; keep them under 512 MiB.
  while (kc > 256 && static_cast<double>(G + 1) * static_cast<double>(M + N) * static_cast<double>(kc) * 8 > 512.0 * (1 << 20))
    kc /= 2;
  // At most 256 blocks, so the int64 block sums stay below 2^61.
  kc = std::max(kc, (K + 255) / 256);
  return std::max<std::int64_t>(kc, 1);
}

}  // namespace

exact_gemm::Split exact_gemm::choose_split(const std::int64_t* hist_a, const std::int64_t* hist_b,
                                           const int* max_need_a, const int* max_need_b, std::int64_t M, std::int64_t N,
                                           std::int64_t K) {
  // Model costs in ns on one core: a multiply-add in a double GEMM ~0.03; an exact product added
  // per element ~6; an element finished in ExactSum ~200.
  Config best;
  double best_cost = std::numeric_limits<double>::infinity();
  for (int S = 1; S <= kMaxSlices; ++S) {
    Config c;
    c.S = S;
    c.G = S * (S + 1) / 2;
    c.kc = kblock_for(S, M, N, K);
    c.nblocks = (K + c.kc - 1) / c.kc;
    c.beta = beta_for(S, c.kc);
    c.W = S * c.beta;
    double ua = 0, ub = 0;
    for (int i = c.W + 1; i < kNeedBins; ++i) {
      ua += static_cast<double>(hist_a[i]);
      ub += static_cast<double>(hist_b[i]);
    }
    double rows = 0, cols = 0;
    for (std::int64_t i = 0; i < M; ++i) rows += max_need_a[i] > c.W;
    for (std::int64_t j = 0; j < N; ++j) cols += max_need_b[j] > c.W;
    const double mn = static_cast<double>(M) * static_cast<double>(N);
    double cost = (c.G + 1) * mn * static_cast<double>(K) * 0.03;
    cost += (ua * static_cast<double>(N) + ub * static_cast<double>(M)) * 6;
    cost += std::min(mn, rows * static_cast<double>(N) + cols * static_cast<double>(M)) * 200;
    if (S >= 3) cost += mn * 200;
    if (cost < best_cost * 0.999) {
      best_cost = cost;
      best = c;
    }
  }
  return best;
}

namespace {

/// Slices of lines [0, count) over [k0, k1) into ops[g][l * w + (k - k0)], w = k1 - k0:
/// g < G: the GEMM operands (diagonal d_s, then Karatsuba sums d_s + d_t, s < t), g == G: |x| 2^-e.
void slice_block(const Lines& L, const LineScan& s, const Config& c, std::int64_t k0, std::int64_t k1,
                 std::vector<HugeBuffer<double>>& ops, unsigned threads) {
  const std::int64_t n = L.count, w = k1 - k0;
  for (auto& o : ops) o.resize(static_cast<std::size_t>(n * w));
  const auto blocks = static_cast<std::uint64_t>((n + kLineBlock - 1) / kLineBlock);
  const double two_beta = std::ldexp(1.0, c.beta);
  parallel_for(
      blocks, 1,
      [&](std::uint64_t b0, std::uint64_t b1, unsigned) {
        std::vector<double> buf;
        double d[kMaxSlices];
        for (std::uint64_t b = b0; b < b1; ++b) {
          const std::int64_t l0 = static_cast<std::int64_t>(b) * kLineBlock, l1 = std::min(n, l0 + kLineBlock);
          std::int64_t stride;
          const double* base = line_block(L, l0, l1, k0, k1, buf, &stride);
          for (std::int64_t l = l0; l < l1; ++l) {
            const double* x = base + (l - l0) * stride;
            const int e = s.e[static_cast<std::size_t>(l)];
            // x * 2^(beta - e) and |x| * 2^-e in two exact steps (each factor a normal double).
            const int up = c.beta - e, up1 = std::clamp(up, -1000, 1000);
            const double f1 = pow2(up1), f2 = pow2(up - up1);
            const int dn1 = std::clamp(-e, -1000, 1000);
            const double g1 = pow2(dn1), g2 = pow2(-e - dn1);
            double* out[2 * kMaxSlices * kMaxSlices];
            for (int g = 0; g <= c.G; ++g) out[g] = ops[static_cast<std::size_t>(g)].data() + l * w;
            if (c.S <= 2) {
              // The same slices, branch-free so the compiler vectorises it. v is captured iff
              // z = v 2^(W - e) is an integer: the exponent test of the scan (need <= W) stated in
              // floating point; z != 0 rules out a scaling that underflowed to zero, and an inexact
              // (subnormal) z is never an integer (docs/oracle.md, "Slices").
              const double fw = c.S == 2 ? two_beta : 1.0;
              double* o0 = out[0];
              double* o1 = out[1];
              double* o2 = out[c.S == 2 ? 2 : 1];
              double* oa = out[c.G];
              for (std::int64_t k = 0; k < w; ++k) {
                const double v = x[k];
                const bool fin = std::fabs(v) <= std::numeric_limits<double>::max();
                const double y = v * f1 * f2;  // v 2^(beta - e)
                const double z = y * fw;        // v 2^(W - e)
                const bool cap = fin && z == std::nearbyint(z) && (z != 0 || v == 0);
                const double d1 = std::nearbyint(y);
                const double d2 = (y - d1) * two_beta;  // an integer when captured
                const double a1 = std::fabs(v) * g1 * g2;
                if (c.S == 2) {
                  o0[k] = cap ? d1 : 0.0;
                  o1[k] = cap ? d2 : 0.0;
                  o2[k] = cap ? d1 + d2 : 0.0;
                } else {
                  o0[k] = cap ? y : 0.0;  // one slice: y itself is the integer
                }
                oa[k] = fin ? a1 : 0.0;
              }
              continue;
            }
            for (std::int64_t k = 0; k < w; ++k) {
              const double v = x[k];
              for (int t = 0; t < c.S; ++t) d[t] = 0;
              double a = 0;
              if (v != 0 && std::isfinite(v)) {
                a = std::fabs(v) * g1 * g2;
                if (e - low_exponent(v) <= c.W) {
                  // v / 2^e in (-1, 1) is a multiple of 2^-W: S nearest-integer slices of beta bits
                  // represent it exactly (docs/oracle.md, "Slices").
                  double y = v * f1 * f2;
                  for (int t = 0; t < c.S; ++t) {
                    d[t] = std::nearbyint(y);
                    y = (y - d[t]) * two_beta;
                  }
                }
              }
              int g = 0;
              for (int t = 0; t < c.S; ++t) out[g++][k] = d[t];
              for (int s1 = 0; s1 < c.S; ++s1)
                for (int t = s1 + 1; t < c.S; ++t) out[g++][k] = d[s1] + d[t];
              out[g][k] = a;
            }
          }
        }
      },
      threads);
}

using exact_gemm::ref_from_int_fast;

/// Sorted union of two sorted position lists, calling fn(k) once per position.
template <class F>
void for_union(const std::vector<std::int32_t>& a, const std::vector<std::int32_t>& b, F&& fn) {
  std::size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    std::int32_t k;
    if (j == b.size() || (i < a.size() && a[i] < b[j])) k = a[i++];
    else if (i == a.size() || b[j] < a[i]) k = b[j++];
    else {
      k = a[i++];
      ++j;
    }
    fn(k);
  }
}

}  // namespace

GemmRef gemm_reference(const MatrixView& a, const MatrixView& b, const GemmRefOptions& opt) {
  if (a.cols != b.rows) throw std::invalid_argument("gemm_reference: inner dimensions differ");
  GemmRef r;
  r.m = a.rows;
  r.n = b.cols;
  r.info.path = "ozaki";
  // Who multiplies the slices (oracle/gemm_engine.hpp): per tile in the workers (Eigen), or per panel of rows.
  std::shared_ptr<ExactGemmEngine> held = opt.engine ? nullptr : default_gemm_engine();
  if (held && !held->takes(static_cast<double>(a.rows) * static_cast<double>(a.cols) * static_cast<double>(b.cols)))
    held = nullptr;  // not for the default engine (too small, no device): the built-in one
  ExactGemmEngine& engine = opt.engine ? *opt.engine : held ? *held : eigen_gemm_engine();
  r.info.engine = engine.name();
  PhaseTrace trace("FPCERT_ORACLE_TRACE", "gemm_reference");
  const std::int64_t M = a.rows, N = b.cols, K = a.cols;
  // An engine that takes the whole reference (a GPU, for binary32 inputs): checked on a sample like any other engine's.
  if (M > 0 && N > 0 && K > 0 && engine.whole_reference(a, b, opt.threads ? opt.threads : thread_count(), r)) {
    trace.mark("whole reference");
    const std::int64_t nblocks = (K + r.info.kblock - 1) / r.info.kblock;
    r.info.sample_checked =
        check_reference_sample(a, b, r, engine.name(), 1.0 + static_cast<double>(3 * (K + nblocks + 2)) * 0x1p-53);
    return r;
  }
  const auto mn = static_cast<std::size_t>(M * N);
  assign_huge(r.c, mn, RefValue{});
  assign_huge(r.abs_sum, mn, 0.0);
  assign_huge(r.status, mn, std::uint8_t{kRefOk});
  trace.mark("outputs");
  if (mn == 0 || K == 0) return r;
  const unsigned threads = opt.threads ? opt.threads : thread_count();

  const Lines LA = rows_of(a), LB = cols_of(b);
  LineScan sa, sb;
  scan_lines(LA, sa, threads);
  scan_lines(LB, sb, threads);
  const Config c = exact_gemm::choose_split(sa.hist.data(), sb.hist.data(), sa.max_need.data(), sb.max_need.data(), M, N, K);
  collect_uncaptured(LA, sa, c.W, threads);
  collect_uncaptured(LB, sb, c.W, threads);
  trace.mark("scan");
  r.info.slices = c.S;
  r.info.beta = c.beta;
  r.info.kblock = c.kc;
  r.info.gemms = c.G + 1;
  r.info.uncaptured_a = sa.uncaptured;
  r.info.uncaptured_b = sb.uncaptured;

  // |A||B| bound (docs/oracle.md, "abs_sum"): (fl + eta) * (1 + 2 (K + nblocks + 2) 2^-53), then
  // scaled by 2^(e_i + e_j); eta covers underflow of |x| 2^-e or of products (fp64 inputs only).
  const double abs_factor = 1.0 + static_cast<double>(2 * (K + c.nblocks + 2)) * 0x1p-53;
  const bool may_underflow = sa.min_rel < -1000 || sb.min_rel < -1000 || sa.min_rel + sb.min_rel < -1000;
  const double eta = may_underflow ? static_cast<double>(K) * 0x1p-1072 : 0.0;

  // Output tiles: large enough that Eigen's packing of the operands stays a small part of the
  // work, small enough to give 32 threads a few tiles. Chosen from the shape alone: the tile's shape
  // decides Eigen's blocking, so the rounded |A||B| (abs_sum) does not depend on the thread count.
  std::int64_t tile_m = 512, tile_n = 512;
  if (const char* t = std::getenv("FPCERT_ORACLE_TILE")) tile_m = tile_n = std::max(16L, std::atol(t));
  while (tile_m > 64 && ((M + tile_m - 1) / tile_m) * ((N + tile_n - 1) / tile_n) < 64) {
    if (tile_n >= tile_m) tile_n /= 2;
    else tile_m /= 2;
  }
  const std::int64_t tiles_n = (N + tile_n - 1) / tile_n;
  const int G = c.G, S = c.S, beta = c.beta;
  const bool multi = c.nblocks > 1;
  std::vector<HugeBuffer<std::int64_t>> acc(multi ? static_cast<std::size_t>(G) : 0);
  HugeBuffer<double> abs_acc;
  if (multi) {  // written by the first block before any read
    for (auto& v : acc) v.resize(mn);
    abs_acc.resize(mn);
  }
  // Level of each GEMM operand pair: diagonal s (0-based) at 2^(-2(s+1) beta), pair (s, t) at 2^(-(s+t+2) beta).
  std::vector<int> ga(static_cast<std::size_t>(G)), gb(static_cast<std::size_t>(G));
  {
    int g = 0;
    for (int t = 0; t < S; ++t, ++g) ga[static_cast<std::size_t>(g)] = gb[static_cast<std::size_t>(g)] = t;
    for (int s1 = 0; s1 < S; ++s1)
      for (int t = s1 + 1; t < S; ++t, ++g) {
        ga[static_cast<std::size_t>(g)] = s1;
        gb[static_cast<std::size_t>(g)] = t;
      }
  }

  struct Worker {
    HugeBuffer<double> t;       // (G + 1) tiles of GEMM results (per-tile engines)
    HugeBuffer<std::int64_t> v;  // G integers per element of the tile
    ExactSum sum;
    std::int64_t fast = 0, exact = 0, fallbacks = 0, nonfinite = 0;
  };
  std::vector<Worker> workers(threads);
  std::vector<HugeBuffer<double>> aops(static_cast<std::size_t>(G + 1)), bops(static_cast<std::size_t>(G + 1));
  std::vector<const double*> aptr(static_cast<std::size_t>(G + 1)), bptr(static_cast<std::size_t>(G + 1));

  const bool per_tile = engine.per_tile();
  // Panels: (G + 1) row-major results of panel_m x N, within the engine's panel_bytes().
  std::int64_t panel_m = M;
  if (!per_tile) {
    const double row_bytes = static_cast<double>(G + 1) * static_cast<double>(N) * 8;
    panel_m = std::clamp<std::int64_t>(static_cast<std::int64_t>(static_cast<double>(engine.panel_bytes()) / row_bytes), 1, M);
  }
  HugeBuffer<double> panel_own;

  for (std::int64_t blk = 0; blk < c.nblocks; ++blk) {
    const std::int64_t k0 = blk * c.kc, k1 = std::min(K, k0 + c.kc), w = k1 - k0;
    const bool first = blk == 0, last = blk == c.nblocks - 1;
    slice_block(LA, sa, c, k0, k1, aops, threads);
    slice_block(LB, sb, c, k0, k1, bops, threads);
    for (int g = 0; g <= G; ++g) {
      aptr[static_cast<std::size_t>(g)] = aops[static_cast<std::size_t>(g)].data();
      bptr[static_cast<std::size_t>(g)] = bops[static_cast<std::size_t>(g)].data();
    }
    const SliceBlock ops{G + 1, M, N, w, aptr.data(), bptr.data()};
    engine.begin_block(ops);
    trace.mark("slice");
    for (std::int64_t p0 = 0; p0 < M; p0 += panel_m) {
      const std::int64_t pm = std::min(panel_m, M - p0);
      const std::int64_t ptile_m = std::min(tile_m, pm);  // tiles inside the panel
      const double* panel = nullptr;  // per-panel engines: (G + 1) results of pm x N, row-major
      if (!per_tile) {
        const auto need = static_cast<std::size_t>((G + 1) * pm * N);
        double* dst = engine.panel_memory(need);
        if (!dst) {
          if (panel_own.size() < need) panel_own.resize(need);
          dst = panel_own.data();
        }
        engine.multiply(ops, p0, pm, 0, N, dst);
        panel = dst;
        trace.mark("engine");
      }
      const std::int64_t ptiles_m = (pm + ptile_m - 1) / ptile_m;
      parallel_for(
          static_cast<std::uint64_t>(ptiles_m * tiles_n), 1,
          [&](std::uint64_t t0, std::uint64_t t1, unsigned wid) {
            Worker& wk = workers[wid];
            for (std::uint64_t tile = t0; tile < t1; ++tile) {
              const std::int64_t i0 = p0 + static_cast<std::int64_t>(tile) / tiles_n * ptile_m;
              const std::int64_t j0 = static_cast<std::int64_t>(tile) % tiles_n * tile_n;
              const std::int64_t tm = std::min(ptile_m, p0 + pm - i0), tn = std::min(tile_n, N - j0), tsz = tm * tn;
              // Result g of element (ii, jj) of the tile: T[g * gstride + ii * ldt + jj].
              const double* T;
              std::int64_t gstride, ldt;
              if (per_tile) {
                wk.t.resize(static_cast<std::size_t>((G + 1) * tsz));
                engine.multiply(ops, i0, tm, j0, tn, wk.t.data());
                T = wk.t.data();
                gstride = tsz;
                ldt = tn;
              } else {
                T = panel + (i0 - p0) * N + j0;
                gstride = pm * N;
                ldt = N;
              }
              wk.v.resize(static_cast<std::size_t>(G * tsz));
              for (std::int64_t ii = 0; ii < tm; ++ii)
                for (std::int64_t jj = 0; jj < tn; ++jj) {
                  const std::int64_t e = ii * tn + jj;
                  const auto idx = static_cast<std::size_t>((i0 + ii) * N + (j0 + jj));
                  const std::int64_t te = ii * ldt + jj;
                  double absv = T[G * gstride + te];
                  std::int64_t* v = wk.v.data() + e * G;
                  for (int g = 0; g < G; ++g) v[g] = static_cast<std::int64_t>(T[g * gstride + te]);
                  if (multi) {
                    if (!first) {
                      for (int g = 0; g < G; ++g) v[g] += acc[static_cast<std::size_t>(g)][idx];
                      absv += abs_acc[idx];
                    }
                    if (!last) {
                      for (int g = 0; g < G; ++g) acc[static_cast<std::size_t>(g)][idx] = v[g];
                      abs_acc[idx] = absv;
                      continue;
                    }
                  }
                  // ---- finish element (i, j) ----
                  const std::int64_t i = i0 + ii, j = j0 + jj;
                  const auto iu = static_cast<std::size_t>(i), ju = static_cast<std::size_t>(j);
                  if (sa.nonfinite[iu] || sb.nonfinite[ju]) {
                    double x = 0;  // the non-finite products in k order, as IEEE (and exact_dot_mpfr) add them
                    for_union(sa.nf_pos[iu], sb.nf_pos[ju], [&](std::int32_t k) { x += a.at(i, k) * b.at(k, j); });
                    r.c[idx] = {std::isnan(x) ? std::numeric_limits<double>::quiet_NaN() : x, 0.0, 0};
                    r.status[idx] = kRefNonFinite;
                    r.abs_sum[idx] = std::numeric_limits<double>::infinity();
                    ++wk.nonfinite;
                    continue;
                  }
                  const int E = sa.e[iu] + sb.e[ju] - 2 * S * beta;  // weight of the lowest level
                  const bool corr = !sa.rem[iu].empty() || !sb.rem[ju].empty();
                  bool done = false;
                  if (!corr && S <= 2) {
                    done = ref_from_int_fast(exact_gemm::combine_levels(v, S, beta), E, r.c[idx]);
                    if (done) ++wk.fast;
                  }
                  if (!done) {
                    ExactSum& sum = wk.sum;
                    sum.clear();
                    for (int g = 0; g < G; ++g) {
                      const int s1 = ga[static_cast<std::size_t>(g)], t = gb[static_cast<std::size_t>(g)];
                      i128 val = v[g];
                      if (s1 != t) val -= static_cast<i128>(v[s1]) + v[t];  // (d_s + d_t)(e_s + e_t) - d_s e_s - d_t e_t
                      sum.add_scaled(val, E + (2 * S - s1 - t - 2) * beta);
                    }
                    for_union(sa.rem[iu], sb.rem[ju], [&](std::int32_t k) { sum.add_product(a.at(i, k), b.at(k, j)); });
                    std::uint8_t st = kRefOk;
                    r.c[idx] = sum.finalize(st);
                    if (corr) {
                      st |= kRefFallback;
                      ++wk.fallbacks;
                    }
                    r.status[idx] = st;
                    ++wk.exact;
                  }
                  // abs_sum: an upper bound of sum |a_ik b_kj| (docs/oracle.md, "abs_sum").
                  r.abs_sum[idx] = exact_gemm::abs_sum_bound(absv, eta, abs_factor, sa.e[iu] + sb.e[ju]);
                }
            }
          },
          threads);
    }
    trace.mark("gemm+final");
  }
  // An engine other than the built-in one is checked on a sample against exact_dot (docs/oracle.md, "On the GPU");
  // abs_sum's upper side when no underflow term applies: RU * (1 + 3 (K + nb + 2) 2^-53) ("abs_sum").
  if (engine.sample_checked()) {
    const double upper = eta == 0 ? 1.0 + static_cast<double>(3 * (K + c.nblocks + 2)) * 0x1p-53 : 0.0;
    r.info.sample_checked = check_reference_sample(a, b, r, engine.name(), upper);
    trace.mark("sample");
  }
  for (const auto& wk : workers) {
    r.info.fast_elements += wk.fast;
    r.info.exact_elements += wk.exact;
    r.info.nonfinite += wk.nonfinite;
    r.fallbacks += wk.fallbacks;
  }
  return r;
}

}  // namespace fpcert
