// tests/kernels/emu/emulation_mma_test.cpp — the emulation kernels' MMA stages (kernels/emu/cuda/emu_split_kernel.cuh,
// kernels/emu/cuda/emu_bf16_kernel.cuh) run on the host without a GPU, as tests/kernels/gemm/mma_emulation_test.cpp
// runs mma_kernel.cuh: a std::thread per CUDA thread, a std::barrier per __syncthreads, and mma.sync
// emulated warp-collectively from the PTX ISA's fragment tables (transcribed element by element). The
// emulated MMA adds its block's exact products to the accumulator and rounds once to fp32 nearest, so
// the kernels' outputs are predictable bit for bit from references that walk K in the kernels' order:
//   split GEMM: per k-block ascending, small = RN(small + sum A_i B_j) for each kept small term in the
//     table's order, then acc = RN(acc + sum A_0 B_0); C = RN(small + acc);
//   scaled fp16 GEMM: row mode acc = RN(acc + block sum) per k-block of 16, C = RN(acc 2^-(s_A + s_B));
//     K-block mode part likewise from +0 per K-block, acc = RN(acc + RN(part 2^-(s_A,g + s_B,g))).
// What this proves: slice staging for 1-3 slices in dynamic shared memory, the term order and the two
// accumulators, per-K-block promotion points, the scale indexing (per line, per K-block, shared), tile
// modes and early exits, edges, K tails and ldc. What it cannot: the hardware's MMA arithmetic.
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

#include "base/philox.hpp"
#include "oracle/round.hpp"
#include "tests/support/test_seed.hpp"

// ---- the CUDA surface the kernels use, for the host ----
#define FPCERT_EMU_EMULATION 1
#include "tests/support/cuda_host_surface.hpp"

#include "kernels/emu/cuda/emu_bf16_kernel.cuh"
#include "tests/support/mma_fragments.hpp"

using namespace fpcert;
using namespace fpcert::mma_emulated;
using namespace fpcert::test;

namespace {

thread_local WarpExchange* tl_emu_warp = nullptr;

double element(Mma t, const std::uint32_t* regs, int i) {
  switch (t) {
    case Mma::F16: return static_cast<double>(emu::f16_value(static_cast<std::uint16_t>(regs[i / 2] >> (16 * (i % 2)))));
    case Mma::BF16: return static_cast<double>(emu::bf16_value(static_cast<std::uint16_t>(regs[i / 2] >> (16 * (i % 2)))));
    case Mma::TF32:
      if (regs[i] & 0x1FFF) std::abort();  // a tf32 operand must have its low 13 bits clear
      return static_cast<double>(std::bit_cast<float>(regs[i]));
    default: std::abort();
  }
}

}  // namespace

namespace fpcert::mma_emulated {

template <Mma T>
void emu_emulated_mma(float (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2]) {
  // Each sum exact in double, then one round-to-nearest to fp32.
  warp_mma(*tl_emu_warp, T, static_cast<int>(threadIdx.x) & 31, d, a, b,
           [](const std::uint32_t* regs, int i) { return element(T, regs, i); }, [](double x) { return x; });
}
template void emu_emulated_mma<Mma::F16>(float (&)[4], const std::uint32_t (&)[4], const std::uint32_t (&)[2]);
template void emu_emulated_mma<Mma::BF16>(float (&)[4], const std::uint32_t (&)[4], const std::uint32_t (&)[2]);
template void emu_emulated_mma<Mma::TF32>(float (&)[4], const std::uint32_t (&)[4], const std::uint32_t (&)[2]);

}  // namespace fpcert::mma_emulated

