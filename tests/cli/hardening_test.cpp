// tests/cli/hardening_test.cpp — the hardening issue's 15 classes of bad input, each as the command a
// hostile or careless user typed, checked by its exit code and the first line of its message
// (docs/errors.md is the contract). fpcert runs as a subprocess (tests/support/run_command.hpp), from
// /bin/sh where the case needs a limit (ulimit) or an environment variable.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/run_command.hpp"

using fpcert::test::CommandResult;
using fpcert::test::fpcert_run;
using fpcert::test::run_command;
using fpcert::test::sh;

namespace {

namespace fs = std::filesystem;

const std::string kPlugins = fpcert::test::env_or("FPCERT_TEST_PLUGIN_DIR", FPCERT_TEST_PLUGIN_DIR);

/// The first line of what the command printed.
std::string first_line(const CommandResult& r) { return r.output.substr(0, r.output.find('\n')); }

/// Files whose names show an unfinished atomic write (".<name>.fpcert-XXXXXX").
int temporaries(const fs::path& d) {
  int n = 0;
  for (const auto& e : fs::recursive_directory_iterator(d)) n += e.path().filename().string().find(".fpcert-") != std::string::npos;
  return n;
}

}  // namespace

// ---- 1. an output path that is not a regular file is not replaced -----------------------------------

TEST_CASE("class 1: --json /dev/null writes to the device and leaves it a device") {
  const auto r = fpcert_run({"convert", "--from", "f16", "--to", "e4m3", "--exhaustive", "--json", "/dev/null"});
  INFO(r.output);
  CHECK(r.exit_code == 0);
  struct stat st {};
  REQUIRE(::stat("/dev/null", &st) == 0);
  CHECK(S_ISCHR(st.st_mode));
}

TEST_CASE("class 1: --json through a symlink replaces the target and keeps the link") {
  const std::string d = fpcert::test::scratch_dir("hardening_symlink");
  fs::create_directories(d + "/real");
  { std::ofstream(d + "/real/r.json") << "old\n"; }
  fs::create_symlink(d + "/real/r.json", d + "/link.json");
  const auto r = fpcert_run({"convert", "--from", "f16", "--to", "e4m3", "--value", "1.5", "--json", d + "/link.json"});
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(fs::is_symlink(d + "/link.json"));
  CHECK(fpcert::test::read_text(d + "/real/r.json").find("\"result_bits\"") != std::string::npos);
}

TEST_CASE("class 1: --json to a FIFO is written into the pipe") {
  const std::string d = fpcert::test::scratch_dir("hardening_fifo");
  const std::string fifo = d + "/pipe";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::string got;
  std::thread reader([&] { got = fpcert::test::read_text(fifo); });
  const auto r = fpcert_run({"convert", "--from", "f16", "--to", "e4m3", "--value", "1.5", "--json", fifo});
  reader.join();
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(nlohmann::json::parse(got).at("result_bits") == "0x3c");
  struct stat st {};
  REQUIRE(::lstat(fifo.c_str(), &st) == 0);
  CHECK(S_ISFIFO(st.st_mode));
}

// ---- 2. whole files read before any check ---------------------------------------------------------

TEST_CASE("class 2: certify --config /dev/zero is refused at once, naming the file") {
  const auto r = fpcert_run({"certify", "--config", "/dev/zero"}, 60);
  CHECK(r.exit_code == 2);
  CHECK(first_line(r) == "fpcert: error: --config '/dev/zero' holds binary data (a NUL byte at offset 0): not a text file");
}

TEST_CASE("class 2: reference --a /dev/zero is refused at once, naming the file") {
  const std::string d = fpcert::test::scratch_dir("hardening_reference_zero");
  const auto r = fpcert_run({"reference", "--a", "/dev/zero", "--b", "/dev/zero", "-o", d + "/out"}, 60);
  CHECK(r.exit_code == 2);
  CHECK(first_line(r) == "fpcert: error: '/dev/zero' is not a usable .npy file: missing the \\x93NUMPY magic");
  CHECK_FALSE(fs::exists(d + "/out"));
}

