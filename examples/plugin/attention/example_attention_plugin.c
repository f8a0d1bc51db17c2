/* examples/plugin/attention/example_attention_plugin.c — attention kernels for fpcert (plugin ABI minor 10), plain C99,
 * host memory, f16 storage and fp32 arithmetic (docs/plugin.md, "Attention kernels" and "Attention backward kernels"):
 *   example_attention_f16_online  the forward: an online softmax over key blocks of 32 (a running max; O~ and l rescaled
 *                                 by exp(m_old - m_new) when it grows), z_j = RN(s x_j) + mask_j, exp of the fp32
 *                                 rounding of the C library's double exp, P rounded to f16 before P V, fp32 FMA
 *                                 accumulators, O = RN(O~ / l) into f16, LSE = m + log l
 *   example_attention_bwd_f16     the backward from the saved O and LSE: P = exp(RN(RN(s x) + mask) - LSE), D = dO . O,
 *                                 dP = dO . v, dS = P (dP - D), dV, dQ, dK by fp32 FMA chains in a stated order, the
 *                                 scale applied once, each gradient rounded into f16 once
 * Built against <fpcert/plugin.h> with -ffp-contract=off (every fused operation is an explicit fmaf).
 *
 *   fpcert certify --plugin ./libexample_attention_plugin.so --kernel example_attention_f16_online --suite attention
 *   fpcert certify --plugin ./libexample_attention_plugin.so --kernel example_attention_bwd_f16 --suite attention_backward
 *
 * Compiled with -DEXAMPLE_ATTENTION_BUGGY (fpcert's own tests do) it also lists a wrong twin of each, declaring the same
 * arithmetic, which fpcert must refuse: example_attention_f16_norescale (the running max moves on, O~ and l keep their
 * old scale) and example_attention_bwd_f16_nod (dS = P dP: D never subtracted).
 */
#include <fpcert/plugin.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define KEY_BLOCK 32

/* ---- f16 codes, decoded and rounded here (no host half type whose conversion we did not write) ------------------ */

static float f16_to_f32(uint16_t h) {
  const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  const float v = e == 0 ? ldexpf((float)m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexpf((float)(m | 0x400), e - 25);
  return (h & 0x8000) ? -v : v;
}

/* Nearest even; overflow (|f| >= 65520, the midpoint past 65504) to Inf; NaN to the quiet NaN with f's sign. */
static uint16_t f32_to_f16(float f) {
  uint32_t x, ax, mant, rest, h;
  uint16_t sign;
  memcpy(&x, &f, 4);
  sign = (uint16_t)((x >> 16) & 0x8000u);
  ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return (uint16_t)(sign | 0x7e00u);
  if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);
  if (ax < 0x38800000u) /* below 2^-14: a multiple of 2^-24; |f| 2^24 < 2^10 is exact, rintf rounds it to nearest even */
    return (uint16_t)(sign | (uint16_t)rintf(fabsf(f) * 16777216.0f));
  mant = ax & 0x7fffffu;
  h = ((((ax >> 23) - 112u)) << 10) | (mant >> 13); /* exponent rebiased 127 -> 15 */
  rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h; /* a carry into the exponent is the right result */
  return (uint16_t)(sign | h);
}

static float h_at(const void* base, int64_t i) { return f16_to_f32(((const uint16_t*)base)[i]); }
static void h_put(void* base, int64_t i, float v) { ((uint16_t*)base)[i] = f32_to_f16(v); }
static float f_at(const void* base, int64_t i) {
  float f;
  memcpy(&f, (const unsigned char*)base + i * 4, 4);
  return f;
}
static void f_put(void* base, int64_t i, float v) { memcpy((unsigned char*)base + i * 4, &v, 4); }
static float exp32(float x) { return (float)exp((double)x); }
static float log32(float x) { return (float)log((double)x); }

/* Whether query i sees key j through the causal mask (the additive mask's -Inf is applied by the arithmetic). */
static int visible(fpcert_attention_causal causal, int64_t len_q, int64_t len_k, int64_t i, int64_t j) {
  if (causal == FPCERT_ATTENTION_CAUSAL_TOP_LEFT) return j <= i;
  if (causal == FPCERT_ATTENTION_CAUSAL_BOTTOM_RIGHT) return j <= i + len_k - len_q;
  return 1;
}

