// reports/html/svg.cpp — the SVG plot writer: clipping, markers, legends, line plots, bars, heat maps (axes: svg_axes.cpp).
#include "reports/html/svg.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "reports/escape.hpp"

namespace fpcert::svg {

// ---- drawing helpers ------------------------------------------------------------------------

namespace {

constexpr const char* kFont = "font-family=\"system-ui,-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif\"";

/// Rough text width in px at `size` (SVG cannot measure; the layout only needs to avoid overlap).
double text_width(const std::string& s, double size) {
  std::size_t chars = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++chars;  // count UTF-8 code points
  return static_cast<double>(chars) * size * 0.62;
}

/// A tick label as SVG text content: "10^-3" -> 10<tspan ...>−3</tspan>, "2x10^4" -> 2×10^4.
std::string label_markup(const std::string& label) {
  const auto caret = label.find('^');
  if (caret == std::string::npos) {
    std::string t = label;
    if (!t.empty() && t[0] == '-') t = "\u2212" + t.substr(1);
    return html_escape(t);
  }
  std::string base = label.substr(0, caret), exp = label.substr(caret + 1);
  const auto x = base.find('x');
  if (x != std::string::npos) base = base.substr(0, x) + "\u00d7" + base.substr(x + 1);
  if (!exp.empty() && exp[0] == '-') exp = "\u2212" + exp.substr(1);
  return html_escape(base) + "<tspan dy=\"-0.45em\" font-size=\"78%\">" + html_escape(exp) + "</tspan>";
}

std::string marker_svg(Marker m, double x, double y, const Style& s, const std::string& tip) {
  if (m == Marker::None) return "";
  const double r = s.marker_size;
  const std::string fill = s.hollow ? "#ffffff" : s.color;
  const std::string paint = fmt::format("fill=\"{}\" stroke=\"{}\" stroke-width=\"1.3\"", fill, s.color);
  const std::string t = tip.empty() ? "" : "<title>" + html_escape(tip) + "</title>";
  auto close = [&](const std::string& open, const char* tag) {
    return t.empty() ? open + "/>" : open + ">" + t + "</" + tag + ">";
  };
  switch (m) {
    case Marker::Circle:
      return close(fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"{}\" {}", pxnum(x), pxnum(y), pxnum(r), paint), "circle");
    case Marker::Square:
      return close(fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" {}", pxnum(x - r * 0.9), pxnum(y - r * 0.9),
                               pxnum(r * 1.8), pxnum(r * 1.8), paint),
                   "rect");
    case Marker::Triangle:
      return close(fmt::format("<polygon points=\"{},{} {},{} {},{}\" {}", pxnum(x), pxnum(y - r * 1.15), pxnum(x - r), pxnum(y + r * 0.75),
                               pxnum(x + r), pxnum(y + r * 0.75), paint),
                   "polygon");
    case Marker::Diamond:
      return close(fmt::format("<polygon points=\"{},{} {},{} {},{} {},{}\" {}", pxnum(x), pxnum(y - r * 1.2), pxnum(x + r), pxnum(y),
                               pxnum(x), pxnum(y + r * 1.2), pxnum(x - r), pxnum(y), paint),
                   "polygon");
    case Marker::None: break;
  }
  return "";
}

std::string stroke_attrs(const Style& s) {
  std::string a = fmt::format("stroke=\"{}\" stroke-width=\"{}\" fill=\"none\"", s.color, pxnum(s.width));
  if (!s.dash.empty()) a += fmt::format(" stroke-dasharray=\"{}\"", html_escape(s.dash));
  return a;
}

