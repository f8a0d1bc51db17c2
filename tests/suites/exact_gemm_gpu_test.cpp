// tests/suites/exact_gemm_gpu_test.cpp — the exact reference with its slice GEMMs on the GPU (cuBLAS DGEMM engine,
// kernels/device/exact_gemm_cuda.hpp; docs/oracle.md "On the GPU"): bit-identical to the CPU oracle (hi, lo, tail,
// status; abs_sum inside the bound's two sides of each other) on every certify input at the device sizes and on random
// shapes; the sample check throws on a deliberately corrupted product, in a small GEMM (every element checked) and in a
// large one (64 elements). The whole reference on the device (binary32 inputs: exact_gemm_fused.cu) over layouts,
// NaN/Inf, subnormals and per-element corrections, in one row band and in many; inputs it declines (fp64, at the first
// line or later) and the DGEMMs-only path.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "generators/generate.hpp"
#include "kernels/device/exact_gemm_cuda.hpp"
#include "oracle/gemm_ref.hpp"
#include "tests/support/certify_inputs.hpp"
#include "tests/support/same_reference.hpp"
#include "tests/support/splitmix.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;

namespace {

std::shared_ptr<CudaExactGemmEngine> engine() {
  std::string why;
  auto e = make_cuda_exact_gemm_engine(&why);
  INFO(why);
  REQUIRE(e);
  return e;
}

/// The GPU engine with product 0 of every panel changed: one element (`all` false) or every element (+1 each).
class Corrupting final : public ExactGemmEngine {
 public:
  Corrupting(ExactGemmEngine& e, bool all) : e_(e), all_(all) {}
  const char* name() const override { return "test-corrupted-gpu"; }
  bool per_tile() const override { return false; }
  void multiply(const SliceBlock& ops, std::int64_t i0, std::int64_t tm, std::int64_t j0, std::int64_t tn, double* out) override {
    e_.multiply(ops, i0, tm, j0, tn, out);
    if (all_)
      for (std::int64_t x = 0; x < tm * tn; ++x) out[x] += 1;
    else
      out[(tm / 2) * tn + tn / 2] += 1;  // one integer of product 0, one unit off
  }

 private:
  ExactGemmEngine& e_;
  bool all_;
};

void same_as_cpu(const MatrixView& a, const MatrixView& b, ExactGemmEngine& gpu, const std::string& what) {
  CAPTURE(what);
  const GemmRef h = gemm_reference(a, b);
  GemmRefOptions o;
  o.engine = &gpu;
  const GemmRef g = gemm_reference(a, b, o);
  CHECK(std::string(g.info.engine) == "gpu-cublas-dgemm");
  CHECK(g.info.sample_checked > 0);
  const test::RefDiff d = test::diff_values(g, h, false);
  INFO(d.first);
  CHECK(d.count == 0);
  // abs_sum: both are upper bounds of the same RU(sum |ab|) within a factor 1 + 3 (K + nb + 2) 2^-53 of it.
  const double nb = static_cast<double>(h.info.kblock ? (a.cols + h.info.kblock - 1) / h.info.kblock : 1);
  const double rel = 3 * (static_cast<double>(a.cols) + nb + 2) * 0x1p-53;
  std::int64_t bad = 0;
  for (std::size_t e = 0; e < h.abs_sum.size(); ++e) {
    const double x = g.abs_sum[e], y = h.abs_sum[e];
    bad += !(std::isinf(y) ? std::isinf(x) : (x <= y * (1 + rel) + 0x1p-1000 && y <= x * (1 + rel) + 0x1p-1000));
  }
  CHECK(bad == 0);
}

}  // namespace

TEST_CASE("GPU exact reference: the certify suite's inputs (device sizes) bit for bit with the CPU oracle") {
  auto gpu = engine();
  const auto specs = test::certify_gemm_specs(true);
  REQUIRE(specs.size() > 30);
  for (const std::string& spec : specs) {
    const Problem p = generate(spec);
    same_as_cpu(p.a.view(), p.b.view(), *gpu, spec);
  }
}

