// kernels/block/block_scaled.cpp — CPU models of block-scaled GEMMs and their mutants (kernels/block/block_scaled.hpp).
#include "kernels/block/block_scaled.hpp"

#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "oracle/gemm_ref.hpp"

namespace fpcert {
namespace {

/// RN_f32(x) for any double (overflow to +-Inf, as RN does).
float rn_f32(double x) {
  if (std::fabs(x) <= static_cast<double>(std::numeric_limits<float>::max()) || std::isnan(x)) return static_cast<float>(x);
  return std::bit_cast<float>(static_cast<std::uint32_t>(round_double(f32, x, Rounder::nearest(f32)).code));
}

/// The scale multipliers of A's block (i, kb) and B's block (kb, j) as the kernel reads them, with the
/// mutants' faults: scale_fault adds to A's E8M0 exponent; swap_scales reads each operand's scale from the
/// other's array at the same (line, block) coordinates, as a kernel that passes the two pointers swapped.
struct Scales {
  const BlockOperands& q;
  int fault;
  bool swap;
  std::int64_t m, n, nkb;
  std::uint8_t code_a(std::int64_t i, std::int64_t kb) const {
    return swap ? q.b.scales[static_cast<std::size_t>(kb * n + i % n)] : q.a.scales[static_cast<std::size_t>(i * nkb + kb)];
  }
  std::uint8_t code_b(std::int64_t kb, std::int64_t j) const {
    return swap ? q.a.scales[static_cast<std::size_t>((j % m) * nkb + kb)] : q.b.scales[static_cast<std::size_t>(kb * n + j)];
  }
  double a(std::int64_t i, std::int64_t kb) const {
    const BlockFormat& f = *q.a.format;
    const std::uint8_t c = code_a(i, kb);
    if (fault != 0 && f.pow2_scales() && c != 0xFF) return std::ldexp(scale_value(f, c), fault);
    return scale_value(f, c);
  }
  double b(std::int64_t kb, std::int64_t j) const { return scale_value(*q.b.format, code_b(kb, j)); }
};

std::vector<double> element_values(const BlockTensor& t) {
  std::vector<double> v(t.codes.size());
  for (std::size_t x = 0; x < v.size(); ++x) v[x] = element_value(*t.format, t.codes[x]);
  return v;
}

/// NVFP4's last step: C = RN_f32(acc * RN_f32(s_tA * s_tB)) (each product exact in double, then one rounding).
void apply_tensor_scales(const BlockOperands& q, std::vector<float>& c) {
  if (!q.a.format->tensor_scale) return;
  const float tt = rn_f32(q.a.tensor_scale * q.b.tensor_scale);
  for (float& x : c) x = rn_f32(static_cast<double>(x) * static_cast<double>(tt));
}

std::vector<std::uint64_t> f32_codes(const std::vector<float>& c) {
  std::vector<std::uint64_t> r(c.size());
  for (std::size_t i = 0; i < c.size(); ++i) r[i] = std::bit_cast<std::uint32_t>(c[i]);
  return r;
}

const char* kDeqOrder =
    "A and B quantized along K by the declared block format and rule (docs/block_formats.md); every element dequantized "
    "into bf16 (MX: element * 2^e, exact inside bf16's range; NVFP4: element * S, exact); C[i][j] = fma(a, b, C) for "
    "k = 0..K-1 in fp32 from +0";
const char* kBlockSumOrder =
    "A and B quantized along K by the declared block format and rule (docs/block_formats.md); per K-block b: P = the "
    "exact sum of the element products, s = RN_f32(P * scale_A * scale_B) (MX: 2^(e_A + e_B); NVFP4: S_A * S_B; one "
    "rounding), acc = RN_f32(acc + s), blocks in ascending K from +0";

class BlockGemmModel : public CpuModel {
 public:
  BlockGemmModel(std::string name, std::string desc, KernelTraits t, BlockGemmPath path)
      : CpuModel(std::move(name), std::move(desc), std::move(t)), path_(path) {}
  std::vector<std::uint64_t> compute(const DecodedOperands& d) const override {
    BlockOperands q = quantize_operands(traits_, d.a.data(), d.b.data(), d.m, d.n, d.k);
    mutate(q, d);
    const std::vector<float> c = path_ == BlockGemmPath::BlockSum ? blocksum_gemm(q, scale_fault_, swap_) : deqbf16_gemm(q, scale_fault_, swap_);
    return f32_codes(c);
  }

