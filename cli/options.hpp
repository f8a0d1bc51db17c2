// cli/options.hpp — strict checks of the commands' numeric options and environment, applied while
// the command line is parsed, so a bad value is a usage error (exit 2) that names the option before
// anything runs: CLI11 alone wraps -1 into an unsigned option and accepts nan or 0 where only a
// positive number makes sense (docs/errors.md lists each check).
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace fpcert::cli {

/// An integer in [lo, hi] written in decimal or 0x hex, nothing else (no sign for unsigned, no
/// spaces, no exponent): "--seed -1" and "--seed 18446744073709551616" are refused, not clamped.
CLI::Validator integer_in(std::uint64_t lo, std::uint64_t hi);
/// A signed integer in [lo, hi]: an optional '-', then decimal or 0x hex digits, nothing else.
CLI::Validator signed_integer_in(std::int64_t lo, std::int64_t hi);
/// A finite number > 0 (a factor, a scale).
CLI::Validator positive_number();
/// A finite number in [lo, hi], written as decimal or hex-float text and nothing else: "nan", "inf",
/// " 5" and "5x" are refused (CLI::Range lets NaN through every comparison: `--min-score nan` passed a
/// 0 % score). Every real-valued option goes through this one parser (tests/cli/options_audit_test.cpp).
CLI::Validator number_in(double lo, double hi);
/// A path that is not empty ("--json ''" is a mistake, not "no JSON").
CLI::Validator path_text();
/// An output file of the command: a non-empty path, which check_command_io() plans against every input
/// of the command before any work. With `journal`, the command also appends its cases to
/// PATH.partial.jsonl, which counts as an output too.
CLI::Validator output_path(bool journal = false);
/// An output folder of the command (gen -o, reference -o, quantize -o): no input may lie inside it.
CLI::Validator output_dir();

/// Every input of a parsed command: each value of its options and positionals that names an existing
/// file or folder, except the outputs (output_path, output_dir).
std::vector<std::string> command_inputs(const CLI::App& app);
/// The outputs a parsed command declares (output_path options), with the journals derived from them
/// (PATH.partial.jsonl): (what, path) pairs.
std::vector<std::pair<std::string, std::string>> command_outputs(const CLI::App& app);
/// Plan a parsed command's outputs against its inputs before any work (exit 2 on a clash): no output,
/// derived name (journal, workers' folder) or output folder may be one of the inputs or hold one, no two
/// outputs the same file; each output writable and short enough for its temporary name
/// (base/output_path.hpp). `extra_outputs` are journaled outputs that come from elsewhere (a config file).
void check_command_io(const CLI::App& app, const std::vector<std::pair<std::string, std::string>>& extra_outputs = {},
                      bool create_parents = false);
/// The journal derived from a journaled output PATH (PATH.partial.jsonl), as (what, path).
std::vector<std::pair<std::string, std::string>> journal_outputs(const std::string& what, const std::string& path);
/// Seconds of a time limit: a finite number in [0.1, 10^7] (--timeout).
CLI::Validator seconds();

/// Options that have an effect only with something else: when `given` is false and any of `options`
/// was given on the command line, throws InputError "OPTION has no effect without NEEDS".
void refuse_without(const CLI::App& app, const std::vector<std::string>& options, bool given, const std::string& needs);

/// Check the environment the commands read: FPCERT_THREADS, when set, is an integer in [1, 4096].
/// Throws InputError naming the variable.
void check_environment();

/// The outputs of a command checked before it does any work (base/output_path.hpp): each writable,
/// none a directory, no two the same file, none one of `inputs`. (option, path) pairs; empty paths skipped.
void check_command_outputs(const std::vector<std::pair<std::string, std::string>>& outputs,
                           const std::vector<std::string>& inputs = {}, bool create_parents = false);

/// Estimated bytes a GEMM case of m x k times k x n needs (inputs as exact values and in the kernel's
/// formats, the exact reference, the output with guards); throws InputError with the estimate when it
/// exceeds what this machine can give (available memory, or the address-space limit).
void check_gemm_memory(std::int64_t m, std::int64_t n, std::int64_t k, const std::string& what);
/// The same for the problem a generator spec describes: only its inputs (gen), or, with `graded`, a
/// case of it run and graded (certify, run-suite). A bad spec is the spec parser's InputError.
void check_spec_memory(const std::string& spec, bool graded, const std::string& what);

}  // namespace fpcert::cli
