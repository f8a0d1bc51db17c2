// kernels/reduce/reduce_kernel.cpp — the reduction kernel's registry access and descriptions
// (kernels/reduce/reduce_kernel.hpp).
#include "kernels/reduce/reduce_kernel.hpp"

#include "oracle/reduce/reduce_bound.hpp"

namespace fpcert {

std::string_view to_string(ReduceAxis a) { return a == ReduceAxis::Rows ? "rows" : "cols"; }

std::unique_ptr<ReduceKernel> make_reduce_kernel(const std::string& name) {
  const KernelInfo* k = find_kernel_info(name);
  if (!k || k->operation != Operation::Reduction) return nullptr;
  return std::unique_ptr<ReduceKernel>(static_cast<ReduceKernel*>(k->make().release()));
}

std::string describe_reduce_traits(const ReduceTraits& t) {
  std::string s = std::string(to_string(t.kind));
  if (t.kind == ReduceKind::Nrm2) s += t.scaling == Nrm2Scaling::Lapack ? " (scaled, LAPACK)" : " (unscaled)";
  s += ", in " + std::string(t.x_input->tag);
  if (t.kind == ReduceKind::Dot) s += "/" + std::string(t.y_input->tag);
  s += ", acc " + std::string(t.arith.acc->tag) + " (" + std::string(to_string(t.arith.rounder.rounding)) + ")";
  if (t.kind != ReduceKind::Sum) s += t.arith.products == ProductRounding::Exact ? ", fused products" : ", rounded products";
  s += ", out " + std::string(t.out->tag) + "; order " + describe(t.order);
  if (t.determinism == Determinism::RunToRun) s += "; nondeterministic run to run";
  return s;
}

std::string reduce_traits_problem(const ReduceTraits& t) {
  if (t.determinism == Determinism::RunToRun && t.order.kind != ReduceOrderKind::Unknown)
    return "a reduction whose order changes from run to run cannot declare one fixed order (declare unknown)";
  if (t.scaling == Nrm2Scaling::Lapack && t.kind != ReduceKind::Nrm2) return "scaled (LAPACK) is an nrm2 declaration";
  if (t.order.kind != ReduceOrderKind::Unknown) {
    if (!format_holds(*t.arith.acc, *t.x_input) || (t.kind == ReduceKind::Dot && !format_holds(*t.arith.acc, *t.y_input)))
      return "a declared order is emulated on inputs the accumulator holds exactly: inputs " + std::string(t.x_input->tag) +
             " do not fit accumulator " + std::string(t.arith.acc->tag);
    if (t.arith.acc->precision() > 26) return "a declared order is emulated for accumulators of at most 26 bits of precision";
  }
  return {};
}

}  // namespace fpcert
