// tests/support/same_result.hpp — field-by-field equality of two conversion checks' results, for the
// tests that hold two paths to the same answer. Doctest assertions: include after <doctest/doctest.h>.
#pragma once

#include <cstddef>

#include "oracle/convert/convert_check.hpp"

namespace fpcert::test {

/// Every count and every listed entry of two check results; mpfr_checked is the caller's to compare
/// (paths that take fpcert's model as the truth in places run MPFR on fewer codes).
inline void check_same_result(const ConvertCheckResult& a, const ConvertCheckResult& b) {
  CHECK(a.patterns == b.patterns);
  CHECK(a.outcomes == b.outcomes);
  CHECK(a.mismatches == b.mismatches);
  CHECK(a.model_mismatches == b.model_mismatches);
  CHECK(a.nan_differences == b.nan_differences);
  REQUIRE(a.listed.size() == b.listed.size());
  for (std::size_t i = 0; i < a.listed.size(); ++i) {
    CAPTURE(i);
    CHECK(a.listed[i].src == b.listed[i].src);
    CHECK(a.listed[i].expected == b.listed[i].expected);
    CHECK(a.listed[i].got == b.listed[i].got);
    CHECK(a.listed[i].outcome == b.listed[i].outcome);
    CHECK(a.listed[i].model_bug == b.listed[i].model_bug);
  }
}

}  // namespace fpcert::test
