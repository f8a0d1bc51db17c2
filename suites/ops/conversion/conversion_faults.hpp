// suites/ops/conversion/conversion_faults.hpp — the conversion faults kernels make in practice (docs/diagnose.md,
// "Conversion faults"): round toward zero instead of to nearest, ties away from zero, no saturation, saturating where a
// NaN (or Inf) is due, subnormal results flushed, the NaN payload lost, a signaling NaN not quieted, the sign of zero
// lost — each injected around a host conversion kernel, and the diagnosis hypothesis that names it
// (suites/diagnose/diagnose_conversion.hpp). `fpcert mutate` injects them into host conversion kernels
// (conversion_mutation.cpp; they are not in the GEMM catalogue of suites/mutation/faults.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kernels/kernel.hpp"

namespace fpcert {

enum class ConversionFault : std::uint8_t {
  TowardZero,      ///< round toward zero where to nearest is declared
  TiesAway,        ///< ties away from zero where ties to even is declared
  NoSaturation,    ///< overflow to Inf (or NaN) where satfinite is declared
  SaturatesNan,    ///< overflow to the largest finite value where Inf or NaN is declared
  FlushOutputs,    ///< subnormal results written as a zero of their sign
  NanPayloadLost,  ///< every NaN result the canonical NaN where payloads are kept
  NanNotQuieted,   ///< a NaN result's quiet bit copied from the source (a signaling NaN not quieted)
  ZeroSignLost,    ///< every zero result written as +0
};

struct ConversionFaultInfo {
  ConversionFault fault;
  const char* id;     ///< "cvt_rz"
  const char* what;   ///< in words
  const char* named;  ///< the diagnosis hypothesis that names it ("round=rz"; "sat=" + the saturation, see conversion_fault_named)
};
const std::vector<ConversionFaultInfo>& conversion_fault_catalogue();

/// Why the fault cannot change a kernel with this declaration (empty: it can): ties away for a declaration that does
/// not round to nearest-even, FTZ for a destination without subnormals, ...
std::string conversion_fault_not_applicable(ConversionFault f, const ConversionTraits& t);

/// The hypothesis id that names the fault for this declaration (the saturation it falls back to, for NoSaturation).
std::string conversion_fault_named(ConversionFault f, const ConversionTraits& t);

/// The declared rounder with fault f's change (the rounding, saturation and NaN convention faults; the others keep it).
Rounder faulty_rounder(ConversionFault f, const ConversionTraits& t);

/// What a kernel with fault f writes for source `code` where the declared conversion wrote `res` (destination codes):
/// the changed conversion's result where it differs from the declared one (changed = faulty_rounder(f, t)), the subnormal
/// flushed, the zero made +0, the quiet bit copied from the source. The injectors' one rule, host and device.
std::uint64_t faulty_result(ConversionFault f, const ConversionTraits& t, const Rounder& changed, std::uint64_t code, std::uint64_t res);

/// A fault on the kernel's results (FTZ, the zero's sign, the quiet bit); the others are a changed rounder.
bool conversion_fault_on_results(ConversionFault f);

/// The fault as a device table kernel's sweep injects it (ConversionCase::device_fault): `n` results of source codes
/// first ... (`bytes` each, container layout) rewritten by faulty_result, as they came back from the GPU.
std::function<void(std::uint64_t first, std::uint64_t n, std::uint8_t* results, int bytes)> conversion_device_fault(ConversionFault f,
                                                                                                                    const ConversionTraits& t);

/// `k` (a host conversion kernel) with the fault injected: each result the fault changes under fpcert's conversion model
/// (oracle/round.hpp) is replaced, the kernel's own result kept everywhere else; it declares k's conversion and is named
/// "<k>~<id>". Throws std::invalid_argument for a device kernel or an inapplicable fault.
std::unique_ptr<ConversionKernel> make_conversion_fault_injector(std::unique_ptr<ConversionKernel> k, ConversionFault f);

}  // namespace fpcert
