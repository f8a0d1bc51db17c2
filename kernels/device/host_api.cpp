// kernels/device/host_api.cpp — DeviceApi for host kernels; and the CUDA factory when CUDA is absent.
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "base/codes.hpp"
#include "base/error.hpp"
#include "kernels/device/device_api.hpp"
#include "kernels/kernel.hpp"

namespace fpcert {
namespace {

class HostApi final : public DeviceApi {
 public:
  bool is_device() const override { return false; }
  void* alloc(std::size_t bytes) override {
    void* p = std::malloc(bytes ? bytes : 1);
    if (!p) throw DeviceError("host allocation of " + std::to_string(bytes) + " bytes failed");
    return p;
  }
  void free(void* p) override { std::free(p); }
  void to_device(void* dst, const void* src, std::size_t bytes) override { std::memcpy(dst, src, bytes); }
  void to_host(void* dst, const void* src, std::size_t bytes) override { std::memcpy(dst, src, bytes); }
  void scatter(void* dst, int bytes, const std::int64_t* idx, const std::uint64_t* codes, std::size_t count) override {
    for (std::size_t i = 0; i < count; ++i) store_code(dst, idx[i], bytes, codes[i]);
  }
  void copy(void* dst, const void* src, std::size_t bytes) override { std::memcpy(dst, src, bytes); }
  bool equal(const void* a, const void* b, std::size_t bytes) override { return std::memcmp(a, b, bytes) == 0; }
  void* stream() override { return nullptr; }
  void synchronize(double) override {}
  void timer_start() override { t0_ = std::chrono::steady_clock::now(); }
  double timer_stop_ms() override {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0_).count();
  }
  DeviceInfo info() const override {
    DeviceInfo d;
    d.name = "host CPU";
    return d;
  }

 private:
  std::chrono::steady_clock::time_point t0_;
};

}  // namespace

void DeviceApi::scatter(void* dst, int bytes, const std::int64_t* idx, const std::uint64_t* codes, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    std::uint64_t c = codes[i];
    std::uint8_t le[8];
    std::memcpy(le, &c, sizeof c);  // the low `bytes` bytes of the code, as store_code writes them (little-endian host)
    to_device(static_cast<std::uint8_t*>(dst) + idx[i] * bytes, le, static_cast<std::size_t>(bytes));
  }
}

void DeviceApi::copy(void* dst, const void* src, std::size_t bytes) {
  std::vector<std::uint8_t> h(bytes);
  to_host(h.data(), src, bytes);
  to_device(dst, h.data(), bytes);
}

bool DeviceApi::equal(const void* a, const void* b, std::size_t bytes) {
  std::vector<std::uint8_t> ha(bytes), hb(bytes);
  to_host(ha.data(), a, bytes);
  to_host(hb.data(), b, bytes);
  return ha == hb;
}

std::unique_ptr<DeviceApi> make_host_api() { return std::make_unique<HostApi>(); }

#if !defined(FPCERT_HAVE_CUDA)
std::unique_ptr<DeviceApi> make_cuda_api(std::string* why) {
  if (why) *why = "this fpcert was built without CUDA (no nvcc at configure time, or FPCERT_CUDA=OFF)";
  return nullptr;
}
bool built_with_cuda() { return false; }
#endif

}  // namespace fpcert
