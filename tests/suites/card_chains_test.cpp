// tests/suites/card_chains_test.cpp — the card-chain job (oracle/card_chains.hpp) and its use by the split-products
// emulation, without a GPU: an engine that computes the job on the host as the device kernel does (one element at a time,
// fast_instruction per K step and term, the shared FPCERT_EXACT_HD source) gives split_products_tc's results bit for bit
// equal to the per-element fused_dot path, elements it marks general recomputed by the host; a job answered with one
// wrong bit shows in the emulation (the device's answer is what is used); an engine that declines leaves the host's
// own path. The CUDA kernel itself: card_chains_gpu_test.cpp.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "generators/generate.hpp"
#include "kernels/emu/split.hpp"
#include "oracle/card_chains.hpp"
#include "oracle/gemm_engine.hpp"
#include "suites/verdict/emulate/emulate.hpp"
#include "suites/verdict/emulate/emulate_schemes.hpp"
#include "tests/suites/card_chains_support.hpp"

using namespace fpcert;

namespace {

/// The job's semantics on the host, element by element as kernels/device/card_chains.cu computes them.
class HostChains final : public ExactGemmEngine {
 public:
  const char* name() const override { return "test-host-chains"; }
  bool per_tile() const override { return true; }
  void multiply(const SliceBlock& ops, std::int64_t i0, std::int64_t tm, std::int64_t j0, std::int64_t tn, double* out) override {
    eigen_gemm_engine().multiply(ops, i0, tm, j0, tn, out);
  }
  bool card_chains(const CardChains& job, std::uint32_t* d, std::uint8_t* general) override {
    if (decline) return false;
    ++jobs;
    std::vector<fused_detail::FastOp> fa(static_cast<std::size_t>(job.step)), fb(fa.size());
    for (std::int64_t i = 0; i < job.m; ++i)
      for (std::int64_t j = 0; j < job.n; ++j) {
        std::uint32_t slot[2] = {0, 0};
        float outer = 0.0f;
        bool ok = true;
        for (std::int64_t q = 0; q < job.kp && ok; q += job.step) {
          for (int t = 0; t < job.terms && ok; ++t) {
            const CardChainTerm& tm = job.term[t];
            for (int c = 0; c < job.step; ++c) {
              fa[static_cast<std::size_t>(c)] = fused_detail::fast_operand(job.a_dec, job.a[tm.a_slice][i * job.kp + q + c]);
              fb[static_cast<std::size_t>(c)] = fused_detail::fast_operand(job.b_dec, job.b[tm.b_slice][j * job.kp + q + c]);
            }
            ok = fused_detail::fast_instruction(job.block, fa.data(), fb.data(), job.step, slot[tm.slot], slot[tm.slot]);
          }
          if (job.promote_every > 0 && (q + job.step) % job.promote_every == 0) outer += std::bit_cast<float>(slot[1]), slot[1] = 0;
        }
        const auto x = static_cast<std::size_t>(i * job.n + j);
        d[x] = job.add_slots           ? std::bit_cast<std::uint32_t>(std::bit_cast<float>(slot[0]) + std::bit_cast<float>(slot[1]))
               : job.promote_every > 0 ? std::bit_cast<std::uint32_t>(outer + std::bit_cast<float>(slot[1]))
                                       : slot[1];
        general[x] = ok ? 0 : 1;
        generals += !ok;
      }
    if (flip_one) d[static_cast<std::size_t>(job.m * job.n / 2)] ^= 1u;
    return true;
  }
  int jobs = 0;
  std::int64_t generals = 0;
  bool decline = false, flip_one = false;
};

struct DefaultEngine {
  explicit DefaultEngine(std::shared_ptr<ExactGemmEngine> e) { set_default_gemm_engine(std::move(e)); }
  ~DefaultEngine() { set_default_gemm_engine(nullptr); }
};

std::int64_t differing(const std::vector<double>& x, const std::vector<double>& y) {
  std::int64_t d = 0;
  for (std::size_t i = 0; i < x.size(); ++i) d += std::bit_cast<std::uint64_t>(x[i]) != std::bit_cast<std::uint64_t>(y[i]);
  return d;
}

}  // namespace

