/* examples/plugin/rows/example_rows_plugin.c — softmax and normalisation kernels for fpcert (plugin ABI minor 6), plain
 * C99, host memory: a shifted softmax and log-softmax, a two-pass LayerNorm and an RMSNorm, every one in fp32 with exp,
 * log and 1/sqrt the fp32 rounding of the C library's double functions (docs/plugin.md, "Softmax and normalisation
 * kernels"). Built against <fpcert/plugin.h>, with -ffp-contract=off (the declared arithmetic has no fused operations).
 *
 *   fpcert certify --plugin ./libexample_rows_plugin.so --kernel example_softmax_f32_shifted --suite softmax
 *   fpcert certify --plugin ./libexample_rows_plugin.so --kernel example_layernorm_f32_twopass --suite norm
 *
 * Compiled with -DEXAMPLE_ROWS_BUGGY (fpcert's own tests do) it also lists two kernels that declare the same arithmetic
 * and compute something weaker, which fpcert must refuse: example_softmax_f32_nomax (exp(z) without the row's max:
 * overflows for large logits) and example_layernorm_f32_onepass (the variance as E[x^2] - E[x]^2: cancels when the
 * mean is large against the spread).
 */
#include <fpcert/plugin.h>
#include <math.h>
#include <string.h>

static float f32_at(const void* base, int64_t i) {
  float f;
  memcpy(&f, (const unsigned char*)base + i * 4, 4);
  return f;
}
static void f32_put(void* base, int64_t i, float v) { memcpy((unsigned char*)base + i * 4, &v, 4); }
static float exp32(float x) { return (float)exp((double)x); }
static float log32(float x) { return (float)log((double)x); }
static float rsqrt32(float t) { return (float)(1.0 / sqrt((double)t)); }

/* ---- softmax -------------------------------------------------------------------------------------------------- */

/* z_j = fl(scale x_j) + mask_j of row r (scale 1: x_j + mask_j). */
static float z_at(const fpcert_softmax_args* a, int64_t r, int64_t j) {
  const float x = f32_at(a->x, r * a->ldx + j);
  return (a->scale == 1.0f ? x : a->scale * x) + (a->mask ? f32_at(a->mask, r * a->ldm + j) : 0.0f);
}

/* One row: M = max z (a NaN logit makes M NaN); e_j = exp(z_j - M); S = sum e_j from +0 in column order; y_j = e_j / S
 * (softmax) or (z_j - M) - log S (log-softmax). A row of -Inf only gives +0 (log-softmax -Inf): the declared
 * FPCERT_MASKED_ROWS_ZERO. shift == 0 (the buggy kernel): M = 0. */
static void softmax_row(const fpcert_softmax_args* a, int64_t r, int log_softmax, int shift) {
  const float inf = (float)INFINITY;
  float m = -inf, s = 0.0f;
  int64_t j;
  for (j = 0; j < a->cols; ++j) {
    const float z = z_at(a, r, j);
    if (isnan(z) || isnan(m)) m = z + m; /* NaN stays */
    else if (z > m) m = z;
  }
  if (m == -inf) {
    for (j = 0; j < a->cols; ++j) f32_put(a->out, r * a->ldo + j, log_softmax ? -inf : 0.0f);
    return;
  }
  if (!shift) m = 0.0f;
  for (j = 0; j < a->cols; ++j) s = s + exp32(z_at(a, r, j) - m);
  if (log_softmax) {
    const float ls = log32(s);
    for (j = 0; j < a->cols; ++j) f32_put(a->out, r * a->ldo + j, (z_at(a, r, j) - m) - ls);
  } else {
    for (j = 0; j < a->cols; ++j) f32_put(a->out, r * a->ldo + j, exp32(z_at(a, r, j) - m) / s);
  }
}

