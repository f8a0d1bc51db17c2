// tests/cli/plugin_cli_test.cpp — `fpcert certify/run-suite/kernels/convert --plugin` driven as a
// subprocess on each purpose-built fault plugin (tests/plugins): the exit code, the message, the
// faulty case's verdict, and — the point of isolation and status translation — the cases after the
// fault still run and pass. Every fault plugin is honest except at K = 1024; the quick suite's cases
// are K = 256, 1024, 1024, 256, 512, so the fault hits the 2nd and 3rd and the 4th and 5th must pass.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "plugin/fpcert_plugin.h"
#include "tests/support/run_command.hpp"

using fpcert::test::CommandResult;
using fpcert::test::run_command;

namespace {

const std::string kFpcert = fpcert::test::env_or("FPCERT_BIN", FPCERT_BIN);
const std::string kDir = fpcert::test::env_or("FPCERT_TEST_PLUGIN_DIR", FPCERT_TEST_PLUGIN_DIR);
std::string lib(const std::string& stem) { return kDir + "/lib" + stem + ".so"; }
const std::string kExample = lib("fpcert_example_cpu_plugin");

/// One case of a run, in run order.
struct Case {
  std::string id, status, reason;
  std::int64_t k = 0;
};

struct Certified {
  CommandResult cmd;
  std::vector<Case> cases;
  bool json_written = false;
  std::vector<const Case*> with_k(std::int64_t k, bool equal = true) const {
    std::vector<const Case*> r;
    for (const auto& c : cases)
      if ((c.k == k) == equal) r.push_back(&c);
    return r;
  }
};

/// fpcert certify --suite quick --mn 16 (16 x 16 outputs keep each case well under a second).
Certified certify(const std::vector<std::string>& plugins, const std::string& kernel, const std::vector<std::string>& extra = {}) {
  const std::string dir = fpcert::test::scratch_dir("certify_" + kernel + "_" + std::to_string(extra.size()));
  const std::string json = dir + "/results.json";
  std::vector<std::string> argv = {kFpcert, "certify", "--suite", "quick", "--mn", "16", "--kernel", kernel, "--json", json};
  for (const auto& p : plugins) {
    argv.push_back("--plugin");
    argv.push_back(p);
  }
  argv.insert(argv.end(), extra.begin(), extra.end());
  Certified c;
  c.cmd = run_command(argv);
  const std::string text = fpcert::test::read_text(json);
  if (!text.empty()) {
    c.json_written = true;
    const nlohmann::json doc = nlohmann::json::parse(text);  // named: a range-for over a temporary's member dangles
    for (const auto& cs : doc.at("cases"))
      c.cases.push_back({cs.at("case").get<std::string>(), cs.at("status").get<std::string>(), cs.at("reason").get<std::string>(),
                         cs.at("k").get<std::int64_t>()});
  }
  return c;
}

/// Every K = 1024 case (the fault's) has `verdict` with the fragment in its reason; every other case
/// passed; and at least one passing case ran after the first faulty one (the run went on).
void expect_fault_contained(const Certified& c, const std::string& verdict, const std::string& reason_fragment) {
  INFO(c.cmd.command);
  INFO(c.cmd.output);
  REQUIRE(c.json_written);
  REQUIRE_FALSE(c.with_k(1024).empty());
  REQUIRE_FALSE(c.with_k(1024, false).empty());
  for (const Case* x : c.with_k(1024)) {
    CAPTURE(x->id);
    CHECK(x->status == verdict);
    CHECK(x->reason.find(reason_fragment) != std::string::npos);
  }
  for (const Case* x : c.with_k(1024, false)) {
    CAPTURE(x->id);
    CHECK(x->status == "pass");
  }
  const auto first_fault = std::find_if(c.cases.begin(), c.cases.end(), [](const Case& x) { return x.k == 1024; });
  CHECK(std::any_of(first_fault, c.cases.end(), [](const Case& x) { return x.status == "pass"; }));
}

}  // namespace

// ---- faults at run time: the case's verdict, and the rest of the run goes on ----------------------

