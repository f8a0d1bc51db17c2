// tests/suites/fault_injectors_test.cpp — each fault injector does exactly the fault it claims: its
// output equals the unmutated CPU model run on inputs changed by hand here (independently of the
// injector's code), or an accumulation recomputed with MPFR; the runtime faults fail run_case with
// the check of their kind.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>

#include "base/codes.hpp"
#include "base/error.hpp"
#include "kernels/device/device_api.hpp"
#include "kernels/kernel.hpp"
#include "suites/ops/gemm/fault_injectors.hpp"
#include "suites/mutation/mutation.hpp"
#include "suites/ops/gemm/epilogue.hpp"
#include "suites/ops/gemm/runner.hpp"
#include "suites/verdict/tolerance.hpp"
#include "tests/support/gemm_call.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;

namespace {

using Inputs = test::GemmInputs;

using test::mpfr_sum;

Inputs uniform_inputs(std::int64_t m, std::int64_t n, std::int64_t k, const Format& source, std::uint64_t seed) {
  return test::uniform_gemm_inputs(m, n, k, source, seed);
}

/// One call of `kern` on host buffers (tests/support/gemm_call.hpp).
std::vector<std::uint64_t> call(GemmKernel& kern, const Inputs& in, std::int64_t lda = 0, std::vector<std::uint8_t>* a_after = nullptr) {
  static const auto api = make_host_api();
  return test::gemm_call(kern, *api, in, lda, a_after);
}

std::unique_ptr<GemmKernel> mutant(const std::string& kernel, Fault f, const FaultOptions& opt = {}) {
  auto m = make_fault_injector(make_gemm_kernel(kernel), f, opt);
  REQUIRE(m);
  return m;
}

std::vector<std::uint64_t> honest(const std::string& kernel, const Inputs& in, std::int64_t lda = 0) {
  auto k = make_gemm_kernel(kernel);
  REQUIRE(k);
  return call(*k, in, lda);
}

double f32_value(std::uint64_t code) { return to_double(f32, code); }

}  // namespace

TEST_CASE("the catalogue: every fault once, ids unique and found, each with expected checks and what a suite needs") {
  std::vector<std::string_view> ids;
  for (const FaultInfo& f : fault_catalogue()) {
    CAPTURE(f.id);
    CHECK(find_fault(f.id) == &f);
    CHECK(&fault_info(f.fault) == &f);
    CHECK(!f.expected.empty());
    CHECK(!f.what.empty());
    CHECK(!f.realisation.empty());
    CHECK(!f.needs.empty());
    CHECK(std::find(ids.begin(), ids.end(), f.id) == ids.end());
    ids.push_back(f.id);
  }
  CHECK(ids.size() == 96);  // 35 GEMM faults (acc_f32: docs/fp64.md; transposed_ld, beta0_reads_c, beta_ignored, batch_stride_ignored,
                            // batch_last_dropped and the 8 epi_*: issue 37), 5 reduction, 6 softmax, 8 norm, 8 attention,
                            // 6 softmax backward, 7 norm backward, 9 attention backward, 12 elementwise (issue 42)
  // Every enumerator has its entry: the last one declared is the catalogue's last.
  CHECK(ids.size() == static_cast<std::size_t>(Fault::AttnDescaleVDropped) + 1);
  CHECK(find_fault("no_such_fault") == nullptr);
  CHECK_THROWS_AS(parse_fault_list("acc_rz,bogus"), InputError);
  CHECK(parse_fault_list("acc_rz,out_ulp,acc_rz").size() == 2);
}

TEST_CASE("a mutant claims the wrapped kernel's traits and name") {
  auto m = mutant("model_gemm_bf16_f32acc", Fault::AccTowardZero);
  auto k = make_gemm_kernel("model_gemm_bf16_f32acc");
  CHECK(m->name() == "model_gemm_bf16_f32acc~acc_rz");
  CHECK(m->is_mutant());
  CHECK(describe_traits(m->traits()) == describe_traits(k->traits()));
  CHECK(m->traits().order == k->traits().order);
  CHECK(m->backend() == Backend::Cpu);
  CHECK(m->memory() == MemorySpace::Host);
}

