// suites/experiments/experiments.cpp — the scalar split-product experiment (CPU or device) and the BF16-on-FP16 study.
#include "suites/experiments/experiments.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>

#include "base/codes.hpp"
#include "base/error.hpp"
#include "base/parallel.hpp"
#include "base/philox.hpp"
#include "generators/generate.hpp"
#include "kernels/device/device_api.hpp"
#include "kernels/emu/split.hpp"
#include "oracle/round.hpp"
#include "suites/ops/gemm/runner.hpp"
#include "suites/run/suite.hpp"
#if defined(FPCERT_HAVE_CUDA)
#include "kernels/register.hpp"  // no CUDA header: split_scalar_products_cuda
#endif

namespace fpcert {
namespace {
double quantize_rna_tf32(float x) {
  return to_double(tf32, round_double(tf32, x, {Rounding::NearestAway, Saturation::Inf, NanPayload::Preserve}).code);
}

std::vector<std::vector<float>> device_products(const std::vector<std::string>& methods, const std::vector<float>& a,
                                                const std::vector<float>& b) {
  std::string why;
  if (!make_cuda_api(&why)) throw DeviceError("split-scalar --device cuda: " + why);
#if defined(FPCERT_HAVE_CUDA)
  return split_scalar_products_cuda(methods, a, b);
#else
  (void)methods, (void)a, (void)b;
  return {};  // unreachable: make_cuda_api fails without CUDA
#endif
}
}  // namespace

std::vector<SplitScalarRow> split_scalar_experiment(std::uint64_t pairs, std::uint64_t seed, int emin, int emax,
                                                    unsigned threads, bool device) {
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
  const std::vector<std::vector<float>> dev = device ? device_products(methods, a, b) : std::vector<std::vector<float>>{};
  std::vector<SplitScalarRow> rows;
  std::vector<double> rel(pairs);
  for (std::size_t mi = 0; mi < methods.size(); ++mi) {
    const std::string& m = methods[mi];
    const SplitScheme* sc = find_split_scheme(m);
    const unsigned slots = thread_count() + 1;
    std::vector<std::int64_t> zeros(slots, 0), mismatches(slots, 0);
    std::vector<std::uint64_t> first(slots, std::numeric_limits<std::uint64_t>::max());
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
        if (device) {
          const float d = dev[mi][i];
          std::uint32_t bd, bp;
          std::memcpy(&bd, &d, 4);
          std::memcpy(&bp, &p, 4);
          // Two NaNs agree (Inf - Inf gives the platform's default NaN: 0xFFC00000 on x86, 0x7FFFFFFF on CUDA).
          if (bd != bp && !(std::isnan(d) && std::isnan(p))) {
            ++mismatches[w];
            first[w] = std::min<std::uint64_t>(first[w], i);
          }
          p = d;
        }
        if (p == 0.0f) ++zeros[w];
        rel[i] = std::fabs(static_cast<double>(p) - exact) / std::fabs(exact);
      }
    }, threads);
    SplitScalarRow r;
    r.method = m;
    r.samples = static_cast<std::int64_t>(pairs);
    for (auto z : zeros) r.zero += z;
    if (device) {
      r.cpu_mismatches = 0;
      for (auto x : mismatches) r.cpu_mismatches += x;
      const std::uint64_t f = *std::min_element(first.begin(), first.end());
      if (r.cpu_mismatches > 0)
        r.first_mismatch = fmt::format("pair {}: a = {:a}, b = {:a}: device {:a}", f, a[f], b[f], dev[mi][f]);
    }
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

// ---- BF16 on FP16 ----

namespace {

/// Runs a kernel once on a problem (inputs rounded to nearest into its input formats) and returns C.
std::vector<float> run_raw(GemmKernel& k, const Problem& p, DeviceApi& api) {
  const KernelTraits& t = k.traits();
  auto encode = [&](const Matrix& x, const Format& f) {
    const int cb = container_bytes(f);
    std::vector<std::uint8_t> out(x.data.size() * static_cast<std::size_t>(cb));
    const Rounder rr{t.input_rounding, default_saturation(f), NanPayload::Preserve};
    for (std::size_t i = 0; i < x.data.size(); ++i)
      store_code(out.data(), static_cast<std::int64_t>(i), cb, to_container(f, round_double(f, x.data[i], rr).code));
    return out;
  };
  const auto ab = encode(p.a, *t.a_input), bb = encode(p.b, *t.b_input);
  const std::size_t cbytes = static_cast<std::size_t>(p.m * p.n) * 4;
  void* da = api.alloc(std::max<std::size_t>(ab.size(), 16));
  void* db = api.alloc(std::max<std::size_t>(bb.size(), 16));
  void* dc = api.alloc(std::max<std::size_t>(cbytes, 16));
  std::vector<float> c(static_cast<std::size_t>(p.m * p.n));
  try {
    api.to_device(da, ab.data(), ab.size());
    api.to_device(db, bb.data(), bb.size());
    GemmOperands ops;
    ops.m = p.m, ops.n = p.n, ops.k = p.k;
    ops.a = da, ops.lda = p.k, ops.b = db, ops.ldb = p.n, ops.c = dc, ops.ldc = p.n;
    ops.stream = api.stream();
    k.run(ops);
    api.synchronize(600000);
    api.to_host(c.data(), dc, cbytes);
  } catch (...) {
    api.free(da), api.free(db), api.free(dc);
    throw;
  }
  api.free(da), api.free(db), api.free(dc);
  return c;
}

Bf16OnF16Stats stats_of(const GemmKernel& k) {
  const auto* s = dynamic_cast<const Bf16OnF16Kernel*>(&k);
  return s ? s->last_stats() : Bf16OnF16Stats{};
}

std::int64_t differing(const std::vector<float>& x, const std::vector<float>& y) {
  std::int64_t d = 0;
  for (std::size_t i = 0; i < x.size(); ++i) d += std::memcmp(&x[i], &y[i], 4) != 0;
  return d;
}

std::unique_ptr<GemmKernel> make_or_throw(const std::string& name) {
  auto k = make_gemm_kernel(name);
  if (!k) throw InputError("kernel '" + name + "' is not registered in this build");
  return k;
}

}  // namespace

