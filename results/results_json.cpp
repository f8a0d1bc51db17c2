// results/results_json.cpp — JSON mapping of the results model.
#include "results/results_json.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>

#include "base/error.hpp"
#include "base/input_file.hpp"
#include "results/conversion.hpp"
#include "results/elementwise.hpp"

namespace fpcert {

using nlohmann::json;

json json_number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

double number_from_json(const json& j) {
  if (j.is_number()) return j.get<double>();
  if (j.is_string()) {
    const auto s = j.get<std::string>();
    if (s == "inf") return INFINITY;
    if (s == "-inf") return -INFINITY;
    if (s == "nan") return NAN;
  }
  if (j.is_null()) return NAN;
  throw InputError("expected a number, got " + j.dump());
}

namespace {
double num(const json& j, const char* key, double def = 0) { return j.contains(key) ? number_from_json(j.at(key)) : def; }
/// A text field: absent or null is "", any other type is malformed input (a number where a name belongs
/// was read as "" and the file accepted).
std::string str(const json& j, const char* key) {
  if (!j.contains(key) || j.at(key).is_null()) return "";
  if (!j.at(key).is_string()) throw InputError(std::string("'") + key + "' must be a string, got " + j.at(key).dump());
  return j.at(key).get<std::string>();
}
/// An integer field within T's range (a float or an out-of-range value is malformed input, not a cast).
template <class T>
T checked_integer(const json& v, const char* key) {
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u <= static_cast<std::uint64_t>(std::numeric_limits<T>::max())) return static_cast<T>(u);
  } else if (v.is_number_integer()) {
    const auto i = v.get<std::int64_t>();
    if (i >= 0 || std::numeric_limits<T>::is_signed)
      if (static_cast<long double>(i) >= static_cast<long double>(std::numeric_limits<T>::min()) &&
          static_cast<long double>(i) <= static_cast<long double>(std::numeric_limits<T>::max()))
        return static_cast<T>(i);
  } else if (v.is_number_float()) {
    const double d = v.get<double>();
    if (d == std::floor(d) && d >= static_cast<double>(std::numeric_limits<T>::min()) &&
        d < std::ldexp(1.0, std::numeric_limits<T>::digits))
      return static_cast<T>(d);
  }
  throw InputError(std::string("'") + key + "' must be an integer in range, got " + v.dump());
}
/// An integer field: absent or null is `def`, any other type is malformed input.
template <class T>
T integer(const json& j, const char* key, T def = 0) {
  if (!j.contains(key) || j.at(key).is_null()) return def;
  if (!j.at(key).is_number()) throw InputError(std::string("'") + key + "' must be an integer, got " + j.at(key).dump());
  return checked_integer<T>(j.at(key), key);
}
/// A size (a dimension, a count): an integer >= 0.
std::int64_t size_field(const json& j, const char* key) {
  const auto v = integer<std::int64_t>(j, key);
  if (v < 0) throw InputError(std::string("'") + key + "' is a size and must be >= 0, got " + std::to_string(v));
  return v;
}
}  // namespace

json to_json(const Environment& e) {
  return {{"fpcert_version", e.fpcert_version}, {"command", e.command},   {"timestamp", e.timestamp},
          {"host", e.host},                     {"cpu", e.cpu},           {"compiler", e.compiler},
          {"build_flags", e.build_flags},       {"device", e.device},     {"compute_capability", e.compute_capability},
          {"sm_count", e.sm_count},             {"clock_mhz", e.clock_mhz}, {"mem_clock_mhz", e.mem_clock_mhz},
          {"driver", e.driver},                 {"cuda_runtime", e.cuda_runtime}, {"cublas", e.cublas},
          {"cuda_archs", e.cuda_archs}};
}

