// bench/fa_rule_args.hpp — what bench_attention_fa_rule and bench_attention_bwd_fa_rule share around their tables: the
// arguments [kernel] [--json FILE], and the record written to FILE for `fpcert report` (results/fa_rule.hpp).
#pragma once

#include <cstdio>
#include <string>

#include "base/atomic_file.hpp"
#include "results/fa_rule.hpp"

namespace fpcert::bench {

/// Reads [kernel] [--json FILE] into `name` (left as its default when absent) and `json_path`; false (usage printed)
/// on anything else.
inline bool fa_rule_args(int argc, char** argv, std::string& name, std::string& json_path) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json" && i + 1 < argc) {
      json_path = argv[++i];
    } else if (a.rfind("--", 0) == 0) {
      std::fprintf(stderr, "usage: %s [kernel] [--json FILE]\n", argv[0]);
      return false;
    } else {
      name = a;
    }
  }
  return true;
}

/// The table as a record at `path` (nothing when empty).
inline void write_fa_rule(const FaRuleRecord& rec, const std::string& path) {
  if (path.empty()) return;
  write_file_atomic(path, fa_rule_to_json(rec).dump(1) + "\n");
  std::printf("record: %s\n", path.c_str());
}

}  // namespace fpcert::bench
