// kernels/emu/cuda/emu_split.cu — split-product GEMMs on tensor cores, one per scheme of the split table
// (kernels/emu/split.hpp):
//   gemm_3xtf32_mma_sm80     3xtf32     tf32 slices rounded to nearest-even (on the bits), 3 MMAs per k-step
//   gemm_3xtf32rz_mma_sm80   3xtf32_rz  tf32 slices truncated (low 13 bits dropped)
//   gemm_1xbf16_mma_sm80     1xbf16     one bf16 slice (__float2bfloat16_rn): the plain bf16 rate, fp32 in
//   gemm_3xbf16_mma_sm80     3xbf16     two bf16 slices, terms (1,0) (0,1) (0,0)
//   gemm_6xbf16_mma_sm80     6xbf16     three slices, the six terms of order >= 2^-16
//   gemm_9xbf16_mma_sm80     9xbf16     three slices, all nine terms
// (their wgmma + TMA versions for Hopper, gemm_<scheme>_wgmma_sm90: emu_split_wgmma.cu, registered from here)
// and the device side of `fpcert experiment split-scalar --device cuda`.
//
// Structure: a pre-pass kernel splits A and B into slice matrices in a workspace (T_overhead, timed
// on its own by time_stages), then one mma.sync GEMM (kernels/emu/cuda/emu_split_kernel.cuh) multiplies the
// kept slice pairs with two accumulators (small terms, then the leading term), merged at the end.
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "kernels/device/cuda_check.cuh"
#include "kernels/emu/bf16_on_fp16.hpp"
#include "kernels/emu/cuda/emu_host.cuh"
#include "kernels/emu/cuda/emu_scheme.cuh"
#include "kernels/emu/cuda/emu_split_kernel.cuh"
#include "kernels/emu/cuda/emu_split_traits.hpp"
#include "kernels/emu/split.hpp"
#include "kernels/register.hpp"

