// tests/cli/hardening2_test.cpp — the second hardening pass (issue 34), one regression test or more per
// class, each as the command a hostile or careless user typed, checked by its exit code, its message
// and what is left on disk (docs/errors.md is the contract). Classes, most severe first: 1 a plugin
// decides fpcert's exit code; 2 inputs lost; 3 hangs and late errors; 4 gates that switch off (NaN);
// 5 silent nonsense; 6 output streams and messages. fpcert runs as a subprocess
// (tests/support/run_command.hpp); the in-process audit of every option is tests/cli/options_audit_test.cpp.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/run_command.hpp"

using fpcert::test::CommandResult;
using fpcert::test::fpcert_run;
using fpcert::test::run_command;
using fpcert::test::sh;

namespace {

namespace fs = std::filesystem;

const std::string kPlugins = fpcert::test::env_or("FPCERT_TEST_PLUGIN_DIR", FPCERT_TEST_PLUGIN_DIR);
const std::string kModel = "model_gemm_f16_f32acc";  // a built-in CPU model: runs anywhere

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// A certify of one plugin kernel on the quick suite at a small size.
CommandResult certify_plugin(const std::string& fault, std::vector<std::string> extra = {}, double timeout_s = 120) {
  std::vector<std::string> args = {"certify", "--suite", "quick", "--mn", "8", "--no-mutation", "--kernel", "fault_" + fault,
                                    "--plugin", kPlugins + "/libfault_" + fault + ".so"};
  args.insert(args.end(), extra.begin(), extra.end());
  return fpcert_run(args, timeout_s);
}

}  // namespace

// ---- 1. a plugin decides fpcert's exit code ----------------------------------------------------------
// Before: exit(0) in a constructor made `certify` exit 0 with no results; a NULL dereference in
// fpcert_plugin_enumerate killed fpcert by SIGSEGV without a word (--isolate too); an endless enumerate
// ignored --timeout; a FIFO as the library blocked for ever. Now each plugin is loaded in a child process
// first (suites/run/isolate.hpp) under the time limit: one line, exit 3; a FIFO is refused before dlopen (2).

TEST_CASE("class 1: a plugin constructor that calls exit(0) ends in exit 3 with one line, never 0") {
  const auto r = certify_plugin("ctor_exit");
  INFO(r.output);
  CHECK(r.exit_code == 3);
  CHECK(r.has("fpcert: device or kernel failure: plugin '" + kPlugins + "/libfault_ctor_exit.so' ended the process while loading"));
  CHECK(r.has("called exit(0)"));
  CHECK_FALSE(r.has("PASS"));
}

TEST_CASE("class 1: a plugin constructor that aborts is reported, exit 3") {
  const auto r = certify_plugin("ctor_abort", {"--isolate"});
  INFO(r.output);
  CHECK(r.exit_code == 3);
  CHECK(r.signal == 0);  // fpcert itself did not die
  CHECK(r.has("crashed while loading: its constructors or fpcert_plugin_enumerate() died with signal 6"));
}

TEST_CASE("class 1: an enumerate that dereferences NULL is reported with the signal, exit 3 (--isolate or not)") {
  for (const std::string mode : {"--isolate", "--no-isolate"}) {
    const auto r = certify_plugin("enum_segv", {mode});
    INFO(mode << ": " << r.output);
    CHECK(r.exit_code == 3);
    CHECK(r.signal == 0);
    CHECK(r.has("died with signal 11"));
  }
}

TEST_CASE("class 1: an enumerate that never returns is stopped at --timeout, exit 3") {
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = certify_plugin("enum_hang", {"--timeout", "2"}, 60);
  INFO(r.output);
  CHECK_FALSE(r.timed_out);
  CHECK(seconds_since(t0) < 30);
  CHECK(r.exit_code == 3);
  CHECK(r.has("did not finish loading within 2 s"));
}

