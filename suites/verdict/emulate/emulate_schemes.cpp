// suites/verdict/emulate/emulate_schemes.cpp — split products and power-of-two scaling onto fp16, emulated
// (suites/verdict/emulate/emulate_schemes.hpp; the semantics are kernels/order.hpp's and docs/emulation.md's).
#include "suites/verdict/emulate/emulate_schemes.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <optional>

#include "base/parallel.hpp"
#include "kernels/emu/emu_arith.cuh"
#include "oracle/card_chains.hpp"
#include "oracle/fused_dot.hpp"
#include "oracle/gemm_engine.hpp"
#include "oracle/refvalue.hpp"
#include "oracle/round.hpp"
#include "suites/verdict/emulate/emulate_round.hpp"

namespace fpcert::emulate_detail {

namespace {

/// The slice matrices of v (one float vector per slice): split_value rounds each remainder into the slice
/// format (saturating a finite overflow) and subtracts it (exact in fp32). Where no slice overflows that
/// rounding is f32_grid_round's, for bf16 and tf32 slices to nearest even or toward zero; an overflow, Inf
/// or NaN takes split_value itself.
std::vector<std::vector<float>> slice_matrices(const SplitScheme& sc, const std::vector<double>& v, bool generic) {
  const bool bits = !generic && f32_grid(*sc.slice) && (sc.rounding == Rounding::NearestEven || sc.rounding == Rounding::TowardZero);
  const int drop = 23 - sc.slice->frac_bits;
  auto split = [&](float x, float* sl) {
    float rest = x;
    for (int l = 0; bits && std::isfinite(x) && l < sc.slices; ++l) {
      sl[l] = f32_grid_round(rest, drop, sc.rounding == Rounding::NearestEven);
      if (std::isinf(sl[l])) break;
      rest = rest - sl[l];
      if (l == sc.slices - 1) return;
    }
    split_value(sc, x, sl);
  };
  std::vector<std::vector<float>> s(static_cast<std::size_t>(sc.slices), std::vector<float>(v.size()));
  float sl[3];
  for (std::size_t x = 0; x < v.size(); ++x) {
    split(static_cast<float>(v[x]), sl);
    for (int q = 0; q < sc.slices; ++q) s[static_cast<std::size_t>(q)][x] = sl[q];
  }
  return s;
}

/// One operand matrix's card codes laid out for fused_dot_lanes: row-major rows x cols codes with their lane decoding
/// (B: rows = K padded, a K-major panel; A: one row at a time, cols = K padded).
struct LaneCodes {
  std::vector<std::uint32_t> code;
  std::vector<float> value;
  std::vector<std::int16_t> ref;
  LaneCodes(const FusedDotParams& p, bool b_side, std::vector<std::uint32_t> codes) : code(std::move(codes)), value(code.size()), ref(code.size()) {
    fused_lane_operands(p, b_side, code.data(), code.size(), value.data(), ref.data());
  }
};

/// The card's K-loop over instructions [lo, hi) (steps of `step`) of one row of A against columns [j0, j1) of the
/// panel b (row-major, n columns), each column's chain from its d[j] (fp32 codes, updated): fused_dot_lanes on
/// whole groups of kFusedLanes columns, fused_dot per element on the rest. a: the row's codes and decoding.
void card_kloop_lanes(const FusedDotParams& p, int step, const FusedLaneRow& a, const LaneCodes& b, std::int64_t n, std::int64_t lo,
                      std::int64_t hi, std::int64_t j0, std::int64_t j1, std::uint32_t* d, FusedDotNotes* notes) {
  const std::int64_t whole = (j1 - j0) / kFusedLanes * kFusedLanes;
  const auto at = static_cast<std::size_t>(lo * n + j0);
  if (whole > 0 && hi > lo) {
    const FusedLaneRow ra{a.code + lo, a.value + lo, a.ref + lo};
    const FusedLanePanel pb{b.code.data() + at, b.value.data() + at, b.ref.data() + at, n};
    fused_dot_lanes(p, step, static_cast<int>((hi - lo) / step), ra, pb, whole, d + j0, notes);
  }
  std::uint32_t col[64];  // one instruction's column codes (fused_lanes_apply: step <= 64)
  for (std::int64_t j = j0 + whole; j < j1; ++j)
    for (std::int64_t q = lo; q < hi; q += step) {
      for (int i = 0; i < step; ++i) col[i] = b.code[static_cast<std::size_t>((q + i) * n + j)];
      d[j] = static_cast<std::uint32_t>(fused_dot(p, a.code + q, col, step, d[j], notes));
    }
}

}  // namespace

std::uint32_t card_operand_code(const Format& f, double v) {
  if (f == tf32) return std::bit_cast<std::uint32_t>(static_cast<float>(v));
  // A value of f's normal range (or a zero) that is a float: its code from the float's bits (exponent rebiased,
  // fraction shifted), the encoding round_double would find; anything else through round_double.
  const auto x = static_cast<float>(v);
  if (static_cast<double>(x) == v && f32_normal_grid(f)) {
    const std::uint32_t b = std::bit_cast<std::uint32_t>(x), mag = b & 0x7FFFFFFFu, drop = static_cast<std::uint32_t>(23 - f.frac_bits);
    const auto sign = static_cast<std::uint32_t>((b >> 31) ? f.sign_mask() : 0);
    const int e = static_cast<int>(mag >> 23) - 127;
    if (mag == 0) return sign;
    const std::uint32_t code = static_cast<std::uint32_t>(e + f.bias) << f.frac_bits | (mag & 0x7FFFFFu) >> drop;
    if (e >= f.emin() && e <= f.emax() && code <= f.max_finite_code() && (mag & ((1u << drop) - 1)) == 0) return sign | code;
  }
  return static_cast<std::uint32_t>(round_double(f, v, Rounder::nearest(f)).code);
}

// The split-products order (suites/verdict/emulate/emulate_schemes.hpp).
std::vector<double> split_products(const SplitScheme& sc, std::int64_t m, std::int64_t n, std::int64_t k, const std::vector<double>& a,
                                   const std::vector<double>& b, bool generic) {
  const auto as = slice_matrices(sc, a, generic), bs = slice_matrices(sc, b, generic);
  std::vector<double> c(static_cast<std::size_t>(m * n));
  parallel_for(static_cast<std::uint64_t>(m), 1, [&](std::uint64_t i0, std::uint64_t i1, unsigned) {
    std::vector<float> merged(static_cast<std::size_t>(n)), s(static_cast<std::size_t>(n));
    for (std::uint64_t i = i0; i < i1; ++i) {
      bool first = true;
      for (const auto& [ia, ib] : sc.terms) {
        const float* pa = as[static_cast<std::size_t>(ia)].data() + static_cast<std::int64_t>(i) * k;
        std::fill(s.begin(), s.end(), 0.0f);
        for (std::int64_t q = 0; q < k; ++q) {
          const float* pb = bs[static_cast<std::size_t>(ib)].data() + q * n;
          for (std::int64_t j = 0; j < n; ++j) s[static_cast<std::size_t>(j)] = std::fma(pa[q], pb[j], s[static_cast<std::size_t>(j)]);
        }
        for (std::int64_t j = 0; j < n; ++j)
          merged[static_cast<std::size_t>(j)] = first ? s[static_cast<std::size_t>(j)] : merged[static_cast<std::size_t>(j)] + s[static_cast<std::size_t>(j)];
        first = false;
      }
      for (std::int64_t j = 0; j < n; ++j) c[static_cast<std::size_t>(static_cast<std::int64_t>(i) * n + j)] = merged[static_cast<std::size_t>(j)];
    }
  });
  return c;
}

// The split-products order on tensor cores (suites/verdict/emulate/emulate_schemes.hpp).
std::vector<double> split_products_tc(const SplitScheme& sc, const FusedDotParams& p, int step, int pad, std::int64_t m, std::int64_t n,
                                      std::int64_t k, const std::vector<double>& a, const std::vector<double>& b, bool generic,
                                      std::uint64_t* subnormal_inexact, FirstInexactRow* stop) {
  std::atomic<std::uint64_t> inexact{0};
  const auto as = slice_matrices(sc, a, generic), bs = slice_matrices(sc, b, generic);
  const std::int64_t kp = (k + pad - 1) / pad * pad;  // the K tail zero-padded: +0 operands, zero products
  const auto S = static_cast<std::size_t>(sc.slices);
  // Operand codes of the instruction, A's slices row by row and B's column by column (kp each).
  std::vector<std::vector<std::uint32_t>> ac(S, std::vector<std::uint32_t>(static_cast<std::size_t>(m * kp), 0u));
  std::vector<std::vector<std::uint32_t>> bc(S, std::vector<std::uint32_t>(static_cast<std::size_t>(n * kp), 0u));
  for (std::size_t l = 0; l < S; ++l) {
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t q = 0; q < k; ++q)
        ac[l][static_cast<std::size_t>(i * kp + q)] = card_operand_code(p.a, as[l][static_cast<std::size_t>(i * k + q)]);
    for (std::int64_t q = 0; q < k; ++q)
      for (std::int64_t j = 0; j < n; ++j)
        bc[l][static_cast<std::size_t>(j * kp + q)] = card_operand_code(p.b, bs[l][static_cast<std::size_t>(q * n + j)]);
  }
  // The small terms in the scheme's order (smallest first, the kernel's issue order), the leading term apart.
  std::vector<std::pair<int, int>> small;
  for (const auto& t : sc.terms)
    if (t.first || t.second) small.push_back(t);
  const std::uint64_t zero = 0;  // +0 in the accumulator's code
  std::vector<double> c(static_cast<std::size_t>(m * n));
  // One element by fused_dot, instruction by instruction (the generic path, and the device's general elements).
  const auto element = [&](std::int64_t i, std::int64_t j, FusedDotNotes& notes) {
    const std::size_t ra = static_cast<std::size_t>(i) * static_cast<std::size_t>(kp), cb = static_cast<std::size_t>(j * kp);
    std::uint64_t s = zero, acc = zero;
    for (std::int64_t q = 0; q < kp; q += step) {
      for (const auto& [ia, ib] : small)
        s = fused_dot(p, ac[static_cast<std::size_t>(ia)].data() + ra + q, bc[static_cast<std::size_t>(ib)].data() + cb + q, step, s, &notes);
      acc = fused_dot(p, ac[0].data() + ra + q, bc[0].data() + cb + q, step, acc, &notes);
    }
    const double big = to_double(p.acc, acc);
    // C = RN_f32(small + acc): one fp32 addition (__fadd_rn), here a float addition (SSE: no excess precision).
    c[static_cast<std::size_t>(i * n + j)] = small.empty() ? big : static_cast<double>(static_cast<float>(to_double(p.acc, s)) + static_cast<float>(big));
  };
  // On a device (oracle/card_chains.hpp): every element whose blocks the fast path decides, the rest here by fused_dot.
  if (!generic && S <= static_cast<std::size_t>(kCardChainMaxSlices) && small.size() + 1 <= static_cast<std::size_t>(kCardChainMaxTerms) &&
      card_chains_apply(p, step)) {
    if (const std::shared_ptr<ExactGemmEngine> engine = default_gemm_engine()) {
      CardChains job(p);
      job.step = step;
      job.m = m, job.n = n, job.kp = kp;
      job.slices = static_cast<int>(S);
      for (std::size_t l = 0; l < S; ++l) job.a[l] = ac[l].data(), job.b[l] = bc[l].data();
      for (const auto& [ia, ib] : small) job.term[job.terms++] = CardChainTerm{ia, ib, 0};
      job.term[job.terms++] = CardChainTerm{0, 0, 1};
      job.add_slots = !small.empty();
      std::vector<std::uint32_t> d(static_cast<std::size_t>(m * n));
      std::vector<std::uint8_t> general(static_cast<std::size_t>(m * n));
      if (engine->card_chains(job, d.data(), general.data())) {
        parallel_for(static_cast<std::uint64_t>(m), 1, [&](std::uint64_t i0, std::uint64_t i1, unsigned) {
          FusedDotNotes notes;
          for (auto i = static_cast<std::int64_t>(i0); i < static_cast<std::int64_t>(i1); ++i) {
            if (stop && stop->skip(i)) continue;
            const std::uint64_t before = notes.subnormal_inexact;
            for (std::int64_t j = 0; j < n; ++j) {
              const auto x = static_cast<std::size_t>(i * n + j);
              if (general[x]) element(i, j, notes);
              else c[x] = static_cast<double>(std::bit_cast<float>(d[x]));
            }
            if (stop && notes.subnormal_inexact != before) stop->mark(i);
          }
          inexact += notes.subnormal_inexact;
        });
        if (subnormal_inexact) *subnormal_inexact = inexact;
        return c;
      }
    }
  }
  // Fast path: every slice term's K-loop kFusedLanes columns at a time (fused_dot_lanes, bit for bit fused_dot's), the
  // instructions in the same order (per step: the small terms, then the leading term's chain).
  if (!generic && fused_lanes_apply(p, step)) {
    std::vector<LaneCodes> bl;
    for (std::size_t l = 0; l < S; ++l) {
      std::vector<std::uint32_t> rows(static_cast<std::size_t>(kp * n), 0u);
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t q = 0; q < k; ++q) rows[static_cast<std::size_t>(q * n + j)] = bc[l][static_cast<std::size_t>(j * kp + q)];
      bl.emplace_back(p, true, std::move(rows));
    }
    parallel_for(static_cast<std::uint64_t>(m), 1, [&](std::uint64_t i0, std::uint64_t i1, unsigned) {
      FusedDotNotes notes;
      std::vector<std::uint32_t> s(static_cast<std::size_t>(n)), acc(static_cast<std::size_t>(n));
      for (std::uint64_t i = i0; i < i1; ++i) {
        if (stop && stop->skip(static_cast<std::int64_t>(i))) continue;
        const std::uint64_t before = notes.subnormal_inexact;
        const std::size_t ra = static_cast<std::size_t>(i) * static_cast<std::size_t>(kp);
        std::vector<LaneCodes> al;
        for (std::size_t l = 0; l < S; ++l)
          al.emplace_back(p, false, std::vector<std::uint32_t>(ac[l].begin() + static_cast<std::ptrdiff_t>(ra), ac[l].begin() + static_cast<std::ptrdiff_t>(ra + kp)));
        auto row = [&](std::size_t l) { return FusedLaneRow{al[l].code.data(), al[l].value.data(), al[l].ref.data()}; };
        std::fill(s.begin(), s.end(), 0u);
        std::fill(acc.begin(), acc.end(), 0u);
        for (std::int64_t q = 0; q < kp; q += step)
          for (const auto& [ia, ib] : small)
            card_kloop_lanes(p, step, row(static_cast<std::size_t>(ia)), bl[static_cast<std::size_t>(ib)], n, q, q + step, 0, n, s.data(), &notes);
        card_kloop_lanes(p, step, row(0), bl[0], n, 0, kp, 0, n, acc.data(), &notes);
        for (std::int64_t j = 0; j < n; ++j) {
          const double big = to_double(p.acc, acc[static_cast<std::size_t>(j)]);
          c[static_cast<std::size_t>(static_cast<std::int64_t>(i) * n + j)] =
              small.empty() ? big : static_cast<double>(static_cast<float>(to_double(p.acc, s[static_cast<std::size_t>(j)])) + static_cast<float>(big));
        }
        if (stop && notes.subnormal_inexact != before) stop->mark(static_cast<std::int64_t>(i));
      }
      inexact += notes.subnormal_inexact;
    });
    if (subnormal_inexact) *subnormal_inexact = inexact;
    return c;
  }
  parallel_for(static_cast<std::uint64_t>(m), 1, [&](std::uint64_t i0, std::uint64_t i1, unsigned) {
    FusedDotNotes notes;
    for (auto i = static_cast<std::int64_t>(i0); i < static_cast<std::int64_t>(i1); ++i) {
      if (stop && stop->skip(i)) continue;
      const std::uint64_t before = notes.subnormal_inexact;
      for (std::int64_t j = 0; j < n; ++j) element(i, j, notes);
      if (stop && notes.subnormal_inexact != before) stop->mark(i);
    }
    inexact += notes.subnormal_inexact;
  });
  if (subnormal_inexact) *subnormal_inexact = inexact;
  return c;
}

