// reports/html/svg.hpp — a small SVG plot writer for the HTML report: linear and log axes with "nice"
// ticks, lines, markers, error whiskers, grouped bars, heat-map cells, a legend; text escaped.
//
// Coordinates: a plot has a pixel frame (width x height) and inside it a plot area; a data value v
// on an axis [lo, hi] sits at fraction t(v) = (f(v) - f(lo)) / (f(hi) - f(lo)) of the area, with
// f = identity (linear) or log10 (log). y grows upwards. A value that cannot be placed (NaN, Inf,
// or <= 0 on a log axis) is never drawn: lines break there, and the plot says how many it left out.
// Pixel numbers are written with 2 decimals, so a test can recompute them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fpcert::svg {


enum class Scale : std::uint8_t { Linear, Log };

/// One tick. Major ticks carry a label (plain text: "10^-3", "2x10^-3", "0.25", "1e-05"); minor
/// ticks have none. The SVG renders "^k" as a superscript and "x" as a multiplication sign.
struct Tick {
  double value = 0;
  bool major = true;
  std::string label;
};

struct Axis {
  Scale scale = Scale::Linear;
  double lo = 0, hi = 1;
  std::string title;
  /// Whether v can be placed on this axis: finite, and > 0 on a log axis.
  bool placeable(double v) const;
  /// Position of v along the axis: 0 at lo, 1 at hi (outside [0, 1] beyond the range); NaN when
  /// v is not placeable.
  double fraction(double v) const;
};

/// An axis covering the placeable values (the rest are ignored). Log: widened to whole decades
/// (`whole_decades`) or padded by a factor 1.5 each side. Linear: widened to multiples of the tick
/// step, including 0 when `include_zero`. No placeable values: [1, 10] (log) or [0, 1] (linear).
Axis fit_axis(Scale scale, const std::vector<double>& values, std::string title, bool whole_decades = true,
              bool include_zero = false);

/// 10^k exactly as the literal 1ek is (exact powers for k >= 0, one correctly rounded division
/// for k < 0), |k| <= 22; std::pow otherwise.
double pow10i(int k);

/// Ticks inside [lo, hi].
///  Log axes: majors at decades when at least 3 decades fall in the range, every 1, 2, 5, 10, ...
///  decades so that at most 8 are labelled, the skipped decades (or, at step 1, the 2..9 multiples)
///  as minors; labels "10^k". Fewer decades: majors at 1, 2, 5 x 10^k (minors at the other
///  integers), labelled as plain decimals when every major lies in [1e-3, 1e4), else "2x10^-5".
///  Linear axes: majors every 1, 2 or 5 x 10^k, the smallest step giving at most 7 intervals;
///  minors every 2 x 10^(k-1), 10^k and 10^k respectively; labels are plain decimals with the step's
///  decimals when every nonzero major lies in [1e-3, 1e5), else all in "2.5e-07" style.
std::vector<Tick> ticks(const Axis& a);

/// A label in the axis's style for a value (used for ticks; exposed for tests).
std::string log_decade_label(int k);

enum class Marker : std::uint8_t { None, Circle, Square, Triangle, Diamond };

struct Style {
  std::string color = "#0072B2";
  double width = 1.6;   ///< line width (px); 0: no line
  std::string dash;     ///< SVG stroke-dasharray, e.g. "5 4"; empty: solid
  Marker marker = Marker::None;
  double marker_size = 4;
  bool hollow = false;  ///< marker outline only
};

/// Colour-blind safe palette (Okabe and Ito), cycled.
const std::string& palette(std::size_t i);
Marker marker_cycle(std::size_t i);

/// An x-y plot on two numeric axes.
class Plot {
 public:
  Plot(Axis x, Axis y, double width = 560, double height = 340);
  void title(std::string t) { title_ = std::move(t); }

  // The plot area, in pixels of the SVG frame.
  double left() const { return left_; }
  double top() const { return top_; }
  double area_width() const { return width_ - left_ - right_; }
  double area_height() const { return height_ - top_ - bottom_; }
  /// Pixel position of a data value; NaN when it cannot be placed on the axis.
  double px(double x) const;
  double py(double y) const;

  /// A polyline through the points, broken where a point cannot be placed; markers at the points
  /// inside the ranges (style.marker). `tips` (optional, one per point) become hover titles.
  void series(const std::vector<double>& x, const std::vector<double>& y, const Style& style, const std::string& legend,
              const std::vector<std::string>& tips = {});
  /// Horizontal whiskers from x_lo to x_hi at y (e.g. the kappa range of a case).
  void whisker_x(double x_lo, double x_hi, double y, const std::string& color);
  /// A label at a data position (e.g. "~ sqrt K" at the end of a reference slope).
  void label(double x, double y, const std::string& text, const std::string& color, const char* anchor = "start");
  /// A horizontal reference line across the plot at data y (e.g. gate fraction 1).
  void hline(double y, const Style& style, const std::string& legend);
  /// Free text under the legend (e.g. what was left out).
  void note(std::string text) { notes_.push_back(std::move(text)); }

