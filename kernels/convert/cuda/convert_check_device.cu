// kernels/convert/cuda/convert_check_device.cu — the host side of the device check (kernels/convert/
// convert_check_device.hpp): two slots, each with its stream, events, count and list buffers, and a
// buffer for the results of NaN inputs; the check kernels themselves are the table's ops compiled
// with convert_check_kernel.cuh in convert_*.cu. Every CUDA call is checked; a launch at once,
// execution errors and hangs in wait().
#include <cuda_runtime.h>

#include <algorithm>
#include <bit>
#include <map>
#include <stdexcept>
#include <string>

#include "kernels/convert/convert_check_device.hpp"
#include "kernels/convert/cuda/convert_check_launch.hpp"
#include "kernels/device/cuda_check.cuh"
#include "base/error.hpp"

namespace fpcert {
namespace {

using cuda_convert::CheckCounts;
using cuda_convert::CheckLaunchArgs;
using cuda_convert::Launcher;
using cuda_convert::SideResults;

/// NaN results kept per chunk: every NaN of a 32-bit source lies in two runs of 2^23 - 1 codes, 2^31
/// apart, so a chunk of at most 2^31 codes meets at most 2^23 of them; 16-bit sources have fewer.
constexpr std::uint64_t kNanCapacity = std::uint64_t{1} << 24;

class CudaDeviceChecker final : public DeviceChecker {
 public:
  CudaDeviceChecker(std::uint64_t max_chunk, std::size_t max_listed) : max_chunk_(max_chunk), max_listed_(max_listed) {
    if (max_chunk_ == 0 || max_chunk_ > (std::uint64_t{1} << 31) || max_listed_ == 0 || max_listed_ > (std::size_t{1} << 24))
      throw std::invalid_argument("device checker: max_chunk in [1, 2^31], max_listed in [1, 2^24]");
    FPCERT_CUDA_CHECK(cudaSetDevice(0));
    cudaDeviceProp prop{};
    FPCERT_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    int mem_khz = 0;
    FPCERT_CUDA_CHECK(cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, 0));
    bandwidth_ = 2.0 * mem_khz * 1e3 * (prop.memoryBusWidth / 8.0);
    blocks_ = static_cast<std::uint32_t>(std::max(1, prop.multiProcessorCount) * 16);
    for (int s = 0; s < 2; ++s) {
      Slot& sl = slot_[s];
      FPCERT_CUDA_CHECK(cudaStreamCreateWithFlags(&sl.stream, cudaStreamNonBlocking));
      FPCERT_CUDA_CHECK(cudaEventCreate(&sl.start));
      FPCERT_CUDA_CHECK(cudaEventCreate(&sl.kernel_end));
      FPCERT_CUDA_CHECK(cudaEventCreate(&sl.copy_end));
      FPCERT_CUDA_CHECK(cudaMalloc(&sl.dev_counts, sizeof(CheckCounts)));
      FPCERT_CUDA_CHECK(cudaMalloc(&sl.dev_side, sizeof(SideResults)));
      FPCERT_CUDA_CHECK(cudaMalloc(&sl.dev_diff, 2 * max_listed_ * sizeof(std::uint32_t)));
      FPCERT_CUDA_CHECK(cudaMalloc(&sl.dev_nan, kNanCapacity * 4));
      FPCERT_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&sl.counts), sizeof(CheckCounts), cudaHostAllocDefault));
      FPCERT_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&sl.side), sizeof(SideResults), cudaHostAllocDefault));
      FPCERT_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&sl.diff), 2 * max_listed_ * sizeof(std::uint32_t), cudaHostAllocDefault));
      FPCERT_CUDA_CHECK(cudaHostAlloc(&sl.nan, kNanCapacity * 4, cudaHostAllocDefault));
    }
  }

  ~CudaDeviceChecker() override {
    for (Slot& sl : slot_) {
      if (sl.stream) cudaStreamSynchronize(sl.stream);
      cudaFreeHost(sl.counts);
      cudaFreeHost(sl.side);
      cudaFreeHost(sl.diff);
      cudaFreeHost(sl.nan);
      cudaFree(sl.dev_counts);
      cudaFree(sl.dev_side);
      cudaFree(sl.dev_diff);
      cudaFree(sl.dev_nan);
      cudaEventDestroy(sl.start);
      cudaEventDestroy(sl.kernel_end);
      cudaEventDestroy(sl.copy_end);
      if (sl.stream) cudaStreamDestroy(sl.stream);
    }
    for (auto& [key, p] : tables_) cudaFree(p);
  }

  bool supports(const DeviceConversion& e) const override {
    if (e.kind != ConversionKind::Convert || !convert_model_covers(*e.src, *e.dst)) return false;
    const Launcher* l = cuda_convert::find_launcher(e.name);
    return l && l->check && l->out_bytes == result_bytes(e);
  }
  std::uint64_t max_chunk() const override { return max_chunk_; }
  std::size_t max_listed() const override { return max_listed_; }
  double memory_bandwidth() const override { return bandwidth_; }

  void enqueue(const DeviceConversion& e, std::uint64_t first, std::uint64_t n, int slot) override {
    if (!supports(e)) throw std::logic_error("device check: no device check for '" + std::string(e.name) + "'");
    if (n == 0 || n > max_chunk_ || slot < 0 || slot > 1 || first + n > e.src->code_count())
      throw std::logic_error("device check: bad chunk");
    const Launcher* l = cuda_convert::find_launcher(e.name);
    Slot& sl = slot_[slot];
    CheckLaunchArgs a;
    a.first = first;
    a.n = static_cast<std::uint32_t>(n);
    a.blocks = static_cast<std::uint32_t>(std::min<std::uint64_t>(blocks_, (n + 255) / 256));
    a.model = make_convert_model(*e.src, *e.dst, e.rounder);
    if (a.model.src.kind == kSourceTable) a.model.src.table = device_table(*e.src);
    a.shift = static_cast<std::uint32_t>(std::countr_zero(to_container(*e.dst, 1)));
    a.code_mask = static_cast<std::uint32_t>(e.dst->code_mask());
    a.valid_mask = static_cast<std::uint32_t>(to_container(*e.dst, e.dst->code_mask()));
    sl.nan_parts.clear();
    std::uint64_t nan_total = 0;
    int k = 0;
    for (const auto& [lo, hi] : nan_code_ranges(*e.src)) {
      const std::uint64_t a0 = std::max(lo, first), b0 = std::min(hi, first + n);
      if (a0 >= b0) continue;
      if (k == 2 || nan_total + (b0 - a0) > kNanCapacity) throw std::logic_error("device check: NaN inputs beyond the buffer");
      a.nan_lo[k] = a0;
      a.nan_hi[k] = b0;
      sl.nan_parts.push_back({a0, b0 - a0, static_cast<const char*>(sl.nan) + nan_total * l->out_bytes});
      nan_total += b0 - a0;
      ++k;
    }
    a.nan_out = sl.dev_nan;
    a.counts = static_cast<CheckCounts*>(sl.dev_counts);
    a.diff_src = static_cast<std::uint32_t*>(sl.dev_diff);
    a.diff_got = a.diff_src + max_listed_;
    a.max_listed = static_cast<std::uint32_t>(max_listed_);
    a.side = sl.dev_side;
    a.stream = sl.stream;
    FPCERT_CUDA_CHECK(cudaMemsetAsync(sl.dev_counts, 0, sizeof(CheckCounts), sl.stream));
    FPCERT_CUDA_CHECK(cudaMemsetAsync(sl.dev_side, 0, sizeof(SideResults), sl.stream));
    FPCERT_CUDA_CHECK(cudaEventRecord(sl.start, sl.stream));
    l->check(a);
    FPCERT_CUDA_LAUNCH_CHECK(l->name);
    FPCERT_CUDA_CHECK(cudaEventRecord(sl.kernel_end, sl.stream));
    FPCERT_CUDA_CHECK(cudaMemcpyAsync(sl.counts, sl.dev_counts, sizeof(CheckCounts), cudaMemcpyDeviceToHost, sl.stream));
    FPCERT_CUDA_CHECK(cudaMemcpyAsync(sl.side, sl.dev_side, sizeof(SideResults), cudaMemcpyDeviceToHost, sl.stream));
    FPCERT_CUDA_CHECK(cudaMemcpyAsync(sl.diff, sl.dev_diff, 2 * max_listed_ * sizeof(std::uint32_t), cudaMemcpyDeviceToHost, sl.stream));
    if (nan_total)
      FPCERT_CUDA_CHECK(cudaMemcpyAsync(sl.nan, sl.dev_nan, nan_total * l->out_bytes, cudaMemcpyDeviceToHost, sl.stream));
    FPCERT_CUDA_CHECK(cudaEventRecord(sl.copy_end, sl.stream));
    sl.first = first;
    sl.count = n;
    sl.queued = true;
  }

  DeviceCheckChunk wait(int slot) override {
    if (slot < 0 || slot > 1 || !slot_[slot].queued) throw std::logic_error("device check: nothing queued in this slot");
    Slot& sl = slot_[slot];
    sl.queued = false;
    cuda_convert::wait_event(sl.copy_end, "conversion check kernel or copy");
    FPCERT_CUDA_CHECK(cudaGetLastError());
    DeviceCheckChunk c;
    c.first = sl.first;
    c.count = sl.count;
    std::copy(std::begin(sl.counts->keys), std::end(sl.counts->keys), c.keys.begin());
    c.differences = sl.counts->differences;
    c.overflow = c.differences > max_listed_;
    const std::size_t listed = static_cast<std::size_t>(std::min<std::uint64_t>(c.differences, max_listed_));
    c.listed.resize(listed);
    for (std::size_t i = 0; i < listed; ++i) c.listed[i] = {sl.diff[i], sl.diff[max_listed_ + i]};
    std::sort(c.listed.begin(), c.listed.end(), [](const ModelDifference& x, const ModelDifference& y) { return x.src < y.src; });
    c.nan = sl.nan_parts;
    float gpu = 0, copy = 0;
    FPCERT_CUDA_CHECK(cudaEventElapsedTime(&gpu, sl.start, sl.kernel_end));
    FPCERT_CUDA_CHECK(cudaEventElapsedTime(&copy, sl.kernel_end, sl.copy_end));
    c.side.gpu_ms = gpu;
    c.side.transfer_ms = copy;
    cuda_convert::read_side_results(*sl.side, c.side);
    return c;
  }

 private:
  struct Slot {
    cudaStream_t stream = nullptr;
    cudaEvent_t start = nullptr, kernel_end = nullptr, copy_end = nullptr;
    void *dev_counts = nullptr, *dev_side = nullptr, *dev_diff = nullptr, *dev_nan = nullptr;
    CheckCounts* counts = nullptr;
    SideResults* side = nullptr;
    std::uint32_t* diff = nullptr;
    void* nan = nullptr;
    std::vector<DeviceCheckChunk::NanPart> nan_parts;
    std::uint64_t first = 0, count = 0;
    bool queued = false;
  };

  /// The decode table of a 16-bit source in device memory, uploaded once.
  const std::uint32_t* device_table(const Format& f) {
    const std::string key = std::string(f.tag) + "/" + std::to_string(f.bias);
    auto it = tables_.find(key);
    if (it != tables_.end()) return it->second;
    void* p = nullptr;
    const std::size_t bytes = static_cast<std::size_t>(f.code_count()) * 4;
    FPCERT_CUDA_CHECK(cudaMalloc(&p, bytes));
    FPCERT_CUDA_CHECK(cudaMemcpy(p, f32_decode_table(f), bytes, cudaMemcpyHostToDevice));
    tables_[key] = static_cast<std::uint32_t*>(p);
    return static_cast<std::uint32_t*>(p);
  }

  std::uint64_t max_chunk_;
  std::size_t max_listed_;
  double bandwidth_ = 0;
  std::uint32_t blocks_ = 0;
  Slot slot_[2];
  std::map<std::string, std::uint32_t*> tables_;
};

}  // namespace

std::unique_ptr<DeviceChecker> make_cuda_device_checker(std::string* why, std::uint64_t max_chunk, std::size_t max_listed) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    if (why) *why = e != cudaSuccess ? std::string("cudaGetDeviceCount: ") + cudaGetErrorString(e) : "no CUDA device";
    cudaGetLastError();
    return nullptr;
  }
  try {
    return std::make_unique<CudaDeviceChecker>(max_chunk, max_listed);
  } catch (const DeviceError& err) {
    if (why) *why = err.what();
    return nullptr;
  }
}

}  // namespace fpcert
