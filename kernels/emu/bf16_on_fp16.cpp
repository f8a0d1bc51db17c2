// kernels/emu/bf16_on_fp16.cpp — the BF16-on-FP16 strategies on the CPU: plans, conversions, the
// models' arithmetic and their registration.
#include "kernels/emu/bf16_on_fp16.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "kernels/emu/emu_arith.cuh"
#include "kernels/gemm/cpu/model.hpp"
#include "kernels/register.hpp"
#include "oracle/round.hpp"

namespace fpcert {

static_assert(kModeRow == emu::kModeRow && kModeKBlock == emu::kModeKBlock && kModeTile == emu::kModeTile &&
                  kBf16OnF16MaxLosslessSpan == emu::kSpanLossless,
              "the tile modes of the CPU models and the device code are one definition");

const std::vector<Bf16OnF16Policy>& bf16_on_f16_policies() {
  static const std::vector<Bf16OnF16Policy> p = {
      {Bf16OnF16Strategy::Cast, 0, "cast"},           {Bf16OnF16Strategy::Tensor, 0, "tensor"},
      {Bf16OnF16Strategy::RowCol, 0, "rowcol"},       {Bf16OnF16Strategy::KBlock, 64, "kblock64"},
      {Bf16OnF16Strategy::KBlock, 128, "kblock128"},  {Bf16OnF16Strategy::Outlier, 0, "outlier"},
      {Bf16OnF16Strategy::Auto, 64, "auto"},
  };
  return p;
}

const Bf16OnF16Policy* find_bf16_on_f16_policy(const std::string& tag) {
  for (const auto& p : bf16_on_f16_policies())
    if (p.tag == tag) return &p;
  return nullptr;
}

std::string bf16_on_f16_kernel_name(const Bf16OnF16Policy& p) { return "gemm_bf16_on_f16_" + p.tag + "_mma_sm80"; }
std::string bf16_on_f16_wgmma_kernel_name(const Bf16OnF16Policy& p) { return "gemm_bf16_on_f16_" + p.tag + "_wgmma_sm90"; }
std::string bf16_on_f16_model_name(const Bf16OnF16Policy& p) { return "model_gemm_bf16_on_f16_" + p.tag; }

namespace {

struct Range {
  int hi = emu::kNoBinade, lo = emu::kNoBinade;
  void add(int e) {
    if (e == emu::kNoBinade) return;
    if (hi == emu::kNoBinade) hi = lo = e;
    hi = std::max(hi, e);
    lo = std::min(lo, e);
  }
  int span() const { return hi == emu::kNoBinade ? 0 : hi - lo; }
};

}  // namespace

OperandPlan plan_operand(const Bf16OnF16Policy& p, const std::uint16_t* codes, std::int64_t lines, std::int64_t k,
                         std::int64_t line_stride, std::int64_t k_stride) {
  OperandPlan P;
  P.lines = lines;
  const bool segmented = p.strategy == Bf16OnF16Strategy::KBlock || p.strategy == Bf16OnF16Strategy::Auto;
  P.seg_len = segmented ? p.kblock : std::max<std::int64_t>(k, 1);
  P.segs = segmented ? std::max<std::int64_t>(1, (k + P.seg_len - 1) / P.seg_len) : 1;
  P.mode.assign(static_cast<std::size_t>(lines), p.strategy == Bf16OnF16Strategy::KBlock ? kModeKBlock : kModeRow);
  auto binade = [&](std::int64_t l, std::int64_t r) { return emu::bf16_binade(codes[l * line_stride + r * k_stride]); };
  auto range = [&](std::int64_t l, std::int64_t r0, std::int64_t r1) {
    Range g;
    for (std::int64_t r = r0; r < r1; ++r) g.add(binade(l, r));
    return g;
  };
  auto window = [&](std::int64_t l, std::int64_t r0, std::int64_t r1) {
    std::vector<std::int64_t> hist(emu::kBinadeBins, 0);
    for (std::int64_t r = r0; r < r1; ++r) {
      const int e = binade(l, r);
      if (e != emu::kNoBinade) ++hist[static_cast<std::size_t>(e - emu::kBinadeMin)];
    }
    return emu::best_window_top(hist.data());
  };
  if (p.strategy == Bf16OnF16Strategy::Cast || p.strategy == Bf16OnF16Strategy::Tensor) {
    P.shared = true;
    Range all;
    if (p.strategy == Bf16OnF16Strategy::Tensor)
      for (std::int64_t l = 0; l < lines; ++l) {
        const Range g = range(l, 0, k);
        all.add(g.hi);
      }
    P.scale = {p.strategy == Bf16OnF16Strategy::Cast ? 0 : emu::scale_for_top(all.hi)};
    P.outlier_seg = {0};
    return P;
  }
  const auto cells = static_cast<std::size_t>(lines * P.segs);
  P.scale.assign(cells, 0);
  P.outlier_seg.assign(cells, 0);
  for (std::int64_t l = 0; l < lines; ++l) {
    const Range line = range(l, 0, k);
    auto cell = [&](std::int64_t g) { return static_cast<std::size_t>(l * P.segs + g); };
    switch (p.strategy) {
      case Bf16OnF16Strategy::RowCol: P.scale[cell(0)] = emu::scale_for_top(line.hi); break;
      case Bf16OnF16Strategy::KBlock:
        for (std::int64_t g = 0; g < P.segs; ++g)
          P.scale[cell(g)] = emu::scale_for_top(range(l, g * P.seg_len, std::min(k, (g + 1) * P.seg_len)).hi);
        break;
      case Bf16OnF16Strategy::Outlier:
        if (line.span() <= emu::kSpanLossless) {
          P.scale[cell(0)] = emu::scale_for_top(line.hi);
        } else {
          P.scale[cell(0)] = emu::scale_for_top(window(l, 0, k));
          P.outlier_seg[cell(0)] = 1;
        }
        break;
      case Bf16OnF16Strategy::Auto:
        if (line.span() <= emu::kSpanLossless) {
          for (std::int64_t g = 0; g < P.segs; ++g) P.scale[cell(g)] = emu::scale_for_top(line.hi);
        } else {
          P.mode[static_cast<std::size_t>(l)] = kModeKBlock;
          for (std::int64_t g = 0; g < P.segs; ++g) {
            const std::int64_t r0 = g * P.seg_len, r1 = std::min(k, (g + 1) * P.seg_len);
            const Range seg = range(l, r0, r1);
            if (seg.span() <= emu::kSpanLossless) {
              P.scale[cell(g)] = emu::scale_for_top(seg.hi);
            } else {
              P.scale[cell(g)] = emu::scale_for_top(window(l, r0, r1));
              P.outlier_seg[cell(g)] = 1;
            }
          }
        }
        break;
      default: break;
    }
  }
  return P;
}

std::uint8_t tile_mode(const OperandPlan& a, const OperandPlan& b, std::int64_t bm, std::int64_t bn) {
  std::uint8_t m = kModeRow;
  for (std::int64_t i = bm * kModeTile; i < std::min(a.lines, (bm + 1) * kModeTile); ++i)
    m = std::max(m, a.mode[static_cast<std::size_t>(i)]);
  for (std::int64_t j = bn * kModeTile; j < std::min(b.lines, (bn + 1) * kModeTile); ++j)
    m = std::max(m, b.mode[static_cast<std::size_t>(j)]);
  return m;
}

std::string to_string(const Bf16OnF16Stats& s) {
  auto op = [](const char* name, const Bf16OnF16OperandStats& o) {
    return std::string(name) + ": " + std::to_string(o.nonzero) + " converted, " + std::to_string(o.inexact) + " inexact (" +
           std::to_string(o.overflow) + " overflow, " + std::to_string(o.underflow_zero) + " to zero), " +
           std::to_string(o.subnormal) + " fp16 subnormals, " + std::to_string(o.outliers) + " outliers";
  };
  return op("A", s.a) + "; " + op("B", s.b) + "; tiles: " + std::to_string(s.tiles_row) + " row-scaled, " +
         std::to_string(s.tiles_kblock) + " per K-block";
}

namespace {

/// One operand converted by its plan: the fp16 values (as fp32; 0 for outliers), the outlier marks.
struct Packed {
  std::vector<float> v;             // [line * k + r]
  std::vector<std::uint8_t> out;    // [line * k + r]: an outlier (on the fp32 path)
  std::vector<std::uint8_t> has;    // per line: has outliers
};

Packed pack(const OperandPlan& P, const std::uint16_t* codes, std::int64_t k, std::int64_t line_stride,
            std::int64_t k_stride, Bf16OnF16OperandStats& st) {
  Packed q;
  q.v.assign(static_cast<std::size_t>(P.lines * k), 0.0f);
  q.out.assign(q.v.size(), 0);
  q.has.assign(static_cast<std::size_t>(P.lines), 0);
  for (std::int64_t l = 0; l < P.lines; ++l)
    for (std::int64_t r = 0; r < k; ++r) {
      const std::uint16_t x = codes[l * line_stride + r * k_stride];
      const std::int64_t g = P.segs > 1 ? r / P.seg_len : 0;
      const int s = P.scale_at(l, g);
      const int e = emu::bf16_binade(x);
      const auto idx = static_cast<std::size_t>(l * k + r);
      if (e != emu::kNoBinade && P.outliers_at(l, g) && !emu::in_window(e, emu::kF16High - s)) {
        q.out[idx] = 1;
        q.has[static_cast<std::size_t>(l)] = 1;
        ++st.outliers;
        continue;
      }
      const emu::F16Conv c = emu::bf16_to_f16_scaled(x, s);
      q.v[idx] = emu::f16_value(c.code);
      if (e == emu::kNoBinade) continue;
      ++st.nonzero;
      st.inexact += (c.flags & emu::kF16Inexact) != 0;
      st.overflow += (c.flags & emu::kF16Overflow) != 0;
      st.underflow_zero += (c.flags & emu::kF16Underflow) != 0;
      st.subnormal += (c.flags & emu::kF16Subnormal) != 0;
    }
  return q;
}

}  // namespace

std::vector<float> bf16_on_f16_cpu(const Bf16OnF16Policy& p, std::int64_t m, std::int64_t n, std::int64_t k,
                                   const std::uint16_t* a, std::int64_t lda, const std::uint16_t* b, std::int64_t ldb,
                                   Bf16OnF16Stats* stats) {
  const OperandPlan PA = plan_operand(p, a, m, k, lda, 1);
  const OperandPlan PB = plan_operand(p, b, n, k, 1, ldb);
  Bf16OnF16Stats st;
  const Packed qa = pack(PA, a, k, lda, 1, st.a);
  const Packed qb = pack(PB, b, k, 1, ldb, st.b);
  const std::int64_t tm = (m + kModeTile - 1) / kModeTile, tn = (n + kModeTile - 1) / kModeTile;
  std::vector<std::uint8_t> modes(static_cast<std::size_t>(tm * tn));
  for (std::int64_t bm = 0; bm < tm; ++bm)
    for (std::int64_t bn = 0; bn < tn; ++bn) {
      const std::uint8_t md = tile_mode(PA, PB, bm, bn);
      modes[static_cast<std::size_t>(bm * tn + bn)] = md;
      (md == kModeRow ? st.tiles_row : st.tiles_kblock) += 1;
    }
  auto A = [&](std::int64_t i, std::int64_t r) { return emu::bf16_value(a[i * lda + r]); };
  auto B = [&](std::int64_t r, std::int64_t j) { return emu::bf16_value(b[r * ldb + j]); };
  std::vector<float> C(static_cast<std::size_t>(m * n));
  const std::int64_t segs = std::max(PA.segs, PB.segs), seg_len = std::min(PA.seg_len, PB.seg_len);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      const float* ai = qa.v.data() + i * k;
      const float* bj = qb.v.data() + j * k;
      float c;
      if (modes[static_cast<std::size_t>((i / kModeTile) * tn + j / kModeTile)] == kModeRow) {
        float acc = 0.0f;
        for (std::int64_t r = 0; r < k; ++r) acc = emu::fma_rn(ai[r], bj[r], acc);
        c = emu::ldexp_rn(acc, -(PA.scale_at(i, 0) + PB.scale_at(j, 0)));
      } else {
        float acc = 0.0f;
        for (std::int64_t g = 0; g < segs; ++g) {
          float part = 0.0f;
          for (std::int64_t r = g * seg_len; r < std::min(k, (g + 1) * seg_len); ++r) part = emu::fma_rn(ai[r], bj[r], part);
          acc = emu::fadd_rn(acc, emu::ldexp_rn(part, -(PA.scale_at(i, g) + PB.scale_at(j, g))));
        }
        c = acc;
      }
      if (qa.has[static_cast<std::size_t>(i)] || qb.has[static_cast<std::size_t>(j)]) {
        float corr = 0.0f;
        for (std::int64_t r = 0; r < k; ++r)
          if (qa.out[static_cast<std::size_t>(i * k + r)]) corr = emu::fma_rn(A(i, r), B(r, j), corr);
        for (std::int64_t r = 0; r < k; ++r)
          if (qb.out[static_cast<std::size_t>(j * k + r)] && !qa.out[static_cast<std::size_t>(i * k + r)])
            corr = emu::fma_rn(A(i, r), B(r, j), corr);
        c = emu::fadd_rn(c, corr);
      }
      C[static_cast<std::size_t>(i * n + j)] = c;
    }
  if (stats) *stats = st;
  return C;
}

