// kernels/softmax/cpu/softmax_models.cpp — CPU models of softmax kernels (docs/softmax.md, "Kernels"): shifted (max,
// exp(z - max), sum, divide), unshifted (exp(z) as it is), and online (a running max and a rescaled running sum, block by
// block, Milakov and Gimelshein 2018), softmax and log-softmax, fp32 arithmetic through the FPU's float operations
// (x86-64 SSE: round to nearest even, no flush; the runner pins the environment) with exp and log the fp32 rounding of
// glibc's double functions. Each model carries the faults of SoftmaxBug in its own arithmetic (with_bug).
// model_softmax_*_warp_ops is the CPU twin of softmax_*_warp_ops_cuda: exp by oracle/math/expf_ops.hpp, the row sum as a
// warp does it (32 strided lane sums from +0, then the xor butterfly), written out here lane by lane so that the bitwise
// tier's emulation (oracle/softmax/softmax_emulate.cpp, through oracle/reduce's order emulation) is held against an
// independent evaluation of the same declaration.
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "base/codes.hpp"
#include "kernels/register.hpp"
#include "kernels/softmax/softmax_kernel.hpp"
#include "oracle/math/expf_ops.hpp"
#include "oracle/round.hpp"

namespace fpcert {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

float exp32(float x) { return static_cast<float>(std::exp(static_cast<double>(x))); }
float log32(float x) { return static_cast<float>(std::log(static_cast<double>(x))); }

struct ModelSpec {
  std::string name;
  SoftmaxFn fn = SoftmaxFn::Softmax;
  SoftmaxShift shift = SoftmaxShift::Shifted;
  int block = 0;
  const Format* in = &f32;
  const Format* out = &f32;
  MaskedRowPolicy masked = MaskedRowPolicy::Zero;
  std::string note;
  bool warp_ops = false;  ///< expf_ops and the warp's row sum (declared exactly: the bitwise tier applies)
};

class SoftmaxModel final : public SoftmaxKernel {
 public:
  SoftmaxModel(ModelSpec s, SoftmaxBug bug) : s_(std::move(s)), bug_(bug) {
    SoftmaxArith& a = t_.arith;
    a.fn = s_.fn;
    a.shift = s_.shift;
    a.block = s_.block;
    a.compute = &f32;
    a.exp = s_.warp_ops ? exp_error_expf_ops() : exp_error_libm_f32();
    a.exp_exact = s_.warp_ops ? SoftmaxExpExact::ExpfOps : SoftmaxExpExact::None;
    a.log = log_error_libm_f32();
    a.sum_acc = &f32;
    a.sum_order = s_.shift == SoftmaxShift::Online ? ReduceOrder::blocked(s_.block)
                  : s_.warp_ops                    ? ReduceOrder::warp_tree(32)
                                                   : ReduceOrder::sequential();
    a.out = s_.out;
    t_.x_input = s_.in;
    t_.masked_rows = s_.masked;
    t_.note = s_.note;
    if (bug_ != SoftmaxBug::None) name_ = s_.name + "~" + std::string(to_string(bug_));
    else name_ = s_.name;
  }
  const std::string& name() const override { return name_; }
  std::string description() const override { return s_.note + " (" + describe_softmax_traits(t_) + ")"; }
  Backend backend() const override { return Backend::Cpu; }
  bool is_mutant() const override { return bug_ != SoftmaxBug::None; }
  const SoftmaxTraits& softmax_traits() const override { return t_; }
  std::unique_ptr<SoftmaxKernel> with_bug(SoftmaxBug bug) const override {
    if (bug == SoftmaxBug::WrongRescale && s_.shift != SoftmaxShift::Online) return nullptr;
    return std::make_unique<SoftmaxModel>(s_, bug);
  }

