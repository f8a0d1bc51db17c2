// suites/verdict/tolerance.hpp — the tolerance a kernel's traits imply, for a shape (normwise and per-element
// forms, with their derivation) or for actual data (each element's allowed error): what
// `fpcert tolerance` prints and what the Python entry's fpcert.tolerance returns (docs/python.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "generators/problem.hpp"
#include "kernels/kernel.hpp"
#include "oracle/gemm_ref.hpp"
#include "results/results.hpp"
#include "suites/verdict/bound.hpp"

namespace fpcert {

/// Traits from a spec string: `in=f16,acc=f32,out=f16` (keys: in | a, b; operand | a_operand,
/// b_operand; acc; acc_rounding (rn, rz, ...); products (exact or a format tag); promote_every;
/// promote; out; input_rounding; batch_invariant (0/1, docs/audit.md); alpha_beta, batched (0/1); the fused epilogue's
/// bias (row, column, or both as row|column), bias_format, activation (relu, gelu_erf, gelu_tanh, silu, '|'-joined),
/// func_rel_err (a number or 2^-e; required with GELU or SiLU), round_before_act, round_before_bias, fp8_scaling, amax (0/1)
/// (docs/python.md, "Fused epilogues"); order, last, taking the rest of the spec: an order spec of
/// kernels/order.hpp such as `order=blocked:block=32,inner=sequential,outer=sequential`). Unnamed
/// fields keep KernelTraits' defaults (f32 throughout, exact products, round-to-nearest, order
/// unknown). Throws InputError naming the bad key or value.
KernelTraits parse_traits_spec(const std::string& spec);
/// The traits of a registered kernel by name, or of a spec (anything holding '='). Throws InputError.
KernelTraits traits_by_name_or_spec(const std::string& name_or_spec);

/// The tolerance for a shape: the normwise form (the independent variant: |c - ref| <= atol + rtol |ref|,
/// atol = rtol max|ref|) and the per-element envelope tier (suites/verdict/envelope.hpp:
/// |c - ref| <= E + u_out (|ref| + E) + eta_out, E = coef (|A||B|)_ij + eta terms),
/// for inputs that may round into storage (the conservative case) or, with inputs_exact, inputs already
/// in the kernel's input formats (a torch tensor of that dtype): then only an operand format narrower
/// than the input format (tf32 operands of fp32 inputs) contributes a storage term.
struct ShapeTolerance {
  std::int64_t m = 0, n = 0, k = 0;
  Bound normwise;
  Bound element;
  std::string derivation;  ///< both bounds' terms and arithmetic, as text
};
ShapeTolerance shape_tolerance(const KernelTraits& t, std::int64_t m, std::int64_t n, std::int64_t k, bool inputs_exact = false);

/// Each element's allowed error |c - ref| under the envelope tier (row-major m x n) for inputs already
/// in the kernel's input formats (ref: their exact product), and the envelope it came from.
struct ElementTolerance {
  std::vector<double> allowed;
  Bound bound;
};
ElementTolerance element_tolerance(const KernelTraits& t, const Problem& p, const GemmRef& ref);

}  // namespace fpcert
