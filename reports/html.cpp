// reports/html.cpp — the self-contained HTML report (see html.hpp for the number-tagging contract).
#include "reports/html.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "base/atomic_file.hpp"
#include "base/error.hpp"
#include "base/input_file.hpp"
#include "reports/svg.hpp"
#include "results/results_json.hpp"

namespace fpcert {

using nlohmann::json;

std::string json_pointer_token(const std::string& key) {
  std::string r;
  for (char c : key) {
    if (c == '~') r += "~0";
    else if (c == '/') r += "~1";
    else r += c;
  }
  return r;
}

// ---- conversion records ---------------------------------------------------------------------

namespace {

std::string jstr(const json& j, const char* key) {
  if (!j.contains(key)) return "";
  const json& v = j.at(key);
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "";
  return v.dump();
}

bool ju64(const json& j, const char* key, std::uint64_t& out) {
  if (!j.contains(key)) return false;
  const json& v = j.at(key);
  if (v.is_number_unsigned()) out = v.get<std::uint64_t>();
  else if (v.is_number_integer() && v.get<std::int64_t>() >= 0) out = static_cast<std::uint64_t>(v.get<std::int64_t>());
  else if (v.is_number_float() && v.get<double>() >= 0) out = static_cast<std::uint64_t>(v.get<double>());
  else return false;
  return true;
}

bool is_conversion(const json& j) {
  return j.is_object() && !j.contains("cases") && (jstr(j, "kind") == "conversion" || (j.contains("from") && j.contains("to") && j.contains("outcomes")));
}

}  // namespace

ConversionResult conversion_from_json(const json& j) {
  if (!j.is_object() || !j.contains("from") || !j.contains("to"))
    throw InputError("not a conversion record (needs 'from' and 'to')");
  ConversionResult c;
  c.command = jstr(j, "command");
  c.device = jstr(j, "device");
  c.subject = jstr(j, "subject");
  c.from = jstr(j, "from");
  c.to = jstr(j, "to");
  c.rounding = jstr(j, "rounding");
  c.saturation = jstr(j, "saturation");
  c.nan_payload = jstr(j, "nan_payload");
  c.has_patterns = ju64(j, "patterns", c.patterns);
  c.has_mpfr_checked = ju64(j, "mpfr_checked", c.mpfr_checked);
  ju64(j, "mismatches", c.mismatches);
  c.has_model_mismatches = ju64(j, "model_mismatches", c.model_mismatches);
  c.has_nan_differences = ju64(j, "nan_differences", c.nan_differences);
  if (j.contains("seconds") && j.at("seconds").is_number()) {
    c.seconds = j.at("seconds").get<double>();
    c.has_seconds = true;
  }
  if (j.contains("outcomes")) {
    const json& o = j.at("outcomes");
    if (o.is_object()) {
      for (const auto& [k, v] : o.items()) {
        ConversionResult::Outcome x;
        x.name = k;
        x.key = json_pointer_token(k);
        if (v.is_number()) x.count = v.get<std::uint64_t>();
        else if (v.is_object()) ju64(v, "count", x.count);
        c.outcomes.push_back(x);
      }
    } else if (o.is_array()) {
      c.outcomes_listed = true;
      std::size_t i = 0;
      for (const auto& v : o) {
        ConversionResult::Outcome x;
        for (const char* n : {"name", "class", "outcome"})
          if (x.name.empty()) x.name = jstr(v, n);
        ju64(v, "count", x.count);
        x.key = std::to_string(i++);
        c.outcomes.push_back(x);
      }
    }
  }
  if (j.contains("listed") && j.at("listed").is_array())
    for (const auto& m : j.at("listed")) {
      if (!m.is_object()) continue;
      ConversionResult::Mismatch x{jstr(m, "src_bits"), jstr(m, "src_value"), jstr(m, "expected_bits"), jstr(m, "got_bits"),
                                   jstr(m, "outcome"), m.contains("model_bug") && m.at("model_bug").is_boolean() && m.at("model_bug").get<bool>()};
      c.listed.push_back(x);
    }
  if (j.contains("passed") && j.at("passed").is_boolean()) c.passed = j.at("passed").get<bool>();
  else c.passed = c.mismatches == 0 && c.model_mismatches == 0;
  if (j.contains("environment") && j.at("environment").is_object()) {
    c.env = environment_from_json(j.at("environment"));
    c.has_environment = true;
  }
  return c;
}

void read_report_file(const std::string& path, ReportInput& in) {
  // Bounded and checked before parsing: /dev/zero, a folder or a huge file is refused with its name.
  const std::string text = read_input_file(path, kResultsLimit, "results file");
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) throw InputError("results file '" + path + "' is empty");
  json whole;
  bool parsed = true;
  try {
    whole = json::parse(text);
  } catch (const json::parse_error&) {
    parsed = false;
  }
  try {
    if (parsed) {
      if (is_experiment_record(whole)) {
        in.experiments.push_back(experiment_from_json(whole));
        return;
      }
      if (whole.is_object() && whole.contains("cases")) {
        in.runs.push_back(run_from_json(whole));
        return;
      }
      if (is_conversion(whole)) {
        in.conversions.push_back(conversion_from_json(whole));
        return;
      }
      if (whole.is_object() && whole.contains("conversions") && whole.at("conversions").is_array()) {
        for (const auto& c : whole.at("conversions")) in.conversions.push_back(conversion_from_json(c));
        return;
      }
      throw InputError("results file '" + path +
                       "' is neither fpcert results (no 'cases'), a conversion check (kind 'conversion') nor an experiment "
                       "record (kind 'experiment' with 'tables')");
    }
    // JSON lines: conversion records, or a run's cases (read_results explains its own errors).
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line))
      if (line.find_first_not_of(" \t\r") != std::string::npos) break;
    json first;
    try {
      first = json::parse(line);
    } catch (const json::parse_error&) {
      first = nullptr;
    }
    if (is_conversion(first)) {
      std::istringstream all(text);
      int lineno = 0;
      while (std::getline(all, line)) {
        ++lineno;
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        try {
          in.conversions.push_back(conversion_from_json(json::parse(line)));
        } catch (const std::exception& e) {
          throw InputError(fmt::format("results file '{}', line {}: {}", path, lineno, e.what()));
        }
      }
      return;
    }
    in.runs.push_back(parse_results(text, path));
  } catch (const InputError& e) {
    const std::string what = e.what();
    if (what.find(path) != std::string::npos) throw;
    throw InputError("results file '" + path + "': " + what);
  } catch (const std::exception& e) {
    throw InputError("results file '" + path + "': " + e.what());
  }
}

// ---- HTML -----------------------------------------------------------------------------------

