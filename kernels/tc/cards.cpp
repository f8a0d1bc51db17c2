// kernels/tc/cards.cpp — reading, installing and applying behaviour cards (kernels/tc/cards.hpp).
#include "kernels/tc/cards.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "base/input_file.hpp"
#include "kernels/tc/instruction.hpp"

namespace fpcert::tc {

namespace {

CardSet& installed() {
  static CardSet s;
  return s;
}

std::vector<std::string> split_ids(const std::string& list) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t bar = list.find('|', start);
    const std::string id = list.substr(start, bar == std::string::npos ? std::string::npos : bar - start);
    if (!id.empty()) out.push_back(id);
    if (bar == std::string::npos) break;
    start = bar + 1;
  }
  return out;
}

bool directed(Rounding r) { return r != Rounding::NearestEven && r != Rounding::NearestAway; }

}  // namespace

const BehaviourCard* CardSet::find(std::string_view id) const {
  for (const BehaviourCard& c : cards)
    if (c.id == id) return &c;
  return nullptr;
}

CardSet read_cards(const std::string& path) {
  // Bounded and checked like every input (a folder, a FIFO, a huge file: refused naming it); every
  // error names the file (a bare "basic_filebuf::underflow" or "key not found" named nothing).
  const std::string text = read_input_file(path, kResultsLimit, "--card");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw InputError("--card " + path + ": not valid JSON (" + std::string(e.what()) + ")");
  }
  CardSet s;
  const auto add = [&](const nlohmann::json& c) {
    try {
      s.cards.push_back(card_from_json(c));
    } catch (const nlohmann::json::exception& e) {
      throw InputError("--card " + path + ": " + e.what());
    } catch (const InputError& e) {
      throw InputError("--card " + path + ": " + e.what());
    }
  };
  if (j.is_object() && j.contains("cards")) {
    if (!j.at("cards").is_array()) throw InputError("--card " + path + ": 'cards' is not a list");
    for (const auto& c : j.at("cards")) add(c);
  } else {
    add(j);
  }
  std::string devices;
  for (const BehaviourCard& c : s.cards)
    if (c.supported && devices.find(c.device) == std::string::npos) devices += (devices.empty() ? "" : "; ") + c.device;
  s.source = fmt::format("card file {} (measured on {})", path, devices.empty() ? "no device" : devices);
  return s;
}

void install_cards(CardSet set) { installed() = std::move(set); }
const CardSet& installed_cards() { return installed(); }

std::string card_unusable(const CardSet& set, std::string_view id) {
  const BehaviourCard* c = set.find(id);
  if (!c) return set.cards.empty() ? "no behaviour card installed (certify --card F, or a device to probe)" : fmt::format("no card of {} in {}", id, set.source);
  if (!c->supported) return fmt::format("the card of {} says not supported ({})", id, c->why);
  if (c->integer) return fmt::format("{} is an integer instruction", id);
  if (!c->passed())
    return fmt::format("the card of {} did not validate ({} probe answers not reproduced, {} of {} validation samples disagree{})", id,
                       c->probe_disagreements, c->validation_disagreements(), c->validated_samples(), c->why.empty() ? "" : "; " + c->why);
  return {};
}

SummationOrder with_cards(const SummationOrder& o, const CardSet& set) {
  SummationOrder r = o;
  BlockModel& bm = r.block_model;
  if (bm.instruction.empty()) return r;
  const bool tc = on_tensor_cores(o);
  if (tc) {
    if (bm.params) return r;  // already the arithmetic's own (a software model)
    if (const std::string why = card_unusable(set, bm.instruction); !why.empty()) {
      bm.source += "; " + why;
      return r;
    }
    const BehaviourCard& c = *set.find(bm.instruction);
    bm.params = c.params;
    bm.measured = true;
    bm.fused_length = c.params.fused_length;
    bm.block_rounding = c.params.block_rounding;
    bm.source = fmt::format("behaviour card of {} ({} validation samples bit for bit) from {}", c.id, c.validated_samples(), set.source);
    return r;
  }
  if (o.kind != OrderKind::Unknown || bm.params) return r;
  // An unknown order on tensor cores: the coarsest of the listed cards (fewest bits kept, directed rounding).
  std::optional<FusedDotParams> worst;
  std::string used;
  for (const std::string& id : split_ids(bm.instruction)) {
    if (const std::string why = card_unusable(set, id); !why.empty()) {
      bm.source = "nominal accumulator bits: " + why;
      return r;
    }
    const FusedDotParams& p = set.find(id)->params;
    if (!worst) worst = p;
    else {
      worst->align_bits = std::min(worst->align_bits, p.align_bits);
      worst->acc_bits = std::min(worst->acc_bits, p.acc_bits);
      if (directed(p.block_rounding)) worst->block_rounding = Rounding::TowardZero;
      worst->groups = std::max(worst->groups, p.groups);
      if (p.grouping != Grouping::None) worst->grouping = p.grouping;
    }
    used += (used.empty() ? "" : ", ") + id;
  }
  if (!worst) return r;
  bm.params = worst;
  bm.source = fmt::format("the coarsest of the behaviour cards of {} from {}", used, set.source);
  return r;
}

KernelTraits with_installed_cards(const KernelTraits& t) {
  KernelTraits r = t;
  r.sum_order = with_cards(t.sum_order, installed());
  return r;
}

std::vector<std::string> instructions_of(const std::vector<KernelTraits>& traits) {
  std::vector<std::string> out;
  for (const KernelTraits& t : traits)
    for (const std::string& id : split_ids(t.sum_order.block_model.instruction))
      if (std::find(out.begin(), out.end(), id) == out.end()) out.push_back(id);
  return out;
}

}  // namespace fpcert::tc
