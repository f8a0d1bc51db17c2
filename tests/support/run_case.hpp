// tests/support/run_case.hpp — one graded case through the runner, for tests that build their own
// problem: the setup every GPU test needs, and the device's compute capability.
#pragma once

#include <string>

#include "kernels/device/device_api.hpp"
#include "suites/ops/gemm/runner.hpp"

namespace fpcert::test {

/// run_case with the test suite's name and the problem's spec as the case id.
inline CaseResult run_graded(GemmKernel& k, const Problem& p, const GemmRef& ref, DeviceApi& api, const RunOptions& opt = {},
                             BoundVariant v = BoundVariant::Independent) {
  CaseSetup s;
  s.suite = "gpu-test";
  s.case_id = p.spec;
  s.problem = &p;
  s.ref = &ref;
  s.variant = v;
  return run_case(k, s, api, opt);
}

/// The device's compute capability as one number (90 for sm_90).
inline int device_sm(DeviceApi& api) {
  const DeviceInfo d = api.info();
  return d.cc_major * 10 + d.cc_minor;
}

}  // namespace fpcert::test
