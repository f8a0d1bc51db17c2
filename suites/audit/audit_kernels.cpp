// suites/audit/audit_kernels.cpp — the emulated declaration and the audit's black-box mutants (audit_kernels.hpp).
#include "suites/audit/audit_kernels.hpp"

#include <cmath>
#include <functional>
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

/// Operands narrowed before the call: A and B copied, each value rounded by `narrow` (kept in its container), then the
/// wrapped kernel called on the copies. inputs_tf32: fp32 read as TF32 (a kernel that lets the tensor cores narrow fp32
/// inputs: cuBLAS's default TF32 mode, torch.backends.cuda.matmul.allow_tf32), nearest-away as cvt.rna does.
/// inputs_narrowed: 16-bit inputs rounded to 3 fewer significant bits, nearest even (f16 to bf16's 8, bf16 to 5: an
/// operand staged through a narrower format), back into the input format.
class NarrowedInputsMutant final : public OutputMutant {
 public:
  NarrowedInputsMutant(std::unique_ptr<GemmKernel> w, const char* id, std::function<double(double)> narrow)
      : OutputMutant(std::move(w), id), narrow_(std::move(narrow)) {}
  std::string description() const override { return "inputs narrowed before the call"; }
  void run(const GemmOperands& ops) override {
    std::vector<std::uint64_t> a = narrowed(*traits().a_input, ops.a, extent(ops.a_layout, ops.m, ops.k, ops.lda));
    std::vector<std::uint64_t> b = narrowed(*traits().b_input, ops.b, extent(ops.b_layout, ops.k, ops.n, ops.ldb));
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
  /// The codes in a buffer of 8-byte slots read back through the format's container width: packed as the kernel reads
  /// them (store_code of the container's width).
  std::vector<std::uint64_t> narrowed(const Format& f, const void* src, std::int64_t count) const {
    const int bytes = container_bytes(f);
    std::vector<std::uint64_t> v(static_cast<std::size_t>((count * bytes + 7) / 8) + 1);
    for (std::int64_t x = 0; x < count; ++x) {
      const double d = to_double(f, load_code(src, x, bytes));
      store_code(v.data(), x, bytes, round_double(f, narrow_(d), Rounder::nearest(f)).code);
    }
    return v;
  }
  std::function<double(double)> narrow_;
};

/// Every output times (1 + 2^-7), rounded into the output format: a wrong epilogue constant (0.0447 for GELU's
/// 0.044715, a misrounded alpha, a scale off by a small factor).
class EpilogueConstantMutant final : public OutputMutant {
 public:
  explicit EpilogueConstantMutant(std::unique_ptr<GemmKernel> w) : OutputMutant(std::move(w), "epilogue_constant") {}
  std::string description() const override { return "every output times (1 + 2^-7)"; }
  void run(const GemmOperands& ops) override {
    w_->run(ops);
    const Format& out = *traits().out;
    const int bytes = container_bytes(out);
    for (std::int64_t i = 0; i < ops.m; ++i)
      for (std::int64_t j = 0; j < ops.n; ++j) {
        const std::int64_t x = i * ops.ldc + j;
        store_code(ops.c, x, bytes, round_double(out, to_double(out, load_code(ops.c, x, bytes)) * (1 + 0x1p-7), Rounder::nearest(out)).code);
      }
  }
};

/// A reused output buffer: the result of the previous call of the same shape written again (the first call, and a
/// call of another shape, compute). Its state is shared by the mutants one power row makes, one per seed: the first
/// seed's outputs are right, every later seed gets the previous seed's.
class ReusedOutputMutant final : public OutputMutant {
 public:
  ReusedOutputMutant(std::unique_ptr<GemmKernel> w, std::shared_ptr<ReusedOutput> last) : OutputMutant(std::move(w), "reused_output"), last_(std::move(last)) {}
  std::string description() const override { return "the previous call's output"; }
  void run(const GemmOperands& ops) override {
    const int bytes = container_bytes(*traits().out);
    const std::uint64_t h = hash_a(ops);
    if (last_->m == ops.m && last_->n == ops.n && last_->a_hash != h) {
      for (std::int64_t i = 0; i < ops.m; ++i)
        for (std::int64_t j = 0; j < ops.n; ++j) store_code(ops.c, i * ops.ldc + j, bytes, last_->codes[static_cast<std::size_t>(i * ops.n + j)]);
      return;
    }
    w_->run(ops);
    last_->m = ops.m, last_->n = ops.n, last_->a_hash = h;
    last_->codes.assign(static_cast<std::size_t>(ops.m * ops.n), 0);
    for (std::int64_t i = 0; i < ops.m; ++i)
      for (std::int64_t j = 0; j < ops.n; ++j) last_->codes[static_cast<std::size_t>(i * ops.n + j)] = load_code(ops.c, i * ops.ldc + j, bytes);
  }

 private:
  /// FNV-1a of A's codes: a repeated run of the same case (same A) computes again.
  std::uint64_t hash_a(const GemmOperands& ops) const {
    const int bytes = container_bytes(*traits().a_input);
    std::uint64_t h = 1469598103934665603ull;
    for (std::int64_t i = 0; i < ops.m; ++i)
      for (std::int64_t p = 0; p < ops.k; ++p) {
        const std::int64_t x = ops.a_layout == Layout::RowMajor ? i * ops.lda + p : p * ops.lda + i;
        h = (h ^ load_code(ops.a, x, bytes)) * 1099511628211ull;
      }
    return h;
  }
  std::shared_ptr<ReusedOutput> last_;
};

/// x rounded to `bits` significant bits, nearest even (0, Inf and NaN as they are).
double round_to_bits(double x, int bits) {
  if (x == 0 || !std::isfinite(x)) return x;
  const int e = std::ilogb(x);
  return std::ldexp(std::nearbyint(std::ldexp(x, bits - 1 - e)), e - (bits - 1));
}

}  // namespace

std::unique_ptr<GemmKernel> make_tf32_inputs_mutant(std::unique_ptr<GemmKernel> wrapped) {
  const Rounder rna{Rounding::NearestAway, default_saturation(tf32), NanPayload::Preserve};
  return std::make_unique<NarrowedInputsMutant>(std::move(wrapped), "inputs_tf32",
                                                [rna](double d) { return to_double(tf32, round_double(tf32, d, rna).code); });
}
std::unique_ptr<GemmKernel> make_narrowed_inputs_mutant(std::unique_ptr<GemmKernel> wrapped) {
  const int bits = wrapped->traits().a_input->precision() - 3;
  return std::make_unique<NarrowedInputsMutant>(std::move(wrapped), "inputs_narrowed", [bits](double d) { return round_to_bits(d, bits); });
}
std::unique_ptr<GemmKernel> make_epilogue_constant_mutant(std::unique_ptr<GemmKernel> wrapped) {
  return std::make_unique<EpilogueConstantMutant>(std::move(wrapped));
}
std::unique_ptr<GemmKernel> make_reused_output_mutant(std::unique_ptr<GemmKernel> wrapped, std::shared_ptr<ReusedOutput> last) {
  return std::make_unique<ReusedOutputMutant>(std::move(wrapped), std::move(last));
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
