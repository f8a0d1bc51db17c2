// reports/reveal_html.cpp — a revelation as text and HTML with the tree as SVG (reports/reveal_html.hpp).
#include "reports/reveal_html.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "reports/escape.hpp"
#include "reports/html/svg.hpp"

namespace fpcert {
namespace {

std::string escape(std::string_view s) { return html_escape(s); }

/// Box sizes and gaps of the drawing, in pixels.
constexpr double kBoxH = 22, kRowH = 40, kCharW = 7.2, kPad = 8, kGap = 10;

double box_w(const DisplayNode& d) { return std::max(26.0, kCharW * static_cast<double>(d.label.size()) + 12); }

/// Places every box: leaves left to right in the order drawn, a node centred over its children.
struct Placed {
  const DisplayNode* node;
  double x, y, w;  // centre x, top y, width
  std::vector<std::size_t> kids;
};

std::vector<Placed> place(const DisplayNode& root, double& width, double& height) {
  std::vector<Placed> out;
  double next_x = kPad;
  int depth_max = 0;
  const std::function<std::size_t(const DisplayNode&, int)> go = [&](const DisplayNode& d, int depth) -> std::size_t {
    depth_max = std::max(depth_max, depth);
    const double w = box_w(d);
    std::vector<std::size_t> kids;
    for (const auto& c : d.children) kids.push_back(go(c, depth + 1));
    double x;
    if (kids.empty()) {
      x = next_x + w / 2;
      next_x += w + kGap;
    } else {
      x = (out[kids.front()].x + out[kids.back()].x) / 2;
    }
    out.push_back({&d, x, kPad + depth * kRowH, w, std::move(kids)});
    return out.size() - 1;
  };
  go(root, 0);
  width = std::max(next_x, 120.0) + kPad;
  for (const auto& p : out) width = std::max(width, p.x + p.w / 2 + kPad);
  height = kPad * 2 + depth_max * kRowH + kBoxH;
  return out;
}

std::string kind_class(DisplayNode::Kind k) {
  switch (k) {
    case DisplayNode::Kind::Node: return "n";
    case DisplayNode::Kind::Leaf:
    case DisplayNode::Kind::Leaves: return "l";
    case DisplayNode::Kind::Ellipsis: return "e";
    case DisplayNode::Kind::Subtree: return "s";
  }
  return "n";
}

std::string status_class(const RevealResult& r) { return r.passed() ? "ok" : r.status == "refused" ? "ns" : "bad"; }

std::string replay_line(const RevealReplay& p) {
  if (!p.requested) return "not requested (--replay)";
  if (!p.ran) return "could not run: " + p.why_not;
  return fmt::format("{} of {} elements equal bit for bit over {} trial(s){}", p.equal, p.compared, p.trials, p.passed() ? "" : " — DIFFERS");
}

}  // namespace

std::string sum_tree_svg(const SumTree& t, int max_boxes) {
  if (t.root < 0) return "<p>(no tree)</p>";
  const DisplayNode root = display_tree(t, max_boxes);
  double w = 0, h = 0;
  const std::vector<Placed> ps = place(root, w, h);
  std::string s = fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"tree\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\">",
                              svg::pxnum(w), svg::pxnum(h), svg::pxnum(w), svg::pxnum(h));
  s += "<title>summation tree: root at the top, products at the bottom</title>";
  for (const auto& p : ps)
    for (std::size_t k : p.kids)
      s += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#888\"/>", svg::pxnum(p.x), svg::pxnum(p.y + kBoxH), svg::pxnum(ps[k].x),
                       svg::pxnum(ps[k].y));
  for (const auto& p : ps) {
    const std::string cls = kind_class(p.node->kind);
    const char* fill = cls == "n" ? "#dde8f7" : cls == "l" ? "#e6f4e6" : cls == "s" ? "#f3e6d6" : "#fff";
    s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"4\" fill=\"{}\" stroke=\"{}\"/>", svg::pxnum(p.x - p.w / 2), svg::pxnum(p.y),
                     svg::pxnum(p.w), svg::pxnum(kBoxH), fill, cls == "e" ? "#bbb" : "#667");
    s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-family=\"monospace\" font-size=\"12\">{}</text>", svg::pxnum(p.x),
                     svg::pxnum(p.y + 15), escape(p.node->label));
  }
  return s + "</svg>";
}

