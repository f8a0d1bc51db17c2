/* plugin/fpcert_plugin_eltwise.h — the plugin ABI's elementwise math functions (issue 42, ABI minor 11): the declarations of
 * kernels/elementwise/eltwise_kernel.hpp (EltwiseTraits, EltwiseOperands) in C.
 *
 * ABI minor 11 (docs/plugin.md, "Elementwise kernels"; docs/elementwise.md, "From a plugin"): fpcert_kernel.eltwise and
 * eltwise_run (operation FPCERT_OPERATION_ELEMENTWISE), read by plugin/eltwise_plugin.cpp; a kernel of an older minor ends
 * before them (FPCERT_KERNEL_SIZE_MINOR10) and cannot be an elementwise kernel.
 *
 * Part of <fpcert/plugin.h>, which includes it (installed beside it as <fpcert/fpcert_plugin_eltwise.h>) after the base
 * types it uses (formats, memory, status); include that header, not this one.
 *
 * A kernel computes y[i] = f(x[i]) (binary functions: f(x[i], x2[i])) for i < count, codes of `in` in, codes of `out` out,
 * and claims an accuracy against f(x) correctly rounded to nearest-even into `out` (the ulp distance counts the
 * representable values between the two codes: CUDA's convention, "0 ulp" is correctly rounded). fpcert checks the claim on
 * every 16-bit input, and on fp32 special values and a Philox sample (suite elementwise) or every 2^32 input
 * (elementwise_full); binary functions on special pairs and sampled pairs. */
#ifndef FPCERT_PLUGIN_ELTWISE_H_
#define FPCERT_PLUGIN_ELTWISE_H_

#ifndef FPCERT_PLUGIN_H_
#error "include <fpcert/plugin.h>: it includes fpcert_plugin_eltwise.h where the ABI's base types are defined"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The function (fpcert's own numbering, stable across versions; new functions get new values). */
typedef int32_t fpcert_eltwise_fn;
enum {
  FPCERT_ELTWISE_EXP = 1,        /* e^x */
  FPCERT_ELTWISE_EXP2 = 2,       /* 2^x */
  FPCERT_ELTWISE_EXP10 = 3,      /* 10^x */
  FPCERT_ELTWISE_LOG = 4,        /* ln x */
  FPCERT_ELTWISE_LOG2 = 5,
  FPCERT_ELTWISE_LOG10 = 6,
  FPCERT_ELTWISE_SQRT = 7,
  FPCERT_ELTWISE_RSQRT = 8,      /* 1 / sqrt(x) */
  FPCERT_ELTWISE_EXPM1 = 9,      /* e^x - 1 */
  FPCERT_ELTWISE_LOG1P = 10,     /* ln(1 + x) */
  FPCERT_ELTWISE_TANH = 11,
  FPCERT_ELTWISE_SINH = 12,
  FPCERT_ELTWISE_COSH = 13,
  FPCERT_ELTWISE_CBRT = 14,
  FPCERT_ELTWISE_ERF = 15,
  FPCERT_ELTWISE_ERFC = 16,
  FPCERT_ELTWISE_SIGMOID = 17,   /* 1 / (1 + e^-x) */
  FPCERT_ELTWISE_SILU = 18,      /* x / (1 + e^-x) */
  FPCERT_ELTWISE_SOFTPLUS = 19,  /* ln(1 + e^x) */
  FPCERT_ELTWISE_GELU_ERF = 20,  /* x (1 + erf(x / sqrt 2)) / 2 */
  FPCERT_ELTWISE_GELU_TANH = 21, /* x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) / 2, the exact function of that formula */
  FPCERT_ELTWISE_SIN = 22,
  FPCERT_ELTWISE_COS = 23,
  FPCERT_ELTWISE_TAN = 24,
  FPCERT_ELTWISE_SINPI = 25,     /* sin(pi x) */
  FPCERT_ELTWISE_COSPI = 26,     /* cos(pi x) */
  FPCERT_ELTWISE_DIV = 27,       /* binary: x / x2 */
  FPCERT_ELTWISE_POW = 28,       /* binary: x^x2 (IEEE 754 9.2 special values) */
  FPCERT_ELTWISE_ATAN2 = 29,     /* binary: C's atan2(y = x, x = x2) */
  FPCERT_ELTWISE_FMAX = 30,      /* binary: C's fmax (a NaN operand yields the other) */
  FPCERT_ELTWISE_FMIN = 31       /* binary: C's fmin */
};

