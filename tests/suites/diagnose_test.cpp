// tests/suites/diagnose_test.cpp — the diagnosis of a GEMM kernel's output (suites/diagnose/; docs/diagnose.md): each
// wrong arithmetic below is made independently of the hypothesis that should name it (audit's tf32 mutant rounds the
// inputs itself before calling the model; the relabelled model computes fp32 while declaring bf16), and the
// identification measure over injected faults.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <functional>

#include "kernels/gemm/cpu/model.hpp"
#include "suites/audit/audit_kernels.hpp"
#include "suites/diagnose/diagnose_run.hpp"
#include "tests/support/relabelled_kernel.hpp"

using namespace fpcert;

namespace {

/// A kernel that computes what `inner` computes and declares `declared` (a declaration looser, or wrong, on purpose).
using test::Relabelled;

/// A fixture kernel written out here, with host float arithmetic, independent of the emulator the hypotheses use:
/// `dot(a_row, b, j)` computes one element from the values it received.
class Fixture final : public GemmKernel {
 public:
  using Element = std::function<float(const std::vector<float>& arow, const std::vector<float>& bcol)>;
  Fixture(KernelTraits t, Element e) : t_(std::move(t)), e_(std::move(e)) {}
  const std::string& name() const override { return name_; }
  std::string description() const override { return "fixture"; }
  Backend backend() const override { return Backend::Cpu; }
  const KernelTraits& traits() const override { return t_; }
  void run(const GemmOperands& ops) override {
    const bool b16 = *t_.a_input == bf16;
    auto load = [&](const void* p, std::int64_t x) {
      if (!b16) return static_cast<const float*>(p)[x];
      return std::bit_cast<float>(static_cast<std::uint32_t>(static_cast<const std::uint16_t*>(p)[x]) << 16);
    };
    std::vector<float> arow(static_cast<std::size_t>(ops.k)), bcol(static_cast<std::size_t>(ops.k));
    for (std::int64_t i = 0; i < ops.m; ++i)
      for (std::int64_t j = 0; j < ops.n; ++j) {
        for (std::int64_t p = 0; p < ops.k; ++p) {
          arow[static_cast<std::size_t>(p)] = load(ops.a, i * ops.lda + p);
          bcol[static_cast<std::size_t>(p)] = load(ops.b, p * ops.ldb + j);
        }
        const float v = e_(arow, bcol);
        if (b16) static_cast<std::uint16_t*>(ops.c)[i * ops.ldc + j] = static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(v) >> 16);
        else static_cast<float*>(ops.c)[i * ops.ldc + j] = v;
      }
  }

 private:
  KernelTraits t_;
  Element e_;
  std::string name_ = "fixture";
};

/// fp32 to tf32 with cvt.rna's rounding: half an ulp of tf32 (bit 12) added to the magnitude, the 13 low bits cleared.
float tf32_rna(float x) { return std::bit_cast<float>((std::bit_cast<std::uint32_t>(x) + 0x1000u) & 0xFFFFE000u); }
/// fp32 to bf16, nearest-even (finite values): the 16 low bits rounded into bit 16.
float bf16_rn(float x) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(x);
  return std::bit_cast<float>((u + 0x7FFFu + ((u >> 16) & 1u)) & 0xFFFF0000u);
}
/// fp32 to fp16, nearest-even, kept in a float (the oracle's rounding: fp16 has no host type here).
float f16_rn(float x) { return static_cast<float>(to_double(f16, round_double(f16, x, Rounder::nearest(f16)).code)); }

/// Four interleaved fp32 FMA chains (product p into chain p mod 4), joined as (c0 + c1) + (c2 + c3): a correct order
/// that no hypothesis computes (a vectorised kernel's), on the operands as `narrow` makes them.
Fixture::Element interleaved(float (*narrow)(float)) {
  return [narrow](const std::vector<float>& a, const std::vector<float>& b) {
    float c[4] = {0, 0, 0, 0};
    for (std::size_t p = 0; p < a.size(); ++p) c[p % 4] = std::fma(narrow ? narrow(a[p]) : a[p], narrow ? narrow(b[p]) : b[p], c[p % 4]);
    return (c[0] + c[1]) + (c[2] + c[3]);
  };
}

