// tests/support/main.cpp — doctest main for every test executable; prints the seed random tests use.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>

#include "tests/support/test_seed.hpp"

int main(int argc, char** argv) {
  bool listing = false;
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--list", 6) == 0 || std::strncmp(argv[i], "-ltc", 4) == 0) listing = true;
  if (!listing) std::fprintf(stderr, "fpcert tests: FPCERT_TEST_SEED=%llu (set it to reproduce)\n",
                             static_cast<unsigned long long>(fpcert::test::seed()));
  doctest::Context ctx(argc, argv);
  return ctx.run();
}
