// tests/oracle/attention/attention_bwd_ref_test.cpp — the attention backward reference (oracle/attention/attention_bwd_ref.hpp):
// dQ, dK and dV of small random f16, bf16 and f32 problems (normal inputs, a dominant key with dO = O: dP - D cancels,
// V rows that cancel; causal top-left and bottom-right with fully masked rows, an additive mask with -Inf entries,
// grouped-query heads) equal, code for code, attention_bwd_mpfr at 300 bits (MPFR only, every operation rounded at 300
// bits: no code shared with the fast path but MPFR), with the saved O and LSE (the correctly rounded forward's) and
// with reads_saved = false; sampled rows equal the full reference's. The seed is printed and read from FPCERT_TEST_SEED.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <ios>
#include <vector>

#include "oracle/attention/attention_bwd_ref.hpp"
#include "oracle/round.hpp"
#include "tests/support/attention_case.hpp"
#include "tests/support/test_seed.hpp"

namespace fpcert {

using namespace test_attention;

namespace {

/// The backward's inputs beside a forward case: O and LSE as the correctly rounded forward writes them (O in fmt, LSE
/// in fp32; fully masked rows 0 and +Inf), dO random, or O itself plus a little noise (`like_o`: D_i = dO . O nearly
/// equals dP_ij of the dominant key: dP - D cancels).
struct BwdCase {
  Case fwd;
  std::vector<double> o, d_o, lse;
  AttentionBwdInputs in;
};

BwdCase make_bwd(const Format& fmt, Kind kind, std::int64_t hq, std::int64_t hkv, std::int64_t lq, std::int64_t lk, std::int64_t d,
                 int causal, bool mask, bool like_o, bool saved, std::uint64_t seed) {
  BwdCase b;
  b.fwd = make_case(fmt, kind, hq, hkv, lq, lk, d, causal, mask, seed);
  const AttentionRef ref = attention_reference(b.fwd.in, fmt, MaskedRowPolicy::Zero, true);
  const auto n = ref.code.size();
  b.o.resize(n);
  b.d_o.resize(n);
  b.lse.resize(ref.lse_code.size());
  for (std::size_t e = 0; e < n; ++e) {
    b.o[e] = to_double(fmt, ref.code[e]);
    b.d_o[e] = in_format(fmt, like_o ? b.o[e] * (1 + 0x1p-9 * gauss(seed + 7, e)) : gauss(seed + 7, e));
  }
  for (std::size_t r = 0; r < b.lse.size(); ++r) b.lse[r] = to_double(f32, ref.lse_code[r]);
  b.in.fwd = b.fwd.in;
  b.in.o = b.o.data();
  b.in.d_o = b.d_o.data();
  b.in.lse = b.lse.data();
  b.in.reads_saved = saved;
  return b;
}

}  // namespace

TEST_CASE("attention backward reference: dQ, dK, dV equal MPFR at 300 bits rounded once, code for code") {
  const std::uint64_t seed = test::seed();
  std::printf("attention_bwd_ref_test: FPCERT_TEST_SEED=%llu\n", static_cast<unsigned long long>(seed));
  const Format* fmts[] = {&f16, &bf16, &f32};
  struct Shape {
    std::int64_t hq, hkv, lq, lk, d;
  };
  const Shape shapes[] = {{2, 1, 5, 1, 16}, {2, 2, 6, 17, 16}, {4, 2, 4, 20, 32}, {4, 1, 3, 9, 16}};
  std::int64_t elements = 0, mismatches = 0, rounded = 0, masked_rows = 0, mpfr = 0, unsettled = 0;
  std::uint64_t s = seed;
  for (const Format* f : fmts)
    for (const Kind kind : {Kind::Normal, Kind::Dominant, Kind::Cancel})
      for (const Shape& sh : shapes)
        for (int causal = 0; causal < 3; ++causal) {
          const bool mask = (++s) % 2 == 0, saved = s % 3 != 0;
          const std::int64_t lq = causal == 2 ? sh.lk + 2 : sh.lq;  // bottom-right with len_q > len_k: rows fully masked
          BwdCase c = make_bwd(*f, kind, sh.hq, sh.hkv, lq, sh.lk, sh.d, causal, mask, kind == Kind::Dominant, saved, s * 1000);
          const AttentionBwdRef ref = attention_bwd_reference(c.in, *f, *f, *f);
          mpfr += ref.stats.mpfr;
          unsettled += ref.stats.unsettled;
          std::vector<std::uint64_t> dq, dk, dv;
          attention_bwd_mpfr(c.in, *f, *f, *f, 300, dq, dk, dv);
          for (std::uint8_t m : ref.q_masked) masked_rows += m;
          auto compare = [&](const char* what, const std::vector<std::uint64_t>& want, const std::vector<std::uint64_t>& got,
                             const std::vector<double>& value) {
            REQUIRE(want.size() == got.size());
            for (std::size_t e = 0; e < want.size(); ++e) {
              ++elements;
              rounded += to_double(*f, got[e]) != value[e];
              // An exact 0 (at the exact forward sum_j dS_ij = 0: keys equal in a column give dQ = 0) is +0 in the
              // reference; the 300-bit evaluation leaves a residue of either sign that underflows to +-0.
              const bool zeros = value[e] == 0 && to_double(*f, want[e]) == 0 && to_double(*f, got[e]) == 0;
              if (want[e] != got[e] && !zeros && mismatches++ < 5)
                FAIL_CHECK(f->tag << " " << what << " kind " << static_cast<int>(kind) << " lk " << sh.lk << " causal " << causal
                                  << " saved " << saved << " element " << e << ": reference 0x" << std::hex << got[e] << " mpfr 0x"
                                  << want[e] << std::dec << " (value " << value[e] << ")");
            }
          };
          compare("dQ", dq, ref.dq_code, ref.dq_value);
          compare("dK", dk, ref.dk_code, ref.dk_value);
          compare("dV", dv, ref.dv_code, ref.dv_value);
        }
  std::printf("attention_bwd_ref_test: %lld elements, %lld fully masked query rows, %lld by MPFR in the reference, %lld unsettled\n",
              static_cast<long long>(elements), static_cast<long long>(masked_rows), static_cast<long long>(mpfr),
              static_cast<long long>(unsettled));
  CHECK(mismatches == 0);
  CHECK(unsettled == 0);
  CHECK(elements > 50000);
  CHECK(masked_rows > 0);
  CHECK(mpfr > 0);  // the cancelling cases reach the MPFR path
  // The inputs force rounding: most exact gradients lie strictly between two values of the output format.
  CHECK(rounded > elements / 2);
}

TEST_CASE("attention backward reference: masked rows, keys no query sees, sampled rows") {
  // Bottom-right, len_q 6 > len_k 4: queries 0 and 1 see no key (dQ rows 0); top-left causal: key 3 is seen by query 3.
  BwdCase c = make_bwd(f16, Kind::Normal, 2, 1, 6, 4, 16, 2, false, false, true, 7);
  const AttentionBwdRef ref = attention_bwd_reference(c.in, f16, f16, f16);
  CHECK(ref.q_masked[0] == 1);
  CHECK(ref.q_masked[1] == 1);
  CHECK(ref.q_masked[2] == 0);
  for (std::size_t e = 0; e < 32; ++e) CHECK(ref.dq_code[e] == 0);  // +0
  // Sampled rows: the same codes as the full reference, the first and last key of every kv head included.
  BwdCase big = make_bwd(bf16, Kind::Normal, 4, 2, 40, 33, 32, 1, true, false, true, 11);
  const AttentionBwdRef full = attention_bwd_reference(big.in, bf16, bf16, f32);
  const std::vector<std::int64_t> qr = attention_sample_rows(big.in.fwd, 20), kr = attention_bwd_sample_kv_rows(big.in, 20);
  CHECK(kr.front() == 0);
  CHECK(kr.back() == big.in.kv_rows() - 1);
  CHECK(kr.size() >= 8);
  const AttentionBwdRef part = attention_bwd_reference(big.in, bf16, bf16, f32, qr, kr);
  for (std::size_t i = 0; i < qr.size(); ++i)
    for (std::size_t e = 0; e < 32; ++e) CHECK(part.dq_code[i * 32 + e] == full.dq_code[static_cast<std::size_t>(qr[i]) * 32 + e]);
  for (std::size_t i = 0; i < kr.size(); ++i)
    for (std::size_t e = 0; e < 32; ++e) {
      CHECK(part.dk_code[i * 32 + e] == full.dk_code[static_cast<std::size_t>(kr[i]) * 32 + e]);
      CHECK(part.dv_code[i * 32 + e] == full.dv_code[static_cast<std::size_t>(kr[i]) * 32 + e]);
    }
}

}  // namespace fpcert
