// kernels/gemm/cublas/cublas_gemm.cu — cuBLAS GEMM baselines with the compute type always pinned.
//
// One kernel class, parameterised by cublasComputeType_t; never a default that would let cuBLAS pick
// TF32 silently (the math mode is set explicitly and the compute type is passed to every call):
//   cublas_gemm_f32_pedantic          CUBLAS_COMPUTE_32F_PEDANTIC          fp32 in/out
//   cublas_gemm_f32_fast_tf32         CUBLAS_COMPUTE_32F_FAST_TF32         fp32 in/out
//   cublas_gemm_f32_fast_16f          CUBLAS_COMPUTE_32F_FAST_16F          fp32 in/out
//   cublas_gemm_f32_fast_16bf         CUBLAS_COMPUTE_32F_FAST_16BF         fp32 in/out
//   cublas_gemm_f16_f16acc            CUBLAS_COMPUTE_16F                   fp16 in/out
//   cublas_gemm_f32_emulated_16bfx9   CUBLAS_COMPUTE_32F_EMULATED_16BFX9   fp32 in/out
//   cublas_gemm_f16_f32acc            CUBLAS_COMPUTE_32F                   fp16 in, fp32 out
//   cublas_gemm_bf16_f32acc           CUBLAS_COMPUTE_32F                   bf16 in, fp32 out
// (the last two: the same data path as the fp16/bf16 mma kernels, for ratios at equal inputs; with
// 16-bit inputs CUBLAS_COMPUTE_32F means tensor cores with fp32 accumulation, no TF32 question).
// Row-major C = A * B goes through column-major cuBLAS as C^T = B^T * A^T: a row-major matrix with
// leading dimension ld is the column-major transpose with the same ld, so the call is
// gemm(N, N, n, m, k, B, ldb, A, lda, C, ldc) and only the m x n elements of C are written (the ldc
// padding never). Every layout is taken (KernelTraits::layouts, docs/suites.md "layout.transposes"): a column-major A
// or B is passed with CUBLAS_OP_T in that call; a column-major C is cuBLAS's own C, gemm(opA, opB, m, n, k, A, lda, B,
// ldb, C, ldc) with opX = N for a column-major X and T for a row-major one. beta = 0: C is not read (the runner's NaN pre-fill cannot leak in).
// Strided batches (KernelTraits::batched, docs/suites.md "batch.strided"): cublasGemmStridedBatchedEx, same operands,
// compute type and algorithm, with the strides (0: broadcast A or B).
// CUBLAS_STATUS_NOT_SUPPORTED (a compute type this GPU or library refuses) becomes NotSupportedError:
// the verdict is "not supported", not a crash.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <climits>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include "kernels/device/cuda_check.cuh"
#include "kernels/gemm/cublas/cublas_call.cuh"
#include "kernels/gemm/cublas/cublas_loader.cuh"
#include "kernels/register.hpp"
#include "kernels/tc/instruction.hpp"

