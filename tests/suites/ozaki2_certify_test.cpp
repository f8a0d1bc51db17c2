// tests/suites/ozaki2_certify_test.cpp — the Ozaki-II FP64 emulation certified (docs/fp64.md, "The built-in Ozaki-II
// emulation"): its deterministic bound on every element of non-integer, wide-exponent, cancelling data against the MPFR
// reference; the correct bits growing with the number of moduli as the bound predicts; the 20-moduli model certified by
// fp64's envelope inside its declared domain, by its own bound (check scheme_bound) on wider lines, and "not supported"
// on Inf/NaN; the bound as a check, held against MPFR; the short-moduli mutant refused; the declared scheme (ozaki2:moduli=20) emulated by the bitwise tier where the results are not the
// correctly rounded ones, a reordering of K not a fault of the scheme's.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "kernels/device/device_api.hpp"
#include "kernels/gemm/cpu/ozaki2.hpp"
#include "oracle/gemm_ref.hpp"
#include "oracle/refvalue.hpp"
#include "suites/mutation/faults.hpp"
#include "suites/ops/gemm/runner.hpp"
#include "suites/verdict/correct_bits.hpp"
#include "suites/verdict/scheme_bound.hpp"
#include "tests/support/ozaki2_data.hpp"
#include "tests/support/problems.hpp"
#include "tests/support/run_case.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;

namespace {
std::uint64_t bits(double x) { return std::bit_cast<std::uint64_t>(x); }
}  // namespace

TEST_CASE("ozaki2: the deterministic bound on every element, and correct bits growing with N as it predicts") {
  // Non-integer values with exponents spread over 2^-20..2^20 within every row and column (beyond what the scaling keeps
  // whole for small N), and cancelling rows: the integer-data blind spot (an emulation that truncates non-integer inputs
  // passes integer tests) cannot hide here. MPFR reference.
  const std::int64_t m = 16, n = 12, k = 96;
  std::vector<double> a, b;
  test::wide_cancelling(m, n, k, 40, test::seed() + 11, a, b);
  const GemmRef ref = gemm_reference_mpfr(MatrixView::row_major(a.data(), m, k), MatrixView::row_major(b.data(), k, n));
  std::vector<double> exact_abs(static_cast<std::size_t>(m * n));
  for (std::size_t x = 0; x < exact_abs.size(); ++x) exact_abs[x] = std::fabs(ref.c[x].hi);
  double prev_median = -1;
  int prev_min = -1;
  std::printf("ozaki2 N sweep (m=%lld n=%lld k=%lld, exponents 2^-20..2^20, cancelling rows):\n", static_cast<long long>(m),
              static_cast<long long>(n), static_cast<long long>(k));
  for (const int N : {6, 8, 10, 12, 14, 16, 18, 20}) {
    CAPTURE(N);
    const ozaki2::Plan pl = ozaki2::make_plan(N);
    ozaki2::Scaling sc;
    const std::vector<double> c = ozaki2::gemm(pl, a.data(), b.data(), m, n, k, &sc);
    const std::vector<double> bnd = ozaki2::bound(sc, a.data(), b.data(), exact_abs, m, n, k);
    std::vector<std::uint64_t> codes(c.size());
    double worst = 0;  // max |c - exact| / bound
    int predicted_min = 53;
    for (std::size_t x = 0; x < c.size(); ++x) {
      codes[x] = bits(c[x]);
      const double err = std::fabs((c[x] - ref.c[x].hi) - ref.c[x].lo);
      CAPTURE(x);
      CHECK(err <= bnd[x]);  // the bound holds on every element
      worst = std::max(worst, err / bnd[x]);
      const double rn = to_double(f64, round_ref(f64, ref.c[x], Rounder::nearest(f64)).code);
      const int pred = ozaki2::guaranteed_bits(bnd[x], rn);
      predicted_min = std::min(predicted_min, pred);
    }
    const CorrectBitsStats cb = correct_bits_stats(f64, codes, ref);
    std::printf("  N = %2d  alpha = %2d  correct bits min %2d median %4.1f  predicted min %2d  max err/bound %.3g\n", N, sc.alpha, cb.min,
                cb.median, predicted_min, worst);
    CHECK(cb.min >= predicted_min);         // as the bound predicts, element by element at the worst
    CHECK(cb.median >= prev_median);        // more moduli, more bits
    CHECK(cb.min >= prev_min);
    // alpha grows by 7 or 8 bits per two moduli (log2 256 - ...): the worst element follows it.
    if (N >= 14) CHECK(cb.min >= prev_min + 5);
    if (N >= 16) CHECK(cb.median == 53);  // most elements correctly rounded once alpha - 40 binades > 53 - a few
    if (N <= 8) CHECK(cb.min < 30);         // few moduli lose most bits here: the test can fail
    if (N <= 12) CHECK(worst > 0x1p-16);    // and the bound is not vacuous: the error comes within 2^16 of it
    prev_median = cb.median;
    prev_min = cb.min;
  }
  // 20 moduli, alpha = 73: the smallest entries of a line (40 binades down) keep 33 bits, so the cancelling elements
  // (sum |a b| ~ 2^30 |c|) keep fewer than 53: printed above, never fewer than the bound predicts.
}


