// oracle/attention/attention_bwd_mp.hpp — internal to oracle/attention/: the MPFR path of the attention backward
// reference (Ziv's precision loop, oracle/attention/attention_bwd_ref.cpp; docs/backward.md, "Attention backward",
// "Reference"): L_i, D_i, P_ij and x_ij = dP_ij - D_i at p bits with error bounds as coefficients of 2^-p, the output sums,
// and the bracket's rounding test. Every rounding counted only where MPFR reports it inexact.
#pragma once

#include <cstdint>
#include <vector>

#include "oracle/attention/attention_bwd_ref.hpp"
#include "oracle/mpfr_ref.hpp"

namespace fpcert::abwd_mp {

using mpfr_ref::Mpfr;

/// L_i at p + 64 bits (err: coefficient of 2^-p) and D_i.
struct MpQRow {
  explicit MpQRow(long p) : l(p + 64), d(p + 64) {}
  Mpfr l, d;
  double l_err = 0, d_err = 0;
  bool single = false;  ///< as QRow::single: P = 1, dS = 0 exactly
};

/// P_ij at p bits (eps: its relative error, coefficient of 2^-p) and x = dP - D at p + 64 (xerr, absolute, of 2^-p).
/// The argument z - L at p + 64 bits errs by 2^-62 (|s x| + |mask| + |z| + |z - L|) 2^-p plus L's error: e^{that} - 1.
struct MpPair {
  explicit MpPair(long p) : pv(p), x(p + 64) {}
  Mpfr pv, x;
  double eps = 0, xerr = 0;
};
bool mp_pair(const AttentionBwdInputs& in, std::int64_t r, std::int64_t j, const MpQRow& row, long p, MpPair& out, Mpfr* dp_out = nullptr);
/// L_i and D_i of query row r at p bits.
void mp_row_stats(const AttentionBwdInputs& in, std::int64_t r, long p, MpQRow& row);
/// v +- err 2^-p both rounded into out: true when they agree (code holds it; an exact 0 is +0).
bool settles(const Format& out, const Mpfr& v, double err, long p, std::uint64_t& code);
/// One term of an MPFR output sum: a (at p bits, error aerr of 2^-p) times the exact b.
struct MpTerm {
  const Mpfr* a;
  double aerr;
};

/// s sum_t a_t b_t at p bits (exact products, one rounding, the scale one more), err a coefficient of 2^-p.
void mp_sum(const std::vector<MpTerm>& terms, const std::vector<double>& b, double s, long p, Mpfr& res, double& err);
/// dS = P x at p bits from a pair; returns its error (of 2^-p).
double mp_ds(const MpPair& pr, Mpfr& ds);

}  // namespace fpcert::abwd_mp
