// generators/spectral.cpp — xLATM1 spectra, Haar orthonormal factors (own Householder QR), and the
// `spectral` family.
#include "generators/spectral.hpp"

#include <algorithm>
#include <cmath>

#include "base/parallel.hpp"
#include "generators/family.hpp"

namespace fpcert {

std::vector<double> latm1_sigma(int mode, double cond, std::int64_t r, const Stream& s) {
  std::vector<double> d(static_cast<std::size_t>(r), 1.0);
  if (r <= 1) return d;
  const double inv = 1.0 / cond;
  const double logc = det_log(cond);
  const double rm1 = static_cast<double>(r - 1);
  for (std::int64_t i = 0; i < r; ++i) {
    const double t = static_cast<double>(i) / rm1;  // (i-1)/(r-1) in LAPACK's 1-based terms
    double v = 1.0;
    switch (mode) {
      case 1: v = i == 0 ? 1.0 : inv; break;
      case 2: v = i == r - 1 ? inv : 1.0; break;
      case 3: v = det_exp(-t * logc); break;
      case 4: v = 1.0 - t * (1.0 - inv); break;
      case 5: v = det_exp(-uniform01(s, static_cast<std::uint64_t>(i)) * logc); break;
      default: break;
    }
    d[static_cast<std::size_t>(i)] = v;
  }
  // Every mode has sigma_1 = 1 and sigma_r = 1/cond: pinned, so the requested cond is met exactly
  // (modes 3 and 5 would otherwise carry detmath's ulp, mode 4 a rounding of 1 - (1 - 1/cond)).
  d.front() = 1.0;
  d.back() = inv;
  return d;
}

std::vector<double> haar_orthonormal(std::int64_t m, std::int64_t r, const Stream& s, unsigned threads) {
  const auto M = static_cast<std::size_t>(m);
  std::vector<double> g(static_cast<std::size_t>(m * r));
  parallel_for(g.size(), 4096, [&](std::uint64_t b, std::uint64_t e, unsigned) {
    for (std::uint64_t i = b; i < e; ++i) g[i] = normal(s, i);
  }, threads);
  std::vector<double> tau(static_cast<std::size_t>(r), 0.0), rdiag(static_cast<std::size_t>(r), 0.0);
  // Householder QR: column j's reflector H_j = I - tau_j v_j v_j^T with v_j = x - alpha e_1,
  // alpha = -sign(x_0) ||x|| (no cancellation in x_0 - alpha); v_j overwrites column j from row j.
  for (std::int64_t j = 0; j < r; ++j) {
    double* col = &g[static_cast<std::size_t>(j) * M];
    double norm2 = 0;
    for (std::int64_t i = j; i < m; ++i) norm2 += col[i] * col[i];
    const double nrm = std::sqrt(norm2);
    if (nrm == 0) continue;  // probability 0 for a Gaussian column; tau stays 0 (H = I)
    const double x0 = col[j];
    const double alpha = x0 >= 0 ? -nrm : nrm;
    col[j] = x0 - alpha;
    double vtv = 0;
    for (std::int64_t i = j; i < m; ++i) vtv += col[i] * col[i];
    const double t = 2.0 / vtv;
    tau[static_cast<std::size_t>(j)] = t;
    rdiag[static_cast<std::size_t>(j)] = alpha;
    const auto rest = static_cast<std::uint64_t>(r - j - 1);
    parallel_for(rest, (m - j) * (r - j) > 65536 ? 8 : rest + 1, [&](std::uint64_t b, std::uint64_t e, unsigned) {
      for (std::uint64_t c = b; c < e; ++c) {
        double* y = &g[static_cast<std::size_t>(j + 1 + static_cast<std::int64_t>(c)) * M];
        double w = 0;
        for (std::int64_t i = j; i < m; ++i) w += col[i] * y[i];
        const double f = t * w;
        for (std::int64_t i = j; i < m; ++i) y[i] -= f * col[i];
      }
    }, threads);
  }
  // Q = H_0 H_1 ... H_{r-1} I[:, 0:r], accumulated backwards on columns j..r-1.
  std::vector<double> q(static_cast<std::size_t>(m * r), 0.0);
  for (std::int64_t c = 0; c < r; ++c) q[static_cast<std::size_t>(c) * M + static_cast<std::size_t>(c)] = 1.0;
  for (std::int64_t j = r - 1; j >= 0; --j) {
    const double t = tau[static_cast<std::size_t>(j)];
    if (t == 0) continue;
    const double* v = &g[static_cast<std::size_t>(j) * M];
    const auto cols = static_cast<std::uint64_t>(r - j);
    parallel_for(cols, (m - j) * (r - j) > 65536 ? 8 : cols + 1, [&](std::uint64_t b, std::uint64_t e, unsigned) {
      for (std::uint64_t c = b; c < e; ++c) {
        double* y = &q[static_cast<std::size_t>(j + static_cast<std::int64_t>(c)) * M];
        double w = 0;
        for (std::int64_t i = j; i < m; ++i) w += v[i] * y[i];
        const double f = t * w;
        for (std::int64_t i = j; i < m; ++i) y[i] -= f * v[i];
      }
    }, threads);
  }
  // Q diag(sign(R_jj)): the Haar measure (Mezzadri 2007, section 5).
  for (std::int64_t c = 0; c < r; ++c)
    if (rdiag[static_cast<std::size_t>(c)] < 0)
      for (std::int64_t i = 0; i < m; ++i) q[static_cast<std::size_t>(c) * M + static_cast<std::size_t>(i)] = -q[static_cast<std::size_t>(c) * M + static_cast<std::size_t>(i)];
  return q;
}

std::vector<double> usv_product(const std::vector<double>& u, const std::vector<double>& sigma, const std::vector<double>& v,
                                std::int64_t m, std::int64_t n, unsigned threads) {
  const auto r = static_cast<std::int64_t>(sigma.size());
  std::vector<double> a(static_cast<std::size_t>(m * n), 0.0);
  parallel_for(static_cast<std::uint64_t>(m), 4, [&](std::uint64_t b, std::uint64_t e, unsigned) {
    for (std::uint64_t i = b; i < e; ++i) {
      double* row = &a[i * static_cast<std::uint64_t>(n)];
      for (std::int64_t c = 0; c < r; ++c) {
        const double us = u[static_cast<std::size_t>(c * m) + i] * sigma[static_cast<std::size_t>(c)];
        const double* vc = &v[static_cast<std::size_t>(c * n)];
        for (std::int64_t j = 0; j < n; ++j) row[j] += us * vc[j];  // per entry: order c = 0..r-1
      }
    }
  }, threads);
  return a;
}

namespace detail {
namespace {

constexpr std::uint32_t kSpectralId = 13;
constexpr std::int64_t kMaxSpectralDim = 4096;

/// One operand rows x cols = U diag(sigma) V^T, rounded into src; records the rounding's
/// Frobenius norm (a bound on every singular value's shift, by Weyl's theorem).
void spectral_operand(Matrix& out, const Format& src, int mode, double cond, std::uint64_t seed, std::uint32_t op,
                      const GenContext& ctx, std::map<std::string, double>& achieved, const std::string& suf) {
  const std::int64_t rows = out.rows, cols = out.cols, r = std::min(rows, cols);
  const std::vector<double> sigma = latm1_sigma(mode, cond, r, stream_for(seed, kSpectralId, op + 2));
  const std::vector<double> u = haar_orthonormal(rows, r, stream_for(seed, kSpectralId, op), ctx.threads);
  const std::vector<double> v = haar_orthonormal(cols, r, stream_for(seed, kSpectralId, op + 1), ctx.threads);
  const std::vector<double> a = usv_product(u, sigma, v, rows, cols, ctx.threads);
  double frob2 = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    out.data[i] = to_source(src, a[i]);
    const double d = out.data[i] - a[i];
    frob2 += d * d;
  }
  const double delta = std::sqrt(frob2);
  const double smax = *std::max_element(sigma.begin(), sigma.end()), smin = *std::min_element(sigma.begin(), sigma.end());
  achieved["sigma_max" + suf] = smax;
  achieved["sigma_min" + suf] = smin;
  achieved["rounding_frobenius" + suf] = delta;
  achieved["cond_lower" + suf] = (smax - delta) / (smin + delta);
  if (smin > delta) achieved["cond_upper" + suf] = (smax + delta) / (smin - delta);
}

void make_spectral(const ParsedSpec& ps, Problem& p, const GenContext& ctx) {
  const auto mode = static_cast<int>(ps.integer("mode"));
  const double cond = ps.real("cond");
  const bool b_spectral = ps.choice("b") == "spectral";
  for (const char* d : {"m", "k"})
    if (ps.integer(d) > kMaxSpectralDim) ps.fail(std::string("field '") + d + "' = " + ps.text(d) + " exceeds " + std::to_string(kMaxSpectralDim) + " (the QR is O(n^3))");
  if (b_spectral && ps.integer("n") > kMaxSpectralDim)
    ps.fail("field 'n' = " + ps.text("n") + " exceeds " + std::to_string(kMaxSpectralDim) + " with b=spectral");
  set_gemm_shape(ps, p);
  spectral_operand(p.a, *p.source, mode, cond, p.seed, kOpA, ctx, p.achieved, "_a");
  if (b_spectral) {
    spectral_operand(p.b, *p.source, mode, cond, p.seed, kOpB, ctx, p.achieved, "_b");
  } else {
    const Stream s = stream_for(p.seed, kSpectralId, kOpB);
    fill_source(p.b, *p.source, ctx, [&](std::uint64_t i) { return normal(s, i); });
  }
  p.achieved["requested_cond"] = cond;
  p.achieved["requested_mode"] = mode;
}

}  // namespace

std::vector<Family> spectral_families() {
  GeneratorInfo g;
  g.name = "spectral";
  g.summary = "A = U diag(sigma) V^T with Haar-random orthonormal U, V and sigma from LAPACK xLATM1's mode for condition number cond";
  g.details = "Modes: 1 one large, 2 one small, 3 geometric, 4 arithmetic, 5 log-uniform (ends pinned); sigma_max = 1. "
              "Rounding into the source moves every singular value by at most rounding_frobenius_a (Weyl), which "
              "achieved reports with the resulting bounds on cond. B is N(0,1) or a second spectral matrix.";
  g.reference = "LAPACK xLATM1 (MODE 1-5, COND); F. Mezzadri, Notices AMS 54(5), 2007 (Haar via QR with signs fixed)";
  g.params = p_shape(64, 64, 64);
  g.params.push_back(p_int("mode", 3, 1, 5, "xLATM1 mode: 1 one large, 2 one small, 3 geometric, 4 arithmetic, 5 log-uniform"));
  g.params.push_back(p_real("cond", 1e4, 1, 1e300, "condition number sigma_max / sigma_min"));
  g.params.push_back(p_choice("b", "normal", {"normal", "spectral"}, "B: N(0,1) entries, or U' diag(sigma) V'^T like A"));
  g.params.push_back(p_seed());
  g.params.push_back(p_source());
  return {{g, make_spectral}};
}

}  // namespace detail
}  // namespace fpcert
