// suites/mutation/faults.cpp — the fault catalogue (docs/mutation.md).
#include "suites/mutation/faults.hpp"

#include <cmath>
#include <fmt/format.h>

#include <stdexcept>

#include "suites/verdict/bound.hpp"
#include "suites/verdict/envelope.hpp"

namespace fpcert {

std::string_view to_string(FaultClass c) {
  switch (c) {
    case FaultClass::Output: return "output";
    case FaultClass::Arithmetic: return "arithmetic";
    case FaultClass::Data: return "data";
    case FaultClass::Memory: return "memory";
    case FaultClass::Determinism: return "determinism";
  }
  return "?";
}

namespace {

// A wrong value is refused by an accuracy check: whichever tier the kernel's declarations allow (spread: a kernel
// declaring run-to-run nondeterminism whose later run leaves an order-free element's one value).
const std::vector<CheckKind> kAccuracy = {CheckKind::Bitwise, CheckKind::Envelope, CheckKind::Statistical, CheckKind::Spread};

const std::vector<FaultInfo>& catalogue() {
  static const std::vector<FaultInfo> c = {
      {Fault::OutputUlp, "out_ulp", FaultClass::Output, "one output element one ulp further from zero",
       "after the call, C[m/2][n/2] becomes the next code away from zero (the largest finite value steps back)", kAccuracy,
       "an accuracy check exact to one output ulp (the bitwise tier)"},
      {Fault::ZeroRow, "zero_row", FaultClass::Output, "the last row of C written as zeros",
       "after the call, C[m-1][*] = +0", kAccuracy, "a case whose last row of C is not already zero"},
      {Fault::ZeroColumn, "zero_col", FaultClass::Output, "the last column of C written as zeros",
       "after the call, C[*][n-1] = +0", kAccuracy, "a case whose last column of C is not already zero"},
      {Fault::DropLastProduct, "k_minus_1", FaultClass::Arithmetic, "K - 1 products: the last product along K left out",
       "the kernel runs on A with column K-1 set to +0 (a product of zero adds nothing)", kAccuracy,
       "a case where the last product matters beyond the bound"},
      {Fault::TransposedB, "transposed_b", FaultClass::Data, "B read as if stored transposed",
       "the kernel runs on B'(p, j) = element j*K + p of B's row-major sequence (column-major reading, ld = K)", kAccuracy,
       "any case with K, N > 1"},
      {Fault::LdaIgnored, "lda_ignored", FaultClass::Data, "A read with leading dimension K instead of lda",
       "the kernel runs on A'(i, p) = the element at offset i*K + p of A's buffer (padding included)", kAccuracy,
       "a case with lda > K (A padded)"},
      {Fault::TailTile, "tail_tile", FaultClass::Data, "the partial last tile of 16 rows of A / columns of B loads zeros",
       "the kernel runs on A with rows >= 16 floor(M/16) and B with columns >= 16 floor(N/16) set to +0", kAccuracy,
       "a case with M or N not a multiple of 16"},
      {Fault::PrecisionSwitch, "precision_switch", FaultClass::Arithmetic,
       "past k = 256 the operands lose half their significand bits",
       "the kernel runs on A[:, k >= 256] and B[k >= 256, :] rounded (nearest) to the storage format with half its fraction bits",
       kAccuracy, "a case with K > 256"},
      {Fault::AccF16, "acc_f16", FaultClass::Arithmetic, "partial sums carried in fp16 (its precision and its range)",
       "the kernel computes each K-chunk (the shortest K it supports); the partials are summed on the host with acc = "
       "RN_f16(acc + partial)",
       {CheckKind::Bitwise, CheckKind::Envelope, CheckKind::Statistical, CheckKind::Spread, CheckKind::Nonfinite},
       "any case with K longer than one chunk"},
      {Fault::AccF32, "acc_f32", FaultClass::Arithmetic, "partial sums carried in fp32 (an fp32 accumulator passed off as fp64)",
       "as acc_f16, with acc = RN_f32(acc + partial)", kAccuracy, "any case with K longer than one chunk"},
      {Fault::AccBf16, "acc_bf16", FaultClass::Arithmetic, "partial sums carried in bf16",
       "as acc_f16, with acc = RN_bf16(acc + partial)", kAccuracy, "any case with K longer than one chunk"},
      {Fault::AccTowardZero, "acc_rz", FaultClass::Arithmetic, "accumulation rounds toward zero",
       "as acc_f16, with acc = RZ_acc(acc + partial) in the declared accumulator format", kAccuracy,
       "a case where the bias of K/chunk truncations shows"},
      {Fault::OutputTowardZero, "out_rz", FaultClass::Arithmetic, "the last rounding, into the output, is toward zero",
       "C = RZ_out(P + Q): P the kernel on the first K - chunk products, Q on the last chunk", kAccuracy,
       "an accuracy check that sees one truncation per element (bitwise, or the statistical test)"},
      {Fault::FlushInputs, "flush_inputs", FaultClass::Data, "subnormal inputs read as zero (DAZ)",
       "the kernel runs on A and B with every subnormal code of their input formats replaced by a zero of its sign", kAccuracy,
       "subnormal inputs"},
      {Fault::FlushOutputs, "flush_outputs", FaultClass::Output, "subnormal outputs written as zero (FTZ)",
       "after the call, every subnormal output code becomes a zero of its sign", kAccuracy, "subnormal outputs"},
      {Fault::NanToZero, "nan_to_zero", FaultClass::Output, "NaN outputs written as +0",
       "after the call, every NaN output becomes +0", {CheckKind::SpecialValues, CheckKind::NanPolicy},
       "a case whose reference is NaN somewhere (NaN inputs, Inf - Inf)"},
      {Fault::InfToMax, "inf_to_max", FaultClass::Output, "infinite outputs saturated to the largest finite value",
       "after the call, every infinite output becomes the largest finite value of its sign", {CheckKind::SpecialValues},
       "a case whose reference is infinite (Inf inputs) and a check that refuses saturation there"},
      {Fault::WritesNan, "writes_nan", FaultClass::Output, "C[0][0] written as NaN", "after the call, C[0][0] = the canonical NaN",
       {CheckKind::Nonfinite}, "any case with a finite C[0][0]"},
      {Fault::UnwrittenRow, "unwritten_row", FaultClass::Memory, "the last row of C never written",
       "the kernel writes into a scratch C; rows 0..m-2 are copied into C", {CheckKind::Unwritten}, "any case"},
      {Fault::WritePastEnd, "write_past_end", FaultClass::Memory, "one element written just past the end of C",
       "after the call, the element at offset m*ldc of C (beyond its last row) is written", {CheckKind::GuardOutput},
       "guard bytes after C"},
      {Fault::ClobbersA, "clobbers_a", FaultClass::Memory, "A[0][0] overwritten by the call",
       "after the call, A[0][0] in the caller's buffer gets its sign bit flipped", {CheckKind::InputsModified},
       "a check that the inputs are unchanged after the call"},
      {Fault::OneRunInN, "one_run_in_n", FaultClass::Determinism, "every second run sums K in another order",
       "on every second call the kernel runs on A and B with K rotated by one (product 0 summed last), as atomics or "
       "split-K scheduling might reorder it",
       {CheckKind::Nondeterministic}, "two runs of a case compared bit for bit"},
      {Fault::TransposedLd, "transposed_ld", FaultClass::Data,
       "the transposed path reads the wrong stride: a column-major A or B read with its column length as leading dimension",
       "the kernel runs on A'(i, p) = the element at offset p*M + i of A's buffer when A is column-major, and B'(p, j) = the "
       "element at offset j*K + p of B's when B is column-major (padding included); row-major operands unchanged",
       // The layout_* cases poison the padding with NaN so that a wrong stride reads it: the nonfinite check is this
       // fault's own refusal as much as the accuracy checks (cuBLASLt's bf16 subject returns NaN and nothing else).
       {CheckKind::Bitwise, CheckKind::Envelope, CheckKind::Statistical, CheckKind::Spread, CheckKind::Nonfinite},
       "a case with a column-major A or B whose leading dimension exceeds its column length (layout_* cases)"},
      {Fault::Beta0ReadsC, "beta0_reads_c", FaultClass::Data, "beta = 0 still reads C: D = alpha acc + 0 * C",
       "with beta = 0 the kernel's D becomes D + 0 * c for every element (C read before the call): NaN wherever C holds NaN "
       "(0 * NaN), D elsewhere",
       {CheckKind::Nonfinite, CheckKind::Envelope}, "beta = 0 with C filled with NaN (ab_beta0; BLAS: C is not read)"},
      {Fault::BetaIgnored, "beta_ignored", FaultClass::Arithmetic, "beta C never added: D = alpha A B",
       "the kernel is called with beta = 0 whatever the case's beta", kAccuracy, "beta != 0 with C not negligible (ab_general, ab_alpha0, ...)"},
      {Fault::BatchStrideIgnored, "batch_stride_ignored", FaultClass::Data, "the batch stride of A ignored: every batch uses batch 0's A",
       "the kernel is called with stride_a = 0 (A broadcast) whatever the case's stride", kAccuracy,
       "batches with an A of their own (batch_strided, batch_broadcast_b, batch_alpha_beta, batch_transposed)"},
      {Fault::BatchLastDropped, "batch_last_dropped", FaultClass::Memory, "the last batch never computed",
       "the kernel is called with batch - 1 batches: the last batch's D keeps the pre-fill", {CheckKind::Unwritten, CheckKind::Nonfinite},
       "any batch case (batch_*)"},
      // Reductions: injectors wrapping any host ReduceKernel (suites/ops/reduce/reduce_faults.hpp).
      {Fault::RedDropElement, "red_drop", FaultClass::Arithmetic, "the last element of every vector left out",
       "the kernel runs on the vectors with their last element set to +0", kAccuracy,
       "a case whose last elements matter beyond the bound", Operation::Reduction},
      {Fault::RedWrongTree, "red_wrong_tree", FaultClass::Arithmetic, "another summation tree than the declared one",
       "the kernel reduces each third of every vector; the thirds' results are joined in order by additions rounded into "
       "the accumulator (sums, dots; nrm2: sqrt of the three squares' sum); thirds: a pairwise kernel's first split is the halves",
       kAccuracy, "a declared order and data on which trees differ (the bitwise tier)", Operation::Reduction},
      {Fault::RedAccF16, "red_acc_f16", FaultClass::Arithmetic, "partial results carried in fp16",
       "the kernel reduces chunks of 16 elements; the partials are summed with acc = RN_f16(acc + partial) (nrm2: of their squares)",
       {CheckKind::Bitwise, CheckKind::Envelope, CheckKind::Spread, CheckKind::Nonfinite},
       "any case longer than 16 elements", Operation::Reduction},
      {Fault::RedUnscaledNrm2, "red_unscaled_nrm2", FaultClass::Arithmetic, "nrm2 without scaling: its squares overflow",
       "the kernel gives |x_i| (a one-element norm) per element; the squares are summed with acc = R_acc(acc + R_acc(|x_i|^2)), "
       "then R(sqrt(acc))",
       {CheckKind::Bitwise, CheckKind::Envelope, CheckKind::Nonfinite}, "nrm2 data whose squares pass the accumulator's range",
       Operation::Reduction},
      {Fault::RedNanToZero, "red_nan_to_zero", FaultClass::Output, "NaN results written as +0",
       "after the call, every NaN result becomes +0", {CheckKind::SpecialValues},
       "a case with NaN inputs (the special-value case)", Operation::Reduction},
      // Softmax: the built-ins carry each fault in their own arithmetic (SoftmaxKernel::with_bug); the zeros, the NaN rows
      // and the mask after exp are made around any other kernel too (suites/ops/softmax/softmax_faults.hpp).
      {Fault::SmxNoMaxShift, "smx_no_max_shift", FaultClass::Arithmetic, "softmax without the max subtraction: exp(z) overflows",
       "the kernel's own arithmetic with exp(z_j) in place of exp(z_j - max)",
       {CheckKind::Nonfinite, CheckKind::SpecialValues, CheckKind::Envelope}, "logits beyond log(largest finite) of the compute format",
       Operation::Softmax},
      {Fault::SmxWrongRescale, "smx_wrong_rescale", FaultClass::Arithmetic, "online softmax: the running sum not rescaled",
       "the kernel's own online loop without the product s exp(m_old - m_new) when the running max grows", kAccuracy,
       "rows whose running max grows after the first block", Operation::Softmax},
      {Fault::SmxMaskAfterExp, "smx_mask_after_exp", FaultClass::Arithmetic, "the mask applied after exp and the row sum",
       "built-ins: the mask left out of z, masked results zeroed afterwards; others: the kernel called without the mask, masked "
       "results then set to +0 (log-softmax: -Inf)",
       {CheckKind::Envelope, CheckKind::SpecialValues}, "partly masked rows", Operation::Softmax},
      {Fault::SmxF16RowSum, "smx_f16_row_sum", FaultClass::Arithmetic, "the row sum accumulated in fp16",
       "the kernel's own row sum with every addition rounded to fp16", kAccuracy, "rows long enough for fp16's 2^-11 to show",
       Operation::Softmax},
      {Fault::SmxNanMaskedRows, "smx_nan_masked_rows", FaultClass::Output, "NaN for a fully masked row",
       "fully masked rows written as NaN (0/0) where the kernel declares zeros", {CheckKind::SpecialValues},
       "fully masked rows", Operation::Softmax},
      {Fault::SmxZeros, "smx_zeros", FaultClass::Output, "every output +0",
       "after the call every result becomes +0", {CheckKind::Envelope, CheckKind::SpecialValues},
       "any case with a non-vacuous bound", Operation::Softmax},
      // LayerNorm / RMSNorm: the built-ins carry each fault in their own arithmetic (NormKernel::with_bug); the zeros and
      // gamma/beta swapped or ignored are made around any other kernel too (suites/ops/norm/norm_faults.hpp).
      {Fault::NormEpsOutsideSqrt, "norm_eps_outside_sqrt", FaultClass::Arithmetic, "eps added outside the square root",
       "the kernel's own arithmetic with 1 / (sqrt(var) + eps) in place of 1 / sqrt(var + eps)", kAccuracy,
       "rows whose variance is near or below eps", Operation::Norm},
      {Fault::NormBessel, "norm_bessel", FaultClass::Arithmetic, "the variance divided by n - 1 (Bessel's correction)",
       "the kernel's own variance (RMSNorm: mean of squares) with 1/(n-1) in place of the declared biased 1/n", kAccuracy,
       "short rows (the relative change is 1/(2n))", Operation::Norm},
      {Fault::NormNoMeanSubtract, "norm_no_mean_subtract", FaultClass::Arithmetic, "no mean subtracted (RMSNorm where LayerNorm is declared)",
       "the kernel's own arithmetic with mean = 0", kAccuracy, "rows with a non-zero mean", Operation::Norm},
      {Fault::NormOnePassVariance, "norm_one_pass_variance", FaultClass::Arithmetic, "the one-pass variance E[x^2] - E[x]^2",
       "the kernel's own arithmetic with the textbook one-pass variance where two-pass or Welford is declared",
       {CheckKind::Envelope, CheckKind::Nonfinite}, "rows whose mean is far larger than their spread", Operation::Norm},
      {Fault::NormF16RowSum, "norm_f16_row_sum", FaultClass::Arithmetic, "the row sums accumulated in fp16",
       "the kernel's own row sums (mean, variance) with every addition rounded to fp16", {CheckKind::Envelope, CheckKind::Nonfinite},
       "rows long enough for fp16's 2^-11 to show, or sums beyond 65504", Operation::Norm},
      {Fault::NormAffineSwapped, "norm_affine_swapped", FaultClass::Arithmetic, "gamma and beta swapped",
       "built-ins: y = n b + g; others: the kernel called with the two pointers swapped", kAccuracy, "a case with gamma and beta",
       Operation::Norm},
      {Fault::NormAffineIgnored, "norm_affine_ignored", FaultClass::Arithmetic, "gamma and beta ignored",
       "built-ins: y = n; others: the kernel called without gamma and beta", kAccuracy, "a case with gamma or beta", Operation::Norm},
      {Fault::NormZeros, "norm_zeros", FaultClass::Output, "every output +0", "after the call every result becomes +0",
       {CheckKind::Envelope}, "any case with a non-vacuous bound", Operation::Norm},
      // Attention: the built-ins carry each fault in their own arithmetic (AttentionKernel::with_bug); the zeros are made
      // around any other kernel too (suites/ops/attention/attention_faults.hpp).
      {Fault::AttnNoRescale, "attn_no_rescale", FaultClass::Arithmetic, "online softmax without the rescale of O~ and l",
       "the kernel's own online loop with O~ and l left unscaled when the running max grows", kAccuracy,
       "rows whose running max grows after the first key block (len_k > key_block)", Operation::Attention},
      {Fault::AttnScaleAfterSoftmax, "attn_scale_after_softmax", FaultClass::Arithmetic, "the scale applied after the softmax",
       "softmax(Q K^T + mask) V times s in place of softmax(s Q K^T + mask) V", kAccuracy, "any case with s != 1",
       Operation::Attention},
      {Fault::AttnCausalOffByOne, "attn_causal_off_by_one", FaultClass::Arithmetic, "the causal mask one key too wide",
       "query i sees key i + 1 (j <= i + 1 + offset)", {CheckKind::Envelope, CheckKind::SpecialValues},
       "a causal case", Operation::Attention},
      {Fault::AttnLseNoMax, "attn_lse_no_max", FaultClass::Output, "LSE without the max", "LSE written as log l, the row max not added back",
       {CheckKind::Envelope}, "rows whose max score is not near 0", Operation::Attention},
      {Fault::AttnPRoundedLower, "attn_p_rounded_lower", FaultClass::Arithmetic, "P rounded narrower than declared before P V",
       "P rounded to f16 where f32 is declared, to e4m3 where f16 / bf16 is", kAccuracy,
       "rows of many comparable probabilities", Operation::Attention},
      {Fault::AttnDropLastKeyBlock, "attn_drop_last_key_block", FaultClass::Arithmetic, "the last, partial key block dropped",
       "the online loop stops before the last key block when len_k is not a multiple of the block", kAccuracy,
       "len_k > key_block and not a multiple of it", Operation::Attention},
      {Fault::AttnDescaleVDropped, "attn_descale_v_dropped", FaultClass::Arithmetic, "FP8: the V descale factor not applied",
       "O left in V's quantized units (not multiplied by dv); around a closed kernel: the call made with dv = 1", kAccuracy,
       "a case with FP8 descale factors (fp8_scale=amax) and dv != 1", Operation::Attention},
      {Fault::AttnZeros, "attn_zeros", FaultClass::Output, "every output +0", "after the call every O and LSE becomes +0",
       {CheckKind::Envelope, CheckKind::SpecialValues}, "any case with a non-vacuous bound", Operation::Attention},
      // Softmax / log-softmax backward (issue 45): the built-ins carry each fault in their own arithmetic
      // (SoftmaxBwdKernel::with_bug); the zeros and the scale's faults are made around any other kernel too
      // (suites/ops/softmax_bwd/softmax_bwd_faults.hpp).
      {Fault::SbwdNoDotSubtract, "sbwd_no_dot_subtract", FaultClass::Arithmetic, "D (log-softmax: G) never subtracted",
       "the kernel's own arithmetic with dx_j = s y_j dy_j (log-softmax: s dy_j)", kAccuracy,
       "any case whose D is not negligible beside dy_j (every case of the softmax_backward suites)", Operation::SoftmaxBackward},
      {Fault::SbwdDotF16, "sbwd_dot_f16", FaultClass::Arithmetic, "D (or G) accumulated in fp16",
       "the kernel's own sum with every addition rounded to fp16", kAccuracy,
       "partial sums of D beyond fp16's 11 bits (17 columns suffice; cancel and cancel_long magnify the error)",
       Operation::SoftmaxBackward},
      {Fault::SbwdScaleMissing, "sbwd_scale_missing", FaultClass::Arithmetic, "dx without the forward's scale",
       "built-ins: s left out of their own arithmetic; others: the kernel called with scale 1", kAccuracy,
       "a case with s != 1 (random_n*, cancel_long, scale_small, scale_large)", Operation::SoftmaxBackward},
      {Fault::SbwdScaleTwice, "sbwd_scale_twice", FaultClass::Arithmetic, "dx with the scale applied twice",
       "built-ins: s^2 in their own arithmetic; others: the kernel called with scale s^2", kAccuracy,
       "a case with s != 1 (random_n*, cancel_long, scale_small, scale_large)", Operation::SoftmaxBackward},
      {Fault::SbwdLogNoExp, "sbwd_log_no_exp", FaultClass::Arithmetic, "log-softmax: y_j used where e^{y_j} is meant",
       "the kernel's own arithmetic with dx_j = s (dy_j - y_j G)", kAccuracy, "any log-softmax case with G != 0",
       Operation::SoftmaxBackward},
      {Fault::SbwdZeros, "sbwd_zeros", FaultClass::Output, "every output +0", "after the call every dx becomes +0",
       {CheckKind::Envelope, CheckKind::SpecialValues}, "any case with a non-vacuous bound", Operation::SoftmaxBackward},
      // LayerNorm / RMSNorm backward (issue 45): the built-ins carry each fault in their own arithmetic
      // (NormBwdKernel::with_bug); the zeros and gamma ignored are made around any other kernel too
      // (suites/ops/norm_bwd/norm_bwd_faults.hpp).
      {Fault::NbwdNoMeanTerm, "nbwd_no_mean_term", FaultClass::Arithmetic, "LayerNorm backward without the mean of g",
       "the kernel's own dx with (1/n) sum g left out", kAccuracy, "rows whose sum of g is not small", Operation::NormBackward},
      {Fault::NbwdNoProjTerm, "nbwd_no_proj_term", FaultClass::Arithmetic, "dx without the xh mean(g xh) term",
       "the kernel's own dx with xh_j (1/n) sum g xh left out", kAccuracy, "any row (dy correlated with xh most)", Operation::NormBackward},
      {Fault::NbwdGammaIgnored, "nbwd_gamma_ignored", FaultClass::Arithmetic, "gamma never applied to dy",
       "built-ins: g = dy; others: the kernel called without gamma", kAccuracy, "a case with gamma", Operation::NormBackward},
      {Fault::NbwdRstdSquared, "nbwd_rstd_squared", FaultClass::Arithmetic, "rstd^2 where rstd is meant",
       "the kernel's own arithmetic with the saved rstd squared (taken for 1/var)", kAccuracy, "rows whose rstd is not 1",
       Operation::NormBackward},
      {Fault::NbwdDGammaF16, "nbwd_dgamma_f16", FaultClass::Arithmetic, "dgamma and dbeta reduced in fp16",
       "the kernel's own column sums with every addition rounded to fp16", {CheckKind::Envelope, CheckKind::Nonfinite, CheckKind::Spread},
       "many rows (the column sums over the batch)", Operation::NormBackward},
      {Fault::NbwdDGammaNoXhat, "nbwd_dgamma_no_xhat", FaultClass::Arithmetic, "dgamma = sum dy (xh left out)",
       "the kernel's own dgamma without the factor xh", kAccuracy, "any case writing dgamma", Operation::NormBackward},
      {Fault::NbwdZeros, "nbwd_zeros", FaultClass::Output, "every output +0", "after the call every dx, dgamma and dbeta becomes +0",
       {CheckKind::Envelope, CheckKind::SpecialValues}, "any case with a non-vacuous bound", Operation::NormBackward},
      // Attention backward (issue 45): the built-ins carry each fault in their own arithmetic (AttentionBwdKernel::with_bug);
      // the zeros and dQ's scale are made around any other kernel too (suites/ops/attention_bwd/attention_bwd_faults.hpp).
      {Fault::AbwdDFromWrongO, "abwd_d_from_wrong_o", FaultClass::Arithmetic, "D from dO in place of O",
       "D_i = sum dO_ic dO_ic where sum dO_ic O_ic is meant", kAccuracy, "any case with keys of different dP", Operation::AttentionBackward},
      {Fault::AbwdNoDSubtract, "abwd_no_d_subtract", FaultClass::Arithmetic, "D never subtracted", "dS = P dP where P (dP - D) is meant",
       kAccuracy, "any case with D != 0", Operation::AttentionBackward},
      {Fault::AbwdDqScaleMissing, "abwd_dq_scale_missing", FaultClass::Arithmetic, "dQ without the scale",
       "built-ins: dQ = sum dS k; others: dQ divided by s after the call", kAccuracy, "any case with s != 1", Operation::AttentionBackward},
      {Fault::AbwdDqScaleTwice, "abwd_dq_scale_twice", FaultClass::Arithmetic, "dQ with the scale twice",
       "built-ins: dQ = s^2 sum dS k; others: dQ times s after the call", kAccuracy, "any case with s != 1", Operation::AttentionBackward},
      {Fault::AbwdLseWrongBase, "abwd_lse_wrong_base", FaultClass::Arithmetic, "the LSE in the wrong base",
       "exp2(x c - LSE) with LSE not converted to base 2 (natural form: exp(z - LSE log2 e))", kAccuracy, "rows whose LSE is not near 0",
       Operation::AttentionBackward},
      {Fault::AbwdGqaNotSummed, "abwd_gqa_not_summed", FaultClass::Arithmetic, "dK, dV not summed over the group",
       "dK and dV of a key/value head hold only its last query head's contribution", kAccuracy, "a grouped-query case (heads_kv < heads_q)",
       Operation::AttentionBackward},
      {Fault::AbwdDqAtomicsBf16, "abwd_dq_atomics_bf16", FaultClass::Arithmetic, "dQ's partials added in bf16",
       "dQ's per key block partial sums added into a bf16 buffer where f32 is declared", kAccuracy, "len_k beyond one key block",
       Operation::AttentionBackward},
      {Fault::AbwdCausalOffByOne, "abwd_causal_off_by_one", FaultClass::Arithmetic, "the recomputed P one key too wide",
       "P recomputed with query i seeing key i + 1", {CheckKind::Envelope, CheckKind::SpecialValues}, "a causal case",
       Operation::AttentionBackward},
      {Fault::AbwdZeros, "abwd_zeros", FaultClass::Output, "every output +0", "after the call every dQ, dK and dV becomes +0",
       {CheckKind::Envelope, CheckKind::SpecialValues}, "any case with a non-vacuous bound", Operation::AttentionBackward},
      // Fused GEMM epilogues and FP8 scaling (issue 37): each realised through the wrapped kernel's own epilogue, called
      // otherwise, or its amax edited after the call (suites/ops/gemm/epilogue_faults.hpp; docs/epilogue.md, "Faults").
      {Fault::EpiBiasIgnored, "epi_bias_ignored", FaultClass::Arithmetic, "the bias never added",
       "the kernel is called with no bias (bias kind none) whatever the case's", {CheckKind::Envelope},
       "an epilogue case with a bias (epilogue_bias_col, epilogue_bias_row, ...)"},
      {Fault::EpiBiasPerRow, "epi_bias_per_row", FaultClass::Data, "the bias applied per row where per column is asked (per column where per row is)",
       "the kernel is called with the other bias kind and a vector of the other length made of the case's values (element t: "
       "bias[t mod length])",
       {CheckKind::Envelope}, "a bias per column and one per row, M != N (epilogue_bias_col, epilogue_bias_row)"},
      {Fault::EpiBiasScaledByAlpha, "epi_bias_scaled_by_alpha", FaultClass::Arithmetic, "alpha (A B + bias): the bias scaled with the product",
       "the kernel is called with the bias multiplied by alpha' = alpha scale_a scale_b (rounded into the bias format)", {CheckKind::Envelope},
       "a bias with alpha' != 1 (epilogue_ab_bias_gelu, epilogue_beta0_bias_silu, epilogue_fp8_scaled)"},
      {Fault::EpiActivationDropped, "epi_activation_dropped", FaultClass::Arithmetic, "the activation never applied",
       "the kernel is called with activation none whatever the case's", {CheckKind::Envelope},
       "an activation whose argument takes both signs (epilogue_relu_bias, epilogue_gelu_*, epilogue_silu)"},
      {Fault::EpiGeluFormSwapped, "epi_gelu_form_swapped", FaultClass::Arithmetic,
       "GELU's tanh form where the erf form is asked (the erf form where tanh is)",
       "the kernel is called with the other GELU form", {CheckKind::Envelope},
       "GELU arguments where the forms differ beyond the bound (|z| around 2 to 3: epilogue_gelu_erf, epilogue_gelu_tanh)"},
      {Fault::EpiScaleDIgnored, "epi_scale_d_ignored", FaultClass::Arithmetic, "scale_d never applied",
       "the kernel is called with scale_d = 1", {CheckKind::Envelope}, "FP8 scaling with scale_d != 1 (epilogue_fp8_scaled)"},
      {Fault::EpiScaleBIgnored, "epi_scale_b_ignored", FaultClass::Data, "scale_b never applied (a stale or missing scale factor)",
       "the kernel is called with scale_b = 1", {CheckKind::Envelope}, "FP8 scaling with scale_b != 1 (epilogue_fp8_scaled)"},
      {Fault::EpiAmaxScaled, "epi_amax_scaled", FaultClass::Output, "amax of the scaled result (scale_d |act(Z)|) where the unscaled one is defined",
       "after the call, amax becomes RN_acc(|scale_d| amax)", {CheckKind::Amax}, "amax asked with scale_d != 1 (epilogue_fp8_scaled)"},
      // Elementwise math (issue 42): a library function carries no fault of its own; each is made around the kernel
      // (suites/ops/elementwise/eltwise_faults.hpp), on its inputs before the call, its call, or its results after it.
      {Fault::EltUlpAway, "elt_ulp_away", FaultClass::Arithmetic, "every finite nonzero result one ulp further from zero (a biased last step)",
       "after the call each finite nonzero result's code is incremented", {CheckKind::Envelope},
       "a claim within one ulp of the kernel's worst error (correctly rounded, 0 ulp, or a worst case at the bound)", Operation::Elementwise},
      {Fault::EltNarrowBf16, "elt_narrow_bf16", FaultClass::Arithmetic, "the result carried in bf16's 8 significand bits (a narrower type inside)",
       "after the call each result is rounded to nearest-even at 8 significand bits", {CheckKind::Envelope},
       "any claim tighter than 2^(p-8) ulp of the output", Operation::Elementwise},
      {Fault::EltFtz, "elt_ftz", FaultClass::Arithmetic, "subnormal results flushed to zero, undeclared",
       "after the call each subnormal result becomes a zero of its sign", {CheckKind::Envelope},
       "inputs whose result is subnormal in the output format (exp of a large negative x, sin or tanh of a subnormal)", Operation::Elementwise},
      {Fault::EltDaz, "elt_daz", FaultClass::Arithmetic, "subnormal inputs read as zero, undeclared",
       "the kernel is called on a copy of x (and x2) whose subnormals are zeros of their sign", {CheckKind::Envelope},
       "subnormal inputs where f(x) differs from f(0) (log, sin, tanh, rsqrt; not exp or cos, where both round to 1)", Operation::Elementwise},
      {Fault::EltAbsInput, "elt_abs_input", FaultClass::Data, "x read as |x| (a symmetry the function lacks)",
       "the kernel is called on a copy of x with every sign bit cleared", {CheckKind::Envelope}, "negative inputs", Operation::Elementwise},
      {Fault::EltLargeArg, "elt_large_arg", FaultClass::Arithmetic,
       "a range reduction that drops the low bits of large arguments",
       "the kernel is called on a copy of x whose inputs of magnitude >= 2^(p-1) have their last 4 significand bits cleared",
       {CheckKind::Envelope}, "inputs beyond 2^(p-1) where f is not saturated (sin, cos, log, sqrt; exp overflows there)", Operation::Elementwise},
      {Fault::EltNanToZero, "elt_nan_to_zero", FaultClass::Output, "NaN results written as +0", "after the call each NaN result becomes +0",
       {CheckKind::Envelope}, "NaN inputs or inputs outside the domain (the special inputs)", Operation::Elementwise},
      {Fault::EltInfToMax, "elt_inf_to_max", FaultClass::Output, "infinite results written as the largest finite value",
       "after the call each infinite result becomes the largest finite value of its sign", {CheckKind::Envelope},
       "inputs whose result is infinite (the special and threshold inputs)", Operation::Elementwise},
      {Fault::EltHeadUnwritten, "elt_head_unwritten", FaultClass::Memory, "the first element never written (an alignment prologue skipped)",
       "the kernel is called on x + 1, y + 1 with count - 1 (the last element is not used: a 16-bit sweep ends in NaN codes, whose result may be the pre-fill NaN)", {CheckKind::Unwritten}, "any case", Operation::Elementwise},
      {Fault::EltWritePastEnd, "elt_write_past_end", FaultClass::Memory, "one element written just past the end of y",
       "after the call y[count] := y[count - 1]", {CheckKind::GuardOutput}, "any case", Operation::Elementwise},
      {Fault::EltClobbersX, "elt_clobbers_x", FaultClass::Memory, "x[0] overwritten by the call (a scratch write)",
       "after the call x[0]'s last bit is flipped", {CheckKind::InputsModified}, "any case", Operation::Elementwise},
      {Fault::EltZeros, "elt_zeros", FaultClass::Output, "every output +0", "after the call every result becomes +0", {CheckKind::Envelope},
       "any input whose result is not +0", Operation::Elementwise},
  };
  return c;
}

/// Why an epilogue fault cannot change a kernel with these traits (the call it makes is one the kernel never gets).
std::string epilogue_fault_not_applicable(Fault f, const KernelTraits& t) {
  const EpilogueTraits& e = t.epilogue;
  if (!e.active()) return "the kernel declares no fused epilogue (KernelTraits::epilogue): it is never given one";
  const auto both = bit(BiasKind::PerRow) | bit(BiasKind::PerColumn);
  switch (f) {
    case Fault::EpiBiasIgnored:
      if (!e.bias) return "the kernel takes no bias";
      break;
    case Fault::EpiBiasPerRow:
      if ((e.bias & both) != both) return "the kernel takes one bias kind only (" + describe_epilogue(e) + "): it is never called with the other";
      break;
    case Fault::EpiBiasScaledByAlpha:
      if (!e.bias) return "the kernel takes no bias";
      if (!t.alpha_beta && !e.fp8_scaling) return "the kernel takes neither alpha nor scale factors: alpha' is always 1";
      break;
    case Fault::EpiActivationDropped:
      if (!e.activations) return "the kernel takes no activation";
      break;
    case Fault::EpiGeluFormSwapped:
      if (!e.takes(Activation::GeluErf) || !e.takes(Activation::GeluTanh))
        return "the kernel does not take both GELU forms: it is never called with the other";
      break;
    case Fault::EpiScaleDIgnored:
    case Fault::EpiScaleBIgnored:
      if (!e.fp8_scaling) return "the kernel takes no FP8 scale factors";
      if (f == Fault::EpiScaleDIgnored && !e.fp8_scale_d)
        return "the kernel takes scale_a and scale_b but no scale_d (EpilogueTraits::fp8_scale_d): it is never given one";
      break;
    case Fault::EpiAmaxScaled:
      if (!e.amax) return "the kernel reports no amax";
      if (!e.fp8_scaling || !e.fp8_scale_d) return "the kernel takes no scale_d: a scaled amax equals the unscaled one";
      break;
    default: break;
  }
  return {};
}

}  // namespace

std::span<const FaultInfo> fault_catalogue() { return catalogue(); }

const FaultInfo& fault_info(Fault f) {
  for (const FaultInfo& i : catalogue())
    if (i.fault == f) return i;
  throw std::logic_error("fault_info: fault missing from the catalogue");
}

const FaultInfo* find_fault(std::string_view id) {
  for (const FaultInfo& i : catalogue())
    if (i.id == id) return &i;
  return nullptr;
}

std::string fault_ids() {
  std::string s;
  for (const FaultInfo& i : catalogue()) s += (s.empty() ? "" : ", ") + std::string(i.id);
  return s;
}

std::string fault_not_applicable(Fault f, const KernelTraits& t) {
  if (fault_info(f).operation != Operation::Gemm) return "a fault of reduction kernels";
  switch (f) {
    case Fault::AccF16:
      if (t.acc->precision() <= f16.precision())
        return fmt::format("the declared accumulator {} is no wider than fp16", t.acc->tag);
      break;
    case Fault::AccF32:
      if (t.acc->precision() <= f32.precision())
        return fmt::format("the declared accumulator {} is no wider than fp32", t.acc->tag);
      break;
    case Fault::AccBf16:
      if (t.acc->precision() <= bf16.precision())
        return fmt::format("the declared accumulator {} is no wider than bf16", t.acc->tag);
      break;
    case Fault::AccTowardZero:
      if (t.acc_rounding == Rounding::TowardZero) return "the kernel declares round-toward-zero accumulation";
      break;
    case Fault::TailTile:
      // The fault zeroes rows >= 16 floor(M / 16) of A and columns >= 16 floor(N / 16) of B: nothing when M and N are
      // multiples of 16, the only shapes such a kernel is given.
      if (t.shape_multiple % 16 == 0)
        return fmt::format("the kernel takes M, N, K multiples of {} (KernelTraits::shape_multiple): it has no partial tile of 16", t.shape_multiple);
      break;
    case Fault::PrecisionSwitch: {
      const Format& sa = storage_format(*t.a_input, *t.a_operand);
      const Format& sb = storage_format(*t.b_input, *t.b_operand);
      if (sa.frac_bits < 2 && sb.frac_bits < 2) return "the storage formats have fewer than 2 fraction bits to lose";
      break;
    }
    case Fault::FlushInputs: {
      if (!t.a_input->subnormals && !t.b_input->subnormals) return "the input formats have no subnormals";
      // Inputs narrowed into an operand format whose smallest subnormal is more than twice the inputs' largest
      // subnormal (fp32 into fp16: 2^-126 against 2^-24): nearest and toward-zero conversion both give a zero of
      // the input's sign, as DAZ does, so the fault changes nothing the multiplier sees.
      auto vanish = [&](const Format& in, const Format& op) {
        return !in.subnormals || (!(in == op) && in.min_normal() < op.min_subnormal() / 2);
      };
      const bool conv = t.input_rounding == Rounding::NearestEven || t.input_rounding == Rounding::TowardZero;
      if (!t.block.active() && t.operand_u == 0 && conv && vanish(*t.a_input, *t.a_operand) && vanish(*t.b_input, *t.b_operand))
        return fmt::format("every subnormal input converts to a zero of its sign in the declared operand formats {}/{} (their smallest "
                           "subnormal is more than twice the inputs' smallest normal): DAZ changes nothing the multiplier sees",
                           t.a_operand->tag, t.b_operand->tag);
      break;
    }
    case Fault::OutputTowardZero:
      // Without a declared order, an accumulator declared round-toward-zero into the output format may add its last
      // two partial sums with one truncation: the mutant is then one of the arithmetics the declaration admits.
      if (!t.sum_order.known() && t.acc_rounding == Rounding::TowardZero && *t.acc == *t.out && !t.block.active())
        return "the kernel declares no order and round-toward-zero accumulation in its output format: a last addition "
               "rounded toward zero is one of the arithmetics it admits";
      break;
    case Fault::FlushOutputs: {
      if (!t.out->subnormals) return "the output format has no subnormals";
      // Every product of two operands is a multiple of q = (the smallest nonzero A operand) x (the
      // smallest nonzero B operand), so every exact partial sum is too, and a monotonic rounding of a
      // nonzero multiple of the power of two q is at least q in magnitude: when q is no smaller than the
      // output's smallest normal, no output can be subnormal (fp16 or fp8 operands into fp32: 2^-48,
      // 2^-32, 2^-18 >= 2^-126). Block scaling multiplies by scales down to 2^-127 first: not this case.
      if (t.block.active() || t.operand_u > 0) break;
      const Format& sa = storage_format(*t.a_input, *t.a_operand);
      const Format& sb = storage_format(*t.b_input, *t.b_operand);
      const double qa = sa.subnormals ? sa.min_subnormal() : sa.min_normal(), qb = sb.subnormals ? sb.min_subnormal() : sb.min_normal();
      if (std::log2(qa) + std::log2(qb) >= std::log2(t.out->min_normal()))
        return fmt::format("no output can be subnormal: every nonzero result is at least {}'s x {}'s smallest magnitude, "
                           "2^{}, and {}'s smallest normal is 2^{}",
                           sa.tag, sb.tag, static_cast<int>(std::log2(qa) + std::log2(qb)), t.out->tag,
                           static_cast<int>(std::log2(t.out->min_normal())));
      break;
    }
    case Fault::NanToZero:
    case Fault::WritesNan:
      if (!t.out->has_nan()) return fmt::format("the output format {} has no NaN", t.out->tag);
      // The exact reference of finite inputs is finite: a NaN reference needs a NaN operand, Inf * 0 or Inf - Inf.
      if (f == Fault::NanToZero && t.domain.finite_only)
        return "the kernel declares finite inputs only: no reference is NaN (that needs a NaN or infinite operand)";
      if (f == Fault::NanToZero && !t.a_input->has_nan() && !t.a_input->has_inf() && !t.b_input->has_nan() && !t.b_input->has_inf())
        return fmt::format("the input formats {}/{} hold no NaN or Inf: no reference is NaN", t.a_input->tag, t.b_input->tag);
      break;
    case Fault::InfToMax: {
      if (!t.out->has_inf()) return fmt::format("the output format {} has no infinity", t.out->tag);
      // Without an infinite operand a reference is infinite only where the exact result overflows the output, where
      // the checks accept the largest finite value (docs/suites.md, "values.special"): the fault is then invisible,
      // and, where not even kMaxK products of the largest inputs reach the overflow limit, impossible.
      const bool inf_inputs = !t.domain.finite_only && (t.a_input->has_inf() || t.b_input->has_inf());
      if (!inf_inputs) {
        constexpr double kMaxK = 0x1p31;  // beyond any K a suite or a generator uses (generators: 2^24)
        const double reach = kMaxK * t.a_input->max_finite() * t.b_input->max_finite();
        if (t.domain.finite_only)
          return "the kernel declares finite inputs only: no reference is infinite but where the exact result overflows the "
                 "output, and there the checks accept the largest finite value";
        if (reach < overflow_limit(t))
          return fmt::format("no output can be infinite: {}/{} hold no Inf, and 2^31 products of their largest values, {:.3g}, stay "
                             "below the overflow limit {:.4g}",
                             t.a_input->tag, t.b_input->tag, reach, overflow_limit(t));
      }
      break;
    }
    case Fault::ClobbersA:
      if (!t.a_input->is_signed()) return "A's format has no sign bit to flip";
      break;
    case Fault::Beta0ReadsC:
    case Fault::BetaIgnored:
      if (!t.alpha_beta) return "the kernel does not declare alpha/beta (D = alpha AB + beta C): it is never given C";
      // A kernel the alpha/beta cases cannot grade (block-scaled, or a format wider than 26 bits) takes none of them.
      if (const std::string why = alpha_beta_unsupported(t); !why.empty()) return "the suite's " + why + ": this kernel is never given C";
      break;
    case Fault::BatchStrideIgnored:
    case Fault::BatchLastDropped:
      if (!t.batched) return "the kernel does not declare strided batches: it is never given more than one batch";
      break;
    case Fault::EpiBiasIgnored:
    case Fault::EpiBiasPerRow:
    case Fault::EpiBiasScaledByAlpha:
    case Fault::EpiActivationDropped:
    case Fault::EpiGeluFormSwapped:
    case Fault::EpiScaleDIgnored:
    case Fault::EpiScaleBIgnored:
    case Fault::EpiAmaxScaled:
      return epilogue_fault_not_applicable(f, t);
    case Fault::TransposedLd:
      // Bits of KernelTraits::layouts with a column-major A (a = 1: 1, 3, 5, 7) or B (b = 1: 2, 3, 6, 7).
      if (!(t.layouts & 0xEE))
        return "the kernel takes no column-major A or B (layouts " + describe_layouts(t.layouts) + "): its transposed path is never called";
      break;
    case Fault::OneRunInN:
      // A kernel declaring run-to-run nondeterminism may sum in another order on any run: the mutant is one of the
      // behaviours its declaration admits (its later runs are still judged: envelope, order-free elements, spread).
      if (t.determinism == Determinism::RunToRun)
        return "the kernel declares run-to-run nondeterminism: another summation order on some runs is what it declares";
      // A declared arithmetic exact in K (Ozaki-II: integer sums, one rounding) gives the same bits in every order:
      // the mutant is the kernel itself (an equivalent mutant, not a survivor).
      if (t.sum_order.order_free())
        return "the declared arithmetic (" + order_spec(t.sum_order) + ") is exact in K: every order of the K products gives the same bits";
      break;
    default: break;
  }
  return {};
}

std::string mutant_name(const std::string& kernel, Fault f) { return kernel + "~" + std::string(fault_info(f).id); }

}  // namespace fpcert