/// Liang–Barsky: clip the segment to the rectangle; false when nothing of it is inside.
bool clip_segment(double& x0, double& y0, double& x1, double& y1, double xmin, double ymin, double xmax, double ymax) {
  double t0 = 0, t1 = 1;
  const double dx = x1 - x0, dy = y1 - y0;
  const double p[4] = {-dx, dx, -dy, dy};
  const double q[4] = {x0 - xmin, xmax - x0, y0 - ymin, ymax - y0};
  for (int i = 0; i < 4; ++i) {
    if (p[i] == 0) {
      if (q[i] < 0) return false;
    } else {
      const double t = q[i] / p[i];
      if (p[i] < 0) t0 = std::max(t0, t);
      else t1 = std::min(t1, t);
    }
  }
  if (t0 > t1) return false;
  const double ax = x0 + t0 * dx, ay = y0 + t0 * dy, bx = x0 + t1 * dx, by = y0 + t1 * dy;
  x0 = ax;
  y0 = ay;
  x1 = bx;
  y1 = by;
  return true;
}

struct LegendEntry {
  std::string text;
  Style style;
  bool box = false;  // a filled swatch (bars) instead of a line sample
};

/// Legend rows from y0 down, wrapping at `width`; returns the markup and advances y0.
std::string legend_rows(const std::vector<LegendEntry>& items, double x0, double width, double& y0) {
  std::string s;
  double x = x0;
  const double row = 17;
  if (items.empty()) return s;
  y0 += 4;
  for (const auto& it : items) {
    const double w = 30 + text_width(it.text, 11) + 16;
    if (x + w > x0 + width && x > x0) {
      x = x0;
      y0 += row;
    }
    const double cy = y0 + 8;
    if (it.box) {
      s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"10\" fill=\"{}\"/>", pxnum(x + 4), pxnum(cy - 5), it.style.color);
    } else {
      if (it.style.width > 0)
        s += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" {}/>", pxnum(x), pxnum(cy), pxnum(x + 24), pxnum(cy),
                         stroke_attrs(it.style));
      s += marker_svg(it.style.marker, x + 12, cy, it.style, "");
    }
    s += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\" fill=\"#222\">{}</text>", pxnum(x + 30), pxnum(cy + 4), html_escape(it.text));
    x += w;
  }
  y0 += row;
  return s;
}

std::string notes_rows(const std::vector<std::string>& notes, double x0, double& y0) {
  std::string s;
  for (const auto& n : notes) {
    s += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"10.5\" fill=\"#555\">{}</text>", pxnum(x0), pxnum(y0 + 11), html_escape(n));
    y0 += 14;
  }
  return s;
}

std::string svg_open(double w, double h, const std::string& title) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"plot\" viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" role=\"img\" "
      "aria-label=\"{}\" {}><title>{}</title><rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>",
      pxnum(w), pxnum(h), pxnum(w), pxnum(h), html_escape(title), kFont, html_escape(title), pxnum(w), pxnum(h));
}

}  // namespace

// ---- Plot -----------------------------------------------------------------------------------

Plot::Plot(Axis x, Axis y, double width, double height) : x_(std::move(x)), y_(std::move(y)), width_(width), height_(height) {}

double Plot::px(double x) const {
  const double t = x_.fraction(x);
  return std::isnan(t) ? NAN : left_ + t * area_width();
}

double Plot::py(double y) const {
  const double t = y_.fraction(y);
  return std::isnan(t) ? NAN : top_ + (1 - t) * area_height();
}

void Plot::series(const std::vector<double>& x, const std::vector<double>& y, const Style& style, const std::string& legend,
                  const std::vector<std::string>& tips) {
  const std::size_t n = std::min(x.size(), y.size());
  const double x0 = left_, y0 = top_, x1 = left_ + area_width(), y1 = top_ + area_height();
  const double eps = 1e-6;
  std::string path;
  double lastx = NAN, lasty = NAN;  // end of the path drawn so far
  bool have_prev = false;
  double prevx = 0, prevy = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double X = px(x[i]), Y = py(y[i]);
    if (std::isnan(X) || std::isnan(Y)) {
      ++dropped_;
      have_prev = false;  // the line breaks here
      continue;
    }
    if (have_prev && style.width > 0) {
      double ax = prevx, ay = prevy, bx = X, by = Y;
      if (clip_segment(ax, ay, bx, by, x0, y0, x1, y1)) {
        if (std::isnan(lastx) || std::abs(ax - lastx) > eps || std::abs(ay - lasty) > eps)
          path += fmt::format("M{} {}", pxnum(ax), pxnum(ay));
        path += fmt::format("L{} {}", pxnum(bx), pxnum(by));
        lastx = bx;
        lasty = by;
      }
    }
    have_prev = true;
    prevx = X;
    prevy = Y;
  }
  if (!path.empty()) body_ += fmt::format("<path d=\"{}\" {}/>", path, stroke_attrs(style));
  for (std::size_t i = 0; i < n && style.marker != Marker::None; ++i) {
    const double X = px(x[i]), Y = py(y[i]);
    if (std::isnan(X) || std::isnan(Y)) continue;
    if (X < x0 - eps || X > x1 + eps || Y < y0 - eps || Y > y1 + eps) continue;  // outside the ranges
    body_ += marker_svg(style.marker, X, Y, style, i < tips.size() ? tips[i] : "");
  }
  if (!legend.empty()) legend_.push_back({legend, style});
}

