// kernels/gemm/cublaslt/cublaslt_gemm.cu — cuBLASLt (cublasLtMatmul) subjects with fused epilogues and FP8 scaling
// (docs/epilogue.md, "CUDA subjects"; issue 37). Compute type pinned to CUBLAS_COMPUTE_32F, scale type CUDA_R_32F:
//   cublaslt_bf16_epilogue         bf16 A, B -> bf16 D (C bf16), bias bf16 per column, ReLU / GELU (tanh form)
//   cublaslt_f16_epilogue          f16 A, B -> f16 D (C f16), bias f16 per column, ReLU / GELU (tanh form)
//   cublaslt_e4m3_scaled_bf16out   e4m3 A, B -> bf16 D (C bf16), bias bf16; scale_a, scale_b (scale_d: see below)
//   cublaslt_e4m3_scaled_e4m3out   e4m3 A, B -> e4m3 D (C bf16), bias bf16; scale_a, scale_b, scale_d, amax
//
// Orientation. fpcert's C is row-major; cuBLASLt's matrices are column-major. A row-major X (rows x cols, ld) is the
// column-major X^T with the same ld, so fpcert's D = A B is cuBLASLt's D^T = B^T A^T: cuBLASLt's m = n, n = m, its A
// is fpcert's B (op N when B is row-major: B^T is then B's column-major view; op T when B is column-major), its B is
// fpcert's A (op N when row-major, T when column-major), its D (n x m, ld = ldc) is fpcert's row-major D. cuBLASLt's
// bias has "length [equal to] matrix D rows" and is "broadcasted to all columns" (cublasLt.h, CUBLASLT_EPILOGUE_BIAS):
// the rows of its D are fpcert's columns, so its bias is fpcert's bias per column (a Linear layer's bias), the only
// bias kind declared. C row-major only (KernelTraits::layouts).
//
// FP8. cublasLtMatmul's FP8 kernels require "A must be transposed and B non-transposed (The "TN" format)" (cuBLAS
// documentation, cublasLtMatmul): cuBLASLt's A is fpcert's B, transposed = fpcert's B column-major (stored n x k, K
// contiguous: a weight matrix as Linear stores it); cuBLASLt's B is fpcert's A, non-transposed = fpcert's A row-major.
// So the FP8 subjects take exactly fpcert's "nt/c_row" and decline the other layouts (can_implement_layout). For an
// FP8 D, matrix C must be bf16 or f16 (the documentation's type table): fpcert's C (codes of the output format, e4m3)
// is widened into a bf16 copy first, exactly (e4m3 is a subset of bf16). The scale factors are device scalars of the
// compute type (CUBLASLT_MATMUL_DESC_{A,B,D}_SCALE_POINTER), copied from GemmOperands; amax goes to
// CUBLASLT_MATMUL_DESC_AMAX_D_POINTER ("the maximum of absolute values in the output matrix" before scale_d, fp32).
// With a bf16 D cuBLASLt neither applies scale_d nor computes amax (both are for FP8 outputs only: PyTorch's
// _scaled_mm notes, pytorch/pytorch#106844 and #122821): that subject declines a scale_d other than 1.
//
// Every call is checked: CUBLAS_STATUS_NOT_SUPPORTED / ARCH_MISMATCH, and a heuristic that finds no algorithm, become
// NotSupportedError (the verdict "not supported"); any other failure DeviceError. The heuristic is asked with the
// pointers' real alignment (CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_*_BYTES; its default assumes 256 bytes) and a 32 MiB
// workspace, for split-K reductions in fp32 only (CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK: NONE, COMPUTE_TYPE); the plan
// (descriptors and algorithm) is kept while the call's shape stays the same.
#include <cublasLt.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include "kernels/device/cuda_check.cuh"
#include "kernels/gemm/cublaslt/cublaslt_loader.cuh"
#include "kernels/register.hpp"
#include "kernels/tc/instruction.hpp"

