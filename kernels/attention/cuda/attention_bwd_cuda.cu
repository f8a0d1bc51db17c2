// kernels/attention/cuda/attention_bwd_cuda.cu — CUDA attention backward built-ins (docs/backward.md, "Attention
// backward", "CUDA kernels"):
//  - attention_bwd_{f16,bf16}_flash_cuda: FlashAttention-2's backward on mma.sync tensor cores (f32 accumulators), dK
//    and dV per key block, dQ added into an f32 buffer with atomics (run to run);
//  - attention_bwd_{f16,bf16}_flash_det_cuda: the same dK and dV, dQ by a second kernel per query block looping over the
//    key blocks in a fixed order (deterministic);
//  - attention_bwd_f32_naive_cuda: f32 on the CUDA cores, one thread per output element, every sum an fmaf chain.
// Every fault of AttentionBwdBug a kernel can carry is a runtime switch of the same device code (with_bug). Every launch
// is checked, the workspaces are the kernel's own (allocated and freed on the call's stream), run() synchronises its
// stream before returning. Device code: attention_bwd_kernel.cuh (flash), attention_bwd_naive.cuh (naive).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "kernels/attention/attention_backward_kernel.hpp"
#include "kernels/attention/cuda/attention_bwd_kernel.cuh"
#include "kernels/attention/cuda/attention_bwd_naive.cuh"
#include "kernels/attention/cuda/attention_cuda_traits.hpp"
#include "kernels/device/cuda_check.cuh"
#include "kernels/gemm/cuda/mma_host.cuh"
#include "kernels/register.hpp"
#include "kernels/softmax/softmax_kernel.hpp"

namespace fpcert {
namespace {

using std::int64_t;
using std::uint16_t;
using mma_device::BwdArgs;
using mma_device::bwd_dot;
using mma_device::bwd_dq_convert;
using mma_device::bwd_dq_smem_bytes;
using mma_device::bwd_flash_dq;
using mma_device::bwd_flash_kv;
using mma_device::bwd_kv_smem_bytes;
using mma_device::kBwdBlock;
using mma_device::kBwdThreads;
using mma_device::naive_bwd_dkv;
using mma_device::naive_bwd_dq;
using mma_device::naive_bwd_p;
using mma_device::NaiveBwdArgs;

unsigned grid_blocks(int64_t n, int per) { return static_cast<unsigned>(std::clamp<int64_t>((n + per - 1) / per, 1, 65535 * 16)); }

/// A device workspace of `bytes` on `stream`, freed (asynchronously, on the stream) when it goes out of scope.
class Workspace {
 public:
  Workspace(std::size_t bytes, cudaStream_t stream) : stream_(stream) { FPCERT_CUDA_CHECK(cudaMallocAsync(&p_, std::max<std::size_t>(bytes, 16), stream)); }
  ~Workspace() {
    if (p_) cudaFreeAsync(p_, stream_);
  }
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;
  template <class T>
  T* at(std::size_t byte_offset) const {
    return reinterpret_cast<T*>(static_cast<unsigned char*>(p_) + byte_offset);
  }
  /// Free now, checked (the destructor's free is for the error path).
  void release() {
    void* p = p_;
    p_ = nullptr;
    FPCERT_CUDA_CHECK(cudaFreeAsync(p, stream_));
  }