/// bf16 in, fp32 FMA chains over 4 contiguous K chunks, bf16 out; the partials combined in fp32 and rounded once
/// (split-K with an fp32 workspace) or (`inplace`) each added into C held in bf16, C = bf16(C + partial).
Fixture::Element split4(bool inplace) {
  return [inplace](const std::vector<float>& a, const std::vector<float>& b) {
    const std::size_t chunk = (a.size() + 3) / 4;
    float c = 0;
    for (std::size_t s = 0; s < 4; ++s) {
      float part = 0;
      for (std::size_t p = s * chunk; p < std::min(a.size(), (s + 1) * chunk); ++p) part = std::fma(a[p], b[p], part);
      c = s == 0 ? (inplace ? bf16_rn(part) : part) : inplace ? bf16_rn(c + part) : c + part;
    }
    return bf16_rn(c);
  };
}

DiagnoseKernelOptions on(const std::string& c) {
  DiagnoseKernelOptions o;
  o.cases = {c};
  o.auto_separate = false;
  return o;
}

// uniform [-1, 1) fp32 inputs: nearly every one has bits below tf32's 11 (so narrowing changes it), K = 200 makes every
// output the sum of 200 rounded products: the arithmetics below differ on most elements.
const char* kUniform = "uniform:m=12,n=13,k=200,seed=5";

}  // namespace

TEST_CASE("diagnose: the unmutated fp32 model is its declared arithmetic, bit for bit") {
  auto k = make_gemm_kernel("model_gemm_f32");
  const DiagnosisRecord r = diagnose_kernel(*k, on(kUniform));
  REQUIRE_FALSE(r.ranked.empty());
  CHECK(r.kind == "declared");
  CHECK(r.ranked.front().id == "declared");
  CHECK(r.ranked.front().matched == 12 * 13);
  CHECK(r.ranked.front().envelope_holds);
  // the second-best hypothesis differs somewhere (the case separates the arithmetics at all)
  REQUIRE(r.ranked.size() > 1);
  CHECK(r.ranked[1].matched < 12 * 13);
  CHECK(r.hint.empty());  // it declares exactly what it computes: nothing more precise to suggest
}

TEST_CASE("diagnose: fp32 inputs read as tf32 (nearest-away) are named as such") {
  const DiagnosisRecord r = diagnose_kernel(*make_tf32_inputs_mutant(make_gemm_kernel("model_gemm_f32")), on(kUniform));
  REQUIRE_FALSE(r.ranked.empty());
  CHECK(r.kind == "consistent");
  CHECK(top_is(r, "operands=tf32/rna"));
  CHECK(r.ranked.front().matched == r.ranked.front().elements);
  CHECK(r.verdict.find("tf32") != std::string::npos);
}

TEST_CASE("diagnose: a kernel more precise than it declares gets the hint") {
  // model_gemm_f32 computes fp32 FMA; it is declared with a bf16 accumulator (a looser declaration)
  KernelTraits t = make_gemm_kernel("model_gemm_f32")->traits();
  t.acc = &bf16;
  Relabelled k(make_gemm_kernel("model_gemm_f32"), t);
  const DiagnosisRecord r = diagnose_kernel(k, on(kUniform));
  REQUIRE_FALSE(r.ranked.empty());
  CHECK(r.kind == "hint");
  CHECK(top_is(r, "acc=f32"));
  CHECK(r.ranked.front().tighter);
  // the passing-kernel hint: a more precise arithmetic bit for bit on every element, named, with the tightening said
  CHECK_FALSE(r.hint_id.empty());
  CHECK(r.hint.find("every element (156 of 156)") != std::string::npos);  // 12 x 13 elements
  CHECK(r.hint.find("could be tightened") != std::string::npos);
  bool hinted_tighter = false;
  for (const auto& h : r.ranked) hinted_tighter = hinted_tighter || (h.id == r.hint_id && h.tighter && h.matched == h.elements);
  for (const auto& s : r.ranked.front().same_as) hinted_tighter = hinted_tighter || s == r.hint_id;
  CHECK(hinted_tighter);
}