namespace fpcert {
namespace {

constexpr std::size_t kWorkspaceBytes = std::size_t{32} << 20;  // NVIDIA's recommendation for Hopper (cuBLAS docs)

struct LtConfig {
  const char* name;
  cudaDataType_t ab;    // A and B
  cudaDataType_t d;     // D (fpcert's output format)
  cudaDataType_t c;     // C as cuBLASLt reads it (bf16 for an e4m3 D)
  cudaDataType_t bias;  // the bias vector
  bool fp8;
  const char* description;
};

const LtConfig kLtConfigs[] = {
    {"cublaslt_bf16_epilogue", CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF, false,
     "cuBLASLt cublasLtMatmul, bf16 in/out, COMPUTE_32F; epilogues BIAS / RELU / GELU (tanh form), bias bf16 per column"},
    {"cublaslt_f16_epilogue", CUDA_R_16F, CUDA_R_16F, CUDA_R_16F, CUDA_R_16F, false,
     "cuBLASLt cublasLtMatmul, f16 in/out, COMPUTE_32F; epilogues BIAS / RELU / GELU (tanh form), bias f16 per column"},
    {"cublaslt_e4m3_scaled_bf16out", CUDA_R_8F_E4M3, CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF, true,
     "cuBLASLt cublasLtMatmul FP8, e4m3 in (TN), bf16 out, COMPUTE_32F; scale_a, scale_b; epilogues, bias bf16"},
    {"cublaslt_e4m3_scaled_e4m3out", CUDA_R_8F_E4M3, CUDA_R_8F_E4M3, CUDA_R_16BF, CUDA_R_16BF, true,
     "cuBLASLt cublasLtMatmul FP8, e4m3 in (TN), e4m3 out (C bf16), COMPUTE_32F; scale_a, scale_b, scale_d, amax; "
     "epilogues, bias bf16"},
};

const Format& format_of(cudaDataType_t t) {
  switch (t) {
    case CUDA_R_16BF: return bf16;
    case CUDA_R_16F: return f16;
    case CUDA_R_8F_E4M3: return e4m3;
    default: return f32;
  }
}

const char* kLtOrder =
    "cuBLASLt's heuristic chooses the algorithm (tiling, split-K, the order) for the GPU, shape and library version and "
    "does not document it; its split-K partial sums are kept in fp32: the heuristic is asked only for the reduction "
    "schemes NONE and COMPUTE_TYPE (CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK), never INPLACE or OUTPUT_TYPE, which add "
    "the parts in the output's data type (cublasLt.h), a rounding per part into bf16 / f16 that an fp32 accumulation does "
    "not have; tensor cores with fp32 accumulation; on tensor cores the in-MMA "
    "alignment and rounding are unspecified by NVIDIA (measured as truncation: Fasi et al., PeerJ CS 7:e330, 2021): "
    "accumulation modelled as rounded toward zero, the coarser possibility; the epilogue (alpha, beta C, bias, "
    "activation, scale_d) in fp32 before the output conversion";
const char* kLtFp8Promotion =
    "; FP8: CUBLASLT_MATMUL_DESC_FAST_ACCUM left 0, under which cuBLASLt 'periodically' promotes intermediate results to "
    "higher precision (cublasLt.h); the interval is undocumented: declared every 128 products (four wgmma k32 steps, the "
    "interval DeepSeek-V3's report, sec. 3.3.2, uses against Hopper's ~14-bit FP8 accumulation), for the H200 run to "
    "confirm; within it the tensor-core card's measured bits (kernels/tc/cards.hpp)";
const char* kLtDeterminism =
    "cuBLAS documentation, 'Results reproducibility' (cuBLASLt is part of cuBLAS): bitwise identical at every run on one "
    "GPU architecture and SM count with one toolkit version and a single stream; the heuristic is asked with the same "
    "inputs and workspace for every run of one call";
// cuBLASLt documents GELU only as "apply GELU point-wise transform" (cublasLt.h, CUBLASLT_EPILOGUE_GELU); PyTorch, which
// calls it for torch._addmm_activation(use_gelu=True), computes the same result without cuBLASLt as at::gelu_(result,
// "tanh") (aten/src/ATen/native/cuda/Blas.cpp, addmm_out_cuda_impl): the tanh form. What it computes was measured on the
// H200 (cuBLASLt 13.1.0; docs/epilogue.md, "What cuBLASLt's GELU computes"; lt_gelu_sample re-measures it on every
// device run of tests/kernels/gemm/epilogue_gpu_test.cpp): with a bf16 or f16 D, Z is rounded to D's format before the
// activation, D = RN_out(F(RN_out(Z))) bit for bit on 65,536 arguments in [-10, 10] each, F its fp32 GELU (read through
// an fp32 D), which lies within 2^-17.98 |z| of the exact tanh form there: what a tanh of relative error 2^-17 gives.
const char* kLtGeluNote =
    "cuBLASLt's GELU is the tanh form (cublasLt.h says only 'GELU'; PyTorch's fallback for the same epilogue is "
    "gelu(approximate='tanh'), aten/src/ATen/native/cuda/Blas.cpp) applied to Z rounded to D's format first; its fp32 "
    "GELU measured on the H200 (cuBLASLt 13.1.0) within 2^-17.98 |z| of the exact tanh form over 65,536 arguments in "
    "[-10, 10]: declared as a tanh of relative error 2^-16, twice what explains the measurement (docs/epilogue.md, "
    "'What cuBLASLt's GELU computes')";

KernelTraits lt_traits(const LtConfig& c) {
  KernelTraits t;
  const Format& in = format_of(c.ab);
  t.a_input = t.b_input = t.a_operand = t.b_operand = &in;
  t.exact_products = true;
  t.acc = &f32;
  t.acc_rounding = Rounding::TowardZero;
  t.out = &format_of(c.d);
  t.order = std::string(kLtOrder) + (c.fp8 ? kLtFp8Promotion : "");
  t.sum_order.block_model.instruction = tc::tc_instructions_for(in, f32);
  if (c.fp8) {
    t.promote_every = 128;
    t.promote_format = &f32;
    // "All matrix dimensions must meet the optimal requirements listed in Tensor Core Usage (i.e. pointers and matrix
    // dimension must support 16-byte alignment)" (cuBLAS documentation, cublasLtMatmul, FP8): 16 one-byte elements.
    t.shape_multiple = 16;
  }
  t.determinism = Determinism::Deterministic;
  t.determinism_note = kLtDeterminism;
  // Any layout of A and B with C row-major; FP8: "TN" in cuBLASLt's terms, fpcert's A row-major and B column-major.
  t.layouts = c.fp8 ? GemmLayout{Layout::RowMajor, Layout::ColMajor, Layout::RowMajor}.bit() : kLayoutsAnyAB;
  t.alpha_beta = true;  // host fp32 alpha and beta (CUBLASLT_POINTER_MODE_HOST); C apart or in place
  t.batched = true;     // CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT and STRIDED_BATCH_OFFSET; the bias shared (stride 0)
  EpilogueTraits& e = t.epilogue;
  e.bias = bit(BiasKind::PerColumn);
  e.bias_format = &format_of(c.bias);
  e.activations = static_cast<std::uint8_t>(bit(Activation::Relu) | bit(Activation::GeluTanh));
  e.func_rel_err = std::exp2(-16);
  e.func_note = kLtGeluNote;
  e.round_before_act = true;  // measured: Z rounded to D's format before the activation (kLtGeluNote)
  // Measured: with beta != 0 and a bias, the 16-bit subjects round alpha acc + beta C to D's format before the bias is
  // added (docs/epilogue.md, "What cuBLASLt computes with beta C and a bias"; 65,009 of 65,009 elements bit for bit);
  // the FP8 kernels do not (one rounding explains 9,880 of 10,240 elements at 128 x 80 x 256 against 7,242 for the
  // double rounding, the rest their 13-bit accumulation's).
  e.round_before_bias = !c.fp8;
  e.fp8_scaling = c.fp8;
  e.fp8_scale_d = !c.fp8 || c.d == CUDA_R_8F_E4M3;  // cuBLASLt applies scale_d (and computes amax) for an FP8 D only (note above)
  e.amax = c.fp8 && c.d == CUDA_R_8F_E4M3;
  return t;
}

/// Largest power of two (at most 256) dividing the address: what the heuristic may assume of a pointer.
std::uint32_t alignment_of(const void* p) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  std::uint32_t al = 256;
  while (al > 1 && a % al != 0) al /= 2;
  return al;
}

cublasLtEpilogue_t lt_epilogue(BiasKind b, Activation a) {
  const bool bias = b == BiasKind::PerColumn;
  switch (a) {
    case Activation::Relu: return bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
    case Activation::GeluTanh: return bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
    default: return bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
  }
}

/// fpcert's C (e4m3 codes, row-major m x n, ldc, batches stride_c apart) widened into bf16 with the same geometry.
__global__ void e4m3_to_bf16(std::int64_t m, std::int64_t n, std::int64_t ldc, std::int64_t stride, const std::uint8_t* src,
                             __nv_bfloat16* dst) {
  const std::int64_t b = blockIdx.z;
  for (std::int64_t i = blockIdx.y; i < m; i += gridDim.y)
    for (std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < n; j += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
      const std::int64_t at = b * stride + i * ldc + j;
      __nv_fp8_e4m3 v;
      v.__x = src[at];
      dst[at] = __float2bfloat16_rn(static_cast<float>(v));  // exact: every e4m3 value is a bf16 value
    }
}

/// The descriptors and algorithm of one call shape, kept while the shape stays the same.
struct Plan {
  std::string key;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algo{};
};

class CublasLtGemm final : public GemmKernel {
 public:
  explicit CublasLtGemm(const LtConfig& c) : cfg_(c), name_(c.name), traits_(lt_traits(c)) {}
  ~CublasLtGemm() override {
    // Statuses ignored: at exit the context may already be gone.
    if (const cublaslt::Api* lt = cublaslt::try_api()) {
      release(*lt);
      if (handle_) lt->destroy(handle_);
    }
    for (void* p : {workspace_, scratch_, scales_})
      if (p) cudaFree(p);
  }
  CublasLtGemm(const CublasLtGemm&) = delete;
  CublasLtGemm& operator=(const CublasLtGemm&) = delete;

