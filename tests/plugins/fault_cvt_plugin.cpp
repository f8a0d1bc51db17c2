// tests/plugins/fault_cvt_plugin.cpp — bad conversion kernels: one that truncates while claiming
// round-to-nearest-even, one that writes past the end of its output, one that crashes.
#include <fpcert/plugin.h>

#include <cstdint>

namespace {

// fp32 -> bf16 by truncation (toward zero), while the table claims nearest-even.
fpcert_status truncates(void*, const fpcert_conversion_args* a, void*, char*, size_t) {
  const auto* s = static_cast<const std::uint32_t*>(a->src);
  auto* d = static_cast<std::uint16_t*>(a->dst);
  for (std::int64_t i = 0; i < a->count; ++i) {
    const std::uint32_t x = s[i];
    d[i] = (x & 0x7fffffffu) > 0x7f800000u ? static_cast<std::uint16_t>((x >> 16) | 0x40u) : static_cast<std::uint16_t>(x >> 16);
  }
  return FPCERT_STATUS_OK;
}

// bf16 -> fp32 exactly, then one element past the end.
fpcert_status oob(void*, const fpcert_conversion_args* a, void*, char*, size_t) {
  const auto* s = static_cast<const std::uint16_t*>(a->src);
  auto* d = static_cast<std::uint32_t*>(a->dst);
  for (std::int64_t i = 0; i < a->count; ++i) {
    std::uint32_t x = static_cast<std::uint32_t>(s[i]) << 16;
    if ((x & 0x7fffffffu) > 0x7f800000u) x |= 0x00400000u;
    d[i] = x;
  }
  d[a->count] = 0;  // the fault
  return FPCERT_STATUS_OK;
}

volatile std::uintptr_t g_null_address = 0;

fpcert_status segv(void*, const fpcert_conversion_args*, void*, char*, size_t) {
  *reinterpret_cast<volatile int*>(g_null_address) = 1;
  return FPCERT_STATUS_OK;
}

fpcert_kernel conversion(const char* name, fpcert_format src, fpcert_format dst, fpcert_conversion_run_fn fn) {
  fpcert_kernel k{};
  k.struct_size = sizeof(fpcert_kernel);
  k.operation = FPCERT_OPERATION_CONVERSION;
  k.name = name;
  k.memory = FPCERT_MEMORY_HOST;
  k.conversion.src_format = src;
  k.conversion.dst_format = dst;
  k.conversion.rounding = FPCERT_ROUNDING_NEAREST_EVEN;
  k.conversion.saturation = FPCERT_SATURATION_INF;
  k.conversion.nan_payload = FPCERT_NAN_PRESERVE;
  k.conversion_run = fn;
  return k;
}

const fpcert_kernel kKernels[] = {
    conversion("fault_cvt_truncates", FPCERT_FORMAT_F32, FPCERT_FORMAT_BF16, truncates),
    conversion("fault_cvt_oob", FPCERT_FORMAT_BF16, FPCERT_FORMAT_F32, oob),
    conversion("fault_cvt_segv", FPCERT_FORMAT_BF16, FPCERT_FORMAT_F32, segv),
};
const fpcert_plugin_info kInfo = {FPCERT_PLUGIN_INFO_HEADER, "fpcert-test-fault-cvt", "0", 3, 0, kKernels};

}  // namespace

extern "C" FPCERT_PLUGIN_EXPORT const fpcert_plugin_info* fpcert_plugin_enumerate(std::uint32_t, std::uint32_t, char*, size_t) {
  return &kInfo;
}
