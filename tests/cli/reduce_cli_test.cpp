// tests/cli/reduce_cli_test.cpp — reductions end to end through the command: `fpcert kernels` lists a reduction
// kernel with its operation, `fpcert certify --kernel K` with the default suite runs the reduce suite on it (exit 0
// for a correct model, 1 for one that drops an element), and its JSON carries the reduction record.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/support/cli_in_process.hpp"
#include "tests/support/reduce_test_kernels.hpp"

namespace fpcert {

TEST_CASE("fpcert kernels / certify: a reduction kernel end to end") {
  test::register_test_kernels();
  const test::CliRun k = test::run_cli({"kernels", "--json"});
  REQUIRE(k.code == 0);
  const auto arr = nlohmann::json::parse(k.out);
  bool listed = false;
  for (const auto& e : arr)
    if (e.at("name") == "test_sum_f32_seq") listed = e.at("operation") == "reduction" && e.at("kind") == "sum";
  CHECK(listed);

  const auto json = std::filesystem::temp_directory_path() / "fpcert_reduce_cli_test.json";
  const test::CliRun ok = test::run_cli({"certify", "--kernel", "test_sum_f32_seq", "--json", json.string()});
  CAPTURE(ok.out);
  CHECK(ok.code == 0);
  std::ifstream in(json);
  const auto j = nlohmann::json::parse(in);
  const std::string dump = j.dump();
  CHECK(dump.find("\"operation\":\"reduction\"") != std::string::npos);
  CHECK(dump.find("\"suite\":\"reduce\"") != std::string::npos);

  const test::CliRun bad = test::run_cli({"certify", "--kernel", "test_sum_f32_droplast", "--suite", "quick"});
  CAPTURE(bad.out);
  CHECK(bad.code == 1);
  std::filesystem::remove(json);
}

}  // namespace fpcert

namespace fpcert {

TEST_CASE("fpcert report: a reduction run has its section with the worst vector's bound terms") {
  test::register_test_kernels();
  const auto dir = std::filesystem::temp_directory_path();
  const auto json = dir / "fpcert_reduce_report_test.json", html = dir / "fpcert_reduce_report_test.html";
  REQUIRE(test::run_cli({"certify", "--kernel", "test_dot_f32_seq", "--suite", "quick", "--json", json.string()}).code == 0);
  REQUIRE(test::run_cli({"report", json.string(), "-o", html.string()}).code == 0);
  std::ifstream in(html);
  const std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(page.find("Reductions: suite reduce_quick") != std::string::npos);
  CHECK(page.find("accumulation") != std::string::npos);  // a bound term's name
  std::filesystem::remove(json);
  std::filesystem::remove(html);
}

}  // namespace fpcert

namespace fpcert {

TEST_CASE("fpcert mutate: a reduction kernel's mutation score with the default suite") {
  test::register_test_kernels();
  const test::CliRun r = test::run_cli({"mutate", "--kernel", "test_sum_f32_seq"});
  CAPTURE(r.out);
  CHECK(r.code == 0);
  CHECK(r.out.find("red_drop") != std::string::npos);
  CHECK(r.out.find("100") != std::string::npos);  // 100 % of the applicable faults killed
}

TEST_CASE("fpcert certify: the certify level reaches every operation; a kernel no suite of the run certifies is refused") {
  test::register_test_kernels();
  // A GEMM model and a reduction kernel at the quick level: the GEMM model on `quick`, the reduction on
  // `reduce_quick`, one run, one verdict; the JSON holds both suites and each case under its own.
  const auto json = std::filesystem::temp_directory_path() / "fpcert_reduce_cli_mixed.json";
  const test::CliRun mixed =
      test::run_cli({"certify", "--kernel", "model_gemm_f32,test_sum_f32_seq", "--suite", "quick", "--no-mutation", "--json", json.string()});
  CAPTURE(mixed.out);
  CHECK(mixed.code == 0);
  CHECK(mixed.out.find("== suite quick ==") != std::string::npos);
  CHECK(mixed.out.find("== suite reduce_quick ==") != std::string::npos);
  std::ifstream in(json);
  const auto j = nlohmann::json::parse(in);
  int gemm = 0, reduce = 0, wrong = 0;
  for (const auto& c : j.at("cases")) {
    const bool is_reduce = c.at("kernel") == "test_sum_f32_seq";
    (is_reduce ? reduce : gemm) += 1;
    wrong += (c.at("suite") == "reduce_quick") != is_reduce;
  }
  CHECK(gemm > 0);
  CHECK(reduce > 0);
  CHECK(wrong == 0);
  std::filesystem::remove(json);
  // The buggy reduction among correct GEMM models still fails the whole run.
  const test::CliRun bad = test::run_cli({"certify", "--kernel", "model_gemm_f32,test_sum_f32_droplast", "--suite", "quick", "--no-mutation"});
  CHECK(bad.code == 1);
  // A suite of GEMM only (scale) cannot certify a reduction: exit 2, naming the suites that can.
  const test::CliRun refused = test::run_cli({"certify", "--kernel", "test_sum_f32_seq", "--suite", "scale"});
  CHECK(refused.code == 2);  // the message (stderr): "... is a reduction kernel and no suite of this run (scale) certifies ..."
}

}  // namespace fpcert
