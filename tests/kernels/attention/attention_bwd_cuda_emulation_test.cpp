// tests/kernels/attention/attention_bwd_cuda_emulation_test.cpp — the CUDA attention backward kernels' device code
// (kernels/attention/cuda/attention_bwd_kernel.cuh, attention_bwd_naive.cuh) run on the host without a GPU, as
// attention_cuda_emulation_test.cpp runs the forward's: every CUDA thread a std::thread, __syncthreads a barrier, the
// warp's shuffle an exchange, mma.sync the warp-collective emulation of tests/support/mma_fragments.hpp (exact block
// sums rounded once to f32), the atomics a mutex. The gradients are compared with the exact formulas of
// attention_backward_kernel.hpp evaluated in double from the same codes (the saved LSE an input, as the kernel reads it),
// element by element within the tolerance tests/support/attention_bwd_property.hpp derives. What this proves: the
// fragment maps of K, V, Q, dO, P^T, dS^T and dS, the transposed tiles, the query and key tails, grouped heads, both
// causal alignments, the additive mask, fully masked rows, both load paths, the atomic and the deterministic dQ, the
// padding never written, and that every fault switch moves some element outside the tolerance (the tolerance is not
// vacuous). What it cannot prove: the hardware's MMA, exp2f and atomics — tests/kernels/attention/attention_bwd_gpu_test.cpp
// runs the same check on a device.
#include <doctest/doctest.h>

#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "kernels/attention/attention_kernel.hpp"
#include "oracle/round.hpp"

#include "tests/support/cuda_host_surface.hpp"

#include "kernels/attention/cuda/attention_bwd_kernel.cuh"
#include "kernels/attention/cuda/attention_bwd_naive.cuh"
#include "tests/support/attention_bwd_property.hpp"
#include "tests/support/attention_emulation.hpp"
#include "tests/support/mma_fragments.hpp"

using namespace fpcert;
using namespace fpcert::mma_emulated;
using namespace fpcert::test;
using namespace fpcert::test::attn_emu;
using namespace fpcert::test::attn_bwd;

namespace {

unsigned char* g_smem = nullptr;  // the running CTA's dynamic shared memory (CTAs run one after the other)
std::mutex g_atomics;

}  // namespace

// The warp's shuffle, the conversions and the MMA are attention_cuda_emulation_test.cpp's (tests/support/
// attention_emulation.hpp); what the backward adds:
namespace fpcert::mma_emulated {

float emulated_from16(bool bf, std::uint16_t c) { return static_cast<float>(to_double(fmt16(bf), c)); }
void emulated_atomic_add_f32(float* p, float v) {
  const std::lock_guard<std::mutex> lock(g_atomics);
  *p = *p + v;  // host: IEEE binary32, -ffp-contract=off
}
void emulated_atomic_add_bf16(std::uint16_t* p, float v) {
  const std::lock_guard<std::mutex> lock(g_atomics);
  const double sum = to_double(bf16, *p) + to_double(bf16, emulated_round16(true, v));  // exact: two bf16 values
  *p = static_cast<std::uint16_t>(round_double(bf16, sum, Rounder::nearest(bf16)).code);
}
unsigned char* emulated_dynamic_smem() { return g_smem; }

}  // namespace fpcert::mma_emulated

