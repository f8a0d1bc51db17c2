// tests/kernels/gemm/epilogue_gpu_test.cpp — the CUDA subjects with fused epilogues (issue 37; docs/epilogue.md, "CUDA
// subjects"): the cuBLASLt built-ins (cublaslt_*) and the SIMT built-ins (simt_*_epilogue_cuda) on every epilogue they
// declare, checked two ways:
//  1. on their own (no runner, no grader): inputs whose products and sums are exact in fp32 (multiples of 2^-8 for
//     16-bit inputs, of 2^-4 for e4m3), so the only errors left are the epilogue's and the output's, and each element
//     of D must lie within a derived allowance of scale_d act(alpha' A B + beta C + bias) computed in double (glibc's
//     erf / tanh / exp, within an ulp of double: negligible here); amax within the same allowance of max |act(Z)|;
//  2. on the certify suite's epilogue cases through the runner and the epilogue grader (suites/ops/gemm/epilogue.hpp):
//     every case passes or is "not supported" for a reason the kernel declares, and each subject passes some;
//  3. what the cuBLASLt subjects declare about their GELU (Z rounded to D's format before the activation, the fp32
//     GELU within func_rel_err / 2 |z| of the exact tanh form), re-measured on 65,536 arguments per format through
//     cublaslt_gelu_sample, against RN of double-precision values (oracle/round.hpp) and the tanh form in double.
// Label gpu (exit 77 without a device). FPCERT_TEST_SEED reproduces the data.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <numbers>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "kernels/device/device_api.hpp"
#include "kernels/gemm/cublaslt/cublaslt_gelu_sample.hpp"
#include "kernels/kernel.hpp"
#include "oracle/round.hpp"
#include "suites/ops/gemm/epilogue.hpp"
#include "suites/run/suite.hpp"
#include "tests/support/run_case.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;

