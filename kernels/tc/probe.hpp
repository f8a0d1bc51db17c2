// kernels/tc/probe.hpp — the tensor-core probe: targeted queries measure each property of an MMA
// instruction (products, subnormals, alignment window, rounding, fused length and grouping, where C
// enters, Inf/NaN, overflow), the block model (oracle/fused_dot.hpp) is fitted to the answers, and the
// fitted model is validated against the instruction bit for bit on random and adversarial inputs.
// docs/tensor_cores.md describes every stage, its queries and its candidates.
//
// The probe only asks "D for these A, B, C": it runs the same way against the GPU (kernels/tc/device.cu),
// against the model with chosen parameters (a simulated instruction: the CPU tests check that the probe
// recovers them), and against recorded device answers (kernels/tc/recording.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernels/tc/instruction.hpp"
#include "oracle/fused_dot.hpp"
#include "oracle/order/tc_card.hpp"

namespace fpcert::tc {

class Recording;

/// One dot product asked of an instruction: D = C + sum_i a_i b_i, k container codes each.
struct DotQuery {
  std::vector<std::uint32_t> a, b;
  std::uint32_t c = 0;
};

/// Answers dot queries (one D code each).
class DotSource {
 public:
  virtual ~DotSource() = default;
  virtual std::vector<std::uint32_t> answer(const std::vector<DotQuery>& queries) = 0;
};

/// Where the probe starts: the instruction's formats, one block of k products, 25 alignment bits, RZ
/// to the accumulator's precision, its canonical NaN (every stage then measures its own parameters).
FusedDotParams starting_params(const InstructionSpec& spec);

/// Dot queries through an instruction: min(m, n) queries per MMA on its diagonal (row i of A with
/// column i of B and C[i][i]); every other element of A, B and C is +0.
std::unique_ptr<DotSource> instruction_dots(MmaInstruction& insn);

/// The s8 x s8 + s32 rule: the exact integer sum, wrapped modulo 2^32 or saturated.
std::uint32_t int_dot(bool wraps, const std::uint32_t* a, const std::uint32_t* b, int k, std::uint32_t c);

/// The block model as an instruction: every D element is fused_dot (or int_dot) of its row and column.
/// For the CPU tests and `fpcert probe tensor-cores --simulate`.
std::unique_ptr<MmaInstruction> make_model_instruction(const InstructionSpec& spec, const FusedDotParams& params, std::string origin);
std::unique_ptr<MmaInstruction> make_integer_model_instruction(const InstructionSpec& spec, bool wraps, std::string origin);

/// The validation's input distributions.
enum class Distribution : std::uint8_t { Uniform, Normal, Wide, Cancellation, NearOverflow, Ties };
inline constexpr Distribution kAllDistributions[] = {Distribution::Uniform,      Distribution::Normal,
                                                     Distribution::Wide,         Distribution::Cancellation,
                                                     Distribution::NearOverflow, Distribution::Ties};
std::string_view to_string(Distribution d);
std::optional<Distribution> parse_distribution(std::string_view s);

/// MMAs first_mma .. first_mma + count - 1 of a distribution: every element from Philox keyed by seed
/// and its global index, so any subset regenerates bit for bit on any machine. `fitted` places the
/// Ties distribution's terms around the window's last kept bit (ignored by the others).
MmaBatch validation_batch(const InstructionSpec& spec, Distribution d, std::uint64_t seed, std::uint64_t first_mma, int count,
                          const FusedDotParams* fitted);

/// The probe's random sample: the first kSampleCodes D elements (row-major) of MMA 0 of the uniform and
/// wide validation distributions with seed 1, as dot queries. Targeted queries place their terms in a
/// few positions and cannot tell every block structure apart (which k share a block, where C is added);
/// these dots take part in every fit (docs/tensor_cores.md, "FP8 mma.sync on Hopper"), and a recording
/// of seed 1 answers them from its tiles even when it predates them.
inline constexpr int kSampleCodes = 64;
inline constexpr std::uint64_t kSampleSeed = 1;
inline constexpr Distribution kSampleDistributions[] = {Distribution::Uniform, Distribution::Wide};
std::vector<DotQuery> sample_dots(const InstructionSpec& spec);

struct ProbeOptions {
  std::uint64_t samples = 10'000'000;  ///< validation samples (D elements), split over the distributions
  std::uint64_t seed = 1;              ///< validation inputs
  int max_listed = 8;                  ///< disagreements kept in the card
  Recording* record = nullptr;         ///< append validation tiles here (probe queries: wrap the DotSource)
  int record_tiles = 1;                ///< MMAs recorded per distribution
  std::function<void(const std::string&)> log;  ///< progress lines (may be empty)
};

/// Fit the block model of `spec` from targeted queries answered by `dots`. The card's properties,
/// params, probe counts and published comparison are filled; validation is not.
BehaviourCard fit_instruction(const InstructionSpec& spec, DotSource& dots, const std::string& origin);

/// Model versus instruction on opt.samples random and adversarial samples; fills card.validation and
/// card.disagreements.
void validate(BehaviourCard& card, const InstructionSpec& spec, MmaInstruction& insn, const ProbeOptions& opt);

/// False when the card's first stage (exact small-integer sums) failed: the answers are not this
/// instruction's, nothing was fitted, and validating would prove nothing.
bool layout_ok(const BehaviourCard& card);

/// fit_instruction through instruction_dots(insn), then validate (unless the layout check failed).
BehaviourCard probe_instruction(MmaInstruction& insn, const ProbeOptions& opt);

/// A card for an instruction this machine cannot run (supported = false, why).
BehaviourCard unsupported_card(const InstructionSpec& spec, const std::string& origin, const std::string& why);

/// The published models' parameters for Hopper (H100/H200), where they model the instruction:
/// MMA-Sim (github.com/microsoft/MMA-Sim, mmasim/simulator/nv_ptx.py) and Khattak and Mikaitis
/// (github.com/north-numerical-computing/MATLAB-tensor-core, models/H100TC.m).
std::optional<FusedDotParams> mma_sim_hopper(const InstructionSpec& spec);
std::optional<FusedDotParams> khattak_mikaitis_hopper(const InstructionSpec& spec);
/// Property-by-property comparison of a fitted card with both. `explains` (may be empty) says whether
/// a parameter set reproduces every probe answer: a published value that does is "not distinguished".
std::vector<CardPublished> compare_published(const InstructionSpec& spec, const BehaviourCard& card,
                                             const std::function<bool(const FusedDotParams&)>& explains);

}  // namespace fpcert::tc
