// suites/verdict/grade.cpp — |c - ref| against the bound, element by element; the metrics of DESIGN.md.
#include "suites/verdict/grade.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <span>
#include <tuple>
#include <utility>

#include "base/parallel.hpp"
#include "kernels/emu/split.hpp"
#include "kernels/tc/cards.hpp"
#include "oracle/convert/representable.hpp"
#include "oracle/ulp.hpp"
#include "suites/verdict/emulate/emulate.hpp"
#include "suites/verdict/correct_bits.hpp"
#include "suites/verdict/envelope.hpp"
#include "suites/verdict/error_stats.hpp"
#include "suites/verdict/order_free.hpp"
#include "suites/verdict/scheme_bound.hpp"
#include "suites/verdict/statistics.hpp"
#include "suites/verdict/unwritten.hpp"

namespace fpcert {

bool all_representable(const std::vector<double>& values, const Format& f) {
  for (double v : values)
    if (std::isfinite(v) && !exactly_representable(f, v)) return false;
  return true;
}

namespace {

std::string element_text(std::int64_t x, std::int64_t n) { return fmt::format("({}, {})", x / n, x % n); }

/// Traits that contradict themselves (the `declaration` check): the kernel would be judged against
/// arithmetic it cannot perform.
std::string declaration_problem(const KernelTraits& t) {
  if (const std::string why = check_order(t.sum_order); !why.empty()) return "order: " + why;
  if (const std::string why = determinism_problem(t); !why.empty()) return "determinism: " + why;
  const SummationOrder& o = t.sum_order;
  if (o.kind == OrderKind::SplitProducts) {
    const SplitScheme* sc = find_split_scheme(o.split_scheme);
    // The slices hold at most slices * p bits of an operand: an effective unit roundoff below
    // 2^-(slices * p) claims more than the slices can carry.
    const double implied = std::ldexp(1.0, -sc->slices * sc->slice->precision());
    if (t.operand_u < implied)
      return fmt::format("operand_u {} is below what {} {} slices can carry (2^-{})", pow2_text(t.operand_u), sc->slices, sc->slice->tag,
                         sc->slices * sc->slice->precision());
  }
  if (t.domain.span_scheme_graded && !claims_scheme_bound(t))
    return "lines beyond the span domain graded by the scheme's own bound, but " + order_spec(o) + " claims none";
  if (t.promote_every > 0 && o.kind == OrderKind::BlockedK && o.block != t.promote_every)
    return fmt::format("promotion every {} products but blocks of {}", t.promote_every, o.block);
  return {};
}

/// Whether some element's exact value (finite) is not representable in f: a rounding into f happened.
bool some_inexact(std::span<const RefValue> v, const Format& f) {
  const Rounder rn = Rounder::nearest(f);
  for (const RefValue& r : v)
    if (std::isfinite(r.hi) && !(r.lo == 0 && r.tail == 0 && to_double(f, round_ref(f, r, rn).code) == r.hi)) return true;
  return false;
}

/// Whether some output differs from its exact value rounded to nearest into the output format (an
/// error was made somewhere, whether or not the exact values needed rounding).
bool any_error(const std::vector<std::uint64_t>& codes, std::span<const RefValue> exact, const Format& f) {
  const Rounder rn = Rounder::nearest(f);
  for (std::size_t x = 0; x < codes.size(); ++x)
    if (std::isfinite(exact[x].hi) && round_ref(f, exact[x], rn).code != codes[x]) return true;
  return false;
}

/// The tiers: bitwise where the order is emulable, the envelope always, the statistical test on top
/// of the envelope where bitwise is not used and the accumulation claims round-to-nearest. a_in, b_in: the
/// inputs as the kernel received them; overflowed: elements whose non-finite output is an accepted overflow of
/// a partial sum (their error fraction is not graded); case_wide: wide_sums of the case's own A, B and reference.
void judge_tiers(const GradeInput& in, CaseResult& out, const std::vector<double>& a_in, const std::vector<double>& b_in,
                 const std::vector<std::uint8_t>& overflowed, const WideSums& case_wide) {
  const Problem& p = *in.problem;
  const GemmRef& ref = *in.ref;
  const KernelTraits& t = *in.traits;
  const Format& of = *t.out;
  const auto& codes = *in.codes;
  const auto mn = static_cast<std::size_t>(p.m * p.n);
  auto add = [&](CheckKind k, bool passed, std::string detail, std::int64_t first = -1, double measured = 0, double limit = 0) {
    out.checks.push_back({k, passed, std::move(detail), first, measured, limit});
  };
  // The inputs as the kernel received them and the operands as its multiplier sees them.
  // A block-scaled kernel's inputs are the operands its declared quantizer makes (the runner passes them
  // in in.a / in.b, suites/verdict/block_reference.hpp): its tiers judge the arithmetic after quantization.
  const bool split = t.operand_u > 0;
  const std::vector<double> a_op = split ? a_in : operand_values(a_in, *t.a_input, *t.a_operand, t.input_rounding);
  const std::vector<double> b_op = split ? b_in : operand_values(b_in, *t.b_input, *t.b_operand, t.input_rounding);
  // ref': the exact product of the inputs as the kernel receives them (fpcert's own rounding of the case's
  // values into the input formats is measured exactly; the kernel's narrowing into operands is bounded).
  PhaseTrace trace("FPCERT_GRADE_TRACE", "grade tiers", mn >= (1u << 20));
  const bool same = same_bits(a_in, p.a.data) && same_bits(b_in, p.b.data);
  GemmRef own;
  std::shared_ptr<const GemmRef> kept;  // the caller's, shared by every kernel and mutant with these input formats
  if (!same && in.inputs_ref && !in.a && !in.b) kept = in.inputs_ref(*t.a_input, *t.b_input, t.input_rounding);
  else if (!same) own = gemm_reference(MatrixView::row_major(a_in.data(), p.m, p.k), MatrixView::row_major(b_in.data(), p.k, p.n));
  const GemmRef& rop = same ? ref : kept ? *kept : own;
  trace.mark("operands, ref'");

  OrderFreeElements free;  // the elements with one value in every summation order (where no order is emulated)

  // Envelope.
  const EnvelopeModel env = make_envelope(t, p.k);
  out.envelope = env.bound;
  // The operands' sums of magnitudes for the operand terms (of the inputs the kernel received).
  std::vector<double> row_in(static_cast<std::size_t>(p.m), 0.0), col_in(static_cast<std::size_t>(p.n), 0.0);
  if (env.eta_a > 0 || env.eta_b > 0) {
    for (std::int64_t i = 0; i < p.m; ++i)
      for (std::int64_t q = 0; q < p.k; ++q) row_in[static_cast<std::size_t>(i)] += std::fabs(a_in[static_cast<std::size_t>(i * p.k + q)]);
    for (std::int64_t q = 0; q < p.k; ++q)
      for (std::int64_t j = 0; j < p.n; ++j) col_in[static_cast<std::size_t>(j)] += std::fabs(b_in[static_cast<std::size_t>(q * p.n + j)]);
    for (auto* v : {&row_in, &col_in})
      for (double& x : *v) x *= 1 + 0x1p-30;  // K roundings of a sum of magnitudes: within K 2^-53 < 2^-30 (K < 2^23)
  }
  // Elements whose sums overflow double (fp64 near its largest values), graded scaled: grade's where a_in is the case's.
  const WideSums own_wide = same ? WideSums{} : wide_sums(a_in, b_in, p.m, p.n, p.k, rop);
  const WideSums& wide = same ? case_wide : own_wide;
  std::vector<double> fracs;
  const EnvelopeVerdict ev = evaluate_envelope(env, of, p.m, p.n, rop, codes, row_in, col_in, &fracs, &wide);
  auto ungraded_overflows = [&](std::vector<double>& f) {
    for (std::size_t x = 0; x < mn; ++x)
      if (overflowed[x]) f[x] = NAN;
  };
  std::vector<double> got(mn);
  parallel_for(mn, kGradeChunk, [&](std::uint64_t x0, std::uint64_t x1, unsigned) {
    for (std::uint64_t x = x0; x < x1; ++x) got[x] = to_double(of, codes[x]);
  });
  // A scheme with a bound of its own is held to it (check scheme_bound); beyond its span domain that bound is the
  // case's allowance, so the error fractions (metrics, error map, worst elements) are err / that bound.
  const bool waived = !in.envelope_waived.empty() && claims_scheme_bound(t);
  std::optional<CheckResult> scheme = scheme_bound_check(t, p.m, p.n, p.k, a_in, b_in, rop, got, waived ? &fracs : nullptr);
  ungraded_overflows(fracs);
  trace.mark("envelope");
  record_error_fractions(fracs, p.m, p.n, static_cast<std::size_t>(std::max(in.worst_count, 1)), out);
  trace.mark("error fractions");
  // The worst element's values, so that the failure can be read without a rerun (the case's `worst` list is the course
  // gate's, another allowance).
  auto worst_values = [&](std::int64_t x) {
    if (x < 0 || static_cast<std::size_t>(x) >= mn) return std::string();
    const auto ux = static_cast<std::size_t>(x);
    const double err = std::fabs((got[ux] - rop.c[ux].hi) - rop.c[ux].lo);
    return fmt::format(" (got {} = {:.9g}, ref' {:.9g}, |c - ref'| {:.4g}, allowed {:.4g}, sum |a b| {:.4g})", hex_code(of, codes[ux]), got[ux],
                       rop.c[ux].hi, err, std::isfinite(ev.worst) && ev.worst > 0 ? err / ev.worst : NAN, rop.abs_sum[ux]);
  };
  if (waived)
    out.flags.push_back("envelope not applied: " + in.envelope_waived + "; the scheme's own bound judges (scheme_bound), and the "
                        "error fractions are against it");
  else add(CheckKind::Envelope, ev.exceed == 0,
      ev.exceed ? fmt::format("envelope exceeded at {} element(s): max |c - ref'| / allowed = {:.4g} at {}{}", ev.exceed, ev.worst,
                              element_text(ev.worst_index, p.n), worst_values(ev.worst_index))
                : fmt::format("within the envelope: max |c - ref'| / allowed = {:.4g}{}; {} of {} element(s) would also admit 0",
                              ev.worst, env.exists ? "" : " (no bound exists at this K)", ev.admit_zero, ev.graded),
      ev.exceed ? ev.worst_index : -1, ev.worst, 1);

  // Bitwise: the declared order, or one given from outside (a revealed tree) where it can be used.
  const bool outside = in.order && in.order->fallback.empty() && in.strongest == Tier::Bitwise;
  if (in.order && !in.order->fallback.empty())
    out.flags.push_back("order: " + in.order->name + " not used (" + in.order->fallback + "); the declared order decides");
  std::string no_emulation = in.strongest != Tier::Bitwise ? "weaker tier asked for" : outside ? std::string() : emulation_unavailable(t);
  const std::string order_name = outside ? in.order->name : order_spec(t.sum_order);
  bool vacuous = ev.vacuous();
  std::shared_ptr<const Emulated> emulated;
  if (no_emulation.empty()) {
    const auto emulate = [&] {
      Emulated e;
      try {
        e.codes = outside ? in.order->emulate(a_in, b_in) : emulate_gemm(t, p.m, p.n, p.k, a_in, b_in, {in.a_tensor_scale, in.b_tensor_scale});
      } catch (const EmulationDeclined& x) {
        e.declined = x.what();  // a card outside what it was validated on: the envelope judges
      }
      return e;
    };
    emulated = in.emulated && !outside && !in.a && !in.b ? in.emulated(t, emulate) : std::make_shared<const Emulated>(emulate());
    no_emulation = emulated->declined;
    trace.mark("emulation");
  }
  static const std::vector<std::uint64_t> kNone;
  const std::vector<std::uint64_t>& emu = emulated ? emulated->codes : kNone;
  if (no_emulation.empty()) {
    struct Diff {
      std::int64_t diff = 0, first = -1, zeros = 0;
      double max_ulps = 0;
    };
    const Diff d = parallel_reduce(mn, kGradeChunk, Diff{}, [&](std::uint64_t x0, std::uint64_t x1) {
      Diff D;
      for (std::uint64_t x = x0; x < x1; ++x) {
        D.zeros += classify(of, emu[x]) == FpClass::Zero;
        const bool both_nan = classify(of, codes[x]) == FpClass::NaN && classify(of, emu[x]) == FpClass::NaN;
        if (codes[x] == emu[x] || both_nan) continue;
        ++D.diff;
        if (D.first < 0) D.first = static_cast<std::int64_t>(x);
        const double u = ulp_distance(of, codes[x], RefValue{to_double(of, emu[x]), 0.0, 0});
        D.max_ulps = std::max(D.max_ulps, std::isfinite(u) ? u : INFINITY);
      }
      return D;
    }, [](Diff& acc, const Diff& D) {
      acc.zeros += D.zeros;
      acc.diff += D.diff;
      if (acc.first < 0) acc.first = D.first;
      acc.max_ulps = std::max(acc.max_ulps, D.max_ulps);
    });
    const std::int64_t diff = d.diff, first = d.first, zeros = d.zeros;
    const double max_ulps = d.max_ulps;
    // What the declared arithmetic predicts, graded as the kernel's output is.
    // Equal to the output up to NaN payloads (diff == 0): the same fractions and ULP distances element by element (every
    // NaN code is graded alike), so the histograms are the measured ones (a 4096 x 4096 case: a second of passes saved).
    if (diff == 0) {
      out.metrics.predicted_err_frac_hist = out.metrics.err_frac_hist;
      out.metrics.predicted_ulp_hist = out.metrics.ulp_hist;
    } else {
      std::vector<double> emu_fracs;
      if (waived) {  // against the allowance the kernel's fractions use: the scheme's bound
        std::vector<double> emu_got(mn);
        for (std::size_t x = 0; x < mn; ++x) emu_got[x] = to_double(of, emu[x]);
        scheme_bound_check(t, p.m, p.n, p.k, a_in, b_in, rop, emu_got, &emu_fracs);
      } else {
        evaluate_envelope(env, of, p.m, p.n, rop, emu, row_in, col_in, &emu_fracs, &wide);
      }
      ungraded_overflows(emu_fracs);
      out.metrics.predicted_err_frac_hist = err_frac_histogram(emu_fracs);
      out.metrics.predicted_ulp_hist = ulp_histogram(of, emu, *in.ref);
    }
    trace.mark("bitwise, hists");
    const int allow = outside ? 0 : t.sum_order.bitwise_ulps;
    const bool ok = diff == 0 || (allow > 0 && max_ulps <= allow);
    add(CheckKind::Bitwise, ok,
        diff == 0 ? fmt::format("equal bit for bit to the emulation of {}", order_name)
        : ok      ? fmt::format("{} element(s) differ from the emulation of {}, by at most {:.3g} ulp (declared: {})", diff,
                                order_name, max_ulps, allow)
                  : fmt::format("{} element(s) differ from the emulation of {}, first at {}: got {}, {} gives {} "
                                "({:.3g} ulp{})",
                                diff, order_name, element_text(first, p.n), hex_code(of, codes[static_cast<std::size_t>(first)]),
                                outside ? "that order" : "the declared arithmetic",
                                hex_code(of, emu[static_cast<std::size_t>(first)]), max_ulps,
                                allow ? fmt::format("; declared tolerance {} ulp", allow) : ""),
        first, max_ulps, allow);
    out.tier = Tier::Bitwise;
    vacuous = mn > 0 && zeros == static_cast<std::int64_t>(mn);  // only an all-zeros emulation admits an all-zeros output
  } else {
    out.tier = Tier::Envelope;
    // Where the data leave every order one value, an order nobody declared still gets a bit-for-bit verdict.
    if (in.strongest == Tier::Bitwise) free = order_free_elements(t, p.m, p.n, p.k, a_in, b_in, a_op, b_op);
    const bool all_free = mn > 0 && free.count() == static_cast<std::int64_t>(mn);
    out.flags.push_back("tier: " + std::string(in.strongest != Tier::Bitwise ? "a weaker tier asked for"
                                               : all_free ? "bitwise on order-free elements only (" + no_emulation + ")"
                                                          : "no bitwise verdict (" + no_emulation + ")"));
    if (free.count() > 0) {
      std::int64_t diff = 0, first = -1;
      double max_ulps = 0;
      for (std::size_t x = 0; x < mn; ++x) {
        const OrderFreeKind kd = free.kind[x];
        if (kd == OrderFreeKind::None) continue;
        if (kd == OrderFreeKind::ExactZero ? classify(of, codes[x]) == FpClass::Zero : codes[x] == free.expect[x]) continue;
        ++diff;
        if (first < 0) first = static_cast<std::int64_t>(x);
        const double u = ulp_distance(of, codes[x], RefValue{to_double(of, free.expect[x]), 0.0, 0});
        max_ulps = std::max(max_ulps, std::isfinite(u) ? u : INFINITY);
      }
      const std::string kinds = fmt::format("{} exact sum(s), {} exact zero(s), {} single rounding(s) to nearest of two products",
                                            free.exact, free.zero, free.one_rounding);
      add(CheckKind::Bitwise, diff == 0,
          diff == 0 ? fmt::format("order-free: {} element(s) have one value in every summation order ({}): all equal it", free.count(), kinds)
                    : fmt::format("order-free: {} of {} element(s) that have one value in every summation order ({}) differ, first at "
                                  "{}: got {}, every order of the declared arithmetic gives {} ({:.3g} ulp)",
                                  diff, free.count(), kinds, element_text(first, p.n), hex_code(of, codes[static_cast<std::size_t>(first)]),
                                  free.kind[static_cast<std::size_t>(first)] == OrderFreeKind::ExactZero
                                      ? std::string("a zero")
                                      : hex_code(of, free.expect[static_cast<std::size_t>(first)]),
                                  max_ulps),
          first, max_ulps, 0);
    }
    if (all_free) {
      out.tier = Tier::Bitwise;
      vacuous = free.zero == static_cast<std::int64_t>(mn);
    }
    // Statistical, on top of the envelope.
    const std::string why = in.strongest == Tier::Envelope ? "the envelope alone asked for" : bias_test_unavailable(t, env);
    if (why.empty()) {
      const BiasTest bt = rn_bias_test(t, env, p.m, p.n, p.k, a_op, b_op, rop.c, rop.abs_sum, got);
      if (bt.elements > 0) {
        add(CheckKind::Statistical, !bt.fired(),
            fmt::format("{}: mean normalised error toward zero {:.3g} (limit {:.3g} for a false-alarm rate {:g}; {:.0f}% of {} element(s) "
                        "err toward zero{})",
                        bt.fired() ? "biased beyond round-to-nearest" : "unbiased as round-to-nearest allows", bt.statistic, bt.threshold,
                        kStatisticalAlpha, 100 * bt.toward_zero, bt.elements, bt.allowance_used ? "; absorption allowance applied" : ""),
            bt.fired() ? bt.worst_index : -1, bt.statistic, bt.threshold);
        if (!all_free) out.tier = Tier::EnvelopeStatistical;
      }
    } else {
      out.flags.push_back("statistical tier not applied: " + why);
    }
  }
  if (scheme) out.checks.push_back(std::move(*scheme));
  trace.mark("other tiers");
  out.vacuous = vacuous;
  if (vacuous)
    out.flags.push_back(out.tier == Tier::Bitwise ? "vacuous: the declared arithmetic gives all zeros here"
                                                  : "vacuous: the envelope admits an all-zeros output here (no evidence)");

  // Evidence: the kernel's error sources this case exercised, when its verdict is not vacuous.
  if (!vacuous) {
    for (const std::string& src : error_sources(t)) {
      bool seen = false;
      if (src.rfind("operand A", 0) == 0) seen = !same_bits(a_op, a_in);
      else if (src.rfind("operand B", 0) == 0) seen = !same_bits(b_op, b_in);
      else if (src == "split operands") {
        const SplitScheme* sc = find_split_scheme(t.sum_order.split_scheme);
        seen = sc ? !(all_representable(a_in, *sc->slice) && all_representable(b_in, *sc->slice)) : true;
      } else if (src == "products") seen = p.k > 0;
      else if (src == "accumulation") seen = p.k >= 2 && (some_inexact(rop.c, *t.acc) || any_error(codes, rop.c, of));
      else if (src == "promotion") seen = p.k > t.promote_every;
      else if (src == "output") seen = some_inexact(rop.c, of);
      if (seen) out.evidence.push_back(src);
    }
  }
  // A kernel declaring run-to-run nondeterminism: its later runs, judged with what the checked run's verdict derived.
  if (in.later) envelope_later_runs(in, {a_in, b_in, rop, row_in, col_in, free, wide}, out);
  trace.mark("evidence, later");
}

}  // namespace

std::vector<std::string> missing_evidence(const KernelTraits& t, const std::vector<CaseResult>& cases) {
  std::vector<std::string> missing;
  for (const std::string& src : error_sources(t)) {
    bool found = false;
    for (const CaseResult& c : cases)
      if (c.status == CaseStatus::Pass || c.status == CaseStatus::Fail)
        found = found || std::find(c.evidence.begin(), c.evidence.end(), src) != c.evidence.end();
    if (!found) missing.push_back(src);
  }
  return missing;
}

void grade(const GradeInput& given, CaseResult& out) {
  // The installed behaviour cards give a tensor-core order its measured block model, and an unknown order on
  // tensor cores the measured bits of its instructions (kernels/tc/cards.hpp); where they came from is stated.
  const KernelTraits applied = tc::with_installed_cards(*given.traits);
  GradeInput in = given;
  in.traits = &applied;
  if (!applied.sum_order.block_model.instruction.empty())
    out.flags.push_back("tensor-core block model: " + applied.sum_order.block_model.source);
  const Problem& p = *in.problem;
  const GemmRef& ref = *in.ref;
  const KernelTraits& t = *in.traits;
  const Format& of = *t.out;
  const auto& codes = *in.codes;
  const std::int64_t mn = p.m * p.n;
  PhaseTrace trace("FPCERT_GRADE_TRACE", "grade", mn >= (1 << 20));
  Metrics& M = out.metrics;
  // The pre-fill of an e4m3 output is its NaN, a correct result where the exact one is NaN or beyond the range.
  const UnwrittenCount uw = discount_prefill_results(of, codes, {in.unwritten, in.first_unwritten},
                                                     [&](std::size_t x) { return ref.c[x].hi; });
  M.unwritten = uw.unwritten;
  M.first_unwritten = uw.first_unwritten;

  // Storage representability: the bound's storage terms vanish when inputs cannot round.
  const Format& sa = storage_format(*t.a_input, *t.a_operand);
  const Format& sb = storage_format(*t.b_input, *t.b_operand);
  const Matrix& A = in.a ? *in.a : p.a;
  const Matrix& B = in.b ? *in.b : p.b;
  const bool a_exact = in.a_exact ? *in.a_exact : t.operand_u == 0 && all_representable(A.data, sa);
  const bool b_exact = in.b_exact ? *in.b_exact : t.operand_u == 0 && all_representable(B.data, sb);
  // Flag it where the kernel's design narrows its inputs (storage below the accumulator's
  // precision, e.g. fp16/bf16/fp8 storage with an fp32 accumulator) and these inputs never round.
  // (Block-scaled kernels: the runner flags whether their quantizer rounded, suites/verdict/block_reference.hpp.)
  if (!t.block.active() && a_exact && b_exact && (sa.precision() < t.acc->precision() || sb.precision() < t.acc->precision()))
    out.flags.push_back(fmt::format("inputs-do-not-force-rounding: every input is exactly representable in the kernel's "
                                    "storage ({}/{}), so storage rounding is not exercised; the gate then covers "
                                    "accumulation and output rounding only",
                                    sa.tag, sb.tag));

  double ref_max = 0;
  for (std::int64_t x = 0; x < mn; ++x)
    if (std::isfinite(ref.c[static_cast<std::size_t>(x)].hi)) ref_max = std::max(ref_max, std::fabs(ref.c[static_cast<std::size_t>(x)].hi));
  M.ref_max_abs = ref_max;

  BoundInputs bi;
  bi.traits = &t;
  bi.k = p.k;
  bi.a_exact = a_exact, bi.b_exact = b_exact;
  bi.ref_max_abs = ref_max;
  out.bound = make_bound(in.variant, bi);

  // sum_k |a_ik| and sum_k |b_kj| for the underflow terms of the bound.
  std::vector<double> row_abs_a(static_cast<std::size_t>(p.m), 0.0), col_abs_b(static_cast<std::size_t>(p.n), 0.0);
  for (std::int64_t i = 0; i < p.m; ++i)
    for (std::int64_t q = 0; q < p.k; ++q) row_abs_a[static_cast<std::size_t>(i)] += std::fabs(A(i, q));
  for (std::int64_t q = 0; q < p.k; ++q)
    for (std::int64_t j = 0; j < p.n; ++j) col_abs_b[static_cast<std::size_t>(j)] += std::fabs(B(q, j));
  // The inputs as the kernel received them (a block-scaled kernel's: the operands its declared quantizer makes,
  // in in.a / in.b, suites/verdict/block_reference.hpp), for the tiers and for the overflow reach of partial sums.
  const std::vector<double> a_in = in.a ? in.a->data : round_values(p.a.data, *t.a_input, t.input_rounding);
  const std::vector<double> b_in = in.b ? in.b->data : round_values(p.b.data, *t.b_input, t.input_rounding);
  const double growth = make_envelope(t, p.k).growth, limit = overflow_limit(t);
  auto reach = [&](std::int64_t x) { return overflow_reach(a_in, b_in, p.n, p.k, x, growth, limit); };
  std::vector<std::uint8_t> overflowed_at(static_cast<std::size_t>(mn), 0);  // accepted overflows of a partial sum
  const WideSums wide = wide_sums(p.a.data, p.b.data, p.m, p.n, p.k, ref);  // sums beyond double, graded scaled
  // The Frobenius sums scaled by a power of two near double's largest values (same ratio; unscaled, the squares overflow).
  const double fro_scale = ref_max > 0x1p500 ? std::ldexp(1.0, -std::ilogb(ref_max)) : 1.0;
  // Element by element, in parallel chunks; partial results merged in chunk order so "first" and
  // ties (the smallest index wins) do not depend on the thread count.
  struct Cand {
    double frac;
    std::int64_t idx;
    double err, allowed, ulps;
  };
  struct Part {
    double sum_err2 = 0, sum_ref2 = 0, max_err = 0, cw = 0, worst_frac = 0;
    std::int64_t worst_idx = -1, nonfinite = 0, first_nonfinite = -1, overflowed = 0, first_bad_special = -1, beyond = 0, cancelled = 0,
                 partial = 0, inf_operand = 0, nan_ref = 0;
    std::vector<std::uint64_t> hist = std::vector<std::uint64_t>(18, 0);
    std::vector<Cand> cands;  // this chunk's worst, at most worst_count
    double floor = -INFINITY;  // after a trim: the worst_count-th fraction kept; a later element at or below it never ranks
  };
  const std::size_t keep = static_cast<std::size_t>(std::max(in.worst_count, 1));
  // A finite reference below the output's largest finite magnitude rounds to a finite value there: |exact - hi| is at
  // most half a double ulp of hi, and the largest finite value is a double above |hi|. Only the others are rounded
  // below to see whether the output format holds them (a fifth of the per-element pass's instructions, callgrind).
  const double out_max = of.max_finite();
  trace.mark("set-up");
  std::vector<double> ulps(static_cast<std::size_t>(mn));
  // |c - ref| and |ref| of the graded elements (0 elsewhere, as in the Frobenius sums), for the row-sum norm.
  std::vector<double> elem_err(static_cast<std::size_t>(mn), 0.0), elem_ref(static_cast<std::size_t>(mn), 0.0);
  constexpr std::uint64_t kChunk = 1 << 14;
  const std::uint64_t nchunks = (static_cast<std::uint64_t>(mn) + kChunk - 1) / kChunk;
  std::vector<Part> parts(nchunks);
  parallel_for(nchunks, 1, [&](std::uint64_t c0, std::uint64_t c1, unsigned) {
    for (std::uint64_t c = c0; c < c1; ++c) {
      Part& P = parts[c];
      const auto x0 = static_cast<std::int64_t>(c * kChunk);
      const std::int64_t x1 = std::min<std::int64_t>(mn, x0 + static_cast<std::int64_t>(kChunk));
      auto consider = [&](const Cand& cd) {
        if (P.worst_idx < 0 || cd.frac > P.worst_frac) {
          P.worst_frac = cd.frac, P.worst_idx = cd.idx;
        }
        // Elements come in index order, so one with a fraction at or below the floor ranks after every kept one
        // (larger fractions first, then smaller indices): it is left out without the sort it would have cost.
        if (cd.frac <= P.floor) return;
        P.cands.push_back(cd);
        if (P.cands.size() > 4 * keep) {  // keep the chunk's worst few
          std::partial_sort(P.cands.begin(), P.cands.begin() + static_cast<std::ptrdiff_t>(keep), P.cands.end(),
                            [](const Cand& a, const Cand& b) { return a.frac > b.frac || (a.frac == b.frac && a.idx < b.idx); });
          P.cands.resize(keep);
          P.floor = P.cands.back().frac;
        }
      };
      std::int64_t i = x0 / p.n, j = x0 % p.n;  // element x is (i, j), counted: no division per element
      for (std::int64_t x = x0; x < x1; ++x, ++j) {
        if (j == p.n) j = 0, ++i;
        const auto ux = static_cast<std::size_t>(x);
        const std::uint64_t code = codes[ux];
        const RefValue& r = ref.c[ux];
        const double got = to_double(of, code);
        const FpClass gc = classify(of, code);
        const bool ref_finite = std::isfinite(r.hi);
        // The reference as the output format would hold it (it may overflow to Inf there, or to NaN without Inf).
        const FpClass rc = ref_finite && std::fabs(r.hi) < out_max ? FpClass::Normal : classify(of, round_ref(of, r, Rounder::nearest(of)).code);
        const double u = ulp_distance(of, code, r);
        if (ref_finite && gc != FpClass::NaN && gc != FpClass::Inf && cancellation_dominated(r.hi, ref.abs_sum[ux])) {
          ulps[ux] = NAN;  // left out of the ULP statistics (results/results.hpp, kCancellationRatio)
          ++P.cancelled;
        } else {
          ulps[ux] = std::isfinite(u) ? u : std::numeric_limits<double>::infinity();
          ++P.hist[static_cast<std::size_t>(ulp_bucket(u))];
        }
        if (!ref_finite || rc == FpClass::Inf || rc == FpClass::NaN) {
          // Non-finite expected (docs/suites.md, "values.special"). A NaN reference (a NaN operand, Inf * 0,
          // Inf - Inf) must give NaN. An infinite operand gives that infinity: IEEE's sum of the infinite
          // products, whatever the finite ones, unless a finite partial sum can overflow to the other sign
          // first (then NaN); an output format without Inf keeps the rule below. An exact result beyond the
          // output's range (or the accumulator's) is an overflow: an infinity, a NaN from an intermediate
          // Inf - Inf, or the largest finite magnitude of a saturating output are all accepted and counted.
          // Either infinity: a valid order may overflow a partial sum of the other sign first (the bitwise
          // tier, where it applies, still requires the declared arithmetic's own result).
          const bool nan_expected = !ref_finite && std::isnan(r.hi);
          const bool inf_expected = !ref_finite && std::isinf(r.hi) && of.has_inf();
          bool ok, overflow_ok = false;
          if (nan_expected) {
            ok = gc == FpClass::NaN;
            ++P.nan_ref;
          } else if (inf_expected) {
            const bool same_inf = gc == FpClass::Inf && std::signbit(got) == std::signbit(r.hi);
            overflow_ok = !same_inf && gc == FpClass::NaN && (std::signbit(r.hi) ? reach(x).pos : reach(x).neg);
            ok = same_inf || overflow_ok;
            ++P.inf_operand;
          } else {
            overflow_ok = gc == FpClass::NaN || gc == FpClass::Inf || (code & of.magnitude_mask()) == of.max_finite_code();
            ok = overflow_ok;
          }
          ++P.beyond;
          if (overflow_ok) ++P.overflowed;
          if (!ok) {
            if (P.first_bad_special < 0) P.first_bad_special = x;
            consider({INFINITY, x, INFINITY, 0, u});
          }
          continue;
        }
        if (gc == FpClass::NaN || gc == FpClass::Inf) {
          // A finite exact result whose partial sums can overflow: the infinity of a sign some partial sum can
          // reach, or NaN where both can, is what a valid order of the declared arithmetic may give (the
          // bitwise tier, where it applies, requires its own); accepted, counted, and not graded further.
          const OverflowReach o = reach(x);
          if (o.explains(gc == FpClass::NaN, std::signbit(got))) {
            ++P.partial;
            ++P.overflowed;
            overflowed_at[ux] = 1;
            continue;
          }
          ++P.nonfinite;
          if (P.first_nonfinite < 0) P.first_nonfinite = x;
          consider({INFINITY, x, INFINITY, 0, u});
          continue;
        }
        const double err = std::fabs((got - r.hi) - r.lo);  // +Inf beyond double's range (reported so)
        double allowed, frac;
        if (const WideSums::Sums* w = wide.find(x)) {  // graded in the element's scale; allowed reported unscaled
          const WideGrade g = wide_fraction(got, r, *w, [&](double ra, double as, double rw, double cl) {
            return allowed_error(out.bound, ra, as, rw, cl) * (1 + 0x1p-50);
          });
          frac = g.frac;
          allowed = std::ldexp(g.allowed, w->shift);
        } else {
          allowed = allowed_error(out.bound, std::fabs(r.hi), ref.abs_sum[ux], row_abs_a[static_cast<std::size_t>(i)],
                                  col_abs_b[static_cast<std::size_t>(j)]) *
                    (1 + 0x1p-50);  // the sums above are rounded: a relative slack far below any term
          frac = err == 0 ? 0 : (allowed > 0 ? err / allowed : INFINITY);
        }
        elem_err[ux] = err;
        elem_ref[ux] = std::fabs(r.hi);
        P.sum_err2 += (err * fro_scale) * (err * fro_scale);
        P.sum_ref2 += (r.hi * fro_scale) * (r.hi * fro_scale);
        P.max_err = std::max(P.max_err, err);
        if (ref.abs_sum[ux] > 0) P.cw = std::max(P.cw, err / ref.abs_sum[ux]);
        else if (err > 0) P.cw = INFINITY;
        consider({frac, x, err, allowed, u});
      }
    }
  });
  trace.mark("elements");
  double sum_err2 = 0, sum_ref2 = 0, max_err = 0, cw = 0, worst_frac = 0;
  std::int64_t worst_idx = -1, overflowed = 0, first_bad_special = -1, beyond = 0, partial = 0, inf_operand = 0, nan_ref = 0;
  std::vector<Cand> cands;
  M.ulp_hist.assign(18, 0);
  for (const Part& P : parts) {
    sum_err2 += P.sum_err2;
    sum_ref2 += P.sum_ref2;
    max_err = std::max(max_err, P.max_err);
    cw = std::max(cw, P.cw);
    if (P.worst_idx >= 0 && (worst_idx < 0 || P.worst_frac > worst_frac)) {
      worst_frac = P.worst_frac;
      worst_idx = P.worst_idx;
    }
    M.nonfinite += P.nonfinite;
    M.ulp_cancelled += P.cancelled;
    if (M.first_nonfinite < 0) M.first_nonfinite = P.first_nonfinite;
    overflowed += P.overflowed;
    beyond += P.beyond;
    partial += P.partial;
    inf_operand += P.inf_operand;
    nan_ref += P.nan_ref;
    if (first_bad_special < 0) first_bad_special = P.first_bad_special;
    for (std::size_t b = 0; b < 18; ++b) M.ulp_hist[b] += P.hist[b];
    cands.insert(cands.end(), P.cands.begin(), P.cands.end());
  }
  std::string first_failure;
  if (first_bad_special >= 0) {
    const auto ux = static_cast<std::size_t>(first_bad_special);
    const Rounded rr = round_ref(of, ref.c[ux], Rounder::nearest(of));
    const double rh = ref.c[ux].hi;
    first_failure = fmt::format("element ({}, {}) should be {} (reference {}{}), got {}", first_bad_special / p.n, first_bad_special % p.n,
                                classify(of, rr.code) == FpClass::NaN ? "NaN" : std::signbit(rh) ? "-Inf" : "+Inf", rh,
                                std::isnan(rh)   ? ": a NaN operand, Inf * 0 or Inf - Inf"
                                : std::isinf(rh) ? ": an infinite operand"
                                                 : ": beyond the output's range",
                                to_double(of, codes[ux]));
  }
  M.max_abs = max_err;
  M.frobenius_rel = sum_ref2 > 0 ? std::sqrt(sum_err2 / sum_ref2) : (sum_err2 > 0 ? INFINITY : 0);
  M.max_rel = ref_max > 0 ? max_err / ref_max : (max_err > 0 ? INFINITY : 0);
  M.componentwise = cw;
  double row_err_max = 0, row_ref_max = 0;  // ||C - Cref||_inf and ||Cref||_inf: the largest row sums
  for (std::int64_t i = 0; i < p.m; ++i) {
    double se = 0, sr = 0;
    for (std::int64_t j = 0; j < p.n; ++j) {
      se += elem_err[static_cast<std::size_t>(i * p.n + j)];
      sr += elem_ref[static_cast<std::size_t>(i * p.n + j)];
    }
    row_err_max = std::max(row_err_max, se);
    row_ref_max = std::max(row_ref_max, sr);
  }
  M.rowsum_rel = row_ref_max > 0 ? row_err_max / row_ref_max : (row_err_max > 0 ? INFINITY : 0);
  // NaN: left out (cancellation-dominated elements); p99_and_median skips them too.
  double ulp_max = -INFINITY;
  for (const double u : ulps)
    if (!std::isnan(u)) ulp_max = std::max(ulp_max, u);
  if (ulp_max != -INFINITY) {
    M.ulp_max = ulp_max;
    std::tie(M.ulp_p99, M.ulp_median) = p99_and_median(ulps);
  }
  out.gate_fraction = worst_frac;
  out.worst_index = worst_idx;
  trace.mark("norms, quantiles");

  // The worst elements, with their bits.
  const std::size_t w = std::min<std::size_t>(static_cast<std::size_t>(in.worst_count), cands.size());
  std::partial_sort(cands.begin(), cands.begin() + static_cast<std::ptrdiff_t>(w), cands.end(),
                    [](const Cand& a, const Cand& b) { return a.frac > b.frac || (a.frac == b.frac && a.idx < b.idx); });
  for (std::size_t q = 0; q < w; ++q) {
    const auto ux = static_cast<std::size_t>(cands[q].idx);
    WorstElement e;
    e.i = cands[q].idx / p.n;
    e.j = cands[q].idx % p.n;
    e.got_bits = hex_code(of, codes[ux]);
    e.got = to_double(of, codes[ux]);
    e.ref_hi = ref.c[ux].hi;
    e.ref_lo = ref.c[ux].lo;
    e.ref_bits = hex_code(of, round_ref(of, ref.c[ux], Rounder::nearest(of)).code);
    e.err = cands[q].err;
    e.allowed = cands[q].allowed;
    e.ulps = cands[q].ulps;
    e.abs_sum = ref.abs_sum[ux];
    out.worst.push_back(e);
  }

  // ---- checks (docs/bound_model.md, "Checks"); the status derives from the decisive ones ----
  auto at = [&](std::int64_t x) { return element_text(x, p.n); };
  auto add = [&](CheckKind k, bool passed, std::string detail, std::int64_t first = -1, double measured = 0, double limit = 0) {
    out.checks.push_back({k, passed, std::move(detail), first, measured, limit});
  };
  if (const std::string why = declaration_problem(t); !why.empty()) add(CheckKind::Declaration, false, "traits inconsistent: " + why);
  add(CheckKind::GuardOutput, M.guard_violations == 0,
      M.guard_violations ? "out-of-bounds write: " + M.first_guard_violation : "guard bytes around C and in its ldc padding intact", -1,
      static_cast<double>(M.guard_violations), 0);
  add(CheckKind::Unwritten, M.unwritten == 0,
      M.unwritten ? fmt::format("{} output(s) never written, first at {}", M.unwritten, at(M.first_unwritten)) : "every output written",
      M.first_unwritten, static_cast<double>(M.unwritten), 0);
  add(CheckKind::Nonfinite, M.nonfinite == 0,
      M.nonfinite ? fmt::format("{} non-finite output(s) where the reference is finite, first at {}: {}", M.nonfinite, at(M.first_nonfinite),
                                hex_code(of, codes[static_cast<std::size_t>(M.first_nonfinite)]))
                  : "no Inf/NaN where the reference is finite",
      M.first_nonfinite, static_cast<double>(M.nonfinite), 0);
  add(CheckKind::SpecialValues, first_failure.empty(),
      first_failure.empty()
          ? fmt::format("every element with a non-finite or overflowing reference as IEEE says ({} NaN, {} infinite operand, "
                        "{} overflow(s), {} of them a partial sum beyond the accumulator's range)",
                        nan_ref, inf_operand, overflowed, partial)
          : first_failure,
      first_bad_special);
  const bool declared = t.determinism == Determinism::RunToRun;  // then the spread check judges the differences
  add(CheckKind::Nondeterministic, M.deterministic || declared,
      M.deterministic ? "repeated runs identical bit for bit"
                      : fmt::format("{}non-deterministic: {} element(s) differ between runs", declared ? "declared " : "", M.nondeterministic_elements),
      -1, static_cast<double>(M.nondeterministic_elements), 0);
  trace.mark("checks");
  judge_tiers(in, out, a_in, b_in, overflowed_at, wide);
  trace.mark("tiers");
  const std::string_view gate_variant = out.bound.variant ? to_string(*out.bound.variant) : std::string_view{};
  add(CheckKind::CourseGate, !(worst_frac > 1 && M.nonfinite == 0 && first_failure.empty() && worst_idx >= 0),
      worst_idx >= 0 ? fmt::format("course gate ({}): max |c - ref| / allowed = {:.4g} at {}", gate_variant, worst_frac, at(worst_idx))
                     : fmt::format("course gate ({})", gate_variant),
      worst_idx, worst_frac, 1);
  M.ref_overflow = beyond;
  if (overflowed > partial)
    out.flags.push_back(fmt::format("reference-overflows-output: {} element(s) exceed the {} range; any Inf/NaN or the largest "
                                    "finite value is accepted there",
                                    overflowed - partial, of.tag));
  if (partial)
    out.flags.push_back(fmt::format("partial-sum-overflow: {} element(s) with a finite exact result gave an infinity (or NaN) that a "
                                    "partial sum beyond {:.4g} explains; accepted, not graded",
                                    partial, limit));
  if (out.bound.vacuous) out.flags.push_back("worst-case bound vacuous (K u >= 1): no rigorous bound exists at this K");
  out.status = CaseStatus::Pass;
  out.reason.clear();
  decide(out);
  out.tile_m = in.tile_m;
  out.tile_n = in.tile_n;
  if (out.status == CaseStatus::Pass && !in.error_map_always) out.error_map.reset();
  if (of.precision() > f32.precision()) {  // fp64 outputs: correct bits per element (docs/fp64.md, "Correct bits"), and
    // their map on the error map's grid where the case keeps one
    const CorrectBitsStats cb = correct_bits_stats(of, codes, ref, out.error_map ? &*out.error_map : nullptr);
    M.correct_bits_min = cb.min;
    M.correct_bits_median = cb.median;
    M.correct_bits_hist = cb.hist;
  }
}

}  // namespace fpcert