  const std::string& name() const override { return name_; }
  std::string description() const override { return cfg_.description; }
  Backend backend() const override { return Backend::Cublas; }
  MemorySpace memory() const override { return MemorySpace::Device; }
  const KernelTraits& traits() const override { return traits_; }

  Support can_implement(std::int64_t m, std::int64_t n, std::int64_t k) const override {
    if (m < 0 || n < 0 || k < 0) return Support::no("negative dimension");
    if (m > INT_MAX || n > INT_MAX || k > INT_MAX) return Support::no("cuBLASLt's descriptors take 32-bit row and column counts");
    // FP8: M, N, K multiples of 16 are declared (KernelTraits::shape_multiple, lt_traits): the runner asks that first.
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
      cudaGetLastError();
      return Support::no("no CUDA device");
    }
    return Support::yes();  // what the GPU or library refuses is answered by run() (NotSupportedError)
  }

  Support can_implement_layout(const GemmLayout& l) const override {
    if (traits_.layouts & l.bit()) return Support::yes();
    if (cfg_.fp8)
      return Support::no("cuBLASLt's FP8 kernels take only the \"TN\" form (cuBLAS documentation, cublasLtMatmul): fpcert's A "
                         "row-major and B column-major with C row-major (nt/c_row), not " + to_string(l));
    return Support::no("this cuBLASLt subject writes C row-major only (its column-major D is fpcert's C transposed), not " + to_string(l));
  }