TEST_CASE("class 1: a FIFO, a folder or a device as the plugin is refused before it is opened, exit 2") {
  const std::string d = fpcert::test::scratch_dir("hardening2_fifo");
  REQUIRE(::mkfifo((d + "/lib.so").c_str(), 0600) == 0);
  for (const auto& [path, kind] : std::vector<std::pair<std::string, std::string>>{
           {d + "/lib.so", "a FIFO"}, {d, "a directory"}, {"/dev/null", "a character device"}}) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto r = fpcert_run({"kernels", "--plugin", path}, 30);
    INFO(r.output);
    CHECK_FALSE(r.timed_out);
    CHECK(seconds_since(t0) < 20);
    CHECK(r.exit_code == 2);
    CHECK(r.has("fpcert: error: plugin '" + path + "' is " + kind + ", not a regular file"));
  }
}

TEST_CASE("class 1: a plugin that passes the probe and exits when fpcert loads it still cannot make the exit code 0") {
  // The fixture exits from its second load on (the probe in the child is the first): the ExitGuard's case.
  const std::string d = fpcert::test::scratch_dir("hardening2_exit_later");
  const auto r = sh("FPCERT_TEST_LOAD_COUNT='" + d + "/count' \"$FPCERT\" certify --suite quick --mn 8 --no-mutation --kernel "
                    "fault_ctor_exit_later --plugin '" + kPlugins + "/libfault_ctor_exit_later.so'", 120);
  INFO(r.output);
  CHECK(r.exit_code == 3);
  CHECK(r.has("fpcert: plugin '" + kPlugins + "/libfault_ctor_exit_later.so' ended the process while being loaded"));
  CHECK(fpcert::test::read_text(d + "/count").find('2') != std::string::npos);  // loaded twice: in the probe, then in fpcert
}

TEST_CASE("class 1: a kernel that calls exit(0) while it runs cannot make the exit code 0 either (isolated or not)") {
  // In a child (--isolate, the default with plugins) the case is crashed; in fpcert itself (--no-isolate)
  // the ExitGuard over the whole command turns the exit into one line and exit 3.
  const auto isolated = certify_plugin("run_exit");
  INFO(isolated.output);
  CHECK(isolated.exit_code == 3);
  CHECK(isolated.has("k1024_normal on fault_run_exit: crashed: the kernel's process exited with status 0 and no result"));
  const auto in_process = certify_plugin("run_exit", {"--no-isolate"});
  INFO(in_process.output);
  CHECK(in_process.exit_code == 3);
  CHECK(in_process.has("fpcert: error: code that is not fpcert's (a plugin's) ended the process while `fpcert certify` was running"));
}

TEST_CASE("class 1: a plugin that passes the probe and aborts when fpcert loads it: one line naming it, then the signal") {
  const std::string d = fpcert::test::scratch_dir("hardening2_abort_later");
  const auto r = sh("FPCERT_TEST_LOAD_COUNT='" + d + "/count' \"$FPCERT\" certify --suite quick --mn 8 --no-mutation --kernel "
                    "fault_ctor_abort_later --plugin '" + kPlugins + "/libfault_ctor_abort_later.so'", 120);
  INFO(r.output);
  CHECK(r.exit_code != 0);  // 134 from the shell: SIGABRT, as the caller expects of a crash
  CHECK(r.has("fpcert: plugin '" + kPlugins + "/libfault_ctor_abort_later.so' ended the process while being loaded (fatal signal 6)"));
}

// ---- 2. inputs lost -----------------------------------------------------------------------------------
// Before: --json R made R.partial.jsonl, deleting a --compare or --config of that name; --json equal to
// --known-survivors or --card overwrote it; a symlinked -o folder became a real folder; the scale-out's
// worker variables wrote anywhere. Now one planning step (check_command_io, cli/options.hpp) knows every
// input and output of the command, journals included, and refuses a clash before any work.

TEST_CASE("class 2: an input named like an output's journal (R.partial.jsonl) is refused, not deleted") {
  const std::string d = fpcert::test::scratch_dir("hardening2_journal");
  const std::string journal = d + "/r.json.partial.jsonl";
  const std::string text = "{\"not\": \"touched\"}\n";
  fpcert::test::write_text(journal, text);
  for (const std::string opt : {"--compare", "--junit"}) {
    const auto r = fpcert_run({"certify", "--suite", "quick", "--mn", "8", "--kernel", kModel, "--json", d + "/r.json", opt, journal});
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK(r.has("fpcert: error: "));
    CHECK(fpcert::test::read_text(journal) == text);
  }
  fpcert::test::write_text(d + "/fpcert.toml", "kernels = [\"" + kModel + "\"]\n");
  fs::copy_file(d + "/fpcert.toml", d + "/c.toml.partial.jsonl");
  const std::string config_text = fpcert::test::read_text(d + "/c.toml.partial.jsonl");
  const auto r = fpcert_run({"certify", "--suite", "quick", "--mn", "8", "--config", d + "/c.toml.partial.jsonl", "--json", d + "/c.toml"});
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(fpcert::test::read_text(d + "/c.toml.partial.jsonl") == config_text);
}

