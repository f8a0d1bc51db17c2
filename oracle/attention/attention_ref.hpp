// oracle/attention/attention_ref.hpp — the exact reference of scaled-dot-product attention (issue 41; docs/attention.md,
// "Reference"). For query row (b, h, i) and the keys j it may see (the causal diagonal and the additive mask's -Inf
// decide which), with x_j = q_i . k_j the exact dot product of the stored values and z_j = s x_j + mask_ij exact,
//   O_c = sum_j e^{z_j - M} v_jc / sum_j e^{z_j - M}      correctly rounded (nearest even) into the output format,
//   LSE = M + log sum_j e^{z_j - M}                        correctly rounded into fp32,
// (M = max z_j; neither depends on it). Ziv's method per row: a double evaluation (compensated dot products, exp_fast,
// compensated sums) with a proved error bound relative to sum_j e^{z_j - M} |v_jc| (the numerator is a signed sum: it
// can cancel); where an element's bracket rounds two ways, MPFR at a precision doubled from 128 bits (scores exact to
// p + 64 bits, exp, exact products by v, one rounding per sum). Fully masked rows (no key visible) follow the declared
// policies: O zeros or NaN, LSE +Inf or -Inf. A NaN or +Inf in the row's scaled, masked scores makes O and LSE NaN.
// No dependency on kernels/: the causal mask comes as a diagonal offset (key j visible iff j <= i + offset).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "oracle/format.hpp"
#include "oracle/softmax/softmax_ref.hpp"

namespace fpcert {

/// The exact inputs of one attention call, as doubles, each tensor dense [batch][heads][len][head_dim].
struct AttentionInputs {
  std::int64_t batch = 1, heads_q = 1, heads_kv = 1, len_q = 0, len_k = 0, head_dim = 0;
  const double* q = nullptr;     ///< batch x heads_q x len_q x head_dim
  const double* k = nullptr;     ///< batch x heads_kv x len_k x head_dim
  const double* v = nullptr;     ///< batch x heads_kv x len_k x head_dim
  const double* mask = nullptr;  ///< null or len_q x len_k (finite values and -Inf), shared by every batch and head
  double scale = 1;              ///< s (an fp32 value)
  bool causal = false;
  std::int64_t causal_offset = 0;  ///< causal: key j visible from query i iff j <= i + causal_offset

  std::int64_t rows() const { return batch * heads_q * len_q; }
  /// Row r = (b heads_q + h) len_q + i: its query, and the key / value rows of its kv head h / (heads_q / heads_kv).
  const double* q_row(std::int64_t r) const { return q + r * head_dim; }
  std::int64_t kv_base(std::int64_t r) const;  ///< index of key row 0 of r's kv head, in rows of head_dim
  std::int64_t query(std::int64_t r) const { return r % len_q; }
  /// Whether query row r sees key j (causal diagonal and mask != -Inf).
  bool visible(std::int64_t r, std::int64_t j) const;
  double mask_at(std::int64_t r, std::int64_t j) const { return mask ? mask[query(r) * len_k + j] : 0.0; }
};

/// One row's scores: x_j (the dot product rounded to double: within 2^-52 |x_j| + gamma_{d-1}^2 sum_c |q_c k_jc|),
/// qk_abs_j = sum_c |q_c k_jc|, z_j = s x_j + mask_j as hi + lo (within 2^-100 (|s x_j| + |mask_j|) + s gamma^2 qk_abs_j),
/// and -Inf for keys the row does not see.
struct AttentionScores {
  std::vector<double> x, qk_abs, z_hi, z_lo;
  std::vector<double> z_err;  ///< the bound on |z_hi + z_lo - z_j| just stated
  std::int64_t visible = 0;
  bool nan = false;  ///< a NaN or +Inf score (the row's results are NaN)
};
AttentionScores attention_scores(const AttentionInputs& in, std::int64_t r);

struct AttentionRefStats {
  std::int64_t elements = 0, mpfr = 0, unsettled = 0;  ///< unsettled: Ziv's cap reached (the p-bit value's rounding kept)
};

/// The reference of a set of rows (all when `rows` is empty), rows in parallel (threads 0: every core).
struct AttentionRef {
  std::vector<std::int64_t> rows;  ///< the row indices computed, in order
  std::vector<std::uint64_t> code;  ///< rows.size() x head_dim codes of `out`
  std::vector<double> value;        ///< the exact O as doubles (within 2^-45 of sum p |v| relative, see above)
  std::vector<std::uint64_t> lse_code;  ///< fp32 codes
  std::vector<double> lse_value;
  std::vector<std::uint8_t> masked;     ///< 1: the row sees no key
  AttentionRefStats stats;
};
AttentionRef attention_reference(const AttentionInputs& in, const Format& out, MaskedRowPolicy o_policy, bool masked_lse_pos_inf,
                                 const std::vector<std::int64_t>& rows = {}, unsigned threads = 0);

/// One row of it: codes[head_dim] and values (may be null), the LSE's fp32 code and value. Returns false for a fully
/// masked row.
bool attention_reference_row(const AttentionInputs& in, std::int64_t r, const Format& out, MaskedRowPolicy o_policy,
                             bool masked_lse_pos_inf, std::uint64_t* codes, double* values, std::uint64_t& lse_code,
                             double& lse_value, AttentionRefStats* stats = nullptr);

/// Rows sampled for a long sequence: `count` rows spread over every (batch, head) and the whole length, the first and
/// last query of each head included, sorted.
std::vector<std::int64_t> attention_sample_rows(const AttentionInputs& in, std::int64_t count);

/// Row r evaluated with MPFR only at `prec` bits (exact products summed once, every operation rounded to nearest),
/// each result rounded once: what the tests compare the reference with. Fully masked rows as the policies say.
void attention_mpfr_row(const AttentionInputs& in, std::int64_t r, const Format& out, MaskedRowPolicy o_policy, bool masked_lse_pos_inf,
                        long prec, std::uint64_t* codes, std::uint64_t& lse_code);

}  // namespace fpcert
