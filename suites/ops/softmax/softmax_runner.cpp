// suites/ops/softmax/softmax_runner.cpp — buffers, guards, runs and per-element grading of one softmax case.
#include "suites/ops/softmax/softmax_runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstring>
#include <deque>
#include <limits>
#include <mutex>
#include <vector>

#include "base/codes.hpp"
#include "base/fpenv.hpp"
#include "generators/softmax.hpp"
#include "oracle/softmax/softmax_bound.hpp"
#include "oracle/softmax/softmax_emulate.hpp"
#include "oracle/softmax/softmax_ref.hpp"
#include "oracle/ulp.hpp"
#include "suites/run/guarded_buffer.hpp"
#include "suites/run/guarded_input.hpp"
#include "suites/run/row_case.hpp"

namespace fpcert {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::vector<double> decode_codes(const Format& f, const std::vector<std::uint64_t>& codes) {
  std::vector<double> v(codes.size());
  for (std::size_t e = 0; e < codes.size(); ++e) v[e] = to_double(f, codes[e]);
  return v;
}

/// softmax_reference, remembered for the last few argument matrices (exactly equal ones: the whole matrix is compared, the
/// hash only finds the candidate). The reference is a function of (fn, z, shape, out, policy) alone, so a diagnosis (the
/// kernel and each hypothesis through this runner on the same cases), a mutation campaign or a certify run of several
/// kernels computes it once per case instead of once per kernel (docs/diagnose.md, "Cost").
SoftmaxRef cached_softmax_reference(SoftmaxFn fn, const std::vector<double>& z, std::int64_t rows, std::int64_t cols, const Format& out,
                                    MaskedRowPolicy policy) {
  struct Entry {
    SoftmaxFn fn;
    const Format* out;
    MaskedRowPolicy policy;
    std::int64_t rows, cols;
    std::uint64_t hash;
    std::vector<double> z;
    SoftmaxRef ref;
  };
  static std::mutex mu;
  static std::deque<Entry> cache;                          // most recent last
  constexpr std::size_t kMaxElements = std::size_t{1} << 23;  // z, code and value: 24 bytes an element, 200 MB at most
  std::uint64_t h = 0xcbf29ce484222325ULL;                 // FNV-1a over the bits
  for (double v : z) h = (h ^ std::bit_cast<std::uint64_t>(v)) * 0x100000001b3ULL;
  const auto same = [&](const Entry& e) {
    return e.fn == fn && e.out == &out && e.policy == policy && e.rows == rows && e.cols == cols && e.hash == h &&
           std::equal(e.z.begin(), e.z.end(), z.begin(), z.end(),
                      [](double a, double b) { return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b); });
  };
  {
    const std::lock_guard<std::mutex> lock(mu);
    for (const Entry& e : cache)
      if (same(e)) return e.ref;
  }
  SoftmaxRef ref = softmax_reference(fn, z.data(), rows, cols, out, policy);
  if (z.size() <= kMaxElements / 4) {
    const std::lock_guard<std::mutex> lock(mu);
    cache.push_back(Entry{fn, &out, policy, rows, cols, h, z, ref});
    std::size_t held = 0;
    for (const Entry& e : cache) held += e.z.size();
    while (held > kMaxElements && !cache.empty()) {
      held -= cache.front().z.size();
      cache.pop_front();
    }
  }
  return ref;
}