namespace {

constexpr float kSentinel = -12345.5f;

/// Runs a grid block after block, 256 host threads per block; `body` is the kernel call.
template <typename F>
void run_grid(std::int64_t m, std::int64_t n, std::size_t smem_words, F body) {
  std::vector<std::uint32_t> smem(smem_words + 4, 0xFFFFFFFFu);  // NaN-like garbage: unwritten stages show
  emu_dynamic_smem = smem.data();
  const unsigned gx = static_cast<unsigned>((n + kBN - 1) / kBN), gy = static_cast<unsigned>((m + kBM - 1) / kBM);
  for (unsigned by = 0; by < gy; ++by)
    for (unsigned bx = 0; bx < gx; ++bx) {
      std::barrier<> block_barrier(kThreads);
      std::array<std::unique_ptr<WarpExchange>, kThreads / 32> warps;
      for (auto& w : warps) w = std::make_unique<WarpExchange>();
      std::vector<std::thread> threads;
      for (int i = 0; i < kThreads; ++i)
        threads.emplace_back([&, i] {
          threadIdx.x = static_cast<unsigned>(i);
          blockIdx.x = bx;
          blockIdx.y = by;
          tl_block_barrier = &block_barrier;
          tl_emu_warp = warps[static_cast<std::size_t>(i / 32)].get();
          body();
        });
      for (auto& t : threads) t.join();
    }
  emu_dynamic_smem = nullptr;
}

struct Shape {
  std::int64_t m, n, k, ldc;
};
// Odd edges in M, N, K (partial tiles, K tails inside a stage and an MMA), several blocks, K = 0.
const Shape kShapes[] = {{131, 137, 203, 141}, {128, 128, 192, 132}, {67, 45, 37, 53}, {1, 1, 1, 3}, {5, 9, 0, 12}};

/// C with guards around it and in the ldc padding; returns the number of wrong elements and of
/// touched guards, comparing bit for bit with `want` (m x n).
void check_c(const Shape& s, const std::vector<float>& cbuf, std::size_t guard, const std::vector<float>& want) {
  const GuardedC g = compare_guarded_c(cbuf, guard, s.m, s.n, s.ldc, want, kSentinel);
  CHECK_MESSAGE(g.wrong == 0, g.wrong << " elements differ from the kernel-order reference; first at row " << g.first / s.ldc
                                      << " col " << g.first % s.ldc);
  CHECK_MESSAGE(g.touched == 0, g.touched << " floats outside C were written");
  double norm = 0;
  for (float v : want) norm += std::fabs(v);
  CHECK((s.k == 0 || norm > 0));  // the test can fail
}

// ---- split GEMM ----

/// fp32 inputs r / 2^20 (|r| <= 2^20): 21-bit values, so tf32 slicing really rounds and three bf16
/// slices hold them exactly; every slice product is a multiple of 2^-40 below 2^1, so block sums and
/// accumulators stay exact in double before the emulated MMA's single rounding.
template <Mma T, int S, unsigned kMask>
void check_split(const Shape& s, emu::SliceKind kind) {
  CAPTURE(s.m);
  CAPTURE(s.n);
  CAPTURE(s.k);
  constexpr int ES = MmaInfo<T>::kBytes;
  const std::uint64_t seed = test::seed() + static_cast<std::uint64_t>(s.m * 7 + s.n * 13 + s.k + S * 1000 + kMask);
  std::vector<float> A(static_cast<std::size_t>(s.m * s.k)), B(static_cast<std::size_t>(s.k * s.n));
  std::uint64_t ctr = 0;
  for (auto* v : {&A, &B})
    for (float& x : *v) {
      const auto w = philox_4x32(seed, 3, ctr++);
      x = std::ldexp(static_cast<float>(static_cast<std::int64_t>(w[0] % ((2u << 20) + 1)) - (1 << 20)), -20);
    }
  // Slices as the pre-pass writes them: leading dimensions rounded up to 8 elements; the padding
  // and one more row hold NaN codes: a read outside the matrix poisons C.
  const std::int64_t lda = (s.k + 7) / 8 * 8, ldb = (s.n + 7) / 8 * 8;
  std::vector<std::vector<std::uint8_t>> sa(S), sb(S);
  std::vector<std::vector<float>> va(S, std::vector<float>(A.size())), vb(S, std::vector<float>(B.size()));
  auto poison = [](std::vector<std::uint8_t>& buf, std::size_t bytes) {
    buf.assign(bytes, 0xFF);  // bf16 0xFFFF: NaN
    if constexpr (ES == 4)
      for (std::size_t x = 0; x + 4 <= bytes; x += 4) {
        const std::uint32_t nan_tf32 = 0x7FFFE000u;  // a NaN with tf32's low 13 bits clear
        std::memcpy(buf.data() + x, &nan_tf32, 4);
      }
  };
  for (int l = 0; l < S; ++l) {
    poison(sa[l], static_cast<std::size_t>((s.m + 1) * lda * ES + 64));
    poison(sb[l], static_cast<std::size_t>((s.k + 1) * ldb * ES + 64));
  }
  auto put = [&](std::vector<std::uint8_t>& buf, std::int64_t idx, float v) {
    if constexpr (ES == 2) {
      const auto c = static_cast<std::uint16_t>(emu::f32_bits(v) >> 16);
      std::memcpy(buf.data() + idx * 2, &c, 2);
    } else {
      const std::uint32_t c = emu::f32_bits(v);
      std::memcpy(buf.data() + idx * 4, &c, 4);
    }
  };
  for (std::int64_t i = 0; i < s.m; ++i)
    for (std::int64_t q = 0; q < s.k; ++q) {
      float sl[3];
      emu::split_slices(kind, S, A[static_cast<std::size_t>(i * s.k + q)], sl);
      for (int l = 0; l < S; ++l) put(sa[l], i * lda + q, sl[l]), va[l][static_cast<std::size_t>(i * s.k + q)] = sl[l];
    }
  for (std::int64_t q = 0; q < s.k; ++q)
    for (std::int64_t j = 0; j < s.n; ++j) {
      float sl[3];
      emu::split_slices(kind, S, B[static_cast<std::size_t>(q * s.n + j)], sl);
      for (int l = 0; l < S; ++l) put(sb[l], q * ldb + j, sl[l]), vb[l][static_cast<std::size_t>(q * s.n + j)] = sl[l];
    }
  SlicePtrs pa{}, pb{};
  for (int l = 0; l < 3; ++l) pa.p[l] = sa[l < S ? l : 0].data(), pb.p[l] = sb[l < S ? l : 0].data();
  constexpr std::size_t kGuard = 64;
  std::vector<float> cbuf(kGuard + static_cast<std::size_t>(s.m * s.ldc) + kGuard, kSentinel);
  run_grid(s.m, s.n, static_cast<std::size_t>(split_smem_bytes(S) / 4), [&] {
    split_gemm<T, S, kMask>(s.m, s.n, s.k, pa, lda, pb, ldb, cbuf.data() + kGuard, s.ldc);
  });
  // The reference in the kernel's order.
  std::vector<std::pair<int, int>> small;
  for (int d = 2 * (S - 1); d >= 1; --d)
    for (int ia = S - 1; ia >= 0; --ia) {
      const int jb = d - ia;
      if (jb >= 0 && jb < S && (kMask & term_bit(ia, jb))) small.emplace_back(ia, jb);
    }
  const int K = mma_k(T);
  std::vector<float> want(static_cast<std::size_t>(s.m * s.n));
  for (std::int64_t i = 0; i < s.m; ++i)
    for (std::int64_t j = 0; j < s.n; ++j) {
      float sm = 0, acc = 0;
      for (std::int64_t k0 = 0; k0 < s.k; k0 += K) {
        auto block = [&](int ia, int jb, float c) {
          double t = c;
          for (std::int64_t q = k0; q < std::min<std::int64_t>(k0 + K, s.k); ++q)
            t += static_cast<double>(va[ia][static_cast<std::size_t>(i * s.k + q)]) * vb[jb][static_cast<std::size_t>(q * s.n + j)];
          return static_cast<float>(t);
        };
        for (const auto& [ia, jb] : small) sm = block(ia, jb, sm);
        acc = block(0, 0, acc);
      }
      want[static_cast<std::size_t>(i * s.n + j)] = small.empty() ? acc : sm + acc;
    }
  check_c(s, cbuf, kGuard, want);
}

constexpr unsigned kM3 = term_bit(0, 0) | term_bit(0, 1) | term_bit(1, 0);
constexpr unsigned kM6 = kM3 | term_bit(2, 0) | term_bit(1, 1) | term_bit(0, 2);
constexpr unsigned kM9 = kM6 | term_bit(2, 1) | term_bit(1, 2) | term_bit(2, 2);

// ---- scaled fp16 GEMM ----

/// fp16 operands as the packing stage leaves them: values r / 2^10 (|r| <= 2^10) as fp16 codes, with
/// per-line and per-K-block scale exponents in [-6, 6] (K-block scales vary, so every promotion point
/// and every scale index shows). Products are multiples of 2^-20 below 2: block sums stay exact.
struct F16Case {
  std::vector<std::uint16_t> a, b;         // codes, A m x lda, B k x ldb (padding 0x7FFF: NaN)
  std::vector<float> av, bv;               // values m x k, k x n
  std::vector<std::int16_t> sa, sb;        // [line * segs + seg]
  std::int64_t lda, ldb, segs;
};
F16Case make_f16_case(const Shape& s, std::int64_t segs, bool shared, std::uint64_t seed) {
  F16Case f;
  f.lda = (s.k + 7) / 8 * 8;
  f.ldb = (s.n + 7) / 8 * 8;
  f.segs = segs;
  f.a.assign(static_cast<std::size_t>((s.m + 1) * f.lda + 32), 0x7FFF);
  f.b.assign(static_cast<std::size_t>((s.k + 1) * f.ldb + 32), 0x7FFF);
  f.av.resize(static_cast<std::size_t>(s.m * s.k));
  f.bv.resize(static_cast<std::size_t>(s.k * s.n));
  std::uint64_t ctr = 0;
  auto code = [&](float& v) {
    const auto w = philox_4x32(seed, 5, ctr++);
    v = std::ldexp(static_cast<float>(static_cast<std::int64_t>(w[0] % 2049) - 1024), -10);
    return static_cast<std::uint16_t>(round_double(f16, v, Rounder::nearest(f16)).code);
  };
  for (std::int64_t i = 0; i < s.m; ++i)
    for (std::int64_t q = 0; q < s.k; ++q) f.a[static_cast<std::size_t>(i * f.lda + q)] = code(f.av[static_cast<std::size_t>(i * s.k + q)]);
  for (std::int64_t q = 0; q < s.k; ++q)
    for (std::int64_t j = 0; j < s.n; ++j) f.b[static_cast<std::size_t>(q * f.ldb + j)] = code(f.bv[static_cast<std::size_t>(q * s.n + j)]);
  auto scales = [&](std::int64_t lines) {
    std::vector<std::int16_t> v(static_cast<std::size_t>(shared ? 1 : lines * segs));
    for (auto& x : v) x = static_cast<std::int16_t>(static_cast<int>(philox_4x32(seed, 6, ctr++)[0] % 13) - 6);
    return v;
  };
  f.sa = scales(s.m);
  f.sb = scales(s.n);
  return f;
}

/// The reference of f16_scaled_gemm: mode per 128 x 128 tile, K-blocks of kb elements.
std::vector<float> f16_reference(const Shape& s, const F16Case& f, bool shared, int kb, const std::vector<std::uint32_t>* mr,
                                 const std::vector<std::uint32_t>* mc, bool kblock_all) {
  std::vector<float> want(static_cast<std::size_t>(s.m * s.n));
  auto scale = [&](const std::vector<std::int16_t>& v, std::int64_t line, std::int64_t seg) {
    return shared ? v[0] : v[static_cast<std::size_t>(line * f.segs + (f.segs > 1 ? seg : 0))];
  };
  for (std::int64_t i = 0; i < s.m; ++i)
    for (std::int64_t j = 0; j < s.n; ++j) {
      const bool kblock = mr ? std::max((*mr)[static_cast<std::size_t>(i / 128)], (*mc)[static_cast<std::size_t>(j / 128)]) == emu::kModeKBlock
                             : kblock_all;
      float acc = 0, part = 0;
      for (std::int64_t k0 = 0; k0 < s.k; k0 += 16) {
        double t = kblock ? part : acc;
        for (std::int64_t q = k0; q < std::min<std::int64_t>(k0 + 16, s.k); ++q)
          t += static_cast<double>(f.av[static_cast<std::size_t>(i * s.k + q)]) * f.bv[static_cast<std::size_t>(q * s.n + j)];
        (kblock ? part : acc) = static_cast<float>(t);
        // Stage st (32 elements of K, two MMAs) ends at its second k-step or at the last k-step of K; a
        // K-block ends with stage st when (st + 1) is a multiple of kb / 32 or st is the last stage.
        const std::int64_t st = k0 / 32, stages = (s.k + 31) / 32;
        const bool stage_end = k0 % 32 == 16 || k0 + 16 >= s.k;
        if (kblock && stage_end && ((st + 1) % (kb / 32) == 0 || st + 1 == stages)) {
          const std::int64_t seg = st / (kb / 32);
          acc = emu::fadd_rn(acc, emu::ldexp_rn(part, -(scale(f.sa, i, seg) + scale(f.sb, j, seg))));
          part = 0;
        }
      }
      want[static_cast<std::size_t>(i * s.n + j)] = kblock ? acc : emu::ldexp_rn(acc, -(scale(f.sa, i, 0) + scale(f.sb, j, 0)));
    }
  return want;
}

template <bool kKBlock>
void launch_f16(const Shape& s, const F16Case& f, bool shared, int kb, const std::uint32_t* mr, const std::uint32_t* mc, float* c) {
  const ScaleView sa{f.sa.data(), shared ? 0 : f.segs, (shared || f.segs == 1) ? 0 : 1, s.m};
  const ScaleView sb{f.sb.data(), shared ? 0 : f.segs, (shared || f.segs == 1) ? 0 : 1, s.n};
  run_grid(s.m, s.n, 0, [&] {
    f16_scaled_gemm<kKBlock, true>(s.m, s.n, s.k, reinterpret_cast<const std::uint8_t*>(f.a.data()), f.lda, true,
                                   reinterpret_cast<const std::uint8_t*>(f.b.data()), f.ldb, true, c, s.ldc, sa, sb, kb / 32, mr, mc);
  });
}

}  // namespace