Environment environment_from_json(const json& j) {
  Environment e;
  e.fpcert_version = str(j, "fpcert_version");
  e.command = str(j, "command");
  e.timestamp = str(j, "timestamp");
  e.host = str(j, "host");
  e.cpu = str(j, "cpu");
  e.compiler = str(j, "compiler");
  e.build_flags = str(j, "build_flags");
  e.device = str(j, "device");
  e.compute_capability = str(j, "compute_capability");
  e.sm_count = integer<int>(j, "sm_count");
  e.clock_mhz = integer<int>(j, "clock_mhz");
  e.mem_clock_mhz = integer<int>(j, "mem_clock_mhz");
  e.driver = str(j, "driver");
  e.cuda_runtime = str(j, "cuda_runtime");
  e.cublas = str(j, "cublas");
  e.cuda_archs = str(j, "cuda_archs");
  return e;
}

json to_json(const Bound& b) {
  json terms = json::array();
  for (const auto& t : b.terms) terms.push_back({{"name", t.name}, {"value", json_number(t.value)}, {"formula", t.formula}});
  return {{"variant", b.variant ? std::string(to_string(*b.variant)) : std::string()}, {"rtol", json_number(b.rtol)},
          {"atol", json_number(b.atol)}, {"out_term", json_number(b.out_term)},
          {"vacuous", b.vacuous},       {"terms", terms},
          {"eta_a", json_number(b.eta_a)}, {"eta_b", json_number(b.eta_b)},
          {"eta_abs", json_number(b.eta_abs)},
          {"allowed", b.allowed},       {"arithmetic", b.arithmetic}};
}

Bound bound_from_json(const json& b) {
  Bound r;
  r.variant = parse_bound_variant(str(b, "variant"));
  r.rtol = num(b, "rtol");
  r.atol = num(b, "atol");
  r.out_term = num(b, "out_term");
  r.vacuous = b.contains("vacuous") && b.at("vacuous").get<bool>();
  r.eta_a = num(b, "eta_a");
  r.eta_b = num(b, "eta_b");
  r.eta_abs = num(b, "eta_abs");
  r.allowed = str(b, "allowed");
  r.arithmetic = str(b, "arithmetic");
  if (b.contains("terms"))
    for (const auto& t : b.at("terms")) r.terms.push_back({str(t, "name"), num(t, "value"), str(t, "formula")});
  return r;
}

