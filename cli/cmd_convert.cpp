// cli/cmd_convert.cpp — `fpcert convert`: one value, or every source pattern checked against MPFR;
// with --device cuda, every source pattern converted on the GPU by one entry of the device table
// (kernels/convert/device_convert.hpp) and checked on the CPU; --all sweeps the whole table (the
// `conversions` suite, docs/conversions.md).
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <tuple>

#include "base/atomic_file.hpp"
#include "base/decimal.hpp"
#include "base/error.hpp"
#include "base/parallel.hpp"
#include "base/philox.hpp"
#include "cli/commands.hpp"
#include "cli/convert_plugin.hpp"
#include "cli/convert_report.hpp"
#include "cli/exit_codes.hpp"
#include "cli/options.hpp"
#include "cli/plugins.hpp"
#include "cli/progress.hpp"
#include "kernels/convert/convert_check_device.hpp"
#include "kernels/convert/device_convert.hpp"
#include "kernels/device/device_api.hpp"
#include "kernels/kernel.hpp"
#include "oracle/convert_check.hpp"
#include "oracle/parse_value.hpp"
#include "oracle/ulp.hpp"
#include "reports/html.hpp"
#include "results/results_json.hpp"
#include "suites/environment.hpp"

namespace fpcert::cli {
namespace {

struct ConvertArgs {
  std::string from, to, rounding = "rn", saturate, nan = "preserve", value, bits, json, range, html;
  bool exhaustive = false, strict_nan = false;
  std::uint64_t seed = 0;
  unsigned threads = 0;
  std::size_t list = 20;
  // --device cuda
  std::string device = "cpu", intrinsic, scale;
  bool all = false, sample = false, include_test = false;
  std::uint64_t mpfr_sample = 4099;
  std::string check = "auto";  ///< where the comparison runs: auto (device when it can), device, host
};

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
  fmt::print("input   {}{}\n", describe_code(src, code),
             text_exact ? "" : fmt::format("   (nearest {} to '{}')", src.tag, a.value.empty() ? a.bits : a.value));
  fmt::print("result  {}\n", describe_code(dst, out.code));
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

/// FIRST:COUNT within a code space of `all` codes (0: 2^64).
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
  set_check_range(a.range, spec);
  const std::uint64_t total = check_pattern_count(spec);
  const auto t0 = std::chrono::steady_clock::now();
  const ConvertCheckResult res = check_conversion(spec, terminal_progress(total));
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  fmt::print("fpcert convert: {} -> {}, rounding {}, saturation {}, NaN payload {}\n", src.tag, dst.tag,
             to_string(r.rounding), to_string(r.saturation), to_string(r.nan));
  fmt::print("{} patterns, each checked against MPFR, in {:.2f} s ({:.1f} M patterns/s, {} threads)\n", total, secs,
             static_cast<double>(total) / secs / 1e6, spec.threads ? spec.threads : thread_count());
  print_check_result(res, src, dst);
  if (!a.json.empty() || !a.html.empty()) {
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
                        {"seconds", secs}};
    add_check_json(j, res, src, dst);
    if (!a.json.empty()) write_file_atomic(a.json, j.dump(2) + "\n");
    if (!a.html.empty()) write_html_report(a.html, ReportInput{{}, {conversion_from_json(j)}});
  }
  return res.passed() ? kExitPass : kExitGateFailed;
}

// ---- --device cuda: the device table, one entry or all of them ----

std::string code_text(const Format& f, std::uint64_t code) {
  return fmt::format("{} ({})", hex_code(f, code), exact_decimal(to_double(f, code)));
}

std::string rounder_text(const Rounder& r) {
  return fmt::format("rounding {}, saturation {}", to_string(r.rounding), to_string(r.saturation));
}

std::string nan_statement_text(const DeviceConversion& e, const NanStatement& st) {
  std::string rule(to_string(st.rule));
  if (st.rule == NanRule::Canonical) rule += " " + hex_code(*e.dst, st.code);
  if (st.rule == NanRule::NotApplicable || st.rule == NanRule::Unstated) return rule + " (" + std::string(st.basis) + ")";
  return rule + (st.decisive ? " (enforced: " : " (expected, not enforced: ") + std::string(st.basis) + ")";
}

