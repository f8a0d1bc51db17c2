// kernels/device/exact_gemm_cuda.cu — the exact GEMM reference's slice GEMMs through cuBLAS DGEMM (exact_gemm_cuda.hpp;
// docs/oracle.md, "On the GPU"). Per panel of rows: the panel's A slices and all B slices go to device buffers kept
// (and grown) across calls, one cublasGemmStridedBatchedEx computes the G + 1 products (CUBLAS_COMPUTE_64F, the
// handle's math mode pinned to CUBLAS_DEFAULT_MATH: no emulation, no reduced precision), the results come back into
// pinned host memory the oracle combines from. Every CUDA and cuBLAS call is checked; the device is synchronised
// before the host reads. Calls from several threads are serialised (one lock around a whole multiply). For binary32
// inputs the whole reference is made on the device instead (whole_reference: exact_gemm_fused.cu).
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "kernels/device/card_chains.cuh"
#include "kernels/device/cuda_check.cuh"
#include "kernels/device/exact_gemm_cuda.hpp"
#include "kernels/device/exact_gemm_fused.cuh"
#include "kernels/device/residue_gemms.cuh"
#include "kernels/gemm/cublas/cublas_loader.cuh"

namespace fpcert {
namespace {

/// Device memory (Pinned = false) or pinned host memory (true) that only grows.
template <bool Pinned>
struct GrowBuf {
  double* p = nullptr;
  std::size_t n = 0;
  double* get(std::size_t want) {
    if (want > n) {
      if (p) FPCERT_CUDA_CHECK(Pinned ? cudaFreeHost(p) : cudaFree(p));
      p = nullptr;
      n = 0;
      const std::size_t bytes = std::max<std::size_t>(want, 1) * sizeof(double);
      FPCERT_CUDA_CHECK(Pinned ? cudaMallocHost(reinterpret_cast<void**>(&p), bytes) : cudaMalloc(reinterpret_cast<void**>(&p), bytes));
      n = want;
    }
    return p;
  }
  ~GrowBuf() { (void)(Pinned ? cudaFreeHost(p) : cudaFree(p)); }  // at exit: an error here has no one to report to
};
using DeviceBuf = GrowBuf<false>;
using PinnedBuf = GrowBuf<true>;

class CublasDgemmEngine final : public CudaExactGemmEngine {
 public:
  CublasDgemmEngine() {
    FPCERT_CUDA_CHECK(cudaSetDevice(0));
    FPCERT_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    const cublas::Api& cb = cublas::api();
    FPCERT_CUBLAS_CHECK(cb.create(&handle_));
    FPCERT_CUBLAS_CHECK(cb.set_stream(handle_, stream_));
    FPCERT_CUBLAS_CHECK(cb.set_math_mode(handle_, CUBLAS_DEFAULT_MATH));
    // Results of one panel: at most 2 GiB, and at most a quarter of the device memory free now (the operands of a
    // K block take at most 512 MiB: oracle/gemm_fast.cpp, kblock_for).
    std::size_t free_b = 0, total_b = 0;
    FPCERT_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    panel_bytes_ = std::min<std::size_t>(std::size_t{1} << 31, free_b / 4);
  }
  ~CublasDgemmEngine() override {
    if (handle_) cublas::api().destroy(handle_);
    if (stream_) cudaStreamDestroy(stream_);
  }
  CublasDgemmEngine(const CublasDgemmEngine&) = delete;
  CublasDgemmEngine& operator=(const CublasDgemmEngine&) = delete;

  const char* name() const override { return "gpu-cublas-dgemm"; }
  bool per_tile() const override { return false; }
  std::size_t panel_bytes() const override { return panel_bytes_; }

  double* panel_memory(std::size_t doubles) override {
    std::lock_guard<std::mutex> lock(mu_);
    return pinned_[std::this_thread::get_id()].get(doubles);
  }

  void begin_block(const SliceBlock&) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++times_.blocks;
  }

