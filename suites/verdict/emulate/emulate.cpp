// suites/verdict/emulate/emulate.cpp — the declared arithmetic, interpreted: one step function per rounding, one loop per
// order kind (kernels/order.hpp gives the semantics this file follows); split products and power-of-two
// scaling in suites/verdict/emulate/emulate_schemes.cpp.
#include "suites/verdict/emulate/emulate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cfenv>
#include <cmath>
#include <memory>
#include <stdexcept>
#if defined(__AVX2__) && defined(__F16C__)
#include <immintrin.h>
#define FPCERT_EMULATE_F16C 1
#endif

#include "base/parallel.hpp"
#include "kernels/emu/bf16_on_fp16.hpp"
#include "kernels/emu/split.hpp"
#include "kernels/gemm/cpu/ozaki2.hpp"
#include "kernels/tc/cards.hpp"
#include "oracle/gemm_engine.hpp"
#include "oracle/exact_sum.hpp"
#include "oracle/fused_dot.hpp"
#include "oracle/refvalue.hpp"
#include "suites/verdict/emulate/emulate_round.hpp"
#include "suites/verdict/emulate/emulate_schemes.hpp"

namespace fpcert {

using namespace emulate_detail;

namespace {

double to_value(const Format& f, std::uint64_t code) { return to_double(f, code); }

/// Rounding into one format: exact inputs, one rounding per call.
struct Arith {
  const Format* f;
  Rounding r;
  bool fast;  ///< fp32, round to nearest even: the host's float arithmetic is exactly this (unless `generic`)
  /// fp64, round to nearest even: the host's double arithmetic is exactly this (IEEE binary64, the environment pinned
  /// to nearest without flush to zero: pin_fp_env). On both paths: the scalar rounding below cannot form an fp64
  /// product exactly (106 bits), and std::fma / + / * are the definition of the step (docs/fp64.md).
  bool native64;
  Grid grid;
  const Grid* exact;  ///< the integer rounding path (fast formats), or null (the oracle)
  Arith(const Format& fmt_, Rounding r_, bool generic = false)
      : f(&fmt_), r(r_), fast(!generic && fmt_ == f32 && r_ == Rounding::NearestEven),
        native64(fmt_ == f64 && r_ == Rounding::NearestEven), grid(fmt_),
        exact(fast_format(fmt_) && r_ != Rounding::Stochastic ? &grid : nullptr) {}
  Arith(const Arith& o) : f(o.f), r(o.r), fast(o.fast), native64(o.native64), grid(o.grid), exact(o.exact ? &grid : nullptr) {}
  Arith& operator=(const Arith&) = delete;
  double add(double x, double y) const {
    if (native64) return x + y;
    return fast ? static_cast<double>(static_cast<float>(x) + static_cast<float>(y)) : add_rounded(*f, exact, r, x, y);
  }
  double fma(double a, double b, double acc) const {
    if (native64) return std::fma(a, b, acc);
    if (fast) return static_cast<double>(std::fma(static_cast<float>(a), static_cast<float>(b), static_cast<float>(acc)));
    if (!std::isfinite(a) || !std::isfinite(b) || !std::isfinite(acc)) return emulate_fma(*f, r, a, b, acc);
    return add_rounded(*f, exact, r, a * b, acc);  // a * b exact (operands of at most 26 bits)
  }
  double round(double x) const {
    if (native64) return x;  // a double is its own fp64 rounding
    return fast ? static_cast<double>(static_cast<float>(x)) : round_one(*f, exact, r, x);
  }
};

/// A narrow accumulator hosted in fp32 arithmetic, for fma steps whose products are exact in fp32: one
/// step is s = RN_f32(acc + p) with its exact error e (a two-sum), turned into round-to-odd RO_24(acc + p)
/// (truncate toward zero, set the last bit when inexact), then rounded into the format by bit masking
/// (or by a power-of-two scaling below the format's normal range). Rounding twice is exact this way:
/// round_f(RO_24(x)) = round_f(x) when fp32's grid at x is at least 2 bits finer than f's (Boldo and
/// Melquiond, "Emulation of FMA and correctly rounded sums: proved algorithms using rounding to odd",
/// IEEE Trans. Comput. 57(4), 2008, Thm. 1 for round to nearest; truncation composes for toward zero).
/// An fp32 overflow of a finite sum is f's overflow too (f's largest value is at most fp32's).
/// Toward zero there is a shorter road: with the host's rounding mode set toward zero, s = RZ_f32(acc + p) is
/// one IEEE addition, and truncating it into f is RZ_f(acc + p) since truncations compose (f's grid is a
/// subset of fp32's, subnormal grid included: f's quantum >= 2^-149); an fp32 sum cannot overflow that way
/// (RZ gives fp32's largest finite value, which the mask or the clamp takes to f's). No two-sum: 2 float
/// operations and 4 integer ones per step instead of 7 and 11. hosted_loop runs it (MODE_RZ).
/// tests/suites/emulate_test.cpp holds both equal to the integer path.
struct FloatHost {
  bool ok = false;
  bool rz = false;         ///< toward zero (else to nearest even)
  bool scaled_sub = false; ///< below min_normal round by scaling (emin above fp32's); else masking throughout
  bool f16_rn = false;     ///< fp16 to nearest even: the host's fp32-to-fp16 conversion rounds RO_24 (hosted_loop_f16)
  int drop = 0;            ///< fp32 fraction bits the format does not keep
  std::uint32_t mask = 0;
  std::uint32_t min_normal_bits = 0, max_bits = 0;  ///< f's smallest normal and largest finite, as fp32 bits
  float up = 0, down = 0;

