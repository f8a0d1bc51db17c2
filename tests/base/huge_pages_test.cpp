// tests/base/huge_pages_test.cpp — ResultAllocator and resize_unset (base/huge_pages.hpp): a vector with the allocator is
// value-initialised as std::vector's everywhere but inside resize_unset, which leaves the elements as allocated, touches
// every page and leaves the next resize value-initialising again.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "base/huge_pages.hpp"

using namespace fpcert;

namespace {

struct Rec {  // an implicit-lifetime aggregate with default member initialisers, as oracle/refvalue.hpp's RefValue
  double hi = 0.0;
  double lo = 0.0;
  std::int8_t tail = 0;
};

}  // namespace

TEST_CASE("ResultAllocator: resize and vector(n) value-initialise outside resize_unset, even over reused storage") {
  std::vector<Rec, ResultAllocator<Rec>> v(1000);
  for (const Rec& r : v) REQUIRE((r.hi == 0 && r.lo == 0 && r.tail == 0));
  // Fill the storage with a pattern, drop the elements (the capacity stays), grow again: every new element is Rec{}.
  std::memset(static_cast<void*>(v.data()), 0x5A, v.size() * sizeof(Rec));
  v.clear();
  REQUIRE(v.capacity() >= 1000);
  v.resize(1000);
  int nonzero = 0;
  for (const Rec& r : v) nonzero += !(r.hi == 0 && r.lo == 0 && r.tail == 0);
  CHECK(nonzero == 0);
  // Copies and values given explicitly are std::allocator's.
  std::vector<Rec, ResultAllocator<Rec>> w(3, Rec{1.5, -2.0, 1});
  CHECK(w[2].hi == 1.5);
  CHECK(w[2].tail == 1);
  const auto copy = w;
  CHECK(copy[0].lo == -2.0);
}

TEST_CASE("resize_unset: the size asked, every page writable, the elements left as allocated, then value-initialising again") {
  for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{4097}, std::size_t{3} << 20}) {
    CAPTURE(n);
    std::vector<double, ResultAllocator<double>> v(17, 4.0);
    resize_unset(v, n, 3);
    REQUIRE(v.size() == n);
    for (std::size_t x = 0; x < n; ++x) v[x] = static_cast<double>(x);  // the caller writes every element
    bool same = true;
    for (std::size_t x = 0; x < n; ++x) same = same && v[x] == static_cast<double>(x);
    CHECK(same);
    // The flag is this thread's and is cleared: a later resize of another vector value-initialises.
    std::vector<double, ResultAllocator<double>> u;
    u.reserve(64);
    std::memset(static_cast<void*>(u.data()), 0x7F, 64 * sizeof(double));
    u.resize(64);
    int nonzero = 0;
    for (const double x : u) nonzero += x != 0.0;
    CHECK(nonzero == 0);
  }
}
