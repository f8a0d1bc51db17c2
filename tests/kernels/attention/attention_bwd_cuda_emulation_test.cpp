// tests/kernels/attention/attention_bwd_cuda_emulation_test.cpp — the CUDA attention backward kernels' device code
// (kernels/attention/cuda/attention_bwd_kernel.cuh, attention_bwd_naive.cuh) run on the host without a GPU, as
// attention_cuda_emulation_test.cpp runs the forward's: every CUDA thread a std::thread, __syncthreads a barrier, the
// warp's shuffle an exchange, mma.sync the warp-collective emulation of tests/support/mma_fragments.hpp (exact block
// sums rounded once to f32), the atomics a mutex. The gradients are compared with the exact formulas of
// attention_backward_kernel.hpp evaluated in double from the same codes (the saved LSE an input, as the kernel reads it),
// element by element within the tolerance derived below. What this proves: the fragment maps of K, V, Q, dO, P^T, dS^T
// and dS, the transposed tiles, the query and key tails, grouped heads, both causal alignments, the additive mask, fully
// masked rows, the atomic and the deterministic dQ, the padding never written, and that every fault switch moves some
// element outside the tolerance (the tolerance is not vacuous). What it cannot prove: the hardware's MMA, exp2f and
// atomics — tests/kernels/attention/attention_bwd_gpu_test.cpp does that on a device.
//
// Tolerance, per element y = sum_t a_t b_t of a gradient (dV: P dO; dK: s dS q; dQ: s dS k), with M = sum_t |a_t b_t|
// where dS's magnitude is bounded by |P| (|dP| + |D|): the kernel rounds each P (or dS) once into the input format
// (relative u_in: 2^-11 f16, 2^-8 bf16); P itself is exp2f (2 ulp) of an fma whose argument carries the folded
// scale's and mask's roundings (a few 2^-24 |z|, |z| < 8 here), dP and D are f32 sums of exact products (at most
// 128 terms: 2^-17 relative to their magnitudes), the MMA chains add at most 4 x 64 terms in f32 (2^-16 M), the scale
// one 2^-24; the output is rounded once (u_out |y|). So |y~ - y| <= u_out |y| + (u_in + 2^-14) M (u_in M for the
// P/dS rounding, 2^-14 M covering everything in f32 with room), which the check takes with a factor 2 on the M term.
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
#include "tests/support/attention_emulation.hpp"
#include "tests/support/mma_fragments.hpp"

using namespace fpcert;
using namespace fpcert::mma_emulated;
using namespace fpcert::test;
using namespace fpcert::test::attn_emu;