 private:
  void* p_ = nullptr;
  cudaStream_t stream_;
};

/// Whether the device gives a CTA `bytes` of dynamic shared memory.
Support smem_support(int bytes) {
  int dev = 0, optin = 0;
  FPCERT_CUDA_CHECK(cudaGetDevice(&dev));
  FPCERT_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  if (optin < bytes)
    return Support::no("needs " + std::to_string(bytes) + " bytes of shared memory per block; this device gives " + std::to_string(optin));
  return Support::yes();
}

/// The fields BwdArgs and NaiveBwdArgs share, from the call and the fault; T: the tensors' element (f16/bf16 codes or f32).
template <class T, class Args>
void set_common_args(Args& a, const AttentionBwdOperands& ops, AttentionBwdBug bug) {
  const AttentionShape& s = ops.shape;
  a.len_q = s.len_q, a.len_k = s.len_k, a.heads_q = s.heads_q, a.heads_kv = s.heads_kv;
  a.q = static_cast<const T*>(ops.q), a.ldq = ops.ldq;
  a.k = static_cast<const T*>(ops.k), a.ldk = ops.ldk;
  a.v = static_cast<const T*>(ops.v), a.ldv = ops.ldv;
  a.d_o = static_cast<const T*>(ops.d_o), a.lddo = ops.lddo;
  a.lse = static_cast<const float*>(ops.lse);
  a.mask = static_cast<const float*>(ops.mask), a.ldm = ops.ldm;
  a.causal = ops.causal != CausalAlign::None;
  a.causal_off = causal_offset(ops.causal, s, bug == AttentionBwdBug::CausalOffByOne);
  a.scale = ops.scale;
  a.dq_scales = bug == AttentionBwdBug::DqScaleMissing ? 0 : bug == AttentionBwdBug::DqScaleTwice ? 2 : 1;
  a.lse_wrong_base = bug == AttentionBwdBug::LseWrongBase;
  a.no_d = bug == AttentionBwdBug::NoDSubtract;
  a.gqa_last = bug == AttentionBwdBug::GqaNotSummed;
  a.zeros = bug == AttentionBwdBug::Zeros;
  a.dq = static_cast<T*>(ops.dq), a.lddq = ops.lddq;
  a.dk = static_cast<T*>(ops.dk), a.lddk = ops.lddk;
  a.dv = static_cast<T*>(ops.dv), a.lddv = ops.lddv;
}

const char* const kBwdMmaOrder =
    "mma.sync.m16n8k16 with f32 accumulator fragments, k-steps of 16 ascending from +0; operands past len_q or len_k are "
    "zeros in shared memory (exact zero products); the instruction's arithmetic as the GEMM ";

/// The five products' traits of the flash backward: S^T and dP^T over the head dim; dV and dK over the group's query
/// heads (ascending) and their query blocks of 64 (ascending) in one accumulator chain; dQ over the key blocks (one chain
/// when deterministic, per-block partials added with atomics otherwise).
void flash_gemm_traits(AttentionBwdTraits& t, bool bf16_in, bool det) {
  t.qk = attention_mma_traits(bf16_in, 16, std::string("S^T = K Q^T per 16 x 8 tile over the head dim; ") + kBwdMmaOrder, kBwdBlock);
  t.dov = attention_mma_traits(bf16_in, 16, std::string("dP^T = V dO^T per 16 x 8 tile over the head dim; ") + kBwdMmaOrder, kBwdBlock);
  t.pdo = attention_mma_traits(bf16_in, kBwdBlock,
                               std::string("dV = P^T dO, P rounded to nearest into the input format; one chain over the group's "
                                           "query heads and their query blocks of 64, each padded with zeros; ") + kBwdMmaOrder,
                               kBwdBlock);
  t.dsq = attention_mma_traits(bf16_in, kBwdBlock,
                               std::string("dK = dS^T Q before the scale, dS rounded to nearest into the input format; one "
                                           "chain over the group's query heads and their query blocks of 64; ") + kBwdMmaOrder,
                               kBwdBlock);
  if (det) {
    t.dsk = attention_mma_traits(bf16_in, kBwdBlock,
                                 std::string("dQ = dS K before the scale, one chain over the key blocks of 64 ascending (a CTA "
                                             "per query block); ") + kBwdMmaOrder,
                                 kBwdBlock);
    return;
  }
  t.dsk = attention_mma_traits(bf16_in, kBwdBlock,
                               std::string("dQ = dS K before the scale: per key block of 64 a partial (an MMA chain from +0 over "
                                           "its 64 keys), the partials added into an f32 buffer of +0 with a compare-and-swap "
                                           "__fadd_rn each, in the order the CTAs arrive; ") + kBwdMmaOrder,
                               kBwdBlock);
  const std::string instruction = t.dsk.sum_order.block_model.instruction;
  t.dsk.sum_order = SummationOrder::unknown();  // split by key block, the split count len_k / 64: no fixed order
  t.dsk.sum_order.block_model.instruction = instruction;
  t.dsk.determinism = Determinism::RunToRun;
  t.dsk.determinism_note = "the key blocks' CTAs add their dQ partials with atomics as they finish (FlashAttention 2's dQ)";
}

/// What the CUDA backward built-ins share: their name, traits and fault, and the Kernel overrides that read them.
class CudaAttentionBwd : public AttentionBwdKernel {
 public:
  const std::string& name() const override { return name_; }
  std::string description() const override { return t_.note + " (" + describe_attention_bwd_traits(t_) + ")"; }
  Backend backend() const override { return Backend::Cuda; }
  MemorySpace memory() const override { return MemorySpace::Device; }
  bool is_mutant() const override { return bug_ != AttentionBwdBug::None; }
  const AttentionBwdTraits& attention_bwd_traits() const override { return t_; }

