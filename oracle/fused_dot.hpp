// oracle/fused_dot.hpp — a parameterised model of a block fused dot product, D = C + sum a_i b_i
// computed the way a tensor core does (docs/tensor_cores.md, "The model").
//
// A tensor core does not add products one by one with a rounding each. It forms a block of exact
// products, aligns them (and usually the accumulator input C) to the largest exponent, keeps a fixed
// number of fraction bits below it, adds the aligned integers exactly and rounds the block's sum once
// into the accumulator format. The parameters below say how, and can express the published models:
//   Fasi, Higham, Mikaitis, Pranesh, "Numerical behavior of NVIDIA tensor cores", PeerJ CS 7:e330
//     (2021): V100/T4/A100 — exact products, alignment to the largest exponent with truncation,
//     normalisation toward zero;
//   Khattak and Mikaitis, "Accurate models of NVIDIA tensor cores" (arXiv:2512.07004, 2025) — a
//     generic block-FMA model: FMA size, extra alignment bits, C early or late, odd/even groups,
//     minimum alignment exponent, final rounding, subnormal handling;
//   Xie et al., MMA-Sim (arXiv:2511.10909, 2025) — fused sum with n fractional bits relative to the
//     largest unnormalised product exponent, truncation, RZ (RNE for fp16 outputs), k split in halves
//     on Ampere/Ada.
// docs/tensor_cores.md maps each published model onto these parameters.
//
// Internals are exact: products of two significands of at most 24 bits are integers of at most 48
// bits; alignment shifts them onto a common fixed point (the "window", align_bits fraction bits below
// the reference exponent) in __int128 arithmetic, so the block sum is an exact integer; one final
// rounding (oracle/round.hpp's core) makes the result. No double arithmetic touches a value, except in the
// batched path fused_dot_lanes, where every binary64 operation is exact (its proof in fused_dot.cpp).
//
// The model is one block (fused_block: products + C -> D). An instruction whose K is a multiple of the
// fused length chains blocks (fused_dot). A GEMM K-loop over instructions composes fused_dot calls;
// that composition belongs to the kernel's declared order, not to this file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "oracle/format.hpp"
#include "oracle/round.hpp"

namespace fpcert {

/// How a bit below the window's last kept bit is discarded when a term is aligned.
enum class AlignRounding : std::uint8_t {
  TowardZero,   ///< the magnitude is truncated (sign-magnitude datapath)
  Down,         ///< toward -Inf (truncation of a two's-complement datapath)
  NearestEven,  ///< rounded to the nearest kept bit, ties to even
};
/// Which exponent of a product the window is aligned to.
enum class AlignReference : std::uint8_t {
  ProductExponents,  ///< e_a + e_b, the significand product kept unnormalised in [0, 4)
  LeadingBit,        ///< the exponent of the product's leading bit (normalised)
};
/// Where the accumulator input C enters.
enum class CJoin : std::uint8_t {
  InBlock,  ///< aligned together with the products (one window for all)
  After,    ///< added to the block's (unrounded) sum with a second alignment of the same width
  /// The blocks chain from +0 (each block's rounded result is the next block's C, in the block); C
  /// itself is added last, to the last block's result, by an IEEE addition in the accumulator format
  /// rounded to nearest even. Hopper's FP8 mma.sync (two f16 HMMAs and an FADD/HADD2) computes this.
  LastRn,
};
/// Alignment groups inside a fused block: products aligned separately, the group sums then aligned
/// and added (Khattak and Mikaitis' odd/even grouping is Interleaved with 2 groups).
enum class Grouping : std::uint8_t {
  None,         ///< one window for the whole block
  Interleaved,  ///< product i belongs to group i mod groups
  Contiguous,   ///< product i belongs to group i / (fused_length / groups)
};
/// What a block result beyond the largest finite value becomes.
enum class OverflowTo : std::uint8_t { Inf, MaxFinite };

inline constexpr int kNoAlignFloor = -100000;

struct FusedDotParams {
  // ---- formats ----
  Format a = f16, b = f16;  ///< input formats (codes in their containers: tf32 in 32-bit fp32 patterns)
  Format acc = f32;         ///< C and D
  // ---- inputs and products ----
  /// A container wider than the format (tf32 in 32 bits): how the extra low bits are read.
  Rounding operand_read = Rounding::TowardZero;
  bool input_subnormals = true;  ///< false: subnormal inputs read as zero (sign kept)
  int product_frac_bits = -1;    ///< -1: exact products; else truncated toward zero to this many fraction bits
  bool wide_block = true;        ///< products and sums beyond the accumulator's range are carried exactly
  // ---- alignment ----
  int fused_length = 16;         ///< products per block (one rounding per block)
  Grouping grouping = Grouping::None;
  int groups = 1;
  /// 0: block j of an instruction's k inputs is inputs j*fused_length .. (j+1)*fused_length - 1. r > 0:
  /// the inputs are dealt to the nblocks = ceil(k / fused_length) blocks in runs of r (block j takes input
  /// i with (i / r) mod nblocks == j), as when an instruction is emulated by narrower ones on the halves
  /// of its registers (Hopper's FP8 mma.sync: r = 2, two blocks of 16).
  int interleave_run = 0;
  int align_bits = 25;           ///< fraction bits kept below the reference exponent
  AlignReference reference = AlignReference::ProductExponents;
  AlignRounding align_rounding = AlignRounding::TowardZero;
  CJoin c_join = CJoin::InBlock;
  int align_floor = kNoAlignFloor;  ///< the reference exponent is at least this (Khattak and Mikaitis' min_exp_limit)
  // ---- the block result ----
  int acc_bits = 23;                             ///< fraction bits of the rounded result (<= acc.frac_bits)
  Rounding block_rounding = Rounding::TowardZero;
  bool output_subnormals = true;                 ///< false: subnormal C reads as zero and subnormal results flush to zero
  OverflowTo overflow = OverflowTo::Inf;
  std::uint64_t nan_code = 0x7FFFFFFF;           ///< D's code for every NaN result (NaN C and Inf - Inf included)
  bool ieee_negative_zero = false;               ///< true: -0 when every term is -0; false: zero sums are +0