void Plot::whisker_x(double x_lo, double x_hi, double y, const std::string& color) {
  double a = px(x_lo), b = px(x_hi), Y = py(y), Y2 = Y;
  if (std::isnan(a) || std::isnan(b) || std::isnan(Y)) {
    ++dropped_;
    return;
  }
  if (!clip_segment(a, Y, b, Y2, left_, top_, left_ + area_width(), top_ + area_height())) return;
  body_ += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"1\" opacity=\"0.7\"/>", pxnum(a),
                       pxnum(Y), pxnum(b), pxnum(Y), color);
}

void Plot::label(double x, double y, const std::string& text, const std::string& color, const char* anchor) {
  const double X = px(x), Y = py(y);
  if (std::isnan(X) || std::isnan(Y)) {
    ++dropped_;
    return;
  }
  if (X < left_ || X > left_ + area_width() || Y < top_ || Y > top_ + area_height()) return;
  body_ += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\" fill=\"{}\" text-anchor=\"{}\">{}</text>", pxnum(X), pxnum(Y - 4),
                       color, anchor, html_escape(text));
}

void Plot::hline(double y, const Style& style, const std::string& legend) {
  series({x_.lo, x_.hi}, {y, y}, Style{style.color, style.width, style.dash, Marker::None, 0, false}, legend);
}

