// tests/kernels/attention/attention_fp8_cuda_emulation_test.cpp — the FP8 flash attention kernel's device code
// (kernels/attention/cuda/flash_fp8_kernel.cuh) run on the host without a GPU, as attention_cuda_emulation_test.cpp runs
// the f16/bf16 one: one std::thread per CUDA thread, the warp's shuffles and mma.sync.m16n8k32 e4m3 emulated from the PTX
// ISA's fragment tables (tests/support/mma_fragments.hpp; the block's exact products added to the accumulator, rounded
// once to f32 nearest). Inputs are e4m3 values in [1/8, 7.5] (products and every block sum exact in double), so the
// output is predictable bit for bit by a scalar model written here from the declared arithmetic: scores in k-steps of
// 32, the running max and the shift RN(RN(m c) - 8), P = exp2(fma(x, c, -shift)) rounded to e4m3, l of the unrounded P
// in the quad's order, P V in k-steps of 32 keys, O = RN_bf16(O~ RN(RN(1 / l) dv)), LSE = RN(m s') + log(l 2^-8). What this
// proves: the e4m3 fragment maps of Q, K^T, P and V (the keys' permutation inside a k-step), the transposed V tile, the
// tails, grouped heads, both causal alignments, fully masked rows, the descales and the offset, and every fault switch.
// What it cannot prove: the hardware's MMA and exp2f (tests/suites/attention_gpu_test.cpp on a device).
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/attention/attention_kernel.hpp"
#include "oracle/round.hpp"
#include "tests/support/cuda_host_surface.hpp"

#include "kernels/attention/cuda/flash_fp8_kernel.cuh"
#include "base/philox.hpp"
#include "tests/support/attention_emulation.hpp"
#include "tests/support/mma_fragments.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;
using namespace fpcert::mma_emulated;
using namespace fpcert::test;
using namespace fpcert::test::attn_emu;

namespace fpcert::mma_emulated {

std::uint8_t emulated_e4m3_code(float x) {
  const Rounder sat{Rounding::NearestEven, Saturation::Finite, NanPayload::Preserve};
  return static_cast<std::uint8_t>(round_double(e4m3, x, sat).code);
}
void emulated_flash_mma_e4m3(float (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2]) {
  warp_mma(*tl_flash_warp, Mma::E4M3, static_cast<int>(threadIdx.x) & 31, d, a, b,
           [](const std::uint32_t* regs, int i) { return to_double(e4m3, (regs[i / 4] >> (8 * (i % 4))) & 0xFF); },
           [](double x) { return static_cast<double>(static_cast<float>(x)); });
}

}  // namespace fpcert::mma_emulated

