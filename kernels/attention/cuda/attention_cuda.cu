// kernels/attention/cuda/attention_cuda.cu — CUDA attention built-ins (docs/attention.md, "CUDA built-ins"):
//  - attention_{f16,bf16}_flash_cuda: a FlashAttention-2-style fused forward on mma.sync tensor cores (f32
//    accumulators), online softmax over key blocks of 64 in base 2 with the scale folded in, reciprocal normalisation;
//  - attention_e4m3_flash_cuda: FlashAttention-3's FP8 forward arithmetic (per-tensor descales folded into the scale and
//    the normalisation, P offset by 2^8 and rounded to e4m3, O in bf16) on mma.sync e4m3 tensor cores (sm_89+);
//  - attention_f32_naive_cuda: the three-kernel reference subject in f32 (scores, shifted softmax with expf, P V) on
//    the CUDA cores, every sum an fmaf chain in a stated order.
// Every fault of AttentionBug each kernel can carry is a runtime switch of the same device code (with_bug), so a mutant
// is the kernel with its own arithmetic changed, not a model of it. Every launch is checked; run() synchronises its
// stream before returning. The flash kernel's device code and its fragment layouts: kernels/attention/cuda/flash_kernel.cuh.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>

#include "kernels/attention/attention_kernel.hpp"
#include "kernels/attention/cuda/attention_cuda_traits.hpp"
#include "kernels/attention/cuda/flash_fp8_kernel.cuh"
#include "kernels/attention/cuda/flash_kernel.cuh"
#include "kernels/attention/cuda/naive_kernel.cuh"
#include "kernels/device/cuda_check.cuh"
#include "kernels/gemm/cuda/mma_host.cuh"
#include "kernels/register.hpp"
#include "kernels/softmax/softmax_kernel.hpp"

namespace fpcert {
namespace {

using std::int64_t;
using std::uint16_t;
using std::uint32_t;
using mma_device::FlashArgs;
using mma_device::FlashFp8Args;
using mma_device::flash_fwd;
using mma_device::flash_fwd_fp8;
using mma_device::kBK;
using mma_device::kBQ;
using mma_device::kFlashThreads;
using mma_device::kLog2e;
using mma_device::naive_pv;
using mma_device::naive_scores;
using mma_device::naive_softmax;
using mma_device::NaiveArgs;
using mma_device::scale_log2e;

// ---- host side -----------------------------------------------------------------------------------------------------

const char* kFlashOrder =
    "mma.sync.m16n8k16 with f32 accumulator fragments; S = Q K^T per 16 x 8 tile over the head dim in k-steps of 16, "
    "ascending, from +0 (one warp owns each score); O~ = P V per key block of 64 in k-steps of 16 keys, ascending, each "
    "block's MMAs added to O~ after O~ is rescaled by exp2f(m2_old - m2_new) (__fmul_rn); keys past len_k are zeros in "
    "shared memory (P = 0 and V = 0: exact zero products); the instruction's arithmetic as the GEMM ";

KernelTraits mma_gemm_traits(bool bf16_in, int pad) { return attention_mma_traits(bf16_in, pad, kFlashOrder, kBQ); }

void finish(const AttentionOperands& ops, const std::string& name) {
  FPCERT_CUDA_LAUNCH_CHECK(name.c_str());
  FPCERT_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(ops.stream)));
}

/// What the CUDA attention built-ins share: a name, the fault they carry, the declaration, and what restates them.
class CudaAttentionBase : public AttentionKernel {
 public:
  CudaAttentionBase(std::string name, AttentionBug bug) : name_(std::move(name)), bug_(bug) {}
  const std::string& name() const override { return name_; }
  std::string description() const override { return t_.note + " (" + describe_attention_traits(t_) + ")"; }
  Backend backend() const override { return Backend::Cuda; }
  MemorySpace memory() const override { return MemorySpace::Device; }
  bool is_mutant() const override { return bug_ != AttentionBug::None; }
  const AttentionTraits& attention_traits() const override { return t_; }
 protected:
  /// The flash kernels' grid (a CTA per 64 queries, heads in y, batch in z) after the declaration's own rule.
  Support flash_grid(const AttentionShape& s, CausalAlign causal, bool additive_mask) const {
    Support sup = AttentionKernel::can_implement(s, causal, additive_mask);
    if (!sup.ok) return sup;
    if (s.batch > 65535 || s.heads_q > 65535) return Support::no("batch and heads_q at most 65535 (grid z and y)");
    if ((s.len_q + kBQ - 1) / kBQ > 0x7FFFFFFF) return Support::no("len_q too large for the grid");
    return Support::yes();
  }

