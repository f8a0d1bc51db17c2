// suites/verdict/emulate/emulate_declared.cpp — what the bitwise tier can emulate (emulation_unavailable) and the operands a
// kernel's multiplier sees (operand_values): suites/verdict/emulate/emulate.hpp.
#include "suites/verdict/emulate/emulate.hpp"

#include <fmt/format.h>

#include "kernels/emu/bf16_on_fp16.hpp"
#include "kernels/emu/split.hpp"
#include "kernels/tc/cards.hpp"
#include "suites/verdict/emulate/emulate_round.hpp"

namespace fpcert {

using namespace emulate_detail;

namespace {

/// Every finite value of f is a float (so fp32 arithmetic on its values is exact input handling).
bool fits_f32(const Format& f) {
  return f.precision() <= 24 && f.emax() <= 127 && f.min_subnormal() >= f32.min_subnormal();
}
/// Products of two values of these formats are exact in double (at most 53 significant bits, and far
/// from double's range: both formats fit fp32's range).
bool exact_double_products(const Format& a, const Format& b) {
  return a.precision() + b.precision() <= 53 && fits_f32(a) && fits_f32(b);
}

}  // namespace

bool narrower_format(const Format& f, const Format& wide) {
  return f.precision() < wide.precision() || f.max_finite() < wide.max_finite() || f.min_subnormal() > wide.min_subnormal();
}

std::vector<double> operand_values(const std::vector<double>& inputs, const Format& input, const Format& operand, Rounding r) {
  if (!narrower_format(operand, input)) return inputs;
  return round_values(inputs, operand, r);
}

std::string emulation_unavailable(const KernelTraits& t) {
  const SummationOrder& o = t.sum_order;
  if (const std::string why = check_order(o); !why.empty()) return "the declared order is malformed: " + why;
  if (t.determinism == Determinism::RunToRun)
    return "the kernel declares run-to-run nondeterminism: no fixed order to emulate (every run is judged by the envelope)";
  if (o.outer == Combine::Atomic) return "an atomic combine has no fixed order (its partials arrive in any order)";
  if (o.kind == OrderKind::Unknown) return "the kernel declares no summation order";
  if (t.acc_rounding == Rounding::Stochastic) return "stochastic accumulation: the random bits are the kernel's";
  const bool tc = tc::on_tensor_cores(o);
  if (tc && !o.block_model.measured)
    return "tensor-core block whose model is not measured (" + o.block_model.source + "): judged by the envelope";
  if (o.kind == OrderKind::TensorCoreBlock && o.block_model.params) {
    // The card's model composed with the kernel's K-loop (docs/tensor_cores.md, "Certifying tensor-core kernels").
    const FusedDotParams& p = *o.block_model.params;
    if (!(*t.a_operand == p.a) || !(*t.b_operand == p.b))
      return fmt::format("the card's instruction takes {}/{}, the kernel's operands are {}/{}", p.a.tag, p.b.tag, t.a_operand->tag, t.b_operand->tag);
    if (!t.exact_products) return "a tensor-core kernel declaring rounded products";
    if (t.promote_every > 0 && (!t.promote_format || t.promote_every % o.block != 0))
      return fmt::format("promotion every {} products is not a whole number of instructions of k = {}", t.promote_every, o.block);
    return {};
  }
  if (o.kind == OrderKind::SplitProducts) {
    if (!(*t.a_input == f32) || !(*t.b_input == f32) || !(*t.acc == f32) || !(*t.out == f32))
      return "split products are defined for fp32 inputs, accumulator and output";
    const SplitScheme* sc = find_split_scheme(o.split_scheme);
    if (!sc) return "no split scheme '" + o.split_scheme + "'";
    if (o.term_order == OrderKind::TensorCoreBlock && !o.block_model.params)
      return "split products on tensor cores take their block model from the instruction's behaviour card (insn=ID, model=card)";
    if (o.block_model.params) {  // on tensor cores: the card's model composed with the slice terms' K-loop
      const FusedDotParams& p = *o.block_model.params;
      if (!(p.a == *sc->slice) || !(p.b == *sc->slice))
        return fmt::format("the card's instruction takes {}/{}, the scheme's slices are {}", p.a.tag, p.b.tag, sc->slice->tag);
      if (!(p.acc == f32)) return fmt::format("the card's accumulator is {}, split products accumulate in fp32", p.acc.tag);
      if (o.block <= 0) return "split products on tensor cores without the instruction's k";
    }
    return {};
  }
  if (o.kind == OrderKind::Pow2Scaled) {
    if (o.term_order == OrderKind::TensorCoreBlock) {  // the fp16 MMA's card composed with the scaled K-loops
      if (!o.block_model.params)
        return "power-of-two scaled operands on tensor cores take their block model from the fp16 MMA's behaviour card (insn=ID, model=card)";
      const FusedDotParams& p = *o.block_model.params;
      if (!(p.a == f16) || !(p.b == f16) || !(p.acc == f32))
        return fmt::format("the card's instruction takes {}/{} into {}, the scaled operands are fp16 into fp32", p.a.tag, p.b.tag, p.acc.tag);
      if (o.block <= 0) return "power-of-two scaling on tensor cores without the instruction's k";
      const int pad = o.block_model.pad > 0 ? o.block_model.pad : o.block;
      if (pad % o.block != 0 || 64 % pad != 0)  // segments are K-blocks of 64 or 128 (kernels/emu/bf16_on_fp16.hpp)
        return fmt::format("K padded to {} does not fit the K-blocks' alignment", pad);
    } else if (o.term_order != OrderKind::Sequential) {
      return "power-of-two scaled operands: the term order is sequential or tensor_core";
    }
    // (On tensor cores the declared accumulator rounding is the envelope's model of the MMA; the card replaces it.)
    const bool rn_acc = o.term_order == OrderKind::TensorCoreBlock || t.acc_rounding == Rounding::NearestEven;
    if (!(*t.a_input == bf16) || !(*t.b_input == bf16) || !(*t.acc == f32) || !(*t.out == f32) || !rn_acc || !t.exact_products)
      return "power-of-two scaling onto fp16 is defined for bf16 inputs, exact products, fp32 accumulation to nearest and fp32 output";
    return {};
  }

  if (o.kind == OrderKind::Ozaki2) {  // emulated by the scheme's host arithmetic (kernels/gemm/cpu/ozaki2.hpp)
    if (!(*t.a_input == f64) || !(*t.b_input == f64) || !(*t.a_operand == f64) || !(*t.b_operand == f64) || !(*t.out == f64))
      return "ozaki2 is defined for fp64 inputs, operands and output";
    return {};
  }
  if (t.operand_u > 0) return "split operands (operand_u) without a split_products order";
  // fp64 operands into an fp64 accumulator to nearest: the host's binary64 arithmetic is the step (fma, or the
  // product rounded into fp64 and added), whatever the operands' width (docs/fp64.md).
  const bool native_f64 = *t.a_operand == f64 && *t.b_operand == f64 && *t.acc == f64 && t.acc_rounding == Rounding::NearestEven &&
                          (t.exact_products || *t.product_format == f64) && t.promote_every == 0 &&
                          !(o.kind == OrderKind::BlockedK && o.inner == Combine::Exact) && !tc::on_tensor_cores(o);
  if (!native_f64 && !exact_double_products(*t.a_operand, *t.b_operand))
    return fmt::format("operands {}/{} too wide for the exact step (products must be exact in fp64)", t.a_operand->tag, t.b_operand->tag);
  if (!fits_f32(*t.acc) && !(*t.acc == f64)) return fmt::format("accumulator {} outside fp32's range", t.acc->tag);
  if (!t.exact_products && !t.product_format) return "rounded products without a product format";
  if (t.promote_every > 0) {
    if (!t.promote_format) return "promotion without a format";
    if (o.kind != OrderKind::Sequential && !(o.kind == OrderKind::BlockedK && o.block == t.promote_every))
      return fmt::format("promotion every {} products with a {} order (promotion is blocked-with-a-wider-outer: declare "
                         "sequential, or blocked with block = {})",
                         t.promote_every, to_string(o.kind), t.promote_every);
  }
  return {};
}

}  // namespace fpcert
