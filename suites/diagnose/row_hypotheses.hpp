// suites/diagnose/row_hypotheses.hpp — the hypotheses of a reduction, softmax or LayerNorm/RMSNorm diagnosis
// (docs/diagnose.md, "Reductions, softmax and normalisation"): the declared CPU model of the operation (the kernel's
// base: K for K~fault, the CPU twin of a CUDA kernel), that model with each fault of the operation's catalogue injected
// by the operation's own fault injectors (suites/ops/{reduce,softmax,norm}/*_faults.hpp), and the numeric variants the
// oracle emulates bit for bit (oracle/reduce/reduce_order.hpp, oracle/softmax/softmax_emulate.hpp): another accumulator
// (f16, bf16, f32), another summation order or tree, rounded products, an exp made of operations (expf_ops) for libm's,
// a row sum in f16/bf16 or another order, a reciprocal for the division; for a norm, its model's recipe with one change
// (suites/diagnose/norm_recipe.hpp: variance algorithm, warp-order sums, fl(1/n), 1 / sqrt, FMA contraction). Each hypothesis is a registered kernel run
// through the operation's own case runner; a variant also re-declares the kernel under test (its traits changed, its
// results its own) so that the variant's envelope is judged on the kernel's output.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kernels/kernel.hpp"
#include "suites/mutation/faults.hpp"

namespace fpcert {

/// Reduction, Softmax or Norm for a registered kernel of those operations (a mutant K~fault of one is registered on first
/// use); nullopt otherwise.
std::optional<Operation> row_operation(const std::string& kernel);

/// The kernel the hypotheses are made from: a CPU model (model_*) itself; any other kernel's (CUDA, plugin, a CPU kernel
/// that is not a model) CPU twin: the first built-in CPU model whose traits read the same, else the first that does once
/// the kernel's exp / log / rsqrt error claims are put in its place (a near twin); else the kernel itself, whose own run
/// is then `declared`; for a mutant `K~fault`, K's base (`note` says which and why).
std::string row_base_kernel(const std::string& kernel, std::string* note = nullptr);

struct RowHypothesisSpec {
  std::string id, what;        ///< "declared", "fault=red_acc_f16", "acc=bf16", "order=pairwise", "exp=expf_ops"
  int changes = 1;
  bool tighter = false;        ///< more precise than the declaration (acc=f32 for an f16 accumulator), or a member of its family (an order where none is fixed)
  std::optional<Fault> fault;  ///< the catalogue's fault it is
  std::string kernel;          ///< the registered kernel that computes it
  /// A changed arithmetic with a bound of its own: registers `kernel under test` re-declared as this arithmetic and
  /// returns its name (its envelope is then judged by the runner on the kernel's output). Empty for faults; for
  /// `declared`, the base's declaration (run only for --declared-as).
  std::function<std::string(const std::string&)> declared_as;
};

/// The hypotheses made from `base` (first "declared", the base itself), registering the mutants and variants they run
/// as; `notes` receives what could not be made and why.
std::vector<RowHypothesisSpec> row_hypothesis_specs(const std::string& base, std::vector<std::string>* notes = nullptr);

/// The faults of the operation's catalogue that apply to kernel `kernel` (the operation's not-applicable rules).
std::vector<Fault> row_applicable_faults(const std::string& kernel);

}  // namespace fpcert
