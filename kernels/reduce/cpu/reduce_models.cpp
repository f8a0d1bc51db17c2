// kernels/reduce/cpu/reduce_models.cpp — CPU models of reduction kernels (docs/reductions.md, "Kernels"): sums, dot
// products and nrm2 in the orders a GPU or library kernel uses — sequential, pairwise, blocked, the warp-shuffle tree,
// an atomics combine whose order changes from call to call —, with f32 or f16 accumulators.
//
// The arithmetic is written independently of the oracle's emulation (oracle/reduce/reduce_order.cpp): f32
// accumulators through the FPU's float operations (x86-64 SSE: round to nearest even, no flush; the runner pins the
// environment), dots and nrm2 through fmaf; an f16 accumulator adds in double (two f16 values sum exactly there)
// and rounds once into f16 with oracle/round.hpp's round_double. The bitwise tier then compares two realisations of
// one declared order, not one with itself.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "base/codes.hpp"
#include "kernels/reduce/reduce_kernel.hpp"
#include "kernels/register.hpp"
#include "oracle/round.hpp"

namespace fpcert {
namespace {

enum class Shape : std::uint8_t { Sequential, Pairwise, Blocked, WarpTree, Atomic };

struct ModelSpec {
  std::string name;
  ReduceKind kind;
  const Format* in;
  const Format* acc;
  Shape shape;
  int block = 0;  ///< Blocked: terms per block; Atomic: terms per chunk
  std::string note;
};

/// An f16 (or any non-f32) accumulator's addition: exact in double, one rounding into the accumulator.
struct Acc {
  const Format* f;
  double add(double a, double b) const {
    if (f == &f32) return static_cast<double>(static_cast<float>(a) + static_cast<float>(b));
    return to_double(*f, round_double(*f, a + b, Rounder::nearest(*f)).code);
  }
  double fma(double x, double y, double a) const {
    if (f == &f32) return static_cast<double>(std::fmaf(static_cast<float>(x), static_cast<float>(y), static_cast<float>(a)));
    // Registered only for sums (below): a fused dot into an f16 accumulator would need an exact three-term rounding.
    return add(a, x * y);
  }
};

class ReduceModel final : public ReduceKernel {
 public:
  explicit ReduceModel(ModelSpec s) : s_(std::move(s)) {
    t_.kind = s_.kind;
    t_.x_input = t_.y_input = s_.in;
    t_.arith.acc = s_.acc;
    t_.arith.rounder = Rounder::nearest(*s_.acc);
    t_.arith.products = ProductRounding::Exact;
    t_.out = s_.acc;
    switch (s_.shape) {
      case Shape::Sequential: t_.order = ReduceOrder::sequential(); break;
      case Shape::Pairwise: t_.order = ReduceOrder::pairwise(); break;
      case Shape::Blocked: t_.order = ReduceOrder::blocked(s_.block); break;
      case Shape::WarpTree: t_.order = ReduceOrder::warp_tree(32); break;
      case Shape::Atomic:
        t_.order = ReduceOrder::unknown();
        t_.determinism = Determinism::RunToRun;
        t_.determinism_note = "model: chunks of " + std::to_string(s_.block) + " terms added into the result in an order that rotates from call to call, as atomics arrive";
        break;
    }
    t_.note = s_.note;
  }
  const std::string& name() const override { return s_.name; }
  std::string description() const override { return s_.note + " (" + describe_reduce_traits(t_) + ")"; }
  Backend backend() const override { return Backend::Cpu; }
  const ReduceTraits& reduce_traits() const override { return t_; }

  void run(const ReduceOperands& o) override {
    ++calls_;
    const int xb = container_bytes(*s_.in);
    const Acc acc{s_.acc};
    std::vector<double> x(static_cast<std::size_t>(o.length)), y(x.size());
    for (std::int64_t v = 0; v < o.count; ++v) {
      for (std::int64_t i = 0; i < o.length; ++i) {
        const std::int64_t at = o.axis == ReduceAxis::Rows ? v * o.ldx + i : i * o.ldx + v;
        x[static_cast<std::size_t>(i)] = to_double(*s_.in, load_code(o.x, at, xb));
        if (s_.kind == ReduceKind::Dot) {
          const std::int64_t aty = o.axis == ReduceAxis::Rows ? v * o.ldy + i : i * o.ldy + v;
          y[static_cast<std::size_t>(i)] = to_double(*s_.in, load_code(o.y, aty, xb));
        }
      }
      double r = reduce(x, y, acc);
      if (s_.kind == ReduceKind::Nrm2) r = static_cast<double>(std::sqrt(static_cast<float>(r)));
      store_code(o.out, v, container_bytes(*t_.out), round_double(*t_.out, r, Rounder::nearest(*t_.out)).code);
    }
  }

