// reports/reveal_html.hpp — a revelation (results/reveal.hpp) as text and HTML: the classes of output
// elements, each tree's summary, the checks and the replay, and the tree itself drawn as inline SVG
// (oracle/order/sum_tree.hpp's display_tree keeps any K to a few dozen boxes: chains show their ends around
// an ellipsis, contiguous products one box). docs/reveal.md shows an example.
#pragma once

#include <string>

#include "oracle/order/sum_tree.hpp"
#include "results/reveal.hpp"

namespace fpcert {

/// The tree drawn top-down as an <svg> element: the root at the top, products at the bottom; node
/// boxes say "+" (two children) or "Σw" (a fused node of w children).
std::string sum_tree_svg(const SumTree& t, int max_boxes = 48);
/// The same drawing as indented text lines (the terminal's picture).
std::string sum_tree_text(const SumTree& t, int max_boxes = 32);

/// The terminal summary: status, classes with their trees' summaries, checks, replay, cost.
std::string reveal_text(const RevealResult& r, bool draw_trees = true);

/// A whole self-contained HTML document (no script, no network).
std::string reveal_page(const RevealResult& r, const std::string& command);

}  // namespace fpcert
