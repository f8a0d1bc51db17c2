/* plugin/fpcert_plugin.h — the fpcert plugin ABI: plain C, for kernels built elsewhere.
 *
 * Installed as <fpcert/plugin.h> (cmake --install; CMake target fpcert::plugin_headers).
 * docs/plugin.md explains every rule below with examples; this header is the reference.
 *
 * A plugin is a shared library that exports ONE function, fpcert_plugin_enumerate(), returning a
 * table of the kernels it implements, each with the traits fpcert's error-bound model reads.
 * fpcert never guesses what a plugin implements: a kernel that is not in the table does not exist,
 * and every field the bound model needs is stated by the plugin (no defaults are filled in).
 *
 * Rules of the boundary
 *  - Plain C: C99 and C++ compatible; fixed-width integers; no type here depends on a C++ ABI.
 *  - No C++ exception may leave any function of the plugin. Catch everything at the boundary and
 *    return FPCERT_STATUS_INTERNAL with a message. (fpcert calls plugin functions from noexcept
 *    frames: an exception that escapes terminates the process, which fpcert's isolation reports
 *    as the case "crashed".)
 *  - Errors come back as a status code (fpcert_status) plus a NUL-terminated message written into
 *    a buffer fpcert owns (message, message_capacity), as in DLPack. FPCERT_STATUS_NOT_SUPPORTED
 *    is a verdict of its own ("not supported"), never a failure.
 *  - Lifecycle as CUTLASS library::Operation: can_implement, workspace_bytes, run(..., stream).
 *  - Versioning: FPCERT_PLUGIN_ABI_MAJOR changes when any struct layout or function signature
 *    changes incompatibly (fpcert refuses a plugin of another major, naming both versions); the
 *    MINOR changes when enum values are added or fields are appended at the end of fpcert_kernel
 *    (a plugin built against a newer minor loads, and fpcert rejects, by name, any value it does
 *    not know; a kernel whose struct_size ends before an appended field has none: minor 0 kernels
 *    read as "order unknown", minor 0 and 1 kernels as "deterministic"). The first two fields of fpcert_plugin_info (abi_major, abi_minor)
 *    keep their place in every major, so any fpcert can read them.
 *  - Threads: fpcert calls a plugin from one thread at a time; calls for one kernel never overlap.
 *  - Lifetime: the table, its strings and every user_data stay valid until the library is unloaded
 *    (fpcert never unloads a plugin before the process exits).
 */
#ifndef FPCERT_PLUGIN_H_
#define FPCERT_PLUGIN_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- version ---------------------------------------------------------------------------- */
#define FPCERT_PLUGIN_ABI_MAJOR 1 /* struct layouts and signatures */
#define FPCERT_PLUGIN_ABI_MINOR 13 /* enum values; fields appended to fpcert_kernel (1: gemm_order; 2: NaN conventions, determinism;
                                     3: reductions; 4: GEMM layouts; 5: GEMM alpha/beta, fields appended to fpcert_gemm_args;
                                     6: softmax and normalisation; 7: GEMM strided batches, appended to fpcert_gemm_args too;
                                     8: GEMM fused epilogues, to both, declared in fpcert_plugin_epilogue.h;
                                     9: the epilogue's rounding before the bias; 10: attention, fpcert_plugin_attention.h;
                                     GEMM shape multiples, FP8 scaling without scale_d;
                                     11: elementwise math functions, fpcert_plugin_eltwise.h;
                                     12: attention's BASE2_SCALED exp form, ONLINE_BY_DIFFERENCE shift and RECIPROCAL_APPROX
                                     normalisation, enum values;
                                     13: FP8 attention, attention_fp8 appended to fpcert_kernel, descale factors appended to
                                     fpcert_attention_args) */

/* The exported symbol fpcert looks up with dlsym. */
#define FPCERT_PLUGIN_ENUMERATE_SYMBOL "fpcert_plugin_enumerate"

#if defined(_WIN32)
#define FPCERT_PLUGIN_EXPORT __declspec(dllexport)
#else
#define FPCERT_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* ---- enumerations (stored as int32_t in every struct; 0 is never a valid value) ----------- */

/* Number formats, by fpcert's short tags (fpcert formats prints their properties).
 * Memory layout of one element ("container"): f64 8 bytes; f32 4 bytes; tf32 4 bytes holding an
 * fp32 bit pattern whose low 13 fraction bits are zero; f16 and bf16 2 bytes; e4m3, e5m2, ue8m0
 * 1 byte; e2m3, e3m2 (6-bit) and e2m1 (4-bit) 1 byte each, the code in the low bits, high bits 0.
 * Host byte order. Narrow formats are never packed two to a byte at this boundary. */
typedef int32_t fpcert_format;
enum {
  FPCERT_FORMAT_NONE = 0,  /* "no format" where a field is optional (product_format, ...) */
  FPCERT_FORMAT_F64 = 1,   /* IEEE binary64 */
  FPCERT_FORMAT_F32 = 2,   /* IEEE binary32 */
  FPCERT_FORMAT_TF32 = 3,  /* 1/8/10, in an fp32 container */
  FPCERT_FORMAT_F16 = 4,   /* IEEE binary16 */
  FPCERT_FORMAT_BF16 = 5,  /* bfloat16, 1/8/7 */
  FPCERT_FORMAT_E4M3 = 6,  /* OCP float8 e4m3fn: no Inf, S.1111.111 is NaN */
  FPCERT_FORMAT_E5M2 = 7,  /* OCP float8 e5m2: IEEE-like */
  FPCERT_FORMAT_E2M3 = 8,  /* OCP MX float6 e2m3: finite only */
  FPCERT_FORMAT_E3M2 = 9,  /* OCP MX float6 e3m2: finite only */
  FPCERT_FORMAT_E2M1 = 10, /* OCP MX float4 e2m1: finite only */
  FPCERT_FORMAT_UE8M0 = 11 /* OCP MX scale: unsigned power of two, 0xFF is NaN (conversions only) */
};

