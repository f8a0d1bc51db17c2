// kernels/gemm/cuda/mma.cu — tensor-core GEMMs with warp-level mma.sync (inline PTX), fp32 accumulation
// and fp32 output, for fp16, bf16, tf32 (fp32 inputs rounded with cvt.rna.tf32.f32 in the kernel),
// e4m3 and e5m2, and the FP8 kernels with promotion of partial sums to fp32 every N products:
//   gemm_f16_f32acc_mma_sm80    mma.sync.m16n8k16 .f32.f16.f16.f32
//   gemm_bf16_f32acc_mma_sm80   mma.sync.m16n8k16 .f32.bf16.bf16.f32
//   gemm_tf32_f32acc_mma_sm80   mma.sync.m16n8k8  .f32.tf32.tf32.f32
//   gemm_e4m3_f32acc_mma_sm89   mma.sync.m16n8k32 .f32.e4m3.e4m3.f32 (and _promote128)
//   gemm_e5m2_f32acc_mma_sm89   mma.sync.m16n8k32 .f32.e5m2.e5m2.f32 (and _promote128)
//
// The device code and its design (tiles, fragment layouts from the PTX ISA) are in
// kernels/gemm/cuda/mma_kernel.cuh; this file holds the traits, the launch and the registration.
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "kernels/device/cuda_check.cuh"
#include "kernels/gemm/cpu/model.hpp"
#include "kernels/gemm/cuda/mma_host.cuh"
#include "kernels/gemm/cuda/mma_kernel.cuh"
#include "kernels/register.hpp"

namespace fpcert {
namespace {

using namespace mma_device;

// ---- host side ----

const char* kTensorCoreOrder =
    "inside one MMA the summation order, alignment and rounding of the block's exact products and the "
    "accumulator are not specified by NVIDIA; measured on V100/T4/A100 (Fasi, Higham, Mikaitis, Pranesh, "
    "PeerJ CS 7:e330, 2021): exact products, alignment to the largest exponent with truncation, "
    "normalisation toward zero; Khattak and Mikaitis (arXiv:2512.07004, 2025) model V100..B200 with "
    "per-generation accumulator widths; modelled here as fp32 accumulation rounded toward zero (one ulp "
    "per step), the coarser of the possibilities";
const char* kFp8AccNote =
    "on sm_89 (Ada) the instruction is native and FP8 MMAs keep about 13 fraction bits of the running sum with "
    "truncation (Khattak, Mikaitis, arXiv:2512.07004, 2025; DeepSeek-V3 Technical Report, 2024, sec. 3.3.2, for "
    "Hopper's wgmma FP8); on sm_90 (Hopper) mma.sync FP8 is not native: the compiler converts the operands to fp16 "
    "(exact for e4m3 and e5m2) and runs two fp16 MMAs from +0, the products with k mod 4 in {0, 1} then {2, 3}, "
    "adding the accumulator C last by an fp32 add (SASS of the instruction on an H200; docs/tensor_cores.md, "
    "\"FP8 mma.sync on Hopper\": the probe's card models it bit for bit); NVIDIA documents neither: without a "
    "validated card the traits take f32r13 rounded toward zero, the coarser";

template <Mma T>
KernelTraits mma_traits(int promote_every) {
  KernelTraits t;
  const char* blocks = "";
  switch (T) {
    case Mma::F16:
      t.a_input = t.b_input = t.a_operand = t.b_operand = &f16;
      blocks = "k-blocks of 16 (mma.sync m16n8k16)";
      break;
    case Mma::BF16:
      t.a_input = t.b_input = t.a_operand = t.b_operand = &bf16;
      blocks = "k-blocks of 16 (mma.sync m16n8k16)";
      break;
    case Mma::TF32:
      t.a_input = t.b_input = &f32;
      t.a_operand = t.b_operand = &tf32;
      t.input_rounding = Rounding::NearestAway;  // cvt.rna.tf32.f32 in the kernel
      blocks = "a, b rounded to tf32 nearest-away (cvt.rna.tf32.f32); k-blocks of 8 (mma.sync m16n8k8)";
      break;
    case Mma::E4M3:
      t.a_input = t.b_input = t.a_operand = t.b_operand = &e4m3;
      blocks = "k-blocks of 32 (mma.sync m16n8k32)";
      break;
    case Mma::E5M2:
      t.a_input = t.b_input = t.a_operand = t.b_operand = &e5m2;
      blocks = "k-blocks of 32 (mma.sync m16n8k32)";
      break;
  }
  t.exact_products = true;
  t.acc = &f32;
  t.acc_rounding = Rounding::TowardZero;
  t.out = &f32;
  std::string order = std::string(blocks) +
                      " applied for k ascending, each MMA adding its block to the accumulator fragment (fp32 registers) "
                      "(from +0; the K tail zero-padded, which adds exact zeros); one warp owns each C element "
                      "for all of K, so the order is fixed and runs are bitwise reproducible; ";
  if (T == Mma::E4M3 || T == Mma::E5M2) {
    // The low-precision accumulator of the CPU model of FP8 MMAs (one descriptor, not typed twice).
    t.acc = make_cpu_model("model_gemm_e4m3_lpacc")->traits().acc;
    order += kFp8AccNote;
    if (promote_every > 0) {
      t.promote_every = promote_every;
      t.promote_format = &f32;
      order += "; promotion: every " + std::to_string(promote_every) + " products (" +
               std::to_string(promote_every / 32) +
               " MMAs chained from +0) the partial fragment is added to an fp32 accumulator with one RN "
               "fp32 add (__fadd_rn) and reset to +0; the remainder is added at the end";
    }
  } else {
    order += kTensorCoreOrder;
  }
  t.order = std::move(order);
  // The instruction's k per step, K zero-padded to whole shared-memory stages (kStageBytes of K: two
  // MMAs), the instruction whose behaviour card gives the block model. Until certify installs a validated
  // card of this device the model stays the placeholder: the bitwise tier declines, the envelope judges
  // (docs/tensor_cores.md, "Certifying tensor-core kernels").
  const int mma_k = MmaInfo<T>::kK;
  const char* insn = T == Mma::F16 ? "mma_f16_f32" : T == Mma::BF16 ? "mma_bf16_f32" : T == Mma::TF32 ? "mma_tf32_f32"
                   : T == Mma::E4M3 ? "mma_e4m3_f32" : "mma_e5m2_f32";
  t.sum_order = SummationOrder::tensor_core(mma_k, insn, kStageBytes / MmaInfo<T>::kBytes);
  return t;
}

template <Mma T>
class MmaKernel final : public GemmKernel {
  static constexpr bool kFp8 = T == Mma::E4M3 || T == Mma::E5M2;

