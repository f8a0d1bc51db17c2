// tests/cli/audit_cli_test.cpp — `fpcert audit` driven as a subprocess: the tables, the exit codes, the JSON record,
// bad input (docs/audit.md).
#include <doctest/doctest.h>

#include <cstdint>
#include <fstream>
#include <limits>
#include <vector>
#include <nlohmann/json.hpp>

#include "base/npy.hpp"
#include "tests/support/run_command.hpp"

using fpcert::test::CommandResult;
using fpcert::test::run_command;

namespace {
const std::string kFpcert = fpcert::test::env_or("FPCERT_BIN", FPCERT_BIN);
/// `fpcert audit --config DIR/fpcert.toml --no-mutants` on a config of this text.
CommandResult audit_config(const std::string& dir, const std::string& toml) {
  std::ofstream(dir + "/fpcert.toml") << toml;
  return run_command({kFpcert, "audit", "--config", dir + "/fpcert.toml", "--no-mutants"});
}
/// An [audit] section of a row operation (rows x cols, one seed, fpcert's rule) that runs and prints `expect`.
void check_rows_config(const char* scratch, const std::string& head, const std::string& expect) {
  const CommandResult cfg = audit_config(fpcert::test::scratch_dir(scratch), "[audit]\n" + head + "m = 4\nn = 256\nseeds = [1]\nrule = \"fpcert\"\n");
  INFO(cfg.output);
  CHECK(cfg.exit_code == 0);
  CHECK(cfg.has(expect));
}
}  // namespace

TEST_CASE("audit: an unsatisfiable allclose exits 1 and says so; the JSON record holds it") {
  // atol 0.06 on bf16 outputs in [16, 32), where half an ulp is 2^(4 - 7) / 2 = 0.0625 (tests/suites/audit_test.cpp)
  const std::string dir = fpcert::test::scratch_dir("audit_cli");
  const CommandResult r = run_command({kFpcert, "audit", "--traits", "in=bf16,acc=f32,out=bf16", "--m", "32", "--n", "32", "--k", "96",
                                       "--inputs", "uniform:lo=0,hi=1", "--seeds", "1,2", "--rule", "allclose:rtol=0,atol=0.06",
                                       "--no-mutants", "--json", dir + "/a.json"});
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK(r.has("UNSATISFIABLE: on 2 of 2 seeds"));
  CHECK(r.has("unsatisfiable tolerance x2"));
  const nlohmann::json j = nlohmann::json::parse(fpcert::test::read_text(dir + "/a.json"));
  CHECK(j.at("kind") == "audit");
  CHECK(j.at("static").at("cr_fail_runs") == 2);
  CHECK(j.at("false_alarms").at("flake_rate") == 1.0);
  CHECK(j.at("power").empty());
}

TEST_CASE("audit: fpcert's own rule exits 0 on correct arithmetic; allclose 1e-2 on small outputs exits 1 (zeros passes)") {
  const std::vector<std::string> common = {kFpcert, "audit", "--kernel", "model_gemm_bf16_f32acc", "--m", "16", "--n", "16", "--k", "64",
                                           "--inputs", "uniform:lo=0,hi=0.0078125", "--seeds", "1,2"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = common;
    a.insert(a.end(), extra.begin(), extra.end());
    return run_command(a);
  };
  const CommandResult sound = with({"--rule", "fpcert", "--no-mutants"});
  INFO(sound.output);
  CHECK(sound.exit_code == 0);
  CHECK(sound.has("flake rate: 0 of"));
  const CommandResult loose = with({"--rule", "allclose:rtol=1e-2,atol=1e-2", "--json", "-"});
  CHECK(loose.exit_code == 1);
  const nlohmann::json j = nlohmann::json::parse(loose.output);
  bool zeros = false;
  for (const auto& m : j.at("power"))
    if (m.at("mutant") == "zeros") zeros = m.at("rule_passed") == 2 && m.at("fpcert_refused") == 2;
  CHECK(zeros);
}

