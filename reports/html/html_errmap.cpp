// reports/html/html_errmap.cpp — error maps: a case's M x N output coloured by err / allowed (downsampled in the
// results keeping the maximum, results/results.hpp ErrorMap), with its worst elements in the coordinates of
// the kernel's declared tile beside it, so that tail stripes, a bad row or column, or a periodic pattern
// is seen at a glance; for fp64 outputs the correct-bits map beside it (the fewest correct bits per cell).
#include <fmt/format.h>

#include <cmath>

#include "reports/html/html_parts.hpp"
#include "reports/html/svg.hpp"

namespace fpcert::html {

std::string tile_position(const CaseResult& c, std::int64_t i, std::int64_t j) {
  if (c.tile_m <= 0 || c.tile_n <= 0) return "";
  const bool row_tail = c.m % c.tile_m != 0 && i >= c.m / c.tile_m * c.tile_m;
  const bool col_tail = c.n % c.tile_n != 0 && j >= c.n / c.tile_n * c.tile_n;
  std::string tail;
  if (row_tail && col_tail) tail = " (tail rows and columns)";
  else if (row_tail) tail = " (tail rows)";
  else if (col_tail) tail = " (tail columns)";
  return fmt::format("tile ({}, {}), at ({}, {}){}", i / c.tile_m, j / c.tile_n, i % c.tile_m, j % c.tile_n, tail);
}

std::string error_map_block(const CaseResult& c, const std::string& src, const std::string& base) {
  if (!c.error_map || c.error_map->rows <= 0 || c.error_map->cols <= 0) return "";
  const ErrorMap& e = *c.error_map;
  svg::MapGrid g;
  g.rows = e.rows;
  g.cols = e.cols;
  g.cell_rows = e.cell_rows;
  g.cell_cols = e.cell_cols;
  g.m = c.m;
  g.n = c.n;
  g.tile_m = c.tile_m;
  g.tile_n = c.tile_n;
  g.values = e.max_frac;
  g.title = fmt::format("Error map: {} on {} ({}\u00d7{})", c.case_id, c.kernel, c.m, c.n);
  std::string side = "<div class=\"mapside\"><p><b>Worst elements</b>";
  if (c.tile_m > 0 && c.tile_n > 0)
    side += fmt::format(" in the kernel\u2019s declared {}\u00d7{} tiles", vint(src, base + "/tile/m", c.tile_m), vint(src, base + "/tile/n", c.tile_n));
  side += ":</p><ol class=\"worstlist\">";
  if (!c.worst_envelope.empty()) {
    // The map's own elements: err / allowed under the envelope, as the map colours them.
    for (std::size_t w = 0; w < c.worst_envelope.size(); ++w) {
      const ElementFraction& x = c.worst_envelope[w];
      const std::string p = fmt::format("{}/worst_envelope/{}", base, w);
      side += fmt::format("<li>({}, {}){}: err / allowed {}</li>", vint(src, p + "/i", x.i), vint(src, p + "/j", x.j),
                          c.tile_m > 0 ? " \u2014 " + html_escape(tile_position(c, x.i, x.j)) : "",
                          vnum(src, p + "/frac", x.frac, x.frac > 1 ? "badt" : ""));
    }
  } else {
    // Results written before the envelope's worst elements were kept: the course gate's.
    for (std::size_t w = 0; w < c.worst.size(); ++w) {
      const WorstElement& x = c.worst[w];
      const std::string p = fmt::format("{}/worst/{}", base, w);
      side += fmt::format("<li>({}, {}){}</li>", vint(src, p + "/i", x.i), vint(src, p + "/j", x.j),
                          c.tile_m > 0 ? " \u2014 " + html_escape(tile_position(c, x.i, x.j)) : "");
    }
  }
  side += "</ol>";
  if (c.tile_m <= 0) side += "<p class=\"muted\">The kernel declares no tile shape (traits tile_m \u00d7 tile_n): indices are in C.</p>";
  side += c.worst_envelope.empty() ? "<p class=\"muted\">Ranked by the course gate (these results hold no envelope ranking).</p></div>"
                                   : "<p class=\"muted\">Ranked by err / allowed under the envelope, as the map is coloured; the table "
                                     "below ranks by the course gate (the design source\u2019s normwise allowance, reported).</p></div>";
  // fp64 outputs: where the bits were lost, the fewest correct bits of each cell on the same grid.
  std::string bits;
  if (!e.min_correct_bits.empty()) {
    svg::MapGrid b = g;
    b.values = e.min_correct_bits;
    b.correct_bits = true;
    b.precision = 53;  // correct bits are kept for fp64 outputs only
    b.title = fmt::format("Correct bits: {} on {} ({}\u00d7{})", c.case_id, c.kernel, c.m, c.n);
    bits = "<div class=\"mapbox\">" +
           figure(svg::render_map(b), "Each cell is coloured by the fewest bits of its elements that agree with the correctly rounded "
                                      "fp64 result (53: correctly rounded; docs/fp64.md, \u201cCorrect bits\u201d): an emulation that "
                                      "scales a row or column loses bits on its small entries, and the map shows which lines.") +
           "</div>";
  }
  return "<div class=\"mapbox\">" +
         figure(svg::render_map(g), "Each cell is coloured by the largest err / allowed of the elements it covers (allowed: the envelope\u2019s "
                               "per-element bound): blue within the bound, red beyond it, grey where nothing was graded. Stripes at "
                               "the right or bottom edge point at a tile tail; one red row or column at an indexing bug; a "
                               "repeating pattern at a warp- or tile-sized fault.") +
         side + "</div>" + bits;
}

std::string passing_error_maps(const RunResult& r, const std::string& src) {
  std::string s;
  for (std::size_t i = 0; i < r.cases.size(); ++i) {
    const CaseResult& c = r.cases[i];
    if (c.status == CaseStatus::Pass && c.error_map) s += error_map_block(c, src, case_ptr(i));
  }
  if (s.empty()) return "";
  return "<h3>Error maps of passing cases</h3><p class=\"muted\">Kept because the run asked for them (certify --error-maps); a "
         "failing case\u2019s map is in its failure card.</p>" +
         s;
}

}  // namespace fpcert::html
