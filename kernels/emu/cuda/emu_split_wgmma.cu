// kernels/emu/cuda/emu_split_wgmma.cu — the split-product GEMMs on Hopper's wgmma + TMA mainloop (issue 43), one per
// scheme of the split table (kernels/emu/split.hpp), beside the mma.sync ones of emu_split.cu (kept as sm_80 subjects):
//   gemm_3xtf32_wgmma_sm90 / gemm_3xtf32rz_wgmma_sm90   tf32 slices (nearest-even / truncated), wgmma m64n128k8
//   gemm_{1,3,6,9}xbf16_wgmma_sm90                       bf16 slices, wgmma m64n128k16
// Same pre-pass slices, kept terms, term order and final merge as the mma.sync kernels; the instruction (its behaviour
// card) and the K padding (whole 128-byte stages: 32 tf32 or 64 bf16 elements) are the wgmma ones. The device code and
// its design: kernels/emu/cuda/emu_split_wgmma_kernel.cuh.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "kernels/device/cuda_check.cuh"
#include "kernels/emu/bf16_on_fp16.hpp"
#include "kernels/emu/cuda/emu_host.cuh"
#include "kernels/emu/cuda/emu_scheme.cuh"
#include "kernels/emu/cuda/emu_split_traits.hpp"
#include "kernels/emu/cuda/emu_split_wgmma_kernel.cuh"
#include "kernels/emu/split.hpp"
#include "kernels/gemm/cuda/mma_host.cuh"
#include "kernels/gemm/cuda/wgmma_host.cuh"
#include "kernels/register.hpp"

namespace fpcert {
namespace {

using namespace wgmma_device;

constexpr unsigned kMask3 = emu::kTermMask3, kMask6 = emu::kTermMask6, kMask9 = emu::kTermMask9;

using GemmFn = void (*)(CUtensorMap, CUtensorMap, int, int, int, float*, long long);
using SplitFn = void (*)(int, int, const float*, long long, void*, long long);

struct Instance {
  emu::SliceKind kind;
  int slices;
  unsigned mask;
  GemmFn gemm;
  SplitFn split_a, split_b;
};

template <emu::SliceKind K, int S, unsigned kMask>
Instance instance() {
  constexpr Wg T = K == emu::SliceKind::Bf16NearestEven ? Wg::BF16 : Wg::TF32;
  return {K, S, kMask, wgmma_split_gemm<T, S, kMask>, split_stacked<K, S>, split_transposed<K, S>};
}

const Instance kInstances[] = {
    instance<emu::SliceKind::Tf32NearestEven, 2, kMask3>(), instance<emu::SliceKind::Tf32TowardZero, 2, kMask3>(),
    instance<emu::SliceKind::Bf16NearestEven, 1, 1u>(),     instance<emu::SliceKind::Bf16NearestEven, 2, kMask3>(),
    instance<emu::SliceKind::Bf16NearestEven, 3, kMask6>(), instance<emu::SliceKind::Bf16NearestEven, 3, kMask9>(),
};

class SplitWgmmaKernel final : public GemmKernel, public StagedKernel {
 public:
  SplitWgmmaKernel(std::string name, const std::string& scheme) : name_(std::move(name)) {
    scheme_ = find_split_scheme(scheme);
    if (!scheme_) throw std::logic_error(name_ + ": no split scheme '" + scheme + "' in the table");
    const emu::SliceKind kind = emu::slice_kind_of(*scheme_);
    const unsigned mask = emu::term_mask_of(*scheme_);  // refuses a table whose order is not the kernels' canonical one
    for (const Instance& in : kInstances)
      if (in.kind == kind && in.slices == scheme_->slices && in.mask == mask) inst_ = &in;
    if (!inst_) throw std::logic_error(name_ + ": no kernel instantiation for scheme " + scheme);
    es_ = kind == emu::SliceKind::Bf16NearestEven ? 2 : 4;
    const int kk = es_ == 2 ? 16 : 8;
    traits_ = emu::split_kernel_traits(*scheme_, {kk, es_ == 2 ? "wgmma_bf16_f32" : "wgmma_tf32_f32", kStageK / es_,
                                                  "wgmma m64n128k" + std::to_string(kk) + " from TMA-loaded shared memory"});
    traits_.tile_m = kBM;
    traits_.tile_n = kSplitN;
  }
  const std::string& name() const override { return name_; }
  std::string description() const override {
    return scheme_->name + " split products on Hopper tensor cores: pre-pass into " + std::to_string(scheme_->slices) + " " +
           std::string(scheme_->slice->tag) + " slices per operand, then " + std::to_string(scheme_->terms.size()) +
           " wgmma m64n128 products per k-step from TMA-loaded, 128-byte-swizzled shared memory (" +
           std::to_string(split_stages(scheme_->slices)) +
           "-stage mbarrier ring, one producer and two consumer warpgroups, 128 x 128 tiles), fp32 accumulation and output";
  }
  Backend backend() const override { return Backend::Cuda; }
  MemorySpace memory() const override { return MemorySpace::Device; }
  const KernelTraits& traits() const override { return traits_; }