// The tensor-core card order on a device (suites/verdict/emulate/emulate_schemes.hpp).
bool tensor_core_on_device(const KernelTraits& t, std::int64_t m, std::int64_t n, std::int64_t k, const std::vector<double>& ao,
                           const std::vector<double>& bo, std::vector<double>& value, std::vector<std::uint8_t>& host_rows) {
  const SummationOrder& o = t.sum_order;
  if (o.kind != OrderKind::TensorCoreBlock || !o.block_model.params) return false;
  const FusedDotParams& p = *o.block_model.params;
  const std::int64_t pad = o.block_model.pad > 0 ? o.block_model.pad : o.block, kp = (k + pad - 1) / pad * pad;
  // Promotion as the emulator does it (outer = RN(outer + D) in the promotion format): on the device in fp32 only.
  if (!card_chains_apply(p, o.block) || (t.promote_every > 0 && (!(*t.promote_format == f32) || t.promote_every % o.block != 0)))
    return false;
  const std::shared_ptr<ExactGemmEngine> engine = default_gemm_engine();
  if (!engine) return false;
  std::vector<std::uint32_t> ac(static_cast<std::size_t>(m * kp), 0u), bc(static_cast<std::size_t>(n * kp), 0u);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t q = 0; q < k; ++q) ac[static_cast<std::size_t>(i * kp + q)] = card_operand_code(p.a, ao[static_cast<std::size_t>(i * k + q)]);
  for (std::int64_t q = 0; q < k; ++q)
    for (std::int64_t j = 0; j < n; ++j) bc[static_cast<std::size_t>(j * kp + q)] = card_operand_code(p.b, bo[static_cast<std::size_t>(q * n + j)]);
  CardChains job(p);
  job.step = o.block;
  job.m = m, job.n = n, job.kp = kp;
  job.a[0] = ac.data(), job.b[0] = bc.data();
  job.term[job.terms++] = CardChainTerm{0, 0, 1};
  job.promote_every = t.promote_every;
  std::vector<std::uint32_t> d(static_cast<std::size_t>(m * n));
  std::vector<std::uint8_t> general(static_cast<std::size_t>(m * n));
  if (!engine->card_chains(job, d.data(), general.data())) return false;
  value.resize(static_cast<std::size_t>(m * n));
  host_rows.assign(static_cast<std::size_t>(m), 0);
  for (std::size_t x = 0; x < d.size(); ++x) {
    if (general[x]) host_rows[x / static_cast<std::size_t>(n)] = 1;
    else value[x] = static_cast<double>(std::bit_cast<float>(d[x]));
  }
  return true;
}

