// tests/plugins/fault_plugin.cpp — purpose-built bad plugins, one library per fault (compiled with
// -DFPCERT_FAULT=<kind>). Each exports one GEMM kernel "fault_<kind>": honest fp16-storage fp32-FMA
// GEMM (the order of examples/plugin/cpu) on every shape except K = 1024, where it commits its fault.
// The quick suite has K = 256, 1024, 1024, 256, 512: two cases meet the fault, and the cases after
// them must still run and pass (that is what isolation and the status translation protect).
#include <fpcert/plugin.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <thread>

#define FAULT_THROW 1          // a C++ exception escapes run()
#define FAULT_SEGV 2           // writes through a null pointer
#define FAULT_HANG 3           // never returns
#define FAULT_OOB 4            // writes one row past the end of C (into fpcert's guard bytes)
#define FAULT_NAN 5            // writes a NaN where the reference is finite
#define FAULT_NOT_SUPPORTED 6  // can_implement: NOT_SUPPORTED at K = 1024; run: NOT_SUPPORTED at K = 512
#define FAULT_STATUS 7         // run returns DEVICE_ERROR with a message
#define FAULT_ABI_MAJOR 8      // the table claims another ABI major
#define FAULT_ENUM_NULL 9      // fpcert_plugin_enumerate returns NULL with a message
#define FAULT_BAD_TRAITS 10    // a table that fails validation (unknown format, missing order)
#define FAULT_MISSING_DEP 11   // links a library that is not on the loader's path

#ifndef FPCERT_FAULT
#error "compile with -DFPCERT_FAULT=<kind>"
#endif
#ifndef FPCERT_FAULT_NAME
#error "compile with -DFPCERT_FAULT_NAME=\"fault_<kind>\""
#endif

#if FPCERT_FAULT == FAULT_MISSING_DEP
extern "C" int fpcert_test_missing_dep_value(void);  // defined in missing_dep.c, a library not on the path
#endif

