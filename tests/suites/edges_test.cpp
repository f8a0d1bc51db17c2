// tests/suites/edges_test.cpp — coverage at the edges of memory (issue 38): poisoned padding and guards around the
// inputs (a K tail that reads A past the row and multiplies it by B's zero-filled tail), and misaligned vector loads
// (a 16-byte path chosen from K alone), with the fixtures of tests/plugin/fixtures/buggy_plugin.cpp beside the
// correct kernel they were written from.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>

#include "base/codes.hpp"
#include "plugin/loader.hpp"
#include "suites/run/guarded_input.hpp"
#include "suites/run/suite.hpp"

using namespace fpcert;

namespace {

void load_buggy() { load_plugin(std::string(FPCERT_TEST_PLUGIN_DIR) + "/libbuggy_cpu.so"); }

CaseResult certify_case(const std::string& kernel, const std::string& id) {
  SuiteRunOptions o;
  o.only_case = id;
  const RunResult r = run_suite(*find_suite("certify"), {kernel}, o);
  REQUIRE(r.cases.size() == 1);
  return r.cases.front();
}

bool contains(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

/// The fixture's vector path, declining what it cannot load instead of faulting: can_implement_operands refuses a
/// base pointer or a leading dimension that leaves a row off a 16-byte boundary when K % 8 == 0.
class DecliningVec16 : public GemmKernel {
 public:
  DecliningVec16() : inner_(make_gemm_kernel("bug_vec16_unaligned")), name_("declining_vec16") {}
  const std::string& name() const override { return name_; }
  std::string description() const override { return "bug_vec16_unaligned that declines unaligned rows"; }
  Backend backend() const override { return Backend::Cpu; }
  const KernelTraits& traits() const override { return inner_->traits(); }
  Support can_implement_operands(const GemmOperands& ops) const override {
    if (ops.k % 8 != 0) return Support::yes();
    const auto off = [](const void* p, std::int64_t ld) {
      return reinterpret_cast<std::uintptr_t>(p) % 16 != 0 || (ld * 4) % 16 != 0;  // fp32: row i at p + 4 i ld bytes
    };
    if (off(ops.a, ops.lda) || off(ops.b, ops.ldb)) return Support::no("the 16-byte vector path needs 16-byte aligned rows of A and B");
    return Support::yes();
  }
  void run(const GemmOperands& ops) override { inner_->run(ops); }

 private:
  std::unique_ptr<GemmKernel> inner_;
  std::string name_;
};

}  // namespace

TEST_CASE("poison_code: the storage format's quiet NaN with its own payload; the NaN of fp8; an invalid code for finite-only") {
  // fp32: exponent all ones (0x7F800000), quiet bit 2^22, payload 0x2D2D2D2D & (2^22 - 1) = 0x2D2D2D.
  CHECK(poison_code(f32) == 0x7FED2D2Dull);
  // fp16: 0x7C00 | 0x200 | (0x2D2D & 0x1FF = 0x12D) = 0x7F2D. Not the canonical 0x7E00 a kernel computes.
  CHECK(poison_code(f16) == 0x7F2Dull);
  CHECK(poison_code(f16) != to_container(f16, f16.canonical_nan_code()));
  CHECK(std::isnan(to_double(bf16, from_container(bf16, poison_code(bf16)))));
  CHECK(std::isnan(to_double(tf32, from_container(tf32, poison_code(tf32)))));  // tf32 in its 32-bit container
  CHECK(poison_code(e4m3) == 0x7Full);  // e4m3 (fn): S.1111.111 is its only NaN
  CHECK(poison_code(e2m1) == 0xFFull);  // 4 bits in a byte: 0xFF is no code of e2m1 (its codes end at 0x0F)
  CHECK(poison_code(e2m1) > e2m1.code_mask());
}

TEST_CASE("a poisoned guarded input: padding and guards hold the code element by element; writes there still show") {
  auto api = make_host_api();
  const std::int64_t rows = 3, cols = 5, ld = padded_ld(cols, 2);
  std::vector<std::uint8_t> packed(rows * cols * 2, 0x11);
  const std::uint64_t poison = poison_code(f16);
  for (bool misalign : {false, true}) {
    GuardedInput in(*api, packed, rows, cols, ld, 2, 64, misalign, poison);
    const auto* e = static_cast<const std::uint8_t*>(in.elements());
    CHECK(load_code(e, 0, 2) == 0x1111);
    for (std::int64_t c = cols; c < ld; ++c) CHECK(load_code(e, 1 * ld + c, 2) == poison);  // row 1's padding
    CHECK(load_code(e, -1, 2) == poison);                                                      // the guard before
    CHECK(load_code(e, (rows - 1) * ld + ld + 3, 2) == poison);                                 // the guard after
    CHECK(in.check().guard_changed == 0);
    // A kernel writing fp16's canonical NaN into the padding is still caught: the poison has its own payload.
    store_code(const_cast<std::uint8_t*>(e), 2 * ld + cols, 2, 0x7E00);
    const InputReport r = in.check();
    CHECK(r.guard_changed >= 1);
    CHECK(r.first_guard == "padding of row 2 (column 5, ld 13)");
  }
}

TEST_CASE("K tail read past the row times B's zero tail: no tail passes, a tail reads the poison and fails; the correct kernel passes") {
  load_buggy();
  // K = 512 is a whole number of the fixture's 8-wide K tiles: no read past the row.
  CHECK(certify_case("bug_ktail_zero_b", "uniform").status == CaseStatus::Pass);
  for (const char* id : {"shape_primes", "misaligned", "tile16_pm1"}) {  // K = 131, 513, 17: partial last tiles
    const CaseResult bad = certify_case("bug_ktail_zero_b", id);
    CHECK_MESSAGE(bad.status == CaseStatus::Fail, id, ": ", bad.reason);
    CHECK_MESSAGE(bad.metrics.nonfinite > 0, id, ": NaN where the reference is finite, ", bad.reason);
    const CaseResult good = certify_case("ok_tiled16", id);
    CHECK_MESSAGE(good.status == CaseStatus::Pass, id, ": ", good.reason);
  }
  const CaseResult primes = certify_case("bug_ktail_zero_b", "shape_primes");
  CHECK(std::find(primes.coverage.begin(), primes.coverage.end(), "layout.poisoned_padding") != primes.coverage.end());
}

TEST_CASE("a 16-byte vector path chosen from K alone: aligned cases pass, misaligned_vec16 and ld_odd fault with the message") {
  load_buggy();
  for (const char* id : {"uniform", "fill_device", "misaligned"})  // aligned rows, or K % 8 != 0 (no vector path)
    CHECK_MESSAGE(certify_case("bug_vec16_unaligned", id).status == CaseStatus::Pass, id);
  for (const char* id : {"misaligned_vec16", "ld_odd"}) {
    const CaseResult bad = certify_case("bug_vec16_unaligned", id);
    CHECK_MESSAGE(bad.status == CaseStatus::Crashed, id, ": ", bad.reason);
    CHECK_MESSAGE(contains(bad.reason, "misaligned address"), bad.reason);
    CHECK(std::find(bad.coverage.begin(), bad.coverage.end(), "layout.misaligned_vector") != bad.coverage.end());
    const CaseResult good = certify_case("ok_tiled16", id);
    CHECK_MESSAGE(good.status == CaseStatus::Pass, id, ": ", good.reason);
  }
  // The ld_odd case: lda = K + 9 = 521 (= 1 mod 8), so row 1 of A starts 4 bytes past a 16-byte boundary.
  CHECK(contains(certify_case("bug_vec16_unaligned", "ld_odd").reason, "lda = 521"));
}

TEST_CASE("the same vector path declining through can_implement_operands is not supported, with its reason") {
  load_buggy();
  register_kernel("declining_vec16", Backend::Cpu, true, [] { return std::unique_ptr<Kernel>(new DecliningVec16()); });
  CHECK(certify_case("declining_vec16", "uniform").status == CaseStatus::Pass);
  for (const char* id : {"misaligned_vec16", "ld_odd"}) {
    const CaseResult r = certify_case("declining_vec16", id);
    CHECK_MESSAGE(r.status == CaseStatus::NotSupported, id, ": ", r.reason);
    CHECK(contains(r.reason, "16-byte aligned rows"));
  }
}
