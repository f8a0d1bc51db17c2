// tests/plugin/edges_gpu_test.cpp — issue 38 on a device (label gpu; exits 77, skipped, without one): the CUDA
// fixtures of tests/plugin/fixtures/buggy_cuda_plugin.cu against poisoned padding, the misaligned vector-path cases
// and the scale suite, each beside the correct kernel; and a built-in kernel on the scale suite's tall case (its
// 131,072 row tiles are past gridDim.y = 65,535).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "tests/support/run_command.hpp"

using fpcert::test::run_command;

namespace {

const std::string kFpcert = fpcert::test::env_or("FPCERT_BIN", FPCERT_BIN);
const std::string kPlugin = fpcert::test::env_or("FPCERT_TEST_PLUGIN_DIR", FPCERT_TEST_PLUGIN_DIR) + "/libbuggy_cuda.so";

/// `fpcert certify --suite SUITE --case ID --no-mutation` of one kernel (plugin kernels run in a child process, so a
/// device fault stays in its case): the case's status and reason ("" when none came back).
std::pair<std::string, std::string> run_case(const std::string& suite, const std::string& kernel, const std::string& id) {
  const std::string json = fpcert::test::scratch_dir("edges_" + suite + "_" + kernel + "_" + id) + "/r.json";
  // A 2^31-element case takes ~90 s per kernel on the H200 (its reference and the transfer): past the default
  // per-case limit, so the scale suite's cases get 600 s.
  const auto r = run_command({kFpcert, "certify", "--suite", suite, "--case", id, "--no-mutation", "--plugin", kPlugin, "--kernel",
                              kernel, "--json", json, "--timeout", suite == "scale" ? "600" : "120"});
  INFO(r.command << "\n" << r.output);
  const std::string text = fpcert::test::read_text(json);
  if (text.empty()) return {"", ""};
  const nlohmann::json doc = nlohmann::json::parse(text);
  const auto& c = doc.at("cases").at(0);
  return {c.at("status").get<std::string>(), c.value("reason", std::string())};
}
std::string status_of(const std::string& suite, const std::string& kernel, const std::string& id) { return run_case(suite, kernel, id).first; }

}  // namespace

TEST_CASE("K tail read into the padding against B's zero tail (CUDA): no tail passes, the poisoned tail fails") {
  CHECK(status_of("certify", "bug_ktail_zero_b_cuda", "uniform") == "pass");  // K = 512: no partial K tile
  CHECK(status_of("certify", "bug_ktail_zero_b_cuda", "shape_primes") == "fail");
  CHECK(status_of("certify", "bug_ktail_zero_b_cuda", "tile16_pm1") == "fail");
  CHECK(status_of("certify", "ok_tiled16_cuda", "shape_primes") == "pass");
}

TEST_CASE("float4 loads chosen from K alone (CUDA): aligned cases pass, misaligned_vec16 and ld_odd fault") {
  CHECK(status_of("certify", "bug_vec4_cuda", "uniform") == "pass");
  CHECK(status_of("certify", "bug_vec4_cuda", "misaligned") == "pass");  // K = 513: the scalar path
  for (const char* id : {"misaligned_vec16", "ld_odd"}) {
    const auto [status, reason] = run_case("certify", "bug_vec4_cuda", id);
    CHECK_MESSAGE(status == "crashed", id, ": ", reason);
    CHECK_MESSAGE(reason.find("misaligned address") != std::string::npos, reason);
    CHECK(status_of("certify", "ok_grid_cuda", id) == "pass");
  }
}

TEST_CASE("a capped grid (CUDA): certify's shapes pass, the scale suite's tall case finds the unwritten rows") {
  CHECK(status_of("certify", "bug_grid_cap_cuda", "tall_skinny") == "pass");
  CHECK(status_of("certify", "bug_grid_cap_cuda", "uniform") == "pass");
  const auto [status, reason] = run_case("scale", "bug_grid_cap_cuda", "tall_2e21");
  CHECK(status == "fail");
  CHECK_MESSAGE(reason.find("never written") != std::string::npos, reason);
  CHECK_MESSAGE(reason.find("first at (1048560, 0)") != std::string::npos, reason);  // 65,535 x 16
  CHECK(status_of("scale", "ok_grid_cuda", "tall_2e21") == "pass");
  CHECK(status_of("scale", "ok_grid_cuda", "wide_2e21_odd") == "pass");
}

TEST_CASE("int offsets (CUDA): certify passes, the 2^31-element operand fails (wrong or a fault); int64 offsets pass") {
  CHECK(status_of("certify", "bug_int_index_cuda", "uniform") == "pass");
  CHECK(status_of("scale", "bug_int_index_cuda", "a_2e31") != "pass");
  CHECK(status_of("scale", "ok_grid_cuda", "a_2e31") == "pass");
}

TEST_CASE("built-in kernels on the scale suite's tall case: 2^21 rows, 16-row tiles past gridDim.y (grid-stride loop)") {
  for (const char* k : {"gemm_f32_tiled", "gemm_f16_f32acc_mma_sm80"}) {
    const std::string json = fpcert::test::scratch_dir(std::string("edges_builtin_") + k) + "/r.json";
    const auto r = run_command({kFpcert, "certify", "--suite", "scale", "--case", "tall_2e21", "--no-mutation", "--kernel", k, "--json", json});
    INFO(r.command << "\n" << r.output);
    const std::string text = fpcert::test::read_text(json);
    REQUIRE(!text.empty());
    CHECK(nlohmann::json::parse(text).at("cases").at(0).at("status").get<std::string>() == "pass");
  }
}
