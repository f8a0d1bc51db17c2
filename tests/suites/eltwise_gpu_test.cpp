// tests/suites/eltwise_gpu_test.cpp — the elementwise device sweep (kernels/elementwise/cuda/eltwise_cuda.cu) against
// the host check of the same device's results: for every 16-bit CUDA function, all 65536 inputs through the sweep
// (reference, comparison and histogram on the GPU) and through run() with the host reference (MPFR where the fast path
// cannot decide) must give the same histogram, count beyond the claim, largest error and counterexamples; for the fp32
// functions the same on chunks of 2^24 codes (around 1, the overflow threshold, the subnormal results), and the sweep's
// listed results must equal run()'s on those inputs. Then one full 2^32 sweep of expf, timed; the -use_fast_math twins'
// sweep (compiled with fast math, DAZ/FTZ declared) against the host check; the binary CUDA functions on the CI suite's
// special pairs and sample (docs/elementwise.md, "Binary functions"). Without a device: skipped.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>

#include "base/codes.hpp"
#include "kernels/elementwise/eltwise_kernel.hpp"
#include "suites/ops/elementwise/eltwise_check.hpp"
#include "suites/ops/elementwise/eltwise_operation.hpp"
#include "suites/run/device_apis.hpp"
#include "suites/run/suite.hpp"

using namespace fpcert;

namespace {

std::vector<std::string> cuda_eltwise(bool wide) {
  std::vector<std::string> out;
  for (const auto& n : kernel_names(false, Operation::Elementwise)) {
    auto k = make_eltwise_kernel(n);
    // erf, erfc, the trigonometric functions and the activations have no device reference (MPFR only): no sweep to
    // compare; the CI suite checks them.
    if (!math::has_device_ref(k->eltwise_traits().fn)) continue;
    if (n.rfind("cuda_fastmath_", 0) == 0) continue;  // the -use_fast_math twins: their own test case below
    if (k->backend() == Backend::Cuda && (k->eltwise_traits().in->container_bits == 32) == wide) out.push_back(n);
  }
  return out;
}

/// run() on codes [first, first + n) through plain device buffers; the results as codes.
std::vector<std::uint32_t> run_range(ElementwiseKernel& k, DeviceApi& api, std::uint64_t first, std::uint64_t n) {
  const EltwiseTraits& t = k.eltwise_traits();
  const int ib = container_bytes(*t.in), ob = container_bytes(*t.out);
  std::vector<std::uint8_t> x(n * static_cast<std::size_t>(ib)), y(n * static_cast<std::size_t>(ob));
  for (std::uint64_t i = 0; i < n; ++i) store_code(x.data(), static_cast<std::int64_t>(i), ib, first + i);
  void* dx = api.alloc(x.size());
  void* dy = api.alloc(y.size());
  api.to_device(dx, x.data(), x.size());
  k.run({static_cast<std::int64_t>(n), dx, dy, api.stream()});
  api.synchronize(60000);
  api.to_host(y.data(), dy, y.size());
  api.free(dx);
  api.free(dy);
  std::vector<std::uint32_t> out(n);
  for (std::uint64_t i = 0; i < n; ++i) out[i] = static_cast<std::uint32_t>(load_code(y.data(), static_cast<std::int64_t>(i), ob));
  return out;
}

/// The sweep of [first, first + n) folded as the runner folds it, and the host check of run()'s results.
void compare_chunk(ElementwiseKernel& k, DeviceApi& api, std::uint64_t first, std::uint64_t n) {
  const EltwiseTraits& t = k.eltwise_traits();
  const std::vector<std::uint32_t> got = run_range(k, api, first, n);
  EltwiseTally host;
  for (std::uint64_t i = 0; i < n; ++i) eltwise_check_one(t, static_cast<std::uint32_t>(first + i), got[i], host);
  const EltwiseSweepChunk c = k.sweep(first, n, 1 << 16);
  CHECK_FALSE(c.undecided_overflow);
  EltwiseTally dev;
  for (std::size_t i = 0; i < c.histogram.size(); ++i) dev.histogram[i] = c.histogram[i];
  dev.above = c.above;
  dev.unclaimed = c.unclaimed;
  for (const auto& it : c.undecided) eltwise_check_one(t, it.x, it.got, dev);
  std::uint64_t mismatched_listed = 0;
  for (const auto& it : c.listed) mismatched_listed += got[it.x - first] != it.got;
  INFO(k.name() << " codes [" << first << ", +" << n << "): undecided on the GPU " << c.undecided.size() << ", kernel " << c.kernel_ms << " ms");
  CHECK(dev.histogram == host.histogram);
  CHECK(dev.above == host.above);
  CHECK(dev.unclaimed == host.unclaimed);
  CHECK(mismatched_listed == 0);
  CHECK(c.listed.size() == std::min<std::uint64_t>(c.above, 1 << 16));
  const std::uint64_t worst_ulps = c.worst >> 32;
  CHECK(worst_ulps == std::min<std::uint64_t>(host.has_worst ? host.worst.ulps : 0, 0x7fffffff));
  if (host.has_worst) CHECK(0xffffffffu - (c.worst & 0xffffffffu) == host.worst.x);
  std::printf("eltwise_gpu: %-18s [0x%08llx, +%llu): max %llu ulp, beyond claim %llu, GPU-undecided %zu, sweep %.3f ms\n", k.name().c_str(),
              static_cast<unsigned long long>(first), static_cast<unsigned long long>(n), static_cast<unsigned long long>(worst_ulps),
              static_cast<unsigned long long>(c.above), c.undecided.size(), c.kernel_ms);
}

}  // namespace