/* Rounding modes. */
typedef int32_t fpcert_rounding;
enum {
  FPCERT_ROUNDING_NEAREST_EVEN = 1, /* IEEE roundTiesToEven (cvt.rn) */
  FPCERT_ROUNDING_NEAREST_AWAY = 2, /* ties away from zero (TF32 cvt.rna) */
  FPCERT_ROUNDING_TOWARD_ZERO = 3,  /* truncation (cvt.rz) */
  FPCERT_ROUNDING_UP = 4,           /* toward +Inf (cvt.rp) */
  FPCERT_ROUNDING_DOWN = 5,         /* toward -Inf (cvt.rm) */
  FPCERT_ROUNDING_STOCHASTIC = 6    /* stochastic: allowed for an accumulator's rounding only */
};

/* What an overflow (and an Inf input) becomes in the destination of a conversion. */
typedef int32_t fpcert_saturation;
enum {
  FPCERT_SATURATION_INF = 1,    /* to Inf (IEEE destinations) */
  FPCERT_SATURATION_FINITE = 2, /* to the largest finite value (CUDA __NV_SATFINITE) */
  FPCERT_SATURATION_NAN = 3     /* to NaN (finite-with-NaN destinations without saturation, __NV_NOSAT) */
};

/* What a NaN input becomes in a conversion's destination: the NaN convention a conversion kernel
 * declares, enforced exactly (docs/plugin.md, "Declaring the NaN convention"; docs/formats.md). */
typedef int32_t fpcert_nan_payload;
enum {
  FPCERT_NAN_PRESERVE = 1,  /* quiet NaN keeping the top payload bits and the sign (e4m3: the sign; finite-only:
                               +largest finite). Plugins of ABI minor 0 and 1: NaN results with other payload or
                               sign bits are counted apart, not mismatches, unless --strict-nan (their meaning then) */
  FPCERT_NAN_CANONICAL = 2, /* the IEEE canonical NaN: positive, quiet bit only (f16 0x7E00, bf16 0x7FC0,
                               f32 0x7FC00000; e4m3 0x7F; finite-only: +largest finite) */
  FPCERT_NAN_NVIDIA = 3,    /* ABI minor 2: NVIDIA's NaN, positive with every exponent and fraction bit set, what
                               cvt writes (f16 and bf16 0x7FFF, f32 0x7FFFFFFF, e4m3 and e5m2 0x7F, ue8m0 0xFF);
                               finite-only destinations: +largest finite (PTX cvt .satfinite: "positive MAX_NORM") */
  FPCERT_NAN_ANY = 4,       /* ABI minor 2: any NaN of the destination (only NaN-ness is checked); not for
                               finite-only destinations (they have no NaN) */
  FPCERT_NAN_ML_DTYPES = 5  /* ABI minor 2, finite-only destinations (e2m3, e3m2, e2m1) only: ml_dtypes' result,
                               +NaN -> -0 (the sign bit alone: 0x20, 0x20, 0x8) and -NaN -> +0 */
};

/* Matrix layouts: element (i, j) of an r x c matrix X with leading dimension ld is
 * X[i * ld + j] (row-major, ld >= c) or X[j * ld + i] (column-major, ld >= r). */
typedef int32_t fpcert_layout;
enum {
  FPCERT_LAYOUT_ROW_MAJOR = 1,
  FPCERT_LAYOUT_COL_MAJOR = 2
};

/* Where a kernel's operands, results and workspace live. */
typedef int32_t fpcert_memory;
enum {
  FPCERT_MEMORY_HOST = 1,  /* ordinary host memory; stream is NULL */
  FPCERT_MEMORY_DEVICE = 2 /* CUDA device memory of device 0 (primary context); stream is a cudaStream_t */
};

/* What a kernel computes. */
typedef int32_t fpcert_operation;
enum {
  FPCERT_OPERATION_GEMM = 1,      /* C = A * B */
  FPCERT_OPERATION_CONVERSION = 2, /* dst[i] = convert(src[i]), elementwise */
  FPCERT_OPERATION_REDUCTION = 3,  /* ABI minor 3: out[v] = sum, dot or nrm2 of vector v (fpcert_reduce_traits) */
  FPCERT_OPERATION_SOFTMAX = 4,    /* ABI minor 6: softmax or log-softmax of each row (fpcert_softmax_traits) */
  FPCERT_OPERATION_NORM = 5,       /* ABI minor 6: LayerNorm or RMSNorm of each row (fpcert_norm_traits) */
  FPCERT_OPERATION_ATTENTION = 6,  /* ABI minor 10: attention forward (fpcert_attention_traits) */
  FPCERT_OPERATION_ATTENTION_BWD = 7, /* ABI minor 10: attention backward (fpcert_attention_bwd_traits) */
  FPCERT_OPERATION_ELEMENTWISE = 8    /* ABI minor 11: y[i] = f(x[i]), a math function (fpcert_eltwise_traits) */
};

