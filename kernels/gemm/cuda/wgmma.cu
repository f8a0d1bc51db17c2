// kernels/gemm/cuda/wgmma.cu — Hopper tensor-core GEMMs: wgmma.mma_async fed by TMA through a 4-stage mbarrier
// pipeline, warp-specialised (one producer warpgroup, two consumer warpgroups), 128 x 256 tiles, fp32 accumulation
// and fp32 output (issue 43):
//   gemm_f16_f32acc_wgmma_sm90    wgmma m64n256k16 .f32.f16.f16
//   gemm_bf16_f32acc_wgmma_sm90   wgmma m64n256k16 .f32.bf16.bf16
//   gemm_tf32_f32acc_wgmma_sm90   wgmma m64n256k8  .f32.tf32.tf32 (fp32 operands as stored: the instruction reads
//                                 their top 19 bits, the card's operand_read)
//   gemm_e4m3_f32acc_wgmma_sm90   wgmma m64n256k32 .f32.e4m3.e4m3
//   gemm_e5m2_f32acc_wgmma_sm90   wgmma m64n256k32 .f32.e5m2.e5m2
//   gemm_{e4m3,e5m2}_f32acc_wgmma_sm90_promote128: m64n128k32, the partial sums added to fp32 every 128 products
// The device code and its design are in kernels/gemm/cuda/wgmma_kernel.cuh; this file holds the traits, the
// tensor maps, the operand staging and the registration. Every layout is taken: A row-major and B column-major
// (both K-major) go to the TMA as they are, a row-major B of fp16/bf16 too (N-major, wgmma's transpose bit); any
// other operand (column-major A, row-major tf32/fp8 B, a pointer or leading dimension the TMA cannot take: 16-byte
// alignment) is first copied K-major into a stream-ordered workspace. The arithmetic is the same either way.
// Schedule: persistent, min(tiles, SMs) blocks each looping over its tiles (the ring runs on across them).
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "base/error.hpp"
#include "kernels/device/cuda_check.cuh"
#include "kernels/gemm/cpu/model.hpp"
#include "kernels/gemm/cuda/mma_host.cuh"
#include "kernels/gemm/cuda/wgmma_host.cuh"
#include "kernels/gemm/cuda/wgmma_kernel.cuh"
#include "kernels/register.hpp"

