// suites/ops/conversion/device_sweep.hpp — the runner's sweep of a device conversion table entry: results produced on
// the GPU in chunks (two slots, the device filling one while the host checks the other), every one
// checked on the CPU against fpcert's model (MPFR on every disagreement and on a sample), NaN inputs
// against the entry's NaN statement, both lanes of x2 forms and stray container bits from the
// producer, and for the scaled round trip every scale's exactness window. The verdict (`failures`)
// is made here; suites/ops/conversion/convert_runner.hpp runs it as a case, the record is device_sweep_record().
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "kernels/convert/convert_check_device.hpp"
#include "kernels/convert/device_convert.hpp"
#include "oracle/convert/convert_check.hpp"

namespace fpcert {

struct ConversionCase;

struct SweepOptions {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;  ///< (first, count); empty: every code
  bool strict_nan = false;
  std::uint64_t mpfr_sample = 4099;  ///< MPFR also on codes divisible by this (0: only disagreements)
  unsigned threads = 0;              ///< 0: thread_count()
  std::size_t max_listed = 20;
  /// The device check's NaN inputs with MPFR on every one, as before the NaN fast path (docs/conversions.md,
  /// "NaN inputs"): the slow path the fast one is tested and benchmarked against. Reports are identical
  /// but for mpfr_checked.
  bool nan_mpfr_every = false;
  /// The model the device check's host side compares with (null: make_convert_model of the entry);
  /// tests give it and their host checker one with a wrong NaN rule, to see the MPFR sample catch it.
  const ConvertModel* model = nullptr;
  std::function<void(double)> progress;  ///< fraction done, from the sweeping thread
  /// A fault injected into the results (docs/mutation.md, "Device conversion kernels"): each chunk's results as they came
  /// back (`count` results of codes first ..., `bytes` each, container layout) edited on the host before the check. When
  /// set, every result comes back and the host checks it (no device check); called from worker threads on disjoint parts.
  std::function<void(std::uint64_t first, std::uint64_t count, std::uint8_t* results, int bytes)> fault;
  /// The device check (docs/conversions.md, "What runs where"): when set and it supports the entry,
  /// the device converts and compares in one pass and the host sees only counts, differences and NaN
  /// inputs' results; else (and for any chunk with more differences than its list holds) the results
  /// come back and the host checks them.
  DeviceChecker* checker = nullptr;
};

/// A strided sample of a 32-bit source: 256 blocks of 2^16 consecutive codes, one in every 2^24
/// (the blocks' top bytes, sign and the exponent's top 7 bits, are all different, so every pair of
/// adjacent binades of both signs is visited; within a block every low-16-bit pattern, which holds
/// every rounding case of fp16, bf16 and the narrower formats). Sources up to 2^24 codes: all.
std::vector<std::pair<std::uint64_t, std::uint64_t>> strided_sample_ranges(const Format& src);

struct NanReport {
  std::uint64_t inputs = 0;          ///< NaN source patterns
  std::uint64_t as_stated = 0;       ///< ... whose result is the stated NaN
  std::uint64_t not_as_stated = 0;
  std::uint64_t differ_from_fpcert = 0;  ///< ... whose result is a NaN other than fpcert's (part of check.nan_differences)
  std::map<std::uint32_t, std::uint64_t> outputs;  ///< result codes of NaN inputs and their counts (the 16 smallest codes; deterministic)
  std::uint64_t outputs_other = 0;                 ///< results with any other code
  struct Listed {
    std::uint64_t src = 0;
    std::uint32_t stated = 0, got = 0;
  };
  std::vector<Listed> listed;  ///< the first few results not as stated
};

struct SweepTiming {
  double wall_s = 0;      ///< the whole sweep, first launch to last check
  double gpu_s = 0;       ///< kernels (events), overlapped with the rest
  double transfer_s = 0;  ///< device-to-host copies (events), overlapped with the rest
  double check_s = 0;     ///< the CPU check (wall time of the parallel check of each chunk)
  double wait_s = 0;      ///< the CPU waiting for the device (what the overlap did not hide)
  unsigned threads = 0;
};

/// One scale of the scaled round trip.
struct ScaleRow {
  int s = 0;
  int window_lo = 0, window_hi = 0;  ///< binades e (2^e <= |x| < 2^(e+1)) of bf16 that must come back exactly
  std::uint64_t window_patterns = 0;  ///< finite bf16 in the window (zeros included)
  std::uint64_t window_exact = 0;     ///< ... that came back bit for bit
  std::uint64_t outside_exact = 0;    ///< finite bf16 outside the window that came back anyway
  std::uint64_t outside_patterns = 0;
};

struct ScaledReport {
  std::vector<ScaleRow> rows;
  std::uint64_t window_failures = 0;       ///< in-window values that did not come back exactly
  std::uint64_t roundtrip_mismatches = 0;  ///< bf16 results != fp32 unscale + bf16 rn of the device's fp16
  std::uint64_t roundtrip_nan_differences = 0;
  std::uint64_t model_window_errors = 0;   ///< the window formula disagrees with the model (an fpcert bug)
  std::vector<ConvertMismatch> listed;     ///< first few window failures / round-trip mismatches (src = s_index << 16 | x)
};

struct DeviceSweepResult {
  const DeviceConversion* entry = nullptr;
  std::string device;
  RunningArch arch;
  bool hardware = false;
  std::string path;  ///< "hardware: cvt.rn.f16.f32" or "software: header emulation"
  std::uint64_t patterns = 0;
  bool exhaustive = false;  ///< every source code swept
  ConvertCheckResult check;
  NanReport nan;
  std::uint64_t nan_other_differences = 0;  ///< NaN-vs-NaN differences from non-NaN inputs (unexplained)
  std::uint64_t lane_mismatches = 0;
  std::vector<LaneDifference> lanes;
  std::uint64_t stray = 0;
  std::vector<StrayBits> strays;
  ScaledReport scaled;  ///< ScaledRoundTrip only
  SweepTiming timing;
  std::string checked_on = "host";         ///< "device" (the device check) or "host"
  std::uint64_t host_fallback_chunks = 0;  ///< device-checked chunks re-checked on the host (list overflow)
  std::vector<std::string> failures;  ///< why it failed, one line each; empty: passed
  bool passed() const { return failures.empty(); }
};

/// Sweep an entry: results from the producer, every one checked on the CPU (check_conversion_chunk
/// with MPFR on every disagreement and a sample), NaN inputs against the entry's NaN statement,
/// lanes and stray bits from the producer. Throws DeviceError on a device failure.
DeviceSweepResult sweep_conversion(ConversionProducer& producer, const DeviceConversion& e, const SweepOptions& opt);

/// The process's device check, created on first use (nullptr without CUDA or a device; `why` says which).
DeviceChecker* shared_device_checker(std::string* why = nullptr);

/// A table kernel's case as a sweep: its producer (NotSupportedError without a device, or when the
/// running code lacks the entry: the entry support's reason), the case's ranges and options; the
/// comparison on the device where the case's CheckPlace allows and the entry supports it.
DeviceSweepResult sweep_device_kernel(DeviceTableKernel& k, const ConversionCase& c, const std::function<void(double)>& progress);

/// The record of a sweep (docs/conversions.md): the entry's fields, the path taken, the check, the NaN
/// report, lanes, stray bits, the scaled round trip's rows, timing, failures, passed.
nlohmann::json device_sweep_record(const DeviceSweepResult& r, const SweepOptions& opt);
/// The entry's own fields (name, call, formats, rounder, paths, NaN statements, flags).
nlohmann::json device_entry_json(const DeviceConversion& e);
/// The options a case sweeps an entry with.
SweepOptions sweep_options_for(const ConversionCase& c);

}  // namespace fpcert