static fpcert_status softmax_rows(const fpcert_softmax_args* a, int log_softmax, int shift, char* message, size_t capacity) {
  int64_t r;
  if (a->struct_size < sizeof(fpcert_softmax_args) || a->memory != FPCERT_MEMORY_HOST) {
    fpcert_plugin_set_message(message, capacity, "unexpected fpcert_softmax_args (struct_size or memory)");
    return FPCERT_STATUS_INVALID_ARGUMENT;
  }
  for (r = 0; r < a->rows; ++r) softmax_row(a, r, log_softmax, shift);
  return FPCERT_STATUS_OK;
}
static fpcert_status softmax_run(void* user_data, const fpcert_softmax_args* a, void* stream, char* message, size_t capacity) {
  (void)user_data, (void)stream;
  return softmax_rows(a, 0, 1, message, capacity);
}
static fpcert_status log_softmax_run(void* user_data, const fpcert_softmax_args* a, void* stream, char* message, size_t capacity) {
  (void)user_data, (void)stream;
  return softmax_rows(a, 1, 1, message, capacity);
}
#ifdef EXAMPLE_ROWS_BUGGY
static fpcert_status softmax_nomax_run(void* user_data, const fpcert_softmax_args* a, void* stream, char* message, size_t capacity) {
  (void)user_data, (void)stream;
  return softmax_rows(a, 0, 0, message, capacity);
}
#endif

/* ---- LayerNorm and RMSNorm ----------------------------------------------------------------------------------- */

enum { TWO_PASS, ONE_PASS, RMS };

/* One row: mean and var (two-pass: S = sum x_j, mean = S / n, var = sum (x_j - mean)^2 / n; one-pass: var = Q / n -
 * mean^2; RMS: mean = 0, var = sum x_j^2 / n), sums from +0 in column order; r = fl32(1 / sqrt(var + eps));
 * y_j = ((x_j - mean) r) gamma_j + beta_j. */
static void norm_row(const fpcert_norm_args* a, int64_t r, int alg) {
  const float n = (float)a->cols;
  float s = 0.0f, q = 0.0f, mean = 0.0f, var, rs;
  int64_t j;
  for (j = 0; j < a->cols; ++j) {
    const float x = f32_at(a->x, r * a->ldx + j);
    if (alg != RMS) s = s + x;
    if (alg != TWO_PASS) q = q + x * x;
  }
  if (alg != RMS) mean = s / n;
  if (alg == TWO_PASS)
    for (j = 0; j < a->cols; ++j) {
      const float d = f32_at(a->x, r * a->ldx + j) - mean;
      q = q + d * d;
    }
  var = alg == ONE_PASS ? q / n - mean * mean : q / n;
  rs = rsqrt32(var + a->eps);
  for (j = 0; j < a->cols; ++j) {
    float y = (f32_at(a->x, r * a->ldx + j) - mean) * rs;
    if (a->gamma) y = y * f32_at(a->gamma, j);
    if (a->beta) y = y + f32_at(a->beta, j);
    f32_put(a->out, r * a->ldo + j, y);
  }
}

static fpcert_status norm_rows(const fpcert_norm_args* a, int alg, char* message, size_t capacity) {
  int64_t r;
  if (a->struct_size < sizeof(fpcert_norm_args) || a->memory != FPCERT_MEMORY_HOST) {
    fpcert_plugin_set_message(message, capacity, "unexpected fpcert_norm_args (struct_size or memory)");
    return FPCERT_STATUS_INVALID_ARGUMENT;
  }
  for (r = 0; r < a->rows; ++r) norm_row(a, r, alg);
  return FPCERT_STATUS_OK;
}
static fpcert_status layernorm_run(void* user_data, const fpcert_norm_args* a, void* stream, char* message, size_t capacity) {
  (void)user_data, (void)stream;
  return norm_rows(a, TWO_PASS, message, capacity);
}
static fpcert_status rmsnorm_run(void* user_data, const fpcert_norm_args* a, void* stream, char* message, size_t capacity) {
  (void)user_data, (void)stream;
  return norm_rows(a, RMS, message, capacity);
}
#ifdef EXAMPLE_ROWS_BUGGY
static fpcert_status layernorm_onepass_run(void* user_data, const fpcert_norm_args* a, void* stream, char* message, size_t capacity) {
  (void)user_data, (void)stream;
  return norm_rows(a, ONE_PASS, message, capacity);
}
#endif

/* ---- the table: what fpcert's bounds read; nothing is filled in for a kernel -------------------------------- */

#define LIBM_F32 {.implementation = FPCERT_ELEM_FN_LIBM_F32}
#define SOFTMAX_TRAITS(FN, LOG)                                                                                          \
  {.fn = FN, .shift = FPCERT_SOFTMAX_SHIFTED, .x_input = FPCERT_FORMAT_F32, .compute_format = FPCERT_FORMAT_F32,        \
   .sum_format = FPCERT_FORMAT_F32, .sum_order = FPCERT_REDUCE_ORDER_SEQUENTIAL, .reciprocal = 0,                       \
   .out_format = FPCERT_FORMAT_F32, .masked_rows = FPCERT_MASKED_ROWS_ZERO, .accepts_mask = 1, .exp = LIBM_F32, .log = LOG}