TEST_CASE("16-bit CUDA functions: the device sweep of all 65536 inputs equals the host check of run()'s results") {
  const auto names = cuda_eltwise(false);
  REQUIRE(names.size() >= 7);
  DeviceApis apis;
  for (const auto& n : names) {
    auto k = make_eltwise_kernel(n);
    std::string why;
    DeviceApi* api = apis.for_kernel(*k, why);
    REQUIRE(api != nullptr);
    REQUIRE(k->can_sweep());
    compare_chunk(*k, *api, 0, 65536);
  }
}

TEST_CASE("fp32 CUDA functions: the device sweep equals the host check on chunks of 2^24 codes") {
  DeviceApis apis;
  for (const auto& n : cuda_eltwise(true)) {
    auto k = make_eltwise_kernel(n);
    std::string why;
    DeviceApi* api = apis.for_kernel(*k, why);
    REQUIRE(api != nullptr);
    // [0.5, 2) and beyond (0x3f000000..), around the overflow threshold (0x42b00000 = 88), negative inputs whose results
    // are subnormal (0xc2b00000 = -88 upwards: exp(-88..-103)), tiny inputs (0x2e000000 = 2^-35: results near 1).
    for (std::uint64_t first : {0x3f000000ull, 0x42b00000ull, 0xc2b00000ull, 0x2e000000ull}) compare_chunk(*k, *api, first, 1u << 24);
  }
}

TEST_CASE("the runner: suite elementwise_full sweeps all 2^32 inputs of cuda_expf on the device (timed)") {
  const SuiteInfo* s = find_suite("elementwise_full");
  REQUIRE(s != nullptr);
  SuiteRunOptions opt;
  const auto t0 = std::chrono::steady_clock::now();
  const RunResult r = run_suite(*s, {"cuda_expf"}, opt);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  REQUIRE(r.cases.size() == 1);
  const CaseResult& c = r.cases.front();
  REQUIRE(c.elementwise);
  const ElementwiseResult& e = *c.elementwise;
  CHECK(e.sweep == "device");
  CHECK(e.inputs == (std::uint64_t{1} << 32));
  std::uint64_t total = 0;
  for (auto h : e.histogram) total += h;
  CHECK(total + e.undecided == (std::uint64_t{1} << 32));
  std::printf("eltwise_gpu: cuda_expf all 2^32: %s, max %llu ulp at %s, beyond claim %llu, MPFR %llu, kernels %.3f s, wall %.2f s\n",
              std::string(to_string(c.status)).c_str(), static_cast<unsigned long long>(e.max_ulps), e.worst.input_bits.c_str(),
              static_cast<unsigned long long>(e.above_claim), static_cast<unsigned long long>(e.mpfr_decided), e.seconds, wall);
}