namespace {

struct Out {
  std::vector<std::uint16_t> dq, dk, dv;
};

BwdArgs make_args(const Problem& p) {
  BwdArgs a{};
  a.batch = p.batch, a.len_q = p.lq, a.len_k = p.lk, a.heads_q = p.hq, a.heads_kv = p.hkv;
  a.q = p.q.data(), a.k = p.k.data(), a.v = p.v.data(), a.o = p.o.data(), a.d_o = p.d_o.data();
  a.ldq = a.ldk = a.ldv = a.ldo = a.lddo = p.ld;
  a.lse = p.lse.data();
  a.mask = p.masked ? p.mask.data() : nullptr, a.ldm = p.lk;
  a.causal = p.causal != CausalAlign::None;
  a.causal_off = causal_off(p);
  a.c = attention_scale_log2e(p.scale);
  a.fold = a.scale = p.scale;
  a.dq_scales = 1;
  a.vec = p.ld % 8 == 0;
  a.lddq = a.lddk = a.lddv = p.ldg;
  return a;
}

/// The launches of attention_bwd_cuda.cu's flash kernel, CTA after CTA: D, dK/dV (with the atomic dQ), and the
/// conversion or the deterministic dQ kernel.
Out run_flash(const Problem& p, BwdArgs a, bool det, bool bf16_acc = false) {
  const std::int64_t rq = p.batch * p.hq * p.lq, rk = p.batch * p.hkv * p.lk;
  Out out;
  out.dq.assign(static_cast<std::size_t>(rq * p.ldg), std::uint16_t{0xFFFF});
  out.dk.assign(static_cast<std::size_t>(rk * p.ldg), std::uint16_t{0xFFFF});
  out.dv.assign(static_cast<std::size_t>(rk * p.ldg), std::uint16_t{0xFFFF});
  a.dq = out.dq.data(), a.dk = out.dk.data(), a.dv = out.dv.data();
  std::vector<float> delta(static_cast<std::size_t>(rq), NAN), acc(det || bf16_acc ? 0 : static_cast<std::size_t>(rq * p.d), 0.0f);
  std::vector<std::uint16_t> acc16(bf16_acc ? static_cast<std::size_t>(rq * p.d) : 0, 0);
  a.delta = delta.data();
  a.dq_acc = acc.empty() ? nullptr : acc.data();
  a.dq_acc16 = acc16.empty() ? nullptr : acc16.data();
  run_cta(32, 0, 0, 0, [&] { p.bf ? bwd_dot<std::uint16_t, true>(a, p.d, a.o, a.ldo, a.d_o, a.lddo) : bwd_dot<std::uint16_t, false>(a, p.d, a.o, a.ldo, a.d_o, a.lddo); });
  const int d = p.d;
  std::vector<unsigned char> smem(static_cast<std::size_t>(d == 64 ? bwd_kv_smem_bytes<64>() : bwd_kv_smem_bytes<128>()));
  g_smem = smem.data();
  const auto kv = [&] {
    if (d == 64) p.bf ? bwd_flash_kv<true, 64>(a) : bwd_flash_kv<false, 64>(a);
    else p.bf ? bwd_flash_kv<true, 128>(a) : bwd_flash_kv<false, 128>(a);
  };
  for (unsigned bz = 0; bz < p.batch; ++bz)
    for (unsigned by = 0; by < p.hkv; ++by)
      for (unsigned bx = 0; bx < (p.lk + kBwdBlock - 1) / kBwdBlock; ++bx) run_cta(kBwdThreads, bx, by, bz, kv);
  if (!det) {
    run_cta(1, 0, 0, 0, [&] { p.bf ? bwd_dq_convert<true>(a, d) : bwd_dq_convert<false>(a, d); });
    return out;
  }
  const auto dq = [&] {
    if (d == 64) p.bf ? bwd_flash_dq<true, 64>(a) : bwd_flash_dq<false, 64>(a);
    else p.bf ? bwd_flash_dq<true, 128>(a) : bwd_flash_dq<false, 128>(a);
  };
  for (unsigned bz = 0; bz < p.batch; ++bz)
    for (unsigned by = 0; by < p.hq; ++by)
      for (unsigned bx = 0; bx < (p.lq + kBwdBlock - 1) / kBwdBlock; ++bx) run_cta(kBwdThreads, bx, by, bz, dq);
  return out;
}

/// The flash kernel's gradients graded by attention_bwd_property.hpp.
Verdict grade_flash(const Problem& p, const Grads& ref, const Out& got) {
  const Format& f = fmt16(p.bf);
  return grade(p, ref, values(f, got.dq), values(f, got.dk), values(f, got.dv), flash_tolerance(p.bf));
}

/// The emulated problems (each emulated CTA is 128 host threads): f16 for the first and the last of problems(), bf16
/// for the second (head dim 128, bottom-right, masked rows).
std::vector<Named> emulated_problems() {
  const std::vector<Named> f = problems(false), b = problems(true);
  return {f[0], b[1], f[2]};
}

}  // namespace

TEST_CASE("attention backward flash device code, emulated: atomic and deterministic dQ, dK, dV within the derived tolerance") {
  for (const Named& np : emulated_problems()) {
    const Problem& p = np.p;
    const Grads ref = reference(p);
    for (const bool det : {false, true}) {
      CAPTURE(np.name);
      CAPTURE(det);
      const Verdict v = grade_flash(p, ref, run_flash(p, make_args(p), det));
      const std::string label = std::string(np.name) + (det ? " (deterministic dQ)" : " (atomic dQ)");
      MESSAGE(label << ": " << v.elems << " elements, " << v.nonzero
                      << " nonzero, worst err/tol " << v.worst);
      CHECK(v.bad == 0);
      CHECK(v.nonzero > v.elems / 2);  // not a problem of zeros
      CHECK(v.worst > 0.001);          // the rounding errors are a visible part of the tolerance
    }
  }
}

