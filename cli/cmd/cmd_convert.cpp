// cli/cmd/cmd_convert.cpp — `fpcert convert`: one value; or a conversion kernel swept over every source
// pattern through the runner (suites/ops/conversion/convert_runner.hpp) and checked against MPFR — fpcert's own model
// on the CPU, a registered kernel (--kernel, a plugin's with --plugin), a device table entry
// (--device cuda, cli/cmd/convert_device.cpp), or the whole table (--all: the conversions suite). The
// command prints and writes what it always has; the runner decides.
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>

#include "base/atomic_file.hpp"
#include "base/decimal.hpp"
#include "base/error.hpp"
#include "base/input_file.hpp"
#include "base/parallel.hpp"
#include "base/philox.hpp"
#include "cli/commands.hpp"
#include "cli/cmd/convert_args.hpp"
#include "cli/cmd/convert_print.hpp"
#include "cli/exit_codes.hpp"
#include "cli/options.hpp"
#include "cli/plugins.hpp"
#include "cli/progress.hpp"
#include "kernels/convert/model_convert.hpp"
#include "kernels/device/device_api.hpp"
#include "oracle/parse_value.hpp"
#include "oracle/ulp.hpp"
#include "reports/html/html.hpp"
#include "results/conversion.hpp"
#include "suites/ops/conversion/convert_runner.hpp"
#include "suites/run/isolate.hpp"

