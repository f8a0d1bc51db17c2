// kernels/gemm/cpu/nondet_models.cpp — the CPU model of an atomics split-K GEMM, whose partials arrive in an
// order that changes run to run (docs/kernels.md, "Nondeterministic kernels"), and three deliberately wrong
// entries built on it, the fixtures of docs/bound_model.md "Nondeterministic kernels": each must fail, each for
// its own reason.
//
// The arithmetic (shared with kernels/gemm/cuda/splitk_atomic.cu): K cut into S chunks of L = ceil(K/S) products;
// each chunk summed by fp32 FMA from +0, k ascending (the partial P_s, the same bits in every run); C starts at +0
// and every partial is added into it with one fp32 addition rounded to nearest even, in an order that the model
// draws per element from a run counter (the device kernel: the order its atomics arrive in).
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <utility>

#include "kernels/gemm/cpu/model.hpp"
#include "kernels/register.hpp"

namespace fpcert {

KernelTraits atomic_splitk_traits(int splits) {
  KernelTraits t;  // fp32 in, operands, accumulator and out; exact products inside the FMA
  t.order = "K cut into " + std::to_string(splits) + " chunks of ceil(K/" + std::to_string(splits) +
            "); each chunk fma from +0, k ascending, in fp32; C = +0, then every chunk's partial added into C with one fp32 "
            "addition (nearest even) in the order the partials arrive, which changes run to run";
  t.sum_order = SummationOrder::split_k(splits, Combine::Atomic);
  t.determinism = Determinism::RunToRun;
  t.determinism_note = "atomic split-K: the partials' arrival order changes run to run";
  return t;
}

namespace {

/// What is wrong with a fixture (None: the correct model).
enum class Flaw : std::uint8_t {
  None,
  LostUpdate,        ///< rows 0 and 1 of column 0 never receive split 1's partial (a lost update): wrong every run
  OrderFreeDrift,    ///< every second run, every finite nonzero output one code further from zero
  Undeclared,        ///< correct, but declares itself deterministic (order unknown)
};

/// splitmix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014): the arrival
/// order of element x in run r, reproducible.
std::uint64_t mix(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

constexpr int kMaxSplits = 16;

class AtomicSplitKModel final : public CpuModel {
 public:
  AtomicSplitKModel(std::string name, std::string desc, KernelTraits t, int splits, Flaw flaw)
      : CpuModel(std::move(name), std::move(desc), std::move(t)), splits_(splits), flaw_(flaw) {}
  bool is_mutant() const override { return flaw_ != Flaw::None; }

  std::vector<std::uint64_t> compute(const DecodedOperands& d) const override {
    const std::uint64_t run = runs_++;
    const int S = splits_;
    const std::int64_t len = (d.k + S - 1) / S;
    std::vector<std::uint64_t> out(static_cast<std::size_t>(d.m * d.n));
    std::array<float, kMaxSplits> part{};
    std::array<int, kMaxSplits> order{};
    for (std::int64_t i = 0; i < d.m; ++i)
      for (std::int64_t j = 0; j < d.n; ++j) {
        const auto x = static_cast<std::uint64_t>(i * d.n + j);
        for (int s = 0; s < S; ++s) {
          const std::int64_t k0 = std::min(d.k, s * len), k1 = std::min(d.k, k0 + len);
          float acc = 0.0f;
          for (std::int64_t t = k0; t < k1; ++t) acc = std::fma(static_cast<float>(d.A(i, t)), static_cast<float>(d.B(t, j)), acc);
          part[static_cast<std::size_t>(s)] = acc;
          order[static_cast<std::size_t>(s)] = s;
        }
        // Fisher-Yates with this run's and this element's bits: the partials' arrival order.
        std::uint64_t h = mix(run * 0xD1B54A32D192ED03ULL ^ mix(x));
        for (int s = S - 1; s > 0; --s) {
          std::swap(order[static_cast<std::size_t>(s)], order[static_cast<std::size_t>(h % static_cast<std::uint64_t>(s + 1))]);
          h = mix(h);
        }
        float c = 0.0f;
        for (int s = 0; s < S; ++s) {
          const int from = order[static_cast<std::size_t>(s)];
          if (flaw_ == Flaw::LostUpdate && from == 1 && j == 0 && i < 2) continue;  // that atomic never lands
          c += part[static_cast<std::size_t>(from)];  // one fp32 addition, nearest even
        }
        std::uint32_t bits = std::bit_cast<std::uint32_t>(c);
        if (flaw_ == Flaw::OrderFreeDrift && run % 2 == 1 && std::isfinite(c) && c != 0.0f && (bits & 0x7FFFFFFFu) != 0x7F7FFFFFu) ++bits;
        out[static_cast<std::size_t>(x)] = bits;
      }
    return out;
  }

 private:
  int splits_;
  Flaw flaw_;
  mutable std::uint64_t runs_ = 0;  ///< runs of this kernel object: the run counter the arrival orders are drawn from
};

std::unique_ptr<GemmKernel> make_model(const char* name, const char* desc, Flaw flaw) {
  KernelTraits t = atomic_splitk_traits(4);
  if (flaw == Flaw::Undeclared) {  // the same arithmetic, declared as a deterministic kernel of unknown order
    t.sum_order = SummationOrder::unknown();
    t.determinism = Determinism::Deterministic;
    t.determinism_note.clear();
    t.order += " (declared deterministic, which it is not)";
  }
  return std::make_unique<AtomicSplitKModel>(name, desc, t, 4, flaw);
}

std::unique_ptr<GemmKernel> make_correct() {
  return make_model("model_gemm_f32_splitk4_atomic",
                    "fp32 split-K in 4 chunks, partials added into C in an order drawn per run (atomics model: nondeterministic run "
                    "to run)",
                    Flaw::None);
}
std::unique_ptr<GemmKernel> make_lost_update() {
  return make_model("mutant_gemm_f32_splitk4_atomic_lost_update",
                    "fixture: the atomics split-K model whose C[0][0] and C[1][0] never receive split 1's partial (a lost "
                    "update): must fail by the envelope",
                    Flaw::LostUpdate);
}
std::unique_ptr<GemmKernel> make_order_free_drift() {
  return make_model("mutant_gemm_f32_splitk4_atomic_order_free_drift",
                    "fixture: the atomics split-K model, every second run one ulp further from zero everywhere: must fail the "
                    "spread check on the order-free elements",
                    Flaw::OrderFreeDrift);
}
std::unique_ptr<GemmKernel> make_undeclared() {
  return make_model("mutant_gemm_f32_splitk4_atomic_undeclared",
                    "fixture: the atomics split-K model declaring itself deterministic: must fail as non-deterministic",
                    Flaw::Undeclared);
}

}  // namespace

void register_nondet_models() {
  register_kernel("model_gemm_f32_splitk4_atomic", Backend::Cpu, false, &make_correct);
  register_kernel("mutant_gemm_f32_splitk4_atomic_lost_update", Backend::Cpu, true, &make_lost_update);
  register_kernel("mutant_gemm_f32_splitk4_atomic_order_free_drift", Backend::Cpu, true, &make_order_free_drift);
  register_kernel("mutant_gemm_f32_splitk4_atomic_undeclared", Backend::Cpu, true, &make_undeclared);
}

}  // namespace fpcert
