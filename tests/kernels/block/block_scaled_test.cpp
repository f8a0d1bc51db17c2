// tests/kernels/block/block_scaled_test.cpp — the block-scaled GEMM models against their stated operation order,
// recomputed independently: operands quantized and decoded by the MPFR reference (oracle/block/block_mpfr.hpp),
// block sums by exact_dot_mpfr, then the stated fp32 roundings, bit for bit.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <vector>

#include "kernels/block/block_scaled.hpp"
#include "oracle/block/block_mpfr.hpp"
#include "oracle/gemm_ref.hpp"
#include "oracle/mpfr_ref.hpp"
#include "base/philox.hpp"
#include "oracle/refvalue.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;

namespace {

/// Random fp32 values over `span` binades below 2^top with random signs and full mantissas (they round
/// into every element format).
std::vector<double> random_values(std::uint64_t seed, std::uint64_t stream, std::size_t n, int top, int span) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto r = philox_4x32(seed, stream, i);
    const float m = 1.0f + static_cast<float>(r[1] >> 9) * 0x1p-23f;
    v[i] = std::ldexp(static_cast<double>(m), top - static_cast<int>(r[0] % static_cast<std::uint32_t>(span))) * ((r[2] & 1) ? -1 : 1);
  }
  return v;
}

float rn32(double x) { return std::bit_cast<float>(static_cast<std::uint32_t>(round_double(f32, x, Rounder::nearest(f32)).code)); }

/// One operand quantized by the MPFR reference: unscaled element values and per-block scale multipliers.
struct RefOperand {
  std::vector<double> elem;   ///< element values, unscaled, row-major like the operand
  std::vector<double> scale;  ///< per (line, block), line-major: 2^e (MX) or S (NVFP4); lines are rows (axis 1) or columns (axis 0)
  double ts = 1;
};

/// Quantize a rows x cols operand in blocks of B along `axis` (1: rows, 0: columns) with MPFR.
RefOperand ref_quantize(const BlockFormat& f, ScaleRule rule, const std::vector<double>& x, std::int64_t rows, std::int64_t cols,
                        int axis, int B) {
  RefOperand r;
  r.elem.resize(x.size());
  double amax_t = 0;
  for (double v : x) amax_t = std::max(amax_t, std::fabs(v));
  r.ts = f.tensor_scale ? mpfr_ref::nvfp4_tensor_scale(amax_t) : 1.0;
  const std::int64_t lines = axis == 1 ? rows : cols, len = axis == 1 ? cols : rows, nb = (len + B - 1) / B;
  r.scale.resize(static_cast<std::size_t>(lines * nb));
  mpfr_ref::Mpfr m(128);
  const std::uint8_t unit = f.pow2_scales() ? 127 : 0x38;  // the scale code of 1.0 (e4m3 0x38 = 2^0)
  for (std::int64_t l = 0; l < lines; ++l)
    for (std::int64_t b = 0; b < nb; ++b) {
      auto at = [&](std::int64_t q) { return axis == 1 ? l * cols + b * B + q : (b * B + q) * cols + l; };
      const std::int64_t n = std::min<std::int64_t>(B, len - b * B);
      double amax = 0;
      for (std::int64_t q = 0; q < n; ++q) amax = std::max(amax, std::fabs(x[static_cast<std::size_t>(at(q))]));
      const std::uint8_t sc = mpfr_ref::block_scale_code(f, rule, amax, false, r.ts);
      if (f.pow2_scales()) {
        r.scale[static_cast<std::size_t>(l * nb + b)] = std::ldexp(1.0, sc - 127);
      } else {
        mpfr_ref::set_code(m, e4m3, sc & 0x7F);  // UE4M3: the code's value, sign bit ignored
        r.scale[static_cast<std::size_t>(l * nb + b)] = mpfr_get_d(m, MPFR_RNDN);
      }
      for (std::int64_t q = 0; q < n; ++q) {
        const auto e = static_cast<std::size_t>(at(q));
        const ElementCode c = mpfr_ref::quantize_element(f, x[e], sc, r.ts, Rounding::NearestEven);
        REQUIRE(mpfr_ref::dequantize(m, f, c.code, unit, 1.0));
        r.elem[e] = mpfr_get_d(m, MPFR_RNDN);  // exact: <= 8 significant bits
      }
    }
  return r;
}