/* s = sum_c a_c b_c by fp32 FMA, c ascending from +0 (the QK, dO V and dO O products). */
static float dot_f32(const float* a, const float* b, int64_t d) {
  float s = 0.0f;
  int64_t c;
  for (c = 0; c < d; ++c) s = fmaf(a[c], b[c], s);
  return s;
}

/* One kv head's rows [rows] x [d] decoded from f16 storage into fp32 (exact). */
static void load_rows(const void* src, int64_t row0, int64_t ld, int64_t rows, int64_t d, float* dst) {
  int64_t r, c;
  for (r = 0; r < rows; ++r)
    for (c = 0; c < d; ++c) dst[r * d + c] = h_at(src, (row0 + r) * ld + c);
}

/* ---- forward ----------------------------------------------------------------------------------------------------- */

/* One query row: z_j = RN(s x_j) + mask_j; per key block of 32 the block's max b; when b > m, O~ and l are multiplied by
 * alpha = exp(RN(m - b)) (rescale == 0, the twin: they are not) and m = b; then e_j = exp(RN(z_j - m)), l += e_j,
 * O~_c = fma(RN_f16(e_j), v_jc, O~_c). Returns 0 for a row that sees no key. */
static int forward_row(const fpcert_attention_args* a, const float* q, const float* K, const float* V, int64_t i, float* z, float* acc,
                       float* l_out, float* m_out, int rescale) {
  const int64_t lk = a->shape.len_k, d = a->shape.head_dim;
  float m = -INFINITY, l = 0.0f;
  int64_t j0, j, c;
  for (c = 0; c < d; ++c) acc[c] = 0.0f;
  for (j0 = 0; j0 < lk; j0 += KEY_BLOCK) {
    const int64_t j1 = j0 + KEY_BLOCK < lk ? j0 + KEY_BLOCK : lk;
    float b = -INFINITY;
    for (j = j0; j < j1; ++j) {
      if (!visible(a->causal, a->shape.len_q, lk, i, j)) {
        z[j] = -INFINITY;
        continue;
      }
      z[j] = a->scale * dot_f32(q, K + j * d, d);
      if (a->mask) z[j] = z[j] + f_at(a->mask, i * a->ldm + j);
      if (z[j] > b) b = z[j];
    }
    if (b == -INFINITY) continue; /* nothing visible in this block */
    if (b > m) {
      if (m != -INFINITY && rescale) {
        const float alpha = exp32(m - b);
        l = l * alpha;
        for (c = 0; c < d; ++c) acc[c] = acc[c] * alpha;
      }
      m = b;
    }
    for (j = j0; j < j1; ++j) {
      float e, p;
      if (z[j] == -INFINITY) continue;
      e = exp32(z[j] - m);
      l = l + e;
      p = f16_to_f32(f32_to_f16(e)); /* P rounded to f16 before P V, as declared (pv.traits.a_input) */
      for (c = 0; c < d; ++c) acc[c] = fmaf(p, V[j * d + c], acc[c]);
    }
  }
  *l_out = l;
  *m_out = m;
  return m != -INFINITY;
}

static fpcert_status forward(const fpcert_attention_args* a, char* message, size_t message_capacity, int rescale) {
  const fpcert_attention_shape* s = &a->shape;
  const int64_t d = s->head_dim, group = s->heads_q / s->heads_kv;
  float* q = (float*)malloc((size_t)d * sizeof(float));
  float* K = (float*)malloc((size_t)(s->len_k * d) * sizeof(float));
  float* V = (float*)malloc((size_t)(s->len_k * d) * sizeof(float));
  float* z = (float*)malloc((size_t)s->len_k * sizeof(float));
  float* acc = (float*)malloc((size_t)d * sizeof(float));
  int64_t b, h, i, c;
  fpcert_status st = FPCERT_STATUS_OK;
  if (!q || !K || !V || !z || !acc) {
    fpcert_plugin_set_message(message, message_capacity, "host allocation of the row buffers failed");
    st = FPCERT_STATUS_OUT_OF_MEMORY;
  }
  for (b = 0; st == FPCERT_STATUS_OK && b < s->batch; ++b)
    for (h = 0; h < s->heads_q; ++h) {
      const int64_t kv0 = (b * s->heads_kv + h / group) * s->len_k;
      load_rows(a->k, kv0, a->ldk, s->len_k, d, K);
      load_rows(a->v, kv0, a->ldv, s->len_k, d, V);
      for (i = 0; i < s->len_q; ++i) {
        const int64_t row = (b * s->heads_q + h) * s->len_q + i;
        float l, m;
        int seen;
        load_rows(a->q, row, a->ldq, 1, d, q);
        seen = forward_row(a, q, K, V, i, z, acc, &l, &m, rescale);
        for (c = 0; c < d; ++c) h_put(a->o, row * a->ldo + c, seen ? acc[c] / l : 0.0f); /* masked rows: +0 (declared ZERO) */
        if (a->lse) f_put(a->lse, row, seen ? m + log32(l) : INFINITY);                    /* and LSE +Inf (POS_INF) */
      }
    }
  free(q), free(K), free(V), free(z), free(acc);
  return st;
}