TEST_CASE("faults that cannot change a kernel are not applicable, with the reason") {
  CHECK(fault_not_applicable(Fault::AccF16, make_gemm_kernel("model_gemm_f16_f16acc")->traits()).find("no wider than fp16") != std::string::npos);
  CHECK(fault_not_applicable(Fault::AccTowardZero, make_gemm_kernel("model_gemm_e4m3_lpacc")->traits()).find("toward-zero") != std::string::npos);
  CHECK(fault_not_applicable(Fault::AccF16, make_gemm_kernel("model_gemm_f32")->traits()).empty());
  CHECK(fault_not_applicable(Fault::AccBf16, make_gemm_kernel("model_gemm_f16_f16acc")->traits()).empty());  // 11 > 8 bits
  CHECK(fault_not_applicable(Fault::InfToMax, make_gemm_kernel("model_gemm_f32")->traits()).empty());
}

TEST_CASE("output faults: exactly the claimed elements change") {
  const Inputs in = uniform_inputs(9, 7, 40, f32, test::seed());
  const auto h = honest("model_gemm_f32", in);
  SUBCASE("out_ulp: one element, one ulp further from zero") {
    const auto got = call(*mutant("model_gemm_f32", Fault::OutputUlp), in);
    for (std::size_t x = 0; x < h.size(); ++x) {
      if (x == static_cast<std::size_t>((in.m / 2) * in.n + in.n / 2)) {
        const float want = std::nextafter(static_cast<float>(f32_value(h[x])), std::copysign(INFINITY, static_cast<float>(f32_value(h[x]))));
        CHECK(f32_value(got[x]) == static_cast<double>(want));
      } else {
        CHECK(got[x] == h[x]);
      }
    }
  }
  SUBCASE("zero_row and zero_col") {
    const auto r = call(*mutant("model_gemm_f32", Fault::ZeroRow), in);
    const auto c = call(*mutant("model_gemm_f32", Fault::ZeroColumn), in);
    for (std::int64_t i = 0; i < in.m; ++i)
      for (std::int64_t j = 0; j < in.n; ++j) {
        const auto x = static_cast<std::size_t>(i * in.n + j);
        CHECK(r[x] == (i == in.m - 1 ? 0 : h[x]));
        CHECK(c[x] == (j == in.n - 1 ? 0 : h[x]));
      }
  }
  SUBCASE("writes_nan") {
    const auto got = call(*mutant("model_gemm_f32", Fault::WritesNan), in);
    CHECK(std::isnan(f32_value(got[0])));
    for (std::size_t x = 1; x < h.size(); ++x) CHECK(got[x] == h[x]);
  }
}

