// kernels/attention/cpu/attention_bwd_models.cpp — CPU models of attention backward kernels (docs/backward.md, "Attention
// backward"): a naive f32 backward (every step in f32, sequential orders, P = exp(RN(s x) + mask - LSE) by libm: the
// PyTorch math backend's arithmetic in f32 with the saved LSE) and FlashAttention-2-style f16 / bf16 backward kernels
// (Dao 2023, Algorithm 2: key blocks of 64 outside, query blocks of 64 inside; P = exp2(fma(x, RN(s log2 e), -RN(LSE
// RN(log2 e)))) recomputed from the saved LSE, D = rowsum(dO o O) first, P and dS rounded to the input format before
// the GEMMs, f32 accumulators, dQ's per key block partial sums added into an f32 buffer in a fixed order: deterministic).
// fp32 arithmetic through the FPU's float operations (the runner pins the environment); exp and exp2 the fp32 roundings
// of glibc's double functions. Each model carries the faults of AttentionBwdBug in its own arithmetic (with_bug).
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "base/codes.hpp"
#include "kernels/attention/attention_backward_kernel.hpp"
#include "kernels/register.hpp"
#include "kernels/softmax/softmax_kernel.hpp"
#include "oracle/round.hpp"

namespace fpcert {
namespace {

constexpr float kInfF = std::numeric_limits<float>::infinity();
constexpr float kLog2e = 0x1.715476p+0f;  // RN_f32(log2 e)

float round_to(const Format& f, float x) { return static_cast<float>(to_double(f, round_double(f, x, Rounder::nearest(f)).code)); }

struct BwdSpec {
  std::string name;
  const Format* in = &f32;
  bool flash = false;
  std::string note;
};

KernelTraits bwd_gemm(const Format& a, const Format& b, const std::string& order) {
  KernelTraits g;
  g.a_input = g.a_operand = &a;
  g.b_input = g.b_operand = &b;
  g.exact_products = true;  // fp32 FMA
  g.acc = &f32;
  g.out = &f32;
  g.order = order;
  g.sum_order = SummationOrder::sequential(StepKind::Fma);
  return g;
}

class AttentionBwdModel final : public AttentionBwdKernel {
 public:
  AttentionBwdModel(BwdSpec s, AttentionBwdBug bug) : s_(std::move(s)), bug_(bug) {
    AttentionBwdTraits& t = t_;
    const Format& in = *s_.in;
    const Format& lowp = s_.flash ? in : f32;  // P and dS before their GEMMs
    t.input = &in;
    t.qk = bwd_gemm(in, in, "S_ij = sum_c q_ic k_jc by fp32 FMA, c ascending");
    t.dov = bwd_gemm(in, in, "dP_ij = sum_c dO_ic v_jc by fp32 FMA, c ascending");
    t.pdo = bwd_gemm(lowp, in, s_.flash ? "dV_j += P_ij dO_i by fp32 FMA, queries ascending in blocks of 64, query heads of a group ascending"
                                        : "dV_j += P_ij dO_i by fp32 FMA, query heads then queries ascending");
    t.dsk = bwd_gemm(lowp, in, s_.flash ? "a partial sum_j dS_ij k_j per key block of 64 by fp32 FMA, added to dQ's f32 buffer block by block"
                                        : "dQ_i = sum_j dS_ij k_j by fp32 FMA, j ascending");
    t.dsq = bwd_gemm(lowp, in, "dK_j += dS_ij q_i by fp32 FMA, queries ascending");
    t.exp_form = s_.flash ? AttentionExpForm::Base2Folded : AttentionExpForm::Natural;
    t.exp = {1, 0, 0x1p-149, s_.flash ? "fl32(exp2) of glibc's double exp2: 0.5 ulp + 2^-28 ulp (glibc manual, Errors in Math Functions)"
                                      : "fl32(exp) of glibc's double exp: 0.5 ulp + 2^-28 ulp (glibc manual, Errors in Math Functions)"};
    t.d_acc = &f32;
    t.compute = &f32;
    t.dq_determinism = Determinism::Deterministic;
    t.dq_acc = &f32;
    t.dq_out = t.dk_out = t.dv_out = &in;
    t.masked_lse = s_.flash ? MaskedLse::PosInf : MaskedLse::NegInf;
    t.reads_saved = true;
    t.note = s_.note;
    name_ = bug_ == AttentionBwdBug::None ? s_.name : s_.name + "~" + std::string(to_string(bug_));
  }
  const std::string& name() const override { return name_; }
  std::string description() const override { return s_.note + " (" + describe_attention_bwd_traits(t_) + ")"; }
  Backend backend() const override { return Backend::Cpu; }
  bool is_mutant() const override { return bug_ != AttentionBwdBug::None; }
  const AttentionBwdTraits& attention_bwd_traits() const override { return t_; }
  std::unique_ptr<AttentionBwdKernel> with_bug(AttentionBwdBug bug) const override {
    return std::make_unique<AttentionBwdModel>(s_, bug);
  }

