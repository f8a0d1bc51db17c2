/* plugin/fpcert_plugin_attention.h — the plugin ABI's attention forward and backward (issues 41 and 45): the
 * declarations of kernels/attention/attention_kernel.hpp (AttentionTraits, AttentionOperands) and
 * kernels/attention/attention_backward_kernel.hpp (AttentionBwdTraits, AttentionBwdOperands) in C.
 *
 * ABI minor 10 (docs/plugin.md, "Attention kernels" and "Attention backward kernels"; minor 13: FP8 descales and the P
 * offset, fpcert_attention_fp8): fpcert_kernel.attention,
 * attention_can_implement, attention_run (operation FPCERT_OPERATION_ATTENTION) and attention_bwd,
 * attention_bwd_can_implement, attention_bwd_run (FPCERT_OPERATION_ATTENTION_BWD), read by plugin/attention_plugin.cpp;
 * a kernel of an older minor ends before them (FPCERT_KERNEL_SIZE_MINOR9) and cannot be an attention kernel.
 *
 * Part of <fpcert/plugin.h>, which includes it (installed beside it as <fpcert/fpcert_plugin_attention.h)
 * after the base types it uses (formats, GEMM traits and orders, exp / log errors, memory, status, determinism, masked
 * rows); include that header, not this one.
 *
 * Forward, per batch b and query head h (KV head h' = h / (heads_q / heads_kv)), for row i:
 *   x_j = q_i . k_j              (the QK GEMM, depth head_dim, declared by `qk`)
 *   z_j = RN(scale x_j) + mask_ij  (NATURAL), or the exp2 form with the scale folded (BASE2_FOLDED)
 *   p_j = exp(z_j - m),  l = sum_j p_j (sum_format),  O_i = RN_out((sum_j RN_p(p_j) v_j) / l)  (the PV GEMM: `pv`)
 *   LSE_i = m + log l  (fp32, natural log)
 * Backward (FlashAttention 2's): P = exp(z - LSE), dP = dO V^T, D_i = sum_c dO_ic O_ic, dS = P (dP - D),
 *   dV = P^T dO, dQ = scale dS K, dK = scale dS^T Q. */
#ifndef FPCERT_PLUGIN_ATTENTION_H_
#define FPCERT_PLUGIN_ATTENTION_H_

#ifndef FPCERT_PLUGIN_H_
#error "include <fpcert/plugin.h>: it includes fpcert_plugin_attention.h where the ABI's base types are defined"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* How a probability is formed from a raw score x_j (AttentionExpForm). */
typedef int32_t fpcert_attention_exp_form;
enum {
  FPCERT_ATTENTION_EXP_NATURAL = 1,     /* z_j = RN(s x_j) + mask_j in f32, then exp(z_j - m), m = max z */
  FPCERT_ATTENTION_EXP_BASE2_FOLDED = 2, /* FlashAttention's: c = RN(s log2 e) once, m2 = RN(m_x c), exp2(fma(x_j, c, -m2)) */
  FPCERT_ATTENTION_EXP_BASE2_SCALED = 3  /* ABI minor 12, forward only: the memory-efficient kernel's, z2 = RN(x RN(s RN(log2 e)))
                                            (with a mask RN(fma(x, s, mask) RN(log2 e))), m2 the running max of z2,
                                            exp2(RN(z2 - m2)) */
};

/* ABI minor 12: attention's shift may also be ONLINE_BY_DIFFERENCE, an ONLINE softmax whose rescaling factor is formed as
   FlashAttention-2 forms it, exp2(RN(RN(m_old - m_new) c)) from the raw maxima, each probability against its block's own
   shift RN(m c) (docs/attention.md, "Bound", step 5). */
enum { FPCERT_ATTENTION_SHIFT_ONLINE_BY_DIFFERENCE = 4 };

/* How O~ is normalised by the row sum l (AttentionNormalize). */
typedef int32_t fpcert_attention_normalize;
enum {
  FPCERT_ATTENTION_NORMALIZE_DIVIDE = 1,        /* RN(O~_c / l) per element */
  FPCERT_ATTENTION_NORMALIZE_RECIPROCAL = 2,    /* r = RN(1 / l) once per row, then RN(O~_c r) (FlashAttention) */
  FPCERT_ATTENTION_NORMALIZE_SOFTMAX_FIRST = 3, /* P_j = RN(e_j / l) first, then P V (PyTorch's math SDPA) */
  FPCERT_ATTENTION_NORMALIZE_RECIPROCAL_APPROX = 4 /* ABI minor 12: RECIPROCAL with 1 / l within 2 ulp (a --use_fast_math
                                                      build's approximate division) */
};

