// tests/plugin/attention_plugin_gpu_test.cpp — an attention forward kernel of a CUDA plugin in device memory (ABI minor
// 10; label gpu, exits 77 without a device): tests/plugin/fixtures/attention_cuda_plugin.cu certified on every case of
// the attention suite through the command (isolated children, device buffers and stream, the declared expf / logf errors),
// and the fault made around a closed device kernel (attn_zeros) killed by `fpcert mutate`.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "tests/support/run_command.hpp"

using fpcert::test::CommandResult;
using fpcert::test::run_command;

namespace {

const std::string kFpcert = fpcert::test::env_or("FPCERT_BIN", FPCERT_BIN);
const std::string kLib = fpcert::test::env_or("FPCERT_TEST_PLUGIN_DIR", FPCERT_TEST_PLUGIN_DIR) + "/libattention_cuda.so";

}  // namespace

TEST_CASE("the CUDA attention plugin: the forward in device memory passes every case of the attention suite") {
  const std::string json = fpcert::test::scratch_dir("gpu_attention_plugin") + "/r.json";
  const CommandResult c = run_command({kFpcert, "certify", "--plugin", kLib, "--kernel", "attention_f16_online_cuda", "--suite", "attention",
                                       "--json", json});
  INFO(c.output);
  CHECK(c.exit_code == 0);
  const std::string text = fpcert::test::read_text(json);
  REQUIRE(!text.empty());
  const nlohmann::json doc = nlohmann::json::parse(text);
  int cases = 0;
  for (const auto& cs : doc.at("cases")) {
    CAPTURE(cs.at("case").get<std::string>());
    CHECK(cs.at("status").get<std::string>() == "pass");
    ++cases;
  }
  CHECK(cases == 13);
}

TEST_CASE("the CUDA attention plugin: fpcert mutate kills the fault made around the device kernel") {
  const CommandResult m = run_command({kFpcert, "mutate", "--plugin", kLib, "--kernel", "attention_f16_online_cuda", "--suite", "attention_quick"});
  INFO(m.output);
  CHECK(m.exit_code == 0);
  CHECK(m.has("1/1 (100.0 %) killed"));
}
