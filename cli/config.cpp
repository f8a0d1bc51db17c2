// cli/config.cpp — fpcert.toml: strict parsing (every key known, every type checked) with messages
// that name the file, line, column, key and the valid keys.
#include "cli/config.hpp"

#include <fmt/format.h>
// toml++ 3.3 asserts things invalid input can violate (parser.inl:2549, `!is_value_terminator(*cp)`, reached by
// tests/fuzz/corpus/config/issue_toml_value_terminator): a build with assertions on (Debug, or the sanitizer
// build) aborted on a malformed fpcert.toml instead of refusing it. Its asserts are off here in every build.
#define TOML_ASSERT(expr) static_assert(true)
#include <toml++/toml.h>

#include <cctype>
#include <cmath>
#include <cstdint>
#include <filesystem>

#include "base/error.hpp"
#include "base/input_file.hpp"
#include "kernels/kernel.hpp"
#include "kernels/order.hpp"
#include "oracle/round.hpp"
#include "results/results.hpp"
#include "suites/audit/audit.hpp"
#include "suites/verdict/bound.hpp"
#include "suites/run/suite.hpp"

namespace fpcert::cli {
namespace {

namespace fs = std::filesystem;

struct Ctx {
  std::string file;
  fs::path dir;
  [[noreturn]] void fail(const toml::source_region& where, const std::string& what) const {
    if (where.begin.line)
      throw InputError(fmt::format("{}:{}:{}: {}", file, where.begin.line, where.begin.column, what));
    throw InputError(fmt::format("{}: {}", file, what));
  }
  std::string resolve(const std::string& p) const {
    if (p.empty() || fs::path(p).is_absolute()) return p;
    return (dir / p).lexically_normal().string();
  }
};

std::string_view type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a number";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::array: return "an array";
    case toml::node_type::table: return "a table";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
    default: return "nothing";
  }
}

std::string join(const std::vector<std::string_view>& v) {
  std::string s;
  for (auto x : v) s += (s.empty() ? "" : ", ") + std::string(x);
  return s;
}

/// Every key of `t` must be one of `valid`.
void check_keys(const Ctx& c, const toml::table& t, const std::string& where, const std::vector<std::string_view>& valid) {
  for (const auto& [k, v] : t) {
    bool ok = false;
    for (auto x : valid) ok = ok || k.str() == x;
    if (!ok) c.fail(k.source().begin.line ? k.source() : v.source(),
                    fmt::format("unknown key '{}' {} (valid keys: {})", k.str(), where, join(valid)));
  }
}

std::string get_string(const Ctx& c, const toml::node& n, const std::string& key) {
  if (const auto* s = n.as_string()) return s->get();
  c.fail(n.source(), fmt::format("'{}' must be a string, got {}", key, type_name(n)));
}

std::vector<std::string> get_strings(const Ctx& c, const toml::node& n, const std::string& key) {
  const auto* a = n.as_array();
  if (!a) c.fail(n.source(), fmt::format("'{}' must be an array of strings, e.g. {} = [\"...\"], got {}", key, key, type_name(n)));
  std::vector<std::string> r;
  for (const auto& e : *a) {
    const auto* s = e.as_string();
    if (!s) c.fail(e.source().begin.line ? e.source() : n.source(),
                   fmt::format("'{}' must be an array of strings; element {} is {}", key, r.size(), type_name(e)));
    if (s->get().empty()) c.fail(e.source(), fmt::format("'{}': element {} is an empty string", key, r.size()));
    r.push_back(s->get());
  }
  return r;
}

double get_number(const Ctx& c, const toml::node& n, const std::string& key) {
  if (const auto* i = n.as_integer()) return static_cast<double>(i->get());
  if (const auto* f = n.as_floating_point()) return f->get();
  c.fail(n.source(), fmt::format("'{}' must be a number, got {}", key, type_name(n)));
}

std::int64_t get_integer(const Ctx& c, const toml::node& n, const std::string& key) {
  if (const auto* i = n.as_integer()) return i->get();
  c.fail(n.source(), fmt::format("'{}' must be an integer, got {}", key, type_name(n)));
}

bool get_bool(const Ctx& c, const toml::node& n, const std::string& key) {
  if (const auto* b = n.as_boolean()) return b->get();
  c.fail(n.source(), fmt::format("'{}' must be true or false, got {}", key, type_name(n)));
}

