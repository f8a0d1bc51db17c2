// tests/oracle/norm/norm_bwd_bound_test.cpp — the LayerNorm / RMSNorm backward bound (oracle/norm/norm_bwd_bound.hpp)
// against an f32 evaluation of the formulas (PyTorch's order, the row sums sequential; with reads_saved = false the mean
// and rstd recomputed by two passes and 1/sqrt rounded to f32) on random rows: |computed - exact| <= bound for every dx,
// dgamma and dbeta, the bound below |exact| for most elements (not vacuous), and an f32 evaluation without the
// xh mean(g xh) term beyond it (not with recomputed statistics of rows whose mean >> spread: see below). The exact values come from oracle/norm/norm_bwd_ref (tested against MPFR apart).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "oracle/norm/norm_bwd_bound.hpp"
#include "oracle/norm/norm_bwd_ref.hpp"
#include "tests/support/splitmix.hpp"

namespace fpcert {
namespace {

using test::mix;
double unit(std::uint64_t i) { return test::unit(0, i); }

struct F32Backward {
  std::vector<float> dx, dgamma, dbeta;
};

/// The f32 evaluation (no_proj: the xh mean(g xh) term left out).
F32Backward evaluate(const NormBwdInputs& in, bool no_proj) {
  const auto n = static_cast<std::size_t>(in.cols);
  const bool ln = in.kind == NormKind::LayerNorm;
  F32Backward o;
  o.dx.resize(static_cast<std::size_t>(in.rows) * n), o.dgamma.assign(n, 0.0f), o.dbeta.assign(n, 0.0f);
  std::vector<float> xh(n), g(n);
  for (std::int64_t r = 0; r < in.rows; ++r) {
    const double* x = in.x + static_cast<std::size_t>(r) * n;
    const double* dy = in.dy + static_cast<std::size_t>(r) * n;
    float mean = ln ? static_cast<float>(in.mean[r]) : 0.0f, rstd = static_cast<float>(in.rstd[r]);
    if (!in.reads_saved) {
      float s = 0, q = 0;
      for (std::size_t j = 0; j < n; ++j) s += static_cast<float>(x[j]);
      mean = ln ? s / static_cast<float>(n) : 0.0f;
      for (std::size_t j = 0; j < n; ++j) q += (static_cast<float>(x[j]) - mean) * (static_cast<float>(x[j]) - mean);
      rstd = static_cast<float>(1.0 / std::sqrt(static_cast<double>(q / static_cast<float>(n) + static_cast<float>(in.eps))));
    }
    float a = 0, b = 0;
    for (std::size_t j = 0; j < n; ++j) {
      xh[j] = (static_cast<float>(x[j]) - mean) * rstd;
      g[j] = static_cast<float>(dy[j]) * static_cast<float>(in.gamma ? in.gamma[j] : 1.0);
      a += g[j], b += g[j] * xh[j];
      o.dgamma[j] += static_cast<float>(dy[j]) * xh[j];
      o.dbeta[j] += static_cast<float>(dy[j]);
    }
    const float inv_n = 1.0f / static_cast<float>(n);
    a = ln ? a * inv_n : 0.0f;
    b = no_proj ? 0.0f : b * inv_n;
    for (std::size_t j = 0; j < n; ++j) o.dx[static_cast<std::size_t>(r) * n + j] = rstd * ((g[j] - a) - xh[j] * b);
  }
  return o;
}

}  // namespace

TEST_CASE("norm backward bound: holds for an f32 evaluation, is not vacuous, and refuses a missing term") {
  for (const NormKind kind : {NormKind::LayerNorm, NormKind::RmsNorm})
    for (const bool saved : {true, false})
      for (int shape = 0; shape < 3; ++shape) {
        const std::int64_t rows = shape == 2 ? 512 : 16, cols = shape == 0 ? 33 : shape == 1 ? 1000 : 96;
        const auto n = static_cast<std::size_t>(cols);
        std::vector<double> x(static_cast<std::size_t>(rows) * n), dy(x.size()), gamma(n), mean(static_cast<std::size_t>(rows)),
            rstd(mean.size());
        std::uint64_t k = static_cast<std::uint64_t>(shape * 7 + saved * 3 + static_cast<int>(kind)) << 40;
        for (auto& v : gamma) {
          const double sign = unit(k++) < 0.5 ? -1 : 1;
          v = static_cast<float>(sign * (0.25 + 4 * unit(k++)));
        }
        for (auto& v : x) v = static_cast<float>((shape == 1 ? 100.0 : 0.0) + 2 * unit(k++) - 1);  // shape 1: mean >> spread
        for (auto& v : dy) v = static_cast<float>(2 * unit(k++) - 1);
        for (std::int64_t r = 0; r < rows; ++r)
          norm_saved_stats(kind, x.data() + static_cast<std::size_t>(r) * n, n, static_cast<float>(1e-5), &mean[static_cast<std::size_t>(r)],
                           &rstd[static_cast<std::size_t>(r)]);
        NormBwdInputs in;
        in.kind = kind, in.rows = rows, in.cols = cols, in.x = x.data(), in.dy = dy.data(), in.gamma = gamma.data();
        in.mean = mean.data(), in.rstd = rstd.data(), in.reads_saved = saved, in.eps = static_cast<float>(1e-5);
        const NormBwdRef ref = norm_bwd_reference(in, f32, f32, 2);
        NormBwdArith a;
        a.kind = kind, a.reads_saved = saved, a.eps = in.eps;
        std::vector<double> bound(x.size()), pg(n), pb(n);
        for (std::int64_t r = 0; r < rows; ++r) {
          const std::size_t at = static_cast<std::size_t>(r) * n;
          norm_bwd_dx_bounds(a, x.data() + at, dy.data() + at, gamma.data(), n, ref.rows[static_cast<std::size_t>(r)], bound.data() + at);
        }
        norm_bwd_param_bounds(a, x.data(), dy.data(), rows, cols, ref.rows, pg.data(), kind == NormKind::LayerNorm ? pb.data() : nullptr);
        const F32Backward ok = evaluate(in, false), bad = evaluate(in, true);
        CAPTURE(to_string(kind));
        CAPTURE(saved);
        CAPTURE(cols);
        std::size_t over = 0, vacuous = 0, caught = 0;
        double worst = 0;
        for (std::size_t e = 0; e < x.size(); ++e) {
          const double err = std::fabs(ok.dx[e] - ref.dx_value[e]);
          over += !(err <= bound[e]);
          worst = std::max(worst, err / bound[e]);
          vacuous += bound[e] >= std::fabs(ref.dx_value[e]);
          caught += !(std::fabs(bad.dx[e] - ref.dx_value[e]) <= bound[e]);
        }
        for (std::size_t j = 0; j < n; ++j) {
          over += !(std::fabs(ok.dgamma[j] - ref.dgamma_value[j]) <= pg[j]);
          if (kind == NormKind::LayerNorm) over += !(std::fabs(ok.dbeta[j] - ref.dbeta_value[j]) <= pb[j]);
          vacuous += pg[j] >= std::fabs(ref.dgamma_value[j]);
        }
        MESSAGE("worst dx error / bound " << worst << ", vacuous " << vacuous << " of " << x.size() + n);
        CHECK(over == 0);
        CHECK(vacuous < (x.size() + n) / 10);
        // Without the projection term dx is off by rstd xh_j B/n: beyond the bound for most elements. Not where a
        // LayerNorm recomputes the statistics of rows whose mean is 100 times their spread: the recomputed mean's bound
        // (gamma_{n-1} sum |x| / n for any order, about 6e-3 here) then covers an error of xh larger than the fault's
        // (docs/backward.md, "Not yet"); the same rows with saved statistics show it.
        if (saved || shape != 1 || kind == NormKind::RmsNorm) CHECK(caught > x.size() / 2);
      }
}

}  // namespace fpcert
