// suites/verdict/scheme_bound.hpp — the check of kind scheme_bound (docs/bound_model.md, "Checks"; docs/fp64.md,
// "What it claims"): a kernel that declares an emulation scheme with an error bound of its own (Ozaki-II's
// deterministic bound, kernels/gemm/cpu/ozaki2.hpp) is held to that bound on every element, against the exact product of
// the inputs it received. It is independent of the bitwise tier (which emulates the scheme with the same arithmetic
// the kernel shares) and of fp64's envelope (which the scheme meets only on lines of a limited binade span).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "kernels/kernel.hpp"
#include "oracle/gemm_ref.hpp"
#include "results/results.hpp"

namespace fpcert {

/// Whether the kernel's declared order is a scheme that claims a per-element bound of its own (OrderKind::Ozaki2).
bool claims_scheme_bound(const KernelTraits& t);

/// The scheme_bound check over a case (nullopt where the order claims no bound): every element whose output and
/// exact value are finite within the scheme's bound for the inputs the kernel received (a_in row-major m x k, b_in
/// row-major k x n; rop their exact product; got the outputs as doubles). Non-finite inputs: the check passes with
/// "not applied" (the scheme has no residues for them; the special-value checks judge those elements). The detail
/// names the worst element with the bound's terms (ozaki2::bound_terms). With `fracs`, it receives every element's
/// |c - exact| / bound (row-major m x n; NaN where not graded by it, +inf for a non-finite output of a finite exact value),
/// as evaluate_envelope gives the envelope's (suites/verdict/envelope.hpp).
std::optional<CheckResult> scheme_bound_check(const KernelTraits& t, std::int64_t m, std::int64_t n, std::int64_t k,
                                              const std::vector<double>& a_in, const std::vector<double>& b_in, const GemmRef& rop,
                                              const std::vector<double>& got, std::vector<double>* fracs = nullptr);

}  // namespace fpcert
