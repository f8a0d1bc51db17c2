// kernels/gemm/cpu/mutants.cpp — kernels with one injected fault each, for `fpcert selftest`: every one
// must be caught by the suites, while the honest model each wraps must pass.
//
// Each mutant claims the traits of the honest model it wraps; the fault is what the framework
// has to notice without being told.
#include <cmath>
#include <limits>

#include "base/codes.hpp"
#include "kernels/gemm/cpu/model.hpp"
#include "kernels/register.hpp"

namespace fpcert {
namespace {

enum class Fault {
  WrongElement,    ///< one output element far off
  KShort,          ///< the K loop stops one product short
  WritesNaN,       ///< one output element NaN
  UnwrittenRow,    ///< the last row is never written
  OutOfBounds,     ///< one element written just past the end of C
  AccTruncatedF16, ///< claims an fp32 accumulator, accumulates in fp16
  NonDeterministic ///< odd calls sum K in the other order
};

class Mutant final : public GemmKernel {
 public:
  Mutant(std::string name, std::string desc, Fault f, const std::string& honest, const std::string& actual = "")
      : name_(std::move(name)), desc_(std::move(desc)), fault_(f), honest_(make_cpu_model(honest)),
        actual_(actual.empty() ? nullptr : make_cpu_model(actual)) {}
  const std::string& name() const override { return name_; }
  std::string description() const override { return desc_ + " (mutant of " + honest_->name() + ")"; }
  Backend backend() const override { return Backend::Cpu; }
  const KernelTraits& traits() const override { return honest_->traits(); }
  bool is_mutant() const override { return true; }

  void run(const GemmOperands& ops) override {
    const KernelTraits& t = traits();
    const int cb = container_bytes(*t.out);
    auto value = [&](std::int64_t i, std::int64_t j) { return to_double(*t.out, from_container(*t.out, load_code(ops.c, i * ops.ldc + j, cb))); };
    auto set = [&](std::int64_t i, std::int64_t j, double v) {
      store_code(ops.c, i * ops.ldc + j, cb, to_container(*t.out, round_double(*t.out, v, Rounder::nearest(*t.out)).code));
    };
    switch (fault_) {
      case Fault::WrongElement: {
        honest_->run(ops);
        double mx = 0;
        for (std::int64_t i = 0; i < ops.m; ++i)
          for (std::int64_t j = 0; j < ops.n; ++j) mx = std::max(mx, std::fabs(value(i, j)));
        const std::int64_t i = ops.m / 2, j = ops.n / 2;
        set(i, j, value(i, j) + 2 * mx + 1);  // off by more than twice the largest result: beyond any gate with rtol < 1
        break;
      }
      case Fault::KShort: {
        GemmOperands short_ops = ops;
        short_ops.k = ops.k > 0 ? ops.k - 1 : 0;
        honest_->run(short_ops);
        break;
      }
      case Fault::WritesNaN:
        honest_->run(ops);
        set(0, 0, std::numeric_limits<double>::quiet_NaN());
        break;
      case Fault::UnwrittenRow: {
        std::vector<std::uint8_t> scratch(static_cast<std::size_t>(ops.m * ops.ldc * cb));
        GemmOperands o = ops;
        o.c = scratch.data();
        honest_->run(o);
        for (std::int64_t i = 0; i + 1 < ops.m; ++i)  // rows 0..m-2, the n written columns of each
          std::memcpy(static_cast<std::uint8_t*>(ops.c) + i * ops.ldc * cb, scratch.data() + i * ops.ldc * cb,
                      static_cast<std::size_t>(ops.n * cb));
        break;
      }
      case Fault::OutOfBounds:
        honest_->run(ops);
        store_code(ops.c, ops.m * ops.ldc, cb, 0);  // one element past the end (the runner's guard region)
        break;
      case Fault::AccTruncatedF16: {
        // Compute with the fp16-accumulating model and widen its fp16 result to the claimed fp32.
        std::vector<std::uint16_t> half(static_cast<std::size_t>(ops.m * ops.n));
        GemmOperands o = ops;
        o.c = half.data();
        o.ldc = ops.n;
        actual_->run(o);
        for (std::int64_t i = 0; i < ops.m; ++i)
          for (std::int64_t j = 0; j < ops.n; ++j) set(i, j, to_double(f16, half[static_cast<std::size_t>(i * ops.n + j)]));
        break;
      }
      case Fault::NonDeterministic: {
        honest_->run(ops);
        if (++calls_ % 2 == 0) {
          // An order change on every second call: sum K descending instead (as atomics might).
          const DecodedOperands d = CpuModel::decode(ops, t);
          for (std::int64_t i = 0; i < ops.m; ++i)
            for (std::int64_t j = 0; j < ops.n; ++j) {
              float acc = 0.0f;
              for (std::int64_t p = ops.k - 1; p >= 0; --p)
                acc = std::fma(static_cast<float>(d.A(i, p)), static_cast<float>(d.B(p, j)), acc);
              set(i, j, acc);
            }
        }
        break;
      }
    }
  }

 private:
  std::string name_, desc_;
  Fault fault_;
  std::unique_ptr<CpuModel> honest_, actual_;
  int calls_ = 0;
};

template <int I>
std::unique_ptr<GemmKernel> make();
template <>
std::unique_ptr<GemmKernel> make<0>() { return std::make_unique<Mutant>("mutant_wrong_element", "one element off by 2 max|C| + 1", Fault::WrongElement, "model_gemm_f32"); }
template <>
std::unique_ptr<GemmKernel> make<1>() { return std::make_unique<Mutant>("mutant_k_short", "K loop stops one product short", Fault::KShort, "model_gemm_f32"); }
template <>
std::unique_ptr<GemmKernel> make<2>() { return std::make_unique<Mutant>("mutant_writes_nan", "writes NaN into C[0][0]", Fault::WritesNaN, "model_gemm_f32"); }
template <>
std::unique_ptr<GemmKernel> make<3>() { return std::make_unique<Mutant>("mutant_unwritten_row", "never writes the last row", Fault::UnwrittenRow, "model_gemm_f32"); }
template <>
std::unique_ptr<GemmKernel> make<4>() { return std::make_unique<Mutant>("mutant_out_of_bounds", "writes one element past the end of C", Fault::OutOfBounds, "model_gemm_f32"); }
template <>
std::unique_ptr<GemmKernel> make<5>() {
  return std::make_unique<Mutant>("mutant_acc_f16", "claims an fp32 accumulator, accumulates in fp16", Fault::AccTruncatedF16,
                                  "model_gemm_f16_f32acc", "model_gemm_f16_f16acc");
}
template <>
std::unique_ptr<GemmKernel> make<6>() { return std::make_unique<Mutant>("mutant_nondeterministic", "every second call sums K in reverse", Fault::NonDeterministic, "model_gemm_f32"); }

}  // namespace

void register_mutants() {
  register_kernel("mutant_wrong_element", Backend::Cpu, true, &make<0>);
  register_kernel("mutant_k_short", Backend::Cpu, true, &make<1>);
  register_kernel("mutant_writes_nan", Backend::Cpu, true, &make<2>);
  register_kernel("mutant_unwritten_row", Backend::Cpu, true, &make<3>);
  register_kernel("mutant_out_of_bounds", Backend::Cpu, true, &make<4>);
  register_kernel("mutant_acc_f16", Backend::Cpu, true, &make<5>);
  register_kernel("mutant_nondeterministic", Backend::Cpu, true, &make<6>);
}

}  // namespace fpcert