namespace fpcert {
namespace {

const char* kCublasOrder =
    "cuBLAS chooses the algorithm (tiling, split-K, the reduction order) for the GPU, shape and library "
    "version, and does not document it; results are bitwise reproducible run to run for a given GPU "
    "architecture, SM count, library version and stream (cuBLAS documentation, 'Results reproducibility'; "
    "atomics are not allowed by default)";
// What cuBLAS documents about run-to-run determinism (cuBLAS documentation, "Results reproducibility"): by design every
// routine of a given toolkit version gives bitwise identical results at every run on GPUs of the same architecture and
// SM count, while a single CUDA stream is active (or with a workspace per stream); routines whose faster alternative
// uses atomics give that up when cublasSetAtomicsMode(CUBLAS_ATOMICS_ALLOWED) is set. These kernels use one handle, one
// stream and the default atomics mode (not allowed): they declare themselves deterministic, and fpcert checks it.
const char* kCublasDeterminism =
    "cuBLAS documentation, 'Results reproducibility': bitwise identical at every run on one GPU architecture and SM count "
    "with one toolkit version and a single active stream; the atomics mode is left at CUBLAS_ATOMICS_NOT_ALLOWED";
const char* kTensorCoreAcc =
    "; on tensor cores the in-MMA alignment and rounding are unspecified by NVIDIA (measured as truncation: "
    "Fasi et al., PeerJ CS 7:e330, 2021): accumulation modelled as rounded toward zero, the coarser possibility";

struct Config {
  const char* name;
  cublasComputeType_t compute;
  cudaDataType_t in;   // A and B
  cudaDataType_t out;  // C
  const char* description;
};

const Config kConfigs[] = {
    {"cublas_gemm_f32_pedantic", CUBLAS_COMPUTE_32F_PEDANTIC, CUDA_R_32F, CUDA_R_32F,
     "cuBLAS cublasGemmEx, fp32 in/out, CUBLAS_COMPUTE_32F_PEDANTIC (no tensor cores, no reduced precision)"},
    {"cublas_gemm_f32_fast_tf32", CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F, CUDA_R_32F,
     "cuBLAS cublasGemmEx, fp32 in/out, CUBLAS_COMPUTE_32F_FAST_TF32 (inputs down-converted to tf32)"},
    {"cublas_gemm_f32_fast_16f", CUBLAS_COMPUTE_32F_FAST_16F, CUDA_R_32F, CUDA_R_32F,
     "cuBLAS cublasGemmEx, fp32 in/out, CUBLAS_COMPUTE_32F_FAST_16F (inputs down-converted to fp16 or tf32)"},
    {"cublas_gemm_f32_fast_16bf", CUBLAS_COMPUTE_32F_FAST_16BF, CUDA_R_32F, CUDA_R_32F,
     "cuBLAS cublasGemmEx, fp32 in/out, CUBLAS_COMPUTE_32F_FAST_16BF (inputs down-converted to bf16 or tf32)"},
    {"cublas_gemm_f16_f16acc", CUBLAS_COMPUTE_16F, CUDA_R_16F, CUDA_R_16F,
     "cuBLAS cublasGemmEx, fp16 in/out, CUBLAS_COMPUTE_16F (fp16 accumulation)"},
    {"cublas_gemm_f32_emulated_16bfx9", CUBLAS_COMPUTE_32F_EMULATED_16BFX9, CUDA_R_32F, CUDA_R_32F,
     "cuBLAS cublasGemmEx, fp32 in/out, CUBLAS_COMPUTE_32F_EMULATED_16BFX9 (BF16x9 emulation, strategy EAGER)"},
    {"cublas_gemm_f16_f32acc", CUBLAS_COMPUTE_32F, CUDA_R_16F, CUDA_R_32F,
     "cuBLAS cublasGemmEx, fp16 in, fp32 out, CUBLAS_COMPUTE_32F (tensor cores, fp32 accumulation)"},
    {"cublas_gemm_bf16_f32acc", CUBLAS_COMPUTE_32F, CUDA_R_16BF, CUDA_R_32F,
     "cuBLAS cublasGemmEx, bf16 in, fp32 out, CUBLAS_COMPUTE_32F (tensor cores, fp32 accumulation)"},
};

KernelTraits traits_for(cublasComputeType_t compute, cudaDataType_t in) {
  KernelTraits t;
  t.a_input = t.b_input = t.a_operand = t.b_operand = &f32;
  if (compute == CUBLAS_COMPUTE_32F && (in == CUDA_R_16F || in == CUDA_R_16BF)) {
    t.a_input = t.b_input = t.a_operand = t.b_operand = in == CUDA_R_16F ? &f16 : &bf16;
    t.acc_rounding = Rounding::TowardZero;
    t.order = std::string(kCublasOrder) + "; 16-bit inputs, exact products, fp32 accumulation on tensor cores" +
              kTensorCoreAcc;
    t.sum_order.block_model.instruction = tc::tc_instructions_for(*t.a_operand, f32);
    t.determinism = Determinism::Deterministic;
    t.determinism_note = kCublasDeterminism;
    t.alpha_beta = true;  // cublasGemmEx's alpha and beta, fp32 scalars (run())
    t.layouts = kLayoutsAll;  // as every cuBLAS built-in (this early return skipped it: the H200 layout test refused both)
    t.batched = true;         // cublasGemmStridedBatchedEx when batch > 1 (run())
    return t;
  }
  t.exact_products = true;
  t.acc = &f32;
  t.out = &f32;
  std::string order = kCublasOrder;
  switch (compute) {
    case CUBLAS_COMPUTE_32F_PEDANTIC:
      order += "; PEDANTIC: every product exact inside an fp32 FMA, sums in fp32 round-to-nearest";
      break;
    case CUBLAS_COMPUTE_32F_FAST_TF32:
      // The fp32 -> tf32 conversion cuBLAS uses is not documented (nearest or truncation): the
      // coarser, truncation (u = 2^-10), is what the bound may assume.
      t.a_operand = t.b_operand = &tf32;
      t.input_rounding = Rounding::TowardZero;
      t.acc_rounding = Rounding::TowardZero;
      order += "; operands rounded fp32 -> tf32 by an undocumented conversion (modelled as truncation, the coarser)";
      order += kTensorCoreAcc;
      break;
    case CUBLAS_COMPUTE_32F_FAST_16F:
      // cuBLAS may down-convert to fp16 or to tf32 (cublas_api.h: "allows down-converting inputs to
      // half or TF32"): both have p = 11; fp16 also has the narrower range, so it is the coarser.
      t.a_operand = t.b_operand = &f16;
      t.input_rounding = Rounding::TowardZero;
      t.acc_rounding = Rounding::TowardZero;
      order += "; operands down-converted to fp16 or tf32 (cuBLAS may use either; traits use fp16, the coarser: same "
               "precision, narrower range), conversion undocumented (modelled as truncation)";
      order += kTensorCoreAcc;
      break;
    case CUBLAS_COMPUTE_32F_FAST_16BF:
      // bf16 (p = 8) or tf32 (p = 11): bf16 is the coarser.
      t.a_operand = t.b_operand = &bf16;
      t.input_rounding = Rounding::TowardZero;
      t.acc_rounding = Rounding::TowardZero;
      order += "; operands down-converted to bf16 or tf32 (cuBLAS may use either; traits use bf16, the coarser), "
               "conversion undocumented (modelled as truncation)";
      order += kTensorCoreAcc;
      break;
    case CUBLAS_COMPUTE_16F:
      t.a_input = t.b_input = t.a_operand = t.b_operand = &f16;
      t.acc = &f16;
      t.acc_rounding = Rounding::TowardZero;
      t.out = &f16;
      order += "; fp16 accumulation (rounding inside tensor cores unspecified: modelled as toward zero, the coarser)";
      break;
    case CUBLAS_COMPUTE_32F_EMULATED_16BFX9:
      t.operand_u = std::ldexp(1.0, -24);
      t.operand_note = "2^-24: BF16x9 splits each fp32 operand into three bf16 slices (exact for normal fp32) and "
                       "keeps all nine slice products; where cuBLAS declines to emulate it computes in fp32";
      t.acc_rounding = Rounding::TowardZero;
      order += "; BF16x9 emulation (slice products on bf16 tensor cores, fp32 accumulation)";
      order += kTensorCoreAcc;
      break;
    default: break;
  }
  t.order = std::move(order);
  t.determinism = Determinism::Deterministic;
  t.determinism_note = kCublasDeterminism;
  t.layouts = kLayoutsAll;  // the transposes cuBLAS takes, and C either way (run())
  t.alpha_beta = true;      // cublasGemmEx's alpha and beta (fp16 scalars with CUBLAS_COMPUTE_16F, fp32 otherwise; run())
  t.batched = true;         // cublasGemmStridedBatchedEx when batch > 1, the same compute type (run())
  // The tensor-core instructions cuBLAS may run (docs/tensor_cores.md, "Certifying tensor-core kernels"):
  // the envelope takes the coarsest of their cards' measured bits. FAST_16F/16BF may down-convert to tf32.
  switch (compute) {
    case CUBLAS_COMPUTE_32F_FAST_TF32: t.sum_order.block_model.instruction = tc::tc_instructions_for(tf32, f32); break;
    case CUBLAS_COMPUTE_32F_FAST_16F:
      t.sum_order.block_model.instruction = tc::tc_instructions_for(f16, f32) + "|" + tc::tc_instructions_for(tf32, f32);
      break;
    case CUBLAS_COMPUTE_32F_FAST_16BF:
      t.sum_order.block_model.instruction = tc::tc_instructions_for(bf16, f32) + "|" + tc::tc_instructions_for(tf32, f32);
      break;
    case CUBLAS_COMPUTE_16F: t.sum_order.block_model.instruction = tc::tc_instructions_for(f16, f16); break;
    case CUBLAS_COMPUTE_32F_EMULATED_16BFX9: t.sum_order.block_model.instruction = tc::tc_instructions_for(bf16, f32); break;
    default: break;
  }
  return t;
}

class CublasGemm final : public GemmKernel {
 public:
  explicit CublasGemm(const Config& c) : cfg_(c), name_(c.name), traits_(traits_for(c.compute, c.in)) {}
  ~CublasGemm() override {
    if (handle_) cublas::api().destroy(handle_);  // status ignored: the context may already be gone at exit
  }
  CublasGemm(const CublasGemm&) = delete;
  CublasGemm& operator=(const CublasGemm&) = delete;