  Support can_implement_operands(const GemmOperands& ops) const override {
    // What the traits do not declare is never run silently otherwise (a bias per row would be dropped).
    const EpilogueTraits& e = traits_.epilogue;
    if (!e.takes(ops.bias_kind)) return Support::no("cuBLASLt's bias runs along fpcert's columns only, not " + std::string(to_string(ops.bias_kind)));
    if (!e.takes(ops.activation)) return Support::no("cuBLASLt has no " + std::string(to_string(ops.activation)) + " epilogue (ReLU, GELU tanh form)");
    if (!e.fp8_scaling && (ops.scale_a != 1 || ops.scale_b != 1 || ops.scale_d != 1))
      return Support::no("cuBLASLt's scale factors are for FP8 inputs only");
    if (ops.amax && !e.amax) return Support::no("cuBLASLt computes amax for an FP8 output only");
    if (!e.fp8_scale_d && ops.scale_d != 1)  // the runner never asks it (EpilogueTraits::fp8_scale_d); a direct caller might
      return Support::no("cuBLASLt applies scale_d only to an FP8 output (D is bf16 here): scale_d " + std::to_string(ops.scale_d) +
                         " would be ignored");
    return Support::yes();
  }

  void run(const GemmOperands& ops) override {
    if (ops.m == 0 || ops.n == 0) return;
    if (ops.batch > INT_MAX) throw NotSupportedError(name_ + ": cuBLASLt's batch count is a 32-bit integer");
    if (const Support s = can_implement_operands(ops); !s.ok) throw NotSupportedError(name_ + ": " + s.reason);
    const cublaslt::Api& lt = cublaslt::api();  // DeviceError when cuBLASLt cannot be loaded
    if (!handle_) FPCERT_CUBLASLT_CHECK(lt.create(&handle_));
    if (!workspace_) FPCERT_CUDA_CHECK(cudaMalloc(&workspace_, kWorkspaceBytes));
    const auto stream = static_cast<cudaStream_t>(ops.stream);
    const bool read_c = ops.beta != 0 && ops.c_in;
    // beta = 0: C is not read; D's buffer stands for it (BLAS's convention) where C and D have one type. With an e4m3 D
    // (C bf16) no pointer: cublasLtMatmul refuses C = D with two types (INVALID_VALUE) and takes a null C when beta = 0
    // (both measured on the H200, cuBLASLt 13.1.0).
    const void* c = read_c ? ops.c_in : cfg_.c == cfg_.d ? ops.c : nullptr;
    if (read_c && cfg_.c != cfg_.d) c = widen_c(ops, stream);
    // The scale factors as device scalars of the compute type (fp32), copied on the stream before the call when they
    // change (a copy from pageable memory waits for the stream: not on every timed run).
    if (cfg_.fp8) {
      const float want[3] = {static_cast<float>(ops.scale_a), static_cast<float>(ops.scale_b), static_cast<float>(ops.scale_d)};
      if (!scales_) FPCERT_CUDA_CHECK(cudaMalloc(&scales_, sizeof host_scales_));
      if (!scales_copied_ || host_scales_[0] != want[0] || host_scales_[kScaleStride] != want[1] || host_scales_[2 * kScaleStride] != want[2]) {
        for (int i = 0; i < 3; ++i) host_scales_[i * kScaleStride] = want[i];
        FPCERT_CUDA_CHECK(cudaMemcpyAsync(scales_, host_scales_, sizeof host_scales_, cudaMemcpyHostToDevice, stream));
        scales_copied_ = true;
      }
    }
    const Plan& p = plan(lt, ops, c);
    const float alpha = static_cast<float>(ops.alpha), beta = static_cast<float>(ops.beta);
    // cuBLASLt's A is fpcert's B and its B fpcert's A (the header's orientation).
    check(lt.matmul(handle_, p.desc, &alpha, ops.b, p.a, ops.a, p.b, &beta, c, p.c, ops.c, p.d, &p.algo, workspace_, kWorkspaceBytes,
                    stream),
          "cublasLtMatmul");
  }