nlohmann::json nan_statement_json(const DeviceConversion& e, const NanStatement& st) {
  return {{"rule", to_string(st.rule)},
          {"code", st.rule == NanRule::Canonical ? nlohmann::json(hex_code(*e.dst, st.code)) : nlohmann::json(nullptr)},
          {"decisive", st.decisive},
          {"basis", st.basis}};
}

/// A source "code" of the entry as text: the scaled round trip's pseudo codes are (s, x) pairs.
std::string src_text(const DeviceConversion& e, std::uint64_t code) {
  if (e.kind == ConversionKind::ScaledRoundTrip)
    return fmt::format("s={} x={}", static_cast<int>(code >> 16) - 126, code_text(bf16, code & 0xFFFF));
  return code_text(*e.src, code);
}

nlohmann::json entry_json(const DeviceConversion& e) {
  return {{"name", e.name},
          {"call", e.call},
          {"from", e.src->tag},
          {"to", e.dst->tag},
          {"pair", e.pair},
          {"kind", e.kind == ConversionKind::ScaledRoundTrip ? "scaled_round_trip" : "convert"},
          {"rounding", to_string(e.rounder.rounding)},
          {"saturation", to_string(e.rounder.saturation)},
          {"nan_payload", to_string(e.rounder.nan)},
          {"min_arch", e.min_arch},
          {"hardware_from", to_string(e.hw)},
          {"hardware_arch", e.hw_arch},
          {"instruction", e.hw_instr},
          {"nan_policy_hardware", nan_statement_json(e, e.nan_hw)},
          {"nan_policy_software", nan_statement_json(e, e.nan_sw)},
          {"test_only", e.test_only},
          {"note", e.note}};
}

nlohmann::json result_json(const DeviceSweepResult& r, const SweepOptions& opt) {
  const DeviceConversion& e = *r.entry;
  nlohmann::json j = entry_json(e);
  j["status"] = r.passed() ? "passed" : "failed";
  j["device"] = r.device;
  j["running_arch"] = r.arch.arch;
  j["path"] = r.hardware ? "hardware" : "software";
  j["path_detail"] = r.path;
  j["nan_policy"] = nan_statement_json(e, nan_statement(e, r.hardware));
  j["patterns"] = r.patterns;
  j["exhaustive"] = r.exhaustive;
  nlohmann::json ranges = nlohmann::json::array();
  for (const auto& [first, count] : opt.ranges) ranges.push_back({first, count});
  j["ranges"] = ranges;
  j["mpfr_sample"] = opt.mpfr_sample;
  j["strict_nan"] = opt.strict_nan;
  j["mpfr_checked"] = r.check.mpfr_checked;
  nlohmann::json outcomes = nlohmann::json::object();
  for (int i = 0; i < kOutcomeCount; ++i) outcomes[std::string(to_string(static_cast<Outcome>(i)))] = r.check.outcomes[i];
  j["outcomes"] = outcomes;
  j["mismatches"] = r.check.mismatches;
  j["model_mismatches"] = r.check.model_mismatches;
  j["nan_differences"] = r.check.nan_differences;
  j["nan_other_differences"] = r.nan_other_differences;
  nlohmann::json nan_out = nlohmann::json::object();
  for (const auto& [code, n] : r.nan.outputs) nan_out[hex_code(*e.dst, code)] = n;
  nlohmann::json nan_listed = nlohmann::json::array();
  for (const auto& l : r.nan.listed)
    nan_listed.push_back({{"src_bits", hex_code(*e.src, l.src)}, {"stated_bits", hex_code(*e.dst, l.stated)}, {"got_bits", hex_code(*e.dst, l.got)}});
  j["nan"] = {{"inputs", r.nan.inputs},
              {"as_stated", r.nan.as_stated},
              {"not_as_stated", r.nan.not_as_stated},
              {"differ_from_fpcert", r.nan.differ_from_fpcert},
              {"outputs", nan_out},
              {"outputs_other", r.nan.outputs_other},
              {"listed", nan_listed}};
  j["lane_mismatches"] = r.lane_mismatches;
  nlohmann::json lanes = nlohmann::json::array();
  for (const auto& l : r.lanes)
    lanes.push_back({{"src_bits", hex_code(*e.src, l.src)}, {"low_lane_bits", hex_code(*e.dst, l.lo)}, {"high_lane_bits", hex_code(*e.dst, l.hi)}});
  j["lanes"] = lanes;
  j["stray_bits"] = r.stray;
  nlohmann::json strays = nlohmann::json::array();
  for (const auto& s : r.strays) strays.push_back({{"src_bits", hex_code(*e.src, s.src)}, {"raw", fmt::format("0x{:08x}", s.raw)}});
  j["strays"] = strays;
  nlohmann::json listed = nlohmann::json::array();
  const Format& lf = e.kind == ConversionKind::ScaledRoundTrip ? f16 : *e.dst;  // the checked half's destination
  for (const auto& m : r.check.listed)
    listed.push_back({{"src_bits", e.kind == ConversionKind::ScaledRoundTrip ? fmt::format("0x{:06x}", m.src) : hex_code(*e.src, m.src)},
                      {"src", src_text(e, m.src)},
                      {"expected_bits", hex_code(lf, m.expected)},
                      {"expected_value", exact_decimal(to_double(lf, m.expected))},
                      {"got_bits", hex_code(lf, m.got)},
                      {"got_value", exact_decimal(to_double(lf, m.got))},
                      {"outcome", to_string(m.outcome)},
                      {"model_bug", m.model_bug}});
  j["listed"] = listed;
  if (e.kind == ConversionKind::ScaledRoundTrip) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& row : r.scaled.rows)
      rows.push_back({{"s", row.s},
                      {"window_lo", row.window_lo},
                      {"window_hi", row.window_hi},
                      {"window_patterns", row.window_patterns},
                      {"window_exact", row.window_exact},
                      {"outside_patterns", row.outside_patterns},
                      {"outside_exact", row.outside_exact}});
    nlohmann::json sl = nlohmann::json::array();
    for (const auto& m : r.scaled.listed)
      sl.push_back({{"src", src_text(e, m.src)}, {"expected_bits", hex_code(bf16, m.expected)}, {"got_bits", hex_code(bf16, m.got)}});
    j["scaled"] = {{"rows", rows},
                   {"window_failures", r.scaled.window_failures},
                   {"roundtrip_mismatches", r.scaled.roundtrip_mismatches},
                   {"roundtrip_nan_differences", r.scaled.roundtrip_nan_differences},
                   {"model_window_errors", r.scaled.model_window_errors},
                   {"listed", sl}};
  }
  const double wall = r.timing.wall_s;
  j["timing"] = {{"wall_s", wall},
                 {"gpu_s", r.timing.gpu_s},
                 {"transfer_s", r.timing.transfer_s},
                 {"check_s", r.timing.check_s},
                 {"wait_s", r.timing.wait_s},
                 {"threads", r.timing.threads},
                 {"patterns_per_s", wall > 0 ? static_cast<double>(r.patterns) / wall : 0.0}};
  j["timing"]["checked_on"] = r.checked_on;
  j["timing"]["host_fallback_chunks"] = r.host_fallback_chunks;
  j["seconds"] = wall;
  j["failures"] = r.failures;
  j["passed"] = r.passed();
  return j;
}

