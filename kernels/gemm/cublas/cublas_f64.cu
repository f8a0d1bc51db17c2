// kernels/gemm/cublas/cublas_f64.cu — cuBLAS FP64 GEMM subjects (docs/fp64.md), compute type always pinned:
//   cublas_gemm_f64                       CUBLAS_COMPUTE_64F                      fp64 in/out (DGEMM: FMA units or DMMA)
//   cublas_gemm_f64_emulated_fixedpoint   CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT  fp64 in/out, emulation strategy EAGER
// Both declare fp64 arithmetic (u = 2^-53) with an order cuBLAS does not document: the envelope judges them, and the
// correct-bits metric (docs/fp64.md, "Correct bits") shows what each achieves per element. The emulated compute type
// is held to the same fp64 envelope: cuBLAS offers it as an emulation of double-precision GEMM, and fpcert found no
// per-element accuracy statement of its fixed-point scheme to declare instead (docs/fp64.md, "cuBLAS's emulation").
// Where this cuBLAS or device does not offer the emulation (status NOT_SUPPORTED / ARCH_MISMATCH, or the handle
// refuses the math mode), the case is "not supported" with the library's answer as the reason.
// Row-major C = A * B as column-major C^T = B^T A^T, as kernels/gemm/cublas/cublas_gemm.cu does; beta = 0.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <climits>
#include <string>

#include "kernels/device/cuda_check.cuh"
#include "kernels/gemm/cublas/cublas_call.cuh"
#include "kernels/gemm/cublas/cublas_loader.cuh"
#include "kernels/register.hpp"

namespace fpcert {
namespace {

const char* kF64Order =
    "cuBLAS chooses the algorithm (FMA units or DMMA tensor cores, tiling, split-K, the reduction order) for the GPU, "
    "shape and library version and does not document it; fp64 products and sums, each rounded to nearest even";
const char* kF64Determinism =
    "cuBLAS documentation, 'Results reproducibility': bitwise identical at every run on one GPU architecture and SM count "
    "with one toolkit version and a single active stream; the atomics mode is left at CUBLAS_ATOMICS_NOT_ALLOWED";

KernelTraits f64_traits(bool emulated) {
  KernelTraits t;
  t.a_input = t.b_input = t.a_operand = t.b_operand = &f64;
  t.acc = &f64;
  t.out = &f64;
  // Products declared rounded into fp64 (the coarser of FMA and multiply-then-add: cuBLAS does not say which it runs).
  t.exact_products = false;
  t.product_format = &f64;
  t.order = std::string(kF64Order) +
            (emulated ? "; CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT: operands cut into fixed-point slices on integer tensor "
                        "cores (the Ozaki scheme), strategy EAGER, the library's default mantissa control; held to fp64's "
                        "envelope"
                      : "");
  t.determinism = Determinism::Deterministic;
  t.determinism_note = kF64Determinism;
  t.layouts = kLayoutsAll;  // the transposes cuBLAS takes, and C either way (run(), as cublas_gemm.cu)
  t.alpha_beta = true;      // cublasGemmEx's alpha and beta, fp64 scalars (run())
  t.batched = true;         // cublasGemmStridedBatchedEx when batch > 1 (run(), cublas_call.cuh)
  return t;
}

class CublasF64 final : public GemmKernel {
 public:
  CublasF64(std::string name, bool emulated)
      : name_(std::move(name)), emulated_(emulated), traits_(f64_traits(emulated)) {}
  ~CublasF64() override {
    if (handle_) cublas::api().destroy(handle_);
  }
  CublasF64(const CublasF64&) = delete;
  CublasF64& operator=(const CublasF64&) = delete;

  const std::string& name() const override { return name_; }
  std::string description() const override {
    return emulated_ ? "cuBLAS cublasGemmEx, fp64 in/out, CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT (Ozaki fixed-point "
                       "emulation on integer tensor cores, strategy EAGER)"
                     : "cuBLAS cublasGemmEx, fp64 in/out, CUBLAS_COMPUTE_64F (native DGEMM)";
  }
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
    return Support::yes();
  }

  void run(const GemmOperands& ops) override {
    if (ops.m == 0 || ops.n == 0) return;
    if (ops.lda > INT_MAX || ops.ldb > INT_MAX || ops.ldc > INT_MAX || ops.batch > INT_MAX)
      throw NotSupportedError(name_ + ": leading dimension or batch count beyond cuBLAS's 32-bit range");
    if (!handle_) create_handle();
    const cublas::Api& cb = cublas::api();
    FPCERT_CUBLAS_CHECK(cb.set_stream(handle_, static_cast<cudaStream_t>(ops.stream)));
    // D = alpha AB + beta C with fp64 scalars; C apart copied into D's buffer first; strided batches through
    // cublasGemmStridedBatchedEx with the same compute type (cublas_call.cuh, as cublas_gemm.cu).
    const double alpha = ops.alpha, beta = ops.beta;
    cublas::copy_c_in(ops, 8);
    const cublasComputeType_t compute = emulated_ ? CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT : CUBLAS_COMPUTE_64F;
    const cublasStatus_t s = cublas::gemm(cb, handle_, ops, &alpha, &beta, CUDA_R_64F, CUDA_R_64F, compute);
    if (s == CUBLAS_STATUS_NOT_SUPPORTED || s == CUBLAS_STATUS_ARCH_MISMATCH)
      throw NotSupportedError(name_ + (ops.batch > 1 ? ": cublasGemmStridedBatchedEx answered " : ": cublasGemmEx answered ") +
                              cublas::status_text(s) + " for this compute type on this GPU/library");
    FPCERT_CUBLAS_CHECK(s);
  }

 private:
  void create_handle() {
    const cublas::Api& cb = cublas::api();
    cublasHandle_t h = nullptr;
    FPCERT_CUBLAS_CHECK(cb.create(&h));
    // Native: the default math mode (no emulation may be substituted); emulated: the fixed-point math mode and the
    // EAGER strategy, so cuBLAS emulates whenever it can instead of computing natively where it judges that faster.
    cublasStatus_t s = cb.set_math_mode(h, emulated_ ? CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH : CUBLAS_DEFAULT_MATH);
    if (s == CUBLAS_STATUS_SUCCESS && emulated_) s = cb.set_emulation_strategy(h, CUBLAS_EMULATION_STRATEGY_EAGER);
    if (s != CUBLAS_STATUS_SUCCESS) {
      cb.destroy(h);
      if (s == CUBLAS_STATUS_NOT_SUPPORTED || s == CUBLAS_STATUS_INVALID_VALUE || s == CUBLAS_STATUS_ARCH_MISMATCH)
        throw NotSupportedError(name_ + ": configuring the cuBLAS handle for fp64 emulation answered " + cublas::status_text(s));
      FPCERT_CUBLAS_CHECK(s);
    }
    handle_ = h;
  }

  std::string name_;
  bool emulated_;
  KernelTraits traits_;
  cublasHandle_t handle_ = nullptr;
};

std::unique_ptr<GemmKernel> make_native() { return std::make_unique<CublasF64>("cublas_gemm_f64", false); }
std::unique_ptr<GemmKernel> make_emulated() { return std::make_unique<CublasF64>("cublas_gemm_f64_emulated_fixedpoint", true); }

}  // namespace

void register_f64_cuda_kernels() {
  register_kernel("cublas_gemm_f64", Backend::Cublas, false, &make_native);
  register_kernel("cublas_gemm_f64_emulated_fixedpoint", Backend::Cublas, false, &make_emulated);
}

}  // namespace fpcert
