// oracle/attention/attention_bwd_bound.hpp — the per-element error bound of an attention backward kernel from its
// declared arithmetic (docs/backward.md, "Attention backward", "Bound"): the componentwise forward error analysis of
// Higham (2002, ch. 3: gamma_n of each accumulation) carried through the backward of Dao (2023, FlashAttention-2,
// Algorithm 2) as Budzinskiy et al. (2025) do for the forward: P recomputed from the LSE (the QK^T GEMM's error — a
// coefficient and an absolute term that suites/ computes from the GEMM's KernelTraits with make_envelope — the scale's
// rounding or the folded fma with RN(s log2 e) and RN(LSE RN(log2 e)), the exp's documented error), dP's GEMM error,
// D's accumulation, dP - D and the product with P in the compute format, P and dS rounded into the GEMMs' input formats,
// the three output GEMMs' accumulation (dQ's partials added in dq_acc: any order), the scale and the output rounding.
// Every term is an absolute bound on the element, data dependent (sums of |P| |dO|, |dS| |k| ...); the total is their
// sum, each second-order product kept. No dependency on kernels/ or suites/: plain numbers in AttentionBwdArith.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "oracle/attention/attention_bound.hpp"
#include "oracle/attention/attention_bwd_ref.hpp"

namespace fpcert {

/// What the bound reads of a backward kernel (the suite fills it from AttentionBwdTraits).
struct AttentionBwdArith {
  double qk_coef = 0, qk_abs = 0;    ///< |S^ - x| <= qk_coef sum_c |q k| + qk_abs
  double dov_coef = 0, dov_abs = 0;  ///< dP = dO V^T
  double pdo_coef = 0, pdo_abs = 0;  ///< dV = P^T dO (relative to sum |P^| |dO|)
  double dsk_coef = 0, dsk_abs = 0;  ///< dQ = dS K
  double dsq_coef = 0, dsq_abs = 0;  ///< dK = dS^T Q
  bool base2 = false;                ///< exp2(fma(x, RN(s log2 e), -RN(LSE RN(log2 e)))) (else exp(RN(s x) + mask - LSE))
  ElemFnError exp;
  const Format* compute = &f32;
  const Format* d_acc = &f32;        ///< D's accumulator (head_dim products, any order)
  const Format* p_format = &f32;     ///< P before dV's GEMM
  const Format* ds_q = &f32;         ///< dS before dQ's GEMM
  const Format* ds_k = &f32;         ///< dS before dK's GEMM
  const Format* dq_acc = &f32;       ///< dQ's partials added in it (any order when coarser than the GEMM's accumulator)
  bool dq_acc_extra = false;         ///< dq_acc coarser than dsk's accumulator: gamma_{len_k}(dq_acc) more
  const Format* dq_out = &f16;
  const Format* dk_out = &f16;
  const Format* dv_out = &f16;
  bool reads_saved = true;           ///< false: P from the kernel's own softmax (its normalisation's error added)
};

/// Which output: dQ (query rows), dK or dV (key/value rows).
enum class AttentionGrad : std::uint8_t { Dq, Dk, Dv };

/// A query row as the bound reads it: L (the saved LSE, or the exact forward's), D and the kernel's error on D.
struct AttentionBwdRowStats {
  bool masked = true, bad = false;
  double l = 0, d = 0, e_d = 0;
  double amax = 0, emax = 0;  ///< reads_saved = false: the row's largest argument error and exp error (its normalisation)
};
/// Every query row's (rows in parallel; threads 0: every core).
std::vector<AttentionBwdRowStats> attention_bwd_row_stats(const AttentionBwdArith& a, const AttentionBwdInputs& in, unsigned threads = 0);

/// The bounds of every element of one output row (head_dim values): bound[c] >= |got_c - exact_c| for a kernel of the
/// declared arithmetic. dQ: query row r; dK, dV: key/value row r. +Inf where no bound applies (a P beyond e^700).
void attention_bwd_row_bound(const AttentionBwdArith& a, const AttentionBwdInputs& in, const std::vector<AttentionBwdRowStats>& stats,
                             AttentionGrad g, std::int64_t r, double* bound);

/// The bound of element (r, c) term by term, the total last.
std::vector<AttentionBoundTerm> attention_bwd_bound_terms(const AttentionBwdArith& a, const AttentionBwdInputs& in,
                                                          const std::vector<AttentionBwdRowStats>& stats, AttentionGrad g, std::int64_t r,
                                                          std::int64_t c);

}  // namespace fpcert