void print_result(const DeviceSweepResult& r, const SweepOptions& opt) {
  const DeviceConversion& e = *r.entry;
  const Format& lf = e.kind == ConversionKind::ScaledRoundTrip ? f16 : *e.dst;
  fmt::print("fpcert convert: {} -> {} on {} (cc {}.{}, running code for __CUDA_ARCH__ {}), intrinsic {}: {}\n", e.src->tag,
             e.dst->tag, r.device, r.arch.cc_major, r.arch.cc_minor, r.arch.arch, e.name, e.call);
  fmt::print("path: {}; must equal fpcert's {}{}\n", r.path, rounder_text(e.rounder), e.pair ? "; x2 form: both lanes checked" : "");
  fmt::print("NaN policy: {}\n", nan_statement_text(e, nan_statement(e, r.hardware)));
  const double wall = r.timing.wall_s;
  fmt::print("{} patterns ({}), MPFR on {} of them, {} threads: {:.3f} s, {:.1f} M patterns/s\n", r.patterns,
             r.exhaustive ? "every source code" : fmt::format("{} ranges", opt.ranges.size()), r.check.mpfr_checked,
             r.timing.threads, wall, wall > 0 ? static_cast<double>(r.patterns) / wall / 1e6 : 0.0);
  if (r.checked_on == "device")
    fmt::print("checked on the device (convert and compare in one pass){}; time: GPU kernels {:.3f} s, copies {:.3f} s, host part "
               "(MPFR on differences and the sample, NaN inputs) {:.3f} s, host waiting for the device {:.3f} s\n",
               r.host_fallback_chunks ? fmt::format(", {} chunks with long difference lists re-checked on the host", r.host_fallback_chunks) : "",
               r.timing.gpu_s, r.timing.transfer_s, r.timing.check_s, r.timing.wait_s);
  else
    fmt::print("time: GPU kernels {:.3f} s, device-to-host copies {:.3f} s, CPU check {:.3f} s, CPU waiting for the device {:.3f} s "
             "(kernels and copies overlap the check)\n",
             r.timing.gpu_s, r.timing.transfer_s, r.timing.check_s, r.timing.wait_s);
  fmt::print("outcome counts:\n");
  for (int i = 0; i < kOutcomeCount; ++i)
    if (r.check.outcomes[i]) fmt::print("  {:<18} {:>12}\n", to_string(static_cast<Outcome>(i)), r.check.outcomes[i]);
  if (r.nan.inputs) {
    std::string outs;
    for (const auto& [code, n] : r.nan.outputs) outs += fmt::format(" {} x{}", hex_code(*e.dst, code), n);
    if (r.nan.outputs_other) outs += fmt::format(" (+{} more)", r.nan.outputs_other);
    fmt::print("NaN inputs: {}; NaN results:{}; as stated {}, not as stated {}, other than fpcert's {} {}\n", r.nan.inputs, outs,
               r.nan.as_stated, r.nan.not_as_stated, to_string(e.rounder.nan), r.nan.differ_from_fpcert);
    for (const auto& l : r.nan.listed)
      fmt::print("  NAN {}  stated {}  got {}\n", src_text(e, l.src), hex_code(*e.dst, l.stated), hex_code(*e.dst, l.got));
  }
  if (r.check.nan_differences)
    fmt::print("NaN vs NaN with other bits (not a mismatch; --strict-nan counts them): {}\n", r.check.nan_differences);
  for (const auto& m : r.check.listed)
    fmt::print("  {} {}  expected {}  got {}  [{}]\n", m.model_bug ? "MODEL!=MPFR" : "MISMATCH", src_text(e, m.src),
               code_text(lf, m.expected), code_text(lf, m.got), to_string(m.outcome));
  for (const auto& l : r.lanes)
    fmt::print("  LANES {}  low lane {}  high lane {}\n", src_text(e, l.src), hex_code(*e.dst, l.lo), hex_code(*e.dst, l.hi));
  for (const auto& s : r.strays) fmt::print("  STRAY {}  raw result 0x{:08x}\n", src_text(e, s.src), s.raw);
  if (e.kind == ConversionKind::ScaledRoundTrip) {
    std::uint64_t in = 0, exact = 0, out = 0, out_exact = 0;
    for (const auto& row : r.scaled.rows) {
      in += row.window_patterns;
      exact += row.window_exact;
      out += row.outside_patterns;
      out_exact += row.outside_exact;
    }
    if (!r.scaled.rows.empty())
      fmt::print("window: for scale 2^s the bf16 binades [max(-17 - s, -133), min(15 - s, 127)] (fp16-normal part: "
                 "[-14 - s, 15 - s]), s from {} to {}\n",
                 r.scaled.rows.front().s, r.scaled.rows.back().s);
    fmt::print("round trip: {} of {} finite bf16 in the window came back exactly; outside it {} of {}\n", exact, in, out_exact, out);
    for (const auto& m : r.scaled.listed)
      fmt::print("  ROUNDTRIP {}  expected {}  got {}\n", src_text(e, m.src), code_text(bf16, m.expected), code_text(bf16, m.got));
  }
  fmt::print("lane differences: {}, stray container bits: {}, unexplained NaN differences: {}\n", r.lane_mismatches, r.stray,
             r.nan_other_differences);
  fmt::print("mismatches: {}{}\n", r.check.mismatches + r.check.model_mismatches,
             r.check.model_mismatches ? fmt::format(" ({} where fpcert's fast model disagrees with MPFR: a bug in fpcert)", r.check.model_mismatches)
                                      : "");
  for (const auto& f : r.failures) fmt::print("  FAIL: {}\n", f);
  fmt::print("{}\n", r.passed() ? "PASS" : "FAIL");
}

