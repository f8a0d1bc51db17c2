/* examples/plugin/epilogue/example_epilogue_plugin.c — a CPU GEMM with a fused epilogue (plugin ABI minor 8), in plain
 * C99: bf16 A and B, fp32 FMA along K, a bf16 bias per column, then ReLU or GELU (tanh form) in fp32 with tanhf,
 * fp32 D, and amax = max |act(Z)| when asked: a Linear layer and its activation in one call, as cuBLASLt's
 * CUBLASLT_EPILOGUE_GELU_BIAS computes it. Built against the installed <fpcert/plugin.h> by this folder's
 * CMakeLists.txt; docs/plugin.md, "Fused epilogues", explains every field.
 *
 *   fpcert certify --plugin ./libexample_epilogue_plugin.so --kernel example_gemm_bf16_bias_gelu --suite certify
 *
 * With -DEXAMPLE_EPILOGUE_BUGGY the table also lists example_gemm_bf16_bias_gelu_erf, which declares the tanh form
 * and computes the erf form (the "GELU form swapped" bug of issue 37): fpcert must refuse it.
 */
#include <fpcert/plugin.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

/* bf16 bits -> the same value as a float (bf16 is the top half of fp32). */
static float bf16_to_f32(uint16_t h) {
  const uint32_t bits = (uint32_t)h << 16;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

/* GELU, tanh form, every operation in fp32: z (1 + tanh(sqrt(2/pi) (z + 0.044715 z^3))) / 2. */
static float gelu_tanh_f32(float z) {
  const float k0 = 0.7978845608028654f, k1 = 0.044715f; /* sqrt(2/pi) and the cubic's coefficient, rounded to fp32 */
  const float inner = k0 * (z + k1 * z * z * z);
  return 0.5f * z * (1.0f + tanhf(inner));
}

#ifdef EXAMPLE_EPILOGUE_BUGGY
/* GELU, erf form: z (1 + erf(z / sqrt 2)) / 2: what the buggy kernel computes while it declares the tanh form. */
static float gelu_erf_f32(float z) { return 0.5f * z * (1.0f + erff(z * 0.70710678118654752f)); }
#endif

/* D = act(A B + bias) for row-major bf16 A (m x k) and B (k x n), fp32 D; user_data non-NULL: the erf form for GELU. */
static fpcert_status gemm_run(void* user_data, const fpcert_gemm_args* a, void* workspace, size_t workspace_bytes, void* stream,
                              char* message, size_t message_capacity) {
  (void)workspace, (void)workspace_bytes, (void)stream;
  const uint16_t* A = (const uint16_t*)a->a;
  const uint16_t* B = (const uint16_t*)a->b;
  float* D = (float*)a->c;
  /* ABI minor 8: the call's epilogue, read only when fpcert's args carry it (an older fpcert passes none). */
  const int has_epilogue = a->struct_size >= offsetof(fpcert_gemm_args, epilogue) + sizeof(a->epilogue);
  const fpcert_bias_kind bias_kind = has_epilogue ? a->epilogue.bias_kind : FPCERT_BIAS_NONE;
  const fpcert_activation act = has_epilogue ? a->epilogue.activation : FPCERT_ACTIVATION_NONE;
  const uint16_t* bias = (const uint16_t*)(has_epilogue ? a->epilogue.bias : NULL);
  float* amax = (float*)(has_epilogue ? a->epilogue.amax : NULL);
  if (bias_kind == FPCERT_BIAS_ROW) { /* fpcert never asks (not declared below); refuse rather than guess */
    fpcert_plugin_set_message(message, message_capacity, "bias per row is not implemented");
    return FPCERT_STATUS_NOT_SUPPORTED;
  }
  float running_max = 0.0f;
  for (int64_t i = 0; i < a->shape.m; ++i)
    for (int64_t j = 0; j < a->shape.n; ++j) {
      float z = 0.0f; /* Z[i][j] = fma(a[i][k], b[k][j], Z) for k = 0..K-1, from +0, then + bias[j], in fp32 */
      for (int64_t p = 0; p < a->shape.k; ++p) z = fmaf(bf16_to_f32(A[i * a->lda + p]), bf16_to_f32(B[p * a->ldb + j]), z);
      if (bias_kind == FPCERT_BIAS_COLUMN) z = z + bf16_to_f32(bias[j]);
      float y = z;
      if (act == FPCERT_ACTIVATION_RELU) y = z > 0.0f ? z : 0.0f;
#ifdef EXAMPLE_EPILOGUE_BUGGY
      else if (act == FPCERT_ACTIVATION_GELU_TANH) y = user_data ? gelu_erf_f32(z) : gelu_tanh_f32(z);
#else
      else if (act == FPCERT_ACTIVATION_GELU_TANH) y = gelu_tanh_f32(z);
#endif
      if (fabsf(y) > running_max) running_max = fabsf(y);
      D[i * a->ldc + j] = y; /* only the m x n elements: the ldc padding is not ours */
    }
  if (amax) *amax = running_max; /* max |act(Z)|, before scale_d (there is none: fp8_scaling is 0) */
  return FPCERT_STATUS_OK;
}

/* The GEMM traits and epilogue both kernels declare (they differ only in what they compute). */
#define EXAMPLE_GEMM_TRAITS                                                                                                 \
  .gemm = {                                                                                                                 \
      .a_input = FPCERT_FORMAT_BF16,                                                                                        \
      .b_input = FPCERT_FORMAT_BF16,                                                                                        \
      .input_rounding = FPCERT_ROUNDING_NEAREST_EVEN,                                                                       \
      .a_operand = FPCERT_FORMAT_BF16,                                                                                      \
      .b_operand = FPCERT_FORMAT_BF16,                                                                                      \
      .exact_products = 1, /* 8 x 8 significant bits fit fp32's 24 */                                                       \
      .product_format = FPCERT_FORMAT_NONE,                                                                                 \
      .acc_format = FPCERT_FORMAT_F32,                                                                                      \
      .acc_rounding = FPCERT_ROUNDING_NEAREST_EVEN,                                                                         \
      .out_format = FPCERT_FORMAT_F32,                                                                                      \
      .order = "Z[i][j] = fma(a[i][k], b[k][j], Z) for k = 0..K-1 in fp32, from +0; then + bias[j], the activation, in fp32", \
  },                                                                                                                        \
  .gemm_run = gemm_run, .gemm_order = {.kind = FPCERT_ORDER_SEQUENTIAL, .step = FPCERT_STEP_FMA},                          \
  .determinism = FPCERT_DETERMINISTIC,                                                                                      \
  /* ABI minor 8: the fused epilogue (docs/plugin.md, "Fused epilogues") */                                                 \
  .gemm_epilogue = {                                                                                                        \
      .bias_kinds = FPCERT_EPILOGUE_BIT(FPCERT_BIAS_COLUMN), /* bias_j added to column j; per row: not supported */         \
      .bias_format = FPCERT_FORMAT_BF16,                     /* the bias as the bf16 Linear layer holds it */               \
      .activations = FPCERT_EPILOGUE_BIT(FPCERT_ACTIVATION_RELU) | FPCERT_EPILOGUE_BIT(FPCERT_ACTIVATION_GELU_TANH),        \
      .round_before_act = 0, /* fused: Z stays in fp32 until the activation */                                              \
      .func_rel_err = 2.384185791015625e-07, /* 2^-22: tanhf within 2 ulp of fp32 */                                       \
      .func_note = "tanhf within 2 ulp: glibc's libm-test-ulps (tanh, float: 2); CUDA's tanhf: 2 ulp too",                \
      .fp8_scaling = 0,                                                                                                     \
      .amax = 1, /* writes max |act(Z)| when fpcert passes an amax pointer */                                               \
  }

static const fpcert_kernel kKernels[] = {
    {
        .struct_size = sizeof(fpcert_kernel),
        .operation = FPCERT_OPERATION_GEMM,
        .name = "example_gemm_bf16_bias_gelu",
        .description = "CPU GEMM with a fused epilogue: bf16 storage, fp32 FMA along K, bf16 bias per column, ReLU or GELU (tanh), amax",
        .memory = FPCERT_MEMORY_HOST,
        EXAMPLE_GEMM_TRAITS,
    },
#ifdef EXAMPLE_EPILOGUE_BUGGY
    {
        .struct_size = sizeof(fpcert_kernel),
        .operation = FPCERT_OPERATION_GEMM,
        .name = "example_gemm_bf16_bias_gelu_erf",
        .description = "BUGGY: declares GELU's tanh form, computes its erf form",
        .memory = FPCERT_MEMORY_HOST,
        .user_data = (void*)kKernels, /* non-NULL: the erf form */
        EXAMPLE_GEMM_TRAITS,
    },
#endif
};

static const fpcert_plugin_info kInfo = {
    FPCERT_PLUGIN_INFO_HEADER,
    .plugin_name = "example-epilogue",
    .plugin_version = "1.0",
    .kernel_count = sizeof kKernels / sizeof kKernels[0],
    .kernels = kKernels,
};

FPCERT_PLUGIN_EXPORT const fpcert_plugin_info* fpcert_plugin_enumerate(uint32_t host_abi_major, uint32_t host_abi_minor, char* message,
                                                                       size_t message_capacity) {
  (void)host_abi_major, (void)host_abi_minor, (void)message, (void)message_capacity;
  return &kInfo; /* fpcert decides what a version mismatch means */
}
