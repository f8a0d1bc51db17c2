// tests/plugin/coverage_gpu_test.cpp — the CUDA kernel bugs of tests/plugin/fixtures/buggy_cuda_plugin.cu
// against the certify suite's coverage classes on a device (label gpu; exits 77, skipped, without one):
// each bug fails the case of its class, the correct tiled kernel passes every one of them.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "tests/support/run_command.hpp"

using fpcert::test::run_command;

namespace {

const std::string kFpcert = fpcert::test::env_or("FPCERT_BIN", FPCERT_BIN);
const std::string kPlugin = fpcert::test::env_or("FPCERT_TEST_PLUGIN_DIR", FPCERT_TEST_PLUGIN_DIR) + "/libbuggy_cuda.so";

/// `fpcert certify --suite certify --case ID --no-mutation` of one kernel: the case's status ("" when none came
/// back). The mutation score is not what these tests check; with it, a passing kernel's fill_device case ran once
/// per fault (several minutes on the H200).
std::string status_of(const std::string& kernel, const std::string& id) {
  const std::string json = fpcert::test::scratch_dir("coverage_" + kernel + "_" + id) + "/r.json";
  const auto r = run_command({kFpcert, "certify", "--suite", "certify", "--case", id, "--no-mutation", "--plugin", kPlugin, "--kernel", kernel, "--json", json});
  INFO(r.command << "\n" << r.output);
  const std::string text = fpcert::test::read_text(json);
  if (text.empty()) return "";
  const nlohmann::json doc = nlohmann::json::parse(text);
  return doc.at("cases").at(0).at("status").get<std::string>();
}

}  // namespace

TEST_CASE("K tail read past the row (CUDA): K = 512 passes, partial K tiles fail; the correct kernel passes") {
  CHECK(status_of("bug_ktail_cuda", "uniform") == "pass");  // the old suite's shapes: K a multiple of 16
  CHECK(status_of("bug_ktail_cuda", "tile16_pm1") == "fail");
  CHECK(status_of("bug_ktail_cuda", "shape_primes") == "fail");
  CHECK(status_of("ok_tiled16_cuda", "tile16_pm1") == "pass");
  CHECK(status_of("ok_tiled16_cuda", "shape_primes") == "pass");
}

TEST_CASE("lda and ldb ignored (CUDA): padded leading dimensions fail it; the correct kernel passes, misaligned too") {
  CHECK(status_of("bug_ignores_ld_cuda", "uniform") == "fail");
  CHECK(status_of("ok_tiled16_cuda", "uniform") == "pass");
  CHECK(status_of("ok_tiled16_cuda", "misaligned") == "pass");
}

TEST_CASE("missing __syncthreads (CUDA): the device-filling case fails it, the correct kernel passes it") {
  CHECK(status_of("bug_racy_cuda", "fill_device") == "fail");
  CHECK(status_of("ok_tiled16_cuda", "fill_device") == "pass");
}