  void run(const AttentionBwdOperands& o) override {
    const AttentionShape& sh = o.shape;
    const Support sup = can_implement(sh, o.causal, o.mask != nullptr);
    if (!sup.ok) throw NotSupportedError(sup.reason);
    const Format& in = *s_.in;
    const int ib = container_bytes(in);
    const auto d = static_cast<std::size_t>(sh.head_dim), lq = static_cast<std::size_t>(sh.len_q), lk = static_cast<std::size_t>(sh.len_k);
    auto ld = [&](const void* p, std::int64_t i) { return static_cast<float>(to_double(in, load_code(p, i, ib))); };
    auto load_rows = [&](const void* p, std::int64_t row0, std::int64_t ldp, std::size_t n, std::vector<float>& dst) {
      dst.resize(n * d);
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t c = 0; c < d; ++c) dst[i * d + c] = ld(p, (row0 + static_cast<std::int64_t>(i)) * ldp + static_cast<std::int64_t>(c));
    };
    const std::int64_t group = sh.heads_q / sh.heads_kv;
    std::vector<float> q, k, v, oo, g, lse(lq), dd(lq), dq(lq * d), dk(lk * d), dv(lk * d), hk(lk * d), hv(lk * d);
    for (std::int64_t b = 0; b < sh.batch; ++b)
      for (std::int64_t hkv = 0; hkv < sh.heads_kv; ++hkv) {
        const std::int64_t kvrow = (b * sh.heads_kv + hkv) * sh.len_k;
        load_rows(o.k, kvrow, o.ldk, lk, k);
        load_rows(o.v, kvrow, o.ldv, lk, v);
        std::fill(dk.begin(), dk.end(), 0.0f);
        std::fill(dv.begin(), dv.end(), 0.0f);
        for (std::int64_t hh = 0; hh < group; ++hh) {
          const std::int64_t row0 = (b * sh.heads_q + hkv * group + hh) * sh.len_q;
          load_rows(o.q, row0, o.ldq, lq, q);
          load_rows(o.o, row0, o.ldo, lq, oo);
          load_rows(o.d_o, row0, o.lddo, lq, g);
          for (std::size_t i = 0; i < lq; ++i) {
            lse[i] = static_cast<float>(to_double(f32, load_code(o.lse, row0 + static_cast<std::int64_t>(i), 4)));
            float acc = 0;  // D_i = sum_c dO_ic O_ic, c ascending (the fault: dO dO)
            for (std::size_t c = 0; c < d; ++c)
              acc = std::fma(g[i * d + c], bug_ == AttentionBwdBug::DFromWrongO ? g[i * d + c] : oo[i * d + c], acc);
            dd[i] = acc;
          }
          // One query head: its dK, dV contributions in hk, hv (f32), added to the group's after the head (GqaNotSummed:
          // the group's replaced by the last head's).
          std::fill(hk.begin(), hk.end(), 0.0f);
          std::fill(hv.begin(), hv.end(), 0.0f);
          head(o, q, k, v, g, lse, dd, dq, hk, hv);
          for (std::size_t e = 0; e < lk * d; ++e) {
            dk[e] = bug_ == AttentionBwdBug::GqaNotSummed ? hk[e] : dk[e] + hk[e];
            dv[e] = bug_ == AttentionBwdBug::GqaNotSummed ? hv[e] : dv[e] + hv[e];
          }
          for (std::size_t i = 0; i < lq; ++i)
            for (std::size_t c = 0; c < d; ++c) {
              float x = dq[i * d + c] * o.scale;
              if (bug_ == AttentionBwdBug::DqScaleMissing) x = dq[i * d + c];
              if (bug_ == AttentionBwdBug::DqScaleTwice) x = x * o.scale;
              store(o.dq, (row0 + static_cast<std::int64_t>(i)) * o.lddq + static_cast<std::int64_t>(c), *t_.dq_out, x);
            }
        }
        for (std::size_t j = 0; j < lk; ++j)
          for (std::size_t c = 0; c < d; ++c) {
            store(o.dk, (kvrow + static_cast<std::int64_t>(j)) * o.lddk + static_cast<std::int64_t>(c), *t_.dk_out, dk[j * d + c] * o.scale);
            store(o.dv, (kvrow + static_cast<std::int64_t>(j)) * o.lddv + static_cast<std::int64_t>(c), *t_.dv_out, dv[j * d + c]);
          }
      }
  }

