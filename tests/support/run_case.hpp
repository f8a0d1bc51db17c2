// tests/support/run_case.hpp — one graded case through the runner, for tests that build their own
// problem: the setup every GPU test needs, and the device's compute capability.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "kernels/device/device_api.hpp"
#include "suites/ops/gemm/runner.hpp"

namespace fpcert::test {

/// run_case with the test suite's name and the problem's spec as the case id (in layout l; misaligned: A and B one
/// element past an aligned address).
inline CaseResult run_graded(GemmKernel& k, const Problem& p, const GemmRef& ref, DeviceApi& api, const RunOptions& opt = {},
                             BoundVariant v = BoundVariant::Independent, const GemmLayout& l = {}, bool misaligned = false) {
  CaseSetup s;
  s.suite = "gpu-test";
  s.case_id = p.spec;
  s.problem = &p;
  s.ref = &ref;
  s.variant = v;
  s.layout = l;
  s.misaligned = misaligned;
  return run_case(k, s, api, opt);
}

/// The checks of a passed case whose inputs make the exact result the kernel's bit for bit (integer inputs): every
/// element exact, written and finite, the guards intact, the runs equal; with K > 0 a C that is not all zeros (the
/// test can fail).
inline void check_exact_result(const CaseResult& r, std::int64_t k) {
  CHECK_MESSAGE(r.metrics.max_abs == 0.0, "max |got - exact| = " << r.metrics.max_abs << " at index " << r.worst_index);
  CHECK(r.metrics.nonfinite == 0);
  CHECK(r.metrics.unwritten == 0);
  CHECK_MESSAGE(r.metrics.guard_violations == 0, r.metrics.first_guard_violation);
  CHECK(r.metrics.deterministic);
  if (k > 0) CHECK(r.metrics.ref_max_abs > 0);
}

/// The device's compute capability as one number (90 for sm_90).
inline int device_sm(DeviceApi& api) {
  const DeviceInfo d = api.info();
  return d.cc_major * 10 + d.cc_minor;
}

}  // namespace fpcert::test
