// tests/plugin/gpu_test.cpp — CUDA plugins on a device (label gpu; exits 77, skipped, without one):
// the CUDA example certified and its conversion checked (in-tree build and the build against the
// staged install), and a plugin that leaves a sticky CUDA error: with isolation only its cases
// crash; without it the broken context takes every later case down too.
#include <doctest/doctest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "tests/plugin/run_command.hpp"

using fpcert::test::CommandResult;
using fpcert::test::run_command;

namespace {

const std::string kFpcert = FPCERT_BIN;
const std::string kDir = FPCERT_TEST_PLUGIN_DIR;
const std::string kStage = FPCERT_STAGE_DIR;

struct Certified {
  CommandResult cmd;
  std::map<std::string, std::string> status, reason;
};

Certified certify(const std::string& fpcert, const std::string& plugin, const std::string& kernel, const std::string& tag,
                  const std::vector<std::string>& extra = {}) {
  const std::string dir = fpcert::test::scratch_dir("gpu_" + tag);
  std::vector<std::string> argv = {fpcert, "certify", "--suite", "quick", "--plugin", plugin, "--kernel", kernel, "--json", dir + "/r.json"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  Certified c;
  c.cmd = run_command(argv);
  const std::string text = fpcert::test::read_text(dir + "/r.json");
  if (!text.empty()) {
    const nlohmann::json doc = nlohmann::json::parse(text);  // named: a range-for over a temporary's member dangles
    for (const auto& cs : doc.at("cases")) {
      c.status[cs.at("case").get<std::string>()] = cs.at("status").get<std::string>();
      c.reason[cs.at("case").get<std::string>()] = cs.at("reason").get<std::string>();
    }
  }
  return c;
}

}  // namespace

TEST_CASE("the CUDA example plugin (in-tree build) passes the quick suite on the device") {
  const Certified c = certify(kFpcert, kDir + "/libfpcert_example_cuda_plugin.so", "example_cuda_gemm_f16_f32acc", "example");
  INFO(c.cmd.output);
  CHECK(c.cmd.exit_code == 0);
  REQUIRE(c.status.size() == 5);
  for (const auto& [id, st] : c.status) {
    CAPTURE(id);
    CHECK(st == "pass");
  }
}

TEST_CASE("the CUDA example built against the staged install - certified by the installed fpcert") {
  const Certified c = certify(kStage + "/prefix/bin/fpcert", kStage + "/cuda/libexample_cuda_plugin.so", "example_cuda_gemm_f16_f32acc",
                              "staged");
  INFO(c.cmd.output);
  CHECK(c.cmd.exit_code == 0);
  CHECK(c.cmd.has("CERTIFIED: 5 case(s) passed"));
}

TEST_CASE("the CUDA example's fp32 -> bf16 conversion - checked on 2^24 patterns against MPFR") {
  // 0x00000000..0x00ffffff: +0, every positive fp32 subnormal and the lowest normals, which bf16
  // holds only in part (subnormal rounding); 0x7f000000..0x7fffffff would add overflow and NaNs.
  for (const char* range : {"0x00000000:0x1000000", "0x7f7f0000:0x20000"}) {
    CAPTURE(range);
    const auto r = run_command({kFpcert, "convert", "--plugin", kDir + "/libfpcert_example_cuda_plugin.so", "--kernel",
                                "example_cuda_cvt_f32_to_bf16", "--exhaustive", "--range", range});
    INFO(r.output);
    CHECK(r.exit_code == 0);
    CHECK(r.has("device memory"));
    CHECK(r.has("PASS"));
  }
}

TEST_CASE("a sticky CUDA error: with isolation only the faulty cases crash and the run goes on (exit 3)") {
  const Certified c = certify(kFpcert, kDir + "/libfault_cuda_sticky.so", "fault_cuda_sticky", "sticky");
  INFO(c.cmd.output);
  CHECK(c.cmd.exit_code == 3);
  REQUIRE(c.status.size() == 5);
  for (const char* id : {"k1024_normal", "k1024_f16_exact"}) {
    CAPTURE(id);
    CHECK(c.status.at(id) == "crashed");
    CHECK(c.reason.at(id).find("illegal memory access") != std::string::npos);
  }
  for (const char* id : {"k256_uniform", "exp_wide", "ozaki_phi2"}) {
    CAPTURE(id);
    CHECK(c.status.at(id) == "pass");
  }
}

TEST_CASE("the same sticky error without isolation breaks the context for every later case") {
  const Certified c = certify(kFpcert, kDir + "/libfault_cuda_sticky.so", "fault_cuda_sticky", "sticky_no_isolate", {"--no-isolate"});
  INFO(c.cmd.output);
  CHECK(c.cmd.exit_code == 3);
  REQUIRE(c.status.size() == 5);
  CHECK(c.status.at("k256_uniform") == "pass");
  CHECK(c.status.at("k1024_normal") == "crashed");
  // exp_wide (K = 256) is honest, but runs after the fault in the same broken context.
  CHECK(c.status.at("exp_wide") == "crashed");
}