 protected:
  CudaAttentionBwd(std::string name, AttentionBwdBug bug) : bug_(bug), name_(std::move(name)) {}
  AttentionBwdBug bug_;
  std::string name_;
  AttentionBwdTraits t_;
};

class CudaFlashAttentionBwd final : public CudaAttentionBwd {
 public:
  CudaFlashAttentionBwd(bool bf16_in, bool det, AttentionBwdBug bug)
      : CudaAttentionBwd(std::string("attention_bwd_") + (bf16_in ? "bf16" : "f16") + (det ? "_flash_det_cuda" : "_flash_cuda"), bug),
        bf16_(bf16_in),
        det_(det) {
    AttentionBwdTraits& t = t_;
    t.input = bf16_ ? &bf16 : &f16;
    flash_gemm_traits(t, bf16_, det_);
    t.exp_form = AttentionExpForm::Base2Folded;
    t.exp = exp2_error_cuda_exp2f();
    t.d_acc = &f32;
    t.compute = &f32;
    t.dq_determinism = det_ ? Determinism::Deterministic : Determinism::RunToRun;
    t.dq_acc = &f32;
    t.dq_out = t.dk_out = t.dv_out = t.input;
    t.masks = kAttnMaskCausalTopLeft | kAttnMaskCausalBottomRight | kAttnMaskAdditive;
    t.head_dims = {64, 128};  // 256: 128 dK + 128 dV accumulators a thread would spill; declined as the forward does
    t.grouped_heads = true;
    t.masked_lse = MaskedLse::PosInf;
    t.reads_saved = true;
    t.note = std::string(
                 "FlashAttention-2 backward (Dao 2023, Algorithm 2): D_i = sum dO_ic O_ic, an fmaf chain per lane (c = lane, "
                 "lane + 32, ...) then a __shfl_xor_sync butterfly, products exact in f32; one CTA per key block of 64 and "
                 "key/value head, 4 warps of 16 keys, looping over the group's query heads and query blocks of 64: c = RN(s "
                 "log2 e) on the host, l2 = RN(LSE RN(log2 e)), the additive mask folded into the raw score as x = RN(x + "
                 "RN(mask / s)), P = exp2f(fmaf(x, c, -l2)) (0 where masked, LSE +Inf: P = 0), dS = RN(P RN(dP - D)), P and "
                 "dS rounded to nearest into the input format before their MMAs; dK = RN_out(RN(s dK~)), dV = RN_out(dV~); ") +
             (det_ ? "dQ by a CTA per query block over the key blocks in ascending order, dQ = RN_out(RN(s dQ~))"
                   : "dQ~ per key block added into an f32 buffer with atomics (run to run), then dQ = RN_out(RN(s dQ~))");
  }
  std::unique_ptr<AttentionBwdKernel> with_bug(AttentionBwdBug bug) const override {
    if (bug == AttentionBwdBug::DqAtomicsBf16 && det_) return nullptr;  // no atomics
    return std::make_unique<CudaFlashAttentionBwd>(bf16_, det_, bug);
  }