namespace {

const char* kSubjects[] = {"cublaslt_bf16_epilogue", "cublaslt_f16_epilogue", "cublaslt_e4m3_scaled_bf16out",
                           "cublaslt_e4m3_scaled_e4m3out", "simt_f32_epilogue_cuda", "simt_bf16_epilogue_cuda"};

std::uint64_t mix(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

/// A value j / q with |j| <= top (default q - 1), j uniform: exact in the format when q = 2^p with p its precision.
double draw(std::uint64_t& s, double q, std::int64_t top = 0) {
  if (top == 0) top = static_cast<std::int64_t>(q) - 1;
  return static_cast<double>(static_cast<std::int64_t>(mix(s) % static_cast<std::uint64_t>(2 * top + 1)) - top) / q;
}

struct Buf {
  DeviceApi& api;
  void* p;
  Buf(DeviceApi& a, std::size_t bytes) : api(a), p(a.alloc(std::max<std::size_t>(bytes, 16))) {}
  ~Buf() { api.free(p); }
  Buf(const Buf&) = delete;
  Buf& operator=(const Buf&) = delete;
};

/// Codes of `f` in its container, little-endian bytes.
std::vector<std::uint8_t> pack(const Format& f, const std::vector<double>& v) {
  const int cb = container_bytes(f);
  std::vector<std::uint8_t> out(v.size() * static_cast<std::size_t>(cb));
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::uint64_t c = to_container(f, round_double(f, v[i], Rounder::nearest(f)).code);
    std::memcpy(out.data() + i * static_cast<std::size_t>(cb), &c, static_cast<std::size_t>(cb));
  }
  return out;
}
double unpack(const Format& f, const std::vector<std::uint8_t>& bytes, std::size_t i) {
  std::uint64_t c = 0;
  std::memcpy(&c, bytes.data() + i * static_cast<std::size_t>(container_bytes(f)), static_cast<std::size_t>(container_bytes(f)));
  return to_double(f, from_container(f, c));
}

double act_exact(Activation a, double z) {
  switch (a) {
    case Activation::Relu: return z < 0 ? 0 : z;
    case Activation::GeluErf: return 0.5 * z * (1 + std::erf(z / std::sqrt(2.0)));
    case Activation::GeluTanh: return 0.5 * z * (1 + std::tanh(std::sqrt(2 / std::numbers::pi) * (z + 0.044715 * z * z * z)));
    case Activation::Silu: return z / (1 + std::exp(-z));
    default: return z;
  }
}

struct Epi {
  BiasKind bias = BiasKind::None;
  Activation act = Activation::None;
  double alpha = 1, beta = 0;
  bool in_place = false;
  std::int64_t batch = 1;
  double scale_a = 1, scale_b = 1, scale_d = 1;
  bool amax = false;
};

std::string describe(const Epi& e) {
  char buf[200];
  std::snprintf(buf, sizeof buf, "bias %s, %s, alpha %g beta %g%s, batch %lld, scales %g/%g/%g%s", std::string(to_string(e.bias)).c_str(),
                std::string(to_string(e.act)).c_str(), e.alpha, e.beta, e.in_place ? " in place" : "", static_cast<long long>(e.batch),
                e.scale_a, e.scale_b, e.scale_d, e.amax ? ", amax" : "");
  return buf;
}

/// Run one epilogue on the subject and check every element (the file's comment, 1). Returns false when the kernel
/// answered "not supported" (printed).
bool check_epilogue(GemmKernel& k, DeviceApi& api, const Epi& e, std::uint64_t seed) {
  const KernelTraits& t = k.traits();
  const Format &in = *t.a_input, &out = *t.out, &bias_f = t.epilogue.bias_format ? *t.epilogue.bias_format : out;
  const bool fp8 = in == e4m3;
  const double q = fp8 ? 16 : 256;  // exact inputs (the file's comment)
  const std::int64_t m = 48, n = 64, kk = 64, nb = e.batch;
  // FP8 takes A row-major and B column-major only ("TN" for cuBLASLt); the others: B column-major too, to cover a
  // transposed operand (every subject declares it).
  const GemmLayout layout{Layout::RowMajor, Layout::ColMajor, Layout::RowMajor};
  REQUIRE(k.can_implement_layout(layout).ok);
  const std::int64_t lda = kk, ldb = kk, ldc = n, sa = m * lda, sb = 0, sc = m * ldc;  // B broadcast over batches
  std::uint64_t s = seed;
  std::vector<double> A(static_cast<std::size_t>(nb * sa)), B(static_cast<std::size_t>(n * ldb)), C(static_cast<std::size_t>(nb * sc)),
      bias(static_cast<std::size_t>(e.bias == BiasKind::PerRow ? m : n));
  // e4m3: j / 16 with |j| <= 7, so |Z| < 64 x 49 / 256 < 2^4 on a grid of 2^-8: 12 significant bits, exact even in
  // the ~14-bit accumulator of FP8 tensor cores (DeepSeek-V3 report, sec. 3.3.2), whatever the promotion interval.
  for (double& v : A) v = draw(s, q, fp8 ? 7 : 0);
  for (double& v : B) v = draw(s, q, fp8 ? 7 : 0);
  for (double& v : C) v = to_double(out, round_double(out, draw(s, 256) * (fp8 ? 4 : 1), Rounder::nearest(out)).code);
  for (double& v : bias) v = to_double(bias_f, round_double(bias_f, 2 * draw(s, 256), Rounder::nearest(bias_f)).code);
  const std::vector<std::uint8_t> a8 = pack(in, A), b8 = pack(in, B), c8 = pack(out, C), bias8 = pack(bias_f, bias);
  Buf da(api, a8.size()), db(api, b8.size()), dc(api, c8.size()), dcin(api, c8.size()), dbias(api, bias8.size()), damax(api, 4);
  api.to_device(da.p, a8.data(), a8.size());
  api.to_device(db.p, b8.data(), b8.size());
  api.to_device(dbias.p, bias8.data(), bias8.size());
  // D pre-filled with NaN (0xFF bytes: a NaN in every format here); C apart, or in D's buffer when in place.
  std::vector<std::uint8_t> nan(c8.size(), 0xFF);
  api.to_device(dc.p, e.in_place ? c8.data() : nan.data(), c8.size());
  api.to_device(dcin.p, c8.data(), c8.size());
  const std::uint32_t amax_nan = 0xFFFFFFFFu;
  api.to_device(damax.p, &amax_nan, 4);
  GemmOperands ops;
  ops.m = m, ops.n = n, ops.k = kk;
  ops.a = da.p, ops.lda = lda, ops.a_layout = layout.a;
  ops.b = db.p, ops.ldb = ldb, ops.b_layout = layout.b;
  ops.c = dc.p, ops.ldc = ldc, ops.c_layout = layout.c;
  ops.stream = api.stream();
  ops.alpha = e.alpha, ops.beta = e.beta;
  ops.c_in = e.beta == 0 ? nullptr : e.in_place ? dc.p : dcin.p;
  ops.batch = nb, ops.stride_a = sa, ops.stride_b = sb, ops.stride_c = sc;
  ops.bias_kind = e.bias, ops.bias = e.bias == BiasKind::None ? nullptr : dbias.p, ops.activation = e.act;
  ops.scale_a = e.scale_a, ops.scale_b = e.scale_b, ops.scale_d = e.scale_d;
  ops.amax = e.amax ? damax.p : nullptr;
  if (const Support sup = k.can_implement_operands(ops); !sup.ok) {
    std::printf("  %-30s %-70s not supported: %s\n", k.name().c_str(), describe(e).c_str(), sup.reason.c_str());
    return false;
  }
  try {
    k.run(ops);
    api.synchronize(60000);
  } catch (const NotSupportedError& x) {
    std::printf("  %-30s %-70s not supported: %s\n", k.name().c_str(), describe(e).c_str(), x.what());
    return false;
  }
  std::vector<std::uint8_t> got(c8.size());
  api.to_host(got.data(), dc.p, got.size());
  float amax_got = 0;
  api.to_host(&amax_got, damax.p, 4);
  // The allowance, from the declarations: Z's rounding to the output format first when declared (round_before_act);
  // the activation's elementary function (func_rel_err f) reaches act(Z) at most
  // as f |Z| (GELU: 0.5 |z| |tanh' or erf' error| <= f |z|; SiLU: |z| e^-z / (1 + e^-z)^2 f <= f |z|), the fp32 epilogue
  // adds at most 8 roundings of 2^-24 relative to |Z| + |act(Z)| (alpha', beta c, bias, the activation's own, scale_d),
  // a directed accumulator rounding doubles that; then the output rounding, u_out of |D| (twice: |D^| may exceed |D|),
  // and half the output's smallest subnormal.
  const double f = e.act == Activation::None || e.act == Activation::Relu ? 0 : t.epilogue.func_rel_err;
  const double ep = 16 * std::ldexp(1.0, -24);
  const double uo = out.unit_roundoff(), eta_o = out.min_subnormal();
  const double alpha_eff = static_cast<double>(static_cast<float>(static_cast<float>(e.alpha) * static_cast<float>(e.scale_a)) *
                                               static_cast<float>(e.scale_b));
  double amax_lo = 0, amax_hi = 0, worst = 0;
  std::int64_t bad = 0;
  for (std::int64_t b = 0; b < nb; ++b)
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        double ab = 0;  // exact: |sum| < 2^6 on a grid of 2^-16 (e4m3: < 2^4 on 2^-8)
        for (std::int64_t x = 0; x < kk; ++x) ab += A[static_cast<std::size_t>(b * sa + i * lda + x)] * B[static_cast<std::size_t>(j * ldb + x)];
        double z = alpha_eff * ab;
        if (e.beta != 0) z += e.beta * C[static_cast<std::size_t>(b * sc + i * ldc + j)];
        if (e.bias != BiasKind::None) z += bias[static_cast<std::size_t>(e.bias == BiasKind::PerRow ? i : j)];
        const double y = act_exact(e.act, z), d = e.scale_d * y;
        // round_before_act: Z rounded to D's format first, u_out |Z| (+ eta_out / 2), moved by the activation's Lipschitz
        // constant (at most 1.13: GELU's 1.129; docs/epilogue.md, "The bound").
        double pre = t.epilogue.round_before_act ? 1.13 * (uo * std::fabs(z) + eta_o / 2) : 0;
        // round_before_bias: alpha' AB + beta C rounded to the output before the bias (beta != 0 with a bias).
        if (t.epilogue.round_before_bias && e.beta != 0 && e.bias != BiasKind::None)
          pre += 1.13 * (uo * (std::fabs(alpha_eff * ab) + std::fabs(e.beta * C[static_cast<std::size_t>(b * sc + i * ldc + j)])) + eta_o / 2);
        const double ally = f * std::fabs(z) + ep * (std::fabs(z) + std::fabs(y)) + pre;
        const double alld = std::fabs(e.scale_d) * ally + 2 * uo * (std::fabs(d) + std::fabs(e.scale_d) * ally) + eta_o;
        const double g = unpack(out, got, static_cast<std::size_t>(b * sc + i * ldc + j));
        const double r = std::fabs(g - d) / alld;
        if (!(r <= 1)) {
          if (bad++ < 5)
            std::printf("    %s [%lld][%lld][%lld]: got %.9g, exact %.9g (Z %.9g), allowed %.3g\n", k.name().c_str(), static_cast<long long>(b),
                        static_cast<long long>(i), static_cast<long long>(j), g, d, z, alld);
        }
        worst = std::max(worst, std::isnan(r) ? 1e300 : r);
        amax_lo = std::max(amax_lo, std::fabs(y) - ally);
        amax_hi = std::max(amax_hi, std::fabs(y) + ally);
      }
  std::printf("  %-30s %-70s worst %.3g of the allowance%s\n", k.name().c_str(), describe(e).c_str(), worst,
              e.amax ? (" amax " + std::to_string(amax_got)).c_str() : "");
  INFO(k.name() << ": " << describe(e));
  CHECK(bad == 0);
  if (e.amax) {
    CHECK(amax_got >= amax_lo * (1 - 2 * ep));
    CHECK(amax_got <= amax_hi * (1 + 2 * ep));
  }
  return true;
}

