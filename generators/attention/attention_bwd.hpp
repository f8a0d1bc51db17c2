// generators/attention/attention_bwd.hpp — how an attention backward problem sits in a Problem (family `attention_bwd`,
// generators/attention/attention_bwd.cpp; docs/backward.md, "Attention backward"): A stacks the rows of Q (batch x
// heads_q x len_q), K and V (batch x heads_kv x len_k each), then dO (batch x heads_q x len_q), head_dim columns, every
// value exact in the source format; B is the additive mask as in the forward's problem. The forward's shape keys
// (attention_*, generators/attention/attention.hpp) are in `achieved`, with attention_bwd_grad. O and LSE are not in the
// problem: the runner computes them as the correctly rounded forward (oracle/attention/attention_ref.hpp) in the
// kernel's formats, what a correct forward saves.
#pragma once

#include <cstdint>

#include "generators/attention/attention.hpp"

namespace fpcert {

bool is_attention_bwd_problem(const Problem& p);
/// Row offset of dO inside A.
inline std::int64_t attention_do_row0(const AttentionProblemShape& s) { return attention_v_row0(s) + s.batch * s.heads_kv * s.len_k; }

}  // namespace fpcert
