// oracle/reduce/reduce_order.hpp — bit-for-bit emulation of a reduction's declared summation order:
// sequential, pairwise, blocked, the warp-shuffle tree and NumPy's sum, with an accumulator format and its rounding
// (docs/reductions.md, "Orders", which draws the warp tree).
//
// The terms t_i: x_i (sum), x_i y_i (dot), x_i^2 (nrm2's sum of squares). A dot's products are exact
// (ProductRounding::Exact: each is added to the running value with one rounding, as an FMA does) or
// rounded into the accumulator first (Rounded: a multiply, then an add). Every addition is rounded into
// the accumulator format by oracle/round.hpp (round_ref of the exact two-term sum: no double rounding);
// nrm2 then takes the square root of the accumulated value, rounded once into the accumulator. The result
// is a double holding a value of the accumulator format; rounding it into an output format is the
// caller's one more step (round_double).
//
// Inputs must be exactly representable in the accumulator format (a kernel that converts wider inputs
// down declares that conversion as storage, which the runner models; std::invalid_argument otherwise),
// and the accumulator at most 26 bits of precision (f32, tf32, f16, bf16, FP8): then every product of two
// inputs is exact in double and every two-term sum is exactly hi + lo (TwoSum), which is what makes the
// double arithmetic below exact.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "oracle/reduce/reduce_ref.hpp"
#include "oracle/round.hpp"

namespace fpcert {

enum class ReduceOrderKind : std::uint8_t {
  Unknown,     ///< any binary tree over the terms (atomics, libraries): bounds only, no emulation
  Sequential,  ///< acc = acc + t_i, i = 0, 1, ..., n-1
  Pairwise,    ///< recursive halving: the first ceil(n/2) terms, the rest, one rounded addition joining them
  Blocked,     ///< blocks of `block` consecutive terms, each summed sequentially; the partials summed sequentially
  WarpTree,    ///< `lanes` strided sequential sums (lane l: t_l, t_{l+L}, ...), then the xor butterfly
  /// NumPy's np.sum / np.add.reduce of a contiguous float32 array: the terms in chunks of `block` (the ufunc
  /// buffer size, np.getbufsize(), 8192 by default), each chunk by pairwise_sum (below 8 terms a loop from +0;
  /// up to 128 eight strided accumulators combined ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)), then the n mod 8
  /// leftovers; above 128 the halves split at n/2 rounded down to a multiple of 8), the chunks' sums added in
  /// turn to the reduction's initial value +0 (start Zero; First starts from the first chunk's sum). Checked
  /// against numpy 1.24's np.sum (docs/reductions.md, "NumPy").
  NumpyPairwise,
  /// A thread block of `block` warps of `lanes` lanes (T = block x lanes threads): thread t sums t_t, t_{t+T},
  /// t_{t+2T}, ... sequentially from `start`; each warp combines its lanes by the xor butterfly (as WarpTree);
  /// then the warps' results w_0 .. w_{W-1} are combined by `warps`: sequentially from w_0 (one thread's loop
  /// over shared memory) or by the butterfly once more in one warp (lane j holding w_j, the rest +0).
  BlockTree,
};
/// How BlockTree combines its warps' results.
enum class WarpCombine : std::uint8_t { Sequential, Butterfly };
std::string_view to_string(ReduceOrderKind k);

/// Where a sequential chain starts: from +0 (acc = +0, then acc = R(acc + t_0), ...) or from its first term
/// (acc = R(t_0), then the rest). The two differ only in the sign of a zero result of a sum (-0 + ... from the
/// first term stays -0; +0 + -0 = +0) and, for exact products, not at all (R(+0 + p) = R(p) for p != 0).
enum class ChainStart : std::uint8_t { Zero, First };

/// How a dot product's (and nrm2's) terms enter the accumulation.
enum class ProductRounding : std::uint8_t {
  Exact,    ///< acc = R(acc + x y), one rounding (FMA)
  Rounded,  ///< acc = R(acc + R(x y)), the product rounded into the accumulator first
};

struct ReduceOrder {
  ReduceOrderKind kind = ReduceOrderKind::Sequential;
  ChainStart start = ChainStart::Zero;  ///< sequential chains: Sequential, Blocked's blocks, WarpTree's lanes
  int block = 0;                        ///< Blocked: terms per block (>= 1); NumpyPairwise: the buffer size; BlockTree: warps
  int lanes = 32;                       ///< WarpTree, BlockTree: lanes (a power of two, 1 .. 1024)
  WarpCombine warps = WarpCombine::Sequential;  ///< BlockTree: how the warps' results join (block = the warp count)

