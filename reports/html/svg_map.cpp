// reports/html/svg_map.cpp — the error map: an M x N output as a grid of cells coloured by err / allowed
// (svg.hpp, MapGrid), with element indices on the axes, the declared tile's boundaries and a colour bar.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "reports/escape.hpp"
#include "reports/html/svg.hpp"

namespace fpcert::svg {

std::string render_map(const MapGrid& g) {
  const HeatMap heat({}, {}, 1e-3, 1, 1e2);
  const int p = g.precision;
  // The map's colours: err / allowed on the heat map's scale, or correct bits.
  const auto colour = [&](double v) { return g.correct_bits ? bits_colour(v, p) : heat.colour(v); };
  auto flagged = [&](double v) { return g.correct_bits ? !(v >= p) : !(v <= 1); };  // a tooltip: failing, lost bits, ungraded
  const double side = 400;
  const double cell = std::clamp(std::floor(side / static_cast<double>(std::max<std::int64_t>({g.rows, g.cols, 1}))), 3.0, 28.0);
  const double left = 58, top = 40, gw = cell * static_cast<double>(g.cols), gh = cell * static_cast<double>(g.rows);
  std::size_t title_chars = 0;  // UTF-8 code points of the title, which must fit (13 px bold: about 8 px each)
  for (unsigned char ch : g.title) title_chars += (ch & 0xC0) != 0x80;
  const double width = std::max({left + gw + 20, 420.0, 24 + 8.0 * static_cast<double>(title_chars)}), height = top + gh + 96;
  std::string body;
  // Background: the colour of an exact output; then every cell that differs from it.
  const std::string zero = colour(g.correct_bits ? p : 0);
  body += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"#888\" stroke-width=\"1\"/>", pxnum(left),
                      pxnum(top), pxnum(gw), pxnum(gh), zero);
  // Runs of equal colour along a row are one rect (a red tail stripe is a few rects, not hundreds); the failing
  // and ungraded cells of a small map (at most 32 x 32 cells) carry a tooltip with their elements and value,
  // which makes them rects of their own. The file stays small whatever the map.
  const bool tips = g.rows * g.cols <= 1024;
  body += "<g shape-rendering=\"crispEdges\">";  // no anti-aliased seams between neighbouring cells
  for (std::int64_t r = 0; r < g.rows; ++r)
    for (std::int64_t c = 0; c < g.cols;) {
      const double v = g.values[static_cast<std::size_t>(r * g.cols + c)];
      const std::string fill = colour(v);
      const bool tipped = tips && flagged(v);
      std::int64_t run = 1;
      if (!tipped)
        while (c + run < g.cols) {
          const double w = g.values[static_cast<std::size_t>(r * g.cols + c + run)];
          if (colour(w) != fill || (tips && flagged(w))) break;
          ++run;
        }
      if (fill != zero) {
        std::string tip;
        if (tipped) {
          const std::int64_t i0 = r * g.cell_rows, i1 = std::min(g.m, i0 + g.cell_rows) - 1;
          const std::int64_t j0 = c * g.cell_cols, j1 = std::min(g.n, j0 + g.cell_cols) - 1;
          tip = fmt::format("<title>rows {}{}, columns {}{}: {}</title>", i0, i1 > i0 ? fmt::format("\u2013{}", i1) : "", j0,
                            j1 > j0 ? fmt::format("\u2013{}", j1) : "",
                            std::isnan(v)     ? std::string("not graded")
                            : g.correct_bits ? fmt::format("fewest correct bits {:.0f} of {}", v, p)
                                             : fmt::format("max err / allowed = {:.4g}", v));
        }
        body += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\">{}</rect>", pxnum(left + cell * static_cast<double>(c)),
                            pxnum(top + cell * static_cast<double>(r)), pxnum(cell * static_cast<double>(run)), pxnum(cell), fill, tip);
      }
      c += run;
    }
  body += "</g>";
  // Tile boundaries (element coordinates -> pixels).
  auto tile_lines = [&](std::int64_t tile, std::int64_t extent, std::int64_t per_cell, bool vertical) {
    if (tile <= 0) return;
    const double px_per_el = cell / static_cast<double>(per_cell);
    if (px_per_el * static_cast<double>(tile) < 4) return;
    for (std::int64_t e = tile; e < extent; e += tile) {
      const double p = px_per_el * static_cast<double>(e);
      body += vertical ? fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#555\" stroke-width=\"0.8\" stroke-dasharray=\"3 2\"/>",
                                     pxnum(left + p), pxnum(top), pxnum(top + gh))
                       : fmt::format("<line x1=\"{1}\" y1=\"{0}\" x2=\"{2}\" y2=\"{0}\" stroke=\"#555\" stroke-width=\"0.8\" stroke-dasharray=\"3 2\"/>",
                                     pxnum(top + p), pxnum(left), pxnum(left + gw));
    }
  };
  tile_lines(g.tile_m, g.m, g.cell_rows, false);
  tile_lines(g.tile_n, g.n, g.cell_cols, true);
  // Axes: the first and last element index of each side, and j / i.
  body += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\" fill=\"#333\">0</text>", pxnum(left), pxnum(top - 6));
  body += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"end\" fill=\"#333\">{}</text>", pxnum(left + gw), pxnum(top - 6),
                      g.n - 1);
  body += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11.5\" text-anchor=\"middle\" fill=\"#222\">column j \u2192</text>",
                      pxnum(left + gw / 2), pxnum(top - 6));
  body += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"end\" fill=\"#333\">0</text>", pxnum(left - 4), pxnum(top + 10));
  body += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"end\" fill=\"#333\">{}</text>", pxnum(left - 4), pxnum(top + gh),
                      g.m - 1);
  body += fmt::format("<text transform=\"translate({} {}) rotate(-90)\" font-size=\"11.5\" text-anchor=\"middle\" fill=\"#222\">row i \u2192</text>",
                      pxnum(left - 30), pxnum(top + gh / 2));
  // Colour bar.
  const double bx = 24, bw = std::min(width - 48, 360.0), by = top + gh + 40, bh = 12;
  if (g.correct_bits) {
    body += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\" fill=\"#222\">the fewest correct bits in each cell ({}: correctly "
                        "rounded)</text>",
                        pxnum(bx - 12), pxnum(by - 6), p);
    for (int i = 0; i < 50; ++i)
      body += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"{}\" stroke-width=\"0.3\"/>",
                          pxnum(bx + bw * i / 50), pxnum(by), pxnum(bw / 50 + 0.3), pxnum(bh), bits_colour(p * (i + 0.5) / 50, p),
                          i == 49 ? "#bbb" : "none");
    for (int d = 0; d <= 5; ++d) {
      const int b = d == 5 ? p : p * d / 5;
      const double X = bx + bw * b / p;
      body += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#444\" stroke-width=\"1\"/>", pxnum(X), pxnum(by + bh),
                          pxnum(by + bh + 4));
      body += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"10.5\" text-anchor=\"middle\" fill=\"#333\">{}</text>", pxnum(X),
                          pxnum(by + bh + 16), b);
    }
  } else {
    body += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\" fill=\"#222\">err / allowed, the largest in each cell (pass \u2264 1: "
                        "the black mark)</text>",
                        pxnum(bx - 12), pxnum(by - 6));
    for (int i = 0; i < 50; ++i) {
      const double v = std::pow(10.0, -3 + 5 * (i + 0.5) / 50);
      body += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>", pxnum(bx + bw * i / 50), pxnum(by), pxnum(bw / 50 + 0.3),
                          pxnum(bh), colour(v));
    }
    const char* labels[] = {"0.001", "0.01", "0.1", "1", "10", "100"};
    for (int d = 0; d <= 5; ++d) {
      const double X = bx + bw * d / 5;
      body += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"{3}\" stroke-width=\"{4}\"/>", pxnum(X),
                          pxnum(d == 3 ? by - 3 : by + bh), pxnum(by + bh + (d == 3 ? 3 : 4)), d == 3 ? "#000" : "#444", d == 3 ? 2 : 1);
      body += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"10.5\" text-anchor=\"middle\" fill=\"#333\">{}</text>", pxnum(X), pxnum(by + bh + 16),
                          labels[d]);
    }
  }
  std::string note = g.cell_rows > 1 || g.cell_cols > 1 ? fmt::format("each cell: {} \u00d7 {} elements", g.cell_rows, g.cell_cols)
                                                        : std::string("each cell: one element");
  note += "; grey: not graded";
  if (g.tile_m > 0 && g.tile_n > 0) note += fmt::format("; dashed: the declared {} \u00d7 {} tiles", g.tile_m, g.tile_n);
  body += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"10.5\" fill=\"#555\">{}</text>", pxnum(bx - 12), pxnum(by + bh + 34), html_escape(note));
  return fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"plot\" viewBox=\"0 0 {0} {1}\" width=\"{0}\" height=\"{1}\" role=\"img\" "
                     "aria-label=\"{2}\" font-family=\"system-ui, sans-serif\"><title>{2}</title><rect x=\"0\" y=\"0\" width=\"{0}\" height=\"{1}\" "
                     "fill=\"#ffffff\"/><text x=\"12\" y=\"18\" font-size=\"13\" font-weight=\"600\" fill=\"#111\">{2}</text>",
                     pxnum(width), pxnum(height), html_escape(g.title)) +
         body + "</svg>";
}

}  // namespace fpcert::svg
