// tests/support/certify_command.hpp — `fpcert certify --plugin LIB --kernel K --suite S --json` as a user runs it, for the
// GPU tests of device plugins (tests/plugin/*_plugin_gpu_test.cpp): exit 0, and every case of the JSON a pass.
#pragma once

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <string>

#include "tests/support/run_command.hpp"

namespace fpcert::test {

/// Runs the certificate and checks it: exit 0 and every case "pass"; returns how many cases the JSON holds.
inline int certify_all_pass(const std::string& fpcert, const std::string& lib, const std::string& kernel, const std::string& suite) {
  const std::string json = scratch_dir("gpu_" + kernel + "_" + suite) + "/r.json";
  const CommandResult c = run_command({fpcert, "certify", "--plugin", lib, "--kernel", kernel, "--suite", suite, "--json", json});
  INFO(c.output);
  CHECK(c.exit_code == 0);
  const std::string text = read_text(json);
  REQUIRE(!text.empty());
  const nlohmann::json doc = nlohmann::json::parse(text);
  int cases = 0;
  for (const auto& cs : doc.at("cases")) {
    CAPTURE(cs.at("case").get<std::string>());
    CHECK(cs.at("status").get<std::string>() == "pass");
    ++cases;
  }
  return cases;
}

}  // namespace fpcert::test