TEST_CASE("input faults equal the unmutated model on inputs changed by hand") {
  const std::uint64_t seed = test::seed() + 1;
  SUBCASE("k_minus_1: the model on the first K - 1 products") {
    const Inputs in = uniform_inputs(5, 6, 33, f32, seed);
    Inputs shorter = in;
    for (std::int64_t i = 0; i < in.m; ++i) shorter.A(i, in.k - 1) = 0;
    CHECK(call(*mutant("model_gemm_f32", Fault::DropLastProduct), in) == honest("model_gemm_f32", shorter));
    CHECK(call(*mutant("model_gemm_f32", Fault::DropLastProduct), in) != honest("model_gemm_f32", in));
  }
  SUBCASE("transposed_b: B'(p, j) = element j K + p of B's row-major sequence") {
    const Inputs in = uniform_inputs(4, 5, 12, f32, seed);
    Inputs t = in;
    for (std::int64_t p = 0; p < in.k; ++p)
      for (std::int64_t j = 0; j < in.n; ++j) t.B(p, j) = in.b[static_cast<std::size_t>(j * in.k + p)];
    CHECK(call(*mutant("model_gemm_f32", Fault::TransposedB), in) == honest("model_gemm_f32", t));
  }
  SUBCASE("lda_ignored: rows read at stride K from a padded buffer; dormant when lda = K") {
    const Inputs in = uniform_inputs(6, 4, 10, f32, seed);
    const std::int64_t lda = 13;
    // Buffer element i*K + p of a buffer of stride 13 whose padding holds 0.75.
    Inputs t = in;
    for (std::int64_t i = 0; i < in.m; ++i)
      for (std::int64_t p = 0; p < in.k; ++p) {
        const std::int64_t off = i * in.k + p, row = off / lda, col = off % lda;
        t.A(i, p) = col < in.k ? in.a[static_cast<std::size_t>(row * in.k + col)] : 0.75;
      }
    CHECK(call(*mutant("model_gemm_f32", Fault::LdaIgnored), in, lda) == honest("model_gemm_f32", t));
    const std::string name = mutant_name("model_gemm_f32", Fault::LdaIgnored);
    reset_fault_activity(name);
    CHECK(call(*mutant("model_gemm_f32", Fault::LdaIgnored), in) == honest("model_gemm_f32", in));
    CHECK(fault_activity(name).runs == 1);
    CHECK(fault_activity(name).active == 0);
  }
  SUBCASE("tail_tile: rows and columns past the last full tile of 16 are zero") {
    const Inputs in = uniform_inputs(19, 18, 8, f32, seed);
    const auto h = honest("model_gemm_f32", in);
    const auto got = call(*mutant("model_gemm_f32", Fault::TailTile), in);
    for (std::int64_t i = 0; i < in.m; ++i)
      for (std::int64_t j = 0; j < in.n; ++j) {
        const auto x = static_cast<std::size_t>(i * in.n + j);
        CHECK(got[x] == (i >= 16 || j >= 16 ? 0 : h[x]));
      }
    const Inputs whole = uniform_inputs(16, 32, 8, f32, seed);
    CHECK(call(*mutant("model_gemm_f32", Fault::TailTile), whole) == honest("model_gemm_f32", whole));
  }
  SUBCASE("precision_switch: operands at k >= 256 rounded to half the fraction bits (fp16: 5)") {
    const Inputs in = uniform_inputs(3, 4, 300, f32, seed);
    Inputs t = in;
    auto half = [](double v) {  // round to nearest even at 6 significant bits, by hand
      if (v == 0) return v;
      const int e = std::ilogb(v);
      return std::nearbyint(std::ldexp(v, 5 - e)) * std::ldexp(1.0, e - 5);
    };
    for (std::int64_t i = 0; i < in.m; ++i)
      for (std::int64_t p = 256; p < in.k; ++p) t.A(i, p) = half(quantize(f16, in.A(i, p)));
    for (std::int64_t p = 256; p < in.k; ++p)
      for (std::int64_t j = 0; j < in.n; ++j) t.B(p, j) = half(quantize(f16, in.b[static_cast<std::size_t>(p * in.n + j)]));
    CHECK(call(*mutant("model_gemm_f16_f32acc", Fault::PrecisionSwitch), in) == honest("model_gemm_f16_f32acc", t));
    const Inputs short_k = uniform_inputs(3, 4, 256, f32, seed);
    CHECK(call(*mutant("model_gemm_f16_f32acc", Fault::PrecisionSwitch), short_k) == honest("model_gemm_f16_f32acc", short_k));
  }
  SUBCASE("flush_inputs: fp16 subnormal inputs read as zero") {
    Inputs in = uniform_inputs(4, 4, 16, f32, seed);
    for (std::int64_t p = 0; p < in.k; p += 3) in.A(1, p) = std::ldexp(in.A(1, p), -16);  // fp16 subnormals (below 2^-14)
    Inputs t = in;
    int flushed = 0;
    for (double& v : t.a)
      if (v != 0 && std::fabs(quantize(f16, v)) < 0x1p-14) {
        v = std::copysign(0.0, v);
        ++flushed;
      }
    CHECK(flushed > 0);
    CHECK(call(*mutant("model_gemm_f16_f32acc", Fault::FlushInputs), in) == honest("model_gemm_f16_f32acc", t));
  }
}

TEST_CASE("special-value output faults") {
  Inputs in = uniform_inputs(4, 4, 8, f32, test::seed() + 2);
  in.A(0, 0) = NAN;        // row 0 of C is NaN
  in.A(1, 1) = INFINITY;   // row 1 is +-Inf (a finite B(1, j) != 0)
  in.A(2, 0) = 0x1p-140;   // row 2 of C = A B with B = identity below: an fp32 subnormal
  const auto h = honest("model_gemm_f32", in);
  const auto z = call(*mutant("model_gemm_f32", Fault::NanToZero), in);
  const auto s = call(*mutant("model_gemm_f32", Fault::InfToMax), in);
  int nans = 0, infs = 0;
  for (std::size_t x = 0; x < h.size(); ++x) {
    const FpClass c = classify(f32, h[x]);
    nans += c == FpClass::NaN;
    infs += c == FpClass::Inf;
    CHECK(z[x] == (c == FpClass::NaN ? 0 : h[x]));
    CHECK(s[x] == (c == FpClass::Inf ? (h[x] & f32.sign_mask()) | f32.max_finite_code() : h[x]));
  }
  CHECK(nans == 4);
  CHECK(infs > 0);
  Inputs id = uniform_inputs(4, 4, 4, f32, test::seed() + 3);
  for (std::int64_t p = 0; p < 4; ++p)
    for (std::int64_t j = 0; j < 4; ++j) id.B(p, j) = p == j;
  id.A(2, 0) = -0x1p-140;
  const auto f = call(*mutant("model_gemm_f32", Fault::FlushOutputs), id);
  const auto hf = honest("model_gemm_f32", id);
  CHECK(classify(f32, hf[8]) == FpClass::Subnormal);
  CHECK(f[8] == f32.sign_mask());  // -0
  for (std::size_t x = 0; x < f.size(); ++x)
    if (x != 8) CHECK(f[x] == hf[x]);
}