#define NORM_TRAITS(KIND, VARIANCE)                                                                                      \
  {.kind = KIND, .variance = VARIANCE, .x_input = FPCERT_FORMAT_F32, .compute_format = FPCERT_FORMAT_F32,               \
   .acc_format = FPCERT_FORMAT_F32, .out_format = FPCERT_FORMAT_F32, .eps_placement = FPCERT_NORM_EPS_INSIDE_SQRT,      \
   .rsqrt = LIBM_F32}
#define NO_LOG {0}

static const fpcert_kernel kKernels[] = {
    {.struct_size = sizeof(fpcert_kernel), .operation = FPCERT_OPERATION_SOFTMAX, .name = "example_softmax_f32_shifted",
     .description = "softmax, fp32, max first, sequential row sum, division", .memory = FPCERT_MEMORY_HOST,
     .softmax = SOFTMAX_TRAITS(FPCERT_SOFTMAX_FN_SOFTMAX, NO_LOG), .softmax_run = softmax_run},
    {.struct_size = sizeof(fpcert_kernel), .operation = FPCERT_OPERATION_SOFTMAX, .name = "example_log_softmax_f32_shifted",
     .description = "log-softmax, fp32, (z - max) - log(sum exp(z - max))", .memory = FPCERT_MEMORY_HOST,
     .softmax = SOFTMAX_TRAITS(FPCERT_SOFTMAX_FN_LOG_SOFTMAX, LIBM_F32), .softmax_run = log_softmax_run},
    {.struct_size = sizeof(fpcert_kernel), .operation = FPCERT_OPERATION_NORM, .name = "example_layernorm_f32_twopass",
     .description = "LayerNorm, fp32, mean then sum (x - mean)^2 (two passes)", .memory = FPCERT_MEMORY_HOST,
     .norm = NORM_TRAITS(FPCERT_NORM_LAYERNORM, FPCERT_NORM_VARIANCE_TWO_PASS), .norm_run = layernorm_run},
    {.struct_size = sizeof(fpcert_kernel), .operation = FPCERT_OPERATION_NORM, .name = "example_rmsnorm_f32",
     .description = "RMSNorm, fp32, x / sqrt(mean(x^2) + eps)", .memory = FPCERT_MEMORY_HOST,
     .norm = NORM_TRAITS(FPCERT_NORM_RMSNORM, 0), .norm_run = rmsnorm_run},
#ifdef EXAMPLE_ROWS_BUGGY
    {.struct_size = sizeof(fpcert_kernel), .operation = FPCERT_OPERATION_SOFTMAX, .name = "example_softmax_f32_nomax",
     .description = "declares the shifted softmax, computes exp(z) without the max", .memory = FPCERT_MEMORY_HOST,
     .softmax = SOFTMAX_TRAITS(FPCERT_SOFTMAX_FN_SOFTMAX, NO_LOG), .softmax_run = softmax_nomax_run},
    {.struct_size = sizeof(fpcert_kernel), .operation = FPCERT_OPERATION_NORM, .name = "example_layernorm_f32_onepass",
     .description = "declares the two-pass LayerNorm, computes E[x^2] - E[x]^2", .memory = FPCERT_MEMORY_HOST,
     .norm = NORM_TRAITS(FPCERT_NORM_LAYERNORM, FPCERT_NORM_VARIANCE_TWO_PASS), .norm_run = layernorm_onepass_run},
#endif
};

static const fpcert_plugin_info kInfo = {
    FPCERT_PLUGIN_INFO_HEADER,
    .plugin_name = "example-rows",
    .plugin_version = "1.0",
    .kernel_count = sizeof kKernels / sizeof kKernels[0],
    .kernels = kKernels,
};

FPCERT_PLUGIN_EXPORT const fpcert_plugin_info* fpcert_plugin_enumerate(uint32_t host_abi_major, uint32_t host_abi_minor,
                                                                       char* message, size_t message_capacity) {
  (void)host_abi_major, (void)host_abi_minor, (void)message, (void)message_capacity;
  return &kInfo; /* fpcert checks the versions and every field */
}