TEST_CASE("class 2: report /dev/zero is refused at once, naming the file") {
  const std::string d = fpcert::test::scratch_dir("hardening_report_zero");
  const auto r = fpcert_run({"report", "/dev/zero", "-o", d + "/r.html"}, 60);
  CHECK(r.exit_code == 2);
  CHECK(first_line(r) == "fpcert: error: results file '/dev/zero' holds binary data (a NUL byte at offset 0): not a text file");
  CHECK_FALSE(fs::exists(d + "/r.html"));
}

TEST_CASE("class 2 and 13: --config DIR is refused, not read as an empty config") {
  const std::string d = fpcert::test::scratch_dir("hardening_config_dir");
  const auto r = fpcert_run({"certify", "--config", d});
  CHECK(r.exit_code == 2);
  CHECK(first_line(r) == "fpcert: error: --config '" + d + "' is a directory, not a file");
}

// ---- 3 and 4. plugins that are no usable library ---------------------------------------------------

TEST_CASE("class 3: a truncated shared library is refused before dlopen (it crashed the loader with SIGBUS)") {
  const std::string d = fpcert::test::scratch_dir("hardening_truncated_so");
  const auto cut = sh("head -c 100000 /lib/x86_64-linux-gnu/libm.so.6 > '" + d + "/t.so'");
  REQUIRE(cut.exit_code == 0);
  const auto r = fpcert_run({"kernels", "--plugin", d + "/t.so"});
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(first_line(r).rfind("fpcert: error: plugin '" + d + "/t.so' cannot be loaded: truncated: ", 0) == 0);
}

TEST_CASE("class 4: a library without the entry point: the dlerror() text is intact (it was read after dlclose)") {
  const auto r = fpcert_run({"kernels", "--plugin", "/lib/x86_64-linux-gnu/libm.so.6"});
  CHECK(r.exit_code == 2);
  CHECK(first_line(r) ==
        "fpcert: error: plugin '/lib/x86_64-linux-gnu/libm.so.6' does not export fpcert_plugin_enumerate() "
        "(/lib/x86_64-linux-gnu/libm.so.6: undefined symbol: fpcert_plugin_enumerate); a plugin exports it with extern \"C\" "
        "and FPCERT_PLUGIN_EXPORT (see <fpcert/plugin.h>)");
}

// ---- 5. gen -o DIR is atomic per set ----------------------------------------------------------------

TEST_CASE("class 5: gen -o DIR cut short after A.npy leaves the earlier set whole") {
  const std::string d = fpcert::test::scratch_dir("hardening_gen_set");
  const auto first = fpcert_run({"gen", "normal:m=8,n=8,k=8,seed=1,source=f16", "-o", d + "/p"});
  REQUIRE(first.exit_code == 0);
  const std::string meta1 = fpcert::test::read_text(d + "/p/meta.json"), a1 = fpcert::test::read_text(d + "/p/A.npy");
  // ulimit -f 40 (20 KiB in 512-byte blocks): A.npy (96 x 96 fp16 codes, 18 KiB) is written, A_f32.npy
  // (36 KiB) is not: the second set stops half-way, as if killed after A.npy.
  const auto second = sh("ulimit -f 40; exec \"$FPCERT\" gen normal:m=96,n=96,k=96,seed=2,source=f16 -o '" + d + "/p'");
  INFO(second.output);
  CHECK(second.exit_code == 2);
  CHECK(first_line(second).find("File too large (the file-size limit, ulimit -f)") != std::string::npos);
  CHECK(fpcert::test::read_text(d + "/p/meta.json") == meta1);
  CHECK(fpcert::test::read_text(d + "/p/A.npy") == a1);
  CHECK(temporaries(d) == 0);
  // Done in full, the new set replaces the old one whole.
  const auto third = fpcert_run({"gen", "normal:m=4,n=4,k=4,seed=3", "-o", d + "/p"});
  CHECK(third.exit_code == 0);
  CHECK(nlohmann::json::parse(fpcert::test::read_text(d + "/p/meta.json")).at("m") == 4);
  CHECK_FALSE(fs::exists(d + "/p/A_f32.npy"));  // no file of the old set remains
}