TEST_CASE("certify --plugin: the honest example plugin passes the quick suite") {
  const Certified c = certify({kExample}, "example_gemm_f16_f32acc");
  INFO(c.cmd.output);
  CHECK(c.cmd.exit_code == 0);
  CHECK(c.cmd.has("CERTIFIED: "));
  REQUIRE(c.cases.size() >= 3);
  for (const auto& x : c.cases) CHECK(x.status == "pass");
}

TEST_CASE("a plugin that throws a C++ exception: the case crashed (SIGABRT in its child) - the run goes on - exit 3") {
  const Certified c = certify({lib("fault_throw")}, "fault_throw");
  expect_fault_contained(c, "crashed", "signal 6");
  CHECK(c.cmd.exit_code == 3);
  CHECK(c.cmd.has("let a C++ exception escape from gemm_run()"));
  CHECK(c.cmd.has("fault_throw: simulated C++ exception at K = 1024"));
}

TEST_CASE("without isolation the same exception ends fpcert itself: isolation is what keeps the run going") {
  const Certified c = certify({lib("fault_throw")}, "fault_throw", {"--no-isolate"});
  INFO(c.cmd.output);
  CHECK(c.cmd.signal == 6);  // SIGABRT: std::terminate, never an exception inside fpcert
  CHECK_FALSE(c.json_written);
  CHECK_FALSE(c.cmd.has("CERTIFIED"));
  CHECK_FALSE(c.cmd.has("FAILED"));
}

TEST_CASE("a plugin that segfaults: crashed (signal 11) - the run goes on - exit 3") {
  const Certified c = certify({lib("fault_segv")}, "fault_segv");
  expect_fault_contained(c, "crashed", "signal 11");
  CHECK(c.cmd.exit_code == 3);
}

TEST_CASE("a plugin that hangs: the isolation timeout kills it - the case is hung - the run goes on - exit 3") {
  const Certified c = certify({lib("fault_hang")}, "fault_hang", {"--timeout", "5"});
  expect_fault_contained(c, "hung", "no result within 5 s");
  CHECK(c.cmd.exit_code == 3);
}

TEST_CASE("a plugin that writes past the end of C: the guards fail the case - the run goes on - exit 1") {
  const Certified c = certify({lib("fault_oob")}, "fault_oob");
  expect_fault_contained(c, "fail", "written past the end of C");
  CHECK(c.cmd.exit_code == 1);
}

TEST_CASE("a plugin that returns a NaN: non-finite output where the reference is finite - at row 3 column 5 - exit 1") {
  const Certified c = certify({lib("fault_nan")}, "fault_nan");
  expect_fault_contained(c, "fail", "non-finite output(s) where the reference is finite, first at (3, 5)");
  CHECK(c.cmd.exit_code == 1);
}

TEST_CASE("NOT_SUPPORTED from can_implement is 'not supported'; from run, after the data, it fails the case: exit 1") {
  const Certified c = certify({lib("fault_not_supported")}, "fault_not_supported");
  INFO(c.cmd.output);
  CHECK(c.cmd.exit_code == 1);
  REQUIRE(c.json_written);
  REQUIRE_FALSE(c.with_k(1024).empty());
  REQUIRE_FALSE(c.with_k(512).empty());
  int passed = 0, not_supported = 0, failed = 0;
  for (const auto& x : c.cases) {
    CAPTURE(x.id);
    if (x.k == 1024) {
      CHECK(x.status == "not_supported");
      CHECK(x.reason.find("K = 1024 is not implemented (can_implement)") != std::string::npos);
    } else if (x.k == 512) {  // only can_implement may decline, before the data exist (docs/plugin.md)
      CHECK(x.status == "fail");
      CHECK(x.reason.find("run() returned NOT_SUPPORTED after seeing the data") != std::string::npos);
      CHECK(x.reason.find("K = 512 found unsupported at run time") != std::string::npos);
    } else {
      CHECK(x.status == "pass");
    }
    passed += x.status == "pass";
    not_supported += x.status == "not_supported";
    failed += x.status == "fail";
  }
  CHECK(passed > 0);
  CHECK(not_supported > 0);
  CHECK(failed > 0);
}