TEST_CASE("attention backward flash device code, emulated: every fault switch moves the gradients") {
  const std::vector<Named> ps = emulated_problems();
  struct Fault {
    const char* name;
    std::size_t problem;
    bool det, bf16_acc, must_exceed;
    void (*set)(BwdArgs&);
  };
  const Fault faults[] = {
      {"d_from_wrong_o", 0, false, false, true, [](BwdArgs& a) { a.d_from_do = true; }},
      {"no_d_subtract", 0, true, false, true, [](BwdArgs& a) { a.no_d = true; }},
      {"dq_scale_missing", 0, false, false, true, [](BwdArgs& a) { a.dq_scales = 0; }},
      {"dq_scale_twice", 2, true, false, true, [](BwdArgs& a) { a.dq_scales = 2; }},
      {"lse_wrong_base", 1, false, false, true, [](BwdArgs& a) { a.lse_wrong_base = true; }},
      {"gqa_not_summed", 2, false, false, true, [](BwdArgs& a) { a.gqa_last = true; }},
      {"causal_off_by_one", 2, true, false, true, [](BwdArgs& a) { a.causal_off += 1; }},
      {"zeros", 1, false, false, true, [](BwdArgs& a) { a.zeros = true; }},
      // bf16 atomics: an error of the bf16 unit per addition, against a tolerance of the f16 unit; counted, not required
      // to exceed here (the suite's envelope for the declared f32 accumulation is the tight judge).
      {"dq_atomics_bf16", 0, false, true, false, [](BwdArgs&) {}},
  };
  std::map<std::pair<std::size_t, bool>, Out> clean_runs;  // (problem, deterministic) -> the correct kernel's gradients
  for (const Fault& f : faults) {
    CAPTURE(f.name);
    const Problem& p = ps[f.problem].p;
    const Grads ref = reference(p);
    BwdArgs a = make_args(p);
    const auto key = std::make_pair(f.problem, f.det);
    if (!clean_runs.count(key)) clean_runs.emplace(key, run_flash(p, a, f.det));
    const Out& clean = clean_runs.at(key);
    f.set(a);
    const Out bad = run_flash(p, a, f.det, f.bf16_acc);
    const Verdict v = grade_flash(p, ref, bad);
    const std::string label = f.name;
    MESSAGE(label << ": " << v.bad << " of " << v.elems << " elements outside the tolerance");
    CHECK((bad.dq != clean.dq || bad.dk != clean.dk || bad.dv != clean.dv));
    if (f.must_exceed) CHECK(v.bad > 0);
  }
}

namespace {

/// The naive kernel's launches on the host (f32 codes): D by one warp, the rest by one thread each (grid-stride loops).
struct NaiveOut {
  std::vector<float> dq, dk, dv;
};
NaiveOut run_naive(const Problem& p, bool gqa_last) {
  const auto to_f32 = [&](const std::vector<std::uint16_t>& x) {
    std::vector<float> f(x.size());
    for (std::size_t e = 0; e < x.size(); ++e) f[e] = static_cast<float>(to_double(fmt16(p.bf), x[e]));
    return f;
  };
  const std::vector<float> q = to_f32(p.q), k = to_f32(p.k), v = to_f32(p.v), o = to_f32(p.o), d_o = to_f32(p.d_o);
  const std::int64_t rq = p.batch * p.hq * p.lq, rk = p.batch * p.hkv * p.lk;
  NaiveOut out;
  out.dq.assign(static_cast<std::size_t>(rq * p.ldg), NAN);
  out.dk.assign(static_cast<std::size_t>(rk * p.ldg), NAN);
  out.dv.assign(static_cast<std::size_t>(rk * p.ldg), NAN);
  std::vector<float> delta(static_cast<std::size_t>(rq)), pw(static_cast<std::size_t>(rq * p.lk)), dsw(pw.size());
  BwdArgs da{};
  da.batch = p.batch, da.heads_q = p.hq, da.len_q = p.lq, da.delta = delta.data();
  run_cta(32, 0, 0, 0, [&] { bwd_dot<float, false>(da, p.d, o.data(), p.ld, d_o.data(), p.ld); });
  NaiveBwdArgs a{};
  a.len_q = p.lq, a.len_k = p.lk, a.heads_q = p.hq, a.heads_kv = p.hkv, a.d = p.d;
  a.q = q.data(), a.k = k.data(), a.v = v.data(), a.d_o = d_o.data();
  a.ldq = a.ldk = a.ldv = a.lddo = p.ld;
  a.lse = p.lse.data();
  a.mask = p.masked ? p.mask.data() : nullptr, a.ldm = p.lk;
  a.causal = p.causal != CausalAlign::None;
  a.causal_off = causal_off(p);
  a.scale = p.scale, a.dq_scales = 1, a.gqa_last = gqa_last;
  a.delta = delta.data(), a.p = pw.data(), a.ds = dsw.data();
  a.rows = rq, a.kv_rows = rk;
  a.dq = out.dq.data(), a.dk = out.dk.data(), a.dv = out.dv.data();
  a.lddq = a.lddk = a.lddv = p.ldg;
  run_cta(1, 0, 0, 0, [&] { naive_bwd_p(a); });
  run_cta(1, 0, 0, 0, [&] { naive_bwd_dq(a); });
  run_cta(1, 0, 0, 0, [&] { naive_bwd_dkv(a); });
  return out;
}

}  // namespace

TEST_CASE("attention backward naive f32 device code, emulated: within the f32 tolerance, GQA fault refused") {
  for (const Named& np : emulated_problems()) {
    CAPTURE(np.name);
    const Problem& p = np.p;
    const Grads ref = reference(p);
    const auto count_bad = [&](const NaiveOut& got) {
      const Verdict v = grade(p, ref, values(got.dq), values(got.dk), values(got.dv), naive_tolerance());
      const std::string label = np.name;
      MESSAGE(label << ": " << v.bad << " of " << v.elems << " elements outside the tolerance, worst err/tol " << v.worst);
      CHECK(v.nonzero > v.elems / 2);
      return v.bad;
    };
    CHECK(count_bad(run_naive(p, false)) == 0);
    if (p.hq != p.hkv) CHECK(count_bad(run_naive(p, true)) > 0);
  }
}
