// suites/ops/elementwise/eltwise_runner.cpp — input sets, guarded runs, the device sweep's fold, and the verdict of
// one elementwise case.
#include "suites/ops/elementwise/eltwise_runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <cmath>
#include <mutex>
#include <optional>

#include "base/codes.hpp"
#include "base/error.hpp"
#include "base/fpenv.hpp"
#include "base/parallel.hpp"
#include "base/philox.hpp"
#include "suites/ops/elementwise/eltwise_check.hpp"
#include "suites/run/guarded_buffer.hpp"
#include "suites/run/guarded_input.hpp"

namespace fpcert {

std::string EltwiseInputs::spec() const {
  switch (kind) {
    case Kind::All: return "eltwise:inputs=all";
    case Kind::Sample: return fmt::format("eltwise:inputs=sample,n={},seed={}", n, seed);
    case Kind::Special: return "eltwise:inputs=special";
  }
  return {};
}

EltwiseInputs parse_eltwise_inputs(const std::string& spec) {
  const std::string head = "eltwise:";
  if (spec.rfind(head, 0) != 0) throw InputError("elementwise case spec '" + spec + "' must start with 'eltwise:'");
  EltwiseInputs s;
  bool kind = false;
  std::size_t at = head.size();
  while (at < spec.size()) {
    const std::size_t end = std::min(spec.find(',', at), spec.size());
    const std::string kv = spec.substr(at, end - at);
    const std::size_t eq = kv.find('=');
    if (eq == std::string::npos) throw InputError("elementwise case spec '" + spec + "': '" + kv + "' is not key=value");
    const std::string k = kv.substr(0, eq), v = kv.substr(eq + 1);
    try {
      if (k == "inputs") {
        kind = true;
        if (v == "all") s.kind = EltwiseInputs::Kind::All;
        else if (v == "sample") s.kind = EltwiseInputs::Kind::Sample;
        else if (v == "special") s.kind = EltwiseInputs::Kind::Special;
        else throw InputError("inputs=" + v);
      } else if (k == "n") {
        s.n = std::stoull(v);
      } else if (k == "seed") {
        s.seed = std::stoull(v, nullptr, 0);
      } else {
        throw InputError("unknown key '" + k + "'");
      }
    } catch (const std::logic_error&) {
      throw InputError("elementwise case spec '" + spec + "': bad value in '" + kv + "'");
    } catch (const InputError& e) {
      throw InputError("elementwise case spec '" + spec + "': " + e.what() + " (keys: inputs=all|sample|special, n, seed)");
    }
    at = end + 1;
  }
  if (!kind) throw InputError("elementwise case spec '" + spec + "' has no inputs=");
  if (s.kind == EltwiseInputs::Kind::Sample && s.n == 0) throw InputError("elementwise case spec '" + spec + "': sample needs n > 0");
  return s;
}

namespace {

/// The range of x where f(x) is a finite, nonzero fp32 value or close to it (a sample's second half): a little beyond
/// f32's overflow threshold and the underflow to 0 of its least subnormal.
void finite_range(math::Fn f, double& lo, double& hi) {
  switch (f) {
    case math::Fn::Exp: lo = -104.5, hi = 89.0; return;
    case math::Fn::Exp2: lo = -151.0, hi = 128.5; return;
    case math::Fn::Exp10: lo = -45.5, hi = 38.7; return;
    case math::Fn::Expm1: lo = -20.0, hi = 89.0; return;  // from near -1 to the overflow threshold
    case math::Fn::Log1p: lo = -1.0, hi = 1.0; return;    // odd draws: (-1, 1); see below for the positive binades
    case math::Fn::Tanh: lo = -12.0, hi = 12.0; return;   // tanh reaches 1 in f32 (round-to-nearest) above 9.01
    case math::Fn::Sinh:
    case math::Fn::Cosh: lo = -90.0, hi = 90.0; return;   // f32 overflows beyond +-89.42
    case math::Fn::Erf: lo = -6.0, hi = 6.0; return;      // f32 results reach +-1 (round-to-nearest) beyond 3.92
    case math::Fn::Erfc: lo = -6.0, hi = 10.5; return;    // erfc underflows to 0 in f32 above 10.05; reaches 2 below -3.92
    case math::Fn::Sigmoid:
    case math::Fn::Silu:
    case math::Fn::Softplus: lo = -100.0, hi = 45.0; return;  // past the references' clamps (-127 is far: results subnormal)
    case math::Fn::GeluErf:
    case math::Fn::GeluTanh: lo = -12.0, hi = 12.0; return;
    case math::Fn::Sin:
    case math::Fn::Cos:
    case math::Fn::Tan: lo = -100.0, hi = 100.0; return;  // the random patterns reach every magnitude
    case math::Fn::Sinpi:
    case math::Fn::Cospi: lo = -8.0, hi = 8.0; return;
    default: lo = -149.0, hi = 128.0; return;  // logs: log2 of the input, over every positive binade
  }
}

std::uint32_t bits(float x) {
  std::uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

}  // namespace

std::uint64_t eltwise_input_count(const EltwiseInputs& s, const EltwiseTraits& t) {
  if (math::arity(t.fn) == 2) {
    std::vector<std::uint32_t> a, b;
    if (s.kind != EltwiseInputs::Kind::Sample) eltwise_input_pairs(s, t, a, b);
    return s.kind == EltwiseInputs::Kind::Sample ? s.n : a.size();
  }
  if (s.kind == EltwiseInputs::Kind::All) return std::uint64_t{1} << t.in->container_bits;
  if (s.kind == EltwiseInputs::Kind::Sample) return s.n;
  return eltwise_input_codes(s, t).size();
}

std::vector<std::uint32_t> eltwise_input_codes(const EltwiseInputs& s, const EltwiseTraits& t) {
  std::vector<std::uint32_t> c;
  const bool wide = t.in->container_bits == 32;
  if (s.kind == EltwiseInputs::Kind::Sample) {
    // Even indices: a random bit pattern (the whole domain, half of it NaN or out of range); odd: uniform in the range
    // where the result is finite and nonzero, rounded to the input format. Philox (base/philox.hpp): the same on every
    // machine.
    double lo = 0, hi = 0;
    finite_range(t.fn, lo, hi);
    c.reserve(s.n);
    for (std::uint64_t i = 0; i < s.n; ++i) {
      const auto w = philox_4x32(s.seed, 0x656c74, i);
      if (i % 2 == 0) {
        c.push_back(wide ? w[0] : w[0] & 0xffffu);
        continue;
      }
      const double u = static_cast<double>((static_cast<std::uint64_t>(w[1]) << 21) ^ w[2]) * 0x1p-53;  // [0, 1)
      float x = static_cast<float>(lo + u * (hi - lo));
      // logs: positive inputs spread over the binades (2^u), one in two of them within 2^-5 of 1 (results near 0)
      // log1p: one in two of the odd draws spread over the positive binades (2^u), the others uniform in (-1, 1)
      if (t.fn == math::Fn::Log1p && i % 4 == 1) x = static_cast<float>(std::exp2(-149.0 + u * 277.0));
      // cbrt: both signs over every binade of f32 (2^u)
      if (t.fn == math::Fn::Cbrt) x = static_cast<float>((i % 4 == 1 ? 1.0 : -1.0) * std::exp2(-149.0 + u * 277.0));
      if (math::positive_domain(t.fn)) x = (i % 4 == 1) ? static_cast<float>(std::exp2(lo + u * (hi - lo))) : static_cast<float>(1.0 + (u - 0.5) * 0x1p-4);
      const Rounder rn{Rounding::NearestEven, Saturation::Inf, NanPayload::Preserve};
      c.push_back(wide ? bits(x) : static_cast<std::uint32_t>(round_double(*t.in, x, rn).code));
    }
    return c;
  }
  if (s.kind == EltwiseInputs::Kind::Special) {
    // Special values and the thresholds of every destination: 0, Inf, NaN (quiet, signalling, negative), subnormals,
    // the 2^-60 shortcut of the reference, integers, the overflow, underflow-to-subnormal and underflow-to-zero
    // thresholds of f32, f16 and bf16 (log_b of the largest finite, least normal, least subnormal and half of it),
    // +-8 codes around each; CORE-MATH's hard case of exp10f (-0x1.4de862p+3).
    std::vector<double> xs = {0.0, -0.0, INFINITY, -INFINITY, NAN, -NAN, 0x1p-149, -0x1p-149, 0x1p-126, 0x1p-60, -0x1p-60,
                              0x1p-24, -0x1p-24, 1.0, -1.0, -0x1.4de862p+3};
    for (int i = -160; i <= 130; ++i) xs.push_back(i);
    if (math::is_log(t.fn)) {
      // logs: every power of two, ten and e in the fp32 range (exact results and their neighbours), negatives, the
      // largest finite and least subnormal of each format.
      for (int k = -149; k <= 127; ++k) xs.push_back(std::ldexp(1.0, k));
      for (int k = -45; k <= 38; ++k) xs.push_back(std::pow(10.0, k));
      for (int k = -103; k <= 88; ++k) xs.push_back(std::exp(static_cast<double>(k)));
      for (const Format* f : {&f32, &f16, &bf16})
        for (double v : {f->max_finite(), f->min_normal(), f->min_subnormal()}) xs.push_back(v);
      for (double v : {-1.0, -0x1p-149, -3.5, 0.5, 2.0}) xs.push_back(v);
    } else if (t.fn == math::Fn::Expm1 || t.fn == math::Fn::Log1p || t.fn == math::Fn::Tanh || t.fn == math::Fn::Sinh ||
               t.fn == math::Fn::Cosh) {
      // expm1, log1p: +-2^k (tiny inputs: f(x) ~ x; every binade), the switches of the fast path (+-1/8, +-2^-5), the
      // clamps (-40, 90), the overflow threshold of each format (log of its largest finite, and of it + 1), -1 and its
      // neighbours (log1p -> -Inf; its least results), the ends of the formats.
      for (int k = -149; k <= 127; ++k) xs.push_back(std::ldexp(1.0, k)), xs.push_back(-std::ldexp(1.0, k));
      for (double v : {0.125, -0.125, 0x1p-5, -0x1p-5, -40.0, 90.0, -1.0, -0.75, 0.5, 2.0, 88.7, 0.0625, -0.0625, 9.01, -9.01, 20.0,
                       -20.0, 4.5, -4.5, -88.7, 89.4159, -89.4159, 11.09, -11.09, 0x1p-30, -0x1p-30})
        // tanh: the switch at |2x| = 1/8, where f32/f16 results reach 1, the clamp; sinh/cosh: f32's and f16's overflow
        // thresholds (89.4159, 11.09), cosh's shortcut near 0
        xs.push_back(v);
      for (const Format* f : {&f32, &f16, &bf16})
        for (double v : {f->max_finite(), f->min_normal(), f->min_subnormal()}) {
          xs.push_back(std::log(v));
          xs.push_back(std::log1p(v));
          xs.push_back(v);
          xs.push_back(-v);
        }
    } else if (math::is_root(t.fn)) {
      // sqrt, rsqrt: every power of two (exact results for even powers), the squares k^2 of k <= 4096 and their
      // neighbours (exact sqrt; rsqrt of 4^n exact), the ends of every format, negatives (NaN).
      for (int k = -149; k <= 127; ++k) xs.push_back(std::ldexp(1.0, k));
      for (int k = 1; k <= 4096; k += (k < 64 ? 1 : 37)) xs.push_back(static_cast<double>(k) * k);
      for (const Format* f : {&f32, &f16, &bf16})
        for (double v : {f->max_finite(), f->min_normal(), f->min_subnormal()}) xs.push_back(v);
      for (double v : {-1.0, -0x1p-149, -4.0}) xs.push_back(v);
    } else if (t.fn == math::Fn::Cbrt) {
      // cbrt: +-2^k (exact for k a multiple of 3), the cubes k^3 of k <= 255 (exact results) and their neighbours.
      for (int k = -149; k <= 127; ++k) xs.push_back(std::ldexp(1.0, k)), xs.push_back(-std::ldexp(1.0, k));
      for (int k = 1; k <= 255; ++k) xs.push_back(static_cast<double>(k) * k * k), xs.push_back(-static_cast<double>(k) * k * k);
    } else if (math::is_trig(t.fn)) {
      // trig: tiny and huge +-2^k, floats nearest k pi/4 (k <= 200: results near 0, +-1 and tan's poles), integers and
      // half-integers (sinpi/cospi's exact results), pi itself (the intrinsics' claim interval).
      for (int k = -149; k <= 127; ++k) xs.push_back(std::ldexp(1.0, k)), xs.push_back(-std::ldexp(1.0, k));
      for (int k = 1; k <= 200; ++k) xs.push_back(k * 0.78539816339744830962), xs.push_back(-k * 0.78539816339744830962);
      for (int k = -16; k <= 16; ++k) xs.push_back(k * 0.5), xs.push_back(k * 0.5 + 0.25);
      xs.push_back(3.14159265358979323846);
      xs.push_back(-3.14159265358979323846);
    } else if (math::is_activation(t.fn)) {
      // activations: tiny +-2^k, the references' clamps (40, -127, -140; 10, -15, -20), PyTorch's softplus threshold 20,
      // where __expf(-x) overflows (-88.72) and results leave the normal range (-87), the GELU claims' interval ends +-4.
      for (int k = -149; k <= 6; ++k) xs.push_back(std::ldexp(1.0, k)), xs.push_back(-std::ldexp(1.0, k));
      for (double v : {40.0, -127.0, -140.0, 10.0, -10.0, -15.0, -20.0, 20.0, -17.0, -87.0, -88.72, 88.72, 4.0, -4.0, 0.5, -0.5})
        xs.push_back(v);
    } else if (t.fn == math::Fn::Erf || t.fn == math::Fn::Erfc) {
      // erf, erfc: tiny +-2^k (erf x ~ 2x/sqrt(pi), erfc x ~ 1), the reference's clamps +-7 and 12, where f32 results reach
      // +-1 / 2 (3.92), erfc's underflow to subnormal (9.19) and to 0 (10.05) in f32, and f16's (3.9, 4.5), 1/2 and 2.
      for (int k = -149; k <= 2; ++k) xs.push_back(std::ldexp(1.0, k)), xs.push_back(-std::ldexp(1.0, k));
      for (double v : {7.0, -7.0, 12.0, 3.92, -3.92, 9.19, 10.05, 3.9, 4.5, 0.5, 2.0, 6.0, -6.0, 26.5})
        xs.push_back(v);
    } else {
      const double base = t.fn == math::Fn::Exp ? std::exp(1.0) : t.fn == math::Fn::Exp2 ? 2.0 : 10.0;
      for (const Format* f : {&f32, &f16, &bf16})
        for (double v : {f->max_finite(), f->min_normal(), f->min_subnormal(), f->min_subnormal() / 2})
          xs.push_back(std::log(v) / std::log(base));
    }
    const Rounder rn{Rounding::NearestEven, Saturation::Inf, NanPayload::Preserve};
    for (double x : xs) {
      const std::uint32_t code = wide ? bits(static_cast<float>(x)) : static_cast<std::uint32_t>(round_double(*t.in, x, rn).code);
      const bool finite = std::isfinite(x);
      for (int d = finite ? -8 : 0; d <= (finite ? 8 : 0); ++d) c.push_back(code + static_cast<std::uint32_t>(d));
    }
    if (wide) c.push_back(0x7f800001u);  // a signalling NaN
    else c.push_back(static_cast<std::uint32_t>(t.in->inf_code() | 1));
    std::sort(c.begin(), c.end());
    c.erase(std::unique(c.begin(), c.end()), c.end());
    if (!wide) c.erase(std::remove_if(c.begin(), c.end(), [](std::uint32_t v) { return v > 0xffffu; }), c.end());
    return c;
  }
  return c;
}

CaseResult eltwise_skeleton(const ElementwiseKernel& k, const EltwiseCaseSetup& s) {
  const EltwiseTraits& t = k.eltwise_traits();
  CaseResult r;
  r.suite = s.suite;
  r.case_id = s.case_id;
  r.family = s.family;
  r.kernel = k.name();
  r.kernel_traits = describe_eltwise_traits(t);
  r.backend = std::string(to_string(k.backend()));
  r.spec = s.inputs.spec();
  r.repro = s.repro;
  r.source_format = std::string(t.in->tag);
  r.out_format = std::string(t.out->tag);
  r.n = r.k = 1;
  return r;
}

namespace {

/// Results of a guarded run over a list of input codes (or a range), handed to `use` chunk by chunk.
struct RunFindings {
  std::int64_t unwritten = 0, first_unwritten = -1, out_guard = 0;
  InputReport inputs;
  double ms = 0;
};

constexpr std::uint64_t kChunk = std::uint64_t{1} << 22;

/// Run the kernel on codes [first, first + n) (codes == nullptr) or on codes[0 .. n), chunk by chunk, through guarded
/// buffers; use(offset, inputs, outputs) per chunk. Returns false when the kernel failed (r holds why).
/// codes2: a binary function's second operand, codes2[0 .. n) beside codes (its own guarded input).
bool run_inputs(ElementwiseKernel& k, DeviceApi& api, const RunOptions& opt, CaseResult& r, std::uint64_t first, const std::uint32_t* codes,
                std::uint64_t n, RunFindings& f,
                const std::function<void(std::uint64_t, const std::vector<std::uint32_t>&, const std::vector<std::uint32_t>&)>& use,
                const std::uint32_t* codes2 = nullptr) {
  const EltwiseTraits& t = k.eltwise_traits();
  const int ib = container_bytes(*t.in), ob = container_bytes(*t.out);
  const std::uint64_t pre = to_container(*t.out, prefill_code(*t.out));
  std::vector<std::uint32_t> xs, ys;
  for (std::uint64_t at = 0; at < n; at += kChunk) {
    const std::uint64_t m = std::min(kChunk, n - at);
    xs.resize(m);
    for (std::uint64_t i = 0; i < m; ++i) xs[i] = codes ? codes[at + i] : static_cast<std::uint32_t>(first + at + i);
    std::vector<std::uint8_t> packed(m * static_cast<std::size_t>(ib)), packed2(codes2 ? packed.size() : 0);
    for (std::uint64_t i = 0; i < m; ++i) store_code(packed.data(), static_cast<std::int64_t>(i), ib, xs[i]);
    for (std::uint64_t i = 0; codes2 && i < m; ++i) store_code(packed2.data(), static_cast<std::int64_t>(i), ib, codes2[at + i]);
    const auto cols = static_cast<std::int64_t>(m);
    const bool ok = run_kernel_guarded(r, [&] {
      GuardedInput dx(api, packed, 1, cols, cols, ib, opt.guard_bytes, false);
      std::optional<GuardedInput> dx2;
      if (codes2) dx2.emplace(api, packed2, 1, cols, cols, ib, opt.guard_bytes, false);
      GuardedBuffer dy(api, m * static_cast<std::size_t>(ob), opt.guard_bytes);
      dy.prefill(1, cols, cols, ob, pre);
      EltwiseOperands ops{cols, dx.elements(), dy.elements(), api.stream(), dx2 ? dx2->elements() : nullptr};
      api.timer_start();
      k.run(ops);
      f.ms += api.timer_stop_ms();
      api.synchronize(opt.timeout_ms);
      const GuardReport g = dy.download_and_check();
      f.out_guard += g.changed;
      for (GuardedInput* in : {&dx, dx2 ? &*dx2 : nullptr}) {
        if (!in) continue;
        const InputReport q = in->check();
        if (!f.inputs.modified && q.modified) f.inputs.first_modified = static_cast<std::int64_t>(at) + q.first_modified;
        if (!f.inputs.guard_changed && q.guard_changed) f.inputs.first_guard = q.first_guard;
        f.inputs.modified += q.modified;
        f.inputs.guard_changed += q.guard_changed;
      }
      ys.resize(m);
      for (std::uint64_t i = 0; i < m; ++i) {
        const std::uint64_t c = dy.code(0, static_cast<std::int64_t>(i));
        // Unwritten: still the pre-fill NaN. A NaN input's result may be any NaN, the pre-fill's too (a quieted NaN
        // input of that payload): not counted there.
        if (c == pre && !std::isnan(to_double(*t.in, xs[i])) && !(codes2 && std::isnan(to_double(*t.in, codes2[at + i])))) {
          if (f.first_unwritten < 0) f.first_unwritten = static_cast<std::int64_t>(at + i);
          ++f.unwritten;
        }
        ys[i] = static_cast<std::uint32_t>(from_container(*t.out, c));
      }
    });
    if (!ok) return false;
    use(at, xs, ys);
  }
  return true;
}

/// Judge a chunk's results in parallel, folded into `tally`.
void judge_chunk(const EltwiseTraits& t, const std::vector<std::uint32_t>& xs, const std::vector<std::uint32_t>& ys, EltwiseTally& tally) {
  std::mutex mu;
  parallel_for(xs.size(), 1 << 14, [&](std::uint64_t b, std::uint64_t e, unsigned) {
    EltwiseTally part;
    for (std::uint64_t i = b; i < e; ++i) eltwise_check_one(t, xs[i], ys[i], part);
    const std::lock_guard<std::mutex> lock(mu);
    tally.merge(part);
  });
}

/// Judge a binary function's chunk: results ys of the pairs (xs[i], x2s[i]).
void judge_chunk2(const EltwiseTraits& t, const std::vector<std::uint32_t>& xs, const std::uint32_t* x2s, const std::vector<std::uint32_t>& ys,
                  EltwiseTally& tally) {
  std::mutex mu;
  parallel_for(xs.size(), 1 << 12, [&](std::uint64_t b, std::uint64_t e, unsigned) {
    EltwiseTally part;
    for (std::uint64_t i = b; i < e; ++i) eltwise_check_two(t, xs[i], x2s[i], ys[i], part);
    const std::lock_guard<std::mutex> lock(mu);
    tally.merge(part);
  });
}

}  // namespace

CaseResult run_eltwise_case(ElementwiseKernel& kernel, const EltwiseCaseSetup& s, DeviceApi& api, const RunOptions& opt) {
  const auto wall0 = std::chrono::steady_clock::now();
  const EltwiseTraits& t = kernel.eltwise_traits();
  CaseResult r = eltwise_skeleton(kernel, s);
  auto finish = [&]() -> CaseResult {
    r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    return r;
  };
  if (const std::string why = eltwise_traits_problem(t); !why.empty()) {
    r.checks.push_back({CheckKind::Declaration, false, "the kernel's declarations cannot be checked: " + why});
    decide(r);
    return finish();
  }
  if (std::string why = memory_mismatch(kernel, api); !why.empty()) {
    r.status = CaseStatus::NotSupported;
    r.reason = std::move(why);
    return finish();
  }
  (void)math::exp_tables();  // the tables once, before the threads
  (void)math::log_tables();
  EltwiseTally tally;
  RunFindings f;
  std::string sweep = "exhaustive", note;
  const std::uint64_t count = eltwise_input_count(s.inputs, t);
  r.m = static_cast<std::int64_t>(count);
  bool ok = true;
  if (s.inputs.kind == EltwiseInputs::Kind::All && s.device_sweep && kernel.can_sweep()) {
    // The device sweep: chunks of at most 2^30 codes; the device judged every decided input, the host decides the
    // rest with MPFR and recomputes the listed and the worst (its result by one guarded run of that input).
    sweep = "device";
    const std::uint64_t step = std::uint64_t{1} << 30;
    std::uint64_t worst_key = 0;
    bool incomplete = false;
    ok = run_kernel_guarded(r, [&] {
      for (std::uint64_t at = 0; at < count; at += step) {
        const EltwiseSweepChunk c = kernel.sweep(at, std::min(step, count - at), EltwiseTally::kListed);
        f.ms += c.kernel_ms;
        incomplete = incomplete || c.undecided_overflow;
        for (std::size_t i = 0; i < c.histogram.size(); ++i) tally.histogram[i] += c.histogram[i];
        tally.above += c.above;
        tally.unclaimed += c.unclaimed;
        tally.inputs += c.count - c.undecided.size();
        worst_key = std::max(worst_key, c.worst);
        for (const auto& it : c.listed) {
          EltwiseTally one;
          eltwise_check_one(t, it.x, it.got, one);
          if (!one.listed.empty()) tally.listed.push_back(one.listed.front());
        }
        for (const auto& it : c.undecided) eltwise_check_one(t, it.x, it.got, tally);
      }
    });
    std::sort(tally.listed.begin(), tally.listed.end(), [](const auto& a, const auto& b) { return a.x < b.x; });
    if (tally.listed.size() > EltwiseTally::kListed) tally.listed.resize(EltwiseTally::kListed);
    if (ok && worst_key != 0) {
      const auto wx = static_cast<std::uint32_t>(0xffffffffu - (worst_key & 0xffffffffu));
      EltwiseTally one;
      ok = run_inputs(kernel, api, opt, r, 0, &wx, 1, f, [&](std::uint64_t, const auto& xs, const auto& ys) {
        eltwise_check_one(t, xs[0], ys[0], one);
      });
      const std::uint64_t device_ulps = worst_key >> 32;
      if (ok && one.has_worst && (!tally.has_worst || one.worst.ulps > tally.worst.ulps)) {
        if (std::min<std::uint64_t>(one.worst.ulps, 0x7fffffff) != device_ulps)
          r.flags.push_back(fmt::format("sweep-run-disagree: at input 0x{:x} the sweep measured {} ulp, a guarded run {} ulp", wx,
                                        device_ulps, one.worst.ulps));
        tally.worst = one.worst;
        tally.has_worst = true;
      }
    }
    if (incomplete) {
      r.status = CaseStatus::Error;
      r.reason = "the device sweep found more undecided inputs than its buffer holds: the check is incomplete";
    }
  } else if (math::arity(t.fn) == 2) {
    // A binary function: pairs (special, or the designed sample), MPFR decides each reference on the host.
    sweep = s.inputs.kind == EltwiseInputs::Kind::Sample ? "sampled" : "special";
    std::vector<std::uint32_t> a, b;
    eltwise_input_pairs(s.inputs, t, a, b);
    r.m = static_cast<std::int64_t>(a.size());
    note = s.inputs.kind == EltwiseInputs::Kind::Sample
               ? fmt::format("{} Philox input pairs (seed {}): random bit patterns, both near 1, huge and tiny ratios, the edges of "
                             "__fdividef's domain, subnormals, the function's hard cases, results near overflow and underflow",
                             s.inputs.n, s.inputs.seed)
               : fmt::format("every pair of {} special values (zeros, infinities, NaNs, +-1, subnormal, max, domain edges)",
                             static_cast<std::size_t>(std::sqrt(static_cast<double>(a.size()))));
    ok = run_inputs(
        kernel, api, opt, r, 0, a.data(), a.size(), f,
        [&](std::uint64_t at, const auto& xs, const auto& ys) { judge_chunk2(t, xs, b.data() + at, ys, tally); }, b.data());
  } else if (s.inputs.kind == EltwiseInputs::Kind::All) {
    ok = run_inputs(kernel, api, opt, r, 0, nullptr, count, f, [&](std::uint64_t, const auto& xs, const auto& ys) { judge_chunk(t, xs, ys, tally); });
  } else {
    sweep = s.inputs.kind == EltwiseInputs::Kind::Sample ? "sampled" : "special";
    const std::vector<std::uint32_t> codes = eltwise_input_codes(s.inputs, t);
    r.m = static_cast<std::int64_t>(codes.size());
    note = s.inputs.kind == EltwiseInputs::Kind::Sample
               ? fmt::format("{} Philox inputs (seed {}): half random bit patterns, half uniform where the result is finite", s.inputs.n, s.inputs.seed)
               : "special values and the overflow/underflow thresholds of f32, f16, bf16, +-8 codes around each";
    ok = run_inputs(kernel, api, opt, r, 0, codes.data(), codes.size(), f,
                    [&](std::uint64_t, const auto& xs, const auto& ys) { judge_chunk(t, xs, ys, tally); });
  }
  pin_fp_env();
  if (!ok) return finish();
  auto e = std::make_shared<ElementwiseResult>(eltwise_record(t, tally));
  e->sweep = sweep;
  e->inputs_note = note;
  e->seconds = f.ms / 1e3;
  r.time_ms_median = r.time_ms_mean = f.ms;
  r.timed_runs = 1;
  r.metrics.ulp_max = static_cast<double>(e->max_ulps);
  r.tier = Tier::Envelope;
  std::string first;
  if (!e->listed.empty()) {
    const auto& p = e->listed.front();
    first = fmt::format("; first: x = {} ({:.9g}) gives {}, correctly rounded {} ({} ulp)", p.input_bits, p.input, p.got_bits, p.ref_bits,
                        p.ulps == math::kNanDistance ? std::string("NaN on one side") : std::to_string(p.ulps));
  }
  const std::string where = e->max_ulps ? fmt::format(" at x = {} ({:.9g})", e->worst.input_bits, e->worst.input) : std::string();
  r.checks.push_back({CheckKind::Envelope, e->above_claim == 0,
                      fmt::format("claim {}: {} of {} results beyond it; largest error {} ulp{}{}", e->claim, e->above_claim, e->inputs,
                                  e->max_ulps == math::kNanDistance ? std::string("(NaN on one side)") : std::to_string(e->max_ulps), where, first),
                      e->listed.empty() ? -1 : static_cast<std::int64_t>(std::stoull(e->listed.front().input_bits, nullptr, 16)),
                      static_cast<double>(e->max_ulps), t.claim.kind == math::ClaimKind::Ulp ? t.claim.ulps : 0});
  if (f.unwritten)
    r.checks.push_back({CheckKind::Unwritten, false, fmt::format("{} outputs never written (first at input #{})", f.unwritten, f.first_unwritten),
                        f.first_unwritten});
  if (f.out_guard) r.checks.push_back({CheckKind::GuardOutput, false, fmt::format("{} guard bytes around the output changed", f.out_guard)});
  if (f.inputs.modified)
    r.checks.push_back({CheckKind::InputsModified, false, fmt::format("{} inputs changed by the call", f.inputs.modified), f.inputs.first_modified});
  if (f.inputs.guard_changed)
    r.checks.push_back({CheckKind::GuardInputs, false, fmt::format("{} guard bytes around the inputs changed: {}", f.inputs.guard_changed, f.inputs.first_guard)});
  if (e->undecided)
    r.flags.push_back(fmt::format("undecided: {} results within the reference's uncertainty (2^-47 relative) of the claimed bound", e->undecided));
  if (e->mpfr_decided) r.flags.push_back(fmt::format("mpfr: {} references decided by MPFR (the fast bracket straddled a boundary)", e->mpfr_decided));
  if (e->inputs > 0) r.evidence.push_back("claim");
  r.elementwise = e;
  if (r.status != CaseStatus::Error) decide(r);
  return finish();
}

}  // namespace fpcert
