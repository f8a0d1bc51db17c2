// kernels/convert/device_convert.hpp — the device conversions: the table of every conversion the CUDA
// headers and PTX offer between fpcert's formats, with the fpcert semantics (oracle/round.hpp
// Rounder) each must equal, the producer that runs an entry on the GPU in chunks, and each entry as
// a conversion kernel of the registry (DeviceTableKernel). No CUDA header here: the GPU side is a
// ConversionProducer made by kernels/convert/cuda/convert_producer.cpp. The sweep that checks an
// entry's results is the runner's (suites/ops/conversion/device_sweep.hpp); docs/conversions.md is the prose.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels/device/device_api.hpp"
#include "kernels/kernel.hpp"
#include "oracle/convert/convert_check.hpp"
#include "oracle/format.hpp"
#include "oracle/round.hpp"

namespace fpcert {

/// Which NaN a conversion writes for a NaN input (docs/conversions.md, "NaN conventions of the table, and NaN
/// statements"). The entry's Rounder declares the convention the sweep enforces (nvidia or any, from these).
enum class NanRule : std::uint8_t {
  NotApplicable,  ///< the destination has one NaN code or none (ue8m0: 0xFF; e2m3/e3m2/e2m1: NaN -> +max),
                  ///< or the source has no NaN: the ordinary check covers it bit for bit
  Preserve,       ///< fpcert's NanPayload::Preserve: sign kept, payload's top bits kept, quiet bit set
  Canonical,      ///< always `code`, whatever the input's sign and payload
  ShiftPayload,   ///< a widening by a shift: sign and payload bits moved up unchanged (a signalling NaN
                  ///< stays signalling)
  Unstated,       ///< no claim: any NaN is accepted; the NaNs written are reported
};
std::string_view to_string(NanRule r);

/// What a conversion is stated to write for NaN inputs on one code path, and why we believe it.
/// `decisive`: the statement comes from code we can read (the header's software path, a bit move),
/// so a NaN input that gives anything else fails the check; otherwise it is an expectation (the
/// device instruction's NaN is not documented) that is reported. Either way the entry's declared NaN
/// convention (rounder.nan: nvidia where every path's statement names the all-ones NaN, else any) is
/// enforced on every NaN input (docs/formats.md, "NaN conventions").
struct NanStatement {
  NanRule rule = NanRule::NotApplicable;
  std::uint32_t code = 0;  ///< Canonical: the code (dst code space)
  bool decisive = false;
  std::string_view basis;
};

/// Where a conversion's rounding happens, by the __CUDA_ARCH__ of the code that runs.
enum class HwPath : std::uint8_t {
  Always,          ///< a hardware cvt on every architecture
  FromArch,        ///< a hardware cvt from hw_arch on, the header's software emulation below
  FamilySpecific,  ///< a hardware cvt only in arch-family-specific builds (sm_100f, sm_110f, sm_120f):
                   ///< never in this build (sm_90a + compute_80), so the header's software path runs
  Never,           ///< software (integer and double arithmetic in the header) everywhere
};
std::string_view to_string(HwPath p);

enum class ConversionKind : std::uint8_t {
  Convert,          ///< source code -> destination code, checked against `rounder`
  ScaledRoundTrip,  ///< bf16 -> (x * 2^s) -> fp16 -> (* 2^-s) -> bf16, every scale s (docs/conversions.md)
};

/// One device conversion: a CUDA header function or a PTX cvt, as one kernel calls it.
struct DeviceConversion {
  std::string_view name;   ///< unique, <src>_to_<dst>[_mode][_sat]: f32_to_f16_rn, f16x2_to_e4m3x2_satfinite
  std::string_view call;   ///< the call as the kernel writes it
  const Format* src = nullptr;
  const Format* dst = nullptr;
  Rounder rounder{};       ///< the fpcert semantics the device result must equal, bit for bit (NaN: its convention)
  bool pair = false;       ///< an x2 form: both lanes checked (docs/conversions.md, "Paired forms")
  int min_arch = 0;        ///< lowest __CUDA_ARCH__ the kernel exists for (0: every architecture)
  HwPath hw = HwPath::Always;
  int hw_arch = 0;         ///< FromArch: first __CUDA_ARCH__ that uses the hardware instruction
  std::string_view hw_instr;  ///< the hardware instruction, or "" when there is none
  NanStatement nan_hw;     ///< NaN written on the hardware path
  NanStatement nan_sw;     ///< NaN written on the software path
  ConversionKind kind = ConversionKind::Convert;
  bool test_only = false;  ///< deliberately wrong: exercises the checker (never in a suite)
  bool primary = true;     ///< the entry `fpcert convert --device cuda` picks for its (src, dst, rounder)
  std::string_view note;
};

/// The table (docs/conversions.md prints it). Test-only entries are last.
std::span<const DeviceConversion> device_conversions(bool include_test_only = false);
const DeviceConversion* find_device_conversion(std::string_view name);
/// Non-test entries converting src to dst, in table order.
std::vector<const DeviceConversion*> device_conversions_for(const Format& src, const Format& dst);

/// The compiled code that runs on a device: __CUDA_ARCH__ and __CUDA_ARCH_FAMILY_SPECIFIC__ (0
/// when not defined), read by a probe kernel; the device's compute capability.
struct RunningArch {
  int arch = 0;
  int family_specific = 0;
  int cc_major = 0, cc_minor = 0;
};

/// Whether an entry can run on that code (min_arch), and which path it takes there.
struct EntrySupport {
  bool ok = false;
  bool hardware = false;  ///< the hardware instruction, not the header's emulation
  std::string reason;     ///< why not, or which path
};
EntrySupport entry_support(const DeviceConversion& e, const RunningArch& a);
/// The NaN statement of the path an entry takes.
const NanStatement& nan_statement(const DeviceConversion& e, bool hardware);

// ---- producing results ----

/// Codes where the two lanes of an x2 form disagreed (lo: code in the low lane, hi: code in the
/// high lane), or results with bits set outside their format's code in the container (tf32's low
/// 13 bits, the top 2 bits of an fp6 byte, the top 4 of an fp4 byte).
struct LaneDifference {
  std::uint64_t src = 0;
  std::uint32_t lo = 0, hi = 0;
};
struct StrayBits {
  std::uint64_t src = 0;
  std::uint32_t raw = 0;
};

/// One chunk of results, readable on the host once ProducedChunk is returned.
struct ProducedChunk {
  const void* data = nullptr;  ///< results, result_bytes() each, container layout (tf32 in fp32 bits)
  std::uint64_t lane_mismatches = 0;
  std::vector<LaneDifference> lanes;  ///< the first few
  std::uint64_t stray = 0;
  std::vector<StrayBits> strays;      ///< the first few
  double gpu_ms = 0;                  ///< kernel time (events)
  double transfer_ms = 0;             ///< device-to-host copy time (events)
};

/// Produces an entry's results for ranges of source codes into host-visible buffers, in two slots
/// so that the device fills one while the host checks the other.
class ConversionProducer {
 public:
  virtual ~ConversionProducer() = default;
  virtual std::uint64_t max_chunk() const = 0;  ///< codes per chunk, a multiple of 65536
  /// Queue results for codes [first, first + n) into slot 0 or 1 (returns at once).
  virtual void enqueue(const DeviceConversion& e, std::uint64_t first, std::uint64_t n, int slot) = 0;
  /// Wait until the slot's results are on the host (DeviceError on a device fault or a hang).
  virtual ProducedChunk wait(int slot) = 0;
  virtual RunningArch running_arch() const = 0;
  virtual DeviceInfo device_info() const = 0;
  virtual std::string device_name() const = 0;
};

/// Bytes per result an entry's producer writes (the destination's container; 4 for the scaled
/// round trip: fp16 in bits 0-15, bf16 in bits 16-31).
int result_bytes(const DeviceConversion& e);
/// Source codes that are NaN, as [first, end) intervals (two for signed formats, none for finite-only).
std::vector<std::pair<std::uint64_t, std::uint64_t>> nan_code_ranges(const Format& f);
/// Source codes an entry sweeps in full (2^bits of its source; 254 * 2^16 for the scaled round trip).
std::uint64_t entry_code_count(const DeviceConversion& e);

/// The CUDA producer for device 0 (nullptr without CUDA or without a device; `why` says which).
std::unique_ptr<ConversionProducer> make_cuda_conversion_producer(std::string* why = nullptr,
                                                                   std::uint64_t max_chunk = std::uint64_t{1} << 26);
/// Whether this build has a kernel for the named entry (false without CUDA).
bool cuda_has_conversion_kernel(std::string_view name);

/// The CUDA headers' host code for an entry (kernels/convert/cuda/convert_host.cpp): the same header
/// function compiled for the CPU, where it takes the header's software emulation. Returns the
/// result for a source code (x2 forms: the low lane, paired with code ^ 1 as the kernels pair
/// them); nullptr for PTX-only and test entries, the scaled round trip, and builds without CUDA.
using HostEmulation = std::uint32_t (*)(std::uint32_t code);
HostEmulation cuda_header_host_emulation(std::string_view name);

// ---- the entries as conversion kernels ----

/// A table entry as a conversion kernel (kernels/kernel.hpp), named as the entry, backend cuda. Its
/// results come from a ConversionProducer (the process's CUDA producer, or one a test supplies) and
/// arrive in host memory; the runner sweeps it with the pipelined device sweep, which also checks
/// both lanes of x2 forms and stray container bits.
class DeviceTableKernel final : public ConversionKernel {
 public:
  explicit DeviceTableKernel(const DeviceConversion& e, ConversionProducer* producer = nullptr);
  const std::string& name() const override { return name_; }
  std::string description() const override;
  Backend backend() const override { return Backend::Cuda; }
  bool is_mutant() const override { return e_.test_only; }
  const ConversionTraits& conversion() const override { return traits_; }
  /// Results for codes [first, first + count) through the producer's slot 0, copied to ops.dst (host).
  void run(const ConvertOperands& ops) override;
  const DeviceConversion& entry() const { return e_; }
  /// The producer: the one given, else the process's CUDA producer; nullptr without a device (`why`).
  ConversionProducer* producer(std::string* why = nullptr);

 private:
  const DeviceConversion& e_;
  std::string name_;
  ConversionProducer* producer_;
  ConversionTraits traits_;
};

/// The process's CUDA producer, created on first use (nullptr without CUDA or a device; `why` says which).
ConversionProducer* shared_cuda_conversion_producer(std::string* why = nullptr);

}  // namespace fpcert
