// kernels/attention/attention_backward_kernel.hpp — the attention backward kernel interface (issue 45;
// docs/backward.md): from Q, K, V, the forward's saved output O and log-sum-exp LSE (inputs in their storage formats:
// a backward kernel never sees the exact forward), the incoming gradient dO, the scale s and the masks of the forward
// (kernels/attention/attention_kernel.hpp: the same shapes, causal alignments, additive mask and grouped-query heads),
// the gradients, with z_ij = s q_i . k_j + mask_ij:
//   P_ij  = e^{z_ij - LSE_i}                  (recomputed from the saved LSE; 0 where masked)
//   D_i   = sum_c dO_ic O_ic                  (the preprocessing pass, from the saved O)
//   dP_ij = dO_i . v_j,   dS_ij = P_ij (dP_ij - D_i)
//   dV_j  = sum_i P_ij dO_i,   dQ_i = s sum_j dS_ij k_j,   dK_j = s sum_i dS_ij q_i
// where with grouped-query heads dK and dV of key/value head h' sum over the query heads h with h / (heads_q / heads_kv)
// = h'. The reference is the exact value of these formulas at the given codes, correctly rounded into each output's
// format. The traits say the arithmetic the bound reads: five GEMMs as GEMM kernels declare theirs, the exp's form and
// error, D's accumulator, the formats P and dS are rounded into before their GEMMs, and whether dQ is added with atomics
// (FlashAttention 2: run to run; graded run by run by the envelope, the spread reported, as for split-K GEMM).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/attention/attention_kernel.hpp"

namespace fpcert {

struct AttentionBwdTraits {
  const Format* input = &f16;  ///< Q, K, V, O and dO storage
  KernelTraits qk;   ///< S = Q K^T recomputed (depth head_dim; out: the scores' format, f32)
  KernelTraits dov;  ///< dP = dO V^T (depth head_dim)
  KernelTraits pdo;  ///< dV = P^T dO (depth len_q, times the group size with grouped heads; a_input: P's format)
  KernelTraits dsk;  ///< dQ = dS K (depth len_k; a_input: dS's format)
  KernelTraits dsq;  ///< dK = dS^T Q (depth len_q, times the group size; a_input: dS's format)
  /// Natural: P = exp(RN(s x) + mask - LSE). Base2Folded (FlashAttention): c = RN(s log2 e), l2 = RN(LSE RN(log2 e)),
  /// P = exp2(fma(x, c, -l2)) with the additive mask folded as in the forward. `exp` is the exp (exp2)'s error.
  AttentionExpForm exp_form = AttentionExpForm::Natural;
  ElemFnError exp;
  const Format* d_acc = &f32;            ///< D_i's accumulator (any order), products dO O exact or rounded in it
  const Format* compute = &f32;          ///< dP - D, P (dP - D) and the scale's products, nearest even
  Determinism dq_determinism = Determinism::Deterministic;  ///< RunToRun: dQ's partial sums added with atomics
  const Format* dq_acc = &f32;           ///< the format dQ's partials are added in (atomics: the buffer's format)
  const Format* dq_out = &f16;           ///< dQ, dK, dV rounded into these once
  const Format* dk_out = &f16;
  const Format* dv_out = &f16;
  std::uint8_t masks = kAttnMaskCausalTopLeft | kAttnMaskCausalBottomRight | kAttnMaskAdditive;  ///< masks it takes
  std::vector<int> head_dims;            ///< head dims it takes (empty: any)
  bool grouped_heads = true;             ///< takes heads_kv < heads_q
  MaskedLse masked_lse = MaskedLse::PosInf;  ///< the LSE a fully masked row comes with (its P is 0, its dQ row 0)
  /// false: the kernel ignores the saved O and LSE and recomputes the forward itself (PyTorch's math SDPA through
  /// autograd keeps P, not LSE): the reference is then the exact gradient at the exact forward of Q, K, V.
  bool reads_saved = true;
  std::string note;                      ///< where the declaration comes from
};

/// One call. Every tensor as in AttentionOperands ([batch][heads][len][head_dim], padded row strides): Q, O, dO, dQ
/// with heads_q heads and len_q rows; K, V, dK, dV with heads_kv heads and len_k rows. lse: batch x heads_q x len_q fp32
/// codes, (b heads_q + h) len_q + i, natural log, as the forward wrote it. Q, K, V, O, dO codes of traits.input; dQ,
/// dK, dV codes of the declared output formats. mask: null or len_q x len_k fp32 codes (ldm) shared by batches and heads.
struct AttentionBwdOperands {
  AttentionShape shape;
  const void* q = nullptr;
  std::int64_t ldq = 0;
  const void* k = nullptr;
  std::int64_t ldk = 0;
  const void* v = nullptr;
  std::int64_t ldv = 0;
  const void* o = nullptr;
  std::int64_t ldo = 0;
  const void* d_o = nullptr;
  std::int64_t lddo = 0;
  const void* lse = nullptr;
  const void* mask = nullptr;
  std::int64_t ldm = 0;
  CausalAlign causal = CausalAlign::None;
  float scale = 1.0f;
  void* dq = nullptr;
  std::int64_t lddq = 0;
  void* dk = nullptr;
  std::int64_t lddk = 0;
  void* dv = nullptr;
  std::int64_t lddv = 0;
  void* stream = nullptr;  ///< cudaStream_t for device kernels
};

/// Faults a built-in carries in its own arithmetic (docs/mutation.md, "Backward passes").
enum class AttentionBwdBug : std::uint8_t {
  None,
  DFromWrongO,     ///< D_i = sum dO_ic dO_ic (dO taken for O)
  NoDSubtract,     ///< dS = P dP (D never subtracted)
  DqScaleMissing,  ///< dQ without s
  DqScaleTwice,    ///< dQ with s applied twice
  LseWrongBase,    ///< Base2Folded: exp2(x c - LSE) with LSE not converted to base 2 (Natural: exp(z - LSE log2 e))
  GqaNotSummed,    ///< dK, dV of a group hold only its last query head's contribution
  DqAtomicsBf16,   ///< dQ's partials added into a bf16 buffer where f32 is declared
  CausalOffByOne,  ///< the recomputed P lets query i see key i + 1
  Zeros,           ///< every output +0
};
std::string_view to_string(AttentionBwdBug b);

class AttentionBwdKernel : public Kernel {
 public:
  Operation operation() const final { return Operation::AttentionBackward; }
  virtual const AttentionBwdTraits& attention_bwd_traits() const = 0;
  /// Whether it takes this shape with this mask (the traits' masks, head dims and grouped heads by default).
  virtual Support can_implement(const AttentionShape& s, CausalAlign causal, bool additive_mask) const;
  virtual void run(const AttentionBwdOperands& ops) = 0;
  virtual std::unique_ptr<AttentionBwdKernel> with_bug(AttentionBwdBug bug) const {
    (void)bug;
    return nullptr;
  }
};

std::unique_ptr<AttentionBwdKernel> make_attention_bwd_kernel(const std::string& name);
/// "attention backward in f16, P recomputed exp2 folded 2 ulp, dP/dV/dQ/dK f32 acc (...), D f32, dQ f32 atomics
/// (run_to_run), out f16/f16/f16".
std::string describe_attention_bwd_traits(const AttentionBwdTraits& t);

}  // namespace fpcert