TEST_CASE("class 2: an output equal to an input (--known-survivors, --card) is refused and the input kept") {
  const std::string d = fpcert::test::scratch_dir("hardening2_same");
  const std::string known = d + "/known.txt";
  fpcert::test::write_text(known, "# nothing known\n");
  const auto s = fpcert_run({"selftest", "--kernel", kModel, "--known-survivors", known, "--json", known});
  INFO(s.output);
  CHECK(s.exit_code == 2);
  CHECK(s.has("is the input '" + known + "'"));
  CHECK(fpcert::test::read_text(known) == "# nothing known\n");
  const std::string card = d + "/card.json";
  fpcert::test::write_text(card, "{}\n");
  const auto m = fpcert_run({"mutate", "--kernel", kModel, "--suite", "quick", "--card", card, "--json", card});
  INFO(m.output);
  CHECK(m.exit_code == 2);
  CHECK(fpcert::test::read_text(card) == "{}\n");
}

TEST_CASE("class 2: a symlinked output folder (gen -o) stays a link; the folder it points to gets the files") {
  const std::string d = fpcert::test::scratch_dir("hardening2_dirlink");
  fs::create_directories(d + "/real");
  fs::create_directory_symlink("real", d + "/link");
  const auto r = fpcert_run({"gen", "uniform:m=4,n=4,k=4,seed=1", "-o", d + "/link"});
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(fs::is_symlink(d + "/link"));
  CHECK(fs::exists(d + "/real/A.npy"));
  CHECK(fs::exists(d + "/real/meta.json"));
  // A second run replaces the set behind the link, still through it.
  const auto again = fpcert_run({"gen", "uniform:m=4,n=4,k=4,seed=2", "-o", d + "/link"});
  INFO(again.output);
  CHECK(again.exit_code == 0);
  CHECK(fs::is_symlink(d + "/link"));
  CHECK(fpcert::test::read_text(d + "/real/meta.json").find("seed=2") != std::string::npos);
}

TEST_CASE("class 2: the scale-out's worker variables set by hand cannot point results at a file") {
  const std::string d = fpcert::test::scratch_dir("hardening2_worker");
  const std::string victim = d + "/victim.json";
  fpcert::test::write_text(victim, "precious\n");
  const auto r = sh("FPCERT_WORKER_SHARD=1/1 FPCERT_WORKER_JSON='" + victim + "' \"$FPCERT\" certify --suite quick --mn 8 --no-mutation --kernel " +
                    kModel);
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(r.has("are set by fpcert --devices for its own worker processes"));
  CHECK(fpcert::test::read_text(victim) == "precious\n");
}

// ---- 3. hangs and late errors -------------------------------------------------------------------------

TEST_CASE("class 3: an output whose temporary name exceeds the file system's limit is refused before the run") {
  const std::string d = fpcert::test::scratch_dir("hardening2_longname");
  const std::string name = d + "/" + std::string(250, 'r');  // legal (< 255), but .NAME.fpcert-XXXXXX is 265
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = fpcert_run({"certify", "--suite", "quick", "--kernel", kModel, "--json", name});
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(seconds_since(t0) < 20);
  CHECK(r.has("the file system's limit of 255 bytes per name"));
}

// ---- 4. gates that switch off ---------------------------------------------------------------------------

TEST_CASE("class 4: --min-score nan and --mutation-min nan are usage errors, not a gate that passes 0 %") {
  for (const std::string v : {"nan", "NaN", "-nan", "inf", "1e999", "101", "-1"}) {
    const auto m = fpcert_run({"mutate", "--kernel", kModel, "--suite", "quick", "--min-score", v});
    INFO(v << ": " << m.output);
    CHECK(m.exit_code == 2);
    CHECK(m.has("--min-score"));
    const auto c = fpcert_run({"certify", "--kernel", kModel, "--suite", "quick", "--mutation-min", v});
    INFO(v << ": " << c.output);
    CHECK(c.exit_code == 2);
    CHECK(c.has("--mutation-min"));
  }
}