std::uint64_t f32_code(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

/// The bitwise tier (docs/softmax.md, "Bitwise tier"): where the kernel declares its whole arithmetic, every result
/// against the emulation of that declaration (NaN against NaN by NaN-ness), as the case's strongest check.
void add_bitwise_check(CaseResult& r, const SoftmaxKernel& k, const Problem& p, const std::vector<double>& xst,
                       const std::vector<std::uint64_t>& codes, const RunOptions& opt) {
  const SoftmaxTraits& t = k.softmax_traits();
  if (opt.strongest != Tier::Bitwise || !softmax_emulable(t.arith)) return;
  const Format& out = *t.arith.out;
  const std::int64_t rows = softmax_rows(p), cols = softmax_cols(p);
  const auto n = static_cast<std::size_t>(cols);
  const bool masked = softmax_masked(p);
  std::vector<float> x(n), mask(masked ? n : 0);
  std::vector<std::uint64_t> want(n);
  std::int64_t mismatches = 0, first = -1;
  std::string detail;
  for (std::int64_t i = 0; i < rows; ++i) {
    const std::size_t at = static_cast<std::size_t>(i) * n;
    for (std::size_t j = 0; j < n; ++j) {
      x[j] = static_cast<float>(xst[at + j]);  // a value of the input format (at most binary32): exact
      if (masked) mask[j] = static_cast<float>(softmax_mask(p, i, static_cast<std::int64_t>(j)));
    }
    emulate_softmax_row(t.arith, t.masked_rows, x.data(), masked ? mask.data() : nullptr, static_cast<float>(softmax_scale(p)), n,
                        want.data());
    for (std::size_t j = 0; j < n; ++j) {
      const std::uint64_t got = codes[at + j];
      if (got == want[j] || (std::isnan(to_double(out, got)) && std::isnan(to_double(out, want[j])))) continue;
      if (first < 0) {
        first = static_cast<std::int64_t>(at + j);
        detail = fmt::format("row {}, column {}: got {} ({:.9g}), the declared arithmetic gives {} ({:.9g})", i, j, hex_code(out, got),
                             to_double(out, got), hex_code(out, want[j]), to_double(out, want[j]));
      }
      ++mismatches;
    }
  }
  r.tier = Tier::Bitwise;
  r.checks.push_back({CheckKind::Bitwise, mismatches == 0,
                      mismatches ? fmt::format("{} of {} result(s) differ from the emulation of the declared arithmetic; first: {}",
                                               mismatches, rows * cols, detail)
                                 : fmt::format("all {} result(s) equal to the emulation of the declared arithmetic ({}, {}) bit for bit",
                                               rows * cols, to_string(t.arith.exp_exact), describe(t.arith.sum_order)),
                      first, static_cast<double>(mismatches), 0});
}

}  // namespace

CaseResult softmax_skeleton(const SoftmaxKernel& k, const SoftmaxCaseSetup& s) {
  const SoftmaxTraits& t = k.softmax_traits();
  CaseResult r = case_skeleton(k, describe_softmax_traits(t), s.suite, s.case_id, s.family, *s.problem, s.repro, *t.arith.out);
  r.m = softmax_rows(*s.problem);
  r.n = softmax_cols(*s.problem);
  r.k = softmax_cols(*s.problem);
  return r;
}

