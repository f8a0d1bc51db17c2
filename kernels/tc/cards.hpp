// kernels/tc/cards.hpp — the behaviour cards a certify run uses: where their block models come from
// (a card file, or this device probed at the run's start), and how they reach a kernel's declared order
// (docs/tensor_cores.md, "Certifying tensor-core kernels").
//
// A kernel's tensor-core block names its instruction (BlockModel::instruction). Once the card of that
// instruction is installed, and only if it passed (every probe answer and every validation sample
// reproduced bit for bit), the block model becomes the card's fitted parameters: the bitwise tier then
// composes them with the kernel's K-loop. An unknown order that lists the instructions it may run
// (cuBLAS) takes the coarsest of their cards' measured alignment and result bits for its envelope.
// Nothing is ever assumed: without an installed card the order keeps its placeholder.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kernels/kernel.hpp"
#include "oracle/order/tc_card.hpp"

namespace fpcert::tc {

/// The cards of one run, by instruction id, and where they came from ("probed on NVIDIA H200 (sm_90) at
/// certify start", "card file F: measured on ...").
struct CardSet {
  std::vector<BehaviourCard> cards;
  std::string source;
  const BehaviourCard* find(std::string_view id) const;
};

/// Cards from `fpcert probe tensor-cores --json` output (an object with "cards", or one card). InputError
/// when the file is unreadable or malformed.
CardSet read_cards(const std::string& path);

/// The process's installed cards (certify installs them before any case runs; forked isolation
/// children inherit them). install_cards replaces the set; an empty set uninstalls.
void install_cards(CardSet set);
const CardSet& installed_cards();

/// Why the card of `id` in `set` cannot serve a bitwise verdict (absent, not supported, disagreements,
/// an integer instruction); empty when it can.
std::string card_unusable(const CardSet& set, std::string_view id);

/// Whether the order's sums over K run on tensor-core blocks: a tensor-core K-loop, or split products or
/// power-of-two scaling whose terms are tensor-core K-loops (their block model: the instruction's card).
inline bool on_tensor_cores(const SummationOrder& o) {
  return o.kind == OrderKind::TensorCoreBlock ||
         ((o.kind == OrderKind::SplitProducts || o.kind == OrderKind::Pow2Scaled) && o.term_order == OrderKind::TensorCoreBlock);
}

/// The order with the installed cards applied: a tensor-core block (or split products on tensor cores)
/// whose instruction has a usable card gets the card's parameters (measured = true, source saying which
/// card); an unknown order listing instructions gets, when every listed card is usable, the coarsest
/// parameters among them (for the envelope only: the order stays unknown). Otherwise unchanged, with the
/// reason in block_model.source.
SummationOrder with_cards(const SummationOrder& o, const CardSet& set);
/// The traits with with_cards applied to their order.
KernelTraits with_installed_cards(const KernelTraits& t);

/// The instruction ids these traits' orders name, each once, in order (what a run must probe).
std::vector<std::string> instructions_of(const std::vector<KernelTraits>& traits);

}  // namespace fpcert::tc
