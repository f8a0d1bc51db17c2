// kernels/gemm/cpu/order_models.cpp — correct CPU models that sum along K in other valid orders than
// the sequential one (split-K, pairwise, blocked): a verdict must pass them too, and a fault injected
// into them must still be refused (docs/mutation.md).
//
// Conventions as in kernels/gemm/cpu/models.cpp: every sum of a chunk or block starts from +0 and
// steps k upward by one fused multiply-add (acc = RN(a*b + acc)); partials are combined starting from
// the first partial (no +0), each addition rounded once to nearest even.
#include <cmath>
#include <utility>

#include "kernels/gemm/cpu/model.hpp"
#include "kernels/register.hpp"
#include "oracle/refvalue.hpp"

namespace fpcert {
namespace {

/// fp32 FMA along k in [k0, k1) from +0, operands as floats.
float fma_run(const DecodedOperands& d, std::int64_t i, std::int64_t j, std::int64_t k0, std::int64_t k1) {
  float acc = 0.0f;
  for (std::int64_t t = k0; t < k1; ++t) acc = std::fma(static_cast<float>(d.A(i, t)), static_cast<float>(d.B(t, j)), acc);
  return acc;
}

/// Pairwise sum of v[lo, hi): the first ceil(n/2) and the rest, recursively; one rounding per addition.
template <class T, class Add>
T pairwise(const std::vector<T>& v, std::size_t lo, std::size_t hi, Add add) {
  if (hi - lo == 1) return v[lo];
  const std::size_t mid = lo + (hi - lo + 1) / 2;
  return add(pairwise(v, lo, mid, add), pairwise(v, mid, hi, add));
}

std::vector<std::uint64_t> f32_codes(const std::vector<float>& c) {
  std::vector<std::uint64_t> r(c.size());
  for (std::size_t x = 0; x < c.size(); ++x) r[x] = std::bit_cast<std::uint32_t>(c[x]);
  return r;
}

/// Split-K: K cut into `splits` contiguous chunks of ceil(K / splits) products; each summed by fp32 FMA
/// from +0; the partials added in chunk order in fp32 (as a split-K kernel's reduction kernel does).
class SplitKModel final : public CpuModel {
 public:
  SplitKModel(std::string name, std::string desc, KernelTraits t, int splits)
      : CpuModel(std::move(name), std::move(desc), std::move(t)), splits_(splits) {}
  std::vector<std::uint64_t> compute(const DecodedOperands& d) const override {
    std::vector<float> c(static_cast<std::size_t>(d.m * d.n), 0.0f);
    const std::int64_t len = (d.k + splits_ - 1) / splits_;
    for (std::int64_t i = 0; i < d.m; ++i)
      for (std::int64_t j = 0; j < d.n; ++j) {
        float sum = 0.0f;
        for (std::int64_t s = 0; s < splits_; ++s) {
          const std::int64_t k0 = std::min(d.k, s * len), k1 = std::min(d.k, k0 + len);
          const float part = fma_run(d, i, j, k0, k1);
          sum = s == 0 ? part : sum + part;
        }
        c[static_cast<std::size_t>(i * d.n + j)] = sum;
      }
    return f32_codes(c);
  }

 private:
  int splits_;
};

/// Blocked along K: blocks of `block` products, each summed by fp32 FMA from +0; block partials added in
/// block order in fp32 (a kernel that accumulates each K-tile in registers before adding it to C).
class BlockedModel final : public CpuModel {
 public:
  BlockedModel(std::string name, std::string desc, KernelTraits t, int block)
      : CpuModel(std::move(name), std::move(desc), std::move(t)), block_(block) {}
  std::vector<std::uint64_t> compute(const DecodedOperands& d) const override {
    std::vector<float> c(static_cast<std::size_t>(d.m * d.n), 0.0f);
    for (std::int64_t i = 0; i < d.m; ++i)
      for (std::int64_t j = 0; j < d.n; ++j) {
        float sum = 0.0f;
        for (std::int64_t k0 = 0; k0 < d.k; k0 += block_) {
          const float part = fma_run(d, i, j, k0, std::min(d.k, k0 + block_));
          sum = k0 == 0 ? part : sum + part;
        }
        c[static_cast<std::size_t>(i * d.n + j)] = sum;
      }
    return f32_codes(c);
  }

