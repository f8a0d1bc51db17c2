// suites/ops/softmax/softmax_faults.cpp — the softmax fault injectors (suites/ops/softmax/softmax_faults.hpp).
#include "suites/ops/softmax/softmax_faults.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "base/codes.hpp"
#include "base/error.hpp"
#include "kernels/device/device_api.hpp"
#include "suites/mutation/injector_api.hpp"

namespace fpcert {

namespace {

SoftmaxBug bug_of(Fault f) {
  switch (f) {
    case Fault::SmxNoMaxShift: return SoftmaxBug::NoMaxShift;
    case Fault::SmxWrongRescale: return SoftmaxBug::WrongRescale;
    case Fault::SmxMaskAfterExp: return SoftmaxBug::MaskAfterExp;
    case Fault::SmxF16RowSum: return SoftmaxBug::F16RowSum;
    case Fault::SmxNanMaskedRows: return SoftmaxBug::NanMaskedRows;
    case Fault::SmxZeros: return SoftmaxBug::Zeros;
    default: return SoftmaxBug::None;
  }
}

/// Faults that can be made around a kernel that cannot carry them.
bool black_box(SoftmaxBug b) { return b == SoftmaxBug::Zeros || b == SoftmaxBug::NanMaskedRows || b == SoftmaxBug::MaskAfterExp; }

/// A mutant under its registry name: the kernel's own faulty arithmetic (inner carries the bug), or the fault made
/// around the kernel (blackbox). Buffers are reached through a DeviceApi of the kernel's memory space.
class SoftmaxMutant final : public SoftmaxKernel {
 public:
  SoftmaxMutant(std::unique_ptr<SoftmaxKernel> inner, SoftmaxBug bug, bool blackbox, std::string name)
      : in_(std::move(inner)), bug_(bug), bb_(blackbox), name_(std::move(name)) {}
  const std::string& name() const override { return name_; }
  std::string description() const override { return in_->description() + " with fault " + std::string(to_string(bug_)); }
  Backend backend() const override { return in_->backend(); }
  MemorySpace memory() const override { return in_->memory(); }
  bool is_mutant() const override { return true; }
  const SoftmaxTraits& softmax_traits() const override { return in_->softmax_traits(); }
  Support can_implement(std::int64_t r, std::int64_t c, bool m) const override { return in_->can_implement(r, c, m); }
  void run(const SoftmaxOperands& o) override {
    if (!bb_) return in_->run(o);
    const SoftmaxTraits& t = in_->softmax_traits();
    const Format& out = *t.arith.out;
    const int ob = container_bytes(out);
    SoftmaxOperands p = o;
    if (bug_ == SoftmaxBug::MaskAfterExp) p.mask = nullptr;
    call(p);
    std::vector<std::uint8_t> y(static_cast<std::size_t>(o.rows * o.ldo * ob));
    std::vector<std::uint8_t> m(o.mask ? static_cast<std::size_t>(o.rows * o.ldm * 4) : 0);
    if (!y.empty()) api().to_host(y.data(), o.out, y.size());
    if (!m.empty()) api().to_host(m.data(), o.mask, m.size());
    auto masked = [&](std::int64_t i, std::int64_t j) {
      if (m.empty()) return false;
      const auto bits = static_cast<std::uint32_t>(load_code(m.data(), i * o.ldm + j, 4));
      float v;
      std::memcpy(&v, &bits, 4);
      return v == -std::numeric_limits<float>::infinity();
    };
    const std::uint64_t zero = 0, nan = out.canonical_nan_code();
    const std::uint64_t hole = t.arith.fn == SoftmaxFn::Softmax ? zero : out.inf_code() | out.sign_mask();
    for (std::int64_t i = 0; i < o.rows; ++i) {
      bool all = o.cols > 0;
      for (std::int64_t j = 0; j < o.cols; ++j) all = all && masked(i, j);
      for (std::int64_t j = 0; j < o.cols; ++j) {
        const std::int64_t at = i * o.ldo + j;
        if (bug_ == SoftmaxBug::Zeros) store_code(y.data(), at, ob, to_container(out, zero));
        if (bug_ == SoftmaxBug::NanMaskedRows && all) store_code(y.data(), at, ob, to_container(out, nan));
        if (bug_ == SoftmaxBug::MaskAfterExp && masked(i, j)) store_code(y.data(), at, ob, to_container(out, hole));
      }
    }
    if (!y.empty()) api().to_device(o.out, y.data(), y.size());
  }

 private:
  DeviceApi& api() { return injector_api(api_, memory(), in_->name()); }
  void call(const SoftmaxOperands& o) {
    SoftmaxOperands x = o;
    x.stream = api().stream();
    in_->run(x);
    api().synchronize(60'000);
  }

  std::unique_ptr<SoftmaxKernel> in_;
  SoftmaxBug bug_;
  bool bb_;
  std::string name_;
  std::unique_ptr<DeviceApi> api_;
};

}  // namespace

std::string softmax_fault_not_applicable(Fault f, const SoftmaxKernel& k) {
  if (fault_info(f).operation != Operation::Softmax) return "not a fault of softmax kernels";
  const SoftmaxTraits& t = k.softmax_traits();
  switch (f) {
    case Fault::SmxNoMaxShift:
      if (t.arith.shift == SoftmaxShift::Unshifted) return "the kernel declares an unshifted softmax";
      break;
    case Fault::SmxWrongRescale:
      if (t.arith.shift != SoftmaxShift::Online) return "only an online softmax rescales a running sum";
      break;
    case Fault::SmxMaskAfterExp:
      if (!t.accepts_mask) return "the kernel takes no mask";
      break;
    case Fault::SmxF16RowSum:
      if (t.arith.sum_acc->precision() <= f16.precision()) return "the kernel sums in a format no wider than fp16";
      break;
    case Fault::SmxNanMaskedRows:
      if (t.masked_rows == MaskedRowPolicy::Nan) return "the kernel declares NaN for fully masked rows";
      break;
    default: break;
  }
  const SoftmaxBug b = bug_of(f);
  if (!black_box(b) && !k.with_bug(b)) return "the kernel cannot carry this fault in its own arithmetic (a closed kernel)";
  return {};
}

std::string register_softmax_mutant(const std::string& kernel, Fault f) {
  return register_own_or_wrapped_mutant<SoftmaxMutant>(kernel, f, Operation::Softmax, "softmax", bug_of(f),
                                             [](const std::string& n) { return make_softmax_kernel(n); });
}

}  // namespace fpcert
