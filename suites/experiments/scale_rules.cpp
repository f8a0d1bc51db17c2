// suites/experiments/scale_rules.cpp — the scale-rule comparison (suites/experiments/scale_rules.hpp).
#include "suites/experiments/scale_rules.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "generators/generate.hpp"
#include "oracle/gemm_ref.hpp"

namespace fpcert {
namespace {

double quantile(std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  const auto i = static_cast<std::size_t>(std::floor(q * static_cast<double>(v.size() - 1) + 0.5));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(i), v.end());
  return v[i];
}

BlockTensor quantize(const BlockFormat& f, ScaleRule r, const Matrix& x, int axis) {
  BlockQuantOptions o;
  o.rule = r;
  o.axis = axis;
  return quantize_tensor(f, o, x.data.data(), x.rows, x.cols);
}

/// max |x - v| / amax over each block (axis 1, blocks along rows), 0 for zero blocks.
std::vector<double> block_errors(const BlockTensor& t, const Matrix& x) {
  std::vector<double> e(t.scales.size(), 0.0);
  for (std::int64_t i = 0; i < t.rows; ++i)
    for (std::int64_t b = 0; b < t.scale_cols; ++b) {
      double amax = 0, err = 0;
      for (std::int64_t j = b * t.block; j < std::min(t.cols, (b + 1) * t.block); ++j) {
        amax = std::max(amax, std::fabs(x(i, j)));
        err = std::max(err, std::fabs(x(i, j) - t.value(i, j)));
      }
      e[static_cast<std::size_t>(i * t.scale_cols + b)] = amax > 0 ? err / amax : 0.0;
    }
  return e;
}

double frobenius(const GemmRef& q, const GemmRef& c) {
  double num = 0, den = 0;
  for (std::size_t x = 0; x < c.c.size(); ++x) {
    const double d = (q.c[x].hi - c.c[x].hi) + (q.c[x].lo - c.c[x].lo);
    num += d * d;
    den += c.c[x].hi * c.c[x].hi;
  }
  return den > 0 ? std::sqrt(num / den) : 0.0;
}

}  // namespace

