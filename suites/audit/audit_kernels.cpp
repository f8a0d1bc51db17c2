// suites/audit/audit_kernels.cpp — the emulated declaration and the zeros and constant mutants (audit_kernels.hpp).
#include "suites/audit/audit_kernels.hpp"

#include <cmath>
#include <stdexcept>

#include "base/codes.hpp"
#include "kernels/gemm/cpu/model.hpp"
#include "oracle/round.hpp"
#include "suites/verdict/emulate/emulate.hpp"

namespace fpcert {
namespace {

class EmulatedKernel final : public CpuModel {
 public:
  EmulatedKernel(std::string name, const KernelTraits& declared, const SummationOrder& computed)
      : CpuModel(std::move(name), "the declaration computed by fpcert's emulator (" + std::string(to_string(computed.kind)) + ")", declared),
        computed_(declared) {
    computed_.sum_order = computed;
  }
  std::vector<std::uint64_t> compute(const DecodedOperands& d) const override { return emulate_gemm(computed_, d.m, d.n, d.k, d.a, d.b); }

 private:
  KernelTraits computed_;
};

/// Base of the two output mutants: a host kernel wrapping another, claiming its traits.
class OutputMutant : public GemmKernel {
 public:
  OutputMutant(std::unique_ptr<GemmKernel> w, const char* id) : w_(std::move(w)), name_(w_->name() + "~" + id) {
    if (w_->memory() != MemorySpace::Host) throw std::invalid_argument(name_ + ": the audit's output mutants wrap host kernels only");
  }
  const std::string& name() const override { return name_; }
  Backend backend() const override { return w_->backend(); }
  bool is_mutant() const override { return true; }
  const KernelTraits& traits() const override { return w_->traits(); }
  Support can_implement(std::int64_t m, std::int64_t n, std::int64_t k) const override { return w_->can_implement(m, n, k); }

 protected:
  void fill(const GemmOperands& ops, std::uint64_t code) const {
    const int bytes = container_bytes(*traits().out);
    for (std::int64_t i = 0; i < ops.m; ++i)
      for (std::int64_t j = 0; j < ops.n; ++j) store_code(ops.c, i * ops.ldc + j, bytes, code);
  }
  std::unique_ptr<GemmKernel> w_;
  std::string name_;
};

class ZerosMutant final : public OutputMutant {
 public:
  explicit ZerosMutant(std::unique_ptr<GemmKernel> w) : OutputMutant(std::move(w), "zeros") {}
  std::string description() const override { return "every output +0"; }
  void run(const GemmOperands& ops) override { fill(ops, 0); }  // code 0 is +0 in every signed format
};

class ConstantMutant final : public OutputMutant {
 public:
  explicit ConstantMutant(std::unique_ptr<GemmKernel> w) : OutputMutant(std::move(w), "constant") {}
  std::string description() const override { return "every output the mean of the wrapped kernel's outputs"; }
  void run(const GemmOperands& ops) override {
    w_->run(ops);
    const Format& out = *traits().out;
    const int bytes = container_bytes(out);
    double sum = 0;
    std::int64_t count = 0;
    for (std::int64_t i = 0; i < ops.m; ++i)
      for (std::int64_t j = 0; j < ops.n; ++j) {
        const double v = to_double(out, load_code(ops.c, i * ops.ldc + j, bytes));
        if (std::isfinite(v)) sum += v, ++count;
      }
    fill(ops, round_double(out, count ? sum / static_cast<double>(count) : 0.0, Rounder::nearest(out)).code);
  }
};

}  // namespace

std::unique_ptr<GemmKernel> make_emulated_kernel(std::string name, const KernelTraits& declared, const SummationOrder& computed) {
  return std::make_unique<EmulatedKernel>(std::move(name), declared, computed);
}
std::unique_ptr<GemmKernel> make_zeros_mutant(std::unique_ptr<GemmKernel> wrapped) { return std::make_unique<ZerosMutant>(std::move(wrapped)); }
std::unique_ptr<GemmKernel> make_constant_mutant(std::unique_ptr<GemmKernel> wrapped) {
  return std::make_unique<ConstantMutant>(std::move(wrapped));
}

}  // namespace fpcert
