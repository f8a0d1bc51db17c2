// tests/suites/correct_bits_test.cpp — correct bits per element (suites/verdict/correct_bits.hpp, docs/fp64.md): the
// count on hand-built codes around the correctly rounded result, and the statistics over a GEMM's elements against
// the exact oracle.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <vector>

#include "oracle/gemm_ref.hpp"
#include "oracle/round.hpp"
#include "results/results.hpp"
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

TEST_CASE("the correct-bits map: the fewest correct bits of each cell, on the error map's grid") {
  // C = A B with A 3 x 2 = rows (1, 2^-53 (1 + 2^-20)) and B 2 x 4 = ones: every exact value 1 + 2^-53 (1 + 2^-20) rounds to
  // 1 + 2^-52 (just above the tie); the outputs are RN except at (1, 2), which is 1 (one ulp below RN: 52 bits) and (2, 3),
  // 1 + 2^-40 (2^12 - 1 ulps above: 53 - 12 = 41 bits).
  const double a[6] = {1, 0x1p-53 * (1 + 0x1p-20), 1, 0x1p-53 * (1 + 0x1p-20), 1, 0x1p-53 * (1 + 0x1p-20)};
  const double b[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  const GemmRef ref = gemm_reference(MatrixView::row_major(a, 3, 2), MatrixView::row_major(b, 2, 4));
  std::vector<std::uint64_t> codes(12, bits(1 + 0x1p-52));
  codes[1 * 4 + 2] = bits(1.0);
  codes[2 * 4 + 3] = bits(1 + 0x1p-40);
  ErrorMap map{2, 2, 2, 2, std::vector<double>(4, 0.0), {}};  // cells of 2 x 2 elements: rows {0, 1}, {2}; columns {0, 1}, {2, 3}
  const CorrectBitsStats s = correct_bits_stats(f64, codes, ref, &map);
  CHECK(s.min == 41);
  REQUIRE(map.min_correct_bits.size() == 4);
  CHECK(map.min_correct_bits[0] == 53);  // rows 0-1, columns 0-1
  CHECK(map.min_correct_bits[1] == 52);  // rows 0-1, columns 2-3: (1, 2)
  CHECK(map.min_correct_bits[2] == 53);  // row 2, columns 0-1
  CHECK(map.min_correct_bits[3] == 41);  // row 2, columns 2-3: (2, 3)
}
