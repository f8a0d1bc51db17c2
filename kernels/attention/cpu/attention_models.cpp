// kernels/attention/cpu/attention_models.cpp — CPU models of attention kernels (docs/attention.md, "Kernels"): a naive
// three-step f32 attention (S = Q K^T, a shifted softmax, P V, a division: the PyTorch "math" backend's arithmetic in
// f32) and FlashAttention-2-style f16 / bf16 kernels (an online softmax over key blocks of 64, exp2 of the folded
// fma(x, RN(s log2 e), -m2), P rounded to the input format before P V, a reciprocal of l). fp32 arithmetic through the
// FPU's float operations (x86-64 SSE: nearest even, no flush; the runner pins the environment); exp, exp2 and log are
// the fp32 roundings of glibc's double functions (0.5 ulp + 2^-28 ulp: declared 1 ulp). Each model carries the faults
// of AttentionBug in its own arithmetic (with_bug).
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "base/codes.hpp"
#include "kernels/attention/attention_kernel.hpp"
#include "kernels/register.hpp"
#include "kernels/softmax/softmax_kernel.hpp"
#include "oracle/round.hpp"

namespace fpcert {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
constexpr float kNanF = std::numeric_limits<float>::quiet_NaN();

float exp32(float x) { return static_cast<float>(std::exp(static_cast<double>(x))); }
float exp2_32(float x) { return static_cast<float>(std::exp2(static_cast<double>(x))); }
float log32(float x) { return static_cast<float>(std::log(static_cast<double>(x))); }
float round_to(const Format& f, float x) { return static_cast<float>(to_double(f, round_double(f, x, Rounder::nearest(f)).code)); }

ElemFnError exp2_error_libm_f32() {
  return {1, 0, 0x1p-149, "fl32(exp2) of glibc's double exp2: 0.5 ulp + 2^-28 ulp (glibc manual, Errors in Math Functions)"};
}

struct ModelSpec {
  std::string name;
  const Format* in = &f32;
  bool flash = false;  ///< online + base 2 folded + P in the input format + reciprocal; else naive
  std::string note;
  bool scaled = false;  ///< flash with the memory-efficient kernel's exp2 form (AttentionExpForm::Base2Scaled)
  bool fa2 = false;     ///< flash with FlashAttention-2's rescaling factor exp2(RN(RN(m_old - m_new) c))
  const Format* out = nullptr;  ///< O's format (null: the input format)
  /// FlashAttention-3's FP8 scaling: per-tensor descales folded (c = RN(RN(s log2 e) RN(dq dk)), LSE's RN(s RN(dq dk)),
  /// RN(RN(1 / l) dv)), P = exp2(fma(x, c, -RN(m2 - 8))) in [0, 256]; causal masks only (as FlashAttention-3's FP8 path).
  bool fp8_scaled = false;
};

constexpr float kLog2eF = 0x1.715476p+0f;  // RN_f32(log2 e)
constexpr int kPOffset = 8;                 // FlashAttention-3's FP8 Max_offset: P in [0, 2^8]

KernelTraits gemm_traits(const Format& a, const Format& b, const std::string& order) {
  KernelTraits g;
  g.a_input = g.a_operand = &a;
  g.b_input = g.b_operand = &b;
  g.exact_products = true;  // fp32 FMA: the product enters the rounding exactly
  g.acc = &f32;
  g.out = &f32;
  g.order = order;
  g.sum_order = SummationOrder::sequential(StepKind::Fma);
  return g;
}

class AttentionModel final : public AttentionKernel {
 public:
  AttentionModel(ModelSpec s, AttentionBug bug) : s_(std::move(s)), bug_(bug) {
    AttentionTraits& t = t_;
    t.input = s_.in;
    t.qk = gemm_traits(*s_.in, *s_.in, "S_j = sum_c q_c k_jc by fp32 FMA, c ascending");
    t.pv = gemm_traits(s_.flash ? *s_.in : f32, *s_.in,
                       s_.flash ? "O~_c += P_j v_jc by fp32 FMA, j ascending, rescaled once a key block"
                                : "O~_c = sum_j P_j v_jc by fp32 FMA, j ascending");
    t.shift = s_.flash ? SoftmaxShift::Online : SoftmaxShift::Shifted;
    t.key_block = s_.flash ? 64 : 0;
    t.rescale_by_difference = s_.fa2;
    t.exp_form = s_.scaled ? AttentionExpForm::Base2Scaled : s_.flash ? AttentionExpForm::Base2Folded : AttentionExpForm::Natural;
    t.exp = s_.flash ? exp2_error_libm_f32() : exp_error_libm_f32();
    t.sum_acc = &f32;
    t.normalize = s_.flash ? AttentionNormalize::Reciprocal : AttentionNormalize::Divide;
    t.out = s_.out ? s_.out : s_.in;
    t.log = log_error_libm_f32();
    t.masked_rows = s_.flash ? MaskedRowPolicy::Zero : MaskedRowPolicy::Nan;
    t.masked_lse = s_.flash ? MaskedLse::PosInf : MaskedLse::NegInf;
    if (s_.fp8_scaled) {
      t.descales = true;
      t.descale_roundings = 2;
      t.p_offset_log2 = kPOffset;
      t.masks = kAttnMaskCausalTopLeft | kAttnMaskCausalBottomRight;
    }
    t.note = s_.note;
    name_ = bug_ == AttentionBug::None ? s_.name : s_.name + "~" + std::string(to_string(bug_));
  }
  const std::string& name() const override { return name_; }
  std::string description() const override { return s_.note + " (" + describe_attention_traits(t_) + ")"; }
  Backend backend() const override { return Backend::Cpu; }
  bool is_mutant() const override { return bug_ != AttentionBug::None; }
  const AttentionTraits& attention_traits() const override { return t_; }
  std::unique_ptr<AttentionKernel> with_bug(AttentionBug bug) const override {
    if (!s_.flash && (bug == AttentionBug::NoRescale || bug == AttentionBug::DropLastKeyBlock)) return nullptr;  // no key blocks
    if (bug == AttentionBug::DescaleVDropped && !t_.descales) return nullptr;
    return std::make_unique<AttentionModel>(s_, bug);
  }