TEST_CASE("an error status from run: crashed with the plugin's message (exit 3) - with or without isolation") {
  for (bool isolate : {true, false}) {
    CAPTURE(isolate);
    const Certified c = certify({lib("fault_status")}, "fault_status", isolate ? std::vector<std::string>{} : std::vector<std::string>{"--no-isolate"});
    expect_fault_contained(c, "crashed", "gemm_run() returned DEVICE_ERROR (4): fault_status: simulated device failure at K = 1024");
    CHECK(c.cmd.exit_code == 3);
  }
}

TEST_CASE("run-suite takes repeated --plugin: a faulty kernel beside an honest one fails alone") {
  const std::string dir = fpcert::test::scratch_dir("run_suite_two_plugins");
  const auto r = run_command({kFpcert, "run-suite", "quick", "--mn", "16", "--kernels", "fault_segv,example_gemm_f16_f32acc",
                              "--plugin", lib("fault_segv"), "--plugin", kExample, "--json", dir + "/r.json"});
  INFO(r.output);
  CHECK(r.exit_code == 3);
  const auto j = nlohmann::json::parse(fpcert::test::read_text(dir + "/r.json"));
  int example = 0, example_pass = 0, segv_fault_cases = 0, segv_crashed = 0;
  for (const auto& c : j.at("cases")) {
    if (c.at("kernel") == "example_gemm_f16_f32acc") {
      ++example;
      example_pass += c.at("status") == "pass";
    }
    if (c.at("kernel") == "fault_segv" && c.at("k") == 1024) {
      ++segv_fault_cases;
      segv_crashed += c.at("status") == "crashed";
    }
  }
  CHECK(example > 0);
  CHECK(example_pass == example);
  CHECK(segv_fault_cases > 0);
  CHECK(segv_crashed == segv_fault_cases);
}

// ---- plugins that cannot be used: exit 2 before anything runs ---------------------------------------

TEST_CASE("bad plugins stop fpcert before anything runs - with a clear message and exit 2") {
  struct Bad {
    const char* file;
    std::vector<const char*> fragments;
  };
  const std::string host = "this fpcert speaks ABI 1." + std::to_string(FPCERT_PLUGIN_ABI_MINOR);
  const std::vector<Bad> bad = {
      {"libfault_not_elf.so", {"libfault_not_elf.so", "cannot be loaded"}},
      {"libfault_missing_dep.so", {"cannot be loaded", "libfpcert_test_missing_dep.so"}},
      {"libfault_no_symbol.so", {"does not export fpcert_plugin_enumerate()"}},
      {"libfault_abi_major.so", {"built against fpcert plugin ABI 2.0", host.c_str()}},
      {"libfault_enum_null.so", {"returned NULL", "simulated missing driver"}},
      {"libfault_bad_traits.so", {"3 problems", "unknown format value 99", "gemm.order is empty"}},
      {"libno_such_plugin.so", {"no such file"}},
  };
  for (const auto& b : bad) {
    CAPTURE(b.file);
    const Certified c = certify({kDir + "/" + b.file}, "anything");
    INFO(c.cmd.output);
    CHECK(c.cmd.exit_code == 2);
    CHECK(c.cmd.has("fpcert: error: plugin '"));
    for (const char* f : b.fragments) CHECK(c.cmd.has(f));
    CHECK_FALSE(c.json_written);        // nothing written
    CHECK_FALSE(c.cmd.has("max abs"));   // nothing ran: not even the table header
  }
  // A bad plugin beside a good one still stops the run: nothing runs half-configured.
  const Certified c = certify({kExample, lib("fault_abi_major")}, "example_gemm_f16_f32acc");
  CHECK(c.cmd.exit_code == 2);
  CHECK_FALSE(c.json_written);
}

