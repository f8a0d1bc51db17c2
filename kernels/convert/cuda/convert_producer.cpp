// kernels/convert/cuda/convert_producer.cpp — the GPU side of the exhaustive conversion sweep: two slots,
// each a device buffer, a pinned host buffer, a stream and its events. enqueue() queues the
// kernel and the copy back on the slot's stream and returns; wait() returns once the results are
// on the host, so the kernel and copy of chunk k + 1 overlap the CPU check of chunk k. Every CUDA
// call is checked; a launch is checked at once, execution errors and hangs surface in wait().
#include <cuda_runtime.h>

#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>

#include "kernels/convert/cuda/convert_check_launch.hpp"
#include "kernels/convert/cuda/convert_launch.hpp"
#include "kernels/convert/device_convert.hpp"
#include "kernels/device/cuda_check.cuh"
#include "kernels/kernel.hpp"

namespace fpcert {

const cuda_convert::Launcher* cuda_convert::find_launcher(std::string_view name) {
  for (auto list : {launchers_f16_bf16(), launchers_fp8(), launchers_fp6_fp4()})
    for (const Launcher& l : list)
      if (name == l.name) return &l;
  return nullptr;
}

namespace {
/// How long wait() lets one chunk take before calling the device hung: $FPCERT_DEVICE_TIMEOUT_MS,
/// else 120 s (a 2^26-code chunk of the slowest software path takes well under a second).
double timeout_ms() {
  if (const char* s = std::getenv("FPCERT_DEVICE_TIMEOUT_MS")) {
    const double v = std::strtod(s, nullptr);
    if (v > 0) return v;
  }
  return 120000.0;
}

}  // namespace

void cuda_convert::wait_event(void* event, const char* what) {
  // Poll rather than block, so that a kernel that never finishes is reported, not waited on.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double, std::milli>(timeout_ms());
  for (;;) {
    const cudaError_t q = cudaEventQuery(static_cast<cudaEvent_t>(event));
    if (q == cudaSuccess) return;
    if (q != cudaErrorNotReady) cuda::fail(q, (std::string(what) + " (cudaEventQuery)").c_str(), __FILE__, __LINE__);
    if (std::chrono::steady_clock::now() > deadline)
      throw DeviceError(std::string(what) + " hung: chunk not finished after " + std::to_string(static_cast<long>(timeout_ms())) + " ms",
                        FailureKind::Hung);
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

void cuda_convert::read_side_results(const SideResults& s, ProducedChunk& pc) {
  pc.lane_mismatches = s.lane_count;
  for (unsigned long long k = 0; k < s.lane_count && k < static_cast<unsigned long long>(kSideListed); ++k)
    pc.lanes.push_back({s.lane_src[k], s.lane_lo[k], s.lane_hi[k]});
  pc.stray = s.stray_count;
  for (unsigned long long k = 0; k < s.stray_count && k < static_cast<unsigned long long>(kSideListed); ++k)
    pc.strays.push_back({s.stray_src[k], s.stray_raw[k]});
}

namespace {

using cuda_convert::find_launcher;
using cuda_convert::Launcher;
using cuda_convert::SideResults;

class CudaConversionProducer final : public ConversionProducer {
 public:
  explicit CudaConversionProducer(std::uint64_t max_chunk) : max_chunk_(max_chunk) {
    if (max_chunk_ == 0 || max_chunk_ % 65536 || max_chunk_ > (std::uint64_t{1} << 30))
      throw std::invalid_argument("conversion producer: max_chunk must be a multiple of 65536, at most 2^30");
    FPCERT_CUDA_CHECK(cudaSetDevice(0));
    const std::size_t bytes = static_cast<std::size_t>(max_chunk_) * 4;  // the widest result: 4 bytes
    for (int s = 0; s < 2; ++s) {
      FPCERT_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_[s], cudaStreamNonBlocking));
      FPCERT_CUDA_CHECK(cudaEventCreate(&start_[s]));
      FPCERT_CUDA_CHECK(cudaEventCreate(&kernel_end_[s]));
      FPCERT_CUDA_CHECK(cudaEventCreate(&copy_end_[s]));
      FPCERT_CUDA_CHECK(cudaMalloc(&dev_out_[s], bytes));
      FPCERT_CUDA_CHECK(cudaMalloc(&dev_side_[s], sizeof(SideResults)));
      FPCERT_CUDA_CHECK(cudaHostAlloc(&host_out_[s], bytes, cudaHostAllocDefault));
      FPCERT_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&host_side_[s]), sizeof(SideResults), cudaHostAllocDefault));
    }
    if (!cuda_convert::probe_arch(&arch_.arch, &arch_.family_specific, stream_[0]))
      throw DeviceError("the architecture probe kernel did not run (no code in this binary for this device?)");
    if (auto api = make_cuda_api()) info_ = api->info();
    arch_.cc_major = info_.cc_major;
    arch_.cc_minor = info_.cc_minor;
  }

  ~CudaConversionProducer() override {
    for (int s = 0; s < 2; ++s) {
      if (stream_[s]) cudaStreamSynchronize(stream_[s]);
      cudaFreeHost(host_out_[s]);
      cudaFreeHost(host_side_[s]);
      cudaFree(dev_out_[s]);
      cudaFree(dev_side_[s]);
      cudaEventDestroy(start_[s]);
      cudaEventDestroy(kernel_end_[s]);
      cudaEventDestroy(copy_end_[s]);
      if (stream_[s]) cudaStreamDestroy(stream_[s]);
    }
  }

  std::uint64_t max_chunk() const override { return max_chunk_; }
  RunningArch running_arch() const override { return arch_; }
  DeviceInfo device_info() const override { return info_; }
  std::string device_name() const override { return info_.name; }

  void enqueue(const DeviceConversion& e, std::uint64_t first, std::uint64_t n, int slot) override {
    const Launcher* l = find_launcher(e.name);
    if (!l) throw std::logic_error("no device kernel for conversion '" + std::string(e.name) + "'");
    if (l->out_bytes != result_bytes(e))
      throw std::logic_error("device kernel for '" + std::string(e.name) + "' writes " + std::to_string(l->out_bytes) +
                             "-byte results, the table says " + std::to_string(result_bytes(e)));
    if (n == 0 || n > max_chunk_ || slot < 0 || slot > 1) throw std::logic_error("conversion producer: bad chunk");
    cudaStream_t st = stream_[slot];
    cuda_convert::LaunchArgs a;
    a.first = first;
    a.n = static_cast<std::uint32_t>(n);
    a.out = dev_out_[slot];
    a.side = dev_side_[slot];
    a.valid_mask = e.kind == ConversionKind::ScaledRoundTrip
                       ? 0xFFFFFFFFu
                       : static_cast<std::uint32_t>(to_container(*e.dst, e.dst->code_mask()));
    a.stream = st;
    FPCERT_CUDA_CHECK(cudaMemsetAsync(dev_side_[slot], 0, sizeof(SideResults), st));
    FPCERT_CUDA_CHECK(cudaEventRecord(start_[slot], st));
    l->fn(a);
    FPCERT_CUDA_LAUNCH_CHECK(l->name);
    FPCERT_CUDA_CHECK(cudaEventRecord(kernel_end_[slot], st));
    FPCERT_CUDA_CHECK(cudaMemcpyAsync(host_out_[slot], dev_out_[slot], static_cast<std::size_t>(n) * l->out_bytes,
                                      cudaMemcpyDeviceToHost, st));
    FPCERT_CUDA_CHECK(cudaMemcpyAsync(host_side_[slot], dev_side_[slot], sizeof(SideResults), cudaMemcpyDeviceToHost, st));
    FPCERT_CUDA_CHECK(cudaEventRecord(copy_end_[slot], st));
    queued_[slot] = true;
  }

  ProducedChunk wait(int slot) override {
    if (slot < 0 || slot > 1 || !queued_[slot]) throw std::logic_error("conversion producer: nothing queued in this slot");
    queued_[slot] = false;
    cuda_convert::wait_event(copy_end_[slot], "conversion kernel or copy");
    FPCERT_CUDA_CHECK(cudaGetLastError());
    ProducedChunk pc;
    pc.data = host_out_[slot];
    float gpu = 0, copy = 0;
    FPCERT_CUDA_CHECK(cudaEventElapsedTime(&gpu, start_[slot], kernel_end_[slot]));
    FPCERT_CUDA_CHECK(cudaEventElapsedTime(&copy, kernel_end_[slot], copy_end_[slot]));
    pc.gpu_ms = gpu;
    pc.transfer_ms = copy;
    cuda_convert::read_side_results(*host_side_[slot], pc);
    return pc;
  }

 private:
  std::uint64_t max_chunk_;
  cudaStream_t stream_[2] = {};
  cudaEvent_t start_[2] = {}, kernel_end_[2] = {}, copy_end_[2] = {};
  void* dev_out_[2] = {};
  void* dev_side_[2] = {};
  void* host_out_[2] = {};
  SideResults* host_side_[2] = {};
  bool queued_[2] = {};
  RunningArch arch_;
  DeviceInfo info_;
};

}  // namespace

std::unique_ptr<ConversionProducer> make_cuda_conversion_producer(std::string* why, std::uint64_t max_chunk) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    if (why) *why = e != cudaSuccess ? std::string("cudaGetDeviceCount: ") + cudaGetErrorString(e) : "no CUDA device";
    cudaGetLastError();
    return nullptr;
  }
  try {
    return std::make_unique<CudaConversionProducer>(max_chunk);
  } catch (const DeviceError& err) {
    if (why) *why = err.what();
    return nullptr;
  }
}

bool cuda_has_conversion_kernel(std::string_view name) { return find_launcher(name) != nullptr; }

}  // namespace fpcert