TEST_CASE("GPU exact reference: random shapes bit for bit with the CPU oracle") {
  auto gpu = engine();
  const std::uint64_t seed = test::seed() + 39;
  for (std::uint64_t r = 0; r < 12; ++r) {
    const std::uint64_t h = test::mix(seed ^ (r + 1));
    const std::int64_t m = 1 + static_cast<std::int64_t>(h % 1000), n = 1 + static_cast<std::int64_t>((h >> 16) % 1000);
    const std::int64_t k = 1 + static_cast<std::int64_t>((h >> 32) % 6000);
    std::vector<double> a(static_cast<std::size_t>(m * k)), b(static_cast<std::size_t>(k * n));
    const int span = r % 3 == 0 ? 60 : 4;  // every third: exponents over 2^60, entries outside the slice window
    for (std::size_t i = 0; i < a.size(); ++i)
      a[i] = static_cast<float>(std::ldexp(2 * test::unit(seed + r, i) - 1, static_cast<int>(test::unit(seed + r + 99, i) * span) - span / 2));
    for (std::size_t i = 0; i < b.size(); ++i)
      b[i] = static_cast<float>(std::ldexp(2 * test::unit(seed + r + 7, i) - 1, static_cast<int>(test::unit(seed + r + 98, i) * span) - span / 2));
    same_as_cpu(MatrixView::row_major(a.data(), m, k), MatrixView::row_major(b.data(), k, n), *gpu,
                std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + " (FPCERT_TEST_SEED=" + std::to_string(test::seed()) + ")");
  }
}

TEST_CASE("GPU exact reference: the sample check throws on a corrupted product") {
  auto gpu = engine();
  for (const bool large : {false, true}) {
    const std::int64_t n = large ? 1500 : 40, k = large ? 700 : 300;
    std::vector<double> a(static_cast<std::size_t>(n * k)), b(static_cast<std::size_t>(k * n));
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(2 * test::unit(test::seed() + 3, i) - 1);
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(2 * test::unit(test::seed() + 4, i) - 1);
    Corrupting bad(*gpu, large);  // small: one element of one product (every element is checked); large: all of them
    GemmRefOptions o;
    o.engine = &bad;
    CAPTURE(large);
    CHECK_THROWS_AS(gemm_reference(MatrixView::row_major(a.data(), n, k), MatrixView::row_major(b.data(), k, n), o), DeviceError);
  }
}

