// tests/cli/mutate_cli_test.cpp — `fpcert mutate`, the mutation score in `certify`, and `fpcert selftest`
// driven as a subprocess: exit codes, what the output states, what the JSON holds, bad input.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "tests/support/run_command.hpp"

using fpcert::test::CommandResult;
using fpcert::test::run_command;

namespace {

const std::string kFpcert = fpcert::test::env_or("FPCERT_BIN", FPCERT_BIN);

nlohmann::json read_json(const std::string& path) { return nlohmann::json::parse(fpcert::test::read_text(path)); }

}  // namespace

TEST_CASE("mutate --list names every fault with its checks") {
  const CommandResult r = run_command({kFpcert, "mutate", "--list"});
  CHECK(r.exit_code == 0);
  for (const char* id : {"out_ulp", "zero_row", "k_minus_1", "transposed_b", "lda_ignored", "tail_tile", "precision_switch", "acc_f16",
                         "acc_bf16", "acc_rz", "out_rz", "flush_inputs", "flush_outputs", "nan_to_zero", "inf_to_max", "unwritten_row",
                         "write_past_end", "clobbers_a", "one_run_in_n", "transposed_ld", "beta0_reads_c", "beta_ignored",
                         "batch_stride_ignored", "batch_last_dropped"})
    CHECK_MESSAGE(r.has(id), id);
  CHECK(r.has("guard_output"));
  for (const char* id : {"cvt_rz", "cvt_ties_away", "cvt_no_saturation", "cvt_saturates", "cvt_ftz", "cvt_nan_payload_lost",
                         "cvt_nan_not_quieted", "cvt_zero_sign_lost"})  // the conversion kernels' faults, listed after
    CHECK_MESSAGE(r.has(id), id);
}

TEST_CASE("mutate on a conversion kernel: its score; --fault refused with the reason") {
  const CommandResult r = run_command({kFpcert, "mutate", "--kernel", "model_f16_to_e4m3_satfinite", "--suite", "conversions"});
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(r.has("mutation score of model_f16_to_e4m3_satfinite on suite conversions:"));
  CHECK(r.has("cvt_rz"));
  CHECK(r.has("(100.0 %) killed for their own fault; 0 by another check only, 0 survived"));
  const CommandResult f = run_command({kFpcert, "mutate", "--kernel", "model_f16_to_e4m3_satfinite", "--suite", "conversions", "--fault", "acc_f16"});
  CHECK(f.exit_code == 2);
  CHECK(f.has("every conversion fault"));
}

TEST_CASE("certify --suite conversions: the mutation score of each host conversion kernel, printed and in the JSON") {
  const std::string dir = fpcert::test::scratch_dir("certify_conversion_mutation");
  // An fp32 source (its mutants swept on the classes each fault touches) and a 16-bit one (every code).
  const CommandResult r = run_command({kFpcert, "certify", "--suite", "conversions", "--kernel", "model_f32_to_e4m3_satfinite,model_bf16_to_e2m1_rn",
                                       "--json", dir + "/c.json", "--mutation-min", "100"});
  INFO(r.output);
  CHECK(r.exit_code == 0);
  const nlohmann::json j = read_json(dir + "/c.json");
  REQUIRE(j.at("mutation").size() == 2);
  // Each score printed as GEMM certify prints it, in the JSON, and in the run's notes (the report's run section lists them).
  for (const auto& [kernel, killed] : {std::pair<std::string, int>{"model_f32_to_e4m3_satfinite", 5}, {"model_bf16_to_e2m1_rn", 4}}) {
    CAPTURE(kernel);
    const std::string line = "mutation score of " + kernel + " on suite conversions: " + std::to_string(killed) + "/" +
                             std::to_string(killed) + " (100.0 %) killed for their own fault";
    CHECK(r.has(line));
    CHECK(j.at("notes").at("mutation " + kernel).get<std::string>().starts_with(line));
  }
  for (const auto& m : j.at("mutation")) {
    CHECK(m.at("suite") == "conversions");
    CHECK(m.at("mutants").size() == 8);
  }
  const CommandResult skip = run_command({kFpcert, "certify", "--suite", "conversions", "--kernel", "model_bf16_to_e2m1_rn", "--no-mutation"});
  CHECK(skip.exit_code == 0);
  CHECK(skip.has("mutation score: not measured (--no-mutation)"));
}