  void run(const SoftmaxOperands& o) override {
    const int xb = container_bytes(*s_.in), ob = container_bytes(*s_.out);
    const auto n = static_cast<std::size_t>(o.cols);
    std::vector<float> z(n), y(n);
    std::vector<bool> masked(n);
    for (std::int64_t r = 0; r < o.rows; ++r) {
      for (std::size_t j = 0; j < n; ++j) {
        const auto x = static_cast<float>(to_double(*s_.in, load_code(o.x, r * o.ldx + static_cast<std::int64_t>(j), xb)));
        float m = 0;
        if (o.mask) {
          const auto bits = static_cast<std::uint32_t>(load_code(o.mask, r * o.ldm + static_cast<std::int64_t>(j), 4));
          std::memcpy(&m, &bits, 4);
        }
        masked[j] = m == kNegInf;
        const float sx = o.scale == 1.0f ? x : o.scale * x;
        z[j] = bug_ == SoftmaxBug::MaskAfterExp ? sx : sx + m;
      }
      row(z, y);
      if (bug_ == SoftmaxBug::MaskAfterExp)
        for (std::size_t j = 0; j < n; ++j)
          if (masked[j]) y[j] = s_.fn == SoftmaxFn::Softmax ? 0.0f : kNegInf;
      for (std::size_t j = 0; j < n; ++j) {
        const double v = bug_ == SoftmaxBug::Zeros ? 0.0 : static_cast<double>(y[j]);
        store_code(o.out, r * o.ldo + static_cast<std::int64_t>(j), ob,
                   to_container(*s_.out, round_double(*s_.out, v, Rounder::nearest(*s_.out)).code));
      }
    }
  }

 private:
  float add(float s, float e) const {
    if (bug_ != SoftmaxBug::F16RowSum && bug_ != SoftmaxBug::Bf16RowSum) return s + e;
    const Format& acc = bug_ == SoftmaxBug::F16RowSum ? f16 : bf16;
    return static_cast<float>(to_double(acc, round_double(acc, static_cast<double>(s) + static_cast<double>(e), Rounder::nearest(acc)).code));
  }

  float ex(float x) const { return s_.warp_ops ? math::expf_ops(x) : exp32(x); }

  /// The warp's row sum of exp(z_j - shift): lane l from +0 over j = l, l + 32, ..., then lane l += lane l ^ off for
  /// off = 16, 8, 4, 2, 1 (every lane ends with the same value; lane 0's is the sum).
  float warp_sum(const std::vector<float>& z, float shift) const {
    float lane[32] = {};
    for (std::size_t j = 0; j < z.size(); ++j) lane[j % 32] = add(lane[j % 32], ex(z[j] - shift));
    for (int off = 16; off >= 1; off /= 2) {
      float next[32];
      for (int l = 0; l < 32; ++l) next[l] = add(lane[l], lane[l ^ off]);
      std::memcpy(lane, next, sizeof lane);
    }
    return lane[0];
  }

  /// One row: y from z (-Inf entries masked).
  void row(const std::vector<float>& z, std::vector<float>& y) const {
    const std::size_t n = z.size();
    const bool soft = s_.fn == SoftmaxFn::Softmax;
    float m = kNegInf;
    for (float v : z) m = std::fmax(m, v);  // NaN entries: fmax ignores them; they reach every y below through z - m
    for (float v : z) if (std::isnan(v)) m = v;
    if (m == kNegInf) {  // fully masked
      const bool nan = s_.masked == MaskedRowPolicy::Nan || bug_ == SoftmaxBug::NanMaskedRows;
      for (std::size_t j = 0; j < n; ++j) y[j] = nan ? std::numeric_limits<float>::quiet_NaN() : (soft ? 0.0f : kNegInf);
      return;
    }
    const bool unshifted = s_.shift == SoftmaxShift::Unshifted || bug_ == SoftmaxBug::NoMaxShift;
    float s = 0, shift = unshifted ? 0.0f : m;
    if (s_.shift == SoftmaxShift::Online && !unshifted) {
      const std::size_t b = static_cast<std::size_t>(s_.block);
      float run = kNegInf;
      for (std::size_t s0 = 0; s0 < n; s0 += b) {
        float bm = kNegInf;
        for (std::size_t j = s0; j < std::min(n, s0 + b); ++j) bm = std::fmax(bm, z[j]);
        const float mn = std::fmax(run, bm);
        if (mn == kNegInf) continue;  // nothing unmasked yet
        if (bug_ != SoftmaxBug::WrongRescale) s = s * ex(run - mn);  // run = -Inf: exp(-Inf) = 0, s = 0 anyway
        for (std::size_t j = s0; j < std::min(n, s0 + b); ++j) s = add(s, ex(z[j] - mn));
        run = mn;
      }
      shift = run;
    } else if (s_.warp_ops) {
      s = warp_sum(z, shift);
    } else {
      for (std::size_t j = 0; j < n; ++j) s = add(s, ex(z[j] - shift));
    }
    if (s_.shift == SoftmaxShift::Unshifted && m == std::numeric_limits<float>::infinity()) {
      // A +Inf logit: exp(+Inf) / (+Inf) would give NaN there and 0 elsewhere; the declared convention (the shifted
      // formula's IEEE result, docs/softmax.md "Special values") is the whole row NaN.
      for (std::size_t j = 0; j < n; ++j) y[j] = std::numeric_limits<float>::quiet_NaN();
      return;
    }
    if (soft) {
      for (std::size_t j = 0; j < n; ++j) y[j] = ex(z[j] - shift) / s;
    } else {
      const float ls = log32(s);
      for (std::size_t j = 0; j < n; ++j) y[j] = (z[j] - shift) - ls;
    }
  }