  std::string name_;
  AttentionBug bug_;
  AttentionTraits t_;
};

class CudaFlashAttention final : public CudaAttentionBase {
 public:
  CudaFlashAttention(bool bf16_in, AttentionBug bug)
      : CudaAttentionBase(bf16_in ? "attention_bf16_flash_cuda" : "attention_f16_flash_cuda", bug), bf16_(bf16_in) {
    AttentionTraits& t = t_;
    t.input = bf16_ ? &bf16 : &f16;
    t.qk = mma_gemm_traits(bf16_, 16);
    t.pv = mma_gemm_traits(bf16_, kBK);  // P rounded to nearest into the input format: the MMA's A operand
    t.shift = SoftmaxShift::Online;
    t.key_block = kBK;
    t.exp_form = AttentionExpForm::Base2Folded;
    t.exp = exp2_error_cuda_exp2f();
    t.sum_acc = &f32;
    t.normalize = AttentionNormalize::Reciprocal;
    t.out = t.input;
    t.writes_lse = true;
    t.log = log_error_cuda_logf();
    t.masked_rows = MaskedRowPolicy::Zero;
    t.masked_lse = MaskedLse::PosInf;
    t.masks = kAttnMaskCausalTopLeft | kAttnMaskCausalBottomRight | kAttnMaskAdditive;
    t.head_dims = {64, 128};  // 256 would need 128 O accumulators and 64 Q registers a thread: spills; declined
    t.grouped_heads = true;
    t.note =
        "FlashAttention-2-style forward (Dao 2023): one CTA per 64 query rows, 4 warps of 16 rows, Q in registers, key "
        "blocks of 64; c = RN(s log2 e) on the host; the additive mask folded into the raw score, x = RN(x + RN(mask / "
        "s)); m_x the row's running raw max, m2 = RN(m_x c), p = exp2f(fmaf(x, c, -m2)); running m2 and l in f32 per "
        "row (l = RN(RN(l alpha) + block sum), the block sum of the f32 p over a thread's 16 keys in order then the "
        "quad's butterfly), alpha = exp2f(RN(m2_old - m2_new)); O = RN_out(RN(O~ RN(1/l))); LSE = RN(RN(m_x s) + "
        "logf(l)) (natural log, as FlashAttention-2's m s + log l); fully masked rows O = +0, LSE = +Inf";
  }
  std::unique_ptr<AttentionKernel> with_bug(AttentionBug bug) const override {
    if (bug == AttentionBug::DescaleVDropped) return nullptr;  // no descale factors
    return std::make_unique<CudaFlashAttention>(bf16_, bug);
  }

  Support can_implement(const AttentionShape& s, CausalAlign causal, bool additive_mask) const override {
    if (Support sup = flash_grid(s, causal, additive_mask); !sup.ok) return sup;
    return s.head_dim == 64 ? device_support<64>() : device_support<128>();
  }