/* Status of every call. */
typedef int32_t fpcert_status;
enum {
  FPCERT_STATUS_OK = 0,
  FPCERT_STATUS_NOT_SUPPORTED = 1,    /* this shape / layout / leading dimension is not implemented:
                                         the verdict "not supported", not a failure */
  FPCERT_STATUS_INVALID_ARGUMENT = 2, /* the arguments break the contract (a bug in fpcert or the plugin) */
  FPCERT_STATUS_INTERNAL = 3,         /* anything else that went wrong inside the plugin (e.g. a
                                         caught C++ exception) */
  FPCERT_STATUS_DEVICE_ERROR = 4,     /* a CUDA call failed (launch error, sticky error, ...) */
  FPCERT_STATUS_OUT_OF_MEMORY = 5     /* the plugin could not allocate what it needs */
};

/* ---- GEMM ------------------------------------------------------------------------------- */

#include "fpcert_plugin_epilogue.h" /* ABI minor 8: bias, activation, FP8 scales, amax (installed beside this header) */

/* The arithmetic of a GEMM kernel, exactly what fpcert's bound model reads (docs/bound.md).
 * Every format field is required unless marked optional; fpcert fills nothing in. */
typedef struct fpcert_gemm_traits {
  fpcert_format a_input;          /* format A is passed in (fpcert rounds the exact inputs into it) */
  fpcert_format b_input;          /* format B is passed in */
  fpcert_rounding input_rounding; /* how fpcert rounds exact source values into a_input / b_input and
                                     how the kernel rounds inputs into narrower operands
                                     (not STOCHASTIC) */
  fpcert_format a_operand;        /* precision at which the multiplier sees A (= a_input unless the
                                     kernel narrows it, e.g. TF32 tensor cores read f32 as tf32) */
  fpcert_format b_operand;        /* same for B */
  int32_t exact_products;         /* 1: every a*b is exact; 0: each product is rounded to product_format */
  fpcert_format product_format;   /* NONE when exact_products is 1; required when it is 0 */
  fpcert_format acc_format;       /* format of the running sum */
  fpcert_rounding acc_rounding;   /* rounding of each accumulation step */
  int32_t promote_every;          /* partial sums move into promote_format every N products; 0: never */
  fpcert_format promote_format;   /* NONE when promote_every is 0; required when it is > 0 */
  fpcert_format out_format;       /* format of C */
  double operand_u;               /* effective unit roundoff of split-operand emulations (3xTF32, ...);
                                     0: the operand formats' own u = 2^-p */
  const char* operand_note;       /* derivation of operand_u (required when operand_u > 0, else NULL) */
  const char* order;              /* the operation order, stated exactly where it is fixed, e.g.
                                     "C[i][j] = fma(a[i][k], b[k][j], C) for k = 0..K-1 in fp32 from +0".
                                     Required, non-empty. */
} fpcert_gemm_traits;

/* A GEMM shape as fpcert will call it; passed to can_implement and workspace_bytes. */
typedef struct fpcert_gemm_shape {
  int64_t m, n, k;                /* C is m x n, A is m x k, B is k x n; each >= 1 */
  fpcert_layout a_layout;         /* ROW_MAJOR, or COL_MAJOR where the kernel declares it (gemm_layouts, minor 4) */
  fpcert_layout b_layout;         /* likewise */
  fpcert_layout c_layout;         /* likewise; ROW_MAJOR: ldc >= n, columns n..ldc-1 padding; COL_MAJOR: ldc >= m */
  int32_t reserved;               /* 0 */
} fpcert_gemm_shape;

/* One GEMM call: C = A * B. Pointers live in the kernel's memory space. */
typedef struct fpcert_gemm_args {
  uint32_t struct_size;           /* sizeof(fpcert_gemm_args) as fpcert compiled it */
  fpcert_memory memory;           /* the kernel's declared memory space */
  fpcert_format a_format;         /* = traits.a_input */
  fpcert_format b_format;         /* = traits.b_input */
  fpcert_format c_format;         /* = traits.out_format */
  int32_t reserved;               /* 0 */
  fpcert_gemm_shape shape;        /* m, n, k and layouts */
  const void* a;                  /* m x k codes of a_format, leading dimension lda */
  int64_t lda;
  const void* b;                  /* k x n codes of b_format, leading dimension ldb */
  int64_t ldb;
  void* c;                        /* m x n codes of c_format, leading dimension ldc (row-major: >= n;
                                     column-major, shape.c_layout: >= m). fpcert pre-fills C with a NaN
                                     pattern and guards the bytes before and after it and the padding
                                     (columns n..ldc-1, or rows m..ldc-1 of each column): write exactly
                                     the m x n elements, nothing else. */
  int64_t ldc;
  /* ---- appended in ABI minor 5 (read them only when struct_size covers them; fpcert gives them to every kernel of
   * minor 5 or later; a kernel that does not declare gemm_alpha_beta always gets alpha = 1, beta = 0, c_in = NULL) */
  double alpha;                   /* D = alpha (A B) + beta C: values of the accumulator format (docs/plugin.md, "alpha, beta") */
  double beta;                    /* beta = 0: c_in must not be read (fpcert fills it with NaN) */
  const void* c_in;               /* C, codes of c_format with C's ldc and layout; == c when in place; NULL when no C */
  /* ---- appended in ABI minor 7 (as minor 5's; a kernel that does not declare gemm_batched gets batch = 1): batch
   * matrices, matrix i of A at a + i * stride_a elements, of B, C and c_in likewise; 0 for A or B: the same matrix in
   * every batch (docs/plugin.md, "Strided batches") */
  int64_t batch, stride_a, stride_b, stride_c;
  /* ---- appended in ABI minor 8 (as minor 5's; a kernel without gemm_epilogue gets none): docs/plugin.md, "Fused epilogues" */
  fpcert_gemm_epilogue_args epilogue;
} fpcert_gemm_args;

