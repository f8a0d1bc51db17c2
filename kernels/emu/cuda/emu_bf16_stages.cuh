// kernels/emu/cuda/emu_bf16_stages.cuh — the device stages of the BF16-on-FP16 GEMMs before and after the
// MMA (kernels/emu/cuda/emu_bf16.cu, its only includer): exponent reduction and the per-line plans,
// packing bf16 into scaled fp16 and the outlier lists, the fp32 fallback for the outliers' products.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/emu/bf16_on_fp16.hpp"
#include "kernels/emu/cuda/emu_bf16_kernel.cuh"

namespace fpcert::emu_bf16_stages {

using namespace mma_device;
using S = Bf16OnF16Strategy;

constexpr int kFine = 64;          // K-granularity of the exponent statistics (Auto's and KBlock64's segment)
constexpr int kStatCount = 6;      // per operand: nonzero, inexact, overflow, underflow_zero, subnormal, outliers
constexpr int kBiasNoBinade = 32768;  // tensor maxima are kept as binade + 32768 >= 0, so 0 means "none"

// ---- exponent reduction ----

/// A (row-major): one warp per (row, fine block of 64 entries), lanes along K.
__global__ void fine_stats_rows(std::int64_t m, std::int64_t k, const std::uint16_t* __restrict__ a, std::int64_t lda,
                                std::int64_t nfine, std::int16_t* __restrict__ hi, std::int16_t* __restrict__ lo) {
  const std::int64_t cell = static_cast<std::int64_t>(blockIdx.x) * (blockDim.x / 32) + (threadIdx.x >> 5);
  const int lane = static_cast<int>(threadIdx.x) & 31;
  if (cell >= m * nfine) return;  // uniform per warp
  const std::int64_t row = cell / nfine, f = cell % nfine;
  int h = -32768, l = 32767;
  for (int r = lane; r < kFine; r += 32) {
    const std::int64_t kk = f * kFine + r;
    if (kk >= k) break;
    const int e = emu::bf16_binade(a[row * lda + kk]);
    if (e != emu::kNoBinade) {
      h = max(h, e);
      l = min(l, e);
    }
  }
  h = __reduce_max_sync(0xFFFFFFFFu, h);
  l = __reduce_min_sync(0xFFFFFFFFu, l);
  if (lane == 0) {
    hi[cell] = static_cast<std::int16_t>(h == -32768 ? emu::kNoBinade : h);
    lo[cell] = static_cast<std::int16_t>(h == -32768 ? emu::kNoBinade : l);
  }
}

/// B (row-major k x n, lines are columns): one thread per (column, fine block), threads along n.
__global__ void fine_stats_cols(std::int64_t k, std::int64_t n, const std::uint16_t* __restrict__ b, std::int64_t ldb,
                                std::int64_t nfine, std::int16_t* __restrict__ hi, std::int16_t* __restrict__ lo) {
  const std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= n) return;
  for (std::int64_t f = blockIdx.y; f < nfine; f += gridDim.y) {
    int h = -32768, l = 32767;
    for (int r = 0; r < kFine; ++r) {
      const std::int64_t kk = f * kFine + r;
      if (kk >= k) break;
      const int e = emu::bf16_binade(b[kk * ldb + j]);
      if (e != emu::kNoBinade) {
        h = max(h, e);
        l = min(l, e);
      }
    }
    hi[j * nfine + f] = static_cast<std::int16_t>(h == -32768 ? emu::kNoBinade : h);
    lo[j * nfine + f] = static_cast<std::int16_t>(h == -32768 ? emu::kNoBinade : l);
  }
}

struct DecideArgs {
  int strategy;
  std::int64_t lines, k, nfine;
  std::int64_t segs, seg_fine;  // plan segments per line, fine blocks per plan segment
  const std::int16_t* fhi;
  const std::int16_t* flo;
  const std::uint16_t* codes;
  std::int64_t line_stride, k_stride;
  std::int16_t* scale;          // [line * segs + seg]
  std::uint8_t* outl;           // [line * segs + seg]
  std::uint32_t* mode_blk;      // per 128 lines (Auto)
  int* count;                   // per line: outliers (outlier-capable strategies)
  int* tensor_hi;               // Tensor: max binade + kBiasNoBinade
};

