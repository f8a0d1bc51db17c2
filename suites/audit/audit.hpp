// suites/audit/audit.hpp — `fpcert audit` (docs/audit.md): a GEMM test's acceptance rule as people write it
// (allclose, max-abs, relative Frobenius), audited on its own inputs for false alarms (static: a tolerance below
// half an ulp, a relative rule near zero; sampled: the correct arithmetic of the declaration in several orders,
// over seeds) and for power (fpcert's GEMM fault injectors plus zeros and constant: which pass the rule, which
// fpcert's certify verdict refuses on the same case).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/kernel.hpp"
#include "results/audit.hpp"

namespace fpcert {

/// A test's acceptance rule. got: the kernel's output; ref: the test's reference (the exact product of the stored
/// inputs, as an fp64 reference GEMM approximates it).
///   allclose  |got - ref| <= atol + rtol |ref| for every element (torch.allclose / numpy.allclose, equal_nan off)
///   maxabs    max |got - ref| <= tol
///   relfro    ||got - ref||_F <= tol ||ref||_F
///   fpcert    |got - ref| <= allowed_ij, fpcert's envelope for the declared formats in any order
///             (suites/verdict/envelope.hpp): the sound rule audit compares the others with
struct AuditRule {
  enum class Kind { Allclose, MaxAbs, RelFro, Fpcert } kind = Kind::Allclose;
  double rtol = 1e-5, atol = 1e-8;  ///< allclose (numpy.allclose's defaults when a key is missing)
  double tol = 0;                   ///< maxabs, relfro
  std::string spec;                 ///< as given
  std::string text() const;         ///< in words, with its formula
};
/// `allclose:rtol=1e-2,atol=1e-2`, `maxabs:tol=0.1`, `relfro:tol=1e-3`, `fpcert`. Throws InputError.
AuditRule parse_audit_rule(const std::string& spec);

/// The rule on one output. For allclose and maxabs tol_ij = atol + rtol |ref_ij| (maxabs: tol); for fpcert,
/// allowed_ij (`allowed` must then hold it); relfro is one normwise figure. ratio = error / tolerance (the
/// largest element's for elementwise rules); failing = elements (or 1 for relfro) beyond it; a non-finite output
/// where the reference is finite fails with ratio +inf.
struct RuleOutcome {
  bool pass = true;
  std::int64_t failing = 0;
  double ratio = 0;
  std::int64_t worst = -1;  ///< the element of the largest ratio (elementwise rules)
};
RuleOutcome apply_rule(const AuditRule& r, const std::vector<double>& got, const std::vector<double>& ref,
                       const std::vector<double>& allowed = {});
/// The rule's tolerance on element x (allclose, maxabs, fpcert); +inf for relfro (not elementwise).
double rule_tolerance(const AuditRule& r, double ref, double allowed);

struct AuditOptions {
  std::string kernel;         ///< a registered host kernel (fpcert kernels), or empty with traits
  std::string traits;         ///< a traits spec (suites/verdict/tolerance.hpp, parse_traits_spec) when no kernel
  std::int64_t m = 64, n = 64, k = 64;
  std::string inputs = "uniform";  ///< a generator spec; m, n, k and seed are set by the audit
  std::vector<std::uint64_t> seeds = {1, 2, 3, 4, 5};
  AuditRule rule;
  bool mutants = true;        ///< run the power table
  std::string command;        ///< the command line, for the cases' repro
};

/// The whole audit. Throws InputError for a bad kernel, spec or rule.
AuditRecord run_audit(const AuditOptions& o);

}  // namespace fpcert
