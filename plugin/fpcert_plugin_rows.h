/* plugin/fpcert_plugin_rows.h — the plugin ABI's softmax and normalisation kernels (ABI minor 6; docs/plugin.md,
 * "Softmax and normalisation kernels"; docs/softmax.md, docs/normalization.md): their traits, call arguments and
 * functions, and the elementary-function errors they (and attention, fpcert_plugin_attention.h) declare.
 *
 * Part of <fpcert/plugin.h>, which includes it (installed beside it as <fpcert/fpcert_plugin_rows.h>); include that
 * header, not this one. Split from it unchanged: the layouts and names are those of minor 6. */
#ifndef FPCERT_PLUGIN_ROWS_H_
#define FPCERT_PLUGIN_ROWS_H_

/* ---- softmax and normalisation (ABI minor 6; docs/plugin.md, "Softmax and normalisation kernels";
 *      docs/softmax.md, docs/normalization.md) --------------------------------------------------------------- */

/* An elementary function's implementation (exp, log, rsqrt) and its documented error, what the bound reads: at most
 * ulps + floor(ulps_per_x |x|) ulp of the compute format for a result in the normal range (x the argument), and at
 * most abs_error for a result below the least normal. A preset names a documented implementation whose numbers fpcert
 * holds (fp32 compute only); STATED gives the numbers and their source. */
typedef int32_t fpcert_elem_fn;
enum {
  FPCERT_ELEM_FN_STATED = 1,         /* ulps, ulps_per_x, abs_error and source as given */
  FPCERT_ELEM_FN_LIBM_F32 = 2,       /* the fp32 rounding of glibc's double function (exp, log; rsqrt: 1 / sqrt): 1 ulp */
  FPCERT_ELEM_FN_CUDA_EXPF = 3,      /* exp only: CUDA expf, 2 ulp */
  FPCERT_ELEM_FN_CUDA_FAST_EXPF = 4, /* exp only: CUDA __expf, 2 + floor(|1.173 x|) ulp, results below 2^-126 flushed */
  FPCERT_ELEM_FN_CUDA_LOGF = 5,      /* log only: CUDA logf, 1 ulp */
  FPCERT_ELEM_FN_CUDA_RSQRTF = 6,    /* rsqrt only: CUDA rsqrtf, 2 ulp */
  FPCERT_ELEM_FN_EXPF_OPS = 7        /* exp only: fpcert's expf_ops, a fixed sequence of binary32 operations (oracle/math/
                                        expf_ops.hpp), 1 ulp; declared EXACTLY: a shifted softmax using it is graded bit for bit */
};
typedef struct fpcert_elem_fn_error {
  fpcert_elem_fn implementation;  /* required */
  int32_t reserved;               /* 0 */
  double ulps;                    /* STATED: >= 0.5 (nothing rounds better than correctly); a preset: 0 */
  double ulps_per_x;              /* STATED: >= 0 (rsqrt: 0); a preset: 0 */
  double abs_error;               /* STATED: >= 0, the error of a result below the least normal (rsqrt: 0); a preset: 0 */
  const char* source;             /* STATED: the documentation the numbers come from (required); a preset: NULL */
} fpcert_elem_fn_error;

typedef int32_t fpcert_softmax_fn;
enum {
  FPCERT_SOFTMAX_FN_SOFTMAX = 1,    /* y_j = exp(z_j) / sum_k exp(z_k) */
  FPCERT_SOFTMAX_FN_LOG_SOFTMAX = 2 /* y_j = z_j - log(sum_k exp(z_k)) */
};
typedef int32_t fpcert_softmax_shift;
enum {
  FPCERT_SOFTMAX_SHIFTED = 1,   /* the row's max first, then exp(z_j - max) */
  FPCERT_SOFTMAX_UNSHIFTED = 2, /* exp(z_j) as it is (overflows once z_j passes log(largest finite)) */
  FPCERT_SOFTMAX_ONLINE = 3     /* running max and running sum rescaled by exp(m_old - m_new), block by block (sum_block) */
};
typedef int32_t fpcert_masked_rows;
enum {
  FPCERT_MASKED_ROWS_NAN = 1, /* a row of -Inf only gives NaN everywhere (torch.softmax, the plain shifted formula) */
  FPCERT_MASKED_ROWS_ZERO = 2 /* +0 everywhere (log-softmax: -Inf), as FlashAttention's "safe softmax" */
};