  void multiply(const SliceBlock& ops, std::int64_t i0, std::int64_t tm, std::int64_t j0, std::int64_t tn,
                double* out) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (tm <= 0 || tn <= 0) return;
    const std::int64_t k = ops.k, count = ops.count;
    if (tm > INT_MAX || tn > INT_MAX || k > INT_MAX || count > INT_MAX)
      throw DeviceError("gpu-cublas-dgemm: a panel of " + std::to_string(tm) + " x " + std::to_string(tn) + " x " +
                        std::to_string(k) + " is beyond cuBLAS's 32-bit dimensions");
    const cublas::Api& cb = cublas::api();
    // Operands: the panel's rows of every A_g and the tile's columns of every B_g, each g contiguous.
    auto t0 = std::chrono::steady_clock::now();
    const auto a_n = static_cast<std::size_t>(tm * k), b_n = static_cast<std::size_t>(tn * k);
    double* da = dev_a_.get(a_n * static_cast<std::size_t>(count));
    double* db = dev_b_.get(b_n * static_cast<std::size_t>(count));
    double* dc = dev_c_.get(static_cast<std::size_t>(tm * tn * count));
    for (std::int64_t g = 0; g < count; ++g) {
      FPCERT_CUDA_CHECK(cudaMemcpyAsync(da + g * tm * k, ops.a[g] + i0 * k, a_n * sizeof(double), cudaMemcpyHostToDevice, stream_));
      FPCERT_CUDA_CHECK(cudaMemcpyAsync(db + g * tn * k, ops.b[g] + j0 * k, b_n * sizeof(double), cudaMemcpyHostToDevice, stream_));
    }
    FPCERT_CUDA_CHECK(cudaStreamSynchronize(stream_));
    times_.upload_s += seconds_since(t0);

    // Row-major C_g (tm x tn) is column-major C_g^T = B_g^T A_g^T: B_g's lines are columns of k (ld k), transposed;
    // A_g's rows are columns of k (ld k). Every product and partial sum of g < count - 1 is an integer below 2^53.
    t0 = std::chrono::steady_clock::now();
    const double one = 1.0, zero = 0.0;
    FPCERT_CUBLAS_CHECK(cb.gemm_strided_batched_ex(
        handle_, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(tn), static_cast<int>(tm), static_cast<int>(k), &one, db,
        CUDA_R_64F, static_cast<int>(k), static_cast<long long>(tn * k), da, CUDA_R_64F, static_cast<int>(k),
        static_cast<long long>(tm * k), &zero, dc, CUDA_R_64F, static_cast<int>(tn), static_cast<long long>(tm * tn),
        static_cast<int>(count), CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT));
    FPCERT_CUDA_CHECK(cudaGetLastError());
    FPCERT_CUDA_CHECK(cudaStreamSynchronize(stream_));
    times_.gemm_s += seconds_since(t0);

    t0 = std::chrono::steady_clock::now();
    FPCERT_CUDA_CHECK(cudaMemcpyAsync(out, dc, static_cast<std::size_t>(tm * tn * count) * sizeof(double),
                                      cudaMemcpyDeviceToHost, stream_));
    FPCERT_CUDA_CHECK(cudaStreamSynchronize(stream_));
    FPCERT_CUDA_CHECK(cudaDeviceSynchronize());  // nothing of this engine is in flight when the host reads `out`
    times_.download_s += seconds_since(t0);
    ++times_.panels;
  }

  bool whole_reference(const MatrixView& a, const MatrixView& b, unsigned threads, GemmRef& r) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (!whole_) return false;
    if (!fused_) fused_ = make_fused_buffers();
    return fused_gemm_reference(*fused_, stream_, handle_, a, b, threads, band_elements_, r, times_);
  }
  bool card_chains(const CardChains& job, std::uint32_t* d, std::uint8_t* general) override {
    std::lock_guard<std::mutex> lock(mu_);
    return cuda_card_chains(job, d, general, stream_);
  }
  bool residue_gemms(const ResidueGemms& job, std::uint8_t* out) override {
    std::lock_guard<std::mutex> lock(mu_);
    return cuda_residue_gemms(job, out, stream_);
  }
  void set_whole(bool on) override {
    std::lock_guard<std::mutex> lock(mu_);
    whole_ = on;
  }

  void set_band_elements(std::int64_t n) override {
    std::lock_guard<std::mutex> lock(mu_);
    band_elements_ = std::max<std::int64_t>(n, 1);
  }

  ExactGemmTimes times() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return times_;
  }
  void reset_times() override {
    std::lock_guard<std::mutex> lock(mu_);
    times_ = {};
  }

 private:
  mutable std::mutex mu_;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t handle_ = nullptr;
  std::size_t panel_bytes_ = 0;
  DeviceBuf dev_a_, dev_b_, dev_c_;
  std::map<std::thread::id, PinnedBuf> pinned_;
  ExactGemmTimes times_;
  bool whole_ = true;
  std::int64_t band_elements_ = kWholeBandElements;
  FusedBuffersPtr fused_;
};

}  // namespace

std::shared_ptr<CudaExactGemmEngine> make_cuda_exact_gemm_engine(std::string* why) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    cudaGetLastError();
    if (why) *why = e != cudaSuccess ? std::string("cudaGetDeviceCount: ") + cudaGetErrorString(e) : "no CUDA device";
    return nullptr;
  }
  if (!cublas::try_api(why)) return nullptr;
  try {
    return std::make_shared<CublasDgemmEngine>();
  } catch (const DeviceError& err) {
    if (why) *why = err.what();
    return nullptr;
  }
}

}  // namespace fpcert