json to_json(const CaseResult& c) {
  const Metrics& m = c.metrics;
  json metrics = {{"max_abs", json_number(m.max_abs)},
                  {"frobenius_rel", json_number(m.frobenius_rel)},
                  {"max_rel", json_number(m.max_rel)},
                  {"rowsum_rel", json_number(m.rowsum_rel)},
                  {"componentwise", json_number(m.componentwise)},
                  {"ulp_max", json_number(m.ulp_max)},
                  {"ulp_median", json_number(m.ulp_median)},
                  {"ulp_p99", json_number(m.ulp_p99)},
                  {"ulp_hist", m.ulp_hist},
                  {"ulp_cancelled", m.ulp_cancelled},
                  {"err_frac_max", json_number(m.err_frac_max)},
                  {"err_frac_median", json_number(m.err_frac_median)},
                  {"err_frac_p99", json_number(m.err_frac_p99)},
                  {"err_frac_hist", m.err_frac_hist},
                  {"predicted_ulp_hist", m.predicted_ulp_hist},
                  {"predicted_err_frac_hist", m.predicted_err_frac_hist},
                  {"nonfinite", m.nonfinite},
                  {"ref_overflow", m.ref_overflow},
                  {"first_nonfinite", m.first_nonfinite},
                  {"unwritten", m.unwritten},
                  {"first_unwritten", m.first_unwritten},
                  {"guard_violations", m.guard_violations},
                  {"first_guard_violation", m.first_guard_violation},
                  {"deterministic", m.deterministic},
                  {"nondeterministic_elements", m.nondeterministic_elements},
                  {"ref_max_abs", json_number(m.ref_max_abs)}};
  if (!m.correct_bits_hist.empty()) {  // fp64 outputs only (docs/fp64.md, "Correct bits")
    metrics["correct_bits_min"] = m.correct_bits_min;
    metrics["correct_bits_median"] = json_number(m.correct_bits_median);
    metrics["correct_bits_hist"] = m.correct_bits_hist;
  }
  const json bound = to_json(c.bound);
  json worst = json::array();
  for (const auto& w : c.worst)
    worst.push_back({{"i", w.i},
                     {"j", w.j},
                     {"got_bits", w.got_bits},
                     {"got", json_number(w.got)},
                     {"ref_hi", json_number(w.ref_hi)},
                     {"ref_lo", json_number(w.ref_lo)},
                     {"ref_bits", w.ref_bits},
                     {"err", json_number(w.err)},
                     {"allowed", json_number(w.allowed)},
                     {"ulps", json_number(w.ulps)},
                     {"abs_sum", json_number(w.abs_sum)}});
  json achieved = json::object();
  for (const auto& [k, v] : c.achieved) achieved[k] = json_number(v);
  json checks = json::array();
  for (const CheckResult& x : c.checks)
    checks.push_back({{"kind", std::string(to_string(x.kind))},
                      {"passed", x.passed},
                      {"decisive", is_decisive(x.kind)},
                      {"detail", x.detail},
                      {"first_index", x.first_index},
                      {"measured", json_number(x.measured)},
                      {"limit", json_number(x.limit)}});
  json j = {{"suite", c.suite},
            {"case", c.case_id},
            {"kernel", c.kernel},
            {"kernel_traits", c.kernel_traits},
            {"backend", c.backend},
            {"spec", c.spec},
            {"m", c.m},
            {"n", c.n},
            {"k", c.k},
            {"source_format", c.source_format},
            {"out_format", c.out_format},
            {"status", std::string(to_string(c.status))},
            {"reason", c.reason},
            {"checks", checks},
            {"tier", std::string(to_string(c.tier))},
            {"vacuous", c.vacuous},
            {"flags", c.flags},
            {"coverage", c.coverage},
            {"metrics", metrics},
            {"bound", bound},
            {"envelope", to_json(c.envelope)},
            {"evidence", c.evidence},
            {"gate_fraction", json_number(c.gate_fraction)},
            {"worst_index", c.worst_index},
            {"worst", worst},
            {"time_ms_median", json_number(c.time_ms_median)},
            {"time_ms_mean", json_number(c.time_ms_mean)},
            {"timed_runs", c.timed_runs},
            {"tflops", json_number(c.tflops)},
            {"achieved", achieved},
            {"repro", c.repro},
            {"wall_seconds", json_number(c.wall_seconds)}};
  if (!c.family.empty()) j["family"] = c.family;
  if (c.tile_m > 0 && c.tile_n > 0) j["tile"] = {{"m", c.tile_m}, {"n", c.tile_n}};
  if (!c.worst_envelope.empty()) {
    json w = json::array();
    for (const ElementFraction& e : c.worst_envelope) w.push_back({{"i", e.i}, {"j", e.j}, {"frac", json_number(e.frac)}});
    j["worst_envelope"] = w;
  }
  if (c.error_map) {
    json cells = json::array();
    for (double v : c.error_map->max_frac) cells.push_back(json_number(v));
    j["error_map"] = {{"rows", c.error_map->rows},
                      {"cols", c.error_map->cols},
                      {"cell_rows", c.error_map->cell_rows},
                      {"cell_cols", c.error_map->cell_cols},
                      {"max_frac", cells}};
    if (!c.error_map->min_correct_bits.empty()) {
      json bits = json::array();
      for (double v : c.error_map->min_correct_bits) bits.push_back(json_number(v));
      j["error_map"]["min_correct_bits"] = bits;
    }
  }
  if (c.axis != CaseAxis::None) j["axis"] = std::string(to_string(c.axis));
  if (c.conversion) j["conversion"] = c.conversion->record;
  if (c.reduction) {
    const ReductionResult& x = *c.reduction;
    j["operation"] = "reduction";
    j["reduction"] = {{"kind", x.kind},
                      {"axis", x.axis},
                      {"order", x.order},
                      {"accumulator", x.accumulator},
                      {"vectors", x.vectors},
                      {"length", x.length},
                      {"bitwise_mismatches", x.bitwise_mismatches},
                      {"vacuous_vectors", x.vacuous_vectors},
                      {"unjudged_vectors", x.unjudged_vectors},
                      {"worst_vector", x.worst_vector},
                      {"worst_bound", json_number(x.worst_bound)},
                      {"runs", x.runs}};
  }
  if (c.elementwise) {
    j["operation"] = "elementwise";
    j["elementwise"] = to_json(*c.elementwise);
  }
  if (c.order) {
    const OrderRecord& o = *c.order;
    j["order"] = {{"source", o.source},   {"file", o.file},         {"m", o.m},           {"n", o.n},
                  {"k", o.k},             {"tree", o.tree},         {"arithmetic", o.arithmetic}, {"checks", o.checks},
                  {"launches", o.launches}, {"used", o.used},       {"fallback", o.fallback}};
  }
  if (c.determinism != "deterministic") j["determinism"] = c.determinism;
  if (!c.layout.empty()) j["layout"] = c.layout;
  if (!c.batches.empty()) {
    json bs = json::array();
    for (const BatchOutcome& b : c.batches)
      bs.push_back({{"passed", b.passed}, {"max_abs", json_number(b.max_abs)}, {"max_fraction", json_number(b.max_fraction)},
                    {"reason", b.reason}});
    j["batches"] = std::move(bs);
  }
  if (c.spread) {
    const RunSpread& s = *c.spread;
    j["spread"] = {{"runs", s.runs},
                   {"differing_runs", s.differing_runs},
                   {"elements", s.elements},
                   {"max_elements", s.max_elements},
                   {"max_ulps", json_number(s.max_ulps)},
                   {"max_frac", json_number(s.max_frac)},
                   {"worst_index", s.worst_index},
                   {"worst_diff", json_number(s.worst_diff)},
                   {"worst_allowed", json_number(s.worst_allowed)},
                   {"worst_allowed_ulps", json_number(s.worst_allowed_ulps)},
                   {"bound", s.bound},
                   {"order_free", s.order_free},
                   {"order_free_differ", s.order_free_differ},
                   {"envelope_exceed", s.envelope_exceed},
                   {"envelope_worst", json_number(s.envelope_worst)}};
  }
  if (!c.baseline.empty()) {
    j["baseline"] = c.baseline;
    if (c.baseline_max_abs) j["baseline_max_abs"] = json_number(*c.baseline_max_abs);
    if (c.baseline_ratio) j["baseline_ratio"] = json_number(*c.baseline_ratio);
    if (c.speed_ratio) j["speed_ratio"] = json_number(*c.speed_ratio);
  }
  return j;
}