 protected:
  /// Mutants change the quantized operands here (the honest model leaves them).
  virtual void mutate(BlockOperands&, const DecodedOperands&) const {}
  BlockGemmPath path_;
  int scale_fault_ = 0;
  bool swap_ = false;
};

enum class BlockFault { ScaleOffByOne, SwappedScales, NoEmax, RoundNotCeil };

/// A block-scaled model with one injected fault; it claims the honest model's traits.
class BlockMutant final : public BlockGemmModel {
 public:
  BlockMutant(std::string name, std::string desc, KernelTraits t, BlockGemmPath path, BlockFault fault)
      : BlockGemmModel(std::move(name), std::move(desc), std::move(t), path), fault_(fault) {
    scale_fault_ = fault == BlockFault::ScaleOffByOne ? 1 : 0;
    swap_ = fault == BlockFault::SwappedScales;
  }
  bool is_mutant() const override { return true; }

 protected:
  void mutate(BlockOperands& q, const DecodedOperands& d) const override {
    if (fault_ != BlockFault::NoEmax && fault_ != BlockFault::RoundNotCeil) return;
    requantize(q.a, d.a.data());
    requantize(q.b, d.b.data());
  }

 private:
  /// The faulty quantizers: scale exponent floor(log2 amax) (emax never subtracted), or round(log2(amax /
  /// max_elem)) where rceil's ceil() was meant; elements re-rounded under that scale.
  void requantize(BlockTensor& t, const double* x) const {
    const BlockFormat& f = *t.format;
    for (std::int64_t br = 0; br < t.scale_rows; ++br)
      for (std::int64_t bc = 0; bc < t.scale_cols; ++bc) {
        std::vector<std::int64_t> idx;
        for (std::int64_t q = 0; q < t.block; ++q) {
          const std::int64_t i = t.axis == 1 ? br : br * t.block + q, j = t.axis == 1 ? bc * t.block + q : bc;
          if (i < t.rows && j < t.cols) idx.push_back(i * t.cols + j);
        }
        double amax = 0;
        for (std::int64_t e : idx) amax = std::max(amax, std::fabs(x[e]));
        if (amax == 0 || !std::isfinite(amax)) continue;
        const int e = fault_ == BlockFault::NoEmax ? std::ilogb(amax)
                                                   : static_cast<int>(std::lround(std::log2(amax / f.max_elem())));
        const auto code = static_cast<std::uint8_t>(std::clamp(e, -127, 127) + 127);
        t.scales[static_cast<std::size_t>(br * t.scale_cols + bc)] = code;
        for (std::int64_t p : idx) t.codes[static_cast<std::size_t>(p)] = quantize_element(f, x[p], code, 1.0, t.rounding).code;
      }
  }
  BlockFault fault_;
};

std::string rule_name(ScaleRule r) { return std::string(to_string(r)); }

}  // namespace

std::string_view to_string(BlockGemmPath p) { return p == BlockGemmPath::DeqBf16 ? "deqbf16" : "blocksum"; }

std::string block_gemm_model_name(const BlockFormat& f, ScaleRule rule, BlockGemmPath path) {
  return "model_gemm_" + std::string(f.tag) + "_" + rule_name(rule) + "_" + std::string(to_string(path)) + "_f32acc";
}

KernelTraits block_gemm_traits(const BlockFormat& f, ScaleRule rule, BlockGemmPath path) {
  std::string why;
  if (!rule_valid(f, rule, &why)) throw std::invalid_argument(why);
  KernelTraits t;
  t.a_input = t.b_input = &f32;
  t.a_operand = t.b_operand = path == BlockGemmPath::DeqBf16 ? &bf16 : &f32;
  t.exact_products = true;
  t.acc = &f32;
  t.acc_rounding = Rounding::NearestEven;
  t.out = &f32;
  t.order = path == BlockGemmPath::DeqBf16 ? kDeqOrder : kBlockSumOrder;
  if (f.tensor_scale) t.order += "; then C = RN_f32(acc * RN_f32(s_tA * s_tB))";
  // Machine-readable (kernels/order.hpp; the tiers take the quantizer's operands as the inputs): the
  // dequantized path is a sequential fp32 FMA over bf16 operands; the block-sum path is blocked along K with
  // an exact inner sum (the scales are inside the dequantized operands, so a block's exact sum of their
  // products is P * scale_A * scale_B, rounded once); NVFP4 applies its tensor scales at the end.
  t.sum_order = path == BlockGemmPath::DeqBf16 ? SummationOrder::sequential(StepKind::Fma)
                                               : SummationOrder::blocked(f.block, Combine::Exact, Combine::Sequential);
  if (f.tensor_scale) t.sum_order.final_scale = FinalScale::Tensor;
  t.block.format = &f;
  t.block.rule = rule;
  t.block.rounding = Rounding::NearestEven;
  // Finite inputs only: a NaN or Inf anywhere in a block makes its scale NaN and every value of the block NaN
  // (docs/block_formats.md, "NaN, Inf, zeros"), not IEEE's per-element results (docs/suites.md, "values.special").
  t.domain.finite_only = true;
  return t;
}

std::unique_ptr<CpuModel> make_block_gemm_model(const BlockFormat& f, ScaleRule rule, BlockGemmPath path) {
  const std::string desc = std::string(f.tag) + " (" + rule_name(rule) + " scales) quantized along K, " +
                           (path == BlockGemmPath::DeqBf16 ? "dequantized to bf16, fp32 FMA along K"
                                                           : "exact block sums scaled and added in fp32");
  return std::make_unique<BlockGemmModel>(block_gemm_model_name(f, rule, path), desc, block_gemm_traits(f, rule, path), path);
}

BlockOperands quantize_operands(const KernelTraits& t, const double* a, const double* b, std::int64_t m, std::int64_t n,
                                std::int64_t k) {
  if (!t.block.format) throw std::invalid_argument("quantize_operands: the kernel declares no block scaling");
  BlockQuantOptions o;
  o.rule = t.block.rule;
  o.rounding = t.block.rounding;
  o.block = t.block.block;
  o.axis = 1;
  BlockOperands q;
  q.a = quantize_tensor(*t.block.format, o, a, m, k);
  o.axis = 0;
  q.b = quantize_tensor(*t.block.format, o, b, k, n);
  return q;
}

std::vector<float> blocksum_gemm(const BlockOperands& q, int scale_fault, bool swap_scales) {
  const std::int64_t m = q.a.rows, k = q.a.cols, n = q.b.cols, B = q.a.block, nkb = q.a.scale_cols;
  const Scales s{q, scale_fault, swap_scales, m, n, nkb};
  const std::vector<double> ea = element_values(q.a), eb = element_values(q.b);
  // Block sums of 32 element products are exact in double when they span at most 2^53 units (every format
  // but e5m2: products 2^-32..2^32); block_sums_exact_in_f32's argument with 53 bits. Scaled by a power of two
  // (MX) or by S_A S_B (NVFP4: e2m1 sums of at most 12 bits times 4 + 4 bits) they stay exact. Otherwise
  // (e5m2) the exact sum of the scaled element products is taken, rounded once.
  const double lo = element_value(*q.a.format, 1), hi = q.a.format->max_elem();
  const bool exact_in_double = static_cast<double>(B) * hi * hi / (lo * lo) <= 0x1p53;
  std::vector<double> sa_row, sb_col;  // the e5m2 path: one block's scaled elements
  std::vector<float> c(static_cast<std::size_t>(m * n), 0.0f);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (std::int64_t kb = 0; kb < nkb; ++kb) {
        const std::int64_t k0 = kb * B, len = std::min(B, k - k0);
        float sc;
        if (exact_in_double) {
          double p = 0;
          for (std::int64_t x = 0; x < len; ++x) p += ea[static_cast<std::size_t>(i * k + k0 + x)] * eb[static_cast<std::size_t>((k0 + x) * n + j)];
          sc = rn_f32(p * s.a(i, kb) * s.b(kb, j));
        } else {
          sa_row.resize(static_cast<std::size_t>(len));
          sb_col.resize(static_cast<std::size_t>(len));
          for (std::int64_t x = 0; x < len; ++x) {
            sa_row[static_cast<std::size_t>(x)] = ea[static_cast<std::size_t>(i * k + k0 + x)] * s.a(i, kb);
            sb_col[static_cast<std::size_t>(x)] = eb[static_cast<std::size_t>((k0 + x) * n + j)] * s.b(kb, j);
          }
          const DotRef r = exact_dot(sa_row.data(), sb_col.data(), static_cast<std::size_t>(len), 1, 1);
          sc = r.status & kRefNonFinite ? static_cast<float>(r.value.hi)
                                        : std::bit_cast<float>(static_cast<std::uint32_t>(round_ref(f32, r.value, Rounder::nearest(f32)).code));
        }
        acc = acc + sc;
      }
      c[static_cast<std::size_t>(i * n + j)] = acc;
    }
  apply_tensor_scales(q, c);
  return c;
}

