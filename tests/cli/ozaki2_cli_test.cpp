// tests/cli/ozaki2_cli_test.cpp — `fpcert certify` on the Ozaki-II FP64 emulation (docs/fp64.md, "The built-in Ozaki-II
// emulation"): the 20-moduli model certified on an fp64 case, the short-moduli mutant (10 moduli declared as 20) refused
// with exit code 1; lines wider than the span where the scheme meets fp64's envelope graded by the scheme's own claims.
#include <doctest/doctest.h>

#include <string>

#include "tests/support/cli_in_process.hpp"

using namespace fpcert;

TEST_CASE("fpcert certify: model_gemm_f64_ozaki2 certified, its short-moduli mutant refused") {
  auto certify = [](const char* kernel, const char* case_id) {
    return test::run_cli({"certify", "--kernel", kernel, "--suite", "certify", "--case", case_id, "--no-mutation"});
  };
  // uniform: 53-bit values in [-1, 1), K = 512: 20 moduli give alpha = 72 bits per operand (correctly rounded results);
  // 10 moduli give 34 (errors ~2^-34 relative, past fp64's envelope gamma_512(2^-53) ~ 2^-44).
  const test::CliRun good = certify("model_gemm_f64_ozaki2", "uniform");
  INFO(good.out);
  CHECK(good.code == 0);
  CHECK(good.out.find("CERTIFIED") != std::string::npos);
  CHECK(good.out.find("correct bits min 53") != std::string::npos);
  const test::CliRun weak = certify("model_gemm_f64_ozaki2_short", "uniform");
  INFO(weak.out);
  CHECK(weak.code == 1);
  CHECK(weak.out.find("FAILED") != std::string::npos);
  CHECK(weak.out.find("envelope exceeded") != std::string::npos);
  // f64_exp_wide: exponents in [-490, 490] within every line, far past the 22 binades where the scheme meets fp64's
  // envelope: graded by what the scheme claims (its bitwise emulation and its own bound), which the model meets while
  // the small entries of a line lose all their bits to its scaling; the short mutant is refused there too.
  const test::CliRun wide = certify("model_gemm_f64_ozaki2", "f64_exp_wide");
  INFO(wide.out);
  CHECK(wide.code == 0);
  CHECK(wide.out.find("f64_exp_wide             model_gemm_f64_ozaki2        pass") != std::string::npos);
  CHECK(wide.out.find("bitwise (correct bits min 0,") != std::string::npos);
  const test::CliRun wide_weak = certify("model_gemm_f64_ozaki2_short", "f64_exp_wide");
  INFO(wide_weak.out);
  CHECK(wide_weak.code == 1);
  CHECK(wide_weak.out.find("FAILED") != std::string::npos);
}