namespace {

constexpr std::uint16_t kSentinel = 0x7FC1;  // a bf16 NaN: O's pre-fill and its ldo padding
constexpr float kLseSentinel = -12345.5f;

struct Problem {
  int d = 64;
  std::int64_t batch, hq, hkv, lq, lk, ld, ldo;
  CausalAlign causal = CausalAlign::None;
  std::vector<std::uint8_t> q, k, v;
};

/// e4m3 codes of values +-m 2^e with e in [-3, 2] (|x| in [1/8, 7.5]), the row padding 0x7F (e4m3's NaN: a stray read
/// poisons the result).
std::vector<std::uint8_t> codes(int d, std::int64_t rows, std::int64_t ld, std::uint64_t stream, std::uint64_t& ctr) {
  std::vector<std::uint8_t> x(static_cast<std::size_t>(rows * ld), 0x7F);
  for (std::int64_t r = 0; r < rows; ++r)
    for (int c = 0; c < d; ++c) {
      const auto w = philox_4x32(seed(), stream, ctr++);
      const std::uint32_t exp_field = 4 + w[0] % 6, mant = w[1] % 8, sign = w[2] % 2;  // biased exponent 4..9: 2^-3 .. 2^2
      x[static_cast<std::size_t>(r * ld + c)] = static_cast<std::uint8_t>((sign << 7) | (exp_field << 3) | mant);
    }
  return x;
}

Problem make_problem(int d, std::int64_t batch, std::int64_t hq, std::int64_t hkv, std::int64_t lq, std::int64_t lk, std::int64_t pad,
                     CausalAlign causal, std::uint64_t stream) {
  Problem p{d, batch, hq, hkv, lq, lk, d + pad, d + 4, causal, {}, {}, {}};
  std::uint64_t ctr = 0;
  p.q = codes(d, batch * hq * lq, p.ld, stream, ctr);
  p.k = codes(d, batch * hkv * lk, p.ld, stream, ctr);
  p.v = codes(d, batch * hkv * lk, p.ld, stream, ctr);
  return p;
}

/// The call as attention_cuda.cu makes it: scale s, descales dq, dk, dv.
FlashFp8Args make_args(const Problem& p, float s, float dq, float dk, float dv) {
  FlashFp8Args a{};
  a.len_q = p.lq, a.len_k = p.lk, a.heads_q = p.hq, a.heads_kv = p.hkv;
  a.q = p.q.data(), a.ldq = p.ld, a.k = p.k.data(), a.ldk = p.ld, a.v = p.v.data(), a.ldv = p.ld;
  a.causal = p.causal != CausalAlign::None;
  a.causal_off = p.causal == CausalAlign::BottomRight ? p.lk - p.lq : 0;
  a.keys = p.lk;
  const float dqk = dq * dk;
  a.c = attention_scale_log2e(s) * dqk;
  a.koff = 8.0f;
  a.l_scale = 0x1p-8f;
  a.s_lse = s * dqk;
  a.dv = dv;
  a.post_scale = 1.0f;
  return a;
}

struct Output {
  std::vector<std::uint16_t> o;
  std::vector<float> lse;
};

Output blank(const Problem& p) {
  Output out;
  out.o.assign(static_cast<std::size_t>(p.batch * p.hq * p.lq * p.ldo), kSentinel);
  out.lse.assign(static_cast<std::size_t>(p.batch * p.hq * p.lq), kLseSentinel);
  return out;
}

std::uint16_t bf16_code(float x) { return static_cast<std::uint16_t>(round_double(bf16, x, Rounder::nearest(bf16)).code); }

Output run_emulated(const Problem& p, FlashFp8Args a) {
  Output out = blank(p);
  a.o = out.o.data(), a.ldo = p.ldo, a.lse = out.lse.data();
  const unsigned gx = static_cast<unsigned>((p.lq + kBQ - 1) / kBQ);
  for (unsigned bz = 0; bz < p.batch; ++bz)
    for (unsigned by = 0; by < p.hq; ++by)
      for (unsigned bx = 0; bx < gx; ++bx)
        run_cta(kFlashThreads, bx, by, bz, [&] { p.d == 64 ? flash_fwd_fp8<64>(a) : flash_fwd_fp8<128>(a); });
  return out;
}

/// The declared arithmetic, row by row (flash_fp8_kernel.cuh's header).
Output run_model(const Problem& p, const FlashFp8Args& a) {
  Output out = blank(p);
  const auto val = [](std::uint8_t c) { return to_double(e4m3, c); };
  const int d = p.d;
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t h = 0; h < p.hq; ++h)
      for (std::int64_t i = 0; i < p.lq; ++i) {
        const std::int64_t hk = h / (p.hq / p.hkv), row = (b * p.hq + h) * p.lq + i, kv0 = (b * p.hkv + hk) * p.lk;
        const std::uint8_t* q = p.q.data() + row * p.ld;
        const std::int64_t q0 = i / kBQ * kBQ;
        std::int64_t kend = a.keys;
        if (a.causal) kend = std::min(kend, std::min<std::int64_t>(q0 + kBQ - 1, p.lq - 1) + a.causal_off + 1);
        float mx = -INFINITY, m2 = -INFINITY, l = 0;
        std::vector<float> o(static_cast<std::size_t>(d), 0.0f);
        for (std::int64_t kb = 0; kb < kend; kb += kBK) {
          float x[kBK], pr[kBK];
          bool vis[kBK];
          float bm = -INFINITY;
          for (int jj = 0; jj < kBK; ++jj) {
            const std::int64_t j = kb + jj;
            float acc = 0;
            for (int kk = 0; kk < d / 32; ++kk) {
              double s = acc;
              for (int c = 32 * kk; c < 32 * kk + 32; ++c) s += j < p.lk ? val(q[c]) * val(p.k[static_cast<std::size_t>((kv0 + j) * p.ld + c)]) : 0.0;
              acc = static_cast<float>(s);
            }
            x[jj] = acc;
            vis[jj] = j < a.keys && (!a.causal || j <= i + a.causal_off);
            if (vis[jj]) bm = std::fmax(bm, x[jj]);
          }
          const float mnx = std::fmax(mx, bm), mn = mnx == -INFINITY ? -INFINITY : mnx * a.c - a.koff;
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
          for (int jj = 0; jj < kBK; ++jj) pr[jj] = static_cast<float>(val(emulated_e4m3_code(pr[jj])));
          for (int c = 0; c < d; ++c)
            for (int kk = 0; kk < 2; ++kk) {  // exact block sums: the keys' order inside the k-step does not matter
              double s = o[static_cast<std::size_t>(c)];
              for (int jj = 32 * kk; jj < 32 * kk + 32; ++jj) {
                const std::int64_t j = kb + jj;
                s += static_cast<double>(pr[jj]) * (j < p.lk ? val(p.v[static_cast<std::size_t>((kv0 + j) * p.ld + c)]) : 0.0);
              }
              o[static_cast<std::size_t>(c)] = static_cast<float>(s);
            }
        }
        const bool masked = m2 == -INFINITY;
        const float r = (1.0f / l) * a.dv;
        for (int c = 0; c < d; ++c) {
          float y = masked ? 0.0f : o[static_cast<std::size_t>(c)] * r;
          if (a.post_scale != 1.0f) y *= a.post_scale;
          if (a.zeros) y = 0.0f;
          out.o[static_cast<std::size_t>(row * p.ldo + c)] = bf16_code(y);
        }
        float v = INFINITY;
        const float lk = l * a.l_scale;
        if (!masked) v = a.lse_no_max ? std::log(lk) : mx * a.s_lse + std::log(lk);
        out.lse[static_cast<std::size_t>(row)] = a.zeros ? 0.0f : v;
      }
  return out;
}