  FloatHost(const KernelTraits& t, StepKind step, bool generic) {
    const Format& f = *t.acc;
    const Format &fa = *t.a_operand, &fb = *t.b_operand;
    const bool mode = t.acc_rounding == Rounding::NearestEven || t.acc_rounding == Rounding::TowardZero;
    // fp32 grid at least 2 bits finer than f's everywhere in f's range: p <= 22, and in f's subnormal range
    // fp32's quantum 2^-149 <= f's quantum / 4. Products exact in fp32: at most 24 bits, no quantum below
    // 2^-149, finite.
    ok = !generic && step == StepKind::Fma && mode && !(f == f32) && f.specials == Specials::IEEE && f.subnormals && f.precision() <= 22 &&
         f.emax() <= 127 && f.emin() >= -126 && f.emin() - f.frac_bits >= -147 && (f.emin() == -126 || f.frac_bits - f.emin() <= 126) && fa.precision() + fb.precision() <= 24 &&
         fa.min_subnormal() * fb.min_subnormal() >= 0x1p-149 && fa.max_finite() * fb.max_finite() <= 0x1p127;
    if (!ok) return;
    rz = t.acc_rounding == Rounding::TowardZero;
    drop = 23 - f.frac_bits;
    mask = (std::uint32_t{1} << drop) - 1;
    scaled_sub = f.emin() > -126;
    f16_rn = !rz && f == f16;
    min_normal_bits = std::bit_cast<std::uint32_t>(static_cast<float>(f.min_normal()));
    up = std::ldexp(1.0f, f.frac_bits - f.emin());  // <= 2^126 where used (see ok)
    down = std::ldexp(1.0f, f.emin() - f.frac_bits);
    max_bits = std::bit_cast<std::uint32_t>(static_cast<float>(f.max_finite()));
  }

