// tests/kernels/device/tensor_cores_test.cpp — the tensor-core support table at each threshold.
#include <doctest/doctest.h>

#include <string>

#include "kernels/device/tensor_cores.hpp"

using namespace fpcert;

namespace {
bool yes(const Format& f, int major, int minor) { return tensor_core_support(f, major, minor).rfind("yes", 0) == 0; }
}  // namespace

TEST_CASE("tensor cores: each format switches on at its threshold and not one step before") {
  struct Row {
    const Format* f;
    int major, minor;  // first compute capability that runs it
    int below_major, below_minor;
  };
  // f16 needs sm_75, bf16/tf32/f64 sm_80, e4m3/e5m2 sm_89 (the thresholds; PTX ISA targets).
  for (const Row& r : {Row{&f16, 7, 5, 7, 0}, Row{&bf16, 8, 0, 7, 5}, Row{&tf32, 8, 0, 7, 5}, Row{&f64, 8, 0, 7, 5},
                       Row{&e4m3, 8, 9, 8, 7}, Row{&e5m2, 8, 9, 8, 6}}) {
    CAPTURE(r.f->tag);
    CHECK(yes(*r.f, r.major, r.minor));
    CHECK_FALSE(yes(*r.f, r.below_major, r.below_minor));
    CHECK(yes(*r.f, 9, 0));   // H100/H200
    CHECK(yes(*r.f, 12, 0));  // later generations keep them
  }
  CHECK(tensor_core_support(e4m3, 8, 6) == "no (needs sm_89+)");
  CHECK(tensor_core_support(bf16, 8, 0) == "yes (sm_80+ mma)");
  CHECK(tensor_core_support(f64, 9, 0) == "yes (sm_80+ dmma)");
}

TEST_CASE("tensor cores: FP6 and FP4 only on the Blackwell family targets - fp32 never - ue8m0 only as scales") {
  for (const Format* f : {&e2m3, &e3m2, &e2m1}) {
    CAPTURE(f->tag);
    CHECK_FALSE(yes(*f, 8, 9));
    CHECK_FALSE(yes(*f, 9, 0));  // Hopper: no FP6/FP4 MMA
    CHECK(yes(*f, 10, 0));       // sm_100a
    CHECK(yes(*f, 12, 0));       // sm_120a
  }
  for (int major : {7, 8, 9, 10, 12}) CHECK_FALSE(yes(f32, major, 0));
  CHECK_FALSE(yes(ue8m0, 9, 0));
  CHECK(tensor_core_support(ue8m0, 10, 0).rfind("scales only", 0) == 0);
  // Every built-in format has an answer that starts with yes, no, scales or unknown.
  for (const Format* f : all_formats())
    for (int major : {7, 8, 9, 10, 12, 13}) {
      const std::string s = tensor_core_support(*f, major, 0);
      CHECK((s.rfind("yes", 0) == 0 || s.rfind("no", 0) == 0 || s.rfind("scales", 0) == 0 || s.rfind("unknown", 0) == 0));
    }
}
