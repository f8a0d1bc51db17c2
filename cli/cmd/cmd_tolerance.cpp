// cli/cmd/cmd_tolerance.cpp — `fpcert tolerance`: the tolerance a kernel's traits imply for a shape, in
// normwise and per-element forms, with the derivation (suites/verdict/tolerance.hpp; docs/python.md).
#include <fmt/format.h>

#include <memory>
#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cli/plugins.hpp"
#include "suites/verdict/tolerance.hpp"

namespace fpcert::cli {
namespace {

struct ToleranceArgs {
  std::string kernel, traits;
  std::int64_t m = 1024, n = 1024, k = 1024;
  bool json = false;
  bool inputs_exact = false;
  std::vector<std::string> plugins;
};

nlohmann::json bound_json(const Bound& b) {
  nlohmann::json terms = nlohmann::json::array();
  for (const BoundTerm& t : b.terms) terms.push_back({{"name", t.name}, {"value", t.value}, {"formula", t.formula}});
  return {{"variant", b.variant ? std::string(to_string(*b.variant)) : std::string()}, {"rtol", b.rtol},         {"atol_per_max_ref", b.atol}, {"out_term", b.out_term},
          {"vacuous", b.vacuous}, {"terms", terms},         {"arithmetic", b.arithmetic}, {"allowed", b.allowed}};
}

int run_tolerance(const ToleranceArgs& a) {
  load_plugins(a.plugins);
  if (a.kernel.empty() == a.traits.empty()) throw InputError("tolerance: give exactly one of --kernel K or --traits SPEC");
  const KernelTraits t = a.kernel.empty() ? parse_traits_spec(a.traits) : traits_by_name_or_spec(a.kernel);
  const ShapeTolerance s = shape_tolerance(t, a.m, a.n, a.k, a.inputs_exact);
  if (a.json) {
    const nlohmann::json j = {{"traits", describe_traits(t)}, {"m", s.m}, {"n", s.n}, {"k", s.k},
                              {"normwise", bound_json(s.normwise)}, {"element", bound_json(s.element)}};
    fmt::print("{}\n", j.dump(2));
    return 0;
  }
  fmt::print("normwise:    rtol = {:.6g}, atol = {:.6g} * max|ref|   (|c - ref| <= atol + rtol |ref|)\n", s.normwise.rtol,
             s.normwise.rtol);
  fmt::print("per element: |c - ref| <= E + {1:.6g} (|ref| + E), E = {0:.6g} (|A||B|)_ij + underflow{2}\n\n", s.element.rtol, s.element.out_term,
             s.element.vacuous ? "   VACUOUS (K u >= 1)" : "");
  fmt::print("{}", s.derivation);
  return 0;
}

}  // namespace

void add_tolerance(CLI::App& root, Registry& reg) {
  auto* app = root.add_subcommand("tolerance", "The tolerance a kernel's traits imply for a shape (normwise and per element), derived");
  auto a = std::make_shared<ToleranceArgs>();
  app->add_option("--kernel", a->kernel, "A registered kernel (fpcert kernels)");
  app->add_option("--traits", a->traits, "Traits spec, e.g. in=f16,acc=f32,out=f16 (keys: docs/python.md)");
  app->add_option("--m", a->m, "Rows of C")->check(integer_in(1, std::uint64_t{1} << 40));
  app->add_option("--n", a->n, "Columns of C")->check(integer_in(1, std::uint64_t{1} << 40));
  app->add_option("--k", a->k, "Inner dimension")->check(integer_in(1, std::uint64_t{1} << 40));
  app->add_flag("--inputs-exact", a->inputs_exact, "The inputs are already in the kernel's input formats (no storage rounding but the operands')");
  app->add_flag("--json", a->json, "Print as JSON");
  add_plugin_option(app, a->plugins);
  reg.push_back({app, [a] { return run_tolerance(*a); }});
}

}  // namespace fpcert::cli
