// reports/html/html_plots.cpp — the report's plots (inline SVG): error vs K per case family, error vs
// condition number, ULP histograms, the exponent-span heat map. Cases are picked by the fields they
// carry (family, axis, achieved), never by their ids.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

#include "reports/html/html_parts.hpp"
#include "reports/html/svg.hpp"

namespace fpcert::html {

std::string figure(const std::string& svg_markup, const std::string& caption) {
  return "<figure>" + svg_markup + (caption.empty() ? "" : "<figcaption>" + caption + "</figcaption>") + "</figure>";
}

namespace {



/// One colour per kernel for every plot of a run: the kernel's place in the run.
const std::string& kernel_colour(const RunResult& r, const std::string& kernel) {
  const auto ks = kernels_of(r);
  const auto it = std::find(ks.begin(), ks.end(), kernel);
  return svg::palette(static_cast<std::size_t>(it - ks.begin()));
}

bool is_independent(const CaseResult& c) { return !c.bound.variant || *c.bound.variant == BoundVariant::Independent; }

/// Error vs K on log-log axes, with each case's bound rtol and sqrt(K), K reference slopes.
std::string plot_error_vs_k(const RunResult& r) {
  // (variant class, family) -> kernel -> cases sorted by k
  struct Key {
    bool indep;
    std::string family;
    bool operator<(const Key& o) const { return std::tie(indep, family) < std::tie(o.indep, o.family); }
  };
  std::map<Key, std::map<std::string, std::vector<const CaseResult*>>> fams;
  for (const auto& c : r.cases) {
    if (!graded(c) || c.k <= 0 || c.axis != CaseAxis::K || c.family.empty()) continue;
    fams[{is_independent(c), c.family}][c.kernel].push_back(&c);
  }
  // Keep families with at least two distinct K.
  std::vector<std::string> kernels;
  std::vector<std::pair<Key, std::map<std::string, std::vector<const CaseResult*>>>> kept;
  for (auto& [key, byk] : fams) {
    std::set<std::int64_t> ks;
    for (auto& [kn, v] : byk)
      for (auto* c : v) ks.insert(c->k);
    if (ks.size() < 2) continue;
    for (auto& [kn, v] : byk) {
      std::sort(v.begin(), v.end(), [](auto* a, auto* b) { return a->k < b->k; });
      if (std::find(kernels.begin(), kernels.end(), kn) == kernels.end()) kernels.push_back(kn);
    }
    kept.push_back({key, byk});
  }
  if (kept.empty()) return "";
  std::string out;
  for (bool indep : {true, false}) {
    std::vector<double> xs, ys;
    std::vector<std::string> families;
    for (auto& [key, byk] : kept)
      if (key.indep == indep) {
        families.push_back(key.family);
        for (auto& [kn, v] : byk)
          for (auto* c : v) {
            xs.push_back(static_cast<double>(c->k));
            ys.push_back(indep ? c->metrics.max_rel : c->metrics.componentwise);
            ys.push_back(c->bound.rtol);
          }
      }
    if (families.empty()) continue;
    const char* metric = indep ? "max rel error \u2016C\u2212\u0108\u2016max / \u2016\u0108\u2016max" : "componentwise error";
    svg::Plot p(svg::fit_axis(svg::Scale::Log, xs, "K (inner dimension)", false), svg::fit_axis(svg::Scale::Log, ys, metric, true), 600,
                360);
    p.title(fmt::format("Error vs K ({} gate)", indep ? "independent" : "componentwise"));
    double anchor_x = NAN, anchor_y = NAN;
    for (std::size_t ki = 0; ki < kernels.size(); ++ki) {
      const std::string& kn = kernels[ki];
      for (std::size_t fi = 0; fi < kept.size(); ++fi) {
        const auto& [key, byk] = kept[fi];
        if (key.indep != indep || !byk.count(kn)) continue;
        const auto& v = byk.at(kn);
        std::vector<double> x, y, rt;
        std::vector<std::string> tips;
        for (auto* c : v) {
          x.push_back(static_cast<double>(c->k));
          y.push_back(indep ? c->metrics.max_rel : c->metrics.componentwise);
          rt.push_back(c->bound.rtol);
          tips.push_back(fmt::format("{} on {}: {} {:.4g}, bound rtol {:.4g}, {}", c->case_id, kn, indep ? "max rel" : "componentwise", y.back(),
                                     c->bound.rtol, to_string(c->status)));
        }
        svg::Style st;
        st.color = kernel_colour(r, kn);
        st.marker = svg::marker_cycle(fi);
        p.series(x, y, st, fmt::format("{} \u00b7 {}", kn, key.family), tips);
        if (std::isnan(anchor_x) && !x.empty() && std::isfinite(y.front()) && y.front() > 0) {
          anchor_x = x.front();
          anchor_y = y.front();
        }
        // The bound line of this kernel and family (families share it: the bound depends on K and the kernel).
        svg::Style bs;
        bs.color = kernel_colour(r, kn);
        bs.width = 1.2;
        bs.dash = "6 4";
        p.series(x, rt, bs, "");
      }
      svg::Style legend_bound;
      legend_bound.color = kernel_colour(r, kn);
      legend_bound.width = 1.2;
      legend_bound.dash = "6 4";
      p.series({}, {}, legend_bound, fmt::format("bound rtol ({})", kn));
    }
    // Reference slopes through the first point: y ~ sqrt(K) and y ~ K.
    if (!std::isnan(anchor_x)) {
      double kmax = anchor_x;
      for (double x : xs) kmax = std::max(kmax, x);
      svg::Style s1;
      s1.color = "#777777";
      s1.width = 1;
      s1.dash = "2 3";
      p.series({anchor_x, kmax}, {anchor_y, anchor_y * std::sqrt(kmax / anchor_x)}, s1, "\u221d \u221aK reference slope");
      svg::Style s2 = s1;
      s2.color = "#333333";
      s2.dash = "8 3 2 3";
      p.series({anchor_x, kmax}, {anchor_y, anchor_y * (kmax / anchor_x)}, s2, "\u221d K reference slope");
      p.label(kmax, anchor_y * std::sqrt(kmax / anchor_x), "\u221aK", "#555555", "end");
      p.label(kmax, anchor_y * (kmax / anchor_x), "K", "#333333", "end");
    }
    out += figure(p.render(),
                  fmt::format("<b>Error vs K</b>, log-log: markers are the measured {} per case (colour: kernel, shape: input "
                              "family); dashed lines of the same colour are each case's bound rtol{}. The grey lines have slope "
                              "\u00bd (\u221aK, independent rounding errors) and 1 (K, worst case) through the first point: a kernel "
                              "whose error follows the K line accumulates errors that do not cancel.",
                              indep ? "max relative error \u2016C\u2212\u0108\u2016<sub>max</sub>/\u2016\u0108\u2016<sub>max</sub>"
                                    : "componentwise error",
                              indep ? " (the independent gate allows |err| \u2264 atol + rtol\u00b7|ref| with atol = rtol\u00b7max|ref|, "
                                      "i.e. up to 2\u00b7rtol in this normalisation)"
                                    : " (allowed: rtol\u00b7(|A||B|)<sub>ij</sub> + u<sub>out</sub>\u00b7|ref|)"));
  }
  return out;
}

/// Error vs condition number: cases whose achieved map has kappa_*.
std::string plot_error_vs_kappa(const RunResult& r) {
  std::vector<const CaseResult*> cs;
  std::vector<std::string> kernels;
  for (const auto& c : r.cases) {
    if (!graded(c)) continue;
    if (!c.achieved.count("kappa_median") && !c.achieved.count("kappa_max")) continue;
    cs.push_back(&c);
    if (std::find(kernels.begin(), kernels.end(), c.kernel) == kernels.end()) kernels.push_back(c.kernel);
  }
  if (cs.empty()) return "";
  auto kx = [](const CaseResult* c) { return c->achieved.count("kappa_median") ? c->achieved.at("kappa_median") : c->achieved.at("kappa_max"); };
  // Every generator measures kappa; the plot is about conditioning only where the cases ask for a
  // condition number (requested_kappa) or their kappas span at least two decades.
  bool requested = false;
  double klo = INFINITY, khi = 0;
  for (auto* c : cs) {
    requested |= c->achieved.count("requested_kappa") > 0;
    const double k = kx(c);
    if (std::isfinite(k) && k > 0) {
      klo = std::min(klo, k);
      khi = std::max(khi, k);
    }
  }
  if (!requested && !(khi >= 100 * klo)) return "";
  std::vector<double> xs, ys;
  for (auto* c : cs) {
    xs.push_back(kx(c));
    if (c->achieved.count("kappa_min")) xs.push_back(c->achieved.at("kappa_min"));
    if (c->achieved.count("kappa_max")) xs.push_back(c->achieved.at("kappa_max"));
    ys.push_back(c->metrics.max_rel);
    ys.push_back(c->metrics.componentwise);
  }
  svg::Plot p(svg::fit_axis(svg::Scale::Log, xs, "condition number \u03ba = \u03a3|a\u1d62b\u1d62| / |\u03a3a\u1d62b\u1d62| (median over C)", true),
              svg::fit_axis(svg::Scale::Log, ys, "error", true), 600, 360);
  p.title("Error vs condition number \u03ba");
  double ax = NAN, ay = NAN, xmax = NAN;
  for (std::size_t ki = 0; ki < kernels.size(); ++ki) {
    std::vector<const CaseResult*> v;
    for (auto* c : cs)
      if (c->kernel == kernels[ki]) v.push_back(c);
    std::sort(v.begin(), v.end(), [&](auto* a, auto* b) { return kx(a) < kx(b); });
    std::vector<double> x, yn, yc;
    std::vector<std::string> tn, tc;
    for (auto* c : v) {
      x.push_back(kx(c));
      yn.push_back(c->metrics.max_rel);
      yc.push_back(c->metrics.componentwise);
      tn.push_back(fmt::format("{} on {}: kappa {:.4g}, max rel {:.4g}", c->case_id, c->kernel, x.back(), yn.back()));
      tc.push_back(fmt::format("{} on {}: kappa {:.4g}, componentwise {:.4g}", c->case_id, c->kernel, x.back(), yc.back()));
      if (c->achieved.count("kappa_min") && c->achieved.count("kappa_max"))
        p.whisker_x(c->achieved.at("kappa_min"), c->achieved.at("kappa_max"), yn.back(), kernel_colour(r, kernels[ki]));
      if (std::isnan(ax) && std::isfinite(yn.back()) && yn.back() > 0 && x.back() > 0) {
        ax = x.back();
        ay = yn.back();
      }
      xmax = std::isnan(xmax) ? x.back() : std::max(xmax, x.back());
    }
    svg::Style sn;
    sn.color = kernel_colour(r, kernels[ki]);
    sn.marker = svg::Marker::Circle;
    sn.width = 0;  // a scatter: cases of different families are not a curve
    p.series(x, yn, sn, fmt::format("{}: max rel error", kernels[ki]), tn);
    svg::Style sc = sn;
    sc.hollow = true;
    sc.marker = svg::Marker::Square;
    sc.width = 0;
    p.series(x, yc, sc, fmt::format("{}: componentwise", kernels[ki]), tc);
  }
  if (!std::isnan(ax) && xmax > ax) {
    svg::Style s1;
    s1.color = "#777777";
    s1.width = 1;
    s1.dash = "2 3";
    p.series({ax, xmax}, {ay, ay * xmax / ax}, s1, "\u221d \u03ba reference slope");
  }
  return figure(p.render(),
                "<b>Error vs \u03ba</b>: filled markers are the normwise max relative error, hollow ones the componentwise error "
                "max |c\u2212\u0109|/(|A||B|)<sub>ij</sub>; whiskers span the cases' \u03ba from min to max. Under cancellation the "
                "relative error grows like \u03ba (grey slope) while the componentwise error should stay flat: a componentwise error "
                "that grows with \u03ba points at a kernel losing accuracy, not at the problem.");
}

const std::vector<std::string>& ulp_bucket_labels() {
  static const std::vector<std::string> l = [] {
    std::vector<std::string> v = {"\u2264\u00bd", "\u22641"};
    for (int b = 2; b <= 15; ++b) {
      const long edge = 1L << (b - 1);
      v.push_back(edge >= 1024 ? fmt::format("\u2264{}k", edge / 1024) : fmt::format("\u2264{}", edge));
    }
    v.push_back(">16k");
    v.push_back("Inf/NaN");
    return v;
  }();
  return l;
}

/// Predicted bars: the kernel's colour, lightened (a predicted group sits beside its measured one).
std::string lighter(const std::string& hex) {
  unsigned v = 0;
  std::sscanf(hex.c_str() + 1, "%x", &v);
  auto mix = [](unsigned c) { return (c + 2 * 255) / 3; };
  return fmt::format("#{:02x}{:02x}{:02x}", mix((v >> 16) & 255), mix((v >> 8) & 255), mix(v & 255));
}

/// One chart per case: each kernel's measured histogram and, where the case had the bitwise tier's emulation,
/// what the declared arithmetic predicts (the same histogram of the emulated output).
std::string plot_histograms(const RunResult& r, bool err_frac) {
  auto measured = [&](const CaseResult& c) -> const std::vector<std::uint64_t>& {
    return err_frac ? c.metrics.err_frac_hist : c.metrics.ulp_hist;
  };
  auto predicted = [&](const CaseResult& c) -> const std::vector<std::uint64_t>& {
    return err_frac ? c.metrics.predicted_err_frac_hist : c.metrics.predicted_ulp_hist;
  };
  std::vector<std::string> case_ids, kernels;
  for (const auto& c : r.cases) {
    if (!graded(c) || measured(c).empty()) continue;
    if (std::find(case_ids.begin(), case_ids.end(), c.case_id) == case_ids.end()) case_ids.push_back(c.case_id);
    if (std::find(kernels.begin(), kernels.end(), c.kernel) == kernels.end()) kernels.push_back(c.kernel);
  }
  if (case_ids.empty()) return "";
  const auto& labels = err_frac ? err_frac_bucket_labels() : ulp_bucket_labels();
  std::string out;
  for (const auto& id : case_ids) {
    std::vector<double> all;
    std::vector<const CaseResult*> found;
    for (const auto& kn : kernels)
      for (const auto& c : r.cases)
        if (c.case_id == id && c.kernel == kn && graded(c) && !measured(c).empty()) {
          found.push_back(&c);
          for (auto n : measured(c)) all.push_back(static_cast<double>(n));
          for (auto n : predicted(c)) all.push_back(static_cast<double>(n));
        }
    svg::Axis ya = svg::fit_axis(svg::Scale::Log, all, "outputs", true);
    ya.lo = std::min(ya.lo, 1.0);
    svg::BarChart bc(labels, ya, false, 420, 270);
    bc.title((err_frac ? "err / allowed: " : "ULP error: ") + id);
    bc.category_title(err_frac ? "error fraction err / allowed, bucket (previous edge, this edge]" : "ULP error, bucket (previous edge, this edge]");
    std::int64_t cancelled = 0;
    for (const CaseResult* c : found) {
      cancelled += c->metrics.ulp_cancelled;
      auto add = [&](const std::vector<std::uint64_t>& h, const std::string& name, const std::string& colour) {
        std::vector<double> v(labels.size(), 0);
        std::vector<std::string> tips(labels.size());
        for (std::size_t b = 0; b < labels.size() && b < h.size(); ++b) {
          v[b] = static_cast<double>(h[b]);
          tips[b] = fmt::format("{} on {}, {}: {} output(s) in bucket {}", id, c->kernel, name, h[b], labels[b]);
        }
        bc.group(found.size() > 1 ? c->kernel + " (" + name + ")" : name, v, colour, tips);
      };
      add(measured(*c), "measured", kernel_colour(r, c->kernel));
      if (!predicted(*c).empty()) add(predicted(*c), "predicted", lighter(kernel_colour(r, c->kernel)));
    }
    if (!err_frac && cancelled > 0)
      bc.note(fmt::format("{} cancellation-dominated output(s) left out", cancelled));
    out += figure(bc.render(), "");
  }
  return out;
}

double exp_span(const CaseResult& c) {
  double s = NAN;
  for (const char* k : {"a_exp_span", "b_exp_span", "exp_span"})  // as the generators measure them
    if (c.achieved.count(k)) s = std::isnan(s) ? c.achieved.at(k) : std::max(s, c.achieved.at(k));
  return s;
}

/// Every case records the exponent span its inputs achieved; the plot is about the cases whose suite
/// varies it (axis exponent_span: the exponent-range suite, quick's exp_wide, certify's exp_uniform, ...).
bool exponent_case(const CaseResult& c) { return c.axis == CaseAxis::ExponentSpan; }

std::string plot_exponent_heatmap(const RunResult& r, const std::string& src) {
  std::vector<std::string> cols, kernels;
  std::map<std::string, double> span;
  for (const auto& c : r.cases) {
    if (!exponent_case(c)) continue;
    if (std::find(cols.begin(), cols.end(), c.case_id) == cols.end()) cols.push_back(c.case_id);
    if (std::find(kernels.begin(), kernels.end(), c.kernel) == kernels.end()) kernels.push_back(c.kernel);
    const double s = exp_span(c);
    if (!std::isnan(s)) span[c.case_id] = std::max(span.count(c.case_id) ? span[c.case_id] : s, s);
  }
  if (cols.empty()) return "";
  // Columns in order of exponent span where known (cases without one keep their order, first).
  std::stable_sort(cols.begin(), cols.end(), [&](const std::string& a, const std::string& b) {
    const double sa = span.count(a) ? span[a] : -1, sb = span.count(b) ? span[b] : -1;
    return sa < sb;
  });
  std::vector<std::string> col_labels;
  for (const auto& c : cols)
    col_labels.push_back(span.count(c) ? fmt::format("{} (span {:.0f})", c, span[c]) : c);
  svg::HeatMap hm(col_labels, kernels, 1e-3, 1, 1e2);
  hm.title("Exponent range: gate fraction per case and kernel");
  hm.x_title(span.empty() ? "case" : "case (exponent span of the inputs, in binades)");
  hm.colour_title("gate fraction = max err / allowed (pass \u2264 1, the black mark)");
  (void)src;
  for (std::size_t i = 0; i < r.cases.size(); ++i) {
    const CaseResult& c = r.cases[i];
    const auto ci = std::find(cols.begin(), cols.end(), c.case_id);
    const auto ki = std::find(kernels.begin(), kernels.end(), c.kernel);
    if (ci == cols.end() || ki == kernels.end()) continue;
    const auto row = static_cast<std::size_t>(ki - kernels.begin()), col = static_cast<std::size_t>(ci - cols.begin());
    if (graded(c))
      hm.cell(row, col, c.gate_fraction, fmt::format("{:.3g}", c.gate_fraction),
              fmt::format("{} on {}: gate fraction {:.4g}, max rel {:.4g}, componentwise {:.4g}, ULP max {:.4g}", c.case_id, c.kernel,
                          c.gate_fraction, c.metrics.max_rel, c.metrics.componentwise, c.metrics.ulp_max));
    else
      hm.cell(row, col, NAN, std::string(to_string(c.status)), c.reason);
  }
  return figure(hm.render(),
                "<b>Exponent sweep</b>: one cell per case (columns, ordered by the exponent span the inputs achieved) and kernel "
                "(rows); the colour is the gate fraction on a log scale, blue when the case passes (darker: closer to its gate), "
                "red when it fails; the number in the cell is the gate fraction (3 digits). A kernel whose cells turn red as the "
                "span widens loses range (overflow, underflow or flushed subnormals) rather than precision.");
}

}  // namespace

std::string plots_section(const RunResult& r, const std::string& src, const std::string& id) {
  std::string big = plot_error_vs_k(r) + plot_error_vs_kappa(r) + plot_exponent_heatmap(r, src);
  const std::string fracs = plot_histograms(r, true), ulps = plot_histograms(r, false);
  if (big.empty() && fracs.empty() && ulps.empty()) return "";
  std::string s = "<h3 id=\"" + id + "-plots\">Plots</h3>";
  if (!big.empty()) s += "<div class=\"figs\">" + big + "</div>";
  if (!fracs.empty())
    s += "<h4>Error fraction histograms</h4><p class=\"muted\">Each output\u2019s error as a fraction of the error its "
         "envelope allows (|c \u2212 ref| / allowed; the case passes iff every output is \u2264 1), one chart per case; dark bars: "
         "the kernel\u2019s output, light bars beside them: what the declared arithmetic predicts (the bitwise tier\u2019s emulation "
         "of the kernel\u2019s declared order and roundings, graded the same way; absent where the order cannot be emulated). A "
         "correct kernel\u2019s bars match the prediction; bars beyond 1 are outputs outside the bound. Buckets on a log scale "
         "(0 exactly, then powers of two up to 1, then 2, 4, 16, above, non-finite); counts on a log axis.</p><div class=\"figs small\">" +
         fracs + "</div>";
  if (!ulps.empty())
    s += fmt::format(
        "<h4>ULP histograms</h4><p class=\"muted\">ULP distance of each output to its correctly rounded reference, in the "
        "kernel\u2019s output format, one chart per case, measured (dark) beside predicted (light, as above). Outputs whose exact value "
        "is <b>cancellation-dominated</b> \u2014 (|A||B|)<sub>ij</sub> / |ref<sub>ij</sub>| &gt; {:g}, more than 10 bits of the sum "
        "cancelled, or ref<sub>ij</sub> = 0 \u2014 are left out and counted in their own bucket (the chart\u2019s note and the "
        "metrics table): their ULP distance measures the cancellation, not the kernel. Buckets: [0, \u00bd], (\u00bd, 1], (1, 2], "
        "\u2026, (2<sup>13</sup>, 2<sup>14</sup>], above 2<sup>14</sup>, non-finite. A kernel that stores its inputs more narrowly "
        "than its output (f16 inputs, f32 output) sits far right even when correct: compare it with its prediction.</p>"
        "<div class=\"figs small\">",
        kCancellationRatio) +
         ulps + "</div>";
  return s;
}

}  // namespace fpcert::html
