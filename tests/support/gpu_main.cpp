// tests/support/gpu_main.cpp — doctest main for GPU tests: exit 77 (reported by ctest as skipped, never as
// passed) when this build has no CUDA or the machine has no device.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>

#include "kernels/device/device_api.hpp"
#include "tests/support/test_seed.hpp"

int main(int argc, char** argv) {
  bool listing = false;
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--list", 6) == 0 || std::strncmp(argv[i], "-ltc", 4) == 0) listing = true;
  if (!listing) {
    std::string why;
    if (!fpcert::make_cuda_api(&why)) {
      std::fprintf(stderr, "GPU test skipped: %s\n", why.c_str());
      return 77;
    }
    std::fprintf(stderr, "fpcert GPU tests: FPCERT_TEST_SEED=%llu\n", static_cast<unsigned long long>(fpcert::test::seed()));
  }
  doctest::Context ctx(argc, argv);
  return ctx.run();
}
