// tests/fuzz/fuzz_spec.cpp — libFuzzer target: generator spec strings (generators/spec.hpp). Any
// text either parses or throws InputError; a spec that parses has a canonical form that parses to
// itself (the round trip generate(canonical) relies on). Anything else (a crash, a sanitizer
// report, another exception, a broken round trip) is a finding.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "base/error.hpp"
#include "generators/generate.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string spec(reinterpret_cast<const char*>(data), size);
  std::string canonical;
  try {
    canonical = fpcert::canonical_spec(spec);
  } catch (const fpcert::InputError&) {
    return 0;
  }
  if (fpcert::canonical_spec(canonical) != canonical) std::abort();  // canonical specs are fixed points
  return 0;
}