TEST_CASE("audit: bad input exits 2 with one line") {
  CHECK(run_command({kFpcert, "audit", "--kernel", "model_gemm_f32", "--rule", "cosine:tol=1"}).exit_code == 2);
  CHECK(run_command({kFpcert, "audit", "--kernel", "no_such_kernel", "--rule", "maxabs:tol=1"}).exit_code == 2);
  CHECK(run_command({kFpcert, "audit", "--kernel", "model_gemm_f32", "--traits", "in=f16", "--rule", "maxabs:tol=1"}).exit_code == 2);
  CHECK(run_command({kFpcert, "audit", "--kernel", "model_gemm_f32", "--rule", "maxabs"}).exit_code == 2);
}

TEST_CASE("audit: batch invariance declared on a batch-variant fixture exits 1; on an invariant one 0; --html writes the section") {
  // fixture_gemm_f32_batch_variant: split-K 4 below 8 rows, sequential FMA from 8 (suites/audit/audit_kernels.hpp):
  // batch sizes 64 and 257 change a probe row's bits, 2, 3 and 7 do not (tests/suites/audit_test.cpp derives it).
  const std::string dir = fpcert::test::scratch_dir("audit_cli_batch");
  auto run = [&](const char* kernel, const std::string& html) {
    return run_command({kFpcert, "audit", "--kernel", kernel, "--m", "16", "--n", "16", "--k", "64", "--seeds", "7", "--rule", "fpcert",
                        "--no-mutants", "--html", html});
  };
  const CommandResult bad = run("fixture_gemm_f32_batch_variant", dir + "/variant.html");
  INFO(bad.output);
  CHECK(bad.exit_code == 1);
  CHECK(bad.has("BATCH-VARIANT though declared invariant"));
  CHECK(bad.has("Reproducibility (declared deterministic): reproducible over 3 runs"));
  const std::string page = fpcert::test::read_text(dir + "/variant.html");
  CHECK(page.find("<table class=\"audit-batch\">") != std::string::npos);
  CHECK(page.find("FAILED") != std::string::npos);
  const CommandResult good = run("fixture_gemm_f32_batch_invariant", dir + "/invariant.html");
  INFO(good.output);
  CHECK(good.exit_code == 0);
  CHECK(good.has("batch invariance (declared: declared by the fixture) holds"));
  // --batch-invariant declares it for a kernel whose traits do not: the sequential model is invariant
  const CommandResult flag = run_command({kFpcert, "audit", "--kernel", "model_gemm_f32", "--m", "16", "--n", "16", "--k", "64", "--seeds", "7",
                                          "--rule", "fpcert", "--no-mutants", "--batch-invariant"});
  INFO(flag.output);
  CHECK(flag.exit_code == 0);
  CHECK(flag.has("Batch invariance (declared: --batch-invariant)"));
}

