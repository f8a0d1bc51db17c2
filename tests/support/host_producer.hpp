// tests/support/host_producer.hpp — a ConversionProducer that plays the GPU on the host, for tests of
// the device sweep and of the device table's kernels without a device: results computed by
// `result(code)` (container layout), with lane differences and stray results injected as a kernel
// would report them.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/convert/device_convert.hpp"
#include "oracle/round.hpp"

namespace fpcert::test {

/// Plays the GPU: results computed on the host by `result(code)` (container layout), with lane
/// differences and stray results injected as a kernel would report them.
class HostProducer final : public ConversionProducer {
 public:
  std::function<std::uint32_t(std::uint64_t)> result;
  std::vector<LaneDifference> lanes;  // reported by the chunk holding their code
  std::vector<StrayBits> strays;
  std::uint64_t chunk = 1 << 16;
  RunningArch arch{900, 0, 9, 0};
  int enqueued = 0, waited = 0, max_in_flight = 0, in_flight = 0;

  std::uint64_t max_chunk() const override { return chunk; }
  void enqueue(const DeviceConversion& e, std::uint64_t first, std::uint64_t n, int slot) override {
    REQUIRE(!queued_[slot]);
    queued_[slot] = true;
    ++enqueued;
    max_in_flight = std::max(max_in_flight, ++in_flight);
    const int bytes = result_bytes(e);
    buf_[slot].assign(n * static_cast<std::size_t>(bytes), 0);
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::uint32_t v = result(first + i);
      std::memcpy(buf_[slot].data() + i * bytes, &v, static_cast<std::size_t>(bytes));  // little endian
    }
    first_[slot] = first;
    n_[slot] = n;
  }
  ProducedChunk wait(int slot) override {
    REQUIRE(queued_[slot]);
    queued_[slot] = false;
    ++waited;
    --in_flight;
    ProducedChunk pc;
    pc.data = buf_[slot].data();
    for (const auto& l : lanes)
      if (l.src >= first_[slot] && l.src < first_[slot] + n_[slot]) {
        ++pc.lane_mismatches;
        pc.lanes.push_back(l);
      }
    for (const auto& s : strays)
      if (s.src >= first_[slot] && s.src < first_[slot] + n_[slot]) {
        ++pc.stray;
        pc.strays.push_back(s);
      }
    pc.gpu_ms = 0.5;
    pc.transfer_ms = 0.25;
    return pc;
  }
  RunningArch running_arch() const override { return arch; }
  DeviceInfo device_info() const override { return {}; }
  std::string device_name() const override { return "host emulation"; }

 private:
  std::vector<std::uint8_t> buf_[2];
  std::uint64_t first_[2] = {}, n_[2] = {};
  bool queued_[2] = {};
};

/// fpcert's own result for an entry, in container layout, NaN inputs replaced by `nan` (when set).
inline std::function<std::uint32_t(std::uint64_t)> model_of(const DeviceConversion& e, std::optional<std::uint32_t> nan = {}) {
  return [&e, nan](std::uint64_t code) {
    if (nan && classify(*e.src, code) == FpClass::NaN) return *nan;
    return static_cast<std::uint32_t>(to_container(*e.dst, convert(*e.src, code, *e.dst, e.rounder).code));
  };
}

inline const DeviceConversion& entry(std::string_view name) {
  const DeviceConversion* e = find_device_conversion(name);
  REQUIRE_MESSAGE(e, "no table entry " << name);
  return *e;
}

}  // namespace fpcert::test
