// generators/spec.cpp — strict parsing and canonical printing of spec strings.
#include "generators/spec.hpp"

#include <charconv>
#include <cstdio>
#include <cmath>
#include <set>

#include "base/error.hpp"
#include "base/input_file.hpp"

namespace fpcert {
namespace {

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

std::string field_names(const GeneratorInfo& g) {
  std::vector<std::string> v;
  for (const auto& p : g.params) v.push_back(p.name);
  return join(v);
}

std::string range_text(const ParamInfo& p) {
  if (p.type == ParamType::Int)
    return "[" + std::to_string(static_cast<std::int64_t>(p.lo)) + ", " + std::to_string(static_cast<std::int64_t>(p.hi)) + "]";
  return "[" + canonical_real(p.lo) + ", " + canonical_real(p.hi) + "]";
}

/// Text from a spec as a message may quote it: control bytes as \xNN, at most `max` characters.
std::string shown(const std::string& t, std::size_t max = 60) { return printable(t, max); }

/// Parse one value; `fail` throws.
ParsedSpec::Value parse_value(const ParamInfo& p, const std::string& v, const ParsedSpec& ps) {
  const std::string field = "field '" + p.name + "'";
  if (v.empty()) ps.fail(field + " has an empty value");
  const char* b = v.data();
  const char* e = v.data() + v.size();
  switch (p.type) {
    case ParamType::Int: {
      std::int64_t x = 0;
      const auto r = std::from_chars(b, e, x);
      if (r.ec != std::errc() || r.ptr != e || v[0] == '+')
        ps.fail(field + ": '" + shown(v) + "' is not an integer");
      if (static_cast<double>(x) < p.lo || static_cast<double>(x) > p.hi)
        ps.fail(field + " = " + shown(v) + " is out of range " + range_text(p));
      return x;
    }
    case ParamType::Seed: {
      std::uint64_t x = 0;
      const auto r = std::from_chars(b, e, x);
      if (r.ec != std::errc() || r.ptr != e || v[0] == '-' || v[0] == '+')
        ps.fail(field + ": '" + shown(v) + "' is not an unsigned 64-bit integer");
      return x;
    }
    case ParamType::Real: {
      double x = 0;
      const auto r = std::from_chars(b, e, x, std::chars_format::general);
      if (r.ec != std::errc() || r.ptr != e || !std::isfinite(x))
        ps.fail(field + ": '" + shown(v) + "' is not a finite real number");
      if (x < p.lo || x > p.hi) ps.fail(field + " = " + shown(v) + " is out of range " + range_text(p));
      return x == 0 ? 0.0 : x;  // -0 canonicalises to 0
    }
    case ParamType::Choice: {
      for (const auto& c : p.choices)
        if (c == v) return c;
      ps.fail(field + ": '" + shown(v) + "' is not one of: " + join(p.choices));
    }
    case ParamType::Format: {
      const Format* f = find_format(v);
      if (f)
        for (const auto& c : p.choices)
          if (c == f->tag) return c;
      ps.fail(field + ": '" + shown(v) + "' is not one of: " + join(p.choices));
    }
  }
  ps.fail(field + ": unknown parameter type");
}

std::string value_text(const ParsedSpec::Value& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  if (const auto* u = std::get_if<std::uint64_t>(&v)) return std::to_string(*u);
  if (const auto* d = std::get_if<double>(&v)) return canonical_real(*d);
  return std::get<std::string>(v);
}

}  // namespace

const char* to_string(ParamType t) {
  switch (t) {
    case ParamType::Int: return "int";
    case ParamType::Seed: return "uint64";
    case ParamType::Real: return "real";
    case ParamType::Choice: return "choice";
    case ParamType::Format: return "format";
  }
  return "?";
}

std::string canonical_real(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

const std::string& ParsedSpec::family() const { return info->name; }

void ParsedSpec::fail(const std::string& what) const { throw InputError("spec '" + shown(original, 120) + "': " + what); }

std::int64_t ParsedSpec::integer(const std::string& key) const { return std::get<std::int64_t>(values.at(key)); }
std::uint64_t ParsedSpec::seed() const { return std::get<std::uint64_t>(values.at("seed")); }
double ParsedSpec::real(const std::string& key) const { return std::get<double>(values.at(key)); }
const std::string& ParsedSpec::choice(const std::string& key) const { return std::get<std::string>(values.at(key)); }
const Format& ParsedSpec::format(const std::string& key) const { return *find_format(choice(key)); }
std::string ParsedSpec::text(const std::string& key) const { return value_text(values.at(key)); }

ParsedSpec parse_spec(const std::string& spec, const std::vector<GeneratorInfo>& families) {
  ParsedSpec ps;
  ps.original = spec;
  if (spec.size() > kMaxSpecLength)
    ps.fail("a spec of " + std::to_string(spec.size()) + " characters is longer than the " + std::to_string(kMaxSpecLength) +
            " a spec may have");
  std::vector<std::string> names;
  for (const auto& g : families) names.push_back(g.name);
  const auto colon = spec.find(':');
  const std::string fam = spec.substr(0, colon);
  if (fam.empty()) ps.fail("no generator name (valid: " + join(names) + ")");
  for (const auto& g : families)
    if (g.name == fam) ps.info = &g;
  if (!ps.info) ps.fail("unknown generator '" + shown(fam) + "' (valid: " + join(names) + ")");
  const GeneratorInfo& g = *ps.info;

  std::set<std::string> given;
  if (colon != std::string::npos) {
    const std::string rest = spec.substr(colon + 1);
    std::size_t pos = 0;
    while (true) {
      const auto comma = rest.find(',', pos);
      const std::string item = rest.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
      if (item.empty()) ps.fail("empty field (expected key=value; valid: " + field_names(g) + ")");
      const auto eq = item.find('=');
      if (eq == std::string::npos)
        ps.fail("field '" + shown(item) + "' has no value (expected key=value; valid: " + field_names(g) + ")");
      const std::string key = item.substr(0, eq), val = item.substr(eq + 1);
      const ParamInfo* p = nullptr;
      for (const auto& q : g.params)
        if (q.name == key) p = &q;
      if (!p) ps.fail("unknown field '" + shown(key) + "' (valid: " + field_names(g) + ")");
      if (!given.insert(key).second) ps.fail("field '" + key + "' given twice");
      ps.values[key] = parse_value(*p, val, ps);
      if (comma == std::string::npos) break;
      pos = comma + 1;
    }
  }
  // Defaults (declared as canonical text; parsed through the same path).
  ParsedSpec dflt;
  dflt.original = g.name + " defaults";
  for (const auto& p : g.params)
    if (!ps.values.count(p.name)) ps.values[p.name] = parse_value(p, p.default_value, dflt);
  ps.canonical = g.name;
  for (std::size_t i = 0; i < g.params.size(); ++i)
    ps.canonical += (i == 0 ? ":" : ",") + g.params[i].name + "=" + value_text(ps.values.at(g.params[i].name));
  return ps;
}

}  // namespace fpcert
