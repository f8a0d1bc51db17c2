// suites/ops/elementwise/eltwise_check.cpp — judging and tallying elementwise results on the host.
#include "suites/ops/elementwise/eltwise_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "oracle/math/binary.hpp"

namespace fpcert {

namespace {
math::RefRn fast_ref(math::Fn f, float x, const math::CodeFormat& out) {
  return math::ref_rn(f, x, out, math::exp_tables(), math::log_tables());
}
bool before(const EltwiseTally::Item& a, const EltwiseTally::Item& b) { return a.ulps != b.ulps ? a.ulps > b.ulps : a.x < b.x; }
}  // namespace

void EltwiseTally::add(std::uint32_t x, std::uint32_t got, std::uint32_t ref, const math::Judged& j, std::uint32_t x2) {
  ++inputs;
  if (j.undecided) {
    ++undecided;
    return;
  }
  ++histogram[static_cast<std::size_t>(math::ulp_bin(j.ulps))];
  const Item it{x, got, ref, j.ulps, x2};
  unclaimed += !j.claimed;
  if (j.claimed && j.ulps > 0 && (!has_worst || before(it, worst))) {
    worst = it;
    has_worst = true;
  }
  if (j.above) {
    ++above;
    if (listed.size() < kListed || x < listed.back().x) {
      listed.insert(std::upper_bound(listed.begin(), listed.end(), it, [](const Item& a, const Item& b) { return a.x < b.x; }), it);
      if (listed.size() > kListed) listed.pop_back();
    }
  }
}

void EltwiseTally::merge(const EltwiseTally& o) {
  for (std::size_t i = 0; i < histogram.size(); ++i) histogram[i] += o.histogram[i];
  inputs += o.inputs;
  above += o.above;
  mpfr += o.mpfr;
  undecided += o.undecided;
  unclaimed += o.unclaimed;
  if (o.has_worst && (!has_worst || before(o.worst, worst))) {
    worst = o.worst;
    has_worst = true;
  }
  listed.insert(listed.end(), o.listed.begin(), o.listed.end());
  std::sort(listed.begin(), listed.end(), [](const Item& a, const Item& b) { return a.x < b.x; });
  if (listed.size() > kListed) listed.resize(kListed);
}

float eltwise_input(const EltwiseTraits& t, std::uint32_t xc) {
  float x = static_cast<float>(to_double(*t.in, xc));  // exact: f16/bf16 values are floats
  if (t.daz && std::fabs(x) < 0x1p-126f) x = std::signbit(x) ? -0.0f : 0.0f;
  return x;
}

std::uint32_t eltwise_reference(const EltwiseTraits& t, std::uint32_t xc, bool* used_mpfr) {
  const float x = eltwise_input(t, xc);
  const math::RefRn r = fast_ref(t.fn, x, *code_format(*t.out));
  if (used_mpfr) *used_mpfr = !r.decided;
  if (r.decided) return r.code;
  const Rounder rn{Rounding::NearestEven, Saturation::Inf, NanPayload::Preserve};
  return static_cast<std::uint32_t>(math::evaluate_mpfr(t.fn, x, *t.out, rn).code);
}

void eltwise_check_one(const EltwiseTraits& t, std::uint32_t xc, std::uint32_t got, EltwiseTally& tally) {
  const float x = eltwise_input(t, xc);
  const math::CodeFormat& oc = *code_format(*t.out);
  math::RefRn r = fast_ref(t.fn, x, oc);
  if (!r.decided) {
    const Rounder rn{Rounding::NearestEven, Saturation::Inf, NanPayload::Preserve};
    r.code = static_cast<std::uint32_t>(math::evaluate_mpfr(t.fn, x, *t.out, rn).code);
    r.decided = true;
    ++tally.mpfr;
    // The fast value stays within kExpErrorBound of f(x): absolute and relative claims keep using it. A function without
    // a fast path (math::is_mpfr_only) has none: its value is f(x) correctly rounded into f64 by MPFR (2^-53 relative).
    if (math::is_mpfr_only(t.fn) && x == x) {
      const Rounded v = math::evaluate_mpfr(t.fn, x, f64, rn);
      r.value = to_double(f64, v.code);
      r.unc = 0x1p-52;
    }
  }
  tally.add(xc, got, r.code, math::judge(got, x, r, oc, t.claim, t.ftz));
}

void eltwise_check_two(const EltwiseTraits& t, std::uint32_t x1c, std::uint32_t x2c, std::uint32_t got, EltwiseTally& tally) {
  // DAZ (a -use_fast_math build): subnormal operands read as zeros of their sign, the reference judged on them.
  const auto in = [&](std::uint32_t c) { return t.daz && (c & 0x7f800000u) == 0 ? std::bit_cast<float>(c & 0x80000000u) : std::bit_cast<float>(c); };
  const float a = in(x1c), b = in(x2c);
  const double ab = std::fabs(static_cast<double>(b));
  math::RefRn ref;
  ref.code = math::binary_ref_f32(t.fn, a, b);
  ref.decided = true;
  ref.value = math::code_value(ref.code, math::kCodeF32);
  // A quotient's value to 2^-52 relative (one double division of floats), for judge's tininess before rounding (FTZ).
  if (t.ftz && t.fn == math::Fn::Div && std::isfinite(a) && std::isfinite(b) && b != 0) ref.value = static_cast<double>(a) / static_cast<double>(b);
  math::Judged j;
  // A signalling NaN operand of pow, fmax, fmin: the standards disagree (IEEE 754 9.2.1 keeps pow(+1, y) = 1 and pow(x, +-0) = 1
  // for a quiet NaN only; 754-2008 maxNum returns a quiet NaN, 754-2019 maximumNumber and CUDA the number; C Annex F leaves
  // signalling NaNs unspecified): no claim. Division and atan2 give NaN under every reading (754 6.2): judged.
  const auto snan = [](std::uint32_t c) { return (c & 0x7fc00000u) == 0x7f800000u && (c & 0x003fffffu) != 0; };
  const bool disputed = (t.fn == math::Fn::Pow || t.fn == math::Fn::Fmax || t.fn == math::Fn::Fmin) && (snan(x1c) || snan(x2c));
  if (disputed) {
    j.ulps = math::ulp_distance(got, ref.code, math::kCodeF32);
    j.claimed = false;
  } else if (t.fdividef_large_x2 && ab > 0x1p126 && ab < 0x1p128) {
    // Documented (CUDA Math API, __fdividef): 0 for finite x1, NaN for infinite x1 (a NaN x1 gives NaN). Judged exactly:
    // that result is the reference (+0 and -0 are one value to ulp_distance).
    ref.code = std::isfinite(a) ? 0u : 0x7fc00000u;
    j.ulps = math::ulp_distance(got, ref.code, math::kCodeF32);
    j.above = j.ulps != 0;
  } else if ((t.x2_lo > 0 || t.x2_hi < std::numeric_limits<double>::infinity()) && !(ab >= t.x2_lo && ab <= t.x2_hi)) {
    j.ulps = math::ulp_distance(got, ref.code, math::kCodeF32);
    j.claimed = false;  // outside the claim's domain (also a NaN x2): in the histogram, not judged
  } else {
    j = math::judge(got, a, ref, math::kCodeF32, t.claim, t.ftz, false);
  }
  tally.add(x1c, got, ref.code, j, x2c);
}

ElementwiseResult eltwise_record(const EltwiseTraits& t, const EltwiseTally& tally) {
  ElementwiseResult e;
  e.function = std::string(math::to_string(t.fn));
  e.in_format = std::string(t.in->tag);
  e.out_format = std::string(t.out->tag);
  e.claim = describe_claim(t.claim);
  e.inputs = tally.inputs;
  e.above_claim = tally.above;
  e.mpfr_decided = tally.mpfr;
  e.undecided = tally.undecided;
  e.unclaimed = tally.unclaimed;
  const int ib = t.in->container_bits / 4, ob = t.out->container_bits / 4;  // hex digits
  auto point = [&](const EltwiseTally::Item& it) {
    ElementwiseResult::Point p;
    p.input_bits = math::arity(t.fn) == 2 ? fmt::format("0x{:08x},0x{:08x}", it.x, it.x2) : fmt::format("0x{:0{}x}", it.x, ib);
    p.got_bits = fmt::format("0x{:0{}x}", it.got, ob);
    p.ref_bits = fmt::format("0x{:0{}x}", it.ref, ob);
    p.input = to_double(*t.in, it.x);
    p.ulps = it.ulps;
    return p;
  };
  if (tally.has_worst) {
    e.max_ulps = tally.worst.ulps;
    e.worst = point(tally.worst);
  }
  for (const auto& it : tally.listed) e.listed.push_back(point(it));
  e.histogram.assign(tally.histogram.begin(), tally.histogram.end());
  return e;
}

}  // namespace fpcert
