// results/elementwise.cpp — the elementwise record's labels and JSON (results/elementwise.hpp).
#include "results/elementwise.hpp"

#include <cmath>

#include "base/error.hpp"

namespace fpcert {

std::string ulp_bin_label(std::size_t i) {
  if (i <= 4) return std::to_string(i);
  if (i == 34) return ">2^31";
  if (i >= 35) return "NaN";
  const int k = static_cast<int>(i) - 3;  // bin (2^k, 2^(k+1)]
  return std::to_string((std::uint64_t{1} << k) + 1) + "-" + std::to_string(std::uint64_t{1} << (k + 1));
}

namespace {
nlohmann::json point_json(const ElementwiseResult::Point& p) {
  nlohmann::json j = {{"input_bits", p.input_bits}, {"got_bits", p.got_bits}, {"ref_bits", p.ref_bits}, {"ulps", p.ulps}};
  if (std::isfinite(p.input)) j["input"] = p.input;  // JSON has no Inf or NaN: the bits say it
  return j;
}
ElementwiseResult::Point point_from(const nlohmann::json& j) {
  if (!j.is_object()) throw InputError("elementwise: a point must be an object");
  ElementwiseResult::Point p;
  p.input_bits = j.value("input_bits", "");
  p.input = j.value("input", 0.0);
  p.got_bits = j.value("got_bits", "");
  p.ref_bits = j.value("ref_bits", "");
  p.ulps = j.value("ulps", std::uint64_t{0});
  return p;
}
}  // namespace

nlohmann::json to_json(const ElementwiseResult& e) {
  nlohmann::json listed = nlohmann::json::array();
  for (const auto& p : e.listed) listed.push_back(point_json(p));
  return {{"function", e.function},       {"in_format", e.in_format},   {"out_format", e.out_format},
          {"claim", e.claim},             {"sweep", e.sweep},           {"inputs_note", e.inputs_note},
          {"inputs", e.inputs},           {"above_claim", e.above_claim}, {"mpfr_decided", e.mpfr_decided},
          {"undecided", e.undecided},     {"unclaimed", e.unclaimed},     {"max_ulps", e.max_ulps},     {"worst", point_json(e.worst)},
          {"listed", listed},             {"histogram", e.histogram},   {"seconds", e.seconds}};
}

ElementwiseResult elementwise_from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw InputError("'elementwise' must be an object");
  try {
    ElementwiseResult e;
    e.function = j.value("function", "");
    e.in_format = j.value("in_format", "");
    e.out_format = j.value("out_format", "");
    e.claim = j.value("claim", "");
    e.sweep = j.value("sweep", "");
    e.inputs_note = j.value("inputs_note", "");
    e.inputs = j.value("inputs", std::uint64_t{0});
    e.above_claim = j.value("above_claim", std::uint64_t{0});
    e.mpfr_decided = j.value("mpfr_decided", std::uint64_t{0});
    e.undecided = j.value("undecided", std::uint64_t{0});
    e.unclaimed = j.value("unclaimed", std::uint64_t{0});
    e.max_ulps = j.value("max_ulps", std::uint64_t{0});
    if (j.contains("worst")) e.worst = point_from(j.at("worst"));
    if (j.contains("listed"))
      for (const auto& p : j.at("listed")) e.listed.push_back(point_from(p));
    if (j.contains("histogram")) e.histogram = j.at("histogram").get<std::vector<std::uint64_t>>();
    e.seconds = j.value("seconds", 0.0);
    return e;
  } catch (const nlohmann::json::exception& x) {
    throw InputError(std::string("'elementwise': ") + x.what());
  }
}

}  // namespace fpcert