namespace {

unsigned char* g_smem = nullptr;  // the running CTA's dynamic shared memory (CTAs run one after the other)
std::mutex g_atomics;

const Format& fmt16(bool bf) { return bf ? bf16 : f16; }

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

constexpr std::uint16_t kSentinel = 0x7E5A;  // a NaN code in f16 and bf16: the outputs' pre-fill and ld padding

/// A problem: Q, K, V, O, dO codes (emulation_codes: exact values, NaN codes in the ld padding), the additive mask
/// (emulation_mask: finite values and -Inf, row 3 all -Inf), the saved LSE (RN_f32 of the exact log-sum-exp; +Inf for a
/// row that sees no key).
struct Problem {
  bool bf = false;
  int d = 64;
  std::int64_t batch, hq, hkv, lq, lk, ld, ldg;  // ld: inputs' row stride; ldg: the gradients'
  CausalAlign causal = CausalAlign::None;
  bool masked = false;
  float scale = 0.125f;
  std::vector<std::uint16_t> q, k, v, o, d_o;
  std::vector<float> mask, lse;
};

std::int64_t causal_off(const Problem& p) { return p.causal == CausalAlign::BottomRight ? p.lk - p.lq : 0; }
std::int64_t kv_row(const Problem& p, std::int64_t b, std::int64_t h) { return (b * p.hkv + h / (p.hq / p.hkv)) * p.lk; }

/// z_ij = s q_i . k_j + mask_ij in double, -Inf where key j is hidden from query i.
double score(const Problem& p, std::int64_t b, std::int64_t h, std::int64_t i, std::int64_t j) {
  if (p.causal != CausalAlign::None && j > i + causal_off(p)) return -INFINITY;
  const auto val = [&](std::uint16_t c) { return to_double(fmt16(p.bf), c); };
  const std::int64_t r = (b * p.hq + h) * p.lq + i, kr = kv_row(p, b, h) + j;
  double x = 0;
  for (int c = 0; c < p.d; ++c) x += val(p.q[static_cast<std::size_t>(r * p.ld + c)]) * val(p.k[static_cast<std::size_t>(kr * p.ld + c)]);
  return p.scale * x + (p.masked ? p.mask[static_cast<std::size_t>(i * p.lk + j)] : 0.0);
}

Problem make_problem(bool bf, int d, std::int64_t batch, std::int64_t hq, std::int64_t hkv, std::int64_t lq, std::int64_t lk,
                     std::int64_t pad, CausalAlign causal, bool masked, std::uint64_t stream) {
  Problem p{bf, d, batch, hq, hkv, lq, lk, d + pad, d + 5, causal, masked, 0.125f, {}, {}, {}, {}, {}, {}, {}};
  std::uint64_t ctr = 0;
  const std::int64_t rq = batch * hq * lq, rk = batch * hkv * lk;
  p.q = emulation_codes(bf, d, rq, p.ld, stream, ctr);
  p.k = emulation_codes(bf, d, rk, p.ld, stream, ctr);
  p.v = emulation_codes(bf, d, rk, p.ld, stream, ctr);
  p.o = emulation_codes(bf, d, rq, p.ld, stream, ctr);
  p.d_o = emulation_codes(bf, d, rq, p.ld, stream, ctr);
  if (masked) p.mask = emulation_mask(lq, lk, stream + 1);
  p.lse.resize(static_cast<std::size_t>(rq));
  for (std::int64_t b = 0; b < batch; ++b)
    for (std::int64_t h = 0; h < hq; ++h)
      for (std::int64_t i = 0; i < lq; ++i) {
        double m = -INFINITY, l = 0;
        std::vector<double> z(static_cast<std::size_t>(lk));
        for (std::int64_t j = 0; j < lk; ++j) m = std::fmax(m, z[static_cast<std::size_t>(j)] = score(p, b, h, i, j));
        for (double zj : z) l += zj == -INFINITY ? 0.0 : std::exp(zj - m);
        p.lse[static_cast<std::size_t>((b * hq + h) * lq + i)] = m == -INFINITY ? INFINITY : static_cast<float>(m + std::log(l));
      }
  return p;
}

/// A gradient: values (double) and M = sum of |terms| per element (the tolerance's scale), row-major [rows][d].
struct Grad {
  std::vector<double> y, m;
};
struct Grads {
  Grad dq, dk, dv;
};

/// The exact formulas (attention_backward_kernel.hpp) in double at the problem's codes and saved LSE.
Grads reference(const Problem& p) {
  const auto val = [&](std::uint16_t c) { return to_double(fmt16(p.bf), c); };
  const std::int64_t rq = p.batch * p.hq * p.lq, rk = p.batch * p.hkv * p.lk, d = p.d;
  Grads g;
  for (Grad* x : {&g.dq, &g.dk, &g.dv}) {
    const std::int64_t rows = x == &g.dq ? rq : rk;
    x->y.assign(static_cast<std::size_t>(rows * d), 0.0);
    x->m.assign(static_cast<std::size_t>(rows * d), 0.0);
  }
  const auto at = [&](std::int64_t row, std::int64_t c) { return static_cast<std::size_t>(row * d + c); };
  const auto in = [&](const std::vector<std::uint16_t>& t, std::int64_t row, std::int64_t c) { return val(t[static_cast<std::size_t>(row * p.ld + c)]); };
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t h = 0; h < p.hq; ++h)
      for (std::int64_t i = 0; i < p.lq; ++i) {
        const std::int64_t r = (b * p.hq + h) * p.lq + i;
        const double lse = p.lse[static_cast<std::size_t>(r)];
        double dd = 0, dd_abs = 0;
        for (std::int64_t c = 0; c < d; ++c) dd += in(p.d_o, r, c) * in(p.o, r, c), dd_abs += std::fabs(in(p.d_o, r, c) * in(p.o, r, c));
        for (std::int64_t j = 0; j < p.lk; ++j) {
          const double z = score(p, b, h, i, j);
          const double pr = std::isinf(lse) || z == -INFINITY ? 0.0 : std::exp(z - lse);
          const std::int64_t kr = kv_row(p, b, h) + j;
          double dp = 0, dp_abs = 0;
          for (std::int64_t c = 0; c < d; ++c) dp += in(p.d_o, r, c) * in(p.v, kr, c), dp_abs += std::fabs(in(p.d_o, r, c) * in(p.v, kr, c));
          const double ds = pr * (dp - dd), ds_abs = pr * (dp_abs + dd_abs);
          for (std::int64_t c = 0; c < d; ++c) {
            g.dv.y[at(kr, c)] += pr * in(p.d_o, r, c);
            g.dv.m[at(kr, c)] += std::fabs(pr * in(p.d_o, r, c));
            g.dk.y[at(kr, c)] += p.scale * ds * in(p.q, r, c);
            g.dk.m[at(kr, c)] += p.scale * ds_abs * std::fabs(in(p.q, r, c));
            g.dq.y[at(r, c)] += p.scale * ds * in(p.k, kr, c);
            g.dq.m[at(r, c)] += p.scale * ds_abs * std::fabs(in(p.k, kr, c));
          }
        }
      }
  return g;
}

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