std::string sum_tree_text(const SumTree& t, int max_boxes) {
  if (t.root < 0) return "(no tree)\n";
  std::string s;
  const std::function<void(const DisplayNode&, const std::string&, bool, bool)> go = [&](const DisplayNode& d, const std::string& pre, bool last, bool top) {
    s += top ? d.label + "\n" : pre + (last ? "`-- " : "|-- ") + d.label + "\n";
    const std::string child_pre = top ? "" : pre + (last ? "    " : "|   ");
    for (std::size_t i = 0; i < d.children.size(); ++i) go(d.children[i], child_pre, i + 1 == d.children.size(), false);
  };
  go(display_tree(t, max_boxes), "", true, true);
  return s;
}

std::string reveal_text(const RevealResult& r, bool draw_trees) {
  std::string s = fmt::format("reveal {} at {} x {} x {}: {}\n  {}\n", r.kernel, r.m, r.n, r.k, r.passed() ? "REVEALED" : r.status, r.message);
  if (!r.plan.empty()) s += fmt::format("  probes ({} mode): {}\n", r.mode, r.plan);
  if (!r.determinism.empty()) s += "  determinism: " + r.determinism + "\n";
  if (!r.value_check.empty()) s += "  other probe values: " + r.value_check + "\n";
  for (std::size_t i = 0; i < r.classes.size(); ++i) {
    const RevealClass& c = r.classes[i];
    s += fmt::format("class {}{}: {} element(s), {}\n", i, static_cast<int>(i) == r.focus_class ? fmt::format(" (element ({}, {}))", r.focus_row, r.focus_col) : "",
                     c.elements, c.where);
    if (!c.revealed) {
      s += "  not revealed: " + c.why + "\n";
      continue;
    }
    s += "  " + c.headline + "\n";
    for (const auto& d : c.details) s += "    " + d + "\n";
    if (!c.card_check.empty()) s += "  fused width vs block models: " + c.card_check + "\n";
    s += fmt::format("  search: {} rounds, {} pairs; verification: {} answers, {} against the tree\n", c.rounds, c.queries, c.verified, c.verify_mismatches);
    for (const auto& m : c.mismatches) s += "    " + m + "\n";
    if (c.replay.requested) {
      s += "  replay: " + replay_line(c.replay) + "\n";
      if (!c.replay.assumed.empty()) s += "    assumed: " + c.replay.assumed + "\n";
      for (const auto& d : c.replay.diffs) s += fmt::format("    differs at ({}, {}), trial {}: {}\n", d.row, d.col, d.trial, d.note);
      if (!c.replay.passed())
        for (const auto& t : c.replay.tried) s += "    tried: " + t + "\n";
    }
    if (draw_trees) {
      std::string pic = sum_tree_text(c.tree);
      std::string ind;
      for (std::size_t p = 0, q; p < pic.size(); p = q + 1) {
        q = pic.find('\n', p);
        ind += "    " + pic.substr(p, q - p) + "\n";
      }
      s += "  tree:\n" + ind;
    }
  }
  std::string phases;
  for (const auto& [name, n] : r.launches_by_phase) phases += fmt::format("{}{} {}", phases.empty() ? "" : ", ", name, n);
  s += fmt::format("cost: {:.3f} s ({:.3f} s in the kernel), {} launches ({}); {}\n", r.seconds, r.kernel_seconds, r.launches, phases, r.complexity);
  return s;
}

