// tests/plugin/attention_plugin_gpu_test.cpp — attention forward and backward kernels of a CUDA plugin in device memory
// (ABI minor 10; label gpu, exits 77 without a device): tests/plugin/fixtures/attention_cuda_plugin.cu's kernels certified
// on every case of the attention and attention_backward suites through the command (isolated children, device buffers
// and stream, the declared expf / logf errors), and the faults made around a closed device kernel killed by `fpcert mutate`
// (forward: zeros, the scale after the softmax, causal off by one, the last key block dropped; backward: zeros, dQ's scale
// missing or applied twice, D from dO, D = 0, the LSE in base 2, causal off by one).
#include <doctest/doctest.h>

#include "tests/support/certify_command.hpp"

using fpcert::test::CommandResult;
using fpcert::test::run_command;

namespace {

const std::string kFpcert = fpcert::test::env_or("FPCERT_BIN", FPCERT_BIN);
const std::string kLib = fpcert::test::env_or("FPCERT_TEST_PLUGIN_DIR", FPCERT_TEST_PLUGIN_DIR) + "/libattention_cuda.so";

}  // namespace

TEST_CASE("the CUDA attention plugin: forward and backward in device memory pass every case of their suites") {
  // Every case is checked "pass" inside certify_all_pass; the suites have grown since (additive_mask_min, causal_top_left_mha: 14 and 16 cases).
  CHECK(fpcert::test::certify_all_pass(kFpcert, kLib, "attention_f16_online_cuda", "attention") >= 14);
  CHECK(fpcert::test::certify_all_pass(kFpcert, kLib, "attention_bwd_f16_cuda", "attention_backward") >= 16);
}

TEST_CASE("the CUDA attention plugin: fpcert mutate kills the faults made around the device kernels") {
  const CommandResult m = run_command({kFpcert, "mutate", "--plugin", kLib, "--kernel", "attention_f16_online_cuda", "--suite", "attention_quick"});
  INFO(m.output);
  CHECK(m.exit_code == 0);
  CHECK(m.has("4/4 (100.0 %) killed"));
  const CommandResult b =
      run_command({kFpcert, "mutate", "--plugin", kLib, "--kernel", "attention_bwd_f16_cuda", "--suite", "attention_backward_quick"});
  INFO(b.output);
  CHECK(b.exit_code == 0);
  CHECK(b.has("7/7 (100.0 %) killed"));
}