TEST_CASE("ozaki2 models through the runner: certified by fp64's envelope in the domain, the short-moduli mutant refused") {
  auto host = make_host_api();
  // Uniform [-1, 1) with 53 random bits, K = 300: every sum rounds; lines span far fewer than 22 binades.
  const Problem p = test::uniform_problem(24, 20, 300, f64, test::seed() + 390);
  const GemmRef ref = gemm_reference(p.a.view(), p.b.view());
  auto good = make_gemm_kernel("model_gemm_f64_ozaki2");
  REQUIRE(good);
  const CaseResult r = test::run_graded(*good, p, ref, *host);
  INFO(r.reason);
  CHECK(r.status == CaseStatus::Pass);
  CHECK(r.metrics.max_abs > 0);  // the final rounding happened: the test can fail
  // alpha = floor((155 - 1 - 9) / 2) = 72 bits, lines spanning < 19 binades: exact operands, one rounding: RN everywhere.
  CHECK(r.metrics.correct_bits_min == 53);
  auto weak = make_gemm_kernel("model_gemm_f64_ozaki2_short");
  REQUIRE(weak);
  const CaseResult w = test::run_graded(*weak, p, ref, *host);
  INFO(w.reason);
  // 10 moduli (P ~ 2^79): alpha = floor((79 - 1 - 9) / 2) = 34 bits per operand, far from fp64: refused.
  CHECK(w.status == CaseStatus::Fail);
  CHECK(w.metrics.correct_bits_min < 40);
  // Beyond the span domain: a row spanning 2^-40 .. 1 (more than the 22 binades declared). Not "not supported" any
  // more: fp64's envelope is not applied, the scheme's own claims judge (the bitwise emulation, its bound).
  Problem wide = p;
  wide.a(3, 7) = 0x1p-40 * (1 + 0x1p-30);  // 2^-40 (1 + 2^-30): bits below the row's scaling, the scheme rounds them
  const GemmRef wref = gemm_reference(wide.a.view(), wide.b.view());
  const CaseResult ws = test::run_graded(*good, wide, wref, *host);
  INFO(ws.reason);
  CHECK(ws.status == CaseStatus::Pass);
  CHECK(ws.tier == Tier::Bitwise);
  CHECK(find_check(ws, CheckKind::Envelope) == nullptr);
  CHECK(std::any_of(ws.flags.begin(), ws.flags.end(), [](const std::string& f) {
    return f.rfind("envelope not applied: row 3 of A spans ", 0) == 0 && f.find("binades") != std::string::npos;
  }));
  const CheckResult* wsb = find_check(ws, CheckKind::SchemeBound);
  REQUIRE(wsb);
  CHECK(wsb->passed);
  CHECK(wsb->measured > 0);  // errors measured against it (the final rounding's at least): not vacuous
  const CaseResult ww = test::run_graded(*weak, wide, wref, *host);  // the short mutant there: refused by the bound too
  CHECK(ww.status == CaseStatus::Fail);
  const CheckResult* wwb = find_check(ww, CheckKind::SchemeBound);
  REQUIRE(wwb);
  CHECK_FALSE(wwb->passed);
  CHECK(wwb->measured > 1e4);  // alpha 34 against the 72 bits the declared 20 moduli keep
  // The failing case keeps its error map, and with it the correct-bits map: its fewest bits are the case's.
  REQUIRE(ww.error_map);
  REQUIRE(ww.error_map->min_correct_bits.size() == ww.error_map->max_frac.size());
  CHECK(*std::min_element(ww.error_map->min_correct_bits.begin(), ww.error_map->min_correct_bits.end()) == ww.metrics.correct_bits_min);
  CHECK(ww.metrics.correct_bits_min < 40);
  // An infinite input stays outside: the scheme has no residues for it.
  Problem inf = p;
  inf.b(5, 2) = INFINITY;
  const GemmRef iref = gemm_reference(inf.a.view(), inf.b.view());
  const CaseResult is = test::run_graded(*good, inf, iref, *host);
  CHECK(is.status == CaseStatus::NotSupported);
  CHECK(is.reason.find("finite") != std::string::npos);
}

