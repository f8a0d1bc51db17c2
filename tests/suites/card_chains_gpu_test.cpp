// tests/suites/card_chains_gpu_test.cpp — the bitwise tier's tensor-core card chains on the GPU (oracle/card_chains.hpp,
// kernels/device/card_chains.cu; docs/tensor_cores.md "The card emulation on the GPU"): split products on tensor cores
// (1xbf16, 3xbf16, 6xbf16, 9xbf16 on the bf16 card, 3xtf32 on the tf32 card, MMA-Sim's Hopper models) emulated with the
// device engine installed equal bit for bit to the per-element fused_dot path (EmulationPath::Generic, the definition),
// with the same count of inexact subnormal block results, on shapes with partial 16 x 16 tiles and a K tail, on ordinary
// data, exponents over 80 binades, tiny data whose block results fall below fp32's normal range, and planted Inf and
// NaN; the device answered every job, and the elements it left to the host (general) are exactly where the fast path
// cannot decide. The same for the tensor-core card order (emulate_gemm, the f16, bf16 and tf32 cards, fp32 promotion
// every 128 products), EmulationPath::Fast with the device against Generic.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "generators/generate.hpp"
#include "kernels/device/exact_gemm_cuda.hpp"
#include "kernels/emu/split.hpp"
#include "oracle/card_chains.hpp"
#include "oracle/gemm_engine.hpp"
#include "suites/verdict/emulate/emulate.hpp"
#include "suites/verdict/emulate/emulate_schemes.hpp"
#include "tests/suites/card_chains_support.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;

namespace {

/// The CUDA engine, counting the card-chain jobs it answered and the elements it left to the host.
class Counting final : public ExactGemmEngine {
 public:
  explicit Counting(std::shared_ptr<CudaExactGemmEngine> e) : e_(std::move(e)) {}
  const char* name() const override { return "test-counting-gpu"; }
  bool per_tile() const override { return false; }
  void multiply(const SliceBlock& ops, std::int64_t i0, std::int64_t tm, std::int64_t j0, std::int64_t tn, double* out) override {
    e_->multiply(ops, i0, tm, j0, tn, out);
  }
  bool card_chains(const CardChains& job, std::uint32_t* d, std::uint8_t* general) override {
    if (!e_->card_chains(job, d, general)) return false;
    ++jobs;
    for (std::int64_t x = 0; x < job.m * job.n; ++x) general_elements += general[x];
    elements += job.m * job.n;
    return true;
  }
  int jobs = 0;
  std::int64_t elements = 0, general_elements = 0;

 private:
  std::shared_ptr<CudaExactGemmEngine> e_;
};

/// Restores the process default engine on scope exit.
struct DefaultEngine {
  explicit DefaultEngine(std::shared_ptr<ExactGemmEngine> e) { set_default_gemm_engine(std::move(e)); }
  ~DefaultEngine() { set_default_gemm_engine(nullptr); }
};

/// The CUDA engine (the test stops where there is none), wrapped to count.
std::shared_ptr<Counting> cuda_counting() {
  std::string why;
  auto cuda = make_cuda_exact_gemm_engine(&why);
  INFO(why);
  REQUIRE(cuda);
  return std::make_shared<Counting>(cuda);
}

bool same_bits(double x, double y) { return std::bit_cast<std::uint64_t>(x) == std::bit_cast<std::uint64_t>(y); }

}  // namespace