 private:
  /// One term added to a running value: acc + x (sum), acc + x y (dot, fused), acc + x^2 (nrm2, fused).
  double step(double a, double xi, double yi, const Acc& acc) const {
    switch (s_.kind) {
      case ReduceKind::Sum: return acc.add(a, xi);
      case ReduceKind::Dot: return acc.fma(xi, yi, a);
      case ReduceKind::Nrm2: return acc.fma(xi, xi, a);
    }
    return a;
  }
  double chain(const std::vector<double>& x, const std::vector<double>& y, std::size_t from, std::size_t to, std::size_t stride,
               const Acc& acc) const {
    double a = 0.0;  // from +0
    for (std::size_t i = from; i < to; i += stride) a = step(a, x[i], y[i], acc);
    return a;
  }
  double pairwise(const std::vector<double>& x, std::size_t lo, std::size_t n, const Acc& acc) const {
    if (n == 0) return 0.0;
    if (n == 1) return x[lo];  // a lone term as it is (inputs the accumulator holds)
    const std::size_t h = (n + 1) / 2;
    return acc.add(pairwise(x, lo, h, acc), pairwise(x, lo + h, n - h, acc));
  }
  double reduce(const std::vector<double>& x, const std::vector<double>& y, const Acc& acc) const {
    const std::size_t n = x.size();
    switch (s_.shape) {
      case Shape::Sequential: return chain(x, y, 0, n, 1, acc);
      case Shape::Pairwise: return pairwise(x, 0, n, acc);
      case Shape::Blocked: {
        const std::size_t b = static_cast<std::size_t>(s_.block);
        if (n == 0) return 0.0;
        double a = chain(x, y, 0, std::min(b, n), 1, acc);  // the partials: from the first
        for (std::size_t s = b; s < n; s += b) a = acc.add(a, chain(x, y, s, std::min(s + b, n), 1, acc));
        return a;
      }
      case Shape::WarpTree: {
        double lane[32];
        for (std::size_t l = 0; l < 32; ++l) lane[l] = chain(x, y, l, n, 32, acc);
        for (int off = 16; off >= 1; off /= 2) {
          double next[32];
          for (int l = 0; l < 32; ++l) next[l] = acc.add(lane[l], lane[l ^ off]);
          std::copy(next, next + 32, lane);
        }
        return lane[0];
      }
      case Shape::Atomic: {
        const std::size_t b = static_cast<std::size_t>(s_.block);
        const std::size_t chunks = (n + b - 1) / b;
        std::vector<double> part(chunks);
        for (std::size_t c = 0; c < chunks; ++c) part[c] = chain(x, y, c * b, std::min(n, (c + 1) * b), 1, acc);
        std::vector<std::size_t> arrival(chunks);
        std::iota(arrival.begin(), arrival.end(), std::size_t{0});
        if (chunks > 1) std::rotate(arrival.begin(), arrival.begin() + static_cast<std::ptrdiff_t>((calls_ * 3) % chunks), arrival.end());
        double a = 0.0;  // the output's +0, then each chunk's atomic add
        for (std::size_t c : arrival) a = acc.add(a, part[c]);
        return a;
      }
    }
    return 0.0;
  }

  ModelSpec s_;
  ReduceTraits t_;
  std::int64_t calls_ = 0;
};

}  // namespace

void register_reduce_models() {
  const std::vector<ModelSpec> specs = {
      {"model_sum_f32_seq", ReduceKind::Sum, &f32, &f32, Shape::Sequential, 0, "one thread's loop from +0 (a CPU sum, a naive kernel)"},
      {"model_sum_f32_pairwise", ReduceKind::Sum, &f32, &f32, Shape::Pairwise, 0, "recursive halving (Higham's pairwise summation)"},
      {"model_sum_f32_blocked256", ReduceKind::Sum, &f32, &f32, Shape::Blocked, 256, "blocks of 256 summed in turn, the partials in turn (one block per thread, then a loop)"},
      {"model_sum_f32_warp32", ReduceKind::Sum, &f32, &f32, Shape::WarpTree, 0, "32 strided lanes, then the __shfl_xor_sync butterfly (the CUDA warp reduction)"},
      {"model_sum_f16_acc32_seq", ReduceKind::Sum, &f16, &f32, Shape::Sequential, 0, "f16 inputs summed in an f32 accumulator"},
      {"model_sum_bf16_acc32_warp32", ReduceKind::Sum, &bf16, &f32, Shape::WarpTree, 0, "bf16 inputs, f32 warp-shuffle tree"},
      {"model_sum_f16_acc16_seq", ReduceKind::Sum, &f16, &f16, Shape::Sequential, 0, "f16 inputs summed in an f16 accumulator (half arithmetic)"},
      {"model_sum_f32_atomic", ReduceKind::Sum, &f32, &f32, Shape::Atomic, 64, "chunks of 64 added into the result with atomics"},
      {"model_dot_f32_seq", ReduceKind::Dot, &f32, &f32, Shape::Sequential, 0, "one thread's fmaf loop (sdot)"},
      {"model_dot_bf16_acc32_warp32", ReduceKind::Dot, &bf16, &f32, Shape::WarpTree, 0, "bf16 inputs, fmaf lanes, warp-shuffle tree"},
      {"model_nrm2_f32_seq", ReduceKind::Nrm2, &f32, &f32, Shape::Sequential, 0, "sqrt of the fmaf sum of squares, unscaled"},
  };
  for (const ModelSpec& s : specs)
    register_kernel(s.name, Backend::Cpu, false, [s] { return std::make_unique<ReduceModel>(s); }, Operation::Reduction);
}

}  // namespace fpcert
