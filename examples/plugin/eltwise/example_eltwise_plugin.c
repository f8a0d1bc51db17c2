/* examples/plugin/eltwise/example_eltwise_plugin.c — elementwise math kernels for fpcert (plugin ABI minor 11), plain C99
 * against <fpcert/plugin.h> (docs/plugin.md, "Elementwise kernels"; docs/elementwise.md, "From a plugin"):
 *   example_expf_f32        glibc's expf, claiming what glibc documents (0.502 ulp of e^x: within 1 code of the correctly
 *                           rounded result)
 *   example_expf_f16        expf on f16 inputs, rounded once to f16: within 1 ulp (one rounding after a result within 1
 *                           f32 code moves at most to the neighbouring f16 code)
 *   example_sqrtf_f16       sqrtf on f16 inputs, rounded once to f16: correctly rounded (double rounding is innocuous for
 *                           sqrt when 24 >= 2 * 11 + 2: Figueroa, SIGNUM 1995)
 *   example_gelu_tanh_f32   GELU's tanh form in double as x / (1 + exp(-2z)), rounded once to float: within 1 ulp
 *   example_powf_f32        glibc's powf (binary), claiming 1 ulp (glibc documents 0.82 ulp: e_powf.c)
 * Compiled with -DEXAMPLE_ELTWISE_BUGGY (fpcert's own tests do) it also lists example_expf_fast_f32, a fast exp (2^(x log2 e)
 * with a cubic for the fraction) declared at 1 ulp: fpcert must refuse it, naming an input.
 *
 *   fpcert certify --plugin ./libexample_eltwise_plugin.so --kernel example_expf_f32,example_expf_f16 --suite elementwise
 */
#include <fpcert/plugin.h>
#include <math.h>
#include <string.h>

/* ---- f16 codes <-> float (IEEE binary16, round to nearest even) --------------------------------------------------- */
static float f16_to_float(uint16_t h) {
  const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  float v;
  if (e == 0) v = ldexpf((float)m, -24);                          /* zero, subnormal: m 2^-24 */
  else if (e == 31) v = m ? NAN : INFINITY;                       /* NaN (payload dropped), Inf */
  else v = ldexpf((float)(1024 + m), e - 25);                     /* (1 + m/1024) 2^(e - 15) */
  return (h & 0x8000) ? -v : v;
}
static uint16_t float_to_f16(float f) {
  uint32_t b;
  memcpy(&b, &f, 4);
  const uint16_t sign = (uint16_t)((b >> 16) & 0x8000);
  const uint32_t a = b & 0x7fffffffu;
  if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00 | ((a >> 13) & 0x3ff)); /* NaN: quiet, top payload bits */
  if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00); /* >= 65520 = (65504 + 65536) / 2, a tie to even: Inf */
  if (a < 0x38800000u) {                                    /* below 2^-14: a subnormal or zero f16 */
    float v;
    memcpy(&v, &a, 4);
    return (uint16_t)(sign | (uint16_t)nearbyintf(v * 0x1p24f)); /* v 2^24 is exact; the default mode rounds to even */
  }
  {
    uint32_t r = a - 0x38000000u;                   /* exponent rebiased 127 -> 15 */
    r += 0xfffu + ((r >> 13) & 1u);                 /* round the 13 dropped bits to nearest even (a carry is right) */
    return (uint16_t)(sign | (r >> 13));
  }
}

/* ---- the kernels --------------------------------------------------------------------------------------------------- */
static float load_f32(const void* p, int64_t i) {
  float v;
  memcpy(&v, (const unsigned char*)p + 4 * i, 4);
  return v;
}
static void store_f32(void* p, int64_t i, float v) { memcpy((unsigned char*)p + 4 * i, &v, 4); }
static uint16_t load_u16(const void* p, int64_t i) {
  uint16_t v;
  memcpy(&v, (const unsigned char*)p + 2 * i, 2);
  return v;
}
static void store_u16(void* p, int64_t i, uint16_t v) { memcpy((unsigned char*)p + 2 * i, &v, 2); }

