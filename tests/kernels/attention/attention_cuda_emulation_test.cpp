// tests/kernels/attention/attention_cuda_emulation_test.cpp — the CUDA attention kernels' device code
// (kernels/attention/cuda/flash_kernel.cuh, naive_kernel.cuh) run on the host, without a GPU: every CUDA thread is a
// std::thread, __syncthreads a std::barrier, __shfl_xor_sync and __any_sync an exchange among the warp's 32 threads, and
// mma.sync the warp-collective emulation of tests/support/mma_fragments.hpp (the PTX ISA's fragment tables element by
// element; the block's exact products added to the accumulator, rounded once to f32 nearest). The flash kernel's output
// is then predictable bit for bit by a scalar model written here from the declared arithmetic, row by row (score by
// score in k-steps of 16, the online softmax per key block of 64 with the quad's sum order, P rounded into f16/bf16,
// P V in k-steps of 16 keys, the reciprocal, the LSE). What this proves: the fragment maps of Q, K, V and P, the
// transposed V tile, both load paths, the query and key tails, grouped heads, both causal alignments, the additive mask,
// fully masked rows, ldo's padding, and every fault switch. Both kernels also meet the GPU test's long-double property
// check (tests/support/attention_property.hpp) on its inputs, with glibc's exp2f/expf for CUDA's and (flash) an MMA
// rounding to nearest: the tolerance's derivation is exercised before any device runs it. What it cannot prove: the
// hardware's MMA, exp2f and expf — tests/suites/attention_gpu_test.cpp does that on a device. Last, the host's c =
// RN(s log2 e) (scale_log2e) against a long-double evaluation.
#include <doctest/doctest.h>

#include <array>
#include <barrier>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "kernels/attention/attention_kernel.hpp"
#include "oracle/round.hpp"

// ---- the CUDA surface the kernel uses, for the host ----
#include "tests/support/cuda_host_surface.hpp"

#include "kernels/attention/cuda/flash_kernel.cuh"
#include "kernels/attention/cuda/naive_kernel.cuh"
#include "tests/support/attention_codes.hpp"
#include "tests/support/attention_emulation.hpp"
#include "tests/support/attention_property.hpp"
#include "tests/support/mma_fragments.hpp"

using namespace fpcert;
using namespace fpcert::mma_emulated;
using namespace fpcert::test;
using namespace fpcert::test::attn_emu;

namespace {

const Format& fmt16(bool bf) { return bf ? bf16 : f16; }

}  // namespace

namespace fpcert::mma_emulated {

float emulated_shfl_xor(float v, int mask) {
  const int lane = static_cast<int>(threadIdx.x) & 31;
  tl_shuffle->v[lane] = v;
  tl_shuffle->bar.arrive_and_wait();
  const float r = tl_shuffle->v[lane ^ mask];
  tl_shuffle->bar.arrive_and_wait();
  return r;
}
std::uint16_t emulated_round16(bool bf, float x) {
  return static_cast<std::uint16_t>(round_double(fmt16(bf), x, Rounder::nearest(fmt16(bf))).code);
}
bool emulated_any(bool v) {
  const int lane = static_cast<int>(threadIdx.x) & 31;
  tl_shuffle->v[lane] = v ? 1.0f : 0.0f;
  tl_shuffle->bar.arrive_and_wait();
  bool any = false;
  for (float x : tl_shuffle->v) any = any || x != 0.0f;
  tl_shuffle->bar.arrive_and_wait();
  return any;
}
float emulated_via_f16(float p) { return static_cast<float>(to_double(f16, emulated_round16(false, p))); }
float emulated_via_e4m3(float p) {
  const Rounder sat{Rounding::NearestEven, Saturation::Finite, NanPayload::Preserve};
  return static_cast<float>(to_double(e4m3, round_double(e4m3, p, sat).code));
}
void emulated_flash_mma(bool bf, float (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2]) {
  warp_mma(*tl_flash_warp, bf ? Mma::BF16 : Mma::F16, static_cast<int>(threadIdx.x) & 31, d, a, b,
           [bf](const std::uint32_t* regs, int i) { return to_double(fmt16(bf), (regs[i / 2] >> (16 * (i % 2))) & 0xFFFF); },
           [](double x) { return static_cast<double>(static_cast<float>(x)); });
}

}  // namespace fpcert::mma_emulated

