// generators/detmath.hpp — deterministic elementary functions: the same bits on every machine.
//
// Generators must reproduce a problem bit for bit from its spec string on any machine, so they
// cannot call libm's log/exp (whose last bits differ between libm versions and CPUs). These
// functions use only IEEE 754 basic operations (+, -, *, /, sqrt, exact scaling by powers of two
// and exact integer/bit manipulation) in a fixed order, with no library call whose result could
// vary. The build compiles them with -ffp-contract=off (no fused multiply-add contraction) and
// refuses -ffast-math (detmath.cpp has an #error), so the operation sequence is the one written.
//
// Accuracy (tests/generators/detmath_test.cpp, against MPFR at 256 bits): det_log and det_exp are
// within 0.7 ulp (half an ulp from the one final rounding, the rest from small terms; measured
// 0.59 and 0.64), det_exp's subnormal results within 1.5 ulps of 2^-1074, det_log2 within 3.4 ulps
// (measured 1.3), det_pow's relative error below (|y log x| + 2) 2^-52.
#pragma once

namespace fpcert {

/// Natural logarithm. x < 0 or NaN: NaN; 0: -Inf; +Inf: +Inf.
double det_log(double x);
/// e^x. Overflow gives +Inf, underflow 0 (subnormal results are rounded once more by the final
/// scaling, which is exact IEEE scaling, hence still deterministic).
double det_exp(double x);
/// log2(x) = log(x) / ln 2 (exact for powers of two).
double det_log2(double x);
/// x^y for x > 0 as exp(y * log(x)); x == 0 gives 0 for y > 0.
double det_pow(double x, double y);

}  // namespace fpcert