struct Shape {
  std::int64_t m, n, k;
};

}  // namespace

TEST_CASE("block-scaled models: the stated order, recomputed from the MPFR quantizer, bit for bit") {
  const std::uint64_t seed = test::seed();
  std::uint64_t stream = 0;
  for (const BlockFormat* f : all_block_formats()) {
    for (BlockGemmPath path : {BlockGemmPath::BlockSum, BlockGemmPath::DeqBf16}) {
      CAPTURE(f->tag);
      CAPTURE(to_string(path));
      const int B = f->block;
      const Shape s{5, 7, 3 * B + 5};  // a short last K-block
      const std::vector<double> a = random_values(seed, stream++, static_cast<std::size_t>(s.m * s.k), 6, 12);
      const std::vector<double> b = random_values(seed, stream++, static_cast<std::size_t>(s.k * s.n), 3, 12);
      auto model = make_block_gemm_model(*f, f->default_rule, path);
      DecodedOperands d;
      d.m = s.m;
      d.n = s.n;
      d.k = s.k;
      d.a = a;
      d.b = b;
      const std::vector<std::uint64_t> got = model->compute(d);

      const RefOperand ra = ref_quantize(*f, f->default_rule, a, s.m, s.k, 1, B);
      const RefOperand rb = ref_quantize(*f, f->default_rule, b, s.k, s.n, 0, B);
      const std::int64_t nb = (s.k + B - 1) / B;
      const float tt = rn32(ra.ts * rb.ts);
      std::int64_t nonzero = 0;
      for (std::int64_t i = 0; i < s.m; ++i)
        for (std::int64_t j = 0; j < s.n; ++j) {
          float acc = 0.0f;
          if (path == BlockGemmPath::BlockSum) {
            for (std::int64_t kb = 0; kb < nb; ++kb) {
              const std::int64_t k0 = kb * B, len = std::min<std::int64_t>(B, s.k - k0);
              // The exact sum of the scaled element products (MPFR), rounded once to fp32.
              const double sa = ra.scale[static_cast<std::size_t>(i * nb + kb)], sb = rb.scale[static_cast<std::size_t>(j * nb + kb)];
              std::vector<double> xa(static_cast<std::size_t>(len)), xb(static_cast<std::size_t>(len));
              for (std::int64_t x = 0; x < len; ++x) {
                xa[static_cast<std::size_t>(x)] = ra.elem[static_cast<std::size_t>(i * s.k + k0 + x)] * sa;
                xb[static_cast<std::size_t>(x)] = rb.elem[static_cast<std::size_t>((k0 + x) * s.n + j)] * sb;
              }
              const DotRef p = exact_dot_mpfr(xa.data(), xb.data(), static_cast<std::size_t>(len), 1, 1);
              acc = acc + std::bit_cast<float>(static_cast<std::uint32_t>(round_ref(f32, p.value, Rounder::nearest(f32)).code));
            }
          } else {
            // Dequantized into bf16 (exact for these magnitudes), then fp32 FMA along K.
            for (std::int64_t q = 0; q < s.k; ++q) {
              const double av = ra.elem[static_cast<std::size_t>(i * s.k + q)] * ra.scale[static_cast<std::size_t>(i * nb + q / B)];
              const double bv = rb.elem[static_cast<std::size_t>(q * s.n + j)] * rb.scale[static_cast<std::size_t>(j * nb + q / B)];
              const double a16 = to_double(bf16, round_double(bf16, av, Rounder::nearest(bf16)).code);
              const double b16 = to_double(bf16, round_double(bf16, bv, Rounder::nearest(bf16)).code);
              acc = std::fma(static_cast<float>(a16), static_cast<float>(b16), acc);
            }
          }
          if (f->tensor_scale) acc = rn32(static_cast<double>(acc) * static_cast<double>(tt));
          CAPTURE(i);
          CAPTURE(j);
          CHECK(got[static_cast<std::size_t>(i * s.n + j)] == std::bit_cast<std::uint32_t>(acc));
          nonzero += acc != 0;
        }
      CHECK(nonzero > s.m * s.n / 2);  // the comparison is not between zeros
    }
  }
}

