// cli/config.cpp — fpcert.toml: strict parsing (every key known, every type checked) with messages
// that name the file, line, column, key and the valid keys.
#include "cli/config.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/error.hpp"
#include "kernels/order.hpp"
#include "results/results.hpp"
#include "suites/bound.hpp"
#include "suites/suite.hpp"

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

}  // namespace

ProjectConfig parse_project_config(const std::string& text, const std::string& path) {
  Ctx c{path, fs::path(path).parent_path()};
  toml::table root;
  try {
    root = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    c.fail(e.source(), fmt::format("TOML syntax: {}", e.description()));
  }
  ProjectConfig cfg;
  cfg.path = path;
  static const std::vector<std::string_view> kTop = {"plugins", "kernels", "suites", "isolate", "timeout", "gate", "orders", "output"};
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
      for (std::size_t i = 0; i < cfg.suites.size(); ++i)
        if (!find_suite(cfg.suites[i]))
          c.fail((*v.as_array())[i].source(), fmt::format("'suites': unknown suite '{}' (valid: {})", cfg.suites[i], suite_names()));
    } else if (key == "isolate") {
      cfg.isolate = get_bool(c, v, key);
    } else if (key == "timeout") {
      cfg.timeout_s = get_number(c, v, key);
      if (!(*cfg.timeout_s > 0)) c.fail(v.source(), "'timeout' must be > 0 (seconds per case)");
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
          if (!(*cfg.factor > 0)) c.fail(gv.source(), fmt::format("'{}' must be > 0", name));
        } else if (gk.str() == "mn") {
          cfg.mn = get_integer(c, gv, name);
          if (*cfg.mn <= 0) c.fail(gv.source(), fmt::format("'{}' must be a positive integer", name));
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
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("--config: cannot read '{}'", path));
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse_project_config(ss.str(), path);
}

}  // namespace fpcert::cli
