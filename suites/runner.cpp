// suites/runner.cpp — buffers, guards, runs, timing and grading of one case.
#include "suites/runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <tuple>
#include <chrono>
#include <cstring>
#include <limits>
#include <numeric>
#include <vector>

#include "base/codes.hpp"
#include "base/error.hpp"
#include "suites/grade.hpp"
#include "suites/guarded_buffer.hpp"

namespace fpcert {

std::uint64_t prefill_code(const Format& out) {
  switch (out.specials) {
    case Specials::IEEE: {
      const std::uint64_t quiet = std::uint64_t{1} << (out.frac_bits - 1);
      return out.inf_code() | quiet | (0x5A5A5A5A5A5A5A5AULL & (out.frac_mask() >> 1));
    }
    case Specials::FiniteNaN:
    case Specials::ScaleOnly: return out.canonical_nan_code();
    case Specials::FiniteOnly: return out.max_finite_code();
  }
  return 0;
}

namespace {

/// Why the case's inputs lie outside the kernel's InputDomain (empty: inside). Checks what the kernel
/// receives: the exact inputs rounded into its input formats, as the runner stores them.
std::string outside_domain(const KernelTraits& t, const Problem& p) {
  const InputDomain& d = t.domain;
  if (!d.restricted()) return {};
  struct Op {
    const Matrix* m;
    const Format* in;
    const Format* operand;
    const char* name;
    bool rows_are_lines;  // A (m x k): lines are rows, K runs along them; B (k x n): lines are columns
  };
  for (const Op& op : {Op{&p.a, t.a_input, t.a_operand, "A", true}, Op{&p.b, t.b_input, t.b_operand, "B", false}}) {
    const Rounder rr{t.input_rounding, default_saturation(*op.in), NanPayload::Preserve};
    const std::int64_t rows = op.m->rows, cols = op.m->cols;
    const std::int64_t lines = op.rows_are_lines ? rows : cols, klen = std::max<std::int64_t>(1, op.rows_are_lines ? cols : rows);
    const bool blocked = d.span_scope == SpanScope::KBlock;
    const std::int64_t blk = blocked ? std::max(1, d.kblock) : klen, nblk = (klen + blk - 1) / blk;
    const std::int64_t groups = d.span_scope == SpanScope::Tensor ? 1 : lines * nblk;
    std::vector<int> lo, hi;
    if (d.span_scope != SpanScope::None) {
      lo.assign(static_cast<std::size_t>(groups), std::numeric_limits<int>::max());
      hi.assign(static_cast<std::size_t>(groups), std::numeric_limits<int>::min());
    }
    double mx = 0;
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t c = 0; c < cols; ++c) {
        const double v = to_double(*op.in, round_double(*op.in, (*op.m)(r, c), rr).code);
        if (!std::isfinite(v) || v == 0) continue;
        mx = std::max(mx, std::fabs(v));
        if (d.span_scope == SpanScope::None) continue;
        const std::int64_t line = op.rows_are_lines ? r : c, kk = op.rows_are_lines ? c : r;
        const auto g = static_cast<std::size_t>(d.span_scope == SpanScope::Tensor ? 0 : line * nblk + kk / blk);
        const int e = std::ilogb(v);
        lo[g] = std::min(lo[g], e);
        hi[g] = std::max(hi[g], e);
      }
    if (d.operand_range) {
      const Rounded o = round_double(*op.operand, mx, Rounder{t.input_rounding, default_saturation(*op.operand), NanPayload::Preserve});
      if (o.flags & kOverflow)
        return fmt::format("{} reaches {:.4g}, beyond {}'s largest finite value {:.4g}: {}", op.name, mx, op.operand->tag,
                           op.operand->max_finite(), d.note);
    }
    for (std::int64_t g = 0; g < static_cast<std::int64_t>(lo.size()); ++g) {
      const auto gi = static_cast<std::size_t>(g);
      if (lo[gi] > hi[gi] || hi[gi] - lo[gi] <= d.max_span) continue;
      std::string where;
      if (d.span_scope == SpanScope::Tensor) where = fmt::format("the nonzero entries of {}", op.name);
      else {
        where = fmt::format("{} {} of {}", op.rows_are_lines ? "row" : "column", g / nblk, op.name);
        if (blocked) where += fmt::format(", K-block {} (k = {}..{})", g % nblk, (g % nblk) * blk, std::min(klen, (g % nblk + 1) * blk) - 1);
      }
      return fmt::format("{} {} {} binades (2^{} .. 2^{}), more than the kernel's domain allows ({}): {}", where,
                         d.span_scope == SpanScope::Tensor ? "span" : "spans", hi[gi] - lo[gi],
                         lo[gi], hi[gi], d.max_span, d.note);
    }
  }
  return {};
}

std::vector<std::uint8_t> encode_inputs(const std::vector<double>& v, const Format& f, Rounding r) {
  const int b = container_bytes(f);
  std::vector<std::uint8_t> out(v.size() * static_cast<std::size_t>(b));
  const Rounder rr{r, default_saturation(f), NanPayload::Preserve};
  for (std::size_t i = 0; i < v.size(); ++i)
    store_code(out.data(), static_cast<std::int64_t>(i), b, to_container(f, round_double(f, v[i], rr).code));
  return out;
}

/// The first changed byte around C, in words (the guard report of GuardedBuffer).
std::string describe_guards(const GuardReport& g, std::int64_t m, std::int64_t n, std::int64_t ldc, int cb) {
  switch (g.where) {
    case GuardReport::Where::None: return "";
    case GuardReport::Where::Before: return fmt::format("{} byte(s) before C overwritten (nearest at byte -{})", 1, g.offset);
    case GuardReport::Where::After:
      return fmt::format("written past the end of C: byte {} after it (element index {} in row-major m*ldc)", g.offset,
                         static_cast<std::int64_t>(g.offset) / cb + m * ldc);
    case GuardReport::Where::Padding:
      return fmt::format("written into the ldc padding at row {}, column {} (n = {}, ldc = {})", g.row, g.col, n, ldc);
  }
  return "";
}

}  // namespace

