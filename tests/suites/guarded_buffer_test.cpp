// tests/suites/guarded_buffer_test.cpp — the runner's output buffer keeps the checked run's image where it lives
// (suites/run/guarded_buffer.hpp, keep / unchanged_since_kept): a later run that leaves the same bytes is found so
// without a download, and a change anywhere (an element, a guard, the padding) is not. Host memory here, through the
// host DeviceApi and through DeviceApi's own defaults (copy and compare by way of host copies); the CUDA api's on-device
// compare: tests/suites/reveal_gpu_test.cpp.
#include <doctest/doctest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "kernels/device/device_api.hpp"
#include "suites/run/guarded_buffer.hpp"

using namespace fpcert;

namespace {

/// Host memory through DeviceApi's default copy and equal (no override): the path of an api without its own.
class PlainApi final : public DeviceApi {
 public:
  bool is_device() const override { return false; }
  void* alloc(std::size_t bytes) override { return std::malloc(bytes ? bytes : 1); }
  void free(void* p) override { std::free(p); }
  void to_device(void* dst, const void* src, std::size_t bytes) override { std::memcpy(dst, src, bytes); }
  void to_host(void* dst, const void* src, std::size_t bytes) override { std::memcpy(dst, src, bytes); }
  void* stream() override { return nullptr; }
  void synchronize(double) override {}
  void timer_start() override {}
  double timer_stop_ms() override { return 0; }
  DeviceInfo info() const override { return {}; }
};

void check_keep(DeviceApi& api) {
  const std::size_t guard = 64;
  GuardedBuffer b(api, 40 * 16 * 4, guard);
  b.prefill(40, 13, 16, 4, 0x7FC00001u);  // 40 rows of 13 fp32 elements, ld 16: padding in every row
  CHECK_FALSE(b.unchanged_since_kept());   // nothing kept yet
  auto* e = static_cast<std::uint8_t*>(b.elements());
  const std::uint32_t v = 0x3F800001u;
  api.to_device(e + (5 * 16 + 3) * 4, &v, 4);  // "the kernel" writes one element
  b.keep();
  CHECK(b.unchanged_since_kept());
  CHECK(b.unchanged_since_kept());  // comparing changes nothing
  auto poke = [&](std::uint8_t* at) {  // one bit of one byte changed: found; restored: equal again
    std::uint8_t old = 0, x = 0;
    api.to_host(&old, at, 1);
    x = static_cast<std::uint8_t>(old ^ 0x01);
    api.to_device(at, &x, 1);
    CHECK_FALSE(b.unchanged_since_kept());
    api.to_device(at, &old, 1);
    CHECK(b.unchanged_since_kept());
  };
  poke(e);                          // the first element's first byte
  poke(e + (39 * 16 + 12) * 4 + 3);  // the last element's last byte
  poke(e + (7 * 16 + 14) * 4);       // padding of row 7
  poke(e - 1);                       // the last guard byte before the elements
  poke(e - guard);                   // the first byte of the allocation
  poke(e + 40 * 16 * 4 + guard - 1);  // the last guard byte after them
  // A new layout: the kept copy no longer describes the image.
  b.prefill(20, 16, 16, 4, 0x7FC00001u);
  CHECK_FALSE(b.unchanged_since_kept());
  b.keep();
  CHECK(b.unchanged_since_kept());
}

}  // namespace

TEST_CASE("GuardedBuffer::keep: the checked run's image compared where it lives, every byte of it") {
  SUBCASE("the host api") {
    auto api = make_host_api();
    check_keep(*api);
  }
  SUBCASE("DeviceApi's defaults (host copies)") {
    PlainApi api;
    check_keep(api);
    std::vector<std::uint8_t> a(1000), c(1000);
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<std::uint8_t>(i * 7 + 3);
    api.copy(c.data(), a.data(), a.size());
    CHECK(c == a);
    CHECK(api.equal(a.data(), c.data(), a.size()));
    c[999] ^= 0x80;
    CHECK_FALSE(api.equal(a.data(), c.data(), a.size()));
    CHECK(api.equal(a.data(), c.data(), 999));
  }
}