TEST_CASE("GPU exact reference: whole on the device for binary32 inputs (layouts, NaN/Inf, subnormals, fallbacks)") {
  auto gpu = engine();
  const std::uint64_t seed = test::seed() + 139;
  const auto f32 = [](double x) { return static_cast<double>(static_cast<float>(x)); };
  // Each case in the default bands, in many (about 1000 elements each, at most 16: band b's results come down while band
  // b + 1 is computed) and in one (INT64_MAX elements a band, as bench_oracle_gemm_gpu asks), each bit for bit with the
  // CPU oracle.
  for (const std::int64_t band : {kWholeBandElements, std::int64_t{1000}, std::numeric_limits<std::int64_t>::max()})
  for (int r = 0; r < 8; ++r) {
    gpu->set_band_elements(band);
    const std::uint64_t h = test::mix(seed ^ static_cast<std::uint64_t>(r + 1));
    const std::int64_t m = 1 + static_cast<std::int64_t>(h % 300), n = 1 + static_cast<std::int64_t>((h >> 16) % 300);
    const std::int64_t k = 1 + static_cast<std::int64_t>((h >> 32) % 3000);
    std::vector<double> a(static_cast<std::size_t>(m * k)), b(static_cast<std::size_t>(k * n));
    // r 0-1: exponents over 2^6; 2-3: the same with one entry in 97 (A) and 89 (B) 2^50 smaller (outside the slice
    // window: per-element corrections on the device); 4-5: subnormal binary32 values among normal ones; 6-7: NaN and
    // Inf in a row of A and a column of B.
    const int span = 6;
    for (std::size_t i = 0; i < a.size(); ++i)
      a[i] = f32(std::ldexp(2 * test::unit(seed + r, i) - 1, static_cast<int>(test::unit(seed + r + 50, i) * span) - span / 2));
    for (std::size_t i = 0; i < b.size(); ++i)
      b[i] = f32(std::ldexp(2 * test::unit(seed + r + 7, i) - 1, static_cast<int>(test::unit(seed + r + 57, i) * span) - span / 2));
    if (r / 2 == 1) {
      for (std::size_t i = 0; i < a.size(); i += 97) a[i] = f32(std::ldexp(a[i], -50));
      for (std::size_t i = 5; i < b.size(); i += 89) b[i] = f32(std::ldexp(b[i], -50));
    }
    if (r / 2 == 2)
      for (std::size_t i = 0; i < a.size(); i += 3) a[i] = f32(std::ldexp(a[i], -140));  // below 2^-126
    if (r / 2 == 3) {
      a[static_cast<std::size_t>((m / 2) * k + k / 3)] = std::numeric_limits<double>::infinity();
      b[static_cast<std::size_t>((k / 2) * n + n / 2)] = std::numeric_limits<double>::quiet_NaN();
      if (k > 1) a[static_cast<std::size_t>((m / 2) * k + k - 1)] = -std::numeric_limits<double>::infinity();
    }
    // Odd r: A column-major and B row-major (the device transposes both); even: row-major A, column-major B.
    const bool odd = r % 2 == 1;
    std::vector<double> at = a, bt = b;
    if (odd) {  // the same matrices stored in the other order
      for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t kk = 0; kk < k; ++kk) at[static_cast<std::size_t>(kk * m + i)] = a[static_cast<std::size_t>(i * k + kk)];
    } else {
      for (std::int64_t kk = 0; kk < k; ++kk)
        for (std::int64_t j = 0; j < n; ++j) bt[static_cast<std::size_t>(j * k + kk)] = b[static_cast<std::size_t>(kk * n + j)];
    }
    const MatrixView A = odd ? MatrixView::col_major(at.data(), m, k) : MatrixView::row_major(a.data(), m, k);
    const MatrixView B = odd ? MatrixView::row_major(b.data(), k, n) : MatrixView::col_major(bt.data(), k, n);
    gpu->reset_times();
    same_as_cpu(A, B, *gpu, "case " + std::to_string(r) + ": " + std::to_string(m) + "x" + std::to_string(n) + "x" +
                                std::to_string(k) + " (FPCERT_TEST_SEED=" + std::to_string(test::seed()) + ")");
    CHECK(gpu->times().whole == 1);  // made wholly on the device
    const std::int64_t rows = std::min(m, std::max<std::int64_t>({1, band / n + (band % n != 0), (m + 15) / 16}));
    CHECK(gpu->times().bands == (m + rows - 1) / rows);
    if (r / 2 == 1) {
      const GemmRef h = gemm_reference(A, B);
      CHECK(h.fallbacks > 0);  // the case reaches the device's corrections
    }
  }
  gpu->set_band_elements(kWholeBandElements);
  // Inputs that are not binary32 values: the device declines, the slice DGEMMs path answers (still bit for bit).
  std::vector<double> a(200 * 300), b(300 * 100);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = 2 * test::unit(seed + 90, i) - 1;  // 53-bit significands
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = 2 * test::unit(seed + 91, i) - 1;
  gpu->reset_times();
  same_as_cpu(MatrixView::row_major(a.data(), 200, 300), MatrixView::row_major(b.data(), 300, 100), *gpu, "fp64 inputs");
  CHECK(gpu->times().whole == 0);
  CHECK(gpu->times().panels > 0);
  // Binary32 but for one entry in B's last row (found while packing, after the first line's check): declined too.
  for (double& x : a) x = f32(x);
  for (double& x : b) x = f32(x);
  b[b.size() - 7] = 1 + 0x1p-40;
  gpu->reset_times();
  same_as_cpu(MatrixView::row_major(a.data(), 200, 300), MatrixView::row_major(b.data(), 300, 100), *gpu, "one fp64 entry");
  CHECK(gpu->times().whole == 0);
  CHECK(gpu->times().panels > 0);
  b[b.size() - 7] = 1;
  // Switched off: the slice DGEMMs path for binary32 inputs too.
  gpu->set_whole(false);
  gpu->reset_times();
  same_as_cpu(MatrixView::row_major(a.data(), 200, 300), MatrixView::row_major(b.data(), 300, 100), *gpu, "whole off");
  CHECK(gpu->times().whole == 0);
  gpu->set_whole(true);
}

TEST_CASE("GPU exact reference: a whole reference with a corrupted element is refused by the sample check") {
  auto gpu = engine();
  // An engine whose whole reference is the GPU's with one element's hi moved by one unit.
  class CorruptWhole final : public ExactGemmEngine {
   public:
    explicit CorruptWhole(CudaExactGemmEngine& e) : e_(e) {}
    const char* name() const override { return "test-corrupted-whole"; }
    bool per_tile() const override { return false; }
    void multiply(const SliceBlock& ops, std::int64_t i0, std::int64_t tm, std::int64_t j0, std::int64_t tn,
                  double* out) override {
      e_.multiply(ops, i0, tm, j0, tn, out);
    }
    bool whole_reference(const MatrixView& a, const MatrixView& b, unsigned threads, GemmRef& r) override {
      if (!e_.whole_reference(a, b, threads, r)) return false;
      RefValue& v = r.c[r.c.size() / 3];
      v.hi = std::nextafter(v.hi, std::numeric_limits<double>::infinity());
      return true;
    }

   private:
    CudaExactGemmEngine& e_;
  };
  CorruptWhole bad(*gpu);
  std::vector<double> a(40 * 300), b(300 * 40);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(2 * test::unit(test::seed() + 5, i) - 1);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(2 * test::unit(test::seed() + 6, i) - 1);
  GemmRefOptions o;
  o.engine = &bad;
  CHECK_THROWS_AS(gemm_reference(MatrixView::row_major(a.data(), 40, 300), MatrixView::row_major(b.data(), 300, 40), o),
                  DeviceError);
}
