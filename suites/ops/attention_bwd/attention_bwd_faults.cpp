// suites/ops/attention_bwd/attention_bwd_faults.cpp — the attention backward fault injectors (attention_bwd_faults.hpp).
#include "suites/ops/attention_bwd/attention_bwd_faults.hpp"

#include <vector>

#include "base/codes.hpp"
#include "base/error.hpp"
#include "kernels/device/device_api.hpp"
#include "suites/mutation/injector_api.hpp"
#include "suites/mutation/row_blocks.hpp"

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

/// The faults made around a closed kernel (docs/mutation.md, "Faults made around a closed kernel").
bool black_box(AttentionBwdBug b) {
  switch (b) {
    case AttentionBwdBug::Zeros:
    case AttentionBwdBug::DqScaleMissing:
    case AttentionBwdBug::DqScaleTwice:
    case AttentionBwdBug::DFromWrongO:
    case AttentionBwdBug::NoDSubtract:
    case AttentionBwdBug::LseWrongBase:
    case AttentionBwdBug::CausalOffByOne: return true;
    default: return false;
  }
}

/// A mutant under its registry name: the kernel's own faulty arithmetic, or the fault made around it. After the call:
/// every output +0 (Zeros), dQ multiplied by s (DqScaleTwice) or divided by s (DqScaleMissing), each rounded to nearest
/// into dQ's format. By the call it is given: dO passed as the saved O (DFromWrongO: D = rowsum(dO o dO)); O = 0 (NoDSubtract:
/// D = 0, so dS = P dP); the LSE in the other base (LseWrongBase: RN(LSE RN(log2 e)) to a natural-form kernel, which then
/// forms exp(z - LSE log2 e), RN(LSE RN(ln 2)) to a base-2 folded one, which then forms exp2(z2 - LSE)); the causal mask
/// off by one as the forward's injector makes it (an additive mask, or one zero query, output gradient and LSE 0 in front
/// for a top-left mask and one zero key and value behind).
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
  Support can_implement(const AttentionShape& s, CausalAlign c, bool m) const override {
    const Support own = in_->can_implement(s, c, m);
    if (!bb_ || !own.ok || bug_ != AttentionBwdBug::CausalOffByOne || c == CausalAlign::None) return own;
    if (in_->can_implement(s, CausalAlign::None, true).ok || in_->can_implement(causal_padded_shape(s, c), c, m).ok) return own;
    return Support::no("the fault is made around the kernel by an additive mask or by one more query and key, and it takes neither here");
  }
  void run(const AttentionBwdOperands& o) override {
    if (!bb_) return in_->run(o);
    const AttentionBwdTraits& t = in_->attention_bwd_traits();
    Scratch sc(api());
    const std::int64_t bh = o.shape.batch * o.shape.heads_q, bkv = o.shape.batch * o.shape.heads_kv, d = o.shape.head_dim;
    const std::int64_t lq = o.shape.len_q, lk = o.shape.len_k;
    const int ib = container_bytes(*t.input);
    const RowBlocks dql{bh, lq, o.lddq, d, container_bytes(*t.dq_out)}, dkl{bkv, lk, o.lddk, d, container_bytes(*t.dk_out)},
        dvl{bkv, lk, o.lddv, d, container_bytes(*t.dv_out)}, ll{bh, lq, 1, 1, 4};
    AttentionBwdOperands u = o;
    switch (bug_) {
      case AttentionBwdBug::DFromWrongO:
        u.o = o.d_o;
        u.ldo = o.lddo;
        break;
      case AttentionBwdBug::NoDSubtract:
        u.o = sc.upload(std::vector<std::uint8_t>(static_cast<std::size_t>(RowBlocks{bh, lq, o.ldo, d, ib}.elements() * ib), 0));
        break;
      case AttentionBwdBug::LseWrongBase: {
        void* l = sc.relaid(o.lse, ll, lq, 0, 1);
        sc.scale(l, ll, f32, t.exp_form == AttentionExpForm::Natural ? 0x1.715476p+0 : 0x1.62e43p-1);  // RN_f32(log2 e), RN_f32(ln 2)
        u.lse = l;
        break;
      }
      case AttentionBwdBug::CausalOffByOne: {
        if (o.causal == CausalAlign::None) break;
        if (in_->can_implement(o.shape, CausalAlign::None, true).ok) {
          u.mask = sc.causal_mask(o.mask, o.ldm, lq, lk, causal_diagonal(o.shape, o.causal) + 1);
          u.ldm = lk;
          u.causal = CausalAlign::None;
          break;
        }
        const std::int64_t front = o.causal == CausalAlign::TopLeft ? 1 : 0;
        u.shape = causal_padded_shape(o.shape, o.causal);
        u.q = sc.relaid(o.q, RowBlocks{bh, lq, o.ldq, d, ib}, lq + front, front, d);
        u.o = sc.relaid(o.o, RowBlocks{bh, lq, o.ldo, d, ib}, lq + front, front, d);
        u.d_o = sc.relaid(o.d_o, RowBlocks{bh, lq, o.lddo, d, ib}, lq + front, front, d);
        u.lse = sc.relaid(o.lse, ll, lq + front, front, 1);  // the zero query sees key 0 alone at score 0: LSE 0 exactly
        u.k = sc.relaid(o.k, RowBlocks{bkv, lk, o.ldk, d, ib}, lk + 1, 0, d);
        u.v = sc.relaid(o.v, RowBlocks{bkv, lk, o.ldv, d, ib}, lk + 1, 0, d);
        u.ldq = u.ldo = u.lddo = u.ldk = u.ldv = d;
        if (o.mask) {
          u.mask = sc.relaid(o.mask, RowBlocks{1, lq, o.ldm, lk, 4}, lq + front, front, lk + 1);
          u.ldm = lk + 1;
        }
        auto zeros = [&](std::int64_t blocks, std::int64_t rows, int bytes) {
          return sc.upload(std::vector<std::uint8_t>(static_cast<std::size_t>(blocks * rows * d * bytes), 0));
        };
        void* dq = zeros(bh, lq + front, dql.bytes);
        void* dk = zeros(bkv, lk + 1, dkl.bytes);
        void* dv = zeros(bkv, lk + 1, dvl.bytes);
        u.dq = dq;
        u.dk = dk;
        u.dv = dv;
        u.lddq = u.lddk = u.lddv = d;
        in_->run(u);
        api().synchronize(60'000);
        sc.copy_back(o.dq, dql, dq, lq + front, front);
        sc.copy_back(o.dk, dkl, dk, lk + 1, 0);
        sc.copy_back(o.dv, dvl, dv, lk + 1, 0);
        return;
      }
      default: break;
    }
    in_->run(u);
    api().synchronize(60'000);
    if (bug_ == AttentionBwdBug::Zeros) {
      sc.scale(o.dq, dql, *t.dq_out, 0);
      sc.scale(o.dk, dkl, *t.dk_out, 0);
      sc.scale(o.dv, dvl, *t.dv_out, 0);
    } else if (bug_ == AttentionBwdBug::DqScaleTwice || bug_ == AttentionBwdBug::DqScaleMissing) {
      const double s = static_cast<double>(o.scale);
      sc.scale(o.dq, dql, *t.dq_out, bug_ == AttentionBwdBug::DqScaleTwice ? s : 1 / s);
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
    case AttentionBwdBug::NoDSubtract:  // made around a closed kernel through the saved O (O = 0: D = 0), which this one does not read
      if (!t.reads_saved && !k.with_bug(b)) return "the kernel recomputes the forward: D = 0 is made through the saved O, which it does not read";
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