  /// round_f(p + acc), p exact; RZ: toward zero (else to nearest even), SCALED: scaled_sub, MODE_RZ: the
  /// host's rounding mode is toward zero (RZ only; else it is to nearest). Integer selects only (a float
  /// comparison may trap, which keeps the compiler from if-converting), and this file compiled with
  /// -fno-trapping-math (suites/CMakeLists.txt; the SCALED branch's float operations): the row loop vectorises.
  template <bool RZ, bool SCALED, bool MODE_RZ>
  float step(float p, float acc) const {
    static_assert(RZ || !MODE_RZ, "the toward-zero mode serves toward-zero accumulators only");
    constexpr std::uint32_t kSign = 0x80000000u, kMag = 0x7FFFFFFFu, kInf = 0x7F800000u;
    const float s = p + acc;
    const std::uint32_t sb = std::bit_cast<std::uint32_t>(s);
    if constexpr (MODE_RZ && !SCALED) {
      // s = RZ_24(p + acc): truncated to f's bits and clamped to f's largest finite value (an fp32 sum above
      // it, toward zero) it is RZ_f(p + acc); Inf and NaN as the addition gives them (a finite sum does not
      // overflow toward zero). The same as the general form below, in 6 integer operations.
      const std::uint32_t mag = std::min(sb & ~mask & kMag, max_bits);
      return std::bit_cast<float>((sb & kMag) < kInf ? mag | (sb & kSign) : sb);
    }
    std::uint32_t b = sb;  // MODE_RZ: s = RZ_24(p + acc), which truncation into f may take for the exact sum
    if constexpr (!MODE_RZ) {
      const float bb = s - p;
      const float e = (p - (s - bb)) + (acc - bb);  // exact: s + e = p + acc (Knuth's two-sum)
      const std::uint32_t eb = std::bit_cast<std::uint32_t>(e);
      const std::uint32_t inexact = (eb & kMag) != 0 ? 1u : 0u;
      b = sb - (inexact & ((eb ^ sb) >> 31));  // RZ_24: one step toward zero when e opposes s
      b |= inexact;                            // RO_24: the sticky bit
    }
    std::uint32_t rb = RZ ? b & ~mask : (b + (mask >> 1) + ((b >> drop) & 1u)) & ~mask;
    if constexpr (SCALED) {
      // Below f's normal range its grid is fixed: scale it to the integers (exact, |x| < 2^21), round to
      // an integer (truncation by conversion; to nearest even by adding and removing 1.5 2^23, one fp32
      // rounding), scale back; the sign is the operand's (a zero result included).
      const bool small = (b & kMag) < min_normal_bits;
      const std::uint32_t scaled = std::bit_cast<std::uint32_t>(std::bit_cast<float>(b) * up);  // unconditional: no branch
      const float x = std::bit_cast<float>(small ? scaled : 0u);
      const float xi = RZ ? static_cast<float>(static_cast<std::int32_t>(x)) : (x + 0x1.8p23f) - 0x1.8p23f;
      const std::uint32_t rs = (std::bit_cast<std::uint32_t>(xi * down) & kMag) | (b & kSign);
      rb = small ? rs : rb;
    }
    const std::uint32_t over = RZ ? max_bits : kInf;
    rb = (rb & kMag) > max_bits ? (rb & kSign) | over : rb;
    // Inf or NaN: as IEEE addition gives them, except an fp32 overflow of a finite sum (f's overflow too;
    // never in the toward-zero mode, where it is fp32's largest finite value).
    const bool finite_in = (std::bit_cast<std::uint32_t>(p) & kMag) < kInf && (std::bit_cast<std::uint32_t>(acc) & kMag) < kInf;
    const std::uint32_t special = finite_in && (sb & kMag) == kInf ? (sb & kSign) | over : sb;
    return std::bit_cast<float>((sb & kMag) < kInf ? rb : special);
  }
};

/// s_j = step(s_j, a_q b_qj) for q = lo..hi-1 (b: B as floats, row-major k x n), the fp32-hosted loop. Not
/// inlined: with MODE_RZ its caller sets the rounding mode around the call, and GCC does not keep float
/// operations on their side of fesetround (no -frounding-math), but cannot move them out of a call.
template <bool RZ, bool SCALED, bool MODE_RZ>
[[gnu::noinline]] void hosted_loop(const FloatHost h, const double* a, const float* b, std::int64_t n, std::int64_t lo, std::int64_t hi,
                                   float* s) {
  // h by value: stores through s cannot touch its float members, so the loop vectorises.
  for (std::int64_t q = lo; q < hi; ++q) {
    const float aq = static_cast<float>(a[q]);  // exact: an operand value (fits_f32), the product exact (FloatHost::ok)
    const float* bq = b + q * n;
    for (std::int64_t j = 0; j < n; ++j) s[j] = h.step<RZ, SCALED, MODE_RZ>(aq * bq[j], s[j]);
  }
}

#ifdef FPCERT_EMULATE_F16C
/// hosted_loop for the fp16 accumulator to nearest even, 8 columns at a time: RO_24(acc + p) formed as
/// FloatHost::step forms it, then rounded into fp16 by the host's conversion (VCVTPS2PH with its rounding
/// field to nearest even: IEEE's conversion, fp16 subnormals and overflow to Inf included; Intel SDM vol. 2)
/// and back to fp32 (exact) instead of masking and scaling. A non-finite sum is kept as the addition gives
/// it (FloatHost::step's rule to nearest: an fp32 overflow of a finite sum is Inf, fp16's overflow too).
/// The last n % 8 columns take FloatHost::step.
[[gnu::noinline]] void hosted_loop_f16(const FloatHost h, const double* a, const float* b, std::int64_t n, std::int64_t lo, std::int64_t hi,
                                       float* s) {
  const __m256i mag = _mm256_set1_epi32(0x7FFFFFFF), inf = _mm256_set1_epi32(0x7F800000), one = _mm256_set1_epi32(1);
  const std::int64_t n8 = n / 8 * 8;
  for (std::int64_t q = lo; q < hi; ++q) {
    const float aq = static_cast<float>(a[q]);
    const __m256 va = _mm256_set1_ps(aq);
    const float* bq = b + q * n;
    for (std::int64_t j = 0; j < n8; j += 8) {
      const __m256 p = _mm256_mul_ps(va, _mm256_loadu_ps(bq + j)), acc = _mm256_loadu_ps(s + j);
      const __m256 sum = _mm256_add_ps(p, acc), bb = _mm256_sub_ps(sum, p);
      const __m256 e = _mm256_add_ps(_mm256_sub_ps(p, _mm256_sub_ps(sum, bb)), _mm256_sub_ps(acc, bb));  // two-sum: exact
      const __m256i sb = _mm256_castps_si256(sum), eb = _mm256_castps_si256(e);
      const __m256i inexact = _mm256_andnot_si256(_mm256_cmpeq_epi32(_mm256_and_si256(eb, mag), _mm256_setzero_si256()), one);
      const __m256i opposes = _mm256_srli_epi32(_mm256_xor_si256(eb, sb), 31);
      const __m256i ro = _mm256_or_si256(_mm256_sub_epi32(sb, _mm256_and_si256(inexact, opposes)), inexact);  // RO_24
      const __m256 r = _mm256_cvtph_ps(_mm256_cvtps_ph(_mm256_castsi256_ps(ro), _MM_FROUND_TO_NEAREST_INT));
      const __m256i finite = _mm256_cmpgt_epi32(inf, _mm256_and_si256(sb, mag));
      _mm256_storeu_ps(s + j, _mm256_blendv_ps(sum, r, _mm256_castsi256_ps(finite)));
    }
    for (std::int64_t j = n8; j < n; ++j) s[j] = h.step<false, true, false>(aq * bq[j], s[j]);
  }
}
#endif

/// The calling thread's rounding mode set toward zero for a scope (std::fesetround), restored at its end.
class TowardZeroMode {
 public:
  TowardZeroMode() : saved_(std::fegetround()), ok_(std::fesetround(FE_TOWARDZERO) == 0 && std::fegetround() == FE_TOWARDZERO) {}
  ~TowardZeroMode() { std::fesetround(saved_); }
  TowardZeroMode(const TowardZeroMode&) = delete;
  TowardZeroMode& operator=(const TowardZeroMode&) = delete;
  bool ok() const { return ok_; }  ///< the mode is set (else the caller takes the two-sum road)

