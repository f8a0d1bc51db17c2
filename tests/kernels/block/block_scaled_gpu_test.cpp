// tests/kernels/block/block_scaled_gpu_test.cpp — the block-scaled kernels on the device (kernels/block/cuda/block_quant.cu,
// kernels/block/cuda/block_gemm.cu; docs/block_formats.md):
//   the CUDA quantizer element- and scale-exact against the model (oracle/block/block_format.hpp) on every format and
//   rule, both axes, every block shape class: the maximum at every position, maxima on and beside each rule's
//   scale boundaries, subnormal elements, saturating blocks, NaN and Inf present, zero blocks, short blocks;
//   the blocksum GEMMs bit for bit against their CPU models (exact block sums on fp16 tensor cores), tails in
//   every dimension; every block-scaled CUDA kernel passes the block-scaled suite with a gate that is not vacuous.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "generators/generate.hpp"
#include "base/codes.hpp"
#include "kernels/block/block_scaled.hpp"
#include "kernels/device/device_api.hpp"
#include "kernels/block/device_block_quant.hpp"
#include "base/philox.hpp"
#include "suites/run/suite.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;

namespace {

/// A rows x cols fp32 array whose blocks (of B along `axis`) cycle through the shape classes; amax exponents
/// spread over [-40, 40] so scales differ from block to block.
std::vector<float> shaped(const BlockFormat& f, std::int64_t rows, std::int64_t cols, int axis, int B, std::uint64_t seed) {
  std::vector<float> x(static_cast<std::size_t>(rows * cols));
  const std::int64_t lines = axis == 1 ? rows : cols, len = axis == 1 ? cols : rows, nb = (len + B - 1) / B;
  const double M = f.max_elem();
  const int emax = f.emax_elem(), p = f.elem_precision();
  for (std::int64_t l = 0; l < lines; ++l)
    for (std::int64_t b = 0; b < nb; ++b) {
      const std::int64_t id = l * nb + b, n = std::min<std::int64_t>(B, len - b * B);
      auto at = [&](std::int64_t q) -> float& { return x[static_cast<std::size_t>(axis == 1 ? l * cols + b * B + q : (b * B + q) * cols + l)]; };
      const auto r0 = philox_4x32(seed, static_cast<std::uint64_t>(id), 0);
      const int e = static_cast<int>(r0[0] % 81) - 40;
      for (std::int64_t q = 0; q < n; ++q) {  // background: random significands, 8 binades below 2^e, random signs
        const auto r = philox_4x32(seed, static_cast<std::uint64_t>(id), static_cast<std::uint64_t>(q) + 1);
        at(q) = std::ldexp(1.0f + static_cast<float>(r[1] >> 9) * 0x1p-23f, e - 1 - static_cast<int>(r[0] % 8)) * ((r[2] & 1) ? -1.0f : 1.0f);
      }
      const std::int64_t P = id % n;  // where the block maximum goes: every position over the blocks
      const auto cls = static_cast<int>(id % 10);
      float mx;
      switch (cls) {
        case 0: mx = std::ldexp(1.0f, e); break;                                                       // power of two: floor/ceil boundary
        case 1: mx = std::nextafter(std::ldexp(1.0f, e), 0.0f); break;                                 // just below it
        case 2: mx = static_cast<float>(std::ldexp(M, e - emax)); break;                                // rceil boundary: max_elem 2^t
        case 3: mx = std::nextafter(static_cast<float>(std::ldexp(M, e - emax)), INFINITY); break;
        case 4: mx = static_cast<float>(std::ldexp(2.0 - std::ldexp(1.0, -p), e)); break;              // even's boundary
        case 5: mx = std::ldexp(2.0f - 0x1p-23f, e); break;                                             // top of a binade: floor saturates
        case 6:                                                                                         // subnormal elements under the scale
          mx = std::ldexp(1.5f, e);
          for (std::int64_t q = 0; q < n; ++q)
            if (q != P) at(q) = std::ldexp(at(q), -12 - static_cast<int>(q % 4));
          break;
        case 7: mx = 0; for (std::int64_t q = 0; q < n; ++q) at(q) = (q & 1) ? -0.0f : 0.0f; break;  // zero block
        case 8: mx = std::ldexp(1.25f, e); at((P + 1) % n) = std::numeric_limits<float>::quiet_NaN(); break;
        default: mx = std::ldexp(1.25f, e); at((P + 1) % n) = (id & 1) ? -INFINITY : INFINITY; break;
      }
      if (cls != 7) at(P) = (id & 2) ? -mx : mx;
    }
  return x;
}

}  // namespace

