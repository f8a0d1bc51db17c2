// suites/ops/norm/norm_faults.cpp — the LayerNorm / RMSNorm fault injectors (suites/ops/norm/norm_faults.hpp).
#include "suites/ops/norm/norm_faults.hpp"

#include <vector>

#include "base/codes.hpp"
#include "base/error.hpp"
#include "kernels/device/device_api.hpp"
#include "suites/mutation/injector_api.hpp"

namespace fpcert {

namespace {

NormBug bug_of(Fault f) {
  switch (f) {
    case Fault::NormEpsOutsideSqrt: return NormBug::EpsOutsideSqrt;
    case Fault::NormBessel: return NormBug::Bessel;
    case Fault::NormNoMeanSubtract: return NormBug::NoMeanSubtract;
    case Fault::NormOnePassVariance: return NormBug::OnePassVariance;
    case Fault::NormF16RowSum: return NormBug::F16RowSum;
    case Fault::NormAffineSwapped: return NormBug::AffineSwapped;
    case Fault::NormAffineIgnored: return NormBug::AffineIgnored;
    case Fault::NormZeros: return NormBug::Zeros;
    default: return NormBug::None;
  }
}

/// Faults that can be made around a kernel that cannot carry them.
bool black_box(NormBug b) { return b == NormBug::Zeros || b == NormBug::AffineSwapped || b == NormBug::AffineIgnored; }

/// A mutant under its registry name: the kernel's own faulty arithmetic, or the fault made around the kernel.
class NormMutant final : public NormKernel {
 public:
  NormMutant(std::unique_ptr<NormKernel> inner, NormBug bug, bool blackbox, std::string name)
      : in_(std::move(inner)), bug_(bug), bb_(blackbox), name_(std::move(name)) {}
  const std::string& name() const override { return name_; }
  std::string description() const override { return in_->description() + " with fault " + std::string(to_string(bug_)); }
  Backend backend() const override { return in_->backend(); }
  MemorySpace memory() const override { return in_->memory(); }
  bool is_mutant() const override { return true; }
  const NormTraits& norm_traits() const override { return in_->norm_traits(); }
  Support can_implement(std::int64_t r, std::int64_t c) const override { return in_->can_implement(r, c); }
  void run(const NormOperands& o) override {
    if (!bb_) return in_->run(o);
    NormOperands p = o;
    if (bug_ == NormBug::AffineSwapped) std::swap(p.gamma, p.beta);
    if (bug_ == NormBug::AffineIgnored) p.gamma = p.beta = nullptr;
    p.stream = api().stream();
    in_->run(p);
    api().synchronize(60'000);
    if (bug_ != NormBug::Zeros) return;
    const Format& out = *in_->norm_traits().arith.out;
    const int ob = container_bytes(out);
    std::vector<std::uint8_t> y(static_cast<std::size_t>(o.rows * o.ldo * ob));
    if (y.empty()) return;
    api().to_host(y.data(), o.out, y.size());
    for (std::int64_t i = 0; i < o.rows; ++i)
      for (std::int64_t j = 0; j < o.cols; ++j) store_code(y.data(), i * o.ldo + j, ob, to_container(out, 0));
    api().to_device(o.out, y.data(), y.size());
  }

 private:
  DeviceApi& api() { return injector_api(api_, memory(), in_->name()); }

  std::unique_ptr<NormKernel> in_;
  NormBug bug_;
  bool bb_;
  std::string name_;
  std::unique_ptr<DeviceApi> api_;
};

}  // namespace

std::string norm_fault_not_applicable(Fault f, const NormKernel& k) {
  if (fault_info(f).operation != Operation::Norm) return "not a fault of norm kernels";
  const NormArith& a = k.norm_traits().arith;
  switch (f) {
    case Fault::NormNoMeanSubtract:
      if (a.kind == NormKind::RmsNorm) return "an RMSNorm subtracts no mean";
      break;
    case Fault::NormOnePassVariance:
      if (a.kind == NormKind::RmsNorm) return "an RMSNorm computes no variance";
      if (a.variance == NormVariance::OnePass) return "the kernel declares the one-pass variance";
      break;
    case Fault::NormF16RowSum:
      if (a.acc->precision() <= f16.precision()) return "the kernel sums in a format no wider than fp16";
      break;
    default: break;
  }
  const NormBug b = bug_of(f);
  if (!black_box(b) && !k.with_bug(b)) return "the kernel cannot carry this fault in its own arithmetic (a closed kernel)";
  return {};
}

std::string register_norm_mutant(const std::string& kernel, Fault f) {
  return register_own_or_wrapped_mutant<NormMutant>(kernel, f, Operation::Norm, "norm", bug_of(f),
                                             [](const std::string& n) { return make_norm_kernel(n); });
}

}  // namespace fpcert