static fpcert_status attention_run(void* user_data, const fpcert_attention_args* a, void* stream, char* message, size_t message_capacity) {
  (void)stream;
  if (a->struct_size < sizeof(fpcert_attention_args) || a->memory != FPCERT_MEMORY_HOST) {
    fpcert_plugin_set_message(message, message_capacity, "expected host memory and fpcert_attention_args of ABI minor 10");
    return FPCERT_STATUS_INVALID_ARGUMENT;
  }
  return forward(a, message, message_capacity, user_data == NULL);
}

/* ---- backward ---------------------------------------------------------------------------------------------------- */

/* One kv head (b, hk): for each query head of its group (ascending) and each query i (ascending): P_ij from the saved
 * LSE, D_i = sum_c dO_ic O_ic, dP_ij = sum_c dO_ic v_jc, dS_ij = P_ij (dP_ij - D_i) (subtract_d == 0, the twin: P_ij
 * dP_ij); dQ_i = s RN(sum_j dS_ij k_j) (j ascending); dK_j += dS_ij q_i and dV_j += P_ij dO_i continue one fp32 FMA chain
 * per element across the group's heads and queries; at the end dK = s dK~, dV, each rounded into f16 once. */
typedef struct bwd_buffers {
  float *K, *V, *q, *o, *g, *p, *ds, *dk, *dv, *dq;
} bwd_buffers;

static void backward_kv_head(const fpcert_attention_bwd_args* a, int64_t b, int64_t hk, bwd_buffers* w, int subtract_d) {
  const fpcert_attention_shape* s = &a->shape;
  const int64_t d = s->head_dim, lk = s->len_k, group = s->heads_q / s->heads_kv, kv0 = (b * s->heads_kv + hk) * lk;
  int64_t h, i, j, c;
  load_rows(a->k, kv0, a->ldk, lk, d, w->K);
  load_rows(a->v, kv0, a->ldv, lk, d, w->V);
  for (c = 0; c < lk * d; ++c) w->dk[c] = w->dv[c] = 0.0f;
  for (h = hk * group; h < (hk + 1) * group; ++h)
    for (i = 0; i < s->len_q; ++i) {
      const int64_t row = (b * s->heads_q + h) * s->len_q + i;
      const float lse = f_at(a->lse, row);
      float dd;
      load_rows(a->q, row, a->ldq, 1, d, w->q);
      load_rows(a->o, row, a->ldo, 1, d, w->o);
      load_rows(a->d_o, row, a->lddo, 1, d, w->g);
      dd = dot_f32(w->g, w->o, d);
      for (j = 0; j < lk; ++j) {
        float zz;
        w->p[j] = w->ds[j] = 0.0f;
        if (isinf(lse) || !visible(a->causal, s->len_q, lk, i, j)) continue; /* a row that sees no key, a hidden key */
        zz = a->scale * dot_f32(w->q, w->K + j * d, d);
        if (a->mask) zz = zz + f_at(a->mask, i * a->ldm + j);
        if (zz == -INFINITY) continue;
        w->p[j] = exp32(zz - lse);
        w->ds[j] = subtract_d ? w->p[j] * (dot_f32(w->g, w->V + j * d, d) - dd) : w->p[j] * dot_f32(w->g, w->V + j * d, d);
      }
      for (c = 0; c < d; ++c) w->dq[c] = 0.0f;
      for (j = 0; j < lk; ++j) {
        if (w->p[j] == 0.0f && w->ds[j] == 0.0f) continue;
        for (c = 0; c < d; ++c) {
          w->dq[c] = fmaf(w->ds[j], w->K[j * d + c], w->dq[c]);
          w->dk[j * d + c] = fmaf(w->ds[j], w->q[c], w->dk[j * d + c]);
          w->dv[j * d + c] = fmaf(w->p[j], w->g[c], w->dv[j * d + c]);
        }
      }
      for (c = 0; c < d; ++c) h_put(a->dq, row * a->lddq + c, a->scale * w->dq[c]);
    }
  for (j = 0; j < lk; ++j)
    for (c = 0; c < d; ++c) {
      h_put(a->dk, (kv0 + j) * a->lddk + c, a->scale * w->dk[j * d + c]);
      h_put(a->dv, (kv0 + j) * a->lddv + c, w->dv[j * d + c]);
    }
}