/* Can this kernel compute this shape? FPCERT_STATUS_OK: yes; FPCERT_STATUS_NOT_SUPPORTED (with a
 * reason in message): the verdict "not supported"; any other status: the case fails with the
 * message. Optional (NULL: every shape). */
typedef fpcert_status (*fpcert_gemm_can_implement_fn)(void* user_data, const fpcert_gemm_shape* shape,
                                                      char* message, size_t message_capacity);

/* Bytes of scratch memory (in the kernel's memory space) run() needs for this shape; fpcert
 * allocates it and passes it to run(). Optional (NULL: 0 bytes). */
typedef fpcert_status (*fpcert_gemm_workspace_bytes_fn)(void* user_data, const fpcert_gemm_shape* shape,
                                                        size_t* bytes, char* message, size_t message_capacity);

/* Compute C = A * B. DEVICE kernels enqueue their work on `stream` (a cudaStream_t) and may
 * return before it finishes; fpcert synchronises, times with CUDA events on that stream, and
 * reports asynchronous and sticky CUDA errors itself. HOST kernels finish before returning and
 * get stream == NULL. workspace holds workspace_bytes bytes (NULL when 0). fpcert calls run()
 * several times with the same arguments (warm-ups, timing, the determinism check). */
typedef fpcert_status (*fpcert_gemm_run_fn)(void* user_data, const fpcert_gemm_args* args, void* workspace,
                                            size_t workspace_bytes, void* stream, char* message,
                                            size_t message_capacity);

/* The summation order of a GEMM kernel (ABI minor 1), what fpcert's bitwise verdict tier emulates and
 * its envelope's accumulation term depends on (docs/plugin.md, "Declaring the order"; the semantics of
 * each kind: docs/bound_model.md, "Orders"). Every sum starts from +0. */
typedef int32_t fpcert_order_kind;
enum {
  FPCERT_ORDER_UNKNOWN = 1,           /* not fixed, or not stated: judged by the envelope (worst valid order) */
  FPCERT_ORDER_SEQUENTIAL = 2,        /* acc = step(acc, a_k, b_k) for k = 0..K-1 */
  FPCERT_ORDER_BLOCKED_K = 3,         /* blocks of `block` products summed by `inner`, joined by `outer` */
  FPCERT_ORDER_SPLIT_K = 4,           /* `splits` contiguous chunks of ceil(K/splits), each sequential, combined by `outer` */
  FPCERT_ORDER_PAIRWISE = 5,          /* products rounded into the accumulator, recursive halving (first half ceil(n/2)) */
  FPCERT_ORDER_TENSOR_CORE_BLOCK = 6, /* instruction k = `block`, blocks of `fused_length` fused and rounded once */
  FPCERT_ORDER_SPLIT_PRODUCTS = 7     /* operands cut into slices (`split_scheme`), slice products summed by `term_order` */
};
typedef int32_t fpcert_order_step;
enum {
  FPCERT_STEP_FMA = 1,    /* acc = round(a*b + acc), one rounding */
  FPCERT_STEP_MUL_ADD = 2 /* p = round(a*b) (product_format, or the accumulator's when products are exact), acc = round(acc + p) */
};
typedef int32_t fpcert_combine;
enum {
  FPCERT_COMBINE_SEQUENTIAL = 1, /* from +0, in order */
  FPCERT_COMBINE_PAIRWISE = 2,   /* recursive halving */
  FPCERT_COMBINE_ATOMIC = 3      /* ABI minor 2, SPLIT_K's outer only: each partial added into C (+0 first) with one
                                    rounding, in an arrival order that changes run to run (atomicAdd): an order family,
                                    declared with determinism = FPCERT_RUN_TO_RUN */
};

typedef struct fpcert_gemm_order {
  fpcert_order_kind kind;          /* required: 0 is not a kind (state FPCERT_ORDER_UNKNOWN) */
  fpcert_order_step step;          /* SEQUENTIAL, BLOCKED_K, SPLIT_K: required; else 0 */
  int32_t block;                   /* BLOCKED_K: products per block; TENSOR_CORE_BLOCK (and SPLIT_PRODUCTS on
                                      tensor cores): the instruction's k; else 0 */
  fpcert_combine inner;            /* BLOCKED_K: within a block (required); else 0 */
  fpcert_combine outer;            /* BLOCKED_K: joining the blocks; SPLIT_K: combining the partials (required); else 0 */
  int32_t splits;                  /* SPLIT_K: >= 2; else 0 */
  int32_t fused_length;            /* TENSOR_CORE_BLOCK: products per rounding, dividing block (0: = block) */
  fpcert_rounding block_rounding;  /* TENSOR_CORE_BLOCK: rounding of a block's sum into the accumulator (required) */
  int32_t block_model_measured;    /* TENSOR_CORE_BLOCK: 1 when fused_length and block_rounding were measured on the
                                      device (the bitwise tier then emulates them); 0: a placeholder */
  int32_t bitwise_ulps;            /* output ulps the bitwise tier allows (0: bit for bit) */
  const char* split_scheme;        /* SPLIT_PRODUCTS: "3xtf32", "3xtf32_rz", "1xbf16", "3xbf16", "6xbf16", "9xbf16"; else NULL */
  fpcert_order_kind term_order;    /* SPLIT_PRODUCTS: SEQUENTIAL or TENSOR_CORE_BLOCK; else 0 */
  int32_t reserved;                /* 0 */
} fpcert_gemm_order;