std::unique_ptr<ConversionProducer> need_producer(std::uint64_t max_chunk = std::uint64_t{1} << 26) {
  std::string why;
  auto p = make_cuda_conversion_producer(&why, max_chunk);
  if (!p) throw DeviceError("--device cuda: no CUDA device to run on (" + why + ")");
  return p;
}

/// The device check unless --check host; --check device requires it, auto falls back to the host check.
std::unique_ptr<DeviceChecker> maybe_checker(const ConvertArgs& a) {
  if (a.check == "host") return nullptr;
  if (a.check != "auto" && a.check != "device") throw InputError("--check: expected auto, device or host, got '" + a.check + "'");
  std::string why;
  auto c = make_cuda_device_checker(&why);
  if (!c && a.check == "device") throw DeviceError("--check device: no device check (" + why + ")");
  return c;
}

SweepOptions sweep_options(const ConvertArgs& a, const DeviceConversion& e) {
  SweepOptions o;
  o.strict_nan = a.strict_nan;
  o.mpfr_sample = a.mpfr_sample;
  o.threads = a.threads;
  o.max_listed = a.list;
  if (!a.range.empty()) {
    o.ranges.push_back(parse_first_count(a.range, entry_code_count(e),
                                         e.kind == ConversionKind::ScaledRoundTrip ? "(scale, bf16) pairs" : e.src->tag));
  } else if (a.sample && e.kind == ConversionKind::Convert) {
    o.ranges = strided_sample_ranges(*e.src);
    if (o.ranges.size() == 1 && o.ranges[0].second == e.src->code_count()) o.ranges.clear();  // small formats: all of them
  }
  return o;
}

