// suites/ops/conversion/conversion_suite.hpp — the `conversions` suite: one case per conversion kernel, each kernel
// swept over its source codes by the runner (suites/ops/conversion/convert_runner.hpp). Its kernels, when none are
// named: every entry of the device conversion table that this build has a kernel for, when a CUDA
// device is present; fpcert's conversion model for each of the table's conversions otherwise.
#pragma once

#include <string>
#include <vector>

#include "kernels/kernel.hpp"
#include "suites/ops/conversion/convert_runner.hpp"
#include "suites/run/suite.hpp"

namespace fpcert {

/// The suite's default kernels (see above); `include_test` adds the device table's deliberately
/// wrong test entries. `where` says which set and why.
std::vector<std::string> conversion_suite_kernels(bool include_test, std::string* where = nullptr);

/// The case of one kernel: every source code, except that fp32-sized sources of fpcert's model (and of
/// any kernel with `sample`) sweep the strided sample (suites/ops/conversion/device_sweep.hpp) with MPFR on a sample.
ConversionCase conversion_suite_case(const ConversionKernel& k, const SuiteRunOptions& opt);

/// The conversions suite's plan (docs/scale.md): one item per kernel, in run order, each costed by the
/// source codes its case sweeps (plus a constant per case).
std::vector<PlanItem> plan_conversion_suite(const SuiteInfo& suite, const std::vector<std::string>& kernels, const SuiteRunOptions& opt);

/// Why the mutation score of conversion kernel `kernel` is not measured (empty: it is): a kernel converting in device
/// memory (the faults wrap host kernels; docs/mutation.md, "Conversion kernels"), an unknown name.
std::string conversion_mutation_not_measured(const std::string& kernel);

/// Run the conversions suite on the named conversion kernels (isolated per opt.isolate; only the
/// kernels opt.select accepts, when set).
RunResult run_conversion_suite(const SuiteInfo& suite, const std::vector<std::string>& kernels, const SuiteRunOptions& opt);

}  // namespace fpcert
