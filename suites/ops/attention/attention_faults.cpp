// suites/ops/attention/attention_faults.cpp — the attention fault injectors (attention_faults.hpp).
#include "suites/ops/attention/attention_faults.hpp"

#include <vector>

#include "base/codes.hpp"
#include "base/error.hpp"
#include "kernels/device/device_api.hpp"
#include "suites/mutation/injector_api.hpp"

namespace fpcert {

namespace {

AttentionBug bug_of(Fault f) {
  switch (f) {
    case Fault::AttnNoRescale: return AttentionBug::NoRescale;
    case Fault::AttnScaleAfterSoftmax: return AttentionBug::ScaleAfterSoftmax;
    case Fault::AttnCausalOffByOne: return AttentionBug::CausalOffByOne;
    case Fault::AttnLseNoMax: return AttentionBug::LseNoMax;
    case Fault::AttnPRoundedLower: return AttentionBug::PRoundedLower;
    case Fault::AttnDropLastKeyBlock: return AttentionBug::DropLastKeyBlock;
    case Fault::AttnZeros: return AttentionBug::Zeros;
    default: return AttentionBug::None;
  }
}

/// A mutant under its registry name: the kernel's own faulty arithmetic, or every output +0 after the call.
class AttentionMutant final : public AttentionKernel {
 public:
  AttentionMutant(std::unique_ptr<AttentionKernel> inner, AttentionBug bug, bool blackbox, std::string name)
      : in_(std::move(inner)), bug_(bug), bb_(blackbox), name_(std::move(name)) {}
  const std::string& name() const override { return name_; }
  std::string description() const override { return in_->description() + " with fault " + std::string(to_string(bug_)); }
  Backend backend() const override { return in_->backend(); }
  MemorySpace memory() const override { return in_->memory(); }
  bool is_mutant() const override { return true; }
  const AttentionTraits& attention_traits() const override { return in_->attention_traits(); }
  Support can_implement(const AttentionShape& s, CausalAlign c, bool m) const override { return in_->can_implement(s, c, m); }
  void run(const AttentionOperands& o) override {
    in_->run(o);
    if (!bb_) return;
    api().synchronize(60'000);
    const Format& out = *in_->attention_traits().out;
    const int ob = container_bytes(out);
    const std::int64_t rows = o.shape.batch * o.shape.heads_q * o.shape.len_q;
    std::vector<std::uint8_t> y(static_cast<std::size_t>(rows * o.ldo * ob));
    if (y.empty()) return;
    api().to_host(y.data(), o.o, y.size());
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < o.shape.head_dim; ++j) store_code(y.data(), i * o.ldo + j, ob, to_container(out, 0));
    api().to_device(o.o, y.data(), y.size());
    if (!o.lse) return;
    std::vector<std::uint8_t> l(static_cast<std::size_t>(rows * 4), 0);  // +0 in fp32
    api().to_device(o.lse, l.data(), l.size());
  }

 private:
  DeviceApi& api() { return injector_api(api_, memory(), in_->name()); }

  std::unique_ptr<AttentionKernel> in_;
  AttentionBug bug_;
  bool bb_;
  std::string name_;
  std::unique_ptr<DeviceApi> api_;
};

}  // namespace

std::string attention_fault_not_applicable(Fault f, const AttentionKernel& k) {
  if (fault_info(f).operation != Operation::Attention) return "not a fault of attention kernels";
  const AttentionTraits& t = k.attention_traits();
  switch (f) {
    case Fault::AttnNoRescale:
    case Fault::AttnDropLastKeyBlock:
      if (t.shift != SoftmaxShift::Online) return "the kernel declares no online softmax (no key blocks)";
      break;
    case Fault::AttnCausalOffByOne:
      if (!(t.masks & (kAttnMaskCausalTopLeft | kAttnMaskCausalBottomRight))) return "the kernel takes no causal mask";
      break;
    case Fault::AttnLseNoMax:
      if (!t.writes_lse) return "the kernel writes no LSE";
      break;
    default: break;
  }
  const AttentionBug b = bug_of(f);
  if (b != AttentionBug::Zeros && !k.with_bug(b)) return "the kernel cannot carry this fault in its own arithmetic (a closed kernel)";
  return {};
}

std::string register_attention_mutant(const std::string& kernel, Fault f) {
  return register_own_or_wrapped_mutant<AttentionMutant>(kernel, f, Operation::Attention, "attention", bug_of(f),
                                             [](const std::string& n) { return make_attention_kernel(n); });
}

}  // namespace fpcert