namespace fpcert {
namespace {

using namespace wgmma_device;
using namespace wgmma_host;

const char* kWgmmaOrder =
    "inside one wgmma the summation order, alignment and rounding of the k-step's exact products and the "
    "accumulator are not specified by NVIDIA; the behaviour card of the instruction (fpcert probe tensor-cores, "
    "docs/tensor_cores.md) gives them once certify installs a card validated on this device; without one the "
    "traits take fp32 accumulation rounded toward zero, the coarser";

template <Wg T>
const char* insn_id() {
  switch (T) {
    case Wg::F16: return "wgmma_f16_f32";
    case Wg::BF16: return "wgmma_bf16_f32";
    case Wg::TF32: return "wgmma_tf32_f32";
    case Wg::E4M3: return "wgmma_e4m3_f32";
    case Wg::E5M2: return "wgmma_e5m2_f32";
  }
  return "";
}

template <Wg T>
KernelTraits wgmma_traits(bool promote) {
  KernelTraits t;
  std::string blocks;
  switch (T) {
    case Wg::F16: t.a_input = t.b_input = t.a_operand = t.b_operand = &f16; break;
    case Wg::BF16: t.a_input = t.b_input = t.a_operand = t.b_operand = &bf16; break;
    case Wg::TF32:
      t.a_input = t.b_input = &f32;
      t.a_operand = t.b_operand = &tf32;
      t.input_rounding = Rounding::TowardZero;  // the instruction ignores the 13 low bits (no conversion in the kernel)
      blocks = "fp32 operands passed as stored, read as tf32 by the instruction (the 13 low bits ignored: truncation); ";
      break;
    case Wg::E4M3: t.a_input = t.b_input = t.a_operand = t.b_operand = &e4m3; break;
    case Wg::E5M2: t.a_input = t.b_input = t.a_operand = t.b_operand = &e5m2; break;
  }
  t.exact_products = true;
  t.acc = &f32;
  t.acc_rounding = Rounding::TowardZero;
  t.out = &f32;
  if (T == Wg::E4M3 || T == Wg::E5M2) t.acc = make_cpu_model("model_gemm_e4m3_lpacc")->traits().acc;  // FP8: 13-bit sums
  const int kk = WgInfo<T>::kK, stage = kStageK / WgInfo<T>::kBytes;
  t.order = blocks + "k-steps of " + std::to_string(kk) + " (wgmma m64n256k" + std::to_string(kk) +
            ") applied for k ascending, each wgmma adding its step to the accumulator registers of the warpgroup that "
            "owns the element for all of K (from +0; K zero-padded by the TMA to a multiple of " + std::to_string(stage) +
            ", which adds exact zeros); the order is fixed and runs are bitwise reproducible; " + kWgmmaOrder;
  if (promote) {
    t.promote_every = stage;
    t.promote_format = &f32;
    t.order += "; promotion: every " + std::to_string(stage) + " products (one stage: " + std::to_string(kSteps) +
               " wgmmas chained from +0) the partial accumulators are added to fp32 accumulators with one RN fp32 add "
               "(__fadd_rn) and reset to +0; the K tail's partial stage likewise";
  }
  t.sum_order = SummationOrder::tensor_core(kk, insn_id<T>(), stage);
  t.tile_m = kBM;
  t.tile_n = promote ? 128 : kBN;
  t.layouts = kLayoutsAll;
  return t;
}

bool tma_ok(const void* p, std::int64_t ld, int bytes) {
  return reinterpret_cast<std::uintptr_t>(p) % 16 == 0 && (ld * bytes) % 16 == 0 && ld * bytes < (std::int64_t{1} << 40);
}

/// dst (rows x cols, K-major, ld_dst) from src element (r, c) at src[r rs + c cs]; stream-ordered.
void stage(const void* src, std::int64_t rs, std::int64_t cs, std::int64_t rows, std::int64_t cols, void* dst, std::int64_t ld_dst,
           int bytes, cudaStream_t stream, const std::string& who) {
  const dim3 grid(static_cast<unsigned>((cols + 31) / 32), static_cast<unsigned>((rows + 31) / 32)), block(32, 8);
  const int r = static_cast<int>(rows), c = static_cast<int>(cols);
  if (bytes == 1)
    stage_kmajor<std::uint8_t><<<grid, block, 0, stream>>>(static_cast<const std::uint8_t*>(src), rs, cs, r, c, static_cast<std::uint8_t*>(dst), ld_dst);
  else if (bytes == 2)
    stage_kmajor<std::uint16_t><<<grid, block, 0, stream>>>(static_cast<const std::uint16_t*>(src), rs, cs, r, c, static_cast<std::uint16_t*>(dst), ld_dst);
  else
    stage_kmajor<std::uint32_t><<<grid, block, 0, stream>>>(static_cast<const std::uint32_t*>(src), rs, cs, r, c, static_cast<std::uint32_t*>(dst), ld_dst);
  FPCERT_CUDA_LAUNCH_CHECK((who + " (operand staging)").c_str());
}

/// Stream-ordered scratch memory, freed (stream-ordered) when the object goes.
struct Scratch {
  void* p = nullptr;
  cudaStream_t stream = nullptr;
  Scratch(std::size_t bytes, cudaStream_t s, const std::string& who) : stream(s) {
    const cudaError_t e = cudaMallocAsync(&p, bytes, s);
    if (e != cudaSuccess) {
      cudaGetLastError();
      throw DeviceError(who + ": cudaMallocAsync of " + std::to_string(bytes) + " bytes for operand staging: " + cudaGetErrorName(e));
    }
  }
  ~Scratch() {
    if (p) cudaFreeAsync(p, stream);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
};

template <Wg T, bool kPromote = false>
class WgmmaKernel final : public GemmKernel {
  static constexpr int ES = WgInfo<T>::kBytes;
  static constexpr bool k16 = T == Wg::F16 || T == Wg::BF16;
  static constexpr int kN = kPromote ? 128 : kBN;  // tile width (the promoted kernels keep two accumulator sets)
  static_assert(!kPromote || T == Wg::E4M3 || T == Wg::E5M2, "promotion: FP8 only");