TEST_CASE("accumulator faults equal the accumulation recomputed with MPFR") {
  const Inputs in = uniform_inputs(5, 4, 64, f32, test::seed() + 4);
  SUBCASE("acc_rz on fp16 storage, fp32 accumulator: acc = RZ_24(acc + a b) per product") {
    const auto got = call(*mutant("model_gemm_f16_f32acc", Fault::AccTowardZero), in);
    const auto h = honest("model_gemm_f16_f32acc", in);
    int differ = 0;
    for (std::int64_t i = 0; i < in.m; ++i)
      for (std::int64_t j = 0; j < in.n; ++j) {
        double acc = 0;
        for (std::int64_t p = 0; p < in.k; ++p)  // products of fp16 values: exact in fp32 and double
          acc = mpfr_sum(acc, quantize(f16, in.a[static_cast<std::size_t>(i * in.k + p)]) * quantize(f16, in.b[static_cast<std::size_t>(p * in.n + j)]), 24, MPFR_RNDZ);
        const auto x = static_cast<std::size_t>(i * in.n + j);
        CHECK(f32_value(got[x]) == acc);
        differ += got[x] != h[x];
      }
    CHECK(differ > 0);
  }
  SUBCASE("acc_f16 on fp16 storage: the fp16-accumulating model, widened") {
    const auto got = call(*mutant("model_gemm_f16_f32acc", Fault::AccF16), in);
    const auto f16acc = honest("model_gemm_f16_f16acc", in);
    for (std::size_t x = 0; x < got.size(); ++x) CHECK(f32_value(got[x]) == to_double(f16, f16acc[x]));
  }
  SUBCASE("acc_bf16: acc = RN_8(acc + a b)") {
    const auto got = call(*mutant("model_gemm_f16_f32acc", Fault::AccBf16), in);
    for (std::int64_t i = 0; i < in.m; ++i)
      for (std::int64_t j = 0; j < in.n; ++j) {
        double acc = 0;
        for (std::int64_t p = 0; p < in.k; ++p)
          acc = mpfr_sum(acc, quantize(f16, in.a[static_cast<std::size_t>(i * in.k + p)]) * quantize(f16, in.b[static_cast<std::size_t>(p * in.n + j)]), 8, MPFR_RNDN);
        CHECK(f32_value(got[static_cast<std::size_t>(i * in.n + j)]) == acc);
      }
  }
  SUBCASE("out_rz: RZ_24 of the model's first K - 1 products plus the last product") {
    const auto got = call(*mutant("model_gemm_f32", Fault::OutputTowardZero), in);
    Inputs first = in;
    first.k = in.k - 1;
    first.a.clear();
    first.b.assign(in.b.begin(), in.b.end() - in.n);
    for (std::int64_t i = 0; i < in.m; ++i)
      for (std::int64_t p = 0; p + 1 < in.k; ++p) first.a.push_back(in.a[static_cast<std::size_t>(i * in.k + p)]);
    const auto p = honest("model_gemm_f32", first);
    for (std::int64_t i = 0; i < in.m; ++i)
      for (std::int64_t j = 0; j < in.n; ++j) {
        const auto x = static_cast<std::size_t>(i * in.n + j);
        const double last = static_cast<float>(in.a[static_cast<std::size_t>(i * in.k + in.k - 1)] * in.b[static_cast<std::size_t>((in.k - 1) * in.n + j)]);
        CHECK(f32_value(got[x]) == mpfr_sum(f32_value(p[x]), last, 24, MPFR_RNDZ));
      }
  }
}