KernelTraits bf16_on_f16_traits(const Bf16OnF16Policy& p, bool device) {
  KernelTraits t;
  t.a_input = t.b_input = &bf16;
  t.a_operand = t.b_operand = &f16;
  t.input_rounding = Rounding::NearestEven;
  t.exact_products = true;
  t.acc = &f32;
  t.acc_rounding = device ? Rounding::TowardZero : Rounding::NearestEven;
  t.out = &f32;
  std::string acc = device ? "fp16 mma.sync m16n8k16 on the fp32 accumulator fragment (k-blocks of 16 ascending; inside an "
                             "MMA the order and rounding are not specified by NVIDIA: modelled as fp32 toward zero)"
                           : "fp32 FMA along K from +0 (acc = fma(a', b', acc))";
  std::string what;
  switch (p.strategy) {
    case Bf16OnF16Strategy::Cast:
      what = "a' = RN_f16(a), b' = RN_f16(b), no scale: values above 65504 overflow to Inf, below 2^-24 they round to 0, "
             "binades -17..-15 become fp16 subnormals (exact), others lose bits; ";
      break;
    case Bf16OnF16Strategy::Tensor:
      what = "a' = RN_f16(a 2^s_A), s_A = 15 - (A's largest binade), likewise B; lossless when each operand's exponent span "
             "is <= 32; C = RN(acc 2^-(s_A + s_B)); ";
      break;
    case Bf16OnF16Strategy::RowCol:
      what = "a'_ik = RN_f16(a_ik 2^s_A,i), s_A,i = 15 - (row i's largest binade), b'_kj = RN_f16(b_kj 2^s_B,j) per column; "
             "lossless when every row of A and column of B spans <= 32 binades; C_ij = RN(acc 2^-(s_A,i + s_B,j)); ";
      break;
    case Bf16OnF16Strategy::KBlock:
      what = "scales per (row, K-block of " + std::to_string(p.kblock) + ") of A and (K-block, column) of B, 15 - (the block's "
             "largest binade); lossless when every block spans <= 32 binades; per K-block a partial sum from +0, then "
             "acc = RN(acc + RN(part 2^-(s_A,ig + s_B,gj))) (the fp32 rescale-and-add: promotion every " +
             std::to_string(p.kblock) + " products); ";
      t.promote_every = p.kblock;
      t.promote_format = &f32;
      break;
    case Bf16OnF16Strategy::Outlier:
      what = "per row of A / column of B the window of 33 binades [t - 32, t] holding most entries (rows spanning <= 32: "
             "t = the largest binade), scale 15 - t; entries outside it (dA, dB) are set to 0 in the fp16 operands and "
             "their products added on an fp32 path: corr = fma over dA_ik b_kj, then over a_ik dB_kj (a_ik not in dA), k "
             "ascending from +0; C = RN(RN(acc 2^-(s_A,i + s_B,j)) + corr); lossless for any data (every product exact); ";
      break;
    case Bf16OnF16Strategy::Auto:
      what = "per 128 x 128 tile of C: rows / columns spanning <= 32 binades scaled per line (row mode, one rescale at the "
             "end); a tile touching any other line runs per K-block of 64 (rescale-and-add per block), blocks spanning > 32 "
             "with an outlier window and the fp32 path as the outlier strategy; lossless for any data; ";
      break;
  }
  t.order = what + "products exact (fp16 x fp16); " + acc;
  // The scaled strategies keep every bf16 value of a group exactly in fp16 within their domain: the
  // multiplier sees bf16 precision and range (only the direct cast narrows to fp16's range). The CPU models
  // declare the scaling as their order (pow2_scaled, kernels/order.hpp: the bitwise tier emulates it); the
  // CUDA kernels the same scaling with every sum over K an fp16 mma.sync K-loop (steps of 16 from +0, K
  // zero-padded to whole stages of 32), whose block model is the behaviour card of mma_f16_f32 once certify
  // installs it (then the bitwise tier composes it with the scaling); without a validated card the envelope
  // judges (the scaling is exact within the domain and commutes with the MMA's sums).
  if (p.strategy != Bf16OnF16Strategy::Cast) t.a_operand = t.b_operand = &bf16;
  t.sum_order = device ? SummationOrder::pow2_scaled(p.tag, OrderKind::TensorCoreBlock, 16) : SummationOrder::pow2_scaled(p.tag);
  if (device) {
    t.sum_order.block_model.instruction = "mma_f16_f32";
    t.sum_order.block_model.pad = 32;
  }
  // Where the traits hold. One power-of-two scale per group is lossless only while the group spans
  // <= 32 binades (kBf16OnF16MaxLosslessSpan); outside, bits are lost that no rounding term of the
  // bound model accounts for. The direct cast scales nothing: values beyond fp16's range overflow.
  InputDomain& d = t.domain;
  // Finite inputs only: a scale computed from a line's largest binade is not defined for Inf or NaN.
  d.finite_only = true;
  const std::string lossless = "one power-of-two scale is lossless only up to a span of " + std::to_string(kBf16OnF16MaxLosslessSpan) +
                               " binades (docs/emulation.md); the outlier and auto strategies take any data";
  switch (p.strategy) {
    case Bf16OnF16Strategy::Cast:
      d.operand_range = true;
      d.note = "the direct cast scales nothing: values beyond fp16's 65504 become Inf (docs/emulation.md)";
      break;
    case Bf16OnF16Strategy::Tensor:
      d.span_scope = SpanScope::Tensor;
      break;
    case Bf16OnF16Strategy::RowCol:
      d.span_scope = SpanScope::Line;
      break;
    case Bf16OnF16Strategy::KBlock:
      d.span_scope = SpanScope::KBlock;
      d.kblock = p.kblock;
      break;
    case Bf16OnF16Strategy::Outlier:
    case Bf16OnF16Strategy::Auto:
      break;
  }
  if (d.span_scope != SpanScope::None) {
    d.max_span = kBf16OnF16MaxLosslessSpan;
    d.note = lossless;
  }
  return t;
}

