// kernels/convert/device_convert.cpp — what the table's entries mean on a device (support, path, NaN statement,
// result layout) and the entries as conversion kernels; the table itself is data: device_table.cpp.
//
// Each entry names one call as the kernel in kernels/convert/cuda/convert_*.cu writes it, the fpcert
// Rounder it must equal bit for bit, where its rounding happens (the hardware cvt or the header's
// software emulation, by architecture, as cuda_fp16.hpp, cuda_bf16.hpp, cuda_fp8.hpp, cuda_fp6.hpp
// and cuda_fp4.hpp of CUDA 13.0 select it), and the NaN it writes. docs/conversions.md is the prose.
#include "kernels/convert/device_convert.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>

#include "base/error.hpp"
#include "kernels/register.hpp"

namespace fpcert {

std::string_view to_string(NanRule r) {
  switch (r) {
    case NanRule::NotApplicable: return "not_applicable";
    case NanRule::Preserve: return "preserve";
    case NanRule::Canonical: return "canonical";
    case NanRule::ShiftPayload: return "shift_payload";
    case NanRule::Unstated: return "unstated";
  }
  return "?";
}

std::string_view to_string(HwPath p) {
  switch (p) {
    case HwPath::Always: return "always";
    case HwPath::FromArch: return "from_arch";
    case HwPath::FamilySpecific: return "family_specific";
    case HwPath::Never: return "never";
  }
  return "?";
}


EntrySupport entry_support(const DeviceConversion& e, const RunningArch& a) {
  EntrySupport s;
  if (a.arch < e.min_arch) {
    s.reason = "needs code for __CUDA_ARCH__ >= " + std::to_string(e.min_arch) + "; the code running here is for " +
               std::to_string(a.arch);
    return s;
  }
  s.ok = true;
  switch (e.hw) {
    case HwPath::Always: s.hardware = true; break;
    case HwPath::FromArch: s.hardware = a.arch >= e.hw_arch; break;
    case HwPath::FamilySpecific: s.hardware = a.family_specific >= 1000; break;
    case HwPath::Never: s.hardware = false; break;
  }
  s.reason = s.hardware ? "hardware: " + std::string(e.hw_instr) : std::string("software: the header's emulation");
  return s;
}

const NanStatement& nan_statement(const DeviceConversion& e, bool hardware) { return hardware ? e.nan_hw : e.nan_sw; }

int result_bytes(const DeviceConversion& e) {
  return e.kind == ConversionKind::ScaledRoundTrip ? 4 : container_bytes(*e.dst);
}

std::uint64_t entry_code_count(const DeviceConversion& e) {
  return e.kind == ConversionKind::ScaledRoundTrip ? std::uint64_t{254} << 16 : e.src->code_count();
}

// ---- the table's entries as conversion kernels ----

DeviceTableKernel::DeviceTableKernel(const DeviceConversion& e, ConversionProducer* producer)
    : e_(e), name_(e.name), producer_(producer), traits_{e.src, e.dst, e.rounder, 0} {}

std::string DeviceTableKernel::description() const {
  std::string d = std::string(e_.call);
  if (!e_.hw_instr.empty()) d += fmt::format(" ({}: {})", to_string(e_.hw), e_.hw_instr);
  if (e_.pair) d += ", x2 form: both lanes checked";
  if (e_.kind == ConversionKind::ScaledRoundTrip) d += ", scaled round trip bf16 -> fp16 -> bf16 over every scale";
  if (e_.test_only) d += " [test entry: deliberately wrong]";
  return d;
}

ConversionProducer* DeviceTableKernel::producer(std::string* why) {
  if (producer_) return producer_;
  return shared_cuda_conversion_producer(why);
}

void DeviceTableKernel::run(const ConvertOperands& ops) {
  std::string why;
  ConversionProducer* p = producer(&why);
  if (!p) throw NotSupportedError("no CUDA device: " + why);
  if (static_cast<std::uint64_t>(ops.count) > p->max_chunk())
    throw std::invalid_argument(fmt::format("{}: {} codes in one call, at most {}", name_, ops.count, p->max_chunk()));
  p->enqueue(e_, ops.first, static_cast<std::uint64_t>(ops.count), 0);
  const ProducedChunk pc = p->wait(0);
  std::memcpy(ops.dst, pc.data, static_cast<std::size_t>(ops.count) * static_cast<std::size_t>(result_bytes(e_)));
}

ConversionProducer* shared_cuda_conversion_producer(std::string* why) {
  static std::unique_ptr<ConversionProducer> p;
  static std::string reason;
  static bool tried = false;
  if (!tried) {
    tried = true;
    p = make_cuda_conversion_producer(&reason);
  }
  if (!p && why) *why = reason;
  return p.get();
}

void register_device_conversion_kernels() {
  for (const DeviceConversion& e : device_conversions(true)) {
    if (!cuda_has_conversion_kernel(e.name)) continue;
    const DeviceConversion* entry = &e;
    register_kernel(KernelInfo{std::string(e.name), Backend::Cuda, e.test_only,
                               [entry] { return std::make_unique<DeviceTableKernel>(*entry); }, {}, Operation::Conversion});
  }
}

#if !defined(FPCERT_HAVE_CUDA)
std::unique_ptr<ConversionProducer> make_cuda_conversion_producer(std::string* why, std::uint64_t) {
  if (why) *why = "this fpcert was built without CUDA (no nvcc at configure time, or FPCERT_CUDA=OFF)";
  return nullptr;
}
bool cuda_has_conversion_kernel(std::string_view) { return false; }
HostEmulation cuda_header_host_emulation(std::string_view) { return nullptr; }
#endif

}  // namespace fpcert