namespace {

using svg::escape;

std::string repr(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return fmt::format("{}", v);
}

/// A tagged number (see html.hpp): the text is printf "%.4g" ("nan" whatever the sign bit: JSON has one NaN).
std::string vnum(const std::string& src, const std::string& ptr, double v, const char* extra_class = "") {
  return fmt::format("<span class=\"v{}{}\" data-src=\"{}\" data-ptr=\"{}\" data-value=\"{}\">{}</span>", *extra_class ? " " : "",
                     extra_class, src, escape(ptr), repr(v), std::isnan(v) ? std::string("nan") : fmt::format("{:.4g}", v));
}
template <class I>
std::string vint(const std::string& src, const std::string& ptr, I v) {
  return fmt::format("<span class=\"v\" data-src=\"{}\" data-ptr=\"{}\" data-kind=\"int\" data-value=\"{}\">{}</span>", src, escape(ptr),
                     v, v);
}
std::string vbool(const std::string& src, const std::string& ptr, bool v) {
  return fmt::format("<span class=\"v\" data-src=\"{}\" data-ptr=\"{}\" data-kind=\"bool\" data-value=\"{}\">{}</span>", src, escape(ptr),
                     v ? "true" : "false", v ? "yes" : "no");
}
/// A sum of integers over documents, e.g. the failing cases of every run.
std::string vsum(const std::vector<std::pair<std::string, std::string>>& refs, std::int64_t total) {
  std::string list;
  for (const auto& [s, p] : refs) list += (list.empty() ? "" : " ") + s + ":" + p;
  return fmt::format("<span class=\"v\" data-sum=\"{}\" data-kind=\"int\" data-value=\"{}\">{}</span>", escape(list), total, total);
}

const char* kDash = "<span class=\"na\">\u2014</span>";

/// The suite records what a case is for as a flag "case: <note>"; the other flags are warnings.
bool is_note(const std::string& flag) { return flag.rfind("case: ", 0) == 0; }
std::string case_note(const CaseResult& c) {
  for (const auto& f : c.flags)
    if (is_note(f)) return f.substr(6);
  return "";
}

bool graded(const CaseResult& c) { return c.status == CaseStatus::Pass || c.status == CaseStatus::Fail; }
bool bad(const CaseResult& c) { return c.status != CaseStatus::Pass && c.status != CaseStatus::NotSupported; }

std::string status_badge(CaseStatus s) {
  const char* cls = s == CaseStatus::Pass ? "pass" : s == CaseStatus::NotSupported ? "ns" : "fail";
  return fmt::format("<span class=\"badge {}\">{}</span>", cls, escape(std::string(to_string(s))));
}

std::string case_ptr(std::size_t i) { return fmt::format("/cases/{}", i); }

// ---- CSS --------------------------------------------------------------------------------------

const char* kCss = R"CSS(
:root{--ok:#1a7f37;--okbg:#e8f5ec;--bad:#b42318;--badbg:#fdecea;--ns:#6b7280;--line:#d8dde3;--muted:#5b6470;--code:#f4f6f8}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;color:#1c2128;background:#fff}
main{max-width:1180px;margin:0 auto;padding:0 16px 40px}
h1{font-size:20px;margin:0 0 4px}
h2{font-size:19px;margin:34px 0 8px;padding-top:10px;border-top:2px solid var(--line)}
h3{font-size:16px;margin:22px 0 8px}
h4{font-size:14.5px;margin:16px 0 6px}
h5{font-size:13.5px;margin:10px 0 6px}
p{margin:6px 0}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace;font-size:12.5px}
code{background:var(--code);padding:1px 4px;border-radius:3px;word-break:break-word}
pre{background:var(--code);padding:8px 10px;border-radius:4px;overflow-x:auto;white-space:pre-wrap;word-break:break-all;margin:6px 0}
pre code{padding:0;background:none}
a{color:#0a58ca}
.banner{padding:14px 16px;border-radius:0 0 8px 8px;margin:0 0 12px}
.banner.ok{background:var(--okbg);border:1px solid #9bd3ab;border-top:none}
.banner.bad{background:var(--badbg);border:1px solid #f0a7a0;border-top:none}
.verdict{font-size:26px;font-weight:800;letter-spacing:.04em}
.ok .verdict,.okt{color:var(--ok)}
.bad .verdict,.badt{color:var(--bad)}
.banner ul{margin:6px 0 0;padding-left:20px}
.banner li{margin:2px 0}
.muted{color:var(--muted)}
.na{color:#9aa3ad}
nav.toc{font-size:13px;margin:8px 0 0}
nav.toc a{margin-right:12px;white-space:nowrap}
.scroll{overflow-x:auto;-webkit-overflow-scrolling:touch;max-width:100%;border:1px solid var(--line);border-radius:6px;margin:6px 0 10px}
table{border-collapse:collapse;width:100%;font-size:12.5px}
th,td{padding:4px 7px;border-bottom:1px solid #edf0f3;text-align:left;vertical-align:top}
th{background:#f6f8fa;font-weight:600;white-space:nowrap;position:sticky;top:0}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.case{white-space:nowrap;font-weight:600}
dl.env{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,270px),1fr));gap:0 14px;margin:6px 0 10px;border:1px solid var(--line);border-radius:6px;padding:6px 10px}
dl.env div{padding:3px 0;border-bottom:1px solid #f0f2f4;min-width:0}
dl.env div.wide{grid-column:1/-1}
dl.env dt{font-size:11.5px;color:var(--muted)}
dl.env dd{margin:0;word-break:break-word}
.badge{display:inline-block;padding:0 7px;border-radius:10px;font-size:11.5px;font-weight:700;text-transform:uppercase}
.badge.pass{background:var(--okbg);color:var(--ok)}
.badge.fail{background:var(--badbg);color:var(--bad)}
.badge.ns{background:#eef0f2;color:var(--ns)}
.flag{color:#9a6700;font-weight:700;cursor:help}
.gf{display:inline-block;width:44px;height:7px;background:#eef0f2;border-radius:4px;margin-left:6px;vertical-align:middle;overflow:hidden}
.gf>span{display:block;height:100%;background:#2f81f7}
.gf.over>span{background:var(--bad)}
.failure{border:1px solid #f0a7a0;border-left:5px solid var(--bad);border-radius:6px;padding:8px 12px;margin:10px 0;background:#fffafa}
.failure h4{margin-top:4px}
.gate{border:1px solid var(--line);border-radius:6px;padding:6px 12px;margin:8px 0;break-inside:avoid}
.gates{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,460px),1fr));gap:0 12px}
.gate pre{font-size:11.5px}
.gate .eq{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
.figs{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,520px),1fr));gap:14px}
.figs.small{grid-template-columns:repeat(auto-fill,minmax(min(100%,330px),1fr))}
figure{margin:0;border:1px solid var(--line);border-radius:6px;padding:6px;break-inside:avoid;background:#fff}
figure svg{width:100%;height:auto;display:block}
figcaption{font-size:12px;color:var(--muted);margin:4px 4px 2px}
dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:6px 0}
dl.kv dt{color:var(--muted)}
dl.kv dd{margin:0;word-break:break-word}
footer{margin-top:36px;font-size:12px;color:var(--muted);border-top:1px solid var(--line);padding-top:8px}
@media (max-width:640px){
  body{font-size:13.5px}
  main{padding:0 8px 30px}
  .verdict{font-size:22px}
  th,td{padding:3px 5px}
  .figs,.figs.small{grid-template-columns:1fr}
  dl.kv{grid-template-columns:1fr}
  dl.kv dt{margin-top:4px}
}
@media print{
  @page{margin:12mm}
  body{font-size:10.5pt;-webkit-print-color-adjust:exact;print-color-adjust:exact}
  main{max-width:none;padding:0}
  nav.toc{display:none}
  .scroll{overflow:visible;border:none}
  table{font-size:8.5pt}
  th{position:static}
  h2{break-before:page}
  section.run:first-of-type h2,section.conv:first-of-type h2{break-before:auto}
  h2,h3,h4{break-after:avoid}
  figure,.failure,.gate,tr{break-inside:avoid}
  .figs,.figs.small{grid-template-columns:1fr 1fr}
  a{color:inherit;text-decoration:none}
  pre{white-space:pre-wrap}
}
)CSS";

// ---- report pieces ----------------------------------------------------------------------------

struct Doc {
  std::string out;
  void add(const std::string& s) { out += s; }
};

std::string env_table(const Environment& e, const std::string& src, const std::string& base) {
  std::string s = "<dl class=\"env\">";
  auto row = [&](const char* name, const std::string& v, bool wide = false) {
    s += fmt::format("<div{}><dt>{}</dt><dd>{}</dd></div>", wide ? " class=\"wide\"" : "", name,
                     v.empty() ? kDash : "<code>" + escape(v) + "</code>");
  };
  auto row_int = [&](const char* name, const char* key, int v, const char* unit) {
    s += fmt::format("<div><dt>{}</dt><dd>{}</dd></div>", name,
                     v > 0 ? vint(src, base + "/" + key, v) + unit : std::string(kDash));
  };
  row("fpcert version", e.fpcert_version);
  row("timestamp (UTC)", e.timestamp);
  row("host", e.host);
  row("CPU", e.cpu);
  row("compiler", e.compiler);
  row("device (GPU)", e.device);
  row("compute capability", e.compute_capability);
  row_int("SM count", "sm_count", e.sm_count, "");
  s += fmt::format("<div><dt>clocks</dt><dd>{} SM, {} memory</dd></div>",
                   e.clock_mhz > 0 ? vint(src, base + "/clock_mhz", e.clock_mhz) + " MHz" : std::string(kDash),
                   e.mem_clock_mhz > 0 ? vint(src, base + "/mem_clock_mhz", e.mem_clock_mhz) + " MHz" : std::string(kDash));
  row("driver", e.driver);
  row("CUDA runtime", e.cuda_runtime);
  row("cuBLAS", e.cublas);
  row("CUDA architectures", e.cuda_archs);
  row("build flags", e.build_flags, true);
  row("command", e.command, true);
  s += "</dl>";
  return s;
}

/// The counts line of a run, every number tagged.
std::string counts_line(const RunResult& r, const std::string& src) {
  std::string s;
  struct C {
    CaseStatus st;
    const char* key;
    const char* label;
  };
  for (const C& c : {C{CaseStatus::Pass, "pass", "passed"}, C{CaseStatus::Fail, "fail", "failed"},
                     C{CaseStatus::NotSupported, "not_supported", "not supported"}, C{CaseStatus::Crashed, "crashed", "crashed"},
                     C{CaseStatus::Hung, "hung", "hung"}, C{CaseStatus::Error, "error", "error"}}) {
    const int n = r.count(c.st);
    if (n == 0 && c.st != CaseStatus::Pass && c.st != CaseStatus::Fail) continue;
    if (!s.empty()) s += ", ";
    s += vint(src, std::string("/counts/") + c.key, n) + " " + c.label;
  }
  return s;
}

std::string worst_table(const CaseResult& c, const std::string& src, const std::string& base) {
  if (c.worst.empty()) return "";
  std::string s =
      "<div class=\"scroll\"><table class=\"worst\"><thead><tr><th class=\"num\">i</th><th class=\"num\">j</th><th>got (bits)</th>"
      "<th class=\"num\">got</th><th class=\"num\">reference (hi)</th><th class=\"num\">reference (lo)</th><th>reference rounded (bits)</th>"
      "<th class=\"num\">|err|</th><th class=\"num\">allowed</th><th class=\"num\">ULPs</th><th class=\"num\">(|A||B|)<sub>ij</sub></th>"
      "</tr></thead><tbody>";
  for (std::size_t w = 0; w < c.worst.size(); ++w) {
    const WorstElement& e = c.worst[w];
    const std::string p = fmt::format("{}/worst/{}", base, w);
    s += fmt::format(
        "<tr><td class=\"num\">{}</td><td class=\"num\">{}</td><td><code>{}</code></td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
        "<td class=\"num\">{}</td><td><code>{}</code></td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
        "<td class=\"num\">{}</td></tr>",
        vint(src, p + "/i", e.i), vint(src, p + "/j", e.j), escape(e.got_bits), vnum(src, p + "/got", e.got),
        vnum(src, p + "/ref_hi", e.ref_hi), vnum(src, p + "/ref_lo", e.ref_lo), escape(e.ref_bits), vnum(src, p + "/err", e.err),
        vnum(src, p + "/allowed", e.allowed), vnum(src, p + "/ulps", e.ulps), vnum(src, p + "/abs_sum", e.abs_sum));
  }
  s += "</tbody></table></div>";
  return s;
}

std::string failure_card(const CaseResult& c, std::size_t idx, const std::string& src, const std::string& anchor) {
  const std::string b = case_ptr(idx);
  std::string s = fmt::format("<article class=\"failure\" id=\"{}\"><h4>{} on <code>{}</code> {}</h4>", anchor, escape(c.case_id),
                              escape(c.kernel), status_badge(c.status));
  s += fmt::format("<p><b>Why:</b> {}</p>", c.reason.empty() ? kDash : escape(c.reason));
  if (!case_note(c).empty()) s += fmt::format("<p><b>Case:</b> {}</p>", escape(case_note(c)));
  for (const auto& f : c.flags)
    if (!is_note(f)) s += fmt::format("<p class=\"flag\">\u26a0 {}</p>", escape(f));
  s += fmt::format("<p><b>Inputs:</b> <code>{}</code>, M\u00d7N\u00d7K = {}\u00d7{}\u00d7{}</p>", escape(c.spec), vint(src, b + "/m", c.m),
                   vint(src, b + "/n", c.n), vint(src, b + "/k", c.k));
  s += "<p><b>Reproduce:</b></p>";
  s += c.repro.empty() ? "<p class=\"muted\">no reproduction command was recorded for this case</p>"
                       : "<pre class=\"repro\"><code>" + escape(c.repro) + "</code></pre>";
  if (graded(c)) {
    s += fmt::format("<p><b>Gate</b> ({}): <code>{}</code>; gate fraction {} (pass \u2264 1)</p>", escape(c.bound.variant),
                     escape(c.bound.allowed), vnum(src, b + "/gate_fraction", c.gate_fraction));
    if (!c.bound.arithmetic.empty()) s += "<pre><code>" + escape(c.bound.arithmetic) + "</code></pre>";
  }
  const Metrics& m = c.metrics;
  std::string extra;
  if (m.nonfinite > 0)
    extra += fmt::format("<li>{} non-finite output(s) where the reference is finite, first at flat index {}</li>",
                         vint(src, b + "/metrics/nonfinite", m.nonfinite), vint(src, b + "/metrics/first_nonfinite", m.first_nonfinite));
  if (m.unwritten > 0)
    extra += fmt::format("<li>{} output(s) never written (still the NaN pre-fill), first at flat index {}</li>",
                         vint(src, b + "/metrics/unwritten", m.unwritten), vint(src, b + "/metrics/first_unwritten", m.first_unwritten));
  if (m.guard_violations > 0)
    extra += fmt::format("<li>{} guard byte(s) changed outside C: {}</li>", vint(src, b + "/metrics/guard_violations", m.guard_violations),
                         escape(m.first_guard_violation));
  if (!m.deterministic)
    extra += fmt::format("<li>not deterministic: {} element(s) differ between runs</li>",
                         vint(src, b + "/metrics/nondeterministic_elements", m.nondeterministic_elements));
  if (!extra.empty()) s += "<ul>" + extra + "</ul>";
  if (!c.worst.empty()) {
    s += "<p><b>Worst elements</b> (by error over allowed error):</p>";
    s += worst_table(c, src, b);
  }
  s += "</article>";
  return s;
}

std::string gate_bar(double gf) {
  if (!std::isfinite(gf) || gf < 0) return "";
  const double w = std::min(gf, 1.0) * 100;
  return fmt::format("<span class=\"gf{}\" aria-hidden=\"true\"><span style=\"width:{:.0f}%\"></span></span>", gf > 1 ? " over" : "", w);
}

std::string metrics_table(const RunResult& r, const std::string& kernel, const std::string& src) {
  bool any_base = false, any_time = false;
  for (const auto& c : r.cases)
    if (c.kernel == kernel) {
      any_base |= c.baseline_ratio.has_value() || c.speed_ratio.has_value();
      any_time |= c.time_ms_median > 0 || c.tflops > 0;
    }
  std::string s =
      "<div class=\"scroll\"><table class=\"metrics\"><thead><tr><th>case</th><th>status</th><th class=\"num\">M\u00d7N\u00d7K</th>"
      "<th class=\"num\" title=\"max |c - ref|\">max abs</th><th class=\"num\" title=\"||C - Cref||_F / ||Cref||_F\">Frobenius</th>"
      "<th class=\"num\" title=\"||C - Cref||_max / ||Cref||_max\">max rel</th><th class=\"num\" title=\"max |c - ref| / (|A||B|)_ij\">"
      "componentwise</th><th class=\"num\">ULP max</th><th class=\"num\">ULP median</th><th class=\"num\">ULP p99</th>"
      "<th class=\"num\" title=\"Inf/NaN where the reference is finite\">non-finite</th><th>deterministic</th><th>gate</th>"
      "<th class=\"num\" title=\"max err / allowed: pass iff <= 1\">gate fraction</th>";
  if (any_time) s += "<th class=\"num\">time ms (median)</th><th class=\"num\">TFLOP/s</th>";
  if (any_base) s += "<th class=\"num\" title=\"this kernel's max abs error / the baseline's\">vs baseline (error)</th><th class=\"num\" title=\"baseline time / this time\">vs baseline (speed)</th>";
  s += "</tr></thead><tbody>";
  for (std::size_t i = 0; i < r.cases.size(); ++i) {
    const CaseResult& c = r.cases[i];
    if (c.kernel != kernel) continue;
    const std::string b = case_ptr(i);
    const Metrics& m = c.metrics;
    std::string flags;
    for (const auto& f : c.flags)
      if (!is_note(f)) flags += fmt::format(" <span class=\"flag\" title=\"{}\">\u26a0</span>", escape(f));
    const std::string note = case_note(c);
    s += fmt::format("<tr><td class=\"case\" title=\"{}\">{}{}</td><td>{}</td><td class=\"num\">{}\u00d7{}\u00d7{}</td>",
                     escape(note.empty() ? c.spec : note + " \u2014 " + c.spec),
                     escape(c.case_id), flags, status_badge(c.status), vint(src, b + "/m", c.m), vint(src, b + "/n", c.n),
                     vint(src, b + "/k", c.k));
    if (graded(c)) {
      auto cell = [&](const char* key, double v) { return "<td class=\"num\">" + vnum(src, b + "/metrics/" + key, v) + "</td>"; };
      s += cell("max_abs", m.max_abs) + cell("frobenius_rel", m.frobenius_rel) + cell("max_rel", m.max_rel) +
           cell("componentwise", m.componentwise) + cell("ulp_max", m.ulp_max) + cell("ulp_median", m.ulp_median) + cell("ulp_p99", m.ulp_p99);
      s += fmt::format("<td class=\"num\">{}</td><td>{}</td><td>{}</td><td class=\"num\">{}{}</td>",
                       vint(src, b + "/metrics/nonfinite", m.nonfinite), vbool(src, b + "/metrics/deterministic", m.deterministic),
                       escape(c.bound.variant), vnum(src, b + "/gate_fraction", c.gate_fraction), gate_bar(c.gate_fraction));
    } else {
      s += fmt::format("<td colspan=\"11\" class=\"muted\">{}</td>", escape(c.reason));
    }
    if (any_time) {
      s += "<td class=\"num\">" + (c.time_ms_median > 0 ? vnum(src, b + "/time_ms_median", c.time_ms_median) : std::string(kDash)) + "</td>";
      s += "<td class=\"num\">" + (c.tflops > 0 ? vnum(src, b + "/tflops", c.tflops) : std::string(kDash)) + "</td>";
    }
    if (any_base) {
      s += "<td class=\"num\">" + (c.baseline_ratio ? vnum(src, b + "/baseline_ratio", *c.baseline_ratio) + "\u00d7" : std::string(kDash)) +
           "</td>";
      s += "<td class=\"num\">" + (c.speed_ratio ? vnum(src, b + "/speed_ratio", *c.speed_ratio) + "\u00d7" : std::string(kDash)) + "</td>";
    }
    s += "</tr>";
  }
  s += "</tbody></table></div>";
  return s;
}

/// Gates of one kernel, grouped: cases whose bound has the same terms share one block.
std::string gates_section(const RunResult& r, const std::string& kernel, const std::string& src) {
  std::vector<std::pair<std::string, std::vector<std::size_t>>> groups;  // key, case indices (first seen order)
  for (std::size_t i = 0; i < r.cases.size(); ++i) {
    const CaseResult& c = r.cases[i];
    if (c.kernel != kernel || !graded(c) || c.bound.variant.empty()) continue;
    std::string key = c.bound.variant + "|" + repr(c.bound.rtol) + "|" + repr(c.bound.out_term) + "|" + (c.bound.vacuous ? "v" : "") + "|" +
                      c.bound.allowed;
    for (const auto& t : c.bound.terms) key += "|" + t.name + "=" + t.formula;
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == key; });
    if (it == groups.end()) groups.push_back({key, {i}});
    else it->second.push_back(i);
  }
  if (groups.empty()) return "";
  std::string s;
  for (const auto& [key, idx] : groups) {
    const CaseResult& c0 = r.cases[idx.front()];
    const std::string b0 = case_ptr(idx.front());
    std::string names;
    for (std::size_t i : idx) names += (names.empty() ? "" : ", ") + ("<code>" + escape(r.cases[i].case_id) + "</code>");
    s += fmt::format("<div class=\"gate\"><h5>{} gate, K = {}{} \u2014 {}</h5>", escape(c0.bound.variant), vint(src, b0 + "/k", c0.k),
                     c0.bound.vacuous ? " <span class=\"badt\">(vacuous: K\u00b7u \u2265 1, no rigorous bound)</span>" : "", names);
    s += "<div class=\"scroll\"><table class=\"terms\"><thead><tr><th>term</th><th>formula</th><th class=\"num\">value</th></tr></thead><tbody>";
    for (std::size_t t = 0; t < c0.bound.terms.size(); ++t) {
      const BoundTerm& bt = c0.bound.terms[t];
      s += fmt::format("<tr><td>{}</td><td><code>{}</code></td><td class=\"num\">{}</td></tr>", escape(bt.name), escape(bt.formula),
                       vnum(src, fmt::format("{}/bound/terms/{}/value", b0, t), bt.value));
    }
    s += "</tbody></table></div>";
    s += fmt::format("<p class=\"eq\">rtol = {}", vnum(src, b0 + "/bound/rtol", c0.bound.rtol));
    if (c0.bound.variant == "independent") {
      s += "; atol = rtol \u00b7 max|ref|:";
      for (std::size_t i : idx)
        s += fmt::format(" {} {}{}", escape(r.cases[i].case_id), vnum(src, case_ptr(i) + "/bound/atol", r.cases[i].bound.atol),
                         i == idx.back() ? "" : ",");
    } else {
      s += fmt::format("; u_out = {}", vnum(src, b0 + "/bound/out_term", c0.bound.out_term));
    }
    s += "</p>";
    s += fmt::format("<p>Allowed error per element: <code>{}</code></p>", escape(c0.bound.allowed));
    std::set<std::string> distinct;
    for (std::size_t i : idx) distinct.insert(r.cases[i].bound.arithmetic);
    std::set<std::string> seen;
    std::string ar;
    for (std::size_t i : idx) {
      const std::string& a = r.cases[i].bound.arithmetic;
      if (a.empty() || !seen.insert(a).second) continue;
      // One line per distinct arithmetic; named by case only where the cases differ (their atol).
      ar += (distinct.size() > 1 ? escape(r.cases[i].case_id) + ": " : "") + escape(a) + "\n";
    }
    if (!ar.empty()) s += "<pre><code>" + ar + "</code></pre>";
    s += "</div>";
  }
  return s;
}

// ---- plots ----------------------------------------------------------------------------------

std::string figure(const std::string& svg_markup, const std::string& caption) {
  return "<figure>" + svg_markup + (caption.empty() ? "" : "<figcaption>" + caption + "</figcaption>") + "</figure>";
}

std::vector<std::string> kernels_of(const RunResult& r);

/// One colour per kernel for every plot of a run: the kernel's place in the run.
const std::string& kernel_colour(const RunResult& r, const std::string& kernel) {
  const auto ks = kernels_of(r);
  const auto it = std::find(ks.begin(), ks.end(), kernel);
  return svg::palette(static_cast<std::size_t>(it - ks.begin()));
}

/// The family of a case across K: its id without the "k<digits>" token ("k1024_uniform" -> "uniform").
std::string k_family(const std::string& id) {
  static const std::regex re("(^|_)k[0-9]+(_|$)");
  std::smatch m;
  if (!std::regex_search(id, m, re)) return "";
  std::string fam = m.prefix().str() + (m[1].length() && m[2].length() ? "_" : "") + m.suffix().str();
  return fam.empty() ? "all" : fam;
}

bool is_independent(const CaseResult& c) { return c.bound.variant == "independent" || c.bound.variant.empty(); }

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
    if (!graded(c) || c.k <= 0) continue;
    const std::string f = k_family(c.case_id);
    if (f.empty()) continue;
    fams[{is_independent(c), f}][c.kernel].push_back(&c);
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

std::string plot_ulp_histograms(const RunResult& r) {
  std::vector<std::string> case_ids, kernels;
  for (const auto& c : r.cases) {
    if (!graded(c) || c.metrics.ulp_hist.empty()) continue;
    if (std::find(case_ids.begin(), case_ids.end(), c.case_id) == case_ids.end()) case_ids.push_back(c.case_id);
    if (std::find(kernels.begin(), kernels.end(), c.kernel) == kernels.end()) kernels.push_back(c.kernel);
  }
  if (case_ids.empty()) return "";
  const auto& labels = ulp_bucket_labels();
  std::string out;
  for (const auto& id : case_ids) {
    std::vector<double> all;
    std::vector<std::pair<std::size_t, const CaseResult*>> found;
    for (std::size_t ki = 0; ki < kernels.size(); ++ki)
      for (const auto& c : r.cases)
        if (c.case_id == id && c.kernel == kernels[ki] && graded(c) && !c.metrics.ulp_hist.empty()) {
          found.push_back({ki, &c});
          for (auto n : c.metrics.ulp_hist) all.push_back(static_cast<double>(n));
        }
    svg::Axis ya = svg::fit_axis(svg::Scale::Log, all, "outputs", true);
    ya.lo = std::min(ya.lo, 1.0);
    svg::BarChart bc(labels, ya, false, 420, 270);
    bc.title("ULP error: " + id);
    bc.category_title("ULP error, bucket (previous edge, this edge]");
    for (auto [ki, c] : found) {
      std::vector<double> v(labels.size(), 0);
      std::vector<std::string> tips(labels.size());
      for (std::size_t b = 0; b < labels.size() && b < c->metrics.ulp_hist.size(); ++b) {
        v[b] = static_cast<double>(c->metrics.ulp_hist[b]);
        tips[b] = fmt::format("{} on {}: {} output(s) in bucket {}", id, c->kernel, c->metrics.ulp_hist[b], labels[b]);
      }
      bc.group(c->kernel, v, kernel_colour(r, c->kernel), tips);
    }
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

/// The exponent-range suite, and cases of other suites named for their exponents (quick's exp_wide,
/// certify's exp_uniform, ...). Every case records its span; only these are about it.
bool exponent_case(const RunResult& r, const CaseResult& c) {
  if (r.suite == "exponent-range") return true;
  for (const char* t : {"exp", "span", "sweep", "edges"})
    if (c.case_id.find(t) != std::string::npos) return true;
  return false;
}

std::string plot_exponent_heatmap(const RunResult& r, const std::string& src) {
  std::vector<std::string> cols, kernels;
  std::map<std::string, double> span;
  for (const auto& c : r.cases) {
    if (!exponent_case(r, c)) continue;
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

std::string plots_section(const RunResult& r, const std::string& src, const std::string& id) {
  std::string big = plot_error_vs_k(r) + plot_error_vs_kappa(r) + plot_exponent_heatmap(r, src);
  std::string small = plot_ulp_histograms(r);
  if (big.empty() && small.empty()) return "";
  std::string s = "<h3 id=\"" + id + "-plots\">Plots</h3>";
  if (!big.empty()) s += "<div class=\"figs\">" + big + "</div>";
  if (!small.empty())
    s += "<h4>ULP histograms</h4><p class=\"muted\">ULP distance of each output to its correctly rounded reference, in the "
         "kernel\u2019s output format, one chart per case (colour: kernel). Buckets: [0, \u00bd], (\u00bd, 1], (1, 2], \u2026, "
         "(2<sup>13</sup>, 2<sup>14</sup>], above 2<sup>14</sup>, and non-finite results; counts on a log axis (an empty bucket draws "
         "no bar). A correctly rounded kernel has everything in the first bucket; an honest accumulation spreads over a few buckets "
         "that move right as K grows.</p><div class=\"figs small\">" +
         small + "</div>";
  return s;
}

// ---- sections ---------------------------------------------------------------------------------

std::string run_title(const RunResult& r) {
  std::string k;
  for (const auto& n : r.kernels) k += (k.empty() ? "" : ", ") + n;
  if (k.empty()) {
    std::vector<std::string> seen;
    for (const auto& c : r.cases)
      if (std::find(seen.begin(), seen.end(), c.kernel) == seen.end()) seen.push_back(c.kernel);
    for (const auto& n : seen) k += (k.empty() ? "" : ", ") + n;
  }
  return k;
}

std::vector<std::string> kernels_of(const RunResult& r) {
  std::vector<std::string> seen;
  for (const auto& n : r.kernels)
    if (std::find(seen.begin(), seen.end(), n) == seen.end()) seen.push_back(n);
  for (const auto& c : r.cases)
    if (std::find(seen.begin(), seen.end(), c.kernel) == seen.end()) seen.push_back(c.kernel);
  // Kernels listed without cases (e.g. a baseline that ran nothing) get no table.
  std::vector<std::string> out;
  for (const auto& n : seen)
    for (const auto& c : r.cases)
      if (c.kernel == n) {
        out.push_back(n);
        break;
      }
  return out;
}

/// A run of a suite's preset (notes "preset"): the source's normwise metrics per case and kernel, to
/// read next to the source's table (suites/presets.hpp, panorama_suite_record, for the terminal).
std::string preset_table(const RunResult& r, const std::string& src) {
  const auto it = r.notes.find("preset");
  if (it == r.notes.end()) return "";
  std::string s = fmt::format(
      "<h3>The source\u2019s metrics (preset <code>{}</code>)</h3><p class=\"muted\">E<sub>F</sub> = \u2016C \u2212 C*\u2016<sub>F</sub> / "
      "\u2016C*\u2016<sub>F</sub>; E<sub>max</sub> with the two infinity norms the source may mean: elementwise maximum, and "
      "the max-row-sum (induced) norm. The gate fraction and status are fpcert\u2019s verdict on the same output.</p>",
      escape(it->second));
  s += "<div class=\"scroll\"><table class=\"preset\"><thead><tr><th>case</th><th>kernel</th><th class=\"num\">K</th>"
       "<th class=\"num\">E<sub>F</sub></th><th class=\"num\">E<sub>max</sub> (elementwise)</th><th class=\"num\">E<sub>max</sub> "
       "(row-sum)</th><th class=\"num\">left out</th><th class=\"num\">gate fraction</th><th>status</th></tr></thead><tbody>";
  for (std::size_t i = 0; i < r.cases.size(); ++i) {
    const CaseResult& c = r.cases[i];
    const std::string b = case_ptr(i);
    // the norms leave out non-finite outputs and references beyond the output's range; none left: a dash
    const std::int64_t left_out = c.metrics.nonfinite + c.metrics.ref_overflow;
    const bool norms = graded(c) && left_out < c.m * c.n;
    auto cell = [&](const char* key, double v) {
      return "<td class=\"num\">" + (norms ? vnum(src, b + "/metrics/" + key, v) : std::string(kDash)) + "</td>";
    };
    const std::string left =
        graded(c) ? vsum({{src, b + "/metrics/nonfinite"}, {src, b + "/metrics/ref_overflow"}}, left_out) : std::string(kDash);
    s += fmt::format("<tr><td class=\"case\">{}</td><td><code>{}</code></td><td class=\"num\">{}</td>{}{}{}<td class=\"num\">{}</td>"
                     "<td class=\"num\">{}</td><td>{}</td></tr>",
                     escape(c.case_id), escape(c.kernel), vint(src, b + "/k", c.k), cell("frobenius_rel", c.metrics.frobenius_rel),
                     cell("max_rel", c.metrics.max_rel), cell("rowsum_rel", c.metrics.rowsum_rel), left,
                     graded(c) ? vnum(src, b + "/gate_fraction", c.gate_fraction) : std::string(kDash), status_badge(c.status));
  }
  s += "</tbody></table></div>";
  return s;
}

std::string run_section(const RunResult& r, std::size_t ri) {
  const std::string src = fmt::format("r{}", ri);
  const std::string id = fmt::format("run-{}", ri);
  const bool ok = r.passed();
  std::string s = fmt::format("<section class=\"run\" id=\"{}\"><h2>Suite <code>{}</code> \u2014 {}</h2>", id, escape(r.suite.empty() ? "?" : r.suite),
                              escape(run_title(r)));
  s += fmt::format("<p><b class=\"{}\">{}</b>: {} ({} results)</p>", ok ? "okt" : "badt", ok ? "CERTIFIED" : "FAILED", counts_line(r, src),
                   escape(r.kind));
  if (!r.notes.empty()) {
    s += "<dl class=\"kv\">";
    for (const auto& [k, v] : r.notes) s += fmt::format("<dt>{}</dt><dd>{}</dd>", escape(k), escape(v));
    s += "</dl>";
  }
  s += preset_table(r, src);
  s += "<h3>Environment</h3>" + env_table(r.env, src, "/environment");
  std::string fails;
  for (std::size_t i = 0; i < r.cases.size(); ++i)
    if (bad(r.cases[i])) fails += failure_card(r.cases[i], i, src, fmt::format("fail-{}-{}", ri, i));
  if (!fails.empty()) s += fmt::format("<h3 id=\"{}-failures\">Failures</h3>", id) + fails;
  s += "<h3>Results by kernel</h3>";
  for (const auto& k : kernels_of(r)) {
    std::string traits, backend;
    for (const auto& c : r.cases)
      if (c.kernel == k) {
        traits = c.kernel_traits;
        backend = c.backend;
        break;
      }
    s += fmt::format("<h4><code>{}</code>{}</h4>", escape(k), backend.empty() ? "" : " <span class=\"muted\">(" + escape(backend) + ")</span>");
    if (!traits.empty()) s += "<p class=\"muted\">" + escape(traits) + "</p>";
    s += metrics_table(r, k, src);
  }
  s += plots_section(r, src, id);
  std::string gates;
  for (const auto& k : kernels_of(r)) {
    const std::string g = gates_section(r, k, src);
    if (!g.empty()) gates += fmt::format("<h4><code>{}</code></h4><div class=\"gates\">", escape(k)) + g + "</div>";
  }
  if (!gates.empty())
    s += "<h3>Gates: the bound model\u2019s arithmetic</h3><p class=\"muted\">Each gate adds one term per error source (storage "
         "rounding of A and B, products, accumulation, output), each with its growth law; the per-element inequality below is what "
         "every output was checked against, and the gate fraction is the largest ratio of error to allowed error.</p>" +
         gates;
  s += "</section>";
  return s;
}

std::string conversion_section(const ConversionResult& c, std::size_t ci) {
  const std::string src = fmt::format("c{}", ci);
  std::string s = fmt::format("<section class=\"conv\" id=\"conv-{}\"><h2>Conversion <code>{}</code> \u2192 <code>{}</code></h2>", ci,
                              escape(c.from), escape(c.to));
  s += fmt::format("<p><b class=\"{}\">{}</b>: {} mismatch(es){}</p>", c.passed ? "okt" : "badt", c.passed ? "PASS" : "FAIL",
                   vint(src, "/mismatches", c.mismatches),
                   c.has_model_mismatches && c.model_mismatches
                       ? fmt::format(", {} where fpcert\u2019s fast model disagrees with MPFR", vint(src, "/model_mismatches", c.model_mismatches))
                       : "");
  s += "<dl class=\"kv\">";
  auto kv = [&](const char* k, const std::string& v) {
    if (!v.empty()) s += fmt::format("<dt>{}</dt><dd>{}</dd>", k, v);
  };
  kv("rounding", c.rounding.empty() ? "" : "<code>" + escape(c.rounding) + "</code>");
  kv("saturation", c.saturation.empty() ? "" : "<code>" + escape(c.saturation) + "</code>");
  kv("NaN payload", c.nan_payload.empty() ? "" : "<code>" + escape(c.nan_payload) + "</code>");
  kv("subject", escape(c.subject));
  kv("device", escape(c.device));
  if (c.has_patterns) kv("patterns", vint(src, "/patterns", c.patterns));
  if (c.has_mpfr_checked) kv("checked against MPFR", vint(src, "/mpfr_checked", c.mpfr_checked));
  if (c.has_nan_differences && c.nan_differences)
    kv("NaN vs NaN with other bits", vint(src, "/nan_differences", c.nan_differences) + " (not counted as mismatches)");
  if (c.has_seconds) kv("seconds", vnum(src, "/seconds", c.seconds));
  kv("command", c.command.empty() ? "" : "<code>" + escape(c.command) + "</code>");
  s += "</dl>";
  if (c.has_environment) s += "<h3>Environment</h3>" + env_table(c.env, src, "/environment");
  // Outcome bars.
  std::vector<std::string> cats;
  std::vector<double> counts;
  std::vector<std::string> tips;
  std::string table = "<div class=\"scroll\"><table><thead><tr><th>outcome</th><th class=\"num\">patterns</th></tr></thead><tbody>";
  for (const auto& o : c.outcomes) {
    const std::string ptr = c.outcomes_listed ? "/outcomes/" + o.key + "/count" : "/outcomes/" + o.key;
    table += fmt::format("<tr><td>{}</td><td class=\"num\">{}</td></tr>", escape(o.name), vint(src, ptr, o.count));
    if (o.count == 0) continue;
    cats.push_back(o.name);
    counts.push_back(static_cast<double>(o.count));
    tips.push_back(fmt::format("{}: {} pattern(s)", o.name, o.count));
  }
  table += "</tbody></table></div>";
  if (!cats.empty()) {
    svg::BarChart bc(cats, svg::fit_axis(svg::Scale::Log, counts, "source patterns (log scale)", true), true, 600,
                     std::max(140.0, 80.0 + 24.0 * static_cast<double>(cats.size())));
    bc.title(fmt::format("Outcomes: {} \u2192 {}", c.from, c.to));
    bc.group("", counts, c.passed ? "#0072B2" : "#D55E00", tips);
    s += "<div class=\"figs\">" +
         figure(bc.render(), "Every source bit pattern, classified by what the correctly rounded conversion does with it (exact, "
                             "rounded, overflow, underflow to subnormal or zero, NaN, \u2026); outcome classes with no pattern are "
                             "listed in the table only.") +
         "</div>";
  }
  s += table;
  if (!c.listed.empty()) {
    s += "<h3>Mismatches (first listed)</h3><div class=\"scroll\"><table><thead><tr><th>source bits</th><th>source value</th>"
         "<th>expected</th><th>got</th><th>outcome</th><th>where</th></tr></thead><tbody>";
    for (const auto& m : c.listed)
      s += fmt::format("<tr><td><code>{}</code></td><td><code>{}</code></td><td><code>{}</code></td><td><code>{}</code></td><td>{}</td><td>{}</td></tr>",
                       escape(m.src_bits), escape(m.src_value), escape(m.expected_bits), escape(m.got_bits), escape(m.outcome),
                       m.model_bug ? "fpcert model \u2260 MPFR" : "subject");
    s += "</tbody></table></div>";
    if (!c.command.empty()) s += "<p><b>Reproduce:</b></p><pre class=\"repro\"><code>" + escape(c.command) + "</code></pre>";
  }
  s += "</section>";
  return s;
}

/// An experiment record (results/experiment_record.hpp): its method, then each table; every number
/// tagged with its pointer into the record (data-src e<i>, "/tables/<t>/rows/<r>/<key>").
std::string experiment_section(const ExperimentRecord& e, std::size_t ei) {
  const std::string src = fmt::format("e{}", ei);
  std::string s = fmt::format("<section class=\"exp\" id=\"exp-{}\"><h2>Experiment <code>{}</code>{}</h2>", ei, escape(e.experiment),
                              e.preset.empty() ? "" : " \u2014 preset <code>" + escape(e.preset) + "</code>");
  if (!e.source.empty()) s += "<p><b>Source:</b> " + escape(e.source) + "</p>";
  s += "<p><b>Method.</b> " + escape(e.method) + "</p>";
  if (!e.deviations.empty()) s += "<p class=\"flag\">\u26a0 This run differs: " + escape(e.deviations) + "</p>";
  if (!e.device.empty()) s += "<p><b>Device:</b> " + escape(e.device) + "</p>";
  for (std::size_t t = 0; t < e.tables.size(); ++t) {
    const ExperimentTable& tb = e.tables[t];
    if (!tb.title.empty()) s += "<h3>" + escape(tb.title) + "</h3>";
    s += "<div class=\"scroll\"><table class=\"experiment\"><thead><tr>";
    for (const auto& c : tb.columns) s += fmt::format("<th{}>{}</th>", c.format.empty() ? "" : " class=\"num\"", escape(c.label));
    s += "</tr></thead><tbody>";
    for (std::size_t r = 0; r < tb.rows.size(); ++r) {
      s += "<tr>";
      for (const auto& c : tb.columns) {
        const std::string ptr = fmt::format("/tables/{}/rows/{}/{}", t, r, json_pointer_token(c.key));
        const json v = tb.rows[r].contains(c.key) ? tb.rows[r].at(c.key) : json(nullptr);
        std::string cell;
        if (v.is_null()) cell = kDash;
        else if (v.is_boolean()) cell = vbool(src, ptr, v.get<bool>());
        else if (v.is_number_integer()) cell = vint(src, ptr, v.get<std::int64_t>());
        else if (v.is_number_unsigned()) cell = vint(src, ptr, v.get<std::uint64_t>());
        else if (v.is_number() || (!c.format.empty() && (v == "inf" || v == "-inf" || v == "nan")))  // json_number's non-finite
          cell = vnum(src, ptr, number_from_json(v));
        else cell = escape(v.is_string() ? v.get<std::string>() : v.dump());
        s += fmt::format("<td{}>{}</td>", c.format.empty() ? "" : " class=\"num\"", cell);
      }
      s += "</tr>";
    }
    s += "</tbody></table></div>";
    if (!tb.note.empty()) s += "<p class=\"muted\">" + escape(tb.note) + "</p>";
  }
  if (!e.env.fpcert_version.empty()) s += "<h3>Environment</h3>" + env_table(e.env, src, "/environment");
  s += "</section>";
  return s;
}

std::string banner(const ReportInput& in) {
  bool ok = true;
  for (const auto& r : in.runs) ok &= r.passed();
  for (const auto& c : in.conversions) ok &= c.passed;
  for (const auto& e : in.experiments) ok &= e.passed;
  std::string s = fmt::format("<header class=\"banner {}\"><h1>fpcert accuracy report</h1><div class=\"verdict\">{}</div>", ok ? "ok" : "bad",
                              ok ? "CERTIFIED" : "FAILED");
  if (in.runs.empty() && in.conversions.empty() && in.experiments.empty()) s += "<p>No results.</p>";
  s += "<ul>";
  for (std::size_t i = 0; i < in.experiments.size(); ++i) {
    const ExperimentRecord& e = in.experiments[i];
    s += fmt::format("<li><a href=\"#exp-{}\">experiment <code>{}</code>{}</a> on {}: <b class=\"{}\">{}</b></li>", i, escape(e.experiment),
                     e.preset.empty() ? "" : " (preset " + escape(e.preset) + ")", escape(e.device.empty() ? "?" : e.device),
                     e.passed ? "okt" : "badt", e.passed ? "done" : "its checks failed");
  }
  for (std::size_t i = 0; i < in.runs.size(); ++i) {
    const RunResult& r = in.runs[i];
    s += fmt::format("<li><a href=\"#run-{}\">suite <code>{}</code></a> on {}: <b class=\"{}\">{}</b> \u2014 {}</li>", i, escape(r.suite),
                     escape(run_title(r)), r.passed() ? "okt" : "badt", r.passed() ? "certified" : "failed", counts_line(r, fmt::format("r{}", i)));
  }
  // Many conversions (a whole sweep): one summary line, then only the failing ones.
  const bool summarise = in.conversions.size() > 8;
  if (summarise) {
    std::size_t passed = 0;
    for (const auto& c : in.conversions) passed += c.passed;
    s += fmt::format("<li>conversions: {} checked, <b class=\"okt\">{} passed</b>, <b class=\"{}\">{} failed</b> (each below)</li>",
                     in.conversions.size(), passed, passed == in.conversions.size() ? "okt" : "badt", in.conversions.size() - passed);
  }
  for (std::size_t i = 0; i < in.conversions.size(); ++i) {
    const ConversionResult& c = in.conversions[i];
    if (summarise && c.passed) continue;
    s += fmt::format("<li><a href=\"#conv-{}\">conversion <code>{}</code> \u2192 <code>{}</code></a> ({}, {}): <b class=\"{}\">{}</b> \u2014 "
                     "{} mismatch(es)</li>",
                     i, escape(c.from), escape(c.to), escape(c.rounding), escape(c.saturation), c.passed ? "okt" : "badt",
                     c.passed ? "pass" : "fail", vint(fmt::format("c{}", i), "/mismatches", c.mismatches));
  }
  s += "</ul>";
  if (!ok) {
    // Which gates failed, across runs.
    std::vector<std::pair<std::string, std::string>> refs;
    std::int64_t total = 0;
    std::string list;
    for (std::size_t ri = 0; ri < in.runs.size(); ++ri) {
      const RunResult& r = in.runs[ri];
      for (const char* k : {"fail", "crashed", "hung", "error"}) refs.push_back({fmt::format("r{}", ri), std::string("/counts/") + k});
      total += r.count(CaseStatus::Fail) + r.count(CaseStatus::Crashed) + r.count(CaseStatus::Hung) + r.count(CaseStatus::Error);
      for (std::size_t i = 0; i < r.cases.size(); ++i) {
        const CaseResult& c = r.cases[i];
        if (!bad(c)) continue;
        list += fmt::format("<li><a href=\"#fail-{}-{}\">{} on <code>{}</code></a>: {}{}</li>", ri, i, escape(c.case_id), escape(c.kernel),
                            c.status == CaseStatus::Fail ? escape(c.bound.variant) + " gate: " : escape(std::string(to_string(c.status))) + ": ",
                            escape(c.reason));
      }
    }
    if (!in.runs.empty()) s += fmt::format("<p><b>Failed gates</b> ({} case(s)):</p><ul class=\"failed\">{}</ul>", vsum(refs, total), list);
  }
  // Table of contents.
  s += "<nav class=\"toc\">";
  for (std::size_t i = 0; i < in.runs.size(); ++i) s += fmt::format("<a href=\"#run-{}\">{}</a> ", i, escape(in.runs[i].suite));
  for (std::size_t i = 0; i < in.conversions.size(); ++i)
    s += fmt::format("<a href=\"#conv-{}\">{}\u2192{}</a> ", i, escape(in.conversions[i].from), escape(in.conversions[i].to));
  for (std::size_t i = 0; i < in.experiments.size(); ++i) s += fmt::format("<a href=\"#exp-{}\">{}</a> ", i, escape(in.experiments[i].experiment));
  s += "</nav></header>";
  return s;
}

}  // namespace

std::string html_report(const ReportInput& in) {
  std::string title = "fpcert report";
  if (!in.runs.empty()) title += ": " + in.runs.front().suite + " \u2014 " + run_title(in.runs.front());
  else if (!in.conversions.empty()) title += ": " + in.conversions.front().from + " \u2192 " + in.conversions.front().to;
  else if (!in.experiments.empty()) title += ": experiment " + in.experiments.front().experiment;
  std::string s = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                  "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                  "<meta name=\"generator\" content=\"fpcert\"><title>" +
                  escape(title) + "</title><style>" + kCss + "</style></head><body><main>";
  s += banner(in);
  for (std::size_t i = 0; i < in.runs.size(); ++i) s += run_section(in.runs[i], i);
  for (std::size_t i = 0; i < in.conversions.size(); ++i) s += conversion_section(in.conversions[i], i);
  for (std::size_t i = 0; i < in.experiments.size(); ++i) s += experiment_section(in.experiments[i], i);
  std::string version;
  for (const auto& r : in.runs)
    if (!r.env.fpcert_version.empty()) version = r.env.fpcert_version;
  s += "<footer>Generated by fpcert" + (version.empty() ? "" : " " + escape(version)) +
       ". Every number in the tables is the value in the results JSON, printed to 4 significant digits (its exact value is in "
       "the element\u2019s data-value attribute). One self-contained file: no script, no network.</footer>";
  s += "</main></body></html>\n";
  return s;
}

std::string html_report(const std::vector<RunResult>& runs) {
  ReportInput in;
  in.runs = runs;
  return html_report(in);
}

void write_html_report(const std::string& path, const ReportInput& in) { write_file_atomic(path, html_report(in)); }

void write_html_report(const std::string& path, const std::vector<RunResult>& runs) { write_file_atomic(path, html_report(runs)); }

}  // namespace fpcert