std::string reveal_page(const RevealResult& r, const std::string& command) {
  static constexpr const char* kCss =
      "body{font:14px/1.45 system-ui,sans-serif;margin:0;background:#fafafa;color:#222}main{max-width:1400px;margin:auto;padding:1em}"
      "table{border-collapse:collapse;margin:.6em 0}th,td{border:1px solid #ccc;padding:3px 6px;vertical-align:top;text-align:left}"
      "th{background:#eee}.ok{color:#176317;font-weight:600}.bad{color:#a40000;font-weight:600}.ns{color:#777;font-weight:600}"
      "section.cls{background:#fff;border:1px solid #ddd;border-radius:6px;padding:.5em 1em;margin:1em 0}.scroll{overflow-x:auto}code{font-size:90%}"
      "@media print{body{background:#fff}section.cls{border:none;break-inside:avoid-page}}";
  std::string s = "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">";
  s += "<title>fpcert reveal " + escape(r.kernel) + "</title><style>" + kCss + "</style></head><body><main>";
  s += "<p><code>" + escape(command) + "</code></p>";
  s += fmt::format("<h1>Summation order of {} at {} × {} × {}</h1>", escape(r.kernel), r.m, r.n, r.k);
  s += fmt::format("<p class=\"{}\">{}</p><p>{}</p>", status_class(r), r.passed() ? "revealed" : escape(r.status), escape(r.message));
  s += "<table><tbody>";
  const auto row = [&](const std::string& k, const std::string& v) {
    if (!v.empty()) s += "<tr><th>" + escape(k) + "</th><td>" + escape(v) + "</td></tr>";
  };
  row("kernel", r.description);
  row("traits", r.traits);
  row("probe values", r.plan.empty() ? "" : r.mode + " mode: " + r.plan);
  row("determinism", r.determinism);
  row("other probe values", r.value_check);
  std::string phases;
  for (const auto& [name, n] : r.launches_by_phase) phases += fmt::format("{}{} {}", phases.empty() ? "" : ", ", name, n);
  row("cost", fmt::format("{:.3f} s ({:.3f} s in the kernel); {} launches ({})", r.seconds, r.kernel_seconds, r.launches, phases));
  row("complexity", r.complexity);
  row("environment", r.env.device + (r.env.cuda_runtime.empty() ? "" : ", CUDA " + r.env.cuda_runtime + ", cuBLAS " + r.env.cublas + ", driver " + r.env.driver) + ", fpcert " + r.env.fpcert_version);
  s += "</tbody></table>";
  for (std::size_t i = 0; i < r.classes.size(); ++i) {
    const RevealClass& c = r.classes[i];
    s += fmt::format("<section class=\"cls\"><h2>Class {}: {} element(s), {}</h2>", i, c.elements, escape(c.where));
    if (!c.revealed) {
      s += "<p class=\"bad\">not revealed: " + escape(c.why) + "</p></section>";
      continue;
    }
    s += "<p><b>" + escape(c.headline) + "</b></p>";
    if (!c.details.empty()) {
      s += "<ul>";
      for (const auto& d : c.details) s += "<li>" + escape(d) + "</li>";
      s += "</ul>";
    }
    s += "<div class=\"scroll\">" + sum_tree_svg(c.tree) + "</div>";
    s += "<table><tbody>";
    row("fused width vs block models", c.card_check);
    row("search", fmt::format("{} rounds, {} pairs", c.rounds, c.queries));
    row("verification", fmt::format("{} answers at the class's elements, {} against the tree", c.verified, c.verify_mismatches));
    for (const auto& m : c.mismatches) row("mismatch", m);
    if (c.replay.requested) {
      s += fmt::format("<tr><th>replay</th><td class=\"{}\">{}</td></tr>", c.replay.passed() ? "ok" : "bad", escape(replay_line(c.replay)));
      row("replay assumed", c.replay.assumed);
      row("replay inputs", c.replay.inputs);
      for (const auto& d : c.replay.diffs) row(fmt::format("differs at ({}, {})", d.row, d.col), d.note);
      for (const auto& t : c.replay.tried) row("tried", t);
    }
    s += "</tbody></table></section>";
  }
  s += "<footer><p>Generated by fpcert reveal. The method, the probes and the replay are described in docs/reveal.md. "
       "One self-contained file: no script, no network.</p></footer></main></body></html>\n";
  return s;
}

}  // namespace fpcert