Bf16OnF16Report bf16_on_fp16_experiment(bool device, std::int64_t mn, const std::string& command) {
  std::string why;
  std::unique_ptr<DeviceApi> api = device ? make_cuda_api(&why) : make_host_api();
  if (!api) throw DeviceError("bf16-on-fp16 --device cuda: " + why);
  Bf16OnF16Report rep;
  rep.device = api->info().name;
  rep.native = device ? "gemm_bf16_f32acc_mma_sm80" : "model_gemm_bf16_f32acc";
  rep.derived_max_lossless_span = kBf16OnF16MaxLosslessSpan;
  auto kernel_name = [&](const Bf16OnF16Policy& p) { return device ? bf16_on_f16_kernel_name(p) : bf16_on_f16_model_name(p); };

  // The span scan: A's rows span s binades, B = I, so C = A exactly iff every conversion of A is exact.
  std::vector<std::unique_ptr<GemmKernel>> single;
  for (const char* tag : {"rowcol", "tensor"}) single.push_back(make_or_throw(kernel_name(*find_bf16_on_f16_policy(tag))));
  for (int s = 26; s <= 40; ++s) {
    const std::int64_t m = device ? 256 : 64, k = 256;
    Problem p = generate(fmt::format("span:m={},n={},k={},s={},seed={}", m, k, k, s, 500 + s));
    for (std::int64_t q = 0; q < k; ++q)
      for (std::int64_t j = 0; j < k; ++j) p.b(q, j) = q == j ? 1.0 : 0.0;
    for (auto& kern : single) {
      const Support sup = kern->can_implement_shape(p.m, p.n, p.k);
      if (!sup.ok) throw DeviceError(kern->name() + ": not supported: " + sup.reason);
      const std::vector<float> c = run_raw(*kern, p, *api);
      Bf16SpanRow row;
      row.span = s;
      row.kernel = kern->name();
      const Bf16OnF16Stats st = stats_of(*kern);
      row.inexact = st.a.inexact;
      row.subnormal = st.a.subnormal;
      row.overflow = st.a.overflow;
      for (std::size_t x = 0; x < c.size(); ++x) row.c_differs += static_cast<double>(c[x]) != p.a.data[x];
      const bool lossy = row.inexact > 0, lossy_c = row.c_differs > 0;
      rep.measured_consistent = rep.measured_consistent && lossy == (s > kBf16OnF16MaxLosslessSpan) && lossy_c == lossy;
      if (lossy && (rep.measured_first_lossy_span < 0 || s < rep.measured_first_lossy_span)) rep.measured_first_lossy_span = s;
      rep.spans.push_back(row);
    }
  }

  // The suite's cases, every strategy next to the native kernel.
  auto native = make_or_throw(rep.native);
  std::vector<std::unique_ptr<GemmKernel>> ks;
  for (const auto& p : bf16_on_f16_policies()) ks.push_back(make_or_throw(kernel_name(p)));
  SuiteContext ctx;
  ctx.device = device;
  if (mn > 0) ctx.mn = mn;
  ctx.traits = &native->traits();
  ctx.all.push_back(&native->traits());
  for (const auto& k : ks) ctx.all.push_back(&k->traits());
  for (const CaseSpec& cs : find_suite("bf16-on-fp16")->cases(ctx)) {
    const Problem p = generate(cs.spec);
    const GemmRef ref = gemm_reference(p.a.view(), p.b.view());
    CaseSetup setup;
    setup.suite = "bf16-on-fp16";
    setup.case_id = cs.id;
    setup.problem = &p;
    setup.ref = &ref;
    setup.variant = cs.variant;
    setup.repro = command;
    RunOptions ro;
    ro.grade_outside_domain = true;  // the study grades every strategy on every case, its domain or not
    const CaseResult nat = run_case(*native, setup, *api, ro);
    if (nat.status == CaseStatus::NotSupported) throw DeviceError(rep.native + ": not supported: " + nat.reason);
    const std::vector<float> cn = run_raw(*native, p, *api);
    for (auto& k : ks) {
      Bf16OnF16Row row;
      row.case_id = cs.id;
      row.spec = p.spec;
      row.kernel = k->name();
      const CaseResult r = run_case(*k, setup, *api, ro);
      row.status = std::string(to_string(r.status));
      row.reason = r.reason;
      row.gate_fraction = r.gate_fraction;
      row.max_abs = r.metrics.max_abs;
      row.native_max_abs = nat.metrics.max_abs;
      const double floor = std::ldexp(r.metrics.ref_max_abs, -23);
      row.error_ratio = row.max_abs / std::max(row.native_max_abs, floor);
      row.componentwise = r.metrics.componentwise;
      row.native_componentwise = nat.metrics.componentwise;
      row.componentwise_ratio = row.componentwise / std::max(row.native_componentwise, 0x1p-24);
      row.time_ms = r.time_ms_median;
      if (r.status != CaseStatus::NotSupported && r.status != CaseStatus::Crashed && r.status != CaseStatus::Hung) {
        const std::vector<float> c = run_raw(*k, p, *api);
        row.stats = stats_of(*k);
        row.bitwise_differences = differing(c, cn);
        row.elements = static_cast<std::int64_t>(c.size());
      }
      rep.rows.push_back(row);
    }
  }
  return rep;
}

}  // namespace fpcert