TEST_CASE("emulation mma: split GEMMs (1 2 3 slices) equal the kernel-order reference bit for bit") {
  // Every shape for the two-slice tf32 kernel; the three-slice nine-term kernel on the multi-block odd
  // shape and the padded one; each other scheme on one block with odd edges (67 x 45 x 37).
  for (const Shape& s : kShapes) check_split<Mma::TF32, 2, kM3>(s, emu::SliceKind::Tf32NearestEven);
  check_split<Mma::BF16, 3, kM9>(kShapes[0], emu::SliceKind::Bf16NearestEven);
  const Shape& s = kShapes[2];
  check_split<Mma::BF16, 3, kM9>(s, emu::SliceKind::Bf16NearestEven);
  check_split<Mma::TF32, 2, kM3>(s, emu::SliceKind::Tf32TowardZero);
  check_split<Mma::BF16, 1, term_bit(0, 0)>(s, emu::SliceKind::Bf16NearestEven);
  check_split<Mma::BF16, 2, kM3>(s, emu::SliceKind::Bf16NearestEven);
  check_split<Mma::BF16, 3, kM6>(s, emu::SliceKind::Bf16NearestEven);
  check_split<Mma::BF16, 3, kM9>(kShapes[4], emu::SliceKind::Bf16NearestEven);  // K = 0
}