TEST_CASE("diagnose: all zeros is no known arithmetic, and the unexplained elements are listed") {
  // M, N = 32: whole tiles of 16 (on a smaller case the tail-tile fault, every row and column in the partial tile,
  // zeroes all of C and explains it)
  const DiagnosisRecord r = diagnose_kernel(*make_zeros_mutant(make_gemm_kernel("model_gemm_f32")), on("uniform:m=32,n=32,k=64,seed=5"));
  CHECK(r.kind == "logic_error");
  CHECK(r.verdict.find("logic error") != std::string::npos);
  REQUIRE_FALSE(r.unexplained.empty());
  CHECK(r.unexplained.front().got == 0.0);
}

TEST_CASE("diagnose: look-alikes on a case are said, and a separating case tells them apart") {
  // Inputs exact in fp16: narrowing them to fp16 or tf32 changes nothing, so those hypotheses equal the declared one here.
  auto k = make_gemm_kernel("model_gemm_f32");
  const DiagnosisRecord r = diagnose_kernel(*k, on("uniform:m=8,n=8,k=64,seed=3,source=f16"));
  REQUIRE_FALSE(r.ranked.empty());
  CHECK(r.ranked.front().id == "declared");
  const auto& same = r.ranked.front().same_as;
  CHECK(std::find(same.begin(), same.end(), "operands=f16/rn") != same.end());
  CHECK(r.verdict.find("indistinguishable") != std::string::npos);
  // with a second case of fp32 inputs, the look-alike is gone
  DiagnoseKernelOptions o = on("uniform:m=8,n=8,k=64,seed=3,source=f16");
  o.cases.push_back(kUniform);
  const DiagnosisRecord r2 = diagnose_kernel(*k, o);
  const auto& same2 = r2.ranked.front().same_as;
  CHECK(std::find(same2.begin(), same2.end(), "operands=f16/rn") == same2.end());
}

TEST_CASE("diagnose: identification of the faults injected into two CPU models is at least 90 %") {
  // The measure of issue 47 on a subset (the whole is `fpcert diagnose --identify`, docs/diagnose.md's table).
  const auto rows = measure_identification({"model_gemm_f32", "model_gemm_f16_f32acc"});
  REQUIRE(rows.size() >= 20);
  const auto hit = std::count_if(rows.begin(), rows.end(), [](const IdentificationRow& r) { return r.identified; });
  const auto counted = std::count_if(rows.begin(), rows.end(), [](const IdentificationRow& r) { return !r.dormant; });
  for (const IdentificationRow& r : rows)
    if (!r.identified) MESSAGE(r.model << " " << r.fault << (r.dormant ? " (dormant)" : "") << ": " << r.reason);
  CHECK(counted >= 20);
  CHECK(static_cast<double>(hit) >= 0.9 * static_cast<double>(counted));
  // the one known miss of these models: lda ignored (it reads A's padding; the hypotheses run on dense operands)
  CHECK(hit >= counted - 2);
}