namespace {

constexpr std::uint16_t kSentinel = 0x7E5A;  // a NaN code in f16 and bf16: O's pre-fill and its ldo padding
constexpr float kLseSentinel = -12345.5f;

/// A problem: Q, K, V codes (values r / 2^8, |r| <= 512, for f16; r / 2^6, |r| <= 127, for bf16: exact in the format,
/// products and block sums exact in double), the additive mask (finite values and -Inf, row 3 all -Inf), the call.
struct Problem {
  bool bf = false;
  int d = 64;
  std::int64_t batch, hq, hkv, lq, lk, ld, ldo;
  CausalAlign causal = CausalAlign::None;
  bool masked = false;
  std::vector<std::uint16_t> q, k, v;
  std::vector<float> mask;
};

Problem make_problem(bool bf, int d, std::int64_t batch, std::int64_t hq, std::int64_t hkv, std::int64_t lq, std::int64_t lk,
                     std::int64_t pad, CausalAlign causal, bool masked, std::uint64_t stream) {
  Problem p{bf, d, batch, hq, hkv, lq, lk, d + pad, d + 4, causal, masked, {}, {}, {}, {}};
  std::uint64_t ctr = 0;
  p.q = attention_test_codes(bf, d, batch * hq * lq, p.ld, stream, ctr);
  p.k = attention_test_codes(bf, d, batch * hkv * lk, p.ld, stream, ctr);
  p.v = attention_test_codes(bf, d, batch * hkv * lk, p.ld, stream, ctr);
  if (masked) p.mask = attention_test_mask(lq, lk, stream + 1);
  return p;
}

FlashArgs make_args(const Problem& p, float scale) {
  FlashArgs a{};
  a.len_q = p.lq, a.len_k = p.lk, a.heads_q = p.hq, a.heads_kv = p.hkv;
  a.q = p.q.data(), a.ldq = p.ld, a.k = p.k.data(), a.ldk = p.ld, a.v = p.v.data(), a.ldv = p.ld;
  a.mask = p.masked ? p.mask.data() : nullptr, a.ldm = p.lk;
  a.causal = p.causal != CausalAlign::None;
  a.causal_off = p.causal == CausalAlign::BottomRight ? p.lk - p.lq : 0;
  a.keys = p.lk;
  a.c = static_cast<float>(static_cast<double>(scale) * 1.4426950408889634);
  a.post_scale = 1.0f;
  a.fold = scale;
  a.vec = p.ld % 8 == 0;
  return a;
}

struct Output {
  std::vector<std::uint16_t> o;
  std::vector<float> lse;
};

/// The kernel's grid, CTA after CTA, 128 host threads per CTA.
Output run_emulated(const Problem& p, FlashArgs a) {
  Output out;
  out.o.assign(static_cast<std::size_t>(p.batch * p.hq * p.lq * p.ldo), kSentinel);
  out.lse.assign(static_cast<std::size_t>(p.batch * p.hq * p.lq), kLseSentinel);
  a.o = out.o.data(), a.ldo = p.ldo, a.lse = out.lse.data();
  const unsigned gx = static_cast<unsigned>((p.lq + kBQ - 1) / kBQ);
  for (unsigned bz = 0; bz < p.batch; ++bz)
    for (unsigned by = 0; by < p.hq; ++by)
      for (unsigned bx = 0; bx < gx; ++bx)
        run_cta(kFlashThreads, bx, by, bz, [&] {
          if (p.d == 64) p.bf ? flash_fwd<true, 64>(a) : flash_fwd<false, 64>(a);
          else p.bf ? flash_fwd<true, 128>(a) : flash_fwd<false, 128>(a);
        });
  return out;
}

/// The declared arithmetic, one row at a time, in the kernel's order (the header of flash_kernel.cuh).
Output run_model(const Problem& p, const FlashArgs& a) {
  Output out;
  out.o.assign(static_cast<std::size_t>(p.batch * p.hq * p.lq * p.ldo), kSentinel);
  out.lse.assign(static_cast<std::size_t>(p.batch * p.hq * p.lq), kLseSentinel);
  const auto val = [&](std::uint16_t code) { return to_double(fmt16(p.bf), code); };
  const int d = p.d;
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t h = 0; h < p.hq; ++h)
      for (std::int64_t i = 0; i < p.lq; ++i) {
        const std::int64_t hk = h / (p.hq / p.hkv), row = (b * p.hq + h) * p.lq + i;
        const std::uint16_t* q = p.q.data() + row * p.ld;
        const std::int64_t kv0 = (b * p.hkv + hk) * p.lk;
        const std::int64_t q0 = i / kBQ * kBQ;
        std::int64_t kend = a.keys;
        if (a.causal) kend = std::min(kend, std::min<std::int64_t>(q0 + kBQ - 1, p.lq - 1) + a.causal_off + 1);
        float mx = -INFINITY, m2 = -INFINITY, l = 0;  // raw running max, RN(mx c), sum
        std::vector<float> o(static_cast<std::size_t>(d), 0.0f);
        for (std::int64_t kb = 0; kb < kend; kb += kBK) {
          float x[kBK], pr[kBK];
          bool vis[kBK];
          float bm = -INFINITY;
          for (int jj = 0; jj < kBK; ++jj) {
            const std::int64_t j = kb + jj;
            float acc = 0;
            for (int kk = 0; kk < d / 16; ++kk) {
              double s = acc;
              for (int c = 16 * kk; c < 16 * kk + 16; ++c) s += j < p.lk ? val(q[c]) * val(p.k[static_cast<std::size_t>((kv0 + j) * p.ld + c)]) : 0.0;
              acc = static_cast<float>(s);
            }
            x[jj] = acc;
            vis[jj] = j < a.keys && (!a.causal || j <= i + a.causal_off);
            if (!vis[jj]) continue;
            if (a.mask) x[jj] = x[jj] + a.mask[i * a.ldm + j] / a.fold;
            bm = std::fmax(bm, x[jj]);
          }
          const float mnx = std::fmax(mx, bm), mn = mnx == -INFINITY ? -INFINITY : mnx * a.c;
          const float alpha = mn == -INFINITY || a.no_rescale ? 1.0f : std::exp2(m2 - mn);
          float part[4] = {0, 0, 0, 0};  // thread t of the quad: keys 8 nt + 2t, 8 nt + 2t + 1, nt ascending
          for (int nt = 0; nt < 8; ++nt)
            for (int t = 0; t < 4; ++t)
              for (int e = 0; e < 2; ++e) {
                const int jj = 8 * nt + 2 * t + e;
                pr[jj] = vis[jj] && mn != -INFINITY ? std::exp2(std::fma(x[jj], a.c, -mn)) : 0.0f;
                part[t] += pr[jj];
              }
          l = l * alpha + ((part[0] + part[1]) + (part[2] + part[3]));
          mx = mnx, m2 = mn;
          for (float& oc : o) oc *= alpha;
          for (int jj = 0; jj < kBK; ++jj) pr[jj] = static_cast<float>(val(emulated_round16(p.bf, a.p_e4m3 ? emulated_via_e4m3(pr[jj]) : pr[jj])));
          for (int c = 0; c < d; ++c)
            for (int kk = 0; kk < 4; ++kk) {
              double s = o[static_cast<std::size_t>(c)];
              for (int jj = 16 * kk; jj < 16 * kk + 16; ++jj) {
                const std::int64_t j = kb + jj;
                s += static_cast<double>(pr[jj]) * (j < p.lk ? val(p.v[static_cast<std::size_t>((kv0 + j) * p.ld + c)]) : 0.0);
              }
              o[static_cast<std::size_t>(c)] = static_cast<float>(s);
            }
        }
        const bool masked = m2 == -INFINITY;
        const float r = 1.0f / l;
        for (int c = 0; c < d; ++c) {
          float y = masked ? 0.0f : o[static_cast<std::size_t>(c)] * r;
          if (a.post_scale != 1.0f) y *= a.post_scale;
          if (a.zeros) y = 0.0f;
          out.o[static_cast<std::size_t>(row * p.ldo + c)] = emulated_round16(p.bf, y);
        }
        float v = INFINITY;
        if (!masked) v = a.lse_no_max ? std::log(l) : mx * a.fold + std::log(l);
        out.lse[static_cast<std::size_t>(row)] = a.zeros ? 0.0f : v;
      }
  return out;
}