TEST_CASE("fpcert kernels --plugin lists the plugin's GEMM and conversion kernels - a bad plugin is exit 2") {
  const auto r = run_command({kFpcert, "kernels", "--plugin", kExample});
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(r.has("example_gemm_f16_f32acc"));
  CHECK(r.has("naive CPU GEMM: fp16 storage, fp32 FMA along K [plugin example-cpu 1.0, host memory"));
  CHECK(r.has("example_cvt_f32_to_bf16"));
  CHECK(r.has("f32 -> bf16, rounding rn, saturation inf, NaN preserve, host memory"));
  const auto j = run_command({kFpcert, "kernels", "--json", "--plugin", kExample});
  CHECK(j.exit_code == 0);
  int plugin_entries = 0;
  for (const auto& k : nlohmann::json::parse(j.output)) plugin_entries += k.at("backend") == "plugin";
  CHECK(plugin_entries == 3);
  const auto bad = run_command({kFpcert, "kernels", "--plugin", lib("fault_no_symbol")});
  CHECK(bad.exit_code == 2);
  CHECK(bad.has("does not export"));
}

// ---- conversions ----------------------------------------------------------------------------------------

TEST_CASE("convert --plugin --kernel --exhaustive: honest conversions pass - a liar fails - faults are contained") {
  SUBCASE("bf16 -> f32 on all 65536 patterns, checked against MPFR on every one") {
    const auto r = run_command({kFpcert, "convert", "--plugin", kExample, "--kernel", "example_cvt_bf16_to_f32", "--exhaustive"});
    INFO(r.output);
    CHECK(r.exit_code == 0);
    CHECK(r.has("65536 patterns"));
    CHECK(r.has("MPFR on every pattern"));
    CHECK(r.has("PASS"));
  }
  SUBCASE("f32 -> bf16 over a range: the top binade, overflow to Inf, NaNs; JSON and HTML written") {
    const std::string dir = fpcert::test::scratch_dir("convert_range");
    const auto r = run_command({kFpcert, "convert", "--plugin", kExample, "--kernel", "example_cvt_f32_to_bf16", "--exhaustive",
                                "--range", "0x7f7f0000:0x20000", "--json", dir + "/c.json", "--html", dir + "/c.html"});
    INFO(r.output);
    CHECK(r.exit_code == 0);
    const auto j = nlohmann::json::parse(fpcert::test::read_text(dir + "/c.json"));
    CHECK(j.at("passed") == true);
    CHECK(j.at("patterns") == 0x20000);
    CHECK(j.at("outcomes").at("overflow_inf").get<int>() > 0);
    CHECK(fpcert::test::read_text(dir + "/c.html").find("example_cvt_f32_to_bf16") != std::string::npos);
  }
  SUBCASE("a kernel that truncates while claiming nearest-even: mismatches listed, exit 1") {
    const auto r = run_command({kFpcert, "convert", "--plugin", lib("fault_cvt"), "--kernel", "fault_cvt_truncates", "--exhaustive",
                                "--range", "0x3f800000:65536"});
    INFO(r.output);
    CHECK(r.exit_code == 1);
    CHECK(r.has("MISMATCH f32 0x3f808001"));
    CHECK(r.has("mismatches: 32767"));  // discarded bits 0x8001..0xffff round up under nearest-even
    CHECK(r.has("FAIL"));
  }
  SUBCASE("a kernel that writes past its output: the guard catches it, exit 3") {
    const auto r = run_command({kFpcert, "convert", "--plugin", lib("fault_cvt"), "--kernel", "fault_cvt_oob", "--exhaustive"});
    INFO(r.output);
    CHECK(r.exit_code == 3);
    CHECK(r.has("CRASHED: plugin kernel 'fault_cvt_oob' wrote past the end of its output"));
  }
  SUBCASE("a kernel that segfaults: its child dies, fpcert reports it, exit 3; without isolation fpcert dies") {
    const auto r = run_command({kFpcert, "convert", "--plugin", lib("fault_cvt"), "--kernel", "fault_cvt_segv", "--exhaustive"});
    INFO(r.output);
    CHECK(r.exit_code == 3);
    CHECK(r.has("CRASHED: the kernel's process died with signal 11"));
    const auto n = run_command({kFpcert, "convert", "--plugin", lib("fault_cvt"), "--kernel", "fault_cvt_segv", "--exhaustive", "--no-isolate"});
    CHECK(n.signal == 11);
  }
  SUBCASE("usage errors: a GEMM kernel, a claim contradicted on the command line, an unknown kernel") {
    auto r = run_command({kFpcert, "convert", "--plugin", kExample, "--kernel", "example_gemm_f16_f32acc", "--exhaustive"});
    CHECK(r.exit_code == 2);
    CHECK(r.has("a GEMM kernel, not a conversion"));
    r = run_command({kFpcert, "convert", "--plugin", kExample, "--kernel", "example_cvt_bf16_to_f32", "--exhaustive", "--rounding", "rz"});
    CHECK(r.exit_code == 2);
    CHECK(r.has("--rounding rz: kernel 'example_cvt_bf16_to_f32' claims rn"));
    r = run_command({kFpcert, "convert", "--plugin", kExample, "--kernel", "nope", "--exhaustive"});
    CHECK(r.exit_code == 2);
    CHECK(r.has("conversion kernels: example_cvt_bf16_to_f32, example_cvt_f32_to_bf16"));
  }
}

