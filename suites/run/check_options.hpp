// suites/run/check_options.hpp — how a conversion kernel's results are compared, as a run's options carry it
// (SuiteRunOptions::conversion; the conversion runner: suites/ops/conversion/convert_runner.hpp).
#pragma once

#include <cstddef>
#include <cstdint>

namespace fpcert {

/// Where a device table kernel's results are compared with fpcert's model (docs/conversions.md,
/// "What runs where"): on the device when it can (Auto), only there (Device: no device check is a
/// device failure), or on the host after copying them back (Host). Other kernels are checked on the host.
enum class CheckPlace : std::uint8_t { Auto, Device, Host };

/// How results are compared (oracle/convert/convert_check.hpp), the same for every conversion kernel.
struct ConversionCheckOptions {
  bool strict_nan = false;           ///< NaN payload or sign differences are mismatches
  std::uint64_t mpfr_sample = 4099;  ///< where MPFR is not on every pattern: also on codes divisible by this
  unsigned threads = 0;              ///< check threads (0: thread_count())
  std::size_t max_listed = 20;       ///< mismatches listed
  CheckPlace place = CheckPlace::Auto;
};

}  // namespace fpcert
