// tests/kernels/attention/attention_bwd_gpu_test.cpp — the CUDA attention backward built-ins
// (kernels/attention/cuda/attention_bwd_cuda.cu) on a device: every kernel passes every case of the `attention_backward`
// suite against the exact gradients with evidence, and its mutants (the faults of AttentionBwdBug in the kernel's own
// device code) reach a score of 100 %; and, independent of the suite's runner and bound, each kernel's gradients on the
// problems of tests/support/attention_bwd_property.hpp stay within its derived tolerance of the exact formulas, the
// deterministic kernels are bitwise reproducible (and their dK, dV those of the atomic kernels), and every fault
// switch of the atomic flash kernels moves the gradients (all but dq_atomics_bf16 outside the tolerance). Without a
// device: skipped (exit 77). The host emulation (attention_bwd_cuda_emulation_test.cpp) runs the same property check.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "kernels/attention/attention_backward_kernel.hpp"
#include "kernels/device/device_api.hpp"
#include "tests/support/attention_bwd_property.hpp"
#include "tests/support/row_gpu_checks.hpp"

namespace fpcert {

TEST_CASE("attention backward CUDA built-ins: every case passes against the exact gradients, with evidence") {
  const auto ks = cuda_builtins(Operation::AttentionBackward);
  REQUIRE(ks.size() >= 5);
  // The flash kernels declare head dims 64 and 128 (AttentionBwdTraits::head_dims): the suite's head-dim-256 cases are
  // "not supported" for them, by can_implement's head-dim rule, and for nothing else.
  check_builtins_pass(Operation::AttentionBackward, "attention_backward", ks, [](const std::string& k, const CaseResult& c) {
    const auto t = make_attention_bwd_kernel(k);
    return t && ((!t->attention_bwd_traits().head_dims.empty() && c.reason.find("head_dim") != std::string::npos) ||
                 (t->attention_bwd_traits().exp_form == AttentionExpForm::Base2Folded && c.reason.find("base-2 folded form") != std::string::npos));
  });
}

TEST_CASE("attention backward CUDA built-ins: mutation score 100 %") {
  check_builtins_mutation("attention_backward", cuda_builtins(Operation::AttentionBackward));
}

namespace {

namespace ab = test::attn_bwd;

/// The gradients of one call read back as values (rows of ldg, pre-filled with NaN codes: 0xFFFF, 0xFFFFFFFF).
struct DeviceGrads {
  std::vector<double> dq, dk, dv;
};

/// One call of k on problem p (f16/bf16 codes; f32 values of them for an f32 kernel).
DeviceGrads run_on_device(AttentionBwdKernel& k, const ab::Problem& p, DeviceApi& dev) {
  const AttentionBwdTraits& tr = k.attention_bwd_traits();
  const bool f32_in = *tr.input == f32;
  const std::int64_t rq = p.batch * p.hq * p.lq, rk = p.batch * p.hkv * p.lk;
  std::vector<void*> owned;
  const auto put = [&](const void* src, std::size_t bytes) {
    void* d = dev.alloc(std::max<std::size_t>(bytes, 16));
    owned.push_back(d);
    if (bytes) dev.to_device(d, src, bytes);
    return d;
  };
  const auto tensor = [&](const std::vector<std::uint16_t>& codes) {
    if (!f32_in) return put(codes.data(), codes.size() * 2);
    std::vector<float> x(codes.size());
    for (std::size_t e = 0; e < codes.size(); ++e) x[e] = static_cast<float>(to_double(ab::fmt16(p.bf), codes[e]));
    return put(x.data(), x.size() * 4);
  };
  const std::size_t es = f32_in ? 4 : 2;
  const std::vector<std::uint8_t> fill_q(static_cast<std::size_t>(rq * p.ldg) * es, 0xFF), fill_k(static_cast<std::size_t>(rk * p.ldg) * es, 0xFF);
  AttentionBwdOperands ops;
  ops.shape = {p.batch, p.hq, p.hkv, p.lq, p.lk, p.d};
  ops.q = tensor(p.q), ops.k = tensor(p.k), ops.v = tensor(p.v), ops.o = tensor(p.o), ops.d_o = tensor(p.d_o);
  ops.ldq = ops.ldk = ops.ldv = ops.ldo = ops.lddo = p.ld;
  ops.lse = put(p.lse.data(), p.lse.size() * 4);
  ops.mask = p.masked ? put(p.mask.data(), p.mask.size() * 4) : nullptr;
  ops.ldm = p.lk;
  ops.causal = p.causal;
  ops.scale = p.scale;
  ops.dq = put(fill_q.data(), fill_q.size()), ops.dk = put(fill_k.data(), fill_k.size()), ops.dv = put(fill_k.data(), fill_k.size());
  ops.lddq = ops.lddk = ops.lddv = p.ldg;
  ops.stream = dev.stream();
  k.run(ops);
  dev.synchronize(60000);
  const auto back = [&](void* src, std::size_t n) {
    std::vector<double> y(n);
    if (f32_in) {
      std::vector<float> x(n);
      dev.to_host(x.data(), src, n * 4);
      std::copy(x.begin(), x.end(), y.begin());
    } else {
      std::vector<std::uint16_t> c(n);
      dev.to_host(c.data(), src, n * 2);
      y = ab::values(*tr.dq_out, c);
    }
    return y;
  };
  DeviceGrads g{back(ops.dq, static_cast<std::size_t>(rq * p.ldg)), back(ops.dk, static_cast<std::size_t>(rk * p.ldg)),
                back(ops.dv, static_cast<std::size_t>(rk * p.ldg))};
  for (void* d : owned) dev.free(d);
  return g;
}

bool same_bits(const DeviceGrads& x, const DeviceGrads& y) {
  const auto eq = [](const std::vector<double>& a, const std::vector<double>& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](double u, double v) { return u == v || (std::isnan(u) && std::isnan(v)); });
  };
  return eq(x.dq, y.dq) && eq(x.dk, y.dk) && eq(x.dv, y.dv);
}

}  // namespace