 private:
  /// NOT_SUPPORTED and ARCH_MISMATCH: "not supported"; anything else: a device failure.
  void check(cublasStatus_t s, const char* what) const {
    if (s == CUBLAS_STATUS_SUCCESS) return;
    if (s == CUBLAS_STATUS_NOT_SUPPORTED || s == CUBLAS_STATUS_ARCH_MISMATCH)
      throw NotSupportedError(name_ + ": " + what + " answered " + cublaslt::status_text(s) + " on this GPU/library");
    throw DeviceError(name_ + ": " + what + " failed: " + cublaslt::status_text(s));
  }

  const void* widen_c(const GemmOperands& ops, cudaStream_t stream) {
    const std::int64_t span = (ops.batch - 1) * ops.stride_c + (ops.m - 1) * ops.ldc + ops.n;  // elements C occupies
    const std::size_t bytes = static_cast<std::size_t>(span) * 2;
    if (bytes > scratch_bytes_) {
      if (scratch_) FPCERT_CUDA_CHECK(cudaFree(scratch_));
      scratch_ = nullptr;
      FPCERT_CUDA_CHECK(cudaMalloc(&scratch_, bytes));
      scratch_bytes_ = bytes;
    }
    const dim3 grid(static_cast<unsigned>(std::min<std::int64_t>((ops.n + 255) / 256, 1024)),
                    static_cast<unsigned>(std::min<std::int64_t>(ops.m, 65535)), static_cast<unsigned>(ops.batch));
    e4m3_to_bf16<<<grid, 256, 0, stream>>>(ops.m, ops.n, ops.ldc, ops.stride_c, static_cast<const std::uint8_t*>(ops.c_in),
                                           static_cast<__nv_bfloat16*>(scratch_));
    FPCERT_CUDA_LAUNCH_CHECK("e4m3_to_bf16");
    return scratch_;
  }

