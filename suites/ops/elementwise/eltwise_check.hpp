// suites/ops/elementwise/eltwise_check.hpp — the host side of the elementwise check (docs/elementwise.md, "Checking a
// function"): one input and the kernel's result judged against the correctly rounded reference (the fast path of
// oracle/math/eltwise_ref.hpp, MPFR where it cannot decide), folded into a tally (histogram, largest error and where,
// results beyond the claim); tallies merge, and become the case's ElementwiseResult.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "kernels/elementwise/eltwise_kernel.hpp"
#include "results/elementwise.hpp"

namespace fpcert {

struct EltwiseTally {
  struct Item {
    std::uint32_t x = 0, got = 0, ref = 0;
    std::uint64_t ulps = 0;
    std::uint32_t x2 = 0;  ///< a binary function's second input code
  };
  std::array<std::uint64_t, math::kUlpBins> histogram{};
  std::uint64_t inputs = 0, above = 0, mpfr = 0, undecided = 0, unclaimed = 0;
  bool has_worst = false;
  Item worst;                 ///< the largest distance over claimed inputs, the lowest input code among equals
  std::vector<Item> listed;   ///< results beyond the claim, the lowest input codes, at most kListed
  static constexpr std::size_t kListed = 16;

  /// Fold one judged result (ref: the correctly rounded code).
  void add(std::uint32_t x, std::uint32_t got, std::uint32_t ref, const math::Judged& j, std::uint32_t x2 = 0);
  void merge(const EltwiseTally& o);
};

/// The correctly rounded (nearest-even) code of f(x) for input code xc, x read as the kernel declares (DAZ);
/// `used_mpfr` says whether MPFR decided.
std::uint32_t eltwise_reference(const EltwiseTraits& t, std::uint32_t xc, bool* used_mpfr = nullptr);
/// Judge input code xc's result `got` and fold it into `tally`.
void eltwise_check_one(const EltwiseTraits& t, std::uint32_t xc, std::uint32_t got, EltwiseTally& tally);
/// A binary function's result `got` for the input codes (x1c, x2c) (f32), judged against binary_ref_f32 and the claim
/// (docs/elementwise.md, "Binary functions": the claim's |x2| domain, __fdividef's documented results beyond it).
void eltwise_check_two(const EltwiseTraits& t, std::uint32_t x1c, std::uint32_t x2c, std::uint32_t got, EltwiseTally& tally);
/// The input's value as a float (f32, f16, bf16 codes), after DAZ when declared.
float eltwise_input(const EltwiseTraits& t, std::uint32_t xc);
/// The record of a tally (a binary function's inputs as "0x<x1>,0x<x2>" in input_bits, x1's value in input).
ElementwiseResult eltwise_record(const EltwiseTraits& t, const EltwiseTally& tally);

}  // namespace fpcert