 private:
  void store(void* p, std::int64_t at, const Format& f, float x) const {
    if (bug_ == AttentionBwdBug::Zeros) x = 0;
    store_code(p, at, container_bytes(f), to_container(f, round_double(f, x, Rounder::nearest(f)).code));
  }
  bool sees(const AttentionBwdOperands& o, std::int64_t i, std::int64_t j) const {
    if (o.causal == CausalAlign::None) return true;
    const std::int64_t off = (o.causal == CausalAlign::BottomRight ? o.shape.len_k - o.shape.len_q : 0) +
                             (bug_ == AttentionBwdBug::CausalOffByOne ? 1 : 0);
    return j <= i + off;
  }
  float mask_at(const AttentionBwdOperands& o, std::size_t i, std::size_t j) const {
    return o.mask ? static_cast<float>(to_double(f32, load_code(o.mask, static_cast<std::int64_t>(i) * o.ldm + static_cast<std::int64_t>(j), 4))) : 0.0f;
  }
  static float dot(const std::vector<float>& a, std::size_t i, const std::vector<float>& b, std::size_t j, std::size_t d) {
    float s = 0;
    for (std::size_t c = 0; c < d; ++c) s = std::fma(a[i * d + c], b[j * d + c], s);
    return s;
  }
  /// P_ij recomputed from the saved LSE (0 where query i does not see key j or the mask is -Inf).
  float prob(const AttentionBwdOperands& o, const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& lse,
             std::size_t i, std::size_t j, std::size_t d) const {
    if (!sees(o, static_cast<std::int64_t>(i), static_cast<std::int64_t>(j))) return 0;
    const float mk = mask_at(o, i, j);
    if (mk == -kInfF || lse[i] == kInfF || lse[i] == -kInfF) return 0;
    const float x = dot(q, i, k, j, d);
    if (s_.flash) {
      const float c2 = attention_scale_log2e(o.scale);
      const float y = o.mask ? x + mk / o.scale : x;  // the mask folded into the raw score, as the forward
      const float l2 = bug_ == AttentionBwdBug::LseWrongBase ? lse[i] : lse[i] * kLog2e;
      return static_cast<float>(std::exp2(static_cast<double>(std::fma(y, c2, -l2))));
    }
    const float z = o.scale * x + mk;
    const float arg = bug_ == AttentionBwdBug::LseWrongBase ? z - lse[i] * kLog2e : z - lse[i];
    return static_cast<float>(std::exp(static_cast<double>(arg)));
  }
  /// One query head against its key/value head: dQ (unscaled) into dq, dK (unscaled) and dV into hk, hv.
  void head(const AttentionBwdOperands& o, const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
            const std::vector<float>& g, const std::vector<float>& lse, const std::vector<float>& dd, std::vector<float>& dq,
            std::vector<float>& hk, std::vector<float>& hv) const {
    const auto d = static_cast<std::size_t>(o.shape.head_dim), lq = lse.size(), lk = k.size() / d;
    std::fill(dq.begin(), dq.end(), 0.0f);
    const Format& lowp = s_.flash ? *s_.in : f32;
    const std::size_t kb = s_.flash ? 64 : lk, qb = s_.flash ? 64 : lq;
    std::vector<float> part(d);
    for (std::size_t j0 = 0; j0 < lk; j0 += kb) {  // key blocks outside (FlashAttention-2's backward)
      const std::size_t j1 = std::min(lk, j0 + kb);
      for (std::size_t i0 = 0; i0 < lq; i0 += qb) {  // query blocks inside
        const std::size_t i1 = std::min(lq, i0 + qb);
        for (std::size_t i = i0; i < i1; ++i) {
          std::fill(part.begin(), part.end(), 0.0f);
          for (std::size_t j = j0; j < j1; ++j) {
            const float p = prob(o, q, k, lse, i, j, d);
            if (p == 0) continue;
            const float dp = dot(g, i, v, j, d);
            const float ds = bug_ == AttentionBwdBug::NoDSubtract ? p * dp : p * (dp - dd[i]);
            const float pr = round_to(lowp, p), dsr = round_to(lowp, ds);
            for (std::size_t c = 0; c < d; ++c) {
              hv[j * d + c] = std::fma(pr, g[i * d + c], hv[j * d + c]);
              hk[j * d + c] = std::fma(dsr, q[i * d + c], hk[j * d + c]);
              part[c] = std::fma(dsr, k[j * d + c], part[c]);
            }
          }
          // dQ's partial of this key block added into its buffer (the fault: a bf16 buffer).
          for (std::size_t c = 0; c < d; ++c) {
            float& x = dq[i * d + c];
            x = s_.flash ? x + part[c] : part[c];
            if (bug_ == AttentionBwdBug::DqAtomicsBf16) x = round_to(bf16, x);
          }
        }
      }
    }
  }

  BwdSpec s_;
  AttentionBwdBug bug_;
  AttentionBwdTraits t_;
  std::string name_;
};

}  // namespace

void register_attention_bwd_models() {
  const std::vector<BwdSpec> specs = {
      {"model_attention_bwd_f32_naive", &f32, false,
       "the backward in f32 from the saved LSE: P = exp(s x + mask - LSE), D = dO . O, dS = P (dP - D), three sequential "
       "GEMMs (PyTorch's math backend's formulas in f32)"},
      {"model_attention_bwd_f16_flash", &f16, true,
       "FlashAttention-2's backward: key blocks of 64 outside, query blocks of 64 inside, P = exp2(fma(x, s log2 e, -LSE "
       "log2 e)), P and dS in f16 before their GEMMs, f32 accumulators, dQ's block partials added in a fixed order"},
      {"model_attention_bwd_bf16_flash", &bf16, true, "the same in bf16: P and dS rounded to bf16 before their GEMMs"},
  };
  for (const BwdSpec& s : specs)
    register_kernel(s.name, Backend::Cpu, false, [s] { return std::make_unique<AttentionBwdModel>(s, AttentionBwdBug::None); },
                    Operation::AttentionBackward);
}

}  // namespace fpcert