std::vector<float> deqbf16_gemm(const BlockOperands& q, int scale_fault, bool swap_scales) {
  const std::int64_t m = q.a.rows, k = q.a.cols, n = q.b.cols, B = q.a.block, nkb = q.a.scale_cols;
  const Scales s{q, scale_fault, swap_scales, m, n, nkb};
  const Rounder rn = Rounder::nearest(bf16);
  auto to_bf16 = [&](double v) { return static_cast<float>(to_double(bf16, round_double(bf16, v, rn).code)); };
  std::vector<float> A(static_cast<std::size_t>(m * k)), Bm(static_cast<std::size_t>(k * n));
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t x = 0; x < k; ++x)
      A[static_cast<std::size_t>(i * k + x)] = to_bf16(element_value(*q.a.format, q.a.codes[static_cast<std::size_t>(i * k + x)]) * s.a(i, x / B));
  for (std::int64_t x = 0; x < k; ++x)
    for (std::int64_t j = 0; j < n; ++j)
      Bm[static_cast<std::size_t>(x * n + j)] = to_bf16(element_value(*q.b.format, q.b.codes[static_cast<std::size_t>(x * n + j)]) * s.b(x / B, j));
  std::vector<float> c(static_cast<std::size_t>(m * n), 0.0f);
  for (std::int64_t i = 0; i < m; ++i) {
    float* ci = c.data() + i * n;
    for (std::int64_t x = 0; x < k; ++x) {
      const float a = A[static_cast<std::size_t>(i * k + x)];
      const float* b = Bm.data() + x * n;
      for (std::int64_t j = 0; j < n; ++j) ci[j] = std::fma(a, b[j], ci[j]);
    }
  }
  (void)nkb;
  apply_tensor_scales(q, c);
  return c;
}

