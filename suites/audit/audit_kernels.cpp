// suites/audit/audit_kernels.cpp — the emulated declaration and the zeros and constant mutants (audit_kernels.hpp).
#include "suites/audit/audit_kernels.hpp"

#include <cmath>
#include <stdexcept>
#include <vector>

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

/// The batch-invariance fixtures (docs/audit.md, "Batch invariance and reproducibility"): fp32 in, accumulator and out,
/// order unknown, batch invariance declared. The variant one picks its order from M as a library picking split-K for
/// small batches does: split-K 4 below 8 rows, sequential FMA from 8 rows; each order admissible, but a row's bits
/// depend on the batch size. The invariant one sums every row sequentially by FMA whatever M.
class BatchFixture final : public CpuModel {
 public:
  BatchFixture(std::string name, bool variant, const KernelTraits& declared)
      : CpuModel(std::move(name),
                 variant ? "split-K 4 below 8 rows, sequential FMA from 8 rows (batch-variant fixture)"
                         : "sequential FMA whatever M (batch-invariant fixture)",
                 declared),
        variant_(variant) {}
  bool is_mutant() const override { return true; }
  std::vector<std::uint64_t> compute(const DecodedOperands& d) const override {
    KernelTraits t = traits();
    t.sum_order = variant_ && d.m < 8 ? SummationOrder::split_k(4) : SummationOrder::sequential(StepKind::Fma);
    return emulate_gemm(t, d.m, d.n, d.k, d.a, d.b);
  }

 private:
  bool variant_;
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

/// fp32 operands read as TF32 (a kernel that lets the tensor cores narrow fp32 inputs: cuBLAS's default TF32 mode,
/// torch.backends.cuda.matmul.allow_tf32): A and B copied, each value rounded to tf32 nearest-away as cvt.rna does
/// (kept in its fp32 container), then the wrapped kernel called on the copies.
class Tf32InputsMutant final : public OutputMutant {
 public:
  explicit Tf32InputsMutant(std::unique_ptr<GemmKernel> w) : OutputMutant(std::move(w), "inputs_tf32") {}
  std::string description() const override { return "fp32 inputs read as tf32 (rna)"; }
  void run(const GemmOperands& ops) override {
    std::vector<std::uint32_t> a = narrowed(ops.a, extent(ops.a_layout, ops.m, ops.k, ops.lda));
    std::vector<std::uint32_t> b = narrowed(ops.b, extent(ops.b_layout, ops.k, ops.n, ops.ldb));
    GemmOperands o = ops;
    o.a = a.data();
    o.b = b.data();
    w_->run(o);
  }

 private:
  static std::int64_t extent(Layout l, std::int64_t rows, std::int64_t cols, std::int64_t ld) {
    if (rows == 0 || cols == 0) return 0;
    return l == Layout::RowMajor ? (rows - 1) * ld + cols : (cols - 1) * ld + rows;
  }
  static std::vector<std::uint32_t> narrowed(const void* src, std::int64_t count) {
    std::vector<std::uint32_t> v(static_cast<std::size_t>(count));
    const Rounder rna{Rounding::NearestAway, default_saturation(tf32), NanPayload::Preserve};
    for (std::int64_t x = 0; x < count; ++x) {
      const double d = to_double(f32, load_code(src, x, 4));
      v[static_cast<std::size_t>(x)] = static_cast<std::uint32_t>(round_double(f32, to_double(tf32, round_double(tf32, d, rna).code), Rounder::nearest(f32)).code);
    }
    return v;
  }
};

}  // namespace

std::unique_ptr<GemmKernel> make_tf32_inputs_mutant(std::unique_ptr<GemmKernel> wrapped) {
  return std::make_unique<Tf32InputsMutant>(std::move(wrapped));
}

std::unique_ptr<GemmKernel> make_emulated_kernel(std::string name, const KernelTraits& declared, const SummationOrder& computed) {
  return std::make_unique<EmulatedKernel>(std::move(name), declared, computed);
}
std::unique_ptr<GemmKernel> make_batch_fixture(bool variant) {
  KernelTraits t;  // fp32 throughout, exact products, order unknown
  t.order = "unknown (chosen from M)";
  t.batch_invariant = true;
  t.batch_invariant_note = "declared by the fixture";
  return std::make_unique<BatchFixture>(variant ? kBatchVariantFixture : kBatchInvariantFixture, variant, t);
}
void register_audit_fixtures() {
  static const bool once = [] {
    register_kernel(kBatchVariantFixture, Backend::Cpu, true, [] { return std::unique_ptr<Kernel>(make_batch_fixture(true)); });
    register_kernel(kBatchInvariantFixture, Backend::Cpu, true, [] { return std::unique_ptr<Kernel>(make_batch_fixture(false)); });
    return true;
  }();
  (void)once;
}

std::unique_ptr<GemmKernel> make_zeros_mutant(std::unique_ptr<GemmKernel> wrapped) { return std::make_unique<ZerosMutant>(std::move(wrapped)); }
std::unique_ptr<GemmKernel> make_constant_mutant(std::unique_ptr<GemmKernel> wrapped) {
  return std::make_unique<ConstantMutant>(std::move(wrapped));
}

}  // namespace fpcert