  void run(const AttentionOperands& ops) override {
    const AttentionShape& s = ops.shape;
    const Support sup = can_implement(s, ops.causal, ops.mask != nullptr);
    if (!sup.ok) throw NotSupportedError(name_ + ": " + sup.reason);
    if (s.batch == 0 || s.heads_q == 0 || s.len_q == 0) return;
    FlashArgs a{};
    a.len_q = s.len_q, a.len_k = s.len_k, a.heads_q = s.heads_q, a.heads_kv = s.heads_kv;
    a.q = static_cast<const uint16_t*>(ops.q), a.ldq = ops.ldq;
    a.k = static_cast<const uint16_t*>(ops.k), a.ldk = ops.ldk;
    a.v = static_cast<const uint16_t*>(ops.v), a.ldv = ops.ldv;
    a.mask = static_cast<const float*>(ops.mask), a.ldm = ops.ldm;
    a.causal = ops.causal != CausalAlign::None;
    a.causal_off = causal_offset(ops.causal, s, bug_ == AttentionBug::CausalOffByOne);
    a.keys = bug_ == AttentionBug::DropLastKeyBlock && s.len_k % kBK != 0 ? s.len_k / kBK * kBK : s.len_k;
    const bool after = bug_ == AttentionBug::ScaleAfterSoftmax;
    a.c = after ? kLog2e : scale_log2e(ops.scale);
    a.post_scale = after ? ops.scale : 1.0f;
    a.fold = after ? 1.0f : ops.scale;
    a.o = static_cast<uint16_t*>(ops.o), a.ldo = ops.ldo;
    a.lse = static_cast<float*>(ops.lse);
    const auto aligned = [](const void* p, int64_t ld) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0 && ld % 8 == 0; };
    a.vec = aligned(ops.q, ops.ldq) && aligned(ops.k, ops.ldk) && aligned(ops.v, ops.ldv);
    a.no_rescale = bug_ == AttentionBug::NoRescale;
    a.lse_no_max = bug_ == AttentionBug::LseNoMax;
    a.p_e4m3 = bug_ == AttentionBug::PRoundedLower;
    a.zeros = bug_ == AttentionBug::Zeros;
    const dim3 grid(static_cast<unsigned>((s.len_q + kBQ - 1) / kBQ), static_cast<unsigned>(s.heads_q), static_cast<unsigned>(s.batch));
    const auto stream = static_cast<cudaStream_t>(ops.stream);
    if (s.head_dim == 64) launch<64>(grid, stream, a);
    else launch<128>(grid, stream, a);
    finish(ops, name_);
  }

 private:
  template <int D>
  void launch(dim3 grid, cudaStream_t stream, const FlashArgs& a) const {
    if (bf16_) flash_fwd<true, D><<<grid, kFlashThreads, 0, stream>>>(a);
    else flash_fwd<false, D><<<grid, kFlashThreads, 0, stream>>>(a);
  }
  template <int D>
  Support device_support() const {
    return bf16_ ? cuda::mma_support(0, 0, 0, 80, flash_fwd<true, D>) : cuda::mma_support(0, 0, 0, 80, flash_fwd<false, D>);
  }

  bool bf16_;
};

const char* kFlashFp8Order =
    "mma.sync.m16n8k32 e4m3 with f32 accumulator fragments; S = Q K^T per 16 x 8 tile over the head dim in k-steps of 32, "
    "ascending, from +0; O~ = P V per key block of 64 in two k-steps of 32 keys, the keys of a k-step entering the "
    "instruction permuted (k-position 16h + 4t + e holds key 16h + 8 (e >> 1) + 2t + (e & 1): the score fragment's layout), "
    "each block's MMAs added to O~ after O~ is rescaled by exp2f(m2_old - m2_new); keys past len_k are zeros in shared "
    "memory; the instruction's arithmetic as the GEMM ";