namespace {

class Bf16OnF16Model final : public CpuModel, public Bf16OnF16Kernel {
 public:
  explicit Bf16OnF16Model(const Bf16OnF16Policy& p)
      : CpuModel(bf16_on_f16_model_name(p), "bf16 GEMM on fp16 arithmetic, strategy " + p.tag + " (CPU model)",
                 bf16_on_f16_traits(p, false)),
        policy_(p) {}
  const Bf16OnF16Policy& policy() const override { return policy_; }
  Bf16OnF16Stats last_stats() const override { return stats_; }
  std::vector<std::uint64_t> compute(const DecodedOperands& d) const override {
    auto codes = [](const std::vector<double>& v) {
      std::vector<std::uint16_t> c(v.size());
      const Rounder rn = Rounder::nearest(bf16);
      for (std::size_t x = 0; x < v.size(); ++x) c[x] = static_cast<std::uint16_t>(round_double(bf16, v[x], rn).code);
      return c;
    };
    const auto a = codes(d.a), b = codes(d.b);
    const std::vector<float> C = bf16_on_f16_cpu(policy_, d.m, d.n, d.k, a.data(), d.k, b.data(), d.n, &stats_);
    std::vector<std::uint64_t> out(C.size());
    for (std::size_t x = 0; x < C.size(); ++x) out[x] = emu::f32_bits(C[x]);
    return out;
  }

 private:
  Bf16OnF16Policy policy_;
  mutable Bf16OnF16Stats stats_;
};

template <std::size_t I>
std::unique_ptr<GemmKernel> factory() {
  return std::make_unique<Bf16OnF16Model>(bf16_on_f16_policies()[I]);
}
template <std::size_t... I>
void register_all(std::index_sequence<I...>) {
  (register_kernel(bf16_on_f16_model_name(bf16_on_f16_policies()[I]), Backend::Cpu, false, &factory<I>), ...);
}
constexpr std::size_t kPolicies = 7;

}  // namespace

void register_bf16_on_f16_models() {
  if (bf16_on_f16_policies().size() != kPolicies) throw std::logic_error("bf16_on_f16_policies: update kPolicies");
  register_all(std::make_index_sequence<kPolicies>{});
}

}  // namespace fpcert
