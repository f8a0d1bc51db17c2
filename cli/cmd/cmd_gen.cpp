// cli/cmd/cmd_gen.cpp — `fpcert gen SPEC -o DIR`: a generated problem as .npy files plus meta.json;
// `fpcert gen --list` documents every generator and its parameters.
#include <fmt/format.h>

#include <memory>
#include <optional>
#include <nlohmann/json.hpp>

#include "base/atomic_file.hpp"
#include "base/error.hpp"
#include "base/input_file.hpp"
#include "base/npy.hpp"
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/options.hpp"
#include "generators/edges.hpp"
#include "generators/generate.hpp"
#include "oracle/round.hpp"

namespace fpcert::cli {
namespace {

nlohmann::json list_json() {
  nlohmann::json arr = nlohmann::json::array();
  for (const GeneratorInfo& g : list_generators()) {
    nlohmann::json params = nlohmann::json::array();
    for (const ParamInfo& p : g.params) {
      nlohmann::json q = {{"name", p.name}, {"type", to_string(p.type)}, {"default", p.default_value}, {"help", p.help}};
      if (p.type == ParamType::Int || p.type == ParamType::Real) q["range"] = {p.lo, p.hi};
      if (!p.choices.empty()) q["choices"] = p.choices;
      params.push_back(q);
    }
    arr.push_back({{"name", g.name}, {"dot", g.dot}, {"summary", g.summary}, {"details", g.details},
                   {"reference", g.reference}, {"params", params}});
  }
  return arr;
}

/// One operand written as its file(s); returns their descriptions for meta.json.
nlohmann::json write_operand(OutputDir& dir, const std::string& name, const Matrix& m, bool vector, const Format& src) {
  nlohmann::json files = nlohmann::json::object();
  const std::int64_t rows = vector ? static_cast<std::int64_t>(m.data.size()) : m.rows;
  const std::int64_t cols = vector ? -1 : m.cols;
  const nlohmann::json shape = vector ? nlohmann::json::array({rows}) : nlohmann::json::array({rows, cols});
  const std::string file = name + ".npy";
  if (src == f64) {
    write_npy_f64(dir.file(file), rows, cols, m.data);
    files[name] = {{"path", file}, {"dtype", "float64"}, {"shape", shape}, {"content", "values"}};
  } else if (src == f32 || src == tf32) {
    write_npy_f32(dir.file(file), rows, cols, m.data);
    files[name] = {{"path", file}, {"dtype", "float32"}, {"shape", shape}, {"content", "values"}};
  } else {  // 16- and 8-bit sources: the bit patterns, and the values widened to float32 beside them
    std::vector<std::uint16_t> bits(m.data.size());
    for (std::size_t i = 0; i < bits.size(); ++i)
      bits[i] = static_cast<std::uint16_t>(round_double(src, m.data[i], Rounder::nearest(src)).code);
    write_npy(dir.file(file), NpyType::U16, rows, cols, bits.data());
    files[name] = {{"path", file}, {"dtype", "uint16"}, {"shape", shape}, {"content", std::string(src.tag) + " bit patterns"}};
    const std::string vfile = name + "_f32.npy";
    write_npy_f32(dir.file(vfile), rows, cols, m.data);
    files[name + "_f32"] = {{"path", vfile}, {"dtype", "float32"}, {"shape", shape}, {"content", "values (exact)"}};
  }
  return files;
}

nlohmann::json meta_json(const Problem& p) {
  nlohmann::json achieved = nlohmann::json::object(), nr = nlohmann::json::object();
  for (const auto& [k, v] : p.achieved) achieved[k] = v;
  for (const auto& [k, v] : p.not_representable) nr[k] = v;
  nlohmann::json j = {{"spec", p.spec},
                      {"family", p.family},
                      {"seed", p.seed},
                      {"source", std::string(p.source->tag)},
                      {"dot", p.dot},
                      {"m", p.m},
                      {"n", p.n},
                      {"k", p.k},
                      {"achieved", achieved},
                      {"not_representable", nr},
                      {"hash", fmt::format("fnv1a64:{:016x}", problem_hash(p))},
                      {"command", command_line()}};
  if (p.family == "edges") {
    const ParsedSpec ps = parse_generator_spec(p.spec);
    nlohmann::json t = nlohmann::json::array();
    for (const EdgeValue& e : edge_table(ps.format("target"), *p.source))
      t.push_back({{"label", e.label}, {"value", e.value},
                   {"source_bits", hex_code(*p.source, round_double(*p.source, e.value, Rounder::nearest(*p.source)).code)}});
    j["edge_table"] = t;
  }
  return j;
}

/// The files gen writes into its folder: an earlier set may be replaced, nothing else.
const std::vector<std::string> kGenFiles = {"A.npy", "B.npy", "x.npy", "y.npy", "A_f32.npy", "B_f32.npy",
                                            "x_f32.npy", "y_f32.npy", "meta.json"};

int run_gen(const std::string& spec, const std::string& out, bool out_given, bool list, bool json) {
  if (list) {
    if (!spec.empty() || out_given) throw InputError("fpcert gen --list documents the generators: give it no SPEC and no -o");
    if (json) fmt::print("{}\n", list_json().dump(2));
    else fmt::print("{}", generator_list_text());
    return kExitPass;
  }
  if (json) throw InputError("fpcert gen --json prints the generator table with --list; a problem's description is printed as JSON already");
  if (spec.empty()) throw InputError("fpcert gen: give a SPEC such as normal:m=64,n=64,k=64,seed=1 (fpcert gen --list shows every generator)");
  // The folder is checked before the problem is generated; it is written as one set (base/atomic_file.hpp).
  std::optional<OutputDir> dir;
  if (out_given) dir.emplace(out, kGenFiles, "fpcert gen -o");
  check_spec_memory(spec, false, "fpcert gen");  // before anything is allocated
  const Problem p = generate(spec);
  nlohmann::json meta = meta_json(p);
  if (!dir) {  // no directory: describe the problem only
    fmt::print("{}\n", meta.dump(2));
    return kExitPass;
  }
  nlohmann::json files = nlohmann::json::object();
  files.update(write_operand(*dir, p.dot ? "x" : "A", p.a, p.dot, *p.source));
  files.update(write_operand(*dir, p.dot ? "y" : "B", p.b, p.dot, *p.source));
  meta["files"] = files;
  write_file_atomic(dir->file("meta.json"), meta.dump(2) + "\n");
  dir->commit();
  fmt::print("{}  ->  {}\n", p.spec, printable(dir->dir()));
  return kExitPass;
}

}  // namespace

void add_gen(CLI::App& root, Registry& reg) {
  auto* app = root.add_subcommand("gen", "Generate an input problem from a spec string (A.npy, B.npy or x.npy, y.npy, meta.json)");
  auto spec = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto list = std::make_shared<bool>(false);
  auto json = std::make_shared<bool>(false);
  app->add_option("spec", *spec, "family:key=value,... e.g. cancel:n=1000,kappa=1e12,seed=3");
  auto* out_opt = app->add_option("-o,--out", *out, "Directory to write the problem into as one set (created if missing; an earlier "
                                   "gen output there is replaced whole); without it, print meta.json")
                      ->check(output_dir());
  app->add_flag("--list", *list, "Document every generator, its parameters and defaults");
  app->add_flag("--json", *json, "With --list: print the generator table as JSON");
  reg.push_back({app, [=] { return run_gen(*spec, *out, out_opt->count() > 0, *list, *json); }});
}

}  // namespace fpcert::cli
