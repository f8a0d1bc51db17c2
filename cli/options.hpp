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
/// A finite number > 0 (a factor, a scale).
CLI::Validator positive_number();
/// A path that is not empty ("--json ''" is a mistake, not "no JSON").
CLI::Validator path_text();
/// Seconds of a time limit: a finite number in [0.1, 10^7] (--timeout).
CLI::Validator seconds();

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