TEST_CASE("mutate: the table, the score, the JSON; --min-score gates") {
  const std::string dir = fpcert::test::scratch_dir("mutate_cli");
  // M = N = 16: the tail tile is dormant (no partial tile of 16).
  const CommandResult r = run_command({kFpcert, "mutate", "--kernel", "model_gemm_f32", "--suite", "quick", "--mn", "16", "--fault",
                                       "zero_row,writes_nan,unwritten_row,tail_tile", "--json", dir + "/m.json"});
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(r.has("mutation score of model_gemm_f32 on suite quick: 3/4 (75.0 %) killed for their own fault"));
  CHECK(r.has("survived: tail_tile"));
  const nlohmann::json j = read_json(dir + "/m.json");
  CHECK(j.at("kind") == "mutation");
  REQUIRE(j.at("mutation").size() == 1);
  CHECK(j.at("mutation").at(0).at("killed") == 3);
  CHECK(j.at("mutation").at(0).at("total") == 4);
  CHECK(!j.at("cases").empty());  // the unmutated kernel's cases
  const CommandResult gate = run_command({kFpcert, "mutate", "--kernel", "model_gemm_f32", "--suite", "quick", "--mn", "16", "--fault",
                                          "zero_row,tail_tile", "--min-score", "100"});
  CHECK(gate.exit_code == 1);
  CHECK(gate.has("below --min-score"));
}

TEST_CASE("mutate: bad input exits 2 with the reason") {
  const CommandResult f = run_command({kFpcert, "mutate", "--kernel", "model_gemm_f32", "--fault", "zero_row,maim"});
  CHECK(f.exit_code == 2);
  CHECK(f.has("unknown fault 'maim'"));
  const CommandResult k = run_command({kFpcert, "mutate", "--kernel", "no_such_kernel"});
  CHECK(k.exit_code == 2);
  CHECK(k.has("unknown kernel"));
  const CommandResult m = run_command({kFpcert, "mutate", "--kernel", "model_gemm_f32~zero_row"});
  CHECK(m.exit_code == 2);
  CHECK(m.has("itself a mutant"));
  const CommandResult none = run_command({kFpcert, "mutate"});
  CHECK(none.exit_code == 2);
}

TEST_CASE("mutate --order revealed: the kernel's cases use its revealed order; each mutant is revealed on its own") {
  const std::string dir = fpcert::test::scratch_dir("mutate_cli_order");
  const CommandResult r = run_command({kFpcert, "mutate", "--kernel", "model_gemm_f32", "--suite", "quick", "--fault", "out_ulp", "--order",
                                       "revealed", "--json", dir + "/m.json"});
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(r.has("1/1 (100.0 %) killed for their own fault"));
  const nlohmann::json j = read_json(dir + "/m.json");
  REQUIRE(!j.at("cases").empty());
  const nlohmann::json& c = j.at("cases").at(0);
  CHECK(c.at("order").at("source") == "revealed");
  CHECK(c.at("order").at("used") == true);
  const CommandResult strict = run_command({kFpcert, "mutate", "--kernel", "model_gemm_f32", "--reveal-strict"});
  CHECK(strict.exit_code == 2);
  CHECK(strict.has("--reveal-strict has no effect without --order revealed"));  // one wording for every such option
  const CommandResult bad = run_command({kFpcert, "mutate", "--kernel", "model_gemm_f32", "--order", "sequential"});
  CHECK(bad.exit_code == 2);
}

TEST_CASE("certify prints and records the mutation score after the kernel passes; --no-mutation says it skipped") {
  const std::string dir = fpcert::test::scratch_dir("certify_mutation");
  const CommandResult r = run_command({kFpcert, "certify", "--kernel", "model_gemm_f32", "--suite", "quick", "--mn", "8", "--json", dir + "/c.json"});
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(r.has("mutation score of model_gemm_f32 on suite quick:"));
  const nlohmann::json j = read_json(dir + "/c.json");
  REQUIRE(j.at("mutation").size() == 1);
  CHECK(j.at("mutation").at(0).at("total").get<int>() >= 19);
  const CommandResult skip = run_command({kFpcert, "certify", "--kernel", "model_gemm_f32", "--suite", "quick", "--mn", "8", "--no-mutation",
                                          "--json", dir + "/s.json"});
  CHECK(skip.exit_code == 0);
  CHECK(skip.has("mutation score: not measured (--no-mutation)"));
  CHECK(read_json(dir + "/s.json").at("notes").at("mutation") == "not run (--no-mutation)");
  // A mutant by name: certify refuses it, and measures no mutation score of a failing kernel.
  const CommandResult bad = run_command({kFpcert, "certify", "--kernel", "model_gemm_f32~writes_nan", "--suite", "quick", "--mn", "8"});
  CHECK(bad.exit_code == 1);
  CHECK(bad.has("not measured (the kernel itself failed)"));
}