 public:
  MmaKernel(std::string name, int promote_every) : name_(std::move(name)), promote_every_(promote_every) {
    if (promote_every < 0 || promote_every % 32 != 0 || (!kFp8 && promote_every != 0))
      throw std::invalid_argument("mma kernel " + name_ + ": promotion every " + std::to_string(promote_every) +
                                  " products: need an FP8 kernel and a positive multiple of 32 (the MMA's K)");
    traits_ = mma_traits<T>(promote_every);
    traits_.tile_m = kBM;  // one block computes a kBM x kBN tile of C (a report shows worst elements in it)
    traits_.tile_n = kBN;
  }
  const std::string& name() const override { return name_; }
  std::string description() const override {
    std::string d = "tensor-core GEMM, warp-level mma.sync (block 128x128, 8 warps of 64x32, K stages of 64 bytes "
                    "double-buffered in shared memory), fp32 accumulation and output";
    if (promote_every_ > 0) d += ", partial sums promoted to fp32 every " + std::to_string(promote_every_) + " products";
    return d;
  }
  Backend backend() const override { return Backend::Cuda; }
  MemorySpace memory() const override { return MemorySpace::Device; }
  const KernelTraits& traits() const override { return traits_; }

  Support can_implement(std::int64_t m, std::int64_t n, std::int64_t k) const override {
    constexpr int need = MmaInfo<T>::kArch;
    if constexpr (kFp8)
      return promote_every_ > 0 ? cuda::mma_support(m, n, k, need, mma_gemm<T, true>) : cuda::mma_support(m, n, k, need, mma_gemm<T, false>);
    else return cuda::mma_support(m, n, k, need, mma_gemm<T, false>);
  }