/* The LSE a fully masked row gets (MaskedLse). */
typedef int32_t fpcert_attention_masked_lse;
enum {
  FPCERT_ATTENTION_MASKED_LSE_NEG_INF = 1, /* log 0 = -Inf (PyTorch's math SDPA) */
  FPCERT_ATTENTION_MASKED_LSE_POS_INF = 2  /* +Inf (FlashAttention 2) */
};

/* The causal mask of a call (CausalAlign). */
typedef int32_t fpcert_attention_causal;
enum {
  FPCERT_ATTENTION_CAUSAL_NONE = 1,        /* no causal mask */
  FPCERT_ATTENTION_CAUSAL_TOP_LEFT = 2,    /* key j visible to query i when j <= i */
  FPCERT_ATTENTION_CAUSAL_BOTTOM_RIGHT = 3 /* when j <= i + len_k - len_q */
};

/* Bits of fpcert_attention_traits.masks / fpcert_attention_bwd_traits.masks (the masks a kernel takes). */
#define FPCERT_ATTENTION_MASK_CAUSAL_TOP_LEFT 1u
#define FPCERT_ATTENTION_MASK_CAUSAL_BOTTOM_RIGHT 2u
#define FPCERT_ATTENTION_MASK_ADDITIVE 4u
#define FPCERT_ATTENTION_MASKS_ALL 7u

/* Head dims a kernel takes: head_dim_count values (0: any). head_dim_v always equals head_dim. */
#define FPCERT_ATTENTION_MAX_HEAD_DIMS 8

/* One matrix product inside an attention kernel: its arithmetic and its summation order, exactly as a GEMM kernel
 * declares them (fpcert_kernel.gemm and .gemm_order; docs/plugin.md, "GEMM kernels"). */
typedef struct fpcert_attention_product {
  fpcert_gemm_traits traits;            /* formats, products, accumulator, promotion, output, stated order text */
  fpcert_gemm_order order;              /* the structured order (FPCERT_ORDER_UNKNOWN allowed: graded by its family) */
} fpcert_attention_product;

/* The arithmetic of an attention forward kernel (docs/attention.md, "Bound"). Every field required unless marked. */
typedef struct fpcert_attention_traits {
  fpcert_format input;                  /* Q, K and V storage */
  fpcert_attention_product qk;          /* S = Q K^T (depth head_dim): a_input = b_input = input, out_format the scores'
                                           format (f32); order as a GEMM kernel states it */
  fpcert_attention_product pv;          /* O~ = P V (depth len_k): a_input the format P is rounded into (f16 on f16 tensor
                                           cores, f32 on CUDA cores), b_input = input */
  fpcert_softmax_shift shift;           /* SHIFTED (max first) or ONLINE (running max rescaled once per key block) */
  int32_t key_block;                    /* ONLINE: keys per block (>= 1); SHIFTED: 0 */
  fpcert_attention_exp_form exp_form;
  int32_t writes_lse;                   /* 1: writes fpcert_attention_args.lse when it is not NULL; 0: never */
  fpcert_elem_fn_error exp;             /* exp (NATURAL) or exp2 (BASE2_FOLDED) in f32 */
  fpcert_elem_fn_error log;             /* writes_lse: the log of the LSE (f32); else all zero */
  fpcert_format sum_format;             /* the row sum l's accumulator (of the f32 probabilities, before P's rounding) */
  fpcert_attention_normalize normalize;
  fpcert_format out_format;             /* O rounded into it once */
  fpcert_masked_rows masked_rows;       /* O of a fully masked row: ZERO (FlashAttention) or NAN */
  fpcert_attention_masked_lse masked_lse; /* LSE of a fully masked row */
  uint32_t masks;                       /* FPCERT_ATTENTION_MASK_* bits it takes (0: no mask; masked cases not supported) */
  int32_t grouped_heads;                /* 1: takes heads_kv < heads_q (grouped-query attention) */
  int32_t head_dim_count;               /* 0 .. FPCERT_ATTENTION_MAX_HEAD_DIMS; 0: any head dim */
  int32_t head_dims[FPCERT_ATTENTION_MAX_HEAD_DIMS]; /* the first head_dim_count entries, each >= 1; the rest 0 */
  double score_rel;                     /* extra relative error of each product q_c k_jc beyond qk, in [0, 1) (e.g. q and
                                           k each scaled by RN(sqrt s)); 0 for most kernels */
  const char* note;                     /* where the declaration comes from (required when score_rel > 0, else optional) */
} fpcert_attention_traits;