// ---- 5. silent nonsense --------------------------------------------------------------------------------

TEST_CASE("class 5: FPCERT_THREADS=0x1 is refused (its reader reads decimal: it meant 0)") {
  const auto r = sh("FPCERT_THREADS=0x1 \"$FPCERT\" convert --from f16 --to e4m3 --value 1.5");
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(r.has("FPCERT_THREADS: expected a decimal integer in [1, 4096], got '0x1'"));
}

TEST_CASE("class 5: a kernel given twice is refused, not run and counted twice") {
  const auto r = fpcert_run({"certify", "--suite", "quick", "--mn", "8", "--no-mutation", "--kernel", kModel + "," + kModel});
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(r.has("kernel '" + kModel + "' is given twice"));
}

TEST_CASE("class 5: options that do nothing in the combination given are refused, naming what they need") {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"certify", "--suite", "quick", "--kernel", kModel, "--factor", "3"}, "--factor has no effect without --baseline"},
      {{"certify", "--suite", "quick", "--kernel", kModel, "--reveal-samples", "10"}, "--reveal-samples has no effect without --order"},
      {{"certify", "--suite", "quick", "--kernel", kModel, "--no-mutation", "--mutation-min", "50"},
       "--mutation-min has no effect without the mutation score"},
      {{"certify", "--suite", "quick", "--kernel", kModel, "--card", "none", "--card-samples", "5"}, "--card-samples has no effect without --card probe"},
      {{"mutate", "--suite", "quick", "--kernel", kModel, "--reveal-max-launches", "5"}, "--reveal-max-launches has no effect without --order revealed"},
      {{"reveal", "--kernel", kModel, "--m", "4", "--n", "4", "--k", "8", "--replay-samples", "5"}, "--replay-samples has no effect without --replay"},
      {{"quantize", "--to", "mxfp8_e4m3", "--input", "/nonexistent.npy", "--stride", "3"}, "--stride has no effect without --check"},
  };
  for (const auto& [args, message] : cases) {
    const auto r = fpcert_run(args);
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK(r.has(message));
  }
}

TEST_CASE("class 5: --tensor-scale 0 is refused, not silently replaced by the default") {
  const auto r = fpcert_run({"quantize", "--to", "nvfp4", "--tensor-scale", "0", "--input", "/nonexistent.npy"});
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(r.has("--tensor-scale: expected a number > 0, got 0"));
}

TEST_CASE("class 5: uniform bounds that saturate or underflow every value of the source are refused") {
  // f32's largest finite value is about 3.4e38 and its smallest subnormal 2^-149 (about 1.4e-45).
  const auto big = fpcert_run({"gen", "uniform:m=2,n=2,k=2,lo=-1e300,hi=1e300"});
  INFO(big.output);
  CHECK(big.exit_code == 2);
  CHECK(big.has("its values would saturate"));
  const auto tiny = fpcert_run({"gen", "uniform:m=2,n=2,k=2,lo=-1e-300,hi=1e-300"});
  INFO(tiny.output);
  CHECK(tiny.exit_code == 2);
  CHECK(tiny.has("every value would round to zero"));
  const auto normal = fpcert_run({"gen", "normal:m=2,n=2,k=2,mean=1e300,std=1"});
  INFO(normal.output);
  CHECK(normal.exit_code == 2);
  CHECK(normal.has("every value would saturate"));
  const auto scaled = fpcert_run({"gen", "scaled_int:m=2,n=2,k=2,a_scale=1e-300"});
  INFO(scaled.output);
  CHECK(scaled.exit_code == 2);
  CHECK(scaled.has("every value would round to zero"));
  const auto fine = fpcert_run({"gen", "uniform:m=2,n=2,k=2,lo=-1e38,hi=1e38"});  // within f32's range
  INFO(fine.output);
  CHECK(fine.exit_code == 0);
}

