/* examples/plugin/reduce/example_reduce_plugin.c — reduction kernels for fpcert (plugin ABI minor 3), plain C99:
 * an fp32 row sum in a declared sequential order, an fp32 dot product with FMA in that order, and a bf16 sum
 * with an fp32 accumulator in blocks of 64 (docs/plugin.md, "Reduction kernels"). Built against <fpcert/plugin.h>.
 *
 *   fpcert certify --plugin ./libexample_reduce_plugin.so --kernel example_sum_f32_seq        (the reduce suite)
 *   fpcert certify --plugin ./libexample_reduce_plugin.so --kernel example_dot_f32_fma_seq --suite reduce_quick
 *
 * Compiled with -DEXAMPLE_REDUCE_BUGGY (fpcert's own tests do) it also lists example_sum_f32_droplast, a sum that
 * leaves out the last element of every vector: fpcert must refuse it.
 */
#include <fpcert/plugin.h>
#include <math.h>
#include <string.h>

/* Element i of vector v (ROWS: row v; COLS: column v), codes of `bytes` bytes. */
static const unsigned char* elem(const void* base, const fpcert_reduce_args* a, int64_t ld, int64_t v, int64_t i, int bytes) {
  const int64_t at = a->axis == FPCERT_REDUCE_ROWS ? v * ld + i : i * ld + v;
  return (const unsigned char*)base + at * bytes;
}
static float f32_at(const void* base, const fpcert_reduce_args* a, int64_t ld, int64_t v, int64_t i) {
  float f;
  memcpy(&f, elem(base, a, ld, v, i, 4), 4);
  return f;
}
/* bf16 bits -> the same value as a float (bf16 is fp32's top half: exact). */
static float bf16_at(const void* base, const fpcert_reduce_args* a, int64_t ld, int64_t v, int64_t i) {
  uint16_t h;
  memcpy(&h, elem(base, a, ld, v, i, 2), 2);
  const uint32_t bits = (uint32_t)h << 16;
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

/* acc = +0; acc = acc + x_i for i = 0 .. n - 1 - drop (fp32, round to nearest even: C's float addition). */
static fpcert_status sum_f32(const fpcert_reduce_args* a, int64_t drop) {
  float* out = (float*)a->out;
  for (int64_t v = 0; v < a->count; ++v) {
    float acc = 0.0f;
    for (int64_t i = 0; i + drop < a->length; ++i) acc += f32_at(a->x, a, a->ldx, v, i);
    out[v] = acc; /* only the count results: the bytes around them are fpcert's guards */
  }
  return FPCERT_STATUS_OK;
}
static fpcert_status sum_f32_run(void* user_data, const fpcert_reduce_args* a, void* stream, char* message, size_t capacity) {
  (void)user_data, (void)stream, (void)message, (void)capacity;
  return sum_f32(a, 0);
}
#ifdef EXAMPLE_REDUCE_BUGGY
static fpcert_status sum_f32_droplast_run(void* user_data, const fpcert_reduce_args* a, void* stream, char* message, size_t capacity) {
  (void)user_data, (void)stream, (void)message, (void)capacity;
  return sum_f32(a, 1);
}
#endif

/* acc = fma(x_i, y_i, acc), i = 0 .. n - 1, from +0. */
static fpcert_status dot_f32_run(void* user_data, const fpcert_reduce_args* a, void* stream, char* message, size_t capacity) {
  (void)user_data, (void)stream, (void)message, (void)capacity;
  float* out = (float*)a->out;
  for (int64_t v = 0; v < a->count; ++v) {
    float acc = 0.0f;
    for (int64_t i = 0; i < a->length; ++i) acc = fmaf(f32_at(a->x, a, a->ldx, v, i), f32_at(a->y, a, a->ldy, v, i), acc);
    out[v] = acc;
  }
  return FPCERT_STATUS_OK;
}

/* Blocks of 64 terms, each summed from +0 in fp32; the block sums added in order from the first. */
static fpcert_status sum_bf16_blocked_run(void* user_data, const fpcert_reduce_args* a, void* stream, char* message, size_t capacity) {
  (void)user_data, (void)stream, (void)message, (void)capacity;
  float* out = (float*)a->out;
  for (int64_t v = 0; v < a->count; ++v) {
    float total = 0.0f;
    for (int64_t b = 0; b < a->length; b += 64) {
      float part = 0.0f;
      for (int64_t i = b; i < a->length && i < b + 64; ++i) part += bf16_at(a->x, a, a->ldx, v, i);
      total = b == 0 ? part : total + part;
    }
    out[v] = total;
  }
  return FPCERT_STATUS_OK;
}

/* The traits fpcert's bounds and emulation read: nothing is filled in for a kernel. */
#define SUM_F32_TRAITS                                                                                           \
  {.kind = FPCERT_REDUCE_SUM, .x_input = FPCERT_FORMAT_F32, .y_input = FPCERT_FORMAT_NONE,                      \
   .input_rounding = FPCERT_ROUNDING_NEAREST_EVEN, .acc_format = FPCERT_FORMAT_F32, .acc_rounding = FPCERT_ROUNDING_NEAREST_EVEN, \
   .exact_products = 1, .order = FPCERT_REDUCE_ORDER_SEQUENTIAL, .out_format = FPCERT_FORMAT_F32, .determinism = FPCERT_DETERMINISTIC}

static const fpcert_kernel kKernels[] = {
    {
        .struct_size = sizeof(fpcert_kernel),
        .operation = FPCERT_OPERATION_REDUCTION,
        .name = "example_sum_f32_seq",
        .description = "row sums, fp32, sequential from +0",
        .memory = FPCERT_MEMORY_HOST,
        .reduce = SUM_F32_TRAITS,
        .reduce_run = sum_f32_run,
    },
    {
        .struct_size = sizeof(fpcert_kernel),
        .operation = FPCERT_OPERATION_REDUCTION,
        .name = "example_dot_f32_fma_seq",
        .description = "dot products, fp32, fma sequential from +0",
        .memory = FPCERT_MEMORY_HOST,
        .reduce = {.kind = FPCERT_REDUCE_DOT, .x_input = FPCERT_FORMAT_F32, .y_input = FPCERT_FORMAT_F32,
                   .input_rounding = FPCERT_ROUNDING_NEAREST_EVEN, .acc_format = FPCERT_FORMAT_F32,
                   .acc_rounding = FPCERT_ROUNDING_NEAREST_EVEN, .exact_products = 1 /* fma: x*y not rounded */,
                   .order = FPCERT_REDUCE_ORDER_SEQUENTIAL, .out_format = FPCERT_FORMAT_F32, .determinism = FPCERT_DETERMINISTIC},
        .reduce_run = dot_f32_run,
    },
    {
        .struct_size = sizeof(fpcert_kernel),
        .operation = FPCERT_OPERATION_REDUCTION,
        .name = "example_sum_bf16_blocked64",
        .description = "row sums, bf16 in, fp32 accumulator, blocks of 64",
        .memory = FPCERT_MEMORY_HOST,
        .reduce = {.kind = FPCERT_REDUCE_SUM, .x_input = FPCERT_FORMAT_BF16, .y_input = FPCERT_FORMAT_NONE,
                   .input_rounding = FPCERT_ROUNDING_NEAREST_EVEN, .acc_format = FPCERT_FORMAT_F32,
                   .acc_rounding = FPCERT_ROUNDING_NEAREST_EVEN, .exact_products = 1, .order = FPCERT_REDUCE_ORDER_BLOCKED,
                   .block = 64, .out_format = FPCERT_FORMAT_F32, .determinism = FPCERT_DETERMINISTIC},
        .reduce_run = sum_bf16_blocked_run,
    },
#ifdef EXAMPLE_REDUCE_BUGGY
    {
        .struct_size = sizeof(fpcert_kernel),
        .operation = FPCERT_OPERATION_REDUCTION,
        .name = "example_sum_f32_droplast",
        .description = "declares the sequential fp32 sum, leaves out each vector's last element",
        .memory = FPCERT_MEMORY_HOST,
        .reduce = SUM_F32_TRAITS,
        .reduce_run = sum_f32_droplast_run,
    },
#endif
};

static const fpcert_plugin_info kInfo = {
    FPCERT_PLUGIN_INFO_HEADER,
    .plugin_name = "example-reduce",
    .plugin_version = "1.0",
    .kernel_count = sizeof kKernels / sizeof kKernels[0],
    .kernels = kKernels,
};

FPCERT_PLUGIN_EXPORT const fpcert_plugin_info* fpcert_plugin_enumerate(uint32_t host_abi_major, uint32_t host_abi_minor,
                                                                       char* message, size_t message_capacity) {
  (void)host_abi_major, (void)host_abi_minor, (void)message, (void)message_capacity;
  return &kInfo; /* fpcert checks the versions and every field */
}