/// Bit for bit, padding included (the sentinel where nothing may be written). Returns the count of differing entries.
std::int64_t differences(const Output& x, const Output& y) {
  std::int64_t n = 0;
  for (std::size_t e = 0; e < x.o.size(); ++e) n += x.o[e] != y.o[e];
  for (std::size_t e = 0; e < x.lse.size(); ++e) n += std::bit_cast<std::uint32_t>(x.lse[e]) != std::bit_cast<std::uint32_t>(y.lse[e]);
  return n;
}

void check_case(const Problem& p, const FlashArgs& a, const char* what) {
  CAPTURE(what);
  const Output got = run_emulated(p, a), want = run_model(p, a);
  std::int64_t finite = 0, masked_rows = 0;
  for (std::size_t r = 0; r < want.lse.size(); ++r) (std::isinf(want.lse[r]) ? masked_rows : finite) += 1;
  MESSAGE(std::string(what) << ": " << finite << " rows, " << masked_rows << " fully masked");
  CHECK(finite > 0);
  CHECK(differences(got, want) == 0);
}

std::vector<Problem> problems() {
  std::vector<Problem> ps;
  // f16, head dim 64, query tail (77 = 64 + 13), key tail (130 = 2 x 64 + 2), grouped heads, 16-byte rows.
  ps.push_back(make_problem(false, 64, 1, 2, 1, 77, 130, 8, CausalAlign::None, false, 10));
  // f16, head dim 128, top-left causal, odd leading dimension (the scalar load path).
  ps.push_back(make_problem(false, 128, 1, 1, 1, 70, 100, 3, CausalAlign::TopLeft, false, 20));
  // bf16, head dim 64, bottom-right with len_q > len_k: rows 0..39 see no key; two batches.
  ps.push_back(make_problem(true, 64, 2, 1, 1, 80, 40, 8, CausalAlign::BottomRight, false, 30));
  // f16, additive mask with -Inf entries and row 3 all -Inf.
  ps.push_back(make_problem(false, 64, 1, 1, 1, 65, 129, 8, CausalAlign::None, true, 40));
  return ps;
}

}  // namespace