/// The epilogues a subject declares, each alone and combined, with alpha/beta, in place, batches and FP8 scaling.
std::vector<Epi> declared_epilogues(const KernelTraits& t) {
  std::vector<Epi> out;
  const EpilogueTraits& et = t.epilogue;
  std::vector<BiasKind> biases = {BiasKind::None};
  for (BiasKind b : {BiasKind::PerColumn, BiasKind::PerRow})
    if (et.takes(b)) biases.push_back(b);
  std::vector<Activation> acts = {Activation::None};
  for (Activation a : {Activation::Relu, Activation::GeluErf, Activation::GeluTanh, Activation::Silu})
    if (et.takes(a)) acts.push_back(a);
  int i = 0;
  for (BiasKind b : biases)
    for (Activation a : acts) {
      Epi e;
      e.bias = b, e.act = a;
      if (t.alpha_beta && i % 2 == 1) e.alpha = 0.75, e.beta = -0.5;  // alpha/beta on every other combination
      if (et.fp8_scaling) e.scale_a = 0.5, e.scale_b = 1.5, e.scale_d = *t.out == e4m3 ? 0.25 : 1;
      e.amax = et.amax;
      out.push_back(e);
      ++i;
    }
  Epi last = out.back();  // the richest combination, in place and batched
  if (t.alpha_beta) {
    last.alpha = 0.75, last.beta = -0.5, last.in_place = true;
    out.push_back(last);
  }
  if (t.batched) {
    last.batch = 3, last.in_place = false;
    out.push_back(last);
  }
  return out;
}

}  // namespace