/* ABI minor 13: FP8 attention (docs/plugin.md, "FP8 attention"; docs/attention.md, "FP8 and descale factors"), appended to
 * fpcert_kernel as attention_fp8 (a kernel of an older minor, or all zeros: no descales, no P offset). */
typedef struct fpcert_attention_fp8 {
  int32_t descales;            /* 1: takes per-tensor descale factors (fpcert_attention_args.descale_q/k/v): the call computes
                                  attention of descale_q Q, descale_k K, descale_v V on the stored codes; 0: none */
  int32_t descale_roundings;   /* descales: the relative fp32 roundings folding them adds to the scores' scale and to the
                                  LSE's (FlashAttention-3: c = RN(RN(s log2 e) RN(dq dk)), RN(s RN(dq dk)): 2), 0 .. 8; the
                                  normalisation RN(RN(1 / l) dv) is one more, always counted; 0 when descales is 0 */
  int32_t p_offset_log2;       /* P formed as 2^k times the probability (FlashAttention-3's FP8 Max_offset: 8; BASE2_FOLDED
                                  kernels: the shift RN(RN(m c) - k)), 0 .. 16; 0: P in [0, 1] */
  int32_t reserved;            /* 0 */
} fpcert_attention_fp8;

/* The shape of a call. Every tensor is [batch][heads][len][head_dim], rows padded to a leading dimension (elements). */
typedef struct fpcert_attention_shape {
  int64_t batch, heads_q, heads_kv;     /* >= 1 each; heads_q a multiple of heads_kv */
  int64_t len_q, len_k;                 /* >= 1 each */
  int64_t head_dim;                     /* of Q, K and V (head_dim_v = head_dim), >= 1 */
} fpcert_attention_shape;

/* One forward call. Element (b, h, i, c) of Q at ((b heads_q + h) len_q + i) ldq + c; of K and V at
 * ((b heads_kv + h') len_k + j) ldk (ldv) + c; of O at ((b heads_q + h) len_q + i) ldo + c. Pointers in the kernel's
 * memory space. */
typedef struct fpcert_attention_args {
  uint32_t struct_size;                 /* sizeof(fpcert_attention_args) as fpcert compiled it */
  fpcert_memory memory;                 /* the kernel's declared memory space */
  fpcert_attention_shape shape;
  const void* q;                        /* codes of traits.input */
  int64_t ldq;                          /* >= head_dim */
  const void* k;
  int64_t ldk;
  const void* v;
  int64_t ldv;
  const void* mask;                     /* NULL, or len_q x len_k fp32 codes (finite and -Inf) added to every batch and
                                           head's scaled scores, leading dimension ldm */
  int64_t ldm;
  fpcert_attention_causal causal;       /* NONE or a declared causal mask */
  float scale;                          /* s: 1/sqrt(head_dim) rounded to f32 by fpcert, or another value */
  void* o;                              /* codes of traits.out_format; pre-filled and guarded */
  int64_t ldo;
  void* lse;                            /* NULL, or batch x heads_q x len_q fp32 codes at (b heads_q + h) len_q + i:
                                           log sum_j e^{z_j} (natural log) */
  /* ---- appended in ABI minor 13 (read them only when struct_size covers them; fpcert always does) */
  float descale_q, descale_k, descale_v; /* the per-tensor descale factors (> 0) of a kernel whose attention_fp8.descales is
                                           1; 1 for every other kernel */
  int32_t reserved_minor13;             /* 0 */
} fpcert_attention_args;

/* Can this kernel compute `shape` (masked: with an additive mask; causal as in the args)? As
 * fpcert_gemm_can_implement_fn. Optional. */
typedef fpcert_status (*fpcert_attention_can_implement_fn)(void* user_data, const fpcert_attention_shape* shape,
                                                           int32_t masked, fpcert_attention_causal causal,
                                                           char* message, size_t message_capacity);