TEST_CASE("flash attention device code, emulated on the host: bit for bit the declared arithmetic") {
  const std::vector<Problem> ps = problems();
  const char* names[] = {"f16 d64 tails grouped", "f16 d128 top-left scalar loads", "bf16 d64 bottom-right masked rows", "f16 d64 additive mask"};
  for (std::size_t i = 0; i < ps.size(); ++i) check_case(ps[i], make_args(ps[i], 0.125f), names[i]);
}

TEST_CASE("flash attention device code, emulated on the host: every fault switch changes the output as declared") {
  const std::vector<Problem> ps = problems();
  struct Fault {
    const char* name;
    std::size_t problem;
    void (*set)(FlashArgs&);
  };
  const Fault faults[] = {
      {"no_rescale", 0, [](FlashArgs& a) { a.no_rescale = true; }},
      {"scale_after_softmax", 0, [](FlashArgs& a) { a.post_scale = 0.125f, a.c = kLog2e, a.fold = 1.0f; }},
      {"causal_off_by_one", 1, [](FlashArgs& a) { a.causal_off += 1; }},
      {"lse_no_max", 0, [](FlashArgs& a) { a.lse_no_max = true; }},
      {"p_rounded_lower", 3, [](FlashArgs& a) { a.p_e4m3 = true; }},
      {"drop_last_key_block", 0, [](FlashArgs& a) { a.keys = a.len_k / kBK * kBK; }},
      {"zeros", 2, [](FlashArgs& a) { a.zeros = true; }},
  };
  for (const Fault& f : faults) {
    const Problem& p = ps[f.problem];
    FlashArgs a = make_args(p, 0.125f);
    const Output clean = run_model(p, a);
    f.set(a);
    CAPTURE(f.name);
    check_case(p, a, f.name);                      // the switch does in the kernel what the model says
    CHECK(differences(run_model(p, a), clean) > 0);  // and it changes the result
  }
}

