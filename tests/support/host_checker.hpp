// tests/support/host_checker.hpp — a DeviceChecker that plays the CUDA device check on the host, for tests
// and benchmarks of the device check's host side (suites/ops/conversion/device_sweep.cpp) without a device: it takes
// its results from any ConversionProducer (a HostProducer with injected faults, in tests) and returns
// what kernels/convert/cuda/convert_check_kernel.cuh sends back for them: the model's outcome keys over
// every code, the codes (NaN inputs aside) whose result differs from the model with their exact count
// and a list bounded by max_listed (overflow past it), the raw results of NaN inputs by interval, and
// the producer's lane and stray-bit findings. No doctest here: bench/ includes it too.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/convert/convert_check_device.hpp"
#include "kernels/convert/device_convert.hpp"
#include "oracle/convert/convert_model.hpp"
#include "oracle/format.hpp"

namespace fpcert::test {

class HostChecker final : public DeviceChecker {
 public:
  /// Results come from `producer` (its slot 0, enqueued and waited inside enqueue(), in pieces of its
  /// max_chunk()), so the checker's work happens in enqueue(), outside a sweep's timing of the finish.
  explicit HostChecker(ConversionProducer& producer, std::uint64_t max_chunk = std::uint64_t{1} << 20,
                       std::size_t max_listed = std::size_t{1} << 16)
      : producer_(producer), max_chunk_(max_chunk), max_listed_(max_listed) {}

  int enqueued = 0;  ///< chunks enqueued (tests: the sweep went through the checker)
  /// The model the "device" compares with (null: make_convert_model of the entry); a test gives the
  /// checker and the sweep (SweepOptions::model) the same wrong one, as a stale build would have it.
  const ConvertModel* model = nullptr;

  bool supports(const DeviceConversion& e) const override {
    return e.kind == ConversionKind::Convert && convert_model_covers(*e.src, *e.dst);
  }
  std::uint64_t max_chunk() const override { return max_chunk_; }
  std::size_t max_listed() const override { return max_listed_; }
  double memory_bandwidth() const override { return 0; }

  void enqueue(const DeviceConversion& e, std::uint64_t first, std::uint64_t n, int slot) override {
    if (!supports(e)) throw std::logic_error("host checker: no device check for '" + std::string(e.name) + "'");
    if (n == 0 || n > max_chunk_ || slot < 0 || slot > 1 || slot_[slot].queued) throw std::logic_error("host checker: bad chunk");
    ++enqueued;
    Slot& sl = slot_[slot];
    sl.queued = true;
    DeviceCheckChunk& c = sl.chunk;
    c = DeviceCheckChunk{};
    c.first = first;
    c.count = n;
    const int bytes = result_bytes(e);
    const ConvertModel m_model = model ? *model : make_convert_model(*e.src, *e.dst, e.rounder);
    // The NaN parts, as the CUDA checker lays them out: one per NaN interval the chunk overlaps, their
    // raw results one after the other in one buffer.
    std::uint64_t nan_total = 0;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> parts;
    for (const auto& [lo, hi] : nan_code_ranges(*e.src)) {
      const std::uint64_t a0 = std::max(lo, first), b0 = std::min(hi, first + n);
      if (a0 >= b0) continue;
      parts.push_back({a0, b0});
      nan_total += b0 - a0;
    }
    sl.nan.assign(static_cast<std::size_t>(nan_total) * static_cast<std::size_t>(bytes), 0);
    std::vector<std::uint64_t> offset;  // of each part's first result in sl.nan, in results
    for (const auto& [a0, b0] : parts) {
      offset.push_back(c.nan.empty() ? 0 : offset.back() + c.nan.back().count);
      c.nan.push_back({a0, b0 - a0, sl.nan.data() + offset.back() * static_cast<std::uint64_t>(bytes)});
    }
    for (std::uint64_t p0 = first; p0 < first + n; p0 += producer_.max_chunk()) {
      const std::uint64_t len = std::min(producer_.max_chunk(), first + n - p0);
      producer_.enqueue(e, p0, len, 0);
      const ProducedChunk pc = producer_.wait(0);
      c.side.lane_mismatches += pc.lane_mismatches;
      c.side.lanes.insert(c.side.lanes.end(), pc.lanes.begin(), pc.lanes.end());
      c.side.stray += pc.stray;
      c.side.strays.insert(c.side.strays.end(), pc.strays.begin(), pc.strays.end());
      for (std::uint64_t i = 0; i < len; ++i) {
        const std::uint64_t code = p0 + i;
        std::uint32_t raw = 0;
        std::memcpy(&raw, static_cast<const std::uint8_t*>(pc.data) + i * static_cast<std::uint64_t>(bytes),
                    static_cast<std::size_t>(bytes));  // little endian
        const ModelResult m = model_convert(m_model, static_cast<std::uint32_t>(code));
        ++c.keys[m.key];
        bool nan_input = false;
        for (std::size_t k = 0; k < parts.size(); ++k)
          if (code >= parts[k].first && code < parts[k].second) {
            std::memcpy(sl.nan.data() + (offset[k] + code - parts[k].first) * static_cast<std::uint64_t>(bytes), &raw,
                        static_cast<std::size_t>(bytes));
            nan_input = true;
          }
        if (nan_input) continue;
        const auto got = static_cast<std::uint32_t>(from_container(*e.dst, raw));
        if (got != m.code) {
          ++c.differences;
          if (c.listed.size() < max_listed_) c.listed.push_back({code, got});
        }
      }
    }
    c.overflow = c.differences > max_listed_;
  }

  DeviceCheckChunk wait(int slot) override {
    if (slot < 0 || slot > 1 || !slot_[slot].queued) throw std::logic_error("host checker: nothing queued in this slot");
    slot_[slot].queued = false;
    return slot_[slot].chunk;  // its NaN parts point into the slot's buffer, valid until the slot's next enqueue
  }

 private:
  struct Slot {
    DeviceCheckChunk chunk;
    std::vector<std::uint8_t> nan;
    bool queued = false;
  };
  ConversionProducer& producer_;
  std::uint64_t max_chunk_;
  std::size_t max_listed_;
  Slot slot_[2];
};

}  // namespace fpcert::test