TEST_CASE("class 5: gen -o into a folder of the user's is refused before anything is generated") {
  const std::string d = fpcert::test::scratch_dir("hardening_gen_foreign");
  { std::ofstream(d + "/notes.txt") << "mine\n"; }
  const auto r = fpcert_run({"gen", "normal:m=4,n=4,k=4", "-o", d});
  CHECK(r.exit_code == 2);
  CHECK(first_line(r) == "fpcert: error: fpcert gen -o '" + d +
                             "': holds files this command did not write (notes.txt); the folder is replaced as a whole, so give a new or "
                             "empty folder");
  CHECK(fpcert::test::read_text(d + "/notes.txt") == "mine\n");
}

// ---- 6. --timeout with --no-isolate ------------------------------------------------------------------

TEST_CASE("class 6: --timeout holds without isolation: a hanging plugin ends the run with exit 3, results so far kept") {
  const std::string d = fpcert::test::scratch_dir("hardening_no_isolate_hang");
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = fpcert_run({"certify", "--suite", "quick", "--mn", "16", "--kernel", "fault_hang", "--plugin", kPlugins + "/libfault_hang.so",
                             "--no-isolate", "--timeout", "3", "--json", d + "/r.json"},
                            120);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  INFO(r.output);
  CHECK(r.exit_code == 3);
  CHECK_FALSE(r.timed_out);
  CHECK(secs < 60);
  CHECK(r.has("fpcert: suite quick [2/5] k1024_normal: fault_hang did not finish within --timeout 3 s"));
  CHECK(r.has("did not finish within --timeout 3 s; without isolation (--no-isolate) a hung kernel cannot be stopped"));
  // The first case finished and was kept in the partial file.
  CHECK(fpcert::test::read_text(d + "/r.json.partial.jsonl").find("\"status\":\"pass\"") != std::string::npos);
}

// ---- 7. the same file for two outputs --------------------------------------------------------------

TEST_CASE("class 7: --json x --html x and --json x --junit x are refused before running") {
  const std::string d = fpcert::test::scratch_dir("hardening_same_output");
  const std::string x = d + "/x";
  for (const char* other : {"--html", "--junit"}) {
    CAPTURE(other);
    const auto r = fpcert_run({"certify", "--suite", "quick", "--mn", "8", "--kernel", "model_gemm_f16_f32acc", "--json", x, other, x});
    CHECK(r.exit_code == 2);
    CHECK(first_line(r) == "fpcert: error: " + std::string(other) + " '" + x + "' and --json '" + x +
                               "' are the same file: each output needs its own (one would overwrite the other)");
    CHECK_FALSE(fs::exists(x));
  }
}

// ---- 8. a temporary file left behind by SIGXFSZ --------------------------------------------------------

TEST_CASE("class 8: ulimit -f: the write fails with a message (no SIGXFSZ death), no temporary file left") {
  const std::string d = fpcert::test::scratch_dir("hardening_xfsz");
  // ulimit -f 10: 5 KiB (512-byte blocks); the HTML report of the check is larger.
  const auto r = sh("ulimit -f 10; exec \"$FPCERT\" convert --from f16 --to e4m3 --exhaustive --html '" + d + "/c.html'");
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(r.signal == 0);
  CHECK(r.has("fpcert: error: cannot write '" + d + "/c.html': File too large (the file-size limit, ulimit -f)"));
  CHECK(temporaries(d) == 0);
  CHECK_FALSE(fs::exists(d + "/c.html"));
}

// ---- 9. wrong exit codes: numeric options and outputs checked before running ---------------------------