static fpcert_status attention_bwd_run(void* user_data, const fpcert_attention_bwd_args* a, void* stream, char* message,
                                       size_t message_capacity) {
  const fpcert_attention_shape* s = &a->shape;
  const size_t d = (size_t)s->head_dim, lk = (size_t)s->len_k;
  bwd_buffers w;
  int64_t b, hk;
  fpcert_status st = FPCERT_STATUS_OK;
  (void)stream;
  if (a->struct_size < sizeof(fpcert_attention_bwd_args) || a->memory != FPCERT_MEMORY_HOST) {
    fpcert_plugin_set_message(message, message_capacity, "expected host memory and fpcert_attention_bwd_args of ABI minor 10");
    return FPCERT_STATUS_INVALID_ARGUMENT;
  }
  w.K = (float*)malloc(lk * d * sizeof(float)), w.V = (float*)malloc(lk * d * sizeof(float));
  w.dk = (float*)malloc(lk * d * sizeof(float)), w.dv = (float*)malloc(lk * d * sizeof(float));
  w.q = (float*)malloc(d * sizeof(float)), w.o = (float*)malloc(d * sizeof(float)), w.g = (float*)malloc(d * sizeof(float));
  w.dq = (float*)malloc(d * sizeof(float)), w.p = (float*)malloc(lk * sizeof(float)), w.ds = (float*)malloc(lk * sizeof(float));
  if (!w.K || !w.V || !w.dk || !w.dv || !w.q || !w.o || !w.g || !w.dq || !w.p || !w.ds) {
    fpcert_plugin_set_message(message, message_capacity, "host allocation of the work buffers failed");
    st = FPCERT_STATUS_OUT_OF_MEMORY;
  }
  for (b = 0; st == FPCERT_STATUS_OK && b < s->batch; ++b)
    for (hk = 0; hk < s->heads_kv; ++hk) backward_kv_head(a, b, hk, &w, user_data == NULL);
  free(w.K), free(w.V), free(w.dk), free(w.dv), free(w.q), free(w.o), free(w.g), free(w.dq), free(w.p), free(w.ds);
  return st;
}

/* ---- the table --------------------------------------------------------------------------------------------------- */

/* An f16 x f16 (or fp32 x f16) product accumulated by fp32 FMA in a stated sequential order. */
#define PRODUCT(a_fmt, text)                                                                                               \
  {.traits = {.a_input = (a_fmt), .b_input = FPCERT_FORMAT_F16, .input_rounding = FPCERT_ROUNDING_NEAREST_EVEN,           \
              .a_operand = (a_fmt), .b_operand = FPCERT_FORMAT_F16, .exact_products = 1, .acc_format = FPCERT_FORMAT_F32,   \
              .acc_rounding = FPCERT_ROUNDING_NEAREST_EVEN, .out_format = FPCERT_FORMAT_F32, .order = (text)},              \
   .order = {.kind = FPCERT_ORDER_SEQUENTIAL, .step = FPCERT_STEP_FMA}}
#define LIBM_F32 {.implementation = FPCERT_ELEM_FN_LIBM_F32}

#define FORWARD(kernel_name, description_text, flag)                                                                       \
  {.struct_size = sizeof(fpcert_kernel), .operation = FPCERT_OPERATION_ATTENTION, .name = (kernel_name),                    \
   .description = (description_text), .memory = FPCERT_MEMORY_HOST, .user_data = (flag),                                   \
   .attention = {.input = FPCERT_FORMAT_F16,                                                                               \
                 .qk = PRODUCT(FPCERT_FORMAT_F16, "S_j = fma(q_c, k_jc, S_j) in fp32 from +0, c ascending"),               \
                 .pv = PRODUCT(FPCERT_FORMAT_F16, "O~_c = fma(RN_f16(e_j), v_jc, O~_c) in fp32 from +0, j ascending, "      \
                                                  "O~ and l rescaled when a key block raises the running max"),             \
                 .shift = FPCERT_SOFTMAX_ONLINE, .key_block = KEY_BLOCK, .exp_form = FPCERT_ATTENTION_EXP_NATURAL,           \
                 .writes_lse = 1, .exp = LIBM_F32, .log = LIBM_F32, .sum_format = FPCERT_FORMAT_F32,                        \
                 .normalize = FPCERT_ATTENTION_NORMALIZE_DIVIDE, .out_format = FPCERT_FORMAT_F16,                           \
                 .masked_rows = FPCERT_MASKED_ROWS_ZERO, .masked_lse = FPCERT_ATTENTION_MASKED_LSE_POS_INF,                 \
                 .masks = FPCERT_ATTENTION_MASKS_ALL, .grouped_heads = 1},                                                  \
   .attention_run = attention_run}

