// generators/edges.hpp — the edge values of a target format: at and around its smallest subnormal,
// smallest normal, 1 and largest finite value, with the rounding boundaries between them.
#pragma once

#include <string>
#include <vector>

#include "oracle/format.hpp"

namespace fpcert {

struct EdgeValue {
  std::string label;  ///< e.g. "min_normal", "max_finite_mid_above+" (docs/generators.md, "edges")
  double value;       ///< positive; exactly representable in the source format
};

/// The edge table of `target` for inputs stored in `source`, ascending. For each anchor a in
/// {min_subnormal, min_normal, one, max_finite} of the target:
///   a, a_prev, a_next          a and its neighbours in the target (a_prev > 0; max_finite_next is
///                              max_finite + its ulp, the first value past the range);
///   a_mid_below, a_mid_above   the midpoints between a and its neighbours (rounding ties of the
///                              target: round-to-nearest-even sends each to the even code);
///   a_mid_below-, a_mid_below+, a_mid_above-, a_mid_above+
///                              the source-format neighbours of those midpoints (one source ulp
///                              below/above: they round down/up under round-to-nearest).
/// Entries not exactly representable in the source, or beyond its finite range, are left out
/// (e.g. every midpoint when target == source). Where values coincide (e2m1's smallest normal is
/// 1, its largest subnormal its smallest subnormal) one entry stays, labelled by the first of:
/// anchors, neighbours, midpoints, midpoint neighbours (each in the anchor order above).
std::vector<EdgeValue> edge_table(const Format& target, const Format& source);

}  // namespace fpcert
