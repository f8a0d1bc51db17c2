// suites/verdict/order_free.hpp — elements of C whose value is the same in every summation order, so that a kernel
// whose order is unknown still gets a bit-for-bit verdict there (docs/bound_model.md, "Order-free elements").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/kernel.hpp"

namespace fpcert {

enum class OrderFreeKind : std::uint8_t {
  None,         ///< the element's value depends on the order (or cannot be shown not to)
  ExactSum,     ///< every partial sum of its products, in any grouping, is exact in the accumulator
  ExactZero,    ///< as ExactSum, with an exact sum of zero: either sign of zero (the sign depends on the order)
  OneRounding,  ///< two nonzero products, each exact: every order rounds their sum once, as the accumulator declares
};

struct OrderFreeElements {
  std::vector<OrderFreeKind> kind;    ///< m x n, row-major
  std::vector<std::uint64_t> expect;  ///< the output code every order gives (ExactZero: +0)
  std::int64_t exact = 0, zero = 0, one_rounding = 0;
  std::int64_t count() const { return exact + zero + one_rounding; }
};

/// Why no element can be order-free for these traits (empty: elements are examined one by one).
std::string order_free_unavailable(const KernelTraits& t);

/// The order-free elements of C = A B for a kernel with traits t. a_in, b_in: the inputs as the kernel received
/// them (row-major m x k, k x n); a_op, b_op: the operands its multiplier sees (the declared input rounding
/// applied). An element qualifies only where its row of A and column of B reach the multiplier unchanged (for a
/// kernel that slices its operands, operand_u > 0: values of at most 8 bits in 2^-14..2^15, one slice), every
/// product is exact in the accumulator (and in the product format where products are rounded), and either the
/// products' magnitudes sum below 2^p_acc times the smallest product's lowest bit (every partial sum is then a
/// multiple of that bit below 2^p_acc of it: exact in any order, any grouping, any alignment that keeps p_acc
/// bits) or, where the kernel declares round-to-nearest accumulation without promotion, exactly two products are
/// nonzero (every order performs one inexact addition, of the same two values). The result must also be exact in
/// the output format.
OrderFreeElements order_free_elements(const KernelTraits& t, std::int64_t m, std::int64_t n, std::int64_t k, const std::vector<double>& a_in,
                                      const std::vector<double>& b_in, const std::vector<double>& a_op, const std::vector<double>& b_op);

}  // namespace fpcert