TEST_CASE("selftest: passes when every chosen fault is killed for its own fault, fails naming the one that is not") {
  const CommandResult ok = run_command({kFpcert, "selftest", "--suite", "quick", "--kernel", "model_gemm_f32,model_gemm_f16_f32acc", "--fault",
                                        "zero_row,writes_nan,write_past_end"});
  INFO(ok.output);
  CHECK(ok.exit_code == 0);
  CHECK(ok.has("SELFTEST PASSED: 2 models passed; 6 mutants, 6 killed for their own fault, 0 known survivor(s)"));
  const CommandResult missed =
      run_command({kFpcert, "selftest", "--suite", "quick", "--kernel", "model_gemm_f32", "--fault", "tail_tile"});  // M = N = 48: no partial tile
  CHECK(missed.exit_code == 1);
  CHECK(missed.has("MISSED: tail_tile"));
  CHECK(run_command({kFpcert, "selftest", "--shard", "3/2"}).exit_code == 2);
}

TEST_CASE("selftest --known-survivors: a listed survivor is reported, not failed; a listed one that is killed fails; bad lines are input errors") {
  const std::string d = fpcert::test::scratch_dir("selftest_known");
  const std::string listed = d + "/known.txt", stale = d + "/stale.txt", bad = d + "/bad.txt";
  fpcert::test::write_text(listed, "# gaps\nmodel_gemm_f32 tail_tile  # M = N = 48 in quick: no partial tile\n");
  fpcert::test::write_text(stale, "model_gemm_f32 zero_row  # wrongly listed\n");
  fpcert::test::write_text(bad, "model_gemm_f32 tail_tile\n");  // no reason
  const CommandResult known =
      run_command({kFpcert, "selftest", "--suite", "quick", "--kernel", "model_gemm_f32", "--fault", "tail_tile", "--known-survivors", listed});
  INFO(known.output);
  CHECK(known.exit_code == 0);
  CHECK(known.has("KNOWN: tail_tile (survived): M = N = 48 in quick: no partial tile"));
  CHECK(known.has("1 known survivor(s)"));
  const CommandResult st =
      run_command({kFpcert, "selftest", "--suite", "quick", "--kernel", "model_gemm_f32", "--fault", "zero_row", "--known-survivors", stale});
  CHECK(st.exit_code == 1);
  CHECK(st.has("STALE: zero_row is listed as a known survivor but was killed"));
  const CommandResult malformed =
      run_command({kFpcert, "selftest", "--suite", "quick", "--kernel", "model_gemm_f32", "--fault", "zero_row", "--known-survivors", bad});
  CHECK(malformed.exit_code == 2);
  CHECK(malformed.has("expected '<model> <fault id>  # why'"));
}

TEST_CASE("mutate --case: the kernel and every mutant on that case alone; an unknown case exits 2 naming the suite's cases") {
  // additive_mask_min (attention with finfo.min masks): a P rounded narrower than declared is refused on that case alone.
  const CommandResult r = run_command({kFpcert, "mutate", "--kernel", "model_attention_f16_flash", "--suite", "attention", "--case",
                                       "additive_mask_min", "--fault", "attn_p_rounded_lower"});
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(r.has("additive_mask_min"));
  CHECK_FALSE(r.has("normal_l200"));  // no other case ran
  CHECK(r.has("1/1 (100.0 %) killed for their own fault"));
  const CommandResult bad = run_command({kFpcert, "mutate", "--kernel", "model_attention_f16_flash", "--suite", "attention", "--case", "no_such_case"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.has("no case 'no_such_case'"));
  CHECK(bad.has("additive_mask_min"));
}
