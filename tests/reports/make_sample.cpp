// tests/reports/make_sample.cpp — writes the sample runs of sample_results.hpp as fpcert results
// JSON (DIR/sample_r<i>.json), real results of CPU models for the report's command-line and
// rendering tests and for the screenshots in docs/report.md. Usage: report_sample DIR [--full] [--html]
// (--html: also DIR/sample_report.html of every run and DIR/sample_diff.html of the two `tiles` runs).
#include <fmt/format.h>

#include <cstring>
#include <filesystem>

#include "base/atomic_file.hpp"
#include "reports/html/html.hpp"
#include "results/results_json.hpp"
#include "tests/reports/sample_results.hpp"
#include "tests/support/test_seed.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: report_sample DIR [--full]\n");
    return 2;
  }
  bool full = false, html = false;
  for (int i = 2; i < argc; ++i) {
    full |= std::strcmp(argv[i], "--full") == 0;
    html |= std::strcmp(argv[i], "--html") == 0;
  }
  std::filesystem::create_directories(argv[1]);
  const auto runs = fpcert::test::sample_runs(fpcert::test::seed(), full);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const std::string p = fmt::format("{}/sample_r{}.json", argv[1], i);
    fpcert::write_file_atomic(p, fpcert::to_json(runs[i]).dump(2) + "\n");
    fmt::print("{}: suite {}, {} cases\n", p, runs[i].suite, runs[i].cases.size());
  }
  if (html) {
    fpcert::write_html_report(fmt::format("{}/sample_report.html", argv[1]), runs);
    std::vector<fpcert::RunResult> tiles;
    for (const auto& r : runs)
      if (r.suite == "tiles") tiles.push_back(r);
    fpcert::write_html_report(fmt::format("{}/sample_diff.html", argv[1]), tiles);
  }
  return 0;
}
