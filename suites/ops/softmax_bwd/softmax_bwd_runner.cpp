// suites/ops/softmax_bwd/softmax_bwd_runner.cpp — buffers, guards, runs and per-element grading of one softmax backward
// case.
#include "suites/ops/softmax_bwd/softmax_bwd_runner.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <vector>

#include "base/codes.hpp"
#include "base/fpenv.hpp"
#include "generators/softmax_bwd/softmax_bwd.hpp"
#include "oracle/softmax/softmax_bwd_bound.hpp"
#include "oracle/softmax/softmax_bwd_ref.hpp"
#include "suites/run/guarded_buffer.hpp"
#include "suites/run/guarded_input.hpp"
#include "suites/run/row_case.hpp"

namespace fpcert {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::vector<std::uint8_t> pack(const std::vector<std::uint64_t>& c, const Format& f) {
  const int b = container_bytes(f);
  std::vector<std::uint8_t> v(c.size() * static_cast<std::size_t>(b));
  for (std::size_t e = 0; e < c.size(); ++e) store_code(v.data(), static_cast<std::int64_t>(e), b, to_container(f, c[e]));
  return v;
}

}  // namespace

CaseResult softmax_bwd_skeleton(const SoftmaxBwdKernel& k, const SoftmaxBwdCaseSetup& s) {
  const SoftmaxBwdTraits& t = k.softmax_bwd_traits();
  CaseResult r = case_skeleton(k, describe_softmax_bwd_traits(t), s.suite, s.case_id, s.family, *s.problem, s.repro, *t.out);
  r.m = softmax_bwd_rows(*s.problem);
  r.n = softmax_bwd_cols(*s.problem);
  r.k = softmax_bwd_cols(*s.problem);
  return r;
}