namespace fpcert {
namespace {

using namespace mma_device;

// ---- the instantiations: (slice kind, slices, term mask) ----
constexpr unsigned kMask3 = emu::kTermMask3, kMask6 = emu::kTermMask6, kMask9 = emu::kTermMask9;

using GemmFn = void (*)(std::int64_t, std::int64_t, std::int64_t, SlicePtrs, std::int64_t, SlicePtrs, std::int64_t, float*,
                        std::int64_t);
using SplitFn = void (*)(std::int64_t, std::int64_t, const float*, std::int64_t, SlicePtrs, std::int64_t);

struct Instance {
  emu::SliceKind kind;
  int slices;
  unsigned mask;
  GemmFn gemm;
  SplitFn split;
};

const Instance kInstances[] = {
    {emu::SliceKind::Tf32NearestEven, 2, kMask3, split_gemm<Mma::TF32, 2, kMask3>, split_operand<emu::SliceKind::Tf32NearestEven, 2>},
    {emu::SliceKind::Tf32TowardZero, 2, kMask3, split_gemm<Mma::TF32, 2, kMask3>, split_operand<emu::SliceKind::Tf32TowardZero, 2>},
    {emu::SliceKind::Bf16NearestEven, 1, term_bit(0, 0), split_gemm<Mma::BF16, 1, term_bit(0, 0)>,
     split_operand<emu::SliceKind::Bf16NearestEven, 1>},
    {emu::SliceKind::Bf16NearestEven, 2, kMask3, split_gemm<Mma::BF16, 2, kMask3>, split_operand<emu::SliceKind::Bf16NearestEven, 2>},
    {emu::SliceKind::Bf16NearestEven, 3, kMask6, split_gemm<Mma::BF16, 3, kMask6>, split_operand<emu::SliceKind::Bf16NearestEven, 3>},
    {emu::SliceKind::Bf16NearestEven, 3, kMask9, split_gemm<Mma::BF16, 3, kMask9>, split_operand<emu::SliceKind::Bf16NearestEven, 3>},
};

const char* kTcOrder =
    "inside one MMA the order, alignment and rounding of the block's exact products and the accumulator are not specified "
    "by NVIDIA (measured: alignment to the largest exponent with truncation; Fasi, Higham, Mikaitis, Pranesh, PeerJ CS "
    "7:e330, 2021): modelled as fp32 accumulation toward zero; the small-term accumulator's sum is at most 2^-7 (bf16) or "
    "2^-10 (tf32) of the leading term's, so its roundings add at most that fraction of the accumulation error "
    "(docs/emulation.md); with a validated behaviour card of the instruction the bitwise tier composes the card's block "
    "model with this K-loop (docs/tensor_cores.md)";

}  // namespace

KernelTraits emu::split_kernel_traits(const SplitScheme& sc, const SplitLoop& loop) {
  KernelTraits t;
  t.a_input = t.b_input = &f32;
  t.a_operand = t.b_operand = &f32;
  t.operand_u = sc.operand_u;
  t.operand_note = sc.note;
  t.domain.finite_only = split_finite_only(sc);
  t.exact_products = true;
  t.acc = &f32;
  t.acc_rounding = Rounding::TowardZero;
  t.out = &f32;
  std::string terms;
  for (const auto& [i, j] : sc.terms)
    if (i || j) terms += (terms.empty() ? "" : ", ") + std::string("(") + std::to_string(i) + "," + std::to_string(j) + ")";
  t.order = "pre-pass: slices x_l = " + std::string(sc.slice->tag) + "_" + std::string(to_string(sc.rounding)) +
            "(x - x_0 - ... - x_{l-1}) (" + std::to_string(sc.slices) + " per operand, exact fp32 differences); per k-block of " +
            std::to_string(loop.k) + " (" + loop.how + ", ascending; K zero-padded to a multiple of " + std::to_string(loop.pad) +
            "): " + (terms.empty() ? std::string() : "acc_small += A_i B_j for (i,j) = " + terms + " in this order, then ") +
            "acc += A_0 B_0; both fragments from +0; C = " + (terms.empty() ? "acc" : "RN(acc_small + acc) (__fadd_rn)") + "; " +
            kTcOrder;
  t.sum_order = SummationOrder::split_products(sc.name, OrderKind::TensorCoreBlock, loop.k);
  // The instruction whose behaviour card gives the block model (certify installs it once validated on this
  // device; until then the bitwise tier declines and the envelope judges), and the K padding: whole
  // shared-memory stages.
  t.sum_order.block_model.instruction = loop.insn;
  t.sum_order.block_model.pad = loop.pad;
  return t;
}

namespace {

class SplitMmaKernel final : public GemmKernel, public StagedKernel {
 public:
  SplitMmaKernel(std::string name, const std::string& scheme) : name_(std::move(name)) {
    scheme_ = find_split_scheme(scheme);
    if (!scheme_) throw std::logic_error(name_ + ": no split scheme '" + scheme + "' in the table");
    const emu::SliceKind kind = emu::slice_kind_of(*scheme_);
    const unsigned mask = emu::term_mask_of(*scheme_);
    for (const Instance& in : kInstances)
      if (in.kind == kind && in.slices == scheme_->slices && in.mask == mask) inst_ = &in;
    if (!inst_) throw std::logic_error(name_ + ": no kernel instantiation for scheme " + scheme);
    bf16_ = kind == emu::SliceKind::Bf16NearestEven;
    traits_ = emu::split_kernel_traits(
        *scheme_, {bf16_ ? 16 : 8, bf16_ ? "mma_bf16_f32" : "mma_tf32_f32",
                   kStageBytes / (bf16_ ? MmaInfo<Mma::BF16>::kBytes : MmaInfo<Mma::TF32>::kBytes), "mma.sync"});
  }
  const std::string& name() const override { return name_; }
  std::string description() const override {
    return scheme_->name + " split products on tensor cores: pre-pass into " + std::to_string(scheme_->slices) + " " +
           std::string(scheme_->slice->tag) + " slices per operand, then " + std::to_string(scheme_->terms.size()) +
           " mma.sync products per k-step (block 128x128, 8 warps), fp32 accumulation and output";
  }
  Backend backend() const override { return Backend::Cuda; }
  MemorySpace memory() const override { return MemorySpace::Device; }
  const KernelTraits& traits() const override { return traits_; }
  Support can_implement(std::int64_t m, std::int64_t n, std::int64_t k) const override {
    return cuda::mma_support(m, n, k, 80, inst_->gemm);
  }

