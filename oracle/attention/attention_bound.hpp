// oracle/attention/attention_bound.hpp — the per-element error bound of an attention kernel from its declared arithmetic
// (docs/attention.md, "Bound"): the forward error analysis of softmax by Blanchard, Higham and Higham (IMA J. Numer.
// Anal. 41(4), 2021) and of attention by Budzinskiy et al. (2025), made componentwise and data dependent with Higham's
// (2002) gamma_n: the QK^T dot products' error (a coefficient and an absolute term of the GEMM's declared arithmetic at
// depth head_dim: suites/ computes them from the GEMM's KernelTraits with make_envelope and passes plain numbers), the
// scale's rounding (natural form) or the folded fma form (exp2(fma(x, RN(s log2 e), -m2))), the exp's documented error,
// the online softmax's rescalings by exp(m_old - m_new) (one per key block: an exp error and a product rounding on O~
// and l), the row sum l (gamma_{n-1}, any order), P rounded into the second GEMM's input format (2^-p relative, half the
// least subnormal absolute), the PV GEMM's error relative to sum_j p_j |v_jc|, the final divide or reciprocal, the
// output rounding; and for the LSE the same perturbations through log, the max added back and the log's error. The
// bound is the exact product of the factors; each term is printed to first order beside it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "oracle/attention/attention_ref.hpp"
#include "oracle/format.hpp"
#include "oracle/softmax/softmax_bound.hpp"

namespace fpcert {

/// What the bound reads of an attention kernel (the suite fills it from AttentionTraits; plain numbers only).
struct AttentionArith {
  double qk_coef = 0, qk_abs = 0;  ///< |S^_j - x_j| <= qk_coef sum_c |q_c k_jc| + qk_abs (the QK GEMM at depth head_dim)
  double pv_coef = 0, pv_abs = 0;  ///< |O~_c - sum_j P^_j v_jc| <= pv_coef sum_j P^_j |v_jc| + pv_abs (depth len_k)
  bool base2 = false;              ///< AttentionExpForm::Base2Folded or Base2Scaled: exp2 (else Natural)
  bool scaled = false;             ///< AttentionExpForm::Base2Scaled: RN(RN(s x + mask) RN(log2 e)), no RN(mask / s)
  bool online = true;              ///< online softmax (key_block keys a block) or shifted (max first)
  bool rescale_by_difference = false;  ///< online: FlashAttention-2's factor exp2(RN(RN(m_old - m_new) c)) (AttentionTraits)
  int key_block = 64;
  ElemFnError exp;                 ///< exp (natural) or exp2 (base 2) in the compute format
  ElemFnError log;                 ///< the LSE's log
  const Format* compute = &f32;    ///< scores, probabilities, rescalings, the division
  const Format* sum_acc = &f32;    ///< l's accumulator
  const Format* p_format = &f32;   ///< P rounded into it before the PV GEMM (f32: not rounded)
  bool reciprocal = false;         ///< O = O~ RN(1 / l) (two roundings) instead of RN(O~ / l)
  double recip_ulps = 0.5;         ///< reciprocal: 1 / l within this many ulps (0.5: correctly rounded)
  bool p_normalized = false;       ///< each P_j = RN(e_j / l) in the compute format before P V (a rounding per probability)
  /// FP8 descale factors folded into the kernel's arithmetic (docs/attention.md, "FP8 and descale factors"): this many more
  /// relative roundings on the scores' scale and on the LSE's; descale_v: one more on the normalisation (RN(RN(1/l) dv)).
  int descale_roundings = 0;
  bool descale_v = false;
  int p_offset_log2 = 0;           ///< P formed as 2^k times the probability (a shift RN(m2 - k): one more rounding)
  const Format* out = &f16;
};

struct AttentionBoundTerm {
  std::string name;
  double value = 0;
  std::string law;
};

/// One query row's data: its scores (attention_scores), the mask row (null: none), the value rows v + j ldv (the kv
/// head's, head_dim entries each), the reference O (head_dim values) and LSE.
struct AttentionRowData {
  const AttentionScores* scores = nullptr;
  const double* mask = nullptr;
  const double* v = nullptr;
  std::int64_t ldv = 0, head_dim = 0;
  double scale = 1;
  const double* o = nullptr;
  double lse = 0;
};

/// bound[c] >= |O^_c - O_c| for c < head_dim, lse_bound >= |LSE^ - LSE|; +Inf where the bound does not apply (a
/// denominator whose lower bound is not positive). A fully masked or NaN row: 0 (its values are the declared specials).
void attention_row_bound(const AttentionArith& a, const AttentionRowData& row, double* bound, double& lse_bound);

/// The bound of element c (c = head_dim: the LSE), term by term to first order, the exact total last.
std::vector<AttentionBoundTerm> attention_bound_terms(const AttentionArith& a, const AttentionRowData& row, std::int64_t c);

/// sum_j p_j |v_jc| of the row (the bound's scale: a bound below 2^-4 of it is not vacuous).
double attention_abs_weight(const AttentionRowData& row, std::int64_t c);

std::string to_text(const std::vector<AttentionBoundTerm>& terms);

}  // namespace fpcert