TEST_CASE("one_run_in_n: every second call is the model on K rotated by one, the others the model itself") {
  const Inputs in = uniform_inputs(6, 5, 50, f32, test::seed() + 5);
  Inputs rot = in;
  for (std::int64_t p = 0; p < in.k; ++p) {
    for (std::int64_t i = 0; i < in.m; ++i) rot.A(i, p) = in.a[static_cast<std::size_t>(i * in.k + (p + 1) % in.k)];
    for (std::int64_t j = 0; j < in.n; ++j) rot.B(p, j) = in.b[static_cast<std::size_t>(((p + 1) % in.k) * in.n + j)];
  }
  auto m = mutant("model_gemm_f32", Fault::OneRunInN);
  const auto h = honest("model_gemm_f32", in), r = honest("model_gemm_f32", rot);
  CHECK(h != r);  // the order shows in the bits
  CHECK(call(*m, in) == h);
  CHECK(call(*m, in) == r);
  CHECK(call(*m, in) == h);
  // A pairwise tree over a power-of-two K: rotating changes the pairs (reversing would only mirror them).
  const Inputs p64 = uniform_inputs(4, 4, 64, f32, test::seed() + 8);
  auto pm = mutant("model_gemm_f32_pairwise", Fault::OneRunInN);
  const auto first = call(*pm, p64);
  CHECK(first == honest("model_gemm_f32_pairwise", p64));
  CHECK(call(*pm, p64) != first);
}

TEST_CASE("clobbers_a flips A[0][0]'s sign bit in the caller's buffer") {
  const Inputs in = uniform_inputs(3, 3, 5, f32, test::seed() + 6);
  std::vector<std::uint8_t> after;
  auto m = mutant("model_gemm_f32", Fault::ClobbersA);
  call(*m, in, 0, &after);
  CHECK(f32_value(load_code(after.data(), 0, 4)) == -static_cast<double>(static_cast<float>(in.a[0])));
  CHECK(f32_value(load_code(after.data(), 1, 4)) == static_cast<double>(static_cast<float>(in.a[1])));
}

TEST_CASE("runtime faults fail run_case with the check of their kind") {
  const Problem p = test::uniform_problem(12, 10, 64, f32, test::seed() + 7);
  const GemmRef ref = gemm_reference(p.a.view(), p.b.view());
  auto api = make_host_api();
  CaseSetup s;
  s.suite = "test";
  s.case_id = "c";
  s.problem = &p;
  s.ref = &ref;
  struct Expect {
    Fault f;
    CheckKind kind;
  };
  for (const Expect& e : {Expect{Fault::UnwrittenRow, CheckKind::Unwritten}, Expect{Fault::WritePastEnd, CheckKind::GuardOutput},
                          Expect{Fault::WritesNan, CheckKind::Nonfinite}, Expect{Fault::OneRunInN, CheckKind::Nondeterministic},
                          Expect{Fault::ZeroRow, CheckKind::Envelope}}) {
    CAPTURE(fault_info(e.f).id);
    auto m = mutant("model_gemm_f32", e.f);
    const CaseResult r = run_case(*m, s, *api, RunOptions{});
    CHECK(r.status == CaseStatus::Fail);
    const auto fired = failed_checks(r);
    CHECK_MESSAGE(std::find(fired.begin(), fired.end(), e.kind) != fired.end(), r.reason);
  }
  auto plain = make_gemm_kernel("model_gemm_f32");
  const CaseResult ok = run_case(*plain, s, *api, RunOptions{});
  CHECK(ok.status == CaseStatus::Pass);
  CHECK(failed_checks(ok).empty());
}

TEST_CASE("mutant names resolve: <kernel>~<fault> registers the mutant, bad ones are input errors") {
  CHECK(register_mutant_name("model_gemm_f32~acc_bf16"));
  auto k = make_gemm_kernel("model_gemm_f32~acc_bf16");
  REQUIRE(k);
  CHECK(k->is_mutant());
  CHECK_FALSE(register_mutant_name("model_gemm_f32"));
  CHECK_THROWS_AS(register_mutant_name("model_gemm_f32~nope"), InputError);
  CHECK_THROWS_AS(register_mutant_name("no_kernel~acc_bf16"), InputError);
}

