// kernels/attention/attention_kernel.hpp — the attention operation's kernel interface (issue 41; docs/attention.md): a
// fused scaled-dot-product attention forward, O = softmax(s Q K^T + mask) V per batch and query head, with grouped-query
// heads (query head h reads key/value head h / (heads_q / heads_kv)), a causal mask (top-left or bottom-right aligned)
// and/or an additive fp32 mask shared by every batch and head, and the log-sum-exp of each row (what backward passes
// read). The traits say the arithmetic the bound reads (oracle/attention/attention_bound.hpp): the two GEMMs as GEMM
// kernels declare theirs (KernelTraits: operand formats, exact or rounded products, accumulator, order or tensor-core
// card), the online softmax's key block, the exp's form and documented error, P's format before the second GEMM, the
// final normalisation and the output format. The runner owns every buffer (codes of the kernel's formats, pre-filled
// and guarded), as for every operation (kernels/kernel.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/kernel.hpp"
#include "oracle/softmax/softmax_bound.hpp"
#include "oracle/softmax/softmax_ref.hpp"

namespace fpcert {

/// Where the causal mask's diagonal lies when len_q != len_k. Query i may see key j iff
///   TopLeft:     j <= i                   (PyTorch SDPA's is_causal, torch.tril(ones(Lq, Lk)))
///   BottomRight: j <= i + len_k - len_q   (FlashAttention 2.1+: the last query sees every key)
/// With len_q > len_k, BottomRight's first len_q - len_k rows see no key: fully masked rows.
enum class CausalAlign : std::uint8_t { None, TopLeft, BottomRight };
std::string_view to_string(CausalAlign c);  ///< "none", "top_left", "bottom_right"

/// How the kernel forms a probability from a score x_j (the raw dot product q . k_j, before any scale) and the row's
/// running maximum.
enum class AttentionExpForm : std::uint8_t {
  /// z_j = RN(s x_j) + mask_j in f32, then exp(z_j - m) with m = max z: the textbook form.
  Natural,
  /// FlashAttention's: c = RN(s log2 e) once, m2 = RN(m_x c) from the raw maximum m_x (mask included in x), then
  /// exp2(fma(x_j, c, -m2)), one rounding inside the fma; exp2's error is the declared `exp` error.
  Base2Folded,
  /// The memory-efficient (xFormers / PyTorch mem-efficient) kernel's: z2_j = RN(x_j RN(s log2 e)), or with a mask
  /// RN(fma(x_j, s, mask_j) RN(log2 e)); m2 the running max of z2; exp2(RN(z2_j - m2)): up to three relative roundings on
  /// s x_j + mask_j before the shift (the mask added in the scaled domain: no RN(mask / s)).
  Base2Scaled,
};
std::string_view to_string(AttentionExpForm f);  ///< "natural", "base2_folded"

/// The final normalisation O = O~ / l.
enum class AttentionNormalize : std::uint8_t {
  Divide,      ///< RN(O~_c / l) per element
  Reciprocal,  ///< r = RN(1 / l) once per row, then RN(O~_c r): two roundings (FlashAttention)
  /// P_j = RN(e_j / l) each (or e_j RN(1 / l)), rounded in the compute format, then P V: the softmax first, as PyTorch's
  /// math SDPA does (softmax, then matmul): one rounding per probability instead of one per output.
  Probabilities,
};

/// c = RN_f32(s log2 e), correctly rounded (the folded base-2 form's constant; kernels/attention/attention_kernel.cpp).
float attention_scale_log2e(float s);

/// What the LSE output holds for a fully masked row.
enum class MaskedLse : std::uint8_t { NegInf, PosInf };  ///< -Inf (log 0, PyTorch math) or +Inf (FlashAttention 2)

/// Bits of AttentionTraits::masks.
inline constexpr std::uint8_t kAttnMaskCausalTopLeft = 1, kAttnMaskCausalBottomRight = 2, kAttnMaskAdditive = 4;

/// What the bound and the runner read about an attention kernel.
struct AttentionTraits {
  const Format* input = &f16;  ///< Q, K and V storage (codes in the format's container)
  /// S = Q K^T as a GEMM of depth head_dim (a_input = b_input = input; operands, products, accumulator, order or card
  /// as a GEMM kernel declares them). Its `out` is the format the scores are kept in (f32).
  KernelTraits qk;
  /// O~ = P V as a GEMM of depth len_k (a_input: the format P is rounded into before it, e.g. f16 on f16 tensor
  /// cores or f32 on the CUDA cores; b_input = input). The online softmax's rescaling of O~ by exp(m_old - m_new) is
  /// declared by key_block, not here.
  KernelTraits pv;
  SoftmaxShift shift = SoftmaxShift::Online;  ///< Shifted (max first: two passes over the keys) or Online
  int key_block = 64;                         ///< Online: keys per block (the running max changes at most once a block)
  /// Online: the rescaling factor as FlashAttention-2 forms it, exp2(RN(RN(m_old - m_new) c)) from the raw maxima's
  /// difference, while each probability is formed against its block's own shift RN(m c) (false: exp2(m2_old - m2_new),
  /// the shifts themselves, which telescope). The shifts' roundings then no longer cancel (docs/attention.md, "Bound").
  bool rescale_by_difference = false;
  AttentionExpForm exp_form = AttentionExpForm::Natural;
  ElemFnError exp;                            ///< exp (Natural) or exp2 (Base2Folded) in f32, documented error
  const Format* sum_acc = &f32;               ///< the row sum l's accumulator (of the f32 probabilities, before P's rounding)
  AttentionNormalize normalize = AttentionNormalize::Divide;
  /// Reciprocal: r = 1 / l within this many ulps (0.5: correctly rounded; 2: a --use_fast_math build, where 1.f / l is
  /// the approximate division the CUDA Programming Guide documents at 2 ulp for __fdividef).
  double recip_ulps = 0.5;
  const Format* out = &f16;                   ///< O rounded into it once
  bool writes_lse = true;                     ///< AttentionOperands::lse is written (f32, natural log)
  ElemFnError log;                            ///< the log of the LSE (f32; its error declared as for softmax)
  MaskedRowPolicy masked_rows = MaskedRowPolicy::Zero;  ///< O of a fully masked row
  MaskedLse masked_lse = MaskedLse::PosInf;   ///< LSE of a fully masked row
  std::uint8_t masks = kAttnMaskCausalTopLeft | kAttnMaskCausalBottomRight | kAttnMaskAdditive;  ///< masks it takes
  std::vector<int> head_dims;                 ///< head dims it takes (empty: any); head_dim_v must equal head_dim
  bool grouped_heads = true;                  ///< takes heads_kv < heads_q (grouped-query attention)
  /// An extra relative perturbation of each product q_c k_jc of the scores beyond the QK GEMM's declaration, derived in
  /// `note` (e.g. PyTorch's math SDPA multiplies q and k each by RN(sqrt s) in fp32 instead of scaling the scores:
  /// (1 + |RN(sqrt s)^2 / s - 1|)(1 + u)^2 - 1). The bound adds it to the QK GEMM's coefficient. 0 for the built-ins.
  double score_rel = 0;
  /// FP8 scaling (docs/attention.md, "FP8 and descale factors"): the kernel takes per-tensor descale factors dq, dk, dv
  /// (AttentionOperands::descale_*), and the operation it computes is then O = softmax(s (dq Q)(dk K)^T + mask)(dv V)
  /// on the stored codes. Folding them into its own arithmetic adds `descale_roundings` relative f32 roundings to the
  /// scores' scale (c = RN(RN(s log2 e) RN(dq dk)): 2) and as many to the LSE's (RN(s RN(dq dk)): 2), and one to the
  /// normalisation (RN(RN(1 / l) dv)).
  bool descales = false;
  int descale_roundings = 0;
  /// P formed as 2^p_offset_log2 times the probability: FlashAttention-3's FP8 forward subtracts Max_offset = 8 from the
  /// base-2 shift (exp2(x c - (m2 - 8)) lies in [0, 256]) so that P uses e4m3's range instead of [0, 1]; the shift
  /// RN(m2 - 8) is one more rounding, and the LSE is taken of l 2^-8. 0: P in [0, 1].
  int p_offset_log2 = 0;
  std::string note;                           ///< where the declaration comes from
};

struct AttentionShape {
  std::int64_t batch = 1, heads_q = 1, heads_kv = 1;
  std::int64_t len_q = 0, len_k = 0;
  std::int64_t head_dim = 0;  ///< of Q and K (and V: head_dim_v = head_dim)
};

/// Under a causal mask query i sees keys j <= i + causal_diagonal(s, c): 0 top-left, len_k - len_q bottom-right.
inline std::int64_t causal_diagonal(const AttentionShape& s, CausalAlign c) { return c == CausalAlign::BottomRight ? s.len_k - s.len_q : 0; }
/// The shape of a call whose causal diagonal lies one key further (the causal fault made around a closed kernel,
/// suites/ops/attention*/..._faults.cpp): one more key behind, and for a top-left mask one more query in front.
inline AttentionShape causal_padded_shape(AttentionShape s, CausalAlign c) {
  s.len_q += c == CausalAlign::TopLeft ? 1 : 0;
  s.len_k += 1;
  return s;
}

/// One call. Every tensor is [batch][heads][len][head_dim] with a padded row stride (elements): element (b, h, i, c) of
/// Q at ((b heads_q + h) len_q + i) ldq + c, of K and V at ((b heads_kv + h') len_k + j) ldk (ldv) + c, of O at
/// ((b heads_q + h) len_q + i) ldo + c; codes of traits.input (Q, K, V) and traits.out (O). mask: null or a len_q x
/// len_k matrix of fp32 codes (ldm) added to every batch and head's scaled scores (finite values and -Inf). lse: null
/// or batch x heads_q x len_q fp32 codes, row (b, h, i) at (b heads_q + h) len_q + i: log sum_j e^{z_j} with z_j the
/// scaled, masked scores.
struct AttentionOperands {
  AttentionShape shape;
  const void* q = nullptr;
  std::int64_t ldq = 0;
  const void* k = nullptr;
  std::int64_t ldk = 0;
  const void* v = nullptr;
  std::int64_t ldv = 0;
  const void* mask = nullptr;
  std::int64_t ldm = 0;
  CausalAlign causal = CausalAlign::None;
  float scale = 1.0f;  ///< s (1/sqrt(head_dim) rounded to f32 by the caller, or any other)
  void* o = nullptr;
  std::int64_t ldo = 0;
  void* lse = nullptr;
  /// Per-tensor descale factors (fp32 values, > 0) of a kernel that declares AttentionTraits::descales: the call computes
  /// attention of dq Q, dk K and dv V. 1 for every other kernel.
  float descale_q = 1.0f, descale_k = 1.0f, descale_v = 1.0f;
  void* stream = nullptr;  ///< cudaStream_t for device kernels
};

/// Faults a built-in kernel can carry in its own arithmetic (docs/mutation.md, "Attention").
enum class AttentionBug : std::uint8_t {
  None,
  NoRescale,          ///< online: O~ and l not rescaled by exp(m_old - m_new) when the running max grows
  ScaleAfterSoftmax,  ///< softmax(Q K^T + mask) with the scale applied to the output instead of the scores
  CausalOffByOne,     ///< the causal mask lets query i see key i + 1 (j <= i + 1 + offset)
  LseNoMax,           ///< LSE written as log l without the running max added back
  PRoundedLower,      ///< P rounded to a narrower format than declared before P V (f16 where f32 is declared, e4m3 where f16/bf16)
  DropLastKeyBlock,   ///< the last key block skipped when len_k is not a multiple of key_block
  DescaleVDropped,    ///< FP8: O not multiplied by the V descale dv (left in V's quantized units)
  Zeros,              ///< every output +0
};
std::string_view to_string(AttentionBug b);

class AttentionKernel : public Kernel {
 public:
  Operation operation() const final { return Operation::Attention; }
  virtual const AttentionTraits& attention_traits() const = 0;
  /// Whether it takes this shape with this mask (the traits' masks, head dims and grouped heads by default).
  virtual Support can_implement(const AttentionShape& s, CausalAlign causal, bool additive_mask) const;
  /// Throws NotSupportedError when it cannot do this call, DeviceError when the device fails.
  virtual void run(const AttentionOperands& ops) = 0;
  /// The same kernel with `bug` in its own arithmetic; nullptr when it cannot carry it.
  virtual std::unique_ptr<AttentionKernel> with_bug(AttentionBug bug) const {
    (void)bug;
    return nullptr;
  }
};

/// The default can_implement of attention kernels, forward and backward: a non-empty shape, heads_q a multiple of heads_kv,
/// and the masks, head dims and grouped heads the kernel declares.
Support attention_support(const AttentionShape& s, CausalAlign causal, bool additive_mask, std::uint8_t masks,
                          const std::vector<int>& head_dims, bool grouped_heads);

/// Make an attention kernel by name; nullptr when unknown or of another operation.
std::unique_ptr<AttentionKernel> make_attention_kernel(const std::string& name);
/// "attention in f16, QK^T f32 acc (...), online softmax block 64, exp2 folded 2 ulp, P f16, PV f32 acc, reciprocal,
/// out f16; masked rows zero, LSE +Inf".
std::string describe_attention_traits(const AttentionTraits& t);

}  // namespace fpcert