std::string Plot::render() const {
  const double aw = area_width(), ah = area_height();
  const double bottom = top_ + ah, right = left_ + aw;
  std::string s;
  // Axes: grid and ticks.
  std::string grid, marks, labels;
  for (const auto& t : ticks(x_)) {
    const double X = px(t.value);
    if (std::isnan(X) || X < left_ - 0.01 || X > right + 0.01) continue;
    if (t.major) {
      grid += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>", pxnum(X), pxnum(top_), pxnum(bottom));
      marks += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>", pxnum(X), pxnum(bottom), pxnum(bottom + 6));
      labels += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>", pxnum(X), pxnum(bottom + 19), label_markup(t.label));
    } else {
      marks += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>", pxnum(X), pxnum(bottom), pxnum(bottom + 3));
    }
  }
  for (const auto& t : ticks(y_)) {
    const double Y = py(t.value);
    if (std::isnan(Y) || Y < top_ - 0.01 || Y > bottom + 0.01) continue;
    if (t.major) {
      grid += fmt::format("<line x1=\"{1}\" y1=\"{0}\" x2=\"{2}\" y2=\"{0}\"/>", pxnum(Y), pxnum(left_), pxnum(right));
      marks += fmt::format("<line x1=\"{1}\" y1=\"{0}\" x2=\"{2}\" y2=\"{0}\"/>", pxnum(Y), pxnum(left_ - 6), pxnum(left_));
      labels += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", pxnum(left_ - 9), pxnum(Y + 4), label_markup(t.label));
    } else {
      marks += fmt::format("<line x1=\"{1}\" y1=\"{0}\" x2=\"{2}\" y2=\"{0}\"/>", pxnum(Y), pxnum(left_ - 3), pxnum(left_));
    }
  }
  std::vector<LegendEntry> items;
  for (const auto& l : legend_) items.push_back({l.text, l.style, false});
  double y = height_;
  std::string legend = legend_rows(items, 12, width_ - 24, y);
  std::vector<std::string> notes = notes_;
  if (dropped_ > 0)
    notes.push_back(fmt::format("{} point(s) not drawn: NaN, Inf{} cannot be placed on these axes", dropped_,
                                (x_.scale == Scale::Log || y_.scale == Scale::Log) ? " or <= 0 on a log axis" : ""));
  legend += notes_rows(notes, 12, y);
  const double total_h = y + 6;
  s += svg_open(width_, total_h, title_);
  if (!title_.empty())
    s += fmt::format("<text x=\"{}\" y=\"18\" font-size=\"13\" font-weight=\"600\" fill=\"#111\">{}</text>", pxnum(left_), html_escape(title_));
  s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#fcfcfd\" stroke=\"none\"/>", pxnum(left_), pxnum(top_),
                   pxnum(aw), pxnum(ah));
  s += "<g stroke=\"#e3e6ea\" stroke-width=\"1\">" + grid + "</g>";
  s += "<g class=\"data\">" + body_ + "</g>";
  s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#888\" stroke-width=\"1\"/>", pxnum(left_),
                   pxnum(top_), pxnum(aw), pxnum(ah));
  s += "<g stroke=\"#666\" stroke-width=\"1\">" + marks + "</g>";
  s += "<g font-size=\"11\" fill=\"#333\">" + labels + "</g>";
  s += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\" fill=\"#222\">{}</text>", pxnum(left_ + aw / 2),
                   pxnum(bottom + 38), html_escape(x_.title));
  s += fmt::format("<text transform=\"translate(15 {}) rotate(-90)\" font-size=\"12\" text-anchor=\"middle\" fill=\"#222\">{}</text>",
                   pxnum(top_ + ah / 2), html_escape(y_.title));
  s += legend;
  s += "</svg>";
  return s;
}

// ---- BarChart -------------------------------------------------------------------------------

BarChart::BarChart(std::vector<std::string> categories, Axis value_axis, bool horizontal, double width, double height)
    : cats_(std::move(categories)), v_(std::move(value_axis)), horizontal_(horizontal), width_(width), height_(height) {
  double longest = 0;
  for (const auto& c : cats_) longest = std::max(longest, text_width(c, 11));
  if (horizontal_) {
    left_ = std::min(width_ * 0.45, longest + 16);
    bottom_ = 50;
  } else {
    left_ = 72;
    bottom_ = 12 + longest + 30;  // vertical labels hang below their bar, then the category title
  }
}

void BarChart::group(const std::string& name, const std::vector<double>& values, const std::string& color,
                     const std::vector<std::string>& tips) {
  groups_.push_back({name, color, values, tips});
}

double BarChart::value_px(double v) const {
  const double t = v_.fraction(v);
  if (std::isnan(t)) return NAN;
  if (horizontal_) return left_ + t * (width_ - left_ - right_);
  return top_ + (1 - t) * (height_ - top_ - bottom_);
}