 private:
  int block_;
};

/// Pairwise: every product rounded into the accumulator format, then summed by recursive halving, each
/// addition rounded to nearest even in the accumulator (a tree reduction). K = 0 gives +0.
class PairwiseModel final : public CpuModel {
 public:
  using CpuModel::CpuModel;
  std::vector<std::uint64_t> compute(const DecodedOperands& d) const override {
    const Format& acc = *traits_.acc;
    const Rounder rn = Rounder::nearest(acc);
    auto add = [&](double x, double y) {
      if (!std::isfinite(x) || !std::isfinite(y)) return to_double(acc, round_double(acc, x + y, rn).code);
      return to_double(acc, round_ref(acc, ref_from_two_sum(x, y), rn).code);
    };
    std::vector<std::uint64_t> out(static_cast<std::size_t>(d.m * d.n));
    std::vector<double> p(static_cast<std::size_t>(d.k));
    for (std::int64_t i = 0; i < d.m; ++i)
      for (std::int64_t j = 0; j < d.n; ++j) {
        for (std::int64_t t = 0; t < d.k; ++t)  // a*b exact in double (operands of at most 24 bits)
          p[static_cast<std::size_t>(t)] = to_double(acc, round_double(acc, d.A(i, t) * d.B(t, j), rn).code);
        const double s = d.k == 0 ? 0.0 : pairwise(p, 0, p.size(), add);
        out[static_cast<std::size_t>(i * d.n + j)] = round_double(*traits_.out, s, Rounder::nearest(*traits_.out)).code;
      }
    return out;
  }
};

KernelTraits order_traits(const Format& in, const Format& acc, std::string order) {
  KernelTraits t;
  t.a_input = t.b_input = &in;
  t.a_operand = t.b_operand = &in;
  t.acc = &acc;
  t.out = &acc;
  t.order = std::move(order);
  return t;
}

std::unique_ptr<GemmKernel> make_bf16_blocked32() {
  KernelTraits t = order_traits(bf16, f32, "blocked along K, blocks of 32: B_b = fma along k in the block from +0; C = (B_0 + B_1) + ... in fp32");
  t.sum_order = SummationOrder::blocked(32);
  return std::make_unique<BlockedModel>("model_gemm_bf16_f32acc_blocked32",
                                        "bf16 storage, fp32 accumulation per K-block of 32, blocks added in order", t, 32);
}

std::unique_ptr<GemmKernel> make_f16_f16acc_pairwise() {
  KernelTraits t = order_traits(f16, f16, "pairwise in fp16: p_k = RN_f16(a_k b_k); sum by recursive halving, RN_f16 per addition; output the sum");
  t.exact_products = false;
  t.product_format = &f16;
  t.sum_order = SummationOrder::pairwise();
  return std::make_unique<PairwiseModel>("model_gemm_f16_f16acc_pairwise", "fp16 storage, products rounded to fp16, fp16 pairwise sum", t);
}

}  // namespace

void register_order_models() {
  // model_gemm_f32_splitk4 and model_gemm_f32_pairwise: the same arithmetic is registered with its
  // machine-readable order by kernels/gemm/cpu/models.cpp (the bitwise tier needs it); not replaced here.
  register_kernel("model_gemm_bf16_f32acc_blocked32", Backend::Cpu, false, &make_bf16_blocked32);
  register_kernel("model_gemm_f16_f16acc_pairwise", Backend::Cpu, false, &make_f16_f16acc_pairwise);
}

}  // namespace fpcert
