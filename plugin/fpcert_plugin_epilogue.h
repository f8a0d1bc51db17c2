/* plugin/fpcert_plugin_epilogue.h — the plugin ABI's fused GEMM epilogue (ABI minor 8): bias, activation, FP8 scale
 * factors and amax, as cuBLASLt's cublasLtMatmul defines them (docs/plugin.md, "Fused epilogues"; docs/epilogue.md).
 *
 * Part of <fpcert/plugin.h>, which includes it (installed beside it as <fpcert/fpcert_plugin_epilogue.h>); include
 * that header, not this one. The definition a kernel declares and is graded against:
 *   Z = alpha' (A B) + beta C + bias,   alpha' = alpha scale_a scale_b (scale_a = scale_b = 1 without FP8 scaling),
 *   D = RN_out(scale_d act(Z)),         amax = max_ij |act(Z_ij)|, before scale_d (cuBLASLt's AMAX_D).
 * Every operation of the epilogue is in the accumulator format; the activation calls an elementary function (erf,
 * tanh, exp) whose relative error the kernel declares (func_rel_err). */
#ifndef FPCERT_PLUGIN_EPILOGUE_H_
#define FPCERT_PLUGIN_EPILOGUE_H_

#ifndef FPCERT_PLUGIN_H_
#error "include <fpcert/plugin.h>: it includes fpcert_plugin_epilogue.h where the ABI's base types are defined"
#endif

/* The bias vector of a call (fpcert_gemm_epilogue_args.bias_kind). */
typedef int32_t fpcert_bias_kind;
enum {
  FPCERT_BIAS_NONE = 0,   /* no bias */
  FPCERT_BIAS_ROW = 1,    /* bias_i added to every element of row i: m values */
  FPCERT_BIAS_COLUMN = 2  /* bias_j added to every element of column j: n values (a Linear layer's bias) */
};

/* The activation of a call (fpcert_gemm_epilogue_args.activation). */
typedef int32_t fpcert_activation;
enum {
  FPCERT_ACTIVATION_NONE = 0,      /* act(z) = z */
  FPCERT_ACTIVATION_RELU = 1,      /* max(z, 0) */
  FPCERT_ACTIVATION_GELU_ERF = 2,  /* z (1 + erf(z / sqrt 2)) / 2 (PyTorch's approximate="none") */
  FPCERT_ACTIVATION_GELU_TANH = 3, /* z (1 + tanh(sqrt(2/pi) (z + 0.044715 z^3))) / 2 (approximate="tanh"; cuBLASLt's GELU) */
  FPCERT_ACTIVATION_SILU = 4       /* z / (1 + exp(-z)) */
};

/* The mask bit of a bias kind or an activation in fpcert_gemm_epilogue_traits.bias_kinds / .activations. */
#define FPCERT_EPILOGUE_BIT(value) (1u << (value))
#define FPCERT_BIAS_KINDS_ALL (FPCERT_EPILOGUE_BIT(FPCERT_BIAS_ROW) | FPCERT_EPILOGUE_BIT(FPCERT_BIAS_COLUMN))
#define FPCERT_ACTIVATIONS_ALL                                                                                      \
  (FPCERT_EPILOGUE_BIT(FPCERT_ACTIVATION_RELU) | FPCERT_EPILOGUE_BIT(FPCERT_ACTIVATION_GELU_ERF) |                    \
   FPCERT_EPILOGUE_BIT(FPCERT_ACTIVATION_GELU_TANH) | FPCERT_EPILOGUE_BIT(FPCERT_ACTIVATION_SILU))

/* What a GEMM kernel's epilogue takes and how it computes (fpcert_kernel.gemm_epilogue, ABI minor 8). All zero: no
 * epilogue (the epilogue cases are "not supported" for the kernel). fpcert refuses a bit or a value it does not know. */
typedef struct fpcert_gemm_epilogue_traits {
  uint32_t bias_kinds;          /* FPCERT_EPILOGUE_BIT(FPCERT_BIAS_ROW) and/or (.._COLUMN); 0: takes no bias */
  fpcert_format bias_format;    /* the bias vector's format; FPCERT_FORMAT_NONE: the output format (no bias: NONE) */
  uint32_t activations;         /* FPCERT_EPILOGUE_BIT of each activation taken besides NONE (bit 0, NONE, is implied) */
  int32_t round_before_act;     /* 1: Z is rounded into the output format before the activation (an unfused linear then
                                   activation, as eager PyTorch's F.gelu(F.linear(x, w, b))); 0: fused */
  double func_rel_err;          /* relative error of the erf / tanh / exp its GELU or SiLU calls, over the accumulator
                                   format's range, in (0, 1): e.g. 2^-22 for CUDA's erff, tanhf, expf (2 ulp). Required
                                   (> 0) when GELU or SiLU is declared; 0 otherwise */
  const char* func_note;        /* where func_rel_err comes from (required when func_rel_err > 0, else NULL) */
  int32_t fp8_scaling;          /* 1: takes scale_a, scale_b, scale_d (fpcert_gemm_epilogue_args); 0: they are 1;
                                   2 (ABI minor 10): scale_a and scale_b only, scale_d always 1 (cuBLASLt with a D that is
                                   not FP8 applies no scale_d) */
  int32_t amax;                 /* 1: writes amax = max |act(Z)| to fpcert_gemm_epilogue_args.amax when it is not NULL */
} fpcert_gemm_epilogue_traits;

/* One call's epilogue (fpcert_gemm_args.epilogue, ABI minor 8). A kernel that declares no epilogue gets bias_kind and
 * activation NONE, bias and amax NULL, scales 1; it is never given a bias kind, activation or scaling it does not
 * declare. Pointers live in the kernel's memory space. */
typedef struct fpcert_gemm_epilogue_args {
  fpcert_bias_kind bias_kind;   /* NONE, ROW or COLUMN */
  fpcert_activation activation; /* NONE or a declared activation */
  const void* bias;             /* codes of bias_format (the output format when NONE is declared): n of them (COLUMN) or
                                   m (ROW), one vector for every batch; NULL when bias_kind is NONE */
  double scale_a, scale_b;      /* values of the accumulator format: alpha' = alpha scale_a scale_b (1 without fp8_scaling) */
  double scale_d;               /* D = RN_out(scale_d act(Z)); a value of the accumulator format (1 without fp8_scaling) */
  void* amax;                   /* NULL (not asked), or one value of the accumulator format in its container: write
                                   max_ij |act(Z_ij)| before scale_d, over every batch of the call */
} fpcert_gemm_epilogue_args;

#endif /* FPCERT_PLUGIN_EPILOGUE_H_ */
