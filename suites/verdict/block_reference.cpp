// suites/verdict/block_reference.cpp — the exact reference of a block-scaled GEMM (suites/verdict/block_reference.hpp).
#include "suites/verdict/block_reference.hpp"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "kernels/block/block_scaled.hpp"

namespace fpcert {

BlockReference block_reference(const KernelTraits& t, const Problem& p) {
  if (!t.block.active()) throw std::invalid_argument("block_reference: the kernel declares no block scaling");
  auto as_input = [&](const Matrix& m, const Format& in) {
    std::vector<double> v(m.data.size());
    const Rounder rr{t.input_rounding, default_saturation(in), NanPayload::Preserve};
    for (std::size_t x = 0; x < v.size(); ++x) v[x] = to_double(in, round_double(in, m.data[x], rr).code);
    return v;
  };
  const std::vector<double> a = as_input(p.a, *t.a_input), b = as_input(p.b, *t.b_input);
  const BlockOperands q = quantize_operands(t, a.data(), b.data(), p.m, p.n, p.k);
  BlockReference r;
  r.a = Matrix(p.m, p.k);
  r.b = Matrix(p.k, p.n);
  r.a.data = dequantize_tensor(q.a);
  r.a_tensor_scale = q.a.tensor_scale;
  r.b_tensor_scale = q.b.tensor_scale;
  r.b.data = dequantize_tensor(q.b);
  for (const BlockTensor* bt : {&q.a, &q.b})
    for (const BlockSummary& s : bt->blocks) {
      r.inexact += s.inexact;
      r.saturated += s.saturated;
      r.flushed += s.flushed;
      r.nonfinite_blocks += s.nonfinite;
      ++r.blocks;
    }
  r.elements = static_cast<std::int64_t>(a.size() + b.size());
  auto operand_exact = [](const BlockTensor& bt, const Format& op) {
    const Rounder rn = Rounder::nearest(op);
    for (std::int64_t i = 0; i < bt.rows; ++i)
      for (std::int64_t j = 0; j < bt.cols; ++j) {
        const double v = element_value(*bt.format, bt.codes[static_cast<std::size_t>(i * bt.cols + j)]) * scale_value(*bt.format, bt.scale_of(i, j));
        if (std::isfinite(v) && to_double(op, round_double(op, v, rn).code) != v) return false;
      }
    return true;
  };
  r.a_operand_exact = operand_exact(q.a, *t.a_operand);
  r.b_operand_exact = operand_exact(q.b, *t.b_operand);
  r.ref = gemm_reference(r.a.view(), r.b.view());
  return r;
}

std::string BlockReference::flag(const KernelTraits& t) const {
  const std::string fmtname = fmt::format("{} ({} scales)", t.block.format->tag, to_string(t.block.rule));
  if (inexact == 0)
    return fmt::format("inputs-do-not-force-rounding: every input is exactly representable in {} blocks, so the kernel's "
                       "quantizer is not exercised; the gate covers its arithmetic on the quantized operands only",
                       fmtname);
  return fmt::format("block-scaled: graded against the exact product of A and B as quantized to {}: {} of {} inputs rounded, "
                     "{} saturated, {} flushed to zero, {} of {} blocks NaN/Inf",
                     fmtname, inexact, elements, saturated, flushed, nonfinite_blocks, blocks);
}

}  // namespace fpcert