TEST_CASE("ozaki2 declares its scheme: the bitwise tier emulates it, also where it is not correctly rounded") {
  auto host = make_host_api();
  // Rows of A spanning 21 binades (inside the declared 22): A(i, 0) = +-(1 + f) sets the row's scale, every other entry
  // is +-(1 + f) 2^-(19..21) with 52 random fraction bits, and B's row 0 is zero, so C is the sum of the small entries'
  // products alone. With 20 moduli at K = 300 each entry keeps alpha = 72 bits below its row's largest: a small one
  // keeps 51-53 of its 53 bits. The scheme rounds operands, and its results are not the correctly rounded products
  // everywhere; the bitwise tier must still hold bit for bit: it emulates the declared scheme, not RN(exact).
  Problem p = test::uniform_problem(24, 20, 300, f64, test::seed() + 391);
  for (std::int64_t i = 0; i < p.m; ++i)
    for (std::int64_t q = 0; q < p.k; ++q) {
      int e = 0;
      const double f = std::frexp(std::fabs(p.a(i, q)), &e);  // [0.5, 1): the value's own 53 bits
      p.a(i, q) = std::copysign(std::ldexp(f, q == 0 ? 1 : -18 - static_cast<int>(q % 3)), p.a(i, q));
    }
  for (std::int64_t j = 0; j < p.n; ++j) p.b(0, j) = 0.0;
  const GemmRef ref = gemm_reference(p.a.view(), p.b.view());
  auto good = make_gemm_kernel("model_gemm_f64_ozaki2");
  REQUIRE(good);
  CHECK(order_spec(good->traits().sum_order) == "ozaki2:moduli=20");
  const CaseResult r = test::run_graded(*good, p, ref, *host);
  INFO(r.reason);
  CHECK(r.status == CaseStatus::Pass);
  CHECK(r.tier == Tier::Bitwise);
  const CheckResult* b = find_check(r, CheckKind::Bitwise);
  REQUIRE(b);
  CHECK(b->passed);
  // How far from RN(exact) the scheme is here, against the MPFR reference: every element within the scheme's bound.
  const std::vector<double> got = ozaki2::gemm(ozaki2::make_plan(20), p.a.data.data(), p.b.data.data(), p.m, p.n, p.k);
  std::int64_t not_rn = 0;
  for (std::size_t x = 0; x < got.size(); ++x)
    not_rn += bits(got[x]) != bits(to_double(f64, round_ref(f64, ref.c[x], Rounder::nearest(f64)).code));
  MESSAGE("ozaki2 (20 moduli), rows spanning 21 binades: " << not_rn << " of " << p.m * p.n
                                                           << " elements differ from RN(exact); the bitwise tier holds on all");
  CHECK(not_rn > 0);  // the data makes the scheme's operand rounding show: bitwise here is not "correctly rounded"
  // The short-moduli mutant (10 moduli declared as 20) is refused by the bitwise check itself.
  auto weak = make_gemm_kernel("model_gemm_f64_ozaki2_short");
  REQUIRE(weak);
  const CaseResult w = test::run_graded(*weak, p, ref, *host);
  CHECK(w.status == CaseStatus::Fail);
  const CheckResult* wb = find_check(w, CheckKind::Bitwise);
  REQUIRE(wb);
  CHECK_FALSE(wb->passed);
  // Exact in K: another order of the K products is the scheme itself, so one_run_in_n is no fault of it; a sequential
  // fp64 model still takes it.
  CHECK(fault_not_applicable(Fault::OneRunInN, good->traits()).find("exact in K") != std::string::npos);
  CHECK(fault_not_applicable(Fault::OneRunInN, make_gemm_kernel("model_gemm_f64")->traits()).empty());
}

