// reports/html/svg_axes.cpp — the SVG plots' axes: scales, ticks and their labels, fitted ranges, palette, markers.
#include "reports/html/svg.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "reports/escape.hpp"

namespace fpcert::svg {

std::string pxnum(double v) {
  if (!std::isfinite(v)) v = 0;  // callers never pass these; a last guard against "nan" in markup
  v = std::clamp(v, -1e6, 1e6);
  std::string s = fmt::format("{:.2f}", v);
  if (s == "-0.00") s = "0.00";
  return s;
}

double pow10i(int k) {
  if (k > 22 || k < -22) return std::pow(10.0, k);
  double p = 1;
  for (int i = 0; i < (k < 0 ? -k : k); ++i) p *= 10;  // exact: 10^22 < 2^53 * 2^22
  return k < 0 ? 1 / p : p;
}

// ---- axes -----------------------------------------------------------------------------------

bool Axis::placeable(double v) const { return std::isfinite(v) && (scale == Scale::Linear || v > 0); }

double Axis::fraction(double v) const {
  if (!placeable(v)) return NAN;
  double t;
  if (scale == Scale::Log) t = (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
  else t = (v - lo) / (hi - lo);
  if (!std::isfinite(t)) return NAN;  // degenerate axis
  return std::clamp(t, -1e4, 1e4);
}

namespace {

constexpr double kRel = 1e-9;  // tolerance for "on the edge of the range" (ticks at exactly lo, hi)

bool inside_log(double v, double lo, double hi) { return v >= lo * (1 - kRel) && v <= hi * (1 + kRel); }

/// m x 10^k as the nearest double (the literal "me k" would give the same value).
double mul_pow10(std::int64_t m, int k) {
  return k >= 0 ? static_cast<double>(m) * pow10i(k) : static_cast<double>(m) / pow10i(-k);
}

/// Decimal text of m x 10^k (m an integer), e.g. (25, -3) -> "0.025", (2, 3) -> "2000".
std::string decimal_text(std::int64_t m, int k) {
  if (m == 0) return "0";
  const bool neg = m < 0;
  std::string d = std::to_string(neg ? -m : m);
  std::string r;
  if (k >= 0) {
    r = d + std::string(static_cast<std::size_t>(k), '0');
  } else {
    const auto frac = static_cast<std::size_t>(-k);
    if (d.size() <= frac) d = std::string(frac - d.size() + 1, '0') + d;
    r = d.substr(0, d.size() - frac) + "." + d.substr(d.size() - frac);
    while (!r.empty() && r.back() == '0') r.pop_back();
    if (!r.empty() && r.back() == '.') r.pop_back();
  }
  return neg ? "-" + r : r;
}

/// Scientific text of m x 10^k: "2.5e-07", "1e+05".
std::string sci_text(std::int64_t m, int k) {
  if (m == 0) return "0";
  const bool neg = m < 0;
  std::string d = std::to_string(neg ? -m : m);
  const int exp = k + static_cast<int>(d.size()) - 1;
  while (d.size() > 1 && d.back() == '0') d.pop_back();
  std::string mant = d.substr(0, 1);
  if (d.size() > 1) mant += "." + d.substr(1);
  return fmt::format("{}{}e{}{:02d}", neg ? "-" : "", mant, exp < 0 ? '-' : '+', std::abs(exp));
}

std::vector<Tick> linear_ticks(double lo, double hi) {
  std::vector<Tick> out;
  const double range = hi - lo;
  if (!(range > 0) || !std::isfinite(range)) {
    if (std::isfinite(lo)) out.push_back({lo, true, fmt::format("{:.4g}", lo)});
    return out;
  }
  int e = static_cast<int>(std::floor(std::log10(range / 7)));
  int mant = 1;
  for (;;) {
    bool found = false;
    for (int m : {1, 2, 5}) {
      if (range / mul_pow10(m, e) <= 7 * (1 + kRel)) {
        mant = m;
        found = true;
        break;
      }
    }
    if (found) break;
    ++e;
  }
  const double step = mul_pow10(mant, e);
  const auto first = static_cast<std::int64_t>(std::ceil(lo / step - kRel));
  const auto last = static_cast<std::int64_t>(std::floor(hi / step + kRel));
  bool plain = true;
  for (std::int64_t i = first; i <= last; ++i) {
    const double v = std::abs(mul_pow10(i * mant, e));
    if (v != 0 && (v < 1e-3 || v >= 1e5)) plain = false;
  }
  for (std::int64_t i = first; i <= last; ++i)
    out.push_back({mul_pow10(i * mant, e), true, plain ? decimal_text(i * mant, e) : sci_text(i * mant, e)});
  // Minors: every mm x 10^(e-1): 2 x 10^(e-1) for step 10^e, 10^e for steps 2 and 5 x 10^e.
  const int mm = mant == 1 ? 2 : 10;
  const auto mfirst = static_cast<std::int64_t>(std::ceil(lo / mul_pow10(mm, e - 1) - kRel));
  const auto mlast = static_cast<std::int64_t>(std::floor(hi / mul_pow10(mm, e - 1) + kRel));
  for (std::int64_t j = mfirst; j <= mlast; ++j)
    if ((j * mm) % (mant * 10) != 0) out.push_back({mul_pow10(j * mm, e - 1), false, ""});
  return out;
}

}  // namespace

std::string log_decade_label(int k) { return fmt::format("10^{}", k); }

std::vector<Tick> ticks(const Axis& a) {
  if (a.scale == Scale::Linear) return linear_ticks(a.lo, a.hi);
  std::vector<Tick> out;
  if (!(a.lo > 0) || !(a.hi > a.lo) || !std::isfinite(a.hi)) return out;
  const int kmin = static_cast<int>(std::floor(std::log10(a.lo))) - 1;
  const int kmax = static_cast<int>(std::ceil(std::log10(a.hi))) + 1;
  std::vector<int> decades;
  for (int k = kmin; k <= kmax; ++k)
    if (inside_log(pow10i(k), a.lo, a.hi)) decades.push_back(k);
  if (decades.size() >= 3) {
    int step = 1;
    for (int s : {1, 2, 5, 10, 20, 50, 100}) {
      step = s;
      const auto n = std::count_if(decades.begin(), decades.end(), [&](int k) { return ((k % s) + s) % s == 0; });
      if (n <= 8) break;
    }
    for (int k : decades) {
      const bool major = ((k % step) + step) % step == 0;
      out.push_back({pow10i(k), major, major ? log_decade_label(k) : ""});
    }
    if (step == 1)
      for (int k = kmin; k <= kmax; ++k)
        for (int m = 2; m <= 9; ++m) {
          const double v = mul_pow10(m, k);
          if (inside_log(v, a.lo, a.hi)) out.push_back({v, false, ""});
        }
    return out;
  }
  // Under three decades: 1-2-5 majors, or every integer multiple when that gives too few.
  for (const std::vector<int>& ms : {std::vector<int>{1, 2, 5}, std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8, 9}}) {
    std::vector<std::pair<int, int>> majors;  // (m, k)
    for (int k = kmin; k <= kmax; ++k)
      for (int m : ms)
        if (inside_log(mul_pow10(m, k), a.lo, a.hi)) majors.push_back({m, k});
    if (majors.size() < 2) continue;
    bool plain = true;
    for (auto [m, k] : majors) {
      const double v = mul_pow10(m, k);
      if (v < 1e-3 || v >= 1e4) plain = false;
    }
    for (auto [m, k] : majors)
      out.push_back({mul_pow10(m, k), true,
                     plain ? decimal_text(m, k) : (m == 1 ? log_decade_label(k) : fmt::format("{}x10^{}", m, k))});
    for (int k = kmin; k <= kmax; ++k)
      for (int m = 1; m <= 9; ++m) {
        if (std::find(ms.begin(), ms.end(), m) != ms.end()) continue;
        const double v = mul_pow10(m, k);
        if (inside_log(v, a.lo, a.hi)) out.push_back({v, false, ""});
      }
    return out;
  }
  // Narrower than one step between integers: linear ticks inside the range.
  return linear_ticks(a.lo, a.hi);
}

Axis fit_axis(Scale scale, const std::vector<double>& values, std::string title, bool whole_decades, bool include_zero) {
  Axis a;
  a.scale = scale;
  a.title = std::move(title);
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (double v : values)
    if (a.placeable(v)) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  if (scale == Scale::Log) {
    if (!(lo <= hi)) {
      a.lo = 1;
      a.hi = 10;
      return a;
    }
    if (whole_decades) {
      const int k0 = static_cast<int>(std::floor(std::log10(lo) + 1e-12));
      int k1 = static_cast<int>(std::ceil(std::log10(hi) - 1e-12));
      if (k1 <= k0) k1 = k0 + 1;
      a.lo = pow10i(k0);
      a.hi = pow10i(k1);
    } else {
      a.lo = lo / 1.5;
      a.hi = hi * 1.5;
    }
    return a;
  }
  if (include_zero) {
    lo = std::min(lo, 0.0);
    hi = std::max(hi, 0.0);
  }
  if (!(lo <= hi)) {
    a.lo = 0;
    a.hi = 1;
    return a;
  }
  if (lo == hi) {
    const double d = lo == 0 ? 1 : std::abs(lo) / 2;
    lo -= d;
    hi += d;
    if (include_zero && a.lo >= 0 && lo < 0) lo = 0;
  }
  // Widen to the major tick step.
  std::vector<Tick> t = linear_ticks(lo, hi);
  double step = 0;
  std::vector<double> majors;
  for (const auto& x : t)
    if (x.major) majors.push_back(x.value);
  if (majors.size() >= 2) step = majors[1] - majors[0];
  if (step > 0) {
    a.lo = std::floor(lo / step + kRel) * step;
    a.hi = std::ceil(hi / step - kRel) * step;
  } else {
    a.lo = lo;
    a.hi = hi;
  }
  return a;
}

const std::string& palette(std::size_t i) {
  static const std::array<std::string, 7> p = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"};
  return p[i % p.size()];
}

Marker marker_cycle(std::size_t i) {
  static const std::array<Marker, 4> m = {Marker::Circle, Marker::Square, Marker::Triangle, Marker::Diamond};
  return m[i % m.size()];
}

}  // namespace fpcert::svg
