// tests/support/mpfr_to_ref.hpp — an MPFR value as the oracle's RefValue, computed by MPFR alone (the tests'
// independent path to hi, lo and the tail's sign).
#pragma once

#include <mpfr.h>

#include <cstdint>

#include "oracle/mpfr_ref.hpp"
#include "oracle/refvalue.hpp"

namespace fpcert::test {

/// hi = RN(s), lo = RN(s - hi), tail = sign(s - hi - lo) of an MPFR value that is exact (or rounded to odd at a
/// precision thousands of bits beyond hi + lo, which decides the same three).
inline RefValue mpfr_to_ref(mpfr_srcptr s) {
  if (mpfr_zero_p(s)) return {};
  mpfr_ref::Mpfr t(mpfr_get_prec(s) + 64);
  RefValue v;
  v.hi = mpfr_get_d(s, MPFR_RNDN);
  mpfr_sub_d(t, s, v.hi, MPFR_RNDN);
  v.lo = mpfr_get_d(t, MPFR_RNDN);
  mpfr_sub_d(t, t, v.lo, MPFR_RNDN);
  v.tail = static_cast<std::int8_t>(mpfr_sgn(t.get()));
  return v;
}

}  // namespace fpcert::test
