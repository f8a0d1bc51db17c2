// tests/support/order_kernels.hpp — CPU GEMM kernels whose loops implement a known summation order,
// for the revelation tests: each element is computed by a plain loop written here (independent of
// oracle/sum_tree's builders, which the tests compare the revealed trees with).
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kernels/gemm/cpu/model.hpp"
#include "oracle/fused_dot.hpp"

namespace fpcert::test {

/// One element from its row of A and column of B (values of the input formats), as a code of `out`.
using ElementFn = std::function<std::uint64_t(const std::vector<double>& a, const std::vector<double>& b, std::int64_t row, std::int64_t col)>;

class LoopKernel final : public CpuModel {
 public:
  LoopKernel(std::string name, KernelTraits t, ElementFn fn, std::shared_ptr<int> runs = std::make_shared<int>(0))
      : CpuModel(std::move(name), "test kernel of known order", std::move(t)), fn_(std::move(fn)), runs_(std::move(runs)) {}
  std::vector<std::uint64_t> compute(const DecodedOperands& d) const override {
    ++*runs_;
    std::vector<std::uint64_t> out(static_cast<std::size_t>(d.m * d.n));
    std::vector<double> a(static_cast<std::size_t>(d.k)), b(static_cast<std::size_t>(d.k));
    for (std::int64_t i = 0; i < d.m; ++i)
      for (std::int64_t j = 0; j < d.n; ++j) {
        for (std::int64_t t = 0; t < d.k; ++t) {
          a[static_cast<std::size_t>(t)] = d.A(i, t);
          b[static_cast<std::size_t>(t)] = d.B(t, j);
        }
        out[static_cast<std::size_t>(i * d.n + j)] = fn_(a, b, i, j);
      }
    return out;
  }