TEST_CASE("diagnose: tf32 (rna) inputs in an order fpcert does not compute; the fp16 look-alike separated by range") {
  // Declared fp32 with an unknown order (as torch.matmul on cuBLAS): no hypothesis is bit for bit on the interleaved
  // chains, so the envelopes rank, and on uniform [-1, 1) inputs fp16 and tf32 operands (both 11 bits) tie: the
  // exponents that tell them apart never occur. The separating case is derived from their formats (fp16's range ends
  // at 65504 and its normal range at 2^-14, tf32's are fp32's): inputs 2^-20 .. 2^20.
  Fixture tf32k(KernelTraits{}, interleaved(tf32_rna));
  DiagnoseKernelOptions o = on("uniform:m=16,n=16,k=256,seed=5");
  o.auto_separate = true;
  o.opt.pairs = false;
  const DiagnosisRecord r = diagnose_kernel(tf32k, o);
  REQUIRE_FALSE(r.ranked.empty());
  MESSAGE(r.verdict);
  for (const auto& s : r.separations) MESSAGE(s.first << " / " << s.second << " on " << s.spec << ": " << s.outcome);
  CHECK(r.ranked.front().id.rfind("operands=tf32/", 0) == 0);
  // not "declared": tf32's error is beyond fp32's envelope on the short-K separating case; by the envelope, as no
  // hypothesis computes the interleaved chains bit for bit
  CHECK(r.kind == "envelope");
  bool range_case = false;
  for (const auto& s : r.separations) range_case = range_case || (s.spec.find("emin=-20,emax=20") != std::string::npos && !s.outcome.empty());
  CHECK(range_case);
  // the separations travel in the record's JSON (fpcert diagnose --json, the report's input) and back
  const DiagnosisRecord back = diagnosis_from_json(diagnosis_to_json(r));
  REQUIRE(back.separations.size() == r.separations.size());
  CHECK(back.separations.front().spec == r.separations.front().spec);
  CHECK(back.separations.front().outcome == r.separations.front().outcome);
  // the look-alike: the same chains on fp16 operands are named fp16, not tf32
  Fixture f16k(KernelTraits{}, interleaved(f16_rn));
  const DiagnosisRecord r16 = diagnose_kernel(f16k, o);
  REQUIRE_FALSE(r16.ranked.empty());
  MESSAGE(r16.verdict);
  CHECK(r16.kind == "envelope");
  CHECK(r16.ranked.front().id.rfind("operands=f16/", 0) == 0);
}

TEST_CASE("diagnose: a correct kernel in an undeclared order is the declared arithmetic by its envelope, never a logic error") {
  Fixture k(KernelTraits{}, interleaved(nullptr));  // fp32 declared, order unknown: correct whatever its order
  const DiagnosisRecord r = diagnose_kernel(k, on("uniform:m=16,n=16,k=256,seed=5"));
  REQUIRE_FALSE(r.ranked.empty());
  MESSAGE(r.verdict);
  CHECK(r.kind == "declared");
  CHECK(r.ranked.front().id == "declared");
  CHECK(r.ranked.front().envelope_holds);
  CHECK(r.ranked.front().matched < r.ranked.front().elements);  // not bit for bit: the rule, not the bits, decided
  CHECK(r.verdict.find("not identified") != std::string::npos);
  // the look-alike: the same kernel declaring a sequential order promises its bits, which it does not give
  KernelTraits seq;
  seq.sum_order = SummationOrder::sequential();
  Fixture ks(seq, interleaved(nullptr));
  const DiagnosisRecord rs = diagnose_kernel(ks, on("uniform:m=16,n=16,k=256,seed=5"));
  MESSAGE(rs.verdict);
  CHECK(rs.kind != "declared");
}

TEST_CASE("diagnose: split-K with bf16 partials (reduced-precision reduction) is named, plain split-K is not") {
  KernelTraits t;  // bf16 in, fp32 accumulation, bf16 out, order unknown (as cuBLAS's bf16 GEMM declares)
  t.a_input = t.b_input = t.a_operand = t.b_operand = &bf16;
  t.out = &bf16;
  // positive terms, K = 1024: each partial's rounding into bf16 is visible on most elements
  const std::string c = "uniform:m=16,n=16,k=1024,seed=5,lo=0,hi=1";
  Fixture reduced(t, split4(true));
  const DiagnosisRecord r = diagnose_kernel(reduced, on(c));
  REQUIRE_FALSE(r.ranked.empty());
  MESSAGE(r.verdict);
  CHECK(top_is(r, "partials=splitk4/bf16/inplace"));
  CHECK(r.kind == "consistent");
  CHECK(r.ranked.front().matched == r.ranked.front().elements);
  // the look-alike: the partials kept in fp32, one rounding into bf16 at the end
  Fixture full(t, split4(false));
  const DiagnosisRecord rf = diagnose_kernel(full, on(c));
  REQUIRE_FALSE(rf.ranked.empty());
  MESSAGE(rf.verdict);
  CHECK(rf.ranked.front().id.rfind("partials=", 0) != 0);
  CHECK(top_is(rf, "order=splitk4"));
  CHECK((rf.kind == "hint" || rf.kind == "declared"));  // a member of the declared order family
}