#define BACKWARD(kernel_name, description_text, flag)                                                                      \
  {.struct_size = sizeof(fpcert_kernel), .operation = FPCERT_OPERATION_ATTENTION_BWD, .name = (kernel_name),                \
   .description = (description_text), .memory = FPCERT_MEMORY_HOST, .user_data = (flag),                                  \
   .attention_bwd = {.input = FPCERT_FORMAT_F16,                                                                           \
                     .qk = PRODUCT(FPCERT_FORMAT_F16, "S_ij = fma(q_ic, k_jc, S_ij) in fp32 from +0, c ascending"),        \
                     .dov = PRODUCT(FPCERT_FORMAT_F16, "dP_ij = fma(dO_ic, v_jc, dP_ij) in fp32 from +0, c ascending"),    \
                     .pdo = PRODUCT(FPCERT_FORMAT_F32, "dV_j = fma(P_ij, dO_i, dV_j) in fp32 from +0, the group's query "  \
                                                       "heads ascending, then queries ascending"),                           \
                     .dsk = PRODUCT(FPCERT_FORMAT_F32, "dQ_i = fma(dS_ij, k_j, dQ_i) in fp32 from +0, j ascending"),       \
                     .dsq = PRODUCT(FPCERT_FORMAT_F32, "dK_j = fma(dS_ij, q_i, dK_j) in fp32 from +0, the group's query "  \
                                                       "heads ascending, then queries ascending"),                           \
                     .exp_form = FPCERT_ATTENTION_EXP_NATURAL, .reads_saved = 1, .exp = LIBM_F32,                           \
                     .d_acc = FPCERT_FORMAT_F32, .compute_format = FPCERT_FORMAT_F32, .dq_determinism = FPCERT_DETERMINISTIC,\
                     .dq_acc = FPCERT_FORMAT_F32, .dq_out = FPCERT_FORMAT_F16, .dk_out = FPCERT_FORMAT_F16,                 \
                     .dv_out = FPCERT_FORMAT_F16, .masked_lse = FPCERT_ATTENTION_MASKED_LSE_POS_INF,                        \
                     .masks = FPCERT_ATTENTION_MASKS_ALL, .grouped_heads = 1},                                              \
   .attention_bwd_run = attention_bwd_run}

/* user_data: NULL for the correct kernels; the twins point at this (any non-NULL value selects the fault). */
static int twin;

static const fpcert_kernel kKernels[] = {
    FORWARD("example_attention_f16_online", "online-softmax attention, f16 storage, fp32 arithmetic (key blocks of 32)", NULL),
    BACKWARD("example_attention_bwd_f16", "attention backward from the saved O and LSE, f16 storage, fp32 arithmetic", NULL),
#ifdef EXAMPLE_ATTENTION_BUGGY
    FORWARD("example_attention_f16_norescale", "BUGGY: the running max grows, O~ and l keep their old scale", &twin),
    BACKWARD("example_attention_bwd_f16_nod", "BUGGY: dS = P dP (D never subtracted)", &twin),
#endif
};

static const fpcert_plugin_info kInfo = {
    FPCERT_PLUGIN_INFO_HEADER, "example-attention", "1.0", (uint32_t)(sizeof(kKernels) / sizeof(kKernels[0])), 0, kKernels,
};

FPCERT_PLUGIN_EXPORT const fpcert_plugin_info* fpcert_plugin_enumerate(uint32_t host_abi_major, uint32_t host_abi_minor, char* message,
                                                                       size_t message_capacity) {
  (void)host_abi_major, (void)host_abi_minor, (void)message, (void)message_capacity;
  return &kInfo;
}