  Support can_implement(const AttentionShape& s, CausalAlign causal, bool additive_mask) const override {
    Support sup = AttentionBwdKernel::can_implement(s, causal, additive_mask);
    if (!sup.ok) return sup;
    if (s.batch > 65535 || s.heads_q > 65535) return Support::no("batch and heads_q at most 65535 (grid z and y)");
    if ((s.len_q + kBwdBlock - 1) / kBwdBlock > 0x7FFFFFFF || (s.len_k + kBwdBlock - 1) / kBwdBlock > 0x7FFFFFFF)
      return Support::no("len_q or len_k too large for the grid");
    return s.head_dim == 64 ? device_support<64>() : device_support<128>();
  }

  void run(const AttentionBwdOperands& ops) override {
    const AttentionShape& s = ops.shape;
    const Support sup = can_implement(s, ops.causal, ops.mask != nullptr);
    if (!sup.ok) throw NotSupportedError(name_ + ": " + sup.reason);
    const auto stream = static_cast<cudaStream_t>(ops.stream);
    const int64_t rows = s.batch * s.heads_q * s.len_q, d = s.head_dim;
    BwdArgs a{};
    set_common_args<uint16_t>(a, ops, bug_);
    a.batch = s.batch;
    a.o = static_cast<const uint16_t*>(ops.o), a.ldo = ops.ldo;
    a.c = attention_scale_log2e(ops.scale);
    a.fold = ops.scale;
    a.d_from_do = bug_ == AttentionBwdBug::DFromWrongO;
    const auto aligned = [](const void* p, int64_t ld) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0 && ld % 8 == 0; };
    a.vec = aligned(ops.q, ops.ldq) && aligned(ops.k, ops.ldk) && aligned(ops.v, ops.ldv) && aligned(ops.d_o, ops.lddo);

    // Workspace: D (rows f32), then the atomic dQ~ (rows x d, f32; bf16 for the DqAtomicsBf16 fault).
    const bool bf16_acc = bug_ == AttentionBwdBug::DqAtomicsBf16;
    const std::size_t d_bytes = static_cast<std::size_t>(rows) * sizeof(float);
    const std::size_t acc_bytes = det_ ? 0 : static_cast<std::size_t>(rows * d) * (bf16_acc ? 2 : 4);
    Workspace ws((d_bytes + 15) / 16 * 16 + acc_bytes, stream);
    a.delta = ws.at<float>(0);
    if (!det_) {
      if (bf16_acc) a.dq_acc16 = ws.at<uint16_t>((d_bytes + 15) / 16 * 16);
      else a.dq_acc = ws.at<float>((d_bytes + 15) / 16 * 16);
      FPCERT_CUDA_CHECK(cudaMemsetAsync(ws.at<void>((d_bytes + 15) / 16 * 16), 0, acc_bytes, stream));  // +0 in f32 and bf16
    }
    const auto dot = bf16_ ? bwd_dot<uint16_t, true> : bwd_dot<uint16_t, false>;
    dot<<<grid_blocks(rows, kBwdThreads / 32), kBwdThreads, 0, stream>>>(a, d, a.o, a.ldo, a.d_o, a.lddo);
    FPCERT_CUDA_LAUNCH_CHECK((name_ + " D").c_str());
    if (d == 64) launch<64>(a, stream);
    else launch<128>(a, stream);
    if (!det_) {
      const auto convert = bf16_ ? bwd_dq_convert<true> : bwd_dq_convert<false>;
      convert<<<grid_blocks(rows * d, 256), 256, 0, stream>>>(a, d);
      FPCERT_CUDA_LAUNCH_CHECK((name_ + " dQ conversion").c_str());
    }
    ws.release();
    FPCERT_CUDA_CHECK(cudaStreamSynchronize(stream));
  }