TEST_CASE("card chains: the job's semantics give split products on tensor cores bit for bit, general elements by the host") {
  auto host = std::make_shared<HostChains>();
  const DefaultEngine installed(host);
  const FusedDotParams p = test::hopper_card("mma_bf16_f32");
  REQUIRE(card_chains_apply(p, 16));
  const std::int64_t m = 19, n = 21, k = 70;
  for (const char* scheme : {"1xbf16", "3xbf16", "9xbf16"}) {
    CAPTURE(scheme);
    const SplitScheme& sc = *find_split_scheme(scheme);
    for (const std::string spec : {"uniform:", "exp_uniform:emin=-80,emax=-66,", "specials"}) {
      CAPTURE(spec);
      const Problem pr = generate((spec == "specials" ? std::string("uniform:") : spec) + "m=19,n=21,k=70,seed=5");
      std::vector<double> a = pr.a.data, b = pr.b.data;
      if (spec == "specials") a[3 * k + 2] = std::numeric_limits<double>::infinity(), b[40 * n + 6] = std::numeric_limits<double>::quiet_NaN();
      const int jobs0 = host->jobs;
      const std::int64_t gen0 = host->generals;
      std::uint64_t in_dev = 0, in_gen = 0;
      const auto dev = emulate_detail::split_products_tc(sc, p, 16, 32, m, n, k, a, b, false, &in_dev);
      const auto ref = emulate_detail::split_products_tc(sc, p, 16, 32, m, n, k, a, b, true, &in_gen);
      CHECK(host->jobs == jobs0 + 1);
      CHECK(differing(dev, ref) == 0);
      CHECK(in_dev == in_gen);
      if (spec == "specials") CHECK(host->generals - gen0 == n + m - 1);  // row 3 and column 6 meet Inf / NaN
      if (spec == "uniform:") CHECK(host->generals == gen0);
      if (spec != "uniform:" && spec != "specials") CHECK(in_gen > 0);  // tiny data: subnormal block results, by the host
    }
  }
  // The answer is used: one flipped bit shows; a declining engine leaves the host's own (lanes) path, equal again.
  const SplitScheme& sc = *find_split_scheme("3xbf16");
  const Problem pr = generate("uniform:m=19,n=21,k=70,seed=6");
  const auto ref = emulate_detail::split_products_tc(sc, p, 16, 32, m, n, k, pr.a.data, pr.b.data, true);
  host->flip_one = true;
  CHECK(differing(emulate_detail::split_products_tc(sc, p, 16, 32, m, n, k, pr.a.data, pr.b.data), ref) == 1);
  host->flip_one = false;
  host->decline = true;
  const int jobs0 = host->jobs;
  CHECK(differing(emulate_detail::split_products_tc(sc, p, 16, 32, m, n, k, pr.a.data, pr.b.data), ref) == 0);
  CHECK(host->jobs == jobs0);
}

TEST_CASE("card chains: the tensor-core card order (f16, bf16, tf32 cards; fp32 promotion) bit for bit; rows with general elements by the host") {
  auto host = std::make_shared<HostChains>();
  const DefaultEngine installed(host);
  const std::int64_t m = 23, n = 37, k = 300;
  int compared = 0;
  for (const test::TcCardOrder& o : test::tc_card_orders()) {
    CAPTURE(o.model);
    CAPTURE(o.promote);
    const KernelTraits t = test::tc_card_traits(o);
    for (const std::string spec : {"uniform:", "exp_uniform:emin=-12,emax=12,", "specials"}) {
      CAPTURE(spec);
      const Problem pr = generate((spec == "specials" ? std::string("uniform:") : spec) + "m=23,n=37,k=300,seed=9,source=" + o.source);
      std::vector<double> a = pr.a.data, b = pr.b.data;
      if (spec == "specials") a[4 * k + 250] = -std::numeric_limits<double>::infinity();
      const int jobs0 = host->jobs;
      const std::int64_t gen0 = host->generals;
      const auto dev = emulate_gemm(t, m, n, k, a, b, {}, EmulationPath::Fast);
      const auto ref = emulate_gemm(t, m, n, k, a, b, {}, EmulationPath::Generic);
      CHECK(host->jobs == jobs0 + 1);
      CHECK(dev == ref);
      if (spec == "specials") CHECK(host->generals - gen0 == n);  // row 4 meets -Inf: emulated by the host
      else CHECK(host->generals == gen0);
      ++compared;
    }
  }
  CHECK(compared == 4 * 3);
}