TEST_CASE("flash attention device code, emulated on the host: within the GPU test's long-double tolerance") {
  const std::vector<attn_test::Case> cases = attn_test::property_cases();
  const auto as_problem = [](const attn_test::Case& c) {
    const AttentionShape& sh = c.sh;
    const std::int64_t d = sh.head_dim, ld = d + c.pad;
    Problem p{false, static_cast<int>(d), sh.batch, sh.heads_q, sh.heads_kv, sh.len_q, sh.len_k, ld, d + 4, c.causal, c.masked, {}, {}, {}, c.mask};
    const auto codes = [&](const std::vector<double>& x, std::int64_t rows, std::vector<std::uint16_t>& out) {
      const std::vector<std::uint8_t> b = attn_test::pack_rows(x, rows, d, ld, f16);
      out.resize(b.size() / 2);
      std::memcpy(out.data(), b.data(), b.size());
    };
    codes(c.q, sh.batch * sh.heads_q * sh.len_q, p.q);
    codes(c.k, sh.batch * sh.heads_kv * sh.len_k, p.k);
    codes(c.v, sh.batch * sh.heads_kv * sh.len_k, p.v);
    return p;
  };
  const auto grade = [](const attn_test::Case& c, const Problem& p, const FlashArgs& a) {
    const Output got = run_emulated(p, a);
    std::vector<std::uint8_t> bytes(got.o.size() * 2);
    std::memcpy(bytes.data(), got.o.data(), bytes.size());
    return attn_test::grade(c, true, f16, MaskedLse::PosInf, bytes, got.lse, p.ldo);
  };
  for (std::size_t ci = 0; ci < cases.size(); ++ci) {
    CAPTURE(ci);
    const Problem p = as_problem(cases[ci]);
    const attn_test::AttnOutcome o = grade(cases[ci], p, make_args(p, cases[ci].scale));
    MESSAGE("case " << ci << ": O err/tol " << o.o_frac << " over " << o.elems << " elements, LSE err/tol " << o.lse_frac);
    CHECK(o.o_frac <= 1.0);
    CHECK(o.lse_frac <= 1.0);
    CHECK(o.o_frac > 0.01);  // the tolerance is not vacuous: the rounding errors are a visible part of it
  }
  // And it can fail: P rounded to e4m3 before P V (the GPU test's mutant check, here on the emulation).
  const Problem p = as_problem(cases[2]);
  FlashArgs a = make_args(p, cases[2].scale);
  a.p_e4m3 = true;
  const attn_test::AttnOutcome bad = grade(cases[2], p, a);
  MESSAGE("P rounded to e4m3: O err/tol " << bad.o_frac);
  CHECK(bad.o_frac > 1.0);
}