/// FlashAttention-3's FP8 forward arithmetic on mma.sync (kernels/attention/cuda/flash_fp8_kernel.cuh).
class CudaFlashFp8Attention final : public CudaAttentionBase {
 public:
  explicit CudaFlashFp8Attention(AttentionBug bug) : CudaAttentionBase("attention_e4m3_flash_cuda", bug) {
    AttentionTraits& t = t_;
    t.input = &e4m3;
    t.qk = attention_e4m3_mma_traits(32, kFlashFp8Order, kBQ);
    t.pv = attention_e4m3_mma_traits(kBK, kFlashFp8Order, kBQ);  // P rounded to nearest into e4m3 (saturating): the MMA's A
    t.shift = SoftmaxShift::Online;
    t.key_block = kBK;
    t.exp_form = AttentionExpForm::Base2Folded;
    t.exp = exp2_error_cuda_exp2f();
    t.sum_acc = &f32;
    t.normalize = AttentionNormalize::Reciprocal;
    t.out = &bf16;
    t.writes_lse = true;
    t.log = log_error_cuda_logf();
    t.masked_rows = MaskedRowPolicy::Zero;
    t.masked_lse = MaskedLse::PosInf;
    t.masks = kAttnMaskCausalTopLeft | kAttnMaskCausalBottomRight;  // no additive mask (nor FlashAttention-3's FP8 path)
    t.head_dims = {64, 128};
    t.grouped_heads = true;
    t.descales = true;
    t.descale_roundings = 2;
    t.p_offset_log2 = kPOffset;
    t.note =
        "FlashAttention-3's FP8 forward (Shah et al. 2024; hopper/softmax.h): e4m3 Q, K, V with per-tensor descale factors "
        "dq, dk, dv; c = RN(RN(s log2 e) RN(dq dk)) on the host (the descales folded into the scale); m_x the running raw max, "
        "the shift m2 = RN(RN(m_x c) - 8) (Max_offset 8: P = exp2f(fmaf(x, c, -m2)) lies in [0, 256] and uses e4m3's range), "
        "P rounded to nearest into e4m3 (saturating) for the P V MMA, l the f32 sum of the unrounded P as in the f16 flash "
        "kernel, alpha = exp2f(RN(m2_old - m2_new)); O = RN_bf16(RN(O~ RN(RN(1 / l) dv))) (__frcp_rn); LSE = RN(RN(m_x "
        "RN(s RN(dq dk))) + logf(RN(l 2^-8))); fully masked rows O = +0, LSE = +Inf; on Ada and Hopper mma.sync";
  }
  std::unique_ptr<AttentionKernel> with_bug(AttentionBug bug) const override { return std::make_unique<CudaFlashFp8Attention>(bug); }

  Support can_implement(const AttentionShape& s, CausalAlign causal, bool additive_mask) const override {
    if (Support sup = flash_grid(s, causal, additive_mask); !sup.ok) return sup;
    return s.head_dim == 64 ? cuda::mma_support(0, 0, 0, 89, flash_fwd_fp8<64>) : cuda::mma_support(0, 0, 0, 89, flash_fwd_fp8<128>);
  }

  void run(const AttentionOperands& ops) override {
    const AttentionShape& s = ops.shape;
    const Support sup = can_implement(s, ops.causal, ops.mask != nullptr);
    if (!sup.ok) throw NotSupportedError(name_ + ": " + sup.reason);
    if (!(ops.descale_q > 0 && ops.descale_k > 0 && ops.descale_v > 0) || !std::isfinite(ops.descale_q * ops.descale_k * ops.descale_v))
      throw NotSupportedError(name_ + ": descale factors must be finite and positive");
    if (s.batch == 0 || s.heads_q == 0 || s.len_q == 0) return;
    FlashFp8Args a{};
    a.len_q = s.len_q, a.len_k = s.len_k, a.heads_q = s.heads_q, a.heads_kv = s.heads_kv;
    a.q = static_cast<const std::uint8_t*>(ops.q), a.ldq = ops.ldq;
    a.k = static_cast<const std::uint8_t*>(ops.k), a.ldk = ops.ldk;
    a.v = static_cast<const std::uint8_t*>(ops.v), a.ldv = ops.ldv;
    a.causal = ops.causal != CausalAlign::None;
    a.causal_off = causal_offset(ops.causal, s, bug_ == AttentionBug::CausalOffByOne);
    a.keys = bug_ == AttentionBug::DropLastKeyBlock && s.len_k % kBK != 0 ? s.len_k / kBK * kBK : s.len_k;
    const bool after = bug_ == AttentionBug::ScaleAfterSoftmax;
    const float dqk = ops.descale_q * ops.descale_k;  // RN(dq dk)
    a.c = (after ? kLog2e : scale_log2e(ops.scale)) * dqk;
    a.s_lse = after ? dqk : ops.scale * dqk;
    a.post_scale = after ? ops.scale : 1.0f;
    // PRoundedLower: P rounded into e4m3 as a probability in [0, 1] (no Max_offset: below 2^-9 it is lost).
    a.koff = bug_ == AttentionBug::PRoundedLower ? 0.0f : static_cast<float>(kPOffset);
    a.l_scale = std::ldexp(1.0f, -static_cast<int>(a.koff));
    a.dv = bug_ == AttentionBug::DescaleVDropped ? 1.0f : ops.descale_v;
    a.o = static_cast<uint16_t*>(ops.o), a.ldo = ops.ldo;
    a.lse = static_cast<float*>(ops.lse);
    a.no_rescale = bug_ == AttentionBug::NoRescale;
    a.lse_no_max = bug_ == AttentionBug::LseNoMax;
    a.zeros = bug_ == AttentionBug::Zeros;
    const dim3 grid(static_cast<unsigned>((s.len_q + kBQ - 1) / kBQ), static_cast<unsigned>(s.heads_q), static_cast<unsigned>(s.batch));
    const auto stream = static_cast<cudaStream_t>(ops.stream);
    if (s.head_dim == 64) flash_fwd_fp8<64><<<grid, kFlashThreads, 0, stream>>>(a);
    else flash_fwd_fp8<128><<<grid, kFlashThreads, 0, stream>>>(a);
    finish(ops, name_);
  }