 private:
  int saved_;
  bool ok_;
};

/// One row of C at a time: every sum runs over K for the whole row, the columns j innermost (independent
/// chains: the fp32 FMA loop vectorises). A: m x k, B: k x n, row-major operand values.
class Emulator {
 public:
  Emulator(const KernelTraits& t, std::int64_t n, std::int64_t k, const double* b, bool generic)
      : t_(t), o_(t.sum_order), n_(n), k_(k), b_(b), acc_(*t.acc, t.acc_rounding, generic),
        prod_(t.exact_products ? *t.acc : *t.product_format, t.acc_rounding, generic),
        outer_(t.promote_every > 0 ? Arith(*t.promote_format, Rounding::NearestEven, generic) : acc_),
        host_(t, t.sum_order.step, generic) {
    if (acc_.fast || host_.ok) {
      bf_.resize(static_cast<std::size_t>(k * n));
      for (std::size_t x = 0; x < bf_.size(); ++x) bf_[x] = static_cast<float>(b[x]);
    }
    if (o_.kind == OrderKind::TensorCoreBlock && o_.block_model.params) {
      const FusedDotParams& p = *o_.block_model.params;
      const std::int64_t pad = o_.block_model.pad > 0 ? o_.block_model.pad : o_.block;
      kpad_ = (k + pad - 1) / pad * pad;
      // Whole groups of kFusedLanes columns through fused_dot_lanes (not on the generic path, which keeps one
      // fused_dot per element and instruction: the tests hold the two equal): B's codes and their lane decoding as
      // a K-major panel (row-major kpad_ x n, rows beyond k zero). The other columns' codes column by column.
      lanes_end_ = !generic && fused_lanes_apply(p, o_.block) ? n / kFusedLanes * kFusedLanes : 0;
      if (lanes_end_ > 0) {
        const auto size = static_cast<std::size_t>(kpad_ * n);
        bpanel_code_.assign(size, 0u);
        bpanel_value_.resize(size);
        bpanel_ref_.resize(size);
        for (std::size_t x = 0; x < static_cast<std::size_t>(k * n); ++x) bpanel_code_[x] = card_operand_code(p.b, b[x]);
        fused_lane_operands(p, true, bpanel_code_.data(), size, bpanel_value_.data(), bpanel_ref_.data());
      }
      bcodes_.assign(static_cast<std::size_t>(kpad_ * (n - lanes_end_)), 0u);
      for (std::int64_t q = 0; q < k; ++q)
        for (std::int64_t j = lanes_end_; j < n; ++j)
          bcodes_[static_cast<std::size_t>((j - lanes_end_) * kpad_ + q)] =
              lanes_end_ > 0 ? bpanel_code_[static_cast<std::size_t>(q * n + j)] : card_operand_code(p.b, b[q * n + j]);
    }
  }

  /// Row i of the result before the output rounding, from row i of A (k values). `inexact` (may be null): set to the
  /// row's card block results that rounded inexactly below the accumulator's normal range (0 for orders without a card).
  void row(const double* a, double* c, std::uint64_t* inexact = nullptr) const {
    if (inexact) *inexact = 0;
    switch (o_.kind) {
      case OrderKind::Sequential:
        if (t_.promote_every > 0) return blocked(a, c, t_.promote_every, Combine::Sequential, Combine::Sequential);
        return sequential(a, 0, k_, c);
      case OrderKind::BlockedK: return blocked(a, c, o_.block, o_.inner, o_.outer);
      case OrderKind::SplitK: {
        const std::int64_t chunk = (k_ + o_.splits - 1) / o_.splits;
        std::vector<std::vector<double>> parts(static_cast<std::size_t>(o_.splits));
        for (int s = 0; s < o_.splits; ++s) {
          parts[static_cast<std::size_t>(s)].resize(static_cast<std::size_t>(n_));
          sequential(a, std::min(k_, s * chunk), std::min(k_, (s + 1) * chunk), parts[static_cast<std::size_t>(s)].data());
        }
        return combine(parts, o_.outer, acc_, c);
      }
      case OrderKind::Pairwise:
        if (acc_.fast && prod_.fast) return pairwise_f32(a, c);
        return pairwise_products(a, 0, k_, c);
      case OrderKind::TensorCoreBlock:
        if (o_.block_model.params) return tensor_core_card(a, c, inexact);
        for (std::int64_t j = 0; j < n_; ++j) c[j] = tensor_core(a, j);
        return;
      case OrderKind::SplitProducts:
      case OrderKind::Pow2Scaled:
      case OrderKind::Ozaki2:
      case OrderKind::Unknown: break;
    }
    throw std::logic_error("emulator: unhandled order");
  }

 private:
  double B(std::int64_t q, std::int64_t j) const { return b_[q * n_ + j]; }