std::string BarChart::render() const {
  const double aw = width_ - left_ - right_, ah = height_ - top_ - bottom_;
  const double bottom = top_ + ah, right = left_ + aw;
  const std::size_t nc = std::max<std::size_t>(cats_.size(), 1), ng = std::max<std::size_t>(groups_.size(), 1);
  const double slot = (horizontal_ ? ah : aw) / static_cast<double>(nc);
  const double bar = slot * 0.8 / static_cast<double>(ng);
  std::string grid, marks, labels, bars;
  int dropped = 0;
  for (const auto& t : ticks(v_)) {
    const double P = value_px(t.value);
    if (std::isnan(P)) continue;
    if (horizontal_) {
      if (P < left_ - 0.01 || P > right + 0.01) continue;
      if (t.major) {
        grid += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>", pxnum(P), pxnum(top_), pxnum(bottom));
        labels += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>", pxnum(P), pxnum(bottom + 19), label_markup(t.label));
      }
      marks += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>", pxnum(P), pxnum(bottom), pxnum(bottom + (t.major ? 6 : 3)));
    } else {
      if (P < top_ - 0.01 || P > bottom + 0.01) continue;
      if (t.major) {
        grid += fmt::format("<line x1=\"{1}\" y1=\"{0}\" x2=\"{2}\" y2=\"{0}\"/>", pxnum(P), pxnum(left_), pxnum(right));
        labels += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", pxnum(left_ - 9), pxnum(P + 4), label_markup(t.label));
      }
      marks += fmt::format("<line x1=\"{1}\" y1=\"{0}\" x2=\"{2}\" y2=\"{0}\"/>", pxnum(P), pxnum(left_ - (t.major ? 6 : 3)), pxnum(left_));
    }
  }
  const double base = horizontal_ ? left_ : bottom;  // bars grow from the low end of the value axis
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    const auto& G = groups_[g];
    for (std::size_t c = 0; c < cats_.size() && c < G.values.size(); ++c) {
      const double v = G.values[c];
      double P = value_px(v);
      if (std::isnan(P)) {
        if (!(v == 0)) ++dropped;  // a zero count on a log axis is "no bar", not a lost point
        continue;
      }
      const double off = static_cast<double>(c) * slot + slot * 0.1 + static_cast<double>(g) * bar;
      const std::string tip = c < G.tips.size() ? "<title>" + html_escape(G.tips[c]) + "</title>" : "";
      if (horizontal_) {
        P = std::clamp(P, left_, right);
        if (P - base <= 0) continue;
        bars += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\">{}</rect>", pxnum(base), pxnum(top_ + off),
                            pxnum(P - base), pxnum(bar * 0.92), G.color, tip);
      } else {
        P = std::clamp(P, top_, bottom);
        if (base - P <= 0) continue;
        bars += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\">{}</rect>", pxnum(left_ + off), pxnum(P),
                            pxnum(bar * 0.92), pxnum(base - P), G.color, tip);
      }
    }
  }
  std::string cat_labels;
  for (std::size_t c = 0; c < cats_.size(); ++c) {
    const double mid = static_cast<double>(c) * slot + slot / 2;
    if (horizontal_)
      cat_labels += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", pxnum(left_ - 6), pxnum(top_ + mid + 4),
                                html_escape(cats_[c]));
    else
      cat_labels += fmt::format("<text transform=\"translate({} {}) rotate(-90)\" text-anchor=\"end\">{}</text>", pxnum(left_ + mid + 4),
                                pxnum(bottom + 8), html_escape(cats_[c]));
  }
  std::vector<LegendEntry> items;
  if (groups_.size() > 1 || (groups_.size() == 1 && !groups_[0].name.empty()))
    for (const auto& g : groups_) {
      Style st;
      st.color = g.color;
      items.push_back({g.name, st, true});
    }
  double y = height_;
  std::string legend = legend_rows(items, 12, width_ - 24, y);
  std::vector<std::string> notes = notes_;
  if (dropped) notes.push_back(fmt::format("{} bar(s) not drawn: NaN, Inf or negative values", dropped));
  legend += notes_rows(notes, 12, y);
  std::string s = svg_open(width_, y + 6, title_);
  if (!title_.empty())
    s += fmt::format("<text x=\"12\" y=\"18\" font-size=\"13\" font-weight=\"600\" fill=\"#111\">{}</text>", html_escape(title_));
  s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#fcfcfd\"/>", pxnum(left_), pxnum(top_), pxnum(aw), pxnum(ah));
  s += "<g stroke=\"#e3e6ea\" stroke-width=\"1\">" + grid + "</g>";
  s += "<g class=\"data\">" + bars + "</g>";
  s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#888\"/>", pxnum(left_), pxnum(top_), pxnum(aw),
                   pxnum(ah));
  s += "<g stroke=\"#666\" stroke-width=\"1\">" + marks + "</g>";
  s += "<g font-size=\"11\" fill=\"#333\">" + labels + cat_labels + "</g>";
  if (horizontal_)
    s += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\" fill=\"#222\">{}</text>", pxnum(left_ + aw / 2),
                     pxnum(bottom + 38), html_escape(v_.title));
  else
    s += fmt::format("<text transform=\"translate(15 {}) rotate(-90)\" font-size=\"12\" text-anchor=\"middle\" fill=\"#222\">{}</text>",
                     pxnum(top_ + ah / 2), html_escape(v_.title));
  if (!cat_title_.empty()) {
    if (horizontal_)
      s += fmt::format("<text transform=\"translate(12 {}) rotate(-90)\" font-size=\"12\" text-anchor=\"middle\" fill=\"#222\">{}</text>",
                       pxnum(top_ + ah / 2), html_escape(cat_title_));
    else
      s += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\" fill=\"#222\">{}</text>", pxnum(left_ + aw / 2),
                       pxnum(height_ - 8), html_escape(cat_title_));
  }
  s += legend + "</svg>";
  return s;
}

