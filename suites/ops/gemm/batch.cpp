// suites/ops/gemm/batch.cpp — strided batched GEMM cases: batch problems, stacked images, merged grades.
#include "suites/ops/gemm/batch.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstring>

#include "base/codes.hpp"
#include "base/error.hpp"
#include "generators/generate.hpp"
#include "suites/ops/gemm/alpha_beta.hpp"
#include "suites/run/case_run.hpp"
#include "suites/run/guarded_input.hpp"

namespace fpcert {

std::string batch_spec(const std::string& spec, std::int64_t b) {
  if (b == 0) return spec;
  // The field "seed=" at the start of the fields or after a comma (not a suffix of another key).
  std::size_t at = std::string::npos;
  for (std::size_t pos = spec.find("seed="); pos != std::string::npos; pos = spec.find("seed=", pos + 1))
    if (pos > 0 && (spec[pos - 1] == ',' || spec[pos - 1] == ':')) {
      at = pos + 5;
      break;
    }
  if (at == std::string::npos) throw InputError("spec '" + spec + "': a batch case needs a seeded family (its batches must differ)");
  std::size_t end = at;
  while (end < spec.size() && spec[end] >= '0' && spec[end] <= '9') ++end;
  std::uint64_t seed = 0;
  if (std::from_chars(spec.data() + at, spec.data() + end, seed).ec != std::errc{})
    throw InputError("spec '" + spec + "': its seed is not an unsigned integer");
  return spec.substr(0, at) + std::to_string(seed + static_cast<std::uint64_t>(b)) + spec.substr(end);
}

BatchProblems batch_problems(const Problem& first, const BatchCase& bc) {
  if (bc.count < 1) throw InputError(fmt::format("a batch case needs at least one batch (count = {})", bc.count));
  if (bc.gap_rows < 0) throw InputError(fmt::format("a batch case's gap cannot be negative (gap_rows = {})", bc.gap_rows));
  BatchProblems r;
  r.problems.reserve(static_cast<std::size_t>(bc.count));
  r.problems.push_back(first);
  for (std::int64_t b = 1; b < bc.count; ++b) {
    Problem q = generate(batch_spec(first.spec, b));
    if (bc.broadcast_a) q.a = first.a;
    if (bc.broadcast_b) q.b = first.b;
    r.problems.push_back(std::move(q));
  }
  for (const Problem& q : r.problems) r.refs.push_back(gemm_reference(q.a.view(), q.b.view()));
  return r;
}

std::string batch_unsupported(const KernelTraits& t, const BatchCase& bc) {
  if (!bc.active()) return {};
  if (!t.batched) return "the kernel does not declare strided batches (KernelTraits::batched; docs/suites.md, \"batch.strided\")";
  if (t.block.active()) return "batch cases do not grade block-scaled kernels (their quantizer's reference is computed per case)";
  return {};
}

std::vector<std::uint8_t> stack_batches(const std::vector<std::vector<std::uint8_t>>& mats, std::int64_t rows, std::int64_t cols,
                                        int eb, std::int64_t gap_rows, std::uint64_t fill) {
  const auto count = static_cast<std::int64_t>(mats.size());
  const std::size_t one = static_cast<std::size_t>(rows * cols * eb), gap = static_cast<std::size_t>(gap_rows * cols);
  std::vector<std::uint8_t> out(count ? static_cast<std::size_t>(((rows + gap_rows) * count - gap_rows) * cols * eb) : 0);
  std::size_t at = 0;  // bytes
  for (std::int64_t b = 0; b < count; ++b) {
    const auto& m = mats[static_cast<std::size_t>(b)];
    if (m.size() != one) throw std::logic_error("stack_batches: a matrix does not match rows x cols");
    std::memcpy(out.data() + at, m.data(), one);
    at += one;
    if (b + 1 == count) break;
    for (std::size_t x = 0; x < gap; ++x) store_code(out.data() + at, static_cast<std::int64_t>(x), eb, fill);
    at += gap * static_cast<std::size_t>(eb);
  }
  return out;
}

std::vector<std::uint8_t> encode_inputs(const std::vector<double>& v, const Format& f, Rounding r) {
  const int b = container_bytes(f);
  std::vector<std::uint8_t> out(v.size() * static_cast<std::size_t>(b));
  const Rounder rr{r, default_saturation(f), NanPayload::Preserve};
  for (std::size_t i = 0; i < v.size(); ++i)
    store_code(out.data(), static_cast<std::int64_t>(i), b, to_container(f, round_double(f, v[i], rr).code));
  return out;
}

std::vector<std::uint8_t> transpose_codes(const std::vector<std::uint8_t>& v, std::int64_t rows, std::int64_t cols, int eb) {
  std::vector<std::uint8_t> t(v.size());
  const auto b = static_cast<std::size_t>(eb);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j)
      std::memcpy(t.data() + static_cast<std::size_t>(j * rows + i) * b, v.data() + static_cast<std::size_t>(i * cols + j) * b, b);
  return t;
}