  friend bool operator==(const FusedDotParams&, const FusedDotParams&) = default;
};

/// An empty string when the parameters are usable, else what is wrong (e.g. "align_bits 130 > 100").
std::string check(const FusedDotParams& p);

/// One product (or C) ready for alignment: value (-1)^neg * sig * 2^lsb, aligned by `ref`. No default
/// member values (blocks keep arrays of these on the stack uninitialised); fused_product sets every field.
struct FusedTerm {
  FpClass cls;  ///< Zero, Normal (any finite nonzero), Inf or NaN
  bool neg;
  std::uint64_t sig;
  int lsb;
  int ref;
};

/// Decode a_i, b_i (container codes) into the block's terms: operand reading, subnormal flushing,
/// exact product (or truncated, product_frac_bits), Inf/NaN, and products beyond the accumulator's
/// range as Inf when !wide_block.
FusedTerm fused_product(const FusedDotParams& p, std::uint64_t a, std::uint64_t b);

/// One block: D = round(C + sum of the products) as the parameters say (products.size() <=
/// fused_length; fewer act as zero products). c and the result are codes of p.acc. With c_join
/// last-rn: the block from +0, then C added by the IEEE round-to-nearest addition.
std::uint64_t fused_block(const FusedDotParams& p, std::span<const FusedTerm> products, std::uint64_t c);

/// One instruction's dot product over k inputs: blocks of fused_length (contiguous, or dealt in runs of
/// interleave_run) chained from C (the accumulator of block j + 1 is the rounded result of block j); with
/// c_join last-rn chained from +0 and C added last (IEEE, nearest even). a, b: container codes.
std::uint64_t fused_dot(const FusedDotParams& p, const std::uint32_t* a, const std::uint32_t* b, int k, std::uint64_t c);
/// What a fused_dot met that its caller may need to know: block results that rounded inexactly below the
/// accumulator's normal range (the exact block sum had bits below its smallest subnormal), a regime the
/// probes' validation distributions do not aim at (docs/tensor_cores.md, "Where a card is not validated").
struct FusedDotNotes {
  std::uint64_t subnormal_inexact = 0;
};
/// fused_dot, counting into `notes` (null: as fused_dot).
std::uint64_t fused_dot(const FusedDotParams& p, const std::uint32_t* a, const std::uint32_t* b, int k, std::uint64_t c, FusedDotNotes* notes);
/// fused_dot by the general path only (fused_dot takes a faster path of the same arithmetic for the
/// parameters of fp32-accumulator cards: f16, bf16, tf32 and FP8 inputs, one window, toward zero or to nearest);
/// the reference the fast path is tested against.
std::uint64_t fused_dot_reference(const FusedDotParams& p, const std::uint32_t* a, const std::uint32_t* b, int k, std::uint64_t c);

// ---- the batched path: consecutive instructions for several dots at once ----
// A GEMM emulation calls fused_dot once per output element per instruction; for the fast path's parameters
// (fp32-accumulator cards) fused_dot_lanes computes the same D for kFusedLanes dots at once (one row of A with
// kFusedLanes columns of B), lane by lane in binary64 arithmetic that is exact (see fused_dot.cpp), and hands a
// lane's instruction to fused_dot wherever that arithmetic does not decide it (Inf, NaN, a block result outside
// fp32's normal range): every lane's D is fused_dot's bit for bit, notes included (tests/oracle/fused_dot_test.cpp).

/// Dots fused_dot_lanes computes together.
inline constexpr int kFusedLanes = 16;
/// The ref of a zero operand in fused_lane_operands: far below any product's e_a + e_b, so that a product with a
/// zero factor never sets the window (its value is zero, it adds nothing).
inline constexpr std::int16_t kFusedZeroRef = -8192;

/// Whether fused_dot_lanes takes instructions of k inputs under these parameters: fused_dot's fast path applies
/// (exact products, one window of 0..36 bits at the largest e_a + e_b or the card's floor, truncation toward zero,
/// fp32 results rounded toward zero or to nearest to 1..23 fraction bits, subnormals kept), k <= 64 and no block
/// holds more than 32 inputs.
bool fused_lanes_apply(const FusedDotParams& p, int k);

/// Operand codes of p.a (b_side false) or p.b (true), container codes as fused_dot takes them, decoded for
/// fused_dot_lanes: value[i] the code's value as a float (exact: the fast path's formats fit fp32), ref[i] the
/// exponent of its leading bit position (emin for subnormals; kFusedZeroRef for zeros). Inf and NaN codes have
/// value NaN (every block they enter goes to fused_dot).
void fused_lane_operands(const FusedDotParams& p, bool b_side, const std::uint32_t* codes, std::size_t n, float* value, std::int16_t* ref);

/// Operands of fused_dot_lanes: the codes and fused_lane_operands' decoding of them. The row (A): input i at [i].
/// The panel (B, K-major): input i of lane w at [i * ld + w].
struct FusedLaneRow {
  const std::uint32_t* code;
  const float* value;
  const std::int16_t* ref;
};
struct FusedLanePanel {
  const std::uint32_t* code;
  const float* value;
  const std::int16_t* ref;
  std::ptrdiff_t ld;
};

/// `steps` instructions of k inputs chained for the dots of `width` columns (a multiple of kFusedLanes, computed
/// kFusedLanes at a time): for s = 0 .. steps - 1 and every column w < width, c[w] = fused_dot(p, a + s k, b_w + s k, k,
/// c[w], notes), where b_w is column w of the panel. c: fp32 codes, the columns' C in and D out. Precondition:
/// fused_lanes_apply(p, k). portable: the plain-loop version a build without AVX2 runs (for the tests, which hold both
/// to the general path; else the AVX2 version where the build has it).
void fused_dot_lanes(const FusedDotParams& p, int k, int steps, const FusedLaneRow& a, const FusedLanePanel& b, std::ptrdiff_t width,
                     std::uint32_t* c, FusedDotNotes* notes, bool portable = false);

/// A K-loop over instructions, the order of fpcert's mma.sync GEMMs (docs/kernels.md): the K inputs
/// consumed in steps of `step` (the instruction's k) in ascending order, each step one fused_dot whose C
/// is the previous step's D, the last step zero-padded (zero products change no sum). The hook for the
/// bitwise verdict tier of tensor-core kernels; a kernel with another order composes fused_dot itself.
std::uint64_t fused_kloop(const FusedDotParams& p, const std::uint32_t* a, const std::uint32_t* b, int K, int step, std::uint64_t c);

// ---- names (JSON, the card, the CLI) ----
std::string_view to_string(AlignRounding r);
std::string_view to_string(AlignReference r);
std::string_view to_string(CJoin c);
std::string_view to_string(Grouping g);
std::string_view to_string(OverflowTo o);
std::optional<AlignRounding> parse_align_rounding(std::string_view s);
std::optional<AlignReference> parse_align_reference(std::string_view s);
std::optional<CJoin> parse_c_join(std::string_view s);
std::optional<Grouping> parse_grouping(std::string_view s);
std::optional<OverflowTo> parse_overflow_to(std::string_view s);

/// The IEEE sum x + y of two accumulator codes rounded to nearest even (subnormals kept, overflow to
/// Inf, x + (-x) = +0), every NaN result p.nan_code: c_join last-rn's final addition.
std::uint64_t ieee_add_rn(const FusedDotParams& p, std::uint64_t x, std::uint64_t y);

/// One paragraph a reviewer reads: "products exact; aligned to ... with 25 fraction bits ...".
std::string describe(const FusedDotParams& p);

}  // namespace fpcert
