// cli/cmd/cmd_audit.cpp — `fpcert audit`: a GEMM test's acceptance rule as people write it, audited for false alarms
// and power (suites/audit/audit.hpp; docs/audit.md).
#include <fmt/format.h>

#include <functional>
#include <limits>
#include <memory>

#include "base/atomic_file.hpp"
#include "base/error.hpp"
#include "cli/commands.hpp"
#include "cli/config.hpp"
#include "cli/exit_codes.hpp"
#include "cli/options.hpp"
#include "cli/plugins.hpp"
#include "reports/audit_text.hpp"
#include "reports/html/html.hpp"
#include "suites/audit/audit.hpp"

namespace fpcert::cli {
namespace {

struct AuditArgs {
  std::string op = "gemm";  ///< --op gemm|softmax|log_softmax|layernorm|rmsnorm
  std::string kernel, traits, inputs = "uniform", rule, json, sample_rows = "auto";
  std::int64_t m = 64, n = 64, k = 64;
  std::vector<std::uint64_t> seeds = {1, 2, 3, 4, 5};
  bool no_mutants = false, batch_invariant = false;
  std::string html;
  std::string a_npy, b_npy;         ///< --a A.npy --b B.npy: the test's own tensors
  std::string a_format, b_format;   ///< --a-format/--b-format: the format of uint16 bit patterns or '|V2' arrays (bf16, f16)
  std::vector<std::string> allow;   ///< --allow tf32: arithmetic admitted as correct besides the declaration
  std::string reference = "exact";  ///< --reference exact|f32|out: the test's reference the rule compares with
  std::vector<std::string> plugins;
  std::string config;  ///< --config fpcert.toml: its [audit] section (and plugins); flags given override it
};

/// --sample-rows: auto (-1), all (0) or a count of random rows (> 0).
std::int64_t parse_sample_rows(const std::string& s) {
  if (s == "auto") return -1;
  if (s == "all") return 0;
  try {
    std::size_t used = 0;
    const long long v = std::stoll(s, &used);
    if (used == s.size() && v > 0) return v;
  } catch (const std::exception&) {
  }
  throw InputError("--sample-rows '" + s + "': expected auto, all or a positive count of random rows");
}

/// The [audit] section of --config under the flags given (`given(flag)`: the flag was on the command line).
AuditArgs with_config(AuditArgs a, const std::function<bool(const char*)>& given) {
  if (a.config.empty()) return a;
  const ProjectConfig cfg = load_project_config(a.config);
  const auto& c = cfg.audit;
  auto take = [&](const char* flag, auto& dst, const auto& src) {
    if (src && !given(flag)) dst = *src;
  };
  take("--op", a.op, c.op);
  take("--kernel", a.kernel, c.kernel);
  take("--traits", a.traits, c.traits);
  take("--inputs", a.inputs, c.inputs);
  take("--rule", a.rule, c.rule);
  take("--sample-rows", a.sample_rows, c.sample_rows);
  take("--m", a.m, c.m);
  take("--n", a.n, c.n);
  take("--k", a.k, c.k);
  take("--seeds", a.seeds, c.seeds);
  take("--reference", a.reference, c.reference);
  take("--a", a.a_npy, c.a);
  take("--b", a.b_npy, c.b);
  take("--a-format", a.a_format, c.a_format);
  take("--b-format", a.b_format, c.b_format);
  take("--allow", a.allow, c.allow);
  take("--batch-invariant", a.batch_invariant, c.batch_invariant);
  for (const auto& p : cfg.plugins) a.plugins.push_back(p);
  if (a.rule.empty()) throw InputError("audit: give --rule, or rule = \"...\" in [audit] of " + a.config);
  return a;
}

int run_audit_command(const AuditArgs& a) {
  load_plugins(a.plugins);
  AuditOptions o;
  o.op = a.op;
  o.kernel = a.kernel;
  o.traits = a.traits;
  o.m = a.m, o.n = a.n, o.k = a.k;
  // a softmax test's logits: a softmax generator spec (uniform in [-4, 4] unless --inputs says otherwise); a
  // normalisation's rows: the norm generator's defaults (uniform in [-1, 1], gamma and beta, eps 1e-5)
  const bool softmax = a.op == "softmax" || a.op == "log_softmax", norm = a.op == "layernorm" || a.op == "rmsnorm";
  o.inputs = softmax && a.inputs == "uniform" ? "softmax:spread=8" : norm && a.inputs == "uniform" ? "norm" : a.inputs;
  o.seeds = a.seeds;
  AuditTensors tensors;
  if (softmax && !a.a_npy.empty()) {  // the test's own logits: --a alone
    if (!a.b_npy.empty() || !a.b_format.empty()) throw InputError("audit --op " + a.op + ": the logits come in --a alone (--b is a GEMM's)");
    tensors = read_audit_logits(a.a_npy, a.a_format);
    o.m = tensors.m, o.n = tensors.n;
    o.tensors = &tensors;
  } else if (a.a_npy.empty() != a.b_npy.empty()) {
    throw InputError("audit: give both --a A.npy and --b B.npy (the test's own tensors), or neither");
  }
  if (a.a_npy.empty() && !(a.a_format.empty() && a.b_format.empty()))
    throw InputError("audit: --a-format/--b-format name the format of --a/--b's values; give them with the tensors");
  if (!a.a_npy.empty() && !o.tensors) {
    tensors = read_audit_tensors(a.a_npy, a.b_npy, a.a_format, a.b_format);
    o.m = tensors.m, o.n = tensors.n, o.k = tensors.k;
    o.tensors = &tensors;
  }
  o.rule = parse_audit_rule(a.rule);
  o.reference = a.reference;
  o.allow = a.allow;
  o.mutants = !a.no_mutants;
  o.batch_invariant = a.batch_invariant;
  o.sample_rows = parse_sample_rows(a.sample_rows);
  o.command = command_line();
  const AuditRecord r = run_audit(o);
  if (a.json == "-") {
    fmt::print("{}\n", audit_to_json(r).dump(2));
  } else {
    fmt::print("{}", audit_text(r));
    if (!a.json.empty()) write_file_atomic(a.json, audit_to_json(r).dump(2) + "\n");
  }
  if (!a.html.empty()) {
    ReportInput in;
    in.audits.push_back(r);
    write_html_report(a.html, in);
  }
  return audit_finds_wanting(r) ? kExitGateFailed : kExitPass;
}

}  // namespace

void add_audit(CLI::App& root, Registry& reg) {
  auto* app = root.add_subcommand("audit", "Audit a GEMM, softmax or normalisation test's acceptance rule: the correct arithmetic it fails, the wrong kernels it passes");
  auto a = std::make_shared<AuditArgs>();
  app->add_option("--op", a->op,
                  "The operation the test checks: gemm (default), softmax or log_softmax (--m rows of --n logits, or --a logits.npy), "
                  "layernorm or rmsnorm (--m rows of --n entries); --kernel a kernel of it, or --traits its declaration")
      ->check(CLI::IsMember({"gemm", "softmax", "log_softmax", "layernorm", "rmsnorm"}));
  app->add_option("--kernel", a->kernel, "A registered host kernel whose traits declare the arithmetic (fpcert kernels)");
  app->add_option("--traits", a->traits, "Or a traits spec, e.g. in=bf16,acc=f32,out=bf16 (docs/python.md lists the keys)");
  app->add_option("--m", a->m, "Rows of C")->check(integer_in(1, std::uint64_t{1} << 16));
  app->add_option("--n", a->n, "Columns of C")->check(integer_in(1, std::uint64_t{1} << 16));
  app->add_option("--k", a->k, "Inner dimension")->check(integer_in(1, std::uint64_t{1} << 20));
  app->add_option("--inputs", a->inputs, "Generator spec of the test's inputs (fpcert gen --list); m, n, k, seed are set by the audit");
  app->add_option("--a", a->a_npy, "The test's own A (m x k) as a 2-D float64/32/16, bfloat16 (ml_dtypes) or uint16-bits .npy; with --b, instead of --inputs/--seeds/--m/--n/--k (softmax: the logits, alone)");
  app->add_option("--b", a->b_npy, "The test's own B (k x n) as a 2-D .npy (float64/32/16, ml_dtypes bfloat16, uint16 bits)");
  app->add_option("--a-format", a->a_format, "Format of --a's uint16 bit patterns or '|V2' values: bf16 or f16 ('|V2' default: bf16)")
      ->check(CLI::IsMember({"bf16", "f16"}));
  app->add_option("--b-format", a->b_format, "Format of --b's uint16 bit patterns or '|V2' values: bf16 or f16")->check(CLI::IsMember({"bf16", "f16"}));
  app->add_option("--allow", a->allow, "Arithmetic to admit as correct besides the declaration: tf32 (fp32 inputs read as TF32)")
      ->delimiter(',')
      ->check(CLI::IsMember({"tf32"}));
  app->add_option("--seeds", a->seeds, "Seeds of the inputs, comma-separated (default 1,2,3,4,5)")->delimiter(',')->check(integer_in(0, std::numeric_limits<std::uint64_t>::max()));
  app->add_option("--rule", a->rule, "allclose:rtol=R,atol=A | maxabs:tol=T | relfro:tol=T | kref:k=K,p=FMT | cosine:min=C | fpcert (required unless --config gives it)");
  app->add_option("--reference", a->reference,
                  "The test's reference the rule compares with: exact (an fp64 GEMM), f32 (an fp32 GEMM, sequential FMA) or out (exact, "
                  "rounded into the output format)")
      ->check(CLI::IsMember({"exact", "f32", "out"}));
  app->add_option("--config", a->config, "fpcert.toml whose [audit] section gives the check (flags given override it)");
  app->add_option("--json", a->json, "Write the audit record as JSON to this file ('-': print it instead of the tables)");
  app->add_flag("--no-mutants", a->no_mutants, "Skip the power table");
  app->add_option("--html", a->html, "Write the audit as an HTML report section to this file (fpcert report takes the --json file too)");
  app->add_flag("--batch-invariant", a->batch_invariant,
                "Declare batch invariance: each row's bits independent of the batch size and position (exit 1 otherwise)");
  app->add_option("--sample-rows", a->sample_rows,
                  "Power table on a sample of C's rows: auto (16 random besides the structured ones from 2^24 multiply-adds), all, or N random");
  add_plugin_option(app, a->plugins);
  reg.push_back({app, [a, app] {
    const AuditArgs eff = with_config(*a, [app](const char* flag) { return app->count(flag) > 0; });
    if (!eff.a_npy.empty())
      for (const char* f : {"--inputs", "--seeds", "--m", "--n", "--k"})
        if (app->count(f) > 0) throw InputError(std::string("audit: ") + f + " does not go with --a/--b: the tensors give the inputs and their shapes give m, n, k");
    if (eff.rule.empty()) throw InputError("audit: --rule is required (or rule = \"...\" in [audit] of --config)");
    return run_audit_command(eff);
  }});
}

}  // namespace fpcert::cli