/* Every unary kernel here is one function of float applied to each element: user_data says which, and whether the codes
 * are f16 (converted to float, the float result rounded once to f16) or f32. */
struct unary_fn {
  float (*f)(float);
  int f16;
};
static fpcert_status unary_run(void* user_data, const fpcert_eltwise_args* a, void* stream, char* message, size_t capacity) {
  const struct unary_fn* u = (const struct unary_fn*)user_data;
  int64_t i;
  (void)stream, (void)message, (void)capacity;
  for (i = 0; i < a->count; ++i) {
    if (u->f16) store_u16(a->y, i, float_to_f16(u->f(f16_to_float(load_u16(a->x, i)))));
    else store_f32(a->y, i, u->f(load_f32(a->x, i)));
  }
  return FPCERT_STATUS_OK;
}

/* GELU(x) = x (1 + tanh(z)) / 2 = x / (1 + e^(-2z)), z = sqrt(2/pi) (x + 0.044715 x^3), in double. The second form has no
 * cancellation (1 + tanh z for z << 0 has). Error: z within 6 2^-53 relative (x (1 + 0.044715 x^2) adds like signs), so
 * e^(-2z) within |2z| 6 2^-53 + 2^-52 <= 2^-40 relative for |2z| <= 710 (beyond, e^(-2z) is 0 or Inf, and the exact
 * result is x or below 2^-300 |x|: both round as the double does); 1 + E and the division add 2^-52. A double within
 * 2^-40 relative of GELU(x), rounded to float, is within 0.5 + 2^-16 ulp of it: the correctly rounded float or its
 * neighbour, within 1 ulp. */
static float gelu_tanh(float xf) {
  const double x = xf, c = 0.79788456080286535588; /* sqrt(2 / pi) */
  if (isinf(xf)) return xf > 0 ? xf : -0.0f;     /* the limits: x, and -0 from below */
  return (float)(x / (1.0 + exp(-2.0 * c * (x + 0.044715 * x * x * x))));
}

static fpcert_status powf_run(void* user_data, const fpcert_eltwise_args* a, void* stream, char* message, size_t capacity) {
  int64_t i;
  (void)user_data, (void)stream;
  if (!a->x2) {
    fpcert_plugin_set_message(message, capacity, "powf: x2 is NULL (a binary function)");
    return FPCERT_STATUS_INVALID_ARGUMENT;
  }
  for (i = 0; i < a->count; ++i) store_f32(a->y, i, powf(load_f32(a->x, i), load_f32(a->x2, i)));
  return FPCERT_STATUS_OK;
}

#ifdef EXAMPLE_ELTWISE_BUGGY
/* e^x = 2^(x log2 e) = 2^n 2^f, n = floor, f in [0, 1): 2^f by a cubic (relative error about 1e-4, thousands of ulps). */
static float expf_fast(float x) {
  const float t = x * 1.44269504f;
  float n, f, p;
  if (!(t > -126.0f)) return t != t ? t : 0.0f; /* NaN stays NaN; tiny results flushed */
  if (t >= 128.0f) return INFINITY;
  n = floorf(t);
  f = t - n;
  p = 1.0f + f * (0.6958f + f * (0.2251f + f * 0.0791f));
  return ldexpf(p, (int)n);
}
#endif

/* A kernel of host memory (a unary one: u says which function). */
static fpcert_kernel host_kernel(const char* name, const char* description, fpcert_eltwise_fn fn, fpcert_format format,
                           fpcert_eltwise_claim_kind claim, double ulps, const char* source, const struct unary_fn* u) {
  fpcert_kernel k;
  memset(&k, 0, sizeof k); /* every field not stated is 0, as the ABI requires */
  k.struct_size = sizeof(fpcert_kernel);
  k.operation = FPCERT_OPERATION_ELEMENTWISE;
  k.name = name;
  k.description = description;
  k.memory = FPCERT_MEMORY_HOST;
  k.eltwise.fn = fn;
  k.eltwise.in = format;
  k.eltwise.out = format;
  k.eltwise.claim = claim;
  k.eltwise.ulps = ulps;
  k.eltwise.claim_source = source;
  k.user_data = (void*)u;
  k.eltwise_run = unary_run;
  return k;
}

