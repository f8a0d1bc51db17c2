// tests/suites/guarded_input_test.cpp — guarded, padded input operands: the kernel sees the codes at
// the padded leading dimension (and one element off alignment when asked), and every write into an
// element, the row padding or the guards is found and located.
#include <doctest/doctest.h>

#include <cstring>

#include "suites/run/guarded_input.hpp"

using namespace fpcert;

TEST_CASE("padded_ld: at least 8 elements more, a whole number of 16-byte units") {
  CHECK(padded_ld(512, 4) == 520);   // 8 fp32 = 32 bytes
  CHECK(padded_ld(512, 2) == 520);   // 8 fp16 = 16 bytes
  CHECK(padded_ld(512, 1) == 528);   // 16 fp8 = 16 bytes
  CHECK(padded_ld(17, 8) == 25);
}

TEST_CASE("a guarded input: codes at ld, misalignment, and writes into elements, padding and guards reported") {
  auto api = make_host_api();
  const std::int64_t rows = 3, cols = 5, ld = padded_ld(cols, 2);
  std::vector<std::uint8_t> packed(rows * cols * 2);
  for (std::size_t i = 0; i < packed.size(); ++i) packed[i] = static_cast<std::uint8_t>(i + 1);
  for (bool misalign : {false, true}) {
    GuardedInput in(*api, packed, rows, cols, ld, 2, 64, misalign);
    CHECK((reinterpret_cast<std::uintptr_t>(in.elements()) % 4 == 0) == !misalign);
    auto* e = static_cast<std::uint8_t*>(const_cast<void*>(in.elements()));
    CHECK(std::memcmp(e + ld * 2, packed.data() + cols * 2, cols * 2) == 0);  // row 1 starts at ld
    InputReport clean = in.check();
    CHECK(clean.modified == 0);
    CHECK(clean.guard_changed == 0);
    e[(2 * ld + 3) * 2 + 1] ^= 1;  // element (2, 3), its high byte
    e[(1 * ld + cols) * 2] ^= 1;   // row 1's first padding element
    const InputReport r = in.check();
    CHECK(r.modified == 1);
    CHECK(r.first_modified == 2 * cols + 3);
    CHECK(r.guard_changed == 1);
    CHECK(r.first_guard == "padding of row 1 (column 5, ld 13)");
    e[-1] ^= 1;  // the last guard byte before the elements
    CHECK(in.check().guard_changed == 2);
  }
}