// ---- HeatMap --------------------------------------------------------------------------------

HeatMap::HeatMap(std::vector<std::string> columns, std::vector<std::string> rows, double lo, double threshold, double hi)
    : cols_(std::move(columns)), rows_(std::move(rows)), lo_(lo), thr_(threshold), hi_(hi),
      cells_(rows_.size(), std::vector<Cell>(cols_.size())) {}

void HeatMap::cell(std::size_t row, std::size_t col, double value, const std::string& text, const std::string& tip) {
  if (row >= rows_.size() || col >= cols_.size()) return;
  cells_[row][col] = {value, text, tip, true};
}

namespace {
struct Rgb {
  double r, g, b;
};
Rgb hex(const char* h) {
  unsigned v = 0;
  std::sscanf(h + 1, "%x", &v);
  return {static_cast<double>((v >> 16) & 255), static_cast<double>((v >> 8) & 255), static_cast<double>(v & 255)};
}
std::string ramp(const std::vector<const char*>& stops, double t) {
  t = std::clamp(t, 0.0, 1.0);
  const double pos = t * static_cast<double>(stops.size() - 1);
  const auto i = std::min(static_cast<std::size_t>(pos), stops.size() - 2);
  const double f = pos - static_cast<double>(i);
  const Rgb a = hex(stops[i]), b = hex(stops[i + 1]);
  return fmt::format("#{:02x}{:02x}{:02x}", static_cast<int>(std::lround(a.r + f * (b.r - a.r))),
                     static_cast<int>(std::lround(a.g + f * (b.g - a.g))), static_cast<int>(std::lround(a.b + f * (b.b - a.b))));
}
bool dark(const std::string& c) {
  const Rgb x = hex(c.c_str());
  return 0.299 * x.r + 0.587 * x.g + 0.114 * x.b < 140;
}
}  // namespace

std::string bits_colour(double v, int precision) {
  if (std::isnan(v)) return "#eeeeee";
  return ramp({"#67000d", "#cb181d", "#fb6a4a", "#fcbba1", "#ffffff"}, v / std::max(precision, 1));
}

std::string HeatMap::colour(double v) const {
  if (std::isnan(v)) return "#eeeeee";
  const double lv = v > 0 ? std::log10(v) : -INFINITY;
  if (v <= thr_) {
    const double t = (std::max(lv, std::log10(lo_)) - std::log10(lo_)) / (std::log10(thr_) - std::log10(lo_));
    return ramp({"#f7fbff", "#c6dbef", "#6baed6", "#2171b5"}, t);
  }
  const double t = (std::min(lv, std::log10(hi_)) - std::log10(thr_)) / (std::log10(hi_) - std::log10(thr_));
  return ramp({"#fcae91", "#fb6a4a", "#de2d26", "#a50f15"}, t);
}

