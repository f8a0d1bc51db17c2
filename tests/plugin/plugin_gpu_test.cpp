// tests/plugin/plugin_gpu_test.cpp — CUDA plugins on a device (label gpu; exits 77, skipped, without one):
// the CUDA example certified and its conversion checked (in-tree build and the build against the
// staged install), and a plugin that leaves a sticky CUDA error at K = 1024: with isolation only its
// cases crash; without it the broken context takes every later case down too.
#include <doctest/doctest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "tests/support/run_command.hpp"

using fpcert::test::CommandResult;
using fpcert::test::run_command;

namespace {

const std::string kFpcert = fpcert::test::env_or("FPCERT_BIN", FPCERT_BIN);
const std::string kDir = fpcert::test::env_or("FPCERT_TEST_PLUGIN_DIR", FPCERT_TEST_PLUGIN_DIR);
const std::string kStage = fpcert::test::env_or("FPCERT_STAGE_DIR", FPCERT_STAGE_DIR);

struct Case {
  std::string id, status, reason;
  std::int64_t k = 0;
};

struct Certified {
  CommandResult cmd;
  std::vector<Case> cases;  // in run order
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
    for (const auto& cs : doc.at("cases"))
      c.cases.push_back({cs.at("case").get<std::string>(), cs.at("status").get<std::string>(), cs.at("reason").get<std::string>(),
                         cs.at("k").get<std::int64_t>()});
  }
  return c;
}

}  // namespace

TEST_CASE("the CUDA example plugin (in-tree build) passes the quick suite on the device") {
  const Certified c = certify(kFpcert, kDir + "/libfpcert_example_cuda_plugin.so", "example_cuda_gemm_f16_f32acc", "example");
  INFO(c.cmd.output);
  CHECK(c.cmd.exit_code == 0);
  REQUIRE(c.cases.size() >= 3);
  for (const auto& x : c.cases) {
    CAPTURE(x.id);
    CHECK(x.status == "pass");
  }
}

TEST_CASE("the CUDA example built against the staged install and certified by the installed fpcert") {
  const Certified c = certify(kStage + "/prefix/bin/fpcert", kStage + "/cuda/libexample_cuda_plugin.so", "example_cuda_gemm_f16_f32acc",
                              "staged");
  INFO(c.cmd.output);
  CHECK(c.cmd.exit_code == 0);
  CHECK(c.cmd.has("CERTIFIED: "));
  REQUIRE_FALSE(c.cases.empty());
}

TEST_CASE("the CUDA example's fp32 to bf16 conversion checked against MPFR on 2^24 and 2^17 patterns") {
  // 0x00000000..0x00ffffff: +0, every positive fp32 subnormal and the lowest normals, which bf16
  // holds only in part (subnormal rounding); 0x7f7f0000..: the top binade, overflow to Inf, NaNs.
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

TEST_CASE("a sticky CUDA error with isolation: only the faulty cases crash and the run goes on (exit 3)") {
  const Certified c = certify(kFpcert, kDir + "/libfault_cuda_sticky.so", "fault_cuda_sticky", "sticky");
  INFO(c.cmd.output);
  CHECK(c.cmd.exit_code == 3);
  int faulty = 0, after_fault_passed = 0;
  bool seen_fault = false;
  for (const auto& x : c.cases) {
    CAPTURE(x.id);
    if (x.k == 1024) {
      ++faulty;
      seen_fault = true;
      CHECK(x.status == "crashed");
      CHECK(x.reason.find("illegal memory access") != std::string::npos);
    } else {
      CHECK(x.status == "pass");
      after_fault_passed += seen_fault && x.status == "pass";
    }
  }
  CHECK(faulty > 0);
  CHECK(after_fault_passed > 0);  // honest cases after the sticky error ran in fresh processes
}

TEST_CASE("the same sticky error without isolation breaks the context for every later case") {
  const Certified c = certify(kFpcert, kDir + "/libfault_cuda_sticky.so", "fault_cuda_sticky", "sticky_no_isolate", {"--no-isolate"});
  INFO(c.cmd.output);
  CHECK(c.cmd.exit_code == 3);
  const auto first_fault = std::find_if(c.cases.begin(), c.cases.end(), [](const Case& x) { return x.k == 1024; });
  REQUIRE(first_fault != c.cases.end());
  for (auto it = c.cases.begin(); it != first_fault; ++it) CHECK(it->status == "pass");
  int honest_after = 0;
  for (auto it = first_fault; it != c.cases.end(); ++it) {
    CAPTURE(it->id);
    CHECK(it->status == "crashed");  // honest cases too: they run in the broken context
    honest_after += it->k != 1024;
  }
  CHECK(honest_after > 0);
}
