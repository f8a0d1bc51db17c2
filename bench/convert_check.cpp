// bench/convert_check.cpp — the CPU side of a device conversion sweep: check_conversion_chunk's
// sampled path (vectorised model, compare, outcome count, MPFR on disagreements and 1 in 4099) on
// one thread, against a subject equal to the model, in ns per pattern. Run with a pattern count
// (default 2^28) spread over the fp32 code space.
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <vector>

#include "oracle/convert/convert_batch.hpp"
#include "oracle/convert/convert_check.hpp"

using namespace fpcert;

int main(int argc, char** argv) {
  const std::uint64_t total = argc > 1 ? std::strtoull(argv[1], nullptr, 0) : (std::uint64_t{1} << 28);
  fmt::print("check_conversion_chunk (sampled path), one thread, {} fp32 patterns in chunks of 2^24 spread over the code space\n", total);
  fmt::print("{:<8} {:>12} {:>14} {:>14}\n", "to", "ns/pattern", "model+flags ns", "check/model");
  const std::uint64_t chunk = std::uint64_t{1} << 24;
  std::vector<std::uint32_t> codes(chunk);
  std::vector<std::uint8_t> flags(chunk);
  std::vector<std::uint8_t> subject(chunk * 2);  // codes in the destination's container width
  for (const Format* dst : {&f16, &bf16, &e4m3}) {
    ConvertCheckSpec spec;
    spec.src = &f32;
    spec.dst = dst;
    spec.rounder = Rounder::nearest(*dst);
    spec.mpfr_every = false;
    double t_check = 0, t_model = 0;
    ConvertCheckResult acc;
    const std::uint64_t stride = (std::uint64_t{1} << 32) / (total / chunk);
    for (std::uint64_t first = 0; first + chunk <= (std::uint64_t{1} << 32) && acc.patterns < total; first += stride) {
      auto t0 = std::chrono::steady_clock::now();
      convert_code_range(f32, *dst, spec.rounder, 0, first, codes.data(), flags.data(), chunk);  // as the check runs it
      t_model += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const int bytes = dst->container_bits / 8;
      for (std::uint64_t i = 0; i < chunk; ++i) {
        if (bytes == 1) subject[i] = static_cast<std::uint8_t>(codes[i]);
        else reinterpret_cast<std::uint16_t*>(subject.data())[i] = static_cast<std::uint16_t>(codes[i]);
      }
      t0 = std::chrono::steady_clock::now();
      check_conversion_chunk(spec, first, chunk, SubjectChunk{subject.data(), dst->container_bits / 8, false}, acc);
      t_check += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    const double n = static_cast<double>(acc.patterns);
    fmt::print("{:<8} {:>12.3f} {:>14.3f} {:>14.2f}   ({} mismatches)\n", dst->tag, t_check / n * 1e9, t_model / n * 1e9,
               t_check / t_model, acc.mismatches);
  }
  return 0;
}