TEST_CASE("emulation mma: scaled fp16 GEMM - row mode and K-block mode (64 and 128) with per-line per-block and shared scales") {
  for (const Shape& s : kShapes) {
    CAPTURE(s.m);
    CAPTURE(s.n);
    CAPTURE(s.k);
    constexpr std::size_t kGuard = 64;
    // Row mode: one scale per line, and one for the whole operand.
    for (const bool shared : {false, true}) {
      CAPTURE(shared);
      const F16Case f = make_f16_case(s, 1, shared, test::seed() + static_cast<std::uint64_t>(s.m + s.k));
      std::vector<float> cbuf(kGuard + static_cast<std::size_t>(s.m * s.ldc) + kGuard, kSentinel);
      launch_f16<false>(s, f, shared, 64, nullptr, nullptr, cbuf.data() + kGuard);
      check_c(s, cbuf, kGuard, f16_reference(s, f, shared, 64, nullptr, nullptr, false));
    }
    // K-block mode: scales per (line, K-block).
    for (const int kb : {64, 128}) {
      CAPTURE(kb);
      const std::int64_t segs = std::max<std::int64_t>(1, (s.k + kb - 1) / kb);
      const F16Case f = make_f16_case(s, segs, false, test::seed() + static_cast<std::uint64_t>(s.n + kb));
      std::vector<float> cbuf(kGuard + static_cast<std::size_t>(s.m * s.ldc) + kGuard, kSentinel);
      launch_f16<true>(s, f, false, kb, nullptr, nullptr, cbuf.data() + kGuard);
      check_c(s, cbuf, kGuard, f16_reference(s, f, false, kb, nullptr, nullptr, true));
    }
  }
}

