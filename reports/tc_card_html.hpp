// reports/tc_card_html.hpp — the tensor-core behaviour cards as HTML: one section per instruction
// (verdict, the fitted block model, every probed property with its deciding queries, the validation
// counts and any disagreement with its inputs, the comparison with published models), and a
// self-contained page around them (inline CSS, no script, no network).
#pragma once

#include <string>
#include <vector>

#include "oracle/order/tc_card.hpp"

namespace fpcert {

/// <section> elements, one per card, preceded by a summary table of all of them.
std::string tc_cards_section(const std::vector<BehaviourCard>& cards);

/// A whole HTML document: title, the command that produced it, the section.
std::string tc_cards_page(const std::vector<BehaviourCard>& cards, const std::string& command);

}  // namespace fpcert