CaseResult case_from_json(const json& j) {
  if (!j.is_object()) throw InputError("a case must be a JSON object");
  CaseResult c;
  c.suite = str(j, "suite");
  c.case_id = str(j, "case");
  c.family = str(j, "family");
  if (const auto ax = parse_case_axis(str(j, "axis"))) c.axis = *ax;
  else throw InputError("case '" + c.case_id + "': unknown axis '" + str(j, "axis") + "'");
  if (j.contains("conversion")) c.conversion = conversion_from_json(j.at("conversion"));
  if (j.contains("reduction")) {
    const json& x = j.at("reduction");
    if (!x.is_object()) throw InputError("case '" + c.case_id + "': 'reduction' must be an object");
    ReductionResult r;
    r.kind = str(x, "kind");
    r.axis = str(x, "axis");
    r.order = str(x, "order");
    r.accumulator = str(x, "accumulator");
    r.vectors = size_field(x, "vectors");
    r.length = size_field(x, "length");
    r.bitwise_mismatches = size_field(x, "bitwise_mismatches");
    r.vacuous_vectors = size_field(x, "vacuous_vectors");
    r.unjudged_vectors = size_field(x, "unjudged_vectors");
    r.worst_vector = x.value("worst_vector", std::int64_t{-1});
    r.worst_bound = x.contains("worst_bound") ? number_from_json(x.at("worst_bound")) : 0.0;
    r.runs = x.value("runs", 0);
    c.reduction = r;
  }
  if (j.contains("elementwise")) c.elementwise = std::make_shared<const ElementwiseResult>(elementwise_from_json(j.at("elementwise")));
  c.kernel = str(j, "kernel");
  c.kernel_traits = str(j, "kernel_traits");
  c.backend = str(j, "backend");
  c.spec = str(j, "spec");
  c.m = size_field(j, "m");
  c.n = size_field(j, "n");
  c.k = size_field(j, "k");
  c.source_format = str(j, "source_format");
  c.out_format = str(j, "out_format");
  const auto st = parse_case_status(str(j, "status"));
  if (!st) throw InputError("case '" + c.case_id + "': unknown status '" + str(j, "status") + "'");
  c.status = *st;
  c.reason = str(j, "reason");
  if (j.contains("checks"))
    for (const auto& x : j.at("checks")) {
      CheckResult r;
      const auto kind = parse_check_kind(str(x, "kind"));
      if (!kind) throw InputError("case '" + c.case_id + "': unknown check kind '" + str(x, "kind") + "'");
      r.kind = *kind;
      r.passed = !x.contains("passed") || x.at("passed").get<bool>();
      r.detail = str(x, "detail");
      r.first_index = integer<std::int64_t>(x, "first_index", -1);
      r.measured = num(x, "measured");
      r.limit = num(x, "limit");
      c.checks.push_back(std::move(r));
    }
  if (j.contains("tier")) {
    const auto tier = parse_tier(str(j, "tier"));
    if (!tier) throw InputError("case '" + c.case_id + "': unknown tier '" + str(j, "tier") + "'");
    c.tier = *tier;
  }
  c.vacuous = j.contains("vacuous") && j.at("vacuous").get<bool>();
  if (j.contains("flags")) c.flags = j.at("flags").get<std::vector<std::string>>();
  if (j.contains("coverage")) c.coverage = j.at("coverage").get<std::vector<std::string>>();
  if (j.contains("metrics")) {
    const json& m = j.at("metrics");
    Metrics& M = c.metrics;
    M.max_abs = num(m, "max_abs");
    M.frobenius_rel = num(m, "frobenius_rel");
    M.max_rel = num(m, "max_rel");
    M.rowsum_rel = num(m, "rowsum_rel");
    M.componentwise = num(m, "componentwise");
    M.ulp_max = num(m, "ulp_max");
    M.ulp_median = num(m, "ulp_median");
    M.ulp_p99 = num(m, "ulp_p99");
    auto counts = [&](const char* key, std::vector<std::uint64_t>& out) {
      if (!m.contains(key)) return;
      if (!m.at(key).is_array()) throw InputError(std::string("'") + key + "' must be an array of counts");
      for (const auto& v : m.at(key)) out.push_back(checked_integer<std::uint64_t>(v, key));
    };
    counts("ulp_hist", M.ulp_hist);
    counts("err_frac_hist", M.err_frac_hist);
    counts("predicted_ulp_hist", M.predicted_ulp_hist);
    counts("correct_bits_hist", M.correct_bits_hist);
    if (m.contains("correct_bits_min")) M.correct_bits_min = checked_integer<int>(m.at("correct_bits_min"), "correct_bits_min");
    if (m.contains("correct_bits_median")) M.correct_bits_median = num(m, "correct_bits_median");
    counts("predicted_err_frac_hist", M.predicted_err_frac_hist);
    M.ulp_cancelled = integer<std::int64_t>(m, "ulp_cancelled");
    M.err_frac_max = num(m, "err_frac_max");
    M.err_frac_median = num(m, "err_frac_median");
    M.err_frac_p99 = num(m, "err_frac_p99");
    M.nonfinite = integer<std::int64_t>(m, "nonfinite");
    M.ref_overflow = integer<std::int64_t>(m, "ref_overflow");
    M.first_nonfinite = integer<std::int64_t>(m, "first_nonfinite", -1);
    M.unwritten = integer<std::int64_t>(m, "unwritten");
    M.first_unwritten = integer<std::int64_t>(m, "first_unwritten", -1);
    M.guard_violations = integer<std::int64_t>(m, "guard_violations");
    M.first_guard_violation = str(m, "first_guard_violation");
    M.deterministic = !m.contains("deterministic") || m.at("deterministic").get<bool>();
    M.nondeterministic_elements = integer<std::int64_t>(m, "nondeterministic_elements");
    M.ref_max_abs = num(m, "ref_max_abs");
  }
  if (j.contains("bound")) c.bound = bound_from_json(j.at("bound"));
  if (j.contains("envelope")) c.envelope = bound_from_json(j.at("envelope"));
  if (j.contains("evidence")) c.evidence = j.at("evidence").get<std::vector<std::string>>();
  if (j.contains("order")) {
    const json& o = j.at("order");
    OrderRecord r;
    r.source = str(o, "source");
    if (r.source != "revealed" && r.source != "file") throw InputError("case '" + c.case_id + "': unknown order source '" + r.source + "'");
    r.file = str(o, "file");
    r.m = size_field(o, "m");
    r.n = size_field(o, "n");
    r.k = size_field(o, "k");
    r.tree = str(o, "tree");
    r.arithmetic = str(o, "arithmetic");
    r.checks = str(o, "checks");
    r.launches = integer<std::int64_t>(o, "launches");
    r.used = o.contains("used") && o.at("used").get<bool>();
    r.fallback = str(o, "fallback");
    c.order = std::move(r);
  }
  if (j.contains("determinism")) {
    c.determinism = str(j, "determinism");
    if (c.determinism != "deterministic" && c.determinism != "run_to_run")
      throw InputError("case '" + c.case_id + "': unknown determinism '" + c.determinism + "' (deterministic, run_to_run)");
  }
  if (j.contains("layout")) c.layout = str(j, "layout");
  if (j.contains("batches")) {
    if (!j.at("batches").is_array()) throw InputError("case '" + c.case_id + "': 'batches' must be an array");
    for (const json& o : j.at("batches")) {
      if (!o.is_object() || !o.contains("passed") || !o.at("passed").is_boolean())
        throw InputError("case '" + c.case_id + "': each of 'batches' must be an object with a boolean 'passed'");
      c.batches.push_back({o.at("passed").get<bool>(), num(o, "max_abs"), num(o, "max_fraction"), o.contains("reason") ? str(o, "reason") : ""});
    }
  }
  if (j.contains("spread")) {
    const json& o = j.at("spread");
    if (!o.is_object()) throw InputError("case '" + c.case_id + "': 'spread' must be an object");
    RunSpread s;
    s.runs = integer<int>(o, "runs");
    s.differing_runs = integer<int>(o, "differing_runs");
    s.elements = integer<std::int64_t>(o, "elements");
    s.max_elements = integer<std::int64_t>(o, "max_elements");
    s.max_ulps = num(o, "max_ulps");
    s.max_frac = num(o, "max_frac");
    s.worst_index = integer<std::int64_t>(o, "worst_index", -1);
    s.worst_diff = num(o, "worst_diff");
    s.worst_allowed = num(o, "worst_allowed");
    s.worst_allowed_ulps = num(o, "worst_allowed_ulps");
    s.bound = str(o, "bound");
    s.order_free = integer<std::int64_t>(o, "order_free");
    s.order_free_differ = integer<std::int64_t>(o, "order_free_differ");
    s.envelope_exceed = integer<std::int64_t>(o, "envelope_exceed");
    s.envelope_worst = num(o, "envelope_worst");
    c.spread = s;
  }
  if (j.contains("tile")) {
    const json& t = j.at("tile");
    c.tile_m = integer<std::int64_t>(t, "m");
    c.tile_n = integer<std::int64_t>(t, "n");
    if (c.tile_m < 0 || c.tile_n < 0) throw InputError("case '" + c.case_id + "': a tile extent must not be negative");
  }
  if (j.contains("worst_envelope"))
    for (const auto& w : j.at("worst_envelope"))
      c.worst_envelope.push_back({integer<std::int64_t>(w, "i"), integer<std::int64_t>(w, "j"), num(w, "frac")});
  if (j.contains("error_map")) {
    const json& e = j.at("error_map");
    ErrorMap em;
    em.rows = integer<std::int64_t>(e, "rows");
    em.cols = integer<std::int64_t>(e, "cols");
    em.cell_rows = integer<std::int64_t>(e, "cell_rows", 1);
    em.cell_cols = integer<std::int64_t>(e, "cell_cols", 1);
    if (em.rows < 0 || em.cols < 0 || em.rows > kErrorMapCells || em.cols > kErrorMapCells || em.cell_rows < 1 || em.cell_cols < 1 ||
        !e.contains("max_frac") || !e.at("max_frac").is_array() ||
        e.at("max_frac").size() != static_cast<std::size_t>(em.rows * em.cols))
      throw InputError("case '" + c.case_id + "': malformed error_map (rows x cols cells, at most " + std::to_string(kErrorMapCells) +
                       " a side, and max_frac with rows * cols values)");
    for (const auto& v : e.at("max_frac")) em.max_frac.push_back(number_from_json(v));
    if (e.contains("min_correct_bits")) {
      const json& b = e.at("min_correct_bits");
      if (!b.is_array() || b.size() != em.max_frac.size())
        throw InputError("case '" + c.case_id + "': malformed error_map: min_correct_bits must hold rows * cols values");
      for (const auto& v : b) em.min_correct_bits.push_back(number_from_json(v));
    }
    c.error_map = std::move(em);
  }
  c.gate_fraction = num(j, "gate_fraction");
  c.worst_index = integer<std::int64_t>(j, "worst_index", -1);
  if (j.contains("worst"))
    for (const auto& w : j.at("worst")) {
      WorstElement e;
      e.i = integer<std::int64_t>(w, "i");
      e.j = integer<std::int64_t>(w, "j");
      e.got_bits = str(w, "got_bits");
      e.got = num(w, "got");
      e.ref_hi = num(w, "ref_hi");
      e.ref_lo = num(w, "ref_lo");
      e.ref_bits = str(w, "ref_bits");
      e.err = num(w, "err");
      e.allowed = num(w, "allowed");
      e.ulps = num(w, "ulps");
      e.abs_sum = num(w, "abs_sum");
      c.worst.push_back(e);
    }
  c.time_ms_median = num(j, "time_ms_median");
  c.time_ms_mean = num(j, "time_ms_mean");
  c.timed_runs = integer<int>(j, "timed_runs");
  c.tflops = num(j, "tflops");
  if (j.contains("achieved"))
    for (const auto& [k, v] : j.at("achieved").items()) c.achieved[k] = number_from_json(v);
  c.repro = str(j, "repro");
  c.wall_seconds = num(j, "wall_seconds");
  c.baseline = str(j, "baseline");
  if (j.contains("baseline_max_abs")) c.baseline_max_abs = num(j, "baseline_max_abs");
  if (j.contains("baseline_ratio")) c.baseline_ratio = num(j, "baseline_ratio");
  if (j.contains("speed_ratio")) c.speed_ratio = num(j, "speed_ratio");
  return c;
}