/* Compute. Same stream and completion rules as fpcert_gemm_run_fn. */
typedef fpcert_status (*fpcert_attention_run_fn)(void* user_data, const fpcert_attention_args* args, void* stream,
                                                 char* message, size_t message_capacity);

/* The arithmetic of an attention backward kernel (docs/backward.md, "Bound"). Every field required unless marked. */
typedef struct fpcert_attention_bwd_traits {
  fpcert_format input;                  /* Q, K, V, O and dO storage */
  fpcert_attention_product qk;          /* S = Q K^T recomputed (depth head_dim; out_format the scores', f32) */
  fpcert_attention_product dov;         /* dP = dO V^T (depth head_dim) */
  fpcert_attention_product pdo;         /* dV = P^T dO (depth len_q, times the group size; a_input: P's format) */
  fpcert_attention_product dsk;         /* dQ = dS K (depth len_k; a_input: dS's format) */
  fpcert_attention_product dsq;         /* dK = dS^T Q (depth len_q, times the group size; a_input: dS's format) */
  fpcert_attention_exp_form exp_form;   /* NATURAL: P = exp(RN(s x) + mask - LSE); BASE2_FOLDED as FlashAttention */
  int32_t reads_saved;                  /* 1: reads the saved O and LSE; 0: recomputes the forward itself */
  fpcert_elem_fn_error exp;             /* exp (exp2) in f32 */
  fpcert_format d_acc;                  /* D_i's accumulator (any order) */
  fpcert_format compute_format;         /* dP - D, P (dP - D) and the scale's products, nearest even */
  fpcert_determinism dq_determinism;    /* RUN_TO_RUN: dQ's partial sums added with atomics (any order) */
  fpcert_format dq_acc;                 /* the format dQ's partials are added in (atomics: the buffer's format) */
  fpcert_format dq_out;                 /* dQ, dK, dV rounded into these once */
  fpcert_format dk_out;
  fpcert_format dv_out;
  fpcert_attention_masked_lse masked_lse; /* the LSE a fully masked row comes with (its P is 0, its dQ row 0) */
  uint32_t masks;                       /* FPCERT_ATTENTION_MASK_* bits it takes */
  int32_t grouped_heads;                /* 1: takes heads_kv < heads_q */
  int32_t head_dim_count;               /* as fpcert_attention_traits */
  int32_t head_dims[FPCERT_ATTENTION_MAX_HEAD_DIMS];
  int32_t reserved;                     /* 0 */
  const char* note;                     /* where the declaration comes from (optional) */
} fpcert_attention_bwd_traits;

/* One backward call. Q, O, dO, dQ: heads_q heads, len_q rows; K, V, dK, dV: heads_kv heads, len_k rows; strides as
 * fpcert_attention_args. Q, K, V, O, dO codes of traits.input; dQ, dK, dV codes of dq_out, dk_out, dv_out (pre-filled
 * and guarded). lse: batch x heads_q x len_q fp32 codes as the forward wrote them. */
typedef struct fpcert_attention_bwd_args {
  uint32_t struct_size;                 /* sizeof(fpcert_attention_bwd_args) as fpcert compiled it */
  fpcert_memory memory;
  fpcert_attention_shape shape;
  const void* q;
  int64_t ldq;
  const void* k;
  int64_t ldk;
  const void* v;
  int64_t ldv;
  const void* o;
  int64_t ldo;
  const void* d_o;
  int64_t lddo;
  const void* lse;
  const void* mask;                     /* as fpcert_attention_args */
  int64_t ldm;
  fpcert_attention_causal causal;
  float scale;
  void* dq;
  int64_t lddq;
  void* dk;
  int64_t lddk;
  void* dv;
  int64_t lddv;
} fpcert_attention_bwd_args;

typedef fpcert_status (*fpcert_attention_bwd_can_implement_fn)(void* user_data, const fpcert_attention_shape* shape,
                                                               int32_t masked, fpcert_attention_causal causal,
                                                               char* message, size_t message_capacity);
typedef fpcert_status (*fpcert_attention_bwd_run_fn)(void* user_data, const fpcert_attention_bwd_args* args,
                                                     void* stream, char* message, size_t message_capacity);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* FPCERT_PLUGIN_ATTENTION_H_ */