/* The arithmetic of a softmax kernel (docs/softmax.md, "Bound"). Every operation but the row sum is in compute_format,
 * rounded to nearest even; fpcert rounds the exact logits into x_input to nearest even. */
typedef struct fpcert_softmax_traits {
  fpcert_softmax_fn fn;              /* required */
  fpcert_softmax_shift shift;        /* required */
  fpcert_format x_input;             /* format the logits are passed in */
  fpcert_format compute_format;      /* every operation but the row sum */
  fpcert_format sum_format;          /* the row sum's accumulator (nearest even) */
  fpcert_reduce_order_kind sum_order; /* the row sum's order (ONLINE: BLOCKED, sum_block the online block) */
  int32_t sum_block;                 /* BLOCKED: terms per block (>= 1); else 0 */
  int32_t sum_lanes;                 /* WARP_TREE: a power of two, 1 .. 1024; else 0 */
  int32_t sum_chain_from_first;      /* 0: chains from +0; 1: from their first term */
  int32_t reciprocal;                /* SOFTMAX: 0 e_j / S (one rounding), 1 e_j * fl(1 / S) (two); LOG_SOFTMAX: 0 */
  fpcert_format out_format;          /* the result rounded into it once */
  fpcert_masked_rows masked_rows;    /* what a row of -Inf only gives (required) */
  int32_t accepts_mask;              /* 1: takes the additive mask (fpcert_softmax_args.mask); 0: masked cases are not supported */
  int32_t reserved;                  /* 0 */
  fpcert_elem_fn_error exp;          /* the exp used (required) */
  fpcert_elem_fn_error log;          /* LOG_SOFTMAX: the log used (required); SOFTMAX: all zero */
} fpcert_softmax_traits;

/* One softmax call over `rows` rows of `cols` logits: z = RN(scale x) + mask in the compute format (scale 1: z = x +
 * mask), y = softmax or log-softmax of each row of z. Pointers in the kernel's memory space. */
typedef struct fpcert_softmax_args {
  uint32_t struct_size;              /* sizeof(fpcert_softmax_args) as fpcert compiled it */
  fpcert_memory memory;              /* the kernel's declared memory space */
  int64_t rows, cols;                /* >= 1 each */
  const void* x;                     /* rows x cols codes of x_input, row-major, leading dimension ldx */
  int64_t ldx;
  const void* mask;                  /* NULL, or rows x cols fp32 codes of +0 and -Inf, leading dimension ldm */
  int64_t ldm;
  float scale;                       /* the temperature's reciprocal: 1 for a plain softmax */
  int32_t reserved;                  /* 0 */
  void* out;                         /* rows x cols codes of out_format, leading dimension ldo; pre-filled and guarded */
  int64_t ldo;
} fpcert_softmax_args;

/* Can this kernel compute `rows` x `cols` (masked: with a mask)? As fpcert_gemm_can_implement_fn. Optional. */
typedef fpcert_status (*fpcert_softmax_can_implement_fn)(void* user_data, int64_t rows, int64_t cols, int32_t masked, char* message,
                                                         size_t message_capacity);
/* Compute. Same stream and completion rules as fpcert_gemm_run_fn. */
typedef fpcert_status (*fpcert_softmax_run_fn)(void* user_data, const fpcert_softmax_args* args, void* stream, char* message,
                                               size_t message_capacity);

