// generators/attention/attention.hpp — how an attention problem sits in a Problem (family `attention`, generators/attention/attention.cpp;
// docs/generators.md, "Attention"; docs/attention.md): A stacks the rows of Q (batch x heads_q x len_q), then K and V
// (batch x heads_kv x len_k each), head_dim columns, every value exact in the source format; B is the additive mask
// (len_q x len_k fp32 values and -Inf; all +0 and not passed when the problem has none). The shape, the scale (an fp32
// value), the mask's presence and the causal alignment are in `achieved` (attention_*).
#pragma once

#include <cstdint>
#include <string>

#include "generators/problem.hpp"

namespace fpcert {

/// The causal alignment a problem asks for: 0 none, 1 top-left, 2 bottom-right (kernels/attention's CausalAlign order).
struct AttentionProblemShape {
  std::int64_t batch = 1, heads_q = 1, heads_kv = 1, len_q = 0, len_k = 0, head_dim = 0;
  double scale = 1;
  bool mask = false;
  int causal = 0;
  /// FP8 with per-tensor descale factors (fp8_scale=amax): the stored values are e4m3 codes of Q / dq, K / dk, V / dv and
  /// the operation is attention of dq Q, dk K, dv V (docs/attention.md, "FP8 and descale factors"); 1 otherwise.
  bool descaled = false;
  double descale_q = 1, descale_k = 1, descale_v = 1;
};

bool is_attention_problem(const Problem& p);
/// std::invalid_argument for another problem.
AttentionProblemShape attention_shape(const Problem& p);
/// The base-2 folded form's domain (docs/attention.md, "Bound", step 10): empty, or why the problem's mask is outside it (a
/// query whose every visible key carries a mask past s FLT_MAX, where a kernel's RN(mask / s) is -Inf); the attention and
/// attention backward runners refuse such a case for a base-2 folded kernel.
std::string attention_base2_mask_domain(const Problem& p);
/// Row offsets of Q, K and V inside A.
inline std::int64_t attention_k_row0(const AttentionProblemShape& s) { return s.batch * s.heads_q * s.len_q; }
inline std::int64_t attention_v_row0(const AttentionProblemShape& s) { return attention_k_row0(s) + s.batch * s.heads_kv * s.len_k; }

}  // namespace fpcert
