// oracle/reduce/nrm2_scaled.hpp — the scaled nrm2 of LAPACK 3.10's reference BLAS (Blue's three accumulators,
// E. Anderson, Algorithm 978: Safe scaling in the Level 1 BLAS, ACM TOMS 44(1), 2017; J. L. Blue, ACM TOMS 4(1),
// 1978), emulated bit for bit in an accumulator format, and its per-element bound term by term
// (docs/reductions.md, "Scaled nrm2").
//
// The algorithm, with T_s, T_b, S_s, S_b the format's constants (blue_constants): every |x_i| > T_b goes into
// A_big += (|x_i| S_b)^2, every |x_i| < T_s into A_small += (|x_i| S_s)^2 while no big value has been seen, the
// rest into A_med += x_i^2 (a NaN fails both tests and lands in A_med), each sum sequential from +0. Then: with
// A_big > 0, A_big += (A_med S_b) S_b when A_med is positive, Inf or NaN, and the result is sqrt(A_big) / S_b;
// else with A_small > 0 and such an A_med, y = sqrt(A_med) and z = sqrt(A_small) / S_s, ymax and ymin the larger
// and smaller, and the result sqrt(ymax^2 (1 + (ymin / ymax)^2)); with A_small > 0 alone sqrt(A_small) / S_s;
// else sqrt(A_med). Every operation rounded once into the accumulator (the squares' additions fused when the
// arithmetic declares exact products); scalings by the powers of two S are exact unless they land in the
// subnormal range.
#pragma once

#include <cstddef>

#include "oracle/reduce/reduce_bound.hpp"
#include "oracle/reduce/reduce_order.hpp"

namespace fpcert {

/// Blue's thresholds and scalings for a format, as LAPACK 3.10 derives them from Fortran's model numbers
/// (minexponent = emin + 1, maxexponent = emax + 1, digits = p): T_s = 2^ceil((minexp - 1)/2),
/// T_b = 2^floor((maxexp - p + 1)/2), S_s = 2^-floor((minexp - p)/2), S_b = 2^-ceil((maxexp + p - 1)/2).
/// f32: 2^-63, 2^52, 2^75, 2^-76 (LAPACK's la_constants for single precision).
struct BlueConstants {
  double tsml, tbig, ssml, sbig;
};
BlueConstants blue_constants(const Format& f);

/// Which of the algorithm's final branches a vector takes.
enum class Nrm2Branch : std::uint8_t { Zero, Big, MediumAndSmall, Small, Medium, NonFinite };
std::string_view to_string(Nrm2Branch b);
/// The branch, from the data (the thresholds of arith.acc).
Nrm2Branch nrm2_scaled_branch(const double* x, std::size_t n, const Format& acc);

/// The scaled nrm2 of x in arith (acc at most 26 bits, inputs values of acc), a value of acc as a double.
double emulate_nrm2_scaled(const double* x, std::size_t n, const ReduceArith& arith);

/// The bound on |R_out(emulate_nrm2_scaled) - ||x|||, from the data (its branch and what it leaves out) and
/// the exact reference. Terms: the sums of squares through the square roots (gamma_h, h = n + 1 in the big
/// branch, n + 8 where medium and small values meet, n otherwise), the squares the big branch drops (every
/// |x_i| < T_s once a big value is present) and the roundings that can land in the subnormal range (the
/// medium sum scaled by S_b^2, (ymin / ymax)^2, z, the final division by S_s), the last square root, the output.
ReduceBound nrm2_scaled_bound(const double* x, std::size_t n, const ReduceArith& arith, const Format& out,
                              const Rounder& out_rounder, const ReduceRef& ref);

}  // namespace fpcert