namespace {

constexpr std::int64_t kFaultK = 1024;

float f16_to_f32(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h >> 15) << 31;
  const std::uint32_t e = (h >> 10) & 0x1f, m = h & 0x3ff;
  if (e == 0) {
    const float v = std::ldexp(static_cast<float>(m), -24);  // zero or subnormal, exact
    return sign ? -v : v;
  }
  const std::uint32_t bits = e == 0x1f ? (sign | 0x7f800000u | (m << 13)) : (sign | ((e + 112u) << 23) | (m << 13));
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

std::int64_t at(fpcert_layout l, std::int64_t i, std::int64_t j, std::int64_t ld) {
  return l == FPCERT_LAYOUT_ROW_MAJOR ? i * ld + j : j * ld + i;
}

void honest_gemm(const fpcert_gemm_args* a) {
  const auto* A = static_cast<const std::uint16_t*>(a->a);
  const auto* B = static_cast<const std::uint16_t*>(a->b);
  auto* C = static_cast<float*>(a->c);
  for (std::int64_t i = 0; i < a->shape.m; ++i)
    for (std::int64_t j = 0; j < a->shape.n; ++j) {
      float acc = 0.0f;
      for (std::int64_t k = 0; k < a->shape.k; ++k)
        acc = std::fma(f16_to_f32(A[at(a->shape.a_layout, i, k, a->lda)]), f16_to_f32(B[at(a->shape.b_layout, k, j, a->ldb)]), acc);
      C[i * a->ldc + j] = acc;
    }
}

volatile std::uintptr_t g_null_address = 0;  // volatile: the compiler cannot prove the write faults

fpcert_status can_implement(void*, const fpcert_gemm_shape* s, char* msg, size_t cap) {
#if FPCERT_FAULT == FAULT_NOT_SUPPORTED
  if (s->k == kFaultK) {
    fpcert_plugin_set_message(msg, cap, "fault_not_supported: K = 1024 is not implemented (can_implement)");
    return FPCERT_STATUS_NOT_SUPPORTED;
  }
#else
  (void)s, (void)msg, (void)cap;
#endif
  return FPCERT_STATUS_OK;
}

fpcert_status run(void*, const fpcert_gemm_args* a, void*, size_t, void*, char* msg, size_t cap) {
  const bool fault = a->shape.k == kFaultK;
  (void)fault, (void)msg, (void)cap;
#if FPCERT_FAULT == FAULT_THROW
  if (fault) throw std::runtime_error("fault_throw: simulated C++ exception at K = 1024");
#elif FPCERT_FAULT == FAULT_SEGV
  if (fault) *reinterpret_cast<volatile int*>(g_null_address) = 1;
#elif FPCERT_FAULT == FAULT_HANG
  if (fault)
    for (;;) std::this_thread::sleep_for(std::chrono::milliseconds(100));
#elif FPCERT_FAULT == FAULT_NOT_SUPPORTED
  if (a->shape.k == 512) {
    fpcert_plugin_set_message(msg, cap, "fault_not_supported: K = 512 found unsupported at run time");
    return FPCERT_STATUS_NOT_SUPPORTED;
  }
#elif FPCERT_FAULT == FAULT_STATUS
  if (fault) {
    fpcert_plugin_set_message(msg, cap, "fault_status: simulated device failure at K = 1024");
    return FPCERT_STATUS_DEVICE_ERROR;
  }
#elif FPCERT_FAULT == FAULT_MISSING_DEP
  if (fpcert_test_missing_dep_value() != 42) return FPCERT_STATUS_INTERNAL;
#endif
  honest_gemm(a);
#if FPCERT_FAULT == FAULT_OOB
  if (fault) static_cast<float*>(a->c)[a->shape.m * a->ldc] = 1.0f;  // row m: one past the last row of C
#elif FPCERT_FAULT == FAULT_NAN
  if (fault) {
    const std::uint32_t qnan = 0x7fc00000u;
    std::memcpy(static_cast<float*>(a->c) + 3 * a->ldc + 5, &qnan, sizeof qnan);  // C[3][5] = NaN
  }
#endif
  return FPCERT_STATUS_OK;
}

fpcert_kernel make_kernel() {
  fpcert_kernel k{};
  k.struct_size = sizeof(fpcert_kernel);
  k.operation = FPCERT_OPERATION_GEMM;
  k.name = FPCERT_FAULT_NAME;
  k.description = "test plugin: honest except at K = 1024";
  k.memory = FPCERT_MEMORY_HOST;
  k.gemm.a_input = k.gemm.b_input = k.gemm.a_operand = k.gemm.b_operand = FPCERT_FORMAT_F16;
  k.gemm.input_rounding = FPCERT_ROUNDING_NEAREST_EVEN;
  k.gemm.exact_products = 1;
  k.gemm.acc_format = FPCERT_FORMAT_F32;
  k.gemm.acc_rounding = FPCERT_ROUNDING_NEAREST_EVEN;
  k.gemm.out_format = FPCERT_FORMAT_F32;
  k.gemm.order = "C[i][j] = fma(a[i][k], b[k][j], C) for k = 0..K-1 in fp32, from +0; exact products";
#if FPCERT_FAULT == FAULT_BAD_TRAITS
  k.gemm.acc_format = 99;       // unknown format value
  k.gemm.order = nullptr;       // missing operation order
  k.gemm.promote_every = 128;   // promotion without a promote_format
#endif
  k.gemm_can_implement = can_implement;
  k.gemm_run = run;
  return k;
}

const fpcert_kernel kKernel = make_kernel();
const fpcert_plugin_info kInfo = {
#if FPCERT_FAULT == FAULT_ABI_MAJOR
    FPCERT_PLUGIN_ABI_MAJOR + 1, 0, 9999, 9999,  // a future layout: only the first two fields are read
#else
    FPCERT_PLUGIN_INFO_HEADER,
#endif
    "fpcert-test-" FPCERT_FAULT_NAME, "0", 1, 0, &kKernel};

}  // namespace

extern "C" FPCERT_PLUGIN_EXPORT const fpcert_plugin_info* fpcert_plugin_enumerate(std::uint32_t, std::uint32_t, char* msg,
                                                                                  size_t cap) {
#if FPCERT_FAULT == FAULT_ENUM_NULL
  fpcert_plugin_set_message(msg, cap, "fault_enum_null: this plugin refuses to load (simulated missing driver)");
  return nullptr;
#else
  (void)msg, (void)cap;
  return &kInfo;
#endif
}
