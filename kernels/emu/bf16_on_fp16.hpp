// kernels/emu/bf16_on_fp16.hpp — BF16 GEMMs on FP16 tensor cores: the strategies (direct cast;
// power-of-two scales per tensor, per row of A and column of B, per K-block; an outlier split; a
// per-tile choice among them), the plan each makes of an operand, their CPU models, and what a kernel
// of the family reports about its conversions. docs/emulation.md gives the exactness arguments.
//
// Target semantics: bf16 inputs, exact products, fp32 accumulation. An fp16 MMA has exact products
// and fp32 accumulation too, but fp16 holds a bf16 value exactly only inside 33 binades (binades
// [-17, 15]: 30 normal ones and three where the 8-bit significand still fits above 2^-24). Scaling a
// line by 2^s moves it there; every product then carries the factor 2^(s_A + s_B), removed exactly
// in fp32 in the epilogue. One window per line (or line segment) is lossless while the line's
// exponent span (max binade - min binade of its nonzero entries) is at most 32 (emu::kSpanLossless,
// kernels/emu/emu_arith.cuh).
//
// The same scalar functions (kernels/emu/emu_arith.cuh) serve the CPU models here and the CUDA
// kernels (kernels/emu/cuda/emu_bf16.cu): conversions, windows and plans agree bit for bit, which
// tests/kernels/emu/emulation_gpu_test.cpp checks through the statistics below.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/kernel.hpp"