/// The entry --intrinsic names, or the table's entry for (from, to, rounding, saturation).
const DeviceConversion& pick_entry(const ConvertArgs& a) {
  if (!a.intrinsic.empty()) {
    const DeviceConversion* e = find_device_conversion(a.intrinsic);
    if (!e) throw InputError("--intrinsic: no device conversion '" + a.intrinsic + "' (--intrinsic list shows the table)");
    if (!a.from.empty() && need_format(a.from, "--from") != *e->src)
      throw InputError(fmt::format("--intrinsic {} converts from {}, not {}", e->name, e->src->tag, a.from));
    if (!a.to.empty() && need_format(a.to, "--to") != *e->dst)
      throw InputError(fmt::format("--intrinsic {} converts to {}, not {}", e->name, e->dst->tag, a.to));
    return *e;
  }
  if (a.from.empty() || a.to.empty()) throw InputError("convert: give --from and --to (or --intrinsic NAME)");
  const Format& src = need_format(a.from, "--from");
  const Format& dst = need_format(a.to, "--to");
  if (!a.scale.empty()) {
    if (a.scale != "pow2") throw InputError("--scale: expected 'pow2', got '" + a.scale + "'");
    if (src != bf16 || dst != f16) throw InputError("--scale pow2 is the bf16 -> fp16 -> bf16 round trip: use --from bf16 --to f16");
    return *find_device_conversion("bf16_to_f16_pow2_scaled");
  }
  const Rounder r = make_rounder(a, dst);
  const auto cands = device_conversions_for(src, dst);
  const DeviceConversion* pick = nullptr;
  for (const bool primary_only : {true, false}) {
    for (const DeviceConversion* e : cands)
      if (e->kind == ConversionKind::Convert && e->rounder.rounding == r.rounding && e->rounder.saturation == r.saturation &&
          (e->primary || !primary_only)) {
        pick = e;
        break;
      }
    if (pick) break;
  }
  if (pick) return *pick;
  std::string have;
  for (const DeviceConversion* e : cands)
    have += fmt::format("\n  {:<34} {} ({})", e->name, e->call, rounder_text(e->rounder));
  if (have.empty())
    throw InputError(fmt::format("the device table has no conversion from {} to {} (--intrinsic list shows the table)", src.tag, dst.tag));
  throw InputError(fmt::format("no device conversion {} -> {} with {}; the table has:{}\n(pick one with --intrinsic NAME, or "
                               "give its --rounding and --saturate)",
                               src.tag, dst.tag, rounder_text(r), have));
}

