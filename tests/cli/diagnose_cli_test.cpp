// tests/cli/diagnose_cli_test.cpp — `certify --diagnose` and the diagnoses in the HTML report (docs/diagnose.md, issue 47),
// driven as a subprocess on CPU mutants: the console section, the JSON file, the report's section (checked by the
// strict HTML checker with every number resolved in the diagnosis JSON), `fpcert report` on a diagnosis file, the
// exit codes (certify's own, unchanged by --diagnose), the passing-kernel hint, and `diagnose` on reduction and norm
// models (their exit codes, JSON and --identify).
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "base/atomic_file.hpp"
#include "tests/support/run_command.hpp"

using fpcert::test::CommandResult;
using fpcert::test::run_command;

namespace {

const std::string kFpcert = fpcert::test::env_or("FPCERT_BIN", FPCERT_BIN);

nlohmann::json read_json(const std::string& path) { return nlohmann::json::parse(fpcert::test::read_text(path)); }

/// tests/reports/check_html.py on `html` with the documents `srcs` ("r0=FILE"): its exit code, its output in `out`.
int check_html(const std::string& html, const std::vector<std::string>& srcs, const std::string& log, std::string& out) {
  std::string cmd = "python3 '" + std::string(FPCERT_SOURCE_DIR) + "/tests/reports/check_html.py' '" + html + "'";
  for (const std::string& s : srcs) cmd += " --src '" + s + "'";
  cmd += " > '" + log + "' 2>&1";
  const int rc = std::system(cmd.c_str());
  out = fpcert::test::read_text(log);
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

}  // namespace

TEST_CASE("certify --diagnose FILE --html: a failing CPU mutant's diagnosis in the console, the JSON and the report") {
  const std::string dir = fpcert::test::scratch_dir("diagnose_cli");
  // The fp32 model with its partial sums carried in bf16 (8 bits): on uniform_positive (K = 512, every product
  // positive) the sums grow past 2^8 ulps of bf16 and fail the fp32 bound; the fault is a hypothesis of the catalogue.
  const CommandResult r = run_command({kFpcert, "certify", "--kernel", "model_gemm_f32~acc_bf16", "--case", "uniform_positive",
                                       "--no-mutation", "--json", dir + "/run.json", "--html", dir + "/run.html", "--diagnose",
                                       dir + "/diag.json"});
  INFO(r.output);
  CHECK(r.exit_code == 1);  // certify's verdict (a gate failed), not the diagnosis's
  CHECK(r.has("diagnosis of model_gemm_f32~acc_bf16"));
  CHECK(r.has("hypotheses in"));
  const nlohmann::json d = read_json(dir + "/diag.json");
  REQUIRE(d.is_array());
  REQUIRE(d.size() == 1);
  CHECK(d[0].at("kernel") == "model_gemm_f32~acc_bf16");
  CHECK(d[0].at("kind") == "consistent");
  const nlohmann::json& top = d[0].at("ranked").at(0);
  // the injected fault, or an accumulator in bf16 indistinguishable from it on this case
  bool names_bf16 = top.at("id") == "fault=acc_bf16" || top.at("id") == "acc=bf16";
  for (const auto& s : top.at("same_as")) names_bf16 = names_bf16 || s == "fault=acc_bf16" || s == "acc=bf16";
  CHECK(names_bf16);
  CHECK(top.at("matched") == top.at("elements"));

  // The report: the section, its ranked rows, and every number resolved in r0 (the run) and d0 (the diagnosis).
  const std::string html = fpcert::test::read_text(dir + "/run.html");
  CHECK(html.find("id=\"diagnoses\"") != std::string::npos);
  CHECK(html.find("id=\"diagnosis-0\"") != std::string::npos);
  CHECK(html.find("acc_bf16") != std::string::npos);
  CHECK(html.find("data-src=\"d0\" data-ptr=\"/ranked/0/matched\"") != std::string::npos);
  fpcert::write_file_atomic(dir + "/d0.json", d[0].dump(2));
  std::string out;
  CHECK_MESSAGE(check_html(dir + "/run.html", {"r0=" + dir + "/run.json", "d0=" + dir + "/d0.json"}, dir + "/check.txt", out) == 0, out);

  // fpcert report reads the diagnosis file back (an array of records) beside the run.
  const CommandResult rep = run_command({kFpcert, "report", dir + "/run.json", dir + "/diag.json", "-o", dir + "/again.html"});
  INFO(rep.output);
  CHECK(rep.exit_code == 0);
  CHECK(rep.has("1 run(s), 0 conversion check(s), 0 experiment(s), 0 audit(s), 1 diagnosis(es)"));
  const std::string again = fpcert::test::read_text(dir + "/again.html");
  CHECK(again.find("id=\"diagnosis-0\"") != std::string::npos);
  CHECK_MESSAGE(check_html(dir + "/again.html", {"r0=" + dir + "/run.json", "d0=" + dir + "/d0.json"}, dir + "/check2.txt", out) == 0, out);
}

TEST_CASE("certify --diagnose -: a logic error is said with its unexplained elements; a passing kernel keeps exit 0") {
  // zero_row writes zeros in one row: no arithmetic of the catalogue but the fault itself explains it; the fault is
  // among the hypotheses, so the diagnosis names it rather than a logic error.
  const CommandResult z = run_command({kFpcert, "certify", "--kernel", "model_gemm_f32~zero_row", "--case", "uniform_positive",
                                       "--no-mutation", "--diagnose", "-"});
  INFO(z.output);
  CHECK(z.exit_code == 1);
  CHECK(z.has("fault=zero_row"));
  // The unmutated model passes: certify's exit code stays 0 and no diagnosis of a failed case is printed; it declares
  // exactly what it computes, so no hint either.
  const CommandResult p = run_command({kFpcert, "certify", "--kernel", "model_gemm_f32", "--case", "uniform_positive", "--no-mutation",
                                       "--diagnose", "-"});
  INFO(p.output);
  CHECK(p.exit_code == 0);
  CHECK_FALSE(p.has("diagnosis of"));
  CHECK_FALSE(p.has("hint for"));
}

TEST_CASE("diagnose: the passing-kernel hint in the console and the JSON") {
  // The fp32 FMA model judged against the tf32 model's declaration (operands narrowed to tf32 first): it multiplies
  // its fp32 inputs as given, which the declaration does not say; uniform [-1, 1) fp32 inputs have bits below tf32's
  // 11 almost always, so the tf32 declaration reproduces (almost) nothing and "not narrowed" reproduces every element.
  const std::string dir = fpcert::test::scratch_dir("diagnose_cli_hint");
  const CommandResult r = run_command({kFpcert, "diagnose", "--kernel", "model_gemm_f32", "--declared-as", "model_gemm_tf32_f32acc", "--case",
                                       "uniform:m=12,n=13,k=200,seed=5", "--no-separate", "--json", dir + "/hint.json"});
  INFO(r.output);
  CHECK(r.exit_code == 0);  // a more precise arithmetic than declared explains it
  CHECK(r.has("hint: bit for bit on every element (156 of 156)"));
  CHECK(r.has("[operands=inputs]"));
  CHECK(r.has("could be tightened"));
  const nlohmann::json j = read_json(dir + "/hint.json");
  CHECK(j.at("kind") == "hint");
  CHECK(j.at("hint").at("id") == "operands=inputs");
  // and the model against its own declaration: no hint (nothing more precise reproduces it)
  const CommandResult own = run_command({kFpcert, "diagnose", "--kernel", "model_gemm_f32", "--case", "uniform:m=12,n=13,k=200,seed=5",
                                         "--no-separate", "--json", "-"});
  CHECK(own.exit_code == 0);
  CHECK_FALSE(own.has("\"hint\""));
}

TEST_CASE("diagnose: a reduction and a norm kernel through the CLI (exit codes, JSON, --identify)") {
  // docs/diagnose.md, "Reductions, softmax and normalisation": a correct model is declared (exit 0); the model with its
  // partial sums carried in fp16 is named by that fault (exit 1); --identify on an RMSNorm model names each of its faults.
  const std::string dir = fpcert::test::scratch_dir("diagnose_cli_rows");
  const CommandResult ok = run_command({kFpcert, "diagnose", "--kernel", "model_sum_f32_warp32", "--case", "uniform_n1000", "--json", dir + "/ok.json"});
  INFO(ok.output);
  CHECK(ok.exit_code == 0);
  CHECK(read_json(dir + "/ok.json").at("kind") == "declared");
  const CommandResult bad = run_command({kFpcert, "diagnose", "--kernel", "model_sum_f32_warp32~red_acc_f16", "--case", "uniform_n1000", "--json", "-"});
  INFO(bad.output);
  CHECK(bad.exit_code == 1);
  const nlohmann::json j = nlohmann::json::parse(bad.output);
  CHECK(j.at("kind") == "consistent");
  CHECK(j.at("ranked").at(0).at("id") == "fault=red_acc_f16");
  const CommandResult id = run_command({kFpcert, "diagnose", "--identify", "--model", "model_rmsnorm_f16", "--suite", "quick"});
  INFO(id.output);
  CHECK(id.exit_code == 0);
  CHECK(id.has("model_rmsnorm_f16"));
  CHECK(id.has("fault=norm_bessel"));
  CHECK_FALSE(id.has("MISS"));
}