TEST_CASE("epilogue subjects: every declared epilogue within its derived allowance of the exact result, amax too") {
  auto api = make_cuda_api();
  REQUIRE(api);
  const int sm = test::device_sm(*api);
  for (const char* name : kSubjects) {
    auto k = make_gemm_kernel(name);
    REQUIRE_MESSAGE(k, name << " is not registered");
    const KernelTraits& t = k->traits();
    CHECK(t.epilogue.active());
    const bool fp8 = *t.a_input == e4m3;
    if (fp8 && sm < 89) {
      std::printf("  %s: FP8 needs sm_89 or later (this device: sm_%d), skipped\n", name, sm);
      continue;
    }
    int ran = 0, cases = 0;
    for (const Epi& e : declared_epilogues(t)) {
      ++cases;
      ran += check_epilogue(*k, *api, e, test::seed() + 977 * static_cast<std::uint64_t>(cases));
    }
    INFO(name);
    // Every subject runs everything it declares on sm_90 (FP8 too: its scale factors 16 bytes apart, no C pointer with
    // an e4m3 D when beta = 0).
    if (sm >= 90) CHECK(ran == cases);
  }
  // The bf16-output FP8 subject declines a scale_d other than 1 (cuBLASLt applies it to FP8 outputs only).
  GemmOperands ops;
  ops.scale_d = 0.25;
  CHECK_FALSE(make_gemm_kernel("cublaslt_e4m3_scaled_bf16out")->can_implement_operands(ops).ok);
  // FP8 takes the "TN" form only: fpcert's nt/c_row.
  auto lt8 = make_gemm_kernel("cublaslt_e4m3_scaled_e4m3out");
  CHECK(lt8->can_implement_layout({Layout::RowMajor, Layout::ColMajor, Layout::RowMajor}).ok);
  CHECK_FALSE(lt8->can_implement_layout({}).ok);
  CHECK_FALSE(lt8->can_implement_layout({Layout::ColMajor, Layout::RowMajor, Layout::RowMajor}).ok);
}

