// suites/ops/conversion/device_record.cpp — the record of a device sweep (docs/conversions.md, "JSON").
#include <fmt/format.h>

#include "base/decimal.hpp"
#include "suites/ops/conversion/device_sweep.hpp"

namespace fpcert {
namespace {

std::string code_text(const Format& f, std::uint64_t code) {
  return fmt::format("{} ({})", hex_code(f, code), exact_decimal(to_double(f, code)));
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

}  // namespace

nlohmann::json device_entry_json(const DeviceConversion& e) {
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

nlohmann::json device_sweep_record(const DeviceSweepResult& r, const SweepOptions& opt) {
  const DeviceConversion& e = *r.entry;
  nlohmann::json j = device_entry_json(e);
  j["status"] = r.passed() ? "passed" : "failed";
  j["device"] = r.device;
  j["running_arch"] = r.arch.arch;
  j["compute_capability"] = fmt::format("{}.{}", r.arch.cc_major, r.arch.cc_minor);
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
                 {"patterns_per_s", wall > 0 ? static_cast<double>(r.patterns) / wall : 0.0},
                 {"checked_on", r.checked_on},
                 {"host_fallback_chunks", r.host_fallback_chunks}};
  j["seconds"] = wall;
  j["failures"] = r.failures;
  j["passed"] = r.passed();
  return j;
}

}  // namespace fpcert
