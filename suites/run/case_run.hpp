// suites/run/case_run.hpp — what every operation's case runner shares: the run options (warm-ups, timed runs,
// the watchdog's limit, guard bytes, the strongest tier), the pre-fill pattern of outputs, and the mapping of a
// kernel's failure (not supported, crashed, hung, threw) onto the case's verdict. The operations' runners:
// suites/ops/gemm/runner.hpp, suites/ops/conversion/convert_runner.hpp, suites/ops/reduce/reduce_runner.hpp.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "oracle/format.hpp"
#include "results/results.hpp"

namespace fpcert {

class OrderSource;  // suites/reveal/revealed_order.hpp
class Kernel;       // kernels/kernel.hpp
struct KernelTraits;
class DeviceApi;    // kernels/device/device_api.hpp
struct Problem;     // generators/problem.hpp

struct RunOptions {
  int warmups = -1;            ///< -1: 0 on the host, 3 on a device
  int timed = -1;              ///< -1: 1 on the host (plus the checked run: two runs), 10 on a device
  double timeout_ms = 120000;  ///< a launch that does not finish by then is a hang
  int ldc_pad = 8;             ///< extra columns of C, filled with guard bytes that must survive
  std::size_t guard_bytes = 4096;
  int worst_count = 5;
  /// Grade cases whose inputs lie outside the kernel's InputDomain as well (studies of what a restricted
  /// fast path does beyond its domain); by default they are "not supported" with the reason.
  bool grade_outside_domain = false;
  /// The strongest verdict tier to use (docs/bound_model.md, "Tiers"): Bitwise = what the kernel's
  /// declarations allow; EnvelopeStatistical or Envelope to study the weaker tiers (--tier).
  Tier strongest = Tier::Bitwise;
  /// Keep the error map of passing cases too (failing cases always carry one; certify --error-maps).
  bool error_maps = false;
  /// When set, receives the checked run's output decoded to double (row-major m x n; empty when the
  /// kernel did not run), for experiments that grade by a published method of their own.
  std::vector<double>* output = nullptr;
  /// Orders from outside the kernels' declarations (certify --order revealed / FILE), revealed per shape and
  /// kept for the run (suites/reveal/revealed_order.hpp); null: every kernel's declared order.
  std::shared_ptr<OrderSource> orders;
};

/// The NaN pattern outputs are pre-filled with (distinct payload, so "never written" can be told
/// apart from "wrote a NaN"); formats without NaN get their largest finite value.
std::uint64_t prefill_code(const Format& out);

/// Run fn(), which calls a kernel; a failure becomes r's status and reason, by its type: NotSupportedError
/// → not supported, DeviceError → its FailureKind (crashed or hung), any other exception → error ("kernel
/// threw: ..."). An InputError is the user's and passes through. Returns whether fn() completed.
bool run_kernel_guarded(CaseResult& r, const std::function<void()>& fn);

/// Why kernel k cannot run through api ("this kernel needs a CUDA device", "host kernel given a device API"), or "".
std::string memory_mismatch(const Kernel& k, const DeviceApi& api);

/// A row operation's case record before anything ran (reduction, softmax, norm, attention): the case's names, the
/// kernel's name, description of its traits and backend, the problem's spec, achieved measures and source format, the
/// output format. Each runner adds its shape (m, n, k) and its operation's fields.
CaseResult case_skeleton(const Kernel& k, std::string traits, const std::string& suite, const std::string& case_id,
                         const std::string& family, const Problem& p, const std::string& repro, const Format& out);

/// The codes in `in` of every value in `values` (round to nearest); false when one is not a value of `in` (the bounds
/// take the inputs as given: the attention runners, forward and backward, refuse such a case as not supported).
bool exact_codes(const std::vector<double>& values, const Format& in, std::vector<std::uint64_t>& codes);

/// Why a GEMM problem's inputs, rounded into the kernel's input formats as the runner stores them, lie outside its
/// InputDomain (kernels/kernel.hpp; empty: inside). With `span` given, a line (or group) spanning more binades than the
/// domain allows is written there (the first one) instead of deciding, and the finite and range rules still decide
/// (InputDomain::span_scheme_graded: such a case is graded by the scheme's own claims).
std::string outside_domain(const KernelTraits& t, const Problem& p, std::string* span = nullptr);

}  // namespace fpcert
