// kernels/gemm/cpu/f64_models.cpp — FP64 GEMM as a declared arithmetic (docs/fp64.md): fp64 inputs, fp64
// accumulation, fp64 output, in the sequential FMA order and in other valid orders (pairwise, blocked), one
// model that declares no order (the envelope judges it), and a deliberately weakened "emulation" that passes
// inputs truncated to 40 significant bits off as fp64 (a mutant: certify must refuse it).
//
// Conventions as in kernels/gemm/cpu/order_models.cpp: every sum of a block or chunk starts from +0 and steps
// k upward; partials are combined starting from the first partial (no +0), each addition rounded once to
// nearest even. The host's double arithmetic is IEEE binary64 with round to nearest even (fpcert runs with the
// default floating-point environment: no flush to zero), so std::fma is one rounding of a b + c.
#include <cmath>
#include <cstring>
#include <utility>

#include "kernels/gemm/cpu/model.hpp"
#include "kernels/register.hpp"

namespace fpcert {
namespace {

std::vector<std::uint64_t> f64_codes(const std::vector<double>& c) {
  std::vector<std::uint64_t> r(c.size());
  for (std::size_t x = 0; x < c.size(); ++x) r[x] = std::bit_cast<std::uint64_t>(c[x]);
  return r;
}

/// fp64 FMA along k in [k0, k1) from +0.
double fma_run(const DecodedOperands& d, std::int64_t i, std::int64_t j, std::int64_t k0, std::int64_t k1) {
  double acc = 0.0;
  for (std::int64_t t = k0; t < k1; ++t) acc = std::fma(d.A(i, t), d.B(t, j), acc);
  return acc;
}

/// Pairwise sum of v[lo, hi): the first ceil(n/2) and the rest, recursively; one rounding per addition.
double pairwise(const std::vector<double>& v, std::size_t lo, std::size_t hi) {
  if (hi - lo == 1) return v[lo];
  const std::size_t mid = lo + (hi - lo + 1) / 2;
  return pairwise(v, lo, mid) + pairwise(v, mid, hi);
}

enum class F64Order { Sequential, Pairwise, Blocked, BlockedPairwise };

/// The fp64 models. Blocked: blocks of `block` products, each fma from +0; the block partials joined in order
/// (Blocked, from the first partial) or by recursive halving (BlockedPairwise: the one that declares no order).
class F64Model final : public CpuModel {
 public:
  F64Model(std::string name, std::string desc, KernelTraits t, F64Order o, int block = 0)
      : CpuModel(std::move(name), std::move(desc), std::move(t)), o_(o), block_(block) {}
  std::vector<std::uint64_t> compute(const DecodedOperands& d) const override {
    std::vector<double> c(static_cast<std::size_t>(d.m * d.n), 0.0), p;
    for (std::int64_t i = 0; i < d.m; ++i)
      for (std::int64_t j = 0; j < d.n; ++j) {
        double s = 0.0;
        switch (o_) {
          case F64Order::Sequential: s = fma_run(d, i, j, 0, d.k); break;
          case F64Order::Pairwise:  // p_k = RN_f64(a b), summed by recursive halving; K = 0 gives +0
            p.resize(static_cast<std::size_t>(d.k));
            for (std::int64_t t = 0; t < d.k; ++t) p[static_cast<std::size_t>(t)] = d.A(i, t) * d.B(t, j);
            s = d.k == 0 ? 0.0 : pairwise(p, 0, p.size());
            break;
          case F64Order::Blocked:
            for (std::int64_t k0 = 0; k0 < d.k; k0 += block_) {
              const double part = fma_run(d, i, j, k0, std::min(d.k, k0 + block_));
              s = k0 == 0 ? part : s + part;
            }
            break;
          case F64Order::BlockedPairwise:
            p.clear();
            for (std::int64_t k0 = 0; k0 < d.k; k0 += block_) p.push_back(fma_run(d, i, j, k0, std::min(d.k, k0 + block_)));
            s = p.empty() ? 0.0 : pairwise(p, 0, p.size());
            break;
        }
        c[static_cast<std::size_t>(i * d.n + j)] = s;
      }
    return f64_codes(c);
  }