TEST_CASE("CUDA block quantizer: element- and scale-exact against the model, every format, rule, axis and block class") {
  const std::uint64_t seed = test::seed();
  std::int64_t compared = 0;
  for (const BlockFormat* f : all_block_formats())
    for (ScaleRule rule : kAllScaleRules) {
      if (!rule_valid(*f, rule)) continue;
      for (int axis : {1, 0}) {
        const int B = f->block;
        // 7 block lengths of B plus a short one of B / 2 + 3 along the blocking axis.
        const std::int64_t len = 7 * B + B / 2 + 3, other = 37;
        const std::int64_t rows = axis == 1 ? other : len, cols = axis == 1 ? len : other;
        const std::vector<float> x = shaped(*f, rows, cols, axis, B, seed);
        BlockQuantOptions o;
        o.rule = rule;
        o.axis = axis;
        CAPTURE(f->tag);
        CAPTURE(to_string(rule));
        CAPTURE(axis);
        const DeviceQuantized d = quantize_on_device(*f, o, x.data(), rows, cols);
        const std::vector<double> xd(x.begin(), x.end());
        const BlockTensor t = quantize_tensor(*f, o, xd.data(), rows, cols);
        CHECK(d.tensor_scale == t.tensor_scale);
        REQUIRE(d.scales.size() == t.scales.size());
        std::int64_t bad_scales = 0, bad_codes = 0, first = -1;
        for (std::size_t i = 0; i < t.scales.size(); ++i) bad_scales += d.scales[i] != t.scales[i];
        for (std::size_t i = 0; i < t.codes.size(); ++i)
          if (d.codes[i] != t.codes[i] && bad_codes++ == 0) first = static_cast<std::int64_t>(i);
        if (first >= 0)
          MESSAGE("first element mismatch at " << first << ": x = " << fmt::format("{:a}", x[static_cast<std::size_t>(first)]) << ", device 0x"
                                               << fmt::format("{:02x}", d.codes[static_cast<std::size_t>(first)]) << ", model 0x"
                                               << fmt::format("{:02x}", t.codes[static_cast<std::size_t>(first)]));
        CHECK(bad_scales == 0);
        CHECK(bad_codes == 0);
        compared += static_cast<std::int64_t>(t.codes.size() + t.scales.size());
      }
    }
  MESSAGE("CUDA quantizer: " << compared << " codes and scales compared with the model");
}