std::vector<std::uint8_t> stacked_operand(const std::vector<const Problem*>& batches, std::int64_t count, bool b_operand, const Format& f,
                                          Rounding r, bool col, std::int64_t gap) {
  std::vector<std::vector<std::uint8_t>> mats;
  const int eb = container_bytes(f);
  std::int64_t rows = 0, cols = 0;
  for (std::int64_t t = 0; t < count; ++t) {
    const Matrix& m = b_operand ? batches[static_cast<std::size_t>(t)]->b : batches[static_cast<std::size_t>(t)]->a;
    const auto bytes = encode_inputs(m.data, f, r);
    mats.push_back(col ? transpose_codes(bytes, m.rows, m.cols, eb) : bytes);
    rows = col ? m.cols : m.rows, cols = col ? m.rows : m.cols;
  }
  return stack_batches(mats, rows, cols, eb, gap, poison_code(f));
}

BatchC batch_c(const AlphaBetaCase& abc, double beta, const Format& out, std::int64_t m, std::int64_t n, std::int64_t count, std::int64_t gap,
               bool c_col) {
  BatchC r;
  std::vector<std::vector<std::uint8_t>> mats;
  const int cb = container_bytes(out);
  const Rounder rn = Rounder::nearest(out);
  for (std::int64_t t = 0; t < count; ++t) {
    AlphaBetaCase ab = abc;
    ab.beta = beta;
    ab.c_seed += static_cast<std::uint64_t>(t);  // each batch its own C
    const std::vector<double> v = alpha_beta_c(ab, out, m, n);
    r.values.insert(r.values.end(), v.begin(), v.end());
    std::vector<std::uint8_t> one(static_cast<std::size_t>(m * n * cb));
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        const double x = v[static_cast<std::size_t>(i * n + j)];
        const std::uint64_t code = std::isnan(x) ? prefill_code(out) : round_double(out, x, rn).code;
        store_code(one.data(), c_col ? j * m + i : i * n + j, cb, to_container(out, code));
      }
    mats.push_back(std::move(one));
  }
  const std::int64_t rows = c_col ? n : m, cols = c_col ? m : n;
  const std::vector<std::uint8_t> with_fill = stack_batches(mats, rows, cols, cb, gap, to_container(out, prefill_code(out)));
  r.fill.resize(with_fill.size() / static_cast<std::size_t>(cb));
  for (std::size_t x = 0; x < r.fill.size(); ++x) r.fill[x] = load_code(with_fill.data(), static_cast<std::int64_t>(x), cb);
  r.poison = stack_batches(mats, rows, cols, cb, gap, poison_code(out));
  return r;
}

std::vector<std::uint64_t> batch_codes(const GuardedBuffer& c, const Format& out, std::int64_t count, std::int64_t m, std::int64_t n,
                                       std::int64_t gap, bool c_col) {
  std::vector<std::uint64_t> v(static_cast<std::size_t>(count * m * n));
  const std::int64_t c_rows = c_col ? n : m;
  for (std::int64_t t = 0; t < count; ++t)
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        const std::int64_t off = t * (c_rows + gap);
        v[static_cast<std::size_t>((t * m + i) * n + j)] = from_container(out, c_col ? c.code(off + j, i) : c.code(off + i, j));
      }
  return v;
}

std::int64_t gap_writes(const GuardedBuffer& c, std::int64_t count, std::int64_t c_rows, std::int64_t c_cols, std::int64_t ldc,
                        std::int64_t gap, std::uint64_t fill, std::string* first) {
  std::int64_t written = 0;
  for (std::int64_t t = 0; t + 1 < count; ++t)
    for (std::int64_t g = 0; g < gap; ++g)
      for (std::int64_t j = 0; j < c_cols; ++j) {
        if (c.code(t * (c_rows + gap) + c_rows + g, j) == fill) continue;
        if (!written++ && first->empty())
          *first = fmt::format("written into the gap between batches {} and {} (gap row {} of {}, stored column {}; stride_c = {})", t, t + 1, g,
                               gap, j, batch_stride(c_rows, ldc, gap));
      }
  return written;
}

void merge_batch_grades(const std::vector<CaseResult>& per, CaseResult& out) {
  if (per.empty()) throw std::logic_error("merge_batch_grades: no batch");
  // A grading that declines the case (e.g. alpha/beta in a format it cannot reference exactly) declines every batch.
  for (const CaseResult& r : per)
    if (r.status == CaseStatus::NotSupported) {
      out = r;
      return;
    }
  std::size_t pick = per.size();
  for (std::size_t b = 0; b < per.size() && pick == per.size(); ++b)
    if (per[b].status != CaseStatus::Pass) pick = b;
  if (pick == per.size()) {
    pick = 0;
    for (std::size_t b = 1; b < per.size(); ++b)
      if (per[b].metrics.err_frac_max > per[pick].metrics.err_frac_max) pick = b;
  }
  std::vector<BatchOutcome> outcomes;
  for (const CaseResult& r : per)
    outcomes.push_back({r.status == CaseStatus::Pass, r.metrics.max_abs, r.metrics.err_frac_max, r.status == CaseStatus::Pass ? "" : r.reason});
  out = per[pick];
  out.batches = std::move(outcomes);
  for (CheckResult& ch : out.checks) ch.detail = fmt::format("batch {}: {}", pick, ch.detail);
  if (!out.reason.empty()) out.reason = fmt::format("batch {}: {}", pick, out.reason);
  std::int64_t failed = 0;
  for (const BatchOutcome& o : out.batches) failed += !o.passed;
  out.flags.push_back(fmt::format("batches: {} graded, each as its own {} x {} matrix; {} failed; checks shown for batch {} ({})",
                                  per.size(), out.m, out.n, failed, pick, failed ? "the first failing" : "the largest err / allowed"));
}

}  // namespace fpcert