/// One thread per line: the plan of kernels/emu/bf16_on_fp16.cpp's plan_operand, line by line.
__global__ void __launch_bounds__(32) decide_lines(DecideArgs d) {
  __shared__ std::uint32_t hist_all[32][emu::kBinadeBins];
  const std::int64_t l = static_cast<std::int64_t>(blockIdx.x) * 32 + threadIdx.x;
  if (l >= d.lines) return;
  std::uint32_t* hist = hist_all[threadIdx.x];
  auto range = [&](std::int64_t f0, std::int64_t f1, int& hi, int& lo) {
    hi = lo = emu::kNoBinade;
    for (std::int64_t f = f0; f < f1 && f < d.nfine; ++f) {
      const int h = d.fhi[l * d.nfine + f], w = d.flo[l * d.nfine + f];
      if (h == emu::kNoBinade) continue;
      if (hi == emu::kNoBinade) hi = h, lo = w;
      hi = max(hi, h);
      lo = min(lo, w);
    }
  };
  auto span = [](int hi, int lo) { return hi == emu::kNoBinade ? 0 : hi - lo; };
  // The outlier window of entries [r0, r1) of the line; `outside` counts the entries it leaves out.
  auto window = [&](std::int64_t r0, std::int64_t r1, int& outside) {
    for (int x = 0; x < emu::kBinadeBins; ++x) hist[x] = 0;
    int nz = 0;
    for (std::int64_t r = r0; r < r1; ++r) {
      const int e = emu::bf16_binade(d.codes[l * d.line_stride + r * d.k_stride]);
      if (e != emu::kNoBinade) ++hist[e - emu::kBinadeMin], ++nz;
    }
    const int top = emu::best_window_top(hist);
    int covered = 0;
    for (int e = top - emu::kSpanLossless; e <= top; ++e)
      if (e >= emu::kBinadeMin) covered += static_cast<int>(hist[e - emu::kBinadeMin]);
    outside = nz - covered;
    return top;
  };
  int hi, lo;
  range(0, d.nfine, hi, lo);
  int outliers = 0;
  const std::int64_t cell0 = l * d.segs;
  switch (static_cast<S>(d.strategy)) {
    case S::Tensor:
      if (hi != emu::kNoBinade) atomicMax(d.tensor_hi, hi + kBiasNoBinade);
      break;
    case S::RowCol: d.scale[cell0] = static_cast<std::int16_t>(emu::scale_for_top(hi)); break;
    case S::KBlock:
      for (std::int64_t g = 0; g < d.segs; ++g) {
        int h, w;
        range(g * d.seg_fine, (g + 1) * d.seg_fine, h, w);
        d.scale[cell0 + g] = static_cast<std::int16_t>(emu::scale_for_top(h));
      }
      break;
    case S::Outlier:
      d.outl[cell0] = 0;
      if (span(hi, lo) <= emu::kSpanLossless) {
        d.scale[cell0] = static_cast<std::int16_t>(emu::scale_for_top(hi));
      } else {
        d.scale[cell0] = static_cast<std::int16_t>(emu::scale_for_top(window(0, d.k, outliers)));
        d.outl[cell0] = 1;
      }
      break;
    case S::Auto:
      if (span(hi, lo) <= emu::kSpanLossless) {
        for (std::int64_t g = 0; g < d.segs; ++g) {
          d.scale[cell0 + g] = static_cast<std::int16_t>(emu::scale_for_top(hi));
          d.outl[cell0 + g] = 0;
        }
      } else {
        atomicMax(d.mode_blk + l / emu::kModeTile, static_cast<std::uint32_t>(emu::kModeKBlock));
        for (std::int64_t g = 0; g < d.segs; ++g) {
          int h, w, out = 0;
          range(g * d.seg_fine, (g + 1) * d.seg_fine, h, w);
          d.outl[cell0 + g] = 0;
          if (span(h, w) <= emu::kSpanLossless) {
            d.scale[cell0 + g] = static_cast<std::int16_t>(emu::scale_for_top(h));
          } else {
            const std::int64_t r0 = g * d.seg_fine * kFine, r1 = min(d.k, (g + 1) * d.seg_fine * kFine);
            d.scale[cell0 + g] = static_cast<std::int16_t>(emu::scale_for_top(window(r0, r1, out)));
            d.outl[cell0 + g] = 1;
            outliers += out;
          }
        }
      }
      break;
    case S::Cast: break;
  }
  if (d.count) d.count[l] = outliers;
}

__global__ void finalize_tensor(const int* tensor_hi, std::int16_t* scale) {
  scale[0] = static_cast<std::int16_t>(emu::scale_for_top(*tensor_hi - kBiasNoBinade));
}

// ---- packing ----

struct PackArgs {
  std::int64_t rows, cols;  // of the stored matrix (A: m x k; B: k x n)
  const std::uint16_t* x;
  std::int64_t ld;
  std::uint16_t* out;
  std::int64_t ld_out;
  const std::int16_t* scale;
  const std::uint8_t* outl;
  std::int64_t segs, seg_len;
  bool shared;
  unsigned long long* stats;  // kStatCount counters
};

