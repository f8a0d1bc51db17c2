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
        "/repo/fpcert.toml:2:1: unknown key 'kernal' at the top level (valid keys: plugins, kernels, suites, isolate, timeout, gate, orders, output)");
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
  CHECK(error_of("[gate]\nfactor = -1\n").find("'gate.factor' must be > 0") != std::string::npos);
  CHECK(error_of("timeout = 0\n").find("'timeout' must be > 0") != std::string::npos);
  CHECK(error_of("kernels = [\"\"]\n").find("element 0 is an empty string") != std::string::npos);
}

TEST_CASE("TOML syntax errors carry the position") {
  const std::string e = error_of("kernels = [\"a\"\nsuites = 1\n");
  CHECK(e.rfind("/repo/fpcert.toml:", 0) == 0);
  CHECK(e.find("TOML syntax") != std::string::npos);
}