 private:
  F64Order o_;
  int block_;
};

/// A weakened emulation: each input truncated (toward zero) to 40 significant bits, the products of the
/// truncated values (80 bits) accumulated exactly enough by fp64 FMA, k ascending: what an Ozaki-style split
/// that keeps too few slices of the inputs computes, passed off as fp64 GEMM (traits: fp64 operands). Relative
/// input error up to 2^-39 per operand, far beyond the fp64 storage the traits declare: certify must refuse it.
class Trunc40Model final : public CpuModel {
 public:
  using CpuModel::CpuModel;
  static double trunc40(double x) {
    if (!std::isfinite(x) || x == 0) return x;
    std::uint64_t u = std::bit_cast<std::uint64_t>(x);
    if ((u & 0x7FF0000000000000ULL) == 0) return x;  // subnormal: at most 52 bits, left alone (the lost bits are elsewhere)
    u &= ~((std::uint64_t{1} << 13) - 1);            // keep 1 + 39 fraction bits: 40 significant bits
    return std::bit_cast<double>(u);
  }
  std::vector<std::uint64_t> compute(const DecodedOperands& d) const override {
    DecodedOperands t = d;
    for (double& x : t.a) x = trunc40(x);
    for (double& x : t.b) x = trunc40(x);
    std::vector<double> c(static_cast<std::size_t>(d.m * d.n));
    for (std::int64_t i = 0; i < d.m; ++i)
      for (std::int64_t j = 0; j < d.n; ++j) c[static_cast<std::size_t>(i * d.n + j)] = fma_run(t, i, j, 0, d.k);
    return f64_codes(c);
  }
};

KernelTraits f64_traits(std::string order, SummationOrder so) {
  KernelTraits t;
  t.a_input = t.b_input = &f64;
  t.a_operand = t.b_operand = &f64;
  t.acc = &f64;
  t.out = &f64;
  t.order = std::move(order);
  t.sum_order = std::move(so);
  return t;
}

const char* kSeqOrder = "C[i][j] = fma(a[i][k], b[k][j], C) for k = 0..K-1 in fp64, from +0";

std::unique_ptr<GemmKernel> make_f64() {
  return std::make_unique<F64Model>("model_gemm_f64", "fp64 inputs, fp64 FMA along K (DGEMM's arithmetic, k ascending)",
                                    f64_traits(kSeqOrder, SummationOrder::sequential(StepKind::Fma)), F64Order::Sequential);
}
std::unique_ptr<GemmKernel> make_f64_pairwise() {
  KernelTraits t = f64_traits("p_k = RN_f64(a b); sum by recursive halving (first ceil(n/2), then the rest), RN_f64 per addition",
                              SummationOrder::pairwise());
  return std::make_unique<F64Model>("model_gemm_f64_pairwise", "fp64 pairwise: products rounded to fp64, summed by recursive halving",
                                    t, F64Order::Pairwise);
}
std::unique_ptr<GemmKernel> make_f64_blocked32() {
  KernelTraits t = f64_traits("blocks of 32 along K: B_b = fma along k in the block from +0; C = (B_0 + B_1) + ... in fp64",
                              SummationOrder::blocked(32));
  return std::make_unique<F64Model>("model_gemm_f64_blocked32", "fp64, FMA per K-block of 32, blocks added in order", t,
                                    F64Order::Blocked, 32);
}
std::unique_ptr<GemmKernel> make_f64_noorder() {
  KernelTraits t = f64_traits("not declared (a blocked tree: the envelope judges it)", SummationOrder::unknown());
  return std::make_unique<F64Model>("model_gemm_f64_noorder",
                                    "fp64, FMA per K-block of 16, partials summed pairwise; declares no order (envelope tier)", t,
                                    F64Order::BlockedPairwise, 16);
}
std::unique_ptr<GemmKernel> make_f64_trunc40() {
  KernelTraits t = f64_traits(kSeqOrder, SummationOrder::sequential(StepKind::Fma));
  return std::make_unique<Trunc40Model>("model_gemm_f64_emu_trunc40",
                                        "weakened emulation: fp64 inputs truncated to 40 bits, declared as fp64 GEMM (must be refused)", t);
}

}  // namespace

void register_f64_models() {
  register_kernel("model_gemm_f64", Backend::Cpu, false, &make_f64);
  register_kernel("model_gemm_f64_pairwise", Backend::Cpu, false, &make_f64_pairwise);
  register_kernel("model_gemm_f64_blocked32", Backend::Cpu, false, &make_f64_blocked32);
  register_kernel("model_gemm_f64_noorder", Backend::Cpu, false, &make_f64_noorder);
  register_kernel("model_gemm_f64_emu_trunc40", Backend::Cpu, true, &make_f64_trunc40);
}

}  // namespace fpcert