/* Whether repeated runs of a GEMM kernel give the same bits (ABI minor 2; docs/plugin.md, "Declaring
 * nondeterminism"). Required (0 is refused); a kernel of minor 0 or 1 (struct_size ending before
 * `determinism`) is DETERMINISTIC. */
typedef int32_t fpcert_determinism;
enum {
  FPCERT_DETERMINISTIC = 1, /* every run gives the same bits as the first (fpcert compares them all) */
  FPCERT_RUN_TO_RUN = 2     /* runs may differ in their last bits: partials added with atomics (split-K, stream-K).
                               gemm_order must then be an order family: FPCERT_ORDER_UNKNOWN, or SPLIT_K with
                               outer = FPCERT_COMBINE_ATOMIC. Every run is judged by the envelope on its own. */
};

/* ---- elementwise conversion --------------------------------------------------------------- */

/* The conversion a CONVERSION kernel claims to implement; fpcert checks it against MPFR on every
 * source pattern (fpcert convert --plugin LIB --kernel NAME --exhaustive). */
typedef struct fpcert_conversion_traits {
  fpcert_format src_format;       /* source format */
  fpcert_format dst_format;       /* destination format */
  fpcert_rounding rounding;       /* rounding of inexact results (not STOCHASTIC: the random bits
                                     would be fpcert's, not the kernel's) */
  fpcert_saturation saturation;   /* what overflow and Inf inputs become; must exist in dst_format
                                     (INF needs Inf; NAN needs a NaN and no Inf; finite-only
                                     destinations take FINITE) */
  fpcert_nan_payload nan_payload; /* what NaN inputs become: the declared NaN convention, enforced exactly */
  int32_t reserved;               /* 0 */
} fpcert_conversion_traits;

/* One conversion call: dst[i] = convert(src[i]) for i in [0, count). */
typedef struct fpcert_conversion_args {
  uint32_t struct_size;           /* sizeof(fpcert_conversion_args) as fpcert compiled it */
  fpcert_memory memory;           /* the kernel's declared memory space */
  fpcert_format src_format;       /* = traits.src_format */
  fpcert_format dst_format;       /* = traits.dst_format */
  fpcert_rounding rounding;       /* = traits.rounding */
  fpcert_saturation saturation;   /* = traits.saturation */
  int64_t count;                  /* elements (fpcert calls with at most 2^24 at a time) */
  const void* src;                /* count codes of src_format, in its container */
  void* dst;                      /* count codes of dst_format, in its container; guarded after the end */
} fpcert_conversion_args;

/* Convert. Same stream and completion rules as fpcert_gemm_run_fn. */
typedef fpcert_status (*fpcert_conversion_run_fn)(void* user_data, const fpcert_conversion_args* args,
                                                  void* stream, char* message, size_t message_capacity);

/* ---- reductions (ABI minor 3; docs/plugin.md, "Reduction kernels"; docs/reductions.md) ---------------- */

typedef int32_t fpcert_reduce_kind;
enum {
  FPCERT_REDUCE_SUM = 1,  /* out[v] = sum_i x_v[i] */
  FPCERT_REDUCE_DOT = 2,  /* out[v] = sum_i x_v[i] y_v[i] */
  FPCERT_REDUCE_NRM2 = 3  /* out[v] = sqrt(sum_i x_v[i]^2) (BLAS nrm2) */
};
/* The declared summation order (every chain from +0 unless chain_from_first is 1); what the bitwise tier emulates. */
typedef int32_t fpcert_reduce_order_kind;
enum {
  FPCERT_REDUCE_ORDER_UNKNOWN = 1,    /* any binary tree (atomics, libraries): the envelope alone decides */
  FPCERT_REDUCE_ORDER_SEQUENTIAL = 2, /* acc = R(acc + t_i), i = 0 .. n-1 */
  FPCERT_REDUCE_ORDER_PAIRWISE = 3,   /* recursive halving: the first ceil(n/2) terms, the rest, one addition joining them */
  FPCERT_REDUCE_ORDER_BLOCKED = 4,    /* blocks of `block` terms summed sequentially, the partials summed sequentially */
  FPCERT_REDUCE_ORDER_WARP_TREE = 5   /* `lanes` strided sequential sums (lane l: t_l, t_{l+lanes}, ...), then the xor
                                         butterfly (offsets lanes/2 .. 1); lane 0's value */
};
typedef int32_t fpcert_reduce_axis;
enum {
  FPCERT_REDUCE_ROWS = 1, /* vector v is row v of a count x length row-major matrix: x[v * ldx + i] */
  FPCERT_REDUCE_COLS = 2  /* vector v is column v of a length x count row-major matrix: x[i * ldx + v] */
};
typedef int32_t fpcert_nrm2_scaling;
enum {
  FPCERT_NRM2_UNSCALED = 1, /* sqrt of the plain sum of squares (overflows once the sum passes the accumulator) */
  FPCERT_NRM2_LAPACK = 2    /* Blue's three accumulators, as LAPACK 3.10's nrm2 (Anderson 2017) */
};
typedef int32_t fpcert_nrm2_specials;
enum {
  FPCERT_NRM2_INF_WINS = 1, /* an Inf among the inputs gives +Inf even beside a NaN (IEEE 754-2019 9.2 hypot) */
  FPCERT_NRM2_NAN_WINS = 2  /* NaN (LAPACK 3.10) */
};