  void run(const GemmOperands& ops) override {
    if (ops.a_layout != Layout::RowMajor || ops.b_layout != Layout::RowMajor)
      throw NotSupportedError(name_ + ": row-major A and B only");
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
  /// The slice matrices: A_l (m x lda_ws) and B_l (k x ldb_ws), rows 16-byte aligned.
  void prepare(const GemmOperands& ops) {
    const int es = bf16_ ? 2 : 4;
    lda_ws_ = (ops.k + 7) / 8 * 8;
    ldb_ws_ = (ops.n + 7) / 8 * 8;
    ws_.begin();
    std::size_t offa[3] = {0, 0, 0}, offb[3] = {0, 0, 0};
    for (int l = 0; l < scheme_->slices; ++l) offa[l] = ws_.reserve(static_cast<std::size_t>(ops.m * lda_ws_ * es));
    for (int l = 0; l < scheme_->slices; ++l) offb[l] = ws_.reserve(static_cast<std::size_t>(ops.k * ldb_ws_ * es));
    std::uint8_t* base = ws_.commit();
    for (int l = 0; l < 3; ++l) {
      sa_.p[l] = base + offa[l < scheme_->slices ? l : 0];
      sb_.p[l] = base + offb[l < scheme_->slices ? l : 0];
    }
    if (!smem_set_) {
      FPCERT_CUDA_CHECK(cudaFuncSetAttribute(inst_->gemm, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             split_smem_bytes(scheme_->slices)));
      smem_set_ = true;
    }
  }
  void split(const GemmOperands& ops, cudaStream_t stream) {
    auto grid = [](std::int64_t rows, std::int64_t cols) {
      return dim3(static_cast<unsigned>((cols + 255) / 256), static_cast<unsigned>(std::min<std::int64_t>(std::max<std::int64_t>(rows, 1), 65535)));
    };
    if (ops.k > 0) {
      inst_->split<<<grid(ops.m, ops.k), 256, 0, stream>>>(ops.m, ops.k, static_cast<const float*>(ops.a), ops.lda, sa_, lda_ws_);
      FPCERT_CUDA_LAUNCH_CHECK((name_ + " split A").c_str());
      inst_->split<<<grid(ops.k, ops.n), 256, 0, stream>>>(ops.k, ops.n, static_cast<const float*>(ops.b), ops.ldb, sb_, ldb_ws_);
      FPCERT_CUDA_LAUNCH_CHECK((name_ + " split B").c_str());
    }
  }
  void gemm(const GemmOperands& ops, cudaStream_t stream) {
    const dim3 grid(static_cast<unsigned>((ops.n + kBN - 1) / kBN), static_cast<unsigned>((ops.m + kBM - 1) / kBM));
    inst_->gemm<<<grid, kThreads, split_smem_bytes(scheme_->slices), stream>>>(ops.m, ops.n, ops.k, sa_, lda_ws_, sb_, ldb_ws_,
                                                                              static_cast<float*>(ops.c), ops.ldc);
    FPCERT_CUDA_LAUNCH_CHECK(name_.c_str());
  }

  std::string name_;
  const SplitScheme* scheme_ = nullptr;
  const Instance* inst_ = nullptr;
  bool bf16_ = false, smem_set_ = false;
  KernelTraits traits_;
  emu_host::Workspace ws_;
  SlicePtrs sa_{}, sb_{};
  std::int64_t lda_ws_ = 0, ldb_ws_ = 0;
};

// ---- the scalar experiment ----

/// 0: fp32 product; 1: tf32 (both operands cvt.rna.tf32.f32, then the fp32 product); 2: a split scheme.
__global__ void scalar_products(int method, emu::SliceKind kind, int slices, emu::TermList terms, const float* __restrict__ a,
                                const float* __restrict__ b, float* __restrict__ out, std::int64_t n) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  if (method == 0) {
    out[i] = __fmul_rn(a[i], b[i]);
  } else if (method == 1) {
    out[i] = __fmul_rn(__uint_as_float(to_tf32(__float_as_uint(a[i]))), __uint_as_float(to_tf32(__float_as_uint(b[i]))));
  } else {
    out[i] = emu::split_product(kind, slices, terms, a[i], b[i]);
  }
}

template <int I>
std::unique_ptr<GemmKernel> make_split();
struct Binding {
  const char* kernel;
  const char* scheme;
};
constexpr Binding kBindings[] = {{"gemm_3xtf32_mma_sm80", "3xtf32"}, {"gemm_3xtf32rz_mma_sm80", "3xtf32_rz"},
                                 {"gemm_1xbf16_mma_sm80", "1xbf16"},  {"gemm_3xbf16_mma_sm80", "3xbf16"},
                                 {"gemm_6xbf16_mma_sm80", "6xbf16"},  {"gemm_9xbf16_mma_sm80", "9xbf16"}};
template <int I>
std::unique_ptr<GemmKernel> make_split() {
  return std::make_unique<SplitMmaKernel>(kBindings[I].kernel, kBindings[I].scheme);
}

}  // namespace

std::vector<std::vector<float>> split_scalar_products_cuda(const std::vector<std::string>& methods, const std::vector<float>& a,
                                                           const std::vector<float>& b) {
  if (a.size() != b.size()) throw std::invalid_argument("split_scalar_products_cuda: a and b differ in length");
  const std::size_t n = a.size(), bytes = n * sizeof(float);
  float *da = nullptr, *db = nullptr, *dc = nullptr;
  std::vector<std::vector<float>> out;
  try {
    FPCERT_CUDA_CHECK(cudaMalloc(&da, std::max<std::size_t>(bytes, 4)));
    FPCERT_CUDA_CHECK(cudaMalloc(&db, std::max<std::size_t>(bytes, 4)));
    FPCERT_CUDA_CHECK(cudaMalloc(&dc, std::max<std::size_t>(bytes, 4)));
    FPCERT_CUDA_CHECK(cudaMemcpy(da, a.data(), bytes, cudaMemcpyHostToDevice));
    FPCERT_CUDA_CHECK(cudaMemcpy(db, b.data(), bytes, cudaMemcpyHostToDevice));
    for (const std::string& m : methods) {
      int method = 2;
      emu::SliceKind kind = emu::SliceKind::Bf16NearestEven;
      int slices = 1;
      emu::TermList terms;
      if (m == "fp32") {
        method = 0;
      } else if (m == "tf32") {
        method = 1;
      } else {
        const SplitScheme* sc = find_split_scheme(m);
        if (!sc) throw std::invalid_argument("split_scalar_products_cuda: unknown method '" + m + "'");
        kind = emu::slice_kind_of(*sc);
        slices = sc->slices;
        terms = emu::terms_of(*sc);
      }
      if (n > 0) {
        scalar_products<<<static_cast<unsigned>((n + 255) / 256), 256>>>(method, kind, slices, terms, da, db, dc,
                                                                          static_cast<std::int64_t>(n));
        FPCERT_CUDA_LAUNCH_CHECK("scalar_products");
      }
      FPCERT_CUDA_CHECK(cudaDeviceSynchronize());
      std::vector<float> r(n);
      FPCERT_CUDA_CHECK(cudaMemcpy(r.data(), dc, bytes, cudaMemcpyDeviceToHost));
      out.push_back(std::move(r));
    }
  } catch (...) {
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    throw;
  }
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
  return out;
}

void register_emu_split_wgmma_kernels();  // kernels/emu/cuda/emu_split_wgmma.cu: the same schemes on wgmma + TMA (sm_90a)

void register_emu_split_kernels() {
  register_kernel(kBindings[0].kernel, Backend::Cuda, false, &make_split<0>);
  register_kernel(kBindings[1].kernel, Backend::Cuda, false, &make_split<1>);
  register_kernel(kBindings[2].kernel, Backend::Cuda, false, &make_split<2>);
  register_kernel(kBindings[3].kernel, Backend::Cuda, false, &make_split<3>);
  register_kernel(kBindings[4].kernel, Backend::Cuda, false, &make_split<4>);
  register_kernel(kBindings[5].kernel, Backend::Cuda, false, &make_split<5>);
  register_emu_split_wgmma_kernels();
}

}  // namespace fpcert