TEST_CASE("audit --a/--b: the test's own tensors; unsatisfiable atol found; bad files, shapes and NaN refused") {
  // C = A B with A = [16, 2^-4, 2^-9] and B = [1, 1, 1]^T: 16.064453125, whose nearest bf16 (ulp 0.125 in [16, 32)) is
  // 16.125, 0.0605 away: atol = 0.06 is unsatisfiable on these tensors (tests/suites/audit_test.cpp by hand)
  const std::string dir = fpcert::test::scratch_dir("audit_cli_npy");
  fpcert::write_npy_f32(dir + "/A.npy", 1, 3, {16, 0.0625, 0.001953125});
  fpcert::write_npy_f64(dir + "/B.npy", 3, 1, {1, 1, 1});
  fpcert::write_npy_f32(dir + "/B2.npy", 2, 1, {1, 1});
  fpcert::write_npy_f32(dir + "/Bn.npy", 3, 1, {1, NAN, 1});
  fpcert::write_npy_f32(dir + "/B1.npy", 3, -1, {1, 1, 1});
  const std::vector<std::string> c = {kFpcert, "audit", "--traits", "in=bf16,acc=f32,out=bf16", "--a", dir + "/A.npy", "--no-mutants"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = c;
    a.insert(a.end(), extra.begin(), extra.end());
    return run_command(a);
  };
  const CommandResult bad = with({"--b", dir + "/B.npy", "--rule", "allclose:rtol=0,atol=0.06"});
  INFO(bad.output);
  CHECK(bad.exit_code == 1);
  CHECK(bad.has("UNSATISFIABLE: on 1 of 1 seeds"));
  CHECK(bad.has("m=1 n=1 k=3"));
  CHECK(with({"--b", dir + "/B.npy", "--rule", "allclose:rtol=0,atol=0.061"}).exit_code == 0);
  const CommandResult mismatch = with({"--b", dir + "/B2.npy", "--rule", "maxabs:tol=1"});
  CHECK(mismatch.exit_code == 2);
  CHECK(mismatch.has("shape mismatch"));
  const CommandResult nan = with({"--b", dir + "/Bn.npy", "--rule", "maxabs:tol=1"});
  CHECK(nan.exit_code == 2);
  CHECK(nan.has("holds NaN at [1, 0]"));
  CHECK(with({"--b", dir + "/B1.npy", "--rule", "maxabs:tol=1"}).has("a GEMM input is a 2-D array"));
  CHECK(with({"--b", dir + "/B.npy", "--seeds", "1", "--rule", "maxabs:tol=1"}).exit_code == 2);
  CHECK(with({"--rule", "maxabs:tol=1"}).exit_code == 2);  // --a without --b
}

TEST_CASE("audit --reference and [audit] reference/a/b: atol 0 against the product stored in bf16 exits 0, against the exact one 1") {
  // k = 1: a_i b_j = 1 + (c + d) 2^-7 + c d 2^-14, exact in fp32, not a bf16 value (tests/suites/audit_test.cpp)
  const std::string dir = fpcert::test::scratch_dir("audit_cli_reference");
  fpcert::write_npy_f32(dir + "/A.npy", 3, 1, {1 + 1.0f / 128, 1 + 3.0f / 128, 1 + 5.0f / 128});
  fpcert::write_npy_f32(dir + "/B.npy", 1, 2, {1 + 1.0f / 128, 1 + 7.0f / 128});
  const std::vector<std::string> c = {kFpcert, "audit", "--traits", "in=bf16,acc=f32,out=bf16", "--a", dir + "/A.npy", "--b", dir + "/B.npy",
                                      "--no-mutants", "--rule", "allclose:rtol=0,atol=0"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = c;
    a.insert(a.end(), extra.begin(), extra.end());
    return run_command(a);
  };
  const CommandResult exact = with({});
  INFO(exact.output);
  CHECK(exact.exit_code == 1);
  CHECK(exact.has("UNSATISFIABLE"));
  const CommandResult out = with({"--reference", "out"});
  INFO(out.output);
  CHECK(out.exit_code == 0);
  CHECK(out.has("the rule against the out reference"));
  CHECK(with({"--reference", "fp64"}).exit_code == 2);
  // the same from fpcert.toml, the tensors relative to its folder
  {
    std::ofstream f(dir + "/fpcert.toml");
    f << "[audit]\ntraits = \"in=bf16,acc=f32,out=bf16\"\na = \"A.npy\"\nb = \"B.npy\"\nrule = \"allclose:rtol=0,atol=0\"\nreference = \"out\"\n";
  }
  const CommandResult cfg = run_command({kFpcert, "audit", "--config", dir + "/fpcert.toml", "--no-mutants"});
  INFO(cfg.output);
  CHECK(cfg.exit_code == 0);
  CHECK(cfg.has("m=3 n=2 k=1"));
  CHECK(run_command({kFpcert, "audit", "--config", dir + "/fpcert.toml", "--no-mutants", "--reference", "exact"}).exit_code == 1);
}