 private:
  template <int D>
  void launch(const BwdArgs& a, cudaStream_t stream) const {
    const auto kv = bf16_ ? bwd_flash_kv<true, D> : bwd_flash_kv<false, D>;
    constexpr int kv_bytes = bwd_kv_smem_bytes<D>();
    FPCERT_CUDA_CHECK(cudaFuncSetAttribute(kv, cudaFuncAttributeMaxDynamicSharedMemorySize, kv_bytes));
    const dim3 kv_grid(static_cast<unsigned>((a.len_k + kBwdBlock - 1) / kBwdBlock), static_cast<unsigned>(a.heads_kv),
                       static_cast<unsigned>(a.batch));
    kv<<<kv_grid, kBwdThreads, kv_bytes, stream>>>(a);
    FPCERT_CUDA_LAUNCH_CHECK((name_ + " dK dV").c_str());
    if (!det_) return;
    const auto dq = bf16_ ? bwd_flash_dq<true, D> : bwd_flash_dq<false, D>;
    constexpr int dq_bytes = bwd_dq_smem_bytes<D>();
    FPCERT_CUDA_CHECK(cudaFuncSetAttribute(dq, cudaFuncAttributeMaxDynamicSharedMemorySize, dq_bytes));
    const dim3 dq_grid(static_cast<unsigned>((a.len_q + kBwdBlock - 1) / kBwdBlock), static_cast<unsigned>(a.heads_q),
                       static_cast<unsigned>(a.batch));
    dq<<<dq_grid, kBwdThreads, dq_bytes, stream>>>(a);
    FPCERT_CUDA_LAUNCH_CHECK((name_ + " dQ").c_str());
  }
  template <int D>
  Support device_support() const {
    // The DqAtomicsBf16 fault's atom.add.bf16 needs sm_90; the correct kernels sm_80 (mma.sync bf16/f16).
    const int arch = bug_ == AttentionBwdBug::DqAtomicsBf16 ? 90 : 80;
    const Support sup = bf16_ ? cuda::mma_support(0, 0, 0, arch, bwd_flash_kv<true, D>) : cuda::mma_support(0, 0, 0, arch, bwd_flash_kv<false, D>);
    if (!sup.ok) return sup;
    return smem_support(std::max(bwd_kv_smem_bytes<D>(), bwd_dq_smem_bytes<D>()));
  }

  bool bf16_, det_;
};

class CudaNaiveAttentionBwd final : public CudaAttentionBwd {
 public:
  explicit CudaNaiveAttentionBwd(AttentionBwdBug bug) : CudaAttentionBwd("attention_bwd_f32_naive_cuda", bug) {
    AttentionBwdTraits& t = t_;
    t.input = &f32;
    t.qk = attention_fma_f32_traits("one thread per (row, key): x = fmaf(q_D-1, k_D-1, ... fmaf(q_0, k_0, +0)), head dim ascending");
    t.dov = attention_fma_f32_traits("the same thread: dP = fmaf chain of dO_c v_c from +0, head dim ascending");
    t.pdo = attention_fma_f32_traits("one thread per dV element: fmaf chain of P_ij dO_ic from +0 over the group's query heads "
                                     "ascending, then their queries ascending; P f32");
    t.dsk = attention_fma_f32_traits("one thread per dQ element: fmaf chain of dS_ij k_jc from +0, keys ascending; dS f32");
    t.dsq = attention_fma_f32_traits("one thread per dK element: fmaf chain of dS_ij q_ic from +0 over the group's query heads "
                                     "ascending, then their queries ascending; dS f32");
    t.exp_form = AttentionExpForm::Natural;
    t.exp = exp_error_cuda_expf();
    t.d_acc = &f32;
    t.compute = &f32;
    t.dq_determinism = Determinism::Deterministic;
    t.dq_acc = &f32;
    t.dq_out = t.dk_out = t.dv_out = &f32;
    t.head_dims = {};
    t.grouped_heads = true;
    t.masked_lse = MaskedLse::NegInf;  // as attention_f32_naive_cuda writes it (+Inf is taken as well: P = 0)
    t.reads_saved = true;
    t.note =
        "four kernels in f32 on the CUDA cores: D_i = sum dO_ic O_ic (an fmaf chain per lane, c = lane, lane + 32, ..., then "
        "a __shfl_xor_sync butterfly); per (row, key) z = RN(RN(s x) + mask) with x an fmaf chain, P = expf(RN(z - LSE)) "
        "(0 where causally masked or LSE +-Inf), dS = RN(P RN(dP - D)), P and dS kept in f32; dQ = RN(s fmaf chain), dK = "
        "RN(s fmaf chain), dV = fmaf chain, one thread per output element";
  }
  std::unique_ptr<AttentionBwdKernel> with_bug(AttentionBwdBug bug) const override {
    if (bug == AttentionBwdBug::DqAtomicsBf16) return nullptr;  // no atomics
    return std::make_unique<CudaNaiveAttentionBwd>(bug);
  }