// The pow2_scaled order (suites/verdict/emulate/emulate_schemes.hpp).
std::vector<double> pow2_scaled(const Bf16OnF16Policy& pol, std::int64_t m, std::int64_t n, std::int64_t k, const std::vector<double>& a,
                                const std::vector<double>& b, bool generic, const FusedDotParams* card, int step, int pad,
                                std::uint64_t* subnormal_inexact, FirstInexactRow* stop) {
  std::atomic<std::uint64_t> inexact{0};
  const Rounder rn16 = Rounder::nearest(bf16), rnh = Rounder::nearest(f16);
  // Whether v is a bf16 value (an fp32 value whose low 16 bits are zero, Inf included; not NaN): then its bf16
  // code is the top half of its fp32 pattern, and it has at most 8 significant bits.
  auto bf16_exact = [](double v) {
    const auto f = static_cast<float>(v);
    return static_cast<double>(f) == v && (std::bit_cast<std::uint32_t>(f) & 0xFFFFu) == 0;
  };
  // The operands' preparation is elementwise: on every thread, as the row loop.
  constexpr std::uint64_t kGrain = std::uint64_t{1} << 14;
  auto codes = [&](const std::vector<double>& v) {
    std::vector<std::uint16_t> c(v.size());
    parallel_for(v.size(), kGrain, [&](std::uint64_t x0, std::uint64_t x1, unsigned) {
      for (std::uint64_t x = x0; x < x1; ++x)
        c[x] = !generic && bf16_exact(v[x]) ? static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(static_cast<float>(v[x])) >> 16)
                                            : static_cast<std::uint16_t>(round_double(bf16, v[x], rn16).code);
    });
    return c;
  };
  const std::vector<std::uint16_t> ac = codes(a), bc = codes(b);
  const OperandPlan pa = plan_operand(pol, ac.data(), m, k, k, 1), pb = plan_operand(pol, bc.data(), n, k, 1, n);
  const std::int64_t segs = std::max(pa.segs, pb.segs), seg_len = std::min(pa.seg_len, pb.seg_len);
  auto seg_of = [&](const OperandPlan& p, std::int64_t r) { return p.segs > 1 ? r / p.seg_len : 0; };
  // RN_f16(x) for x = v 2^s: a bf16 value v (8 significant bits) scaled by a power of two is its own rounding
  // where fp16 is normal (|x| in [2^-14, 65504]) and at zero, so the cast to float is exact there; elsewhere
  // (fp16 subnormals, overflow, Inf, NaN, a v that is not bf16's) the oracle rounds.
  auto to_f16 = [&](double v, int sc) {
    const double x = std::ldexp(v, sc);
    const double ax = std::fabs(x);
    if (!generic && (ax == 0 || (ax >= 0x1p-14 && ax <= 65504)) && bf16_exact(v)) return static_cast<float>(x);
    return static_cast<float>(to_double(f16, round_double(f16, x, rnh).code));
  };
  // The fp16 operand (as float; 0 for an outlier) and the outlier marks, A row-major m x k, B row-major k x n.
  auto convert = [&](const std::vector<double>& v, const std::vector<std::uint16_t>& c, const OperandPlan& p, bool is_a,
                     std::vector<float>& h, std::vector<std::uint8_t>& out, std::vector<std::uint8_t>& line_has) {
    h.assign(v.size(), 0.0f);
    out.assign(v.size(), 0);
    line_has.assign(static_cast<std::size_t>(p.lines), 0);
    parallel_for(v.size(), kGrain, [&](std::uint64_t x0, std::uint64_t x1, unsigned) {
      for (std::uint64_t x = x0; x < x1; ++x) {
        const std::int64_t line = is_a ? static_cast<std::int64_t>(x) / k : static_cast<std::int64_t>(x) % n;
        const std::int64_t r = is_a ? static_cast<std::int64_t>(x) % k : static_cast<std::int64_t>(x) / n;
        const std::int64_t g = seg_of(p, r);
        const int sc = p.scale_at(line, g), e = emu::bf16_binade(c[x]);
        if (e != emu::kNoBinade && p.outliers_at(line, g) && !emu::in_window(e, emu::kF16High - sc)) {
          out[x] = 1;
          continue;
        }
        h[x] = to_f16(v[x], sc);
      }
    });
    // Which lines hold an outlier: a pass of its own (threads would share a line's flag above).
    if (is_a) {  // A is m x k row-major: line = row
      for (std::int64_t i = 0; i < m; ++i)
        line_has[static_cast<std::size_t>(i)] = std::any_of(out.begin() + i * k, out.begin() + (i + 1) * k, [](std::uint8_t o) { return o != 0; });
    } else {  // B is k x n row-major: line = column
      for (std::int64_t r = 0; r < k; ++r)
        for (std::int64_t j = 0; j < n; ++j) line_has[static_cast<std::size_t>(j)] |= out[static_cast<std::size_t>(r * n + j)];
    }
  };
  std::vector<float> ah, bh;
  std::vector<std::uint8_t> aout, bout, arow, bcol;
  convert(a, ac, pa, true, ah, aout, arow);
  convert(b, bc, pb, false, bh, bout, bcol);
  std::vector<float> af(a.begin(), a.end()), bf(b.begin(), b.end());  // bf16 values: exact in fp32
  // The rows of B holding outliers, ascending (every row on the generic path): the outlier path visits these only.
  std::vector<std::int64_t> brows;
  for (std::int64_t r = 0; r < k; ++r)
    if (generic || std::any_of(bout.begin() + r * n, bout.begin() + (r + 1) * n, [](std::uint8_t o) { return o != 0; })) brows.push_back(r);
  // RN_f32(x 2^e): exact in double (|x| >= 2^-149, |e| < 300), one rounding by the conversion. The fast path
  // multiplies by 2^-s_A and then by 2^-s_B, both exact in double for the same reason (scales within
  // [-112, 148]: emu::scale_for_top), the powers of B's scales computed once per column and segment.
  auto rescale = [](float x, int e) { return static_cast<float>(std::ldexp(static_cast<double>(x), e)); };
  std::vector<double> bpow(static_cast<std::size_t>(segs * n));
  for (std::int64_t g = 0; g < segs; ++g)
    for (std::int64_t j = 0; j < n; ++j) bpow[static_cast<std::size_t>(g * n + j)] = std::ldexp(1.0, -pb.scale_at(j, g));
  // On tensor cores (card): the fp16 operands' codes, A row by row and B column by column, K zero-padded to kp.
  const std::int64_t kp = card ? (k + pad - 1) / pad * pad : k;
  std::vector<std::uint32_t> acodes, bcodes;
  if (card) {
    acodes.assign(static_cast<std::size_t>(m * kp), 0u);
    bcodes.assign(static_cast<std::size_t>(n * kp), 0u);
    parallel_for(static_cast<std::uint64_t>(m), 1, [&](std::uint64_t i0, std::uint64_t i1, unsigned) {
      for (std::uint64_t i = i0; i < i1; ++i)
        for (std::int64_t q = 0; q < k; ++q)
          acodes[i * static_cast<std::uint64_t>(kp) + static_cast<std::uint64_t>(q)] = card_operand_code(card->a, ah[i * static_cast<std::uint64_t>(k) + static_cast<std::uint64_t>(q)]);
    });
    parallel_for(static_cast<std::uint64_t>(n), 1, [&](std::uint64_t j0, std::uint64_t j1, unsigned) {
      for (std::uint64_t j = j0; j < j1; ++j)
        for (std::int64_t q = 0; q < k; ++q)
          bcodes[j * static_cast<std::uint64_t>(kp) + static_cast<std::uint64_t>(q)] = card_operand_code(card->b, bh[static_cast<std::uint64_t>(q * n) + j]);
    });
  }
  // Fast path on tensor cores: the card's K-loops kFusedLanes columns at a time (fused_dot_lanes), B's codes as a panel.
  const bool lanes = card && !generic && fused_lanes_apply(*card, step);
  std::optional<LaneCodes> bl;
  if (lanes) {
    std::vector<std::uint32_t> rows(static_cast<std::size_t>(kp * n), 0u);
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t q = 0; q < k; ++q) rows[static_cast<std::size_t>(q * n + j)] = bcodes[static_cast<std::size_t>(j * kp + q)];
    bl.emplace(*card, true, std::move(rows));
  }
  const std::int64_t tn = (n + kModeTile - 1) / kModeTile;
  std::vector<double> c(static_cast<std::size_t>(m * n));
  parallel_for(static_cast<std::uint64_t>(m), 1, [&](std::uint64_t i0, std::uint64_t i1, unsigned) {
    FusedDotNotes notes;
    std::vector<float> acc(static_cast<std::size_t>(n)), part(static_cast<std::size_t>(n)), corr(static_cast<std::size_t>(n));
    std::vector<std::uint32_t> dl(static_cast<std::size_t>(n));
    for (std::uint64_t iu = i0; iu < i1; ++iu) {
      const auto i = static_cast<std::int64_t>(iu);
      if (stop && stop->skip(i)) continue;
      const std::uint64_t before = notes.subnormal_inexact;
      const float* ai = ah.data() + i * k;
      std::optional<LaneCodes> al;
      if (lanes) al.emplace(*card, false, std::vector<std::uint32_t>(acodes.begin() + i * kp, acodes.begin() + (i + 1) * kp));
      for (std::int64_t bn = 0; bn < tn; ++bn) {
        const std::int64_t j0 = bn * kModeTile, j1 = std::min(n, j0 + kModeTile);
        const bool row_mode = tile_mode(pa, pb, i / kModeTile, bn) == kModeRow;
        const std::int64_t nseg = row_mode ? 1 : segs, len = row_mode ? std::max<std::int64_t>(k, 1) : seg_len;
        float* accp = acc.data();
        float* partp = part.data();
        std::fill(accp + j0, accp + j1, 0.0f);
        for (std::int64_t g = 0; g < nseg; ++g) {
          std::fill(partp + j0, partp + j1, 0.0f);
          if (lanes) {  // as below, through fused_dot_lanes
            const std::int64_t lo = g * len, hi = row_mode ? kp : std::min(kp, (g + 1) * len);
            std::fill(dl.begin() + j0, dl.begin() + j1, 0u);  // +0
            card_kloop_lanes(*card, step, FusedLaneRow{al->code.data(), al->value.data(), al->ref.data()}, *bl, n, lo, hi, j0, j1, dl.data(), &notes);
            for (std::int64_t j = j0; j < j1; ++j) partp[j] = static_cast<float>(to_double(card->acc, dl[static_cast<std::size_t>(j)]));
          } else if (card) {  // the instruction's K-loop over the segment, K padded (segments are whole stages), from +0
            const std::int64_t lo = g * len, hi = row_mode ? kp : std::min(kp, (g + 1) * len);
            const std::uint32_t* arow = acodes.data() + i * kp;
            for (std::int64_t j = j0; j < j1; ++j) {
              const std::uint32_t* bcol = bcodes.data() + j * kp;
              std::uint64_t d = 0;  // +0
              for (std::int64_t q = lo; q < hi; q += step) d = fused_dot(*card, arow + q, bcol + q, step, d, &notes);
              partp[j] = static_cast<float>(to_double(card->acc, d));
            }
          }
          for (std::int64_t r = g * len; !card && r < std::min(k, (g + 1) * len); ++r) {
            const float x = ai[r];
            const float* br = bh.data() + r * n;
            for (std::int64_t j = j0; j < j1; ++j) partp[j] = std::fma(x, br[j], partp[j]);
          }
          if (generic) {
            for (std::int64_t j = j0; j < j1; ++j) {
              const float sc = rescale(partp[j], -(pa.scale_at(i, g) + pb.scale_at(j, g)));
              accp[j] = row_mode ? sc : accp[j] + sc;
            }
            continue;
          }
          const double apow = std::ldexp(1.0, -pa.scale_at(i, g));
          const double* bp = bpow.data() + g * n;
          if (row_mode)
            for (std::int64_t j = j0; j < j1; ++j) accp[j] = static_cast<float>(static_cast<double>(partp[j]) * apow * bp[j]);
          else
            for (std::int64_t j = j0; j < j1; ++j) accp[j] += static_cast<float>(static_cast<double>(partp[j]) * apow * bp[j]);
        }
      }
      // The outliers' fp32 path.
      std::fill(corr.begin(), corr.end(), 0.0f);
      const bool row_has = arow[static_cast<std::size_t>(i)] != 0;
      for (std::int64_t r = 0; r < k && row_has; ++r)
        if (aout[static_cast<std::size_t>(i * k + r)])
          for (std::int64_t j = 0; j < n; ++j) corr[static_cast<std::size_t>(j)] = std::fma(af[static_cast<std::size_t>(i * k + r)], bf[static_cast<std::size_t>(r * n + j)], corr[static_cast<std::size_t>(j)]);
      for (const std::int64_t r : brows) {
        if (aout[static_cast<std::size_t>(i * k + r)]) continue;
        const float x = af[static_cast<std::size_t>(i * k + r)];
        for (std::int64_t j = 0; j < n; ++j)
          if (bout[static_cast<std::size_t>(r * n + j)]) corr[static_cast<std::size_t>(j)] = std::fma(x, bf[static_cast<std::size_t>(r * n + j)], corr[static_cast<std::size_t>(j)]);
      }
      for (std::int64_t j = 0; j < n; ++j) {
        float v = acc[static_cast<std::size_t>(j)];
        if (row_has || bcol[static_cast<std::size_t>(j)]) v = v + corr[static_cast<std::size_t>(j)];
        c[static_cast<std::size_t>(i * n + j)] = v;
      }
      if (stop && notes.subnormal_inexact != before) stop->mark(i);
    }
    inexact += notes.subnormal_inexact;
  });
  if (subnormal_inexact) *subnormal_inexact = inexact;
  return c;
}

}  // namespace fpcert::emulate_detail
