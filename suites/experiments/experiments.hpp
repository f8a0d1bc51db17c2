// suites/experiments/experiments.hpp — experiments that are not plain suite runs: the scalar split-product study
// (CPU or device) and the BF16-on-FP16 study (span boundary and the three correctness levels).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/emu/bf16_on_fp16.hpp"

namespace fpcert {

struct SplitScalarRow {
  std::string method;         ///< "fp32", "tf32", or a split scheme name
  double median = 0, p99 = 0, max = 0;  ///< relative error |p - a b| / |a b|
  std::int64_t zero = 0;      ///< products that came out 0 (underflow of slices or products)
  std::int64_t samples = 0;
  /// Device runs: pairs whose device product differs in any bit from the CPU's (split_product of
  /// kernels/emu/split.cpp; fp32: a * b; tf32: both rounded nearest-away, then a * b). -1: CPU run.
  std::int64_t cpu_mismatches = -1;
  std::string first_mismatch;  ///< "a=..., b=...: device ..., cpu ..." (hex floats) when there is one
};

/// `pairs` pairs of fp32 normals (random significands, exponents uniform in [emin, emax], random
/// signs; Philox keyed by seed), each method's product against the exact product (in fp64, exact
/// for two fp32 values): median, 99th percentile and maximum relative error. With device = true the
/// products are computed on the CUDA device (kernels/register.hpp, split_scalar_products_cuda)
/// and compared bit for bit with the CPU's (two NaNs agree: their sign and payload are the platform's); throws DeviceError when there is no device.
std::vector<SplitScalarRow> split_scalar_experiment(std::uint64_t pairs, std::uint64_t seed, int emin, int emax,
                                                    unsigned threads = 0, bool device = false);

/// One kernel on one case of the BF16-on-FP16 study: the three correctness levels side by side.
struct Bf16OnF16Row {
  std::string case_id, spec, kernel;
  Bf16OnF16Stats stats;                ///< conversions (lossless: no inexact conversion), outliers, tile modes
  std::string status;                  ///< model quality: the runner's gate (pass / fail / ...)
  double gate_fraction = 0;
  std::string reason;
  double max_abs = 0;                  ///< max |C - exact|
  double native_max_abs = 0;           ///< the native bf16 kernel's on the same case
  double error_ratio = 0;              ///< numerical (the --baseline mechanism): max_abs / max(native_max_abs, 2^-23 max|ref|)
  double componentwise = 0;            ///< max_ij |c - exact| / (|A||B|)_ij
  double native_componentwise = 0;
  double componentwise_ratio = 0;      ///< numerical, per element: componentwise / max(native's, 2^-24)
  std::int64_t bitwise_differences = -1;  ///< bitwise: elements differing from the native kernel's output
  std::int64_t elements = 0;
  double time_ms = 0;                  ///< runner median
};
/// The span scan: one strategy on span tiles of s binades per row, B = identity (C = A exactly iff
/// every conversion is exact, whatever the MMA's order): conversions and output.
struct Bf16SpanRow {
  int span = 0;
  std::string kernel;
  std::int64_t inexact = 0, subnormal = 0, overflow = 0;  ///< conversions of A (B = I converts exactly)
  std::int64_t c_differs = 0;          ///< elements of C = A I that differ from A
};
struct Bf16OnF16Report {
  std::string device;                  ///< "host CPU" or the GPU's name
  std::string native;                  ///< the native bf16 kernel compared against
  std::vector<Bf16SpanRow> spans;
  std::vector<Bf16OnF16Row> rows;
  int derived_max_lossless_span = 0;   ///< emu::kSpanLossless (32)
  int measured_first_lossy_span = -1;  ///< the smallest scanned span where a single-scale strategy lost bits (rowcol and tensor agree)
  bool measured_consistent = true;     ///< every span <= 32 lossless, every span >= 33 lossy, for both measures
};
/// Runs the bf16-on-fp16 suite's cases on every strategy (CPU models, or the CUDA kernels with
/// device = true) next to the native bf16 kernel, and the span scan s = 26..40 with the single-scale
/// strategies. mn overrides M = N of the suite's cases (0: the suite's). Throws DeviceError without a device.
Bf16OnF16Report bf16_on_fp16_experiment(bool device, std::int64_t mn, const std::string& command);

}  // namespace fpcert
