// results/conversion.cpp — conversion records: read (the report's view) and the check's fields written.
#include "results/conversion.hpp"

#include <fmt/format.h>

#include <cstdlib>

#include "base/decimal.hpp"
#include "base/error.hpp"
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

}  // namespace

bool is_conversion_record(const json& j) {
  return j.is_object() && !j.contains("cases") && (jstr(j, "kind") == "conversion" || (j.contains("from") && j.contains("to") && j.contains("outcomes")));
}


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
  c.record = j;
  return c;
}

void add_check_json(json& report, const ConvertCheckResult& res, const Format& src, const Format& dst) {
  json outcomes = json::object();
  for (int i = 0; i < kOutcomeCount; ++i) outcomes[std::string(to_string(static_cast<Outcome>(i)))] = res.outcomes[i];
  json listed = json::array();
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

ConvertCheckResult check_from_json(const json& record, const Format& src, const Format& dst) {
  auto bits = [](const json& j, const char* key) { return std::strtoull(j.at(key).get<std::string>().c_str(), nullptr, 16); };
  auto outcome_of = [](const std::string& name) {
    for (int i = 0; i < kOutcomeCount; ++i)
      if (to_string(static_cast<Outcome>(i)) == name) return static_cast<Outcome>(i);
    throw InputError("conversion record: unknown outcome class '" + name + "'");
  };
  ConvertCheckResult r;
  r.patterns = record.at("patterns").get<std::uint64_t>();
  r.mpfr_checked = record.at("mpfr_checked").get<std::uint64_t>();
  for (const auto& [name, n] : record.at("outcomes").items()) r.outcomes[static_cast<std::size_t>(outcome_of(name))] = n.get<std::uint64_t>();
  r.mismatches = record.at("mismatches").get<std::uint64_t>();
  r.model_mismatches = record.at("model_mismatches").get<std::uint64_t>();
  r.nan_differences = record.at("nan_differences").get<std::uint64_t>();
  for (const auto& m : record.at("listed")) {
    ConvertMismatch x;
    x.src = from_container(src, bits(m, "src_bits"));
    x.expected = from_container(dst, bits(m, "expected_bits"));
    x.got = from_container(dst, bits(m, "got_bits"));
    x.outcome = outcome_of(m.at("outcome").get<std::string>());
    x.model_bug = m.at("model_bug").get<bool>();
    r.listed.push_back(x);
  }
  return r;
}

}  // namespace fpcert