  void run(const GemmOperands& ops) override {
    if (ops.a_layout != Layout::RowMajor || ops.b_layout != Layout::RowMajor)
      throw NotSupportedError(name_ + ": row-major A and B only");
    if (ops.m == 0 || ops.n == 0) return;
    constexpr int ES = MmaInfo<T>::kBytes;
    const auto aligned16 = [](const void* p, std::int64_t ld) {
      return reinterpret_cast<std::uintptr_t>(p) % 16 == 0 && (ld * ES) % 16 == 0;
    };
    const dim3 grid(static_cast<unsigned>((ops.n + kBN - 1) / kBN), static_cast<unsigned>((ops.m + kBM - 1) / kBM));
    const auto* a = static_cast<const std::uint8_t*>(ops.a);
    const auto* b = static_cast<const std::uint8_t*>(ops.b);
    auto* c = static_cast<float*>(ops.c);
    auto stream = static_cast<cudaStream_t>(ops.stream);
    bool launched = false;
    if constexpr (kFp8)
      if (promote_every_ > 0) {
        mma_gemm<T, true><<<grid, kThreads, 0, stream>>>(ops.m, ops.n, ops.k, a, ops.lda, aligned16(a, ops.lda), b,
                                                        ops.ldb, aligned16(b, ops.ldb), c, ops.ldc, promote_every_ / 32);
        launched = true;
      }
    if (!launched)
      mma_gemm<T, false><<<grid, kThreads, 0, stream>>>(ops.m, ops.n, ops.k, a, ops.lda, aligned16(a, ops.lda), b,
                                                       ops.ldb, aligned16(b, ops.ldb), c, ops.ldc, 0);
    FPCERT_CUDA_LAUNCH_CHECK(name_.c_str());
  }

 private:
  std::string name_;
  int promote_every_;
  KernelTraits traits_;
};

std::unique_ptr<GemmKernel> make_f16() { return std::make_unique<MmaKernel<Mma::F16>>("gemm_f16_f32acc_mma_sm80", 0); }
std::unique_ptr<GemmKernel> make_bf16() { return std::make_unique<MmaKernel<Mma::BF16>>("gemm_bf16_f32acc_mma_sm80", 0); }
std::unique_ptr<GemmKernel> make_tf32() { return std::make_unique<MmaKernel<Mma::TF32>>("gemm_tf32_f32acc_mma_sm80", 0); }
std::unique_ptr<GemmKernel> make_e4m3() { return make_fp8_mma_kernel(e4m3, 0); }
std::unique_ptr<GemmKernel> make_e5m2() { return make_fp8_mma_kernel(e5m2, 0); }
std::unique_ptr<GemmKernel> make_e4m3_p128() { return make_fp8_mma_kernel(e4m3, 128); }
std::unique_ptr<GemmKernel> make_e5m2_p128() { return make_fp8_mma_kernel(e5m2, 128); }

}  // namespace

std::unique_ptr<GemmKernel> make_fp8_mma_kernel(const Format& format, int promote_every) {
  const std::string base = std::string("gemm_") + std::string(format.tag) + "_f32acc_mma_sm89";
  const std::string name = promote_every > 0 ? base + "_promote" + std::to_string(promote_every) : base;
  if (format == e4m3) return std::make_unique<MmaKernel<Mma::E4M3>>(name, promote_every);
  if (format == e5m2) return std::make_unique<MmaKernel<Mma::E5M2>>(name, promote_every);
  throw std::invalid_argument("make_fp8_mma_kernel: " + std::string(format.tag) + " is not e4m3 or e5m2");
}

void register_mma_kernels() {
  register_kernel("gemm_f16_f32acc_mma_sm80", Backend::Cuda, false, &make_f16);
  register_kernel("gemm_bf16_f32acc_mma_sm80", Backend::Cuda, false, &make_bf16);
  register_kernel("gemm_tf32_f32acc_mma_sm80", Backend::Cuda, false, &make_tf32);
  register_kernel("gemm_e4m3_f32acc_mma_sm89", Backend::Cuda, false, &make_e4m3);
  register_kernel("gemm_e5m2_f32acc_mma_sm89", Backend::Cuda, false, &make_e5m2);
  register_kernel("gemm_e4m3_f32acc_mma_sm89_promote128", Backend::Cuda, false, &make_e4m3_p128);
  register_kernel("gemm_e5m2_f32acc_mma_sm89_promote128", Backend::Cuda, false, &make_e5m2_p128);
}

}  // namespace fpcert
