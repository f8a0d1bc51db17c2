// suites/ops/attention_bwd/attention_bwd_runner.cpp — buffers, guards, runs and per-element grading of one attention
// backward case (attention_bwd_runner.hpp).
#include "suites/ops/attention_bwd/attention_bwd_runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "base/codes.hpp"
#include "base/fpenv.hpp"
#include "generators/attention/attention_bwd.hpp"
#include "oracle/attention/attention_ref.hpp"
#include "oracle/ulp.hpp"
#include "suites/run/guarded_buffer.hpp"
#include "suites/run/guarded_input.hpp"
#include "suites/run/row_case.hpp"
#include "suites/verdict/envelope.hpp"

namespace fpcert {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

CausalAlign causal_of(int c) { return c == 1 ? CausalAlign::TopLeft : c == 2 ? CausalAlign::BottomRight : CausalAlign::None; }

void gemm_coef(const KernelTraits& t, std::int64_t depth, double& coef, double& abs) {
  const EnvelopeModel m = make_envelope(t, std::max<std::int64_t>(depth, 1));
  coef = m.exists ? m.coef : kInf;
  abs = m.eta_arith;
}

const char* grad_name(AttentionGrad g) { return g == AttentionGrad::Dq ? "dQ" : g == AttentionGrad::Dk ? "dK" : "dV"; }

}  // namespace

AttentionBwdArith attention_bwd_arith(const AttentionBwdTraits& t, std::int64_t head_dim, std::int64_t len_q, std::int64_t len_k,
                                      std::int64_t group) {
  AttentionBwdArith a;
  gemm_coef(t.qk, head_dim, a.qk_coef, a.qk_abs);
  gemm_coef(t.dov, head_dim, a.dov_coef, a.dov_abs);
  gemm_coef(t.pdo, len_q * group, a.pdo_coef, a.pdo_abs);
  gemm_coef(t.dsk, len_k, a.dsk_coef, a.dsk_abs);
  gemm_coef(t.dsq, len_q * group, a.dsq_coef, a.dsq_abs);
  a.base2 = t.exp_form == AttentionExpForm::Base2Folded;
  a.exp = t.exp;
  a.compute = t.compute;
  a.d_acc = t.d_acc;
  a.p_format = t.pdo.a_input;
  a.ds_q = t.dsk.a_input;
  a.ds_k = t.dsq.a_input;
  a.dq_acc = t.dq_acc;
  // dQ's partials added in dq_acc: beyond the GEMM's own accumulation when run to run (any order) or a coarser format.
  a.dq_acc_extra = t.dq_determinism == Determinism::RunToRun || t.dq_acc->precision() < t.dsk.acc->precision();
  a.dq_out = t.dq_out;
  a.dk_out = t.dk_out;
  a.dv_out = t.dv_out;
  a.reads_saved = t.reads_saved;
  return a;
}

CaseResult attention_bwd_skeleton(const AttentionBwdKernel& k, const AttentionBwdCaseSetup& s) {
  const AttentionBwdTraits& t = k.attention_bwd_traits();
  CaseResult r = case_skeleton(k, describe_attention_bwd_traits(t), s.suite, s.case_id, s.family, *s.problem, s.repro, *t.dq_out);
  const AttentionProblemShape sh = attention_shape(*s.problem);
  r.m = sh.batch * sh.heads_q * sh.len_q;
  r.n = sh.head_dim;
  r.k = sh.len_k;
  return r;
}

