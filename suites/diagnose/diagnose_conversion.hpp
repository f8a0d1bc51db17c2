// suites/diagnose/diagnose_conversion.hpp — the diagnosis of a conversion kernel's output (docs/diagnose.md,
// "Conversions"): hypotheses "the declared conversion with one change" (rounding mode, saturation, NaN convention,
// flushed results (FTZ) or inputs (DAZ)), each computed by fpcert's rounding core (oracle/round.hpp) on the case's
// source codes, compared with the kernel's results bit for bit and ranked, in the GEMM diagnosis's record.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kernels/kernel.hpp"
#include "results/diagnosis.hpp"

namespace fpcert {

/// One conversion case as the kernel saw it: its source codes and the results it wrote (codes of the destination).
struct ConversionDiagnoseCase {
  std::string label;
  std::vector<std::uint64_t> codes;
  std::vector<std::uint64_t> got;
};

/// Diagnose `c` against the declared conversion. Every hypothesis is evaluated on every source code; "declared" when
/// the declaration reproduces every result (or a hypothesis equal to it on every code does), "consistent" when a changed
/// conversion does, "logic_error" otherwise, with the first source codes no hypothesis explains (DiagnosisElement: i is
/// the position in the case, j the source code, got the kernel's value, ref the source value, best the top hypothesis's).
/// `top`: hypotheses kept in the record; `unexplained`: elements listed.
DiagnosisRecord diagnose_conversion(const std::string& kernel, const ConversionTraits& declared, const ConversionDiagnoseCase& c,
                                    int top = 8, int unexplained = 5);

/// The source codes a case names for a source format: "all" (every code; a source of more than 24 bits: the strided
/// sample), "sample" (the strided sample of a 32-bit source, every code otherwise), or "FIRST+COUNT" (codes FIRST ...
/// FIRST + COUNT - 1, decimal or 0x hex). Throws InputError for anything else, or codes outside the format.
std::vector<std::pair<std::uint64_t, std::uint64_t>> conversion_diagnose_ranges(const Format& src, const std::string& c);

/// Run a host conversion kernel on the case's codes and diagnose its results against its own declaration; besides the
/// cases above, "classes": a representative of every class of a 32-bit source's codes and a random sample
/// (suites/ops/conversion/fault_classes.hpp; InputError where the class argument does not hold). Throws
/// InputError for a kernel whose buffers live on a device (not diagnosed yet) or one that declines the codes.
DiagnosisRecord diagnose_conversion_kernel(ConversionKernel& k, const std::string& c, int top = 8);

/// One conversion fault (suites/ops/conversion/conversion_faults.hpp) injected into a host conversion kernel: killed by
/// the conversions suite's case (the runner's check against fpcert's model and MPFR: failed; a 32-bit source: on the
/// classes the fault touches), identified by the diagnosis on every code (a 32-bit source: on `classes`): its top
/// hypothesis, or a look-alike of it, is the fault's own, "consistent".
struct ConversionFaultRow {
  std::string kernel, fault, named, top;
  bool killed = false, identified = false;
  bool dormant = false;  ///< the fault changes no result on these codes (the diagnosis: "declared"): not counted
};
/// Every applicable conversion fault injected into each kernel, checked and diagnosed (docs/diagnose.md, "Conversion faults").
std::vector<ConversionFaultRow> measure_conversion_faults(const std::vector<std::string>& kernels);

}  // namespace fpcert