std::int64_t differences(const Output& x, const Output& y) {
  std::int64_t n = 0;
  for (std::size_t e = 0; e < x.o.size(); ++e) n += x.o[e] != y.o[e];
  for (std::size_t e = 0; e < x.lse.size(); ++e) n += std::bit_cast<std::uint32_t>(x.lse[e]) != std::bit_cast<std::uint32_t>(y.lse[e]);
  return n;
}

/// The emulated kernel against the model, bit for bit, padding included.
void check_case(const Problem& p, const FlashFp8Args& a, const char* what) {
  CAPTURE(what);
  const Output got = run_emulated(p, a), want = run_model(p, a);
  std::int64_t finite = 0, masked_rows = 0;
  for (float x : want.lse) (std::isinf(x) ? masked_rows : finite) += 1;
  MESSAGE(std::string(what) << ": " << finite << " rows, " << masked_rows << " fully masked");
  CHECK(finite > 0);
  CHECK(differences(got, want) == 0);
}

std::vector<Problem> problems() {
  std::vector<Problem> ps;
  ps.push_back(make_problem(64, 1, 2, 1, 77, 130, 8, CausalAlign::None, 110));        // tails, grouped heads
  ps.push_back(make_problem(128, 1, 1, 1, 70, 100, 3, CausalAlign::TopLeft, 120));    // head dim 128, odd ld, top-left
  ps.push_back(make_problem(64, 2, 1, 1, 80, 40, 4, CausalAlign::BottomRight, 130));  // rows 0..39 see no key
  return ps;
}

}  // namespace

TEST_CASE("FP8 flash attention device code, emulated on the host: bit for bit the declared arithmetic, descales and offset") {
  const std::vector<Problem> ps = problems();
  const char* names[] = {"d64 tails grouped", "d128 top-left odd ld", "d64 bottom-right masked rows"};
  // Descales that are not powers of two (each a rounding in c, s' and the normalisation), a scale that spreads the scores.
  for (std::size_t i = 0; i < ps.size(); ++i) check_case(ps[i], make_args(ps[i], 0.3f, 0.7f, 1.3f, 0.45f), names[i]);
}

TEST_CASE("FP8 flash attention device code, emulated on the host: every fault switch changes the output as declared") {
  const std::vector<Problem> ps = problems();
  struct Fault {
    const char* name;
    std::size_t problem;
    void (*set)(FlashFp8Args&);
  };
  const Fault faults[] = {
      {"no_rescale", 0, [](FlashFp8Args& a) { a.no_rescale = true; }},
      {"causal_off_by_one", 1, [](FlashFp8Args& a) { a.causal_off += 1; }},
      {"lse_no_max", 0, [](FlashFp8Args& a) { a.lse_no_max = true; }},
      {"p_rounded_lower (no offset)", 0, [](FlashFp8Args& a) { a.koff = 0.0f, a.l_scale = 1.0f; }},
      {"drop_last_key_block", 0, [](FlashFp8Args& a) { a.keys = a.len_k / kBK * kBK; }},
      {"descale_v_dropped", 0, [](FlashFp8Args& a) { a.dv = 1.0f; }},
      {"zeros", 2, [](FlashFp8Args& a) { a.zeros = true; }},
  };
  for (const Fault& f : faults) {
    const Problem& p = ps[f.problem];
    FlashFp8Args a = make_args(p, 0.3f, 0.7f, 1.3f, 0.45f);
    const Output clean = run_model(p, a);
    f.set(a);
    CAPTURE(f.name);
    check_case(p, a, f.name);
    CHECK(differences(run_model(p, a), clean) > 0);
  }
}
