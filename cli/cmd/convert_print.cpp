// cli/cmd/convert_print.cpp — see convert_print.hpp.
#include "cli/cmd/convert_print.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <stdexcept>
#include <vector>

#include "base/decimal.hpp"
#include "base/error.hpp"

namespace fpcert::cli {

using nlohmann::json;

std::string describe_code(const Format& f, std::uint64_t code) {
  return fmt::format("{} {} = {}", f.tag, hex_code(f, code), exact_decimal(to_double(f, code)));
}

std::string rounder_text(const Rounder& r) {
  return fmt::format("rounding {}, saturation {}", to_string(r.rounding), to_string(r.saturation));
}

std::pair<std::uint64_t, std::uint64_t> parse_first_count(const std::string& text, std::uint64_t all, std::string_view what) {
  const auto colon = text.find(':');
  if (colon == std::string::npos) throw InputError("--range: expected FIRST:COUNT, e.g. 0x7f800000:1024");
  std::uint64_t first = 0, count = 0;
  try {
    std::size_t p1 = 0, p2 = 0;
    first = std::stoull(text.substr(0, colon), &p1, 0);
    count = std::stoull(text.substr(colon + 1), &p2, 0);
    if (p1 != colon || p2 != text.size() - colon - 1) throw std::invalid_argument("trailing");
  } catch (const std::exception&) {
    throw InputError("--range: expected FIRST:COUNT as integers, got '" + text + "'");
  }
  if (count == 0 || (all && (first >= all || count > all - first)))
    throw InputError(fmt::format("--range: {} lies outside the {} codes of {}", text, all, what));
  return {first, count};
}

std::vector<std::pair<std::uint64_t, std::uint64_t>> check_ranges(const std::string& range, const Format& src) {
  if (!range.empty()) return {parse_first_count(range, src.code_count(), src.tag)};
  if (src.total_bits() > 32)
    throw InputError(fmt::format("--exhaustive: {} has 2^{} patterns; give --range FIRST:COUNT", src.tag, src.total_bits()));
  return {};
}

void print_check_result(const ConvertCheckResult& res, const Format& src, const Format& dst, NanPayload nan) {
  fmt::print("outcome counts:\n");
  for (int i = 0; i < kOutcomeCount; ++i)
    if (res.outcomes[i]) fmt::print("  {:<18} {:>12}\n", to_string(static_cast<Outcome>(i)), res.outcomes[i]);
  if (res.nan_differences) fmt::print("NaN results other than fpcert's that the declared NaN convention accepts (not mismatches): {}\n", res.nan_differences);
  for (const auto& m : res.listed)
    fmt::print("  {} {}  expected {}  got {}  [{}]\n", m.model_bug ? "MODEL!=MPFR" : "MISMATCH", describe_code(src, m.src),
               nan == NanPayload::Any && !m.model_bug && m.outcome == Outcome::NaN ? "any NaN" : describe_code(dst, m.expected),
               describe_code(dst, m.got), to_string(m.outcome));
  fmt::print("mismatches: {}{}\n", res.mismatches + res.model_mismatches,
             res.model_mismatches ? fmt::format(" ({} where fpcert's fast model disagrees with MPFR: a bug in fpcert)", res.model_mismatches) : "");
  fmt::print("{}\n", res.passed() ? "PASS" : "FAIL");
}

// ---- a device sweep's record ----

namespace {

std::uint64_t u64(const json& j, const char* key) { return j.contains(key) ? j.at(key).get<std::uint64_t>() : 0; }
std::string str(const json& j, const char* key) { return j.contains(key) && j.at(key).is_string() ? j.at(key).get<std::string>() : ""; }
double num(const json& j, const char* key) { return j.contains(key) && j.at(key).is_number() ? j.at(key).get<double>() : 0.0; }

const Format& format_of(const json& rec, const char* key) {
  const Format* f = find_format(str(rec, key));
  if (!f) throw std::logic_error("conversion record without a known '" + std::string(key) + "' format");
  return *f;
}

/// "0x3c01 (1.0009765625)": bits as the record holds them, with the exact value.
std::string code_text(const Format& f, const std::string& bits) {
  const std::uint64_t code = from_container(f, std::strtoull(bits.c_str(), nullptr, 16));
  return fmt::format("{} ({})", hex_code(f, code), exact_decimal(to_double(f, code)));
}

std::string nan_text(const json& st) {
  std::string rule = str(st, "rule");
  if (rule == "canonical") rule += " " + str(st, "code");
  const std::string basis = str(st, "basis");
  if (str(st, "rule") == "not_applicable" || str(st, "rule") == "unstated") return rule + " (" + basis + ")";
  return rule + (st.at("decisive").get<bool>() ? " (enforced: " : " (expected, not enforced: ") + basis + ")";
}

bool scaled(const json& rec) { return str(rec, "kind") == "scaled_round_trip"; }

}  // namespace

void print_device_record(const json& rec) {
  const Format& src = format_of(rec, "from");
  const Format& dst = format_of(rec, "to");
  const Format& lf = scaled(rec) ? f16 : dst;  // the checked half's destination
  fmt::print("fpcert convert: {} -> {} on {} (cc {}, running code for __CUDA_ARCH__ {}), intrinsic {}: {}\n", src.tag, dst.tag,
             str(rec, "device"), str(rec, "compute_capability"), u64(rec, "running_arch"), str(rec, "name"), str(rec, "call"));
  fmt::print("path: {}; must equal fpcert's rounding {}, saturation {}{}\n", str(rec, "path_detail"), str(rec, "rounding"),
             str(rec, "saturation"), rec.value("pair", false) ? "; x2 form: both lanes checked" : "");
  // The declared convention is what the check enforces on every NaN input; the path's statement says what this
  // code path is believed to write and why (an expectation where the instruction's NaN is undocumented).
  fmt::print("NaN convention: {} (declared, enforced on every NaN input); this path's statement: {}\n", str(rec, "nan_payload"),
             nan_text(rec.at("nan_policy")));
  const json& t = rec.at("timing");
  const double wall = num(t, "wall_s");
  const std::uint64_t patterns = u64(rec, "patterns");
  // The device check's NaN inputs off the sample are judged against fpcert's model, not MPFR
  // (docs/conversions.md, "NaN inputs"): its MPFR count is smaller than the host check's.
  fmt::print("{} patterns ({}), MPFR on {} of them{}, {} threads: {:.3f} s, {:.1f} M patterns/s\n", patterns,
             rec.value("exhaustive", false) ? "every source code" : fmt::format("{} ranges", rec.at("ranges").size()),
             u64(rec, "mpfr_checked"),
             t.value("checked_on", std::string("host")) == "device"
                 ? " (differences and the sample; NaN inputs off the sample against fpcert's model)"
                 : "",
             u64(t, "threads"), wall, wall > 0 ? static_cast<double>(patterns) / wall / 1e6 : 0.0);
  if (t.value("checked_on", std::string("host")) == "device") {
    const std::uint64_t fallback = u64(t, "host_fallback_chunks");
    fmt::print("checked on the device (convert and compare in one pass){}; time: GPU kernels {:.3f} s, copies {:.3f} s, host part "
               "(MPFR on differences and the sample, NaN inputs) {:.3f} s, host waiting for the device {:.3f} s\n",
               fallback ? fmt::format(", {} chunks with long difference lists re-checked on the host", fallback) : "", num(t, "gpu_s"),
               num(t, "transfer_s"), num(t, "check_s"), num(t, "wait_s"));
  } else {
    fmt::print("time: GPU kernels {:.3f} s, device-to-host copies {:.3f} s, CPU check {:.3f} s, CPU waiting for the device {:.3f} s "
               "(kernels and copies overlap the check)\n",
               num(t, "gpu_s"), num(t, "transfer_s"), num(t, "check_s"), num(t, "wait_s"));
  }
  fmt::print("outcome counts:\n");
  const json& oc = rec.at("outcomes");
  for (int i = 0; i < kOutcomeCount; ++i) {
    const std::string name(to_string(static_cast<Outcome>(i)));
    if (const std::uint64_t n = u64(oc, name.c_str())) fmt::print("  {:<18} {:>12}\n", name, n);
  }
  const json& nan = rec.at("nan");
  if (u64(nan, "inputs")) {
    std::string outs;
    for (const auto& [code, n] : nan.at("outputs").items()) outs += fmt::format(" {} x{}", code, n.get<std::uint64_t>());
    if (u64(nan, "outputs_other")) outs += fmt::format(" (+{} more)", u64(nan, "outputs_other"));
    fmt::print("NaN inputs: {}; NaN results:{}; as stated {}, not as stated {}, other than fpcert's {} {}\n", u64(nan, "inputs"), outs,
               u64(nan, "as_stated"), u64(nan, "not_as_stated"), str(rec, "nan_payload"), u64(nan, "differ_from_fpcert"));
    for (const auto& l : nan.at("listed"))
      fmt::print("  NAN {}  stated {}  got {}\n", code_text(src, str(l, "src_bits")), str(l, "stated_bits"), str(l, "got_bits"));
  }
  if (u64(rec, "nan_differences"))
    fmt::print("NaN results other than fpcert's that the declared NaN convention accepts (not mismatches): {}\n", u64(rec, "nan_differences"));
  for (const auto& m : rec.at("listed"))
    fmt::print("  {} {}  expected {}  got {}  [{}]\n", m.value("model_bug", false) ? "MODEL!=MPFR" : "MISMATCH", str(m, "src"),
               str(rec, "nan_payload") == "any" && !m.value("model_bug", false) && str(m, "outcome") == "nan" ? std::string("any NaN")
                                                                                                        : code_text(lf, str(m, "expected_bits")),
               code_text(lf, str(m, "got_bits")), str(m, "outcome"));
  for (const auto& l : rec.at("lanes"))
    fmt::print("  LANES {}  low lane {}  high lane {}\n", code_text(src, str(l, "src_bits")), str(l, "low_lane_bits"), str(l, "high_lane_bits"));
  for (const auto& s : rec.at("strays")) fmt::print("  STRAY {}  raw result {}\n", code_text(src, str(s, "src_bits")), str(s, "raw"));
  if (scaled(rec) && rec.contains("scaled")) {
    const json& sc = rec.at("scaled");
    std::uint64_t in = 0, exact = 0, out = 0, out_exact = 0;
    for (const auto& row : sc.at("rows")) {
      in += u64(row, "window_patterns");
      exact += u64(row, "window_exact");
      out += u64(row, "outside_patterns");
      out_exact += u64(row, "outside_exact");
    }
    if (!sc.at("rows").empty())
      fmt::print("window: for scale 2^s the bf16 binades [max(-17 - s, -133), min(15 - s, 127)] (fp16-normal part: "
                 "[-14 - s, 15 - s]), s from {} to {}\n",
                 sc.at("rows").front().at("s").get<int>(), sc.at("rows").back().at("s").get<int>());
    fmt::print("round trip: {} of {} finite bf16 in the window came back exactly; outside it {} of {}\n", exact, in, out_exact, out);
    for (const auto& m : sc.at("listed"))
      fmt::print("  ROUNDTRIP {}  expected {}  got {}\n", str(m, "src"), code_text(bf16, str(m, "expected_bits")), code_text(bf16, str(m, "got_bits")));
  }
  fmt::print("lane differences: {}, stray container bits: {}, unexplained NaN differences: {}\n", u64(rec, "lane_mismatches"),
             u64(rec, "stray_bits"), u64(rec, "nan_other_differences"));
  const std::uint64_t mm = u64(rec, "mismatches"), model = u64(rec, "model_mismatches");
  fmt::print("mismatches: {}{}\n", mm + model,
             model ? fmt::format(" ({} where fpcert's fast model disagrees with MPFR: a bug in fpcert)", model) : "");
  for (const auto& f : rec.at("failures")) fmt::print("  FAIL: {}\n", f.get<std::string>());
  fmt::print("{}\n", rec.value("passed", false) ? "PASS" : "FAIL");
}

void print_device_row_header() {
  fmt::print("{:<38} {:>11} {:>10} {:>9} {:>9} {:>8} {:>8}  {}\n", "conversion", "patterns", "mismatch", "NaN diff", "unexpl.", "seconds",
             "Mpat/s", "status");
}

void print_device_row(const json& rec, std::string_view name, std::string_view status, const std::string& reason) {
  if (status != "pass" && status != "fail") {
    fmt::print("{:<38} {:>11} {:>10} {:>9} {:>9} {:>8} {:>8}  {}: {}\n", name, "-", "-", "-", "-", "-", "-",
               status == "not_supported" ? "not supported" : status, reason);
    return;
  }
  const json& nan = rec.at("nan");
  const bool decisive = rec.at("nan_policy").value("decisive", false);
  std::uint64_t unexplained = u64(rec, "nan_other_differences") + u64(rec, "lane_mismatches") + u64(rec, "stray_bits") +
                              (decisive ? u64(nan, "not_as_stated") : 0);
  if (rec.contains("scaled")) unexplained += u64(rec.at("scaled"), "window_failures") + u64(rec.at("scaled"), "roundtrip_mismatches");
  const double wall = num(rec.at("timing"), "wall_s");
  const std::uint64_t patterns = u64(rec, "patterns");
  fmt::print("{:<36} {:>11} {:>10} {:>9} {:>9} {:>8.2f} {:>8.0f}  {}\n", name, patterns, u64(rec, "mismatches") + u64(rec, "model_mismatches"),
             u64(rec, "nan_differences"), unexplained, wall, wall > 0 ? static_cast<double>(patterns) / wall / 1e6 : 0.0,
             rec.value("passed", false) ? "PASS" : "FAIL");
  for (const auto& f : rec.at("failures")) fmt::print("    {}\n", f.get<std::string>());
}

}  // namespace fpcert::cli
