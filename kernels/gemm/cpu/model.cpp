// kernels/gemm/cpu/model.cpp — decoding operands and writing results for every CPU model, in any layout (a model
// takes those its traits declare: KernelTraits::layouts) and in strided batches (every model: KernelTraits::batched).
#include "kernels/gemm/cpu/model.hpp"

#include <stdexcept>

#include "base/codes.hpp"
#include "oracle/refvalue.hpp"

namespace fpcert {

DecodedOperands CpuModel::decode(const GemmOperands& ops, const KernelTraits& t) {
  DecodedOperands d;
  d.m = ops.m;
  d.n = ops.n;
  d.k = ops.k;
  d.a.resize(static_cast<std::size_t>(ops.m * ops.k));
  d.b.resize(static_cast<std::size_t>(ops.k * ops.n));
  const int ab = container_bytes(*t.a_input), bb = container_bytes(*t.b_input);
  for (std::int64_t i = 0; i < ops.m; ++i)
    for (std::int64_t p = 0; p < ops.k; ++p) {
      const std::int64_t idx = ops.a_layout == Layout::RowMajor ? i * ops.lda + p : p * ops.lda + i;
      d.a[static_cast<std::size_t>(i * ops.k + p)] = to_double(*t.a_input, from_container(*t.a_input, load_code(ops.a, idx, ab)));
    }
  for (std::int64_t p = 0; p < ops.k; ++p)
    for (std::int64_t j = 0; j < ops.n; ++j) {
      const std::int64_t idx = ops.b_layout == Layout::RowMajor ? p * ops.ldb + j : j * ops.ldb + p;
      d.b[static_cast<std::size_t>(p * ops.n + j)] = to_double(*t.b_input, from_container(*t.b_input, load_code(ops.b, idx, bb)));
    }
  return d;
}

void CpuModel::run(const GemmOperands& ops) {
  // Strided batches (KernelTraits::batched): each batch a call of its own, at its strides (0: the same A or B).
  if (ops.batch > 1) {
    for (std::int64_t b = 0; b < ops.batch; ++b) run(batch_slice(ops, b, traits_));
    return;
  }
  const DecodedOperands d = decode(ops, traits_);
  std::vector<std::uint64_t> c = compute(d);
  const int cb = container_bytes(*traits_.out);
  const bool row = ops.c_layout == Layout::RowMajor;
  // D = alpha acc + beta C (KernelTraits::alpha_beta), the declared epilogue in the accumulator format:
  // RN_acc(RN_acc(alpha acc) + RN_acc(beta c)); beta = 0: RN_acc(alpha acc), C never read. Only models whose
  // output is their accumulator declare it (the output codes are then acc itself). alpha acc and beta c are exact in
  // double (two values of at most 24 bits); the sum is exact as a two-sum, so each RN_acc is one rounding.
  if (traits_.alpha_beta && (ops.alpha != 1 || ops.beta != 0)) {
    const Format& acc = *traits_.acc;
    if (!(acc == *traits_.out)) throw std::logic_error("CpuModel: alpha/beta declared by a model whose output is not its accumulator");
    const Rounder rn = Rounder::nearest(acc);
    auto rd = [&](double v) { return to_double(acc, round_double(acc, v, rn).code); };
    for (std::int64_t i = 0; i < ops.m; ++i)
      for (std::int64_t j = 0; j < ops.n; ++j) {
        std::uint64_t& code = c[static_cast<std::size_t>(i * ops.n + j)];
        const double t1 = rd(ops.alpha * to_double(acc, code));
        if (ops.beta == 0) {
          code = round_double(acc, t1, rn).code;
          continue;
        }
        const double cv = to_double(acc, from_container(acc, load_code(ops.c_in, row ? i * ops.ldc + j : j * ops.ldc + i, cb)));
        code = round_ref(acc, ref_from_two_sum(t1, rd(ops.beta * cv)), rn).code;
      }
  }
  for (std::int64_t i = 0; i < ops.m; ++i)
    for (std::int64_t j = 0; j < ops.n; ++j)
      store_code(ops.c, row ? i * ops.ldc + j : j * ops.ldc + i, cb, to_container(*traits_.out, c[static_cast<std::size_t>(i * ops.n + j)]));
}

}  // namespace fpcert
