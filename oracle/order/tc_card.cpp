// oracle/order/tc_card.cpp — JSON of the tensor-core behaviour card (oracle/order/tc_card.hpp).
#include "oracle/order/tc_card.hpp"

#include <cstdio>

#include "base/error.hpp"

namespace fpcert {
namespace {

using nlohmann::json;

std::string hex(std::uint32_t v) { return code_hex(v); }
std::uint32_t unhex(const json& j) {
  if (j.is_number_unsigned()) return j.get<std::uint32_t>();
  if (!j.is_string()) throw InputError("expected a hex code string, got " + j.dump());
  const std::string s = j.get<std::string>();
  char* end = nullptr;
  const unsigned long long v = std::strtoull(s.c_str(), &end, 16);
  if (s.empty() || *end != '\0' || v > 0xFFFFFFFFull) throw InputError("bad hex code '" + s + "'");
  return static_cast<std::uint32_t>(v);
}
json hex_list(const std::vector<std::uint32_t>& v) {
  json a = json::array();
  for (std::uint32_t x : v) a.push_back(hex(x));
  return a;
}
std::vector<std::uint32_t> unhex_list(const json& j) {
  std::vector<std::uint32_t> v;
  for (const json& x : j) v.push_back(unhex(x));
  return v;
}
const Format& format_of(const json& j, const char* key) {
  const std::string tag = j.at(key).get<std::string>();
  const Format* f = find_format(tag);
  if (!f) throw InputError(std::string(key) + ": unknown format '" + tag + "' (known: " + format_tags() + ")");
  return *f;
}
template <typename E, typename Parse>
E enum_of(const json& j, const char* key, Parse parse) {
  const std::string s = j.at(key).get<std::string>();
  const auto v = parse(s);
  if (!v) throw InputError(std::string(key) + ": unknown value '" + s + "'");
  return *v;
}

json query_json(const CardQuery& q) {
  json p = json::array();
  for (const auto& x : q.products) p.push_back({{"i", x.i}, {"a", hex(x.a)}, {"b", hex(x.b)}});
  return {{"products", p}, {"c", hex(q.c)}, {"observed", hex(q.observed)}, {"model", hex(q.model)}, {"note", q.note}};
}
CardQuery query_from(const json& j) {
  CardQuery q;
  for (const json& x : j.at("products")) q.products.push_back({x.at("i").get<int>(), unhex(x.at("a")), unhex(x.at("b"))});
  q.c = unhex(j.at("c"));
  q.observed = unhex(j.at("observed"));
  q.model = unhex(j.at("model"));
  q.note = j.value("note", "");
  return q;
}

}  // namespace

std::string code_hex(std::uint32_t code) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%x", code);
  return buf;
}

std::uint64_t BehaviourCard::validated_samples() const {
  std::uint64_t n = 0;
  for (const auto& v : validation) n += v.samples;
  return n;
}
std::uint64_t BehaviourCard::validation_disagreements() const {
  std::uint64_t n = 0;
  for (const auto& v : validation) n += v.disagreements;
  return n;
}
bool BehaviourCard::passed() const {
  return supported && probe_disagreements == 0 && validated_samples() > 0 && validation_disagreements() == 0;
}

json to_json(const FusedDotParams& p) {
  return {{"a", std::string(p.a.tag)},
          {"b", std::string(p.b.tag)},
          {"acc", std::string(p.acc.tag)},
          {"operand_read", std::string(to_string(p.operand_read))},
          {"input_subnormals", p.input_subnormals},
          {"product_frac_bits", p.product_frac_bits},
          {"wide_block", p.wide_block},
          {"fused_length", p.fused_length},
          {"grouping", std::string(to_string(p.grouping))},
          {"groups", p.groups},
          {"interleave_run", p.interleave_run},
          {"align_bits", p.align_bits},
          {"reference", std::string(to_string(p.reference))},
          {"align_rounding", std::string(to_string(p.align_rounding))},
          {"c_join", std::string(to_string(p.c_join))},
          {"align_floor", p.align_floor == kNoAlignFloor ? json(nullptr) : json(p.align_floor)},
          {"acc_bits", p.acc_bits},
          {"block_rounding", std::string(to_string(p.block_rounding))},
          {"output_subnormals", p.output_subnormals},
          {"overflow", std::string(to_string(p.overflow))},
          {"nan_code", hex(static_cast<std::uint32_t>(p.nan_code))},
          {"ieee_negative_zero", p.ieee_negative_zero}};
}

FusedDotParams fused_params_from_json(const json& j) {
  try {
    FusedDotParams p;
    p.a = format_of(j, "a");
    p.b = format_of(j, "b");
    p.acc = format_of(j, "acc");
    p.operand_read = enum_of<Rounding>(j, "operand_read", parse_rounding);
    p.input_subnormals = j.at("input_subnormals").get<bool>();
    p.product_frac_bits = j.at("product_frac_bits").get<int>();
    p.wide_block = j.at("wide_block").get<bool>();
    p.fused_length = j.at("fused_length").get<int>();
    p.grouping = enum_of<Grouping>(j, "grouping", parse_grouping);
    p.groups = j.at("groups").get<int>();
    p.interleave_run = j.contains("interleave_run") ? j.at("interleave_run").get<int>() : 0;  // absent in cards before it existed
    p.align_bits = j.at("align_bits").get<int>();
    p.reference = enum_of<AlignReference>(j, "reference", parse_align_reference);
    p.align_rounding = enum_of<AlignRounding>(j, "align_rounding", parse_align_rounding);
    p.c_join = enum_of<CJoin>(j, "c_join", parse_c_join);
    p.align_floor = j.at("align_floor").is_null() ? kNoAlignFloor : j.at("align_floor").get<int>();
    p.acc_bits = j.at("acc_bits").get<int>();
    p.block_rounding = enum_of<Rounding>(j, "block_rounding", parse_rounding);
    p.output_subnormals = j.at("output_subnormals").get<bool>();
    p.overflow = enum_of<OverflowTo>(j, "overflow", parse_overflow_to);
    p.nan_code = unhex(j.at("nan_code"));
    p.ieee_negative_zero = j.at("ieee_negative_zero").get<bool>();
    if (const std::string bad = check(p); !bad.empty()) throw InputError("block model parameters: " + bad);
    return p;
  } catch (const json::exception& e) {
    throw InputError(std::string("block model parameters: ") + e.what());
  }
}

