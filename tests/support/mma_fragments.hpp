// tests/support/mma_fragments.hpp — the host side of an emulated mma.sync: the per-warp register
// exchange, the PTX ISA's fragment tables element by element ("Matrix Fragments for mma.m16n8k16 /
// m16n8k8 / m16n8k32"; groupID = lane >> 2, threadID_in_group = lane % 4), and the gathering of the
// A and B tiles the 32 lanes hand to one MMA. Include after kernels/gemm/cuda/mma_kernel.cuh (for Mma).
#pragma once

#include <barrier>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace fpcert::test {

using fpcert::mma_emulated::Mma;

/// Per-warp exchange of the registers the 32 lanes hand to one mma.sync.
struct WarpExchange {
  std::barrier<> bar{32};
  std::uint32_t a[32][4];
  std::uint32_t b[32][2];
  float c[32][4];
};

struct RC {
  int row, col;
};
inline RC a_coord(Mma t, int lane, int i) {
  const int g = lane >> 2, tg = lane % 4;
  switch (t) {
    case Mma::F16:
    case Mma::BF16:  // m16n8k16: a0..a7
      return {(i < 2 || (4 <= i && i < 6)) ? g : g + 8, tg * 2 + (i & 1) + (i >= 4 ? 8 : 0)};
    case Mma::TF32:  // m16n8k8: a0..a3
      return {(i == 0 || i == 2) ? g : g + 8, (i < 2) ? tg : tg + 4};
    case Mma::E4M3:
    case Mma::E5M2:  // m16n8k32: a0..a15
      return {(i < 4 || (8 <= i && i < 12)) ? g : g + 8, tg * 4 + (i & 3) + (i >= 8 ? 16 : 0)};
  }
  return {0, 0};
}
inline RC b_coord(Mma t, int lane, int i) {  // row = k, col = n
  const int g = lane >> 2, tg = lane % 4;
  switch (t) {
    case Mma::F16:
    case Mma::BF16: return {tg * 2 + (i & 1) + (i >= 2 ? 8 : 0), g};  // b0..b3
    case Mma::TF32: return {i == 0 ? tg : tg + 4, g};                 // b0..b1
    case Mma::E4M3:
    case Mma::E5M2: return {tg * 4 + (i & 3) + (i >= 4 ? 16 : 0), g};  // b0..b7
  }
  return {0, 0};
}
inline RC c_coord(int lane, int i) { return {i < 2 ? (lane >> 2) : (lane >> 2) + 8, (lane % 4) * 2 + (i & 1)}; }
inline int a_elems(Mma t) { return t == Mma::TF32 ? 4 : (t == Mma::E4M3 || t == Mma::E5M2) ? 16 : 8; }
inline int b_elems(Mma t) { return a_elems(t) / 2; }
inline int mma_k(Mma t) { return t == Mma::TF32 ? 8 : (t == Mma::E4M3 || t == Mma::E5M2) ? 32 : 16; }

/// The 16 x K tile of A and K x 8 tile of B from every lane's registers, element i of a lane's
/// fragment decoded by value(regs, i). Aborts unless the tables cover each tile exactly once (a
/// self-check of the transcription).
template <typename Value>
void gather_tiles(Mma t, const WarpExchange& w, double (&A)[16][32], double (&B)[32][8], Value value) {
  int seen_a[16][32] = {}, seen_b[32][8] = {};
  for (int l = 0; l < 32; ++l) {
    for (int i = 0; i < a_elems(t); ++i) {
      const RC p = a_coord(t, l, i);
      A[p.row][p.col] = value(w.a[l], i);
      ++seen_a[p.row][p.col];
    }
    for (int i = 0; i < b_elems(t); ++i) {
      const RC p = b_coord(t, l, i);
      B[p.row][p.col] = value(w.b[l], i);
      ++seen_b[p.row][p.col];
    }
  }
  const int K = mma_k(t);
  for (int r = 0; r < 16; ++r)
    for (int q = 0; q < K; ++q)
      if (seen_a[r][q] != 1) std::abort();
  for (int q = 0; q < K; ++q)
    for (int col = 0; col < 8; ++col)
      if (seen_b[q][col] != 1) std::abort();
}

/// One emulated mma.sync, called by each of the 32 lanes (one host thread each) with its registers:
/// D = round(C + A B) element by element, where each sum is formed exactly in double (the tests'
/// inputs keep it so) and round() is the accumulator the test models.
template <typename Value, typename Round>
void warp_mma(WarpExchange& w, Mma t, int lane, float (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2], Value value,
              Round round) {
  std::memcpy(w.a[lane], a, sizeof a);
  std::memcpy(w.b[lane], b, sizeof b);
  std::memcpy(w.c[lane], d, sizeof d);
  w.bar.arrive_and_wait();  // every lane's registers are in
  double A[16][32] = {}, B[32][8] = {};
  gather_tiles(t, w, A, B, value);
  const int K = mma_k(t);
  float out[4];
  for (int i = 0; i < 4; ++i) {
    const RC p = c_coord(lane, i);
    double s = w.c[lane][i];
    for (int q = 0; q < K; ++q) s += A[p.row][q] * B[q][p.col];
    out[i] = static_cast<float>(round(s));
  }
  w.bar.arrive_and_wait();  // every lane has read the exchange before anyone refills it
  std::memcpy(d, out, sizeof out);
}

/// C written by a kernel into a buffer of `guard` sentinel floats on each side, with ldc > n padding
/// that holds the sentinel too, compared bit for bit with `want` (m x n, row-major).
struct GuardedC {
  std::int64_t wrong = 0;    ///< elements of C that differ from want
  std::int64_t first = -1;   ///< the first of them, as row * ldc + col
  std::int64_t touched = 0;  ///< floats outside C (guards, padding) that no longer hold the sentinel
};
inline GuardedC compare_guarded_c(const std::vector<float>& cbuf, std::size_t guard, std::int64_t m, std::int64_t n, std::int64_t ldc,
                                  const std::vector<float>& want, float sentinel) {
  GuardedC g;
  const auto bits = [](float f) {
    std::uint32_t b;
    std::memcpy(&b, &f, 4);
    return b;
  };
  for (std::size_t x = 0; x < cbuf.size(); ++x) {
    const bool inside = x >= guard && x < guard + static_cast<std::size_t>(m * ldc) && static_cast<std::int64_t>(x - guard) % ldc < n;
    if (!inside) {
      g.touched += bits(cbuf[x]) != bits(sentinel);
      continue;
    }
    const auto e = static_cast<std::int64_t>(x - guard);
    if (bits(cbuf[x]) != bits(want[static_cast<std::size_t>((e / ldc) * n + e % ldc)]) && g.wrong++ == 0) g.first = e;
  }
  return g;
}

}  // namespace fpcert::test