// ---- fpcert.toml ------------------------------------------------------------------------------------------

TEST_CASE("certify --config runs the project's plugins - kernels and suites and writes JSON and JUnit") {
  const std::string dir = fpcert::test::scratch_dir("config_ok");
  fpcert::test::write_text(dir + "/fpcert.toml", "plugins = [\"" + kExample + "\", \"" + lib("fault_not_supported") + "\"]\n"
                                                 "kernels = [\"example_gemm_f16_f32acc\", \"fault_not_supported\"]\n"
                                                 "suites = [\"quick\", \"accuracy-vs-k\"]\n"
                                                 "[gate]\nmn = 16\nfactor = 2\n"
                                                 "[output]\njson = \"out/results.json\"\njunit = \"out/junit.xml\"\nhtml = \"out/report.html\"\n");
  const auto r = run_command({kFpcert, "certify", "--config", dir + "/fpcert.toml"});
  INFO(r.output);
  CHECK(r.exit_code == 1);  // fault_not_supported's run() declines K = 512 after the data: a failure
  CHECK(r.has("== suite quick =="));
  CHECK(r.has("== suite accuracy-vs-k =="));
  CHECK(fpcert::test::read_text(dir + "/out/report.html").find("<html") != std::string::npos);  // output.html
  const auto j = nlohmann::json::parse(fpcert::test::read_text(dir + "/out/results.json"));
  CHECK(j.at("suite") == "quick+accuracy-vs-k");
  int quick = 0, vs_k = 0, example_failed = 0;
  for (const auto& c : j.at("cases")) {
    quick += c.at("suite") == "quick";
    vs_k += c.at("suite") == "accuracy-vs-k";
    example_failed += c.at("kernel") == "example_gemm_f16_f32acc" && c.at("status") != "pass";
  }
  CHECK(quick > 0);
  CHECK(vs_k > 0);
  CHECK(quick + vs_k == static_cast<int>(j.at("cases").size()));
  CHECK(example_failed == 0);
  const std::string junit = fpcert::test::read_text(dir + "/out/junit.xml");
  CHECK(junit.find("<testsuite name=\"quick\"") != std::string::npos);
  CHECK(junit.find("<testsuite name=\"accuracy-vs-k\"") != std::string::npos);
  CHECK(junit.find("<skipped message=\"plugin kernel &#39;fault_not_supported&#39; does not implement m=16 n=16 k=1024") !=
        std::string::npos);

  // The command line wins over the config: only one kernel, one suite.
  const auto o = run_command({kFpcert, "certify", "--config", dir + "/fpcert.toml", "--kernel", "example_gemm_f16_f32acc", "--suite",
                              "quick", "--json", dir + "/cli.json"});
  CHECK(o.exit_code == 0);
  const auto cli = nlohmann::json::parse(fpcert::test::read_text(dir + "/cli.json"));
  CHECK(cli.at("suite") == "quick");
  for (const auto& c : cli.at("cases")) CHECK(c.at("kernel") == "example_gemm_f16_f32acc");
}