json to_json(const BehaviourCard& c) {
  json props = json::array();
  for (const auto& p : c.properties) {
    json ex = json::array();
    for (const auto& q : p.examples) ex.push_back(query_json(q));
    props.push_back({{"name", p.name},
                     {"method", p.method},
                     {"observed", p.observed},
                     {"conclusion", p.conclusion},
                     {"queries", p.queries},
                     {"disagree", p.disagree},
                     {"examples", ex},
                     {"alternatives", p.alternatives}});
  }
  json val = json::array();
  for (const auto& v : c.validation)
    val.push_back({{"distribution", v.distribution}, {"samples", v.samples}, {"disagreements", v.disagreements}});
  json dis = json::array();
  for (const auto& d : c.disagreements)
    dis.push_back({{"distribution", d.distribution},
                   {"a", hex_list(d.a)},
                   {"b", hex_list(d.b)},
                   {"c", hex(d.c)},
                   {"device", hex(d.device)},
                   {"model", hex(d.model)}});
  json pub = json::array();
  for (const auto& r : c.published)
    pub.push_back({{"property", r.property},
                   {"fpcert", r.fpcert},
                   {"mma_sim", r.mma_sim},
                   {"khattak_mikaitis", r.khattak_mikaitis},
                   {"verdict", r.verdict}});
  json j = {{"kind", "tensor-core-card"},
            {"instruction", c.instruction},
            {"id", c.id},
            {"family", c.family},
            {"device", c.device},
            {"shape", {{"m", c.m}, {"n", c.n}, {"k", c.k}}},
            {"a", c.a_format},
            {"b", c.b_format},
            {"acc", c.acc_format},
            {"supported", c.supported},
            {"why", c.why},
            {"integer", c.integer},
            {"summary", c.summary},
            {"properties", props},
            {"probe_queries", c.probe_queries},
            {"probe_disagreements", c.probe_disagreements},
            {"validation", val},
            {"validated_samples", c.validated_samples()},
            {"validation_disagreements", c.validation_disagreements()},
            {"disagreements", dis},
            {"published", pub},
            {"passed", c.passed()},
            {"seconds", c.seconds}};
  if (c.integer) j["integer_wraps"] = c.integer_wraps;
  else if (c.supported) j["params"] = to_json(c.params);
  return j;
}

BehaviourCard card_from_json(const json& j) {
  try {
    if (j.value("kind", "") != "tensor-core-card") throw InputError("not a tensor-core card (kind != tensor-core-card)");
    BehaviourCard c;
    c.instruction = j.at("instruction").get<std::string>();
    c.id = j.at("id").get<std::string>();
    c.family = j.at("family").get<std::string>();
    c.device = j.at("device").get<std::string>();
    c.m = j.at("shape").at("m").get<int>();
    c.n = j.at("shape").at("n").get<int>();
    c.k = j.at("shape").at("k").get<int>();
    c.a_format = j.at("a").get<std::string>();
    c.b_format = j.at("b").get<std::string>();
    c.acc_format = j.at("acc").get<std::string>();
    c.supported = j.at("supported").get<bool>();
    c.why = j.value("why", "");
    c.integer = j.at("integer").get<bool>();
    c.summary = j.value("summary", "");
    if (c.integer) c.integer_wraps = j.value("integer_wraps", true);
    else if (c.supported) c.params = fused_params_from_json(j.at("params"));
    for (const json& p : j.at("properties")) {
      CardProperty cp;
      cp.name = p.at("name").get<std::string>();
      cp.method = p.value("method", "");
      cp.observed = p.value("observed", "");
      cp.conclusion = p.value("conclusion", "");
      cp.queries = p.value("queries", 0);
      cp.disagree = p.value("disagree", 0);
      for (const json& q : p.value("examples", json::array())) cp.examples.push_back(query_from(q));
      cp.alternatives = p.value("alternatives", std::vector<std::string>{});
      c.properties.push_back(std::move(cp));
    }
    c.probe_queries = j.value("probe_queries", 0);
    c.probe_disagreements = j.value("probe_disagreements", 0);
    for (const json& v : j.at("validation"))
      c.validation.push_back({v.at("distribution").get<std::string>(), v.at("samples").get<std::uint64_t>(),
                              v.at("disagreements").get<std::uint64_t>()});
    for (const json& d : j.value("disagreements", json::array()))
      c.disagreements.push_back({d.at("distribution").get<std::string>(), unhex_list(d.at("a")), unhex_list(d.at("b")),
                                 unhex(d.at("c")), unhex(d.at("device")), unhex(d.at("model"))});
    for (const json& r : j.value("published", json::array()))
      c.published.push_back({r.at("property").get<std::string>(), r.value("fpcert", ""), r.value("mma_sim", ""),
                             r.value("khattak_mikaitis", ""), r.value("verdict", "")});
    c.seconds = j.value("seconds", 0.0);
    return c;
  } catch (const json::exception& e) {
    throw InputError(std::string("tensor-core card: ") + e.what());
  }
}

}  // namespace fpcert