namespace {

/// The naive kernel's three launches on the host: scores and P V by one thread (their grid-stride loops cover every
/// element), the softmax by one warp of 32 threads.
attn_test::AttnOutcome run_naive_emulated(const attn_test::Case& c, float scale, bool lse_no_max) {
  const AttentionShape& sh = c.sh;
  const std::int64_t d = sh.head_dim, ld = d + c.pad, ldo = d + 4;
  const std::int64_t rq = sh.batch * sh.heads_q * sh.len_q, rk = sh.batch * sh.heads_kv * sh.len_k;
  const auto floats = [&](const std::vector<double>& x, std::int64_t rows) {
    const std::vector<std::uint8_t> b = attn_test::pack_rows(x, rows, d, ld, f32);
    std::vector<float> f(b.size() / 4);
    std::memcpy(f.data(), b.data(), b.size());
    return f;
  };
  const std::vector<float> q = floats(c.q, rq), k = floats(c.k, rk), v = floats(c.v, rk);
  std::vector<float> o(static_cast<std::size_t>(rq * ldo), NAN), lse(static_cast<std::size_t>(rq), NAN);
  std::vector<float> ws(static_cast<std::size_t>(rq * (sh.len_k + 2)));
  NaiveArgs a{};
  a.len_q = sh.len_q, a.len_k = sh.len_k, a.heads_q = sh.heads_q, a.heads_kv = sh.heads_kv, a.d = d;
  a.q = q.data(), a.ldq = ld, a.k = k.data(), a.ldk = ld, a.v = v.data(), a.ldv = ld;
  a.mask = c.masked ? c.mask.data() : nullptr, a.ldm = sh.len_k;
  a.causal = c.causal != CausalAlign::None;
  a.causal_off = c.causal == CausalAlign::BottomRight ? sh.len_k - sh.len_q : 0;
  a.scale = scale, a.post_scale = 1.0f;
  a.o = o.data(), a.ldo = ldo, a.lse = lse.data(), a.rows = rq;
  a.s = ws.data(), a.stat = ws.data() + rq * sh.len_k;
  a.lse_no_max = lse_no_max;
  const auto one_thread = [](auto kernel, const NaiveArgs& args) {
    std::thread([&] {
      threadIdx.x = 0, blockIdx.x = 0, blockDim.x = 1, gridDim.x = 1;
      kernel(args);
    }).join();
  };
  one_thread(naive_scores, a);
  {
    ShuffleExchange ex;
    std::vector<std::thread> lanes;
    for (int i = 0; i < 32; ++i)
      lanes.emplace_back([&, i] {
        threadIdx.x = static_cast<unsigned>(i), blockIdx.x = 0, blockDim.x = 32, gridDim.x = 1;
        tl_shuffle = &ex;
        naive_softmax(a);
      });
    for (auto& t : lanes) t.join();
  }
  one_thread(naive_pv, a);
  std::vector<std::uint8_t> bytes(o.size() * 4);
  std::memcpy(bytes.data(), o.data(), bytes.size());
  return attn_test::grade(c, false, f32, MaskedLse::NegInf, bytes, lse, ldo);
}

}  // namespace

TEST_CASE("naive attention device code, emulated on the host: within the GPU test's long-double tolerance") {
  const std::vector<attn_test::Case> cases = attn_test::property_cases();
  for (std::size_t ci = 0; ci < cases.size(); ++ci) {
    CAPTURE(ci);
    const attn_test::AttnOutcome o = run_naive_emulated(cases[ci], cases[ci].scale, false);
    MESSAGE("case " << ci << ": O err/tol " << o.o_frac << " over " << o.elems << " elements, LSE err/tol " << o.lse_frac);
    CHECK(o.o_frac <= 1.0);
    CHECK(o.lse_frac <= 1.0);
    CHECK(o.elems > 0);
  }
  // And it can fail: the LSE without the row's maximum.
  const attn_test::AttnOutcome bad = run_naive_emulated(cases[0], cases[0].scale, true);
  MESSAGE("LSE without the max: LSE err/tol " << bad.lse_frac);
  CHECK(bad.lse_frac > 1.0);
}

TEST_CASE("scale_log2e: c = RN_f32(s log2 e), correctly rounded") {
  // log2 e to 64 bits (long double); |s log2 e - s L| < 2^-64 s log2 e, so wherever s L lies farther than 2^-60 |s L|
  // from an f32 midpoint, its rounding to f32 is RN(s log2 e); nearer ones are counted and skipped.
  const long double L = 1.442695040888963407359924681001892137L;
  std::int64_t checked = 0, skipped = 0, wrong = 0;
  for (std::uint32_t bits = 0x3C000000u; bits < 0x40800000u; bits += 97) {  // s in [2^-7, 4): every 97th f32
    const float s = std::bit_cast<float>(bits);
    const long double e = static_cast<long double>(s) * L;
    const float lo = static_cast<float>(e), hi = std::nextafter(lo, e > lo ? INFINITY : -INFINITY);
    const long double mid = (static_cast<long double>(lo) + hi) / 2;
    if (std::fabs(e - mid) < 0x1p-60L * std::fabs(e)) {
      ++skipped;
      continue;
    }
    const float want = std::fabs(e - lo) < std::fabs(e - hi) ? lo : hi;
    ++checked;
    if (scale_log2e(s) != want) {
      if (++wrong <= 3) MESSAGE("s = " << s << ": " << scale_log2e(s) << ", want " << want);
    }
  }
  MESSAGE(checked << " scales checked, " << skipped << " too near a midpoint for long double");
  CHECK(checked > 100000);
  CHECK(wrong == 0);
  CHECK(scale_log2e(1.0f) == 0x1.715476p+0f);  // RN_f32(log2 e)
}
