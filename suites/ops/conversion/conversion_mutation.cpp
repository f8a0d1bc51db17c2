// suites/ops/conversion/conversion_mutation.cpp — the mutation score of a conversion kernel (docs/mutation.md,
// "Conversion kernels"): every fault of conversion_faults.hpp that can change a kernel with its declaration is injected
// around the (host) kernel and the conversions suite's case is run on the mutant; the case compares every result bit
// for bit with fpcert's model and MPFR, so a mutant that changes any result it sweeps is killed.
#include <fmt/format.h>

#include <chrono>

#include "base/codes.hpp"
#include "base/error.hpp"
#include "kernels/convert/device_convert.hpp"
#include "kernels/device/device_api.hpp"
#include "suites/mutation/mutation.hpp"
#include "suites/ops/conversion/conversion_faults.hpp"
#include "suites/ops/conversion/conversion_operation.hpp"
#include "suites/ops/conversion/convert_runner.hpp"
#include "suites/ops/conversion/fault_classes.hpp"

namespace fpcert {

namespace {

/// The fault's class as the GEMM catalogue names them: a rounding rule is arithmetic, what is written is output.
const char* conversion_fault_class(ConversionFault f) {
  return f == ConversionFault::TowardZero || f == ConversionFault::TiesAway ? "arithmetic" : "output";
}

/// Why `fpcert mutate` cannot inject the conversion faults into kernel k (empty: it can): a device kernel other than the
/// device table's conversions (a plugin's: its results are not the sweep's to edit).
std::string conversion_mutation_refused(const ConversionKernel& k) {
  if (const auto* table = dynamic_cast<const DeviceTableKernel*>(&k))
    return table->entry().kind == ConversionKind::Convert ? "" : "a scaled round trip of the device table: the conversion faults are faults of one conversion";
  if (k.memory() == MemorySpace::Host) return "";
  return "it converts in device memory and is not one of the device table's conversions: the faults are injected around "
         "host kernels and into the device table's sweep (docs/mutation.md, \"Device conversion kernels\")";
}

}  // namespace

std::string conversion_mutation_not_measured(const std::string& kernel) {
  const auto k = make_conversion_kernel(kernel);
  if (!k) return "unknown conversion kernel '" + kernel + "'";
  if (std::string why = conversion_mutation_refused(*k); !why.empty()) return why;
  if (dynamic_cast<const DeviceTableKernel*>(k.get()))
    return fmt::format("a device kernel: its mutants are swept on the GPU by fpcert mutate --suite conversions --kernel {} "
                       "(certify measures host kernels; docs/mutation.md, \"Device conversion kernels\")",
                       kernel);
  return "";
}

MutationScore ConversionOperation::mutate(const SuiteInfo& suite, const std::string& kernel, const MutationOptions& opt) const {
  if (!opt.faults.empty())
    throw InputError("--fault names faults of GEMM and row kernels; a conversion kernel is given every conversion fault (cvt_*: "
                     "fpcert mutate --list)");
  const auto probe = make_conversion_kernel(kernel);
  if (!probe) throw InputError("unknown conversion kernel '" + kernel + "' (fpcert kernels lists them)");
  if (const std::string why = conversion_mutation_refused(*probe); !why.empty()) throw InputError(fmt::format("'{}': {}", kernel, why));
  const bool device = dynamic_cast<const DeviceTableKernel*>(probe.get()) != nullptr;  // the device table's: its own sweep
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
      // A host kernel: wrapped by the injector. A device table kernel: the same fault applied on the host to its results
      // as they come back from the GPU, before the check (ConversionCase::device_fault).
      const auto mutant = device ? make_conversion_kernel(kernel) : make_conversion_fault_injector(make_conversion_kernel(kernel), f.fault);
      // A sampled source (32 bits): the classes of source codes the fault can touch, each swept, and a random sample
      // (fault_classes.hpp). "Not applicable" only from them, never from a sample.
      ConversionCase fc = c;
      ConversionClassCodes classes;
      const bool by_class = !c.ranges.empty() && conversion_classes_problem(probe->conversion()).empty();
      if (by_class) {
        classes = conversion_fault_class_codes(f.fault, probe->conversion());
        fc.ranges = classes.ranges;
        fc.mpfr_every = 0;  // fpcert's model on every code, MPFR on every difference and a sample (as the suite's sampled case)
      }
      if (device)
        fc.device_fault = conversion_device_fault(f.fault, probe->conversion());
      const CaseResult r = run_conversion_case(*mutant, fc, *host, ConversionRunOptions{});
      m.cases_run = 1;
      // The classes decide the fault for fpcert's model (its results follow the classes: tests/suites/fault_classes_test.cpp)
      // and for a fault the changed rounder makes (it differs from the declared conversion on whole classes); a fault on a
      // black box's results (FTZ, the zero's sign, the quiet bit) is decided only where the box was swept.
      const bool classes_decide = by_class && (probe->backend() == Backend::Cpu || !conversion_fault_on_results(f.fault));
      if (r.status == CaseStatus::Fail) {
        m.outcome = MutantOutcome::Killed;
        m.case_id = r.case_id;
        m.fired = {CheckKind::Bitwise};
        m.detail = r.reason;
      } else if (r.status == CaseStatus::Pass && classes_decide) {
        m.outcome = MutantOutcome::NotApplicable;
        m.detail = fmt::format("the fault changes no result of this kernel: it touches only {} ({} codes, each swept, and {} random codes; "
                               "every other {} code converts as its class's representative: docs/mutation.md, \"Sources of 32 bits\")",
                               classes.classes, classes.class_codes, classes.sample_codes, probe->conversion().src->tag);
      } else if (r.status == CaseStatus::Pass && c.ranges.empty()) {
        // The case swept every source code and the mutant converted each one as the kernel does: no input can show the
        // fault in this kernel (e.g. no result is subnormal, so FTZ changes nothing).
        m.outcome = MutantOutcome::NotApplicable;
        m.detail = fmt::format("the fault changes no result of this kernel: every one of the {} source codes swept converts as before",
                               probe->conversion().src->tag);
      } else {
        m.outcome = MutantOutcome::Survived;
        m.detail = r.status == CaseStatus::Pass
                       ? (by_class ? fmt::format("dormant on the classes it touches ({}): this kernel is a black box beyond the {} codes swept",
                                                 classes.classes, classes.class_codes + classes.sample_codes)
                                   : std::string("dormant: the fault changed no result among the sampled codes the case sweeps (a suite needs a "
                                                 "source code whose conversion it changes)"))
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
