// tests/plugin/eltwise_plugin_gpu_test.cpp — elementwise kernels of a CUDA plugin in device memory (ABI minor 11; label gpu,
// exits 77 without a device): tests/plugin/fixtures/eltwise_cuda_plugin.cu's kernels certified through the command on the
// elementwise suite (device buffers, eltwise_run on the plugin's stream, the host check of every result): expf at 2 ulp,
// __expf at 2 + floor(1.173 |x|) ulp, hexp on every f16 input correctly rounded; __expf declared without its slope refused,
// naming an input.
#include <doctest/doctest.h>

#include "tests/support/certify_command.hpp"

using fpcert::test::CommandResult;
using fpcert::test::run_command;

namespace {

const std::string kFpcert = fpcert::test::env_or("FPCERT_BIN", FPCERT_BIN);
const std::string kLib = fpcert::test::env_or("FPCERT_TEST_PLUGIN_DIR", FPCERT_TEST_PLUGIN_DIR) + "/libeltwise_cuda.so";

}  // namespace

TEST_CASE("the CUDA elementwise plugin: expf, __expf with its slope and hexp in device memory pass the elementwise suite") {
  CHECK(fpcert::test::certify_all_pass(kFpcert, kLib, "eltwise_expf_f32_cuda", "elementwise") == 2);    // special, sample
  CHECK(fpcert::test::certify_all_pass(kFpcert, kLib, "eltwise___expf_f32_cuda", "elementwise") == 2);
  CHECK(fpcert::test::certify_all_pass(kFpcert, kLib, "eltwise_hexp_f16_cuda", "elementwise") == 1);    // all_f16
}

TEST_CASE("the CUDA elementwise plugin: __expf declared at a plain 2 ulp is refused, an input named") {
  const CommandResult c = run_command({kFpcert, "certify", "--plugin", kLib, "--kernel", "eltwise___expf_2ulp_f32_cuda", "--suite", "elementwise"});
  INFO(c.output);
  CHECK(c.exit_code == 1);
  CHECK(c.has("sample on eltwise___expf_2ulp_f32_cuda: fail: claim <= 2 ulp"));
  CHECK(c.has("at x = 0x"));
}