json to_json(const RunResult& r) {
  json cases = json::array();
  for (const auto& c : r.cases) cases.push_back(to_json(c));
  json notes = json::object();
  for (const auto& [k, v] : r.notes) notes[k] = v;
  json run = {{"fpcert_results", 1},
          {"kind", std::string(to_string(r.kind))},
          {"environment", to_json(r.env)},
          {"suite", r.suite},
          {"kernels", r.kernels},
          {"passed", r.passed()},
          {"counts",
           {{"pass", r.count(CaseStatus::Pass)},
            {"fail", r.count(CaseStatus::Fail)},
            {"not_supported", r.count(CaseStatus::NotSupported)},
            {"crashed", r.count(CaseStatus::Crashed)},
            {"hung", r.count(CaseStatus::Hung)},
            {"error", r.count(CaseStatus::Error)}}},
          {"notes", notes},
          {"cases", cases}};
  if (!r.mutation.empty()) {
    json mutation = json::array();
    for (const auto& m : r.mutation) mutation.push_back(to_json(m));
    run["mutation"] = mutation;
  }
  if (r.shard.present()) {
    run["shard"] = {{"shard", r.shard.shard}, {"run", r.shard.run}, {"plan", r.shard.plan}};
    if (r.shard.evidence) run["shard"]["evidence"] = true;
  }
  return run;
}