 private:
  static constexpr int kPOffset = 8;  // FlashAttention-3's FP8 Max_offset
};

class CudaNaiveAttention final : public CudaAttentionBase {
 public:
  explicit CudaNaiveAttention(AttentionBug bug) : CudaAttentionBase("attention_f32_naive_cuda", bug) {
    AttentionTraits& t = t_;
    t.input = &f32;
    t.qk = attention_fma_f32_traits("one thread per score: x = fmaf(q_D-1, k_D-1, ... fmaf(q_0, k_0, +0)), head dim ascending");
    t.pv = attention_fma_f32_traits("one thread per output element: fmaf(p_L-1, v_L-1, ... fmaf(p_0, v_0, +0)), keys ascending; P f32");
    t.shift = SoftmaxShift::Shifted;
    t.key_block = 0;  // no key blocks: the row's max first, over every key
    t.exp_form = AttentionExpForm::Natural;
    t.exp = exp_error_cuda_expf();
    t.sum_acc = &f32;
    t.normalize = AttentionNormalize::Divide;
    t.out = &f32;
    t.writes_lse = true;
    t.log = log_error_cuda_logf();
    t.masked_rows = MaskedRowPolicy::Zero;
    t.masked_lse = MaskedLse::NegInf;
    t.head_dims = {};
    t.grouped_heads = true;
    t.note =
        "three kernels in f32 on the CUDA cores: z = RN(RN(s x) + mask) with x an fmaf chain; one warp per row: m = max "
        "z, p = expf(RN(z - m)) stored in f32, l = the lanes' sequential sums (j = lane, lane + 32, ...) added by a "
        "__shfl_xor_sync butterfly; O = RN(fmaf chain of p v over the keys / l) (__fdiv_rn); LSE = RN(m + logf(l)); "
        "fully masked rows O = +0, LSE = -Inf (log 0)";
  }
  std::unique_ptr<AttentionKernel> with_bug(AttentionBug bug) const override {
    if (bug == AttentionBug::NoRescale || bug == AttentionBug::DropLastKeyBlock || bug == AttentionBug::DescaleVDropped)
      return nullptr;  // no online softmax, no key blocks, no descale factors
    return std::make_unique<CudaNaiveAttention>(bug);
  }

  Support can_implement(const AttentionShape& s, CausalAlign causal, bool additive_mask) const override {
    Support sup = AttentionKernel::can_implement(s, causal, additive_mask);
    if (!sup.ok) return sup;
    std::string why;
    if (cuda::device_sm(why) == 0) return Support::no(why);
    return Support::yes();
  }