TEST_CASE("-use_fast_math twins: the device sweep (compiled with fast math, DAZ/FTZ declared) equals the host check") {
  // Around 1 (0x3f000000: [0.5, ...)) and the subnormal inputs with the least normals (0x00000000 ..: DAZ reads them as 0;
  // the sweep's reference in the fast-math build decodes them from their bits (math::f32_value: the float to double
  // conversion there flushes), the host through eltwise_input). tanhf's twin declares no DAZ/FTZ (tanh.approx.f32 has no
  // .ftz form): its subnormal inputs are judged as they are, on both sides.
  DeviceApis apis;
  std::size_t twins = 0;
  for (const auto& n : kernel_names(false, Operation::Elementwise)) {
    if (n.rfind("cuda_fastmath_", 0) != 0) continue;
    auto k = make_eltwise_kernel(n);
    if (!math::has_device_ref(k->eltwise_traits().fn)) continue;
    const bool flushes = k->eltwise_traits().fn != math::Fn::Tanh;
    CHECK(k->eltwise_traits().daz == flushes);
    CHECK(k->eltwise_traits().ftz == flushes);
    std::string why;
    DeviceApi* api = apis.for_kernel(*k, why);
    REQUIRE(api != nullptr);
    for (std::uint64_t first : {0x3f000000ull, 0x00000000ull, 0x80000000ull}) compare_chunk(*k, *api, first, 1u << 24);
    ++twins;
  }
  CHECK(twins >= 14);
}

TEST_CASE("binary CUDA functions (x / y, fdividef, __fdividef, __fdiv_rn, powf, atan2f, fmaxf, fminf; their fast-math twins) on the special pairs and the sample") {
  const SuiteInfo* s = find_suite("elementwise");
  REQUIRE(s != nullptr);
  SuiteRunOptions opt;
  const std::vector<std::string> ks = {"cuda_div_f32",           "cuda_fdividef",          "cuda___fdividef",        "cuda___fdiv_rn",
                                       "cuda_powf",              "cuda_atan2f",            "cuda_fmaxf",             "cuda_fminf",
                                       // the -use_fast_math twins (x / y and fdividef as __fdividef, DAZ/FTZ)
                                       "cuda_fastmath_div_f32",  "cuda_fastmath_fdividef", "cuda_fastmath___fdiv_rn", "cuda_fastmath_atan2f",
                                       "cuda_fastmath_fmaxf",    "cuda_fastmath_fminf"};
  const RunResult r = run_suite(*s, ks, opt);
  CHECK(r.cases.size() == 2 * ks.size());
  for (const auto& c : r.cases) {
    REQUIRE(c.elementwise);
    const ElementwiseResult& e = *c.elementwise;
    std::printf("eltwise_gpu: %-16s %-13s %s: max %llu ulp at %s, beyond claim %llu, unclaimed %llu%s%s\n", c.kernel.c_str(), c.case_id.c_str(),
                std::string(to_string(c.status)).c_str(), static_cast<unsigned long long>(e.max_ulps), e.worst.input_bits.c_str(),
                static_cast<unsigned long long>(e.above_claim), static_cast<unsigned long long>(e.unclaimed),
                e.listed.empty() ? "" : "; first: ", e.listed.empty() ? "" : (e.listed.front().input_bits + " -> " + e.listed.front().got_bits +
                                                                              ", correctly rounded " + e.listed.front().ref_bits).c_str());
    INFO(c.kernel << " " << c.case_id << ": " << c.reason);
    CHECK(c.status == CaseStatus::Pass);  // the declarations (docs/elementwise.md): a refusal here is a finding to record there
  }
}