CaseResult run_softmax_case(SoftmaxKernel& kernel, const SoftmaxCaseSetup& s, DeviceApi& api, const RunOptions& opt) {
  const auto wall0 = std::chrono::steady_clock::now();
  const Problem& p = *s.problem;
  const SoftmaxTraits& t = kernel.softmax_traits();
  const SoftmaxArith& a = t.arith;
  const Format& out = *a.out;
  CaseResult r = softmax_skeleton(kernel, s);
  auto finish = [&]() -> CaseResult {
    r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    return r;
  };
  if (std::string why = memory_mismatch(kernel, api); !why.empty()) {
    r.status = CaseStatus::NotSupported;
    r.reason = std::move(why);
    return finish();
  }
  const std::int64_t rows = softmax_rows(p), cols = softmax_cols(p);
  const auto n = static_cast<std::size_t>(cols);
  const std::size_t total = static_cast<std::size_t>(rows) * n;
  const bool masked = softmax_masked(p);
  const double scale = softmax_scale(p);
  if (const Support sup = kernel.can_implement(rows, cols, masked); !sup.ok) {
    r.status = CaseStatus::NotSupported;
    r.reason = sup.reason;
    return finish();
  }
  // Logits as the source gives them (specials planted), stored (rounded once into the kernel's input format).
  std::vector<double> xs(total), xst(total), z(total), pert(total, 0.0);
  std::vector<std::uint64_t> xcodes(total), mcodes(masked ? total : 0);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) xs[static_cast<std::size_t>(i) * n + static_cast<std::size_t>(j)] = softmax_logit(p, i, j);
  if (s.specials)
    for (std::int64_t i = 0; i < rows; ++i) {
      double* x = xs.data() + static_cast<std::size_t>(i) * n;
      const std::size_t at = static_cast<std::size_t>(i) % n;
      if (i % 4 == 0) x[at] = std::numeric_limits<double>::quiet_NaN();
      if (i % 4 == 1) x[at] = kInf;
      if (i % 4 == 2) x[at] = -kInf;
    }
  const Rounder in_r{Rounding::NearestEven, default_saturation(*t.x_input), NanPayload::Preserve};
  bool exact_inputs = true;
  double beyond = 0;
  const double u_c = a.compute->unit_roundoff();
  for (std::size_t e = 0; e < total; ++e) {
    const Rounded q = round_double(*t.x_input, xs[e], in_r);
    if ((q.flags & kOverflow) && std::isfinite(xs[e])) beyond = std::max(beyond, std::fabs(xs[e]));
    xcodes[e] = q.code;
    xst[e] = to_double(*t.x_input, q.code);
    exact_inputs = exact_inputs && (xst[e] == xs[e] || (std::isnan(xst[e]) && std::isnan(xs[e])));
    const double m = masked ? softmax_mask(p, static_cast<std::int64_t>(e / n), static_cast<std::int64_t>(e % n)) : 0.0;
    if (masked) mcodes[e] = f32_code(static_cast<float>(m));
    z[e] = scale * xs[e] + m;  // exact: a 24-bit scale times a 24-bit logit, plus +0 or -Inf
    if (std::isfinite(z[e]) && std::isfinite(xst[e]))
      pert[e] = (scale * std::fabs(xst[e] - xs[e]) + (scale != 1 ? u_c * std::fabs(scale * xst[e]) : 0.0)) * (1 + 0x1p-50);
  }
  if (beyond > 0) {
    r.status = CaseStatus::NotSupported;
    r.reason = fmt::format("the case's logits reach {:.4g}, beyond {}'s largest finite value", beyond, t.x_input->tag);
    return finish();
  }
  if (exact_inputs && scale == 1)
    r.flags.push_back(fmt::format("inputs-exact-in-storage: every logit is a value of {}: the storage step is not exercised",
                                  t.x_input->tag));
  // The unshifted evaluation's domain: exp(z) and the row sum within the compute format's normal range.
  if (a.shift == SoftmaxShift::Unshifted) {
    const double hi = std::log(a.compute->max_finite()), lo = std::log(a.compute->min_normal());
    std::int64_t outside = 0;
    for (std::int64_t i = 0; i < rows; ++i) {
      double m = -kInf;
      std::int64_t nu = 0;
      for (std::size_t j = 0; j < n; ++j) {
        const double v = z[static_cast<std::size_t>(i) * n + j];
        if (v != -kInf && std::isfinite(v)) m = std::max(m, v), ++nu;
      }
      if (nu > 0 && (m + std::log(static_cast<double>(nu)) + 1 > hi || m < lo + 24)) ++outside;
    }
    if (outside > 0) {
      r.status = CaseStatus::NotSupported;
      r.reason = fmt::format("{} row(s) whose max logit leaves [log(min normal) + 24, log(max finite) - log(n) - 1] of {}: the "
                             "kernel declares an unshifted softmax, which is not meant for them (the overflow a shift avoids)",
                             outside, a.compute->tag);
      return finish();
    }
  }

  // The reference and the bound of every element.
  pin_fp_env();
  const SoftmaxRef ref = cached_softmax_reference(a.fn, z, rows, cols, out, t.masked_rows);
  std::vector<double> bound(total);
  for (std::int64_t i = 0; i < rows; ++i) {
    const std::size_t at = static_cast<std::size_t>(i) * n;
    softmax_row_bound(a, z.data() + at, pert.data() + at, ref.value.data() + at, n, bound.data() + at);
  }

  RowRuns runs = row_runs(api, opt);
  const int ob = container_bytes(out), xb = container_bytes(*t.x_input);
  const std::int64_t ldo = cols + opt.ldc_pad;
  const std::uint64_t pre = prefill_code(out);
  auto pack = [&](const std::vector<std::uint64_t>& c, const Format& f, int b) {
    std::vector<std::uint8_t> v(c.size() * static_cast<std::size_t>(b));
    for (std::size_t e = 0; e < c.size(); ++e) store_code(v.data(), static_cast<std::int64_t>(e), b, to_container(f, c[e]));
    return v;
  };
  const bool ran = run_kernel_guarded(r, [&] {
    GuardedInput dx(api, pack(xcodes, *t.x_input, xb), rows, cols, padded_ld(cols, xb), xb, opt.guard_bytes, false);
    std::unique_ptr<GuardedInput> dm;
    if (masked) dm = std::make_unique<GuardedInput>(api, pack(mcodes, f32, 4), rows, cols, padded_ld(cols, 4), 4, opt.guard_bytes, false);
    GuardedBuffer dout(api, static_cast<std::size_t>(rows * ldo * ob), opt.guard_bytes);
    dout.prefill(rows, cols, ldo, ob, to_container(out, pre));
    SoftmaxOperands ops;
    ops.rows = rows;
    ops.cols = cols;
    ops.x = dx.elements();
    ops.ldx = dx.ld();
    if (dm) {
      ops.mask = dm->elements();
      ops.ldm = dm->ld();
    }
    ops.scale = static_cast<float>(scale);
    ops.out = dout.elements();
    ops.ldo = ldo;
    ops.stream = api.stream();
    run_rows(runs, api, opt, dout, out, rows, cols, {&dx, dm.get()}, [&] { kernel.run(ops); });
  });
  if (!ran) return finish();
  pin_fp_env();
  if (opt.output) *opt.output = decode_codes(out, runs.codes);  // the checked run's output (fpcert audit reads it)

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
    const double want_out = to_double(out, ref.code[e]);
    if (!std::isfinite(want) || (want == 0 && z[e] == -kInf) || (std::isnan(want_out))) {
      // Special values: NaN rows, masked entries (+0 or -Inf), fully masked rows (the declared policy).
      const bool ok = std::isnan(want) ? std::isnan(got) : (want == 0 ? got == 0 : got == want);
      if (!ok)
        g.special_wrong(static_cast<std::int64_t>(e),
                        fmt::format("row {}, column {}: got {:.6g} where IEEE and the declared policy (masked rows: {}) give {}", e / n,
                                    e % n, got, to_string(t.masked_rows), want));
      continue;
    }
    if (!std::isfinite(want_out)) {
      g.ref_overflow();
      continue;
    }
    g.graded(static_cast<std::int64_t>(e), out, code, ref.code[e], got, want, bound[e]);
  }

  g.record_metrics(r, runs);
  const std::int64_t worst = g.worst();
  r.achieved["softmax_reference_mpfr_elements"] = static_cast<double>(ref.stats.mpfr);
  r.achieved["softmax_vacuous_elements"] = static_cast<double>(g.vacuous());
  if (worst >= 0) {
    const auto w = static_cast<std::size_t>(worst);
    const std::size_t row = w / n, at = row * n;
    const auto terms = softmax_bound_terms(a, z.data() + at, pert.data() + at, ref.value.data() + at, n, w - at);
    r.envelope.terms.clear();
    for (const SoftmaxBoundTerm& term : terms) r.envelope.terms.push_back({term.name, term.value, term.law});
    r.envelope.allowed = "|got - exact| <= the element's bound (oracle/softmax/softmax_bound.hpp), per element";
    r.envelope.arithmetic = fmt::format("row {}, column {}: exact {:.9g}, got {:.9g}\n{}", row, w - at, ref.value[w],
                                        to_double(out, codes[w]), to_text(terms));
  }
  if (!r.vacuous) r.evidence.push_back("softmax");

  g.record_checks(r, runs, out, cols,
                  fmt::format("special values (NaN rows, masked entries, fully masked rows: {}) as declared", to_string(t.masked_rows)));
  add_bitwise_check(r, kernel, p, xst, codes, opt);
  decide(r);
  return finish();
}

}  // namespace fpcert