  const std::string& name() const override { return name_; }
  std::string description() const override { return cfg_.description; }
  Backend backend() const override { return Backend::Cublas; }
  MemorySpace memory() const override { return MemorySpace::Device; }
  const KernelTraits& traits() const override { return traits_; }

  Support can_implement(std::int64_t m, std::int64_t n, std::int64_t k) const override {
    if (m < 0 || n < 0 || k < 0) return Support::no("negative dimension");
    if (m > INT_MAX || n > INT_MAX || k > INT_MAX) return Support::no("cuBLAS takes 32-bit dimensions");
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
      cudaGetLastError();
      return Support::no("no CUDA device");
    }
    return Support::yes();  // what the GPU or library refuses is answered by run() (NotSupportedError)
  }

  void run(const GemmOperands& ops) override {
    if (ops.m == 0 || ops.n == 0) return;
    if (ops.lda > INT_MAX || ops.ldb > INT_MAX || ops.ldc > INT_MAX || ops.batch > INT_MAX)
      throw NotSupportedError(name_ + ": leading dimension or batch count beyond cuBLAS's 32-bit range");
    if (!handle_) create_handle();
    const cublas::Api& cb = cublas::api();
    FPCERT_CUBLAS_CHECK(cb.set_stream(handle_, static_cast<cudaStream_t>(ops.stream)));
    // D = alpha AB + beta C (KernelTraits::alpha_beta): the scalars are values of the accumulator format (fp16 for
    // CUBLAS_COMPUTE_16F, fp32 otherwise), exact in either. C apart is copied into D's buffer first (inside the timed
    // region); strided batches go to cublasGemmStridedBatchedEx with the same compute type (cublas_call.cuh).
    const float alpha32 = static_cast<float>(ops.alpha), beta32 = static_cast<float>(ops.beta);
    const Rounder rn16 = Rounder::nearest(f16);
    const auto alpha16 = static_cast<std::uint16_t>(round_double(f16, ops.alpha, rn16).code);
    const auto beta16 = static_cast<std::uint16_t>(round_double(f16, ops.beta, rn16).code);
    const bool half_scalars = cfg_.compute == CUBLAS_COMPUTE_16F;
    cublas::copy_c_in(ops, cfg_.out == CUDA_R_32F ? 4 : 2);
    const void* alpha = half_scalars ? static_cast<const void*>(&alpha16) : &alpha32;
    const void* beta = half_scalars ? static_cast<const void*>(&beta16) : &beta32;
    const cublasStatus_t s = cublas::gemm(cb, handle_, ops, alpha, beta, cfg_.in, cfg_.out, cfg_.compute);
    if (s == CUBLAS_STATUS_NOT_SUPPORTED || s == CUBLAS_STATUS_ARCH_MISMATCH)
      throw NotSupportedError(name_ + (ops.batch > 1 ? ": cublasGemmStridedBatchedEx answered " : ": cublasGemmEx answered ") + cublas::status_text(s) +
                              " for this compute type on this GPU/library");
    FPCERT_CUBLAS_CHECK(s);
  }

