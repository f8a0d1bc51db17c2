// tests/plugin/rows_plugin_gpu_test.cpp — softmax and LayerNorm kernels of a CUDA plugin in device memory (ABI minor 6;
// label gpu, exits 77 without a device): tests/plugin/fixtures/rows_cuda_plugin.cu's kernels certified on every case of
// the softmax and norm suites through the command (isolated children, device buffers, the declared expf / rsqrtf
// errors), and the faults made around a closed device kernel killed by `fpcert mutate`.
#include <doctest/doctest.h>

#include "tests/support/certify_command.hpp"

using fpcert::test::CommandResult;
using fpcert::test::run_command;

namespace {

const std::string kFpcert = fpcert::test::env_or("FPCERT_BIN", FPCERT_BIN);
const std::string kLib = fpcert::test::env_or("FPCERT_TEST_PLUGIN_DIR", FPCERT_TEST_PLUGIN_DIR) + "/librows_cuda.so";

}  // namespace

TEST_CASE("the CUDA rows plugin: softmax and LayerNorm in device memory pass every case of their suites") {
  CHECK(fpcert::test::certify_all_pass(kFpcert, kLib, "rows_softmax_f32_cuda", "softmax") >= 10);
  CHECK(fpcert::test::certify_all_pass(kFpcert, kLib, "rows_layernorm_f32_cuda", "norm") >= 10);
}

TEST_CASE("the CUDA rows plugin: fpcert mutate kills the faults made around the device kernel") {
  const CommandResult m = run_command({kFpcert, "mutate", "--plugin", kLib, "--kernel", "rows_softmax_f32_cuda", "--suite", "softmax_quick"});
  INFO(m.output);
  CHECK(m.exit_code == 0);
  CHECK(m.has("3/3 (100.0 %) killed"));
  const CommandResult n = run_command({kFpcert, "mutate", "--plugin", kLib, "--kernel", "rows_layernorm_f32_cuda", "--suite", "norm_quick"});
  INFO(n.output);
  CHECK(n.exit_code == 0);
  CHECK(n.has("3/3 (100.0 %) killed"));
}