RunResult run_from_json(const json& j) {
  if (!j.is_object() || !j.contains("cases")) throw InputError("not an fpcert results object (no 'cases')");
  RunResult r;
  r.kind = parse_run_kind(str(j, "kind")).value_or(RunKind::Gemm);
  if (j.contains("environment")) r.env = environment_from_json(j.at("environment"));
  r.suite = str(j, "suite");
  if (j.contains("kernels")) r.kernels = j.at("kernels").get<std::vector<std::string>>();
  if (j.contains("notes"))
    for (const auto& [k, v] : j.at("notes").items()) r.notes[k] = v.is_string() ? v.get<std::string>() : v.dump();
  if (j.contains("shard")) {
    const json& s = j.at("shard");
    r.shard.shard = str(s, "shard");
    r.shard.run = str(s, "run");
    if (s.contains("plan")) r.shard.plan = s.at("plan").get<std::vector<std::string>>();
    r.shard.evidence = s.contains("evidence") && s.at("evidence").is_boolean() && s.at("evidence").get<bool>();
  }
  for (const auto& c : j.at("cases")) r.cases.push_back(case_from_json(c));
  if (j.contains("mutation"))
    for (const auto& m : j.at("mutation")) r.mutation.push_back(mutation_from_json(m));
  return r;
}

