// suites/mutation/faults.hpp — the fault catalogue of the mutation score: each fault a GPU kernel can have, its
// class, how it is injected, the checks that refuse it for its own fault, and what a suite needs to
// see it (docs/mutation.md). The injectors are suites/ops/gemm/fault_injectors.hpp.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/kernel.hpp"
#include "results/results.hpp"

namespace fpcert {

enum class Fault : std::uint8_t {
  OutputUlp,        ///< one output element one ulp further from zero
  ZeroRow,          ///< the last row of C written as +0
  ZeroColumn,       ///< the last column of C written as +0
  DropLastProduct,  ///< K - 1 products: the last product along K left out
  TransposedB,      ///< B read as if it were stored transposed (column-major, ld = K)
  LdaIgnored,       ///< A read with leading dimension K instead of lda
  TailTile,         ///< the partial last tile of 16 rows / columns loads zeros
  PrecisionSwitch,  ///< products at k >= 256 see operands with half the significand bits
  AccF16,           ///< partial sums carried in fp16 (round to nearest)
  AccBf16,          ///< partial sums carried in bf16 (round to nearest)
  AccTowardZero,    ///< accumulation rounds toward zero in the declared accumulator
  OutputTowardZero, ///< the last rounding, into the output, is toward zero
  FlushInputs,      ///< subnormal inputs read as zero (DAZ)
  FlushOutputs,     ///< subnormal outputs written as zero (FTZ)
  NanToZero,        ///< NaN outputs written as +0
  InfToMax,         ///< infinite outputs written as the largest finite value
  WritesNan,        ///< C[0][0] written as NaN
  UnwrittenRow,     ///< the last row of C never written
  WritePastEnd,     ///< one element written just past the end of C
  ClobbersA,        ///< A[0][0] overwritten after the call
  OneRunInN,        ///< every second run sums K in another order (rotated by one)
  TransposedLd,     ///< a column-major (transposed) A or B read with the column length (M, K) as stride instead of lda/ldb
  // Reductions (suites/ops/reduce/reduce_faults.hpp).
  RedDropElement,   ///< the last element of every vector left out
  RedWrongTree,     ///< the vector summed as two halves joined at the end (another tree than the declared one)
  RedAccF16,        ///< partial results carried in fp16
  RedUnscaledNrm2,  ///< nrm2 without scaling: the squares summed in the accumulator, overflowing
  RedNanToZero,     ///< NaN results written as +0
  AccF32,           ///< partial sums carried in fp32 (listed only for accumulators wider than fp32: docs/fp64.md)
  // Softmax (suites/ops/softmax/softmax_faults.hpp).
  SmxNoMaxShift,    ///< exp(z) without the row's max subtracted
  SmxWrongRescale,  ///< online: the running sum not rescaled when the running max grows
  SmxMaskAfterExp,  ///< the mask applied after exp and the row sum
  SmxF16RowSum,     ///< the row sum accumulated in fp16
  SmxNanMaskedRows, ///< NaN for fully masked rows where zeros are declared
  SmxZeros,         ///< every output +0
  // LayerNorm / RMSNorm (suites/ops/norm/norm_faults.hpp).
  NormEpsOutsideSqrt,   ///< 1 / (sqrt(var) + eps)
  NormBessel,           ///< variance with 1/(n-1)
  NormNoMeanSubtract,   ///< RMS where LayerNorm is declared
  NormOnePassVariance,  ///< E[x^2] - E[x]^2 where two-pass or Welford is declared
  NormF16RowSum,        ///< the row sums accumulated in fp16
  NormAffineSwapped,    ///< gamma and beta swapped
  NormAffineIgnored,    ///< gamma and beta ignored
  NormZeros,            ///< every output +0
  // GEMM as libraries call it, alpha/beta (issue 37; appended: the values above keep theirs).
  Beta0ReadsC,      ///< D = alpha acc + beta C computed even when beta = 0: 0 * NaN = NaN where C holds NaN
  BetaIgnored,      ///< D = alpha acc: the beta C term never added
  // Strided batches (issue 37; appended).
  BatchStrideIgnored,  ///< every batch computed from batch 0's A (stride_a taken as 0)
  BatchLastDropped,    ///< the last batch never computed
  // Attention (suites/ops/attention/attention_faults.hpp; appended).
  AttnNoRescale,          ///< O~ and l not rescaled when the running max grows
  AttnScaleAfterSoftmax,  ///< softmax(Q K^T + mask), the scale applied to the output
  AttnCausalOffByOne,     ///< query i sees key i + 1
  AttnLseNoMax,           ///< LSE = log l, the max not added back
  AttnPRoundedLower,      ///< P rounded narrower than declared before P V
  AttnDropLastKeyBlock,   ///< the last, partial key block skipped
  AttnZeros,              ///< every output +0
  // Backward passes (issue 45; appended): softmax / log-softmax (suites/ops/softmax_bwd), LayerNorm / RMSNorm
  // (suites/ops/norm_bwd), attention (suites/ops/attention_bwd). Each listed in fault_catalogue() by its module.
  SbwdNoDotSubtract,  ///< D (or G) never subtracted
  SbwdDotF16,         ///< D (or G) accumulated in fp16
  SbwdScaleMissing,   ///< dx without the forward's scale
  SbwdScaleTwice,     ///< dx with the scale applied twice
  SbwdLogNoExp,       ///< log-softmax: y_j where e^{y_j} is meant
  SbwdZeros,          ///< every output +0
  NbwdNoMeanTerm,     ///< LayerNorm: the mean of g left out
  NbwdNoProjTerm,     ///< the xh mean(g xh) term left out
  NbwdGammaIgnored,   ///< gamma never applied to dy
  NbwdRstdSquared,    ///< rstd^2 where rstd is meant
  NbwdDGammaF16,      ///< dgamma / dbeta reduced in fp16
  NbwdDGammaNoXhat,   ///< dgamma = sum dy
  NbwdZeros,          ///< every output +0
  AbwdDFromWrongO,    ///< D from dO in place of O
  AbwdNoDSubtract,    ///< dS = P dP
  AbwdDqScaleMissing, ///< dQ without s
  AbwdDqScaleTwice,   ///< dQ with s twice
  AbwdLseWrongBase,   ///< LSE used in the wrong base
  AbwdGqaNotSummed,   ///< dK, dV not summed over the query heads of a group
  AbwdDqAtomicsBf16,  ///< dQ added into bf16 where f32 is declared
  AbwdCausalOffByOne, ///< the recomputed P sees key i + 1
  AbwdZeros,          ///< every output +0
  // Fused GEMM epilogues and FP8 scaling (issue 37; appended; suites/ops/gemm/epilogue_faults.cpp). Each realised
  // through the wrapped kernel's own epilogue, called otherwise (not applicable where it cannot take that call).
  EpiBiasIgnored,        ///< the bias never added
  EpiBiasPerRow,         ///< the bias applied per row where per column is asked (per column where per row is)
  EpiBiasScaledByAlpha,  ///< alpha (A B + bias): the bias scaled with the product
  EpiActivationDropped,  ///< the activation never applied
  EpiGeluFormSwapped,    ///< GELU's tanh form where the erf form is asked (the erf form where tanh is)
  EpiScaleDIgnored,      ///< scale_d never applied
  EpiScaleBIgnored,      ///< scale_b never applied (a stale or missing scale factor)
  EpiAmaxScaled,         ///< amax of the scaled result (scale_d |act(Z)|) where the unscaled one is defined
  // Elementwise math (issue 42; appended; suites/ops/elementwise/eltwise_faults.hpp): each made around the kernel.
  EltUlpAway,        ///< every finite nonzero result one ulp further from zero
  EltNarrowBf16,     ///< the result carried in bf16's 8 significand bits before the output
  EltFtz,            ///< subnormal results flushed to zero where the kernel does not declare it
  EltDaz,            ///< subnormal inputs read as zero where the kernel does not declare it
  EltAbsInput,       ///< x read as |x| (a symmetry the function lacks)
  EltLargeArg,       ///< inputs of magnitude >= 2^(p-1) read with their last 4 significand bits cleared
  EltNanToZero,      ///< NaN results written as +0
  EltInfToMax,       ///< infinite results written as the largest finite value
  EltHeadUnwritten,  ///< the first element never written (an alignment prologue skipped)
  EltWritePastEnd,   ///< one element written just past the end of y
  EltClobbersX,      ///< x[0] overwritten by the call
  EltZeros,          ///< every output +0
  // FP8 attention (issue 41; appended: the values above keep theirs).
  AttnDescaleVDropped,  ///< O not multiplied by the V descale factor
};

/// Faults in groups; the score is reported per group.
enum class FaultClass : std::uint8_t { Output, Arithmetic, Data, Memory, Determinism };
std::string_view to_string(FaultClass c);

/// One fault as the catalogue lists it.
struct FaultInfo {
  Fault fault;
  std::string_view id;           ///< "acc_rz": used in mutant names (<kernel>~<id>) and --fault
  FaultClass cls;
  std::string_view what;         ///< the fault, as a kernel bug
  std::string_view realisation;  ///< how it is made from calls of the wrapped kernel (docs/mutation.md)
  std::vector<CheckKind> expected;  ///< the checks whose failure means "killed for its own fault"
  std::string_view needs;        ///< what a suite must hold for the fault to be seen (said of survivors)
  Operation operation = Operation::Gemm;  ///< the kernels it wraps
};

/// Tunables of the injectors (the defaults are what docs/mutation.md describes).
struct FaultOptions {
  std::int64_t switch_k = 256;  ///< PrecisionSwitch: first k whose operands are narrowed
  std::int64_t tile = 16;       ///< TailTile: the tile whose partial last rows / columns load zeros
  int one_in = 2;               ///< OneRunInN: every one_in-th call is the different one
  double timeout_ms = 120000;   ///< wait for the wrapped kernel this long before reporting it hung
};

/// Every fault, in the order `fpcert mutate` lists them.
std::span<const FaultInfo> fault_catalogue();
const FaultInfo& fault_info(Fault f);
/// By id; nullptr when unknown.
const FaultInfo* find_fault(std::string_view id);
/// Comma-separated ids, for error messages.
std::string fault_ids();

/// Why a fault cannot change a kernel with these traits (the mutant would equal it by construction,
/// e.g. an fp16 accumulator injected into a kernel that accumulates in fp16); empty when it applies.
std::string fault_not_applicable(Fault f, const KernelTraits& t);

/// The mutant's registry name.
std::string mutant_name(const std::string& kernel, Fault f);
}  // namespace fpcert
