// suites/builtin_suites.cpp — the built-in suites of DESIGN.md, as data: case id, generator spec,
// gate variant, and what the case is for.
//
// Sizes: M = N = 1024 (accuracy vs K), 256 (quick, certify) for device kernels; CPU models run the
// same K with M = N = 32..48 (the bound depends on K, M and N only add samples); --mn overrides.
// Exponent ranges follow the kernel's formats so that an honest kernel neither overflows nor
// flushes its storage: see safe_exponent().
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "suites/suite.hpp"

namespace fpcert {
namespace {

std::int64_t pick_mn(const SuiteContext& c, std::int64_t device, std::int64_t cpu) {
  return c.mn.value_or(c.device ? device : cpu);
}

std::string gemm(const std::string& family, std::int64_t mn, std::int64_t k, std::uint64_t seed, const std::string& extra = "") {
  return fmt::format("{}:m={},n={},k={},seed={}{}{}", family, mn, mn, k, seed, extra.empty() ? "" : ",", extra);
}

const Format& storage_of(const SuiteContext& c) {
  if (!c.traits) return f32;
  const Format& a = storage_format(*c.traits->a_input, *c.traits->a_operand);
  const Format& b = storage_format(*c.traits->b_input, *c.traits->b_operand);
  return a.precision() <= b.precision() ? a : b;
}

/// The largest E such that inputs with exponents in [-E, E] (significands up to 2) stay below the
/// storage format's largest finite value, and K products of them inside the accumulator and the
/// output: E = min(emax_s - 1, (min(emax_acc, emax_out) - ceil(log2 K) - 1) / 2 - 1).
int safe_exponent(const SuiteContext& c, std::int64_t k) {
  const Format& s = storage_of(c);
  int top = 127;
  if (c.traits) top = std::min(c.traits->acc->emax(), c.traits->out->emax());
  const int lk = static_cast<int>(std::ceil(std::log2(static_cast<double>(std::max<std::int64_t>(k, 2)))));
  return std::max(1, std::min(s.emax() - 1, (top - lk - 1) / 2 - 1));
}

std::vector<CaseSpec> quick(const SuiteContext& c) {
  const auto mn = pick_mn(c, 256, 48);
  const int e = safe_exponent(c, 256);
  return {
      {"k256_uniform", gemm("uniform", mn, 256, 1), BoundVariant::Independent, "uniform [-1, 1), K = 256"},
      {"k1024_normal", gemm("normal", mn, 1024, 2), BoundVariant::Independent, "N(0, 1), K = 1024"},
      {"k1024_f16_exact", gemm("uniform", mn, 1024, 3, "source=f16"), BoundVariant::Independent,
       "inputs exact in fp16: isolates accumulation (catches a silently narrowed accumulator)"},
      {"exp_wide", gemm("exp_uniform", mn, 256, 4, fmt::format("emin={},emax={}", -e, e)), BoundVariant::Componentwise,
       fmt::format("exponents uniform in [{}, {}], the widest range the kernel's formats hold at K = 256", -e, e)},
      {"ozaki_phi2", gemm("ozaki", mn, 512, 5, "phi=2"), BoundVariant::Componentwise,
       "(U(0,1) - 0.5) exp(2 N(0,1)): wide dynamic range (Ozaki et al.)"},
  };
}

std::vector<CaseSpec> accuracy_vs_k(const SuiteContext& c) {
  const auto mn = pick_mn(c, 1024, 32);
  std::vector<CaseSpec> r;
  std::uint64_t seed = 10;
  for (std::int64_t k : {64, 256, 1024, 4096, 16384}) {
    r.push_back({fmt::format("k{}_uniform", k), gemm("uniform", mn, k, seed++), BoundVariant::Independent,
                 fmt::format("uniform [-1, 1), K = {}", k)});
    r.push_back({fmt::format("k{}_normal", k), gemm("normal", mn, k, seed++), BoundVariant::Independent,
                 fmt::format("N(0, 1), K = {}", k)});
  }
  return r;
}

std::vector<CaseSpec> exponent_range(const SuiteContext& c) {
  const auto mn = pick_mn(c, 512, 32);
  const std::int64_t k = 256;
  const int e = safe_exponent(c, k);
  const Format& s = storage_of(c);
  std::vector<CaseSpec> r = {
      {"narrow", gemm("uniform", mn, k, 20), BoundVariant::Independent, "uniform [-1, 1)"},
      {"gauss_exp", gemm("exp_gauss", mn, k, 21, fmt::format("mean=0,std={}", std::max(1, e / 3))), BoundVariant::Componentwise,
       fmt::format("Gaussian exponents, std {}", std::max(1, e / 3))},
      {"wide", gemm("exp_uniform", mn, k, 22, fmt::format("emin={},emax={}", -e, e)), BoundVariant::Componentwise,
       fmt::format("exponents uniform in [{}, {}]", -e, e)},
  };
  if (s.total_bits() < 32 || (c.traits && c.traits->out->total_bits() < 32)) {
    r.push_back({"edges_" + std::string(s.tag), gemm("edges", mn, k, 23, fmt::format("target={},b=identity", s.tag)),
                 BoundVariant::Componentwise,
                 fmt::format("values at and around {}'s smallest subnormal, smallest normal, largest finite and rounding "
                             "boundaries; B = identity, so C = A rounded through the kernel",
                             s.tag)});
  }
  r.push_back({"sweep_" + std::string(s.tag), gemm("exp_sweep", mn, k, 24, fmt::format("target={},b=identity", s.tag)),
               BoundVariant::Componentwise, fmt::format("a fixed significand swept over {}'s whole exponent range", s.tag)});
  return r;
}

std::vector<CaseSpec> certify(const SuiteContext& c) {
  const auto mn = pick_mn(c, 256, 32);
  const std::int64_t k = 512;
  const int e = safe_exponent(c, k);
  return {
      {"uniform", gemm("uniform", mn, k, 30), BoundVariant::Independent, "uniform [-1, 1)"},
      {"normal", gemm("normal", mn, k, 31), BoundVariant::Independent, "N(0, 1)"},
      {"ozaki_phi1", gemm("ozaki", mn, k, 32, "phi=1"), BoundVariant::Componentwise, "Ozaki family, phi = 1"},
      {"ozaki_phi4", gemm("ozaki", mn, k, 33, "phi=4"), BoundVariant::Componentwise, "Ozaki family, phi = 4"},
      {"scaled_int", gemm("scaled_int", mn, k, 34), BoundVariant::Independent,
       "small integers times 0.013 / 0.017: every conversion rounds"},
      {"exp_uniform", gemm("exp_uniform", mn, k, 35, fmt::format("emin={},emax={}", -e, e)), BoundVariant::Componentwise,
       fmt::format("exponents uniform in [{}, {}]", -e, e)},
      {"exp_gauss", gemm("exp_gauss", mn, k, 36, fmt::format("mean=0,std={}", std::max(1, e / 3))), BoundVariant::Componentwise,
       "Gaussian exponents"},
      {"outliers", gemm("outlier", mn, k, 37, fmt::format("p=0.01,e={}", std::min(8, e))), BoundVariant::Componentwise,
       "1% of entries scaled by 2^8"},
      {"f16_exact", gemm("uniform", mn, k, 38, "source=f16"), BoundVariant::Independent, "inputs exact in fp16: accumulation only"},
  };
}

}  // namespace

const std::vector<SuiteInfo>& builtin_suites() {
  static const std::vector<SuiteInfo> s = {
      {"quick", "a compact representative set: uniform, normal, fp16-exact inputs, wide exponents, Ozaki (<= 60 s per CPU model)", quick},
      {"accuracy-vs-k", "M = N = 1024 (32 on the CPU), K in {64, 256, 1024, 4096, 16384}, uniform [-1, 1) and N(0, 1)", accuracy_vs_k},
      {"exponent-range", "narrow, Gaussian exponents, the widest safe uniform exponents, and the storage format's edges", exponent_range},
      {"certify", "the pre-merge gate: every generator family at moderate sizes", certify},
  };
  return s;
}

}  // namespace fpcert
