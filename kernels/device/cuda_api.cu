// kernels/device/cuda_api.cu — DeviceApi on CUDA: allocations, copies, a stream, event timing, and a
// synchronize that turns sticky errors and hangs into DeviceError.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include "kernels/device/cuda_check.cuh"
#include "kernels/gemm/cublas/cublas_loader.cuh"
#include "kernels/device/device_api.hpp"
#include "kernels/kernel.hpp"

namespace fpcert {
namespace {

/// Entry i: store the low `bytes` bytes of codes[i] at element idx[i] of dst.
__global__ void scatter_codes(unsigned char* dst, int bytes, const long long* idx, const unsigned long long* codes, long long n) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n; i += static_cast<long long>(gridDim.x) * blockDim.x) {
    unsigned char* p = dst + idx[i] * bytes;
    switch (bytes) {
      case 1: *p = static_cast<unsigned char>(codes[i]); break;
      case 2: *reinterpret_cast<unsigned short*>(p) = static_cast<unsigned short>(codes[i]); break;
      case 4: *reinterpret_cast<unsigned int*>(p) = static_cast<unsigned int>(codes[i]); break;
      default: *reinterpret_cast<unsigned long long*>(p) = codes[i]; break;
    }
  }
}

/// *differ := 1 where a and b differ in one of their n bytes (16-byte words where both are aligned to 16, else bytes).
__global__ void differ_bytes(const unsigned char* a, const unsigned char* b, unsigned long long n, bool wide, unsigned int* differ) {
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  const unsigned long long t = blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x;
  unsigned long long tail = 0;
  if (wide) {
    const uint4* wa = reinterpret_cast<const uint4*>(a);
    const uint4* wb = reinterpret_cast<const uint4*>(b);
    for (unsigned long long i = t; i < n / 16; i += stride) {
      const uint4 x = wa[i], y = wb[i];
      if ((x.x ^ y.x) | (x.y ^ y.y) | (x.z ^ y.z) | (x.w ^ y.w)) *differ = 1u;
    }
    tail = n / 16 * 16;
  }
  for (unsigned long long i = tail + t; i < n; i += stride)
    if (a[i] != b[i]) *differ = 1u;
}

