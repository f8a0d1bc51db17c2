// cli/convert_report.cpp — see convert_report.hpp.
#include "cli/convert_report.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "base/decimal.hpp"
#include "base/error.hpp"
#include "oracle/ulp.hpp"

namespace fpcert::cli {

std::string describe_code(const Format& f, std::uint64_t code) {
  return fmt::format("{} {} = {}", f.tag, hex_code(f, code), exact_decimal(to_double(f, code)));
}

std::pair<std::uint64_t, std::uint64_t> parse_first_count(const std::string& text, std::uint64_t all, std::string_view what) {
  const auto colon = text.find(':');
  if (colon == std::string::npos) throw InputError("--range: expected FIRST:COUNT, e.g. 0x7f800000:1024");
  std::uint64_t first = 0, count = 0;
  try {
    std::size_t p1 = 0, p2 = 0;
    first = std::stoull(text.substr(0, colon), &p1, 0);
    count = std::stoull(text.substr(colon + 1), &p2, 0);
    if (p1 != colon || p2 != text.size() - colon - 1) throw std::invalid_argument("trailing");
  } catch (const std::exception&) {
    throw InputError("--range: expected FIRST:COUNT as integers, got '" + text + "'");
  }
  if (count == 0 || (all && (first >= all || count > all - first)))
    throw InputError(fmt::format("--range: {} lies outside the {} codes of {}", text, all, what));
  return {first, count};
}

void set_check_range(const std::string& range, ConvertCheckSpec& spec) {
  if (!range.empty()) std::tie(spec.first, spec.count) = parse_first_count(range, spec.src->code_count(), spec.src->tag);
  else if (spec.src->total_bits() > 32)
    throw InputError(fmt::format("--exhaustive: {} has 2^{} patterns; give --range FIRST:COUNT", spec.src->tag, spec.src->total_bits()));
}

void print_check_result(const ConvertCheckResult& res, const Format& src, const Format& dst) {
  fmt::print("outcome counts:\n");
  for (int i = 0; i < kOutcomeCount; ++i)
    if (res.outcomes[i]) fmt::print("  {:<18} {:>12}\n", to_string(static_cast<Outcome>(i)), res.outcomes[i]);
  if (res.nan_differences) fmt::print("NaN vs NaN with other bits (not a mismatch; --strict-nan counts them): {}\n", res.nan_differences);
  for (const auto& m : res.listed)
    fmt::print("  {} {}  expected {}  got {}  [{}]\n", m.model_bug ? "MODEL!=MPFR" : "MISMATCH", describe_code(src, m.src),
               describe_code(dst, m.expected), describe_code(dst, m.got), to_string(m.outcome));
  fmt::print("mismatches: {}{}\n", res.mismatches + res.model_mismatches,
             res.model_mismatches ? fmt::format(" ({} where fpcert's fast model disagrees with MPFR: a bug in fpcert)", res.model_mismatches) : "");
  fmt::print("{}\n", res.passed() ? "PASS" : "FAIL");
}

void add_check_json(nlohmann::json& report, const ConvertCheckResult& res, const Format& src, const Format& dst) {
  nlohmann::json outcomes = nlohmann::json::object();
  for (int i = 0; i < kOutcomeCount; ++i) outcomes[std::string(to_string(static_cast<Outcome>(i)))] = res.outcomes[i];
  nlohmann::json listed = nlohmann::json::array();
  for (const auto& m : res.listed)
    listed.push_back({{"src_bits", hex_code(src, m.src)},
                      {"src_value", exact_decimal(to_double(src, m.src))},
                      {"expected_bits", hex_code(dst, m.expected)},
                      {"got_bits", hex_code(dst, m.got)},
                      {"outcome", to_string(m.outcome)},
                      {"model_bug", m.model_bug}});
  report["patterns"] = res.patterns;
  report["mpfr_checked"] = res.mpfr_checked;
  report["outcomes"] = outcomes;
  report["mismatches"] = res.mismatches;
  report["model_mismatches"] = res.model_mismatches;
  report["nan_differences"] = res.nan_differences;
  report["listed"] = listed;
  report["passed"] = res.passed();
}

}  // namespace fpcert::cli