 private:
  void create_handle() {
    const cublas::Api& cb = cublas::api();  // DeviceError when cuBLAS cannot be loaded
    cublasHandle_t h = nullptr;
    FPCERT_CUBLAS_CHECK(cb.create(&h));
    // Pin the math mode: pedantic for the pedantic kernel, default (no TF32 unless the compute type
    // asks for it) for the others; the compute type passed to cublasGemmEx decides the rest.
    cublasStatus_t s =
        cb.set_math_mode(h, cfg_.compute == CUBLAS_COMPUTE_32F_PEDANTIC ? CUBLAS_PEDANTIC_MATH : CUBLAS_DEFAULT_MATH);
    // Emulate whenever the library can (the default strategy, PERFORMANT, may quietly compute in fp32).
    if (s == CUBLAS_STATUS_SUCCESS && cfg_.compute == CUBLAS_COMPUTE_32F_EMULATED_16BFX9)
      s = cb.set_emulation_strategy(h, CUBLAS_EMULATION_STRATEGY_EAGER);
    if (s != CUBLAS_STATUS_SUCCESS) {
      cb.destroy(h);
      if (s == CUBLAS_STATUS_NOT_SUPPORTED)
        throw NotSupportedError(name_ + ": configuring the cuBLAS handle answered " + cublas::status_text(s));
      FPCERT_CUBLAS_CHECK(s);
    }
    handle_ = h;
  }

  const Config& cfg_;
  std::string name_;
  KernelTraits traits_;
  cublasHandle_t handle_ = nullptr;
};

}  // namespace

void register_cublas_kernels() {
  for (const Config& c : kConfigs) register_kernel(c.name, Backend::Cublas, false, [&c] { return std::make_unique<CublasGemm>(c); });
}

}  // namespace fpcert