  Support can_implement(const AttentionShape& s, CausalAlign causal, bool additive_mask) const override {
    Support sup = AttentionBwdKernel::can_implement(s, causal, additive_mask);
    if (!sup.ok) return sup;
    std::string why;
    if (cuda::device_sm(why) == 0) return Support::no(why);
    return Support::yes();
  }

  void run(const AttentionBwdOperands& ops) override {
    const AttentionShape& s = ops.shape;
    const Support sup = can_implement(s, ops.causal, ops.mask != nullptr);
    if (!sup.ok) throw NotSupportedError(name_ + ": " + sup.reason);
    const auto stream = static_cast<cudaStream_t>(ops.stream);
    NaiveBwdArgs a{};
    set_common_args<float>(a, ops, bug_);
    a.d = s.head_dim;
    a.rows = s.batch * s.heads_q * s.len_q;
    a.kv_rows = s.batch * s.heads_kv * s.len_k;

    const std::size_t pn = static_cast<std::size_t>(a.rows * s.len_k);
    Workspace ws((static_cast<std::size_t>(a.rows) + 2 * pn) * sizeof(float), stream);
    float* delta = ws.at<float>(0);
    a.delta = delta;
    a.p = delta + a.rows;
    a.ds = a.p + pn;
    BwdArgs da{};  // D's kernel reads the shape, the DFromWrongO switch and where D goes
    da.batch = s.batch, da.heads_q = s.heads_q, da.len_q = s.len_q;
    da.d_from_do = bug_ == AttentionBwdBug::DFromWrongO;
    da.delta = delta;
    bwd_dot<float, false><<<grid_blocks(a.rows, 4), 128, 0, stream>>>(da, s.head_dim, static_cast<const float*>(ops.o), ops.ldo, a.d_o,
                                                                    a.lddo);
    FPCERT_CUDA_LAUNCH_CHECK("attention_bwd_f32_naive_cuda D");
    naive_bwd_p<<<grid_blocks(static_cast<int64_t>(pn), 256), 256, 0, stream>>>(a);
    FPCERT_CUDA_LAUNCH_CHECK("attention_bwd_f32_naive_cuda P dS");
    naive_bwd_dq<<<grid_blocks(a.rows * s.head_dim, 256), 256, 0, stream>>>(a);
    FPCERT_CUDA_LAUNCH_CHECK("attention_bwd_f32_naive_cuda dQ");
    naive_bwd_dkv<<<grid_blocks(a.kv_rows * s.head_dim, 256), 256, 0, stream>>>(a);
    FPCERT_CUDA_LAUNCH_CHECK("attention_bwd_f32_naive_cuda dK dV");
    ws.release();
    FPCERT_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
};

}  // namespace

void register_attention_bwd_cuda_kernels() {
  for (const bool bf : {false, true})
    for (const bool det : {false, true}) {
      const std::string name = std::string("attention_bwd_") + (bf ? "bf16" : "f16") + (det ? "_flash_det_cuda" : "_flash_cuda");
      register_kernel(name, Backend::Cuda, false, [bf, det] { return std::make_unique<CudaFlashAttentionBwd>(bf, det, AttentionBwdBug::None); },
                      Operation::AttentionBackward);
    }
  register_kernel("attention_bwd_f32_naive_cuda", Backend::Cuda, false,
                  [] { return std::make_unique<CudaNaiveAttentionBwd>(AttentionBwdBug::None); }, Operation::AttentionBackward);
}

}  // namespace fpcert
