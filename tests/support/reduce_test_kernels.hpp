// tests/support/reduce_test_kernels.hpp — small host reduction models for the runner's and the CLI's tests, written
// with native float arithmetic (an independent realisation of a declared sequential order: the oracle's emulation
// rounds through oracle/round.hpp, these through the FPU), and deliberately wrong ones: a dropped element, a pairwise
// tree declared sequential, an atomics-like model whose order rotates on every call (declared run-to-run).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "base/codes.hpp"
#include "kernels/reduce/reduce_kernel.hpp"

namespace fpcert::test {

enum class Flavour { Correct, DropLast, Atomic, AtomicDropLast, PairwiseClaimedSequential };

class TestReduce final : public ReduceKernel {
 public:
  TestReduce(std::string name, ReduceKind kind, Flavour f) : name_(std::move(name)), f_(f) {
    t_.kind = kind;
    t_.order = ReduceOrder::sequential();
    if (f == Flavour::Atomic || f == Flavour::AtomicDropLast) {
      t_.order = ReduceOrder::unknown();
      t_.determinism = Determinism::RunToRun;
    }
  }
  const std::string& name() const override { return name_; }
  std::string description() const override { return "test reduction model"; }
  Backend backend() const override { return Backend::Cpu; }
  const ReduceTraits& reduce_traits() const override { return t_; }
  void run(const ReduceOperands& o) override {
    ++calls_;
    std::vector<float> x(static_cast<std::size_t>(o.length)), y(x.size());
    for (std::int64_t v = 0; v < o.count; ++v) {
      for (std::int64_t i = 0; i < o.length; ++i) {
        const std::int64_t at = o.axis == ReduceAxis::Rows ? v * o.ldx + i : i * o.ldx + v;
        const std::uint32_t bx = static_cast<std::uint32_t>(load_code(o.x, at, 4));
        std::memcpy(&x[static_cast<std::size_t>(i)], &bx, 4);
        if (o.y) {
          const std::int64_t aty = o.axis == ReduceAxis::Rows ? v * o.ldy + i : i * o.ldy + v;
          const std::uint32_t by = static_cast<std::uint32_t>(load_code(o.y, aty, 4));
          std::memcpy(&y[static_cast<std::size_t>(i)], &by, 4);
        }
      }
      std::vector<std::size_t> idx(x.size());
      std::iota(idx.begin(), idx.end(), std::size_t{0});
      if (f_ == Flavour::Atomic || f_ == Flavour::AtomicDropLast)  // another order on every call: a rotation
        std::rotate(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(idx.empty() ? 0 : (calls_ * 7) % idx.size()), idx.end());
      std::size_t n = idx.size();
      if ((f_ == Flavour::DropLast || f_ == Flavour::AtomicDropLast) && n > 0) --n;
      float acc = 0.0f;
      if (f_ == Flavour::PairwiseClaimedSequential) {
        std::vector<float> t(x.begin(), x.end());
        acc = pairwise(t.data(), t.size());
      } else {
        for (std::size_t q = 0; q < n; ++q) {
          const std::size_t i = idx[q];
          switch (t_.kind) {
            case ReduceKind::Sum: acc = acc + x[i]; break;
            case ReduceKind::Dot: acc = std::fmaf(x[i], y[i], acc); break;
            case ReduceKind::Nrm2: acc = std::fmaf(x[i], x[i], acc); break;
          }
        }
      }
      if (t_.kind == ReduceKind::Nrm2) acc = std::sqrt(acc);
      std::uint32_t b;
      std::memcpy(&b, &acc, 4);
      store_code(o.out, v, 4, b);
    }
  }

 private:
  static float pairwise(const float* x, std::size_t n) {
    if (n == 0) return 0.0f;
    if (n == 1) return x[0];
    const std::size_t h = (n + 1) / 2;
    return pairwise(x, h) + pairwise(x + h, n - h);
  }
  std::string name_;
  Flavour f_;
  ReduceTraits t_;
  std::int64_t calls_ = 0;
};

inline void register_test_kernels() {
  static const bool done = [] {
    auto reg = [](const std::string& name, ReduceKind k, Flavour f) {
      register_kernel(name, Backend::Cpu, false, [=] { return std::make_unique<TestReduce>(name, k, f); }, Operation::Reduction);
    };
    reg("test_sum_f32_seq", ReduceKind::Sum, Flavour::Correct);
    reg("test_dot_f32_seq", ReduceKind::Dot, Flavour::Correct);
    reg("test_nrm2_f32_seq", ReduceKind::Nrm2, Flavour::Correct);
    reg("test_sum_f32_droplast", ReduceKind::Sum, Flavour::DropLast);
    reg("test_sum_f32_pairwise_as_seq", ReduceKind::Sum, Flavour::PairwiseClaimedSequential);
    reg("test_sum_f32_atomic", ReduceKind::Sum, Flavour::Atomic);
    reg("test_sum_f32_atomic_drop", ReduceKind::Sum, Flavour::AtomicDropLast);
    return true;
  }();
  (void)done;
}

}  // namespace fpcert::test