TEST_CASE("class 5: selftest --shard numbers from 1 like every --shard; 0/N and an empty shard are refused") {
  const auto zero = fpcert_run({"selftest", "--shard", "0/2", "--kernel", kModel});
  INFO(zero.output);
  CHECK(zero.exit_code == 2);
  const auto empty = fpcert_run({"selftest", "--shard", "2/2", "--kernel", kModel});  // one model: shard 2 of 2 holds none
  INFO(empty.output);
  CHECK(empty.exit_code == 2);
  CHECK(empty.has("holds no model"));
}

// ---- 3 (continued) ----------------------------------------------------------------------------------------

TEST_CASE("class 3: cancel with an FP8 source is refused at once (its length search never ended)") {
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = fpcert_run({"gen", "cancel:n=64,kappa=100,source=e4m3"}, 30);
  INFO(r.output);
  CHECK_FALSE(r.timed_out);
  CHECK(seconds_since(t0) < 10);
  CHECK(r.exit_code == 2);
  CHECK(r.has("bits of precision"));
}

TEST_CASE("class 3: reveal refuses absurd and negative counts and a bad output before any work") {
  for (const auto& [opt, v] : std::vector<std::pair<std::string, std::string>>{
           {"--signatures", "1000000000"}, {"--signatures", "-1"}, {"--max-classes", "-3"}, {"--replay-samples", "0"}, {"--i", "9"}}) {
    const auto r = fpcert_run({"reveal", "--kernel", kModel, "--m", "4", "--n", "4", "--k", "8", opt, v}, 60);
    INFO(opt << " " << v << ": " << r.output);
    CHECK(r.exit_code == 2);
    CHECK_FALSE(r.has("vector"));
  }
  const auto t0 = std::chrono::steady_clock::now();
  const auto out = fpcert_run({"reveal", "--kernel", kModel, "--m", "64", "--n", "64", "--k", "256", "--json", "/nonexistent/r.json"}, 60);
  INFO(out.output);
  CHECK(out.exit_code == 2);
  CHECK(seconds_since(t0) < 10);
  CHECK(out.has("--json '/nonexistent/r.json'"));
}

// ---- 6. output streams and messages -------------------------------------------------------------------------

TEST_CASE("class 6: --json - puts the JSON alone on stdout; the table goes to stderr") {
  const auto r = sh("\"$FPCERT\" convert --from f16 --to e4m3 --value 1.5 --json - 2>/dev/null | python3 -c "
                    "'import json,sys; d=json.load(sys.stdin); print(\"parsed\", type(d).__name__)'");
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(r.has("parsed dict"));
}

TEST_CASE("class 6: a name carrying a newline or an escape sequence is echoed escaped, one line, no forged verdict") {
  const auto r = fpcert_run({"certify", "--suite", "quick", "--kernel", "x\nfpcert: PASSED\x1b[2J"});
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("\nfpcert: PASSED") == std::string::npos);
  CHECK(r.output.find('\x1b') == std::string::npos);
  CHECK(r.has("x\\x0afpcert: PASSED\\x1b[2J"));
}

TEST_CASE("class 6: a card file that is a folder or not a card is refused naming the file (no bare library exception)") {
  const std::string d = fpcert::test::scratch_dir("hardening2_card");
  fpcert::test::write_text(d + "/c.json", "{\"cards\": [{\"x\": 1}]}\n");
  for (const std::string& card : {d, d + "/c.json"}) {
    const auto r = fpcert_run({"reveal", "--kernel", kModel, "--m", "4", "--n", "4", "--k", "8", "--card", card}, 60);
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK(r.has("--card"));
    CHECK(r.has(card));
    CHECK_FALSE(r.has("basic_filebuf"));
  }
}

TEST_CASE("class 6: results with a wrong type or a negative size are refused, naming the file and the field") {
  const std::string d = fpcert::test::scratch_dir("hardening2_results");
  fpcert::test::write_text(d + "/neg.json", R"({"suite":"quick","cases":[{"case":"x","kernel":"k","status":"pass","m":-5}]})" "\n");
  fpcert::test::write_text(d + "/type.json", R"({"suite":"quick","cases":[{"case":"x","kernel":5,"status":"pass"}]})" "\n");
  const auto neg = fpcert_run({"report", d + "/neg.json", "-o", d + "/neg.html"});
  INFO(neg.output);
  CHECK(neg.exit_code == 2);
  CHECK(neg.has("results file '" + d + "/neg.json'"));
  CHECK(neg.has("'m' is a size and must be >= 0, got -5"));
  const auto type = fpcert_run({"report", d + "/type.json", "-o", d + "/type.html"});
  INFO(type.output);
  CHECK(type.exit_code == 2);
  CHECK(type.has("'kernel' must be a string, got 5"));
  fpcert::test::write_text(d + "/mut.json", R"({"suite":"quick","cases":[],"mutation":[{"kernel":"k","suite":"quick","cases":-3,"mutants":[]}]})" "\n");
  const auto mut = fpcert_run({"report", d + "/mut.json", "-o", d + "/mut.html"});
  INFO(mut.output);
  CHECK(mut.exit_code == 2);
  CHECK(mut.has("'cases' must be a count (an integer >= 0), got -3"));
}