RunResult parse_results(std::string_view text, const std::string& path) {
  try {
    // A whole results object, or JSON lines (one case per line, as written during a run).
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first == std::string::npos) throw InputError("results file '" + path + "' is empty");
    json whole;
    bool is_whole = false;
    if (text[first] == '{' || text[first] == '[') {
      try {
        whole = json::parse(text);
        is_whole = whole.is_object() && whole.contains("cases");
      } catch (const json::parse_error&) {
        is_whole = false;
      }
    }
    if (is_whole) return run_from_json(whole);
    RunResult r;
    std::size_t pos = 0, lineno = 0, dropped_bytes = 0;
    bool dropped = false;
    while (pos < text.size()) {
      const std::size_t nl = text.find('\n', pos);
      const bool complete = nl != std::string_view::npos;
      const std::string_view line = text.substr(pos, complete ? nl - pos : std::string_view::npos);
      pos = complete ? nl + 1 : text.size();
      ++lineno;
      if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
      json j;
      try {
        j = json::parse(line);
      } catch (const json::parse_error& e) {
        if (!complete) {  // the last line, cut short: what a run killed while appending leaves
          dropped = true;
          dropped_bytes = line.size();
          break;
        }
        throw InputError("results file '" + path + "', line " + std::to_string(lineno) + ": " + e.what());
      }
      if (j.is_object() && j.contains("environment") && !j.contains("case")) {
        r.env = environment_from_json(j.at("environment"));
        r.suite = str(j, "suite");
        if (j.contains("kind")) r.kind = parse_run_kind(str(j, "kind")).value_or(RunKind::Gemm);
        continue;
      }
      try {
        r.cases.push_back(case_from_json(j));
      } catch (const std::exception& e) {
        throw InputError("results file '" + path + "', line " + std::to_string(lineno) + ": " + e.what());
      }
    }
    if (dropped)
      r.notes["dropped_lines"] = "1 incomplete last line (" + std::to_string(dropped_bytes) + " bytes, line " + std::to_string(lineno) +
                                 ") of '" + path + "' was dropped: the run that wrote it was cut short; " +
                                 std::to_string(r.cases.size()) + " complete case(s) used";
    if (r.cases.empty()) throw InputError("results file '" + path + "' holds no " + (dropped ? "complete " : "") + "cases");
    if (r.suite.empty()) r.suite = r.cases.front().suite;
    return r;
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    throw InputError("results file '" + path + "': " + e.what());
  }
}

RunResult read_results(const std::string& path) {
  return parse_results(read_input_file(path, kResultsLimit, "results file"), path);
}

}  // namespace fpcert