  /// c_j = step(c_j, a_q, b_qj) for q = lo..hi-1, from +0.
  void sequential(const double* a, std::int64_t lo, std::int64_t hi, double* c) const {
    if (acc_.fast && o_.step == StepKind::Fma) {  // the hot loop: fmaf along the row, vectorised over j
      std::vector<float> s(static_cast<std::size_t>(n_), 0.0f);
      float* sp = s.data();
      for (std::int64_t q = lo; q < hi; ++q) {
        const float aq = static_cast<float>(a[q]);
        const float* bq = bf_.data() + q * n_;
        for (std::int64_t j = 0; j < n_; ++j) sp[j] = std::fma(aq, bq[j], sp[j]);
      }
      for (std::int64_t j = 0; j < n_; ++j) c[j] = sp[j];
      return;
    }
    if (host_.ok) {  // a narrow accumulator hosted in fp32 (FloatHost), vectorised over j
      if (host_.rz) return host_.scaled_sub ? hosted<true, true>(a, lo, hi, c) : hosted<true, false>(a, lo, hi, c);
      return host_.scaled_sub ? hosted<false, true>(a, lo, hi, c) : hosted<false, false>(a, lo, hi, c);
    }
    for (std::int64_t j = 0; j < n_; ++j) c[j] = 0.0;
    for (std::int64_t q = lo; q < hi; ++q)
      for (std::int64_t j = 0; j < n_; ++j)
        c[j] = o_.step == StepKind::Fma ? acc_.fma(a[q], B(q, j), c[j]) : acc_.add(c[j], leaf(a[q], B(q, j)));
  }
  template <bool RZ, bool SCALED>
  void hosted(const double* a, std::int64_t lo, std::int64_t hi, double* c) const {
    std::vector<float> s(static_cast<std::size_t>(n_), 0.0f);
    bool done = false;
    if constexpr (RZ) {
      const TowardZeroMode mode;
      if (mode.ok()) hosted_loop<RZ, SCALED, true>(host_, a, bf_.data(), n_, lo, hi, s.data());
      done = mode.ok();
    }
#ifdef FPCERT_EMULATE_F16C
    if (!RZ && SCALED && host_.f16_rn) {
      hosted_loop_f16(host_, a, bf_.data(), n_, lo, hi, s.data());
      done = true;
    }
#endif
    if (!done) hosted_loop<RZ, SCALED, false>(host_, a, bf_.data(), n_, lo, hi, s.data());
    for (std::int64_t j = 0; j < n_; ++j) c[j] = s[static_cast<std::size_t>(j)];
  }
  /// A product as a leaf of a tree or the addend of mul_add: rounded into the product format (or into
  /// the accumulator when products are declared exact).
  double leaf(double a, double b) const { return prod_.round(a * b); }

  /// The pairwise order in fp32 to nearest with products rounded into fp32 (or exact there): each leaf
  /// RN_f32(a b) is one float multiplication (operands are floats), each join one float addition; the same
  /// recursion as pairwise_level, on float rows (vectorised over j), a pair of leaves in one pass.
  void pairwise_f32(const double* a, double* c) const {
    std::vector<std::vector<float>> scratch;
    std::vector<float> s(static_cast<std::size_t>(n_));
    pairwise_f32_level(a, 0, k_, s.data(), scratch, 0);
    for (std::int64_t j = 0; j < n_; ++j) c[j] = s[static_cast<std::size_t>(j)];
  }
  void pairwise_f32_level(const double* a, std::int64_t lo, std::int64_t hi, float* c, std::vector<std::vector<float>>& scratch,
                          std::size_t level) const {
    const std::int64_t len = hi - lo;
    if (len <= 0) {
      std::fill(c, c + n_, 0.0f);
      return;
    }
    if (len <= 2) {
      const float a0 = static_cast<float>(a[lo]);
      const float* b0 = bf_.data() + lo * n_;
      if (len == 1) {
        for (std::int64_t j = 0; j < n_; ++j) c[j] = a0 * b0[j];
        return;
      }
      const float a1 = static_cast<float>(a[lo + 1]);
      const float* b1 = b0 + n_;
      for (std::int64_t j = 0; j < n_; ++j) c[j] = a0 * b0[j] + a1 * b1[j];  // -ffp-contract=off: two products, one sum
      return;
    }
    if (scratch.size() <= level) scratch.emplace_back(static_cast<std::size_t>(n_));
    const std::int64_t mid = lo + (len + 1) / 2;
    pairwise_f32_level(a, lo, mid, c, scratch, level + 1);
    float* right = scratch[level].data();
    pairwise_f32_level(a, mid, hi, right, scratch, level + 1);
    for (std::int64_t j = 0; j < n_; ++j) c[j] += right[j];
  }

  void pairwise_products(const double* a, std::int64_t lo, std::int64_t hi, double* c) const {
    std::vector<std::vector<double>> scratch;  // one row of partial sums per recursion level
    pairwise_level(a, lo, hi, c, scratch, 0);
  }
  void pairwise_level(const double* a, std::int64_t lo, std::int64_t hi, double* c, std::vector<std::vector<double>>& scratch,
                      std::size_t level) const {
    if (hi <= lo) {
      for (std::int64_t j = 0; j < n_; ++j) c[j] = 0.0;
      return;
    }
    if (hi - lo == 1) {
      for (std::int64_t j = 0; j < n_; ++j) c[j] = acc_.round(leaf(a[lo], B(lo, j)));
      return;
    }
    if (scratch.size() <= level) scratch.emplace_back(static_cast<std::size_t>(n_));
    const std::int64_t mid = lo + (hi - lo + 1) / 2;
    pairwise_level(a, lo, mid, c, scratch, level + 1);
    double* right = scratch[level].data();
    pairwise_level(a, mid, hi, right, scratch, level + 1);
    for (std::int64_t j = 0; j < n_; ++j) c[j] = acc_.add(c[j], right[j]);
  }