namespace fpcert::cli {

const Format& need_format(const std::string& name, const char* what) {

  const Format* f = find_format(name);
  if (!f) throw InputError(fmt::format("{}: unknown format '{}' (valid: {})", what, name, format_tags()));
  return *f;
}

Rounder make_rounder(const ConvertArgs& a, const Format& dst) {
  Rounder r;
  const auto rd = parse_rounding(a.rounding);
  if (!rd) throw InputError(fmt::format("--rounding: unknown mode '{}' (valid: {})", a.rounding, rounding_names()));
  r.rounding = *rd;
  r.saturation = default_saturation(dst);
  if (!a.saturate.empty()) {
    const auto s = parse_saturation(a.saturate);
    if (!s) throw InputError(fmt::format("--saturate: unknown mode '{}' (valid: {})", a.saturate, saturation_names()));
    r.saturation = *s;
  }
  if (!saturation_valid(dst, r.saturation))
    throw InputError(fmt::format("--saturate {}: not possible for {} ({}: {}); use {}", to_string(r.saturation), dst.tag,
                                 dst.name, to_string(dst.specials), to_string(default_saturation(dst))));
  const auto n = parse_nan_payload(a.nan);
  if (!n) throw InputError(fmt::format("--nan: unknown convention '{}' (valid: {})", a.nan, nan_payload_names()));
  if (const std::string why = nan_payload_problem(dst, *n); !why.empty()) throw InputError(fmt::format("--nan {}: {}", to_string(*n), why));
  r.nan = *n;
  return r;
}


ConversionCheckOptions check_options(const ConvertArgs& a) {
  const CheckPlace place = a.check == "host" ? CheckPlace::Host : a.check == "device" ? CheckPlace::Device : CheckPlace::Auto;
  return {a.strict_nan, a.mpfr_sample, a.threads, a.list, place};
}

int run_value(const ConvertArgs& a, const Format& src, const Format& dst, const Rounder& r) {
  std::uint64_t code;
  bool text_exact = true;
  if (!a.bits.empty()) {
    code = parse_bits(src, a.bits);
  } else {
    const ParsedValue pv = parse_value(src, a.value);
    code = pv.code;
    text_exact = pv.exact;
  }
  const std::uint32_t rbits = r.rounding == Rounding::Stochastic ? random_bits32(a.seed, code) : 0;
  const Rounded out = convert(src, code, dst, r, rbits);
  const Outcome oc = classify_outcome(src, code, dst, out);
  const double in_value = to_double(src, code);
  const double ulps = ulp_distance(dst, out.code, in_value);
  fmt::print("input   {}{}\n", describe_code(src, code),
             text_exact ? "" : fmt::format("   (nearest {} to '{}')", src.tag, a.value.empty() ? a.bits : a.value));
  fmt::print("result  {}\n", describe_code(dst, out.code));
  fmt::print("mode    rounding {}, saturation {}, NaN convention {}{}\n", to_string(r.rounding), to_string(r.saturation),
             to_string(r.nan), r.rounding == Rounding::Stochastic ? fmt::format(", seed {}, rbits 0x{:08x}", a.seed, rbits) : "");
  fmt::print("outcome {}{}{}{}; error {} ulp of {}\n", to_string(oc), (out.flags & kInexact) ? ", inexact" : "",
             (out.flags & kOverflow) ? ", overflow" : "", (out.flags & kUnderflow) ? ", underflow" : "",
             std::isfinite(ulps) ? fmt::format("{:.4g}", ulps) : std::string("inf"), dst.tag);
  if (!a.json.empty()) {
    nlohmann::json j = {{"command", command_line()},
                        {"from", src.tag},
                        {"to", dst.tag},
                        {"rounding", to_string(r.rounding)},
                        {"saturation", to_string(r.saturation)},
                        {"input_bits", hex_code(src, code)},
                        {"input_exact_decimal", exact_decimal(in_value)},
                        {"result_bits", hex_code(dst, out.code)},
                        {"result_exact_decimal", exact_decimal(to_double(dst, out.code))},
                        {"outcome", to_string(oc)},
                        {"inexact", (out.flags & kInexact) != 0},
                        {"overflow", (out.flags & kOverflow) != 0},
                        {"underflow", (out.flags & kUnderflow) != 0},
                        {"ulp_error", std::isfinite(ulps) ? nlohmann::json(ulps) : nlohmann::json(nullptr)}};
    write_file_atomic(a.json, j.dump(2) + "\n");
  }
  return kExitPass;
}

/// fpcert's own conversion model on the CPU, MPFR on every pattern (or a --range of them).
int run_exhaustive(const ConvertArgs& a, const Format& src, const Format& dst, const Rounder& r) {
  auto model = make_model_conversion_kernel(src, dst, r, a.seed);
  ConversionCase c;
  c.subject = "fpcert fast path";
  c.ranges = check_ranges(a.range, src);
  c.mpfr_every = 1;
  c.check = check_options(a);
  c.command = command_line();
  const std::uint64_t total = conversion_case_patterns(*model, c);
  ConversionRunOptions o;
  o.progress = terminal_progress(total);
  auto api = make_host_api();
  const CaseResult res = run_conversion_case(*model, c, *api, o);
  fmt::print("fpcert convert: {} -> {}, rounding {}, saturation {}, NaN convention {}\n", src.tag, dst.tag, to_string(r.rounding),
             to_string(r.saturation), to_string(r.nan));
  if (res.status != CaseStatus::Pass && res.status != CaseStatus::Fail) {
    fmt::print("{}: {}\n", to_string(res.status), res.reason);
    return kExitKernelFailed;
  }
  const double secs = res.wall_seconds;
  fmt::print("{} patterns, each checked against MPFR, in {:.2f} s ({:.1f} M patterns/s, {} threads)\n", total, secs,
             static_cast<double>(total) / secs / 1e6, a.threads ? a.threads : thread_count());
  const ConvertCheckResult check = check_from_json(res.conversion->record, src, dst);
  print_check_result(check, src, dst);
  if (!a.json.empty() || !a.html.empty()) {
    const nlohmann::json& j = res.conversion->record;
    if (!a.json.empty()) write_file_atomic(a.json, j.dump(2) + "\n");
    if (!a.html.empty()) write_html_report(a.html, ReportInput{{}, {*res.conversion}});
  }
  return res.status == CaseStatus::Pass ? kExitPass : kExitGateFailed;
}

namespace {

void require_same(const char* option, const std::string& given, std::string_view claimed, std::string_view parsed, const std::string& kernel) {
  if (parsed != claimed)
    throw InputError(fmt::format("{} {}: kernel '{}' claims {} (the plugin states what it implements; drop {} or match it)",
                                 option, given, kernel, claimed, option));
}

}  // namespace

/// A registered conversion kernel (a plugin's, typically) on every source pattern, in a child process
/// unless --no-isolate: a crash or hang is the case's status (exit 3), not a dead fpcert.
int run_kernel(const ConvertArgs& a) {
  auto conv = make_conversion_kernel(a.kernel);
  if (!conv) {
    std::string list;
    for (const auto& n : kernel_names(false, Operation::Conversion))
      if (find_kernel_info(n)->backend == Backend::Plugin) list += (list.empty() ? "" : ", ") + n;
    if (find_kernel_info(a.kernel))
      throw InputError(fmt::format("--kernel {}: a GEMM kernel, not a conversion (fpcert certify grades GEMM kernels)", a.kernel));
    throw InputError(fmt::format("--kernel {}: no conversion kernel of that name in the loaded plugins ({})", a.kernel,
                                 list.empty() ? "none loaded: give --plugin LIB" : "conversion kernels: " + list));
  }
  const ConversionTraits& t = conv->conversion();
  const Format& src = *t.src;
  const Format& dst = *t.dst;
  const Rounder claim = t.rounder;
  if (!a.from.empty() && find_format(a.from) != &src)
    throw InputError(fmt::format("--from {}: kernel '{}' converts from {}", a.from, a.kernel, src.tag));
  if (!a.to.empty() && find_format(a.to) != &dst) throw InputError(fmt::format("--to {}: kernel '{}' converts to {}", a.to, a.kernel, dst.tag));
  if (a.rounding_given) {
    const auto p = parse_rounding(a.rounding);
    if (!p) throw InputError(fmt::format("--rounding: unknown mode '{}' (valid: {})", a.rounding, rounding_names()));
    require_same("--rounding", a.rounding, to_string(claim.rounding), to_string(*p), a.kernel);
  }
  if (a.saturate_given) {
    const auto p = parse_saturation(a.saturate);
    if (!p) throw InputError(fmt::format("--saturate: unknown mode '{}' (valid: {})", a.saturate, saturation_names()));
    require_same("--saturate", a.saturate, to_string(claim.saturation), to_string(*p), a.kernel);
  }
  if (a.nan_given) {
    const auto n = parse_nan_payload(a.nan);
    if (!n) throw InputError(fmt::format("--nan: unknown convention '{}' (valid: {})", a.nan, nan_payload_names()));
    require_same("--nan", a.nan, to_string(claim.nan), to_string(*n), a.kernel);
  }
  const std::string& origin = find_kernel_info(a.kernel)->origin;
  ConversionCase c;
  c.subject = conv->backend() == Backend::Plugin ? fmt::format("plugin kernel {} ({})", conv->name(), origin) : conv->name();
  c.ranges = check_ranges(a.range, src);
  c.check = check_options(a);
  c.command = command_line();
  const std::uint64_t total = conversion_case_patterns(*conv, c);
  const bool device = conv->memory() == MemorySpace::Device;
  const bool isolate = !a.no_isolate;
  auto body = [&]() -> CaseResult {
    std::string why;
    std::unique_ptr<DeviceApi> api = device ? make_cuda_api(&why) : make_host_api();
    if (!api) {
      CaseResult r = conversion_skeleton(*conv, c);
      r.status = CaseStatus::NotSupported;
      r.reason = "no CUDA device: " + why;
      return r;
    }
    ConversionRunOptions o;
    o.timeout_ms = a.timeout_s * 1000;
    o.progress = terminal_progress(total);
    return run_conversion_case(*conv, c, *api, o);
  };
  CaseResult res = isolate ? run_case_isolated(body, a.timeout_s * static_cast<double>(total / (std::uint64_t{1} << 20) + 1) + 60,
                                               conversion_skeleton(*conv, c))
                           : body();
  settle_conversion_record(res);
  fmt::print("fpcert convert: {} kernel {}{}, {} -> {}, rounding {}, saturation {}, NaN convention {}, {} memory\n",
             to_string(conv->backend()), conv->name(), origin.empty() ? "" : " (" + origin + ")", src.tag, dst.tag,
             to_string(claim.rounding), to_string(claim.saturation), to_string(claim.nan), device ? "device" : "host");
  int code = kExitPass;
  if (res.status != CaseStatus::Pass && res.status != CaseStatus::Fail) {
    const char* verdict = res.status == CaseStatus::NotSupported ? "NOT SUPPORTED"
                          : res.status == CaseStatus::Hung       ? "HUNG"
                          : res.status == CaseStatus::Error      ? "ERROR"
                                                                 : "CRASHED";
    fmt::print("{}: {}\n", verdict, res.reason);
    if (res.status == CaseStatus::Crashed || res.status == CaseStatus::Hung)
      fmt::print("(the check ran {}; {})\n", isolate ? "in a child process" : "in this process",
                 isolate ? "fpcert itself is unaffected" : "--no-isolate was given");
    code = kExitKernelFailed;
  } else {
    const ConvertCheckResult check = check_from_json(res.conversion->record, src, dst);
    fmt::print("{} patterns in {:.2f} s; MPFR on {}\n", check.patterns, res.wall_seconds,
               check.patterns <= (std::uint64_t{1} << 24)
                   ? "every pattern"
                   : fmt::format("{} patterns (disagreements with fpcert's model, and every {}th code)", check.mpfr_checked, c.check.mpfr_sample));
    print_check_result(check, src, dst, claim.nan);
    code = res.status == CaseStatus::Pass ? kExitPass : kExitGateFailed;
  }
  if (!a.json.empty()) write_file_atomic(a.json, res.conversion->record.dump(2) + "\n");
  if (!a.html.empty()) {
    write_html_report(a.html, ReportInput{{}, {*res.conversion}});
    fmt::print("HTML report: {}\n", printable(a.html));
  }
  return code;
}

void add_convert(CLI::App& root, Registry& reg) {
  auto* app = root.add_subcommand("convert", "Convert one value, or check a conversion on every source pattern (on the CPU or a GPU)");
  auto a = std::make_shared<ConvertArgs>();
  app->add_option("--from", a->from, "Source format (fpcert formats lists them)");
  app->add_option("--to", a->to, "Destination format");
  app->add_option("--rounding", a->rounding, "rn, rna, rz, ru, rd or rs (stochastic)")->capture_default_str();
  app->add_option("--saturate", a->saturate, "inf, satfinite or nan (default: the destination's own)");
  app->add_option("--nan", a->nan, "NaN convention: preserve, canonical, nvidia, any, ml_dtypes (docs/formats.md)")->capture_default_str();
  app->add_option("--seed", a->seed, "Key of the stochastic-rounding bits (Philox)")->capture_default_str()->check(integer_in(0, ~std::uint64_t{0}));
  auto* value = app->add_option("--value", a->value, "One value: decimal, hex float, inf or nan");
  auto* bits = app->add_option("--bits", a->bits, "One value as a bit pattern of the source format (0x...)");
  auto* exh = app->add_flag("--exhaustive", a->exhaustive, "Every source pattern, checked against MPFR");
  auto* range = app->add_option("--range", a->range, "With --exhaustive: FIRST:COUNT source codes only")->needs(exh);
  app->add_flag("--strict-nan", a->strict_nan, "No leniency for a PRESERVE of a plugin built for ABI minor 0 or 1 (every declared convention is enforced exactly)");
  app->add_option("--json", a->json, "Write the result as JSON to this file")->check(output_path(true));
  auto* html = app->add_option("--html", a->html, "With --exhaustive or --all: write a self-contained HTML report here")->check(output_path());
  app->add_option("--threads", a->threads, "Worker threads (default: all cores, or $FPCERT_THREADS)")->check(integer_in(1, 4096));
  app->add_option("--list", a->list, "Mismatches listed with their bits")->capture_default_str()->check(integer_in(0, 1 << 30));
  app->add_option("--device", a->device, "cpu (fpcert's fast path, MPFR on every pattern) or cuda (a GPU conversion, checked on the CPU)")
      ->capture_default_str();
  app->add_option("--intrinsic", a->intrinsic, "With --device cuda: the table entry to check, or 'list' for the table");
  auto* all = app->add_flag("--all", a->all, "With --device cuda: every table entry the device supports (the conversions suite)");
  app->add_flag("--sample", a->sample, "With --device cuda: fp32 sources on a strided 2^24 sample instead of all 2^32");
  app->add_option("--scale", a->scale, "With --device cuda, --from bf16 --to f16: 'pow2', the scaled round trip");
  app->add_option("--mpfr-sample", a->mpfr_sample, "With --device cuda: MPFR also on codes divisible by N (0: only on disagreements)")
      ->capture_default_str()
      ->check(integer_in(0, ~std::uint64_t{0}));
  app->add_option("--check", a->check,
                  "With --device cuda: where results are compared with fpcert's model: auto (on the device when it can, "
                  "else the host), device, or host (results copied back, checked on the CPU)")
      ->check(CLI::IsMember({"auto", "device", "host"}))
      ->capture_default_str();
  add_scale_options(app, a->scale_out);
  app->add_flag("--include-test-entries", a->include_test, "With --all or --intrinsic list: also the deliberately wrong test entries");
  value->excludes(bits)->excludes(exh);
  bits->excludes(exh);
  html->excludes(value)->excludes(bits);  // one value has no report
  // A registered conversion kernel, a plugin's after --plugin LIB: --kernel NAME --exhaustive.
  add_plugin_option(app, a->plugins);
  app->add_option("--kernel", a->kernel, "A conversion kernel (fpcert kernels lists them; a --plugin library's) checked with --exhaustive");
  app->add_flag("--no-isolate", a->no_isolate, "With --kernel: run the check in this process, not a child");
  app->add_option("--timeout", a->timeout_s, "With --kernel: seconds per 2^20 patterns before the kernel counts as hung")
      ->capture_default_str()
      ->check(seconds());
  all->excludes(value)->excludes(bits)->excludes(range);  // --all sweeps every entry whole
  reg.push_back({app, [a, app] {
                   check_command_outputs({{"--json", a->json}, {"--html", a->html}});  // before any work
                   load_plugins(a->plugins, a->timeout_s);
                   a->rounding_given = app->count("--rounding") > 0;
                   a->saturate_given = app->count("--saturate") > 0;
                   a->nan_given = app->count("--nan") > 0;
                   if (!a->all && (!a->scale_out.shard.empty() || !a->scale_out.devices.empty() || a->scale_out.mpi))
                     throw InputError("--shard, --devices and --mpi split the entries of --all (one conversion's sweep runs in "
                                      "one process; docs/scale.md)");
                   if (!a->kernel.empty()) {
                     if (!a->value.empty() || !a->bits.empty())
                       throw InputError("convert --kernel: checks a plugin kernel with --exhaustive [--range FIRST:COUNT]; --value/--bits are for fpcert's own conversion");
                     if (!a->exhaustive) throw InputError("convert --kernel: give --exhaustive (optionally --range FIRST:COUNT)");
                     if (a->device != "cpu" || a->all || !a->intrinsic.empty() || !a->scale.empty() || a->sample)
                       throw InputError("convert --kernel: the plugin states its memory space; --device, --all, --intrinsic, --scale and --sample are for fpcert's device table");
                     return run_kernel(*a);
                   }
                   if (!a->plugins.empty()) throw InputError("convert --plugin: name the plugin's conversion kernel with --kernel NAME");
                   if (a->device != "cpu" && a->device != "cuda")
                     throw InputError("--device: expected 'cpu' or 'cuda', got '" + a->device + "'");
                   if (a->intrinsic == "list") return run_list(*a);
                   if (a->all) {
                     if (a->device != "cuda") throw InputError("--all sweeps the device table: add --device cuda");
                     return run_all(*a);
                   }
                   if (a->device == "cuda") {
                     if (!a->exhaustive) throw InputError("--device cuda checks a conversion on every source pattern: add --exhaustive");
                     return run_device(*a);
                   }
                   if (!a->intrinsic.empty() || !a->scale.empty() || a->sample)
                     throw InputError("--intrinsic, --scale and --sample need --device cuda");
                   if (a->from.empty() || a->to.empty()) throw InputError("convert: give --from and --to (or --plugin LIB --kernel NAME)");
                   const Format& src = need_format(a->from, "--from");
                   const Format& dst = need_format(a->to, "--to");
                   const Rounder r = make_rounder(*a, dst);
                   if (a->exhaustive) return run_exhaustive(*a, src, dst, r);
                   if (a->value.empty() && a->bits.empty())
                     throw InputError("convert: give --value X, --bits 0x... or --exhaustive");
                   return run_value(*a, src, dst, r);
                 }});
}

}  // namespace fpcert::cli