int run_device(const ConvertArgs& a) {
  const DeviceConversion& e = pick_entry(a);
  SweepOptions opt = sweep_options(a, e);
  auto producer = need_producer();
  const EntrySupport sup = entry_support(e, producer->running_arch());
  if (!sup.ok) throw InputError(fmt::format("{} cannot run on {}: {}", e.name, producer->device_name(), sup.reason));
  std::uint64_t total = 0;
  for (const auto& [first, count] : opt.ranges) total += count;
  opt.progress = terminal_progress(total ? total : entry_code_count(e));
  const auto checker = maybe_checker(a);
  opt.checker = checker.get();
  const DeviceSweepResult r = sweep_conversion(*producer, e, opt);
  print_result(r, opt);
  if (!a.json.empty()) {
    nlohmann::json j = result_json(r, opt);
    j["kind"] = "conversion";
    j["command"] = command_line();
    j["subject"] = e.call;
    j["intrinsic"] = e.name;
    auto api = make_cuda_api();
    j["environment"] = to_json(make_environment(command_line(), api.get()));
    write_file_atomic(a.json, j.dump(2) + "\n");
    if (!a.html.empty()) write_html_report(a.html, ReportInput{{}, {conversion_from_json(j)}});
  } else if (!a.html.empty()) {
    nlohmann::json j = result_json(r, opt);
    j["kind"] = "conversion";
    j["command"] = command_line();
    write_html_report(a.html, ReportInput{{}, {conversion_from_json(j)}});
  }
  return r.passed() ? kExitPass : kExitGateFailed;
}

int run_list(const ConvertArgs& a) {
  std::string why;
  auto producer = make_cuda_conversion_producer(&why, 65536);  // small buffers: only the probe is wanted
  const RunningArch arch = producer ? producer->running_arch() : RunningArch{};
  if (producer)
    fmt::print("device: {} (cc {}.{}), running code for __CUDA_ARCH__ {}{}\n", producer->device_name(), arch.cc_major, arch.cc_minor,
               arch.arch, arch.family_specific ? fmt::format(" (family-specific {})", arch.family_specific) : "");
  else
    fmt::print("device: none ({})\n", why);
  fmt::print("{:<38} {:<6} {:<6} {:<4} {:<10} {:<4} {:<48} {}\n", "name", "from", "to", "rnd", "saturation", "x2", "on this device",
             "NaN for NaN inputs");
  nlohmann::json list = nlohmann::json::array();
  for (const DeviceConversion& e : device_conversions(a.include_test)) {
    std::string here = "-";
    bool hw = e.hw == HwPath::Always;
    if (producer) {
      const EntrySupport s = entry_support(e, arch);
      hw = s.hardware;
      here = s.ok ? (s.hardware ? "hw: " + std::string(e.hw_instr) : std::string("sw: header emulation")) : "not supported: " + s.reason;
    }
    auto nan_text = [&](const NanStatement& st) {
      std::string t(to_string(st.rule));
      if (st.rule == NanRule::Canonical) t += " " + hex_code(*e.dst, st.code);
      if (st.rule != NanRule::NotApplicable && st.rule != NanRule::Unstated) t += st.decisive ? " (enforced)" : " (expected)";
      return t;
    };
    std::string nan = nan_text(nan_statement(e, hw));
    if (!producer && e.hw != HwPath::Always && e.hw != HwPath::Never && nan_text(e.nan_hw) != nan_text(e.nan_sw))
      nan = "hardware: " + nan_text(e.nan_hw) + "; software: " + nan_text(e.nan_sw);
    fmt::print("{:<38} {:<6} {:<6} {:<4} {:<10} {:<4} {:<48} {}\n", e.name, e.src->tag, e.dst->tag, to_string(e.rounder.rounding),
               to_string(e.rounder.saturation), e.pair ? "x2" : "", here.size() > 48 ? here.substr(0, 45) + "..." : here, nan);
    nlohmann::json j = entry_json(e);
    j["on_this_device"] = here;
    list.push_back(j);
  }
  if (!a.json.empty())
    write_file_atomic(a.json, nlohmann::json{{"kind", "conversion_table"}, {"command", command_line()}, {"conversions", list}}.dump(2) + "\n");
  return kExitPass;
}

