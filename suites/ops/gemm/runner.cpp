// suites/ops/gemm/runner.cpp — buffers, guards, runs, timing and grading of one GEMM case.
#include "suites/ops/gemm/runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <tuple>
#include <chrono>
#include <cstring>
#include <limits>
#include <numeric>
#include <optional>
#include <vector>

#include "base/codes.hpp"
#include "base/error.hpp"
#include "base/fpenv.hpp"
#include "suites/ops/gemm/alpha_beta.hpp"
#include "suites/ops/gemm/batch.hpp"
#include "suites/ops/gemm/epilogue_run.hpp"
#include "suites/ops/gemm/fault_injectors.hpp"
#include "suites/verdict/block_reference.hpp"
#include "suites/verdict/grade.hpp"
#include "suites/run/guarded_input.hpp"
#include "suites/run/guarded_buffer.hpp"
#include "suites/reveal/revealed_order.hpp"

namespace fpcert {

namespace {

/// The largest finite |v| when it overflows f under rounding r (the values cannot be held in f); else none.
std::optional<double> beyond_range(const std::vector<double>& values, const Format& f, Rounding r) {
  double mx = 0;
  for (double v : values)
    if (std::isfinite(v)) mx = std::max(mx, std::fabs(v));
  if (round_double(f, mx, Rounder{r, default_saturation(f), NanPayload::Preserve}).flags & kOverflow) return mx;
  return std::nullopt;
}

bool dCin_used(const AlphaBetaCase& ab, bool in_place) { return ab.active && !in_place; }

/// The first changed byte around C, in words (the guard report of GuardedBuffer).
/// m x n is C as stored (column-major C: n stored columns of m, `col`).
std::string describe_guards(const GuardReport& g, std::int64_t m, std::int64_t n, std::int64_t ldc, int cb, bool col = false) {
  switch (g.where) {
    case GuardReport::Where::None: return "";
    case GuardReport::Where::Before: return fmt::format("{} byte(s) before C overwritten (nearest at byte -{})", 1, g.offset);
    case GuardReport::Where::After:
      return fmt::format("written past the end of C: byte {} after it (element index {} in {} {}*ldc)", g.offset,
                         static_cast<std::int64_t>(g.offset) / cb + m * ldc, col ? "column-major" : "row-major", col ? "n" : "m");
    case GuardReport::Where::Padding:
      return col ? fmt::format("written into the ldc padding of column-major C at column {}, row {} (m = {}, ldc = {})", g.row, g.col, n, ldc)
                 : fmt::format("written into the ldc padding at row {}, column {} (n = {}, ldc = {})", g.row, g.col, n, ldc);
  }
  return "";
}

}  // namespace

CaseResult run_case(GemmKernel& kernel, const CaseSetup& setup, DeviceApi& api, const RunOptions& opt) {
  const auto wall0 = std::chrono::steady_clock::now();
  if (opt.output) opt.output->clear();
  const Problem& p = *setup.problem;
  const KernelTraits& t = kernel.traits();
  CaseResult r;
  r.suite = setup.suite;
  r.case_id = setup.case_id;
  r.family = setup.family;
  r.axis = setup.axis;
  r.kernel = kernel.name();
  r.kernel_traits = describe_traits(t);
  r.determinism = std::string(to_string(t.determinism));
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
  const FaultActivity activity0 = dormant_verdicts() ? fault_activity(kernel.name()) : FaultActivity{};

  if (std::string why = memory_mismatch(kernel, api); !why.empty()) {
    r.status = CaseStatus::NotSupported;
    r.reason = std::move(why);
    return finish();
  }
  // A fused epilogue (docs/epilogue.md) before anything else of the case: only for kernels whose EpilogueTraits take it,
  // graded on the whole of D.
  const EpilogueCase& epc = setup.epilogue;
  if (epc.active) {
    std::string why = epilogue_unsupported(t, epc, setup.alpha_beta);
    if (why.empty() && setup.sample) why = "epilogue cases are graded on the whole of D, not on a sample";
    if (!why.empty()) {
      r.status = CaseStatus::NotSupported;
      r.reason = why;
      return finish();
    }
  }
  // The layout first: a kernel that does not take column-major operands never sees the case (docs/suites.md,
  // "layout.transposes").
  const GemmLayout lay = setup.layout;
  if (!lay.row_major()) r.layout = to_string(lay);
  if (const Support ls = kernel.can_implement_layout(lay); !ls.ok) {
    r.status = CaseStatus::NotSupported;
    r.reason = ls.reason;
    return finish();
  }
  // D = alpha AB + beta C: only for kernels that declare it (KernelTraits::alpha_beta), graded whole.
  const AlphaBetaCase& abc = setup.alpha_beta;
  if (abc.active) {
    std::string why = alpha_beta_unsupported(t);
    if (why.empty() && setup.sample) why = "alpha/beta cases are graded on the whole of D, not on a sample";
    if (!why.empty()) {
      r.status = CaseStatus::NotSupported;
      r.reason = why;
      return finish();
    }
  }
  // Strided batches: only for kernels that declare them (KernelTraits::batched), each batch graded whole.
  const BatchCase& bat = setup.batch;
  std::vector<const Problem*> batches{&p};
  if (bat.active()) {
    std::string why = batch_unsupported(t, bat);
    if (why.empty() && setup.sample) why = "batch cases are graded on the whole of every batch, not on a sample";
    if (!why.empty()) {
      r.status = CaseStatus::NotSupported;
      r.reason = why;
      return finish();
    }
    if (!setup.batch_problems || !setup.batch_refs || static_cast<std::int64_t>(setup.batch_problems->size()) != bat.count ||
        setup.batch_refs->size() != setup.batch_problems->size())
      throw std::logic_error("run_case: a batch case without every batch's problem and reference (batch_problems)");
    batches.clear();
    for (const Problem& q : *setup.batch_problems) batches.push_back(&q);
  }
  const std::int64_t nb = static_cast<std::int64_t>(batches.size()), gap = bat.active() ? bat.gap_rows : 0;
  const Support sup = kernel.can_implement_shape(p.m, p.n, p.k);
  if (!sup.ok) {
    r.status = CaseStatus::NotSupported;
    r.reason = sup.reason;
    return finish();
  }
  // Inputs beyond the kernel's storage range would reach it as Inf/NaN: the case is not for this kernel.
  for (const Problem* q : batches)
  for (const auto& [vals, fmt_in, name] : {std::tuple{&q->a.data, t.a_input, "A"}, std::tuple{&q->b.data, t.b_input, "B"}}) {
    if (const auto mx = beyond_range(*vals, *fmt_in, t.input_rounding)) {
      r.status = CaseStatus::NotSupported;
      r.reason = fmt::format("the case's {} reaches {:.4g}, beyond {}'s largest finite value {:.4g}: its inputs cannot be "
                             "stored in this kernel's input format",
                             name, *mx, fmt_in->tag, fmt_in->max_finite());
      return finish();
    }
  }
  // A block-scaled kernel multiplies its quantizer's operands (docs/block_formats.md). Quantized values
  // can lie beyond the operand format a kernel dequantizes into (MXFP4 with rceil scales reaches 4 x
  // 2^126 = 2^128 from inputs just below fp32's largest): such a case is outside that kernel's range too.
  // (Kernels that scale exact block sums, operand format = input format, never hold a dequantized value.)
  if (setup.sample && t.block.active()) {
    r.status = CaseStatus::NotSupported;
    r.reason = "a sampled reference does not grade block-scaled kernels (their reference is the product of the quantized "
               "operands, computed whole)";
    return finish();
  }
  std::shared_ptr<const BlockReference> block_ref;
  if (t.block.active()) {
    block_ref = setup.block_ref ? setup.block_ref(t) : std::make_shared<const BlockReference>(block_reference(t, p));
    for (const auto& [m, fmt_op, name] : {std::tuple{&block_ref->a, t.a_operand, "A"}, std::tuple{&block_ref->b, t.b_operand, "B"}}) {
      if (fmt_op == (m == &block_ref->a ? t.a_input : t.b_input)) continue;
      if (const auto mx = beyond_range(m->data, *fmt_op, Rounding::NearestEven)) {
        r.status = CaseStatus::NotSupported;
        r.reason = fmt::format("the quantized {} reaches {:.4g}, beyond {}'s largest finite value {:.4g}: the kernel's "
                               "dequantized operands cannot hold it",
                               name, *mx, fmt_op->tag, fmt_op->max_finite());
        return finish();
      }
      // Below the operand format's subnormal spacing a dequantized value rounds (MXFP8 E4M3 with the smallest
      // scale reaches 2^-9 x 2^-127 = 2^-136; bf16 holds multiples of 2^-133): such a case is outside the kernel's
      // range as overflow is. Elsewhere dequantization is exact (NVFP4: the tensor scale applied at the end), so
      // the operand step is no error source of a block-scaled kernel (suites/verdict/envelope.cpp, error_sources).
      if (!(m == &block_ref->a ? block_ref->a_operand_exact : block_ref->b_operand_exact)) {
        r.status = CaseStatus::NotSupported;
        r.reason = fmt::format("the quantized {} holds values that {} cannot represent exactly (its subnormal spacing is "
                               "{:.4g}): the kernel's dequantized operands would round them",
                               name, fmt_op->tag, fmt_op->min_subnormal());
        return finish();
      }
    }
  }
  // NVFP4's final scaling C = RN(acc * RN(s_A s_B)) is one unit roundoff only while s_A, s_B and their product are
  // normal fp32 values; below (all of a tensor within ~2^-115 of zero) the product rounds by up to 100 %, which the
  // declared arithmetic does, and no rounding term of the envelope covers: outside the kernel's range, as overflow.
  if (block_ref && t.sum_order.final_scale == FinalScale::Tensor) {
    const double sa = block_ref->a_tensor_scale, sb = block_ref->b_tensor_scale, lo = std::ldexp(1.0, f32.emin());
    if (std::fabs(sa) < lo || std::fabs(sb) < lo || std::fabs(sa * sb) < lo) {
      r.status = CaseStatus::NotSupported;
      r.reason = fmt::format("the tensor scales {:.4g} x {:.4g} = {:.4g} reach below fp32's normal range ({:.4g}): the final scaling "
                             "RN(acc * RN(s_A s_B)) would round them by more than a unit roundoff",
                             sa, sb, sa * sb, lo);
      return finish();
    }
  }
  std::string waived;  // a line beyond the span of a scheme that claims its own bound there: that bound judges (grade)
  if (!opt.grade_outside_domain) {
    for (const Problem* q : batches) {
      std::string span;
      const std::string why = outside_domain(t, *q, t.domain.span_scheme_graded ? &span : nullptr);
      const std::string batch = bat.active() ? fmt::format(" (batch {})", q - batches.front()) : "";
      if (!why.empty()) {
        r.status = CaseStatus::NotSupported;
        r.reason = "outside the kernel's input domain: " + why + batch;
        return finish();
      }
      if (!span.empty() && waived.empty()) waived = span + batch;
    }
  }
  // An order from outside the declaration: revealed at this shape (once per run) before the case's own runs.
  std::shared_ptr<const RevealedOrder> outside;
  std::optional<OrderOverride> order_override;
  if (opt.orders && opt.orders->applies(kernel.name())) {
    outside = opt.orders->order_for(kernel, api, p.m, p.n, p.k);
    order_override = OrderSource::as_override(outside, t);
    r.order = outside->record;
    if (t.block.active() && r.order->used) {
      r.order->used = false;
      r.order->fallback = "a block-scaled kernel: the replay of a revealed tree does not model its quantizer";
      order_override->fallback = r.order->fallback;
    }
    if (t.determinism == Determinism::RunToRun && r.order->used) {  // never the bitwise tier of one fixed order
      r.order->used = false;
      r.order->fallback = "the kernel declares run-to-run nondeterminism: no one revealed order is its order";
      order_override->fallback = r.order->fallback;
    }
  }
  const bool device = api.is_device();
  const int warmups = opt.warmups >= 0 ? opt.warmups : (device ? 3 : 0);
  const int timed = opt.timed >= 0 ? opt.timed : (device ? 10 : 1);

  // C as stored: row-major m x n with ldc >= n, or column-major, n stored columns of m with ldc >= m. c_rows x c_cols
  // is the stored image (its rows are C's columns when column-major); guards and padding the same either way.
  const bool c_col = lay.c == Layout::ColMajor;
  const std::int64_t c_rows = c_col ? p.n : p.m, c_cols = c_col ? p.m : p.n;
  const int cb = container_bytes(*t.out);
  // The default padding keeps C's rows 16-byte aligned wherever c_cols does, as A's and B's (padded_ld): 16 elements
  // for a 1-byte output (cuBLASLt's FP8 D needs 16-byte aligned columns), 8 otherwise; a caller's own ldc_pad is kept.
  const std::int64_t ldc = c_cols + (opt.ldc_pad == RunOptions{}.ldc_pad ? padded_ld(c_cols, cb) - c_cols : opt.ldc_pad);
  // Batches: matrix b of C at stored row b * (c_rows + gap) (suites/ops/gemm/batch.hpp); codes holds them one after
  // another, m x n row-major each.
  const std::int64_t c_all_rows = (c_rows + gap) * nb - gap, mn = p.m * p.n;
  std::vector<std::uint64_t> codes;
  std::vector<double> times;
  auto read_codes = [&](const GuardedBuffer& c) { return batch_codes(c, *t.out, nb, p.m, p.n, gap, c_col); };
  // The gap rows between C's matrices hold the pre-fill: a write there is out of bounds (counted with the guards).
  const std::uint64_t c_fill = to_container(*t.out, prefill_code(*t.out));
  auto check_gaps = [&](const GuardedBuffer& c) {
    r.metrics.guard_violations += gap_writes(c, nb, c_rows, c_cols, ldc, gap, c_fill, &r.metrics.first_guard_violation);
  };
  // Inputs: padded leading dimensions with guard bytes around A and B and in their padding, checked
  // unchanged after every run; every run's C compared bit for bit with the first (docs/suites.md).
  InputReport in_a, in_b, in_c;
  // alpha/beta: the scalars as the kernel gets them, C's values and their codes as stored (C's layout, c_rows x c_cols).
  const double alpha = abc.active ? alpha_beta_scalar(abc.alpha, t) : 1.0, beta = abc.active ? alpha_beta_scalar(abc.beta, t) : 0.0;
  const bool in_place = abc.active && abc.in_place;
  // C's values batch after batch, its stored image with the pre-fill (in place) or the poison (apart) between batches.
  const BatchC cin = abc.active ? batch_c(abc, beta, *t.out, p.m, p.n, nb, gap, c_col) : BatchC{};
  const std::vector<double>& c_vals = cin.values;
  std::int64_t runs_differ = 0, first_differ_run = -1, first_differ_index = -1;
  // A kernel declaring run-to-run nondeterminism: the distinct outputs of its later runs, each graded on its own
  // (suites/verdict/envelope.hpp, envelope_later_runs): at most 16 of them (a device case runs 14 times), and at most 2^26
  // codes in all (512 MiB; fill_device's 4096 x 4096 keeps 4), at least 2 whatever the size.
  const bool run_to_run = t.determinism == Determinism::RunToRun;
  const std::size_t kept_max = std::clamp<std::size_t>((std::size_t{1} << 26) / static_cast<std::size_t>(std::max<std::int64_t>(1, nb * mn)), 2, 16);
  std::vector<std::vector<std::uint64_t>> later;
  // The fused epilogue: the bias and scale factors as the kernel gets them; what the runs find about its buffers.
  const EpilogueInputs epi = epilogue_inputs(t, epc, p.m, p.n);
  EpilogueFindings epi_found;
  bool data_seen = false;  // run() has been called with the data: a later NOT_SUPPORTED is a declaration failure
  // A column-major operand is stored as its transpose: k rows of m for A, n rows of k for B.
  const bool a_col = lay.a == Layout::ColMajor, b_col = lay.b == Layout::ColMajor;
  const std::int64_t a_rows = a_col ? p.k : p.m, a_cols = a_col ? p.m : p.k, b_rows = b_col ? p.n : p.k, b_cols = b_col ? p.k : p.n;
  const std::int64_t lda = setup.ld_pad > 0 ? a_cols + setup.ld_pad : padded_ld(a_cols, container_bytes(*t.a_input));
  const std::int64_t ldb = setup.ld_pad > 0 ? b_cols + setup.ld_pad : padded_ld(b_cols, container_bytes(*t.b_input));
  // Batches: A's (B's) matrices one after another with gap rows of its poison between them, one matrix when broadcast.
  const std::int64_t na = bat.broadcast_a ? 1 : nb, nbb = bat.broadcast_b ? 1 : nb;
  const std::int64_t stride_a = na > 1 ? batch_stride(a_rows, lda, gap) : 0, stride_b = nbb > 1 ? batch_stride(b_rows, ldb, gap) : 0;
  const bool ran = run_kernel_guarded(r, [&] {
    const int ab = container_bytes(*t.a_input), bb = container_bytes(*t.b_input);
    // Guards and padding hold the input format's NaN: a read past the end of a row poisons the result even
    // where the kernel multiplies it by zero (docs/suites.md, "layout.poisoned_padding"); so do the gaps between batches.
    GuardedInput dA(api, stacked_operand(batches, na, false, *t.a_input, t.input_rounding, a_col, gap), (a_rows + gap) * na - gap, a_cols, lda,
                    ab, opt.guard_bytes, setup.misaligned, poison_code(*t.a_input));
    GuardedInput dB(api, stacked_operand(batches, nbb, true, *t.b_input, t.input_rounding, b_col, gap), (b_rows + gap) * nbb - gap, b_cols,
                    ldb, bb, opt.guard_bytes, setup.misaligned, poison_code(*t.b_input));
    GuardedBuffer dC(api, static_cast<std::size_t>(c_all_rows * ldc * cb), opt.guard_bytes);
    // In place with beta != 0: D's buffer holds C before every run; else the NaN pre-fill (beta = 0: C is that NaN).
    auto fill_c = [&] {
      if (in_place && beta != 0) dC.prefill(c_all_rows, c_cols, ldc, cb, cin.fill);
      else dC.prefill(c_all_rows, c_cols, ldc, cb, c_fill);
    };
    fill_c();
    // Out of place: C in a buffer of its own with guards and poisoned padding, checked unchanged after every run.
    std::optional<GuardedInput> dCin;
    if (abc.active && !in_place) dCin.emplace(api, cin.poison, c_all_rows, c_cols, ldc, cb, opt.guard_bytes, false, poison_code(*t.out));
    // The epilogue's bias (guarded, poisoned padding) and amax (guarded, NaN before every run): suites/ops/gemm/epilogue_run.hpp.
    std::optional<EpilogueBuffers> dE;
    if (epi.active) dE.emplace(api, epi, t, opt.guard_bytes);
    GemmOperands ops;
    ops.m = p.m;
    ops.n = p.n;
    ops.k = p.k;
    ops.a = dA.elements();
    ops.lda = dA.ld();
    ops.b = dB.elements();
    ops.ldb = dB.ld();
    ops.c = dC.elements();
    ops.ldc = ldc;
    ops.a_layout = lay.a;
    ops.b_layout = lay.b;
    ops.c_layout = lay.c;
    ops.stream = api.stream();
    if (abc.active) {
      ops.alpha = alpha;
      ops.beta = beta;
      ops.c_in = in_place ? static_cast<const void*>(dC.elements()) : dCin->elements();
    }
    if (bat.active()) {
      ops.batch = nb;
      ops.stride_a = stride_a;
      ops.stride_b = stride_b;
      ops.stride_c = batch_stride(c_rows, ldc, gap);
    }
    if (dE) dE->attach(ops);
    auto check_inputs = [&] {
      if (dCin) {
        const InputReport x = dCin->check();
        if (!in_c.modified && x.modified) in_c.first_modified = x.first_modified;
        if (!in_c.guard_changed && x.guard_changed) in_c.first_guard = x.first_guard;
        in_c.modified = std::max(in_c.modified, x.modified);
        in_c.guard_changed = std::max(in_c.guard_changed, x.guard_changed);
      }
      for (auto [in, rep] : {std::pair{&dA, &in_a}, std::pair{&dB, &in_b}}) {
        const InputReport x = in->check();
        if (!rep->modified && x.modified) rep->first_modified = x.first_modified;
        if (!rep->guard_changed && x.guard_changed) rep->first_guard = x.first_guard;
        rep->modified = std::max(rep->modified, x.modified);
        rep->guard_changed = std::max(rep->guard_changed, x.guard_changed);
      }
    };

    // The call's layout as the kernel will get it: a kernel with alignment needs declines it here, before any data.
    if (const Support s = kernel.can_implement_operands(ops); !s.ok) throw NotSupportedError(s.reason);

    // The checked run.
    data_seen = true;
    kernel.run(ops);
    api.synchronize(opt.timeout_ms);
    const GuardReport g = dC.download_and_check();
    r.metrics.guard_violations = g.changed;
    r.metrics.first_guard_violation = describe_guards(g, c_all_rows, c_cols, ldc, cb, c_col);
    check_gaps(dC);
    const std::int64_t checked_violations = r.metrics.guard_violations;  // its guards' and gap rows' changed bytes
    codes = read_codes(dC);
    const std::vector<std::uint8_t> checked_image(dC.host_elements(), dC.host_elements() + dC.element_bytes());
    dC.keep();  // a copy where C lives: a later run that leaves these very bytes is found so without a download
    check_inputs();
    if (dE) dE->after_run(0, epi_found);
    const std::uint64_t pre = prefill_code(*t.out);
    std::int64_t unwritten = 0, first_unwritten = -1;
    for (std::size_t x = 0; x < codes.size() && !(in_place && beta != 0); ++x)  // in place: C's values, not the pre-fill
      if (codes[x] == pre && t.out->has_nan()) {
        ++unwritten;
        if (first_unwritten < 0) first_unwritten = static_cast<std::int64_t>(x);
      }
    r.metrics.unwritten = unwritten;
    r.metrics.first_unwritten = first_unwritten;

    // Every later run (warm-ups and timed runs; copies and comparisons outside the timer) is compared
    // bit for bit with the checked run, and the inputs and all guards are checked again.
    auto compare = [&](int run) {
      if (dC.unchanged_since_kept()) {  // the checked run's bytes, guards, padding and gap rows included: its findings again
        r.metrics.guard_violations += checked_violations;
        check_inputs();
        if (dE) dE->after_run(run, epi_found);
        return;
      }
      const GuardReport again = dC.download_and_check();
      r.metrics.guard_violations += again.changed;
      if (r.metrics.first_guard_violation.empty()) r.metrics.first_guard_violation = describe_guards(again, c_all_rows, c_cols, ldc, cb, c_col);
      check_gaps(dC);
      // The same bytes as the checked run's (padding included: the guards above judge it): the same codes, nothing to compare.
      const bool same = std::memcmp(dC.host_elements(), checked_image.data(), checked_image.size()) == 0;
      const auto codes2 = same ? std::vector<std::uint64_t>{} : read_codes(dC);
      std::int64_t diff = 0, first = -1;
      for (std::size_t x = 0; x < codes2.size(); ++x)
        if (codes[x] != codes2[x]) {
          if (first < 0) first = static_cast<std::int64_t>(x);
          ++diff;
        }
      if (diff) {
        ++runs_differ;
        if (first_differ_run < 0) first_differ_run = run, first_differ_index = first;
        r.metrics.deterministic = false;
        r.metrics.nondeterministic_elements = std::max(r.metrics.nondeterministic_elements, diff);
        if (run_to_run && later.size() < kept_max && std::find(later.begin(), later.end(), codes2) == later.end()) later.push_back(codes2);
      }
      check_inputs();
      if (dE) dE->after_run(run, epi_found);
    };
    const int timed_runs = std::max(timed, setup.min_runs);
    int run = 1;
    for (int w = 0; w < warmups; ++w) {
      if (in_place) fill_c();
      if (dE) dE->before_run();
      kernel.run(ops);
      api.synchronize(opt.timeout_ms);
      compare(run++);
    }
    for (int q = 0; q < timed_runs; ++q) {
      if (in_place) fill_c();  // outside the timer
      if (dE) dE->before_run();
      api.timer_start();
      kernel.run(ops);
      const double ms = api.timer_stop_ms();
      api.synchronize(opt.timeout_ms);
      times.push_back(ms);
      compare(run++);
    }
  });
  if (!ran && data_seen && r.status == CaseStatus::NotSupported && kernel.backend() == Backend::Plugin) {
    // Only can_implement may decline, before the data exist (docs/plugin.md).
    r.checks.push_back({CheckKind::NotSupportedAfterData, false,
                        "run() returned NOT_SUPPORTED after seeing the data (only can_implement may decline): " + r.reason});
    r.status = CaseStatus::Fail;
    r.reason = r.checks.back().detail;
  }
  if (!ran) return finish();
  if (!times.empty()) {
    std::vector<double> s = times;
    std::sort(s.begin(), s.end());
    r.time_ms_median = s.size() % 2 ? s[s.size() / 2] : 0.5 * (s[s.size() / 2 - 1] + s[s.size() / 2]);
    r.time_ms_mean = std::accumulate(s.begin(), s.end(), 0.0) / static_cast<double>(s.size());
    r.timed_runs = static_cast<int>(s.size());
    if (r.time_ms_median > 0) r.tflops = 2.0 * static_cast<double>(nb * p.m) * static_cast<double>(p.n) * static_cast<double>(p.k) / (r.time_ms_median * 1e-3) / 1e12;
  }
  // A campaign's mutant whose fault changed nothing in any of these runs (fault_injectors.hpp, ScopedDormantVerdicts).
  if (const FaultActivity a = dormant_verdicts() ? fault_activity(kernel.name()) : FaultActivity{};
      a.runs > activity0.runs && a.active == activity0.active && a.inexact == activity0.inexact && r.status == CaseStatus::Pass &&
      r.metrics.deterministic &&
      t.determinism == Determinism::Deterministic && r.metrics.unwritten == 0 && r.metrics.guard_violations == 0 &&
      !in_a.modified && !in_b.modified && !in_c.modified && !in_a.guard_changed && !in_b.guard_changed && !in_c.guard_changed) {
    r.flags.push_back(fmt::format("not graded again: the fault changed nothing in any of the {} run(s) (the unmutated kernel's outputs)",
                                  a.runs - activity0.runs));
    return finish();
  }
  pin_fp_env();  // grade in round to nearest without FTZ/DAZ, whatever the kernel left (docs/suites.md)
  GradeInput gi;
  gi.problem = &p;
  gi.ref = setup.ref;
  gi.traits = &t;
  gi.variant = setup.variant;
  gi.codes = &codes;
  gi.unwritten = r.metrics.unwritten;
  gi.first_unwritten = r.metrics.first_unwritten;
  gi.worst_count = opt.worst_count;
  gi.strongest = opt.strongest;
  gi.error_map_always = opt.error_maps;
  gi.tile_m = t.tile_m;
  gi.tile_n = t.tile_n;
  gi.envelope_waived = waived;
  // A block-scaled kernel is graded against the exact product of its operands as its declared quantizer
  // makes them (docs/block_formats.md): the quantization is specified arithmetic, not an error to allow.
  if (block_ref) {
    gi.ref = &block_ref->ref;
    gi.a = &block_ref->a;
    gi.b = &block_ref->b;
    gi.a_exact = block_ref->a_operand_exact;
    gi.b_exact = block_ref->b_operand_exact;
    gi.a_tensor_scale = block_ref->a_tensor_scale;
    gi.b_tensor_scale = block_ref->b_tensor_scale;
  }
  gi.order = order_override ? &*order_override : nullptr;
  if (!block_ref && !setup.sample && !bat.active()) {  // the whole problem's own A and B only
    gi.inputs_ref = setup.inputs_ref;
    gi.emulated = setup.emulated;
  }
  if (run_to_run) {
    gi.later = &later;
    gi.runs = 1 + r.timed_runs + warmups;
    gi.differing_runs = static_cast<int>(runs_differ);
  }
  // A sampled case: graded on the sample's rows and columns (the problem, the codes and every later run's codes
  // cut to them); the unwritten count stays the whole of C's and is judged below in C's own coordinates.
  std::optional<Problem> sub;
  std::vector<std::uint64_t> sub_codes;
  std::vector<std::vector<std::uint64_t>> sub_later;
  const std::int64_t full_unwritten = r.metrics.unwritten, full_first_unwritten = r.metrics.first_unwritten;
  if (setup.sample) {
    const GemmSample& gs = *setup.sample;
    auto cut = [&](const std::vector<std::uint64_t>& v) {
      std::vector<std::uint64_t> o;
      o.reserve(static_cast<std::size_t>(gs.elements()));
      for (std::int64_t i : gs.rows)
        for (std::int64_t j : gs.cols) o.push_back(v[static_cast<std::size_t>(i * p.n + j)]);
      return o;
    };
    sub = sampled_problem(p, gs);
    sub_codes = cut(codes);
    for (const auto& l : later) sub_later.push_back(cut(l));
    gi.problem = &*sub;
    gi.codes = &sub_codes;
    if (run_to_run) gi.later = &sub_later;
    gi.unwritten = 0;
    gi.first_unwritten = -1;
  }
  // Each batch graded as its own m x n matrix against its own reference (one batch: the case itself).
  std::vector<CaseResult> per;
  std::vector<AmaxInterval> amax_per;  // an epilogue case's amax interval of every batch (one check on their merge)
  // The guards around D (and between its batches) as the plain grade checks them (alpha/beta and epilogue grades).
  auto check_output_guards = [](CaseResult& rb) {
    if (rb.status == CaseStatus::NotSupported) return;
    const bool intact = rb.metrics.guard_violations == 0;
    rb.checks.push_back({CheckKind::GuardOutput, intact,
                         intact ? "guard bytes around D and in its ldc padding intact" : "out-of-bounds write: " + rb.metrics.first_guard_violation,
                         -1, static_cast<double>(rb.metrics.guard_violations), 0});
    if (!intact && rb.status == CaseStatus::Pass) rb.status = CaseStatus::Fail;
    if (!intact) rb.reason += (rb.reason.empty() ? "" : "; ") + rb.checks.back().detail;
  };
  for (std::int64_t b = 0; b < nb; ++b) {
    const auto slice = [&](const std::vector<std::uint64_t>& v) {
      return std::vector<std::uint64_t>(v.begin() + b * mn, v.begin() + (b + 1) * mn);
    };
    CaseResult rb = r;
    std::vector<std::uint64_t> codes_b;
    std::vector<std::vector<std::uint64_t>> later_b;
    std::vector<double> c_b;
    std::int64_t unwritten = r.metrics.unwritten, first_unwritten = r.metrics.first_unwritten;
    if (bat.active()) {
      codes_b = slice(codes);
      for (const auto& l : later) later_b.push_back(slice(l));
      if (abc.active) c_b.assign(c_vals.begin() + b * mn, c_vals.begin() + (b + 1) * mn);
      unwritten = 0, first_unwritten = -1;
      for (std::int64_t x = 0; x < mn && !(in_place && beta != 0); ++x)
        if (codes_b[static_cast<std::size_t>(x)] == prefill_code(*t.out) && t.out->has_nan() && !unwritten++) first_unwritten = x;
      rb.metrics.unwritten = unwritten;
      rb.metrics.first_unwritten = first_unwritten;
      gi.problem = batches[static_cast<std::size_t>(b)];
      gi.ref = &(*setup.batch_refs)[static_cast<std::size_t>(b)];
      gi.codes = &codes_b;
      gi.unwritten = unwritten;
      gi.first_unwritten = first_unwritten;
      if (run_to_run) gi.later = &later_b;
    }
    if (epi.active) {
      amax_per.push_back(grade_epilogue_matrix(epi, *batches[static_cast<std::size_t>(b)], t, alpha, beta, bat.active() ? &c_b : &c_vals,
                                               bat.active() ? codes_b : codes, unwritten, first_unwritten, rb));
      check_output_guards(rb);
    } else if (abc.active) {
      AlphaBetaGrade ag;
      ag.problem = batches[static_cast<std::size_t>(b)];
      ag.traits = &t;
      ag.alpha = alpha;
      ag.beta = beta;
      ag.c = bat.active() ? &c_b : &c_vals;
      ag.codes = bat.active() ? &codes_b : &codes;
      ag.unwritten = unwritten;
      ag.first_unwritten = first_unwritten;
      grade_alpha_beta(ag, rb);
      check_output_guards(rb);
    } else {
      grade(gi, rb);
    }
    per.push_back(std::move(rb));
  }
  if (bat.active()) {
    merge_batch_grades(per, r);
    r.flags.push_back(fmt::format("strided batches: {} of {} x {} x {}, stride_a = {}{}, stride_b = {}{}, stride_c = {} ({} gap row(s) "
                                  "between matrices)", nb, p.m, p.n, p.k, stride_a, stride_a ? "" : " (broadcast)", stride_b,
                                  stride_b ? "" : " (broadcast)", batch_stride(c_rows, ldc, gap), gap));
  } else {
    r = std::move(per.front());
  }
  // The epilogue's amax (one check on the batches' merged interval), its buffers' guards, the bias unchanged.
  if (epi.active) finish_epilogue(epi, epi_found, merge_amax(amax_per, mn), t, run_to_run, r);
  if (setup.sample) {
    r.flags.push_back(setup.sample->describe(p.m, p.n));
    r.metrics.unwritten = full_unwritten;
    r.metrics.first_unwritten = full_first_unwritten;
    for (CheckResult& ch : r.checks)
      if (ch.kind == CheckKind::Unwritten && full_unwritten) {
        ch.passed = false;
        ch.detail = fmt::format("{} output(s) never written (all of C checked, not only the sample), first at ({}, {})", full_unwritten,
                                full_first_unwritten / p.n, full_first_unwritten % p.n);
        ch.first_index = full_first_unwritten;
        ch.measured = static_cast<double>(full_unwritten);
        if (r.status == CaseStatus::Pass) r.status = CaseStatus::Fail;
        r.reason += (r.reason.empty() ? "" : "; ") + ch.detail;
      }
  }
  if (r.order && !r.order->used) r.order->fallback += fmt::format("; the case has the declared order's tier: {}", to_string(r.tier));
  // The runner's own checks on the inputs and on every run (each its CheckKind, results/results.hpp).
  auto add = [&](CheckKind kind, bool passed, std::string detail, std::int64_t index) {
    r.checks.push_back({kind, passed, std::move(detail), index});
    if (passed) return;
    if (r.status == CaseStatus::Pass) r.status = CaseStatus::Fail;
    r.reason += (r.reason.empty() ? "" : "; ") + r.checks.back().detail;
  };
  add(CheckKind::GuardInputs, !in_a.guard_changed && !in_b.guard_changed,
      in_a.guard_changed   ? fmt::format("{} guard/padding byte(s) of A changed (first: {}; lda = {}, {} = {})", in_a.guard_changed, in_a.first_guard, lda, a_col ? "m" : "k", a_cols)
      : in_b.guard_changed ? fmt::format("{} guard/padding byte(s) of B changed (first: {}; ldb = {}, {} = {})", in_b.guard_changed, in_b.first_guard, ldb, b_col ? "k" : "n", b_cols)
                           : fmt::format("guard bytes around A and B and in their padding (lda = {}, ldb = {}) unchanged", lda, ldb),
      -1);
  add(CheckKind::InputsModified, !in_a.modified && !in_b.modified,
      in_a.modified   ? fmt::format("A modified by the call: {} element(s), first A[{}][{}]", in_a.modified,
                                    a_col ? in_a.first_modified % a_cols : in_a.first_modified / a_cols,
                                    a_col ? in_a.first_modified / a_cols : in_a.first_modified % a_cols)
      : in_b.modified ? fmt::format("B modified by the call: {} element(s), first B[{}][{}]", in_b.modified,
                                    b_col ? in_b.first_modified % b_cols : in_b.first_modified / b_cols,
                                    b_col ? in_b.first_modified / b_cols : in_b.first_modified % b_cols)
                      : "A and B unchanged after every run",
      in_a.modified ? in_a.first_modified : in_b.modified ? in_b.first_modified : -1);
  if (dCin_used(abc, in_place))
    add(CheckKind::InputsModified, !in_c.modified && !in_c.guard_changed,
        in_c.modified        ? fmt::format("C (the input) modified by the call: {} element(s), first at stored index {}", in_c.modified, in_c.first_modified)
        : in_c.guard_changed ? fmt::format("{} guard/padding byte(s) of C (the input) changed (first: {})", in_c.guard_changed, in_c.first_guard)
                             : "C (the input), its guards and padding unchanged after every run",
        in_c.modified ? in_c.first_modified : -1);
  if (outside && outside->refuted && opt.orders->options().strict)
    add(CheckKind::Bitwise, false,
        "--reveal-strict: the kernel's revealed order does not reproduce it on random inputs (" + r.order->fallback + ")", -1);
  r.checks.push_back({CheckKind::Nondeterministic, runs_differ == 0 || run_to_run,
                      runs_differ ? fmt::format("{}{} of {} later run(s) differ from the first, the first at run {} (element ({}, {}))",
                                                run_to_run ? "declared run-to-run nondeterminism (the spread check judges it): " : "", runs_differ,
                                                r.timed_runs + warmups, first_differ_run, first_differ_index % mn / p.n, first_differ_index % p.n)
                                  : fmt::format("{} later run(s) bitwise equal to the first", r.timed_runs + warmups),
                      first_differ_index});
  if (block_ref) r.flags.push_back(block_ref->flag(t));
  if (opt.output) {
    opt.output->resize(codes.size());
    for (std::size_t x = 0; x < codes.size(); ++x) (*opt.output)[x] = to_double(*t.out, codes[x]);
  }
  return finish();
}

}  // namespace fpcert