TEST_CASE("scheme_bound: Ozaki-II's bound as a check, held against the MPFR reference") {
  // Wide non-integer cancelling data (exponents 2^-20..2^20 within every line), where the scheme rounds operands.
  const std::int64_t m = 12, n = 10, k = 64;
  std::vector<double> a, b;
  test::wide_cancelling(m, n, k, 40, test::seed() + 12, a, b);
  const GemmRef ref = gemm_reference_mpfr(MatrixView::row_major(a.data(), m, k), MatrixView::row_major(b.data(), k, n));
  const KernelTraits t = ozaki2_traits(20);
  const std::vector<double> c = ozaki2::gemm(ozaki2::make_plan(20), a.data(), b.data(), m, n, k);
  const auto ok = scheme_bound_check(t, m, n, k, a, b, ref, c);
  REQUIRE(ok);
  INFO(ok->detail);
  CHECK(ok->kind == CheckKind::SchemeBound);
  CHECK(ok->passed);
  CHECK(ok->measured > 0x1p-30);  // the operands' rounding shows: the check is not vacuous here
  CHECK(ok->detail.find("alpha = ") != std::string::npos);  // the worst element's terms
  // One element moved to the exact value plus 0.9 and 1.1 times its bound (computed here from the MPFR reference): the
  // first holds, the second is refused at that element.
  ozaki2::Scaling sc = ozaki2::choose_scaling(ozaki2::make_plan(20), a.data(), b.data(), m, n, k);
  std::vector<double> exact_abs(c.size());
  for (std::size_t x = 0; x < c.size(); ++x) exact_abs[x] = std::fabs(ref.c[x].hi);
  const std::vector<double> bnd = ozaki2::bound(sc, a.data(), b.data(), exact_abs, m, n, k);
  std::size_t x = 0;  // the element whose bound is the widest against its value (a cancelling one)
  for (std::size_t y = 1; y < c.size(); ++y)
    if (bnd[y] * exact_abs[x] > bnd[x] * exact_abs[y]) x = y;
  REQUIRE(bnd[x] > 0x1p20 * 0x1p-52 * exact_abs[x]);  // far above hi's ulp: hi + f bound is f bound away, lo aside
  for (const double f : {0.9, 1.1}) {
    CAPTURE(f);
    std::vector<double> moved = c;
    moved[x] = ref.c[x].hi + f * bnd[x];
    const auto r = scheme_bound_check(t, m, n, k, a, b, ref, moved);
    REQUIRE(r);
    CHECK(r->passed == (f < 1));
    if (f > 1) CHECK(r->first_index == static_cast<std::int64_t>(x));
  }
  // Fewer moduli than declared: the 10-moduli result is beyond the 20-moduli bound.
  const std::vector<double> c10 = ozaki2::gemm(ozaki2::make_plan(10), a.data(), b.data(), m, n, k);
  const auto short_r = scheme_bound_check(t, m, n, k, a, b, ref, c10);
  REQUIRE(short_r);
  CHECK_FALSE(short_r->passed);
  // No scheme bound for other orders; a non-finite input is not graded by it (said so).
  auto plain = make_gemm_kernel("model_gemm_f64");
  REQUIRE(plain);
  CHECK_FALSE(scheme_bound_check(plain->traits(), m, n, k, a, b, ref, c));
  std::vector<double> a_inf = a;
  a_inf[5] = INFINITY;
  const auto inf_r = scheme_bound_check(t, m, n, k, a_inf, b, ref, c);
  REQUIRE(inf_r);
  CHECK(inf_r->passed);
  CHECK(inf_r->detail.find("not applied") != std::string::npos);
}

TEST_CASE("ozaki2::bound is its formula element by element (the row-streamed sums equal a column walk's, bit for bit)") {
  // docs/fp64.md, "The bound": E_ij from sum |b_kj| over a_ik != 0, sum |a_ik| over b_kj != 0 and the count of k with
  // both nonzero, each taken k ascending. Written out here with a walk down column j, on wide cancelling data with zeros
  // planted in A and B (so that every condition selects), on a shape whose rows split across threads.
  const std::int64_t m = 37, n = 29, k = 53;
  std::vector<double> a, b;
  test::wide_cancelling(m, n, k, 40, test::seed() + 13, a, b);
  for (std::size_t x = 0; x < a.size(); x += 7) a[x] = 0;
  for (std::size_t x = 3; x < b.size(); x += 5) b[x] = 0;
  const ozaki2::Scaling sc = ozaki2::choose_scaling(ozaki2::make_plan(14), a.data(), b.data(), m, n, k);
  const GemmRef ref = gemm_reference(MatrixView::row_major(a.data(), m, k), MatrixView::row_major(b.data(), k, n));
  std::vector<double> exact_abs(static_cast<std::size_t>(m * n));
  for (std::size_t x = 0; x < exact_abs.size(); ++x) exact_abs[x] = std::fabs(ref.c[x].hi);
  const std::vector<double> bnd = ozaki2::bound(sc, a.data(), b.data(), exact_abs, m, n, k);
  std::int64_t differ = 0;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double sb = 0, sa = 0, both = 0;
      for (std::int64_t q = 0; q < k; ++q) {
        const double x = a[static_cast<std::size_t>(i * k + q)], y = b[static_cast<std::size_t>(q * n + j)];
        if (x != 0) sb += std::fabs(y);
        if (y != 0) sa += std::fabs(x);
        if (x != 0 && y != 0) both += 1;
      }
      const int si = sc.s[static_cast<std::size_t>(i)], tj = sc.t[static_cast<std::size_t>(j)];
      const double ops = std::ldexp(sb, -si - 1) + std::ldexp(sa, -tj - 1) + std::ldexp(both, -si - tj - 2);
      const auto x = static_cast<std::size_t>(i * n + j);
      const double want = (ops * (1 + 0x1p-53) + 0x1p-53 * exact_abs[x] + 0x1p-1072) * (1 + std::max(0x1p-40, (k + 8) * 0x1p-52));
      differ += std::bit_cast<std::uint64_t>(want) != std::bit_cast<std::uint64_t>(bnd[x]);
    }
  CHECK(differ == 0);
}
