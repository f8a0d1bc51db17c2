// tests/support/certify_inputs.hpp — the distinct generator specs of the GEMM certify suite, taken with kernels of
// every storage format (fp32, tf32, bf16, f16, e4m3, e5m2, fp64): the inputs the engine tests run the exact reference on
// (the suite's sizes for CPU models, or for device kernels with `device`).
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "kernels/kernel.hpp"
#include "suites/run/suite.hpp"

namespace fpcert::test {

inline std::vector<std::string> certify_gemm_specs(bool device) {
  std::vector<std::string> specs;
  for (const char* name : {"model_gemm_f32", "model_gemm_tf32_f32acc", "model_gemm_bf16_f32acc", "model_gemm_f16_f32acc",
                           "model_gemm_e4m3_f32acc", "model_gemm_e5m2_f32acc", "model_gemm_f64"}) {
    auto k = make_gemm_kernel(name);
    if (!k) continue;
    SuiteContext ctx;
    ctx.device = device;
    ctx.traits = &k->traits();
    ctx.all = {&k->traits()};
    for (const CaseSpec& c : find_suite("certify")->cases(ctx))
      if (std::find(specs.begin(), specs.end(), c.spec) == specs.end()) specs.push_back(c.spec);
  }
  return specs;
}

}  // namespace fpcert::test