  /// c_j = round_acc(the exact sum of a_q b_qj for q = lo..hi-1). The sum runs in double along the row with
  /// a two-sum per addition: where every error term is zero the double is the exact sum (always, for the
  /// block-scaled formats whose block sums span at most 2^53 units); a column where one is not is summed
  /// again by the oracle's ExactSum. Products are exact in double (emulation_unavailable's condition).
  void exact_block(const double* a, std::int64_t lo, std::int64_t hi, double* c) const {
    // lost_j: the sum of the error terms' magnitudes, zero exactly when every error term is (a sum of
    // non-negative doubles rounds to zero only when all are zero); one vector type along the row.
    std::vector<double> s(static_cast<std::size_t>(n_), 0.0), lost(static_cast<std::size_t>(n_), 0.0);
    double* sp = s.data();
    double* lp = lost.data();
    for (std::int64_t q = lo; q < hi; ++q) {
      const double aq = a[q];
      const double* bq = b_ + q * n_;
      for (std::int64_t j = 0; j < n_; ++j) {
        const double x = sp[j], p = aq * bq[j], t = x + p, bv = t - x;
        const double e = (x - (t - bv)) + (p - bv);
        sp[j] = t;
        lp[j] = lp[j] + std::fabs(e);
      }
    }
    const Rounder rr{t_.acc_rounding, default_saturation(*t_.acc), NanPayload::Preserve};
    for (std::int64_t j = 0; j < n_; ++j) {
      const double x = s[static_cast<std::size_t>(j)];
      if (lost[static_cast<std::size_t>(j)] == 0 || !std::isfinite(x)) {
        c[j] = acc_.round(x);
        continue;
      }
      ExactSum sum;
      for (std::int64_t q = lo; q < hi; ++q) sum.add_product(a[q], B(q, j));
      std::uint8_t st = 0;
      c[j] = to_value(*t_.acc, round_ref(*t_.acc, sum.finalize(st), rr).code);
    }
  }

  void combine(const std::vector<std::vector<double>>& parts, Combine how, const Arith& ar, double* c) const {
    if (how == Combine::Sequential) {
      for (std::int64_t j = 0; j < n_; ++j) c[j] = 0.0;
      for (const auto& p : parts)
        for (std::int64_t j = 0; j < n_; ++j) c[j] = ar.add(c[j], p[static_cast<std::size_t>(j)]);
      return;
    }
    std::vector<double> v(parts.size());
    for (std::int64_t j = 0; j < n_; ++j) {
      for (std::size_t s = 0; s < parts.size(); ++s) v[s] = parts[s][static_cast<std::size_t>(j)];
      c[j] = pairwise_values(v, 0, static_cast<std::int64_t>(v.size()), ar);
    }
  }
  double pairwise_values(const std::vector<double>& v, std::int64_t lo, std::int64_t hi, const Arith& ar) const {
    if (hi <= lo) return 0.0;
    if (hi - lo == 1) return v[static_cast<std::size_t>(lo)];
    const std::int64_t mid = lo + (hi - lo + 1) / 2;
    return ar.add(pairwise_values(v, lo, mid, ar), pairwise_values(v, mid, hi, ar));
  }

  void blocked(const double* a, double* c, std::int64_t block, Combine inner, Combine outer) const {
    std::vector<std::vector<double>> parts;
    for (std::int64_t q = 0; q < k_; q += block) {
      const std::int64_t e = std::min(k_, q + block);
      parts.emplace_back(static_cast<std::size_t>(n_));
      if (inner == Combine::Sequential) sequential(a, q, e, parts.back().data());
      else if (inner == Combine::Pairwise) pairwise_products(a, q, e, parts.back().data());
      else exact_block(a, q, e, parts.back().data());
    }
    // Promotion: the partials move into the wider outer format exactly (it holds every inner value).
    combine(parts, outer, outer_, c);
  }

  /// Steps of the instruction's k, each chaining blocks of the fused length: D = round(C + the block's
  /// exact products), with promotion to the outer format every promote_every products.
  double tensor_core(const double* a, std::int64_t j) const {
    const int fused = o_.block_model.fused_length > 0 ? o_.block_model.fused_length : o_.block;
    const Rounder rr{o_.block_model.block_rounding, default_saturation(*t_.acc), NanPayload::Preserve};
    ExactSum sum;
    double frag = 0.0, outer = 0.0;
    for (std::int64_t q = 0; q < k_; q += fused) {
      sum.clear();
      sum.add(frag);
      // An Inf or NaN in the block (ExactSum takes finite values only): IEEE's sum of the block, which order
      // cannot change (NaN, or the one-signed infinity; docs/suites.md, "values.special").
      bool special = !std::isfinite(frag);
      double ieee = frag;
      for (std::int64_t x = q; x < std::min(k_, q + fused); ++x) {
        const double pr = a[x] * B(x, j);
        if (!std::isfinite(pr)) special = true;
        ieee += pr;
        if (!special) sum.add_product(a[x], B(x, j));
      }
      std::uint8_t st = 0;
      if (special) frag = to_value(*t_.acc, round_double(*t_.acc, ieee, rr).code);
      else frag = to_value(*t_.acc, round_ref(*t_.acc, sum.finalize(st), rr).code);
      if (t_.promote_every > 0 && (q + fused) % t_.promote_every == 0) {
        outer = outer_.add(outer, frag);
        frag = 0.0;
      }
    }
    return t_.promote_every > 0 ? outer_.add(outer, frag) : frag;
  }