bool block_sums_exact_in_f32(const BlockFormat& f) {
  const double lo = element_value(f, 1), hi = f.max_elem();  // code 1: the smallest positive element
  return static_cast<double>(f.block) * hi * hi / (lo * lo) <= 0x1p24;
}

std::vector<BlockGemmConfig> builtin_block_gemms(bool cuda) {
  std::vector<BlockGemmConfig> v;
  for (const BlockFormat* f : all_block_formats()) v.push_back({f, f->default_rule, BlockGemmPath::DeqBf16});
  v.push_back({&mxfp8_e4m3, ScaleRule::RCeil, BlockGemmPath::DeqBf16});
  if (!cuda) v.push_back({&mxfp4, ScaleRule::RCeil, BlockGemmPath::DeqBf16});
  for (const BlockFormat* f : all_block_formats())
    if (!cuda || block_sums_exact_in_f32(*f)) v.push_back({f, f->default_rule, BlockGemmPath::BlockSum});
  return v;
}

void register_block_scaled_models() {
  for (const BlockGemmConfig& c : builtin_block_gemms(false))
    register_kernel(block_gemm_model_name(*c.format, c.rule, c.path), Backend::Cpu, false,
                    [c] { return std::unique_ptr<GemmKernel>(make_block_gemm_model(*c.format, c.rule, c.path)); });
  struct Mut {
    const char* name;
    const char* desc;
    const BlockFormat* f;
    ScaleRule rule;
    BlockFault fault;
  };
  static const Mut kMutants[] = {
      {"mutant_mxfp8_scale_off_by_one", "dequantizes A with its scale exponent plus one", &mxfp8_e4m3, ScaleRule::Floor,
       BlockFault::ScaleOffByOne},
      {"mutant_mxfp8_swapped_scales", "reads A's block scales from B's array and B's from A's", &mxfp8_e4m3, ScaleRule::Floor,
       BlockFault::SwappedScales},
      {"mutant_mxfp8_no_emax", "quantizes with scale 2^floor(log2 amax): the element emax never subtracted", &mxfp8_e4m3,
       ScaleRule::Floor, BlockFault::NoEmax},
      {"mutant_mxfp4_rceil_rounds", "claims rceil, computes round(log2(amax / 6)): about half the blocks saturate", &mxfp4,
       ScaleRule::RCeil, BlockFault::RoundNotCeil},
  };
  for (const Mut& mu : kMutants) {
    const Mut* p = &mu;
    register_kernel(p->name, Backend::Cpu, true, [p] {
      const std::string honest = block_gemm_model_name(*p->f, p->rule, BlockGemmPath::DeqBf16);
      return std::unique_ptr<GemmKernel>(std::make_unique<BlockMutant>(p->name, std::string(p->desc) + " (mutant of " + honest + ")",
                                                                   block_gemm_traits(*p->f, p->rule, BlockGemmPath::DeqBf16),
                                                                   BlockGemmPath::DeqBf16, p->fault));
    });
  }
}

}  // namespace fpcert
