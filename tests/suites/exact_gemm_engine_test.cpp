// tests/suites/exact_gemm_engine_test.cpp — the exact reference's engine hook (oracle/gemm_engine.hpp) on the certify
// suite's inputs, every storage format's variant (fp32, tf32, bf16, f16, e4m3, e5m2, fp64 sources; specials, signed
// zeros, wide exponents that take the fallback): an engine summing in an adversarial order (permuted k, FMA at random,
// random chunks, per panel of a few rows) gives the built-in engine's and MPFR's hi, lo, tail and status bit for bit,
// abs_sum inside its documented bound. Random shapes and the negative control: tests/oracle/gemm_engine_test.cpp.
#include <doctest/doctest.h>

#include <string>

#include "base/error.hpp"
#include "generators/generate.hpp"
#include "kernels/device/exact_gemm_cuda.hpp"
#include "oracle/gemm_ref.hpp"
#include "tests/support/adversarial_gemm_engine.hpp"
#include "tests/support/certify_inputs.hpp"
#include "tests/support/same_reference.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;

TEST_CASE("exact GEMM engines: the certify suite's inputs, any summation order, bit for bit with Eigen and MPFR") {
  const auto specs = test::certify_gemm_specs(false);
  REQUIRE(specs.size() > 30);
  std::int64_t fallbacks = 0, nonfinite = 0, elements = 0;
  for (const std::string& spec : specs) {
    CAPTURE(spec);
    const Problem p = generate(spec);
    const GemmRef def = gemm_reference(p.a.view(), p.b.view());
    const GemmRef truth = gemm_reference_mpfr(p.a.view(), p.b.view());
    // Per panel of 2 rows: the path a GPU engine takes, cut small so that most problems take several panels.
    test::AdversarialGemmEngine adv(test::seed() + 47, false, static_cast<std::size_t>(def.info.gemms) * 2 * static_cast<std::size_t>(p.n) * 8);
    GemmRefOptions o;
    o.engine = &adv;
    const GemmRef x = gemm_reference(p.a.view(), p.b.view(), o);
    const test::RefDiff d1 = test::diff_values(x, def, false), d2 = test::diff_values(x, truth, true);
    const test::RefDiff d3 = test::diff_abs_sum(x, truth, p.a.view(), p.b.view());
    INFO("vs built-in: ", d1.first, " | vs MPFR: ", d2.first, " | ", d3.first);
    CHECK(d1.count == 0);
    CHECK(d2.count == 0);
    CHECK(d3.count == 0);
    fallbacks += def.fallbacks;
    nonfinite += def.info.nonfinite;
    elements += p.m * p.n;
  }
  MESSAGE(specs.size(), " certify inputs, ", elements, " elements, ", fallbacks, " fallback elements, ", nonfinite, " non-finite");
  CHECK(fallbacks > 0);  // the wide-exponent cases reach the per-element corrections
}

TEST_CASE("--reference: the GPU engine is made at its first use, problems below its size stay on the CPU, auto asks late") {
  // The answer of the device probe (a child, in fpcert) is given here: no device is touched by this test.
  const auto yes = [](std::string*) { return true; };
  const auto no = [](std::string* why) {
    *why = "no device in this test";
    return false;
  };
  CHECK_THROWS_WITH_AS(use_reference_engine("gpu", no), doctest::Contains("no device in this test"), DeviceError);
  CHECK_THROWS_AS(use_reference_engine("fast", yes), InputError);
  // gpu, said usable: the process default is the GPU engine, not yet made (no CUDA call so far: this machine may have
  // no device at all), and a problem below kGpuReferenceMinProducts goes to the built-in engine without making it.
  CHECK(use_reference_engine("gpu", yes) == std::string("gpu-cublas-dgemm"));
  REQUIRE(default_gemm_engine() != nullptr);
  CHECK_FALSE(default_gemm_engine()->takes(static_cast<double>(kGpuReferenceMinProducts) - 1));
  const Problem p = generate("uniform:m=64,n=64,k=64,seed=3");
  const GemmRef r = gemm_reference(p.a.view(), p.b.view());
  CHECK(std::string(r.info.engine) == "cpu-eigen");
  CHECK(r.info.sample_checked == 0);
  CHECK(test::diff_values(r, gemm_reference_mpfr(p.a.view(), p.b.view()), true).count == 0);
  // auto: nothing is asked up front (the probe is not called); the first problem of kGpuReferenceMinProducts makes the
  // engine where a device answers, else the CPU oracle takes it and every later one.
  const std::string chosen = use_reference_engine("auto", [](std::string*) -> bool {
    FAIL("auto asked for the device before a reference needed it");
    return false;
  });
  CHECK(chosen.rfind("auto: ", 0) == 0);
  REQUIRE(default_gemm_engine() != nullptr);
  CHECK_FALSE(default_gemm_engine()->takes(1e6));
  std::string why;
  const bool device = make_cuda_exact_gemm_engine(&why) != nullptr;
  CHECK(default_gemm_engine()->takes(static_cast<double>(kGpuReferenceMinProducts)) == device);
  CHECK(default_gemm_engine()->takes(1e12) == device);
  CHECK(use_reference_engine("cpu", yes) == std::string("cpu-eigen"));
  CHECK(default_gemm_engine() == nullptr);
}