ScaleRuleReport scale_rule_experiment(std::uint64_t seed, std::int64_t rows, std::int64_t cols, std::int64_t gemm_mn,
                                      std::int64_t gemm_k) {
  ScaleRuleReport rep;
  rep.normal_spec = fmt::format("normal:m={},n=1,k={},seed={}", rows, cols, seed);
  rep.heavy_spec = fmt::format("ozaki:m={},n=1,k={},seed={},phi=1.5", rows, cols, seed + 1);
  struct Data {
    std::string name, spec;
    Problem array, gemm;
    GemmRef exact;
  };
  std::vector<Data> data;
  data.push_back({"normal", rep.normal_spec, generate(rep.normal_spec),
                  generate(fmt::format("normal:m={},n={},k={},seed={}", gemm_mn, gemm_mn, gemm_k, seed + 2)), {}});
  data.push_back({"heavy-tailed", rep.heavy_spec, generate(rep.heavy_spec),
                  generate(fmt::format("ozaki:m={},n={},k={},seed={},phi=1.5", gemm_mn, gemm_mn, gemm_k, seed + 3)), {}});
  for (Data& d : data) d.exact = gemm_reference(d.gemm.a.view(), d.gemm.b.view());

  for (const BlockFormat* f : all_block_formats()) {
    for (const Data& d : data) {
      const Matrix& x = d.array.a;
      std::vector<ScaleRule> rules;
      std::vector<BlockTensor> ts;
      std::vector<std::vector<double>> errs;
      for (ScaleRule r : kAllScaleRules) {
        if (!rule_valid(*f, r)) continue;
        rules.push_back(r);
        ts.push_back(quantize(*f, r, x, 1));
        const BlockTensor& t = ts.back();
        errs.push_back(block_errors(t, x));
        ScaleRuleRow row;
        row.format = std::string(f->tag);
        row.rule = std::string(to_string(r));
        row.data = d.name;
        row.blocks = static_cast<std::int64_t>(t.scales.size());
        row.elements = x.rows * x.cols;
        std::int64_t msat = 0, sat = 0, flushed = 0, nonzero = 0;
        for (const BlockSummary& s : t.blocks) {
          msat += s.max_saturated;
          sat += s.saturated;
          flushed += s.flushed;
        }
        std::vector<double> rel;
        rel.reserve(x.data.size());
        for (std::int64_t i = 0; i < x.rows; ++i)
          for (std::int64_t j = 0; j < x.cols; ++j)
            if (x(i, j) != 0) {
              ++nonzero;
              rel.push_back(std::fabs(x(i, j) - t.value(i, j)) / std::fabs(x(i, j)));
            }
        row.max_saturated = static_cast<double>(msat) / static_cast<double>(row.blocks);
        row.saturated = static_cast<double>(sat) / static_cast<double>(row.elements);
        row.flushed = nonzero ? static_cast<double>(flushed) / static_cast<double>(nonzero) : 0.0;
        row.rel_max = rel.empty() ? 0 : *std::max_element(rel.begin(), rel.end());
        row.rel_p99 = quantile(rel, 0.99);
        row.rel_median = quantile(rel, 0.5);
        // The GEMM: A in blocks along K (rows), B down its columns; exact product of the dequantized values.
        const BlockTensor qa = quantize(*f, r, d.gemm.a, 1), qb = quantize(*f, r, d.gemm.b, 0);
        Matrix da(d.gemm.m, d.gemm.k), db(d.gemm.k, d.gemm.n);
        da.data = dequantize_tensor(qa);
        db.data = dequantize_tensor(qb);
        row.gemm_frobenius = frobenius(gemm_reference(da.view(), db.view()), d.exact);
        rep.rows.push_back(row);
      }
      // Each rule against the format's reference rule (index 0 of rules is floor for E8M0, and NVFP4's
      // default is even: find it).
      std::size_t ref = 0;
      for (std::size_t r = 0; r < rules.size(); ++r)
        if (rules[r] == f->default_rule) ref = r;
      for (std::size_t r = 0; r < rules.size(); ++r) {
        if (r == ref) continue;
        ScaleRuleDisagreement dis;
        dis.format = std::string(f->tag);
        dis.data = d.name;
        dis.rule = std::string(to_string(rules[r]));
        dis.versus = std::string(to_string(rules[ref]));
        const BlockTensor& t0 = ts[ref];
        const BlockTensor& t1 = ts[r];
        dis.blocks = static_cast<std::int64_t>(t0.scales.size());
        for (std::size_t b = 0; b < t0.scales.size(); ++b) {
          if (t0.scales[b] == t1.scales[b]) continue;
          ++dis.scale_differs;
          const std::int64_t i = static_cast<std::int64_t>(b) / t0.scale_cols, bc = static_cast<std::int64_t>(b) % t0.scale_cols;
          bool differ = false;
          double amax = 0;
          for (std::int64_t j = bc * t0.block; j < std::min(x.cols, (bc + 1) * t0.block); ++j) {
            differ = differ || t0.value(i, j) != t1.value(i, j);
            amax = std::max(amax, std::fabs(x(i, j)));
          }
          if (!differ) continue;
          ++dis.values_differ;
          dis.better += errs[r][b] < errs[ref][b];
          dis.worse += errs[r][b] > errs[ref][b];
          if (dis.examples.size() < 3)
            dis.examples.push_back(fmt::format("block ({}, {}), amax {:.6g}: {} scale {:.4g} err/amax {:.3g}; {} scale {:.4g} err/amax {:.3g}", i, bc,
                                               amax, dis.versus, scale_value(*f, t0.scales[b]), errs[ref][b], dis.rule,
                                               scale_value(*f, t1.scales[b]), errs[r][b]));
        }
        rep.disagreements.push_back(dis);
      }
    }
  }
  return rep;
}

}  // namespace fpcert