  /// The card's block model composed with the kernel's K-loop: K zero-padded to a multiple of the order's
  /// pad, steps of the instruction's k in ascending order, each step's D (a code of the card's accumulator)
  /// the next step's C, from +0; with promotion, every promote_every products the step chain's D is added to
  /// the promotion format's accumulator (one rounding) and the chain restarts from +0, and what is left is
  /// added at the end (kernels/gemm/cuda/mma_kernel.cuh does exactly this).
  void tensor_core_card(const double* a, double* c, std::uint64_t* inexact) const {
    const FusedDotParams& p = *o_.block_model.params;
    FusedDotNotes notes;
    std::vector<std::uint32_t> arow(static_cast<std::size_t>(kpad_), 0u);
    for (std::int64_t q = 0; q < k_; ++q) arow[static_cast<std::size_t>(q)] = card_operand_code(p.a, a[q]);
    const int step = o_.block;
    if (lanes_end_ > 0) tensor_core_lanes(arow.data(), c, notes);
    for (std::int64_t j = lanes_end_; j < n_; ++j) {
      const std::uint32_t* bcol = bcodes_.data() + (j - lanes_end_) * kpad_;
      std::uint64_t d = 0;  // +0
      double outer = 0.0;
      for (std::int64_t q = 0; q < kpad_; q += step) {
        d = fused_dot(p, arow.data() + q, bcol + q, step, d, &notes);
        if (t_.promote_every > 0 && (q + step) % t_.promote_every == 0) {
          outer = outer_.add(outer, to_value(p.acc, d));
          d = 0;
        }
      }
      c[j] = t_.promote_every > 0 ? outer_.add(outer, to_value(p.acc, d)) : to_value(p.acc, d);
    }
    if (inexact) *inexact = notes.subnormal_inexact;
  }

  /// tensor_core_card for the columns below lanes_end_, kFusedLanes at a time (fused_dot_lanes: the same D bit for bit
  /// as fused_dot, and the same notes). arow: A's operand codes of this row (kpad_).
  void tensor_core_lanes(const std::uint32_t* arow, double* c, FusedDotNotes& notes) const {
    const FusedDotParams& p = *o_.block_model.params;
    const int step = o_.block;
    const std::int64_t pe = t_.promote_every;
    const auto width = static_cast<std::size_t>(lanes_end_);
    std::vector<float> av(static_cast<std::size_t>(kpad_));
    std::vector<std::int16_t> ar(static_cast<std::size_t>(kpad_));
    fused_lane_operands(p, false, arow, static_cast<std::size_t>(kpad_), av.data(), ar.data());
    std::vector<std::uint32_t> d(width, 0u);  // +0
    std::vector<double> outer(pe > 0 ? width : 0, 0.0);
    for (std::int64_t q = 0; q < kpad_;) {
      // Instructions up to the next promotion (every promote_every products, a whole number of instructions).
      const std::int64_t len = pe > 0 ? std::min(pe - q % pe, kpad_ - q) : kpad_ - q;
      const FusedLaneRow ra{arow + q, av.data() + q, ar.data() + q};
      const auto at = static_cast<std::size_t>(q * n_);
      const FusedLanePanel pb{bpanel_code_.data() + at, bpanel_value_.data() + at, bpanel_ref_.data() + at, n_};
      fused_dot_lanes(p, step, static_cast<int>(len / step), ra, pb, lanes_end_, d.data(), &notes);
      q += len;
      if (pe > 0 && q % pe == 0)
        for (std::size_t j = 0; j < width; ++j) outer[j] = outer_.add(outer[j], to_value(p.acc, d[j])), d[j] = 0;
    }
    for (std::size_t j = 0; j < width; ++j) c[j] = pe > 0 ? outer_.add(outer[j], to_value(p.acc, d[j])) : to_value(p.acc, d[j]);
  }