TEST_CASE("GPU card chains: split products on tensor cores equal the per-element fused_dot path bit for bit") {
  const auto counting = cuda_counting();
  const DefaultEngine installed(counting);
  const std::uint64_t seed = test::seed() + 71;
  CAPTURE(seed);
  int compared = 0;
  std::uint64_t inexact_total = 0;
  std::int64_t specials_total = 0;
  for (const auto& [scheme, step, insn, pad] : {std::tuple{"1xbf16", 16, "mma_bf16_f32", 32}, std::tuple{"3xbf16", 16, "mma_bf16_f32", 32},
                                                std::tuple{"6xbf16", 16, "mma_bf16_f32", 32}, std::tuple{"9xbf16", 16, "mma_bf16_f32", 32},
                                                std::tuple{"3xtf32", 8, "mma_tf32_f32", 16}}) {
    CAPTURE(scheme);
    const SplitScheme* sc = find_split_scheme(scheme);
    REQUIRE(sc);
    const FusedDotParams p = test::hopper_card(insn);
    REQUIRE(card_chains_apply(p, step));
    for (const std::string spec : {"uniform:", "exp_uniform:emin=-40,emax=40,", "exp_uniform:emin=-80,emax=-66,", "specials"}) {
      CAPTURE(spec);
      const bool planted = spec == "specials";
      const std::int64_t m = 67, n = 53, k = 200;  // partial 16 x 16 tiles, K zero-padded
      Problem pr = generate((planted ? std::string("uniform:") : spec) + "m=67,n=53,k=200,seed=" + std::to_string(seed % 100000));
      std::vector<double> a = pr.a.data, b = pr.b.data;
      if (planted) {  // Inf, -Inf and NaN in a few rows of A and columns of B: their elements need the general path
        const double inf = std::numeric_limits<double>::infinity();
        a[5 * k + 3] = inf;
        a[20 * k + 150] = -inf;
        a[40 * k + 7] = std::numeric_limits<double>::quiet_NaN();
        b[9 * n + 11] = inf;
        b[190 * n + 30] = -inf;
      }
      const int jobs0 = counting->jobs;
      const std::int64_t general0 = counting->general_elements;
      std::uint64_t inexact_fast = 0, inexact_generic = 0;
      const std::vector<double> dev = emulate_detail::split_products_tc(*sc, p, step, pad, m, n, k, a, b, false, &inexact_fast);
      const std::vector<double> ref = emulate_detail::split_products_tc(*sc, p, step, pad, m, n, k, a, b, true, &inexact_generic);
      CHECK(counting->jobs == jobs0 + 1);  // the device answered (the generic path never asks it)
      REQUIRE(dev.size() == ref.size());
      std::int64_t differ = 0, first = -1;
      for (std::size_t x = 0; x < ref.size(); ++x)
        if (!same_bits(dev[x], ref[x]) && differ++ == 0) first = static_cast<std::int64_t>(x);
      CAPTURE(first);
      if (first >= 0) MESSAGE("element " << first << ": device path " << dev[static_cast<std::size_t>(first)] << ", fused_dot " << ref[static_cast<std::size_t>(first)]);
      CHECK(differ == 0);
      CHECK(inexact_fast == inexact_generic);
      inexact_total += inexact_generic;
      const std::int64_t general = counting->general_elements - general0;
      if (planted) {
        // every element of a row or column holding an Inf or NaN meets it in some block: left to the host
        CHECK(general >= 3 * n + 2 * m - 6);
        std::int64_t nonfinite = 0;
        for (double v : ref) nonfinite += !std::isfinite(v);
        CHECK(nonfinite >= 3 * n + 2 * m - 6);
        specials_total += general;
      }
      if (spec == "uniform:") CHECK(general == 0);  // ordinary data: every block on the fast path, all on the device
      ++compared;
    }
  }
  MESSAGE(compared << " GEMMs; " << counting->elements << " elements on the device, " << counting->general_elements
                   << " of them left to the host (" << specials_total << " by Inf/NaN); " << inexact_total << " inexact subnormal blocks");
  CHECK(compared == 5 * 4);
  CHECK(inexact_total > 0);  // the tiny data reached the general path's subnormal rounding
}

TEST_CASE("GPU card chains: the tensor-core card order (f16, bf16, tf32 cards; fp32 promotion) equals the per-element path") {
  const auto counting = cuda_counting();
  const DefaultEngine installed(counting);
  const std::uint64_t seed = test::seed() + 73;
  CAPTURE(seed);
  const std::int64_t m = 130, n = 70, k = 600;  // 9 x 5 tiles, partial in both directions; K zero-padded
  int compared = 0;
  for (const test::TcCardOrder& o : test::tc_card_orders()) {
    CAPTURE(o.model);
    CAPTURE(o.promote);
    const KernelTraits t = test::tc_card_traits(o);
    REQUIRE(card_chains_apply(*t.sum_order.block_model.params, o.step));
    for (const std::string spec : {"uniform:", "exp_uniform:emin=-12,emax=12,", "specials"}) {
      CAPTURE(spec);
      const Problem pr = generate((spec == "specials" ? std::string("uniform:") : spec) + "m=130,n=70,k=600,seed=" +
                                  std::to_string(seed % 100000) + ",source=" + o.source);
      std::vector<double> a = pr.a.data, b = pr.b.data;
      if (spec == "specials") a[7 * k + 599] = std::numeric_limits<double>::infinity(), b[3 * n + 66] = std::numeric_limits<double>::quiet_NaN();
      const int jobs0 = counting->jobs;
      const std::int64_t general0 = counting->general_elements;
      const auto dev = emulate_gemm(t, m, n, k, a, b, {}, EmulationPath::Fast);
      const auto ref = emulate_gemm(t, m, n, k, a, b, {}, EmulationPath::Generic);
      CHECK(counting->jobs == jobs0 + 1);
      std::int64_t differ = 0;
      for (std::size_t x = 0; x < ref.size(); ++x) differ += dev[x] != ref[x];
      CHECK(differ == 0);
      const std::int64_t general = counting->general_elements - general0;
      if (spec == "specials") CHECK(general == n + m - 1);  // row 7 meets Inf, column 66 NaN
      else CHECK(general == 0);
      ++compared;
    }
  }
  MESSAGE(compared << " GEMMs through the tensor-core card order on the device");
  CHECK(compared == 4 * 3);
}
