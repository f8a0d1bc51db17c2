// suites/ops/gemm/gemm_suites.cpp — the built-in suites of DESIGN.md, as data: case id, generator spec,
// gate variant, and what the case is for.
//
// Sizes: M = N = 1024 (accuracy vs K), 256 (quick, certify) for device kernels; CPU models run the
// same K with M = N = 32..48 (the bound depends on K, M and N only add samples); --mn overrides.
// Exponent ranges follow the kernel's formats so that an honest kernel neither overflows nor
// flushes its storage: see safe_exponent().
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "base/error.hpp"
#include "generators/generate.hpp"
#include "suites/ops/gemm/block_suite.hpp"
#include "suites/ops/gemm/scale_suite.hpp"
#include "suites/verdict/envelope.hpp"
#include "suites/ops/gemm/gemm_operation.hpp"
#include "suites/run/suite.hpp"

namespace fpcert {
namespace {

std::int64_t pick_mn(const SuiteContext& c, std::int64_t device, std::int64_t cpu) {
  return c.mn.value_or(c.device ? device : cpu);
}

std::string gemm(const std::string& family, std::int64_t mn, std::int64_t k, std::uint64_t seed, const std::string& extra = "") {
  return fmt::format("{}:m={},n={},k={},seed={}{}{}", family, mn, mn, k, seed, extra.empty() ? "" : ",", extra);
}

/// The storage format cases aimed at one format (edges, sweeps) target: the narrowest range among
/// the storage formats of every kernel in the run (ties: the lower precision).
const Format& storage_of(const SuiteContext& c) {
  std::vector<const KernelTraits*> all = c.all;
  if (all.empty() && c.traits) all.push_back(c.traits);
  // From fp64 when there are kernels (every other format is narrower: their pick is what it was), fp32 when none.
  const Format* best = all.empty() ? &f32 : &f64;
  for (const KernelTraits* t : all)
    for (const Format* f : {&storage_format(*t->a_input, *t->a_operand), &storage_format(*t->b_input, *t->b_operand)})
      if (f->max_finite() < best->max_finite() || (f->max_finite() == best->max_finite() && f->precision() < best->precision()))
        best = f;
  return *best;
}

/// The largest E such that inputs with exponents in [-E, E] (significands up to 2) stay below the
/// largest finite value of every kernel's storage format, and K products of them inside every
/// accumulator and output: E = min(emax_s - 1, (min(emax_acc, emax_out) - ceil(log2 K) - 1) / 2 - 1),
/// minimised over the kernels of the run.
int safe_exponent(const SuiteContext& c, std::int64_t k) {
  const int lk = static_cast<int>(std::ceil(std::log2(static_cast<double>(std::max<std::int64_t>(k, 2)))));
  int e = 1022;  // every format but fp64 caps it at its emax - 1 <= 126 below (docs/fp64.md: fp64's wide exponents)
  std::vector<const KernelTraits*> all = c.all;
  if (all.empty() && c.traits) all.push_back(c.traits);
  for (const KernelTraits* t : all) {
    const Format& sa = storage_format(*t->a_input, *t->a_operand);
    const Format& sb = storage_format(*t->b_input, *t->b_operand);
    const int top = std::min(t->acc->emax(), t->out->emax());
    e = std::min({e, sa.emax() - 1, sb.emax() - 1, (top - lk - 1) / 2 - 1});
  }
  return std::max(1, e);
}

/// The Ozaki family's phi, capped so that a 4.5-sigma draw exp(phi * 4.5) / 2 stays below every
/// storage format's largest finite value (phi <= ln(2 max_s) / 4.5), and K such products stay below
/// every accumulator's and output's (K (exp(4.5 phi) / 2)^2 < max_acc: phi <= ln(4 max_acc / K) / 9).
std::string ozaki_phi(const SuiteContext& c, double want, std::int64_t k) {
  double range = storage_of(c).max_finite();
  double acc = f32.max_finite();
  std::vector<const KernelTraits*> all = c.all;
  if (all.empty() && c.traits) all.push_back(c.traits);
  for (const KernelTraits* t : all) {
    range = std::min({range, storage_format(*t->a_input, *t->a_operand).max_finite(),
                      storage_format(*t->b_input, *t->b_operand).max_finite()});
    acc = std::min({acc, t->acc->max_finite(), t->out->max_finite()});
  }
  const double cap = std::min(std::log(2 * range) / 4.5, std::log(4 * acc / static_cast<double>(k)) / 9);
  const double phi = std::min(want, std::floor(cap * 10) / 10);
  return fmt::format("{}", phi);
}

std::vector<CaseSpec> quick(const SuiteContext& c) {
  const auto mn = pick_mn(c, 256, 48);
  const int e = safe_exponent(c, 256);
  return {
      {"k256_uniform", gemm("uniform", mn, 256, 1), BoundVariant::Independent, "uniform [-1, 1), K = 256", "uniform", CaseAxis::K},
      {"k1024_normal", gemm("normal", mn, 1024, 2), BoundVariant::Independent, "N(0, 1), K = 1024", "normal", CaseAxis::K},
      {"k1024_f16_exact", gemm("uniform", mn, 1024, 3, "source=f16"), BoundVariant::Independent,
       "inputs exact in fp16: isolates accumulation (catches a silently narrowed accumulator)", "f16_exact", CaseAxis::K},
      {"exp_wide", gemm("exp_uniform", mn, 256, 4, fmt::format("emin={},emax={}", -e, e)), BoundVariant::Componentwise,
       fmt::format("exponents uniform in [{}, {}], the widest range the kernel's formats hold at K = 256", -e, e), "", CaseAxis::ExponentSpan},
      {"ozaki", gemm("ozaki", mn, 512, 5, fmt::format("phi={}", ozaki_phi(c, 2.0, 512))), BoundVariant::Componentwise,
       fmt::format("(U(0,1) - 0.5) exp({} N(0,1)): wide dynamic range (Ozaki et al.)", ozaki_phi(c, 2.0, 512))},
  };
}

std::vector<CaseSpec> accuracy_vs_k(const SuiteContext& c) {
  const auto mn = pick_mn(c, 1024, 32);
  std::vector<CaseSpec> r;
  std::uint64_t seed = 10;
  for (std::int64_t k : {64, 256, 1024, 4096, 16384}) {
    r.push_back({fmt::format("k{}_uniform", k), gemm("uniform", mn, k, seed++), BoundVariant::Independent,
                 fmt::format("uniform [-1, 1), K = {}", k), "uniform", CaseAxis::K});
    r.push_back({fmt::format("k{}_normal", k), gemm("normal", mn, k, seed++), BoundVariant::Independent,
                 fmt::format("N(0, 1), K = {}", k), "normal", CaseAxis::K});
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
      {"gauss_exp", gemm("exp_gauss", mn, k, 21, fmt::format("mean=0,std={}", std::max(1, e / 4))), BoundVariant::Componentwise,
       fmt::format("Gaussian exponents, std {} (4 sigma = the safe range)", std::max(1, e / 4))},
      {"wide", gemm("exp_uniform", mn, k, 22, fmt::format("emin={},emax={}", -e, e)), BoundVariant::Componentwise,
       fmt::format("exponents uniform in [{}, {}]", -e, e)},
  };
  if (s.total_bits() < 32 || (c.traits && c.traits->out->total_bits() < 32)) {
    r.push_back({"edges_" + std::string(s.tag), gemm("edges", mn, k, 23, fmt::format("target={},b=identity,overflow=exclude", s.tag)),
                 BoundVariant::Componentwise,
                 fmt::format("values at and around {}'s smallest subnormal, smallest normal, largest finite and rounding "
                             "boundaries (those that overflow it left out); B = identity, so C = A rounded through the kernel",
                             s.tag)});
  }
  r.push_back({"sweep_" + std::string(s.tag), gemm("exp_sweep", mn, k, 24, fmt::format("target={},b=identity", s.tag)),
               BoundVariant::Componentwise, fmt::format("a fixed significand swept over {}'s whole exponent range", s.tag)});
  for (CaseSpec& cs : r) cs.axis = CaseAxis::ExponentSpan;  // the whole suite is about exponent ranges
  return r;
}

/// The storage format's tag when the generators can write inputs exact in it (source=TAG) and it is
/// narrower than fp32 and not fp16 (f16_exact covers fp16); "" otherwise.
std::string exact_source_tag(const SuiteContext& c) {
  const Format& s = storage_of(c);
  for (const Format* f : {&bf16, &tf32, &e4m3, &e5m2})
    if (s == *f) return std::string(s.tag);
  return "";
}

/// scaled_int's e4m3 values j / 128, |j| <= 7: exact sums in a 13-bit FP8 block up to K = 320 and beyond (docs/bound_model.md).
constexpr const char* kExactE4m3 = "imax=7,a_scale=0.0078125,b_scale=0.0078125,source=e4m3";

std::string gemm3(const std::string& family, std::int64_t m, std::int64_t n, std::int64_t k, std::uint64_t seed,
                  const std::string& extra = "") {
  return fmt::format("{}:m={},n={},k={},seed={}{}{}", family, m, n, k, seed, extra.empty() ? "" : ",", extra);
}

/// The pre-merge gate. Each case names the coverage classes it exercises (docs/suites.md, "Coverage
/// classes"); the runner's own checks (guards, padding, inputs unchanged, determinism) apply to all.
/// A case with the coverage classes it exercises (docs/suites.md, "Coverage classes").
CaseSpec covering(CaseSpec c, std::vector<std::string> classes) {
  c.covers = std::move(classes);
  return c;
}

/// fp64 storage (docs/fp64.md, "The certify suite for fp64"): inputs of the families that take a source format
/// drawn in fp64 (53-bit, non-integer values: a kernel narrowing them anywhere rounds), and what fp64 adds: cancellation
/// far past fp32's reach, and a row and a column spanning most of fp64's exponent range. Other storage formats never
/// reach here: their cases are unchanged.
void add_f64_cases(std::vector<CaseSpec>& r, std::int64_t mn, std::int64_t k) {
  for (CaseSpec& c : r) {
    if (c.spec.find("source=") != std::string::npos) continue;
    try {
      const std::string s = c.spec + ",source=f64";
      (void)canonical_spec(s);
      c.spec = s;
    } catch (const InputError&) {  // a family without a source field (edges, specials, sweeps): its own target
    }
  }
  const std::int64_t cm = std::min<std::int64_t>(mn, 32);
  r.push_back(covering({"f64_cancel_1e12", gemm("cancel_gemm", cm, k, 300, "kappa=1e12,source=f64"), BoundVariant::Componentwise,
                        "every C_ij with condition number 1e12: beyond fp32's 2^24, inside fp64's 2^53"}, {"values.cancellation"}));
  r.push_back(covering({"f64_cancel_1e15", gemm("cancel_gemm", cm, k, 301, "kappa=1e15,source=f64"), BoundVariant::Componentwise,
                        "every C_ij with condition number 1e15: the last few bits of fp64 decide"}, {"values.cancellation"}));
  r.push_back(covering({"f64_exp_wide", gemm("exp_uniform", mn, k, 302, "emin=-490,emax=490,source=f64"), BoundVariant::Componentwise,
                        "exponents uniform in [-490, 490] within every row of A and column of B (a fixed-point split of a "
                        "line must cover 2^980)", "", CaseAxis::ExponentSpan}, {"values.dynamic_range"}));
  // oz2 (issue 39; docs/fp64.md, "The built-in Ozaki-II emulation"): K past the int32 headroom of one block of INT8 residue
  // products (at most 2^17 - 1 products of magnitude <= 2^14 stay below 2^31): an integer emulation must block K. Values in
  // [0.5, 1] (non-integer, 53 bits; every line within one binade, inside any emulation's exponent domain).
  r.push_back(covering({"f64_k_headroom", gemm3("uniform", 4, 4, (std::int64_t{1} << 17) + 1, 303, "lo=0.5,hi=1,source=f64"),
                        BoundVariant::Independent, "K = 2^17 + 1: past the int32 headroom of one block of INT8 residue products"},
                       {"shape.large_k"}));
}

std::vector<CaseSpec> certify(const SuiteContext& c) {
  const auto mn = pick_mn(c, 256, 32);
  const std::int64_t k = 512;
  const int e = safe_exponent(c, k);
  const Format& st = storage_of(c);
  std::vector<CaseSpec> r = {
      // The runner's checks hold for every case; the table lists them once, here.
      covering({"uniform", gemm("uniform", mn, k, 30), BoundVariant::Independent, "uniform [-1, 1)"},
               {"values.rounding", "layout.padded_ld", "layout.guards_ab", "layout.inputs_unchanged", "determinism.every_run"}),
      covering({"normal", gemm("normal", mn, k, 31), BoundVariant::Independent, "N(0, 1)"}, {"values.rounding"}),
      covering({"ozaki_phi1", gemm("ozaki", mn, k, 32, "phi=1"), BoundVariant::Componentwise, "Ozaki family, phi = 1"}, {"values.dynamic_range"}),
      covering({"ozaki_wide", gemm("ozaki", mn, k, 33, "phi=" + ozaki_phi(c, 4.0, k)), BoundVariant::Componentwise,
       "Ozaki family, phi = " + ozaki_phi(c, 4.0, k) + " (capped by the storage format's range)"}, {"values.dynamic_range"}),
      covering({"scaled_int", gemm("scaled_int", mn, k, 34), BoundVariant::Independent,
       "small integers times 0.013 / 0.017: every conversion rounds"}, {"values.rounding"}),
      covering({"exp_uniform", gemm("exp_uniform", mn, k, 35, fmt::format("emin={},emax={}", -e, e)), BoundVariant::Componentwise,
       fmt::format("exponents uniform in [{}, {}]", -e, e), "", CaseAxis::ExponentSpan}, {"values.dynamic_range"}),
      covering({"exp_gauss", gemm("exp_gauss", mn, k, 36, fmt::format("mean=0,std={}", std::max(1, e / 4))), BoundVariant::Componentwise,
       "Gaussian exponents", "", CaseAxis::ExponentSpan}, {"values.dynamic_range"}),
      covering({"outliers", gemm("outlier", mn, k, 37, fmt::format("p=0.01,e={}", std::min(8, e))), BoundVariant::Componentwise,
       "1% of entries scaled by 2^8"}, {"values.dynamic_range"}),
      covering({"f16_exact", gemm("uniform", mn, k, 38, "source=f16"), BoundVariant::Independent, "inputs exact in fp16: accumulation only"}, {"values.exact_storage"}),
      covering({"cancel_1e6", gemm("cancel_gemm", std::min<std::int64_t>(mn, 32), k, 39, "kappa=1e6"), BoundVariant::Componentwise,
       "every C_ij with condition number 1e6 (cancellation)"}, {"values.cancellation"}),
      covering({"spectral_1e4", gemm("spectral", mn, k, 40, "mode=3,cond=1e4"), BoundVariant::Componentwise,
       "A = U diag(sigma) V^T, geometric spectrum, cond 1e4"}, {"values.cancellation"}),
      covering({"probe_alternating", gemm("probe", mn, k, 41, "kind=alternating"), BoundVariant::WorstCase,
       "alternating-sign rows summed by a column of ones (order dependence of the sum)"}, {"values.order"}),
      covering({"sweep_" + std::string(st.tag), gemm("exp_sweep", mn, k, 42, fmt::format("target={},b=identity", st.tag)),
       BoundVariant::Componentwise, "a fixed significand swept over the storage format's exponent range", "",
       CaseAxis::ExponentSpan}, {"values.dynamic_range", "values.subnormal"}),
      // Biased rounding: the statistical tier sees a round-toward-zero accumulator only on same-sign
      // data (docs/bound_model.md, "Tier 3").
      covering({"uniform_positive", gemm("uniform", mn, k, 43, "lo=0,hi=1"), BoundVariant::Independent,
       "uniform [0, 1): every partial sum positive (a directed rounding shows as bias)"}, {"values.all_positive"}),
      covering({"signed_zeros", gemm("signed_zeros", mn, k, 44), BoundVariant::Componentwise,
       "a quarter of the entries +0 or -0 and every fourth row of A all zeros: exact zero results"}, {"values.signed_zero"}),
  };
  // Shapes: 1, primes, tile +- 1 around every power of two a tiled kernel uses, tall and skinny.
  r.push_back(covering({"shape_1x1x1", gemm3("uniform", 1, 1, 1, 45), BoundVariant::Independent, "M = N = K = 1"}, {"shape.one"}));
  r.push_back(covering({"shape_k1", gemm3("uniform", mn, mn, 1, 46), BoundVariant::Independent, "K = 1: one product per output"}, {"shape.one"}));
  r.push_back(covering({"shape_dot", gemm3("uniform", 1, 1, 509, 47), BoundVariant::Independent, "M = N = 1, K = 509 (prime): one dot product"}, {"shape.one", "shape.prime"}));
  const std::int64_t pm = c.device ? 251 : 37, pn = c.device ? 241 : 29, pk = c.device ? 509 : 131;
  r.push_back(covering({"shape_primes", gemm3("uniform", pm, pn, pk, 48), BoundVariant::Independent,
               fmt::format("M, N, K = {}, {}, {}: primes, no tile divides them", pm, pn, pk)}, {"shape.prime", "layout.poisoned_padding"}));
  std::uint64_t seed = 49;
  for (std::int64_t t : {8, 16, 32, 64, 128, 256}) {
    const std::int64_t kt = (t == 16 || t == 64 || t == 256) ? t + 1 : t - 1;
    r.push_back(covering({fmt::format("tile{}_pm1", t), gemm3("uniform", t + 1, t - 1, kt, seed++), BoundVariant::Independent,
                 fmt::format("M = {}, N = {}, K = {}: one past and one short of a {}-wide tile (partial tiles in every dimension)",
                             t + 1, t - 1, kt, t)}, {"shape.tile_edge"}));
  }
  const std::int64_t tall = c.device ? 4099 : 515;
  r.push_back(covering({"tall_skinny", gemm3("uniform", tall, 3, 67, seed++), BoundVariant::Independent,
               fmt::format("M = {}, N = 3, K = 67: tall and skinny", tall)}, {"shape.tall_skinny"}));
  r.push_back(covering({"short_wide", gemm3("uniform", 3, tall, 67, seed++), BoundVariant::Independent,
               fmt::format("M = 3, N = {}, K = 67: short and wide", tall)}, {"shape.tall_skinny"}));
  // K across the narrow-accumulator thresholds: 2^8 (bf16-like), 2^11 (fp16), FP8's 128-product
  // promotion interval (zero-mean data: an honest narrow accumulator stays inside its own bound,
  // a narrow one declared wide does not).
  const std::int64_t kmn = c.device ? 128 : 16;
  r.push_back(covering({"k4099", gemm3("uniform", kmn, kmn, 4099, seed++), BoundVariant::Independent,
               "K = 4099 (prime, past 2^8, 2^11, 2^12 and 32 promotion intervals of 128)"}, {"shape.k_threshold"}));
  const std::int64_t lmn = c.device ? 64 : 8;
  r.push_back(covering({"k16411", gemm3("uniform", lmn, lmn, 16411, seed++), BoundVariant::Independent,
               "K = 16411 (prime, past 16384)"}, {"shape.large_k"}));
  // Values exact in the kernel's own storage format: storage terms vanish, accumulation faults show.
  if (const std::string tag = exact_source_tag(c); !tag.empty())
    r.push_back(covering({"exact_" + tag, gemm("uniform", mn, k, seed, "source=" + tag), BoundVariant::Independent,
                 fmt::format("inputs exact in {} (the storage format): accumulation only", tag)}, {"values.exact_storage"}));
  ++seed;
  // Subnormal inputs and results in the storage format (and in the output, B = identity).
  if (st.subnormals)
    r.push_back(covering({"edges_" + std::string(st.tag), gemm("edges", mn, 256, seed, fmt::format("target={},b=identity,overflow=exclude", st.tag)),
                 BoundVariant::Componentwise,
                 fmt::format("{}'s smallest subnormals, smallest normals, largest finite and rounding boundaries; B = identity", st.tag)}, {"values.subnormal"}));
  ++seed;
  // A product large enough to fill a GPU several times over (4096^2 outputs), compared run by run.
  const std::int64_t fmn = c.device ? 4096 : 128;
  r.push_back(covering({"fill_device", gemm3("uniform", fmn, fmn, 48, seed++), BoundVariant::Independent,
               fmt::format("M = N = {}, K = 48 (three 16-wide K tiles): fills the device several times over; every run compared "
                           "bit for bit with the first", fmn)}, {"determinism.fill_device"}));
  r.back().min_runs = c.device ? 20 : 4;
  // A and B one element past an aligned address (vectorised loads must check or fall back).
  CaseSpec mis = covering({"misaligned", gemm3("uniform", mn + 1, mn - 1, k + 1, seed++), BoundVariant::Independent,
                           "A and B start one element past an aligned address; M, N, K odd"}, {"layout.misaligned"});
  mis.misaligned = true;
  r.push_back(mis);
  // Misalignment where a vector path would be taken (seeds of their own: the counter's later cases keep theirs) (K and the leading dimensions multiples of 8 and 16): a
  // kernel that picks 16-byte loads from K alone faults or must decline through can_implement_operands.
  CaseSpec vec = covering({"misaligned_vec16", gemm("uniform", mn, k, 200), BoundVariant::Independent,
                           fmt::format("A and B start one element past an aligned address; K = {}, lda = K + 16, ldb = N + 16 "
                                       "(multiples of 8 and 16): a 16-byte vector path chosen from K alone loads unaligned", k)},
                          {"layout.misaligned_vector"});
  vec.misaligned = true;
  vec.ld_pad = 16;
  r.push_back(vec);
  CaseSpec odd = covering({"ld_odd", gemm("uniform", mn, k, 201), BoundVariant::Independent,
                           fmt::format("aligned A and B, K = {} and N = {} multiples of 8, lda = K + 9 and ldb = N + 9 (= 1 mod 8): "
                                       "every row after the first is off a 16-byte boundary", k, mn)},
                          {"layout.misaligned_vector"});
  odd.ld_pad = 9;
  r.push_back(odd);
  // Layouts as libraries call GEMMs (docs/suites.md, "layout.transposes"): A and/or B stored column-major (BLAS's
  // T of a row-major library), C row- or column-major; M, N, K distinct and odd so that a stride taken from the
  // wrong dimension reads other elements, padded leading dimensions with poisoned padding so that ignoring lda
  // reads NaN. Kernels that do not declare the layout: not supported (seeds of their own, 210..).
  {
    const std::int64_t lm = mn + 3, ln = mn - 5, lk = c.device ? 257 : 131;
    std::uint64_t lseed = 210;
    const auto T = Layout::ColMajor, N = Layout::RowMajor;
    for (const GemmLayout& l : {GemmLayout{N, T, N}, GemmLayout{T, N, N}, GemmLayout{T, T, N}, GemmLayout{N, N, T}, GemmLayout{T, T, T}}) {
      const std::string name = to_string(l);  // "nt/c_row"
      const std::string id = "layout_" + name.substr(0, 2) + (l.c == Layout::ColMajor ? "_ccol" : "");
      CaseSpec cs = covering({id, gemm3("uniform", lm, ln, lk, lseed++), BoundVariant::Independent,
                              fmt::format("{}: A {}, B {}, C {} (M, N, K = {}, {}, {}; leading dimensions padded and poisoned)",
                                          name, l.a == T ? "column-major (transposed)" : "row-major",
                                          l.b == T ? "column-major (transposed)" : "row-major",
                                          l.c == T ? "column-major" : "row-major", lm, ln, lk)},
                             {"layout.transposes"});
      cs.layout = l;
      r.push_back(cs);
    }
    // The one shape cuBLASLt's FP8 GEMM takes (cuBLAS documentation, cublasLtMatmul, FP8: "TN" in its column-major terms,
    // fpcert's nt/c_row; every dimension a multiple of 16): M, N, K = 128, 80, 1024 (the CPU: 48, 32, 320), K past its
    // 128-product promotion interval and past k = 256 (precision_switch); uniform values and exponents spread over the
    // storage format's safe range, so that a kernel restricted to that shape meets accumulation, promotion and output
    // rounding (seeds 215, 216); every run compared bit for bit with the first (at least 4 runs besides the timed ones).
    const std::int64_t am = c.device ? 128 : 48, an = c.device ? 80 : 32, ak = c.device ? 1024 : 320;
    const int ae = safe_exponent(c, ak);
    for (const bool wide : {false, true}) {
      CaseSpec cs = covering({wide ? "layout_nt_aligned_wide" : "layout_nt_aligned",
                              wide ? gemm3("exp_uniform", am, an, ak, 216, fmt::format("emin={},emax={}", -ae, ae)) : gemm3("uniform", am, an, ak, 215),
                              wide ? BoundVariant::Componentwise : BoundVariant::Independent,
                              fmt::format("nt/c_row, M, N, K = {}, {}, {}: multiples of 16 (cuBLASLt's FP8 shape), {}", am, an, ak,
                                          wide ? fmt::format("exponents uniform in [{}, {}]", -ae, ae) : "uniform values")},
                             {"layout.transposes", "determinism.every_run"});
      cs.layout = GemmLayout{N, T, N};
      cs.min_runs = 4;
      r.push_back(cs);
    }
  }
  // D = alpha AB + beta C as BLAS calls it (docs/suites.md, "epilogue.alpha_beta"): alpha and beta not powers of two
  // (their products round), beta = 0 with C filled with NaN (BLAS: C is not read), alpha = 0 (D = RN(beta C)),
  // alpha = beta = 1, and C in place (C's buffer is D's). Kernels that do not declare alpha/beta: not supported
  // (seeds of their own, 230..; C's seeds 330..).
  {
    const std::int64_t am = mn + 3, an = mn - 5, ak = c.device ? 257 : 131;
    struct Ab {
      const char* id;
      double alpha, beta;
      bool in_place;
      const char* what;
    };
    std::uint64_t aseed = 230;
    for (const Ab& x : {Ab{"ab_general", 0.7, -1.3, false, "alpha = 0.7, beta = -1.3 (both round into the scalar format), C apart"},
                        Ab{"ab_beta0", -0.35, 0, false, "alpha = -0.35, beta = 0: C holds NaN, which a kernel reading it (0 * NaN) returns"},
                        Ab{"ab_alpha0", 0, 0.9, false, "alpha = 0, beta = 0.9: D = RN(beta C) whatever A B"},
                        Ab{"ab_beta1", 1, 1, false, "alpha = beta = 1: D = A B + C"},
                        Ab{"ab_inplace", 1.7, -0.45, true, "alpha = 1.7, beta = -0.45, C in place (D overwrites it; C restored before every run)"}}) {
      CaseSpec cs = covering({x.id, gemm3("uniform", am, an, ak, aseed), BoundVariant::Independent,
                              fmt::format("D = alpha AB + beta C: {} (M, N, K = {}, {}, {}; C uniform [-1, 1) in the output format)", x.what,
                                          am, an, ak)},
                             {"epilogue.alpha_beta"});
      cs.alpha_beta = AlphaBetaCase{true, x.alpha, x.beta, x.in_place, 100 + aseed};
      ++aseed;
      r.push_back(cs);
    }
    // The same general and beta = 0 calls in the one shape cuBLASLt's FP8 GEMM takes (nt/c_row, M, N, K multiples of 16:
    // layout_nt_aligned), so that a kernel restricted to it meets alpha, beta and an unread C too (seeds 236, 237).
    const std::int64_t fm = c.device ? 128 : 48, fn = c.device ? 80 : 32, fk = c.device ? 256 : 64;
    for (const Ab& x : {Ab{"ab_general_nt_aligned", 0.7, -1.3, false, "alpha = 0.7, beta = -1.3, C apart"},
                        Ab{"ab_beta0_nt_aligned", -0.35, 0, false, "alpha = -0.35, beta = 0: C holds NaN"}}) {
      CaseSpec cs = covering({x.id, gemm3("uniform", fm, fn, fk, aseed), BoundVariant::Independent,
                              fmt::format("D = alpha AB + beta C: {} (nt/c_row, M, N, K = {}, {}, {}: cuBLASLt's FP8 shape)", x.what, fm, fn, fk)},
                             {"epilogue.alpha_beta"});
      cs.alpha_beta = AlphaBetaCase{true, x.alpha, x.beta, x.in_place, 100 + aseed};
      cs.layout = GemmLayout{Layout::RowMajor, Layout::ColMajor, Layout::RowMajor};
      ++aseed;
      r.push_back(cs);
    }
    // The general call on e4m3 values j / 128 (|j| <= 7): every sum of products is exact in any valid order of a 13-bit
    // FP8 block (docs/bound_model.md, "Exact sums"), so E = 0 and the epilogue and the output are graded to their own
    // roundings, whatever the kernel's tensor-core card; K = 320 reaches past 256; |D| reaches e4m3's subnormals.
    CaseSpec cs = covering({"ab_general_exact_nt", gemm3("scaled_int", fm, fn, 320, aseed, kExactE4m3), BoundVariant::Independent,
                            fmt::format("D = 0.7 AB - 1.3 C on exact sums (e4m3 j / 128, |j| <= 7; nt/c_row, M, N, K = {}, {}, 320)", fm, fn)},
                           {"epilogue.alpha_beta"});
    cs.alpha_beta = AlphaBetaCase{true, 0.7, -1.3, false, 100 + aseed};
    cs.layout = GemmLayout{Layout::RowMajor, Layout::ColMajor, Layout::RowMajor};
    r.push_back(cs);
  }
  // Strided batches as cublasGemmStridedBatchedEx calls them (docs/suites.md, "batch.strided"): every batch its own
  // data (seeds apart), graded as its own matrix; gap rows between consecutive matrices (A's and B's poisoned, C's
  // pre-filled and checked unwritten); A or B broadcast (stride 0); with alpha/beta (C apart, a C per batch) and with
  // transposed operands. M, N, K odd and no multiple of a tile. Kernels that do not declare batches: not supported
  // (seeds of their own, 260..; C's seeds 360..).
  {
    const std::int64_t bm = 33, bn = 47, bk = c.device ? 131 : 29;
    struct Bt {
      const char* id;
      BatchCase batch;
      bool alpha_beta;
      GemmLayout layout;
      const char* what;
    };
    const auto T = Layout::ColMajor;
    std::uint64_t bseed = 260;
    for (const Bt& x : {Bt{"batch_strided", {5, 3, false, false}, false, {}, "5 batches, each its own A, B; 3 gap rows between matrices"},
                        Bt{"batch_broadcast_b", {4, 2, false, true}, false, {}, "4 batches, B broadcast (stride_b = 0), 2 gap rows"},
                        Bt{"batch_broadcast_a", {3, 1, true, false}, false, {}, "3 batches, A broadcast (stride_a = 0), 1 gap row"},
                        Bt{"batch_alpha_beta", {4, 2, false, false}, true, {}, "4 batches, D = 0.7 AB - 1.3 C with a C per batch (apart), 2 gap rows"},
                        Bt{"batch_transposed", {3, 2, false, false}, false, GemmLayout{T, T, T}, "3 batches, A, B and C column-major (tt/c_col), 2 gap rows"}}) {
      CaseSpec cs = covering({x.id, gemm3("uniform", bm, bn, bk, bseed), BoundVariant::Independent,
                              fmt::format("strided batches: {} (M, N, K = {}, {}, {} per batch; each batch graded as its own matrix)", x.what,
                                          bm, bn, bk)},
                             {"batch.strided"});
      cs.batch = x.batch;
      cs.layout = x.layout;
      if (x.alpha_beta) cs.alpha_beta = AlphaBetaCase{true, 0.7, -1.3, false, 100 + bseed};
      ++bseed;
      r.push_back(cs);
    }
    // The same in the one shape cuBLASLt's FP8 GEMM takes (nt/c_row, M, N, K multiples of 16: layout_nt_aligned), so that
    // a kernel restricted to it meets batch strides too (seed 265).
    const std::int64_t fm = c.device ? 64 : 32, fn = c.device ? 80 : 48, fk = c.device ? 128 : 64;
    CaseSpec cs = covering({"batch_nt_aligned", gemm3("uniform", fm, fn, fk, bseed),
                            BoundVariant::Independent,
                            fmt::format("strided batches: 4 batches, each its own A, B; 2 gap rows (nt/c_row, M, N, K = {}, {}, {} per batch: "
                                        "cuBLASLt's FP8 shape)",
                                        fm, fn, fk)},
                           {"batch.strided"});
    cs.batch = BatchCase{4, 2, false, false};
    cs.layout = GemmLayout{Layout::RowMajor, Layout::ColMajor, Layout::RowMajor};
    r.push_back(cs);
  }
  // Fused epilogues as cuBLASLt calls them (docs/suites.md, "epilogue.bias" .. "epilogue.amax"; docs/epilogue.md):
  // D = scale_d act(alpha scale_a scale_b A B + beta C + bias), amax = max |act(Z)|. Z spreads over the activations'
  // interesting range: K = 67 products of uniform [-1, 1) values have a standard deviation sqrt(67 / 9) = 2.7, so Z
  // covers about [-8, 8] (the bias, uniform in [-2, 2), widens it), where GELU's two forms differ by up to 4.7e-4 (at Z = -2.7) and
  // SiLU, GELU bend. M, N, K odd, no multiple of a tile, M != N (a bias of the wrong length shows). The FP8 case's
  // scale factors are no powers of two (their products round) and scale_d keeps |D| below 40, inside e4m3's 448.
  // Kernels whose EpilogueTraits do not take a case: not supported (seeds of their own, 270..; bias seeds 370..;
  // C's seeds 470..).
  {
    const std::int64_t em = mn + 3, en = mn - 5, ek = 67;
    const auto T = Layout::ColMajor, N = Layout::RowMajor;
    const auto epi = [](BiasKind b, Activation a, bool amax = false) {
      EpilogueCase e;
      e.active = true;
      e.bias = b;
      e.activation = a;
      e.amax = amax;
      return e;
    };
    EpilogueCase fp8 = epi(BiasKind::PerColumn, Activation::None, true);
    fp8.fp8_scaling = true;
    fp8.scale_a = 1.37;
    fp8.scale_b = 0.61;
    fp8.scale_d = 2.7;
    EpilogueCase fp8_ab = epi(BiasKind::PerColumn, Activation::GeluTanh);
    fp8_ab.fp8_scaling = true;
    fp8_ab.scale_a = 1.37;
    fp8_ab.scale_b = 0.61;
    fp8_ab.scale_d = 1;
    struct Ep {
      const char* id;
      EpilogueCase e;
      std::vector<std::string> covers;
      const char* what;
      double alpha = 1, beta = 0;  // D = alpha AB + beta C (alpha/beta active when with_c; beta = 0: C holds NaN)
      bool with_c = false;
      BatchCase batch = {};
      GemmLayout layout = {};
      std::int64_t m = 0, n = 0, k = 0;  // 0: em, en, ek
      const char* exact = nullptr;       // scaled_int parameters of exact sums (ab_general_exact_nt); null: uniform
    };
    const std::vector<Ep> eps = {
        {"epilogue_bias_col", epi(BiasKind::PerColumn, Activation::None), {"epilogue.bias"}, "bias per column (bias_j added to row i's every element: a Linear layer's bias)"},
        {"epilogue_bias_row", epi(BiasKind::PerRow, Activation::None), {"epilogue.bias"}, "bias per row (bias_i, M values)"},
        {"epilogue_relu_bias", epi(BiasKind::PerColumn, Activation::Relu), {"epilogue.activation", "epilogue.bias"}, "ReLU(Z + bias per column)"},
        {"epilogue_gelu_erf", epi(BiasKind::None, Activation::GeluErf), {"epilogue.activation"}, "GELU, erf form: Z Phi(Z)"},
        {"epilogue_gelu_tanh", epi(BiasKind::None, Activation::GeluTanh), {"epilogue.activation"}, "GELU, tanh form (cuBLASLt's, PyTorch's approximate=\"tanh\")"},
        {"epilogue_silu", epi(BiasKind::None, Activation::Silu), {"epilogue.activation"}, "SiLU: Z / (1 + e^-Z)"},
        {"epilogue_ab_bias_gelu", epi(BiasKind::PerColumn, Activation::GeluErf), {"epilogue.bias", "epilogue.activation"},
         "GELU (erf)(0.7 AB - 1.3 C + bias per column), C apart", 0.7, -1.3, true},
        // alpha, beta and the bias per column under ReLU: what a cuBLASLt subject (tanh GELU and ReLU only, bias per column)
        // takes, so that a bias scaled with alpha (epi_bias_scaled_by_alpha) meets such a subject too.
        {"epilogue_ab_bias_relu", epi(BiasKind::PerColumn, Activation::Relu), {"epilogue.bias", "epilogue.activation"},
         "ReLU(0.7 AB - 1.3 C + bias per column), C apart", 0.7, -1.3, true},
        {"epilogue_beta0_bias_silu", epi(BiasKind::PerRow, Activation::Silu), {"epilogue.bias", "epilogue.activation"},
         "SiLU(-0.85 AB + bias per row), beta = 0 with C holding NaN (an epilogue that still reads C returns NaN)", -0.85, 0, true},
        {"epilogue_fp8_scaled", fp8, {"epilogue.fp8_scaling", "epilogue.amax", "epilogue.bias"},
         "FP8 scaling: D = 2.7 (1.37 x 0.61 AB + bias per column), amax = max |Z| (before scale_d)"},
        {"epilogue_batch_amax", epi(BiasKind::PerColumn, Activation::GeluTanh, true), {"epilogue.amax", "epilogue.activation", "epilogue.bias"},
         "3 strided batches (2 gap rows), one bias for all, GELU (tanh), amax the max over every batch", 1, 0, false, BatchCase{3, 2, false, false}},
        {"epilogue_transposed", epi(BiasKind::PerRow, Activation::Relu), {"epilogue.bias", "epilogue.activation"},
         "A and C column-major (tn/c_col: cuBLASLt's own orientation), ReLU(Z + bias per row)", 1, 0, false, {}, GemmLayout{T, N, T}},
        // cuBLASLt's FP8 GEMM takes only its "TN" form (A row-major, B column-major, C row-major in fpcert's terms) with
        // every dimension a multiple of 16 (16-byte aligned rows: cuBLAS documentation, cublasLtMatmul, FP8): M, N, K = 80,
        // 48, 96, still no multiple of a 64 or 128 tile. The second case is FP8 with a 16-bit output as training uses it
        // (torch._scaled_mm's bf16 out): scale_a, scale_b, no scale_d (cuBLASLt applies it to FP8 outputs only), bias and GELU.
        {"epilogue_fp8_scaled_nt", fp8, {"epilogue.fp8_scaling", "epilogue.amax", "epilogue.bias"},
         "FP8 scaling as epilogue_fp8_scaled with B column-major (nt/c_row: the one layout cuBLASLt's FP8 GEMM takes)", 1, 0, false, {},
         GemmLayout{N, T, N}, 80, 48, 96},
        {"epilogue_fp8_ab_scaled_gelu_nt", fp8_ab, {"epilogue.fp8_scaling", "epilogue.activation", "epilogue.bias"},
         "FP8 inputs scaled (scale_a, scale_b; scale_d = 1), GELU (tanh)(Z + bias per column), nt/c_row", 1, 0, false, {},
         GemmLayout{N, T, N}, 80, 48, 96},
        // The same two on exact sums (e4m3 j / 16, |j| <= 7: sum |a b| <= 96 x 49 / 256 < 2^5 on a grid of 2^-8; ab_general_exact_nt).
        {"epilogue_fp8_scaled_exact_nt", fp8, {"epilogue.fp8_scaling", "epilogue.amax", "epilogue.bias"},
         "epilogue_fp8_scaled_nt on exact sums (e4m3 j / 16, |j| <= 7)", 1, 0, false, {}, GemmLayout{N, T, N}, 80, 48, 96,
         "imax=7,a_scale=0.0625,b_scale=0.0625,source=e4m3"},
        {"epilogue_fp8_ab_gelu_exact_nt", fp8_ab, {"epilogue.fp8_scaling", "epilogue.activation", "epilogue.bias", "epilogue.alpha_beta"},
         "GELU (tanh)(0.7 x 1.37 x 0.61 AB - 1.3 C + bias per column) on exact sums (e4m3 j / 16, |j| <= 7), nt/c_row", 0.7, -1.3, true, {},
         GemmLayout{N, T, N}, 80, 48, 96, "imax=7,a_scale=0.0625,b_scale=0.0625,source=e4m3"},
    };
    std::uint64_t eseed = 270;
    for (const Ep& x : eps) {
      const std::int64_t cm = x.m ? x.m : em, cn = x.n ? x.n : en, ck = x.k ? x.k : ek;
      CaseSpec cs = covering({x.id, gemm3(x.exact ? "scaled_int" : "uniform", cm, cn, ck, eseed, x.exact ? x.exact : ""), BoundVariant::Independent,
                              fmt::format("fused epilogue: {} (M, N, K = {}, {}, {}{})", x.what, cm, cn, ck,
                                          x.batch.active() ? " per batch" : "")},
                             x.covers);
      cs.epilogue = x.e;
      cs.epilogue.bias_seed = 100 + eseed;
      if (x.with_c) cs.alpha_beta = AlphaBetaCase{true, x.alpha, x.beta, false, 200 + eseed};
      cs.batch = x.batch;
      cs.layout = x.layout;
      ++eseed;
      r.push_back(cs);
    }
  }
  // Special values: +-Inf, NaN (those the storage format holds), its largest finite value, Inf * 0, Inf - Inf, and
  // elements whose partial sums overflow the narrowest accumulator of the run while their exact sum is finite;
  // each element judged against IEEE's result (docs/suites.md, "values.special"). Kernels declaring finite
  // inputs only: not supported.
  // fp64 storage plants fp64's largest finite values: sum |a b| then overflows double, and those elements are graded
  // with their sums scaled (docs/fp64.md, "Sums beyond double's range").
  double limit = st == f64 ? f64.max_finite() : f32.max_finite();
  for (const KernelTraits* t : c.all.empty() && c.traits ? std::vector<const KernelTraits*>{c.traits} : c.all) limit = std::min(limit, overflow_limit(*t));
  const char* acc = limit <= f16.max_finite() ? "f16" : limit <= f32.max_finite() ? "f32" : "f64";
  const Format& sp = st;
  r.push_back(covering({"special_" + std::string(sp.tag), gemm("specials", mn, 64, seed++, fmt::format("target={},acc={}", sp.tag, acc)),
                        BoundVariant::Componentwise,
                        fmt::format("+-Inf, NaN, +-largest finite of {} in 4 rows of A and 4 columns of B, Inf beside a zero, +Inf and "
                                    "-Inf in one row; 2 elements whose partial sums overflow {} (exact sum finite): each element "
                                    "as IEEE says",
                                    sp.tag, acc)},
                       {"values.special"}));
  {  // the same data in cuBLASLt's FP8 shape (nt/c_row; M = N = mn and K = 64 are multiples of 16), for kernels restricted to it
    CaseSpec nt = r.back();
    nt.id += "_nt";
    nt.note += " (B column-major: nt/c_row)";
    nt.layout = GemmLayout{Layout::RowMajor, Layout::ColMajor, Layout::RowMajor};
    r.push_back(nt);
  }
  // Subnormal inputs that stay subnormal through every scaling: all of A in the storage format's subnormal range
  // (uniform [-1, 1) times its smallest normal), B uniform, so C is small and, with an fp32 output and fp32 or
  // bf16 storage, partly subnormal. A kernel that reads subnormal inputs as zero (DAZ) returns zeros; one that
  // writes subnormal outputs as zero (FTZ) loses the smallest elements. Unlike edges_* (subnormals beside normal
  // values, B = identity), no normal value shares a block or a line with them: block-scaled formats scale whole
  // blocks of such values into their elements' range (E8M0 reaches 2^-127), BF16 on FP16 whole lines into fp16's.
  if (st.subnormals)
    r.push_back(covering({"tiny_" + std::string(st.tag), gemm("outlier", mn, k, seed, fmt::format("base=uniform,p=1,e={},operands=a", st.emin())),
                          BoundVariant::Componentwise,
                          fmt::format("A uniform [-1, 1) times 2^{} ({}'s subnormal range, whole blocks and lines of it), B uniform: "
                                      "small results, subnormal where the output allows",
                                      st.emin(), st.tag)},
                         {"values.subnormal"}));
  ++seed;
  // Every element of C has one value in every summation order (exact sums, one rounding of two products, exact
  // sums in the accumulator's subnormal range): a kernel whose order is unknown still gets a bit-for-bit verdict
  // here, which refuses a one-ulp error, lost operand bits or flushed subnormals that its envelope admits
  // (docs/bound_model.md, "Order-free elements").
  const std::string acc_tag(c.traits && (*c.traits->acc == f16 || *c.traits->acc == bf16) ? c.traits->acc->tag : std::string_view("f32"));
  static const std::vector<std::string> kOrderFreeTargets = {"f32", "tf32", "f16", "bf16", "e4m3", "e5m2", "e2m3", "e3m2", "e2m1"};
  // A kernel that slices its operands (operand_u) keeps only values one slice holds whole: bf16 values, and
  // Split products: pair rows round toward zero on tensor cores and tiny rows leave a slice's range, so exact rows
  // only (block formats dequantized to bf16 keep all three: their tiny rows are what shows a flush there).
  const bool sliced = c.traits && c.traits->operand_u > 0, split = sliced && !c.traits->block.active();
  const Format& ot = sliced ? bf16 : st;
  if (std::find(kOrderFreeTargets.begin(), kOrderFreeTargets.end(), std::string(ot.tag)) != kOrderFreeTargets.end())
    r.push_back(covering({"order_free_" + std::string(ot.tag), gemm("order_free", mn, k, seed, fmt::format("target={},acc={}{}", ot.tag, acc_tag, split ? ",rows=exact" : "")),
                          BoundVariant::Componentwise,
                          fmt::format("sparse rows exact in {}: sums exact in {} in any order, two products rounded once, exact "
                                      "subnormal sums; one value per element whatever the order",
                                      ot.tag, acc_tag)},
                         {"values.order"}));
  ++seed;
  if (st == f64) add_f64_cases(r, mn, k);
  return r;
}

std::vector<CaseSpec> cancellation(const SuiteContext& c) {
  const auto mn = pick_mn(c, 64, 16);
  std::vector<CaseSpec> r;
  std::uint64_t seed = 50;
  for (const char* kappa : {"1e2", "1e4", "1e6", "1e8", "1e12", "1e16"})
    r.push_back({std::string("kappa_") + kappa, gemm("cancel_gemm", mn, 1024, seed++, std::string("kappa=") + kappa),
                 BoundVariant::Componentwise, std::string("every C_ij with condition number ") + kappa, "cancel", CaseAxis::Kappa});
  const auto smn = pick_mn(c, 512, 32);
  for (const char* cond : {"1", "1e2", "1e4", "1e8"})
    r.push_back({std::string("spectral_") + cond, gemm("spectral", smn, 256, seed++, std::string("mode=3,cond=") + cond),
                 BoundVariant::Componentwise, std::string("A with a geometric spectrum, cond ") + cond, "spectral", CaseAxis::Kappa});
  return r;
}

std::vector<CaseSpec> accumulator(const SuiteContext& c) {
  const auto mn = pick_mn(c, 64, 16);
  std::vector<CaseSpec> r = {
      {"ones_k4096", gemm("probe", mn, 4096, 60, "kind=ones"), BoundVariant::WorstCase,
       "rows of ones: an fp16 running sum stalls at 2048 (2048 + 1 ties to even)", "ones", CaseAxis::K},
      {"alternating_k4096", gemm("probe", mn, 4096, 61, "kind=alternating"), BoundVariant::WorstCase, "alternating signs", "alternating",
       CaseAxis::K},
      {"ascending_k4096", gemm("probe", mn, 4096, 62, "kind=ascending"), BoundVariant::WorstCase, "sorted ascending magnitudes",
       "ascending", CaseAxis::K},
      {"descending_k4096", gemm("probe", mn, 4096, 63, "kind=descending"), BoundVariant::WorstCase, "sorted descending magnitudes",
       "descending", CaseAxis::K},
  };
  std::uint64_t seed = 64;
  for (std::int64_t k : {256, 1024, 4096})
    r.push_back({fmt::format("f16_exact_k{}", k), gemm("uniform", pick_mn(c, 256, 32), k, seed++, "source=f16"),
                 BoundVariant::Independent, "inputs exact in fp16: the accumulator alone (fp32 vs fp16 side by side)", "f16_exact",
                 CaseAxis::K});
  return r;
}

std::vector<CaseSpec> split_emulation(const SuiteContext& c) {
  const auto mn = pick_mn(c, 512, 32);
  const int e = std::min(60, safe_exponent(c, 256));  // 60 for fp32-range kernels at K = 256 (58: see safe_exponent)
  return {
      {"k1024_uniform", gemm("uniform", mn, 1024, 70), BoundVariant::Independent, "uniform [-1, 1)", "uniform", CaseAxis::K},
      {"k4096_normal", gemm("normal", mn, 4096, 71), BoundVariant::Independent, "N(0, 1)", "normal", CaseAxis::K},
      {"exp_wide", gemm("exp_uniform", mn, 256, 72, fmt::format("emin={},emax={}", -e, e)), BoundVariant::Componentwise,
       fmt::format("exponents uniform in [{}, {}]: products stay inside fp32", -e, e), "", CaseAxis::ExponentSpan},
      {"exp_low", gemm("exp_uniform", mn, 256, 73, fmt::format("emin=-110,emax={}", std::min(10, e))), BoundVariant::Componentwise,
       "exponents down to -110: second and third slices become subnormal or zero, products underflow", "", CaseAxis::ExponentSpan},
      {"cancel_1e8", gemm("cancel_gemm", std::min<std::int64_t>(mn, 32), 1024, 74, "kappa=1e8"), BoundVariant::Componentwise,
       "condition number 1e8"},
      // Added with the tensor-core emulation kernels (docs/emulation.md).
      {"k256_uniform", gemm("uniform", mn, 256, 75), BoundVariant::Independent,
       "uniform [-1, 1), K = 256: short sums, where the operand error of the split dominates the accumulation's", "uniform", CaseAxis::K},
      {"ozaki_wide", gemm("ozaki", mn, 512, 76, "phi=4"), BoundVariant::Componentwise,
       "(U(0,1) - 0.5) exp(4 N(0,1)): entries across ~50 binades in one row, small slices far below the large ones"},
  };
}

/// BF16 inputs for the BF16-on-FP16 strategies (kernels/emu/bf16_on_fp16.hpp): exponent-span tiles
/// around fp16's window of 33 binades (spans up to 32 fit one power-of-two scale losslessly; 33 is the
/// first that does not), per row and per K-block, outliers, and ordinary data. Grade with
/// --baseline gemm_bf16_f32acc_mma_sm80 (model_gemm_bf16_f32acc on the CPU) for the numerical level.
std::vector<CaseSpec> bf16_on_fp16(const SuiteContext& c) {
  const auto mn = pick_mn(c, 512, 32);
  const std::int64_t k = c.device ? 1024 : 256;
  std::vector<CaseSpec> r;
  std::uint64_t seed = 90;
  for (int s : {29, 30, 31, 32, 33, 40})
    r.push_back({fmt::format("span_row_s{}", s), gemm("span", mn, k, seed++, fmt::format("s={}", s)), BoundVariant::Componentwise,
                 fmt::format("every row of A and column of B spans exactly {} binades (bf16){}", s,
                             s <= 32 ? ": one scale per line is lossless" : ": one scale per line is not lossless")});
  for (int blk : {64, 128}) {
    r.push_back({fmt::format("span_kb{}_s29_shift20", blk), gemm("span", mn, k, seed++, fmt::format("s=29,block={},shift=20", blk)),
                 BoundVariant::Componentwise,
                 fmt::format("every K-block of {} spans 29 binades, shifted by up to +-20: whole lines span up to 69 "
                             "(lossless per K-block, not per line)", blk)});
    r.push_back({fmt::format("span_kb{}_s40", blk), gemm("span", mn, k, seed++, fmt::format("s=40,block={}", blk)),
                 BoundVariant::Componentwise,
                 fmt::format("every K-block of {} spans 40 binades: only an outlier path keeps every product exact", blk)});
  }
  for (CaseSpec& cs : r) cs.axis = CaseAxis::ExponentSpan;  // the span tiles above
  r.push_back({"outliers_e40", gemm("outlier", mn, k, seed++, "p=0.01,e=40,source=bf16"), BoundVariant::Componentwise,
               "N(0, 1) with 1% of the entries times 2^40: lines span ~60 binades, the bulk fits one window"});
  r.push_back({"outliers_e8", gemm("outlier", mn, k, seed++, "p=0.01,e=8,source=bf16"), BoundVariant::Componentwise,
               "N(0, 1) with 1% of the entries times 2^8: mild outliers inside one window"});
  r.push_back({"normal", gemm("normal", mn, k, seed++, "source=bf16"), BoundVariant::Independent, "N(0, 1) bf16 values"});
  r.push_back({"uniform", gemm("uniform", mn, k, seed++, "source=bf16"), BoundVariant::Independent, "uniform [-1, 1) bf16 values"});
  return r;
}

std::vector<CaseSpec> three_pipeline(const SuiteContext& c) {
  const auto mn = pick_mn(c, 1024, 64);
  std::vector<CaseSpec> r;
  std::uint64_t seed = 80;
  for (std::int64_t k : {256, 1024, 2048})
    r.push_back({fmt::format("k{}", k), gemm("uniform", mn, k, seed++), BoundVariant::Independent,
                 fmt::format("uniform [-1, 1) fp32 inputs (they round into fp16), K = {}", k), "all", CaseAxis::K});
  return r;
}

}  // namespace

std::vector<SuiteInfo> gemm_suites() {
  return {
      {"quick", "a compact representative set: uniform, normal, fp16-exact inputs, wide exponents, Ozaki (<= 60 s per CPU model)", quick},
      {"accuracy-vs-k", "M = N = 1024 (32 on the CPU), K in {64, 256, 1024, 4096, 16384}, uniform [-1, 1) and N(0, 1)", accuracy_vs_k},
      {"exponent-range", "narrow, Gaussian exponents, the widest safe uniform exponents, and the storage format's edges", exponent_range},
      {"certify", "the pre-merge gate: every generator family at moderate sizes", certify},
      {"cancellation", "C_ij with prescribed condition numbers 1e2..1e16, and matrices with spectra of condition 1..1e8", cancellation},
      {"accumulator", "accumulator probes (ones, alternating, sorted) at K = 4096, and fp16-exact inputs at K = 256..4096", accumulator},
      {"three-pipeline", "the reference course's table: uniform inputs at K = 256, 1024, 2048 (M = N = 1024; 64 on the CPU)", three_pipeline},
      {"split-emulation", "cases for split-product emulations (3xTF32, nxBF16): accuracy, exponent range to -110, cancellation", split_emulation},
      {"bf16-on-fp16", "bf16 inputs for BF16-on-FP16 strategies: span tiles of 29..33 and 40 binades per row and per K-block, "
                       "outliers, normal data (--baseline gemm_bf16_f32acc_mma_sm80)", bf16_on_fp16},
      {"block-scaled", "block-scaled GEMMs (MX, NVFP4): ordinary data, per-K-block exponent shifts independent in A and B, "
                       "wide exponents, outliers (docs/block_formats.md)", block_scaled_cases},
      {"scale", "GPU limits, graded on sampled exact references: M or N up to 2^21 + 3 past gridDim.y/z = 65,535, operands of "
                "2^31 elements (m lda, k ldb >= 2^31), 16384 x 8192 x 8192 (docs/suites.md, \"The scale suite\")", scale_cases,
       Operation::Gemm, false},
  };
}

}  // namespace fpcert
