// tests/kernels/registry_test.cpp — one registry of kernels with two operations: GEMM kernels and
// conversion kernels are found by name, each only as its own kind; fpcert's conversion model and the
// device table's entries are conversion kernels like any other.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "kernels/convert/device_convert.hpp"
#include "kernels/convert/model_convert.hpp"
#include "kernels/kernel.hpp"
#include "oracle/round.hpp"
#include "tests/support/host_producer.hpp"

using namespace fpcert;

namespace {
bool has(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }
}  // namespace

TEST_CASE("one registry, two operations: a name makes a kernel of its own kind only") {
  const auto gemm = kernel_names(false, Operation::Gemm);
  const auto conv = kernel_names(false, Operation::Conversion);
  REQUIRE(has(gemm, "model_gemm_f32"));
  REQUIRE(has(conv, "model_f32_to_f16_rn"));
  for (const auto& n : conv) CHECK_FALSE(has(gemm, n));
  CHECK(make_gemm_kernel("model_gemm_f32") != nullptr);
  CHECK(make_conversion_kernel("model_gemm_f32") == nullptr);
  CHECK(make_gemm_kernel("model_f32_to_f16_rn") == nullptr);
  const auto k = make_kernel("model_f32_to_f16_rn");
  REQUIRE(k);
  CHECK(k->operation() == Operation::Conversion);
  CHECK(make_kernel("model_gemm_f32")->operation() == Operation::Gemm);
  // Mutants stay out of the listing unless asked, and the conversion list has no mutant either.
  CHECK_FALSE(has(gemm, "mutant_k_short"));
  CHECK(has(kernel_names(true, Operation::Gemm), "mutant_k_short"));
}

TEST_CASE("fpcert's conversion model as a kernel equals the scalar oracle on every bf16 and e4m3 code") {
  // The kernel runs the vectorised fast path (oracle/convert_batch); the reference here is the scalar
  // convert() of oracle/round.hpp, code by code, under rounding modes that round differently.
  for (const Rounding rd : {Rounding::NearestEven, Rounding::TowardZero, Rounding::Up}) {
    for (const auto& [src, dst] : {std::pair{&bf16, &f16}, std::pair{&e4m3, &e2m1}}) {
      const Rounder r{rd, default_saturation(*dst), NanPayload::Preserve};
      auto k = make_model_conversion_kernel(*src, *dst, r);
      const std::uint64_t n = src->code_count();
      std::vector<std::uint8_t> out(n * static_cast<std::size_t>(container_bytes(*dst)));
      k->run(ConvertOperands{0, static_cast<std::int64_t>(n), nullptr, out.data(), nullptr});
      std::uint64_t wrong = 0, rounded = 0;
      for (std::uint64_t c = 0; c < n; ++c) {
        const Rounded want = convert(*src, c, *dst, r);
        std::uint64_t got = 0;
        std::memcpy(&got, out.data() + c * static_cast<std::uint64_t>(container_bytes(*dst)), static_cast<std::size_t>(container_bytes(*dst)));
        wrong += from_container(*dst, got) != want.code;
        rounded += (want.flags & kInexact) != 0;
      }
      CHECK(wrong == 0);
      CHECK(rounded > 0);  // the conversion rounds: the comparison can fail
    }
  }
}

TEST_CASE("a device table entry as a kernel: named as the entry, results from its producer") {
  const DeviceConversion& e = test::entry("f32_to_f16_rn");
  test::HostProducer p;
  p.result = test::model_of(e);
  DeviceTableKernel k(e, &p);
  CHECK(k.name() == "f32_to_f16_rn");
  CHECK(k.backend() == Backend::Cuda);
  CHECK(k.operation() == Operation::Conversion);
  CHECK(k.conversion().src == &f32);
  CHECK(k.conversion().dst == &f16);
  const std::uint64_t first = 0x3f800000;  // 1.0 and the 999 fp32 values above it: all round to fp16
  std::vector<std::uint16_t> out(1000);
  k.run(ConvertOperands{first, 1000, nullptr, out.data(), nullptr});
  for (std::uint64_t i = 0; i < out.size(); ++i) CHECK(out[i] == p.result(first + i));
  CHECK_FALSE(k.is_mutant());
  CHECK(DeviceTableKernel(test::entry("test_f32_to_f16_rn_flip"), &p).is_mutant());
}