/* The arithmetic of a reduction kernel. Fields marked "else 0/NONE" must be so. */
typedef struct fpcert_reduce_traits {
  fpcert_reduce_kind kind;          /* required */
  fpcert_format x_input;            /* format x is passed in */
  fpcert_format y_input;            /* DOT: format y is passed in; else FPCERT_FORMAT_NONE */
  fpcert_rounding input_rounding;   /* how fpcert rounds exact source values into x_input / y_input (not STOCHASTIC) */
  fpcert_format acc_format;         /* format of the running sum */
  fpcert_rounding acc_rounding;     /* rounding of every addition (and of nrm2's sqrt); not STOCHASTIC */
  int32_t exact_products;           /* DOT, NRM2: 1 products fused into the additions (FMA), 0 rounded into acc_format
                                       first; SUM: 1 */
  fpcert_reduce_order_kind order;   /* required */
  int32_t chain_from_first;         /* 0: chains start from +0; 1: from their first term */
  int32_t block;                    /* BLOCKED: terms per block (>= 1); else 0 */
  int32_t lanes;                    /* WARP_TREE: a power of two, 1 .. 1024; else 0 */
  fpcert_format out_format;         /* the accumulator's value rounded once into it (acc_rounding's mode) */
  fpcert_nrm2_scaling nrm2_scaling; /* NRM2: required; else 0 */
  fpcert_nrm2_specials nrm2_specials; /* NRM2: required; else 0 */
  fpcert_determinism determinism;   /* DETERMINISTIC, or RUN_TO_RUN with order UNKNOWN (atomics) */
  int32_t reserved;                 /* 0 */
} fpcert_reduce_traits;

/* One reduction call: `count` vectors of `length` elements (axis), pointers in the kernel's memory space. */
typedef struct fpcert_reduce_args {
  uint32_t struct_size;             /* sizeof(fpcert_reduce_args) as fpcert compiled it */
  fpcert_memory memory;             /* the kernel's declared memory space */
  int64_t count;                    /* vectors (results), >= 1 */
  int64_t length;                   /* elements per vector, >= 0 (0: the empty sum, +0) */
  fpcert_reduce_axis axis;          /* ROWS or COLS */
  int32_t reserved;                 /* 0 */
  const void* x;                    /* codes of x_input in their containers, leading dimension ldx */
  int64_t ldx;
  const void* y;                    /* DOT: as x, leading dimension ldy; else NULL */
  int64_t ldy;
  void* out;                        /* count codes of out_format, contiguous; pre-filled and guarded by fpcert */
} fpcert_reduce_args;

/* Can this kernel reduce `count` vectors of `length` along `axis`? As fpcert_gemm_can_implement_fn. Optional. */
typedef fpcert_status (*fpcert_reduce_can_implement_fn)(void* user_data, int64_t count, int64_t length, fpcert_reduce_axis axis,
                                                         char* message, size_t message_capacity);
/* Reduce. Same stream and completion rules as fpcert_gemm_run_fn. */
typedef fpcert_status (*fpcert_reduce_run_fn)(void* user_data, const fpcert_reduce_args* args, void* stream, char* message,
                                              size_t message_capacity);

#include "fpcert_plugin_rows.h" /* ABI minor 6: softmax and normalisation (installed beside this header) */

#include "fpcert_plugin_attention.h" /* ABI minor 10: attention forward and backward (installed beside this header) */

#include "fpcert_plugin_eltwise.h" /* ABI minor 11: elementwise math functions (installed beside this header) */

/* ---- the kernel table ----------------------------------------------------------------------- */