bool run_kernel_guarded(CaseResult& r, const std::function<void()>& fn) {
  try {
    fn();
    return true;
  } catch (const NotSupportedError& e) {
    r.status = CaseStatus::NotSupported;
    r.reason = e.what();
  } catch (const DeviceError& e) {
    r.status = e.kind == FailureKind::Hung ? CaseStatus::Hung : CaseStatus::Crashed;
    r.reason = e.what();
  } catch (const InputError&) {
    throw;  // bad input is the user's, not the kernel's: exit 2
  } catch (const std::exception& e) {
    r.status = CaseStatus::Error;
    r.reason = std::string("kernel threw: ") + e.what();
  }
  return false;
}

CaseResult run_case(GemmKernel& kernel, const CaseSetup& setup, DeviceApi& api, const RunOptions& opt) {
  const auto wall0 = std::chrono::steady_clock::now();
  const Problem& p = *setup.problem;
  const KernelTraits& t = kernel.traits();
  CaseResult r;
  r.suite = setup.suite;
  r.case_id = setup.case_id;
  r.family = setup.family;
  r.axis = setup.axis;
  r.kernel = kernel.name();
  r.kernel_traits = describe_traits(t);
  r.backend = std::string(to_string(kernel.backend()));
  r.spec = p.spec;
  r.m = p.m;
  r.n = p.n;
  r.k = p.k;
  r.source_format = std::string(p.source->tag);
  r.out_format = std::string(t.out->tag);
  r.achieved = p.achieved;
  r.repro = setup.repro;
  auto finish = [&]() -> CaseResult {
    r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    return r;
  };

  if ((kernel.memory() == MemorySpace::Device) != api.is_device()) {
    r.status = CaseStatus::NotSupported;
    r.reason = kernel.memory() == MemorySpace::Device ? "this kernel needs a CUDA device" : "host kernel given a device API";
    return finish();
  }
  const Support sup = kernel.can_implement(p.m, p.n, p.k);
  if (!sup.ok) {
    r.status = CaseStatus::NotSupported;
    r.reason = sup.reason;
    return finish();
  }
  // Inputs beyond the kernel's storage range would reach it as Inf/NaN: the case is not for this kernel.
  for (const auto& [vals, fmt_in, name] : {std::tuple{&p.a.data, t.a_input, "A"}, std::tuple{&p.b.data, t.b_input, "B"}}) {
    double mx = 0;
    for (double v : *vals)
      if (std::isfinite(v)) mx = std::max(mx, std::fabs(v));
    const Rounded rr = round_double(*fmt_in, mx, Rounder{t.input_rounding, default_saturation(*fmt_in), NanPayload::Preserve});
    if (rr.flags & kOverflow) {
      r.status = CaseStatus::NotSupported;
      r.reason = fmt::format("the case's {} reaches {:.4g}, beyond {}'s largest finite value {:.4g}: its inputs cannot be "
                             "stored in this kernel's input format",
                             name, mx, fmt_in->tag, fmt_in->max_finite());
      return finish();
    }
  }
  if (!opt.grade_outside_domain) {
    if (const std::string why = outside_domain(t, p); !why.empty()) {
      r.status = CaseStatus::NotSupported;
      r.reason = "outside the kernel's input domain: " + why;
      return finish();
    }
  }
  const bool device = api.is_device();
  const int warmups = opt.warmups >= 0 ? opt.warmups : (device ? 3 : 0);
  const int timed = opt.timed >= 0 ? opt.timed : (device ? 10 : 1);

  const std::int64_t ldc = p.n + opt.ldc_pad;
  const int cb = container_bytes(*t.out);
  std::vector<std::uint64_t> codes;
  std::vector<double> times;
  auto read_codes = [&](const GuardedBuffer& c) {
    std::vector<std::uint64_t> v(static_cast<std::size_t>(p.m * p.n));
    for (std::int64_t i = 0; i < p.m; ++i)
      for (std::int64_t j = 0; j < p.n; ++j) v[static_cast<std::size_t>(i * p.n + j)] = from_container(*t.out, c.code(i, j));
    return v;
  };
  const bool ran = run_kernel_guarded(r, [&] {
    const auto a_bytes = encode_inputs(p.a.data, *t.a_input, t.input_rounding);
    const auto b_bytes = encode_inputs(p.b.data, *t.b_input, t.input_rounding);
    ApiBuffer dA(api, a_bytes.size()), dB(api, b_bytes.size());
    GuardedBuffer dC(api, static_cast<std::size_t>(p.m * ldc * cb), opt.guard_bytes);
    api.to_device(dA.get(), a_bytes.data(), a_bytes.size());
    api.to_device(dB.get(), b_bytes.data(), b_bytes.size());
    dC.prefill(p.m, p.n, ldc, cb, to_container(*t.out, prefill_code(*t.out)));
    GemmOperands ops;
    ops.m = p.m;
    ops.n = p.n;
    ops.k = p.k;
    ops.a = dA.get();
    ops.lda = p.k;
    ops.b = dB.get();
    ops.ldb = p.n;
    ops.c = dC.elements();
    ops.ldc = ldc;
    ops.stream = api.stream();

    // The checked run.
    kernel.run(ops);
    api.synchronize(opt.timeout_ms);
    const GuardReport g = dC.download_and_check();
    r.metrics.guard_violations = g.changed;
    r.metrics.first_guard_violation = describe_guards(g, p.m, p.n, ldc, cb);
    codes = read_codes(dC);
    const std::uint64_t pre = prefill_code(*t.out);
    std::int64_t unwritten = 0, first_unwritten = -1;
    for (std::size_t x = 0; x < codes.size(); ++x)
      if (codes[x] == pre && t.out->has_nan()) {
        ++unwritten;
        if (first_unwritten < 0) first_unwritten = static_cast<std::int64_t>(x);
      }
    r.metrics.unwritten = unwritten;
    r.metrics.first_unwritten = first_unwritten;

    // Warm-ups, then timed runs (copies excluded), then the bitwise comparison with the first run.
    for (int w = 0; w < warmups; ++w) {
      kernel.run(ops);
      api.synchronize(opt.timeout_ms);
    }
    for (int q = 0; q < timed; ++q) {
      api.timer_start();
      kernel.run(ops);
      const double ms = api.timer_stop_ms();
      api.synchronize(opt.timeout_ms);
      times.push_back(ms);
    }
    if (warmups + timed > 0) {
      const GuardReport again = dC.download_and_check();
      r.metrics.guard_violations += again.changed;
      if (r.metrics.first_guard_violation.empty()) r.metrics.first_guard_violation = describe_guards(again, p.m, p.n, ldc, cb);
      const auto codes2 = read_codes(dC);
      std::int64_t diff = 0;
      for (std::size_t x = 0; x < codes.size(); ++x) diff += codes[x] != codes2[x];
      r.metrics.deterministic = diff == 0;
      r.metrics.nondeterministic_elements = diff;
    }
  });
  if (!ran) return finish();
  if (!times.empty()) {
    std::vector<double> s = times;
    std::sort(s.begin(), s.end());
    r.time_ms_median = s.size() % 2 ? s[s.size() / 2] : 0.5 * (s[s.size() / 2 - 1] + s[s.size() / 2]);
    r.time_ms_mean = std::accumulate(s.begin(), s.end(), 0.0) / static_cast<double>(s.size());
    r.timed_runs = static_cast<int>(s.size());
    if (r.time_ms_median > 0) r.tflops = 2.0 * static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.k) / (r.time_ms_median * 1e-3) / 1e12;
  }
  GradeInput gi;
  gi.problem = &p;
  gi.ref = setup.ref;
  gi.traits = &t;
  gi.variant = setup.variant;
  gi.codes = &codes;
  gi.unwritten = r.metrics.unwritten;
  gi.first_unwritten = r.metrics.first_unwritten;
  gi.worst_count = opt.worst_count;
  grade(gi, r);
  return finish();
}

}  // namespace fpcert