namespace fpcert {

enum class Bf16OnF16Strategy : std::uint8_t {
  Cast,     ///< (a) bf16 -> fp16 rounded to nearest, no scale: overflow, underflow, subnormals
  Tensor,   ///< (b) one power-of-two scale per operand
  RowCol,   ///< (c) one per row of A and per column of B; epilogue multiplies by 2^-(s_A,i + s_B,j)
  KBlock,   ///< (d) one per (row, K-block) and (K-block, column); partial sums rescaled and added in fp32
  Outlier,  ///< (e) per row / column window of 33 binades; entries outside it on an fp32 path
  Auto,     ///< per 128 x 128 tile of C: RowCol where its lines fit, else KBlock(64), outliers where needed
};

struct Bf16OnF16Policy {
  Bf16OnF16Strategy strategy;
  int kblock;       ///< segment length along K for KBlock (64, 128) and Auto (64); 0: whole lines
  std::string tag;  ///< cast, tensor, rowcol, kblock64, kblock128, outlier, auto
};
const std::vector<Bf16OnF16Policy>& bf16_on_f16_policies();
const Bf16OnF16Policy* find_bf16_on_f16_policy(const std::string& tag);
std::string bf16_on_f16_kernel_name(const Bf16OnF16Policy& p);  ///< gemm_bf16_on_f16_<tag>_mma_sm80
std::string bf16_on_f16_wgmma_kernel_name(const Bf16OnF16Policy& p);  ///< gemm_bf16_on_f16_<tag>_wgmma_sm90 (Hopper, issue 43)
std::string bf16_on_f16_model_name(const Bf16OnF16Policy& p);   ///< model_gemm_bf16_on_f16_<tag>

/// How the MMA treats a 128 x 128 tile of C (the same values as emu::kModeRow, emu::kModeKBlock and
/// emu::kModeTile of kernels/emu/emu_arith.cuh, which the device code uses; bf16_on_fp16.cpp
/// static_asserts that they agree: this header stays free of the device headers).
constexpr std::uint8_t kModeRow = 0;     ///< one scale per line: the fragment accumulates all of K, one rescale at the end
constexpr std::uint8_t kModeKBlock = 1;  ///< per segment: a fresh partial per K-block, rescaled and added in fp32
constexpr int kModeTile = 128;           ///< the tile edge modes are decided for (the MMA's block tile)
/// The largest exponent span one power-of-two scale converts losslessly (emu::kSpanLossless).
constexpr int kBf16OnF16MaxLosslessSpan = 32;

/// The plan of one operand, its lines being the rows of A or the columns of B, cut along K into
/// segments of `seg_len` (the whole K for line strategies).
struct OperandPlan {
  std::int64_t lines = 0, segs = 1, seg_len = 0;
  bool shared = false;                     ///< one scale for every line (cast, tensor): scale[0]
  std::vector<int> scale;                  ///< [line * segs + seg]: entries are multiplied by 2^scale
  std::vector<std::uint8_t> outlier_seg;   ///< [line * segs + seg]: entries outside the window go to the fp32 path
  std::vector<std::uint8_t> mode;          ///< per line: kModeRow or kModeKBlock
  int scale_at(std::int64_t line, std::int64_t seg) const {
    return shared ? scale[0] : scale[static_cast<std::size_t>(line * segs + seg)];
  }
  bool outliers_at(std::int64_t line, std::int64_t seg) const {
    return !shared && outlier_seg[static_cast<std::size_t>(line * segs + seg)];
  }
};

/// What a strategy makes of one operand given as bf16 codes: entry r (along K) of line l is
/// codes[l * line_stride + r * k_stride]. The rules (docs/emulation.md, "Plans"):
///   cast: scale 0; tensor: 15 - (the operand's largest binade); rowcol: 15 - (the line's largest);
///   kblock: 15 - (the segment's largest); outlier: lines spanning <= 32 as rowcol, others the window
///   of 33 binades holding most entries (ties: the highest; emu::best_window_top), outside it the
///   fp32 path; auto: lines spanning <= 32 as rowcol (mode row), others per segment of 64 (mode
///   kblock) as kblock where the segment spans <= 32 and with an outlier window where it does not.
OperandPlan plan_operand(const Bf16OnF16Policy& p, const std::uint16_t* codes, std::int64_t lines, std::int64_t k,
                         std::int64_t line_stride, std::int64_t k_stride);

/// Mode of tile (bm, bn) of C: kblock when any of its rows of A or columns of B is.
std::uint8_t tile_mode(const OperandPlan& a, const OperandPlan& b, std::int64_t bm, std::int64_t bn);

/// What happened to one operand's nonzero entries on their way to fp16.
struct Bf16OnF16OperandStats {
  std::int64_t nonzero = 0;         ///< nonzero entries converted to fp16 (outliers excluded)
  std::int64_t inexact = 0;         ///< of those, converted with an error: the product is not exact (lossy)
  std::int64_t overflow = 0;        ///< became +-Inf
  std::int64_t underflow_zero = 0;  ///< became +-0
  std::int64_t subnormal = 0;       ///< became nonzero fp16 subnormals (a flush-to-zero MMA would lose them)
  std::int64_t outliers = 0;        ///< moved to the fp32 path instead (exact products there)
  bool operator==(const Bf16OnF16OperandStats&) const = default;
};
struct Bf16OnF16Stats {
  Bf16OnF16OperandStats a, b;
  std::int64_t tiles_row = 0, tiles_kblock = 0;  ///< 128 x 128 tiles of C by MMA mode
  bool lossless() const { return a.inexact == 0 && b.inexact == 0; }
  bool operator==(const Bf16OnF16Stats&) const = default;
};
std::string to_string(const Bf16OnF16Stats& s);

/// Implemented by every kernel of the family (CPU models and CUDA kernels): the statistics of the
/// last run() (a CUDA kernel synchronises its stream first).
class Bf16OnF16Kernel {
 public:
  virtual ~Bf16OnF16Kernel() = default;
  virtual const Bf16OnF16Policy& policy() const = 0;
  virtual Bf16OnF16Stats last_stats() const = 0;
};

/// One named stage of a pipeline and its time.
struct StageTime {
  std::string name;
  double ms = 0;
};
/// Implemented by the CUDA emulation kernels (split products and BF16 on FP16), whose run() is a
/// pipeline of device stages: each stage is timed on its own with CUDA events (median of `timed`
/// runs after `warmups`), in pipeline order; the last entry, "end to end", times run() as a whole.
class StagedKernel {
 public:
  virtual ~StagedKernel() = default;
  virtual std::vector<StageTime> time_stages(const GemmOperands& ops, int warmups, int timed) = 0;
};

/// The strategy's traits (shared by the CPU model and the CUDA kernel; `device` selects the
/// tensor-core accumulator, fp32 toward zero, against the model's fp32 FMA).
KernelTraits bf16_on_f16_traits(const Bf16OnF16Policy& p, bool device);

/// The strategy applied on the CPU to bf16 codes (A m x k row-major, lda; B k x n row-major, ldb):
/// C (m x n, fp32, row-major) and the statistics. The arithmetic of the CUDA kernels with the MMA's
/// internal sums replaced by fp32 FMA along K: per element, row mode acc = fma(a'_ik, b'_kj, acc) for
/// k ascending from +0 on the scaled fp16 values, C = RN(acc 2^-(s_A + s_B)); kblock mode part =
/// the same over one segment, acc = RN(acc + RN(part 2^-(s_A,g + s_B,g))); then where line i of A or
/// column j of B has outliers, corr = fma over the A outliers of row i (times b_kj) then over the B
/// outliers of column j whose a_ik is not an A outlier (times a_ik), k ascending, from +0; C = RN(C + corr).
std::vector<float> bf16_on_f16_cpu(const Bf16OnF16Policy& p, std::int64_t m, std::int64_t n, std::int64_t k,
                                   const std::uint16_t* a, std::int64_t lda, const std::uint16_t* b, std::int64_t ldb,
                                   Bf16OnF16Stats* stats);

}  // namespace fpcert
