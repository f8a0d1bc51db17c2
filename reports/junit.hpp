// reports/junit.hpp — results as JUnit XML (one testcase per case and kernel), for CI dashboards.
#pragma once

#include <string>

#include "results/results.hpp"

namespace fpcert {

std::string junit_xml(const RunResult& r);

}  // namespace fpcert