/* One kernel. Fields of the other operation are ignored (leave them zero). */
typedef struct fpcert_kernel {
  uint32_t struct_size;           /* sizeof(fpcert_kernel) as the plugin compiled it */
  fpcert_operation operation;     /* GEMM, CONVERSION, (minor 3) REDUCTION, (minor 6) SOFTMAX or NORM, (minor 10) ATTENTION(_BWD),
                                     (minor 11) ELEMENTWISE */
  const char* name;               /* unique among every kernel fpcert knows (built-in and plugins):
                                     letters, digits, '_', '-', '.'; e.g. "foo_gemm_f16_f32acc" */
  const char* description;        /* one line for `fpcert kernels` (may be NULL) */
  fpcert_memory memory;           /* HOST or DEVICE */
  int32_t reserved;               /* 0 */
  void* user_data;                /* passed back unchanged as the first argument of every call */

  /* GEMM (operation == FPCERT_OPERATION_GEMM) */
  fpcert_gemm_traits gemm;
  fpcert_gemm_can_implement_fn gemm_can_implement;     /* optional */
  fpcert_gemm_workspace_bytes_fn gemm_workspace_bytes; /* optional */
  fpcert_gemm_run_fn gemm_run;                         /* required */

  /* CONVERSION (operation == FPCERT_OPERATION_CONVERSION) */
  fpcert_conversion_traits conversion;
  fpcert_conversion_run_fn conversion_run;             /* required */

  /* ---- appended in ABI minor 1 (read only when struct_size covers it; older kernels: order unknown) */
  fpcert_gemm_order gemm_order;                        /* GEMM: the summation order (required) */

  /* ---- appended in ABI minor 2 (read only when struct_size covers it; older kernels: deterministic) */
  fpcert_determinism determinism;                      /* GEMM: DETERMINISTIC or RUN_TO_RUN (required) */
  int32_t reserved_minor2;                             /* 0 */

  /* ---- appended in ABI minor 3 (a kernel of an older minor has none: it cannot be a REDUCTION) */
  fpcert_reduce_traits reduce;                         /* REDUCTION (operation == FPCERT_OPERATION_REDUCTION) */
  fpcert_reduce_can_implement_fn reduce_can_implement; /* REDUCTION: optional */
  fpcert_reduce_run_fn reduce_run;                     /* REDUCTION: required */

  /* ---- appended in ABI minor 4 (a kernel of an older minor has none: row-major A, B and C only) */
  uint32_t gemm_layouts;                               /* GEMM: FPCERT_LAYOUTS_* bits of the (A, B, C) storage layouts
                                                          the kernel takes; 0: row-major A, B and C only (docs/plugin.md,
                                                          "Layouts") */
  int32_t reserved_minor4;                             /* 0 */

  /* ---- appended in ABI minor 5 (a kernel of an older minor has none: alpha = 1, beta = 0, no C) */
  uint32_t gemm_alpha_beta;                            /* GEMM: 1 = the kernel computes D = alpha (A B) + beta C from
                                                          fpcert_gemm_args.alpha, beta, c_in (docs/plugin.md, "alpha, beta");
                                                          0: it is never given C */
  int32_t reserved_minor5;                             /* 0 */

  /* ---- appended in ABI minor 6 (a kernel of an older minor has none: it cannot be a SOFTMAX or a NORM) */
  fpcert_softmax_traits softmax;                       /* SOFTMAX (operation == FPCERT_OPERATION_SOFTMAX) */
  fpcert_softmax_can_implement_fn softmax_can_implement; /* SOFTMAX: optional */
  fpcert_softmax_run_fn softmax_run;                   /* SOFTMAX: required */
  fpcert_norm_traits norm;                             /* NORM (operation == FPCERT_OPERATION_NORM) */
  fpcert_norm_can_implement_fn norm_can_implement;     /* NORM: optional */
  fpcert_norm_run_fn norm_run;                         /* NORM: required */

  /* ---- appended in ABI minor 7 (a kernel of an older minor has none: one matrix per call) */
  uint32_t gemm_batched;                               /* GEMM: 1 = takes fpcert_gemm_args.batch > 1 with its strides */
  int32_t reserved_minor7;                             /* 0 */

  /* ---- appended in ABI minor 8 (a kernel of an older minor has none: no epilogue) */
  fpcert_gemm_epilogue_traits gemm_epilogue;           /* GEMM: bias, activations, FP8 scaling, amax (all 0: none) */

  /* ---- appended in ABI minor 9 (a kernel of an older minor has none: 0) */
  int32_t gemm_round_before_bias;                      /* GEMM: 1 = with beta != 0 and a bias, alpha' acc + beta C is rounded
                                                          into the output format before the bias is added (cuBLASLt's bias
                                                          epilogues with C); 0: one rounding (docs/plugin.md, "Fused epilogues") */
  int32_t reserved_minor9;                             /* 0 */

  /* ---- appended in ABI minor 10 (a kernel of an older minor has none: it cannot be an ATTENTION or ATTENTION_BWD, and
   * takes any shape) */
  fpcert_attention_traits attention;                   /* ATTENTION (operation == FPCERT_OPERATION_ATTENTION) */
  fpcert_attention_can_implement_fn attention_can_implement; /* ATTENTION: optional */
  fpcert_attention_run_fn attention_run;               /* ATTENTION: required */
  fpcert_attention_bwd_traits attention_bwd;           /* ATTENTION_BWD (operation == FPCERT_OPERATION_ATTENTION_BWD) */
  fpcert_attention_bwd_can_implement_fn attention_bwd_can_implement; /* ATTENTION_BWD: optional */
  fpcert_attention_bwd_run_fn attention_bwd_run;       /* ATTENTION_BWD: required */
  uint32_t gemm_shape_multiple;                        /* GEMM: M, N, K taken are multiples of it (0 or 1: any shape;
                                                          cuBLASLt's FP8 GEMM: 16; docs/plugin.md, "Shape multiples") */
  int32_t reserved_minor10;                            /* 0 */

  /* ---- appended in ABI minor 11 (a kernel of an older minor has none: it cannot be an ELEMENTWISE kernel) */
  fpcert_eltwise_traits eltwise;                       /* ELEMENTWISE (operation == FPCERT_OPERATION_ELEMENTWISE) */
  fpcert_eltwise_run_fn eltwise_run;                   /* ELEMENTWISE: required */

  /* ---- appended in ABI minor 13 (a kernel of an older minor has none: no descale factors, no P offset) */
  fpcert_attention_fp8 attention_fp8;                  /* ATTENTION: FP8 descales and the P offset (all zero: none) */
} fpcert_kernel;