TEST_CASE("block-scaled models: names, traits and the mutants' faults") {
  auto m = make_block_gemm_model(mxfp8_e4m3, ScaleRule::RCeil, BlockGemmPath::DeqBf16);
  CHECK(m->name() == "model_gemm_mxfp8_e4m3_rceil_deqbf16_f32acc");
  CHECK(m->traits().block.format == &mxfp8_e4m3);
  CHECK(m->traits().block.rule == ScaleRule::RCeil);
  CHECK(describe_traits(m->traits()).find("quantized to mxfp8_e4m3 (rceil scales, blocks of 32 along K)") != std::string::npos);
  CHECK_THROWS(make_block_gemm_model(nvfp4, ScaleRule::Ceil, BlockGemmPath::BlockSum));
  // Block sums exact in fp32: 32 * max^2 / min^2 units: E2M1 32 * 36 / 2^-2 = 2^12.2, E2M3 32 * 56.25 * 2^6 = 2^16.8,
  // E3M2 32 * 784 * 2^8 = 2^22.6, int8 32 * (127/64)^2 * 2^12 = 2^19; E4M3 32 * 448^2 * 2^18 = 2^40.6, E5M2 2^78.
  for (const BlockFormat* f : {&mxfp4, &mxfp6_e2m3, &mxfp6_e3m2, &mxint8, &nvfp4}) CHECK(block_sums_exact_in_f32(*f));
  for (const BlockFormat* f : {&mxfp8_e4m3, &mxfp8_e5m2}) CHECK(!block_sums_exact_in_f32(*f));
  std::size_t cuda_blocksum = 0;
  for (const BlockGemmConfig& c : builtin_block_gemms(true)) cuda_blocksum += c.path == BlockGemmPath::BlockSum;
  CHECK(cuda_blocksum == 5);
  for (const char* mut : {"mutant_mxfp8_scale_off_by_one", "mutant_mxfp8_swapped_scales", "mutant_mxfp8_no_emax", "mutant_mxfp4_rceil_rounds"}) {
    const KernelInfo* info = find_kernel_info(mut);
    REQUIRE(info != nullptr);
    CHECK(info->mutant);
    CHECK(make_gemm_kernel(mut)->traits().block.active());
  }
  // The swapped-scale fault is invisible when A's and B's scales coincide, and shows when they differ:
  // A = B^T with one scale everywhere vs A with rows of different magnitudes.
  const std::int64_t n = 4, k = 32;
  std::vector<double> a(static_cast<std::size_t>(n * k)), b(static_cast<std::size_t>(k * n));
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t q = 0; q < k; ++q) {
      a[static_cast<std::size_t>(i * k + q)] = 0.75 + 0.001 * static_cast<double>(q);
      b[static_cast<std::size_t>(q * n + i)] = 0.5 + 0.002 * static_cast<double>(q);
    }
  auto honest = make_block_gemm_model(mxfp8_e4m3, ScaleRule::Floor, BlockGemmPath::DeqBf16);
  const BlockOperands q = quantize_operands(honest->traits(), a.data(), b.data(), n, n, k);
  CHECK(deqbf16_gemm(q) == deqbf16_gemm(q, 0, true));  // every scale 2^(-1-8) = 2^-9 in A, 2^-9 in B as well
  for (std::int64_t q2 = 0; q2 < k; ++q2) a[static_cast<std::size_t>(2 * k + q2)] *= 64;  // row 2 of A: scale 2^-3
  const BlockOperands q2 = quantize_operands(honest->traits(), a.data(), b.data(), n, n, k);
  CHECK(deqbf16_gemm(q2) != deqbf16_gemm(q2, 0, true));
  CHECK(deqbf16_gemm(q2) != deqbf16_gemm(q2, 1, false));
}