  Support can_implement(std::int64_t m, std::int64_t n, std::int64_t k) const override {
    if (m < 0 || n < 0 || k < 0) return Support::no("negative dimension");
    const std::int64_t S = scheme_->slices;
    if (S * (m + kBM) > 0x7FFFFFFF || S * (n + kSplitN) > 0x7FFFFFFF || k > 0x7FFFFFFF - kStageK)
      return Support::no("S x M, S x N or K of 2^31 or more (the stacked slices' TMA coordinates)");
    if (((m + kBM - 1) / kBM) * ((n + kSplitN - 1) / kSplitN) > 0x7FFFFFFF) return Support::no("more tiles than the grid's x range");
    if ((std::max(k, n) + 31) / 32 > 65535) return Support::no("K or N past 65535 x 32 (the B pre-pass's grid)");
    return wgmma_host::hopper_support(inst_->gemm);
  }

  void run(const GemmOperands& ops) override {
    if (ops.a_layout != Layout::RowMajor || ops.b_layout != Layout::RowMajor || ops.c_layout != Layout::RowMajor)
      throw NotSupportedError(name_ + ": row-major A, B and C only");
    if (ops.m == 0 || ops.n == 0) return;
    prepare(ops);
    auto stream = static_cast<cudaStream_t>(ops.stream);
    split(ops, stream);
    gemm(ops, stream);
  }

  std::vector<StageTime> time_stages(const GemmOperands& ops, int warmups, int timed) override {
    prepare(ops);
    auto stream = static_cast<cudaStream_t>(ops.stream);
    return emu_host::time_split_stages(
        stream, warmups, timed, [&] { split(ops, stream); }, [&] { gemm(ops, stream); }, [&] { run(ops); });
  }

