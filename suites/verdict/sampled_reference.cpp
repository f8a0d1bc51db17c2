// suites/verdict/sampled_reference.cpp — the sampled exact reference of a GEMM (sampled_reference.hpp).
#include "suites/verdict/sampled_reference.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "base/error.hpp"
#include "base/philox.hpp"

namespace fpcert {

std::vector<std::int64_t> sample_indices(std::int64_t extent, const std::vector<std::int64_t>& strides, std::int64_t random,
                                         std::uint64_t seed) {
  std::vector<std::int64_t> all;
  if (random < 0) {
    for (std::int64_t i = 0; i < extent; ++i) all.push_back(i);
    return all;
  }
  std::set<std::int64_t> s;
  auto add = [&](std::int64_t i) {
    if (i >= 0 && i < extent) s.insert(i);
  };
  for (std::int64_t i : {std::int64_t{0}, std::int64_t{1}, extent - 2, extent - 1}) add(i);
  for (std::int64_t p = 1; p < extent; p *= 2) add(p - 1), add(p);
  for (std::int64_t t : {1, 8, 16, 32, 64, 128, 256}) {
    const std::int64_t last = 65535 * t;  // rows 0 .. last - 1 fit a grid of 65,535 blocks of t rows
    add(last - 1), add(last), add(last + 1);
  }
  for (std::int64_t stride : strides) {
    if (stride <= 0) continue;
    for (int e : {29, 30, 31, 32}) {
      const std::int64_t line = ((std::int64_t{1} << e) - 1) / stride;  // its offsets hold 2^e - 1 (and 2^e, or the next one does)
      add(line), add(line + 1);
    }
  }
  // Random ones: Philox(seed, counter) mod extent, until `random` new indices or 4 x random draws.
  std::int64_t added = 0;
  for (std::uint64_t c = 0; added < random && c < static_cast<std::uint64_t>(4 * random + 16); ++c) {
    const auto r = philox_4x32(seed, 0x5A3F1E, c);
    const std::uint64_t v = (static_cast<std::uint64_t>(r[0]) << 32) | r[1];
    added += s.insert(static_cast<std::int64_t>(v % static_cast<std::uint64_t>(extent))).second;
  }
  return {s.begin(), s.end()};
}

GemmSample choose_gemm_sample(std::int64_t m, std::int64_t n, std::int64_t k, const SampleSpec& spec, std::uint64_t seed) {
  // The leading dimensions the runner lays A, B and C out with: padded_ld for 1, 2, 4 and 8-byte elements
  // (cols + 16, + 8, + 8, + 8), the certify cases' own paddings (+ 9, + 16), and C's n + 8.
  auto lds = [](std::int64_t cols) { return std::vector<std::int64_t>{cols, cols + 8, cols + 9, cols + 16}; };
  std::vector<std::int64_t> row_strides = lds(k), col_strides;
  for (std::int64_t s : lds(n)) row_strides.push_back(s);  // C's rows
  // A column j of B or C crosses an offset of 2^e when t * ldb + j does: the columns to sample are the offsets'
  // remainders, (2^e - 1) mod ldb and the next. sample_indices takes strides for lines; columns get them here.
  GemmSample g;
  g.rows = sample_indices(m, row_strides, spec.rows, seed);
  std::set<std::int64_t> cols;
  for (std::int64_t c : sample_indices(n, col_strides, spec.cols, seed ^ 0x9E3779B97F4A7C15ull)) cols.insert(c);
  if (spec.cols >= 0)
    for (std::int64_t ld : lds(n))
      for (int e : {29, 30, 31, 32}) {
        const std::int64_t j = ((std::int64_t{1} << e) - 1) % ld;
        if (j < n) cols.insert(j);
        if (j + 1 < n) cols.insert(j + 1);
      }
  g.cols.assign(cols.begin(), cols.end());
  return g;
}

namespace {
std::string list(const std::vector<std::int64_t>& v) {
  std::string s;
  const std::size_t show = 12;
  for (std::size_t i = 0; i < v.size() && i < show; ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  if (v.size() > show) s += fmt::format(", ... ({} in all, last {})", v.size(), v.back());
  return "{" + s + "}";
}
}  // namespace

std::string GemmSample::describe(std::int64_t m, std::int64_t n) const {
  return fmt::format("sampled reference: graded rows {} x columns {} ({} of {} elements; element (p, q) of the graded grid is "
                     "C(rows[p], cols[q]))",
                     list(rows), list(cols), elements(), m * n);
}

Problem sampled_problem(const Problem& p, const GemmSample& s) {
  Problem q;
  q.spec = p.spec;
  q.family = p.family;
  q.seed = p.seed;
  q.source = p.source;
  q.dot = p.dot;
  q.achieved = p.achieved;
  q.not_representable = p.not_representable;
  q.k = p.k;
  q.m = static_cast<std::int64_t>(s.rows.size());
  q.n = static_cast<std::int64_t>(s.cols.size());
  q.a = Matrix(q.m, p.k);
  for (std::int64_t r = 0; r < q.m; ++r)
    std::copy_n(p.a.data.begin() + s.rows[static_cast<std::size_t>(r)] * p.k, p.k, q.a.data.begin() + r * p.k);
  q.b = Matrix(p.k, q.n);
  for (std::int64_t t = 0; t < p.k; ++t)
    for (std::int64_t c = 0; c < q.n; ++c) q.b(t, c) = p.b(t, s.cols[static_cast<std::size_t>(c)]);
  return q;
}

GemmRef sampled_reference(const Problem& p, const GemmSample& s) {
  const Problem q = sampled_problem(p, s);
  return gemm_reference(q.a.view(), q.b.view());
}

SampleSpec parse_sample_spec(const std::string& text) {
  auto one = [&](const std::string& t) -> std::int64_t {
    if (t == "all") return -1;
    try {
      std::size_t used = 0;
      const long long v = std::stoll(t, &used);
      if (used == t.size() && v >= 0) return v;
    } catch (const std::exception&) {
    }
    throw InputError("--sample: '" + text + "' is not ROWS[,COLS] (counts of random rows and columns, or 'all')");
  };
  const auto comma = text.find(',');
  SampleSpec s;
  s.on = true;
  s.rows = one(text.substr(0, comma));
  s.cols = comma == std::string::npos ? s.rows : one(text.substr(comma + 1));
  return s;
}

}  // namespace fpcert
