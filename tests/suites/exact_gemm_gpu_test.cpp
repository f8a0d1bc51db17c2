// tests/suites/exact_gemm_gpu_test.cpp — the exact reference with its slice GEMMs on the GPU (cuBLAS DGEMM engine,
// kernels/device/exact_gemm_cuda.hpp; docs/oracle.md "On the GPU"): bit-identical to the CPU oracle (hi, lo, tail,
// status; abs_sum inside the bound's two sides of each other) on every certify input at the device sizes and on random
// shapes; the sample check throws on a deliberately corrupted product, in a small GEMM (every element checked) and in a
// large one (64 elements).
#include <doctest/doctest.h>

#include <string>

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
