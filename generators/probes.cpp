// generators/probes.cpp — accumulator probes: all ones, alternating signs, sorted sequences.
#include <algorithm>
#include <functional>

#include "generators/family.hpp"

namespace fpcert::detail {
namespace {

constexpr std::uint32_t kProbeId = 14;

void make_probe(const ParsedSpec& ps, Problem& p, const GenContext& ctx) {
  const std::string& kind = ps.choice("kind");
  const double value = ps.real("value");
  set_gemm_shape(ps, p);
  const Format& src = *p.source;
  if (to_source(src, value) != value)
    ps.fail("field 'value' = " + ps.text("value") + " is not exactly representable in source " + std::string(src.tag));
  const Stream s = stream_for(p.seed, kProbeId, kOpA);
  // B is all ones, so C_ij = sum_l A_il: every row of A is a summation probe.
  fill(p.b, ctx, [](std::uint64_t) { return 1.0; });
  if (kind == "ones") {
    fill(p.a, ctx, [&](std::uint64_t) { return value; });
    return;
  }
  // magnitudes in (0, 1] (1 - u, u in [0, 1)), rounded into the source
  fill_source(p.a, src, ctx, [&](std::uint64_t i) { return 1.0 - uniform01(s, i); });
  const std::int64_t k = p.k;
  for (std::int64_t i = 0; i < p.m; ++i) {
    double* row = &p.a.data[static_cast<std::size_t>(i * k)];
    if (kind == "alternating") {
      for (std::int64_t l = 1; l < k; l += 2) row[l] = -row[l];
    } else if (kind == "ascending") {
      std::sort(row, row + k);
    } else {
      std::sort(row, row + k, std::greater<double>());
    }
  }
}

}  // namespace

std::vector<Family> probe_families() {
  GeneratorInfo g;
  g.name = "probe";
  g.summary = "accumulator probes: B is all ones, so C_ij = sum_l A_il; A's rows are all `value` (kind=ones), "
              "alternating-sign, or ascending/descending sorted positive magnitudes in (0, 1]";
  g.details = "ones: an fp16 running sum of 1.0 stops at 2048 (2048 + 1 is a tie that rounds to even), so k = 4096 "
              "gives 2048 instead of 4096. Sorted rows show the order dependence of recursive summation.";
  g.reference = "N. J. Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., SIAM 2002, chapter 4 (summation)";
  g.params = p_shape(16, 16, 4096);
  g.params.push_back(p_choice("kind", "ones", {"ones", "alternating", "ascending", "descending"}, "the probe"));
  g.params.push_back(p_real("value", 1, -1e300, 1e300, "the entries of A for kind=ones (exactly representable in the source)"));
  g.params.push_back(p_seed());
  g.params.push_back(p_source());
  return {{g, make_probe}};
}

}  // namespace fpcert::detail