/* Bits of fpcert_kernel.gemm_layouts (ABI minor 4): one per combination, bit (a + 2 b + 4 c) with 0 = row-major and
 * 1 = column-major for each of A, B, C. In the BLAS names of a row-major library, an operand "T" (transposed) is stored
 * column-major. gemm_can_implement still sees each call's layouts in fpcert_gemm_shape and may decline one. */
#define FPCERT_LAYOUT_BIT(a_col, b_col, c_col) (1u << ((a_col) + 2 * (b_col) + 4 * (c_col)))
#define FPCERT_LAYOUTS_ROW_MAJOR FPCERT_LAYOUT_BIT(0, 0, 0) /* NN, C row-major: what minor 0-3 kernels take */
#define FPCERT_LAYOUTS_AB_ANY 0x0Fu                        /* NN, NT, TN, TT with C row-major */
#define FPCERT_LAYOUTS_ALL 0xFFu                           /* every combination, C either way */

/* sizeof(fpcert_kernel) of ABI minor N: where the fields of minor N + 1 begin. A kernel whose struct ends there reads
 * as: minor 0 order unknown; 1 deterministic; 2 no reduction; 3 row-major only; 4 alpha = 1, beta = 0, no C; 5 no
 * softmax or norm; 6 one matrix per call; 7 no epilogue; 8 gemm_round_before_bias 0; 9 no attention, any shape;
 * 10 no elementwise function; 11 and 12 no FP8 attention fields. */
#define FPCERT_KERNEL_SIZE_MINOR0 offsetof(fpcert_kernel, gemm_order)
#define FPCERT_KERNEL_SIZE_MINOR1 offsetof(fpcert_kernel, determinism)
#define FPCERT_KERNEL_SIZE_MINOR2 offsetof(fpcert_kernel, reduce)
#define FPCERT_KERNEL_SIZE_MINOR3 offsetof(fpcert_kernel, gemm_layouts)
#define FPCERT_KERNEL_SIZE_MINOR4 offsetof(fpcert_kernel, gemm_alpha_beta)
#define FPCERT_KERNEL_SIZE_MINOR5 offsetof(fpcert_kernel, softmax)
#define FPCERT_KERNEL_SIZE_MINOR6 offsetof(fpcert_kernel, gemm_batched)
#define FPCERT_KERNEL_SIZE_MINOR7 offsetof(fpcert_kernel, gemm_epilogue)
#define FPCERT_KERNEL_SIZE_MINOR8 offsetof(fpcert_kernel, gemm_round_before_bias)
#define FPCERT_KERNEL_SIZE_MINOR9 offsetof(fpcert_kernel, attention)
#define FPCERT_KERNEL_SIZE_MINOR10 offsetof(fpcert_kernel, eltwise)
#define FPCERT_KERNEL_SIZE_MINOR11 offsetof(fpcert_kernel, attention_fp8) /* minor 12 added enum values only: the same size */
#define FPCERT_KERNEL_SIZE_MINOR12 FPCERT_KERNEL_SIZE_MINOR11

/* What fpcert_plugin_enumerate returns: a table with static storage duration. */
typedef struct fpcert_plugin_info {
  uint32_t abi_major;             /* FPCERT_PLUGIN_ABI_MAJOR the plugin was built with (first in every major) */
  uint32_t abi_minor;             /* FPCERT_PLUGIN_ABI_MINOR the plugin was built with (second in every major) */
  uint32_t struct_size;           /* sizeof(fpcert_plugin_info) */
  uint32_t kernel_struct_size;    /* sizeof(fpcert_kernel): the stride of kernels[] */
  const char* plugin_name;        /* e.g. "foo-kernels" (required) */
  const char* plugin_version;     /* e.g. "1.4.2" or a git hash (may be NULL) */
  uint32_t kernel_count;          /* >= 1 */
  uint32_t reserved;              /* 0 */
  const fpcert_kernel* kernels;   /* kernel_count entries */
} fpcert_plugin_info;

/* Initialiser of the first four fields of fpcert_plugin_info. */
#define FPCERT_PLUGIN_INFO_HEADER \
  FPCERT_PLUGIN_ABI_MAJOR, FPCERT_PLUGIN_ABI_MINOR, (uint32_t)sizeof(fpcert_plugin_info), (uint32_t)sizeof(fpcert_kernel)

/* The one function a plugin exports (extern "C", default visibility). fpcert passes its own ABI
 * version; the plugin returns its table (whatever the host's version: fpcert decides), or NULL
 * with a message when it cannot run at all (e.g. a required driver is missing). */
typedef const fpcert_plugin_info* (*fpcert_plugin_enumerate_fn)(uint32_t host_abi_major, uint32_t host_abi_minor,
                                                                 char* message, size_t message_capacity);
FPCERT_PLUGIN_EXPORT const fpcert_plugin_info* fpcert_plugin_enumerate(uint32_t host_abi_major,
                                                                       uint32_t host_abi_minor, char* message,
                                                                       size_t message_capacity);

/* Helper for plugins: copy text into fpcert's message buffer, truncating, always NUL-terminated. */
static inline void fpcert_plugin_set_message(char* message, size_t message_capacity, const char* text) {
  size_t i = 0;
  if (!message || message_capacity == 0) return;
  if (text)
    for (; i + 1 < message_capacity && text[i]; ++i) message[i] = text[i];
  message[i] = '\0';
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* FPCERT_PLUGIN_H_ */
