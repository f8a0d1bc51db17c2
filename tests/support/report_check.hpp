// tests/support/report_check.hpp — a run's HTML report written beside its JSON and read by the strict checker
// (tests/reports/check_html.py --require-tagged): every number shown must be tagged and equal the JSON's.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "reports/html/html.hpp"
#include "results/results_json.hpp"
#include "tests/support/check_html.hpp"

namespace fpcert::test {

/// Writes r as <tmp>/fpcert_<tag>_<pid>/r0.json and its report r.html, runs the checker with the JSON as source; the
/// page's text comes back in `output` after the checker's (html). The folder is removed unless FPCERT_KEEP_TEST_FILES.
struct ReportCheck : HtmlCheck {
  std::string html;
};
inline ReportCheck check_report_tagged(const RunResult& r, const std::string& tag) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("fpcert_" + tag + "_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  {
    std::ofstream f(dir / "r0.json");
    f << to_json(r).dump(1);
  }
  ReportInput in;
  in.runs = {r};
  write_html_report((dir / "r.html").string(), in);
  const std::string cmd = "python3 '" + std::string(FPCERT_SOURCE_DIR) + "/tests/reports/check_html.py' '" + (dir / "r.html").string() +
                          "' --src 'r0=" + (dir / "r0.json").string() + "' --require-tagged > '" + (dir / "check.txt").string() + "' 2>&1";
  const int rc = std::system(cmd.c_str());
  ReportCheck c;
  std::ifstream out(dir / "check.txt");
  c.output.assign(std::istreambuf_iterator<char>(out), {});
  c.ok = WIFEXITED(rc) && WEXITSTATUS(rc) == 0;
  std::ifstream hf(dir / "r.html");
  c.html.assign(std::istreambuf_iterator<char>(hf), {});
  std::error_code ec;
  if (!std::getenv("FPCERT_KEEP_TEST_FILES")) fs::remove_all(dir, ec);
  return c;
}

}  // namespace fpcert::test