TEST_CASE("class 9: --timeout -1, 0, 1e-9 and nan are usage errors") {
  for (const char* t : {"-1", "0", "1e-9", "nan"}) {
    CAPTURE(t);
    const auto r = fpcert_run({"certify", "--suite", "quick", "--kernel", "model_gemm_f16_f32acc", "--timeout", t});
    CHECK(r.exit_code == 2);
    CHECK(first_line(r) == "--timeout: expected " + std::string(std::string(t) == "nan" ? "a finite number, got 'nan'"
                                                                                         : "seconds in [0.1, 10000000], got " + std::string(t)));
  }
}

TEST_CASE("class 9: --factor -1 and 0 are usage errors, not gate failures") {
  for (const char* f : {"-1", "0"}) {
    CAPTURE(f);
    const auto r = fpcert_run({"certify", "--suite", "quick", "--kernel", "model_gemm_f16_f32acc", "--baseline", "model_gemm_f32", "--factor", f});
    CHECK(r.exit_code == 2);
    CHECK(first_line(r) == "--factor: expected a number > 0, got " + std::string(f));
  }
}

TEST_CASE("class 9: an unwritable or directory --html/--json is refused before the suite runs") {
  const std::string d = fpcert::test::scratch_dir("hardening_outputs_first");
  const auto dir = fpcert_run({"certify", "--suite", "quick", "--mn", "8", "--kernel", "model_gemm_f16_f32acc", "--html", d});
  CHECK(dir.exit_code == 2);
  CHECK(first_line(dir) == "fpcert: error: --html '" + d + "': is a directory (give a file name inside it)");
  const auto missing = fpcert_run({"certify", "--suite", "quick", "--mn", "8", "--kernel", "model_gemm_f16_f32acc", "--json", d + "/no/r.json"});
  CHECK(missing.exit_code == 2);
  CHECK(first_line(missing) == "fpcert: error: --json '" + d + "/no/r.json': the folder '" + d + "/no' does not exist");
  CHECK_FALSE(missing.has("max abs"));  // nothing ran: not even the table header
}

TEST_CASE("class 9: the commands merged later (mutate, selftest, probe, quantize, experiment, merge) check their outputs first too") {
  // Each would otherwise run a suite, a probe or a quantizer sweep before finding the directory.
  const std::string d = fpcert::test::scratch_dir("hardening_outputs_first_more");
  const std::vector<std::vector<std::string>> runs = {
      {"mutate", "--suite", "quick", "--mn", "8", "--kernel", "model_gemm_f16_f32acc", "--json", d},
      {"selftest", "--kernel", "model_gemm_f16_f32acc", "--json", d},
      {"probe", "tensor-cores", "--simulate", "mma-sim", "--json", d},
      {"quantize", "--to", "mxfp4", "--check", "--json", d},
      {"experiment", "scale-rules", "--json", d},
      {"experiment", "accumulation", "--html", d},
      {"merge", d + "/shard1.json", "-o", d},  // before reading a shard (none exists here)
  };
  for (const auto& args : runs) {
    const auto r = fpcert_run(args);
    CAPTURE(r.command);
    CHECK(r.exit_code == 2);
    CHECK(first_line(r).find("'" + d + "': is a directory") != std::string::npos);
  }
  // quantize -o is a folder written as one set: a folder holding the user's files is refused before any work.
  std::ofstream(d + "/notes.txt") << "mine\n";
  const auto q = fpcert_run({"quantize", "--to", "mxfp4", "--input", d + "/notes.txt", "-o", d});
  CHECK(q.exit_code == 2);
  CHECK(fs::exists(d + "/notes.txt"));
}

// ---- 10. problem sizes -----------------------------------------------------------------------------------

TEST_CASE("class 10: --mn 1000000 is refused with the memory estimate before anything is allocated") {
  const auto r = fpcert_run({"certify", "--suite", "quick", "--kernel", "model_gemm_f16_f32acc", "--mn", "1000000"});
  CHECK(r.exit_code == 2);
  CHECK(first_line(r).rfind("fpcert: error: --mn 1000000: a 1000000 x 1000000 x ", 0) == 0);
  CHECK(first_line(r).find("this machine can give") != std::string::npos);
}