  /// Points (of series, whiskers and labels) that could not be placed on an axis.
  int dropped() const { return dropped_; }
  std::string render() const;

 private:
  struct LegendItem {
    std::string text;
    Style style;
  };
  Axis x_, y_;
  double width_, height_;
  double left_ = 72, right_ = 16, top_ = 30, bottom_ = 52;
  std::string title_;
  std::string body_;  // clipped to the plot area
  std::vector<LegendItem> legend_;
  std::vector<std::string> notes_;
  int dropped_ = 0;
};

/// Grouped bars over categories; the value axis is linear from 0 or log (bars start at the
/// bottom of the axis; zero counts draw no bar). Vertical: categories along x, labelled
/// vertically under their bars; horizontal: categories down the left side.
class BarChart {
 public:
  BarChart(std::vector<std::string> categories, Axis value_axis, bool horizontal, double width = 560, double height = 300);
  void title(std::string t) { title_ = std::move(t); }
  /// Title of the category axis (vertical charts: under the rotated category labels).
  void category_title(std::string t) { cat_title_ = std::move(t); }
  void group(const std::string& name, const std::vector<double>& values, const std::string& color,
             const std::vector<std::string>& tips = {});
  /// Pixel of a value along the value axis (NaN when not placeable).
  double value_px(double v) const;
  void note(std::string text) { notes_.push_back(std::move(text)); }
  std::string render() const;

 private:
  struct Group {
    std::string name, color;
    std::vector<double> values;
    std::vector<std::string> tips;
  };
  std::vector<std::string> cats_;
  Axis v_;
  bool horizontal_;
  double width_, height_;
  double left_, right_ = 16, top_ = 30, bottom_;
  std::string title_, cat_title_;
  std::vector<Group> groups_;
  std::vector<std::string> notes_;
};

/// A grid of coloured cells: rows x columns, colour from a value on a log colour scale with a
/// threshold (the gate: fraction 1), the value written in the cell, and a colour bar.
class HeatMap {
 public:
  HeatMap(std::vector<std::string> columns, std::vector<std::string> rows, double lo, double threshold, double hi);
  void title(std::string t) { title_ = std::move(t); }
  void x_title(std::string t) { x_title_ = std::move(t); }
  void colour_title(std::string t) { c_title_ = std::move(t); }
  /// Value of a cell (NaN: no colour, `text` only, e.g. "crashed").
  void cell(std::size_t row, std::size_t col, double value, const std::string& text, const std::string& tip);
  /// Fill colour for a value: pale yellow far below the threshold, orange at it, dark red at hi.
  std::string colour(double v) const;
  std::string render() const;

 private:
  struct Cell {
    double value = 0;
    std::string text, tip;
    bool set = false;
  };
  std::vector<std::string> cols_, rows_;
  double lo_, thr_, hi_;
  std::string title_, x_title_, c_title_;
  std::vector<std::vector<Cell>> cells_;
};

/// An M x N output coloured by a value per cell (the error fraction err / allowed, downsampled keeping the
/// maximum: results/results.hpp, ErrorMap), on HeatMap's log colour scale [1e-3, 1e2] with the threshold 1:
/// blue when within, red beyond, grey where no element was graded. Element indices label the axes; the
/// declared tile's boundaries are drawn as lines when they are at least 4 px apart.
struct MapGrid {
  std::int64_t rows = 0, cols = 0;            ///< cells
  std::int64_t cell_rows = 1, cell_cols = 1;  ///< elements per cell
  std::int64_t m = 0, n = 0;                  ///< elements
  std::int64_t tile_m = 0, tile_n = 0;        ///< 0: no tile declared
  std::vector<double> values;                 ///< rows * cols, row-major
  std::string title;
  /// The values are correct bits (the fewest of each cell, 0..precision), coloured from dark red (none) to white
  /// (all: correctly rounded), instead of err / allowed on the error map's log scale.
  bool correct_bits = false;
  int precision = 53;
};
std::string render_map(const MapGrid& g);
/// The correct-bits map's colour of v correct bits of `precision` (NaN: grey).
std::string bits_colour(double v, int precision);

/// A pixel number as written into the SVG ("123.45"): 2 decimals, never NaN or Inf.
std::string pxnum(double v);

}  // namespace fpcert::svg
