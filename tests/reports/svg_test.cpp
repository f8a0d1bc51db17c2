// tests/reports/svg_test.cpp — the SVG plot writer puts things where the axes say: coordinates,
// ticks, labels, clipping, and what it does with values a log axis cannot hold.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <regex>
#include <string>
#include <vector>

#include "reports/html/svg.hpp"

using namespace fpcert::svg;

namespace {

std::vector<double> majors(const std::vector<Tick>& t) {
  std::vector<double> v;
  for (const auto& x : t)
    if (x.major) v.push_back(x.value);
  return v;
}
std::vector<std::string> labels(const std::vector<Tick>& t) {
  std::vector<std::string> v;
  for (const auto& x : t)
    if (x.major) v.push_back(x.label);
  return v;
}
std::vector<double> minors(const std::vector<Tick>& t) {
  std::vector<double> v;
  for (const auto& x : t)
    if (!x.major) v.push_back(x.value);
  std::sort(v.begin(), v.end());
  return v;
}
int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (auto p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}
/// Every number in the coordinate attributes of the markup.
std::vector<std::string> coordinate_values(const std::string& s) {
  std::vector<std::string> out;
  static const std::regex re(R"re(\s(?:x|y|cx|cy|r|x1|x2|y1|y2|width|height|d|points)="([^"]*)")re");
  for (auto it = std::sregex_iterator(s.begin(), s.end(), re); it != std::sregex_iterator(); ++it) out.push_back((*it)[1]);
  return out;
}

}  // namespace

TEST_CASE("a log axis maps decades linearly: 100 on 1 to 10^4 sits exactly halfway across the plot area") {
  Plot p(Axis{Scale::Log, 1, 1e4, "x"}, Axis{Scale::Log, 1e-8, 1, "y"}, 560, 340);
  const double half = p.left() + p.area_width() / 2;
  CHECK(p.px(100) == half);
  CHECK(p.px(1) == p.left());
  CHECK(p.px(1e4) == p.left() + p.area_width());
  CHECK(p.px(10) == p.left() + p.area_width() / 4);  // log10(10) / log10(10^4) = 1/4
  // y grows upwards: the bottom of the area is the low end; 1e-4 is 4 of 8 decades up.
  CHECK(p.py(1e-8) == p.top() + p.area_height());
  CHECK(p.py(1) == p.top());
  CHECK(p.py(1e-4) == p.top() + p.area_height() / 2);
  // Linear axis: 2.5 on [0, 10] is a quarter of the way.
  Plot q(Axis{Scale::Linear, 0, 10, "x"}, Axis{Scale::Linear, -1, 1, "y"});
  CHECK(q.px(2.5) == q.left() + q.area_width() / 4);
  CHECK(q.py(0) == q.top() + q.area_height() / 2);

  // The rendered marker carries those coordinates (2 decimals).
  Style s;
  s.marker = Marker::Circle;
  p.series({100}, {1e-4}, s, "one point");
  const std::string svg = p.render();
  CHECK(svg.find(fmt::format("cx=\"{:.2f}\" cy=\"{:.2f}\"", half, p.top() + p.area_height() / 2)) != std::string::npos);
  CHECK(p.dropped() == 0);
}

TEST_CASE("log ticks: decades labelled 10^k with minors at 2..9 x 10^k and wide ranges labelled every 2 or 5 decades") {
  const auto t = ticks(Axis{Scale::Log, 1e-3, 1e2, ""});
  CHECK(majors(t) == std::vector<double>{1e-3, 1e-2, 1e-1, 1, 10, 100});  // the literals: pow10i is exact
  CHECK(labels(t) == std::vector<std::string>{"10^-3", "10^-2", "10^-1", "10^0", "10^1", "10^2"});
  const auto mi = minors(t);
  CHECK(mi.size() == 5 * 8);  // 2..9 in each of the five decades [1e-3, 1e2)
  CHECK(mi.front() == 2e-3);
  CHECK(mi.back() == 90);

  // 21 decades: step 1 would label 21 > 8; 2 labels 11 > 8; 5 labels 1e-20, 1e-15, ..., 1e0 (5).
  const auto w = ticks(Axis{Scale::Log, 1e-20, 1, ""});
  CHECK(majors(w) == std::vector<double>{1e-20, 1e-15, 1e-10, 1e-5, 1});
  CHECK(minors(w).size() == 21 - 5);  // the other decades, unlabelled
  for (const auto& x : w) CHECK((x.major == !x.label.empty()));

  // Under three decades: 1-2-5 majors, plain decimals when they are moderate...
  const auto n = ticks(Axis{Scale::Log, 2, 30, ""});
  CHECK(majors(n) == std::vector<double>{2, 5, 10, 20});
  CHECK(labels(n) == std::vector<std::string>{"2", "5", "10", "20"});
  CHECK(minors(n) == std::vector<double>{3, 4, 6, 7, 8, 9, 30});
  // ...and m x 10^k for tiny ones, consistently on the whole axis.
  const auto s = ticks(Axis{Scale::Log, 1.5e-7, 6e-6, ""});
  CHECK(labels(s) == std::vector<std::string>{"2x10^-7", "5x10^-7", "10^-6", "2x10^-6", "5x10^-6"});
}

TEST_CASE("linear ticks: steps of 1 or 2 or 5 x 10^k labelled with the step's decimals or all in e-notation") {
  const auto a = ticks(Axis{Scale::Linear, 0, 1, ""});
  CHECK(majors(a) == std::vector<double>{0, 0.2, 0.4, 0.6, 0.8, 1});  // 0.2 * i as the literals 0.2, 0.4, ...
  CHECK(labels(a) == std::vector<std::string>{"0", "0.2", "0.4", "0.6", "0.8", "1"});
  CHECK(minors(a).size() == 5);  // every 0.1 between them

  const auto b = ticks(Axis{Scale::Linear, -3.7, 12.1, ""});  // range 15.8: step 5 (2 would give 8 intervals)
  CHECK(majors(b) == std::vector<double>{0, 5, 10});
  const auto c = ticks(Axis{Scale::Linear, 0, 3e-6, ""});
  CHECK(labels(c) == std::vector<std::string>{"0", "5e-07", "1e-06", "1.5e-06", "2e-06", "2.5e-06", "3e-06"});
  const auto d = ticks(Axis{Scale::Linear, 0, 35, ""});
  CHECK(labels(d) == std::vector<std::string>{"0", "5", "10", "15", "20", "25", "30", "35"});
}

TEST_CASE("fit_axis: decades around the data on log axes ignoring what a log axis cannot hold") {
  const Axis a = fit_axis(Scale::Log, {0, -1, NAN, INFINITY, 3e-5, 2e3}, "t");
  CHECK(a.lo == 1e-5);
  CHECK(a.hi == 1e4);
  const Axis e = fit_axis(Scale::Log, {0, NAN}, "t");  // nothing placeable: a sane default
  CHECK(e.lo == 1);
  CHECK(e.hi == 10);
  const Axis one = fit_axis(Scale::Log, {100}, "t");  // one decade at least
  CHECK(one.lo == 100);
  CHECK(one.hi == 1000);
  const Axis lin = fit_axis(Scale::Linear, {0.3, 7.2}, "t", true, true);
  CHECK(lin.lo == 0);
  CHECK(lin.hi == 8);  // range 7.2: step 1 would make 8 intervals (> 7), so step 2 and [0, 8]
}

TEST_CASE("NaN and Inf and zero and negatives on a log axis are not drawn and lines break there and the plot says so") {
  Plot p(Axis{Scale::Log, 1, 1e4, "x"}, Axis{Scale::Log, 1e-6, 1, "y"});
  Style s;
  s.marker = Marker::Square;
  p.series({1, 10, 100, 1000, 5000}, {1e-5, 1e-4, 0, 1e-2, NAN}, s, "broken");
  p.series({INFINITY, -3}, {1e-3, 1e-3}, s, "");
  CHECK(p.dropped() == 4);
  CHECK(std::isnan(p.px(0)));
  CHECK(std::isnan(p.px(-1)));
  CHECK(std::isnan(p.py(INFINITY)));
  const std::string svg = p.render();
  for (const auto& v : coordinate_values(svg)) {
    CAPTURE(v);
    CHECK(v.find("nan") == std::string::npos);
    CHECK(v.find("inf") == std::string::npos);
  }
  // The line through (1, 10) is one segment; (100, 0) breaks it; (1000) stands alone: one "M".
  CHECK(count(svg, "<path d=\"M") == 1);
  const auto data = svg.substr(svg.find("<g class=\"data\">"));
  CHECK(count(data.substr(0, data.find("</g>")), "<rect") == 3);  // square markers at x = 1, 10, 1000
  CHECK(svg.find("4 point(s) not drawn") != std::string::npos);
}

TEST_CASE("lines are clipped at the plot area and markers outside the ranges are not drawn") {
  Plot p(Axis{Scale::Linear, 0, 10, "x"}, Axis{Scale::Linear, 0, 10, "y"});
  Style s;
  s.marker = Marker::Circle;
  p.series({5, 20}, {5, 5}, s, "");  // leaves the area to the right at x = 10
  const std::string svg = p.render();
  const double right = p.left() + p.area_width();
  CHECK(svg.find(fmt::format("M{:.2f} {:.2f}L{:.2f} {:.2f}", p.px(5), p.py(5), right, p.py(5))) != std::string::npos);
  CHECK(count(svg, "<circle") == 1);  // the point at x = 20 is outside
  CHECK(p.dropped() == 0);            // outside is not "cannot be placed"
}

TEST_CASE("bars start at the bottom of a log axis and zero counts draw no bar") {
  BarChart b({"a", "b", "c"}, Axis{Scale::Log, 1, 1e4, "count"}, false, 400, 260);
  b.group("g", {100, 0, 1e4}, "#0072B2");
  CHECK(b.value_px(1) - b.value_px(100) == doctest::Approx((b.value_px(1) - b.value_px(1e4)) / 2));
  const std::string svg = b.render();
  // Data bars: two (the zero is none).
  const auto data = svg.substr(svg.find("<g class=\"data\">"));
  CHECK(count(data.substr(0, data.find("</g>")), "<rect") == 2);
  CHECK(svg.find("not drawn") == std::string::npos);
}

TEST_CASE("heat-map colours: blue shades at or below the threshold and red above and grey for no value") {
  HeatMap h({"c1"}, {"r1"}, 1e-3, 1, 1e2);
  CHECK(h.colour(1e-3) == "#f7fbff");
  CHECK(h.colour(1e-9) == "#f7fbff");  // clamped
  CHECK(h.colour(1) == "#2171b5");
  CHECK(h.colour(1.0000001) == "#fcae91");
  CHECK(h.colour(1e2) == "#a50f15");
  CHECK(h.colour(1e9) == "#a50f15");
  CHECK(h.colour(0) == "#f7fbff");
  CHECK(h.colour(NAN) == "#eeeeee");
  h.cell(0, 0, 0.5, "0.5", "tip <b>");
  const std::string svg = h.render();
  CHECK(svg.find(h.colour(0.5)) != std::string::npos);
  CHECK(svg.find("tip &lt;b&gt;") != std::string::npos);
}

TEST_CASE("error map: a red tail stripe is one rect per row, tile lines fall on the tile edges, tooltips only on small maps") {
  // 64 x 64 cells of 2 x 2 elements (C is 128 x 128); the last 8 cell columns fail (err / allowed 50), the rest 0.01.
  MapGrid g;
  g.rows = g.cols = 64;
  g.cell_rows = g.cell_cols = 2;
  g.m = g.n = 128;
  g.tile_m = g.tile_n = 32;
  g.title = "tail";
  for (int r = 0; r < 64; ++r)
    for (int c = 0; c < 64; ++c) g.values.push_back(c >= 56 ? 50 : 0.01);
  const HeatMap scale({}, {}, 1e-3, 1, 1e2);
  const std::string svg = render_map(g);
  // Each row: one run of the blue and one of the red (the background rect is the colour of 0).
  // 400 px / 64 cells: 6 px a cell; the stripe is 8 cells (48 px) and the rest of the row 56 (336 px).
  CHECK(count(svg, "width=\"48.00\" height=\"6.00\" fill=\"" + scale.colour(50) + "\"") == 64);
  CHECK(count(svg, "width=\"336.00\" height=\"6.00\" fill=\"" + scale.colour(0.01) + "\"") == 64);
  CHECK(svg.find("<title>rows") == std::string::npos);              // 4096 cells: no tooltips
  // 3 px an element: tile lines every 96 px, 3 inside each side.
  CHECK(count(svg, "stroke-dasharray=\"3 2\"") == 6);
  CHECK(svg.find("dashed: the declared 32 \u00d7 32 tiles") != std::string::npos);
  // A small map: each failing cell says where it is.
  MapGrid s;
  s.rows = s.cols = s.m = s.n = 4;
  s.values.assign(16, 0.5);
  s.values[15] = INFINITY;
  s.title = "small";
  const std::string small = render_map(s);
  CHECK(small.find("<title>rows 3, columns 3: max err / allowed = inf</title>") != std::string::npos);
  CHECK(count(small, "<title>rows") == 1);
}

TEST_CASE("correct-bits map: cells coloured by their fewest correct bits, white where correctly rounded, tooltips on lost bits") {
  MapGrid g;
  g.rows = g.cols = g.m = g.n = 4;
  g.values.assign(16, 53);
  g.values[5] = 41;
  g.values[10] = NAN;
  g.correct_bits = true;
  g.title = "bits";
  const std::string svg = render_map(g);
  CHECK(bits_colour(53, 53) == "#ffffff");                      // correctly rounded: the background
  CHECK(bits_colour(0, 53) == "#67000d");                       // no bit right: the darkest
  CHECK(bits_colour(41, 53) != bits_colour(20, 53));            // the ramp tells lost bits apart
  CHECK(svg.find("fill=\"#ffffff\" stroke=\"#888\"") != std::string::npos);  // the background rect is the colour of 53
  CHECK(svg.find("fill=\"" + bits_colour(41, 53) + "\"") != std::string::npos);
  CHECK(svg.find("<title>rows 1, columns 1: fewest correct bits 41 of 53</title>") != std::string::npos);
  CHECK(svg.find("<title>rows 2, columns 2: not graded</title>") != std::string::npos);
  CHECK(count(svg, "<title>rows") == 2);                        // correctly rounded cells carry none
  CHECK(svg.find("the fewest correct bits in each cell (53: correctly rounded)") != std::string::npos);
  CHECK(svg.find("err / allowed") == std::string::npos);        // not the error map's bar
}
