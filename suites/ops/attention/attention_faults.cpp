// suites/ops/attention/attention_faults.cpp — the attention fault injectors (attention_faults.hpp).
#include "suites/ops/attention/attention_faults.hpp"

#include <vector>

#include "base/codes.hpp"
#include "base/error.hpp"
#include "kernels/device/device_api.hpp"
#include "suites/mutation/injector_api.hpp"
#include "suites/mutation/row_blocks.hpp"

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
    case Fault::AttnDescaleVDropped: return AttentionBug::DescaleVDropped;
    default: return AttentionBug::None;
  }
}

/// The faults made around a closed kernel (docs/mutation.md, "Faults made around a closed kernel").
bool black_box(AttentionBug b) {
  return b == AttentionBug::Zeros || b == AttentionBug::ScaleAfterSoftmax || b == AttentionBug::CausalOffByOne ||
         b == AttentionBug::DropLastKeyBlock || b == AttentionBug::DescaleVDropped;
}

/// The key blocks' end where DropLastKeyBlock drops keys (len_k not a multiple of the block, more than one block), else -1.
std::int64_t dropped_keys_end(const AttentionShape& s, int blk) {
  return blk > 0 && s.len_k % blk != 0 && s.len_k > blk ? s.len_k - s.len_k % blk : -1;
}

/// A mutant under its registry name: the kernel's own faulty arithmetic, or the fault made around it: every output +0
/// after the call (Zeros); the call made with scale 1 and O multiplied by s after it (ScaleAfterSoftmax); the causal mask
/// given as an additive mask whose diagonal is one key further, or, for a kernel without additive masks, the call made
/// with one zero query in front (top-left) and one zero key and value behind, so that query i sees key i + 1
/// (CausalOffByOne); the call made on the whole key blocks only (DropLastKeyBlock); the call made with dv = 1
/// (DescaleVDropped).
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
  Support can_implement(const AttentionShape& s, CausalAlign c, bool m) const override {
    const Support own = in_->can_implement(s, c, m);
    if (!bb_ || !own.ok) return own;
    if (bug_ == AttentionBug::CausalOffByOne && c != CausalAlign::None) {
      if (in_->can_implement(s, CausalAlign::None, true).ok || in_->can_implement(causal_padded_shape(s, c), c, m).ok) return own;
      return Support::no("the fault is made around the kernel by an additive mask or by one more query and key, and it takes neither here");
    }
    if (bug_ == AttentionBug::DropLastKeyBlock) {
      const std::int64_t end = dropped_keys_end(s, in_->attention_traits().key_block);
      if (end > 0) {
        AttentionShape t = s;
        t.len_k = end;
        return in_->can_implement(t, c, m);
      }
    }
    return own;
  }
  void run(const AttentionOperands& o) override {
    if (!bb_) return in_->run(o);
    Scratch sc(api());
    const Format& out = *in_->attention_traits().out;
    const std::int64_t bh = o.shape.batch * o.shape.heads_q, bkv = o.shape.batch * o.shape.heads_kv, d = o.shape.head_dim;
    const RowBlocks ol{bh, o.shape.len_q, o.ldo, d, container_bytes(out)}, ll{bh, o.shape.len_q, 1, 1, 4};
    AttentionOperands u = o;
    switch (bug_) {
      case AttentionBug::DescaleVDropped:
        u.descale_v = 1.0f;
        in_->run(u);
        api().synchronize(60'000);
        return;
      case AttentionBug::ScaleAfterSoftmax:
        u.scale = 1.0f;
        in_->run(u);
        api().synchronize(60'000);
        sc.scale(o.o, ol, out, static_cast<double>(o.scale));
        return;
      case AttentionBug::DropLastKeyBlock: {
        const std::int64_t end = dropped_keys_end(o.shape, in_->attention_traits().key_block);
        if (end > 0) {
          const int ib = container_bytes(*in_->attention_traits().input);
          u.k = sc.relaid(o.k, RowBlocks{bkv, o.shape.len_k, o.ldk, d, ib}, end, 0, d);
          u.v = sc.relaid(o.v, RowBlocks{bkv, o.shape.len_k, o.ldv, d, ib}, end, 0, d);
          u.ldk = u.ldv = d;
          u.shape.len_k = end;  // the mask's first `end` columns, at its own ldm
        }
        in_->run(u);
        api().synchronize(60'000);
        return;
      }
      case AttentionBug::CausalOffByOne: {
        if (o.causal == CausalAlign::None) return in_->run(o);
        const std::int64_t lq = o.shape.len_q, lk = o.shape.len_k;
        if (in_->can_implement(o.shape, CausalAlign::None, true).ok) {
          u.mask = sc.causal_mask(o.mask, o.ldm, lq, lk, causal_diagonal(o.shape, o.causal) + 1);
          u.ldm = lk;
          u.causal = CausalAlign::None;
          in_->run(u);
          api().synchronize(60'000);
          return;
        }
        const std::int64_t front = o.causal == CausalAlign::TopLeft ? 1 : 0;
        const int ib = container_bytes(*in_->attention_traits().input);
        u.shape = causal_padded_shape(o.shape, o.causal);
        u.q = sc.relaid(o.q, RowBlocks{bh, lq, o.ldq, d, ib}, lq + front, front, d);
        u.k = sc.relaid(o.k, RowBlocks{bkv, lk, o.ldk, d, ib}, lk + 1, 0, d);
        u.v = sc.relaid(o.v, RowBlocks{bkv, lk, o.ldv, d, ib}, lk + 1, 0, d);
        u.ldq = u.ldk = u.ldv = d;
        if (o.mask) {
          u.mask = sc.relaid(o.mask, RowBlocks{1, lq, o.ldm, lk, 4}, lq + front, front, lk + 1);
          u.ldm = lk + 1;
        }
        void* po = sc.upload(std::vector<std::uint8_t>(static_cast<std::size_t>(bh * (lq + front) * d * ol.bytes), 0));
        void* pl = o.lse ? sc.upload(std::vector<std::uint8_t>(static_cast<std::size_t>(bh * (lq + front) * 4), 0)) : nullptr;
        u.o = po;
        u.ldo = d;
        u.lse = pl;
        in_->run(u);
        api().synchronize(60'000);
        sc.copy_back(o.o, ol, po, lq + front, front);
        if (o.lse) sc.copy_back(o.lse, ll, pl, lq + front, front);
        return;
      }
      default: break;
    }
    in_->run(o);  // Zeros
    api().synchronize(60'000);
    sc.scale(o.o, ol, out, 0);
    if (o.lse) sc.scale(o.lse, ll, f32, 0);
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
    case Fault::AttnDescaleVDropped:
      if (!t.descales) return "the kernel takes no FP8 descale factors";
      break;
    default: break;
  }
  const AttentionBug b = bug_of(f);
  if (!black_box(b) && !k.with_bug(b)) return "the kernel cannot carry this fault in its own arithmetic (a closed kernel)";
  return {};
}

std::string register_attention_mutant(const std::string& kernel, Fault f) {
  return register_own_or_wrapped_mutant<AttentionMutant>(kernel, f, Operation::Attention, "attention", bug_of(f),
                                             [](const std::string& n) { return make_attention_kernel(n); });
}

}  // namespace fpcert