TEST_CASE("certify --config: a fault in the project's plugin fails the run with exit 3 and a JUnit error") {
  const std::string dir = fpcert::test::scratch_dir("config_fault");
  fpcert::test::write_text(dir + "/fpcert.toml", "plugins = [\"" + lib("fault_segv") + "\"]\nkernels = [\"fault_segv\"]\n"
                                                 "suites = [\"quick\"]\n[gate]\nmn = 16\n[output]\njunit = \"junit.xml\"\n");
  const auto r = run_command({kFpcert, "certify", "--config", dir + "/fpcert.toml"});
  INFO(r.output);
  CHECK(r.exit_code == 3);
  const std::string junit = fpcert::test::read_text(dir + "/junit.xml");
  CHECK(junit.find("type=\"crashed\"") != std::string::npos);
}

TEST_CASE("certify --config: unknown keys and wrong types are exit 2 naming the key - the line and the valid keys") {
  const std::string dir = fpcert::test::scratch_dir("config_bad");
  fpcert::test::write_text(dir + "/a.toml", "kernels = [\"x\"]\n\nkernal = [\"y\"]\n");
  auto r = run_command({kFpcert, "certify", "--config", dir + "/a.toml"});
  CHECK(r.exit_code == 2);
  CHECK(r.has("a.toml:3:1: unknown key 'kernal' at the top level (valid keys: plugins, kernels, suites, isolate, timeout, gate, orders, output, determinism, nan, audit)"));
  fpcert::test::write_text(dir + "/b.toml", "kernels = [\"x\"]\n[gate]\nfactor = \"two\"\n");
  r = run_command({kFpcert, "certify", "--config", dir + "/b.toml"});
  CHECK(r.exit_code == 2);
  CHECK(r.has("b.toml:3:10: 'gate.factor' must be a number, got a string"));
  r = run_command({kFpcert, "certify", "--config", dir + "/missing.toml"});
  CHECK(r.exit_code == 2);
  CHECK(r.has("cannot read"));
}

TEST_CASE("certify --config: [nan] states the NaN convention of a minor 1 plugin's conversion kernel, enforced exactly") {
  // libnan_legacy_cpu.so (tests/plugin/fixtures/nan_plugin.cpp, a table built for ABI minor 1) declares PRESERVE
  // and writes NVIDIA's 0x7fffffff for the 254 bf16 NaNs: counted apart as a minor 1 preserve, right as nvidia,
  // wrong as canonical (0x7fc00000), refused as ml_dtypes (f32 has a NaN).
  const std::string dir = fpcert::test::scratch_dir("config_nan");
  auto run_with = [&](const std::string& convention) {
    fpcert::test::write_text(dir + "/fpcert.toml", "plugins = [\"" + lib("nan_legacy_cpu") + "\"]\nkernels = [\"nan_legacy_bf16_f32_preserve\"]\n"
                                                   "suites = [\"conversions\"]\n" +
                                                       (convention.empty() ? "" : "[nan]\nnan_legacy_bf16_f32_preserve = \"" + convention + "\"\n"));
    return run_command({kFpcert, "certify", "--config", dir + "/fpcert.toml", "--no-mutation"});
  };
  auto r = run_with("");
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(r.has("nan_legacy_bf16_f32_preserve           pass            65536          0       254"));
  r = run_with("nvidia");
  CHECK(r.exit_code == 0);
  CHECK(r.has("nan_legacy_bf16_f32_preserve           pass            65536          0         0"));
  r = run_with("canonical");
  CHECK(r.exit_code == 1);
  CHECK(r.has("254 of 65536 results differ from the truth"));
  r = run_with("ml_dtypes");
  CHECK(r.exit_code == 2);
  CHECK(r.has("ml_dtypes is the convention of finite-only destinations"));
}
