// suites/verdict/unwritten.hpp — the runner's "never written" count corrected where its pre-fill is also a correct
// result. The runner pre-fills outputs with a NaN of a payload of its own (suites/run/case_run.cpp, prefill_code); a
// format with NaN and no Inf (e4m3: one NaN per sign) has no spare payload, so its pre-fill is the canonical NaN, which
// is exactly what round-to-nearest gives for a NaN result and for a value beyond the range (448 + half an ulp for
// e4m3). Such an element is judged by the graders' own checks (nonfinite, envelope), not as unwritten.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "oracle/format.hpp"

namespace fpcert {

struct UnwrittenCount {
  std::int64_t unwritten = 0, first_unwritten = -1;
};

/// `in` (the runner's count over `codes`) less the elements whose code is `out`'s canonical NaN where the exact result
/// `exact(x)` is NaN, infinite or at least out's largest finite value in magnitude (a correct kernel may overflow
/// there); only for formats with NaN and no Inf, whose pre-fill that NaN is. Other formats: `in` unchanged.
UnwrittenCount discount_prefill_results(const Format& out, const std::vector<std::uint64_t>& codes, const UnwrittenCount& in,
                                        const std::function<double(std::size_t)>& exact);

}  // namespace fpcert