  void run(const AttentionOperands& o) override {
    const AttentionShape& sh = o.shape;
    const Support sup = can_implement(sh, o.causal, o.mask != nullptr);
    if (!sup.ok) throw NotSupportedError(sup.reason);
    const Format& in = *s_.in;
    const int ib = container_bytes(in), ob = container_bytes(*t_.out);
    const auto d = static_cast<std::size_t>(sh.head_dim);
    const auto lk = static_cast<std::size_t>(sh.len_k);
    auto ld = [&](const void* p, std::int64_t i) { return static_cast<float>(to_double(in, load_code(p, i, ib))); };
    std::vector<float> q(d), kk(lk * d), vv(lk * d), y(lk), o_acc(d);
    const std::int64_t group = sh.heads_q / sh.heads_kv;
    for (std::int64_t b = 0; b < sh.batch; ++b)
      for (std::int64_t h = 0; h < sh.heads_q; ++h) {
        const std::int64_t hk = h / group, kvrow = (b * sh.heads_kv + hk) * sh.len_k;
        for (std::size_t j = 0; j < lk; ++j)
          for (std::size_t c = 0; c < d; ++c) {
            const auto at = (kvrow + static_cast<std::int64_t>(j)) * o.ldk + static_cast<std::int64_t>(c);
            kk[j * d + c] = ld(o.k, at);
            vv[j * d + c] = ld(o.v, (kvrow + static_cast<std::int64_t>(j)) * o.ldv + static_cast<std::int64_t>(c));
          }
        for (std::int64_t i = 0; i < sh.len_q; ++i) {
          const std::int64_t row = (b * sh.heads_q + h) * sh.len_q + i;
          for (std::size_t c = 0; c < d; ++c) q[c] = ld(o.q, row * o.ldq + static_cast<std::int64_t>(c));
          float lse = 0;
          const bool seen = s_.flash ? flash_row(o, i, q, kk, vv, y, o_acc, lse) : naive_row(o, i, q, kk, vv, y, o_acc, lse);
          if (!seen) {
            for (std::size_t c = 0; c < d; ++c) o_acc[c] = t_.masked_rows == MaskedRowPolicy::Nan ? kNanF : 0.0f;
            lse = t_.masked_lse == MaskedLse::PosInf ? std::numeric_limits<float>::infinity() : kNegInf;
          }
          if (bug_ == AttentionBug::Zeros) {
            for (float& x : o_acc) x = 0;
            lse = 0;
          }
          for (std::size_t c = 0; c < d; ++c)
            store_code(o.o, row * o.ldo + static_cast<std::int64_t>(c), ob,
                       to_container(*t_.out, round_double(*t_.out, o_acc[c], Rounder::nearest(*t_.out)).code));
          if (o.lse) store_code(o.lse, row, 4, to_container(f32, round_double(f32, lse, Rounder::nearest(f32)).code));
        }
      }
  }