typedef int32_t fpcert_norm_kind;
enum {
  FPCERT_NORM_LAYERNORM = 1, /* y_j = (x_j - mean) / sqrt(var + eps) * gamma_j + beta_j, var biased (1/n) */
  FPCERT_NORM_RMSNORM = 2    /* y_j = x_j / sqrt(mean(x^2) + eps) * gamma_j + beta_j */
};
typedef int32_t fpcert_norm_variance;
enum {
  FPCERT_NORM_VARIANCE_TWO_PASS = 1, /* the mean first, then sum (x_j - mean)^2 / n */
  FPCERT_NORM_VARIANCE_WELFORD = 2,  /* one pass updating mean and M2 sequentially (Welford 1962) */
  FPCERT_NORM_VARIANCE_ONE_PASS = 3,  /* E[x^2] - E[x]^2 (cancels when |mean| >> the spread: declared weaker) */
  FPCERT_NORM_VARIANCE_WELFORD_COMBINED = 4 /* Welford per part (welford_parts parts: part t takes j = t, t + P, ...,
                                               in order), the parts' (n, mean, M2) combined pairwise by any binary tree
                                               of depth ceil(log2 P) (Chan, Golub and LeVeque 1979): a warp's lanes,
                                               PyTorch's layer_norm */
};
typedef int32_t fpcert_norm_eps;
enum {
  FPCERT_NORM_EPS_INSIDE_SQRT = 1,  /* 1 / sqrt(var + eps): the definition (torch layer_norm, rms_norm) */
  FPCERT_NORM_EPS_OUTSIDE_SQRT = 2  /* 1 / (sqrt(var) + eps): another function; refused (fpcert certifies the definition) */
};

/* The arithmetic of a normalisation kernel (docs/normalization.md, "Bound"). */
typedef struct fpcert_norm_traits {
  fpcert_norm_kind kind;             /* required */
  fpcert_norm_variance variance;     /* LAYERNORM: required; RMSNORM: 0 (the mean of squares is one sum) */
  fpcert_format x_input;             /* format of x, gamma and beta */
  fpcert_format compute_format;      /* every operation but the row sums, nearest even */
  fpcert_format acc_format;          /* the row sums' accumulator (any order) */
  fpcert_format out_format;          /* the result rounded into it once */
  fpcert_norm_eps eps_placement;     /* required: INSIDE_SQRT */
  int32_t welford_parts;             /* WELFORD_COMBINED: the parts P, 1 .. 2^20; every other variance: 0 */
  fpcert_elem_fn_error rsqrt;        /* the reciprocal square root used (ulps only: ulps_per_x and abs_error 0) */
} fpcert_norm_traits;

/* One normalisation call over `rows` rows of `cols` elements. Pointers in the kernel's memory space. */
typedef struct fpcert_norm_args {
  uint32_t struct_size;              /* sizeof(fpcert_norm_args) as fpcert compiled it */
  fpcert_memory memory;              /* the kernel's declared memory space */
  int64_t rows, cols;                /* >= 1 each */
  const void* x;                     /* rows x cols codes of x_input, row-major, leading dimension ldx */
  int64_t ldx;
  const void* gamma;                 /* NULL (1) or cols codes of x_input */
  const void* beta;                  /* NULL (0) or cols codes of x_input */
  float eps;                         /* >= 0 (0: var + eps may vanish; such a row's result is NaN, docs/normalization.md) */
  int32_t reserved;                  /* 0 */
  void* out;                         /* rows x cols codes of out_format, leading dimension ldo; pre-filled and guarded */
  int64_t ldo;
} fpcert_norm_args;

/* Can this kernel normalise `rows` x `cols`? As fpcert_gemm_can_implement_fn. Optional. */
typedef fpcert_status (*fpcert_norm_can_implement_fn)(void* user_data, int64_t rows, int64_t cols, char* message,
                                                      size_t message_capacity);
/* Normalise. Same stream and completion rules as fpcert_gemm_run_fn. */
typedef fpcert_status (*fpcert_norm_run_fn)(void* user_data, const fpcert_norm_args* args, void* stream, char* message,
                                            size_t message_capacity);

#endif /* FPCERT_PLUGIN_ROWS_H_ */
