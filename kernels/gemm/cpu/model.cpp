// kernels/gemm/cpu/model.cpp — decoding operands and writing results for every CPU model, in any layout (a model
// takes those its traits declare: KernelTraits::layouts).
#include "kernels/gemm/cpu/model.hpp"

#include "base/codes.hpp"

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
  const DecodedOperands d = decode(ops, traits_);
  const std::vector<std::uint64_t> c = compute(d);
  const int cb = container_bytes(*traits_.out);
  const bool row = ops.c_layout == Layout::RowMajor;
  for (std::int64_t i = 0; i < ops.m; ++i)
    for (std::int64_t j = 0; j < ops.n; ++j)
      store_code(ops.c, row ? i * ops.ldc + j : j * ops.ldc + i, cb, to_container(*traits_.out, c[static_cast<std::size_t>(i * ops.n + j)]));
}

}  // namespace fpcert