 private:
  /// The raw score S_j = q . k_j in f32 (FMA, c ascending).
  float dot(const std::vector<float>& q, const std::vector<float>& kk, std::size_t j) const {
    float s = 0;
    for (std::size_t c = 0; c < q.size(); ++c) s = std::fma(q[c], kk[j * q.size() + c], s);
    return s;
  }
  /// Whether query i sees key j by the causal diagonal (the mask's -Inf is applied by the arithmetic).
  bool causal_ok(const AttentionOperands& o, std::int64_t i, std::int64_t j) const {
    if (o.causal == CausalAlign::None) return true;
    const std::int64_t off = (o.causal == CausalAlign::BottomRight ? o.shape.len_k - o.shape.len_q : 0) +
                             (bug_ == AttentionBug::CausalOffByOne ? 1 : 0);
    return j <= i + off;
  }
  float mask_at(const AttentionOperands& o, std::int64_t i, std::int64_t j) const {
    return o.mask ? static_cast<float>(to_double(f32, load_code(o.mask, i * o.ldm + j, 4))) : 0.0f;
  }
  /// P rounded before P V: the declared format, or the fault's narrower one.
  float round_p(float p) const {
    // With a P offset the fault is P rounded into e4m3 as a probability in [0, 1] (the offset forgotten): 2^-9 its least value.
    if (bug_ == AttentionBug::PRoundedLower && t_.p_offset_log2 != 0)
      return std::ldexp(round_to(e4m3, std::ldexp(p, -t_.p_offset_log2)), t_.p_offset_log2);
    if (bug_ == AttentionBug::PRoundedLower) return round_to(!s_.flash ? f16 : s_.in == &e4m3 ? e5m2 : e4m3, p);  // e5m2: 2 bits below e4m3
    return s_.flash ? round_to(*s_.in, p) : p;
  }

  /// max, exp(z - max), a sequential sum, P V, a division, LSE = m + log l. Returns false for a fully masked row.
  bool naive_row(const AttentionOperands& o, std::int64_t i, const std::vector<float>& q, const std::vector<float>& kk,
                 const std::vector<float>& vv, std::vector<float>& z, std::vector<float>& out, float& lse) const {
    const std::size_t lk = z.size(), d = q.size();
    const bool after = bug_ == AttentionBug::ScaleAfterSoftmax;
    float m = kNegInf;
    for (std::size_t j = 0; j < lk; ++j) {
      const auto ji = static_cast<std::int64_t>(j);
      if (!causal_ok(o, i, ji)) {
        z[j] = kNegInf;
        continue;
      }
      const float sj = dot(q, kk, j);
      z[j] = (after ? sj : o.scale * sj) + mask_at(o, i, ji);
      m = std::max(m, z[j]);
    }
    if (m == kNegInf) return false;
    float l = 0;
    for (float& x : out) x = 0;
    for (std::size_t j = 0; j < lk; ++j) {
      if (z[j] == kNegInf) continue;
      const float e = exp32(z[j] - m);
      l += e;
      const float p = round_p(e);
      for (std::size_t c = 0; c < d; ++c) out[c] = std::fma(p, vv[j * d + c], out[c]);
    }
    for (float& x : out) x = after ? (x / l) * o.scale : x / l;
    lse = bug_ == AttentionBug::LseNoMax ? log32(l) : m + log32(l);
    return true;
  }

