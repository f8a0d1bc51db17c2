// tests/suites/reveal_gpu_test.cpp — order revelation on the device (docs/reveal.md): the CUDA SIMT kernel
// whose order is a sequential FMA chain gives back exactly that tree; the mma.sync kernel gives a chain
// of fused nodes whose width agrees with the published block model, and replays bit for bit; cuBLAS
// fp32 pedantic is revealed, verified and replayed bit for bit on every element. The scatter of probe
// values (DeviceApi::scatter) is checked against a copy, and DeviceApi::copy / equal (the runner's on-device
// comparison of a later run with the checked one) against the host's memcmp at aligned and unaligned addresses. cuBLAS fp32 pedantic is certified bitwise with its
// revealed order (certify --order revealed).
#include <doctest/doctest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "base/codes.hpp"
#include "kernels/device/device_api.hpp"
#include "generators/generate.hpp"
#include "oracle/gemm_ref.hpp"
#include "suites/reveal/reveal.hpp"
#include "suites/reveal/revealed_order.hpp"
#include "tests/support/run_case.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;

namespace {

RevealResult reveal_on_device(const std::string& kernel, std::int64_t m, std::int64_t n, std::int64_t k, bool replay) {
  auto api = make_cuda_api();
  REQUIRE(api);
  auto kn = make_gemm_kernel(kernel);
  REQUIRE(kn);
  RevealOptions o;
  o.m = m;
  o.n = n;
  o.k = k;
  o.seed = test::seed();
  o.replay = replay;
  o.replay_samples = static_cast<std::uint64_t>(m * n);
  return reveal_order(*kn, *api, o);
}

}  // namespace

TEST_CASE("reveal gpu: DeviceApi::scatter writes the codes where asked and nothing else") {
  auto api = make_cuda_api();
  REQUIRE(api);
  for (int bytes : {1, 2, 4, 8}) {
    const std::size_t n = 1000;
    std::vector<std::uint8_t> host(n * static_cast<std::size_t>(bytes), 0xAB), back(host.size());
    void* d = api->alloc(host.size());
    api->to_device(d, host.data(), host.size());
    const std::vector<std::int64_t> idx{0, 7, 999, 500};
    const std::vector<std::uint64_t> codes{0x0102030405060708ULL, 0x11, 0xFFFF, 0x3C00};
    api->scatter(d, bytes, idx.data(), codes.data(), idx.size());
    api->to_host(back.data(), d, back.size());
    api->free(d);
    for (std::size_t i = 0; i < idx.size(); ++i) store_code(host.data(), idx[i], bytes, codes[i]);
    CAPTURE(bytes);
    CHECK(back == host);
  }
}

TEST_CASE("reveal gpu: DeviceApi::copy and equal agree with memcmp, one differing byte anywhere, aligned or not") {
  auto api = make_cuda_api();
  REQUIRE(api);
  const std::size_t n = (std::size_t{1} << 20) + 37;
  std::vector<std::uint8_t> host(n);
  std::uint64_t s = 0x9E3779B97F4A7C15ULL;
  for (auto& x : host) x = static_cast<std::uint8_t>((s = s * 6364136223846793005ULL + 1442695040888963407ULL) >> 56);
  auto* a = static_cast<std::uint8_t*>(api->alloc(n + 16));
  auto* b = static_cast<std::uint8_t*>(api->alloc(n + 16));
  for (std::size_t off : {std::size_t{0}, std::size_t{1}, std::size_t{7}}) {  // 16-byte words, or bytes where unaligned
    for (std::size_t len : {std::size_t{0}, std::size_t{1}, std::size_t{15}, std::size_t{16}, std::size_t{17}, std::size_t{4099}, n}) {
      CAPTURE(off);
      CAPTURE(len);
      api->to_device(a + off, host.data(), len);
      api->copy(b + off, a + off, len);
      std::vector<std::uint8_t> back(len);
      api->to_host(back.data(), b + off, len);
      CHECK(std::memcmp(back.data(), host.data(), len) == 0);
      CHECK(api->equal(a + off, b + off, len));
      for (std::size_t at : {std::size_t{0}, len / 2, len - 1}) {
        if (len == 0) break;
        const std::uint8_t flipped = static_cast<std::uint8_t>(host[at] ^ 0x10);
        api->to_device(b + off + at, &flipped, 1);
        CHECK_FALSE(api->equal(a + off, b + off, len));
        api->to_device(b + off + at, &host[at], 1);
        CHECK(api->equal(a + off, b + off, len));
      }
    }
  }
  api->free(a);
  api->free(b);
}

TEST_CASE("reveal gpu: the SIMT fp32 kernel is a sequential FMA chain, replayed bit for bit") {
  const RevealResult r = reveal_on_device("gemm_f32_tiled", 64, 64, 300, true);
  CAPTURE(r.message);
  REQUIRE(r.status == "revealed");
  REQUIRE(r.classes.size() == 1);
  CHECK(same_order(r.classes.front().tree, sequential_tree(300)));
  CHECK(r.classes.front().replay.passed());
  CHECK(r.passed());
}

TEST_CASE("reveal gpu: the mma.sync fp16 kernel is a chain of fused nodes of the card's width") {
  const RevealResult r = reveal_on_device("gemm_f16_f32acc_mma_sm80", 64, 64, 256, true);
  CAPTURE(r.message);
  REQUIRE(r.status == "revealed");
  const RevealClass& c = r.classes.front();
  REQUIRE(c.revealed);
  MESSAGE(c.headline, " | ", c.card_check, " | replay: ", c.replay.assumed);
  CHECK(c.fused_width > 2);
  CHECK(same_order(c.tree, fused_chain_tree(256, c.fused_width)));
  CHECK(c.card_check.find("agrees") != std::string::npos);
  CHECK(c.replay.passed());
}

TEST_CASE("reveal gpu: cuBLAS fp32 pedantic is revealed, verified and replayed bit for bit") {
  const RevealResult r = reveal_on_device("cublas_gemm_f32_pedantic", 128, 128, 2048, true);
  CAPTURE(r.message);
  for (const auto& c : r.classes) MESSAGE(c.where, ": ", c.headline, " | replay ", c.replay.equal, "/", c.replay.compared, " ", c.replay.assumed);
  CHECK(r.status == "revealed");
  CHECK(r.deterministic);
  CHECK(r.launches < r.queries);
  CHECK(r.passed());
}

TEST_CASE("reveal gpu: cuBLAS fp32 pedantic certified in the bitwise tier with its revealed order") {
  auto api = make_cuda_api();
  REQUIRE(api);
  auto kn = make_gemm_kernel("cublas_gemm_f32_pedantic");
  REQUIRE(kn);
  OrderSourceOptions oo;
  oo.reveal_all = true;
  oo.seed = test::seed();
  const auto src = std::make_shared<OrderSource>(oo);
  RunOptions ro;
  ro.orders = src;
  for (const char* spec : {"uniform:m=256,n=256,k=1024,seed=3", "normal:m=256,n=256,k=1024,seed=4"}) {
    const Problem p = generate(spec);
    const GemmRef ref = gemm_reference(p.a.view(), p.b.view());
    const CaseResult r = test::run_graded(*kn, p, ref, *api, ro);
    CAPTURE(spec);
    CAPTURE(r.reason);
    REQUIRE(r.order.has_value());
    CAPTURE(r.order->fallback);
    CAPTURE(r.order->tree);
    CHECK(r.order->used);
    CHECK(r.tier == Tier::Bitwise);
    CHECK(r.status == CaseStatus::Pass);
  }
}