std::string version_text(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

class CudaApi final : public DeviceApi {
 public:
  CudaApi() {
    FPCERT_CUDA_CHECK(cudaSetDevice(0));
    FPCERT_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    FPCERT_CUDA_CHECK(cudaEventCreate(&start_));
    FPCERT_CUDA_CHECK(cudaEventCreate(&stop_));
  }
  ~CudaApi() override {
    cudaFree(stage_idx_);
    cudaFree(stage_codes_);
    cudaFree(differ_);
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
    cudaStreamDestroy(stream_);
  }
  bool is_device() const override { return true; }
  void* alloc(std::size_t bytes) override {
    void* p = nullptr;
    if (const cudaError_t e = cudaMalloc(&p, bytes ? bytes : 1); e != cudaSuccess) {
      (void)cudaGetLastError();  // an allocation that failed is no error of a later launch: the caller may go on without it
      cuda::fail(e, "cudaMalloc", __FILE__, __LINE__);
    }
    return p;
  }
  void free(void* p) override { cudaFree(p); }  // errors here are reported by the next checked call
  void to_device(void* dst, const void* src, std::size_t bytes) override {
    FPCERT_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream_));
    FPCERT_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  void to_host(void* dst, const void* src, std::size_t bytes) override {
    FPCERT_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream_));
    FPCERT_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  void scatter(void* dst, int bytes, const std::int64_t* idx, const std::uint64_t* codes, std::size_t count) override {
    if (count == 0) return;
    if (count > stage_cap_) {  // grow the staging buffers (device copies of idx and codes)
      cudaFree(stage_idx_);
      cudaFree(stage_codes_);
      stage_idx_ = nullptr;
      stage_codes_ = nullptr;
      stage_cap_ = 0;
      FPCERT_CUDA_CHECK(cudaMalloc(&stage_idx_, count * sizeof(long long)));
      FPCERT_CUDA_CHECK(cudaMalloc(&stage_codes_, count * sizeof(unsigned long long)));
      stage_cap_ = count;
    }
    FPCERT_CUDA_CHECK(cudaMemcpyAsync(stage_idx_, idx, count * sizeof(long long), cudaMemcpyHostToDevice, stream_));
    FPCERT_CUDA_CHECK(cudaMemcpyAsync(stage_codes_, codes, count * sizeof(unsigned long long), cudaMemcpyHostToDevice, stream_));
    const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>((count + 255) / 256, 4096));
    scatter_codes<<<blocks, 256, 0, stream_>>>(static_cast<unsigned char*>(dst), bytes, stage_idx_, stage_codes_, static_cast<long long>(count));
    FPCERT_CUDA_LAUNCH_CHECK("scatter_codes");
    FPCERT_CUDA_CHECK(cudaStreamSynchronize(stream_));  // the host arrays may be reused at once
  }
  void copy(void* dst, const void* src, std::size_t bytes) override {
    FPCERT_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream_));
    FPCERT_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  bool equal(const void* a, const void* b, std::size_t bytes) override {
    if (bytes == 0) return true;
    if (!differ_) FPCERT_CUDA_CHECK(cudaMalloc(&differ_, sizeof(unsigned int)));
    FPCERT_CUDA_CHECK(cudaMemsetAsync(differ_, 0, sizeof(unsigned int), stream_));
    const bool wide = (reinterpret_cast<std::uintptr_t>(a) | reinterpret_cast<std::uintptr_t>(b)) % 16 == 0;
    const std::size_t items = wide ? bytes / 16 + 16 : bytes;
    const unsigned blocks = static_cast<unsigned>(std::clamp<std::size_t>((items + 255) / 256, 1, 2048));
    differ_bytes<<<blocks, 256, 0, stream_>>>(static_cast<const unsigned char*>(a), static_cast<const unsigned char*>(b), bytes, wide, differ_);
    FPCERT_CUDA_LAUNCH_CHECK("differ_bytes");
    unsigned int differ = 0;
    FPCERT_CUDA_CHECK(cudaMemcpyAsync(&differ, differ_, sizeof differ, cudaMemcpyDeviceToHost, stream_));
    FPCERT_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return differ == 0;
  }
  void* stream() override { return stream_; }
  void synchronize(double timeout_ms) override {
    // Poll rather than block, so a kernel that never finishes is reported instead of waited on.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double, std::milli>(timeout_ms);
    for (;;) {
      const cudaError_t e = cudaStreamQuery(stream_);
      if (e == cudaSuccess) break;
      if (e != cudaErrorNotReady) cuda::fail(e, "kernel execution (cudaStreamQuery)", __FILE__, __LINE__);
      if (std::chrono::steady_clock::now() > deadline)
        throw DeviceError("kernel hung: not finished after " + std::to_string(static_cast<long>(timeout_ms)) +
                          " ms (the device stays busy; run with --isolate to recover)",
                          FailureKind::Hung);
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    FPCERT_CUDA_CHECK(cudaGetLastError());
  }
  void timer_start() override { FPCERT_CUDA_CHECK(cudaEventRecord(start_, stream_)); }
  double timer_stop_ms() override {
    FPCERT_CUDA_CHECK(cudaEventRecord(stop_, stream_));
    FPCERT_CUDA_CHECK(cudaEventSynchronize(stop_));
    float ms = 0;
    FPCERT_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return ms;
  }
  DeviceInfo info() const override {
    DeviceInfo d;
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) return d;
    d.name = p.name;
    d.cc_major = p.major;
    d.cc_minor = p.minor;
    d.sm_count = p.multiProcessorCount;
    int clk = 0, mclk = 0;
    cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, 0);
    cudaDeviceGetAttribute(&mclk, cudaDevAttrMemoryClockRate, 0);
    d.clock_mhz = clk / 1000;
    d.mem_clock_mhz = mclk / 1000;
    d.memory_bytes = p.totalGlobalMem;
    int drv = 0, rt = 0;
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    d.driver = "CUDA driver API " + version_text(drv);
    d.runtime = version_text(rt);
    // cuBLAS is loaded here only for its version (kernels/gemm/cublas/cublas_loader.cuh).
    int cb = 0;
    std::string why;
    if (const cublas::Api* api = cublas::try_api(&why)) {
      cublasHandle_t h;
      if (api->create(&h) == CUBLAS_STATUS_SUCCESS) {
        api->get_version(h, &cb);
        api->destroy(h);
      }
      d.cublas = std::to_string(cb / 10000) + "." + std::to_string((cb / 100) % 100) + "." + std::to_string(cb % 100);
    } else {
      d.cublas = "not loaded: " + why;
    }
    d.arch_flags = FPCERT_CUDA_ARCHS_TEXT;
    return d;
  }

 private:
  cudaStream_t stream_{};
  cudaEvent_t start_{}, stop_{};
  long long* stage_idx_ = nullptr;
  unsigned long long* stage_codes_ = nullptr;
  std::size_t stage_cap_ = 0;
  unsigned int* differ_ = nullptr;  // equal()'s flag
};

}  // namespace

std::unique_ptr<DeviceApi> make_cuda_api(std::string* why) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    if (why) *why = e != cudaSuccess ? std::string("cudaGetDeviceCount: ") + cudaGetErrorString(e) : "no CUDA device";
    cudaGetLastError();  // clear
    return nullptr;
  }
  try {
    return std::make_unique<CudaApi>();
  } catch (const DeviceError& err) {
    if (why) *why = err.what();
    return nullptr;
  }
}

bool built_with_cuda() { return true; }

}  // namespace fpcert