  static ReduceOrder unknown() { return {ReduceOrderKind::Unknown, ChainStart::Zero, 0, 32, WarpCombine::Sequential}; }
  static ReduceOrder sequential(ChainStart s = ChainStart::Zero) { return {ReduceOrderKind::Sequential, s, 0, 32, WarpCombine::Sequential}; }
  static ReduceOrder pairwise() { return {ReduceOrderKind::Pairwise, ChainStart::Zero, 0, 32, WarpCombine::Sequential}; }
  static ReduceOrder blocked(int block, ChainStart s = ChainStart::Zero) {
    return {ReduceOrderKind::Blocked, s, block, 32, WarpCombine::Sequential};
  }
  static ReduceOrder warp_tree(int lanes = 32, ChainStart s = ChainStart::Zero) {
    return {ReduceOrderKind::WarpTree, s, 0, lanes, WarpCombine::Sequential};
  }
  static ReduceOrder numpy_pairwise(int bufsize = 8192, ChainStart s = ChainStart::Zero) {
    return {ReduceOrderKind::NumpyPairwise, s, bufsize, 32, WarpCombine::Sequential};
  }
  /// `warp_count` warps of `lanes` lanes; Butterfly needs warp_count <= lanes.
  static ReduceOrder block_tree(int warp_count, WarpCombine combine = WarpCombine::Sequential, int lanes = 32,
                                ChainStart s = ChainStart::Zero) {
    return {ReduceOrderKind::BlockTree, s, warp_count, lanes, combine};
  }
  bool operator==(const ReduceOrder&) const = default;
};
/// "sequential from +0", "blocked B=256 (blocks from +0; partials from the first)", "warp tree L=32 ...".
std::string describe(const ReduceOrder& o);

/// The accumulator's arithmetic.
struct ReduceArith {
  const Format* acc = &f32;
  Rounder rounder = Rounder::nearest(f32);  ///< every rounding into acc (additions, rounded products, sqrt)
  ProductRounding products = ProductRounding::Exact;
  /// Stochastic rounding: rounding number j (in the emulation's order of evaluation; lanes of a warp tree
  /// lane by lane within a level) takes word 0 of Philox4x32-10(key = this, counter = j).
  std::uint64_t stochastic_key = 0;
};

/// The sum of x_i in `order` with `arith` (a value of arith.acc, as a double). n = 0 gives +0.
double emulate_sum(const double* x, std::size_t n, const ReduceOrder& order, const ReduceArith& arith);
/// The dot product of x and y.
double emulate_dot(const double* x, const double* y, std::size_t n, const ReduceOrder& order, const ReduceArith& arith);
/// Unscaled nrm2: R(sqrt(S)), S the sum of the squares in `order` (so S overflows to Inf, or saturates,
/// when sum x_i^2 passes the accumulator's range: the trap a scaled nrm2 avoids).
double emulate_nrm2(const double* x, std::size_t n, const ReduceOrder& order, const ReduceArith& arith);
/// One of the three by kind (y read for Dot only).
double emulate_reduce(ReduceKind kind, const double* x, const double* y, std::size_t n, const ReduceOrder& order,
                      const ReduceArith& arith);

}  // namespace fpcert
