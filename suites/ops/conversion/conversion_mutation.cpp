// suites/ops/conversion/conversion_mutation.cpp — the mutation score of a conversion kernel (docs/mutation.md,
// "Conversion kernels"): every fault of conversion_faults.hpp that can change a kernel with its declaration is injected
// around the (host) kernel and the conversions suite's case is run on the mutant; the case compares every result bit
// for bit with fpcert's model and MPFR, so a mutant that changes any result it sweeps is killed.
#include <fmt/format.h>

#include <chrono>

#include "base/error.hpp"
#include "kernels/device/device_api.hpp"
#include "suites/mutation/mutation.hpp"
#include "suites/ops/conversion/conversion_faults.hpp"
#include "suites/ops/conversion/conversion_operation.hpp"
#include "suites/ops/conversion/convert_runner.hpp"

namespace fpcert {

namespace {

/// The fault's class as the GEMM catalogue names them: a rounding rule is arithmetic, what is written is output.
const char* conversion_fault_class(ConversionFault f) {
  return f == ConversionFault::TowardZero || f == ConversionFault::TiesAway ? "arithmetic" : "output";
}

}  // namespace

MutationScore ConversionOperation::mutate(const SuiteInfo& suite, const std::string& kernel, const MutationOptions& opt) const {
  if (!opt.faults.empty())
    throw InputError("--fault names faults of GEMM and row kernels; a conversion kernel is given every conversion fault (cvt_*: "
                     "fpcert mutate --list)");
  const auto probe = make_conversion_kernel(kernel);
  if (!probe) throw InputError("unknown conversion kernel '" + kernel + "' (fpcert kernels lists them)");
  if (probe->memory() != MemorySpace::Host)
    throw InputError(fmt::format("'{}' converts in device memory: the conversion faults are injected around host kernels (the "
                                 "device sweep compares on the GPU; docs/mutation.md, \"Conversion kernels\")",
                                 kernel));
  const auto t0 = std::chrono::steady_clock::now();
  const std::unique_ptr<DeviceApi> host = make_host_api();
  MutationScore s;
  s.kernel = kernel;
  s.suite = suite.name;
  s.cases = 1;
  const ConversionCase c = conversion_suite_case(*probe, opt.run);
  const CaseResult honest = run_conversion_case(*probe, c, *host, ConversionRunOptions{});
  if (opt.on_honest_case) opt.on_honest_case(honest);
  if (honest.status != CaseStatus::Pass)
    s.invalid_cases.push_back(fmt::format("{}: {}: {}", honest.case_id, to_string(honest.status), honest.reason));
  for (const ConversionFaultInfo& f : conversion_fault_catalogue()) {
    MutantResult m;
    m.mutant = kernel + "~" + f.id;
    m.fault = f.id;
    m.fault_class = conversion_fault_class(f.fault);
    m.what = f.what;
    m.expected = {CheckKind::Bitwise};  // the conversion check: every result bit for bit against the model and MPFR
    if (std::string why = conversion_fault_not_applicable(f.fault, probe->conversion()); !why.empty()) {
      m.outcome = MutantOutcome::NotApplicable;
      m.detail = std::move(why);
      s.mutants.push_back(std::move(m));
      continue;
    }
    const auto m0 = std::chrono::steady_clock::now();
    if (opt.on_progress) opt.on_progress(m.mutant);
    if (honest.status != CaseStatus::Pass) {  // no mutant is judged on a case the kernel itself fails
      m.outcome = MutantOutcome::Survived;
      m.detail = "not judged: the unmutated kernel does not pass the case";
    } else {
      const auto mutant = make_conversion_fault_injector(make_conversion_kernel(kernel), f.fault);
      const CaseResult r = run_conversion_case(*mutant, c, *host, ConversionRunOptions{});
      m.cases_run = 1;
      if (r.status == CaseStatus::Fail) {
        m.outcome = MutantOutcome::Killed;
        m.case_id = r.case_id;
        m.fired = {CheckKind::Bitwise};
        m.detail = r.reason;
      } else if (r.status == CaseStatus::Pass && c.ranges.empty()) {
        // The case swept every source code and the mutant converted each one as the kernel does: no input can show the
        // fault in this kernel (e.g. no result is subnormal, so FTZ changes nothing).
        m.outcome = MutantOutcome::NotApplicable;
        m.detail = fmt::format("the fault changes no result of this kernel: every one of the {} source codes swept converts as before",
                               probe->conversion().src->tag);
      } else {
        m.outcome = MutantOutcome::Survived;
        m.detail = r.status == CaseStatus::Pass
                       ? std::string("dormant: the fault changed no result among the sampled codes the case sweeps (a suite needs a "
                                     "source code whose conversion it changes)")
                       : fmt::format("{}: {}", to_string(r.status), r.reason);
      }
      m.repro = fmt::format("fpcert mutate --suite conversions --kernel {}", kernel);  // the only command that makes the mutant
    }
    m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - m0).count();
    s.mutants.push_back(std::move(m));
  }
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return s;
}

}  // namespace fpcert