TEST_CASE("emulation mma: auto tile modes - both kernels over the grid and each block runs only in its tile's mode") {
  // 3 x 3 tiles; row block 1 and column block 2 are K-block lines: tiles (1, *) and (*, 2) run per
  // K-block of 64, the others in row mode (scales equal along K for their lines, as the plans make them).
  const Shape s{300, 290, 200, 297};
  const std::int64_t segs = (s.k + 63) / 64;
  F16Case f = make_f16_case(s, segs, false, test::seed() + 99);
  const std::vector<std::uint32_t> mr = {0, 1, 0}, mc = {0, 0, 1};
  auto row_mode_line = [&](std::vector<std::int16_t>& sc, std::int64_t line) {
    for (std::int64_t g = 1; g < segs; ++g) sc[static_cast<std::size_t>(line * segs + g)] = sc[static_cast<std::size_t>(line * segs)];
  };
  for (std::int64_t i = 0; i < s.m; ++i)
    if (mr[static_cast<std::size_t>(i / 128)] == 0) row_mode_line(f.sa, i);
  for (std::int64_t j = 0; j < s.n; ++j)
    if (mc[static_cast<std::size_t>(j / 128)] == 0) row_mode_line(f.sb, j);
  constexpr std::size_t kGuard = 64;
  std::vector<float> cbuf(kGuard + static_cast<std::size_t>(s.m * s.ldc) + kGuard, kSentinel);
  launch_f16<false>(s, f, false, 64, mr.data(), mc.data(), cbuf.data() + kGuard);
  launch_f16<true>(s, f, false, 64, mr.data(), mc.data(), cbuf.data() + kGuard);
  check_c(s, cbuf, kGuard, f16_reference(s, f, false, 64, &mr, &mc, false));
}