const toml::table& get_table(const Ctx& c, const toml::node& n, const std::string& key) {
  if (const auto* t = n.as_table()) return *t;
  c.fail(n.source(), fmt::format("'{}' must be a table ([{}]), got {}", key, key, type_name(n)));
}

// toml++ 3.3 has undefined behaviour on some inputs (found by tests/fuzz/fuzz_config): its table of non-ASCII
// whitespace reaches __builtin_unreachable for most code points in U+00A1..U+0499 and a few other ranges,
// wherever its parser asks "is this whitespace?" — outside strings, and inside them when it scans ahead
// after a syntax error; and it assumes (TOML_ASSERT_ASSUME) that a table header's '[' or '[[' is followed
// by a key. So toml++ is only ever given ASCII text: non-ASCII characters in strings become \u or \U
// escapes (a literal string becomes the equivalent basic string), in comments '?', and anywhere else
// (never valid TOML) they are refused, as are control characters other than tab and line breaks and a
// table header without its key, each with its line and column. Error positions toml++ reports after such
// a string on the same line count its escapes.
std::string ascii_toml(const Ctx& c, const std::string& text) {
  enum class In { Code, Comment, Basic, Literal, MultiBasic, MultiLiteral } in = In::Code;
  std::uint32_t line = 1, column = 1;
  bool line_start = true;
  char prev = '\n';  // the last non-blank character in code: a string starts only after one of "\n=[,{."
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  const auto fail = [&](std::size_t offset, const std::string& what) {
    toml::source_region at;
    at.begin = {line, static_cast<std::uint32_t>(column + offset)};
    c.fail(at, what);
  };
  const auto at = [&](std::size_t k, std::string_view s) { return text.compare(k, s.size(), s) == 0; };
  // The code point of the UTF-8 sequence at i (its length in len); invalid UTF-8 fails with its position.
  const auto decode = [&](std::size_t i, std::size_t& len) {
    const auto b0 = static_cast<unsigned char>(text[i]);
    len = b0 >= 0xf0 && b0 < 0xf5 ? 4 : b0 >= 0xe0 && b0 < 0xf0 ? 3 : b0 >= 0xc2 && b0 < 0xe0 ? 2 : 0;
    if (len == 0 || i + len > text.size()) fail(0, "invalid UTF-8");
    std::uint32_t cp = b0 & (0x7fu >> len);
    for (std::size_t k = 1; k < len; ++k) {
      const auto b = static_cast<unsigned char>(text[i + k]);
      if ((b & 0xc0) != 0x80) fail(0, "invalid UTF-8");
      cp = cp << 6 | (b & 0x3fu);
    }
    const std::uint32_t min = len == 2 ? 0x80 : len == 3 ? 0x800 : 0x10000;
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp < 0xe000)) fail(0, "invalid UTF-8");
    return cp;
  };
  const auto newline = [&] {
    ++line;
    column = 1;
    if (in == In::Code) {
      line_start = true;
      prev = '\n';
    }
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto ch = static_cast<unsigned char>(text[i]);
    const bool crlf = ch == '\r' && i + 1 < text.size() && text[i + 1] == '\n';
    if ((ch < 0x20 && ch != '\t' && ch != '\n' && !crlf) || ch == 0x7f)
      fail(0, fmt::format("control character 0x{:02x} (TOML allows only tab and line breaks)", ch));
    if (in == In::Code && line_start && ch != ' ' && ch != '\t' && ch != '\n' && !crlf) {
      line_start = false;
      if (ch == '[') {  // a table header: a key (bare or quoted) or ']' must follow '[' or '[['
        std::size_t k = i + 1;
        if (k < text.size() && text[k] == '[') ++k;
        while (k < text.size() && (text[k] == ' ' || text[k] == '\t')) ++k;
        const char n = k < text.size() ? text[k] : ']';
        if (!(std::isalnum(static_cast<unsigned char>(n)) || n == '_' || n == '-' || n == '"' || n == '\'' || n == ']'))
          fail(k - i, "TOML syntax: a table header needs a key after its '['");
      }
    }
    if (ch >= 0x80) {
      std::size_t len = 1;
      const std::uint32_t cp = decode(i, len);
      if (in == In::Code) fail(0, "a non-ASCII character outside a string or comment");
      if (in == In::Comment) out += '?';
      else out += cp > 0xffff ? fmt::format("\\U{:08X}", cp) : fmt::format("\\u{:04X}", cp);
      i += len - 1;
      ++column;
      continue;
    }
    std::string_view emit(reinterpret_cast<const char*>(&text[i]), 1);
    std::size_t width = 1;  // input characters taken
    switch (in) {
      case In::Code:
        if (ch == '#') {
          in = In::Comment;
        } else if ((ch == '"' || ch == '\'') && std::string_view("\n=[,{.").find(prev) == std::string_view::npos) {
          // a quote where no string can start ("2'x"): not a string; toml++ reports the syntax error
        } else if (at(i, "\"\"\"") || at(i, "'''")) {
          in = ch == '"' ? In::MultiBasic : In::MultiLiteral;
          emit = "\"\"\"";
          width = 3;
        } else if (ch == '"' || ch == '\'') {
          in = ch == '"' ? In::Basic : In::Literal;
          emit = "\"";
        }
        if (ch != ' ' && ch != '\t') prev = static_cast<char>(ch);
        break;
      case In::Comment:
        if (ch == '\n') in = In::Code;
        break;
      case In::Basic:
      case In::MultiBasic:
        if (ch == '\\' && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80) {
          fail(1, "TOML syntax: a backslash before a non-ASCII character is not an escape");
        } else if (ch == '\\' && i + 1 < text.size() && text[i + 1] != '\n') {
          emit = std::string_view(&text[i], 2);  // an escape: its second character is never a delimiter
          width = 2;
        } else if (in == In::Basic && (ch == '"' || ch == '\n')) {
          in = In::Code;  // the end, or an unterminated string: toml++ says so
        } else if (in == In::MultiBasic && at(i, "\"\"\"")) {
          in = In::Code;
          emit = "\"\"\"";
          width = 3;
        }
        break;
      case In::Literal:
      case In::MultiLiteral:  // written as the equivalent basic string: backslashes and quotes escaped
        if (in == In::Literal && (ch == '\'' || ch == '\n')) {
          in = In::Code;
          if (ch == '\'') emit = "\"";
        } else if (in == In::MultiLiteral && at(i, "'''")) {
          in = In::Code;
          emit = "\"\"\"";
          width = 3;
        } else if (ch == '\\') {
          emit = "\\\\";
        } else if (ch == '"') {
          emit = "\\\"";
        }
        break;
    }
    out += emit;
    i += width - 1;
    if (ch == '\n') newline();
    else column += static_cast<std::uint32_t>(width);
  }
  return out;
}

}  // namespace

