// tests/support/same_report.hpp — field-by-field equality of two sweeps' reports (the device check
// against the host check of the same results), for the tests that hold the two paths to one answer.
// Doctest assertions: include after <doctest/doctest.h>.
#pragma once

#include <cstddef>

#include "suites/ops/conversion/device_sweep.hpp"
#include "tests/support/same_result.hpp"

namespace fpcert::test {

/// Every field of a device-checked sweep's report and a host-checked one's of the same results but
/// mpfr_checked (the device check's NaN inputs off the MPFR sample are judged against fpcert's model:
/// docs/conversions.md, "NaN inputs on the device check") and timing.
inline void require_same_sweep_report(const DeviceSweepResult& dev, const DeviceSweepResult& host) {
  CHECK(dev.checked_on == "device");
  CHECK(host.checked_on == "host");
  CHECK(dev.patterns == host.patterns);
  check_same_result(dev.check, host.check);
  const NanReport &dn = dev.nan, &hn = host.nan;
  CHECK(dn.inputs == hn.inputs);
  CHECK(dn.as_stated == hn.as_stated);
  CHECK(dn.not_as_stated == hn.not_as_stated);
  CHECK(dn.differ_from_fpcert == hn.differ_from_fpcert);
  CHECK(dn.outputs == hn.outputs);
  CHECK(dn.outputs_other == hn.outputs_other);
  REQUIRE(dn.listed.size() == hn.listed.size());
  for (std::size_t i = 0; i < hn.listed.size(); ++i) {
    CAPTURE(i);
    CHECK(dn.listed[i].src == hn.listed[i].src);
    CHECK(dn.listed[i].stated == hn.listed[i].stated);
    CHECK(dn.listed[i].got == hn.listed[i].got);
  }
  CHECK(dev.nan_other_differences == host.nan_other_differences);
  CHECK(dev.lane_mismatches == host.lane_mismatches);
  CHECK(dev.lanes.size() == host.lanes.size());
  CHECK(dev.stray == host.stray);
  CHECK(dev.strays.size() == host.strays.size());
  CHECK(dev.failures == host.failures);
}

}  // namespace fpcert::test
