// tests/plugin/rows_plugin_gpu_test.cpp — softmax and LayerNorm kernels of a CUDA plugin in device memory (ABI minor 6;
// label gpu, exits 77 without a device): tests/plugin/fixtures/rows_cuda_plugin.cu's kernels certified on every case of
// the softmax and norm suites through the command (isolated children, device buffers, the declared expf / rsqrtf
// errors), and the faults made around a closed device kernel killed by `fpcert mutate`.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "tests/support/run_command.hpp"

using fpcert::test::CommandResult;
using fpcert::test::run_command;

namespace {

const std::string kFpcert = fpcert::test::env_or("FPCERT_BIN", FPCERT_BIN);
const std::string kLib = fpcert::test::env_or("FPCERT_TEST_PLUGIN_DIR", FPCERT_TEST_PLUGIN_DIR) + "/librows_cuda.so";

}  // namespace

TEST_CASE("the CUDA rows plugin: softmax and LayerNorm in device memory pass every case of their suites") {
  for (const auto& [kernel, suite] : {std::pair<std::string, std::string>{"rows_softmax_f32_cuda", "softmax"}, {"rows_layernorm_f32_cuda", "norm"}}) {
    const std::string json = fpcert::test::scratch_dir("gpu_rows_" + suite) + "/r.json";
    const CommandResult c = run_command({kFpcert, "certify", "--plugin", kLib, "--kernel", kernel, "--suite", suite, "--json", json});
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
    CHECK(cases >= 10);
  }
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