// ---- 11. .npy header arithmetic through fpcert reference ------------------------------------------------

TEST_CASE("class 11: reference on .npy files with overflowing, negative, repeated and fractional shapes") {
  const std::string d = fpcert::test::scratch_dir("hardening_npy");
  auto npy = [&](const std::string& name, const std::string& dict, std::size_t data_bytes) {
    std::string header = dict;
    const std::size_t total = 10 + header.size() + 1;
    header += std::string((64 - total % 64) % 64, ' ') + "\n";
    std::string out = "\x93NUMPY";
    out += '\x01';
    out += '\x00';
    out += static_cast<char>(header.size() & 0xFF);
    out += static_cast<char>((header.size() >> 8) & 0xFF);
    std::ofstream(d + "/" + name, std::ios::binary) << out << header << std::string(data_bytes, '\0');
    return d + "/" + name;
  };
  const std::string b = npy("b.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (4, 1), }", 32);
  struct Case {
    std::string file, dict;
    std::size_t bytes;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"overflow.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387905, 4), }", 32,
       "shape (4611686018427387905, 4) of <f8 needs more than 2^63 bytes"},
      {"negative.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (-4, 3), }", 96, "shape (-4, 3): negative dimension -4"},
      {"fraction.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (4.5, 3), }", 0,
       "shape (4.5, 3): dimension '4.5' is not a non-negative integer"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.file);
    const auto r = fpcert_run({"reference", "--a", npy(c.file, c.dict, c.bytes), "--b", b, "-o", d + "/out"});
    CHECK(r.exit_code == 2);
    CHECK(first_line(r) == "fpcert: error: '" + d + "/" + c.file + "' is not a usable .npy file: " + c.message);
  }
  // A repeated key: the last value counts, as in NumPy: (1, 4) times (4, 1).
  const std::string a = npy("dup.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (9, 9), 'shape': (1, 4), }", 32);
  const auto r = fpcert_run({"reference", "--a", a, "--b", b, "-o", d + "/out"});
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(r.has("reference 1 x 1 (K = 4)"));
}

// ---- 12. report on a partial file whose last line is cut ---------------------------------------------------

TEST_CASE("class 12: report uses every complete line of a killed run's partial file and says what it dropped") {
  const std::string d = fpcert::test::scratch_dir("hardening_partial");
  const auto run = fpcert_run({"certify", "--suite", "quick", "--mn", "8", "--kernel", "model_gemm_f16_f32acc", "--json", d + "/r.json"});
  REQUIRE(run.exit_code == 0);
  // The partial file is removed after a complete run: rebuild one from the results, the last line cut.
  const auto doc = nlohmann::json::parse(fpcert::test::read_text(d + "/r.json"));
  std::string lines;
  for (const auto& c : doc.at("cases")) lines += c.dump() + "\n";
  lines += doc.at("cases").at(0).dump().substr(0, 100);  // killed while appending
  { std::ofstream(d + "/cut.partial.jsonl") << lines; }
  const auto r = fpcert_run({"report", d + "/cut.partial.jsonl", "-o", d + "/r.html"});
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(first_line(r) == "fpcert: warning: 1 incomplete last line (100 bytes, line " + std::to_string(doc.at("cases").size() + 1) + ") of '" + d +
                             "/cut.partial.jsonl' was dropped: the run that wrote it was cut short; " +
                             std::to_string(doc.at("cases").size()) + " complete case(s) used");
  CHECK(fs::exists(d + "/r.html"));
}

// ---- 13. silently accepted nonsense ---------------------------------------------------------------------------

TEST_CASE("class 13: --mn 0 and -5 are refused") {
  for (const char* mn : {"0", "-5"}) {
    CAPTURE(mn);
    const auto r = fpcert_run({"certify", "--suite", "quick", "--kernel", "model_gemm_f16_f32acc", "--mn", mn});
    CHECK(r.exit_code == 2);
    CHECK(first_line(r).rfind("--mn: expected ", 0) == 0);
  }
}