CaseResult run_attention_bwd_case(AttentionBwdKernel& kernel, const AttentionBwdCaseSetup& s, DeviceApi& api, const RunOptions& opt) {
  const auto wall0 = std::chrono::steady_clock::now();
  const Problem& p = *s.problem;
  const AttentionBwdTraits& t = kernel.attention_bwd_traits();
  const Format& in = *t.input;
  CaseResult r = attention_bwd_skeleton(kernel, s);
  auto finish = [&]() -> CaseResult {
    r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    return r;
  };
  auto not_supported = [&](std::string why) {
    r.status = CaseStatus::NotSupported;
    r.reason = std::move(why);
    return finish();
  };
  if (std::string why = memory_mismatch(kernel, api); !why.empty()) return not_supported(std::move(why));
  if (!is_attention_bwd_problem(p)) return not_supported(fmt::format("'{}' is not an attention_bwd problem", p.spec));
  const AttentionProblemShape ps = attention_shape(p);
  const AttentionShape shape{ps.batch, ps.heads_q, ps.heads_kv, ps.len_q, ps.len_k, ps.head_dim};
  const CausalAlign causal = causal_of(ps.causal);
  if (const Support sup = kernel.can_implement(shape, causal, ps.mask); !sup.ok) return not_supported(sup.reason);
  if (t.exp_form == AttentionExpForm::Base2Folded)  // the forward's domain (its backward overflows RN(L log2 e) as well)
    if (std::string why = attention_base2_mask_domain(p); !why.empty()) return not_supported(std::move(why));
  const int ob = container_bytes(*t.dq_out);
  if (container_bytes(*t.dk_out) != ob || container_bytes(*t.dv_out) != ob)
    return not_supported(fmt::format("dQ, dK and dV in containers of different sizes ({}, {}, {}): the runner keeps them in one buffer",
                                     t.dq_out->tag, t.dk_out->tag, t.dv_out->tag));
  const std::int64_t rows = ps.batch * ps.heads_q * ps.len_q, kvrows = ps.batch * ps.heads_kv * ps.len_k, d = ps.head_dim;
  const auto du = static_cast<std::size_t>(d);
  std::vector<std::uint64_t> codes_a;
  if (!exact_codes(p.a.data, in, codes_a))
    return not_supported(fmt::format("Q, K, V or dO hold values that are not values of {} (the bound takes the inputs as given): "
                                     "generate them with source={}", in.tag, in.tag));
  if (p.source == &in || p.source->tag == in.tag)
    r.flags.push_back(fmt::format("inputs-exact-in-storage: Q, K, V, dO are values of {}: the storage step is not exercised (the "
                                  "arithmetic is: every score, exp, product, sum and the output rounding)", in.tag));

  // The forward a correct kernel saved (O in the input format, LSE in fp32), the exact gradient and the bound.
  pin_fp_env();
  AttentionBwdInputs bi;
  AttentionInputs& ai = bi.fwd;
  ai.batch = ps.batch;
  ai.heads_q = ps.heads_q;
  ai.heads_kv = ps.heads_kv;
  ai.len_q = ps.len_q;
  ai.len_k = ps.len_k;
  ai.head_dim = d;
  ai.q = p.a.data.data();
  ai.k = ai.q + attention_k_row0(ps) * d;
  ai.v = ai.q + attention_v_row0(ps) * d;
  ai.mask = ps.mask ? p.b.data.data() : nullptr;
  ai.scale = ps.scale;
  ai.causal = causal != CausalAlign::None;
  ai.causal_offset = causal == CausalAlign::BottomRight ? ps.len_k - ps.len_q : 0;
  const bool lse_pos = t.masked_lse == MaskedLse::PosInf;
  const AttentionRef fwd = attention_reference(ai, in, MaskedRowPolicy::Zero, lse_pos);
  std::vector<double> o_val(fwd.code.size()), lse_val(fwd.lse_code.size());
  for (std::size_t e = 0; e < o_val.size(); ++e) o_val[e] = to_double(in, fwd.code[e]);
  for (std::size_t e = 0; e < lse_val.size(); ++e) lse_val[e] = to_double(f32, fwd.lse_code[e]);
  bi.o = o_val.data();
  bi.d_o = ai.q + attention_do_row0(ps) * d;
  bi.lse = lse_val.data();
  bi.reads_saved = t.reads_saved;
  if (!t.reads_saved)
    r.flags.push_back("recomputes-forward: the kernel declares it ignores the saved O and LSE; graded against the exact gradient at the "
                      "exact forward");
  const bool sampled = rows * ps.len_k * d > kAttentionBwdFullRefMacs;
  std::vector<std::int64_t> q_rows, kv_rows;
  if (sampled) {
    q_rows = attention_sample_rows(ai, kAttentionBwdSampledRows);
    kv_rows = attention_bwd_sample_kv_rows(bi, kAttentionBwdSampledRows);
    r.flags.push_back(fmt::format("sampled-reference: {} of {} query rows (dQ) and {} of {} key rows (dK, dV) graded; every element "
                                  "checked for being written", q_rows.size(), rows, kv_rows.size(), kvrows));
  }
  const AttentionBwdRef ref = attention_bwd_reference(bi, *t.dq_out, *t.dk_out, *t.dv_out, q_rows, kv_rows);
  const AttentionBwdArith arith = attention_bwd_arith(t, d, ps.len_q, ps.len_k, ps.heads_q / ps.heads_kv);
  const std::vector<AttentionBwdRowStats> stats = attention_bwd_row_stats(arith, bi);
  // Graded rows of the one output buffer: dQ rows, then dK rows (offset rows), then dV rows (offset rows + kvrows).
  struct Graded {
    AttentionGrad g;
    std::int64_t row;     ///< the output's own row
    std::int64_t at;      ///< the buffer's row
    std::size_t ref_at;   ///< into the reference's arrays
  };
  std::vector<Graded> graded;
  for (std::size_t i = 0; i < ref.q_rows.size(); ++i) graded.push_back({AttentionGrad::Dq, ref.q_rows[i], ref.q_rows[i], i});
  for (std::size_t i = 0; i < ref.kv_rows.size(); ++i) {
    graded.push_back({AttentionGrad::Dk, ref.kv_rows[i], rows + ref.kv_rows[i], i});
    graded.push_back({AttentionGrad::Dv, ref.kv_rows[i], rows + kvrows + ref.kv_rows[i], i});
  }
  std::vector<double> bound(graded.size() * du);
  for (std::size_t i = 0; i < graded.size(); ++i) attention_bwd_row_bound(arith, bi, stats, graded[i].g, graded[i].row, bound.data() + i * du);

  RowRuns runs = row_runs(api, opt);
  const std::int64_t out_rows = rows + 2 * kvrows, ldg = d + opt.ldc_pad;
  const std::uint64_t pre = prefill_code(*t.dq_out);
  const int ib = container_bytes(in);
  auto pack = [&](const std::vector<std::uint64_t>& src, std::size_t first, std::size_t count, const Format& f, int eb) {
    std::vector<std::uint8_t> v(count * static_cast<std::size_t>(eb));
    for (std::size_t e = 0; e < count; ++e) store_code(v.data(), static_cast<std::int64_t>(e), eb, to_container(f, src[first + e]));
    return v;
  };
  const bool run_to_run = t.dq_determinism == Determinism::RunToRun;
  std::vector<std::vector<std::uint64_t>> dq_runs;  // run_to_run: every run's dQ
  std::int64_t kv_differ = 0;
  const bool ran = run_kernel_guarded(r, [&] {
    auto input = [&](std::size_t row0, std::int64_t n) {
      return std::make_unique<GuardedInput>(api, pack(codes_a, row0 * du, static_cast<std::size_t>(n) * du, in, ib), n, d, padded_ld(d, ib), ib,
                                            opt.guard_bytes, false, poison_code(in));
    };
    const auto dq_in = input(0, rows), dk_in = input(static_cast<std::size_t>(attention_k_row0(ps)), kvrows),
               dv_in = input(static_cast<std::size_t>(attention_v_row0(ps)), kvrows), ddo = input(static_cast<std::size_t>(attention_do_row0(ps)), rows);
    const auto dox = std::make_unique<GuardedInput>(api, pack(fwd.code, 0, fwd.code.size(), in, ib), rows, d, padded_ld(d, ib), ib,
                                                    opt.guard_bytes, false, poison_code(in));
    const auto dlse = std::make_unique<GuardedInput>(api, pack(fwd.lse_code, 0, fwd.lse_code.size(), f32, 4), 1, rows, rows, 4,
                                                     opt.guard_bytes, false);
    std::unique_ptr<GuardedInput> dm;
    if (ps.mask) {
      std::vector<std::uint8_t> mv(p.b.data.size() * 4);
      for (std::size_t e = 0; e < p.b.data.size(); ++e)
        store_code(mv.data(), static_cast<std::int64_t>(e), 4, round_double(f32, p.b.data[e], Rounder::nearest(f32)).code);
      dm = std::make_unique<GuardedInput>(api, mv, ps.len_q, ps.len_k, padded_ld(ps.len_k, 4), 4, opt.guard_bytes, false);
    }
    GuardedBuffer dout(api, static_cast<std::size_t>(out_rows * ldg * ob), opt.guard_bytes);
    dout.prefill(out_rows, d, ldg, ob, to_container(*t.dq_out, pre));
    AttentionBwdOperands ops;
    ops.shape = shape;
    ops.q = dq_in->elements(), ops.ldq = dq_in->ld();
    ops.k = dk_in->elements(), ops.ldk = dk_in->ld();
    ops.v = dv_in->elements(), ops.ldv = dv_in->ld();
    ops.o = dox->elements(), ops.ldo = dox->ld();
    ops.d_o = ddo->elements(), ops.lddo = ddo->ld();
    ops.lse = dlse->elements();
    if (dm) ops.mask = dm->elements(), ops.ldm = dm->ld();
    ops.causal = causal;
    ops.scale = static_cast<float>(ps.scale);
    auto* base = static_cast<std::uint8_t*>(dout.elements());
    ops.dq = base, ops.lddq = ldg;
    ops.dk = base + rows * ldg * ob, ops.lddk = ldg;
    ops.dv = base + (rows + kvrows) * ldg * ob, ops.lddv = ldg;
    ops.stream = api.stream();
    // The image holds the previous run's output when the next launch comes (run_rows downloads after each run).
    std::vector<std::uint64_t> kv_first;
    int launched = 0;
    auto take = [&] {
      std::vector<std::uint64_t> dq(static_cast<std::size_t>(rows * d)), kv(static_cast<std::size_t>(2 * kvrows * d));
      for (std::int64_t i = 0; i < rows; ++i)
        for (std::int64_t c = 0; c < d; ++c) dq[static_cast<std::size_t>(i * d + c)] = from_container(*t.dq_out, dout.code(i, c));
      for (std::int64_t i = 0; i < 2 * kvrows; ++i)
        for (std::int64_t c = 0; c < d; ++c) kv[static_cast<std::size_t>(i * d + c)] = dout.code(rows + i, c);
      if (kv_first.empty()) kv_first = std::move(kv);
      else if (kv != kv_first) ++kv_differ;
      dq_runs.push_back(std::move(dq));
    };
    run_rows(runs, api, opt, dout, *t.dq_out, out_rows, d, {dq_in.get(), dk_in.get(), dv_in.get(), dox.get(), ddo.get(), dlse.get(), dm.get()},
             [&] {
               if (launched++ > 0 && run_to_run) take();
               kernel.run(ops);
             });
    if (run_to_run) take();
  });
  if (!ran) return finish();
  pin_fp_env();

  // Grade: every element for being written; the graded rows by the bound (every run's dQ where run to run).
  RowGrades g;
  const std::vector<std::uint64_t>& codes = runs.codes;
  std::vector<char> is_graded(static_cast<std::size_t>(out_rows), 0);
  for (const Graded& gr : graded) is_graded[static_cast<std::size_t>(gr.at)] = 1;
  const bool has_nan = t.dq_out->has_nan();
  for (std::int64_t rr = 0; rr < out_rows; ++rr)
    if (!is_graded[static_cast<std::size_t>(rr)])
      for (std::int64_t c = 0; c < d; ++c)
        if (has_nan && codes[static_cast<std::size_t>(rr * d + c)] == pre) g.unwritten(rr * d + c);
  double spread_ulps = 0, worst_run_frac = 0;
  std::int64_t spread_elements = 0;
  // Each output's own largest error / bound and the row it is in (achieved: the report's breakdown, docs/report.md).
  double out_frac[3] = {0, 0, 0};
  std::int64_t out_row[3] = {-1, -1, -1};
  for (std::size_t i = 0; i < graded.size(); ++i) {
    const Graded& gr = graded[i];
    const Format& out = gr.g == AttentionGrad::Dq ? *t.dq_out : gr.g == AttentionGrad::Dk ? *t.dk_out : *t.dv_out;
    const std::vector<std::uint64_t>& rc = gr.g == AttentionGrad::Dq ? ref.dq_code : gr.g == AttentionGrad::Dk ? ref.dk_code : ref.dv_code;
    const std::vector<double>& rv = gr.g == AttentionGrad::Dq ? ref.dq_value : gr.g == AttentionGrad::Dk ? ref.dk_value : ref.dv_value;
    const bool masked = gr.g == AttentionGrad::Dq && ref.q_masked[gr.ref_at] != 0;
    for (std::int64_t c = 0; c < d; ++c) {
      const std::size_t at = static_cast<std::size_t>(gr.at * d + c), ri = gr.ref_at * du + static_cast<std::size_t>(c);
      const std::uint64_t code = codes[at];
      const double got = to_double(out, code), want = rv[ri];
      g.heuristics(got, want);
      if (has_nan && code == pre) {
        g.unwritten(gr.at * d + c);
        continue;
      }
      if (std::isnan(want)) {
        if (!std::isnan(got))
          g.special_wrong(gr.at * d + c, fmt::format("{} row {}, column {}: got {:.6g} where the exact gradient is NaN (a NaN score)",
                                                     grad_name(gr.g), gr.row, c, got));
        continue;
      }
      if (!std::isfinite(to_double(out, rc[ri]))) {
        g.ref_overflow();
        continue;
      }
      const double b = bound[i * du + static_cast<std::size_t>(c)];
      if (masked && got != 0) {
        g.special_wrong(gr.at * d + c, fmt::format("dQ row {} (a query that sees no key), column {}: got {:.6g} where 0 is exact", gr.row, c, got));
        continue;
      }
      g.graded(gr.at * d + c, out, code, rc[ri], got, want, b);
      if (std::isfinite(got) && std::isfinite(b)) {  // as RowGrades::graded judges it
        const double err = std::fabs(got - want), frac = b > 0 ? err / b : (err > 0 ? kInf : 0.0);
        const auto o = static_cast<std::size_t>(gr.g);
        if (out_row[o] < 0 || frac > out_frac[o]) out_frac[o] = frac, out_row[o] = gr.row;
      }
      if (!run_to_run || gr.g != AttentionGrad::Dq) continue;
      // Every other run's dQ against the same bound; the spread in ulps of the output format.
      double lo = static_cast<double>(code_ordinal(out, code)), hi = lo;
      for (std::size_t k = 1; k < dq_runs.size(); ++k) {
        const std::uint64_t ck = dq_runs[k][at];
        const double gk = to_double(out, ck);
        const double frac = b > 0 ? std::fabs(gk - want) / b : (gk == want ? 0.0 : kInf);
        worst_run_frac = std::max(worst_run_frac, frac);
        lo = std::min(lo, static_cast<double>(code_ordinal(out, ck)));
        hi = std::max(hi, static_cast<double>(code_ordinal(out, ck)));
      }
      spread_ulps = std::max(spread_ulps, hi - lo);
      spread_elements += hi > lo;
    }
  }
  if (run_to_run) {
    runs.runs_differ = kv_differ;  // dQ's differences are declared; dK and dV must not differ
    if (kv_differ == 0) runs.first_differ_run = runs.first_differ_index = -1;
  }

  g.record_metrics(r, runs);
  const std::int64_t worst = g.worst();
  r.achieved["attention_bwd_reference_mpfr_elements"] = static_cast<double>(ref.stats.mpfr);
  r.achieved["attention_bwd_reference_unsettled"] = static_cast<double>(ref.stats.unsettled);
  r.achieved["attention_bwd_vacuous_elements"] = static_cast<double>(g.vacuous());
  r.achieved["attention_bwd_graded_rows"] = static_cast<double>(graded.size());
  for (const AttentionGrad o : {AttentionGrad::Dq, AttentionGrad::Dk, AttentionGrad::Dv}) {
    const auto oi = static_cast<std::size_t>(o);
    if (out_row[oi] < 0) continue;  // nothing of it judged
    const std::string n = grad_name(o);
    // The results' JSON holds finite numbers only: an infinite fraction (an error where the bound is 0) as the largest double.
    r.achieved["attention_bwd_max_error_over_bound_" + n] = std::min(out_frac[oi], std::numeric_limits<double>::max());
    r.achieved["attention_bwd_worst_row_" + n] = static_cast<double>(out_row[oi]);
  }
  if (worst >= 0) {
    const std::int64_t wr = worst / d, wc = worst % d;
    const auto it = std::find_if(graded.begin(), graded.end(), [&](const Graded& x) { return x.at == wr; });
    const auto i = static_cast<std::size_t>(it - graded.begin());
    const auto terms = attention_bwd_bound_terms(arith, bi, stats, it->g, it->row, wc);
    const std::vector<double>& rv = it->g == AttentionGrad::Dq ? ref.dq_value : it->g == AttentionGrad::Dk ? ref.dk_value : ref.dv_value;
    const Format& out = it->g == AttentionGrad::Dq ? *t.dq_out : it->g == AttentionGrad::Dk ? *t.dk_out : *t.dv_out;
    r.envelope.terms.clear();
    for (const AttentionBoundTerm& term : terms) r.envelope.terms.push_back({term.name, term.value, term.law});
    r.envelope.allowed = "|got - exact| <= the element's bound (oracle/attention/attention_bwd_bound.hpp), per element of dQ, dK, dV";
    r.envelope.arithmetic = fmt::format("{} row {}, column {}: exact {:.9g}, got {:.9g}\n{}", grad_name(it->g), it->row, wc,
                                        rv[it->ref_at * du + static_cast<std::size_t>(wc)],
                                        to_double(out, codes[static_cast<std::size_t>(worst)]), to_text(terms));
    (void)i;
  }
  if (!r.vacuous) r.evidence.push_back("attention_backward");
  g.record_checks(r, runs, *t.dq_out, d, "dQ of queries that see no key exactly 0; NaN where a score is NaN");
  if (run_to_run)
    r.checks.push_back({CheckKind::Spread, worst_run_frac <= 1,
                        fmt::format("dQ added with atomics (declared run to run): {} run(s), {} element(s) differ between runs, spread up to "
                                    "{:g} ulp; every run's dQ within its bound (max error / bound {:.3g})",
                                    dq_runs.size(), spread_elements, spread_ulps, worst_run_frac),
                        -1, worst_run_frac, 1});
  decide(r);
  return finish();
}

}  // namespace fpcert
