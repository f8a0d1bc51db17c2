/* examples/plugin/cpu/example_cpu_plugin.c — a CPU plugin for fpcert, in plain C99: a naive GEMM
 * with fp16 storage and fp32 accumulation, and two elementwise conversions (fp32 -> bf16 and
 * bf16 -> fp32). Built against the installed <fpcert/plugin.h> by this folder's CMakeLists.txt.
 *
 *   fpcert certify --plugin ./libexample_cpu_plugin.so --kernel example_gemm_f16_f32acc --suite quick
 *   fpcert convert --plugin ./libexample_cpu_plugin.so --kernel example_cvt_bf16_to_f32 --exhaustive
 */
#include <fpcert/plugin.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

/* ---- fp16 and bf16 bits, decoded exactly (no host half type whose conversion we did not write) */

/* fp16 bits -> the same value as a float (every fp16 value is exact in fp32). */
static float f16_to_f32(uint16_t h) {
  const uint32_t sign = (uint32_t)(h >> 15) << 31;
  const uint32_t e = (h >> 10) & 0x1f, m = h & 0x3ff;
  uint32_t bits;
  if (e == 0x1f) {
    bits = sign | 0x7f800000u | (m << 13); /* Inf, or NaN with its payload */
  } else if (e != 0) {
    bits = sign | ((e + 112u) << 23) | (m << 13); /* normal: rebias 15 -> 127 */
  } else {
    float v = ldexpf((float)m, -24); /* zero or subnormal: m * 2^-24, exact */
    return sign ? -v : v;
  }
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

/* ---- GEMM: C = A * B, fp16 storage, fp32 FMA along K ---------------------------------------- */

static int64_t at(fpcert_layout layout, int64_t i, int64_t j, int64_t ld) {
  return layout == FPCERT_LAYOUT_ROW_MAJOR ? i * ld + j : j * ld + i;
}

static fpcert_status gemm_run(void* user_data, const fpcert_gemm_args* a, void* workspace, size_t workspace_bytes,
                              void* stream, char* message, size_t message_capacity) {
  (void)user_data, (void)workspace, (void)workspace_bytes, (void)stream, (void)message, (void)message_capacity;
  /* ABI minor 5: D = alpha (A B) + beta C (.gemm_alpha_beta = 1 below). Read only when fpcert's args carry them. */
  const int ab = a->struct_size >= offsetof(fpcert_gemm_args, c_in) + sizeof(a->c_in);
  const float alpha = ab ? (float)a->alpha : 1.0f, beta = ab ? (float)a->beta : 0.0f;
  /* ABI minor 7: strided batches (.gemm_batched = 1 below): matrix t of A at A + t * stride_a (0: the same A), ... */
  const int batched = a->struct_size >= offsetof(fpcert_gemm_args, stride_c) + sizeof(a->stride_c);
  const int64_t batches = batched && a->batch > 1 ? a->batch : 1;
  for (int64_t t = 0; t < batches; ++t) {
  const uint16_t* A = (const uint16_t*)a->a + (batched ? t * a->stride_a : 0);
  const uint16_t* B = (const uint16_t*)a->b + (batched ? t * a->stride_b : 0);
  float* C = (float*)a->c + (batched ? t * a->stride_c : 0);
  const float* Cin = ab && a->c_in ? (const float*)a->c_in + (batched ? t * a->stride_c : 0) : NULL;
  for (int64_t i = 0; i < a->shape.m; ++i)
    for (int64_t j = 0; j < a->shape.n; ++j) {
      float acc = 0.0f; /* C[i][j] = fma(a[i][k], b[k][j], acc) for k = 0..K-1, from +0 */
      for (int64_t k = 0; k < a->shape.k; ++k)
        acc = fmaf(f16_to_f32(A[at(a->shape.a_layout, i, k, a->lda)]), f16_to_f32(B[at(a->shape.b_layout, k, j, a->ldb)]), acc);
      const int64_t x = at(a->shape.c_layout, i, j, a->ldc);
      /* RN(RN(alpha acc) + RN(beta c)) in fp32, the epilogue fpcert's bound declares; beta = 0: C is not read (BLAS).
         c is read before D is written (in place, c_in == c: element x is C's until then). */
      float d = alpha * acc;
      if (beta != 0.0f) d = d + beta * Cin[x];
      C[x] = d; /* only the m x n elements: the ldc padding is not ours */
    }
  }
  return FPCERT_STATUS_OK;
}

/* ---- conversions ------------------------------------------------------------------------------ */

/* fp32 -> bf16, round to nearest even, overflow to Inf, NaN kept quiet with its top payload bits. */
static fpcert_status cvt_f32_to_bf16(void* user_data, const fpcert_conversion_args* a, void* stream, char* message,
                                     size_t message_capacity) {
  (void)user_data, (void)stream, (void)message, (void)message_capacity;
  const uint32_t* src = (const uint32_t*)a->src;
  uint16_t* dst = (uint16_t*)a->dst;
  for (int64_t i = 0; i < a->count; ++i) {
    const uint32_t x = src[i];
    if ((x & 0x7fffffffu) > 0x7f800000u) {
      dst[i] = (uint16_t)((x >> 16) | 0x0040u); /* NaN: quiet, top 6 payload bits and sign kept */
    } else {
      /* Add half an ulp of bf16 minus one, plus the lowest kept bit: ties go to even. Finite
       * values at or above the largest bf16 + half an ulp carry into the exponent: Inf. */
      const uint32_t rounded = x + 0x7fffu + ((x >> 16) & 1u);
      dst[i] = (uint16_t)(rounded >> 16);
    }
  }
  return FPCERT_STATUS_OK;
}

/* bf16 -> fp32: exact (bf16 is the top half of fp32); NaNs quieted, payload and sign kept. */
static fpcert_status cvt_bf16_to_f32(void* user_data, const fpcert_conversion_args* a, void* stream, char* message,
                                     size_t message_capacity) {
  (void)user_data, (void)stream, (void)message, (void)message_capacity;
  const uint16_t* src = (const uint16_t*)a->src;
  uint32_t* dst = (uint32_t*)a->dst;
  for (int64_t i = 0; i < a->count; ++i) {
    uint32_t x = (uint32_t)src[i] << 16;
    if ((x & 0x7fffffffu) > 0x7f800000u) x |= 0x00400000u;
    dst[i] = x;
  }
  return FPCERT_STATUS_OK;
}

/* ---- the table ------------------------------------------------------------------------------ */

static const fpcert_kernel kKernels[] = {
    {
        .struct_size = sizeof(fpcert_kernel),
        .operation = FPCERT_OPERATION_GEMM,
        .name = "example_gemm_f16_f32acc",
        .description = "naive CPU GEMM: fp16 storage, fp32 FMA along K",
        .memory = FPCERT_MEMORY_HOST,
        .gemm =
            {
                .a_input = FPCERT_FORMAT_F16,
                .b_input = FPCERT_FORMAT_F16,
                .input_rounding = FPCERT_ROUNDING_NEAREST_EVEN,
                .a_operand = FPCERT_FORMAT_F16,
                .b_operand = FPCERT_FORMAT_F16,
                .exact_products = 1, /* 11 x 11 significant bits fit fp32's 24 */
                .product_format = FPCERT_FORMAT_NONE,
                .acc_format = FPCERT_FORMAT_F32,
                .acc_rounding = FPCERT_ROUNDING_NEAREST_EVEN,
                .promote_every = 0,
                .promote_format = FPCERT_FORMAT_NONE,
                .out_format = FPCERT_FORMAT_F32,
                .order = "C[i][j] = fma(a[i][k], b[k][j], C) for k = 0..K-1 in fp32, from +0; exact products",
            },
        .gemm_run = gemm_run, /* can_implement and workspace_bytes left NULL: every shape, no workspace */
        /* the order again, machine-readable: fpcert emulates it and requires the same bits */
        .gemm_order = {.kind = FPCERT_ORDER_SEQUENTIAL, .step = FPCERT_STEP_FMA},
        .determinism = FPCERT_DETERMINISTIC, /* the same bits every run (FPCERT_RUN_TO_RUN: atomics; docs/plugin.md) */
        /* ABI minor 4: A, B and C each row- or column-major (at() above); 0 would be row-major only */
        .gemm_layouts = FPCERT_LAYOUTS_ALL,
        /* ABI minor 5: D = alpha (A B) + beta C from gemm_args.alpha, beta, c_in (gemm_run above) */
        .gemm_alpha_beta = 1,
        /* ABI minor 7: batch > 1 matrices per call at gemm_args' strides (gemm_run above) */
        .gemm_batched = 1,
    },
    {
        .struct_size = sizeof(fpcert_kernel),
        .operation = FPCERT_OPERATION_CONVERSION,
        .name = "example_cvt_f32_to_bf16",
        .description = "fp32 -> bf16, round to nearest even (bit trick)",
        .memory = FPCERT_MEMORY_HOST,
        .conversion = {.src_format = FPCERT_FORMAT_F32,
                       .dst_format = FPCERT_FORMAT_BF16,
                       .rounding = FPCERT_ROUNDING_NEAREST_EVEN,
                       .saturation = FPCERT_SATURATION_INF,
                       .nan_payload = FPCERT_NAN_PRESERVE},
        .conversion_run = cvt_f32_to_bf16,
    },
    {
        .struct_size = sizeof(fpcert_kernel),
        .operation = FPCERT_OPERATION_CONVERSION,
        .name = "example_cvt_bf16_to_f32",
        .description = "bf16 -> fp32 (exact widening)",
        .memory = FPCERT_MEMORY_HOST,
        .conversion = {.src_format = FPCERT_FORMAT_BF16,
                       .dst_format = FPCERT_FORMAT_F32,
                       .rounding = FPCERT_ROUNDING_NEAREST_EVEN,
                       .saturation = FPCERT_SATURATION_INF,
                       .nan_payload = FPCERT_NAN_PRESERVE},
        .conversion_run = cvt_bf16_to_f32,
    },
};

static const fpcert_plugin_info kInfo = {
    FPCERT_PLUGIN_INFO_HEADER,
    .plugin_name = "example-cpu",
    .plugin_version = "1.0",
    .kernel_count = sizeof kKernels / sizeof kKernels[0],
    .kernels = kKernels,
};

FPCERT_PLUGIN_EXPORT const fpcert_plugin_info* fpcert_plugin_enumerate(uint32_t host_abi_major, uint32_t host_abi_minor,
                                                                       char* message, size_t message_capacity) {
  (void)host_abi_major, (void)host_abi_minor, (void)message, (void)message_capacity;
  return &kInfo; /* fpcert checks the versions; we always describe ourselves */
}