TEST_CASE("class 13: --seed -1 and 2^64 are refused, not clamped") {
  for (const char* seed : {"-1", "18446744073709551616"}) {
    CAPTURE(seed);
    const auto r = fpcert_run({"experiment", "split-scalar", "--pairs", "10", "--seed", seed});
    CHECK(r.exit_code == 2);
    CHECK(first_line(r).rfind("--seed: ", 0) == 0);
  }
}

TEST_CASE("class 13: convert --seed -1 / 2^64 and --list -1 are refused, not clamped or wrapped") {
  for (const auto& [opt, v] : std::vector<std::pair<std::string, std::string>>{{"--seed", "-1"}, {"--seed", "18446744073709551616"}, {"--list", "-1"}}) {
    CAPTURE(opt);
    CAPTURE(v);
    const auto r = fpcert_run({"convert", "--from", "f32", "--to", "f16", "--rounding", "rs", "--value", "1.0007", opt, v});
    CHECK(r.exit_code == 2);
    CHECK(first_line(r).rfind(opt + ": ", 0) == 0);
  }
}

TEST_CASE("class 13: --range without --exhaustive and --html with --value are refused, not ignored") {
  const auto range = fpcert_run({"convert", "--from", "f16", "--to", "e4m3", "--value", "1", "--range", "0:10"});
  CHECK(range.exit_code == 2);
  CHECK(first_line(range) == "--range requires --exhaustive");
  const auto html = fpcert_run({"convert", "--from", "f16", "--to", "e4m3", "--value", "1", "--html", "/dev/null"});
  CHECK(html.exit_code == 2);
  // CLI11 names the pair in the order it checks them; either way both options are named.
  CHECK((first_line(html) == "--html excludes --value" || first_line(html) == "--value excludes --html"));
}

TEST_CASE("class 13: --value 'nan(0x123)' keeps its payload; '  1' and '1 ' are both refused") {
  const auto nan = fpcert_run({"convert", "--from", "f32", "--to", "f16", "--value", "nan(0x123)"});
  INFO(nan.output);
  CHECK(nan.exit_code == 0);
  CHECK(first_line(nan).rfind("input   f32 0x7fc00123", 0) == 0);  // quiet bit | payload 0x123
  for (const char* v : {"  1", "1 "}) {
    CAPTURE(v);
    const auto r = fpcert_run({"convert", "--from", "f32", "--to", "f16", "--value", v});
    CHECK(r.exit_code == 2);
    CHECK(first_line(r) == "fpcert: error: value: '" + std::string(v) + "' has spaces around the number");
  }
  const auto big = fpcert_run({"convert", "--from", "f16", "--to", "f32", "--value", "nan(0x3ff)"});
  CHECK(big.exit_code == 2);
  CHECK(first_line(big) == "fpcert: error: value: 'nan(0x3ff)': payload 0x3ff does not fit f16's 9 payload bits (at most 511)");
}

TEST_CASE("class 13: --json '' is refused, not ignored") {
  const auto r = fpcert_run({"certify", "--suite", "quick", "--kernel", "model_gemm_f16_f32acc", "--json", ""});
  CHECK(r.exit_code == 2);
  CHECK(first_line(r) == "--json: an empty path (give a file name, or leave the option out)");
}

TEST_CASE("class 13: FPCERT_THREADS=abc and -3 are refused") {
  for (const char* t : {"abc", "-3"}) {
    CAPTURE(t);
    const auto r = sh(std::string("FPCERT_THREADS=") + t + " exec \"$FPCERT\" formats");
    CHECK(r.exit_code == 2);
    CHECK(first_line(r) == std::string("fpcert: error: FPCERT_THREADS: expected a decimal integer in [1, 4096], got '") + t +
                               "' (unset it to use every core)");
  }
}

