// generators/spectral.hpp — matrices with a prescribed singular spectrum: U diag(sigma) V^T.
//
// Written in plain scalar loops in a fixed operation order, not with Eigen's decompositions:
// Eigen's blocking depends on runtime cache sizes and SIMD width, so its bits differ between
// machines, and a spec must give the same bits everywhere. Eigen's JacobiSVD checks the result
// in tests/generators/spectral_test.cpp.
#pragma once

#include <cstdint>
#include <vector>

#include "generators/rng.hpp"

namespace fpcert {

/// The r singular values of LAPACK xLATM1's mode 1-5 for condition number cond (>= 1), largest 1:
///   1: sigma_1 = 1, the others 1/cond                  (one large)
///   2: sigma_r = 1/cond, the others 1                  (one small)
///   3: sigma_i = cond^(-(i-1)/(r-1))                   (geometric)
///   4: sigma_i = 1 - (i-1)/(r-1) (1 - 1/cond)          (arithmetic)
///   5: log-uniform in [1/cond, 1]: sigma_i = cond^(-u_i), u_i uniform from `s` (draw i); unlike
///      xLATM1, sigma_1 = 1 and sigma_r = 1/cond are pinned so the requested cond is met.
/// 1/cond is one IEEE division; powers use detmath. r == 1 gives {1}.
std::vector<double> latm1_sigma(int mode, double cond, std::int64_t r, const Stream& s);

/// An m x r (m >= r) matrix with orthonormal columns, distributed as the first r columns of a
/// Haar-random orthogonal matrix: Householder QR of an m x r standard Gaussian matrix G (entry
/// (i, j) = normal(s, i + j m)), Q's columns multiplied by the signs of R's diagonal (Mezzadri,
/// How to generate random matrices from the classical compact groups, Notices AMS 54, 2007).
/// Column-major. `threads` only splits independent columns: the bits do not depend on it.
std::vector<double> haar_orthonormal(std::int64_t m, std::int64_t r, const Stream& s, unsigned threads = 0);

/// U diag(sigma) V^T (U m x r, V n x r, column-major) as a row-major m x n matrix; entry (i, j)
/// is sum_c (U_ic sigma_c) V_jc accumulated in order c = 0, 1, ..., r-1.
std::vector<double> usv_product(const std::vector<double>& u, const std::vector<double>& sigma, const std::vector<double>& v,
                                std::int64_t m, std::int64_t n, unsigned threads = 0);

}  // namespace fpcert