/// The `conversions` suite: every table entry the device supports, one JSON (docs/conversions.md).
int run_suite(const ConvertArgs& a) {
  auto producer = need_producer();
  const auto checker = maybe_checker(a);
  auto api = make_cuda_api();
  const RunningArch arch = producer->running_arch();
  nlohmann::json doc = {{"kind", "conversion_suite"},
                        {"schema_version", 1},
                        {"command", command_line()},
                        {"environment", to_json(make_environment(command_line(), api.get()))},
                        {"device",
                         {{"name", producer->device_name()},
                          {"compute_capability", fmt::format("{}.{}", arch.cc_major, arch.cc_minor)},
                          {"running_arch", arch.arch},
                          {"family_specific", arch.family_specific}}},
                        {"options",
                         {{"fp32", a.sample ? "strided_sample" : "exhaustive"},
                          {"mpfr_sample", a.mpfr_sample},
                          {"strict_nan", a.strict_nan},
                          {"threads", a.threads ? a.threads : thread_count()},
                          {"include_test_entries", a.include_test}}}};
  nlohmann::json rows = nlohmann::json::array();
  std::uint64_t run = 0, passed = 0, failed = 0, unsupported = 0, patterns = 0;
  const auto t0 = std::chrono::steady_clock::now();
  auto write = [&](bool done) {
    doc["conversions"] = rows;
    doc["summary"] = {{"entries", rows.size()},
                      {"run", run},
                      {"passed", passed},
                      {"failed", failed},
                      {"not_supported", unsupported},
                      {"patterns", patterns},
                      {"seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()},
                      {"complete", done}};
    doc["passed"] = failed == 0;
    if (!a.json.empty()) write_file_atomic(a.json, doc.dump(2) + "\n");
    if (done && !a.html.empty()) {
      ReportInput in;
      for (const auto& row : rows) in.conversions.push_back(conversion_from_json(row));
      write_html_report(a.html, in);
    }
  };
  fmt::print("fpcert conversions on {} (cc {}.{}, running code for __CUDA_ARCH__ {}), fp32 sources {}\n", producer->device_name(),
             arch.cc_major, arch.cc_minor, arch.arch, a.sample ? "sampled (256 blocks of 2^16)" : "exhaustive (2^32)");
  fmt::print("{:<38} {:>11} {:>10} {:>9} {:>9} {:>8} {:>8}  {}\n", "conversion", "patterns", "mismatch", "NaN diff", "unexpl.",
             "seconds", "Mpat/s", "status");
  for (const DeviceConversion& e : device_conversions(a.include_test)) {
    const EntrySupport sup = entry_support(e, arch);
    if (!sup.ok) {
      ++unsupported;
      nlohmann::json j = entry_json(e);
      j["status"] = "not_supported";
      j["reason"] = sup.reason;
      rows.push_back(j);
      fmt::print("{:<38} {:>11} {:>10} {:>9} {:>9} {:>8} {:>8}  not supported: {}\n", e.name, "-", "-", "-", "-", "-", "-", sup.reason);
      write(false);
      continue;
    }
    ConvertArgs ea = a;
    ea.range.clear();
    SweepOptions opt = sweep_options(ea, e);
    opt.checker = checker.get();
    const DeviceSweepResult r = sweep_conversion(*producer, e, opt);
    ++run;
    (r.passed() ? passed : failed) += 1;
    patterns += r.patterns;
    rows.push_back(result_json(r, opt));
    const std::uint64_t unexplained = r.nan_other_differences + r.lane_mismatches + r.stray +
                                      (nan_statement(e, r.hardware).decisive ? r.nan.not_as_stated : 0) +
                                      r.scaled.window_failures + r.scaled.roundtrip_mismatches;
    fmt::print("{:<36} {:>11} {:>10} {:>9} {:>9} {:>8.2f} {:>8.0f}  {}\n", e.name, r.patterns, r.check.mismatches + r.check.model_mismatches,
               r.check.nan_differences, unexplained, r.timing.wall_s,
               r.timing.wall_s > 0 ? static_cast<double>(r.patterns) / r.timing.wall_s / 1e6 : 0.0, r.passed() ? "PASS" : "FAIL");
    for (const auto& f : r.failures) fmt::print("    {}\n", f);
    std::fflush(stdout);
    write(false);
  }
  write(true);
  fmt::print("{} conversions run: {} passed, {} failed; {} not supported on this device; {} patterns in {:.1f} s\n", run, passed, failed,
             unsupported, patterns, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  fmt::print("{}\n", failed == 0 ? "PASS" : "FAIL");
  return failed == 0 ? kExitPass : kExitGateFailed;
}

}  // namespace

void add_convert(CLI::App& root, Registry& reg) {
  auto* app = root.add_subcommand("convert", "Convert one value, or check a conversion on every source pattern (on the CPU or a GPU)");
  auto a = std::make_shared<ConvertArgs>();
  app->add_option("--from", a->from, "Source format (fpcert formats lists them)");
  app->add_option("--to", a->to, "Destination format");
  app->add_option("--rounding", a->rounding, "rn, rna, rz, ru, rd or rs (stochastic)")->capture_default_str();
  app->add_option("--saturate", a->saturate, "inf, satfinite or nan (default: the destination's own)");
  app->add_option("--nan", a->nan, "NaN payloads: preserve (quiet, top bits kept) or canonical (CPU path)")->capture_default_str();
  app->add_option("--seed", a->seed, "Key of the stochastic-rounding bits (Philox)")->capture_default_str()->check(integer_in(0, ~std::uint64_t{0}));
  auto* value = app->add_option("--value", a->value, "One value: decimal, hex float, inf or nan");
  auto* bits = app->add_option("--bits", a->bits, "One value as a bit pattern of the source format (0x...)");
  auto* exh = app->add_flag("--exhaustive", a->exhaustive, "Every source pattern, checked against MPFR");
  auto* range = app->add_option("--range", a->range, "With --exhaustive: FIRST:COUNT source codes only")->needs(exh);
  app->add_flag("--strict-nan", a->strict_nan, "Count NaN results with other payload or sign bits as mismatches");
  app->add_option("--json", a->json, "Write the result as JSON to this file")->check(path_text());
  auto* html = app->add_option("--html", a->html, "With --exhaustive or --all: write a self-contained HTML report here")->check(path_text());
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
  app->add_flag("--include-test-entries", a->include_test, "With --all or --intrinsic list: also the deliberately wrong test entries");
  value->excludes(bits)->excludes(exh);
  bits->excludes(exh);
  html->excludes(value)->excludes(bits);  // one value has no report
  // A plugin's conversion kernel (cli/convert_plugin.cpp): --plugin LIB --kernel NAME --exhaustive.
  auto pl = std::make_shared<std::vector<std::string>>();
  auto kernel = std::make_shared<std::string>();
  auto no_isolate = std::make_shared<bool>(false);
  auto timeout = std::make_shared<double>(3600);
  add_plugin_option(app, *pl);
  app->add_option("--kernel", *kernel, "A conversion kernel of a --plugin library (checked with --exhaustive)");
  app->add_flag("--no-isolate", *no_isolate, "With --kernel: run the check in this process, not a child");
  app->add_option("--timeout", *timeout, "With --kernel: seconds per 2^20 patterns before the kernel counts as hung")
      ->capture_default_str()
      ->check(seconds());
  all->excludes(value)->excludes(bits)->excludes(range);  // --all sweeps every entry whole
  reg.push_back({app, [a, app, pl, kernel, no_isolate, timeout] {
                   check_command_outputs({{"--json", a->json}, {"--html", a->html}});  // before any work
                   load_plugins(*pl);
                   if (!kernel->empty()) {
                     if (!a->value.empty() || !a->bits.empty())
                       throw InputError("convert --kernel: checks a plugin kernel with --exhaustive [--range FIRST:COUNT]; --value/--bits are for fpcert's own conversion");
                     if (!a->exhaustive) throw InputError("convert --kernel: give --exhaustive (optionally --range FIRST:COUNT)");
                     if (a->device != "cpu" || a->all || !a->intrinsic.empty() || !a->scale.empty() || a->sample)
                       throw InputError("convert --kernel: the plugin states its memory space; --device, --all, --intrinsic, --scale and --sample are for fpcert's device table");
                     PluginConvertRequest r;
                     r.kernel = *kernel;
                     r.from = a->from;
                     r.to = a->to;
                     if (app->count("--rounding")) r.rounding = a->rounding;
                     if (app->count("--saturate")) r.saturate = a->saturate;
                     if (app->count("--nan")) r.nan = a->nan;
                     r.range = a->range;
                     r.json = a->json;
                     r.html = a->html;
                     r.strict_nan = a->strict_nan;
                     r.isolate = !*no_isolate;
                     r.timeout_s = *timeout;
                     r.threads = a->threads;
                     r.list = a->list;
                     return run_plugin_conversion(r);
                   }
                   if (!pl->empty()) throw InputError("convert --plugin: name the plugin's conversion kernel with --kernel NAME");
                   if (a->device != "cpu" && a->device != "cuda")
                     throw InputError("--device: expected 'cpu' or 'cuda', got '" + a->device + "'");
                   if (a->intrinsic == "list") return run_list(*a);
                   if (a->all) {
                     if (a->device != "cuda") throw InputError("--all sweeps the device table: add --device cuda");
                     return run_suite(*a);
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