TEST_CASE("class 13: report g.json -o g.json would overwrite its input: refused, the input kept") {
  const std::string d = fpcert::test::scratch_dir("hardening_report_input");
  { std::ofstream(d + "/g.json") << "{\"cases\": []}\n"; }
  const auto r = fpcert_run({"report", d + "/g.json", "-o", d + "/g.json"});
  CHECK(r.exit_code == 2);
  CHECK(first_line(r) == "fpcert: error: -o '" + d + "/g.json' is the input '" + d +
                             "/g.json': writing it would destroy what is being read (choose another output path)");
  CHECK(fpcert::test::read_text(d + "/g.json") == "{\"cases\": []}\n");
}

TEST_CASE("class 13: gen SPEC --json without --list is refused, not ignored") {
  const auto r = fpcert_run({"gen", "normal:m=4,n=4,k=4", "--json"});
  CHECK(r.exit_code == 2);
  CHECK(first_line(r).rfind("fpcert: error: fpcert gen --json prints the generator table with --list", 0) == 0);
}

// ---- 14. messages that name the bad word, the file or the option -----------------------------------------------

TEST_CASE("class 14: an unknown command or option names the bad word") {
  const auto cmd = fpcert_run({"certfy", "--kernel", "x"});
  CHECK(cmd.exit_code == 2);
  CHECK(first_line(cmd).rfind("fpcert: error: unknown command 'certfy' (commands: formats, kernels, ", 0) == 0);
  const auto opt = fpcert_run({"certify", "--kernal", "x"});
  CHECK(opt.exit_code == 2);
  CHECK(opt.has("--kernal"));
}

TEST_CASE("class 14: a 100,000-character spec is refused in one short line") {
  const auto r = fpcert_run({"gen", "normal:" + std::string(100000, 'm')});
  CHECK(r.exit_code == 2);
  CHECK(r.output.size() < 1000);
  CHECK(first_line(r).rfind("fpcert: error: spec 'normal:mmmm", 0) == 0);
  CHECK(first_line(r).find("... (100007 characters)': a spec of 100007 characters is longer than the 4096 a spec may have") !=
        std::string::npos);
}

// ---- 15. interruption and start-up ------------------------------------------------------------------------------------

TEST_CASE("class 15: SIGTERM says what was interrupted and where the results so far are; outputs intact") {
  const std::string d = fpcert::test::scratch_dir("hardening_sigterm");
  { std::ofstream(d + "/r.json") << "previous\n"; }
  // The hanging plugin in a child (isolation) keeps the run busy at its second case; SIGTERM after 3 s.
  // (A background job of a script has SIGINT ignored, and fpcert leaves an ignored signal ignored.)
  const auto r = sh("\"$FPCERT\" certify --suite quick --mn 16 --kernel fault_hang --plugin '" + kPlugins +
                        "/libfault_hang.so' --timeout 60 --json '" + d + "/r.json' & pid=$!; sleep 3; kill -TERM $pid; wait $pid",
                    120);
  INFO(r.output);
  CHECK(r.exit_code == 143);  // the shell's view of death by SIGTERM
  CHECK(r.has("fpcert: interrupted by SIGTERM while running suite quick [2/5] k1024_normal: fault_hang; cases finished so far are in " +
              d + "/r.json.partial.jsonl (fpcert report reads it); outputs not yet written were left as they were"));
  CHECK(fpcert::test::read_text(d + "/r.json") == "previous\n");
  CHECK(fpcert::test::read_text(d + "/r.json.partial.jsonl").find("k256_uniform") != std::string::npos);
  CHECK(temporaries(d) == 0);
  // The isolated case that was hanging died with its parent: no orphan goes on spinning.
  std::this_thread::sleep_for(std::chrono::seconds(1));
  // (r[.]json: the pattern must not match the command line of the shell that runs pgrep.)
  CHECK(sh("pgrep -f '" + d + "/r[.]json' >/dev/null").exit_code == 1);
}