 public:
  explicit WgmmaKernel(std::string name) : name_(std::move(name)), traits_(wgmma_traits<T>(kPromote)) {}
  const std::string& name() const override { return name_; }
  std::string description() const override {
    if (kPromote)
      return "tensor-core GEMM for Hopper: wgmma.mma_async m64n128 from TMA-loaded, 128-byte-swizzled shared memory, "
             "6-stage mbarrier pipeline, one producer and two consumer warpgroups, 128 x 128 tiles on a persistent grid, partial sums promoted "
             "to fp32 every 128 products, fp32 output";
    return "tensor-core GEMM for Hopper: wgmma.mma_async m64n256 from TMA-loaded, 128-byte-swizzled shared memory, "
           "4-stage mbarrier pipeline, one producer and two consumer warpgroups, 128 x 256 tiles on a persistent grid "
           "(one block per SM), fp32 accumulation and output";
  }
  Backend backend() const override { return Backend::Cuda; }
  MemorySpace memory() const override { return MemorySpace::Device; }
  const KernelTraits& traits() const override { return traits_; }

  Support can_implement(std::int64_t m, std::int64_t n, std::int64_t k) const override {
    if (const Support s = tile_support(m, n, k, kBM, kN, kStageK); !s.ok) return s;
    if ((std::max(m, n) + 31) / 32 > 65535) return Support::no("M or N past 65535 x 32 (the operand staging's grid)");
    return hopper_support(wgmma_gemm<T, false, kN, kPromote>);
  }

  void run(const GemmOperands& ops) override {
    if (ops.m == 0 || ops.n == 0) return;
    const auto stream = static_cast<cudaStream_t>(ops.stream);
    const std::int64_t M = ops.m, N = ops.n, K = ops.k;
    // A: K-major (row-major) as it is when the TMA can take it, else staged.
    const void* a = ops.a;
    std::int64_t lda = ops.lda;
    std::unique_ptr<Scratch> sa, sb;
    const std::int64_t ld_pad = std::max<std::int64_t>((K + 15) / 16 * 16, 16);  // 16 elements: 16 bytes for every type
    if (K > 0 && (ops.a_layout != Layout::RowMajor || !tma_ok(a, lda, ES))) {
      sa = std::make_unique<Scratch>(static_cast<std::size_t>(M * ld_pad * ES), stream, name_);
      const bool row = ops.a_layout == Layout::RowMajor;
      stage(ops.a, row ? ops.lda : 1, row ? 1 : ops.lda, M, K, sa->p, ld_pad, ES, stream, name_);
      a = sa->p;
      lda = ld_pad;
    }
    // B: K-major (column-major) as it is, N-major (row-major fp16/bf16) as it is, else staged K-major.
    const void* b = ops.b;
    std::int64_t ldb = ops.ldb;
    bool trans_b = false;
    if (K > 0) {
      const bool k_major = ops.b_layout == Layout::ColMajor && tma_ok(b, ldb, ES);
      trans_b = !k_major && k16 && ops.b_layout == Layout::RowMajor && tma_ok(b, ldb, ES);
      if (!k_major && !trans_b) {
        sb = std::make_unique<Scratch>(static_cast<std::size_t>(N * ld_pad * ES), stream, name_);
        const bool row = ops.b_layout == Layout::RowMajor;  // element (k, j): row-major at k ldb + j
        stage(ops.b, row ? 1 : ops.ldb, row ? ops.ldb : 1, N, K, sb->p, ld_pad, ES, stream, name_);
        b = sb->p;
        ldb = ld_pad;
      }
    }
    constexpr int kElems = kStageK / ES;
    // K = 0: no stage is loaded (C is written as zeros) and the maps are never read.
    CUtensorMap map_a{}, map_b{};
    if (K > 0) {
      map_a = make_map(name_, a, ES, K, M, lda, kElems, kBM);
      map_b = trans_b ? make_map(name_, b, ES, N, K, ldb, kNBox, kElems) : make_map(name_, b, ES, K, N, ldb, kElems, kN);
    }
    static std::once_flag attr;
    std::call_once(attr, [] {
      cudaFuncSetAttribute(wgmma_gemm<T, false, kN, kPromote>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes(kN));
      if constexpr (k16) cudaFuncSetAttribute(wgmma_gemm<T, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes(kN));
    });
    const std::int64_t tiles = ((M + kBM - 1) / kBM) * ((N + kN - 1) / kN);
    const int col_c = ops.c_layout == Layout::ColMajor ? 1 : 0;
    auto* c = static_cast<float*>(ops.c);
    const int m = static_cast<int>(M), n = static_cast<int>(N), k = static_cast<int>(K);
    const unsigned grid = persistent_grid(tiles);  // persistent: each block loops over its tiles
    bool launched = false;
    if constexpr (k16)
      if (trans_b) {
        wgmma_gemm<T, true><<<grid, kThreads, smem_bytes(kN), stream>>>(map_a, map_b, m, n, k, c, ops.ldc, col_c, kNMajorLbo, 1024);
        launched = true;
      }
    if (!launched)
      wgmma_gemm<T, false, kN, kPromote><<<grid, kThreads, smem_bytes(kN), stream>>>(map_a, map_b, m, n, k, c, ops.ldc, col_c, 16, 1024);
    FPCERT_CUDA_LAUNCH_CHECK(name_.c_str());
  }