  ModelSpec s_;
  SoftmaxBug bug_;
  SoftmaxTraits t_;
  std::string name_;
};

}  // namespace

void register_softmax_models() {
  const std::vector<ModelSpec> specs = {
      {"model_softmax_f32_shifted", SoftmaxFn::Softmax, SoftmaxShift::Shifted, 0, &f32, &f32, MaskedRowPolicy::Zero,
       "max, exp(z - max), a sequential row sum, a division (the textbook safe softmax)"},
      {"model_softmax_f16_shifted", SoftmaxFn::Softmax, SoftmaxShift::Shifted, 0, &f16, &f16, MaskedRowPolicy::Zero,
       "f16 logits and results, f32 arithmetic (torch.softmax on half tensors)"},
      {"model_softmax_bf16_shifted", SoftmaxFn::Softmax, SoftmaxShift::Shifted, 0, &bf16, &bf16, MaskedRowPolicy::Zero,
       "bf16 logits and results, f32 arithmetic"},
      {"model_softmax_f32_shifted_nanrows", SoftmaxFn::Softmax, SoftmaxShift::Shifted, 0, &f32, &f32, MaskedRowPolicy::Nan,
       "the shifted softmax giving NaN for a fully masked row, as torch.softmax does"},
      {"model_softmax_f32_unshifted", SoftmaxFn::Softmax, SoftmaxShift::Unshifted, 0, &f32, &f32, MaskedRowPolicy::Zero,
       "exp(z) without the max (correct where exp(z) and the sum stay in range: Blanchard, Higham and Higham 2021)"},
      {"model_softmax_f32_online_b32", SoftmaxFn::Softmax, SoftmaxShift::Online, 32, &f32, &f32, MaskedRowPolicy::Zero,
       "online normaliser in blocks of 32: running max, running sum rescaled by exp(m_old - m_new)"},
      {"model_log_softmax_f32_shifted", SoftmaxFn::LogSoftmax, SoftmaxShift::Shifted, 0, &f32, &f32, MaskedRowPolicy::Zero,
       "(z - max) - log(sum exp(z - max))"},
      {"model_log_softmax_f16_online_b32", SoftmaxFn::LogSoftmax, SoftmaxShift::Online, 32, &f16, &f16, MaskedRowPolicy::Zero,
       "log-softmax of f16 logits, online normaliser in blocks of 32, f16 results"},
      {"model_softmax_f32_warp_ops", SoftmaxFn::Softmax, SoftmaxShift::Shifted, 0, &f32, &f32, MaskedRowPolicy::Zero,
       "softmax_f32_warp_ops_cuda on the CPU: expf_ops, the warp's row sum, a division (declared exactly: bitwise tier)", true},
      {"model_softmax_bf16_warp_ops", SoftmaxFn::Softmax, SoftmaxShift::Shifted, 0, &bf16, &bf16, MaskedRowPolicy::Zero,
       "bf16 logits and results, the f32 warp_ops arithmetic (bitwise tier)", true},
  };
  for (const ModelSpec& s : specs)
    register_kernel(s.name, Backend::Cpu, false, [s] { return std::make_unique<SoftmaxModel>(s, SoftmaxBug::None); }, Operation::Softmax);
}

}  // namespace fpcert
