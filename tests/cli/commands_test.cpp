// tests/cli/commands_test.cpp — the fpcert command in-process (cli::run, the fpcert_cli library): the
// conversions suite through certify and run-suite, `convert --exhaustive` as a front-end of the same
// runner, `kernels` listing both operations, and the exit code 2 for a kernel of the wrong kind.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "tests/support/cli_in_process.hpp"
#include "oracle/convert/convert_check.hpp"

using namespace fpcert;
namespace fs = std::filesystem;

namespace {

using Ran = test::CliRun;
constexpr auto& fpcert_run = test::run_cli;  // cli::run(argv) with stdout captured

nlohmann::json read_json(const fs::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

fs::path scratch(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("fpcert_cli_test_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d / name;
}

}  // namespace

TEST_CASE("certify --suite conversions: conversion kernels as cases, a run of kind conversion, exit 0") {
  const fs::path j = scratch("conv.json");
  const Ran r = fpcert_run({"certify", "--suite", "conversions", "--kernel", "model_bf16_to_f32,model_e4m3_to_f16", "--json", j.string()});
  CHECK(r.code == 0);
  CHECK(r.out.find("CERTIFIED: 2 case(s) passed") != std::string::npos);
  const auto doc = read_json(j);
  CHECK(doc.at("kind") == "conversion");
  REQUIRE(doc.at("cases").size() == 2);
  for (const auto& c : doc.at("cases")) {
    CHECK(c.at("status") == "pass");
    CHECK(c.at("conversion").at("mismatches") == 0);
  }
  // bf16 -> f32 is exact: every one of the 65536 patterns is an exact, zero, inf or NaN outcome.
  CHECK(doc.at("cases")[0].at("conversion").at("patterns") == 65536);
}

TEST_CASE("run-suite conversions --case: one kernel of the list") {
  const fs::path j = scratch("one.json");
  const Ran r = fpcert_run({"run-suite", "conversions", "--kernels", "model_bf16_to_f32,model_e4m3_to_f16", "--case", "model_e4m3_to_f16",
                            "--json", j.string()});
  CHECK(r.code == 0);
  const auto doc = read_json(j);
  REQUIRE(doc.at("cases").size() == 1);
  CHECK(doc.at("cases")[0].at("kernel") == "model_e4m3_to_f16");
}

TEST_CASE("a kernel of the other operation is a usage error (exit 2)") {
  CHECK(fpcert_run({"certify", "--suite", "conversions", "--kernel", "model_gemm_f32"}).code == 2);
  CHECK(fpcert_run({"certify", "--suite", "quick", "--kernel", "model_bf16_to_f32"}).code == 2);
}

TEST_CASE("convert --exhaustive goes through the runner: the counts of the oracle's own check") {
  const fs::path j = scratch("bf16_f16.json");
  const Ran r = fpcert_run({"convert", "--from", "bf16", "--to", "f16", "--exhaustive", "--json", j.string()});
  CHECK(r.code == 0);
  CHECK(r.out.find("65536 patterns, each checked against MPFR") != std::string::npos);
  const auto doc = read_json(j);
  ConvertCheckSpec spec;
  spec.src = &bf16;
  spec.dst = &f16;
  const ConvertCheckResult truth = check_conversion(spec);
  CHECK(doc.at("patterns") == truth.patterns);
  CHECK(doc.at("outcomes").at("underflow_zero") == truth.outcomes[static_cast<int>(Outcome::UnderflowZero)]);
  CHECK(doc.at("outcomes").at("rounded_subnormal") == truth.outcomes[static_cast<int>(Outcome::RoundedSubnormal)]);
  CHECK(truth.outcomes[static_cast<int>(Outcome::RoundedSubnormal)] > 0);  // it rounds: the counts could differ
}

TEST_CASE("kernels --json lists GEMM and conversion kernels from the one registry") {
  const Ran r = fpcert_run({"kernels", "--json"});
  CHECK(r.code == 0);
  const auto arr = nlohmann::json::parse(r.out);
  bool gemm = false, conv = false;
  for (const auto& k : arr) {
    gemm = gemm || (k.at("operation") == "gemm" && k.at("name") == "model_gemm_f32");
    conv = conv || (k.at("operation") == "conversion" && k.at("name") == "model_f32_to_f16_rn");
  }
  CHECK(gemm);
  CHECK(conv);
}
