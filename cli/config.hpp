// cli/config.hpp — fpcert.toml, the project configuration `fpcert certify --config` runs: plugins,
// kernels, suites, gate overrides and output paths. docs/plugin.md has the reference and an example.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace fpcert::cli {

struct ProjectConfig {
  std::string path;                    ///< the file read
  std::vector<std::string> plugins;    ///< resolved against the file's folder
  std::vector<std::string> kernels;
  std::vector<std::string> suites;     ///< empty: the command's default
  std::optional<bool> isolate;         ///< unset: on when there are plugins
  std::optional<double> timeout_s;
  // [gate]
  std::optional<std::string> variant;  ///< independent | componentwise | worstcase
  std::optional<std::string> baseline;
  std::optional<double> factor;
  std::optional<std::int64_t> mn;
  std::optional<std::string> tier;     ///< bitwise | envelope+statistical | envelope: the strongest verdict tier
  // [orders]: the summation order of plugin kernels that declare none, by kernel name (spec strings)
  std::vector<std::pair<std::string, std::string>> orders;
  // [determinism]: plugin kernels that are nondeterministic run to run, by kernel name ("run_to_run" | "deterministic")
  std::vector<std::pair<std::string, std::string>> determinism;
  // [nan]: the NaN convention of plugin conversion kernels built for ABI minor 0 or 1, by kernel name
  std::vector<std::pair<std::string, std::string>> nan;
  // [output] (resolved against the file's folder)
  std::optional<std::string> json, junit, html;  // [audit]: the check `fpcert audit --config` audits (docs/audit.md, "fpcert.toml"); its flags override these
  struct Audit {
    std::optional<std::string> kernel, traits, inputs, rule, sample_rows;
    std::optional<std::string> op;         ///< gemm | softmax | log_softmax | layernorm | rmsnorm
    std::optional<std::string> reference;  ///< exact | f32 | out
    std::optional<std::string> a, b;       ///< the test's own tensors (.npy), resolved against the file's folder
    std::optional<std::string> a_format, b_format;  ///< their format where the file's dtype leaves it open (bf16, f16)
    std::optional<std::vector<std::string>> allow;  ///< arithmetic admitted besides the declaration (tf32)
    std::optional<bool> batch_invariant;
    std::optional<std::int64_t> m, n, k;
    std::optional<std::vector<std::uint64_t>> seeds;
  } audit;
};

/// Read and check a config file. Throws InputError (exit 2) for a missing file, TOML syntax, an
/// unknown key or a wrong type, naming the file, line and column, the key, and the valid keys.
ProjectConfig load_project_config(const std::string& path);
/// The same from text (`path` only names it in messages and anchors relative paths).
ProjectConfig parse_project_config(const std::string& text, const std::string& path);

}  // namespace fpcert::cli
