// suites/ops/conversion/convert_runner.hpp — one conversion case through the runner: a conversion kernel swept over
// source codes, every result checked against fpcert's model and MPFR (oracle/convert/convert_check.hpp), the
// verdict and the record (results/conversion.hpp) made here and only here.
//
// Kernels the runner feeds (the CPU model, plugin conversion kernels) get their source codes in a
// buffer and write into a GuardedBuffer (guards before and after, pre-filled with the guard pattern:
// a NaN pattern would compare equal to a NaN result under the default NaN rule and hide an unwritten
// output); each chunk is synchronised under the watchdog, guards are checked, the first chunk is run
// twice and compared bit for bit. The device table's kernels make their source codes on the device
// and stream results through their producer (kernels/convert/device_convert.hpp): the runner sweeps
// them with the pipelined device sweep (suites/ops/conversion/device_sweep.hpp), which also checks both lanes of x2
// forms, stray container bits and the entry's NaN statement. Either way a crash or a hang becomes the
// case's status through its FailureKind, "not supported" through NotSupportedError.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "kernels/device/device_api.hpp"
#include "kernels/kernel.hpp"
#include "results/results.hpp"
#include "suites/run/check_options.hpp"

namespace fpcert {

struct ConversionCase {
  std::string suite;      ///< the suite's name ("" for a single check)
  std::string case_id;    ///< the kernel's name in the conversions suite
  std::string subject;    ///< what the record calls the kernel ("fpcert fast path", "plugin kernel X (LIB)", the call)
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;  ///< (first, count) of source codes; empty: every code
  int mpfr_every = -1;                ///< MPFR on every pattern: 1 yes, 0 no (disagreements and a sample), -1 up to 2^24 patterns
  ConversionCheckOptions check;
  std::string command;                ///< for the record
  std::string repro;                  ///< the command that reruns this case
  /// A device table kernel's injected fault (docs/mutation.md, "Device conversion kernels"): applied on the host to each
  /// chunk of results before the check (device_sweep.hpp, SweepOptions::fault). Empty: none.
  std::function<void(std::uint64_t first, std::uint64_t count, std::uint8_t* results, int bytes)> device_fault;
};

struct ConversionRunOptions {
  double timeout_ms = 600000;                 ///< a chunk that does not finish by then is a hang
  std::uint64_t chunk = std::uint64_t{1} << 20;  ///< codes per call of a runner-fed kernel
  std::size_t guard_bytes = 256;
  std::function<void(double)> progress;       ///< fraction done
};

/// Run and judge one conversion case: status, reason and `conversion` (the record) of the result.
/// `api` must match the kernel's memory space (host or device); the device table's kernels use
/// their producer and ignore it. Never throws for kernel failures: they become the case's status.
CaseResult run_conversion_case(ConversionKernel& kernel, const ConversionCase& c, DeviceApi& api, const ConversionRunOptions& o);

/// A conversion case's result before it ran: names, formats, and the record's header fields.
CaseResult conversion_skeleton(const ConversionKernel& kernel, const ConversionCase& c);

/// After a case that did not run to a verdict (not supported, crashed, hung, error, also in a child
/// process): its record gets status, reason and passed = false.
void settle_conversion_record(CaseResult& r);

/// The source codes a case covers, in order.
std::uint64_t conversion_case_patterns(const ConversionKernel& kernel, const ConversionCase& c);

}  // namespace fpcert