  void release(const cublaslt::Api& lt) {
    if (plan_.desc) lt.desc_destroy(plan_.desc);
    for (cublasLtMatrixLayout_t l : {plan_.a, plan_.b, plan_.c, plan_.d})
      if (l) lt.layout_destroy(l);
    plan_ = Plan{};
  }

  cublasLtMatrixLayout_t layout(const cublaslt::Api& lt, cudaDataType_t type, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                                std::int64_t stride, std::int64_t batch) {
    cublasLtMatrixLayout_t l = nullptr;
    check(lt.layout_create(&l, type, static_cast<std::uint64_t>(rows), static_cast<std::uint64_t>(cols), std::max<std::int64_t>(ld, 1)),
          "cublasLtMatrixLayoutCreate");
    if (batch > 1) {
      const auto count = static_cast<std::int32_t>(batch);
      const std::int64_t offset = stride;
      FPCERT_CUBLASLT_CHECK(lt.layout_set(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count));
      FPCERT_CUBLASLT_CHECK(lt.layout_set(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &offset, sizeof offset));
    }
    return l;
  }

  template <class T>
  void set(const cublaslt::Api& lt, cublasLtMatmulDescAttributes_t attr, const T& v) {
    FPCERT_CUBLASLT_CHECK(lt.desc_set(plan_.desc, attr, &v, sizeof v));
  }

