// cli/main.cpp — the fpcert command (everything else is the fpcert_cli library: cli/commands.hpp).
#include <malloc.h>

#include "cli/commands.hpp"

int main(int argc, char** argv) {
#ifdef __GLIBC__
  // Large blocks from the heap, and freed ones kept there (up to 1 GiB free at its top): a certify run allocates and
  // frees vectors of 16M elements (codes, error fractions, ULP distances, emulations) for every kernel and mutant, and
  // glibc would otherwise map each afresh and unmap it on free, so that every reuse faults and zeroes its pages again
  // (measured: 56 s -> 32 s for three kernels on a 4096 x 4096 case, the system time 23 s -> 4 s; docs/suites.md).
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
  return fpcert::cli::run(argc, argv);
}
