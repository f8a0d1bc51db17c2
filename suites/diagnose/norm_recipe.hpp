// suites/diagnose/norm_recipe.hpp — a LayerNorm / RMSNorm computed bit for bit from a recipe: the numeric hypotheses of a
// norm diagnosis beyond the fault catalogue (docs/diagnose.md, "Reductions, softmax and normalisation"). A norm's
// declaration (NormArith) fixes the formats and error claims but not every operation: the row sums' order, a division by
// n or a product by fl(1/n), rsqrt as one correctly rounded value or as 1 / sqrt (two roundings), and whether the
// compiler fused a product into the addition after it (nvcc's default, -fmad=true). A recipe fixes each of them; the
// built-in CPU models (kernels/norm/cpu/norm_models.cpp) are recipes too (norm_model_recipe), which is what makes every
// change below a change of one thing. The row sums are the oracle's order emulation (oracle/reduce/reduce_order.hpp:
// emulate_sum, and emulate_dot for the squares, exact products where fused), written once there.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kernels/norm/norm_kernel.hpp"
#include "oracle/reduce/reduce_order.hpp"

namespace fpcert {

struct NormRecipe {
  NormKind kind = NormKind::LayerNorm;
  NormVariance variance = NormVariance::TwoPass;
  int parts = 32;                                ///< WelfordCombined: parts j = l, l + P, ..., combined by a butterfly
  ReduceOrder sums = ReduceOrder::sequential();  ///< two-pass, one-pass and RMS row sums (Welford runs its own recurrence)
  bool divide_by_reciprocal = false;             ///< mean = s * fl(1/n), var = q * fl(1/n) instead of s / n, q / n
  bool rsqrt_sqrt_div = false;                   ///< rs = RN(1 / RN(sqrt(t))) instead of fl32(1 / sqrt(t)) taken in double
  bool contract = false;                         ///< FMA: each square fused into its sum, the affine y * g + b fused
};

/// "two_pass, sums sequential, divide, rsqrt fl32(1/sqrt) in double, no FMA".
std::string describe(const NormRecipe& r);

/// The recipe of a built-in CPU model declaring `t` (sequential sums, division by n, rsqrt in double, no contraction).
NormRecipe norm_model_recipe(const NormTraits& t);

/// A CPU kernel computing recipe `r` (fp32 arithmetic, the result rounded once into t's output format), declaring `t`.
std::unique_ptr<NormKernel> make_norm_recipe_kernel(std::string name, NormTraits t, NormRecipe r);

/// One change of the declared model's recipe, with the traits it declares (the envelope judged on the kernel's output).
struct NormRecipeChange {
  std::string id, what;
  NormRecipe recipe;
  NormTraits traits;
  bool member = false;  ///< a member of the declared family (an order, where the declaration says "any order")
};

/// The single changes worth testing against a kernel declaring `declared` (a built-in model's traits): another variance
/// algorithm (LayerNorm: two_pass, welford, welford over 32 parts; one-pass is the fault norm_one_pass_variance), row sums
/// in a warp's order (32 strided lanes, xor butterfly), products by fl(1/n), rsqrt as 1 / sqrt, FMA contraction.
std::vector<NormRecipeChange> norm_recipe_changes(const NormTraits& declared);

}  // namespace fpcert