 private:
  ElementFn fn_;
  std::shared_ptr<int> runs_;  ///< launches so far (the nondeterministic kernel reads it)
};

inline KernelTraits f32_traits() {
  KernelTraits t;
  t.order = "test";
  return t;
}
inline std::uint64_t f32_code(float x) { return std::bit_cast<std::uint32_t>(x); }

/// fp32 FMA chain from +0 over the products in `order`.
inline float fma_chain(const std::vector<double>& a, const std::vector<double>& b, const std::vector<std::size_t>& order) {
  float acc = 0.0f;
  for (std::size_t t : order) acc = std::fma(static_cast<float>(a[t]), static_cast<float>(b[t]), acc);
  return acc;
}
inline std::vector<std::size_t> range_of(std::size_t lo, std::size_t hi) {
  std::vector<std::size_t> v;
  for (std::size_t t = lo; t < hi; ++t) v.push_back(t);
  return v;
}
/// Products rounded to fp32, summed by recursive halving (the first ceil(n/2), then the rest).
inline float pairwise_sum(const std::vector<double>& a, const std::vector<double>& b, std::size_t lo, std::size_t hi) {
  if (hi - lo == 1) return static_cast<float>(a[lo]) * static_cast<float>(b[lo]);
  const std::size_t mid = lo + (hi - lo + 1) / 2;
  return pairwise_sum(a, b, lo, mid) + pairwise_sum(a, b, mid, hi);
}

inline std::unique_ptr<LoopKernel> sequential_kernel() {
  return std::make_unique<LoopKernel>("test_sequential", f32_traits(), [](const auto& a, const auto& b, auto, auto) {
    return f32_code(fma_chain(a, b, range_of(0, a.size())));
  });
}
inline std::unique_ptr<LoopKernel> pairwise_kernel() {
  KernelTraits t = f32_traits();
  t.exact_products = false;  // the products are rounded to fp32 before the adds
  t.product_format = &f32;
  return std::make_unique<LoopKernel>("test_pairwise", t, [](const auto& a, const auto& b, auto, auto) { return f32_code(pairwise_sum(a, b, 0, a.size())); });
}
/// Blocks of `block`: an FMA chain from +0 in each, the block partials added sequentially.
inline std::unique_ptr<LoopKernel> blocked_kernel(std::size_t block) {
  return std::make_unique<LoopKernel>("test_blocked", f32_traits(), [block](const auto& a, const auto& b, auto, auto) {
    float c = 0.0f;
    for (std::size_t s = 0; s < a.size(); s += block) {
      const float part = fma_chain(a, b, range_of(s, std::min(a.size(), s + block)));
      c = s == 0 ? part : c + part;
    }
    return f32_code(c);
  });
}
/// Four contiguous chunks of ceil(K/4), FMA chains, the partials added pairwise: (P0 + P1) + (P2 + P3).
inline std::unique_ptr<LoopKernel> split_k4_pairwise_kernel() {
  return std::make_unique<LoopKernel>("test_split_k4", f32_traits(), [](const auto& a, const auto& b, auto, auto) {
    const std::size_t chunk = (a.size() + 3) / 4;
    float p[4];
    for (std::size_t s = 0; s < 4; ++s) p[s] = fma_chain(a, b, range_of(s * chunk, std::min(a.size(), (s + 1) * chunk)));
    return f32_code((p[0] + p[1]) + (p[2] + p[3]));
  });
}
/// Four interleaved partials (part j holds k = j mod 4), FMA chains, added sequentially.
inline std::unique_ptr<LoopKernel> interleaved4_kernel() {
  return std::make_unique<LoopKernel>("test_interleaved4", f32_traits(), [](const auto& a, const auto& b, auto, auto) {
    float c = 0.0f;
    for (std::size_t j = 0; j < 4; ++j) {
      std::vector<std::size_t> ord;
      for (std::size_t t = j; t < a.size(); t += 4) ord.push_back(t);
      const float part = fma_chain(a, b, ord);
      c = j == 0 ? part : c + part;
    }
    return f32_code(c);
  });
}
/// A simulated tensor-core kernel: fp16 inputs, blocks of `p.fused_length` products fused by the card
/// model, chained in k order (oracle/fused_dot.hpp's fused_kloop with the instruction's k = 16).
inline std::unique_ptr<LoopKernel> fused_block_kernel(const FusedDotParams& p, int step) {
  KernelTraits t;
  t.a_input = t.b_input = t.a_operand = t.b_operand = &f16;
  t.acc = &f32;
  t.acc_rounding = Rounding::TowardZero;
  t.out = &f32;
  t.order = "test";
  return std::make_unique<LoopKernel>("test_fused_block", t, [p, step](const auto& a, const auto& b, auto, auto) {
    std::vector<std::uint32_t> ca(a.size()), cb(b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      ca[i] = static_cast<std::uint32_t>(round_double(f16, a[i], Rounder::nearest(f16)).code);  // exact: a value of f16
      cb[i] = static_cast<std::uint32_t>(round_double(f16, b[i], Rounder::nearest(f16)).code);
    }
    return fused_kloop(p, ca.data(), cb.data(), static_cast<int>(a.size()), step, 0);
  });
}
/// Rows of the top half sequential, the bottom half pairwise: two classes of elements by tile.
inline std::unique_ptr<LoopKernel> two_tiles_kernel(std::int64_t rows_top) {
  return std::make_unique<LoopKernel>("test_two_tiles", f32_traits(), [rows_top](const auto& a, const auto& b, std::int64_t row, auto) {
    return f32_code(row < rows_top ? fma_chain(a, b, range_of(0, a.size())) : pairwise_sum(a, b, 0, a.size()));
  });
}
/// A different order on every launch (the chain starts at a rotating offset): not deterministic.
inline std::unique_ptr<LoopKernel> rotating_kernel() {
  auto runs = std::make_shared<int>(0);
  return std::make_unique<LoopKernel>(
      "test_rotating", f32_traits(),
      [runs](const auto& a, const auto& b, auto, auto) {
        std::vector<std::size_t> ord;
        const std::size_t start = static_cast<std::size_t>(*runs) % a.size();
        for (std::size_t t = 0; t < a.size(); ++t) ord.push_back((start + t) % a.size());
        return f32_code(fma_chain(a, b, ord));
      },
      runs);
}
/// The order depends on the data: descending k when the first product is negative, else ascending.
inline std::unique_ptr<LoopKernel> data_dependent_kernel() {
  return std::make_unique<LoopKernel>("test_data_dependent", f32_traits(), [](const auto& a, const auto& b, auto, auto) {
    std::vector<std::size_t> ord = range_of(0, a.size());
    if (a[0] * b[0] < 0) std::reverse(ord.begin(), ord.end());
    return f32_code(fma_chain(a, b, ord));
  });
}

}  // namespace fpcert::test
