// suites/reveal/reveal_probe.cpp — probe values and probe launches of order revelation (suites/reveal/reveal_probe.hpp).
#include "suites/reveal/reveal_probe.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstring>

#include "base/codes.hpp"
#include "base/error.hpp"
#include "suites/run/case_run.hpp"

namespace fpcert {

std::string_view to_string(ProbeMode m) { return m == ProbeMode::Outer ? "outer" : "paired"; }

namespace {

struct Range {
  int lo = INT_MIN / 4, hi = INT_MAX / 4;  // exponents e with 2^e exactly representable in every format of a group
  void meet(const Format& f, bool sub) {
    lo = std::max(lo, sub && f.subnormals ? f.emin() - f.frac_bits : f.emin());
    hi = std::min(hi, f.emax());
  }
};

/// One candidate: exponents and the resulting units per pass.
struct Candidate {
  bool ok = false;
  ProbeMode mode = ProbeMode::Outer;
  bool sub = false;
  int ea = 0, eb = 0, sa = 0, sb = 0, r = 0;
  std::int64_t units = 0;
  int passes = 0;
};

int ceil_log2(std::int64_t k) { return k <= 1 ? 0 : 64 - std::countl_zero(static_cast<std::uint64_t>(k - 1)); }

/// The value in [lo, hi] nearest to target.
int nearest_in(int lo, int hi, int target) { return std::clamp(target, lo, hi); }

std::uint64_t exact_code(const Format& f, int e, bool neg) {
  const double v = std::ldexp(neg ? -1.0 : 1.0, e);
  const Rounded r = round_double(f, v, Rounder::nearest(f));
  if (r.flags != 0 || to_double(f, r.code) != v)
    throw std::logic_error(fmt::format("probe value 2^{} is not exact in {}", e, f.tag));  // the plan guarantees it
  return r.code;
}

}  // namespace

ProbePlan plan_probes(const KernelTraits& t, std::int64_t k, const PlanLimits& lim) {
  if (k < 1) throw InputError("K must be at least 1");
  // The formats every partial sum lives in (accumulator, promotion), products when they are rounded,
  // and the output that holds the final count.
  std::vector<const Format*> accs{t.acc};
  if (t.promote_every > 0 && t.promote_format) accs.push_back(t.promote_format);
  std::vector<const Format*> prods = accs;
  if (!t.exact_products && t.product_format) prods.push_back(t.product_format);
  int p_max = 0, p_min = INT_MAX, e_lo = t.out->emin(), e_hi = INT_MAX;
  for (const Format* f : accs) {
    p_max = std::max(p_max, f->precision());
    p_min = std::min(p_min, f->precision());
  }
  p_min = std::min(p_min, t.out->precision());
  for (const Format* f : prods) {
    e_lo = std::max(e_lo, f->emin());
    e_hi = std::min(e_hi, f->emax());
  }
  const int lk = ceil_log2(k);
  const int out_top = t.out->emax() - lk;  // K units must fit the output's range
  const int r_need = lk + p_max + 1 + lim.window_margin;
  const auto finish = [&](Candidate c) {
    const int absorb_bits = c.r - p_max - 1 - lim.window_margin;
    if (absorb_bits < 1) return Candidate{};
    const std::int64_t cap = std::int64_t{1} << std::min({absorb_bits, p_min, 62});
    c.units = std::min(k, cap);
    c.passes = static_cast<int>((k + c.units - 1) / c.units);
    c.ok = true;
    return c;
  };
  const auto try_outer = [&](bool sub) {
    Range a, b;
    a.meet(*t.a_input, sub), a.meet(*t.a_operand, sub), b.meet(*t.b_input, sub), b.meet(*t.b_operand, sub);
    for (int r = r_need; r >= 1; --r) {
      // ea in [a.lo, a.hi - r], eb in [b.lo, b.hi - r]; e = ea + eb in [e_lo, min(e_hi - r - 1, out_top)].
      const int lo = std::max(a.lo + b.lo, e_lo), hi = std::min({a.hi + b.hi - 2 * r, e_hi - r - 1, out_top});
      if (a.lo > a.hi - r || b.lo > b.hi - r || lo > hi) continue;
      Candidate c;
      c.mode = ProbeMode::Outer;
      c.sub = sub;
      c.r = c.sa = c.sb = r;
      const int e = nearest_in(lo, hi, 0);
      c.ea = nearest_in(std::max(a.lo, e - (b.hi - r)), std::min(a.hi - r, e - b.lo), (a.lo + a.hi - r) / 2);
      c.eb = e - c.ea;
      return finish(c);
    }
    return Candidate{};
  };
  const auto try_paired = [&](bool sub) {
    Range a, b;
    a.meet(*t.a_input, sub), a.meet(*t.a_operand, sub), b.meet(*t.b_input, sub), b.meet(*t.b_operand, sub);
    for (int r = r_need; r >= 2; --r) {
      // sa + sb = r, balanced first.
      for (int d = 0; d <= r; ++d)
        for (int sa : {r / 2 + d, r / 2 - d}) {
          const int sb = r - sa;
          if (sa < 1 || sb < 1 || a.lo > a.hi - sa || b.lo > b.hi - sb) continue;
          const int lo = std::max(a.lo + b.lo, e_lo), hi = std::min({a.hi - sa + b.hi - sb, e_hi - r - 1, out_top});
          if (lo > hi) continue;
          Candidate c;
          c.mode = ProbeMode::Paired;
          c.sub = sub;
          c.r = r;
          c.sa = sa;
          c.sb = sb;
          const int e = nearest_in(lo, hi, 0);
          c.ea = nearest_in(std::max(a.lo, e - (b.hi - sb)), std::min(a.hi - sa, e - b.lo), (a.lo + a.hi - sa) / 2);
          c.eb = e - c.ea;
          return finish(c);
        }
    }
    return Candidate{};
  };
  // Fewest passes wins; then outer (M·N queries per launch) over paired; then normal units over subnormal.
  std::vector<Candidate> cands;
  for (bool sub : {false, true}) {
    if (sub && !lim.allow_subnormal_units) continue;
    if (Candidate c = try_outer(sub); c.ok && c.passes == 1) cands.push_back(c);  // outer mode has no passes
    if (Candidate c = try_paired(sub); c.ok) cands.push_back(c);
  }
  const std::string formats = fmt::format("{} x {} into {} (out {})", t.a_operand->tag, t.b_operand->tag, t.acc->tag, t.out->tag);
  if (cands.empty())
    throw InputError(fmt::format("order revelation refused at K = {}: {} cannot carry probe values — a unit product must be a normal "
                                 "{} value whose K-fold sum stays finite, and the large values must exceed the units by at least 2^{} "
                                 "(the accumulator's {} bits, one for rounding, {} for a tensor-core window) while every value stays "
                                 "in the operands' ranges",
                                 k, formats, t.acc->tag, p_max + 2 + lim.window_margin, p_max, lim.window_margin));
  const Candidate best = *std::min_element(cands.begin(), cands.end(), [](const Candidate& x, const Candidate& y) {
    if (x.passes != y.passes) return x.passes < y.passes;
    if (x.mode != y.mode) return x.mode == ProbeMode::Outer;
    return !x.sub && y.sub;
  });
  if (best.passes > lim.max_passes)
    throw InputError(fmt::format("order revelation refused at K = {}: {} allows at most {} units per launch (exact counts need "
                                 "U <= 2^{}; absorption needs U <= 2^{} with a ratio of 2^{}), so each query would take {} launches "
                                 "(the limit is {}): choose a smaller K",
                                 k, formats, best.units, p_min, best.r - p_max - 1 - lim.window_margin, best.r, best.passes, lim.max_passes));
  ProbePlan p;
  p.mode = best.mode;
  p.ea = best.ea;
  p.eb = best.eb;
  p.sa = best.sa;
  p.sb = best.sb;
  p.ratio_bits = best.r;
  p.k = k;
  p.units_per_pass = best.units;
  p.passes = best.passes;
  p.a_unit = exact_code(*t.a_input, p.ea, false);
  p.a_big = exact_code(*t.a_input, p.ea + p.sa, false);
  p.a_neg_big = exact_code(*t.a_input, p.ea + p.sa, true);
  p.b_unit = exact_code(*t.b_input, p.eb, false);
  p.b_big = exact_code(*t.b_input, p.eb + p.sb, false);
  p.b_neg_big = exact_code(*t.b_input, p.eb + p.sb, true);
  const auto subn = [](const Format& f, int e) { return f.subnormals && e < f.emin(); };
  p.subnormal_units = subn(*t.a_input, p.ea) || subn(*t.a_operand, p.ea) || subn(*t.b_input, p.eb) || subn(*t.b_operand, p.eb);
  p.text = fmt::format("{} mode, {}: A unit 2^{}, large 2^{}; B unit 2^{}, large 2^{}; a unit product 2^{}, large products 2^{} "
                       "(ratio 2^{}{}); at most U = {} units per launch (exact counts: U <= 2^{}; absorbed by round-to-nearest "
                       "and below a window of {} + {} bits: U <= 2^{}){}",
                       to_string(p.mode), formats, p.ea, p.ea + p.sa, p.eb, p.eb + p.sb, p.ea + p.eb, p.ea + p.eb + p.ratio_bits, p.ratio_bits,
                       p.subnormal_units ? ", subnormal units" : "", p.units_per_pass, p_min, p_max + 1, lim.window_margin,
                       p.ratio_bits - p_max - 1 - lim.window_margin,
                       p.passes > 1 ? fmt::format(": {} passes over K", p.passes) : std::string());
  return p;
}

// ---- launches ----

GemmProber::GemmProber(GemmKernel& kernel, DeviceApi& api, std::int64_t m, std::int64_t n, const ProbePlan& plan, double timeout_ms)
    : kernel_(kernel), api_(api), m_(m), n_(n), k_(plan.k), plan_(plan), timeout_ms_(timeout_ms) {
  const KernelTraits& t = kernel.traits();
  ab_ = container_bytes(*t.a_input);
  bb_ = container_bytes(*t.b_input);
  cb_ = container_bytes(*t.out);
  da_ = api_.alloc(static_cast<std::size_t>(m_ * k_ * ab_));
  try {
    db_ = api_.alloc(static_cast<std::size_t>(k_ * n_ * bb_));
    dc_ = api_.alloc(static_cast<std::size_t>(m_ * n_ * cb_));
  } catch (...) {
    api_.free(da_);
    if (db_) api_.free(db_);
    throw;
  }
  prefill_.resize(static_cast<std::size_t>(m_ * n_ * cb_));
  const std::uint64_t pre = to_container(*t.out, prefill_code(*t.out));
  for (std::int64_t i = 0; i < m_ * n_; ++i) store_code(prefill_.data(), i, cb_, pre);
  out_.resize(prefill_.size());
  row_plants_.assign(static_cast<std::size_t>(m_), {});
  col_plants_.assign(static_cast<std::size_t>(n_), {});
}

GemmProber::~GemmProber() {
  api_.free(da_);
  api_.free(db_);
  api_.free(dc_);
}

std::uint64_t GemmProber::a_background(std::int64_t pos) const {
  if (plan_.mode == ProbeMode::Outer || plan_.passes == 1) return plan_.a_unit;
  return pos >= plan_.pass_first(pass_) && pos < plan_.pass_last(pass_) ? plan_.a_unit : 0;
}

void GemmProber::set_pass(int p) {
  if (p == pass_) return;
  const KernelTraits& t = kernel_.traits();
  const bool first = pass_ < 0;
  pass_ = p;
  {
    std::vector<std::uint8_t> row(static_cast<std::size_t>(k_ * ab_)), a(static_cast<std::size_t>(m_ * k_ * ab_));
    for (std::int64_t x = 0; x < k_; ++x) store_code(row.data(), x, ab_, to_container(*t.a_input, a_background(x)));
    for (std::int64_t r = 0; r < m_; ++r) std::memcpy(a.data() + r * k_ * ab_, row.data(), row.size());
    api_.to_device(da_, a.data(), a.size());
  }
  for (auto& v : row_plants_) v.clear();
  if (first) {
    std::vector<std::uint8_t> b(static_cast<std::size_t>(k_ * n_ * bb_));
    const std::uint64_t u = to_container(*t.b_input, plan_.b_unit);
    for (std::int64_t i = 0; i < k_ * n_; ++i) store_code(b.data(), i, bb_, u);
    api_.to_device(db_, b.data(), b.size());
  }
}

void GemmProber::place(const LaunchSpec& s) {
  const KernelTraits& t = kernel_.traits();
  std::vector<std::int64_t> idx;
  std::vector<std::uint64_t> code;
  const bool paired = plan_.mode == ProbeMode::Paired;
  // Rows of A.
  for (std::int64_t r = 0; r < m_; ++r) {
    auto& cur = row_plants_[static_cast<std::size_t>(r)];
    std::vector<std::pair<std::int32_t, std::uint64_t>> want;
    const std::int32_t x = s.row_x.empty() ? -1 : s.row_x[static_cast<std::size_t>(r)];
    const std::int32_t y = s.row_y.empty() ? -1 : s.row_y[static_cast<std::size_t>(r)];
    if (x >= 0) want.push_back({x, plan_.a_big});
    if (paired && y >= 0) want.push_back({y, plan_.a_neg_big});
    for (std::int32_t old : cur)
      if (std::none_of(want.begin(), want.end(), [&](const auto& w) { return w.first == old; })) {
        idx.push_back(r * k_ + old);
        code.push_back(to_container(*t.a_input, a_background(old)));
      }
    cur.clear();
    for (const auto& [pos, c] : want) {
      idx.push_back(r * k_ + pos);
      code.push_back(to_container(*t.a_input, c));
      cur.push_back(pos);
    }
  }
  api_.scatter(da_, ab_, idx.data(), code.data(), idx.size());
  idx.clear();
  code.clear();
  // Columns of B.
  for (std::int64_t c = 0; c < n_; ++c) {
    auto& cur = col_plants_[static_cast<std::size_t>(c)];
    std::vector<std::pair<std::int32_t, std::uint64_t>> want;
    const std::int32_t x = s.col_x.empty() ? -1 : s.col_x[static_cast<std::size_t>(c)];
    const std::int32_t y = s.col_y.empty() ? -1 : s.col_y[static_cast<std::size_t>(c)];
    if (paired) {
      if (x >= 0) want.push_back({x, plan_.b_big});
      if (y >= 0) want.push_back({y, plan_.b_big});
    } else if (y >= 0) {
      want.push_back({y, plan_.b_neg_big});
    }
    for (std::int32_t old : cur)
      if (std::none_of(want.begin(), want.end(), [&](const auto& w) { return w.first == old; })) {
        idx.push_back(old * n_ + c);
        code.push_back(to_container(*t.b_input, plan_.b_unit));
      }
    cur.clear();
    for (const auto& [pos, v] : want) {
      idx.push_back(pos * n_ + c);
      code.push_back(to_container(*t.b_input, v));
      cur.push_back(pos);
    }
  }
  api_.scatter(db_, bb_, idx.data(), code.data(), idx.size());
}

void GemmProber::launch() {
  api_.to_device(dc_, prefill_.data(), prefill_.size());
  GemmOperands ops;
  ops.m = m_;
  ops.n = n_;
  ops.k = k_;
  ops.a = da_;
  ops.lda = k_;
  ops.b = db_;
  ops.ldb = n_;
  ops.c = dc_;
  ops.ldc = n_;
  ops.stream = api_.stream();
  api_.timer_start();
  kernel_.run(ops);
  api_.synchronize(timeout_ms_);
  kernel_ms_ += api_.timer_stop_ms();
  api_.to_host(out_.data(), dc_, out_.size());
  ++launches_;
}

std::pair<int, int> GemmProber::pair_of(const LaunchSpec& s, int r, int c) const {
  const auto at = [](const std::vector<std::int32_t>& v, int i) { return v.empty() ? -1 : v[static_cast<std::size_t>(i)]; };
  if (plan_.mode == ProbeMode::Outer) {
    const int x = at(s.row_x, r), y = at(s.col_y, c);
    if (x < 0 || y < 0 || x == y) return {-1, -1};
    return {x, y};
  }
  const int x = at(s.row_x, r), y = at(s.row_y, r), cx = at(s.col_x, c), cy = at(s.col_y, c);
  if (x < 0 || y < 0 || x == y || !((x == cx && y == cy) || (x == cy && y == cx))) return {-1, -1};
  return {x, y};
}

std::vector<std::vector<std::int32_t>> GemmProber::run(const std::vector<LaunchSpec>& specs) {
  const auto t0 = std::chrono::steady_clock::now();
  const Format& out = *kernel_.traits().out;
  const double inv_unit = std::ldexp(1.0, -(plan_.ea + plan_.eb));
  std::vector<std::vector<std::int64_t>> absorbed(specs.size());
  for (std::size_t i = 0; i < specs.size(); ++i) absorbed[i].assign(specs[i].wanted.size(), 0);
  for (int p = 0; p < plan_.passes; ++p) {
    set_pass(p);
    const std::int64_t first = plan_.pass_first(p), last = plan_.pass_last(p);
    for (std::size_t i = 0; i < specs.size(); ++i) {
      const LaunchSpec& s = specs[i];
      place(s);
      launch();
      for (std::size_t w = 0; w < s.wanted.size(); ++w) {
        auto& acc = absorbed[i][w];
        if (acc < 0) continue;
        const auto [r, c] = s.wanted[w];
        const auto [x, y] = pair_of(s, r, c);
        if (x < 0) {
          acc = -1;
          continue;
        }
        const std::int64_t units = (last - first) - (x >= first && x < last) - (y >= first && y < last);
        const double v = to_double(out, from_container(out, load_code(out_.data(), static_cast<std::int64_t>(r) * n_ + c, cb_)));
        const double count = v * inv_unit;  // exact: a power-of-two scaling of a finite value
        if (!std::isfinite(count) || count != std::floor(count) || count < 0 || count > static_cast<double>(units)) {
          acc = -1;
          continue;
        }
        acc += units - static_cast<std::int64_t>(count);
      }
    }
  }
  std::vector<std::vector<std::int32_t>> result(specs.size());
  for (std::size_t i = 0; i < specs.size(); ++i) {
    result[i].resize(absorbed[i].size());
    for (std::size_t w = 0; w < absorbed[i].size(); ++w)
      result[i][w] = absorbed[i][w] < 0 ? kGarbage : static_cast<std::int32_t>(2 + absorbed[i][w]);
  }
  seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

std::vector<std::uint64_t> GemmProber::raw(const LaunchSpec& spec, int pass) {
  const auto t0 = std::chrono::steady_clock::now();
  set_pass(pass);
  place(spec);
  launch();
  std::vector<std::uint64_t> codes(static_cast<std::size_t>(m_ * n_));
  for (std::int64_t i = 0; i < m_ * n_; ++i) codes[static_cast<std::size_t>(i)] = load_code(out_.data(), i, cb_);
  seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return codes;
}

}  // namespace fpcert
