// tests/cli/run_outputs_test.cpp — what certify decides over the whole run, applied where a scaled run
// becomes whole (cli/run_outputs.hpp, complete_certify; docs/scale.md): a mutation score measured by
// one part is withdrawn when its kernel failed in another part, and the evidence rule's failures join
// the last suite.
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "cli/progress.hpp"
#include "cli/run_outputs.hpp"

using namespace fpcert;

namespace {

CaseResult make_case(const std::string& suite, const std::string& id, const std::string& kernel, CaseStatus st) {
  CaseResult c;
  c.suite = suite;
  c.case_id = id;
  c.kernel = kernel;
  c.status = st;
  return c;
}

MutationScore score(const std::string& suite, const std::string& kernel) {
  MutationScore s;
  s.suite = suite;
  s.kernel = kernel;
  return s;
}

}  // namespace

TEST_CASE("complete_certify: a score stands only where its kernel passed every case of the suite") {
  RunResult r;
  r.suite = "quick";
  r.kernels = {"ka", "kb"};
  r.cases = {make_case("quick", "c1", "ka", CaseStatus::Pass), make_case("quick", "c2", "ka", CaseStatus::NotSupported),
             make_case("quick", "c1", "kb", CaseStatus::Pass), make_case("quick", "c2", "kb", CaseStatus::Fail)};
  r.mutation = {score("quick", "ka"), score("quick", "kb")};  // kb's measured by the part that saw only its c1
  cli::complete_certify(r, false);
  REQUIRE(r.mutation.size() == 1);
  CHECK(r.mutation[0].kernel == "ka");
  CHECK(r.notes.at("mutation kb") == "not measured: the kernel itself failed");
  CHECK(r.cases.size() == 4);  // no evidence rule asked for
}

TEST_CASE("complete_certify: the evidence rule's failures join the last suite of a run of several") {
  RunResult a, b;
  a.suite = "quick";
  b.suite = "certify";
  a.kernels = b.kernels = {"model_gemm_f32"};
  RunResult r = cli::join_suites({a, b});  // no case at all: no evidence of any error source
  cli::complete_certify(r, true);
  REQUIRE(r.cases.size() == 1);
  CHECK(r.cases[0].case_id == "evidence");
  CHECK(r.cases[0].suite == "certify");
  CHECK(r.cases[0].status == CaseStatus::Fail);
  CHECK(cli::split_suites(r).back().cases.size() == 1);  // in the last suite's JUnit and HTML
}

TEST_CASE("certify's time-by-kernel line: slowest first, the eight slowest named, the total") {
  std::map<std::string, double> wall;
  for (int i = 0; i < 10; ++i) wall["k" + std::to_string(i)] = i + 0.25;  // k9 the slowest, 9.25 s
  const std::string line = cli::kernel_time_line(wall);
  CHECK(line.find("slowest first): k9 9.2 s, k8 8.2 s") != std::string::npos);
  CHECK(line.find("k2 2.2 s") != std::string::npos);   // the eighth
  CHECK(line.find("k1 ") == std::string::npos);        // the ninth is not named
  CHECK(line.find(", ... (10 kernels, 47.5 s)\n") != std::string::npos);
}