  void run(const AttentionOperands& ops) override {
    const AttentionShape& s = ops.shape;
    const Support sup = can_implement(s, ops.causal, ops.mask != nullptr);
    if (!sup.ok) throw NotSupportedError(name_ + ": " + sup.reason);
    const int64_t rows = s.batch * s.heads_q * s.len_q;
    if (rows == 0 || s.head_dim == 0) return;
    NaiveArgs a{};
    a.len_q = s.len_q, a.len_k = s.len_k, a.heads_q = s.heads_q, a.heads_kv = s.heads_kv, a.d = s.head_dim;
    a.q = static_cast<const float*>(ops.q), a.ldq = ops.ldq;
    a.k = static_cast<const float*>(ops.k), a.ldk = ops.ldk;
    a.v = static_cast<const float*>(ops.v), a.ldv = ops.ldv;
    a.mask = static_cast<const float*>(ops.mask), a.ldm = ops.ldm;
    a.causal = ops.causal != CausalAlign::None;
    a.causal_off = causal_offset(ops.causal, s, bug_ == AttentionBug::CausalOffByOne);
    const bool after = bug_ == AttentionBug::ScaleAfterSoftmax;
    a.scale = after ? 1.0f : ops.scale;
    a.post_scale = after ? ops.scale : 1.0f;
    a.o = static_cast<float*>(ops.o), a.ldo = ops.ldo;
    a.lse = static_cast<float*>(ops.lse);
    a.rows = rows;
    a.lse_no_max = bug_ == AttentionBug::LseNoMax;
    a.p_f16 = bug_ == AttentionBug::PRoundedLower;
    a.zeros = bug_ == AttentionBug::Zeros;
    const auto stream = static_cast<cudaStream_t>(ops.stream);
    void* ws = nullptr;
    const std::size_t bytes = static_cast<std::size_t>(rows) * static_cast<std::size_t>(std::max<int64_t>(s.len_k, 1) + 2) * sizeof(float);
    FPCERT_CUDA_CHECK(cudaMallocAsync(&ws, bytes, stream));
    a.s = static_cast<float*>(ws);
    a.stat = a.s + rows * s.len_k;
    const auto blocks = [](int64_t n, int per) { return static_cast<unsigned>(std::clamp<int64_t>((n + per - 1) / per, 1, 65535 * 16)); };
    try {
      if (s.len_k > 0) {
        naive_scores<<<blocks(rows * s.len_k, 256), 256, 0, stream>>>(a);
        FPCERT_CUDA_LAUNCH_CHECK("attention_f32_naive_cuda scores");
      }
      naive_softmax<<<blocks(rows, 4), 128, 0, stream>>>(a);
      FPCERT_CUDA_LAUNCH_CHECK("attention_f32_naive_cuda softmax");
      naive_pv<<<blocks(rows * s.head_dim, 256), 256, 0, stream>>>(a);
      FPCERT_CUDA_LAUNCH_CHECK("attention_f32_naive_cuda pv");
      FPCERT_CUDA_CHECK(cudaFreeAsync(ws, stream));
      ws = nullptr;
      FPCERT_CUDA_CHECK(cudaStreamSynchronize(stream));
    } catch (...) {
      if (ws) cudaFreeAsync(ws, stream);
      throw;
    }
  }

};

}  // namespace

void register_attention_cuda_kernels() {
  register_kernel("attention_f16_flash_cuda", Backend::Cuda, false, [] { return std::make_unique<CudaFlashAttention>(false, AttentionBug::None); },
                  Operation::Attention);
  register_kernel("attention_bf16_flash_cuda", Backend::Cuda, false, [] { return std::make_unique<CudaFlashAttention>(true, AttentionBug::None); },
                  Operation::Attention);
  register_kernel("attention_e4m3_flash_cuda", Backend::Cuda, false, [] { return std::make_unique<CudaFlashFp8Attention>(AttentionBug::None); },
                  Operation::Attention);
  register_kernel("attention_f32_naive_cuda", Backend::Cuda, false, [] { return std::make_unique<CudaNaiveAttention>(AttentionBug::None); },
                  Operation::Attention);
}

}  // namespace fpcert