TEST_CASE("class 6: report reads an experiment's JSON (split-scalar writes rows, no tables), as documented") {
  const std::string d = fpcert::test::scratch_dir("hardening2_experiment");
  const auto e = fpcert_run({"experiment", "split-scalar", "--pairs", "20", "--json", d + "/e.json"});
  INFO(e.output);
  REQUIRE(e.exit_code == 0);
  const auto r = fpcert_run({"report", d + "/e.json", "-o", d + "/e.html"});
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(r.has("1 experiment(s)"));
  CHECK(fpcert::test::read_text(d + "/e.html").find("split-scalar") != std::string::npos);
}

TEST_CASE("class 6: convert --value -nan keeps the sign (f16 0xfe00: sign, all-ones exponent, quiet bit)") {
  const auto r = fpcert_run({"convert", "--from", "f32", "--to", "f16", "--value", "-nan"});
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(r.has("f32 0xffc00000"));  // sign | exponent 0xff | quiet bit 2^22
  CHECK(r.has("f16 0xfe00"));      // sign | exponent 0x1f | quiet bit 2^9
}

TEST_CASE("class 5: suites = [] in fpcert.toml is refused, not replaced by the default suite") {
  const std::string d = fpcert::test::scratch_dir("hardening2_empty_suites");
  fpcert::test::write_text(d + "/fpcert.toml", "kernels = [\"" + kModel + "\"]\nsuites = []\n");
  const auto r = fpcert_run({"certify", "--config", d + "/fpcert.toml"});
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(r.has("'suites' is empty"));
}

TEST_CASE("class 5: a mutation gate over no applicable mutant fails (0 of 0 read as 100 % passed it)") {
  // acc_f16 narrows the accumulator to fp16: not applicable to a kernel that already accumulates in fp16.
  const auto r = fpcert_run({"mutate", "--kernel", "model_gemm_f16_f16acc", "--suite", "quick", "--fault", "acc_f16", "--min-score", "50"});
  INFO(r.output);
  CHECK(r.has("0/0 killed"));
  CHECK(r.exit_code == 1);
  CHECK(r.has("no applicable mutant"));
}

TEST_CASE("class 5: a selftest whose selection leaves no applicable mutant is not PASSED") {
  const auto r = fpcert_run({"selftest", "--kernel", "model_gemm_f16_f16acc", "--fault", "acc_f16"});
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK(r.has("SELFTEST FAILED: no mutant applied"));
  CHECK_FALSE(r.has("SELFTEST PASSED"));
}

TEST_CASE("--reference gpu with isolated cases is refused before anything runs (exit 2): the children need the device") {
  for (const std::vector<std::string>& iso : {std::vector<std::string>{"--isolate"},
                                             std::vector<std::string>{"--plugin", kPlugins + "/libfault_ctor_exit.so"}}) {
    std::vector<std::string> args = {"certify", "--suite", "quick", "--mn", "8", "--no-mutation", "--kernel", kModel,
                                     "--reference", "gpu"};
    args.insert(args.end(), iso.begin(), iso.end());
    const auto r = fpcert_run(args);
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK(r.has("--reference gpu: not with isolated cases"));
  }
  // (the plugin, one that ends the process as it loads, was never loaded.) auto with --isolate: the CPU oracle, and
  // the run goes on.
  const auto r = fpcert_run({"certify", "--suite", "quick", "--mn", "8", "--no-mutation", "--kernel", kModel, "--isolate",
                             "--reference", "auto"});
  INFO(r.output);
  CHECK(r.exit_code == 0);
}