TEST_CASE("shape multiples and FP8 scaling without scale_d: asked before the kernel, their faults not applicable") {
  const auto lt = make_gemm_kernel("model_gemm_e4m3_ltcall_bf16out");
  const auto lt8 = make_gemm_kernel("model_gemm_e4m3_ltcall_e4m3out");
  const auto any = make_gemm_kernel("model_gemm_e4m3_scaled");
  REQUIRE(lt);
  REQUIRE(lt8);
  REQUIRE(any);
  CHECK(lt->traits().shape_multiple == 16);
  CHECK(lt->can_implement_shape(48, 32, 64).ok);
  const Support no = lt->can_implement_shape(48, 40, 64);
  CHECK_FALSE(no.ok);
  CHECK(no.reason.find("multiples of 16") != std::string::npos);
  CHECK(any->can_implement_shape(48, 40, 63).ok);
  // tail_tile zeroes rows >= 16 floor(M / 16) and columns >= 16 floor(N / 16): nothing at multiples of 16 (checked on a
  // model that takes every shape, bit for bit), so it is not applicable to a kernel declaring them, and is elsewhere.
  const Inputs in16 = uniform_inputs(32, 48, 40, f32, test::seed());
  CHECK(call(*mutant("model_gemm_f32", Fault::TailTile), in16) == honest("model_gemm_f32", in16));
  const Inputs in17 = uniform_inputs(33, 48, 40, f32, test::seed());
  CHECK(call(*mutant("model_gemm_f32", Fault::TailTile), in17) != honest("model_gemm_f32", in17));
  CHECK(fault_not_applicable(Fault::TailTile, lt->traits()).find("no partial tile of 16") != std::string::npos);
  CHECK(fault_not_applicable(Fault::TailTile, any->traits()).empty());
  // scale_d: cuBLASLt with a bf16 D takes scale_a and scale_b only.
  CHECK_FALSE(lt->traits().epilogue.fp8_scale_d);
  CHECK(lt8->traits().epilogue.fp8_scale_d);
  CHECK(fault_not_applicable(Fault::EpiScaleDIgnored, lt->traits()).find("no scale_d") != std::string::npos);
  CHECK(fault_not_applicable(Fault::EpiScaleDIgnored, lt8->traits()).empty());
  CHECK(fault_not_applicable(Fault::EpiScaleBIgnored, lt->traits()).empty());
  CHECK(fault_not_applicable(Fault::EpiAmaxScaled, lt8->traits()).empty());
  EpilogueCase ec;
  ec.active = ec.fp8_scaling = true;
  ec.scale_a = 0.75, ec.scale_b = 1.5, ec.scale_d = 0.3;
  CHECK(epilogue_unsupported(lt->traits(), ec, AlphaBetaCase{}).find("not scale_d") != std::string::npos);
  CHECK(epilogue_unsupported(lt8->traits(), ec, AlphaBetaCase{}).empty());
  ec.scale_d = 1;
  CHECK(epilogue_unsupported(lt->traits(), ec, AlphaBetaCase{}).empty());
  // The traits spec: both keys, and their errors.
  const KernelTraits t = parse_traits_spec("in=e4m3,acc=f32,out=bf16,shape_multiple=16,fp8_scaling=1,fp8_scale_d=0");
  CHECK(t.shape_multiple == 16);
  CHECK(t.epilogue.fp8_scaling);
  CHECK_FALSE(t.epilogue.fp8_scale_d);
  CHECK(describe_traits(t).find("M, N, K multiples of 16") != std::string::npos);
  CHECK_THROWS_WITH_AS(parse_traits_spec("in=f32,shape_multiple=0"), doctest::Contains("an integer in [1, 4096]"), InputError);
  CHECK_THROWS_WITH_AS(parse_traits_spec("in=f32,shape_multiple=16x"), doctest::Contains("an integer in [1, 4096]"), InputError);
  CHECK(parse_traits_spec("in=f32,promote_every=128").promote_every == 128);  // the same integer rule
  CHECK_THROWS_WITH_AS(parse_traits_spec("in=f32,promote_every=128x"), doctest::Contains("promote_every=128x: an integer in [0,"), InputError);
  CHECK_THROWS_AS(parse_traits_spec("in=f32,promote_every=-1"), InputError);
  CHECK_THROWS_WITH_AS(parse_traits_spec("in=f32,fp8_scale_d=0"), doctest::Contains("without fp8_scaling=1"), InputError);
}