TEST_CASE("epilogue subjects: the certify suite's epilogue cases pass or are not supported for a declared reason") {
  const SuiteInfo* certify = find_suite("certify");
  REQUIRE(certify);
  for (const char* name : kSubjects) {
    auto k = make_gemm_kernel(name);
    REQUIRE(k);
    SuiteContext ctx;
    ctx.device = true;
    ctx.traits = &k->traits();
    ctx.all = {&k->traits()};
    std::vector<CaseSpec> specs;
    for (const CaseSpec& c : certify->cases(ctx))
      if (c.epilogue.active) specs.push_back(c);
    INFO(name);
    REQUIRE_MESSAGE(!specs.empty(), "the certify suite has no epilogue case (they come with docs/suites.md's epilogue.* cases)");
    int pass = 0;
    const auto t0 = std::chrono::steady_clock::now();
    for (const CaseSpec& spec : specs) {
      const std::string& id = spec.id;
      SuiteRunOptions o;
      o.only_case = id;
      const RunResult r = run_suite(*certify, {name}, o);
      REQUIRE(r.cases.size() == 1);
      const CaseResult& c = r.cases.front();
      std::printf("  %-30s %-28s %-13s %s\n", name, id.c_str(), std::string(to_string(c.status)).c_str(), c.reason.c_str());
      INFO(id << ": " << to_string(c.status) << " " << c.reason);
      CHECK((c.status == CaseStatus::Pass || c.status == CaseStatus::NotSupported));
      pass += c.status == CaseStatus::Pass;
      // Not supported: outside the declarations (epilogue, layout, scale_d), or the library's own answer at run time.
      if (c.status == CaseStatus::NotSupported) {
        const bool declared = !epilogue_unsupported(k->traits(), spec.epilogue, spec.alpha_beta).empty() ||
                              !k->can_implement_layout(spec.layout).ok || c.reason.find("scale_d") != std::string::npos;
        const bool library = c.reason.find("answered") != std::string::npos || c.reason.find("no algorithm") != std::string::npos;
        CHECK((declared || library));
      }
    }
    std::printf("%s: %d of %zu epilogue cases passed in %.1f s\n", name, pass, specs.size(),
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    // The FP8 subjects take only nt/c_row (cuBLASLt's "TN") with dimensions that are multiples of 16: the epilogue_fp8_*_nt
    // cases are theirs.
    CHECK(pass > 0);
  }
}

namespace {

double gelu_tanh_exact(double z) { return 0.5 * z * (1 + std::tanh(std::sqrt(2 / std::numbers::pi) * (z + 0.044715 * z * z * z))); }

float rn(const Format& f, double x) { return static_cast<float>(to_double(f, round_double(f, x, Rounder::nearest(f)).code)); }

/// fn(name, kernel, api) for each 16-bit cuBLASLt subject (a device is required: the GPU test binary exits 77 without).
template <class Fn>
void each_lt16_subject(Fn fn) {
  auto api = make_cuda_api();
  REQUIRE(api);
  for (const char* name : {"cublaslt_bf16_epilogue", "cublaslt_f16_epilogue"}) {
    auto k = make_gemm_kernel(name);
    REQUIRE(k);
    INFO(name);
    fn(name, *k, *api);
  }
}

}  // namespace

TEST_CASE("cublaslt subjects: their GELU rounds Z to D's format first, and its fp32 GELU is within the declared error") {
  each_lt16_subject([](const char* name, GemmKernel& k, DeviceApi&) {
    const KernelTraits& t = k.traits();
    const Format& io = *t.out;
    REQUIRE(t.epilogue.round_before_act);
    // Z = hi + lo in [-10, 10]: hi = RN(u), lo = RN(u - hi), two pieces of at most 11 bits each, exact in fp32 and far
    // from D's grid (the test's arguments force rounding: RN(Z) != Z for nearly all).
    const std::size_t n = 1u << 16;
    std::uint64_t s = test::seed() + 4242;
    std::vector<float> hi(n), lo(n), zr(n), zero(n, 0.f);
    std::vector<double> z(n);
    std::size_t rounds = 0;
    for (std::size_t j = 0; j < n; ++j) {
      do {  // a pair whose sum fp32 holds exactly (hi and lo less than 24 bits apart), drawn again otherwise
        const double u = 20 * (static_cast<double>(mix(s) >> 11) * 0x1p-53) - 10;
        hi[j] = rn(io, u);
        lo[j] = rn(io, u - hi[j]);
        z[j] = static_cast<double>(hi[j]) + lo[j];
      } while (static_cast<double>(static_cast<float>(z[j])) != z[j] || z[j] == 0);
      zr[j] = rn(io, z[j]);
      rounds += zr[j] != z[j];
    }
    CHECK(rounds > n * 9 / 10);
    std::vector<float> f32_gelu, f32_gelu_rounded, d_gelu, d_plain;
    try {
      f32_gelu = cublaslt_gelu_sample(io, true, true, hi, lo);
      f32_gelu_rounded = cublaslt_gelu_sample(io, true, true, zr, zero);
      d_gelu = cublaslt_gelu_sample(io, false, true, hi, lo);
      d_plain = cublaslt_gelu_sample(io, false, false, hi, lo);
    } catch (const NotSupportedError& x) {
      MESSAGE("skipped: " << name << ": cuBLASLt declined the sample call: " << x.what());
      return;
    }
    std::size_t plain_rn = 0, fused_rounded_first = 0, fused_unrounded = 0;
    double worst = 0, worst_z = 0;
    for (std::size_t j = 0; j < n; ++j) {
      plain_rn += d_plain[j] == zr[j];
      fused_rounded_first += d_gelu[j] == rn(io, f32_gelu_rounded[j]);
      fused_unrounded += d_gelu[j] == rn(io, f32_gelu[j]);
      const double e = std::fabs(f32_gelu[j] - gelu_tanh_exact(z[j])) / std::fabs(z[j]);
      if (e > worst) worst = e, worst_z = z[j];
    }
    std::printf("  %s: no activation: D = RN(Z) on %zu of %zu; GELU: D = RN(F(RN(Z))) on %zu, D = RN(F(Z)) on %zu; "
                "fp32 GELU F within 2^%.2f |z| of the tanh form (at z = %.9g); declared func_rel_err 2^%.2f\n",
                name, plain_rn, n, fused_rounded_first, fused_unrounded, std::log2(worst), worst_z, std::log2(t.epilogue.func_rel_err));
    INFO(name);
    CHECK(plain_rn == n);
    CHECK(fused_rounded_first == n);  // round_before_act: Z rounded to D's format, then the fp32 GELU, then D's rounding
    // A tanh of relative error f moves GELU by at most |z| f / 2 (the fp32 operations around it add O(2^-24) |z|).
    CHECK(worst <= t.epilogue.func_rel_err / 2);
  });
}

TEST_CASE("cublaslt subjects: with beta C and a bias, alpha AB + beta C is rounded to D's format before the bias") {
  // What round_before_bias declares, re-measured through the subject at the certify case's shape (259 x 251 x 67):
  // inputs on grids that keep A B exact in fp32 and double, D compared bit for bit with the double rounding
  // RN(relu(RN(alpha AB + beta C) + bias)) and with the one rounding RN(relu(alpha AB + beta C + bias)).
  each_lt16_subject([](const char* name, GemmKernel& k, DeviceApi& api) {
    const KernelTraits& t = k.traits();
    REQUIRE(t.epilogue.round_before_bias);
    const Format& out = *t.out;
    const std::int64_t m = 259, n = 251, kk = 67, lda = kk, ldb = n, ldc = n;
    std::uint64_t s = test::seed() + 5150;
    std::vector<double> A(static_cast<std::size_t>(m * lda)), B(static_cast<std::size_t>(kk * ldb)), C(static_cast<std::size_t>(m * ldc)),
        bias(static_cast<std::size_t>(n));
    for (double& v : A) v = draw(s, 256);
    for (double& v : B) v = draw(s, 256);
    for (double& v : C) v = 4 * draw(s, 64);
    for (double& v : bias) v = 2 * draw(s, 128);
    const std::vector<std::uint8_t> a8 = pack(out, A), b8 = pack(out, B), c8 = pack(out, C), bias8 = pack(out, bias);
    Buf da(api, a8.size()), db(api, b8.size()), dc(api, c8.size()), dcin(api, c8.size()), dbias(api, bias8.size());
    api.to_device(da.p, a8.data(), a8.size());
    api.to_device(db.p, b8.data(), b8.size());
    api.to_device(dcin.p, c8.data(), c8.size());
    api.to_device(dbias.p, bias8.data(), bias8.size());
    GemmOperands ops;
    ops.m = m, ops.n = n, ops.k = kk;
    ops.a = da.p, ops.lda = lda, ops.b = db.p, ops.ldb = ldb, ops.c = dc.p, ops.ldc = ldc;
    ops.stream = api.stream();
    const float alpha = 0.7f, beta = -1.3f;
    ops.alpha = alpha, ops.beta = beta, ops.c_in = dcin.p;
    ops.bias_kind = BiasKind::PerColumn, ops.bias = dbias.p, ops.activation = Activation::Relu;
    try {
      k.run(ops);
      api.synchronize(60000);
    } catch (const NotSupportedError& x) {
      MESSAGE("skipped: " << name << ": " << x.what());
      return;
    }
    std::vector<std::uint8_t> got(c8.size());
    api.to_host(got.data(), dc.p, got.size());
    const auto rn_out = [&](double x) { return to_double(out, round_double(out, x, Rounder::nearest(out)).code); };
    std::size_t twice = 0, once = 0;
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        double ab = 0;  // exact: a sum of 67 products on a 2^-16 grid below 2^7
        for (std::int64_t x = 0; x < kk; ++x) ab += A[static_cast<std::size_t>(i * lda + x)] * B[static_cast<std::size_t>(x * ldb + j)];
        const double v = static_cast<double>(alpha) * ab + static_cast<double>(beta) * C[static_cast<std::size_t>(i * ldc + j)];
        const double g = unpack(out, got, static_cast<std::size_t>(i * ldc + j));
        twice += g == rn_out(std::max(rn_out(v) + bias[static_cast<std::size_t>(j)], 0.0));
        once += g == rn_out(std::max(v + bias[static_cast<std::size_t>(j)], 0.0));
      }
    const std::size_t all = static_cast<std::size_t>(m * n);
    std::printf("  %s: RELU_BIAS, alpha 0.7, beta -1.3, %lldx%lldx%lld: D = RN(relu(RN(alpha AB + beta C) + bias)) on %zu of %zu, "
                "D = RN(relu(alpha AB + beta C + bias)) on %zu\n",
                name, static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(kk), twice, all, once);
    INFO(name);
    // The double rounding explains (nearly) every element; a handful may differ where fp32's own rounding of
    // alpha AB + beta C (not modelled here) decides a tie of the output grid.
    CHECK(twice * 1000 >= all * 999);
  });
}
