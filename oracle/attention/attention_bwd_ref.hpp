// oracle/attention/attention_bwd_ref.hpp — the exact reference of the attention backward pass (issue 45; docs/backward.md,
// "Attention backward"). At the given codes (Q, K, V, the forward's saved O and LSE, the incoming gradient dO), with
// z_ij = s q_i . k_j + mask_ij exact and L_i the saved LSE:
//   P_ij = e^{z_ij - L_i},  D_i = sum_c dO_ic O_ic,  dP_ij = dO_i . v_j,  dS_ij = P_ij (dP_ij - D_i),
//   dV_j = sum_i P_ij dO_i,  dQ_i = s sum_j dS_ij k_j,  dK_j = s sum_i dS_ij q_i
// (dK and dV of key/value head h' sum over the query heads of its group), each element correctly rounded (nearest even)
// into its output format. reads_saved = false (a kernel that recomputes the forward): L_i and D_i are the exact forward's,
// L_i = log sum_j e^{z_ij} and D_i = sum_j P_ij dP_ij (= dO_i . O_i at the exact O), and O and LSE are not read.
// Ziv's method per output row: a double / double-double evaluation with a proved error bound relative to the sums of
// absolute values (sum_j |dS_ij| |k_jc| ...: the sums can cancel, and dP - D can); where an element's bracket rounds two
// ways, MPFR at a precision doubled from 128 bits. Keys a query does not see (causal diagonal, the mask's -Inf) have
// P = 0; a query that sees no key has a zero dQ row and adds nothing to dK and dV. A NaN or +Inf score makes the row's
// results NaN. No dependency on kernels/.
#pragma once

#include <cstdint>
#include <vector>

#include "oracle/attention/attention_ref.hpp"

namespace fpcert {

/// The exact inputs of one backward call as doubles; O, dO dense like Q, lse: rows() values (read when reads_saved).
struct AttentionBwdInputs {
  AttentionInputs fwd;            ///< Q, K, V, the mask, the scale and the causal diagonal
  const double* o = nullptr;      ///< batch x heads_q x len_q x head_dim (reads_saved)
  const double* d_o = nullptr;    ///< batch x heads_q x len_q x head_dim
  const double* lse = nullptr;    ///< batch x heads_q x len_q (reads_saved)
  bool reads_saved = true;

  std::int64_t kv_rows() const { return fwd.batch * fwd.heads_kv * fwd.len_k; }
  /// The first query row of key/value row kr's group (query head h' g, g = heads_q / heads_kv) and the group size g.
  std::int64_t group_row0(std::int64_t kr) const;
  std::int64_t group() const { return fwd.heads_q / fwd.heads_kv; }
};

struct AttentionBwdRefStats {
  std::int64_t elements = 0, mpfr = 0, unsettled = 0;  ///< unsettled: Ziv's cap reached (the p-bit value's rounding kept)
};

/// The reference of dQ on `q_rows` (query rows (b heads_q + h) len_q + i) and of dK, dV on `kv_rows` (key/value rows
/// (b heads_kv + h') len_k + j); both empty with `all`: every row. Rows in parallel (threads 0: every core).
struct AttentionBwdRef {
  std::vector<std::int64_t> q_rows, kv_rows;
  std::vector<std::uint64_t> dq_code, dk_code, dv_code;  ///< rows x head_dim codes of the output formats
  std::vector<double> dq_value, dk_value, dv_value;      ///< the exact values as doubles (NaN where the row is NaN)
  std::vector<std::uint8_t> q_masked;                    ///< 1: the query sees no key (its dQ row is 0)
  AttentionBwdRefStats stats;
};
AttentionBwdRef attention_bwd_reference(const AttentionBwdInputs& in, const Format& dq_out, const Format& dk_out, const Format& dv_out,
                                        const std::vector<std::int64_t>& q_rows = {}, const std::vector<std::int64_t>& kv_rows = {},
                                        unsigned threads = 0);

/// Key/value rows sampled for a long sequence: `count` rows spread over every (batch, kv head) and the whole length,
/// the first and last key of each head included, sorted.
std::vector<std::int64_t> attention_bwd_sample_kv_rows(const AttentionBwdInputs& in, std::int64_t count);

/// Every element evaluated with MPFR only at `prec` bits (each operation rounded to nearest, exact products summed
/// once), each result rounded once: what the tests compare the reference with. dq: rows() x head_dim, dk and dv:
/// kv_rows() x head_dim codes.
void attention_bwd_mpfr(const AttentionBwdInputs& in, const Format& dq_out, const Format& dk_out, const Format& dv_out, long prec,
                        std::vector<std::uint64_t>& dq, std::vector<std::uint64_t>& dk, std::vector<std::uint64_t>& dv);

}  // namespace fpcert
