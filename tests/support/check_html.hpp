// tests/support/check_html.hpp — write a page and run the strict HTML checker (tests/reports/check_html.py)
// on it: the report tests' one way of saying "well-formed and self-contained".
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "base/atomic_file.hpp"

namespace fpcert::test {

struct HtmlCheck {
  bool ok = false;     ///< the checker ran and exited 0
  std::string output;  ///< what it printed
};

/// Writes `html` to <dir>/<name> (dir created in the working directory) and checks it.
inline HtmlCheck check_html(const std::string& html, const std::string& dir, const std::string& name) {
  namespace fs = std::filesystem;
  fs::create_directories(dir);
  const fs::path path = fs::path(dir) / name, log = fs::path(dir) / (name + ".check.txt");
  write_file_atomic(path.string(), html);
  const std::string cmd = "python3 '" + std::string(FPCERT_SOURCE_DIR) + "/tests/reports/check_html.py' '" + path.string() + "' > '" + log.string() + "' 2>&1";
  const int rc = std::system(cmd.c_str());
  std::ifstream f(log);
  HtmlCheck r;
  r.output.assign(std::istreambuf_iterator<char>(f), {});
  r.ok = WIFEXITED(rc) && WEXITSTATUS(rc) == 0;
  return r;
}

}  // namespace fpcert::test