  const KernelTraits& t_;
  const SummationOrder& o_;
  std::int64_t n_, k_;
  const double* b_;
  std::int64_t kpad_ = 0;               ///< tensor-core card: K rounded up to the order's pad
  std::vector<std::uint32_t> bcodes_;   ///< tensor-core card: B's operand codes, column by column from lanes_end_ (kpad_ each, zero-padded)
  std::int64_t lanes_end_ = 0;          ///< tensor-core card: columns [0, lanes_end_) go through fused_dot_lanes
  std::vector<std::uint32_t> bpanel_code_;  ///< ... B's operand codes, row-major kpad_ x n (rows beyond k zero)
  std::vector<float> bpanel_value_;         ///< ... and their fused_lane_operands decoding
  std::vector<std::int16_t> bpanel_ref_;
  std::vector<float> bf_;  ///< B as floats for the fp32 loops
  Arith acc_, prod_, outer_;
  FloatHost host_;
};

}  // namespace

std::vector<std::uint64_t> emulate_gemm(const KernelTraits& t, std::int64_t m, std::int64_t n, std::int64_t k,
                                        const std::vector<double>& a_given, const std::vector<double>& b_given, TensorScales ts,
                                        EmulationPath path) {
  const bool generic = path == EmulationPath::Generic;
  if (const std::string why = emulation_unavailable(t); !why.empty()) throw std::invalid_argument("emulate_gemm: " + why);
  const bool final_scale = t.sum_order.final_scale == FinalScale::Tensor;
  if (final_scale && !(ts.a > 0 && ts.b > 0 && std::isfinite(ts.a) && std::isfinite(ts.b)))
    throw std::invalid_argument("emulate_gemm: final_scale=tensor needs the operands' positive finite tensor scales");
  // The per-tensor scales leave the operands exactly (each value is an element times its block scale times s_t).
  auto unscaled = [&](const std::vector<double>& v, double s) {
    std::vector<double> u(v);
    if (final_scale)
      for (double& x : u) x /= s;
    return u;
  };
  const std::vector<double> a = unscaled(a_given, ts.a), b = unscaled(b_given, ts.b);
  std::vector<double> value;
  // A card block result rounded inexactly below the normal range declines the verdict (below): the emulation stops at the
  // first row that meets one.
  emulate_detail::FirstInexactRow inexact;
  if (t.sum_order.kind == OrderKind::SplitProducts && t.sum_order.block_model.params) {
    const SummationOrder& o = t.sum_order;
    value = emulate_detail::split_products_tc(*find_split_scheme(o.split_scheme), *o.block_model.params, o.block,
                                              o.block_model.pad > 0 ? o.block_model.pad : o.block, m, n, k, a, b, generic, nullptr, &inexact);
  } else if (t.sum_order.kind == OrderKind::SplitProducts) {
    value = emulate_detail::split_products(*find_split_scheme(t.sum_order.split_scheme), m, n, k, a, b, generic);
  } else if (t.sum_order.kind == OrderKind::Ozaki2) {  // the scheme itself: its residue GEMMs are exact, so any order (and
                                                       // any engine: a device from 2^27 products, docs/fp64.md)
    const std::shared_ptr<ExactGemmEngine> engine = generic ? nullptr : default_gemm_engine();
    value = ozaki2::gemm(ozaki2::make_plan(t.sum_order.moduli), a.data(), b.data(), m, n, k, nullptr, ozaki2::Route::Host, engine.get());
  } else if (t.sum_order.kind == OrderKind::Pow2Scaled) {
    const SummationOrder& o = t.sum_order;
    value = emulate_detail::pow2_scaled(*find_bf16_on_f16_policy(o.scale_scheme), m, n, k, a, b, generic,
                                        o.term_order == OrderKind::TensorCoreBlock ? &*o.block_model.params : nullptr, o.block,
                                        o.block_model.pad > 0 ? o.block_model.pad : o.block, nullptr, &inexact);
  } else {
    const std::vector<double> ao = operand_values(a, *t.a_input, *t.a_operand, t.input_rounding);
    const std::vector<double> bo = operand_values(b, *t.b_input, *t.b_operand, t.input_rounding);
    // A tensor-core card's chains on a device where one answers: the rows it leaves (an element the fast path does not
    // decide: Inf, NaN, a block result outside fp32's normal range) and every row otherwise by the host's emulator, which
    // is not built (B's codes and lane panel) when the device left no row.
    std::vector<std::uint8_t> host_rows;
    if (generic || !tensor_core_on_device(t, m, n, k, ao, bo, value, host_rows)) host_rows.assign(static_cast<std::size_t>(m), 1);
    if (std::find(host_rows.begin(), host_rows.end(), std::uint8_t{1}) != host_rows.end()) {
      const Emulator e(t, n, k, bo.data(), generic);
      value.resize(static_cast<std::size_t>(m * n));
      parallel_for(static_cast<std::uint64_t>(m), 1, [&](std::uint64_t i0, std::uint64_t i1, unsigned) {
        for (std::uint64_t i = i0; i < i1; ++i) {
          const auto row = static_cast<std::int64_t>(i);
          if (!host_rows[i] || inexact.skip(row)) continue;
          std::uint64_t met = 0;
          e.row(ao.data() + row * k, value.data() + row * n, &met);
          if (met) inexact.mark(row);
        }
      });
    }
  }
  if (inexact.found())
    throw EmulationDeclined(fmt::format("block results of the behaviour card round inexactly below {}'s normal range (the first in row {}; "
                                        "the emulation stopped there), where the card is not validated (docs/tensor_cores.md, \"Where a "
                                        "card is not validated\")",
                                        t.sum_order.block_model.params ? t.sum_order.block_model.params->acc.tag : "the accumulator",
                                        inexact.row.load()));
  if (final_scale) {  // C = RN_acc(acc * RN_acc(s_A s_B)): both products exact in double (24-bit values)
    const Arith acc(*t.acc, Rounding::NearestEven, generic);
    const double tt = acc.round(ts.a * ts.b);
    for (double& v : value) v = acc.round(v * tt);
  }
  // The output rounding (round to nearest even into the output format; exact when it is the final format).
  const Format& of = *t.out;
  const Rounder rn = Rounder::nearest(of);
  std::vector<std::uint64_t> codes(value.size());
  const bool f32_out = of == f32 && !generic;
  for (std::size_t x = 0; x < value.size(); ++x) {
    const auto v = static_cast<float>(value[x]);
    // An fp32 value (Inf and signed zeros included) is its own rounding: its code is its bit pattern.
    if (f32_out && static_cast<double>(v) == value[x]) codes[x] = std::bit_cast<std::uint32_t>(v);
    else codes[x] = round_double(of, value[x], rn).code;
  }
  return codes;
}

}  // namespace fpcert
