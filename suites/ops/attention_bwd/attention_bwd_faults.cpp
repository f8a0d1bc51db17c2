// suites/ops/attention_bwd/attention_bwd_faults.cpp — the attention backward fault injectors (attention_bwd_faults.hpp).
#include "suites/ops/attention_bwd/attention_bwd_faults.hpp"

#include <vector>

#include "base/codes.hpp"
#include "base/error.hpp"
#include "kernels/device/device_api.hpp"
#include "oracle/round.hpp"
#include "suites/mutation/injector_api.hpp"

namespace fpcert {

namespace {

AttentionBwdBug bug_of(Fault f) {
  switch (f) {
    case Fault::AbwdDFromWrongO: return AttentionBwdBug::DFromWrongO;
    case Fault::AbwdNoDSubtract: return AttentionBwdBug::NoDSubtract;
    case Fault::AbwdDqScaleMissing: return AttentionBwdBug::DqScaleMissing;
    case Fault::AbwdDqScaleTwice: return AttentionBwdBug::DqScaleTwice;
    case Fault::AbwdLseWrongBase: return AttentionBwdBug::LseWrongBase;
    case Fault::AbwdGqaNotSummed: return AttentionBwdBug::GqaNotSummed;
    case Fault::AbwdDqAtomicsBf16: return AttentionBwdBug::DqAtomicsBf16;
    case Fault::AbwdCausalOffByOne: return AttentionBwdBug::CausalOffByOne;
    case Fault::AbwdZeros: return AttentionBwdBug::Zeros;
    default: return AttentionBwdBug::None;
  }
}

/// The faults made around a closed kernel.
bool black_box(AttentionBwdBug b) {
  return b == AttentionBwdBug::Zeros || b == AttentionBwdBug::DqScaleMissing || b == AttentionBwdBug::DqScaleTwice;
}

/// A mutant under its registry name: the kernel's own faulty arithmetic, or after the call every output +0 (Zeros) or
/// dQ multiplied by s (DqScaleTwice) or divided by s (DqScaleMissing), each rounded to nearest into dQ's format.
class AttentionBwdMutant final : public AttentionBwdKernel {
 public:
  AttentionBwdMutant(std::unique_ptr<AttentionBwdKernel> inner, AttentionBwdBug bug, bool blackbox, std::string name)
      : in_(std::move(inner)), bug_(bug), bb_(blackbox), name_(std::move(name)) {}
  const std::string& name() const override { return name_; }
  std::string description() const override { return in_->description() + " with fault " + std::string(to_string(bug_)); }
  Backend backend() const override { return in_->backend(); }
  MemorySpace memory() const override { return in_->memory(); }
  bool is_mutant() const override { return true; }
  const AttentionBwdTraits& attention_bwd_traits() const override { return in_->attention_bwd_traits(); }
  Support can_implement(const AttentionShape& s, CausalAlign c, bool m) const override { return in_->can_implement(s, c, m); }
  void run(const AttentionBwdOperands& o) override {
    in_->run(o);
    if (!bb_) return;
    api().synchronize(60'000);
    const AttentionBwdTraits& t = in_->attention_bwd_traits();
    const std::int64_t rows = o.shape.batch * o.shape.heads_q * o.shape.len_q, kvrows = o.shape.batch * o.shape.heads_kv * o.shape.len_k;
    auto edit = [&](void* p, std::int64_t n, std::int64_t ld, const Format& f, double factor) {
      const int eb = container_bytes(f);
      std::vector<std::uint8_t> y(static_cast<std::size_t>(n * ld * eb));
      if (y.empty()) return;
      api().to_host(y.data(), p, y.size());
      for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t j = 0; j < o.shape.head_dim; ++j) {
          const double x = factor == 0 ? 0.0 : to_double(f, from_container(f, load_code(y.data(), i * ld + j, eb))) * factor;
          store_code(y.data(), i * ld + j, eb, to_container(f, round_double(f, x, Rounder::nearest(f)).code));
        }
      api().to_device(p, y.data(), y.size());
    };
    if (bug_ == AttentionBwdBug::Zeros) {
      edit(o.dq, rows, o.lddq, *t.dq_out, 0);
      edit(o.dk, kvrows, o.lddk, *t.dk_out, 0);
      edit(o.dv, kvrows, o.lddv, *t.dv_out, 0);
    } else {
      const double s = static_cast<double>(o.scale);
      edit(o.dq, rows, o.lddq, *t.dq_out, bug_ == AttentionBwdBug::DqScaleTwice ? s : 1 / s);
    }
  }

 private:
  DeviceApi& api() { return injector_api(api_, memory(), in_->name()); }

  std::unique_ptr<AttentionBwdKernel> in_;
  AttentionBwdBug bug_;
  bool bb_;
  std::string name_;
  std::unique_ptr<DeviceApi> api_;
};

}  // namespace

std::string attention_bwd_fault_not_applicable(Fault f, const AttentionBwdKernel& k) {
  if (fault_info(f).operation != Operation::AttentionBackward) return "not a fault of attention backward kernels";
  const AttentionBwdTraits& t = k.attention_bwd_traits();
  const AttentionBwdBug b = bug_of(f);
  switch (b) {
    case AttentionBwdBug::CausalOffByOne:
      if (!(t.masks & (kAttnMaskCausalTopLeft | kAttnMaskCausalBottomRight))) return "the kernel takes no causal mask";
      break;
    case AttentionBwdBug::GqaNotSummed:
      if (!t.grouped_heads) return "the kernel takes no grouped-query heads";
      break;
    case AttentionBwdBug::DqAtomicsBf16:
      if (t.dq_acc->precision() <= bf16.precision()) return "the kernel declares dQ's partials in a format no wider than bf16";
      // dQ stored in bf16: partials added in bf16 are roundings of the output's own size, each within u_bf16 sum |dS| |k|,
      // which dS's own rounding into bf16 already allows (the bound cannot tell them apart).
      if (t.dq_out->precision() <= bf16.precision()) return "dQ is stored in bf16: partials added in bf16 stay within dS's rounding";
      break;
    case AttentionBwdBug::DFromWrongO:
    case AttentionBwdBug::LseWrongBase:
      if (!t.reads_saved) return "the kernel recomputes the forward (it reads neither the saved O nor the LSE)";
      break;
    default: break;
  }
  if (!black_box(b) && !k.with_bug(b)) return "the kernel cannot carry this fault in its own arithmetic (a closed kernel)";
  return {};
}

std::string register_attention_bwd_mutant(const std::string& kernel, Fault f) {
  return register_own_or_wrapped_mutant<AttentionBwdMutant>(kernel, f, Operation::AttentionBackward, "attention backward", bug_of(f),
                                                            [](const std::string& n) { return make_attention_bwd_kernel(n); });
}

}  // namespace fpcert