  /// FlashAttention-2's loop over key blocks of 64 (docs/attention.md, "Kernels"). Returns false for a fully masked row.
  bool flash_row(const AttentionOperands& o, std::int64_t i, const std::vector<float>& q, const std::vector<float>& kk,
                 const std::vector<float>& vv, std::vector<float>& y, std::vector<float>& out, float& lse) const {
    const std::size_t lk = y.size(), d = q.size(), blk = static_cast<std::size_t>(t_.key_block);
    const bool after = bug_ == AttentionBug::ScaleAfterSoftmax;
    const float s = after ? 1.0f : o.scale;
    // RN(s log2 e), as declared (one rounding); the scaled form: RN(s RN(log2 e)) without a mask, RN(log2 e) with one (the
    // mask added to the scaled score by an fma first).
    const bool sc = s_.scaled;
    // FP8: the descales folded into c and into the LSE's scale, dqk = RN(dq dk) once.
    const float dqk = t_.descales ? o.descale_q * o.descale_k : 1.0f;
    const float c2 = sc ? (o.mask ? kLog2eF : s * kLog2eF) : attention_scale_log2e(s) * dqk;  // times 1 exactly without descales
    const float koff = static_cast<float>(t_.p_offset_log2);
    std::size_t end = lk;
    if (bug_ == AttentionBug::DropLastKeyBlock && lk % blk != 0 && lk > blk) end = lk - lk % blk;
    float my = kNegInf, m2 = 0, l = 0;
    for (float& x : out) x = 0;
    for (std::size_t j0 = 0; j0 < end; j0 += blk) {
      const std::size_t j1 = std::min(end, j0 + blk);
      float bm = kNegInf;
      for (std::size_t j = j0; j < j1; ++j) {
        const auto ji = static_cast<std::int64_t>(j);
        if (!causal_ok(o, i, ji)) {
          y[j] = kNegInf;
          continue;
        }
        const float mk = mask_at(o, i, ji);
        y[j] = dot(q, kk, j);
        if (sc) y[j] = (o.mask ? std::fma(y[j], s, mk) : y[j]) * c2;  // z2 = RN(RN(s x + mask) RN(log2 e)), or RN(x c2)
        else if (o.mask) y[j] = y[j] + (after ? mk : mk / s);  // the mask folded into the raw score: x + RN(mask / s)
        bm = std::max(bm, y[j]);
      }
      if (bm == kNegInf) continue;  // nothing visible in this block
      const float mnew = std::max(my, bm), m2new = sc ? mnew : mnew * c2 - koff;  // RN(RN(m c) - k): exact when k = 0
      if (my != kNegInf && m2new != m2 && bug_ != AttentionBug::NoRescale) {
        const float alpha = s_.fa2 ? exp2_32((my - mnew) * c2) : exp2_32(m2 - m2new);
        l *= alpha;
        for (float& x : out) x *= alpha;
      }
      my = mnew;
      m2 = m2new;
      for (std::size_t j = j0; j < j1; ++j) {
        if (y[j] == kNegInf) continue;
        const float p = sc ? exp2_32(y[j] - m2) : exp2_32(std::fma(y[j], c2, -m2));
        l += p;
        const float pr = round_p(p);
        for (std::size_t c = 0; c < d; ++c) out[c] = std::fma(pr, vv[j * d + c], out[c]);
      }
    }
    if (my == kNegInf) return false;
    float r = 1.0f / l;
    if (t_.descales && bug_ != AttentionBug::DescaleVDropped) r *= o.descale_v;  // RN(RN(1 / l) dv)
    for (float& x : out) x = after ? (x * r) * o.scale : x * r;
    const float lsum = std::ldexp(l, -t_.p_offset_log2);  // exact: l >= 2^k (the max's own term, up to exp2's error)
    lse = bug_ == AttentionBug::LseNoMax ? log32(lsum) : (sc ? m2 / kLog2eF : my * (s * dqk)) + log32(lsum);
    return true;
  }

  ModelSpec s_;
  AttentionBug bug_;
  AttentionTraits t_;
  std::string name_;
};

}  // namespace

void register_attention_models() {
  const std::vector<ModelSpec> specs = {
      {"model_attention_f32_naive", &f32, false,
       "three steps in f32: S = Q K^T, a shifted softmax (max, exp, sum), O = P V / l (PyTorch's math backend in f32)"},
      {"model_attention_f16_flash", &f16, true,
       "FlashAttention-2's arithmetic: online softmax over key blocks of 64, exp2(fma(x, s log2 e, -m2)), P in f16, f32 "
       "accumulators, O~ / l by a reciprocal"},
      {"model_attention_bf16_flash", &bf16, true, "the same in bf16: P rounded to bf16 before P V"},
      {"model_attention_f16_efficient", &f16, true,
       "the memory-efficient (xFormers) kernel's softmax on FlashAttention-2's loop: z2 = RN(x RN(s RN(log2 e))), with a mask "
       "RN(fma(x, s, mask) RN(log2 e)); exp2(RN(z2 - m2)); LSE = RN(m2 / RN(log2 e)) + log l; P in f16",
       true},
      {"model_attention_f16_fa2", &f16, true,
       "the f16 flash model with FlashAttention-2's rescaling factor: exp2(RN(RN(m_old - m_new) c)) from the raw maxima (its "
       "softmax.h), each block's probabilities against RN(m c)",
       false, true},
      {"model_attention_e4m3_flash", &e4m3, true,
       "FP8 attention as FlashAttention-3's FP8 forward: Q, K, V in e4m3 (unit descales), the f16 flash model's loop with P "
       "rounded to e4m3 before P V (e4m3 x e4m3 products, exact in f32), O in bf16",
       false, false, &bf16},
      {"model_attention_e4m3_fa3", &e4m3, true,
       "FlashAttention-3's FP8 forward scaling (hopper/softmax.h, mainloop): e4m3 Q, K, V with per-tensor descale factors, "
       "c = RN(RN(s log2 e) RN(dq dk)) (the descales folded into the scale), P = exp2(fma(x, c, -RN(RN(m c) - 8))) in [0, 256] "
       "(Max_offset 8: P uses e4m3's range) rounded to e4m3, O = RN_bf16(O~ RN(RN(1 / l) dv)), LSE = RN(m RN(s RN(dq dk))) + "
       "log(l 2^-8); causal masks only",
       false, false, &bf16, true},
  };
  for (const ModelSpec& s : specs)
    register_kernel(s.name, Backend::Cpu, false, [s] { return std::make_unique<AttentionModel>(s, AttentionBug::None); },
                    Operation::Attention);
}

}  // namespace fpcert