TEST_CASE("attention backward CUDA built-ins: within the derived tolerance of the exact formulas, reproducible, faults visible") {
  auto dev = make_cuda_api();
  REQUIRE(dev);
  for (const bool bf : {false, true}) {
    const std::vector<ab::Named> ps = ab::problems(bf);
    for (const ab::Named& np : ps) {
      const ab::Problem& p = np.p;
      const ab::Grads ref = ab::reference(p);
      std::vector<std::string> names = {bf ? "attention_bwd_bf16_flash_cuda" : "attention_bwd_f16_flash_cuda",
                                        bf ? "attention_bwd_bf16_flash_det_cuda" : "attention_bwd_f16_flash_det_cuda"};
      if (!bf) names.push_back("attention_bwd_f32_naive_cuda");  // f32 values of the f16 codes
      DeviceGrads atomic_dq;
      for (const std::string& name : names) {
        CAPTURE(name);
        CAPTURE(np.name);
        const auto k = make_attention_bwd_kernel(name);
        REQUIRE(k);
        const bool naive = name.find("naive") != std::string::npos, det = name.find("_det_") != std::string::npos;
        const ab::Tolerance tol = naive ? ab::naive_tolerance() : ab::flash_tolerance(bf);
        const DeviceGrads g = run_on_device(*k, p, *dev);
        const ab::Verdict v = ab::grade(p, ref, g.dq, g.dk, g.dv, tol);
        std::printf("%s %s: %lld elements, %lld nonzero, %lld outside, worst err/tol %.3g\n", name.c_str(), np.name,
                    static_cast<long long>(v.elems), static_cast<long long>(v.nonzero), static_cast<long long>(v.bad), v.worst);
        CHECK(v.bad == 0);
        CHECK(v.nonzero > v.elems / 2);
        CHECK(v.worst > 0.001);  // the rounding errors are a visible part of the tolerance
        if (det || naive) CHECK(same_bits(g, run_on_device(*k, p, *dev)));  // no atomics: bit for bit run to run
        if (!det && !naive) atomic_dq = g;
        if (det) CHECK(same_bits(DeviceGrads{{}, atomic_dq.dk, atomic_dq.dv}, DeviceGrads{{}, g.dk, g.dv}));  // same dK, dV code
      }
    }
  }
  // Every fault switch of the atomic flash kernel moves the gradients; all but dq_atomics_bf16 (bf16 units inside this
  // tolerance's coarser f16 terms) beyond the tolerance. Problem 2 has grouped heads and a causal mask, so every fault
  // applies there.
  for (const bool bf : {false, true}) {
    const ab::Named np = ab::problems(bf)[2];
    const ab::Grads ref = ab::reference(np.p);
    const auto k = make_attention_bwd_kernel(bf ? "attention_bwd_bf16_flash_cuda" : "attention_bwd_f16_flash_cuda");
    REQUIRE(k);
    const DeviceGrads clean = run_on_device(*k, np.p, *dev);
    for (AttentionBwdBug b : {AttentionBwdBug::DFromWrongO, AttentionBwdBug::NoDSubtract, AttentionBwdBug::DqScaleMissing,
                              AttentionBwdBug::DqScaleTwice, AttentionBwdBug::LseWrongBase, AttentionBwdBug::GqaNotSummed,
                              AttentionBwdBug::DqAtomicsBf16, AttentionBwdBug::CausalOffByOne, AttentionBwdBug::Zeros}) {
      CAPTURE(to_string(b));
      CAPTURE(bf);
      const auto m = k->with_bug(b);
      REQUIRE(m);
      const DeviceGrads g = run_on_device(*m, np.p, *dev);
      const ab::Verdict v = ab::grade(np.p, ref, g.dq, g.dk, g.dv, ab::flash_tolerance(bf));
      std::printf("%s with %s: %lld of %lld elements outside the tolerance\n", k->name().c_str(), std::string(to_string(b)).c_str(),
                  static_cast<long long>(v.bad), static_cast<long long>(v.elems));
      CHECK_FALSE(same_bits(g, clean));
      if (b != AttentionBwdBug::DqAtomicsBf16) CHECK(v.bad > 0);
    }
  }
}

}  // namespace fpcert