ProjectConfig parse_project_config(const std::string& text, const std::string& path) {
  Ctx c{path, fs::path(path).parent_path()};
  toml::table root;
  try {
    root = toml::parse(ascii_toml(c, text), path);
  } catch (const toml::parse_error& e) {
    c.fail(e.source(), fmt::format("TOML syntax: {}", e.description()));
  }
  ProjectConfig cfg;
  cfg.path = path;
  static const std::vector<std::string_view> kTop = {"plugins", "kernels", "suites", "isolate", "timeout", "gate", "orders", "output",
                                                     "determinism", "nan", "audit"};
  static const std::vector<std::string_view> kAudit = {"kernel", "traits",      "m", "n", "k", "inputs", "seeds", "rule", "sample_rows",
                                                       "reference", "batch_invariant", "a", "b", "a_format", "b_format", "allow", "op"};
  static const std::vector<std::string_view> kGate = {"variant", "baseline", "factor", "mn", "tier"};
  static const std::vector<std::string_view> kOutput = {"json", "junit", "html"};
  check_keys(c, root, "at the top level", kTop);
  for (const auto& [k, v] : root) {
    const std::string key(k.str());
    if (key == "plugins") {
      for (const auto& p : get_strings(c, v, key)) cfg.plugins.push_back(c.resolve(p));
    } else if (key == "kernels") {
      cfg.kernels = get_strings(c, v, key);
    } else if (key == "suites") {
      cfg.suites = get_strings(c, v, key);
      if (cfg.suites.empty())  // was: the default suite, silently
        c.fail(v.source(), "'suites' is empty: list at least one suite, or remove the key for the default (certify)");
      for (std::size_t i = 0; i < cfg.suites.size(); ++i)
        if (!find_suite(cfg.suites[i]))
          c.fail((*v.as_array())[i].source(), fmt::format("'suites': unknown suite '{}' (valid: {})", cfg.suites[i], suite_names()));
    } else if (key == "isolate") {
      cfg.isolate = get_bool(c, v, key);
    } else if (key == "timeout") {
      cfg.timeout_s = get_number(c, v, key);
      if (!(*cfg.timeout_s >= 0.1 && *cfg.timeout_s <= 1e7))
        c.fail(v.source(), "'timeout' must be seconds per case in [0.1, 10000000]");
    } else if (key == "gate") {
      const auto& g = get_table(c, v, key);
      check_keys(c, g, "in [gate]", kGate);
      for (const auto& [gk, gv] : g) {
        const std::string name = "gate." + std::string(gk.str());
        if (gk.str() == "variant") {
          cfg.variant = get_string(c, gv, name);
          if (!parse_bound_variant(*cfg.variant))
            c.fail(gv.source(), fmt::format("'{}': expected independent, componentwise or worstcase, got '{}'", name, *cfg.variant));
        } else if (gk.str() == "baseline") {
          cfg.baseline = get_string(c, gv, name);
        } else if (gk.str() == "factor") {
          cfg.factor = get_number(c, gv, name);
          if (!(*cfg.factor > 0 && std::isfinite(*cfg.factor))) c.fail(gv.source(), fmt::format("'{}' must be a finite number > 0", name));
        } else if (gk.str() == "mn") {
          cfg.mn = get_integer(c, gv, name);
          if (*cfg.mn <= 0 || *cfg.mn > (std::int64_t{1} << 30))
            c.fail(gv.source(), fmt::format("'{}' must be a positive integer (at most 2^30)", name));
        } else if (gk.str() == "tier") {
          cfg.tier = get_string(c, gv, name);
          if (!parse_tier(*cfg.tier) || *cfg.tier == "none")
            c.fail(gv.source(), fmt::format("'{}': expected bitwise, envelope+statistical or envelope, got '{}'", name, *cfg.tier));
        }
      }
    } else if (key == "orders") {
      for (const auto& [ok, ov] : get_table(c, v, key)) {
        const std::string name = "orders." + std::string(ok.str());
        const std::string spec = get_string(c, ov, name);
        try {
          (void)parse_order_spec(spec);
        } catch (const InputError& e) {
          c.fail(ov.source(), fmt::format("'{}': {}", name, e.what()));
        }
        cfg.orders.emplace_back(std::string(ok.str()), spec);
      }
    } else if (key == "determinism") {
      for (const auto& [dk, dv] : get_table(c, v, key)) {
        const std::string name = "determinism." + std::string(dk.str());
        const std::string d = get_string(c, dv, name);
        if (!parse_determinism(d)) c.fail(dv.source(), fmt::format("'{}': expected run_to_run or deterministic, got '{}'", name, d));
        cfg.determinism.emplace_back(std::string(dk.str()), d);
      }
    } else if (key == "nan") {
      for (const auto& [nk, nv] : get_table(c, v, key)) {
        const std::string name = "nan." + std::string(nk.str());
        const std::string n = get_string(c, nv, name);
        if (!parse_nan_payload(n)) c.fail(nv.source(), fmt::format("'{}': unknown NaN convention '{}' (valid: {})", name, n, nan_payload_names()));
        cfg.nan.emplace_back(std::string(nk.str()), n);
      }
    } else if (key == "audit") {
      const auto& t = get_table(c, v, key);
      check_keys(c, t, "in [audit]", kAudit);
      for (const auto& [ak, av] : t) {
        const std::string name = "audit." + std::string(ak.str());
        const std::string_view k2 = ak.str();
        if (k2 == "m" || k2 == "n" || k2 == "k") {
          const std::int64_t x = get_integer(c, av, name);
          if (x < 1 || x > (std::int64_t{1} << 20)) c.fail(av.source(), fmt::format("'{}' must be an integer in [1, 2^20]", name));
          (k2 == "m" ? cfg.audit.m : k2 == "n" ? cfg.audit.n : cfg.audit.k) = x;
        } else if (k2 == "seeds") {
          const auto* arr = av.as_array();
          if (!arr || arr->empty()) c.fail(av.source(), fmt::format("'{}' must be a non-empty array of integers, e.g. seeds = [1, 2, 3]", name));
          std::vector<std::uint64_t> seeds;
          for (const auto& e : *arr) {
            const auto x = e.value<std::int64_t>();
            if (!e.is_integer() || !x || *x < 0) c.fail(e.source().begin.line ? e.source() : av.source(), fmt::format("'{}': every seed is an integer >= 0", name));
            seeds.push_back(static_cast<std::uint64_t>(*x));
          }
          cfg.audit.seeds = seeds;
        } else if (k2 == "sample_rows") {
          if (av.is_integer()) {
            const std::int64_t x = get_integer(c, av, name);
            if (x < 1) c.fail(av.source(), fmt::format("'{}' must be auto, all or a positive integer", name));
            cfg.audit.sample_rows = std::to_string(x);
          } else {
            cfg.audit.sample_rows = get_string(c, av, name);
            if (*cfg.audit.sample_rows != "auto" && *cfg.audit.sample_rows != "all")
              c.fail(av.source(), fmt::format("'{}' must be auto, all or a positive integer", name));
          }
        } else if (k2 == "batch_invariant") {
          const auto b = av.value<bool>();
          if (!av.is_boolean() || !b) c.fail(av.source(), fmt::format("'{}' must be true or false", name));
          cfg.audit.batch_invariant = *b;
        } else if (k2 == "allow") {
          std::vector<std::string> allow;
          for (const auto& x : get_strings(c, av, name)) {
            if (x != "tf32") c.fail(av.source(), fmt::format("'{}': unknown allowance '{}' (valid: {})", name, x, kAuditAllowances));
            allow.push_back(x);
          }
          cfg.audit.allow = allow;
        } else if (k2 == "a_format" || k2 == "b_format") {
          const std::string f = get_string(c, av, name);
          if (f != "bf16" && f != "f16") c.fail(av.source(), fmt::format("'{}': '{}' is not bf16 or f16", name, f));
          (k2 == "a_format" ? cfg.audit.a_format : cfg.audit.b_format) = f;
        } else if (k2 == "a" || k2 == "b") {
          const std::string p = c.resolve(get_string(c, av, name));  // the test's own tensors, relative to the file's folder
          if (p.empty()) c.fail(av.source(), fmt::format("'{}' is an empty path", name));
          (k2 == "a" ? cfg.audit.a : cfg.audit.b) = p;
        } else {
          const std::string val = get_string(c, av, name);
          if (k2 == "reference") {
            if (val != "exact" && val != "f32" && val != "out")
              c.fail(av.source(), fmt::format("'{}': '{}' is not a reference (valid: exact, f32, out)", name, val));
            cfg.audit.reference = val;
          } else if (k2 == "rule") {
            try {
              (void)parse_audit_rule(val);
            } catch (const InputError& e) {
              c.fail(av.source(), fmt::format("'{}': {}", name, e.what()));
            }
            cfg.audit.rule = val;
          } else if (k2 == "op") {
            if (val != "gemm" && val != "softmax" && val != "log_softmax" && val != "layernorm" && val != "rmsnorm")
              c.fail(av.source(), fmt::format("'{}': '{}' is not an audited operation (valid: gemm, softmax, log_softmax, layernorm, rmsnorm)", name, val));
            cfg.audit.op = val;
          } else if (k2 == "kernel") cfg.audit.kernel = val;
          else if (k2 == "traits") cfg.audit.traits = val;
          else cfg.audit.inputs = val;
        }
      }
    } else if (key == "output") {
      const auto& o = get_table(c, v, key);
      check_keys(c, o, "in [output]", kOutput);
      for (const auto& [ok, ov] : o) {
        const std::string name = "output." + std::string(ok.str());
        const std::string p = c.resolve(get_string(c, ov, name));
        if (p.empty()) c.fail(ov.source(), fmt::format("'{}' is an empty path", name));
        if (ok.str() == "json") cfg.json = p;
        else if (ok.str() == "junit") cfg.junit = p;
        else cfg.html = p;
      }
    }
  }
  return cfg;
}

ProjectConfig load_project_config(const std::string& path) {
  // At most 1 MiB of text: a folder, /dev/zero or a binary file is refused before it is parsed.
  return parse_project_config(read_input_file(path, kConfigLimit, "--config"), path);
}

}  // namespace fpcert::cli