std::string HeatMap::render() const {
  double longest_row = 0, longest_col = 0;
  for (const auto& r : rows_) longest_row = std::max(longest_row, text_width(r, 11.5));
  for (const auto& c : cols_) longest_col = std::max(longest_col, text_width(c, 11));
  const double left = longest_row + 26, top = 30, cw = 76, ch = 30;
  const double gw = cw * static_cast<double>(cols_.size()), gh = ch * static_cast<double>(rows_.size());
  const double label_h = longest_col * 0.72 + 18;  // rotated column labels
  const double width = std::max(left + gw + 24, 380.0);
  std::string body;
  for (std::size_t r = 0; r < rows_.size(); ++r) {
    body += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" font-size=\"11.5\" fill=\"#222\">{}</text>", pxnum(left - 8),
                        pxnum(top + ch * static_cast<double>(r) + ch / 2 + 4), html_escape(rows_[r]));
    for (std::size_t c = 0; c < cols_.size(); ++c) {
      const Cell& k = cells_[r][c];
      const double x = left + cw * static_cast<double>(c), y = top + ch * static_cast<double>(r);
      const std::string fill = k.set ? colour(k.value) : "#ffffff";
      const std::string tip = k.tip.empty() ? "" : "<title>" + html_escape(k.tip) + "</title>";
      body += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"#ffffff\" stroke-width=\"2\">{}</rect>",
                          pxnum(x), pxnum(y), pxnum(cw), pxnum(ch), fill, tip);
      const std::string text = k.set ? k.text : "\u2014";
      body += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"11\" fill=\"{}\">{}</text>", pxnum(x + cw / 2),
                          pxnum(y + ch / 2 + 4), dark(fill) ? "#ffffff" : "#111111", html_escape(text));
    }
  }
  for (std::size_t c = 0; c < cols_.size(); ++c)
    body += fmt::format("<text transform=\"translate({} {}) rotate(-35)\" text-anchor=\"end\" font-size=\"11\" fill=\"#333\">{}</text>",
                        pxnum(left + cw * static_cast<double>(c) + cw / 2 + 4), pxnum(top + gh + 14), html_escape(cols_[c]));
  double y = top + gh + label_h;
  if (!x_title_.empty()) {
    body += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\" fill=\"#222\">{}</text>", pxnum(left + gw / 2),
                        pxnum(y + 4), html_escape(x_title_));
    y += 14;
  }
  // Colour bar: 48 steps over [lo, hi] in log10, with the threshold marked.
  const double bx = 12, bw = std::min(width - 24, 360.0), by = y + 22, bh = 12;
  const double l0 = std::log10(lo_), l1 = std::log10(hi_);
  body += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\" fill=\"#222\">{}</text>", pxnum(bx), pxnum(by - 6), html_escape(c_title_));
  for (int i = 0; i < 48; ++i) {
    const double v0 = std::pow(10.0, l0 + (l1 - l0) * (i + 0.5) / 48);
    body += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>", pxnum(bx + bw * i / 48), pxnum(by),
                        pxnum(bw / 48 + 0.3), pxnum(bh), colour(v0));
  }
  Axis cb{Scale::Log, lo_, hi_, ""};
  for (const auto& t : ticks(cb)) {
    if (!t.major) continue;
    const double X = bx + bw * cb.fraction(t.value);
    body += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#444\"/>", pxnum(X), pxnum(by + bh), pxnum(by + bh + 4));
    body += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"10.5\" text-anchor=\"middle\" fill=\"#333\">{}</text>", pxnum(X),
                        pxnum(by + bh + 16), label_markup(t.label));
  }
  const double tx = bx + bw * cb.fraction(thr_);
  if (std::isfinite(tx))
    body += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#000\" stroke-width=\"2\"/>", pxnum(tx), pxnum(by - 3),
                        pxnum(by + bh + 3));
  const double height = by + bh + 26;
  return svg_open(width, height, title_) +
         (title_.empty() ? "" : fmt::format("<text x=\"12\" y=\"18\" font-size=\"13\" font-weight=\"600\" fill=\"#111\">{}</text>", html_escape(title_))) +
         body + "</svg>";
}

}  // namespace fpcert::svg
