// tests/fuzz/fuzz_npy.cpp — libFuzzer target: the .npy reader (base/npy.hpp) on arbitrary bytes.
// They either parse or throw InputError; an array that parses has exactly the bytes its shape needs,
// and every element can be read.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "base/error.hpp"
#include "base/npy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fpcert;
  NpyArray a;
  try {
    a = parse_npy(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.npy");
  } catch (const InputError&) {
    return 0;
  }
  if (a.shape.empty() || a.shape.size() > 2) std::abort();
  const std::int64_t n = a.size();
  if (n < 0) std::abort();
  const std::size_t item = a.size() == 0 ? 0 : a.bytes.size() / static_cast<std::size_t>(n);
  if (n > 0 && item * static_cast<std::size_t>(n) != a.bytes.size()) std::abort();
  double sum = 0;
  for (std::int64_t i = 0; i < n; ++i) sum += a.value(i);  // every element readable (ASan checks the bounds)
  (void)sum;
  return 0;
}
