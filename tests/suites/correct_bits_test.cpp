// tests/suites/correct_bits_test.cpp — correct bits per element (suites/verdict/correct_bits.hpp, docs/fp64.md): the
// count on hand-built codes around the correctly rounded result, and the statistics over a GEMM's elements against
// the exact oracle.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>

#include "oracle/gemm_ref.hpp"
#include "oracle/round.hpp"
#include "suites/verdict/correct_bits.hpp"

using namespace fpcert;

namespace {
std::uint64_t bits(double x) { return std::bit_cast<std::uint64_t>(x); }
}  // namespace

TEST_CASE("correct bits: p - bit_width(ulps from the correctly rounded result), signs and specials") {
  const double one = 1.0;
  CHECK(correct_bits(f64, bits(one), bits(one)) == 53);
  CHECK(correct_bits(f64, bits(std::nextafter(one, 2.0)), bits(one)) == 52);                                  // 1 ulp
  CHECK(correct_bits(f64, bits(one + 3 * 0x1p-52), bits(one)) == 51);                                         // 3 ulps: bit_width 2
  CHECK(correct_bits(f64, bits(one + 4 * 0x1p-52), bits(one)) == 50);                                         // 4 ulps: bit_width 3
  CHECK(correct_bits(f64, bits(-0.0), bits(0.0)) == 53);                                                       // one point
  CHECK(correct_bits(f64, bits(-0x1p-1074), bits(0x1p-1074)) == 51);                                           // 2 ulps across zero
  CHECK(correct_bits(f64, bits(1 + 0x1p-13), bits(one)) == 53 - 40);                                          // 2^39 ulps: 40 bits lost
  CHECK(correct_bits(f64, bits(-one), bits(one)) == 0);                                                        // sign wrong
  CHECK(correct_bits(f64, bits(INFINITY), bits(std::numeric_limits<double>::max())) == 0);
  CHECK(correct_bits(f64, bits(NAN), bits(NAN)) == 53);
  CHECK(correct_bits(f64, bits(NAN), bits(one)) == 0);
  CHECK(correct_bits(f32, std::bit_cast<std::uint32_t>(1.0f + 0x1p-23f), std::bit_cast<std::uint32_t>(1.0f)) == 23);
}

TEST_CASE("correct bits over a GEMM: the correctly rounded result scores p everywhere, a truncated one fewer") {
  // x = (1, 2^-53, 2^-53, 2^-53) . ones: exact 1 + 1.5 2^-52, RN = 1 + 2^-51 (the tie goes to the even neighbour);
  // a sequential fp64 sum gives 1 (two ulps of 2^-52 below RN: 51 correct bits).
  const double a[4] = {1, 0x1p-53, 0x1p-53, 0x1p-53}, b[4] = {1, 1, 1, 1};
  const GemmRef ref = gemm_reference(MatrixView::row_major(a, 1, 4), MatrixView::row_major(b, 4, 1));
  const CorrectBitsStats rn = correct_bits_stats(f64, {bits(1 + 0x1p-51)}, ref);
  CHECK(rn.min == 53);
  CHECK(rn.hist.size() == 54);
  CHECK(rn.hist[53] == 1);
  const CorrectBitsStats seq = correct_bits_stats(f64, {bits(1.0)}, ref);
  CHECK(seq.min == 51);
  CHECK(seq.median == 51);
}
