// suites/ops/gemm/alpha_beta.cpp — the exact D = alpha (A'B') + beta C and its per-element bound (derivation in the header).
#include "suites/ops/gemm/alpha_beta.hpp"

#include <cmath>
#include <limits>

#include "suites/ops/gemm/epilogue.hpp"

namespace fpcert {

namespace {

std::uint64_t splitmix64(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

std::vector<double> uniform_rounded(std::uint64_t seed, std::size_t count, double lo, double hi, const Format& f) {
  std::vector<double> v(count);
  std::uint64_t s = seed;
  const Rounder rn = Rounder::nearest(f);
  for (double& x : v) {
    const double u01 = static_cast<double>(splitmix64(s) >> 11) * 0x1p-53;  // [0, 1), 53 bits
    x = to_double(f, round_double(f, lo + (hi - lo) * u01, rn).code);
  }
  return v;
}

std::vector<double> rounded_into(const std::vector<double>& v, const Format& f, Rounding r) {
  std::vector<double> o(v.size());
  const Rounder rr{r, default_saturation(f), NanPayload::Preserve};
  for (std::size_t i = 0; i < v.size(); ++i) o[i] = to_double(f, round_double(f, v[i], rr).code);
  return o;
}

std::vector<double> alpha_beta_c(const AlphaBetaCase& ab, const Format& out, std::int64_t m, std::int64_t n) {
  if (ab.beta == 0) return std::vector<double>(static_cast<std::size_t>(m * n), std::numeric_limits<double>::quiet_NaN());
  return uniform_rounded(ab.c_seed, static_cast<std::size_t>(m * n), -1, 1, out);
}

double alpha_beta_scalar(double v, const KernelTraits& t) { return to_double(*t.acc, round_double(*t.acc, v, Rounder::nearest(*t.acc)).code); }

double alpha_beta_allowed(double alpha, double beta, double E, double ref_abs, double c_abs, double d_abs, double u, double eta,
                          double u_out, double eta_out) {
  const double aa = std::fabs(alpha), bb = beta == 0 ? 0.0 : std::fabs(beta) * c_abs;
  const double P = aa * (ref_abs + E) + bb;
  const double X = aa * E + (2 * u + u * u) * P + 2 * eta;
  // About a dozen operations on non-negative numbers, each within a relative 2^-53: 2^-48 covers them all.
  return (X + u_out * (d_abs + X) + eta_out / 2) * (1 + 0x1p-48);
}

void grade_alpha_beta(const AlphaBetaGrade& in, CaseResult& out) {
  // The epilogue without bias, activation or scales: one grader for both (suites/ops/gemm/epilogue.hpp).
  const EpilogueCase none;
  EpilogueGrade g;
  g.problem = in.problem;
  g.traits = in.traits;
  g.epilogue = &none;
  g.alpha = in.alpha;
  g.beta = in.beta;
  g.c = in.beta != 0 ? in.c : nullptr;
  g.codes = in.codes;
  g.unwritten = in.unwritten;
  g.first_unwritten = in.first_unwritten;
  grade_epilogue(g, out);
}

}  // namespace fpcert