 private:
  /// The workspace: A's slices stacked (S m rows of ldk), B's transposed and stacked (S n rows of ldk); the tensor maps.
  void prepare(const GemmOperands& ops) {
    const std::int64_t S = scheme_->slices;
    ldk_ = std::max<std::int64_t>((ops.k + 15) / 16 * 16, 16);  // 16-byte rows for the TMA, whatever the slice width
    ws_.begin();
    const std::size_t off_a = ws_.reserve(static_cast<std::size_t>(S * ops.m * ldk_ * es_));
    const std::size_t off_b = ws_.reserve(static_cast<std::size_t>(S * ops.n * ldk_ * es_));
    std::uint8_t* base = ws_.commit();
    a_ = base + off_a;
    b_ = base + off_b;
    if (ops.k > 0) {
      const int box = kStageK / es_;
      map_a_ = wgmma_host::make_map(name_, a_, es_, ops.k, S * ops.m, ldk_, box, kBM);
      map_b_ = wgmma_host::make_map(name_, b_, es_, ops.k, S * ops.n, ldk_, box, kSplitN);
    }
    std::call_once(attr_, [&] {
      FPCERT_CUDA_CHECK(cudaFuncSetAttribute(inst_->gemm, cudaFuncAttributeMaxDynamicSharedMemorySize, split_smem_bytes(scheme_->slices)));
    });
  }
  void split(const GemmOperands& ops, cudaStream_t stream) {
    if (ops.k == 0) return;  // no stage is loaded: C = +0 (the accumulators' start)
    const int m = static_cast<int>(ops.m), n = static_cast<int>(ops.n), k = static_cast<int>(ops.k);
    const dim3 ga(static_cast<unsigned>((k + 255) / 256), static_cast<unsigned>(std::min(m, 65535)));
    inst_->split_a<<<ga, 256, 0, stream>>>(m, k, static_cast<const float*>(ops.a), ops.lda, a_, ldk_);
    FPCERT_CUDA_LAUNCH_CHECK((name_ + " split A").c_str());
    const dim3 gb(static_cast<unsigned>((n + 31) / 32), static_cast<unsigned>((k + 31) / 32)), block(32, 8);
    inst_->split_b<<<gb, block, 0, stream>>>(k, n, static_cast<const float*>(ops.b), ops.ldb, b_, ldk_);
    FPCERT_CUDA_LAUNCH_CHECK((name_ + " split B").c_str());
  }
  void gemm(const GemmOperands& ops, cudaStream_t stream) {
    const std::int64_t tiles = ((ops.m + kBM - 1) / kBM) * ((ops.n + kSplitN - 1) / kSplitN);
    inst_->gemm<<<static_cast<unsigned>(tiles), kThreads, split_smem_bytes(scheme_->slices), stream>>>(
        map_a_, map_b_, static_cast<int>(ops.m), static_cast<int>(ops.n), static_cast<int>(ops.k), static_cast<float*>(ops.c), ops.ldc);
    FPCERT_CUDA_LAUNCH_CHECK(name_.c_str());
  }

  std::string name_;
  const SplitScheme* scheme_ = nullptr;
  const Instance* inst_ = nullptr;
  int es_ = 2;
  KernelTraits traits_;
  emu_host::Workspace ws_;
  std::once_flag attr_;
  void *a_ = nullptr, *b_ = nullptr;
  std::int64_t ldk_ = 0;
  CUtensorMap map_a_{}, map_b_{};
};

struct Binding {
  const char* kernel;
  const char* scheme;
};
constexpr Binding kBindings[] = {{"gemm_3xtf32_wgmma_sm90", "3xtf32"}, {"gemm_3xtf32rz_wgmma_sm90", "3xtf32_rz"},
                                 {"gemm_1xbf16_wgmma_sm90", "1xbf16"},  {"gemm_3xbf16_wgmma_sm90", "3xbf16"},
                                 {"gemm_6xbf16_wgmma_sm90", "6xbf16"},  {"gemm_9xbf16_wgmma_sm90", "9xbf16"}};
template <int I>
std::unique_ptr<GemmKernel> make_split() {
  return std::make_unique<SplitWgmmaKernel>(kBindings[I].kernel, kBindings[I].scheme);
}

}  // namespace

void register_emu_split_wgmma_kernels() {
  register_kernel(kBindings[0].kernel, Backend::Cuda, false, &make_split<0>);
  register_kernel(kBindings[1].kernel, Backend::Cuda, false, &make_split<1>);
  register_kernel(kBindings[2].kernel, Backend::Cuda, false, &make_split<2>);
  register_kernel(kBindings[3].kernel, Backend::Cuda, false, &make_split<3>);
  register_kernel(kBindings[4].kernel, Backend::Cuda, false, &make_split<4>);
  register_kernel(kBindings[5].kernel, Backend::Cuda, false, &make_split<5>);
}

}  // namespace fpcert
