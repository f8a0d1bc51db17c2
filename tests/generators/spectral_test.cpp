// tests/generators/spectral_test.cpp — xLATM1 spectra against MPFR, the Householder Haar factors,
// and the generated matrices' singular values by Eigen's JacobiSVD.
#include <doctest/doctest.h>

#include <Eigen/Dense>
#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <sstream>

#include "generators/generate.hpp"
#include "generators/spectral.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;

namespace {

Eigen::MatrixXd to_eigen(const Matrix& m) {
  Eigen::MatrixXd e(m.rows, m.cols);
  for (std::int64_t i = 0; i < m.rows; ++i)
    for (std::int64_t j = 0; j < m.cols; ++j) e(i, j) = m(i, j);
  return e;
}

/// The requested spectrum of spectral's A, largest first, recomputed from the documented recipe.
std::vector<double> requested_sorted(int mode, double cond, std::int64_t r, std::uint64_t seed) {
  // stream of A's mode-5 draws: family 13, offset 2 (docs/generators.md, "Random streams")
  std::vector<double> s = latm1_sigma(mode, cond, r, Stream{seed, (13u << 8) + 2});
  std::sort(s.begin(), s.end(), std::greater<double>());
  return s;
}

}  // namespace

TEST_CASE("latm1_sigma: modes 1-5 against their definitions computed with MPFR") {
  const std::int64_t r = 37;
  for (double cond : {1.0, 10.0, 1e4, 1e8, 1e16}) {
    mpfr_t x, t;
    mpfr_init2(x, 200);
    mpfr_init2(t, 200);
    for (int mode = 1; mode <= 5; ++mode) {
      CAPTURE(mode);
      CAPTURE(cond);
      const Stream s{test::seed(), 77};
      const std::vector<double> d = latm1_sigma(mode, cond, r, s);
      REQUIRE(static_cast<std::int64_t>(d.size()) == r);
      CHECK(d.front() == 1.0);
      CHECK(d.back() == 1.0 / cond);
      for (std::int64_t i = 1; i + 1 < r; ++i) {
        const double ti = static_cast<double>(i) / static_cast<double>(r - 1);
        // exact value: mode 3 cond^(-t); mode 4 1 - t (1 - 1/cond); mode 5 cond^(-u_i); modes 1, 2 exact
        double u_i = 0;
        if (mode == 5) {
          const auto w = draw_words(s, static_cast<std::uint64_t>(i));
          u_i = u53(w[0], w[1]);
        }
        mpfr_set_d(x, cond, MPFR_RNDN);
        switch (mode) {
          case 1: mpfr_ui_div(x, 1, x, MPFR_RNDN); break;
          case 2: mpfr_set_ui(x, 1, MPFR_RNDN); break;
          case 3: mpfr_set_d(t, -ti, MPFR_RNDN); mpfr_pow(x, x, t, MPFR_RNDN); break;
          case 4: mpfr_ui_div(x, 1, x, MPFR_RNDN); mpfr_ui_sub(x, 1, x, MPFR_RNDN); mpfr_mul_d(x, x, ti, MPFR_RNDN); mpfr_ui_sub(x, 1, x, MPFR_RNDN); break;
          case 5: mpfr_set_d(t, -u_i, MPFR_RNDN); mpfr_pow(x, x, t, MPFR_RNDN); break;
        }
        const double exact = mpfr_get_d(x, MPFR_RNDN);
        // detmath: |t log cond| <= 37 for cond <= 1e16, an absolute error of 37 * 2^-52 in the
        // exponent, relative in the power; plus 2 ulps (log, exp); mode 4: 3 roundings.
        const double bound = (std::fabs((mode == 5 ? u_i : ti) * std::log(cond)) + 3) * 0x1p-52;
        CHECK(std::fabs(d[static_cast<std::size_t>(i)] - exact) <= bound * exact);
      }
    }
    mpfr_clear(x);
    mpfr_clear(t);
  }
}

TEST_CASE("haar_orthonormal: orthonormal columns - Q^T G upper triangular with a positive diagonal") {
  const std::int64_t m = 40, r = 25;
  const Stream s{test::seed(), 3};
  const std::vector<double> q = haar_orthonormal(m, r, s, 1);
  Eigen::Map<const Eigen::MatrixXd> Q(q.data(), m, r);
  Eigen::MatrixXd G(m, r);
  for (std::int64_t j = 0; j < r; ++j)
    for (std::int64_t i = 0; i < m; ++i) G(i, j) = normal(s, static_cast<std::uint64_t>(i + j * m));
  // Householder QR is backward stable: ||Q^T Q - I|| and ||Q^T G - R|| are O(m u); 100 m u is a
  // generous margin (m u = 40 * 1.1e-16).
  const double tol = 100 * m * 0x1p-53;
  CHECK((Q.transpose() * Q - Eigen::MatrixXd::Identity(r, r)).cwiseAbs().maxCoeff() < tol);
  const Eigen::MatrixXd R = Q.transpose() * G;
  for (std::int64_t j = 0; j < r; ++j) {
    CHECK(R(j, j) > 0);  // the sign fix of Mezzadri's recipe
    for (std::int64_t i = j + 1; i < r; ++i) CHECK(std::fabs(R(i, j)) < tol * G.norm());
  }
  // Bits do not depend on the thread count.
  CHECK(haar_orthonormal(m, r, s, 2) == q);
}