TEST_CASE("audit --a-format and --allow tf32, from the command line and from [audit] of fpcert.toml") {
  const std::string dir = fpcert::test::scratch_dir("audit_cli_formats");
  // bf16 bit patterns as uint16 (fpcert gen's files): 16 = 0x4180, 2^-4 = 0x3D80, 2^-9 = 0x3B00; B ones (0x3F80).
  // C = 16.064453125: unsatisfiable at atol 0.06 for bf16 outputs (tests/suites/audit_test.cpp).
  const std::vector<std::uint16_t> a = {0x4180, 0x3D80, 0x3B00}, b = {0x3F80, 0x3F80, 0x3F80};
  fpcert::write_npy(dir + "/A.npy", fpcert::NpyType::U16, 1, 3, a.data());
  fpcert::write_npy(dir + "/B.npy", fpcert::NpyType::U16, 3, 1, b.data());
  const std::vector<std::string> base = {kFpcert, "audit", "--traits", "in=bf16,acc=f32,out=bf16", "--a", dir + "/A.npy", "--b", dir + "/B.npy",
                                         "--no-mutants", "--rule", "allclose:rtol=0,atol=0.06"};
  const CommandResult none = run_command(base);
  CHECK(none.exit_code == 2);
  CHECK(none.has("say which format its bits are"));
  std::vector<std::string> args = base;
  for (const char* x : {"--a-format", "bf16", "--b-format", "bf16"}) args.push_back(x);
  const CommandResult r = run_command(args);
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK(r.has("stored in bf16, no rounding"));
  CHECK(r.has("UNSATISFIABLE"));
  // --allow tf32 on an fp32 GEMM at rtol 1e-5 (docs/audit.md, "Allowed arithmetic"): the TF32 rows are false alarms
  const std::vector<std::string> f32 = {kFpcert, "audit", "--traits", "in=f32,acc=f32,out=f32", "--m", "16", "--n", "16", "--k", "256",
                                        "--inputs", "uniform:lo=0,hi=1", "--seeds", "1", "--rule", "allclose:rtol=1e-5,atol=1e-8", "--no-mutants"};
  CHECK(run_command(f32).exit_code == 0);
  std::vector<std::string> tf = f32;
  tf.push_back("--allow");
  tf.push_back("tf32");
  const CommandResult t = run_command(tf);
  INFO(t.output);
  CHECK(t.exit_code == 1);
  CHECK(t.has("allowed: tf32"));
  CHECK(t.has("tf32 operands x1"));
  tf.back() = "bf16x3";
  CHECK(run_command(tf).exit_code == 2);
  const CommandResult cfg = audit_config(dir, "[audit]\ntraits = \"in=f32,acc=f32,out=f32\"\nm = 16\nn = 16\nk = 256\ninputs = \"uniform:lo=0,hi=1\"\n"
                                              "seeds = [1]\nrule = \"allclose:rtol=1e-5,atol=1e-8\"\nallow = [\"tf32\"]\n");
  INFO(cfg.output);
  CHECK(cfg.exit_code == 1);
  CHECK(cfg.has("tf32 operands x1"));
  {
    std::ofstream f(dir + "/bad.toml");
    f << "[audit]\ntraits = \"in=f32,acc=f32,out=f32\"\nrule = \"fpcert\"\nallow = [\"fp16acc\"]\n";
  }
  const CommandResult bad = run_command({kFpcert, "audit", "--config", dir + "/bad.toml"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.has("unknown allowance 'fp16acc'"));
}

TEST_CASE("audit --op softmax: KernelBench's allclose 1e-2 on 4096 logits exits 1 (zeros passes); [audit] op; bad kernels exit 2") {
  // every softmax value of 4096 logits in [-4, 4] is ~2e-3 at most, below atol = 1e-2 (tests/suites/audit_test.cpp)
  const CommandResult r = run_command({kFpcert, "audit", "--op", "softmax", "--kernel", "model_softmax_f32_shifted", "--m", "4", "--n", "4096",
                                       "--seeds", "1", "--rule", "allclose:rtol=1e-2,atol=1e-2"});
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK(r.has("audit of softmax kernel model_softmax_f32_shifted"));
  CHECK(r.has("an output of 0 meets the rule on 100 % of the elements"));
  CHECK(r.has("RULE MISSES IT, fpcert refuses"));
  CHECK(run_command({kFpcert, "audit", "--op", "softmax", "--kernel", "model_gemm_f32", "--rule", "fpcert"}).exit_code == 2);
  CHECK(run_command({kFpcert, "audit", "--op", "conv", "--kernel", "model_softmax_f32_shifted", "--rule", "fpcert"}).exit_code == 2);
  check_rows_config("audit_cli_softmax", "op = \"softmax\"\nkernel = \"model_softmax_f32_shifted\"\n", "4 rows of 256 logits");
}

TEST_CASE("audit --op log_softmax|layernorm|rmsnorm and --traits / --a for a softmax from the command line and fpcert.toml") {
  // log-softmax of logits spread over 2048: outputs down to ~-2048, half an f32 ulp there above atol = 1e-5: exit 1
  const CommandResult ls = run_command({kFpcert, "audit", "--op", "log_softmax", "--kernel", "model_log_softmax_f32_shifted", "--m", "4",
                                        "--n", "256", "--seeds", "1", "--inputs", "softmax:spread=2048", "--rule", "allclose:rtol=0,atol=1e-5",
                                        "--no-mutants"});
  INFO(ls.output);
  CHECK(ls.exit_code == 1);
  CHECK(ls.has("audit of log_softmax kernel model_log_softmax_f32_shifted"));
  CHECK(ls.has("UNSATISFIABLE"));
  // a softmax declared by traits, on the test's own logits (-inf: masked)
  const std::string dir = fpcert::test::scratch_dir("audit_cli_rows");
  std::vector<double> x(3 * 40);
  for (std::size_t e = 0; e < x.size(); ++e) x[e] = static_cast<double>(e % 40) / 8 - 2;
  x[45] = -std::numeric_limits<double>::infinity();
  fpcert::write_npy_f32(dir + "/logits.npy", 3, 40, x);
  const CommandResult tr = run_command({kFpcert, "audit", "--op", "softmax", "--traits", "in=bf16,exp=expf", "--a", dir + "/logits.npy",
                                        "--rule", "fpcert"});
  INFO(tr.output);
  CHECK(tr.exit_code == 0);
  CHECK(tr.has("audit of softmax kernel traits:in=bf16,exp=expf"));
  CHECK(tr.has("3 rows of 40 logits"));
  CHECK(run_command({kFpcert, "audit", "--op", "softmax", "--traits", "in=bf16", "--a", dir + "/logits.npy", "--m", "3", "--rule", "fpcert"})
            .exit_code == 2);  // --m with --a
  CHECK(run_command({kFpcert, "audit", "--op", "softmax", "--traits", "in=bf16,acc=f32", "--rule", "fpcert"}).exit_code == 2);
  // a normalisation: bf16 LayerNorm at rtol = atol = 1e-5 is unsatisfiable (exit 1); an RMSNorm op on a LayerNorm is refused
  const CommandResult ln = run_command({kFpcert, "audit", "--op", "layernorm", "--kernel", "model_layernorm_bf16_twopass", "--m", "4", "--n",
                                        "256", "--seeds", "1", "--rule", "allclose:rtol=1e-5,atol=1e-5", "--no-mutants"});
  INFO(ln.output);
  CHECK(ln.exit_code == 1);
  CHECK(ln.has("4 rows of 256 entries"));
  CHECK(run_command({kFpcert, "audit", "--op", "rmsnorm", "--kernel", "model_layernorm_bf16_twopass", "--rule", "fpcert"}).exit_code == 2);
  check_rows_config("audit_cli_rmsnorm", "op = \"rmsnorm\"\ntraits = \"in=bf16\"\n", "audit of rmsnorm kernel traits:rmsnorm:in=bf16");
}
