// suites/experiments.cpp — the scalar split-product experiment.
#include "suites/experiments.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/cpu/split.hpp"
#include "oracle/parallel.hpp"
#include "oracle/philox.hpp"
#include "oracle/round.hpp"

namespace fpcert {
namespace {
double quantize_rna_tf32(float x) {
  return to_double(tf32, round_double(tf32, x, {Rounding::NearestAway, Saturation::Inf, NanPayload::Preserve}).code);
}
}  // namespace

std::vector<SplitScalarRow> split_scalar_experiment(std::uint64_t pairs, std::uint64_t seed, int emin, int emax,
                                                    unsigned threads) {
  std::vector<float> a(pairs), b(pairs);
  const auto span = static_cast<std::uint32_t>(emax - emin + 1);
  parallel_for(pairs, 1 << 14, [&](std::uint64_t lo, std::uint64_t hi, unsigned) {
    for (std::uint64_t i = lo; i < hi; ++i) {
      const auto w = philox_4x32(seed, 7, i);
      auto make = [&](std::uint32_t r, std::uint32_t e) {
        const int ex = emin + static_cast<int>(e % span);
        const float m = 1.0f + static_cast<float>(r & 0x7FFFFF) * 0x1p-23f;  // exact: 24-bit significand
        return std::ldexp((r >> 31) ? -m : m, ex);
      };
      a[i] = make(w[0], w[1]);
      b[i] = make(w[2], w[3]);
    }
  }, threads);
  std::vector<std::string> methods = {"fp32", "tf32"};
  for (const auto& s : split_schemes()) methods.push_back(s.name);
  std::vector<SplitScalarRow> rows;
  std::vector<double> rel(pairs);
  for (const auto& m : methods) {
    const SplitScheme* sc = find_split_scheme(m);
    std::vector<std::int64_t> zeros(thread_count() + 1, 0);
    parallel_for(pairs, 1 << 14, [&](std::uint64_t lo, std::uint64_t hi, unsigned w) {
      for (std::uint64_t i = lo; i < hi; ++i) {
        const double exact = static_cast<double>(a[i]) * static_cast<double>(b[i]);  // exact: 24 + 24 bits
        float p;
        if (sc) {
          p = split_product(*sc, a[i], b[i]);
        } else if (m == "fp32") {
          p = a[i] * b[i];
        } else {  // tf32: both rounded nearest-away to tf32 (cvt.rna), product exact in fp32
          p = static_cast<float>(quantize_rna_tf32(a[i])) * static_cast<float>(quantize_rna_tf32(b[i]));
        }
        if (p == 0.0f) ++zeros[w];
        rel[i] = std::fabs(static_cast<double>(p) - exact) / std::fabs(exact);
      }
    }, threads);
    SplitScalarRow r;
    r.method = m;
    r.samples = static_cast<std::int64_t>(pairs);
    for (auto z : zeros) r.zero += z;
    auto q = [&](double f) {
      const auto k = static_cast<std::size_t>(std::floor(f * static_cast<double>(pairs - 1)));
      std::nth_element(rel.begin(), rel.begin() + static_cast<std::ptrdiff_t>(k), rel.end());
      return rel[k];
    };
    r.median = q(0.5);
    r.p99 = q(0.99);
    r.max = *std::max_element(rel.begin(), rel.end());
    rows.push_back(r);
  }
  return rows;
}

}  // namespace fpcert
