// tests/fuzz/fuzz_results.cpp — libFuzzer target: results files (results/results_json.hpp), a whole
// RunResult or JSON lines of cases (a killed run's partial file). Either they parse or throw
// InputError naming the file; what parses writes back to JSON and reads again.
#include <cstdint>
#include <string>
#include <string_view>

#include "base/error.hpp"
#include "results/results_json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fpcert;
  RunResult r;
  try {
    r = parse_results(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.json");
  } catch (const InputError&) {
    return 0;
  }
  // What was read is a results model: it writes as JSON, and that JSON reads back.
  const std::string again = to_json(r).dump();
  (void)parse_results(again, "fuzz-again.json");
  return 0;
}
