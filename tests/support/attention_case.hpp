// tests/support/attention_case.hpp — random attention inputs for the reference tests (forward and backward): the tests'
// own generator (splitmix64, sharing no code with generators/), Q, K, V in a format with a dominant key, large scores or
// V rows that cancel, causal masks and an additive mask with -Inf entries (query 2 fully masked).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "oracle/attention/attention_ref.hpp"
#include "oracle/round.hpp"

namespace fpcert::test_attention {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// splitmix64: the test's own generator (the reference must not share the generators' code).
inline std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
inline double unit(std::uint64_t seed, std::uint64_t i) { return static_cast<double>(mix(seed ^ mix(i)) >> 11) * 0x1p-53; }
/// Roughly normal: the sum of four uniforms, centred and scaled.
inline double gauss(std::uint64_t seed, std::uint64_t i) {
  double s = 0;
  for (std::uint64_t k = 0; k < 4; ++k) s += unit(seed, 4 * i + k);
  return (s - 2) * 1.7320508;
}
inline double in_format(const Format& f, double x) { return to_double(f, round_double(f, x, Rounder::nearest(f)).code); }

enum class Kind { Normal, Dominant, Large, Cancel };

struct Case {
  AttentionInputs in;
  std::vector<double> q, k, v, mask;
};

inline Case make_case(const Format& fmt, Kind kind, std::int64_t hq, std::int64_t hkv, std::int64_t lq, std::int64_t lk, std::int64_t d,
               int causal, bool mask, std::uint64_t seed) {
  Case c;
  AttentionInputs& in = c.in;
  in.batch = 2;
  in.heads_q = hq;
  in.heads_kv = hkv;
  in.len_q = lq;
  in.len_k = lk;
  in.head_dim = d;
  in.scale = static_cast<float>(1 / std::sqrt(static_cast<double>(d)));
  const auto nq = static_cast<std::size_t>(in.batch * hq * lq * d), nk = static_cast<std::size_t>(in.batch * hkv * lk * d);
  c.q.resize(nq);
  c.k.resize(nk);
  c.v.resize(nk);
  const double big = kind == Kind::Large ? (fmt.tag == "f16" ? 40.0 : 12.0) : 1.0;  // scores ~ big^2: beyond exp(88)
  for (std::size_t i = 0; i < nq; ++i) c.q[i] = in_format(fmt, big * gauss(seed, i) + (kind == Kind::Dominant && i % d == 0 ? 3 : 0));
  for (std::size_t i = 0; i < nk; ++i) {
    const std::size_t row = i / static_cast<std::size_t>(d);
    const bool star = kind == Kind::Dominant && row % static_cast<std::size_t>(lk) == 3 % static_cast<std::size_t>(lk) && i % d == 0;
    c.k[i] = in_format(fmt, (kind == Kind::Cancel ? 0.25 : big) * gauss(seed + 1, i) + (star ? 6 * std::sqrt(static_cast<double>(d)) : 0));
    const double sgn = row % 2 == 0 ? 1 : -1;
    c.v[i] = in_format(fmt, kind == Kind::Cancel ? sgn * (1 + 0x1p-7 * gauss(seed + 2, i)) : gauss(seed + 2, i));
  }
  in.q = c.q.data();
  in.k = c.k.data();
  in.v = c.v.data();
  in.causal = causal != 0;
  in.causal_offset = causal == 2 ? lk - lq : 0;
  if (mask) {
    c.mask.resize(static_cast<std::size_t>(lq * lk));
    for (std::size_t i = 0; i < c.mask.size(); ++i) {
      const double u = unit(seed + 3, i);
      c.mask[i] = u < 0.15 ? -kInf : static_cast<float>(-3 * u);
      if (i / static_cast<std::size_t>(lk) == 2) c.mask[i] = -kInf;  // query 2 fully masked
    }
    in.mask = c.mask.data();
  }
  return c;
}

}  // namespace fpcert::test_attention