/* What the kernel claims about each result (math::ClaimKind). */
typedef int32_t fpcert_eltwise_claim_kind;
enum {
  FPCERT_ELTWISE_CORRECTLY_ROUNDED = 1, /* every result is f(x) rounded to nearest-even (0 ulp); ulps, ulp_slope, bound 0 */
  FPCERT_ELTWISE_ULP = 2,               /* ulp distance <= ulps + floor(ulp_slope |x|) (CUDA's __expf: 2 + floor(1.173 |x|));
                                           bound 0 */
  FPCERT_ELTWISE_ABSOLUTE = 3,          /* |y - f(x)| <= bound for x in [lo, hi]; outside, ulps ulp when ulps > 0, else no claim
                                           (CUDA's __logf); ulp_slope 0 */
  FPCERT_ELTWISE_RELATIVE = 4           /* |y - f(x)| <= bound |f(x)| for x in [lo, hi]; outside as ABSOLUTE; ulp_slope 0 */
};

/* Bits of fpcert_eltwise_traits.flags. */
#define FPCERT_ELTWISE_DAZ 1u            /* subnormal inputs read as zero: the claim is judged on the flushed input */
#define FPCERT_ELTWISE_FTZ 2u            /* subnormal results flushed: a +-0 where f(x) rounds to a subnormal counts 0 ulp */
#define FPCERT_ELTWISE_FDIVIDEF_LARGE 4u /* DIV only: CUDA's __fdividef results for 2^126 < |x2| < 2^128 (0 for finite x, NaN
                                            for infinite x), judged exactly */
#define FPCERT_ELTWISE_FLAGS_ALL 7u

/* The arithmetic an elementwise kernel declares (fpcert_kernel.eltwise, ABI minor 11). Every field is read: those a claim
 * kind does not use must be 0, and fpcert refuses a value it does not know, naming the field. */
typedef struct fpcert_eltwise_traits {
  fpcert_eltwise_fn fn;             /* required */
  fpcert_format in;                 /* f32, f16 or bf16 (binary functions: f32) */
  fpcert_format out;                /* f32, f16 or bf16 (binary functions: f32) */
  fpcert_eltwise_claim_kind claim;  /* required */
  uint32_t flags;                   /* FPCERT_ELTWISE_* bits (0: subnormals kept) */
  int32_t has_domain;               /* 1: the claim holds for x in [lo, hi] only (a ulp claim's range, an absolute or relative
                                       claim's interval); 0: on every input, lo and hi 0 */
  double ulps;                      /* ULP: >= 0; ABSOLUTE, RELATIVE: the ulp claim outside [lo, hi] (0: none) */
  double ulp_slope;                 /* ULP: >= 0 (0: a plain bound) */
  double bound;                     /* ABSOLUTE, RELATIVE: > 0 */
  double lo, hi;                    /* has_domain 1: lo <= hi (either may be infinite) */
  double x2_lo, x2_hi;              /* binary functions: the claim holds where |x2| lies in [x2_lo, x2_hi] (CUDA's __fdividef:
                                       [2^-126, 2^126]); both 0: every x2. Unary functions: 0 */
  const char* claim_source;         /* where the claim comes from ("glibc manual", "CUDA Programming Guide ..."), required */
} fpcert_eltwise_traits;

/* One call: count elements, pointers in the kernel's memory space, codes in their containers (f32 4 bytes, f16 and bf16 2). */
typedef struct fpcert_eltwise_args {
  uint32_t struct_size;             /* sizeof(fpcert_eltwise_args) as fpcert compiled it */
  fpcert_memory memory;             /* the kernel's declared memory space */
  int64_t count;                    /* elements, >= 1 */
  const void* x;                    /* count codes of `in` (read only) */
  const void* x2;                   /* binary functions: count codes of `in`, the second operand; else NULL */
  void* y;                          /* count codes of `out`; pre-filled and guarded by fpcert */
} fpcert_eltwise_args;

/* Compute y. Same stream and completion rules as fpcert_gemm_run_fn (device kernels: enqueue on `stream`). */
typedef fpcert_status (*fpcert_eltwise_run_fn)(void* user_data, const fpcert_eltwise_args* args, void* stream, char* message,
                                               size_t message_capacity);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* FPCERT_PLUGIN_ELTWISE_H_ */