static float expf_(float x) { return expf(x); }
static float sqrtf_(float x) { return sqrtf(x); }
static const struct unary_fn k_expf = {expf_, 0}, k_expf_f16 = {expf_, 1}, k_sqrtf_f16 = {sqrtf_, 1}, k_gelu = {gelu_tanh, 0};
#ifdef EXAMPLE_ELTWISE_BUGGY
static const struct unary_fn k_expf_fast = {expf_fast, 0};
#endif

#define KERNEL_MAX 8
static fpcert_kernel g_kernels[KERNEL_MAX];
static fpcert_plugin_info g_info;

FPCERT_PLUGIN_EXPORT const fpcert_plugin_info* fpcert_plugin_enumerate(uint32_t host_abi_major, uint32_t host_abi_minor, char* message,
                                                                       size_t message_capacity) {
  uint32_t n = 0;
  (void)host_abi_minor;
  if (host_abi_major != FPCERT_PLUGIN_ABI_MAJOR) {
    fpcert_plugin_set_message(message, message_capacity, "built for another fpcert plugin ABI major");
    return NULL;
  }
  g_kernels[n++] = host_kernel("example_expf_f32", "glibc's expf", FPCERT_ELTWISE_EXP, FPCERT_FORMAT_F32, FPCERT_ELTWISE_ULP, 1,
                         "glibc >= 2.28: expf within 0.502 ulp of e^x (e_expf.c), so within 1 code", &k_expf);
  g_kernels[n++] = host_kernel("example_expf_f16", "expf on f16 inputs, rounded once to f16", FPCERT_ELTWISE_EXP, FPCERT_FORMAT_F16,
                         FPCERT_ELTWISE_ULP, 1, "expf (within 1 f32 code) then one rounding: <= 1 ulp", &k_expf_f16);
  g_kernels[n++] = host_kernel("example_sqrtf_f16", "sqrtf on f16 inputs, rounded once to f16", FPCERT_ELTWISE_SQRT, FPCERT_FORMAT_F16,
                         FPCERT_ELTWISE_CORRECTLY_ROUNDED, 0, "IEEE sqrtf then one rounding: innocuous (24 >= 2 * 11 + 2)", &k_sqrtf_f16);
  g_kernels[n++] = host_kernel("example_gelu_tanh_f32", "GELU (tanh form) as x / (1 + exp(-2z)) in double, rounded once to float",
                         FPCERT_ELTWISE_GELU_TANH, FPCERT_FORMAT_F32, FPCERT_ELTWISE_ULP, 1,
                         "derived: within 2^-40 relative before the one rounding (example_eltwise_plugin.c)", &k_gelu);
  g_kernels[n] = host_kernel("example_powf_f32", "glibc's powf(x, x2)", FPCERT_ELTWISE_POW, FPCERT_FORMAT_F32, FPCERT_ELTWISE_ULP, 1,
                       "glibc >= 2.28: powf within 0.82 ulp (e_powf.c), so within 1 code", NULL);
  g_kernels[n++].eltwise_run = powf_run; /* binary: its own run */
#ifdef EXAMPLE_ELTWISE_BUGGY
  g_kernels[n++] = host_kernel("example_expf_fast_f32", "a fast exp: 2^(x log2 e) with a cubic for the fraction (claims 1 ulp: wrong)",
                         FPCERT_ELTWISE_EXP, FPCERT_FORMAT_F32, FPCERT_ELTWISE_ULP, 1, "a claim copied from glibc (wrong)", &k_expf_fast);
#endif
  g_info.abi_major = FPCERT_PLUGIN_ABI_MAJOR;
  g_info.abi_minor = FPCERT_PLUGIN_ABI_MINOR;
  g_info.struct_size = sizeof(fpcert_plugin_info);
  g_info.kernel_struct_size = sizeof(fpcert_kernel);
  g_info.plugin_name = "example-eltwise";
  g_info.plugin_version = "1.0";
  g_info.kernel_count = n;
  g_info.kernels = g_kernels;
  return &g_info;
}