/// `threads` host threads of one CTA (blockIdx bx, by, bz) running f, with their warps' exchanges.
template <class F>
void run_cta(int threads, unsigned bx, unsigned by, unsigned bz, F f) {
  std::barrier<> block_barrier(threads);
  std::vector<std::unique_ptr<WarpExchange>> warps(static_cast<std::size_t>((threads + 31) / 32));
  std::vector<std::unique_ptr<ShuffleExchange>> shuffles(warps.size());
  for (auto& w : warps) w = std::make_unique<WarpExchange>();
  for (auto& s : shuffles) s = std::make_unique<ShuffleExchange>();
  std::vector<std::thread> ts;
  for (int i = 0; i < threads; ++i)
    ts.emplace_back([&, i] {
      threadIdx.x = static_cast<unsigned>(i);
      blockIdx.x = bx, blockIdx.y = by, blockIdx.z = bz;
      blockDim.x = static_cast<unsigned>(threads), gridDim.x = 1;
      tl_block_barrier = &block_barrier;
      tl_flash_warp = warps[static_cast<std::size_t>(i / 32)].get();
      tl_shuffle = shuffles[static_cast<std::size_t>(i / 32)].get();
      f();
    });
  for (auto& t : ts) t.join();
}

/// The launches of attention_bwd_cuda.cu's flash kernel, CTA after CTA: D, dK/dV (with the atomic dQ), and the
/// conversion or the deterministic dQ kernel.
Out run_flash(const Problem& p, BwdArgs a, bool det, bool bf16_acc = false) {
  const std::int64_t rq = p.batch * p.hq * p.lq, rk = p.batch * p.hkv * p.lk;
  Out out;
  out.dq.assign(static_cast<std::size_t>(rq * p.ldg), kSentinel);
  out.dk.assign(static_cast<std::size_t>(rk * p.ldg), kSentinel);
  out.dv.assign(static_cast<std::size_t>(rk * p.ldg), kSentinel);
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

/// Elements outside the tolerance (and padding written, or a valid element left at the sentinel), over the three
/// gradients; `worst` the largest |err| / tol.
struct Verdict {
  std::int64_t bad = 0, elems = 0, nonzero = 0;
  double worst = 0;
};
Verdict grade(const Problem& p, const Grads& ref, const Out& got) {
  const double u_in = p.bf ? 0x1p-8 : 0x1p-11, u_out = u_in;
  Verdict v;
  const auto one = [&](const Grad& r, const std::vector<std::uint16_t>& codes) {
    const std::int64_t rows = static_cast<std::int64_t>(codes.size()) / p.ldg;
    for (std::int64_t row = 0; row < rows; ++row)
      for (std::int64_t c = 0; c < p.ldg; ++c) {
        const std::uint16_t code = codes[static_cast<std::size_t>(row * p.ldg + c)];
        if (c >= p.d) {
          v.bad += code != kSentinel;  // the padding is never written
          continue;
        }
        const std::size_t e = static_cast<std::size_t>(row * p.d + c);
        const double y = to_double(fmt16(p.bf), code), tol = u_out * std::fabs(r.y[e]) + 2 * (u_in + 0x1p-14) * r.m[e];
        ++v.elems;
        v.nonzero += y != 0;
        const double err = std::fabs(y - r.y[e]);
        if (!(err <= tol)) ++v.bad;  // NaN (the sentinel, a stray padded read) included
        else if (tol > 0) v.worst = std::max(v.worst, err / tol);
      }
  };
  one(ref.dq, got.dq), one(ref.dk, got.dk), one(ref.dv, got.dv);
  return v;
}

struct Named {
  const char* name;
  Problem p;
};
std::vector<Named> problems() {
  std::vector<Named> ps;
  // f16, head dim 64, two query heads on one key/value head, query tail (77 = 64 + 13), key tail (70 = 64 + 6), rows
  // of 72 (the 16-byte load path).
  ps.push_back({"f16 d64 grouped tails", make_problem(false, 64, 1, 2, 1, 77, 70, 8, CausalAlign::None, false, 110)});
  // bf16, head dim 128, bottom-right causal with len_q > len_k (rows 0..39 see no key: LSE +Inf), two batches, odd
  // row stride (the element load path).
  ps.push_back({"bf16 d128 bottom-right masked rows", make_problem(true, 128, 2, 1, 1, 80, 40, 3, CausalAlign::BottomRight, false, 120)});
  // f16, head dim 64, top-left causal and the additive mask (-Inf entries, row 3 all -Inf), 4 heads on 2.
  ps.push_back({"f16 d64 top-left additive mask", make_problem(false, 64, 1, 4, 2, 65, 129, 3, CausalAlign::TopLeft, true, 130)});
  return ps;
}

}  // namespace