 private:
  std::string name_;
  KernelTraits traits_;
};

}  // namespace

void register_wgmma_kernels() {
  register_kernel("gemm_f16_f32acc_wgmma_sm90", Backend::Cuda, false, [] { return std::unique_ptr<GemmKernel>(new WgmmaKernel<Wg::F16>("gemm_f16_f32acc_wgmma_sm90")); });
  register_kernel("gemm_bf16_f32acc_wgmma_sm90", Backend::Cuda, false, [] { return std::unique_ptr<GemmKernel>(new WgmmaKernel<Wg::BF16>("gemm_bf16_f32acc_wgmma_sm90")); });
  register_kernel("gemm_tf32_f32acc_wgmma_sm90", Backend::Cuda, false, [] { return std::unique_ptr<GemmKernel>(new WgmmaKernel<Wg::TF32>("gemm_tf32_f32acc_wgmma_sm90")); });
  register_kernel("gemm_e4m3_f32acc_wgmma_sm90", Backend::Cuda, false, [] { return std::unique_ptr<GemmKernel>(new WgmmaKernel<Wg::E4M3>("gemm_e4m3_f32acc_wgmma_sm90")); });
  register_kernel("gemm_e5m2_f32acc_wgmma_sm90", Backend::Cuda, false, [] { return std::unique_ptr<GemmKernel>(new WgmmaKernel<Wg::E5M2>("gemm_e5m2_f32acc_wgmma_sm90")); });
  register_kernel("gemm_e4m3_f32acc_wgmma_sm90_promote128", Backend::Cuda, false,
                  [] { return std::unique_ptr<GemmKernel>(new WgmmaKernel<Wg::E4M3, true>("gemm_e4m3_f32acc_wgmma_sm90_promote128")); });
  register_kernel("gemm_e5m2_f32acc_wgmma_sm90_promote128", Backend::Cuda, false,
                  [] { return std::unique_ptr<GemmKernel>(new WgmmaKernel<Wg::E5M2, true>("gemm_e5m2_f32acc_wgmma_sm90_promote128")); });
}

}  // namespace fpcert
