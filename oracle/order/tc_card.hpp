// oracle/order/tc_card.hpp — the tensor-core behaviour card as plain data (what `fpcert probe tensor-cores`
// measured for one instruction, the fitted block model, its validation, and how it compares with the
// published models), with its JSON form. The probe (kernels/tc/probe.hpp) fills it; reports/ renders
// it; docs/tensor_cores.md describes every field.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "oracle/fused_dot.hpp"

namespace fpcert {

/// One probe query and its answer: D = C + sum a_i b_i for the listed (nonzero) positions.
struct CardQuery {
  struct Pos {
    int i = 0;
    std::uint32_t a = 0, b = 0;  ///< container codes
  };
  std::vector<Pos> products;  ///< positions with a nonzero operand (every other product is +0 * +0)
  std::uint32_t c = 0;
  std::uint32_t observed = 0;  ///< D from the instruction
  std::uint32_t model = 0;     ///< D from the fitted model
  std::string note;            ///< what the query asks, e.g. "1 - 1 + C = 2^-25"
};

/// One measured property: how it was probed, what came back, what follows.
struct CardProperty {
  std::string name;        ///< e.g. "alignment window"
  std::string method;      ///< the probe inputs in words
  std::string observed;    ///< what the instruction answered, summarised
  std::string conclusion;  ///< the fitted value(s), e.g. "25 fraction bits below e_a + e_b"
  int queries = 0;         ///< queries run for this property
  int disagree = 0;        ///< of those, answers the final model does not reproduce
  std::vector<CardQuery> examples;  ///< the deciding queries (a few)
  std::vector<std::string> alternatives;  ///< other candidate values the probes could not tell apart
};

/// Model-versus-instruction comparison on one input distribution.
struct CardValidation {
  std::string distribution;  ///< uniform, normal, wide, cancellation, near-overflow, ties
  std::uint64_t samples = 0;
  std::uint64_t disagreements = 0;
};

/// A sample where the model and the instruction differ, with its inputs.
struct CardDisagreement {
  std::string distribution;
  std::vector<std::uint32_t> a, b;  ///< the row of A and column of B (k codes each)
  std::uint32_t c = 0, device = 0, model = 0;
};

/// One row of the comparison with published models.
struct CardPublished {
  std::string property;
  std::string fpcert;            ///< this card's value
  std::string mma_sim;           ///< MMA-Sim (Xie et al. 2025), "" when it has no model of this instruction
  std::string khattak_mikaitis;  ///< Khattak and Mikaitis (2025), same
  std::string verdict;           ///< "agrees with both", "differs from MMA-Sim", ...
};

struct BehaviourCard {
  std::string instruction;  ///< PTX spelling, e.g. mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
  std::string id;           ///< short name, e.g. mma_f16_f32
  std::string family;       ///< mma.sync or wgmma
  std::string device;       ///< where it was measured ("NVIDIA H200 (sm_90)", "simulated: ...", "recorded: ...")
  int m = 0, n = 0, k = 0;
  std::string a_format, b_format, acc_format;  ///< tags; "s8"/"s32" for the integer instruction
  bool supported = false;
  std::string why;          ///< when not supported: the reason ("needs sm_90a", "no device", ...)
  bool integer = false;
  bool integer_wraps = true;  ///< s32 accumulation wraps modulo 2^32 (else saturates)
  FusedDotParams params;      ///< the fitted model (floating-point instructions)
  std::string summary;        ///< describe(params), or the integer rule
  std::vector<CardProperty> properties;
  int probe_queries = 0, probe_disagreements = 0;  ///< every probe query against the final model
  std::vector<CardValidation> validation;
  std::vector<CardDisagreement> disagreements;  ///< the first few
  std::vector<CardPublished> published;
  double seconds = 0;

  std::uint64_t validated_samples() const;
  std::uint64_t validation_disagreements() const;
  /// Supported, every probe query and every validation sample reproduced bit for bit.
  bool passed() const;
};

/// A container code as the card writes it: "0x3c00".
std::string code_hex(std::uint32_t code);

nlohmann::json to_json(const FusedDotParams& p);
/// InputError on a malformed object (unknown format tag, bad enum name, check() failure).
FusedDotParams fused_params_from_json(const nlohmann::json& j);

nlohmann::json to_json(const BehaviourCard& c);
BehaviourCard card_from_json(const nlohmann::json& j);

}  // namespace fpcert
