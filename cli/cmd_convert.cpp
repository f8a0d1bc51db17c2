// cli/cmd_convert.cpp — `fpcert convert`: one value, or every source pattern checked against MPFR.
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/convert_plugin.hpp"
#include "cli/plugins.hpp"
#include "oracle/convert_check.hpp"
#include "oracle/decimal.hpp"
#include "oracle/error.hpp"
#include "oracle/parallel.hpp"
#include "oracle/philox.hpp"
#include "oracle/ulp.hpp"
#include "oracle/atomic_file.hpp"

namespace fpcert::cli {
namespace {

struct ConvertArgs {
  std::string from, to, rounding = "rn", saturate, nan = "preserve", value, bits, json, range;
  bool exhaustive = false, strict_nan = false;
  std::uint64_t seed = 0;
  unsigned threads = 0;
  std::size_t list = 20;
};

const Format& need_format(const std::string& name, const char* what) {
  const Format* f = find_format(name);
  if (!f) throw InputError(fmt::format("{}: unknown format '{}' (valid: {})", what, name, format_tags()));
  return *f;
}

std::string describe(const Format& f, std::uint64_t code) {
  return fmt::format("{} {} = {}", f.tag, hex_code(f, code), exact_decimal(to_double(f, code)));
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
  if (a.nan == "preserve") r.nan = NanPayload::Preserve;
  else if (a.nan == "canonical") r.nan = NanPayload::Canonical;
  else throw InputError("--nan: expected 'preserve' or 'canonical', got '" + a.nan + "'");
  return r;
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
  fmt::print("input   {}{}\n", describe(src, code),
             text_exact ? "" : fmt::format("   (nearest {} to '{}')", src.tag, a.value.empty() ? a.bits : a.value));
  fmt::print("result  {}\n", describe(dst, out.code));
  fmt::print("mode    rounding {}, saturation {}, NaN payload {}{}\n", to_string(r.rounding), to_string(r.saturation),
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

void parse_range(const std::string& text, ConvertCheckSpec& spec) {
  const auto colon = text.find(':');
  if (colon == std::string::npos) throw InputError("--range: expected FIRST:COUNT, e.g. 0x7f800000:1024");
  try {
    std::size_t p1 = 0, p2 = 0;
    spec.first = std::stoull(text.substr(0, colon), &p1, 0);
    spec.count = std::stoull(text.substr(colon + 1), &p2, 0);
    if (p1 != colon || p2 != text.size() - colon - 1) throw std::invalid_argument("trailing");
  } catch (const std::exception&) {
    throw InputError("--range: expected FIRST:COUNT as integers, got '" + text + "'");
  }
  const std::uint64_t all = spec.src->code_count();
  if (spec.count == 0 || (all && (spec.first >= all || spec.count > all - spec.first)))
    throw InputError(fmt::format("--range: {} lies outside the {} codes of {}", text, all, spec.src->tag));
}

int run_exhaustive(const ConvertArgs& a, const Format& src, const Format& dst, const Rounder& r) {
  ConvertCheckSpec spec;
  spec.src = &src;
  spec.dst = &dst;
  spec.rounder = r;
  spec.seed = a.seed;
  spec.mpfr_every = true;
  spec.strict_nan = a.strict_nan;
  spec.threads = a.threads;
  spec.max_listed = a.list;
  if (!a.range.empty()) parse_range(a.range, spec);
  else if (src.total_bits() > 32)
    throw InputError(fmt::format("--exhaustive: {} has 2^{} patterns; give --range FIRST:COUNT", src.tag, src.total_bits()));
  const std::uint64_t total = check_pattern_count(spec);
  const bool tty = ::isatty(2);
  auto last = std::chrono::steady_clock::now();
  const auto t0 = last;
  auto progress = [&](double frac) {
    if (!tty) return;
    const auto now = std::chrono::steady_clock::now();
    if (now - last < std::chrono::milliseconds(500) && frac < 1.0) return;
    last = now;
    const double s = std::chrono::duration<double>(now - t0).count();
    std::fprintf(stderr, "\r  %5.1f%%  %.0f s elapsed, ~%.0f s left   ", 100 * frac, s, frac > 0 ? s / frac - s : 0.0);
    if (frac >= 1.0) std::fprintf(stderr, "\n");
  };
  const ConvertCheckResult res = check_conversion(spec, progress);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  fmt::print("fpcert convert: {} -> {}, rounding {}, saturation {}, NaN payload {}\n", src.tag, dst.tag,
             to_string(r.rounding), to_string(r.saturation), to_string(r.nan));
  fmt::print("{} patterns, each checked against MPFR, in {:.2f} s ({:.1f} M patterns/s, {} threads)\n", total, secs,
             static_cast<double>(total) / secs / 1e6, spec.threads ? spec.threads : thread_count());
  fmt::print("outcome counts:\n");
  for (int i = 0; i < kOutcomeCount; ++i)
    if (res.outcomes[i]) fmt::print("  {:<18} {:>12}\n", to_string(static_cast<Outcome>(i)), res.outcomes[i]);
  if (res.nan_differences) fmt::print("NaN vs NaN with other bits (not a mismatch; --strict-nan counts them): {}\n", res.nan_differences);
  for (const auto& m : res.listed) {
    fmt::print("  {} {}  expected {}  got {}  [{}]\n", m.model_bug ? "MODEL!=MPFR" : "MISMATCH", describe(src, m.src),
               describe(dst, m.expected), describe(dst, m.got), to_string(m.outcome));
  }
  fmt::print("mismatches: {}{}\n", res.mismatches + res.model_mismatches,
             res.model_mismatches ? fmt::format(" ({} where fpcert's fast model disagrees with MPFR: a bug in fpcert)", res.model_mismatches) : "");
  fmt::print("{}\n", res.passed() ? "PASS" : "FAIL");
  if (!a.json.empty()) {
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
    nlohmann::json j = {{"kind", "conversion"},
                        {"command", command_line()},
                        {"device", "cpu"},
                        {"subject", "fpcert fast path"},
                        {"from", src.tag},
                        {"to", dst.tag},
                        {"rounding", to_string(r.rounding)},
                        {"saturation", to_string(r.saturation)},
                        {"nan_payload", to_string(r.nan)},
                        {"seed", a.seed},
                        {"first", spec.first},
                        {"patterns", res.patterns},
                        {"mpfr_checked", res.mpfr_checked},
                        {"outcomes", outcomes},
                        {"mismatches", res.mismatches},
                        {"model_mismatches", res.model_mismatches},
                        {"nan_differences", res.nan_differences},
                        {"listed", listed},
                        {"seconds", secs},
                        {"passed", res.passed()}};
    write_file_atomic(a.json, j.dump(2) + "\n");
  }
  return res.passed() ? kExitPass : kExitGateFailed;
}

}  // namespace

namespace {
void add_convert(CLI::App& root, Registry& reg) {
  auto* app = root.add_subcommand("convert", "Convert one value, or check a conversion on every source pattern");
  auto a = std::make_shared<ConvertArgs>();
  app->add_option("--from", a->from, "Source format (fpcert formats lists them)");
  app->add_option("--to", a->to, "Destination format");
  app->add_option("--rounding", a->rounding, "rn, rna, rz, ru, rd or rs (stochastic)")->capture_default_str();
  app->add_option("--saturate", a->saturate, "inf, satfinite or nan (default: the destination's own)");
  app->add_option("--nan", a->nan, "NaN payloads: preserve (quiet, top bits kept) or canonical")->capture_default_str();
  app->add_option("--seed", a->seed, "Key of the stochastic-rounding bits (Philox)")->capture_default_str();
  auto* value = app->add_option("--value", a->value, "One value: decimal, hex float, inf or nan");
  auto* bits = app->add_option("--bits", a->bits, "One value as a bit pattern of the source format (0x...)");
  auto* exh = app->add_flag("--exhaustive", a->exhaustive, "Every source pattern through the fast path, checked against MPFR");
  app->add_option("--range", a->range, "With --exhaustive: FIRST:COUNT source codes only");
  app->add_flag("--strict-nan", a->strict_nan, "Count NaN results with other payload or sign bits as mismatches");
  app->add_option("--json", a->json, "Write the result as JSON to this file");
  app->add_option("--threads", a->threads, "Worker threads (default: all cores, or $FPCERT_THREADS)");
  app->add_option("--list", a->list, "Mismatches listed with their bits")->capture_default_str();
  value->excludes(bits)->excludes(exh);
  bits->excludes(exh);
  // A plugin's conversion kernel (cli/convert_plugin.cpp): --plugin LIB --kernel NAME --exhaustive.
  auto pl = std::make_shared<std::vector<std::string>>();
  auto kernel = std::make_shared<std::string>();
  auto no_isolate = std::make_shared<bool>(false);
  auto timeout = std::make_shared<double>(3600);
  add_plugin_option(app, *pl);
  app->add_option("--kernel", *kernel, "A conversion kernel of a --plugin library (checked with --exhaustive)");
  app->add_flag("--no-isolate", *no_isolate, "With --kernel: run the check in this process, not a child");
  app->add_option("--timeout", *timeout, "With --kernel: seconds per 2^20 patterns before the kernel counts as hung")->capture_default_str();
  reg.push_back({app, [a, app, pl, kernel, no_isolate, timeout] {
                   load_plugins(*pl);
                   if (!kernel->empty()) {
                     if (!a->value.empty() || !a->bits.empty())
                       throw InputError("convert --kernel: checks a plugin kernel with --exhaustive [--range FIRST:COUNT]; --value/--bits are for fpcert's own conversion");
                     if (!a->exhaustive) throw InputError("convert --kernel: give --exhaustive (optionally --range FIRST:COUNT)");
                     PluginConvertRequest r;
                     r.kernel = *kernel;
                     r.from = a->from;
                     r.to = a->to;
                     if (app->count("--rounding")) r.rounding = a->rounding;
                     if (app->count("--saturate")) r.saturate = a->saturate;
                     if (app->count("--nan")) r.nan = a->nan;
                     r.range = a->range;
                     r.json = a->json;
                     r.strict_nan = a->strict_nan;
                     r.isolate = !*no_isolate;
                     r.timeout_s = *timeout;
                     r.threads = a->threads;
                     r.list = a->list;
                     return run_plugin_conversion(r);
                   }
                   if (!pl->empty()) throw InputError("convert --plugin: name the plugin's conversion kernel with --kernel NAME");
                   if (a->from.empty() || a->to.empty()) throw InputError("convert: give --from FORMAT and --to FORMAT (or --plugin LIB --kernel NAME)");
                   const Format& src = need_format(a->from, "--from");
                   const Format& dst = need_format(a->to, "--to");
                   const Rounder r = make_rounder(*a, dst);
                   if (a->exhaustive) return run_exhaustive(*a, src, dst, r);
                   if (a->value.empty() && a->bits.empty())
                     throw InputError("convert: give --value X, --bits 0x... or --exhaustive");
                   return run_value(*a, src, dst, r);
                 }});
}

const Registrar kRegistrar("convert", 30, add_convert);
}  // namespace

}  // namespace fpcert::cli