TEST_CASE("haar_orthonormal: first entry has the Haar moments E q = 0 and E q^2 = 1/m") {
  const std::int64_t m = 6;
  const int N = 4000;
  double s1 = 0, s2 = 0;
  for (int t = 0; t < N; ++t) {
    const std::vector<double> q = haar_orthonormal(m, m, Stream{test::seed() + static_cast<std::uint64_t>(t), 5}, 1);
    s1 += q[0];
    s2 += q[0] * q[0];
  }
  // q_11 of a Haar matrix: mean 0, E q^2 = 1/m, Var(q^2) = 2(m-1)/(m^2 (m+2)); 5 sigma.
  const double var_q2 = 2.0 * (m - 1) / (m * m * (m + 2.0));
  CHECK(std::fabs(s1 / N) < 5 * std::sqrt(1.0 / m / N));
  CHECK(std::fabs(s2 / N - 1.0 / m) < 5 * std::sqrt(var_q2 / N));
}

// The requirement "within 1e-10 relative of the requested spectrum for cond <= 1e8" is checked
// normwise, relative to sigma_max: every singular value moves by at most the norm of the
// perturbation (Weyl), which is ~m u sigma_max for the f64 product U diag(sigma) V^T and ~u_f32
// ||A||_F after rounding to f32. A componentwise relative bound on sigma_min cannot hold: a
// perturbation of 1e-16 sigma_max is 1e-8 sigma_min at cond = 1e8 (the printed table shows it).
TEST_CASE("spectral: JacobiSVD singular values match the requested spectrum (f64 within 1e-10 sigma_max)") {
  std::ostringstream table;
  table << "spectral f64 48x32: max |sigma_i - requested_i| / sigma_max, and / requested_i (componentwise)\n";
  const std::uint64_t seed = test::seed();
  for (int mode = 1; mode <= 5; ++mode) {
    for (double cond : {1.0, 1e2, 1e4, 1e6, 1e8}) {
      const std::string spec = "spectral:m=48,n=3,k=32,mode=" + std::to_string(mode) + ",cond=" + canonical_real(cond) +
                               ",seed=" + std::to_string(seed) + ",source=f64";
      CAPTURE(spec);
      const Problem p = generate(spec);
      const Eigen::JacobiSVD<Eigen::MatrixXd> svd(to_eigen(p.a));
      const Eigen::VectorXd sv = svd.singularValues();  // descending
      const std::vector<double> req = requested_sorted(mode, cond, 32, seed);
      double norm_err = 0, comp_err = 0;
      for (int i = 0; i < 32; ++i) {
        norm_err = std::max(norm_err, std::fabs(sv(i) - req[static_cast<std::size_t>(i)]) / req[0]);
        comp_err = std::max(comp_err, std::fabs(sv(i) - req[static_cast<std::size_t>(i)]) / req[static_cast<std::size_t>(i)]);
      }
      CHECK(norm_err <= 1e-10);
      char buf[128];
      std::snprintf(buf, sizeof buf, "mode %d cond %-6g: normwise %.2e  componentwise %.2e\n", mode, cond, norm_err, comp_err);
      table << buf;
    }
  }
  MESSAGE(table.str());
}

TEST_CASE("spectral: f32 source moves each singular value by at most the rounding's Frobenius norm (Weyl)") {
  for (double cond : {1e2, 1e8}) {
    const std::string spec = "spectral:m=40,n=4,k=40,mode=3,cond=" + canonical_real(cond) + ",seed=" + std::to_string(test::seed());
    CAPTURE(spec);
    const Problem p = generate(spec);
    const Eigen::VectorXd sv = Eigen::JacobiSVD<Eigen::MatrixXd>(to_eigen(p.a)).singularValues();
    const std::vector<double> req = requested_sorted(3, cond, 40, test::seed());
    const double delta = p.achieved.at("rounding_frobenius_a");
    // The f64 product's own error (~m u sigma_max, 1e-12 is ample) is added to the rounding's norm.
    for (int i = 0; i < 40; ++i) CHECK(std::fabs(sv(i) - req[static_cast<std::size_t>(i)]) <= delta + 1e-12);
    CHECK(delta > 0);       // f32 really rounded
    CHECK(delta < 1e-6);    // ||E||_F <= 2^-24 ||A||_F = 2^-24 ||sigma||_2 <= 2^-24 sqrt(40)
    const double c = sv(0) / sv(39);
    CHECK(c >= p.achieved.at("cond_lower_a") * (1 - 1e-9));
    if (p.achieved.count("cond_upper_a")) CHECK(c <= p.achieved.at("cond_upper_a") * (1 + 1e-9));
  }
}

TEST_CASE("spectral: b=spectral gives B the same spectrum - rectangular shapes use min(rows cols) values") {
  const Problem p = generate("spectral:m=10,n=30,k=20,mode=4,cond=100,b=spectral,seed=4,source=f64");
  const Eigen::VectorXd sa = Eigen::JacobiSVD<Eigen::MatrixXd>(to_eigen(p.a)).singularValues();
  const Eigen::VectorXd sb = Eigen::JacobiSVD<Eigen::MatrixXd>(to_eigen(p.b)).singularValues();
  REQUIRE(sa.size() == 10);
  REQUIRE(sb.size() == 20);
  CHECK(sa(0) == doctest::Approx(1).epsilon(1e-12));
  CHECK(sa(9) == doctest::Approx(0.01).epsilon(1e-10));
  CHECK(sb(0) == doctest::Approx(1).epsilon(1e-12));
  CHECK(sb(19) == doctest::Approx(0.01).epsilon(1e-10));
}