CaseResult run_softmax_bwd_case(SoftmaxBwdKernel& kernel, const SoftmaxBwdCaseSetup& s, DeviceApi& api, const RunOptions& opt) {
  const auto wall0 = std::chrono::steady_clock::now();
  const Problem& p = *s.problem;
  const SoftmaxBwdTraits& t = kernel.softmax_bwd_traits();
  const SoftmaxBwdArith a = softmax_bwd_arith(t);
  const Format& out = *t.out;
  CaseResult r = softmax_bwd_skeleton(kernel, s);
  auto finish = [&]() -> CaseResult {
    r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    return r;
  };
  if (std::string why = memory_mismatch(kernel, api); !why.empty()) {
    r.status = CaseStatus::NotSupported;
    r.reason = std::move(why);
    return finish();
  }
  const std::int64_t rows = softmax_bwd_rows(p), cols = softmax_bwd_cols(p);
  const auto n = static_cast<std::size_t>(cols);
  const std::size_t total = static_cast<std::size_t>(rows) * n;
  const double scale = softmax_bwd_scale(p);
  if (softmax_bwd_fn(p) != t.fn) {
    r.status = CaseStatus::NotSupported;
    r.reason = fmt::format("the case's y is a {} output; the kernel is a {} backward", to_string(softmax_bwd_fn(p)), to_string(t.fn));
    return finish();
  }
  if (const Support sup = kernel.can_implement(rows, cols); !sup.ok) {
    r.status = CaseStatus::NotSupported;
    r.reason = sup.reason;
    return finish();
  }
  // y and dy as the problem gives them (specials planted), then as codes of the kernel's input formats: the reference is
  // the exact gradient at those codes (the kernel's inputs), so nothing is forgiven and nothing is charged for storage.
  std::vector<double> ys(total), dys(total);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) {
      const std::size_t e = static_cast<std::size_t>(i) * n + static_cast<std::size_t>(j);
      ys[e] = softmax_bwd_y(p, i, j);
      dys[e] = softmax_bwd_dy(p, i, j);
    }
  if (s.specials)
    for (std::int64_t i = 0; i < rows; ++i) {
      const std::size_t e = static_cast<std::size_t>(i) * n + static_cast<std::size_t>(i) % n;
      if (i % 4 == 0) dys[e] = std::numeric_limits<double>::quiet_NaN();
      if (i % 4 == 1) dys[e] = kInf;
      if (i % 4 == 2 && t.fn == SoftmaxFn::Softmax) ys[e] = 0, dys[e] = 4096;
      if (i % 4 == 2 && t.fn == SoftmaxFn::LogSoftmax) ys[e] = -kInf, dys[e] = 0;
    }
  std::vector<std::uint64_t> ycodes(total), dycodes(total);
  std::vector<double> y(total), dy(total);
  std::int64_t changed = 0;
  for (std::size_t e = 0; e < total; ++e) {
    ycodes[e] = round_double(*t.y_input, ys[e], Rounder::nearest(*t.y_input)).code;
    dycodes[e] = round_double(*t.dy_input, dys[e], Rounder::nearest(*t.dy_input)).code;
    y[e] = to_double(*t.y_input, ycodes[e]);
    dy[e] = to_double(*t.dy_input, dycodes[e]);
    changed += (y[e] != ys[e] && !std::isnan(ys[e])) || (dy[e] != dys[e] && !std::isnan(dys[e]));
  }
  if (changed > 0)
    r.flags.push_back(fmt::format("inputs-rounded: {} entries of y or dy rounded into the kernel's input formats ({}, {}); the "
                                  "reference is the gradient at the rounded codes",
                                  changed, t.y_input->tag, t.dy_input->tag));

  // The reference and the bound of every element.
  pin_fp_env();
  const SoftmaxBwdRef ref = softmax_bwd_reference(t.fn, y.data(), dy.data(), rows, cols, scale, out);
  std::vector<double> bound(total);
  for (std::int64_t i = 0; i < rows; ++i) {
    const std::size_t at = static_cast<std::size_t>(i) * n;
    softmax_bwd_row_bound(a, y.data() + at, dy.data() + at, n, scale, bound.data() + at);
  }

  RowRuns runs = row_runs(api, opt);
  const int ob = container_bytes(out), yb = container_bytes(*t.y_input), db = container_bytes(*t.dy_input);
  const std::int64_t lddx = cols + opt.ldc_pad;
  const std::uint64_t pre = prefill_code(out);
  const bool ran = run_kernel_guarded(r, [&] {
    GuardedInput dyb(api, pack(dycodes, *t.dy_input), rows, cols, padded_ld(cols, db), db, opt.guard_bytes, false);
    GuardedInput ybuf(api, pack(ycodes, *t.y_input), rows, cols, padded_ld(cols, yb), yb, opt.guard_bytes, false);
    GuardedBuffer dout(api, static_cast<std::size_t>(rows * lddx * ob), opt.guard_bytes);
    dout.prefill(rows, cols, lddx, ob, to_container(out, pre));
    SoftmaxBwdOperands ops;
    ops.rows = rows;
    ops.cols = cols;
    ops.y = ybuf.elements();
    ops.ldy = ybuf.ld();
    ops.dy = dyb.elements();
    ops.lddy = dyb.ld();
    ops.scale = static_cast<float>(scale);
    ops.dx = dout.elements();
    ops.lddx = lddx;
    ops.stream = api.stream();
    run_rows(runs, api, opt, dout, out, rows, cols, {&ybuf, &dyb}, [&] { kernel.run(ops); });
  });
  if (!ran) return finish();
  pin_fp_env();

  // Grade every element.
  RowGrades g;
  const std::vector<std::uint64_t>& codes = runs.codes;
  for (std::size_t e = 0; e < total; ++e) {
    const std::uint64_t code = codes[e];
    const double got = to_double(out, code), want = ref.value[e];
    g.heuristics(got, want);
    if (out.has_nan() && code == pre) {
      g.unwritten(static_cast<std::int64_t>(e));
      continue;
    }
    if (!std::isfinite(want) || bound[e] == 0) {
      // Special values: IEEE through D or G (NaN, Inf), zero probabilities and masked entries (+0).
      const bool ok = std::isnan(want) ? std::isnan(got) : got == want;
      if (!ok)
        g.special_wrong(static_cast<std::int64_t>(e),
                        fmt::format("row {}, column {}: got {:.6g} where {} (y = {:.6g}, dy = {:.6g})", e / n, e % n, got,
                                    std::isfinite(want) ? "a zero probability or a masked entry gives +0" : "IEEE gives " + fmt::format("{}", want),
                                    y[e], dy[e]));
      continue;
    }
    if (!std::isfinite(to_double(out, ref.code[e]))) {
      g.ref_overflow();
      continue;
    }
    g.graded(static_cast<std::int64_t>(e), out, code, ref.code[e], got, want, bound[e]);
  }

  g.record_metrics(r, runs);
  r.achieved["softmax_bwd_reference_mpfr_elements"] = static_cast<double>(ref.stats.mpfr);
  r.achieved["softmax_bwd_vacuous_elements"] = static_cast<double>(g.vacuous());
  if (const std::int64_t worst = g.worst(); worst >= 0) {
    const auto w = static_cast<std::size_t>(worst);
    const std::size_t row = w / n, at = row * n;
    const auto terms = softmax_bwd_bound_terms(a, y.data() + at, dy.data() + at, n, scale, w - at);
    r.envelope.terms.clear();
    for (const SoftmaxBoundTerm& term : terms) r.envelope.terms.push_back({term.name, term.value, term.law});
    r.envelope.allowed = "|got - exact| <= the element's bound (oracle/softmax/softmax_bwd_bound.hpp), per element";
    r.envelope.arithmetic = fmt::format("row {}, column {}: y {:.9g}, dy {:.9g}, exact dx {:.9g}, got {:.9g}\n{}", row, w - at, y[w], dy[w],
                                        ref.value[w], to_double(out, codes[w]), to_text(terms));
  }
  if (!r.vacuous) r.evidence.push_back("softmax_backward");
  g.record_checks(r, runs, out, cols, "special values (NaN and Inf rows as IEEE, zero probabilities and masked entries +0)");
  decide(r);
  return finish();
}

}  // namespace fpcert
