// suites/ops/norm_bwd/norm_bwd_faults.cpp — the LayerNorm / RMSNorm backward fault injectors
// (suites/ops/norm_bwd/norm_bwd_faults.hpp).
#include "suites/ops/norm_bwd/norm_bwd_faults.hpp"

#include <cstring>
#include <vector>

#include "base/codes.hpp"
#include "base/error.hpp"
#include "kernels/device/device_api.hpp"
#include "suites/mutation/injector_api.hpp"
#include "suites/mutation/row_blocks.hpp"

namespace fpcert {

namespace {

NormBwdBug bug_of(Fault f) {
  switch (f) {
    case Fault::NbwdNoMeanTerm: return NormBwdBug::NoMeanTerm;
    case Fault::NbwdNoProjTerm: return NormBwdBug::NoProjTerm;
    case Fault::NbwdGammaIgnored: return NormBwdBug::GammaIgnored;
    case Fault::NbwdRstdSquared: return NormBwdBug::RstdSquared;
    case Fault::NbwdDGammaF16: return NormBwdBug::DGammaF16;
    case Fault::NbwdDGammaNoXhat: return NormBwdBug::DGammaNoXhat;
    case Fault::NbwdZeros: return NormBwdBug::Zeros;
    default: return NormBwdBug::None;
  }
}

/// Faults that can be made around a kernel that cannot carry them.
bool black_box(NormBwdBug b) { return b == NormBwdBug::Zeros || b == NormBwdBug::GammaIgnored || b == NormBwdBug::RstdSquared; }

/// +0 into rows x cols codes of f at p (leading dimension ld) in the injector's memory.
void zero_out(DeviceApi& api, void* p, std::int64_t rows, std::int64_t cols, std::int64_t ld, const Format& f) {
  const int b = container_bytes(f);
  std::vector<std::uint8_t> y(static_cast<std::size_t>((rows - 1) * ld + cols) * static_cast<std::size_t>(b));
  if (!p || y.empty()) return;
  api.to_host(y.data(), p, y.size());
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) store_code(y.data(), i * ld + j, b, to_container(f, 0));
  api.to_device(p, y.data(), y.size());
}

/// A mutant under its registry name: the kernel's own faulty arithmetic, or the fault made around the kernel.
class NormBwdMutant final : public NormBwdKernel {
 public:
  NormBwdMutant(std::unique_ptr<NormBwdKernel> inner, NormBwdBug bug, bool blackbox, std::string name)
      : in_(std::move(inner)), bug_(bug), bb_(blackbox), name_(std::move(name)) {}
  const std::string& name() const override { return name_; }
  std::string description() const override { return in_->description() + " with fault " + std::string(to_string(bug_)); }
  Backend backend() const override { return in_->backend(); }
  MemorySpace memory() const override { return in_->memory(); }
  bool is_mutant() const override { return true; }
  const NormBwdTraits& norm_bwd_traits() const override { return in_->norm_bwd_traits(); }
  Support can_implement(std::int64_t r, std::int64_t c) const override { return in_->can_implement(r, c); }
  void run(const NormBwdOperands& o) override {
    if (!bb_) return in_->run(o);
    NormBwdOperands p = o;
    Scratch sc(api());
    if (bug_ == NormBwdBug::GammaIgnored) p.gamma = nullptr;
    if (bug_ == NormBwdBug::RstdSquared) {  // the saved rstd handed over as RN_f32(rstd^2)
      std::vector<std::uint8_t> r = sc.download(o.rstd, RowBlocks{1, o.rows, 1, 1, 4});
      for (std::int64_t i = 0; i < o.rows; ++i) {
        float v;
        std::memcpy(&v, &r[static_cast<std::size_t>(i * 4)], 4);
        v = v * v;
        std::memcpy(&r[static_cast<std::size_t>(i * 4)], &v, 4);
      }
      p.rstd = sc.upload(r);
    }
    p.stream = api().stream();
    in_->run(p);
    api().synchronize(60'000);
    if (bug_ != NormBwdBug::Zeros) return;
    const NormBwdTraits& t = in_->norm_bwd_traits();
    zero_out(api(), o.dx, o.rows, o.cols, o.lddx, *t.dx_out);
    zero_out(api(), o.dgamma, 1, o.cols, o.cols, *t.param_out);
    zero_out(api(), o.dbeta, 1, o.cols, o.cols, *t.param_out);
  }

 private:
  DeviceApi& api() { return injector_api(api_, memory(), in_->name()); }

  std::unique_ptr<NormBwdKernel> in_;
  NormBwdBug bug_;
  bool bb_;
  std::string name_;
  std::unique_ptr<DeviceApi> api_;
};

}  // namespace

std::string norm_bwd_fault_not_applicable(Fault f, const NormBwdKernel& k) {
  if (fault_info(f).operation != Operation::NormBackward) return "not a fault of norm backward kernels";
  const NormBwdTraits& t = k.norm_bwd_traits();
  switch (f) {
    case Fault::NbwdNoMeanTerm:
      if (t.kind == NormKind::RmsNorm) return "an RMSNorm backward has no mean term";
      break;
    case Fault::NbwdDGammaF16:
      if (!t.writes_param_grads) return "the kernel writes no dgamma";
      if (t.param_acc->precision() <= f16.precision()) return "the kernel sums dgamma in a format no wider than fp16";
      break;
    case Fault::NbwdDGammaNoXhat:
      if (!t.writes_param_grads) return "the kernel writes no dgamma";
      break;
    default: break;
  }
  const NormBwdBug b = bug_of(f);
  if (!black_box(b) && !k.with_bug(b)) return "the kernel cannot carry this fault in its own arithmetic (a closed kernel)";
  if (b == NormBwdBug::RstdSquared && !t.reads_saved && !k.with_bug(b))
    return "the kernel recomputes the statistics: rstd^2 is made through the saved rstd, which it does not read";
  return {};
}

std::string register_norm_bwd_mutant(const std::string& kernel, Fault f) {
  return register_own_or_wrapped_mutant<NormBwdMutant>(kernel, f, Operation::NormBackward, "norm backward", bug_of(f),
                                                       [](const std::string& n) { return make_norm_bwd_kernel(n); });
}

}  // namespace fpcert