TEST_CASE("CUDA blocksum GEMMs: bit for bit the CPU model (exact block sums on fp16 tensor cores; mma.sync and wgmma)") {
  std::string why;
  auto api = make_cuda_api(&why);
  REQUIRE_MESSAGE(api, why);
  struct Shape {
    std::int64_t m, n, k;
  };
  // Partial tiles, K tails inside a block and inside a stage (k = 100, 5), K and N not multiples of 8 (the wgmma
  // kernels' padded 16-byte rows), and K = 1000 (16 stages of 64: the wgmma ring of 6 wraps, scales staged per slot).
  for (const char* family : {"_mma_sm80", "_wgmma_sm90"})
    for (const BlockFormat* f : {&mxfp6_e2m3, &mxfp6_e3m2, &mxfp4, &mxint8, &nvfp4})
      for (const Shape s : {Shape{128, 128, 256}, Shape{200, 72, 100}, Shape{1, 3, 5}, Shape{130, 260, 512}, Shape{300, 203, 1000}}) {
        const std::string name = "gemm_" + std::string(f->tag) + "_" + std::string(to_string(f->default_rule)) + "_blocksum_f32acc" + family;
        auto k = make_gemm_kernel(name);
        REQUIRE_MESSAGE(k, name);
        if (!k->can_implement(s.m, s.n, s.k).ok) {
          MESSAGE("skipped: " << name << ": " << k->can_implement(s.m, s.n, s.k).reason);
          continue;
        }
        // Per-K-block shifts independent in A and B: scales differ across blocks, rows and columns.
        const Problem p = generate(fmt::format("span:m={},n={},k={},s=6,block={},shift=12,seed=9,source=f32", s.m, s.n, s.k,
                                               s.k % f->block == 0 ? f->block : 0));
        std::vector<float> a32(p.a.data.begin(), p.a.data.end()), b32(p.b.data.begin(), p.b.data.end());
        void* da = api->alloc(a32.size() * 4 + 16);
        void* db = api->alloc(b32.size() * 4 + 16);
        void* dc = api->alloc(static_cast<std::size_t>(s.m * s.n) * 4 + 16);
        api->to_device(da, a32.data(), a32.size() * 4);
        api->to_device(db, b32.data(), b32.size() * 4);
        GemmOperands ops;
        ops.m = s.m, ops.n = s.n, ops.k = s.k, ops.a = da, ops.lda = s.k, ops.b = db, ops.ldb = s.n, ops.c = dc, ops.ldc = s.n;
        ops.stream = api->stream();
        k->run(ops);
        api->synchronize(600000);
        std::vector<float> got(static_cast<std::size_t>(s.m * s.n));
        api->to_host(got.data(), dc, got.size() * 4);
        api->free(da), api->free(db), api->free(dc);
        auto model = make_block_gemm_model(*f, f->default_rule, BlockGemmPath::BlockSum);
        DecodedOperands d;
        d.m = s.m, d.n = s.n, d.k = s.k, d.a = p.a.data, d.b = p.b.data;
        const std::vector<std::uint64_t> want = model->compute(d);
        std::int64_t diff = 0, first = -1;
        for (std::size_t i = 0; i < got.size(); ++i)
          if (std::bit_cast<std::uint32_t>(got[i]) != want[i] && diff++ == 0) first = static_cast<std::int64_t>(i);
        CAPTURE(name);
        CAPTURE(p.spec);
        if (first >= 0)
          MESSAGE("first difference at (" << first / s.n << ", " << first % s.n << "): device " << fmt::format("{:a}", got[static_cast<std::size_t>(first)])
                                          << ", model " << fmt::format("{:a}", std::bit_cast<float>(static_cast<std::uint32_t>(want[static_cast<std::size_t>(first)]))));
        CHECK(diff == 0);
      }
}

TEST_CASE("CUDA block-scaled GEMMs: every registered kernel passes the block-scaled suite") {
  const SuiteInfo* suite = find_suite("block-scaled");
  REQUIRE(suite);
  for (const std::string& name : kernel_names()) {
    const KernelInfo* info = find_kernel_info(name);
    if (!info || info->backend != Backend::Cuda) continue;
    auto k = make_gemm_kernel(name);
    if (!k->traits().block.active()) continue;
    if (const Support sup = k->can_implement(64, 64, 64); !sup.ok) {  // the wgmma ones (sm_90a only) elsewhere
      MESSAGE("skipped: " << name << ": " << sup.reason);
      continue;
    }
    SuiteRunOptions o;
    const RunResult r = run_suite(*suite, {name}, o);
    for (const auto& c : r.cases) {
      CAPTURE(name);
      CAPTURE(c.case_id);
      CAPTURE(c.reason);
      MESSAGE(fmt::format("{} {}: {} gate fraction {:.3g}, max abs {:.3g}, {:.3f} ms", name, c.case_id, to_string(c.status), c.gate_fraction,
                          c.metrics.max_abs, c.time_ms_median));
      CHECK(c.status == CaseStatus::Pass);
      CHECK(c.bound.rtol < 1e-3);
    }
  }
}