/// One thread per element, threads along a row of the stored matrix; lines are its rows (A) or its
/// columns (B). Counters are summed per thread over its rows, then per block, then one atomic each.
template <bool kLinesAreRows>
__global__ void pack_operand(PackArgs p) {
  const std::int64_t col = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  unsigned c[kStatCount] = {0, 0, 0, 0, 0, 0};
  if (col < p.cols) {
    for (std::int64_t row = blockIdx.y; row < p.rows; row += gridDim.y) {
      const std::uint16_t x = p.x[row * p.ld + col];
      const std::int64_t line = kLinesAreRows ? row : col, r = kLinesAreRows ? col : row;
      const std::int64_t cell = p.shared ? 0 : line * p.segs + (p.segs > 1 ? r / p.seg_len : 0);
      const int s = p.scale[cell];
      const int e = emu::bf16_binade(x);
      std::uint16_t h = 0;
      if (e != emu::kNoBinade && !p.shared && p.outl[cell] && !emu::in_window(e, emu::kF16High - s)) {
        ++c[5];  // an outlier: 0 here, its products on the fp32 path
      } else {
        const emu::F16Conv cv = emu::bf16_to_f16_scaled(x, s);
        h = cv.code;
        if (e != emu::kNoBinade) {
          ++c[0];
          c[1] += (cv.flags & emu::kF16Inexact) != 0;
          c[2] += (cv.flags & emu::kF16Overflow) != 0;
          c[3] += (cv.flags & emu::kF16Underflow) != 0;
          c[4] += (cv.flags & emu::kF16Subnormal) != 0;
        }
      }
      p.out[row * p.ld_out + col] = h;
    }
  }
  __shared__ unsigned block_sum[kStatCount];
  if (threadIdx.x < kStatCount) block_sum[threadIdx.x] = 0;
  __syncthreads();
  for (int q = 0; q < kStatCount; ++q) {
    const unsigned w = __reduce_add_sync(0xFFFFFFFFu, c[q]);
    if ((threadIdx.x & 31) == 0 && w) atomicAdd(&block_sum[q], w);
  }
  __syncthreads();
  if (threadIdx.x < kStatCount && block_sum[threadIdx.x])
    atomicAdd(p.stats + threadIdx.x, static_cast<unsigned long long>(block_sum[threadIdx.x]));
}

struct GatherArgs {
  std::int64_t lines, k;
  const std::uint16_t* codes;
  std::int64_t line_stride, k_stride;
  const std::int16_t* scale;
  const std::uint8_t* outl;
  std::int64_t segs, seg_len;
  const int* off;  // [lines + 1]
  int* idx;
  float* val;
};

/// One thread per line: its outliers in k order (deterministic), at off[line].
__global__ void gather_outliers(GatherArgs g) {
  const std::int64_t l = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (l >= g.lines) return;
  int pos = g.off[l];
  if (g.off[l + 1] == pos) return;
  for (std::int64_t s = 0; s < g.segs; ++s) {
    const std::int64_t cell = l * g.segs + s;
    if (!g.outl[cell]) continue;
    const int top = emu::kF16High - g.scale[cell];
    const std::int64_t r1 = min(g.k, (s + 1) * g.seg_len);
    for (std::int64_t r = s * g.seg_len; r < r1; ++r) {
      const std::uint16_t x = g.codes[l * g.line_stride + r * g.k_stride];
      const int e = emu::bf16_binade(x);
      if (e != emu::kNoBinade && !emu::in_window(e, top)) {
        g.idx[pos] = static_cast<int>(r);
        g.val[pos] = emu::bf16_value(x);
        ++pos;
      }
    }
  }
}

// ---- fallback: the outliers' products in fp32 ----

struct FallbackArgs {
  std::int64_t m, n, k;
  const std::uint16_t* a;
  std::int64_t lda;
  const std::uint16_t* b;
  std::int64_t ldb;
  float* c;
  std::int64_t ldc;
  const int *offa, *idxa, *offb, *idxb;
  const float *vala, *valb;
  const std::int16_t* scale_a;
  const std::uint8_t* outl_a;
  std::int64_t segs_a, seg_len_a;
};

__global__ void fallback_outliers(FallbackArgs f) {
  const std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= f.n) return;
  for (std::int64_t i = blockIdx.y; i < f.m; i += gridDim.y) {
    const int a0 = f.offa[i], a1 = f.offa[i + 1], b0 = f.offb[j], b1 = f.offb[j + 1];
    if (a0 == a1 && b0 == b1) continue;
    float corr = 0.0f;
    for (int q = a0; q < a1; ++q) corr = emu::fma_rn(f.vala[q], emu::bf16_value(f.b[f.idxa[q] * f.ldb + j]), corr);
    for (int q = b0; q < b1; ++q) {
      const std::int64_t r = f.idxb[q];
      const std::uint16_t x = f.a[i * f.lda + r];
      const int e = emu::bf16_binade(x);
      const std::int64_t cell = i * f.segs_a + (f.segs_a > 1 ? r / f.seg_len_a : 0);
      if (e != emu::kNoBinade && f.outl_a[cell] && !emu::in_window(e, emu::kF16High - f.scale_a[cell])) continue;  // in dA
      corr = emu::fma_rn(emu::bf16_value(x), f.valb[q], corr);
    }
    f.c[i * f.ldc + j] = emu::fadd_rn(f.c[i * f.ldc + j], corr);
  }
}

}  // namespace fpcert::emu_bf16_stages
