// tests/cli/config_test.cpp — fpcert.toml parsing in-process: every key, relative paths, and the
// messages for unknown keys, wrong types, bad values and TOML syntax (file:line:column, valid keys).
#include <doctest/doctest.h>

#include "base/error.hpp"
#include "cli/config.hpp"

using fpcert::InputError;
using fpcert::cli::parse_project_config;
using fpcert::cli::ProjectConfig;

namespace {

std::string error_of(const std::string& text) {
  try {
    parse_project_config(text, "/repo/fpcert.toml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("a full fpcert.toml: every key read - relative paths anchored at the file's folder") {
  const ProjectConfig c = parse_project_config(R"(
plugins = ["build/libfoo.so", "/abs/libbar.so"]
kernels = ["foo_gemm", "bar_gemm"]
suites = ["quick", "certify"]
isolate = false
timeout = 90.5

[gate]
variant = "componentwise"
baseline = "model_gemm_f16_f32acc"
factor = 3
mn = 128
tier = "envelope+statistical"

[orders]
foo_gemm = "splitk:splits=4,combine=pairwise,step=fma"

[output]
json = "out/results.json"
junit = "out/junit.xml"
html = "/tmp/report.html"
)",
                                               "/repo/ci/fpcert.toml");
  CHECK(c.plugins == std::vector<std::string>{"/repo/ci/build/libfoo.so", "/abs/libbar.so"});
  CHECK(c.kernels == std::vector<std::string>{"foo_gemm", "bar_gemm"});
  CHECK(c.suites == std::vector<std::string>{"quick", "certify"});
  CHECK(c.isolate == false);
  CHECK(c.timeout_s == 90.5);
  CHECK(c.variant == "componentwise");
  CHECK(c.baseline == "model_gemm_f16_f32acc");
  CHECK(c.factor == 3.0);  // an integer is a number
  CHECK(c.mn == 128);
  CHECK(c.tier == "envelope+statistical");
  REQUIRE(c.orders.size() == 1);
  CHECK(c.orders[0].first == "foo_gemm");
  CHECK(c.orders[0].second == "splitk:splits=4,combine=pairwise,step=fma");
  CHECK(c.json == "/repo/ci/out/results.json");
  CHECK(c.junit == "/repo/ci/out/junit.xml");
  CHECK(c.html == "/tmp/report.html");
}

TEST_CASE("an empty file is valid and sets nothing") {
  const ProjectConfig c = parse_project_config("", "fpcert.toml");
  CHECK(c.plugins.empty());
  CHECK(c.kernels.empty());
  CHECK_FALSE(c.isolate.has_value());
  CHECK_FALSE(c.json.has_value());
}

TEST_CASE("unknown keys name the key - the line and column - the table and the valid keys") {
  CHECK(error_of("kernels = []\nkernal = [\"x\"]\n") ==
        "/repo/fpcert.toml:2:1: unknown key 'kernal' at the top level (valid keys: plugins, kernels, suites, isolate, timeout, gate, orders, output, determinism, nan, audit)");
  CHECK(error_of("[gate]\nvariant = \"independent\"\nfactr = 2\n") ==
        "/repo/fpcert.toml:3:1: unknown key 'factr' in [gate] (valid keys: variant, baseline, factor, mn, tier)");
  CHECK(error_of("[output]\nxml = \"a.xml\"\n") == "/repo/fpcert.toml:2:1: unknown key 'xml' in [output] (valid keys: json, junit, html)");
  CHECK(error_of("[gates]\nmn = 1\n").find("unknown key 'gates' at the top level") != std::string::npos);
}

TEST_CASE("wrong types name the key - what it must be and what it got") {
  CHECK(error_of("kernels = \"foo\"\n") ==
        "/repo/fpcert.toml:1:11: 'kernels' must be an array of strings, e.g. kernels = [\"...\"], got a string");
  CHECK(error_of("plugins = [\"a.so\", 3]\n") == "/repo/fpcert.toml:1:20: 'plugins' must be an array of strings; element 1 is an integer");
  CHECK(error_of("isolate = \"yes\"\n") == "/repo/fpcert.toml:1:11: 'isolate' must be true or false, got a string");
  CHECK(error_of("[gate]\nmn = 1.5\n") == "/repo/fpcert.toml:2:6: 'gate.mn' must be an integer, got a number");
  CHECK(error_of("[gate]\nfactor = \"2\"\n") == "/repo/fpcert.toml:2:10: 'gate.factor' must be a number, got a string");
  CHECK(error_of("gate = 3\n") == "/repo/fpcert.toml:1:8: 'gate' must be a table ([gate]), got an integer");
  CHECK(error_of("[output]\njson = 1\n") == "/repo/fpcert.toml:2:8: 'output.json' must be a string, got an integer");
}

TEST_CASE("bad values: unknown suite and variant - non-positive numbers - empty strings") {
  CHECK(error_of("suites = [\"quick\", \"fast\"]\n").find("1:20: 'suites': unknown suite 'fast' (valid: quick,") != std::string::npos);
  CHECK(error_of("[gate]\nvariant = \"loose\"\n").find("'gate.variant': expected independent, componentwise or worstcase, got 'loose'") !=
        std::string::npos);
  CHECK(error_of("[gate]\nmn = 0\n").find("'gate.mn' must be a positive integer") != std::string::npos);
  CHECK(error_of("[gate]\ntier = \"strict\"\n") ==
        "/repo/fpcert.toml:2:8: 'gate.tier': expected bitwise, envelope+statistical or envelope, got 'strict'");
  CHECK(error_of("[orders]\nfoo = \"splitk:splits=1\"\n").find("'orders.foo': order 'splitk:splits=1': splitk needs splits >= 2") !=
        std::string::npos);
  CHECK(error_of("[orders]\nfoo = 3\n") == "/repo/fpcert.toml:2:7: 'orders.foo' must be a string, got an integer");
  CHECK(error_of("[gate]\nfactor = -1\n").find("'gate.factor' must be a finite number > 0") != std::string::npos);
  CHECK(error_of("[gate]\nfactor = inf\n").find("'gate.factor' must be a finite number > 0") != std::string::npos);
  CHECK(error_of("[gate]\nmn = 2000000000\n").find("'gate.mn' must be a positive integer (at most 2^30)") != std::string::npos);
  // The same bounds as --timeout: 0 and 1e-9 would make every case "hung".
  CHECK(error_of("timeout = 0\n") == "/repo/fpcert.toml:1:11: 'timeout' must be seconds per case in [0.1, 10000000]");
  CHECK(error_of("timeout = 1e-9\n").find("'timeout' must be seconds per case in [0.1, 10000000]") != std::string::npos);
  CHECK(error_of("timeout = nan\n").find("'timeout' must be seconds per case in [0.1, 10000000]") != std::string::npos);
  CHECK(error_of("kernels = [\"\"]\n").find("element 0 is an empty string") != std::string::npos);
}

TEST_CASE("TOML syntax errors carry the position") {
  const std::string e = error_of("kernels = [\"a\"\nsuites = 1\n");
  CHECK(e.rfind("/repo/fpcert.toml:", 0) == 0);
  CHECK(e.find("TOML syntax") != std::string::npos);
}

TEST_CASE("non-ASCII text: kept in strings (basic and literal) and comments, refused elsewhere with its position") {
  // The reader hands toml++ ASCII only (escapes in strings): toml++ 3.3 has undefined behaviour on most
  // non-ASCII characters outside strings (docs/errors.md). The values must come through unchanged.
  const ProjectConfig c = parse_project_config(
      "# r\xc3\xa9sum\xc3\xa9 \xe2\x80\x94 comment\n"
      "plugins = [\"build/lib\xc3\xa9t\xc3\xa9.so\", 'C:\\dir\\\"q\"\\lib\xce\xbb.so', '''\xf0\x9f\x98\x80\\x''']\n"
      "kernels = [\"a\\tb\", 'tab\\t']\n",
      "/repo/fpcert.toml");
  REQUIRE(c.plugins.size() == 3);
  CHECK(c.plugins[0] == "/repo/build/lib\xc3\xa9t\xc3\xa9.so");
  CHECK(c.plugins[1] == "/repo/C:\\dir\\\"q\"\\lib\xce\xbb.so");
  CHECK(c.plugins[2] == "/repo/\xf0\x9f\x98\x80\\x");
  CHECK(c.kernels == std::vector<std::string>{"a\tb", "tab\\t"});
  CHECK(error_of("ke\xce\xbbnel = 1\n") == "/repo/fpcert.toml:1:3: a non-ASCII character outside a string or comment");
  CHECK(error_of("factor = 2'd\xcf\x92\n") == "/repo/fpcert.toml:1:13: a non-ASCII character outside a string or comment");
  CHECK(error_of("kernels = [\"\xc3\x28\"]\n").find(":1:13: invalid UTF-8") != std::string::npos);
  CHECK(error_of("kernels = [\"\\\xc3\xa9\"]\n").find("not an escape") != std::string::npos);
}

TEST_CASE("inputs that trip toml++ are refused before it sees them: control characters, a header without its key") {
  CHECK(error_of("suites = \x01\n").find("fpcert.toml:1:10: control character 0x01") != std::string::npos);
  CHECK(error_of("suites = [\"quick\"]\x7f\n").find("control character 0x7f") != std::string::npos);
  CHECK(error_of("  [[[plugins]]]\n").find("fpcert.toml:1:5: TOML syntax: a table header needs a key") != std::string::npos);
  CHECK(error_of("[ !x]\n").find("a table header needs a key") != std::string::npos);
  CHECK(error_of("suites = [\"quick\"]\r\n") == "(no error)");
}

TEST_CASE("[nan]: the NaN convention of plugin conversion kernels, by name - unknown conventions refused with the valid list") {
  const ProjectConfig c = parse_project_config("kernels = [\"foo_cvt\"]\n[nan]\nfoo_cvt = \"nvidia\"\nbar_cvt = \"ml_dtypes\"\n",
                                               "/repo/fpcert.toml");
  REQUIRE(c.nan.size() == 2);  // in toml++'s key order
  CHECK(c.nan[0] == std::pair<std::string, std::string>{"bar_cvt", "ml_dtypes"});
  CHECK(c.nan[1] == std::pair<std::string, std::string>{"foo_cvt", "nvidia"});
  const std::string e = error_of("[nan]\nfoo = \"quiet\"\n");
  CHECK(e.find("/repo/fpcert.toml:2:7: 'nan.foo': unknown NaN convention 'quiet' (valid: preserve") == 0);
  CHECK(error_of("[nan]\nfoo = 3\n") == "/repo/fpcert.toml:2:7: 'nan.foo' must be a string, got an integer");
}

TEST_CASE("[audit]: the check fpcert audit --config reads - and its bad values named") {
  const ProjectConfig c = parse_project_config(
      "[audit]\ntraits = \"in=bf16,acc=f32,out=bf16\"\nm = 32\nn = 16\nk = 96\ninputs = \"uniform:lo=0,hi=1\"\nseeds = [1, 2]\n"
      "rule = \"kref:k=2,p=bf16\"\nsample_rows = \"all\"\n",
      "/repo/fpcert.toml");
  CHECK(*c.audit.traits == "in=bf16,acc=f32,out=bf16");
  CHECK(*c.audit.m == 32);
  CHECK(*c.audit.n == 16);
  CHECK(*c.audit.k == 96);
  CHECK(*c.audit.inputs == "uniform:lo=0,hi=1");
  CHECK(*c.audit.seeds == std::vector<std::uint64_t>{1, 2});
  CHECK(*c.audit.rule == "kref:k=2,p=bf16");
  CHECK(*c.audit.sample_rows == "all");
  CHECK_FALSE(c.audit.kernel.has_value());
  CHECK(*parse_project_config("[audit]\nsample_rows = 8\n", "/repo/fpcert.toml").audit.sample_rows == "8");
  CHECK(error_of("[audit]\nrule = \"cosine:tol=1\"\n").find("fpcert.toml:2:8: 'audit.rule': rule 'cosine:tol=1': unknown key 'tol'") != std::string::npos);
  CHECK(error_of("[audit]\nseedz = [1]\n").find("unknown key 'seedz' in [audit]") != std::string::npos);
  CHECK(error_of("[audit]\nseeds = []\n").find("non-empty array") != std::string::npos);
  CHECK(error_of("[audit]\nseeds = [-1]\n").find("every seed is an integer >= 0") != std::string::npos);
  CHECK(error_of("[audit]\nm = 0\n").find("'audit.m' must be an integer in [1, 2^20]") != std::string::npos);
  CHECK(error_of("[audit]\nsample_rows = \"some\"\n").find("auto, all or a positive integer") != std::string::npos);
  // the test's reference, its own tensors (relative to the file's folder) and batch invariance
  const ProjectConfig t = parse_project_config("[audit]\nreference = \"out\"\na = \"t/A.npy\"\nb = \"/abs/B.npy\"\nbatch_invariant = true\n",
                                               "/repo/fpcert.toml");
  CHECK(*t.audit.reference == "out");
  CHECK(*t.audit.a == "/repo/t/A.npy");
  CHECK(*t.audit.b == "/abs/B.npy");
  CHECK(*t.audit.batch_invariant);
  CHECK(error_of("[audit]\nreference = \"fp64\"\n").find("'audit.reference': 'fp64' is not a reference (valid: exact, f32, out)") !=
        std::string::npos);
  CHECK(error_of("[audit]\nbatch_invariant = 1\n").find("'audit.batch_invariant' must be true or false") != std::string::npos);
  CHECK(error_of("[audit]\na = \"\"\n").find("'audit.a' is an empty path") != std::string::npos);
}