TEST_CASE("attention backward flash device code, emulated: atomic and deterministic dQ, dK, dV within the derived tolerance") {
  for (const Named& np : problems()) {
    const Problem& p = np.p;
    const Grads ref = reference(p);
    for (const bool det : {false, true}) {
      CAPTURE(np.name);
      CAPTURE(det);
      const Verdict v = grade(p, ref, run_flash(p, make_args(p), det));
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
  const std::vector<Named> ps = problems();
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
    const Verdict v = grade(p, ref, bad);
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
  // f32 everywhere: P and dS are not rounded below f32, so the M term's unit is f32's accumulation: sums of at most
  // 4 x 129 fmaf terms (2^-15 M), expf's 2 ulp and the roundings of z (2^-21 relative), the output's 2^-24.
  for (const Named& np : problems()) {
    CAPTURE(np.name);
    const Problem& p = np.p;
    const Grads ref = reference(p);
    const auto count_bad = [&](const NaiveOut& got) {
      std::int64_t bad = 0, nonzero = 0;
      const auto one = [&](const Grad& r, const std::vector<float>& y) {
        for (std::size_t e = 0; e < r.y.size(); ++e) {
          const double yy = y[e / static_cast<std::size_t>(p.d) * static_cast<std::size_t>(p.ldg) + e % static_cast<std::size_t>(p.d)];
          nonzero += yy != 0;
          bad += !(std::fabs(yy - r.y[e]) <= 0x1p-24 * std::fabs(r.y[e]) + 0x1p-14 * r.m[e]);
        }
      };
      one(ref.dq, got.dq), one(ref.dk, got.dk), one(ref.dv, got.dv);
      CHECK(nonzero > 0);
      return bad;
    };
    CHECK(count_bad(run_naive(p, false)) == 0);
    if (p.hq != p.hkv) CHECK(count_bad(run_naive(p, true)) > 0);
  }
}
