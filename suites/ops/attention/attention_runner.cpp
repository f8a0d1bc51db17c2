// suites/ops/attention/attention_runner.cpp — buffers, guards, runs and per-element grading of one attention case.
#include "suites/ops/attention/attention_runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "base/codes.hpp"
#include "base/fpenv.hpp"
#include "generators/attention/attention.hpp"
#include "oracle/attention/attention_ref.hpp"
#include "suites/run/guarded_buffer.hpp"
#include "suites/run/guarded_input.hpp"
#include "suites/run/row_case.hpp"
#include "suites/verdict/envelope.hpp"

namespace fpcert {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

CausalAlign causal_of(int c) { return c == 1 ? CausalAlign::TopLeft : c == 2 ? CausalAlign::BottomRight : CausalAlign::None; }

/// The LSE output's tallies (graded beside O's RowGrades).
struct LseGrades {
  std::int64_t judged = 0, bad = 0, worst = -1, special_bad = 0, first_special = -1, unwritten = 0, first_unwritten = -1;
  std::int64_t differ = 0, first_differ = -1, guard = 0, nonfinite = 0, first_nonfinite = -1;
  double frac_max = 0;
  std::string special_detail;
};

}  // namespace

AttentionArith attention_arith(const AttentionTraits& t, std::int64_t head_dim, std::int64_t len_k) {
  AttentionArith a;
  const EnvelopeModel qk = make_envelope(t.qk, head_dim), pv = make_envelope(t.pv, len_k);
  // score_rel (AttentionTraits): each product q_c k_jc perturbed by at most that much before the GEMM, whose own error is
  // then relative to the perturbed sum: score_rel + (1 + score_rel) coef of sum |q k|.
  a.qk_coef = qk.exists ? t.score_rel + (1 + t.score_rel) * qk.coef : kInf;
  a.qk_abs = qk.eta_arith;
  a.pv_coef = pv.exists ? pv.coef : kInf;
  a.pv_abs = pv.eta_arith;
  a.base2 = t.exp_form != AttentionExpForm::Natural;
  a.scaled = t.exp_form == AttentionExpForm::Base2Scaled;
  a.online = t.shift == SoftmaxShift::Online;
  a.rescale_by_difference = t.rescale_by_difference;
  a.key_block = t.key_block;
  a.exp = t.exp;
  a.log = t.log;
  a.compute = &f32;
  a.sum_acc = t.sum_acc;
  a.p_format = t.pv.a_input;
  a.reciprocal = t.normalize == AttentionNormalize::Reciprocal;
  a.recip_ulps = t.recip_ulps;
  a.descale_roundings = t.descales ? t.descale_roundings : 0;
  a.descale_v = t.descales;
  a.p_offset_log2 = t.p_offset_log2;
  a.p_normalized = t.normalize == AttentionNormalize::Probabilities;  // the final division's term stays: an overestimate
  a.out = t.out;
  return a;
}

CaseResult attention_skeleton(const AttentionKernel& k, const AttentionCaseSetup& s) {
  const AttentionTraits& t = k.attention_traits();
  CaseResult r = case_skeleton(k, describe_attention_traits(t), s.suite, s.case_id, s.family, *s.problem, s.repro, *t.out);
  const AttentionProblemShape sh = attention_shape(*s.problem);
  r.m = sh.batch * sh.heads_q * sh.len_q;
  r.n = sh.head_dim;
  r.k = sh.len_k;
  return r;
}

