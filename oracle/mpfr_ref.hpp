// oracle/mpfr_ref.hpp — ground truth for rounding: MPFR, written apart from the fast path.
//
// Nearest-even, toward zero, up and down go through MPFR's own recipe for an emulated format
// (mpfr_set, mpfr_check_range, mpfr_subnormalize with the format's emin and emax). Nearest-
// away and stochastic rounding are built from the toward-zero and away-from-zero results and
// an exact comparison of the distances (MPFR has no stochastic mode). Overflow is decided by
// comparing the rounded value (unbounded exponent) with the largest finite value computed in
// MPFR from the descriptor. Encoding reads exponent and significand back out of MPFR.
#pragma once

#include <mpfr.h>

#include <cstdint>

#include "oracle/format.hpp"
#include "oracle/round.hpp"

namespace fpcert::mpfr_ref {

/// x = the exact value of a finite code. x's precision must be >= f.precision() (64 is enough
/// for every built-in format). Decodes f32/f64/f16/bf16 through the host's types
/// (mpfr_set_flt/mpfr_set_d, _Float16), other formats from the descriptor's fields.
void set_code(mpfr_ptr x, const Format& f, std::uint64_t code);

/// Round a finite value x (any precision, zero allowed) into d.
Rounded round(const Format& d, mpfr_srcptr x, const Rounder& r, std::uint32_t rbits = 0);

/// Convert a code of src into dst through MPFR (specials follow the same documented policy).
Rounded convert(const Format& src, std::uint64_t code, const Format& dst, const Rounder& r,
                std::uint32_t rbits = 0);

/// Largest finite value of d, computed in MPFR from the descriptor (precision 64).
void max_finite(mpfr_ptr out, const Format& d);

/// RAII holder for an mpfr_t.
class Mpfr {
 public:
  explicit Mpfr(mpfr_prec_t prec = 64) { mpfr_init2(v_, prec); }
  ~Mpfr() { mpfr_clear(v_); }
  Mpfr(const Mpfr&) = delete;
  Mpfr& operator=(const Mpfr&) = delete;
  mpfr_ptr get() { return v_; }
  mpfr_srcptr get() const { return v_; }
  operator mpfr_ptr() { return v_; }
  operator mpfr_srcptr() const { return v_; }

 private:
  mpfr_t v_;
};

}  // namespace fpcert::mpfr_ref
