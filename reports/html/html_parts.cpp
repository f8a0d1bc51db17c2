// reports/html/html_parts.cpp — tagged numbers and the small pieces every part of the report uses.
#include "reports/html/html_parts.hpp"

#include <cmath>

namespace fpcert::html {

std::string repr(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return fmt::format("{}", v);
}

std::string vnum(const std::string& src, const std::string& ptr, double v, const char* extra_class) {
  return fmt::format("<span class=\"v{}{}\" data-src=\"{}\" data-ptr=\"{}\" data-value=\"{}\">{}</span>", *extra_class ? " " : "",
                     extra_class, src, html_escape(ptr), repr(v), std::isnan(v) ? std::string("nan") : fmt::format("{:.4g}", v));
}
std::string vbool(const std::string& src, const std::string& ptr, bool v) {
  return fmt::format("<span class=\"v\" data-src=\"{}\" data-ptr=\"{}\" data-kind=\"bool\" data-value=\"{}\">{}</span>", src, html_escape(ptr),
                     v ? "true" : "false", v ? "yes" : "no");
}
std::string vsum(const std::vector<std::pair<std::string, std::string>>& refs, std::int64_t total) {
  std::string list;
  for (const auto& [s, p] : refs) list += (list.empty() ? "" : " ") + s + ":" + p;
  return fmt::format("<span class=\"v\" data-sum=\"{}\" data-kind=\"int\" data-value=\"{}\">{}</span>", html_escape(list), total, total);
}


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
  return fmt::format("<span class=\"badge {}\">{}</span>", cls, html_escape(std::string(to_string(s))));
}

std::string case_ptr(std::size_t i) { return fmt::format("/cases/{}", i); }

std::string variant_name(const CaseResult& c) { return c.bound.variant ? std::string(to_string(*c.bound.variant)) : std::string(); }

}  // namespace fpcert::html
