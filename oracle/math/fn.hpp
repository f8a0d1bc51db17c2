// oracle/math/fn.hpp — the elementwise functions the oracle rounds correctly (issue 42), by family. Plain enums and
// constexpr predicates: host and device code (oracle/math/eltwise_ref.hpp) dispatch on them.
#pragma once

#include <cstdint>

namespace fpcert::math {

enum class Fn : std::uint8_t { Exp, Exp2, Exp10, Log, Log2, Log10, Sqrt, Rsqrt, Expm1, Log1p, Tanh, Sinh, Cosh, Cbrt, Erf, Erfc,
                                 Sigmoid, Silu, Softplus, GeluErf, GeluTanh, Sin, Cos, Tan, Sinpi, Cospi,
                                 Div, Pow, Atan2, Fmax, Fmin };
inline constexpr Fn kExpFns[] = {Fn::Exp, Fn::Exp2, Fn::Exp10};
inline constexpr Fn kLogFns[] = {Fn::Log, Fn::Log2, Fn::Log10};
inline constexpr Fn kRootFns[] = {Fn::Sqrt, Fn::Rsqrt};  ///< decided exactly (oracle/math/root_kernel.hpp): no MPFR
inline constexpr Fn kNearZeroFns[] = {Fn::Expm1, Fn::Log1p};  ///< f(x) ~ x near 0 (oracle/math/expm1_log1p_kernel.hpp)
inline constexpr Fn kAllFns[] = {Fn::Exp,  Fn::Exp2,  Fn::Exp10, Fn::Log,   Fn::Log2, Fn::Log10,
                                 Fn::Sqrt, Fn::Rsqrt, Fn::Expm1, Fn::Log1p, Fn::Tanh, Fn::Sinh, Fn::Cosh,
                                 Fn::Cbrt, Fn::Erf,  Fn::Erfc,  Fn::Sigmoid, Fn::Silu, Fn::Softplus, Fn::GeluErf, Fn::GeluTanh,
                                 Fn::Sin,  Fn::Cos,   Fn::Tan,   Fn::Sinpi,   Fn::Cospi};
/// Binary functions z = f(x1, x2) (oracle/math/binary.hpp: MPFR, IEEE 754 9.2 special values; docs/elementwise.md,
/// "Binary functions"): atan2 reads (x1, x2) as C's atan2(y, x). Not in kAllFns (the unary oracle's list): every unary
/// entry point refuses them; the host check decides them pair by pair, no device reference.
inline constexpr Fn kBinaryFns[] = {Fn::Div, Fn::Pow, Fn::Atan2, Fn::Fmax, Fn::Fmin};
constexpr bool is_binary(Fn f) { return f == Fn::Div || f == Fn::Pow || f == Fn::Atan2 || f == Fn::Fmax || f == Fn::Fmin; }
constexpr int arity(Fn f) { return is_binary(f) ? 2 : 1; }
/// The activations kernels use (oracle/math/activations.cpp: MPFR with a proved bound; docs/elementwise.md, "Activations").
inline constexpr Fn kActivationFns[] = {Fn::Sigmoid, Fn::Silu, Fn::Softplus, Fn::GeluErf, Fn::GeluTanh};
constexpr bool is_activation(Fn f) {
  return f == Fn::Sigmoid || f == Fn::Silu || f == Fn::Softplus || f == Fn::GeluErf || f == Fn::GeluTanh;
}
/// Functions without a fast path yet (docs/elementwise.md, "cbrt, erf, erfc"): special values and clamps first, then MPFR's
/// Ziv loop decides every input, on the host only. ref_rn answers "undecided" for them, so the device sweep cannot run them.
inline constexpr Fn kMpfrOnlyFns[] = {Fn::Cbrt, Fn::Erf, Fn::Erfc};
/// sin, cos, tan, sinpi, cospi: MPFR only (its own argument reduction is exact for every fp32 input; docs/elementwise.md,
/// "Trigonometric functions").
inline constexpr Fn kTrigFns[] = {Fn::Sin, Fn::Cos, Fn::Tan, Fn::Sinpi, Fn::Cospi};
constexpr bool is_trig(Fn f) { return f == Fn::Sin || f == Fn::Cos || f == Fn::Tan || f == Fn::Sinpi || f == Fn::Cospi; }
constexpr bool is_mpfr_only(Fn f) { return f == Fn::Cbrt || f == Fn::Erf || f == Fn::Erfc || is_activation(f) || is_trig(f); }
/// Whether ref_rn (oracle/math/eltwise_ref.hpp) decides f on the device: every function with a fast path, and cbrt, which
/// the host's evaluate() still leaves to MPFR (every rounding mode) but whose nearest-even result the exact midpoint test
/// decides (cbrt_ref_rn): the device sweep runs where this holds.
constexpr bool has_device_ref(Fn f) { return (!is_mpfr_only(f) || f == Fn::Cbrt) && !is_binary(f); }
constexpr bool is_exp(Fn f) { return f == Fn::Exp || f == Fn::Exp2 || f == Fn::Exp10; }
constexpr bool is_log(Fn f) { return f == Fn::Log || f == Fn::Log2 || f == Fn::Log10; }
constexpr bool is_root(Fn f) { return f == Fn::Sqrt || f == Fn::Rsqrt; }
/// Functions defined on x >= 0 only (NaN below): the samplers draw positive inputs for them.
constexpr bool positive_domain(Fn f) { return is_log(f) || is_root(f); }

}  // namespace fpcert::math