  /// The call's descriptors and algorithm: made when the shape, layouts, epilogue or alignments change; the pointers
  /// (bias, scales, amax) set on every call.
  const Plan& plan(const cublaslt::Api& lt, const GemmOperands& ops, const void* c) {
    const bool a_row = ops.a_layout == Layout::RowMajor, b_row = ops.b_layout == Layout::RowMajor;
    const bool amax = traits_.epilogue.amax && ops.amax;
    const cublasLtEpilogue_t epi = lt_epilogue(ops.bias_kind, ops.activation);
    std::string key;
    for (std::int64_t v : {ops.m, ops.n, ops.k, ops.lda, ops.ldb, ops.ldc, ops.batch, ops.stride_a, ops.stride_b, ops.stride_c,
                           static_cast<std::int64_t>(a_row), static_cast<std::int64_t>(b_row), static_cast<std::int64_t>(epi),
                           static_cast<std::int64_t>(amax), static_cast<std::int64_t>(alignment_of(ops.a)),
                           static_cast<std::int64_t>(alignment_of(ops.b)), static_cast<std::int64_t>(alignment_of(c)),
                           static_cast<std::int64_t>(alignment_of(ops.c)), static_cast<std::int64_t>(alignment_of(ops.bias))})
      key += std::to_string(v) + ",";
    if (key != plan_.key) {
      release(lt);
      check(lt.desc_create(&plan_.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
      const cublasOperation_t ta = b_row ? CUBLAS_OP_N : CUBLAS_OP_T, tb = a_row ? CUBLAS_OP_N : CUBLAS_OP_T;
      set(lt, CUBLASLT_MATMUL_DESC_TRANSA, ta);
      set(lt, CUBLASLT_MATMUL_DESC_TRANSB, tb);
      set(lt, CUBLASLT_MATMUL_DESC_EPILOGUE, epi);
      if (ops.bias_kind == BiasKind::PerColumn) {
        set(lt, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, static_cast<std::int32_t>(cfg_.bias));
        set(lt, CUBLASLT_MATMUL_DESC_BIAS_POINTER, ops.bias);
        set(lt, CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, std::int64_t{0});  // one bias vector for every batch
      }
      set_pointers(lt, ops);
      const std::int64_t m = ops.n, n = ops.m, k = ops.k;  // cuBLASLt's problem: D^T = B^T A^T
      plan_.a = layout(lt, cfg_.ab, b_row ? m : k, b_row ? k : m, ops.ldb, ops.stride_b, ops.batch);
      plan_.b = layout(lt, cfg_.ab, a_row ? k : n, a_row ? n : k, ops.lda, ops.stride_a, ops.batch);
      plan_.c = layout(lt, cfg_.c, m, n, ops.ldc, ops.stride_c, ops.batch);
      plan_.d = layout(lt, cfg_.d, m, n, ops.ldc, ops.stride_c, ops.batch);
      cublasLtMatmulPreference_t pref = nullptr;
      check(lt.pref_create(&pref), "cublasLtMatmulPreferenceCreate");
      cublasLtMatmulHeuristicResult_t result{};
      int found = 0;
      const auto set_pref = [&](cublasLtMatmulPreferenceAttributes_t attr, auto v) { return lt.pref_set(pref, attr, &v, sizeof v); };
      cublasStatus_t s = set_pref(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, std::uint64_t{kWorkspaceBytes});
      if (s == CUBLAS_STATUS_SUCCESS) s = set_pref(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, alignment_of(ops.b));
      if (s == CUBLAS_STATUS_SUCCESS) s = set_pref(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, alignment_of(ops.a));
      if (s == CUBLAS_STATUS_SUCCESS) s = set_pref(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, alignment_of(c));
      if (s == CUBLAS_STATUS_SUCCESS) s = set_pref(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, alignment_of(ops.c));
      // Split-K parts reduced in fp32 only (kLtOrder): INPLACE and OUTPUT_TYPE add them in D's type.
      if (s == CUBLAS_STATUS_SUCCESS)
        s = set_pref(CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK,
                     static_cast<std::uint32_t>(CUBLASLT_REDUCTION_SCHEME_NONE | CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE));
      if (s == CUBLAS_STATUS_SUCCESS) s = lt.heuristic(handle_, plan_.desc, plan_.a, plan_.b, plan_.c, plan_.d, pref, 1, &result, &found);
      lt.pref_destroy(pref);
      check(s, "cublasLtMatmulAlgoGetHeuristic");
      if (found == 0 || result.state != CUBLAS_STATUS_SUCCESS)
        throw NotSupportedError(name_ + ": cublasLtMatmulAlgoGetHeuristic found no algorithm for this call (" +
                                std::to_string(ops.m) + "x" + std::to_string(ops.n) + "x" + std::to_string(ops.k) + ", " +
                                to_string(ops.layout()) + (cfg_.fp8 ? "; FP8 needs 16-byte aligned pointers and leading dimensions" : "") +
                                ")");
      plan_.algo = result.algo;
      plan_.key = std::move(key);
    } else {
      if (ops.bias_kind == BiasKind::PerColumn) set(lt, CUBLASLT_MATMUL_DESC_BIAS_POINTER, ops.bias);
      set_pointers(lt, ops);
    }
    return plan_;
  }

  /// FP8: the scale factors' device scalars and, when asked, amax.
  void set_pointers(const cublaslt::Api& lt, const GemmOperands& ops) {
    if (!cfg_.fp8) return;
    const float* s = static_cast<const float*>(scales_);
    set(lt, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, static_cast<const void*>(s));
    set(lt, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, static_cast<const void*>(s + kScaleStride));
    if (cfg_.d == CUDA_R_8F_E4M3) {
      set(lt, CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, static_cast<const void*>(s + 2 * kScaleStride));
      set(lt, CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, ops.amax);  // null: not asked (cublasLt.h: then not computed)
    }
  }

  const LtConfig& cfg_;
  std::string name_;
  KernelTraits traits_;
  cublasLtHandle_t handle_ = nullptr;
  void* workspace_ = nullptr;
  void* scratch_ = nullptr;  // C widened to bf16 (FP8 output)
  std::size_t scratch_bytes_ = 0;
  // scale_a, scale_b, scale_d (fp32, device), 16 bytes apart: cublasLtMatmul answers NOT_SUPPORTED for a scale
  // pointer aligned to 4 or 8 bytes only (measured on the H200, cuBLASLt 13.1.0; the documentation is silent).
  static constexpr int kScaleStride = 4;
  void* scales_ = nullptr;
  float host_scales_[3 * kScaleStride] = {1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0};
  bool scales_copied_ = false;
  Plan plan_;
};

}  // namespace

void register_cublaslt_kernels() {
  for (const LtConfig& c : kLtConfigs) register_kernel(c.name, Backend::Cublas, false, [&c] { return std::make_unique<CublasLtGemm>(c); });
}

}  // namespace fpcert