CaseResult run_attention_case(AttentionKernel& kernel, const AttentionCaseSetup& s, DeviceApi& api, const RunOptions& opt) {
  const auto wall0 = std::chrono::steady_clock::now();
  const Problem& p = *s.problem;
  const AttentionTraits& t = kernel.attention_traits();
  const Format& in = *t.input;
  const Format& out = *t.out;
  CaseResult r = attention_skeleton(kernel, s);
  auto finish = [&]() -> CaseResult {
    r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    return r;
  };
  if (std::string why = memory_mismatch(kernel, api); !why.empty()) {
    r.status = CaseStatus::NotSupported;
    r.reason = std::move(why);
    return finish();
  }
  const AttentionProblemShape ps = attention_shape(p);
  AttentionShape shape{ps.batch, ps.heads_q, ps.heads_kv, ps.len_q, ps.len_k, ps.head_dim};
  const CausalAlign causal = causal_of(ps.causal);
  if (const Support sup = kernel.can_implement(shape, causal, ps.mask); !sup.ok) {
    r.status = CaseStatus::NotSupported;
    r.reason = sup.reason;
    return finish();
  }
  const std::int64_t rows = ps.batch * ps.heads_q * ps.len_q, kvrows = ps.batch * ps.heads_kv * ps.len_k, d = ps.head_dim;
  const auto du = static_cast<std::size_t>(d);
  // The inputs must be values of the kernel's input format (the suites generate them so): the bound takes them as given.
  std::vector<std::uint64_t> codes_a;
  if (!exact_codes(p.a.data, in, codes_a)) {
    r.status = CaseStatus::NotSupported;
    r.reason = fmt::format("Q, K or V hold values that are not values of {} (the bound takes the inputs as given): generate them with "
                           "source={}",
                           in.tag, in.tag);
    return finish();
  }
  if (t.exp_form == AttentionExpForm::Base2Folded) {
    if (std::string why = attention_base2_mask_domain(p); !why.empty()) {
      r.status = CaseStatus::NotSupported;
      r.reason = std::move(why);
      return finish();
    }
  }
  if (ps.descaled && !t.descales) {
    r.status = CaseStatus::NotSupported;
    r.reason = fmt::format("the case's FP8 inputs come with descale factors (dq {:.6g}, dk {:.6g}, dv {:.6g}); the kernel declares none "
                           "(AttentionTraits::descales)",
                           ps.descale_q, ps.descale_k, ps.descale_v);
    return finish();
  }
  if (p.source == &in || p.source->tag == in.tag)
    r.flags.push_back(fmt::format("inputs-exact-in-storage: Q, K, V are values of {}: the storage step is not exercised (the "
                                  "arithmetic is: every score, exp, sum and the output round)",
                                  in.tag));

  // The reference and the bound of the graded rows.
  pin_fp_env();
  AttentionInputs ai;
  ai.batch = ps.batch;
  ai.heads_q = ps.heads_q;
  ai.heads_kv = ps.heads_kv;
  ai.len_q = ps.len_q;
  ai.len_k = ps.len_k;
  ai.head_dim = d;
  // With descale factors the operation is attention of dq Q, dk K, dv V: each product of an e4m3 value (4 significant
  // bits) by an fp32 factor (24) is exact in a double.
  std::vector<double> descaled;
  if (ps.descaled) {
    descaled = p.a.data;
    const std::int64_t k0 = attention_k_row0(ps) * d, v0 = attention_v_row0(ps) * d;
    for (std::size_t e = 0; e < descaled.size(); ++e) {
      const auto ee = static_cast<std::int64_t>(e);
      descaled[e] *= ee < k0 ? ps.descale_q : ee < v0 ? ps.descale_k : ps.descale_v;
    }
    r.flags.push_back(fmt::format("fp8-descaled: Q, K, V are e4m3 codes with per-tensor descale factors dq {:.6g}, dk {:.6g}, dv {:.6g}; "
                                  "the reference is attention of dq Q, dk K, dv V",
                                  ps.descale_q, ps.descale_k, ps.descale_v));
  }
  ai.q = ps.descaled ? descaled.data() : p.a.data.data();
  ai.k = ai.q + attention_k_row0(ps) * d;
  ai.v = ai.q + attention_v_row0(ps) * d;
  ai.mask = ps.mask ? p.b.data.data() : nullptr;
  ai.scale = ps.scale;
  ai.causal = causal != CausalAlign::None;
  ai.causal_offset = causal == CausalAlign::BottomRight ? ps.len_k - ps.len_q : 0;
  const bool sampled = rows * ps.len_k * d > kAttentionFullRefMacs;
  const std::vector<std::int64_t> graded = sampled ? attention_sample_rows(ai, kAttentionSampledRows) : std::vector<std::int64_t>{};
  const AttentionRef ref = attention_reference(ai, out, t.masked_rows, t.masked_lse == MaskedLse::PosInf, graded);
  if (sampled)
    r.flags.push_back(fmt::format("sampled-reference: {} of {} rows graded (the first and last query of every head among them); every "
                                  "element checked for being written",
                                  ref.rows.size(), rows));
  AttentionArith arith = attention_arith(t, d, ps.len_k);
  // The GEMMs run on the codes: their absolute terms are in the codes' units, dq dk and dv times smaller than the real ones.
  arith.qk_abs *= ps.descale_q * ps.descale_k;
  arith.pv_abs *= ps.descale_v;
  const std::size_t nr = ref.rows.size();
  std::vector<double> bound(nr * du), lse_bound(nr);
  std::vector<AttentionScores> scores(nr);
  auto row_data = [&](std::size_t i) {
    AttentionRowData rd;
    rd.scores = &scores[i];
    rd.mask = ai.mask ? ai.mask + ai.query(ref.rows[i]) * ps.len_k : nullptr;
    rd.v = ai.v + ai.kv_base(ref.rows[i]) * d;
    rd.ldv = d;
    rd.head_dim = d;
    rd.scale = ps.scale;
    rd.o = ref.value.data() + i * du;
    rd.lse = ref.lse_value[i];
    return rd;
  };
  for (std::size_t i = 0; i < nr; ++i) {
    scores[i] = attention_scores(ai, ref.rows[i]);
    attention_row_bound(arith, row_data(i), bound.data() + i * du, lse_bound[i]);
  }

  RowRuns runs = row_runs(api, opt);
  const int ib = container_bytes(in), ob = container_bytes(out);
  const std::int64_t ldo = d + opt.ldc_pad;
  const std::uint64_t pre = prefill_code(out), pre_lse = prefill_code(f32);
  auto pack = [&](std::size_t first, std::size_t count) {
    std::vector<std::uint8_t> v(count * static_cast<std::size_t>(ib));
    for (std::size_t e = 0; e < count; ++e) store_code(v.data(), static_cast<std::int64_t>(e), ib, to_container(in, codes_a[first + e]));
    return v;
  };
  std::vector<std::uint64_t> lse_codes;
  LseGrades lg;
  const bool ran = run_kernel_guarded(r, [&] {
    GuardedInput dq(api, pack(0, static_cast<std::size_t>(rows * d)), rows, d, padded_ld(d, ib), ib, opt.guard_bytes, false, poison_code(in));
    GuardedInput dk(api, pack(static_cast<std::size_t>(rows * d), static_cast<std::size_t>(kvrows * d)), kvrows, d, padded_ld(d, ib), ib,
                    opt.guard_bytes, false, poison_code(in));
    GuardedInput dv(api, pack(static_cast<std::size_t>((rows + kvrows) * d), static_cast<std::size_t>(kvrows * d)), kvrows, d,
                    padded_ld(d, ib), ib, opt.guard_bytes, false, poison_code(in));
    std::unique_ptr<GuardedInput> dm;
    if (ps.mask) {
      std::vector<std::uint8_t> mv(p.b.data.size() * 4);
      for (std::size_t e = 0; e < p.b.data.size(); ++e)
        store_code(mv.data(), static_cast<std::int64_t>(e), 4, round_double(f32, p.b.data[e], Rounder::nearest(f32)).code);
      dm = std::make_unique<GuardedInput>(api, mv, ps.len_q, ps.len_k, padded_ld(ps.len_k, 4), 4, opt.guard_bytes, false);
    }
    GuardedBuffer dout(api, static_cast<std::size_t>(rows * ldo * ob), opt.guard_bytes);
    dout.prefill(rows, d, ldo, ob, to_container(out, pre));
    GuardedBuffer dlse(api, static_cast<std::size_t>(rows * 4), opt.guard_bytes);
    dlse.prefill(1, rows, rows, 4, pre_lse);
    AttentionOperands ops;
    ops.shape = shape;
    ops.q = dq.elements();
    ops.ldq = dq.ld();
    ops.k = dk.elements();
    ops.ldk = dk.ld();
    ops.v = dv.elements();
    ops.ldv = dv.ld();
    if (dm) ops.mask = dm->elements(), ops.ldm = dm->ld();
    ops.causal = causal;
    ops.scale = static_cast<float>(ps.scale);
    ops.descale_q = static_cast<float>(ps.descale_q);
    ops.descale_k = static_cast<float>(ps.descale_k);
    ops.descale_v = static_cast<float>(ps.descale_v);
    ops.o = dout.elements();
    ops.ldo = ldo;
    ops.lse = t.writes_lse ? dlse.elements() : nullptr;
    ops.stream = api.stream();
    // The LSE of each run: read before the next launch (run_rows synchronised after the previous one) and after the last.
    int launched = 0;
    auto take_lse = [&] {
      const GuardReport g = dlse.download_and_check();
      lg.guard += g.changed;
      std::vector<std::uint64_t> now(static_cast<std::size_t>(rows));
      for (std::int64_t e = 0; e < rows; ++e) now[static_cast<std::size_t>(e)] = dlse.code(0, e);
      if (lse_codes.empty()) {
        lse_codes = std::move(now);
      } else if (now != lse_codes && lg.differ++ == 0) {
        for (std::size_t e = 0; e < now.size(); ++e)
          if (now[e] != lse_codes[e]) {
            lg.first_differ = static_cast<std::int64_t>(e);
            break;
          }
      }
    };
    run_rows(runs, api, opt, dout, out, rows, d, {&dq, &dk, &dv, dm.get()}, [&] {
      if (launched++ > 0 && t.writes_lse) take_lse();
      kernel.run(ops);
    });
    if (t.writes_lse) take_lse();
  });
  if (!ran) return finish();
  pin_fp_env();

  // Grade O: every element for being written, the graded rows by the bound and the policies.
  RowGrades g;
  const std::vector<std::uint64_t>& codes = runs.codes;
  std::vector<char> is_graded(static_cast<std::size_t>(rows), 0);
  for (std::int64_t rr : ref.rows) is_graded[static_cast<std::size_t>(rr)] = 1;
  for (std::int64_t rr = 0; rr < rows; ++rr)
    if (!is_graded[static_cast<std::size_t>(rr)])
      for (std::int64_t c = 0; c < d; ++c)
        if (out.has_nan() && codes[static_cast<std::size_t>(rr * d + c)] == pre) g.unwritten(rr * d + c);
  for (std::size_t i = 0; i < nr; ++i) {
    const std::int64_t rr = ref.rows[i];
    const bool masked = ref.masked[i] != 0, nan_row = std::isnan(ref.lse_value[i]);
    for (std::int64_t c = 0; c < d; ++c) {
      const std::size_t at = static_cast<std::size_t>(rr * d + c), ri = i * du + static_cast<std::size_t>(c);
      const std::uint64_t code = codes[at];
      const double got = to_double(out, code), want = ref.value[ri];
      g.heuristics(got, want);
      if (out.has_nan() && code == pre) {
        g.unwritten(rr * d + c);
        continue;
      }
      if (masked || nan_row) {
        const bool ok = std::isnan(want) ? std::isnan(got) : got == want;
        if (!ok)
          g.special_wrong(rr * d + c, fmt::format("row {} ({}), column {}: got {:.6g} where {} is declared", rr,
                                                  masked ? "fully masked" : "a NaN score", c, got, want));
        continue;
      }
      if (!std::isfinite(to_double(out, ref.code[ri]))) {
        g.ref_overflow();
        continue;
      }
      g.graded(rr * d + c, out, code, ref.code[ri], got, want, bound[ri]);
    }
    if (!t.writes_lse) continue;
    const std::uint64_t lc = lse_codes[static_cast<std::size_t>(rr)];
    const double got = to_double(f32, lc), want = ref.lse_value[i];
    if (lc == pre_lse) {
      if (lg.unwritten++ == 0) lg.first_unwritten = rr;
      continue;
    }
    if (masked || nan_row) {
      const bool ok = std::isnan(want) ? std::isnan(got) : got == want;
      if (!ok && lg.special_bad++ == 0) {
        lg.first_special = rr;
        lg.special_detail = fmt::format("LSE of row {}: got {:.6g} where {} is declared", rr, got, want);
      }
      continue;
    }
    if (!std::isfinite(got) && std::isfinite(want)) {  // judged or not: Inf/NaN where the exact LSE is finite
      if (lg.nonfinite++ == 0) lg.first_nonfinite = rr;
      continue;
    }
    if (!std::isfinite(lse_bound[i])) continue;  // no bound applies (a denominator not bounded away from 0): unjudged
    ++lg.judged;
    const double frac = std::isfinite(got) ? std::fabs(got - want) / lse_bound[i] : kInf;
    if (lg.worst < 0 || frac > lg.frac_max) lg.frac_max = frac, lg.worst = static_cast<std::int64_t>(i);
    lg.bad += frac > 1;
  }

  g.record_metrics(r, runs);
  const std::int64_t worst = g.worst();
  r.achieved["attention_reference_mpfr_elements"] = static_cast<double>(ref.stats.mpfr);
  r.achieved["attention_reference_unsettled"] = static_cast<double>(ref.stats.unsettled);
  r.achieved["attention_vacuous_elements"] = static_cast<double>(g.vacuous());
  r.achieved["attention_graded_rows"] = static_cast<double>(nr);
  r.achieved["attention_lse_max_error_over_bound"] = lg.frac_max;
  if (worst >= 0) {
    const std::int64_t wr = worst / d, wc = worst % d;
    const auto it = std::find(ref.rows.begin(), ref.rows.end(), wr);
    const auto i = static_cast<std::size_t>(it - ref.rows.begin());
    const auto terms = attention_bound_terms(arith, row_data(i), wc);
    r.envelope.terms.clear();
    for (const AttentionBoundTerm& term : terms) r.envelope.terms.push_back({term.name, term.value, term.law});
    r.envelope.allowed = "|got - exact| <= the element's bound (oracle/attention/attention_bound.hpp), per element; the LSE by its own";
    r.envelope.arithmetic = fmt::format("row {} (batch {}, head {}, query {}), column {}: exact {:.9g}, got {:.9g}\n{}", wr,
                                        wr / (ps.heads_q * ps.len_q), (wr / ps.len_q) % ps.heads_q, wr % ps.len_q, wc,
                                        ref.value[i * du + static_cast<std::size_t>(wc)], to_double(out, codes[static_cast<std::size_t>(worst)]),
                                        to_text(terms));
  }
  if (!r.vacuous) r.evidence.push_back("attention");

  g.record_checks(r, runs, out, d, "fully masked rows as the kernel declares (O and LSE)");
  if (t.writes_lse) {
    auto add = [&](CheckKind kind, bool passed, std::string detail, std::int64_t index, double measured = 0, double limit = 0) {
      r.checks.push_back({kind, passed, std::move(detail), index, measured, limit});
    };
    std::string lse_worst;
    if (lg.worst >= 0) {
      const auto i = static_cast<std::size_t>(lg.worst);
      lse_worst = fmt::format(" (row {}: exact {:.9g}, got {:.9g}, bound {:.3g})", ref.rows[i], ref.lse_value[i],
                              to_double(f32, lse_codes[static_cast<std::size_t>(ref.rows[i])]), lse_bound[i]);
    }
    add(CheckKind::Envelope, lg.bad == 0,
        fmt::format("LSE: max error / bound {:.3g} over {} row(s){}", lg.frac_max, lg.judged, lse_worst),
        lg.bad ? ref.rows[static_cast<std::size_t>(lg.worst)] : -1, lg.frac_max, 1);
    add(CheckKind::SpecialValues, lg.special_bad == 0, lg.special_bad ? lg.special_detail : "LSE of fully masked rows as declared",
        lg.first_special);
    add(CheckKind::Nonfinite, lg.nonfinite == 0,
        lg.nonfinite ? fmt::format("{} LSE value(s) Inf/NaN where the exact LSE is finite, first row {}", lg.nonfinite, lg.first_nonfinite)
                     : "every LSE finite where the exact one is",
        lg.first_nonfinite);
    add(CheckKind::Unwritten, lg.unwritten == 0,
        lg.unwritten ? fmt::format("{} LSE value(s) never written, first row {}", lg.unwritten, lg.first_unwritten) : "every LSE written",
        lg.first_unwritten);
    add(CheckKind::GuardOutput, lg.guard == 0, lg.guard ? fmt::format("{} guard byte(s) around the LSE changed", lg.guard) : "LSE guards intact", -1);
    add(CheckKind::Nondeterministic, lg.differ == 0,
        lg.differ ? fmt::format("the LSE of {} later run(s) differs from the first's, first at row {}", lg.differ, lg.first_differ)
                  : "the LSE of every run bitwise equal",
        lg.first_differ);
  }
  decide(r);
  return finish();
}

}  // namespace fpcert
