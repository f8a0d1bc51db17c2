// tests/oracle/attention/attention_ref_test.cpp — the attention reference (oracle/attention/attention_ref.hpp): rows of
// random f16, bf16 and f32 attention problems (normal inputs, a dominant key, scores beyond exp's range before the
// shift, V rows whose weighted sum cancels, causal masks top-left and bottom-right with fully masked rows, an additive
// mask with -Inf entries, grouped-query heads) give O and LSE equal, code for code, to attention_mpfr_row at 200 bits
// (MPFR only: no code shared with the fast path but MPFR); sampled rows equal the full reference's. The seed is
// printed and read back from FPCERT_TEST_SEED.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ios>
#include <limits>
#include <string>
#include <vector>

#include "oracle/attention/attention_ref.hpp"
#include "oracle/round.hpp"
#include "tests/support/attention_case.hpp"
#include "tests/support/test_seed.hpp"
#include "tests/support/splitmix.hpp"

namespace fpcert {

using namespace test_attention;

TEST_CASE("attention reference: O and LSE equal MPFR at 200 bits rounded once, code for code") {
  const std::uint64_t seed = test::seed();
  std::printf("attention_ref_test: FPCERT_TEST_SEED=%llu\n", static_cast<unsigned long long>(seed));
  const Format* fmts[] = {&f16, &bf16, &f32};
  struct Shape {
    std::int64_t hq, hkv, lq, lk, d;
  };
  const Shape shapes[] = {{2, 1, 5, 1, 16}, {2, 2, 6, 17, 32}, {4, 2, 4, 77, 64}, {2, 1, 3, 200, 16}};
  std::int64_t elements = 0, mismatches = 0, lse_mismatch = 0, rounded = 0, masked_rows = 0, mpfr = 0;
  std::uint64_t s = seed;
  for (const Format* f : fmts)
    for (const Kind kind : {Kind::Normal, Kind::Dominant, Kind::Large, Kind::Cancel})
      for (const Shape& sh : shapes)
        for (int causal = 0; causal < 3; ++causal) {
          const bool mask = (++s) % 2 == 0;
          const std::int64_t lq = causal == 2 ? sh.lk + 2 : sh.lq;  // bottom-right with len_q > len_k: rows fully masked
          Case c = make_case(*f, kind, sh.hq, sh.hkv, lq, sh.lk, sh.d, causal, mask, s * 1000);
          const AttentionRef ref = attention_reference(c.in, *f, MaskedRowPolicy::Zero, true);
          mpfr += ref.stats.mpfr;
          const auto d = static_cast<std::size_t>(sh.d);
          std::vector<std::uint64_t> codes(d);
          for (std::size_t i = 0; i < ref.rows.size(); ++i) {
            std::uint64_t lse = 0;
            attention_mpfr_row(c.in, ref.rows[i], *f, MaskedRowPolicy::Zero, true, 200, codes.data(), lse);
            masked_rows += ref.masked[i];
            for (std::size_t e = 0; e < d; ++e) {
              ++elements;
              const bool same = codes[e] == ref.code[i * d + e];
              rounded += !ref.masked[i] && to_double(*f, ref.code[i * d + e]) != ref.value[i * d + e];
              if (!same && mismatches++ < 5)
                FAIL_CHECK(f->tag << " kind " << static_cast<int>(kind) << " lk " << sh.lk << " causal " << causal << " row "
                                  << ref.rows[i] << " col " << e << ": reference 0x" << std::hex << ref.code[i * d + e] << " mpfr 0x"
                                  << codes[e] << std::dec << " (value " << ref.value[i * d + e] << ")");
            }
            if (lse != ref.lse_code[i] && lse_mismatch++ < 5)
              FAIL_CHECK(f->tag << " row " << ref.rows[i] << ": LSE 0x" << std::hex << ref.lse_code[i] << " mpfr 0x" << lse);
          }
        }
  std::printf("attention_ref_test: %lld elements, %lld in fully masked rows' policy, %lld by MPFR in the reference\n",
              static_cast<long long>(elements), static_cast<long long>(masked_rows), static_cast<long long>(mpfr));
  CHECK(mismatches == 0);
  CHECK(lse_mismatch == 0);
  CHECK(elements > 100000);
  CHECK(masked_rows > 0);
  // The inputs force rounding: most exact O lie strictly between two values of the output format (not those of rows
  // that see one key, O = v exactly, nor of a dominant key whose weight is 1 within 2^-53: O = v_* as a double).
  CHECK(rounded > elements * 7 / 10);
}

TEST_CASE("attention reference: policies of fully masked rows, NaN scores, sampled rows") {
  Case c = make_case(f16, Kind::Normal, 2, 1, 6, 4, 16, 2, false, 7);  // bottom-right, len_q 6 > len_k 4: rows 0, 1 masked
  std::vector<std::uint64_t> codes(16);
  std::uint64_t lc = 0;
  double lv = 0;
  CHECK_FALSE(attention_reference_row(c.in, 0, f16, MaskedRowPolicy::Zero, true, codes.data(), nullptr, lc, lv));
  CHECK(codes[3] == 0);  // +0
  CHECK(lv == kInf);
  CHECK_FALSE(attention_reference_row(c.in, 1, f16, MaskedRowPolicy::Nan, false, codes.data(), nullptr, lc, lv));
  CHECK(std::isnan(to_double(f16, codes[0])));
  CHECK(lv == -kInf);
  CHECK(attention_reference_row(c.in, 2, f16, MaskedRowPolicy::Zero, true, codes.data(), nullptr, lc, lv));  // sees key 0
  // One visible key: O = v_0 exactly, LSE = z_0 (log 1 = 0).
  for (std::size_t e = 0; e < 16; ++e) CHECK(to_double(f16, codes[e]) == c.v[e]);
  // A NaN in the mask makes the row NaN.
  Case m = make_case(f32, Kind::Normal, 1, 1, 3, 5, 16, 0, true, 9);
  m.mask[1] = std::numeric_limits<double>::quiet_NaN();
  CHECK(attention_reference_row(m.in, 0, f32, MaskedRowPolicy::Zero, true, codes.data(), nullptr, lc, lv));
  CHECK(std::isnan(lv));
  CHECK(std::isnan(to_double(f32, codes[0])));
  // Sampled rows: the same codes as the full reference at those rows, the first and last query of every head included.
  Case big = make_case(bf16, Kind::Normal, 4, 2, 40, 33, 32, 1, true, 11);
  const AttentionRef full = attention_reference(big.in, bf16, MaskedRowPolicy::Zero, true);
  const std::vector<std::int64_t> rows = attention_sample_rows(big.in, 30);
  CHECK(rows.size() >= 16);
  CHECK(rows.front() == 0);
  CHECK(rows.back() == big.in.rows() - 1);
  const AttentionRef part = attention_reference(big.in, bf16, MaskedRowPolicy::Zero, true, rows);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto r = static_cast<std::size_t>(rows[i]);
    CHECK(part.lse_code[i] == full.lse_code[r]);
    for (std::size_t e = 0; e < 32; ++e) CHECK(part.code[i * 32 + e] == full.code[r * 32 + e]);
  }
}

}  // namespace fpcert
