// kernels/device/exact_gemm_fused.cu — the whole exact GEMM reference on the GPU for binary32 inputs
// (exact_gemm_fused.cuh; docs/oracle.md, "On the GPU", "Whole references on the device").
//
// The CPU oracle's steps (oracle/gemm_fast.cpp), each on the device:
//  1. the host checks that every entry is a binary32 value and packs A and B as floats into pinned memory (half of
//     the doubles' bytes to upload), in one pass, each piece's upload issued as soon as it is packed; the device
//     transposes them into lines (rows of A, columns of B, K contiguous);
//  2. scan: per line e (|x| < 2^e), the largest need (e - lowest set bit) and NaN/Inf; the needs' histogram; the host
//     chooses the split with the CPU's own function (exact_gemm::choose_split), so the window and the fallback
//     elements are the CPU's; the uncaptured entries' positions per line;
//  3. per K block: the slices (the same arithmetic as the CPU's, each operation IEEE-rounded with no contraction), one
//     batched cuBLAS DGEMM (exact: integers below 2^53 in any order), the int64 block sums;
//  4. per element: the integers combined and rounded by exact_gemm::combine_levels / ref_from_int_fast, the elements
//     with uncaptured entries finished in exact_gemm::F32ExactSum (ExactSum's code over binary32's range), abs_sum by
//     exact_gemm::abs_sum_bound; elements with a NaN or Inf input are finished on the host, as the CPU does.
// Steps 3 and 4 run per row band of C (about kWholeBandElements elements each): a band's results (only hi, lo, tail,
// abs_sum and status) come back on a second stream while the next band is computed. Every CUDA and cuBLAS call is
// checked; the host reads a band's results after its event, and the counters after the stream is synchronised.
#include "kernels/device/exact_gemm_fused.cuh"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstring>
#include <future>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/huge_pages.hpp"
#include "base/parallel.hpp"
#include "kernels/device/cuda_check.cuh"
#include "kernels/gemm/cublas/cublas_loader.cuh"
#include "oracle/exact_combine.hpp"

namespace fpcert {

namespace {

namespace xg = exact_gemm;

/// Device memory (pinned = false) or pinned host memory that only grows.
struct Mem {
  bool pinned = false;
  void* p = nullptr;
  std::size_t bytes = 0;
  template <class T>
  T* get(std::size_t n) {
    const std::size_t want = std::max<std::size_t>(n, 1) * sizeof(T);
    if (want > bytes) {
      release();
      FPCERT_CUDA_CHECK(pinned ? cudaMallocHost(&p, want) : cudaMalloc(&p, want));
      bytes = want;
    }
    return static_cast<T*>(p);
  }
  void release() {
    if (p) (void)(pinned ? cudaFreeHost(p) : cudaFree(p));  // at exit or before growing: nothing to report to
    p = nullptr;
    bytes = 0;
  }
  ~Mem() { release(); }
};

constexpr int kThreads = 256;
int grid_for(long long n) { return static_cast<int>(std::min<long long>((n + kThreads - 1) / kThreads, 65536)); }

/// out (C x R) = in (R x C)^T, both row-major.
__global__ void transpose_kernel(const float* in, float* out, int R, int C) {
  __shared__ float tile[32][33];
  const int c0 = blockIdx.x * 32, r0 = blockIdx.y * 32;
  for (int y = threadIdx.y; y < 32; y += blockDim.y) {
    const int r = r0 + y, c = c0 + threadIdx.x;
    if (r < R && c < C) tile[y][threadIdx.x] = in[static_cast<long long>(r) * C + c];
  }
  __syncthreads();
  for (int y = threadIdx.y; y < 32; y += blockDim.y) {
    const int c = c0 + y, r = r0 + threadIdx.x;
    if (r < R && c < C) out[static_cast<long long>(c) * R + r] = tile[threadIdx.x][y];
  }
}

/// Step 1 of docs/oracle.md per line (one block each): e, the largest need, NaN/Inf, the needs' histogram.
__global__ void scan_kernel(const float* L, int K, int* e_out, int* need_out, unsigned char* nf_out,
                            unsigned long long* hist) {
  __shared__ unsigned int h[xg::kNeedBins];
  __shared__ int top_s, need_s, nf_s;
  for (int b = threadIdx.x; b < xg::kNeedBins; b += blockDim.x) h[b] = 0;
  if (threadIdx.x == 0) {
    top_s = INT_MIN;
    need_s = 0;
    nf_s = 0;
  }
  __syncthreads();
  const float* x = L + static_cast<long long>(blockIdx.x) * K;
  int top = INT_MIN;
  bool nf = false;
  for (int k = threadIdx.x; k < K; k += blockDim.x) {
    const double v = x[k];
    if (!isfinite(v)) nf = true;
    else if (v != 0) top = max(top, top_exponent(v));
  }
  atomicMax(&top_s, top);
  if (nf) atomicOr(&nf_s, 1);
  __syncthreads();
  const int T = top_s;
  const int e = T == INT_MIN ? 0 : T + 1;
  int mx = 0;
  if (T != INT_MIN)
    for (int k = threadIdx.x; k < K; k += blockDim.x) {
      const double v = x[k];
      if (v == 0 || !isfinite(v)) continue;
      const int need = e - low_exponent(v);
      atomicAdd(&h[need], 1u);
      mx = max(mx, need);
    }
  atomicMax(&need_s, mx);
  __syncthreads();
  for (int b = threadIdx.x; b < xg::kNeedBins; b += blockDim.x)
    if (h[b]) atomicAdd(&hist[b], static_cast<unsigned long long>(h[b]));
  if (threadIdx.x == 0) {
    e_out[blockIdx.x] = e;
    need_out[blockIdx.x] = need_s;
    nf_out[blockIdx.x] = static_cast<unsigned char>(nf_s);
  }
}

/// An entry outside the window W of its line (finite, nonzero, need > W): added per element, not sliced.
__device__ __forceinline__ bool uncaptured(double v, int e, int W) {
  return v != 0 && isfinite(v) && e - low_exponent(v) > W;
}

/// Per line with need > W: the number of uncaptured entries (count) or their positions (fill, from off[l]).
__global__ void uncaptured_kernel(const float* L, int K, const int* e, const int* need, int W, int* count,
                                  const long long* off, int* pos) {
  __shared__ int c;
  const int l = blockIdx.x;
  if (need[l] <= W) {
    if (!off && threadIdx.x == 0) count[l] = 0;
    return;
  }
  if (threadIdx.x == 0) c = 0;
  __syncthreads();
  const float* x = L + static_cast<long long>(l) * K;
  for (int k = threadIdx.x; k < K; k += blockDim.x)
    if (uncaptured(x[k], e[l], W)) {
      const int p = atomicAdd(&c, 1);
      if (off) pos[off[l] + p] = k;  // any order: the corrections are exact sums
    }
  __syncthreads();
  if (!off && threadIdx.x == 0) count[l] = c;
}

/// Step 3 for lines [0, n) over [k0, k0 + w): ops[g * gstride + l * w + kk], g < G the slice operands, g = G the
/// scaled |x| (gemm_fast.cpp's slice_block, S <= 2: the same operations in the same order).
__global__ void slice_kernel(const float* L, long long n, int K, int k0, int w, const int* e, int S, int beta, int W,
                             double* ops, long long gstride) {
  const double two_beta = hd::pow2(beta);
  const int G = S * (S + 1) / 2;
  for (long long t = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; t < n * w;
       t += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long l = t / w;
    const int kk = static_cast<int>(t - l * w);
    const double v = L[l * K + k0 + kk];
    const int el = e[l];
    const int up = beta - el, up1 = min(max(up, -1000), 1000);
    const double f1 = hd::pow2(up1), f2 = hd::pow2(up - up1);
    const int dn1 = min(max(-el, -1000), 1000);
    const double g1 = hd::pow2(dn1), g2 = hd::pow2(-el - dn1);
    const bool fin = isfinite(v);
    const bool cap = fin && (v == 0 || el - low_exponent(v) <= W);
    const double y = __dmul_rn(__dmul_rn(v, f1), f2);  // v 2^(beta - e), exact
    double* o = ops + l * w + kk;
    if (S == 2) {
      const double d1 = rint(y);
      const double d2 = __dmul_rn(__dsub_rn(y, d1), two_beta);  // an integer when captured
      o[0] = cap ? d1 : 0.0;
      o[gstride] = cap ? d2 : 0.0;
      o[2 * gstride] = cap ? __dadd_rn(d1, d2) : 0.0;
    } else {
      o[0] = cap ? y : 0.0;
    }
    o[G * gstride] = fin ? __dmul_rn(__dmul_rn(fabs(v), g1), g2) : 0.0;
  }
}

/// The block sums of every K block but the last: acc[g] (+)= the exact integers, absacc (+)= the |A||B| product.
__global__ void block_sum_kernel(const double* prod, long long mn, int G, long long* acc, double* absacc, bool first) {
  for (long long idx = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; idx < mn;
       idx += static_cast<long long>(gridDim.x) * blockDim.x) {
    for (int g = 0; g < G; ++g) {
      const auto v = static_cast<long long>(prod[g * mn + idx]);
      acc[g * mn + idx] = first ? v : v + acc[g * mn + idx];
    }
    const double av = prod[G * mn + idx];
    absacc[idx] = first ? av : av + absacc[idx];
  }
}

struct FinishArgs {
  const double* prod;
  const long long* acc;  // nullptr: one K block
  const double* absacc;
  long long M, N;
  int K, S, beta, W, G;
  const int *e_a, *e_b;
  const unsigned char *nf_a, *nf_b;
  const int *cnt_a, *cnt_b, *pos_a, *pos_b;
  const long long *off_a, *off_b;
  const float *la, *lb;
  double abs_factor;
  RefValue* ref;
  double* abs;
  unsigned char* status;
  unsigned long long* counters;  // fast, exact, fallbacks, nonfinite
};

/// Step 4 per element (gemm_fast.cpp's "finish element (i, j)", the same functions).
__global__ void finish_kernel(FinishArgs f) {
  unsigned long long fast = 0, exact = 0, fallbacks = 0, nonfinite = 0;
  const long long mn = f.M * f.N;
  for (long long idx = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; idx < mn;
       idx += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long i = idx / f.N, j = idx - i * f.N;
    if (f.nf_a[i] || f.nf_b[j]) {  // the host finishes it
      f.status[idx] = kRefNonFinite;
      ++nonfinite;
      continue;
    }
    std::int64_t v[3];
    for (int g = 0; g < f.G; ++g) v[g] = static_cast<long long>(f.prod[g * mn + idx]) + (f.acc ? f.acc[g * mn + idx] : 0);
    double absv = f.prod[f.G * mn + idx];
    if (f.acc) absv = absv + f.absacc[idx];
    const int E = f.e_a[i] + f.e_b[j] - 2 * f.S * f.beta;
    const bool corr = f.cnt_a[i] > 0 || f.cnt_b[j] > 0;
    const xg::i128 X = xg::combine_levels(v, f.S, f.beta);
    RefValue out;
    unsigned char st = kRefOk;
    if (!corr && xg::ref_from_int_fast(X, E, out)) {
      ++fast;
    } else {
      xg::F32ExactSum sum;
      sum.add_scaled(X, E);
      const float* arow = f.la + i * f.K;
      const float* bcol = f.lb + j * f.K;
      for (int p = 0; p < f.cnt_a[i]; ++p) {
        const int k = f.pos_a[f.off_a[i] + p];
        sum.add_product(arow[k], bcol[k]);
      }
      for (int p = 0; p < f.cnt_b[j]; ++p) {  // each k once: those with a_ik uncaptured were added above
        const int k = f.pos_b[f.off_b[j] + p];
        if (!uncaptured(arow[k], f.e_a[i], f.W)) sum.add_product(arow[k], bcol[k]);
      }
      out = sum.finalize(st);
      if (corr) {
        st |= kRefFallback;
        ++fallbacks;
      }
      ++exact;
    }
    f.ref[idx] = out;
    f.status[idx] = st;
    f.abs[idx] = xg::abs_sum_bound(absv, 0.0, f.abs_factor, f.e_a[i] + f.e_b[j]);
  }
  // One atomic per warp and counter.
  for (int o = 16; o > 0; o >>= 1) {
    fast += __shfl_down_sync(0xffffffffu, fast, o);
    exact += __shfl_down_sync(0xffffffffu, exact, o);
    fallbacks += __shfl_down_sync(0xffffffffu, fallbacks, o);
    nonfinite += __shfl_down_sync(0xffffffffu, nonfinite, o);
  }
  if ((threadIdx.x & 31) == 0) {
    if (fast) atomicAdd(&f.counters[0], fast);
    if (exact) atomicAdd(&f.counters[1], exact);
    if (fallbacks) atomicAdd(&f.counters[2], fallbacks);
    if (nonfinite) atomicAdd(&f.counters[3], nonfinite);
  }
}

/// Whether v is a binary32 value (NaN and Inf are).
inline bool is_binary32(double v) { return static_cast<double>(static_cast<float>(v)) == v || v != v; }

/// Whether every entry of m's first line (a row of a row-major matrix, a column of a column-major one) is a binary32
/// value (NaN and Inf are): fp64 inputs are declined there, before any buffer is made for them.
bool first_line_binary32(const MatrixView& m) {
  const std::int64_t inner = m.layout == Layout::RowMajor ? m.cols : m.rows;
  bool good = true;
  for (std::int64_t k = 0; k < inner; ++k) good &= is_binary32(m.data[k]);
  return good;
}

/// Checks that every entry of m is a binary32 value and packs it dense, in its own order (`outer` lines of `inner`
/// contiguous), into the pinned dst, in pieces of lines: each piece's upload to dev is issued on `stream` as soon as
/// the host's threads have packed it, so that the link carries a piece while the next one is packed (one pass over
/// the doubles for the check and the packing). False at the first piece holding a value that is not binary32 (fp64
/// data): the stream is synchronised first, so that no copy still reads dst.
bool pack_upload_binary32(const MatrixView& m, float* dst, float* dev, cudaStream_t stream, unsigned threads) {
  const bool rows = m.layout == Layout::RowMajor;
  const std::int64_t outer = rows ? m.rows : m.cols, inner = rows ? m.cols : m.rows;
  const std::int64_t piece = std::max<std::int64_t>(64, (outer + 7) / 8);
  for (std::int64_t p0 = 0; p0 < outer; p0 += piece) {
    const std::int64_t p1 = std::min(outer, p0 + piece);
    std::atomic<bool> ok{true};
    parallel_for(
        static_cast<std::uint64_t>(p1 - p0), 16,
        [&](std::uint64_t o0, std::uint64_t o1, unsigned) {
          for (std::uint64_t o = o0; o < o1 && ok.load(std::memory_order_relaxed); ++o) {
            const std::int64_t line = p0 + static_cast<std::int64_t>(o);
            const double* src = m.data + line * m.ld;
            float* out = dst + line * inner;
            bool good = true;
            for (std::int64_t k = 0; k < inner; ++k) {
              good &= is_binary32(src[k]);
              out[k] = static_cast<float>(src[k]);
            }
            if (!good) ok.store(false, std::memory_order_relaxed);
          }
        },
        threads);
    if (!ok.load()) {
      FPCERT_CUDA_CHECK(cudaStreamSynchronize(stream));
      return false;
    }
    FPCERT_CUDA_CHECK(cudaMemcpyAsync(dev + p0 * inner, dst + p0 * inner, static_cast<std::size_t>((p1 - p0) * inner) * 4,
                                      cudaMemcpyHostToDevice, stream));
  }
  return true;
}

/// bytes from device memory into host memory that is not pinned: through two pinned staging buffers in chunks, each
/// chunk copied out by the host's threads while the next one comes down (a pageable copy runs at a fraction of the
/// link's speed).
void download(void* dst, const void* src, std::size_t bytes, Mem* stage, cudaEvent_t* ev, cudaStream_t stream,
              unsigned threads) {
  constexpr std::size_t kChunk = std::size_t{64} << 20;
  char* st[2] = {stage[0].get<char>(kChunk), stage[1].get<char>(kChunk)};
  const std::size_t n = (bytes + kChunk - 1) / kChunk;
  const auto issue = [&](std::size_t c) {
    const std::size_t off = c * kChunk, len = std::min(kChunk, bytes - off);
    FPCERT_CUDA_CHECK(cudaMemcpyAsync(st[c % 2], static_cast<const char*>(src) + off, len, cudaMemcpyDeviceToHost, stream));
    FPCERT_CUDA_CHECK(cudaEventRecord(ev[c % 2], stream));
  };
  if (n) issue(0);
  for (std::size_t c = 0; c < n; ++c) {
    if (c + 1 < n) issue(c + 1);  // into the buffer chunk c - 1 left, already copied out
    FPCERT_CUDA_CHECK(cudaEventSynchronize(ev[c % 2]));
    const std::size_t off = c * kChunk, len = std::min(kChunk, bytes - off);
    constexpr std::size_t kPiece = std::size_t{1} << 20;
    parallel_for(
        (len + kPiece - 1) / kPiece, 1,
        [&](std::uint64_t p0, std::uint64_t p1, unsigned) {
          for (std::uint64_t p = p0; p < p1; ++p) {
            const std::size_t o = p * kPiece, l = std::min(kPiece, len - o);
            std::memcpy(static_cast<char*>(dst) + off + o, st[c % 2] + o, l);
          }
        },
        threads);
  }
}

}  // namespace

struct FusedBuffers {
  Mem ha{true}, hb{true};                     // pinned: A and B packed as binary32
  Mem ra, rb, la, lb;                         // device: as uploaded; as lines (when a transpose was needed)
  Mem ea, eb, na, nb, fa, fb, hist;           // scan
  Mem ca, cb, oa, ob, pa, pb;                 // uncaptured entries: counts, offsets, positions
  Mem ops_a, ops_b, prod, acc, absacc;        // slices, products, block sums
  Mem ref, abs, status, counters;             // results
  Mem stage[2] = {Mem{true}, Mem{true}};      // pinned: the results' way back
  cudaEvent_t ev[2] = {nullptr, nullptr};      // the staging buffers' chunks, on `copy`
  cudaEvent_t done[2] = {nullptr, nullptr};    // a row band's results written (bands alternate)
  std::vector<cudaEvent_t> timing;             // per band parity and K block: before slicing, DGEMM, sums, after
  cudaStream_t copy = nullptr;                 // the results' downloads, beside the next band's work
  /// The events and the copy stream, made at the first call; `timing` grown to 2 x nblocks x 4.
  void ready(std::int64_t nblocks) {
    for (cudaEvent_t* e : {&ev[0], &ev[1], &done[0], &done[1]})
      if (!*e) FPCERT_CUDA_CHECK(cudaEventCreateWithFlags(e, cudaEventDisableTiming));
    if (!copy) FPCERT_CUDA_CHECK(cudaStreamCreateWithFlags(&copy, cudaStreamNonBlocking));
    while (timing.size() < static_cast<std::size_t>(8 * nblocks)) {
      cudaEvent_t e = nullptr;
      FPCERT_CUDA_CHECK(cudaEventCreate(&e));
      timing.push_back(e);
    }
  }
  /// Device memory held now (reused, or freed before growing, by the next call).
  double device_bytes() const {
    double s = 0;
    for (const Mem* m : {&ra, &rb, &la, &lb, &ea, &eb, &na, &nb, &fa, &fb, &hist, &ca, &cb, &oa, &ob, &pa, &pb, &ops_a,
                         &ops_b, &prod, &acc, &absacc, &ref, &abs, &status, &counters})
      s += static_cast<double>(m->bytes);
    return s;
  }
  ~FusedBuffers() {  // at exit: an error here has no one to report to
    for (cudaEvent_t e : {ev[0], ev[1], done[0], done[1]})
      if (e) (void)cudaEventDestroy(e);
    for (cudaEvent_t e : timing) (void)cudaEventDestroy(e);
    if (copy) (void)cudaStreamDestroy(copy);
  }
};
void FusedBuffersDeleter::operator()(FusedBuffers* p) const { delete p; }
FusedBuffersPtr make_fused_buffers() { return FusedBuffersPtr(new FusedBuffers); }

bool fused_gemm_reference(FusedBuffers& buf, cudaStream_t stream, cublasHandle_t handle, const MatrixView& a,
                          const MatrixView& b, unsigned threads, std::int64_t band_elements, GemmRef& r,
                          ExactGemmTimes& times) {
  const std::int64_t M = a.rows, N = b.cols, K = a.cols;
  if (M <= 0 || N <= 0 || K <= 0 || M > INT_MAX || N > INT_MAX || K > INT_MAX / 2) return false;
  // A transpose's grid has (K + 31) / 32 rows of tiles, at most 65535.
  const bool transposes = a.layout != Layout::RowMajor || b.layout == Layout::RowMajor;
  if (transposes && (K + 31) / 32 > 65535) return false;
  const auto mn = static_cast<std::size_t>(M * N);
  auto t0 = std::chrono::steady_clock::now();
  const bool first = first_line_binary32(a) && first_line_binary32(b);
  times.prep_s += seconds_since(t0);
  if (!first) return false;
  // Row bands of A (and C): each band's K blocks and combination on `stream`, its results downloaded on `copy` while
  // the next band is computed. About band_elements elements of C each, at most 16 bands.
  // (A quotient rounded up without adding first, and at most M: band_elements may be INT64_MAX, one band.)
  const std::int64_t Mb = std::min(M, std::max<std::int64_t>({1, band_elements / N + (band_elements % N != 0), (M + 15) / 16}));
  const std::int64_t nbands = (M + Mb - 1) / Mb, MbN = Mb * N;
  // Memory: uploads and lines (4 (M + N) K bytes, twice), the uncaptured positions (at most 4 (M + N) K), the largest
  // K block's slices (kc as kblock_for makes it, at most max(2048, K / 256)) and a band's products and block sums, the
  // results. Declined (the host path runs) when the device has not that much free, counting what this path holds.
  {
    const double kc = static_cast<double>(std::max<std::int64_t>(std::min<std::int64_t>(K, 2048), (K + 255) / 256));
    const double need = 12.0 * static_cast<double>(M + N) * static_cast<double>(K) +
                        4.0 * 8 * static_cast<double>(Mb + N) * kc +
                        static_cast<double>(MbN) * (4 * 8 + 3 * 8 + 8) + static_cast<double>(mn) * (24 + 8 + 1);
    std::size_t free_b = 0, total_b = 0;
    FPCERT_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    if (need > 0.8 * (static_cast<double>(free_b) + static_cast<double>(buf.device_bytes()))) return false;
  }
  // The host's result arrays, allocated and their pages touched by the host's threads once the packing is done, while
  // the device works (side by side the two compete for the host's memory: 8192^3's check and packing took 0.086 s
  // beside the touching, bench_oracle_gemm_gpu on an H100 host, 2026-12-08); their values are left unset
  // (resize_unset): the downloads below write every byte of each.
  RefArray<RefValue> out_c;
  RefArray<double> out_abs;
  RefArray<std::uint8_t> out_status;
  std::future<void> alloc;
  // Declined below (the split) or failed: the allocation is waited for before leaving (it writes these locals).
  struct Join {
    std::future<void>& f;
    ~Join() {
      if (f.valid()) f.wait();
    }
  } join{alloc};

  // Check, pack and upload (each piece's upload issued as it is packed); lines: rows of A (M x K), columns of B (N x K).
  t0 = std::chrono::steady_clock::now();
  float* ha = buf.ha.get<float>(static_cast<std::size_t>(M * K));
  float* hb = buf.hb.get<float>(static_cast<std::size_t>(K * N));
  float* ra = buf.ra.get<float>(static_cast<std::size_t>(M * K));
  float* rb = buf.rb.get<float>(static_cast<std::size_t>(K * N));
  const bool binary32 = pack_upload_binary32(a, ha, ra, stream, threads) && pack_upload_binary32(b, hb, rb, stream, threads);
  times.prep_s += seconds_since(t0);
  if (!binary32) return false;
  alloc = std::async(std::launch::async, [&] {
    resize_unset(out_c, mn, threads);
    resize_unset(out_abs, mn, threads);
    resize_unset(out_status, mn, threads);
  });
  t0 = std::chrono::steady_clock::now();
  const float* la = ra;
  const float* lb = rb;
  const dim3 tb(32, 8);
  if (a.layout != Layout::RowMajor) {  // packed K x M: transpose
    float* t = buf.la.get<float>(static_cast<std::size_t>(M * K));
    transpose_kernel<<<dim3((M + 31) / 32, (K + 31) / 32), tb, 0, stream>>>(ra, t, static_cast<int>(K), static_cast<int>(M));
    FPCERT_CUDA_LAUNCH_CHECK("transpose_kernel");
    la = t;
  }
  if (b.layout == Layout::RowMajor) {  // packed K x N: transpose
    float* t = buf.lb.get<float>(static_cast<std::size_t>(K * N));
    transpose_kernel<<<dim3((N + 31) / 32, (K + 31) / 32), tb, 0, stream>>>(rb, t, static_cast<int>(K), static_cast<int>(N));
    FPCERT_CUDA_LAUNCH_CHECK("transpose_kernel");
    lb = t;
  }
  FPCERT_CUDA_CHECK(cudaStreamSynchronize(stream));
  times.upload_s += seconds_since(t0);

  // Scan, split, uncaptured entries.
  t0 = std::chrono::steady_clock::now();
  int* e_a = buf.ea.get<int>(static_cast<std::size_t>(M));
  int* e_b = buf.eb.get<int>(static_cast<std::size_t>(N));
  int* need_a = buf.na.get<int>(static_cast<std::size_t>(M));
  int* need_b = buf.nb.get<int>(static_cast<std::size_t>(N));
  unsigned char* nf_a = buf.fa.get<unsigned char>(static_cast<std::size_t>(M));
  unsigned char* nf_b = buf.fb.get<unsigned char>(static_cast<std::size_t>(N));
  auto* hist = buf.hist.get<unsigned long long>(2 * xg::kNeedBins);
  FPCERT_CUDA_CHECK(cudaMemsetAsync(hist, 0, 2 * xg::kNeedBins * sizeof(unsigned long long), stream));
  scan_kernel<<<static_cast<unsigned>(M), kThreads, 0, stream>>>(la, static_cast<int>(K), e_a, need_a, nf_a, hist);
  FPCERT_CUDA_LAUNCH_CHECK("scan_kernel");
  scan_kernel<<<static_cast<unsigned>(N), kThreads, 0, stream>>>(lb, static_cast<int>(K), e_b, need_b, nf_b,
                                                                 hist + xg::kNeedBins);
  FPCERT_CUDA_LAUNCH_CHECK("scan_kernel");
  std::vector<std::int64_t> h(2 * xg::kNeedBins);
  std::vector<int> hneed_a(static_cast<std::size_t>(M)), hneed_b(static_cast<std::size_t>(N));
  std::vector<unsigned char> hnf_a(static_cast<std::size_t>(M)), hnf_b(static_cast<std::size_t>(N));
  FPCERT_CUDA_CHECK(cudaMemcpyAsync(h.data(), hist, h.size() * 8, cudaMemcpyDeviceToHost, stream));
  FPCERT_CUDA_CHECK(cudaMemcpyAsync(hneed_a.data(), need_a, hneed_a.size() * 4, cudaMemcpyDeviceToHost, stream));
  FPCERT_CUDA_CHECK(cudaMemcpyAsync(hneed_b.data(), need_b, hneed_b.size() * 4, cudaMemcpyDeviceToHost, stream));
  FPCERT_CUDA_CHECK(cudaMemcpyAsync(hnf_a.data(), nf_a, hnf_a.size(), cudaMemcpyDeviceToHost, stream));
  FPCERT_CUDA_CHECK(cudaMemcpyAsync(hnf_b.data(), nf_b, hnf_b.size(), cudaMemcpyDeviceToHost, stream));
  FPCERT_CUDA_CHECK(cudaStreamSynchronize(stream));
  const xg::Split c = xg::choose_split(h.data(), h.data() + xg::kNeedBins, hneed_a.data(), hneed_b.data(), M, N, K);
  if (c.S > 2) {  // lines spanning beyond two slices' window (not binary32's usual data): the host path
    times.scan_s += seconds_since(t0);
    return false;
  }
  int* cnt_a = buf.ca.get<int>(static_cast<std::size_t>(M));
  int* cnt_b = buf.cb.get<int>(static_cast<std::size_t>(N));
  uncaptured_kernel<<<static_cast<unsigned>(M), kThreads, 0, stream>>>(la, static_cast<int>(K), e_a, need_a, c.W, cnt_a,
                                                                       nullptr, nullptr);
  FPCERT_CUDA_LAUNCH_CHECK("uncaptured_kernel");
  uncaptured_kernel<<<static_cast<unsigned>(N), kThreads, 0, stream>>>(lb, static_cast<int>(K), e_b, need_b, c.W, cnt_b,
                                                                       nullptr, nullptr);
  FPCERT_CUDA_LAUNCH_CHECK("uncaptured_kernel");
  std::vector<int> hc_a(static_cast<std::size_t>(M)), hc_b(static_cast<std::size_t>(N));
  FPCERT_CUDA_CHECK(cudaMemcpyAsync(hc_a.data(), cnt_a, hc_a.size() * 4, cudaMemcpyDeviceToHost, stream));
  FPCERT_CUDA_CHECK(cudaMemcpyAsync(hc_b.data(), cnt_b, hc_b.size() * 4, cudaMemcpyDeviceToHost, stream));
  FPCERT_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<long long> ho_a(static_cast<std::size_t>(M)), ho_b(static_cast<std::size_t>(N));
  long long un_a = 0, un_b = 0;
  for (std::size_t i = 0; i < hc_a.size(); ++i) ho_a[i] = un_a, un_a += hc_a[i];
  for (std::size_t j = 0; j < hc_b.size(); ++j) ho_b[j] = un_b, un_b += hc_b[j];
  long long* off_a = buf.oa.get<long long>(static_cast<std::size_t>(M));
  long long* off_b = buf.ob.get<long long>(static_cast<std::size_t>(N));
  int* pos_a = buf.pa.get<int>(static_cast<std::size_t>(un_a));
  int* pos_b = buf.pb.get<int>(static_cast<std::size_t>(un_b));
  FPCERT_CUDA_CHECK(cudaMemcpyAsync(off_a, ho_a.data(), ho_a.size() * 8, cudaMemcpyHostToDevice, stream));
  FPCERT_CUDA_CHECK(cudaMemcpyAsync(off_b, ho_b.data(), ho_b.size() * 8, cudaMemcpyHostToDevice, stream));
  if (un_a) {
    uncaptured_kernel<<<static_cast<unsigned>(M), kThreads, 0, stream>>>(la, static_cast<int>(K), e_a, need_a, c.W, nullptr,
                                                                         off_a, pos_a);
    FPCERT_CUDA_LAUNCH_CHECK("uncaptured_kernel");
  }
  if (un_b) {
    uncaptured_kernel<<<static_cast<unsigned>(N), kThreads, 0, stream>>>(lb, static_cast<int>(K), e_b, need_b, c.W, nullptr,
                                                                         off_b, pos_b);
    FPCERT_CUDA_LAUNCH_CHECK("uncaptured_kernel");
  }
  FPCERT_CUDA_CHECK(cudaStreamSynchronize(stream));  // ho_a, ho_b are read by the copies until here
  times.scan_s += seconds_since(t0);

  // Per row band, K blocks: slices, one batched DGEMM, block sums; the last block finishes the band's elements. B's
  // slices are made again for each band (a pass over N x K; the products are M / bands x N x K).
  const int G = c.G;
  buf.ready(c.nblocks);
  double* ops_a = buf.ops_a.get<double>(static_cast<std::size_t>((G + 1) * Mb * c.kc));
  double* ops_b = buf.ops_b.get<double>(static_cast<std::size_t>((G + 1) * N * c.kc));
  double* prod = buf.prod.get<double>(static_cast<std::size_t>((G + 1) * MbN));
  long long* acc = c.nblocks > 1 ? buf.acc.get<long long>(static_cast<std::size_t>(G * MbN)) : nullptr;
  double* absacc = c.nblocks > 1 ? buf.absacc.get<double>(static_cast<std::size_t>(MbN)) : nullptr;
  auto* ref = buf.ref.get<RefValue>(mn);
  double* absd = buf.abs.get<double>(mn);
  unsigned char* status = buf.status.get<unsigned char>(mn);
  auto* counters = buf.counters.get<unsigned long long>(4);
  FPCERT_CUDA_CHECK(cudaMemsetAsync(counters, 0, 4 * sizeof(unsigned long long), stream));
  const cublas::Api& cb = cublas::api();
  const double one = 1.0, zero = 0.0;
  const auto band_rows = [&](std::int64_t band) { return std::min(Mb, M - band * Mb); };
  // Band `band`'s work on `stream`, timed by events (parity band % 2), ending with done[band % 2].
  const auto enqueue = [&](std::int64_t band) {
    const std::int64_t i0 = band * Mb, mb = band_rows(band), mbn = mb * N;
    cudaEvent_t* tev = buf.timing.data() + (band % 2) * 4 * c.nblocks;
    for (std::int64_t blk = 0; blk < c.nblocks; ++blk) {
      const std::int64_t k0 = blk * c.kc, w = std::min(K, k0 + c.kc) - k0;
      FPCERT_CUDA_CHECK(cudaEventRecord(tev[4 * blk], stream));
      slice_kernel<<<grid_for(mb * w), kThreads, 0, stream>>>(la + i0 * K, mb, static_cast<int>(K), static_cast<int>(k0),
                                                              static_cast<int>(w), e_a + i0, c.S, c.beta, c.W, ops_a, mb * w);
      FPCERT_CUDA_LAUNCH_CHECK("slice_kernel");
      slice_kernel<<<grid_for(N * w), kThreads, 0, stream>>>(lb, N, static_cast<int>(K), static_cast<int>(k0),
                                                             static_cast<int>(w), e_b, c.S, c.beta, c.W, ops_b, N * w);
      FPCERT_CUDA_LAUNCH_CHECK("slice_kernel");
      FPCERT_CUDA_CHECK(cudaEventRecord(tev[4 * blk + 1], stream));
      // Row-major C_g (mb x N) = column-major C_g^T = B_g^T A_g^T (the lines are columns of w).
      FPCERT_CUBLAS_CHECK(cb.gemm_strided_batched_ex(
          handle, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(N), static_cast<int>(mb), static_cast<int>(w), &one, ops_b,
          CUDA_R_64F, static_cast<int>(w), static_cast<long long>(N * w), ops_a, CUDA_R_64F, static_cast<int>(w),
          static_cast<long long>(mb * w), &zero, prod, CUDA_R_64F, static_cast<int>(N), static_cast<long long>(mbn), G + 1,
          CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT));
      FPCERT_CUDA_CHECK(cudaGetLastError());
      FPCERT_CUDA_CHECK(cudaEventRecord(tev[4 * blk + 2], stream));
      if (blk + 1 < c.nblocks) {
        block_sum_kernel<<<grid_for(mbn), kThreads, 0, stream>>>(prod, mbn, G, acc, absacc, blk == 0);
        FPCERT_CUDA_LAUNCH_CHECK("block_sum_kernel");
      } else {  // the band's rows of A, of the scan's results and of C
        FinishArgs f{prod, acc, absacc, mb, N, static_cast<int>(K), c.S, c.beta, c.W, G, e_a + i0, e_b, nf_a + i0, nf_b,
                     cnt_a + i0, cnt_b, pos_a, pos_b, off_a + i0, off_b, la + i0 * K, lb,
                     1.0 + static_cast<double>(2 * (K + c.nblocks + 2)) * 0x1p-53, ref + i0 * N, absd + i0 * N,
                     status + i0 * N, counters};
        finish_kernel<<<grid_for(mbn), kThreads, 0, stream>>>(f);
        FPCERT_CUDA_LAUNCH_CHECK("finish_kernel");
      }
      FPCERT_CUDA_CHECK(cudaEventRecord(tev[4 * blk + 3], stream));
    }
    FPCERT_CUDA_CHECK(cudaEventRecord(buf.done[band % 2], stream));
  };
  // Band b + 1 is enqueued before band b's results are downloaded; its events (parity (b + 1) % 2) were read in the
  // previous round, after band b - 1 was done.
  t0 = std::chrono::steady_clock::now();
  const auto t_bands = t0;
  static_assert(sizeof(RefValue) == 24, "the device writes RefValue's host layout");
  enqueue(0);
  for (std::int64_t band = 0; band < nbands; ++band) {
    if (band + 1 < nbands) enqueue(band + 1);
    FPCERT_CUDA_CHECK(cudaEventSynchronize(buf.done[band % 2]));
    const cudaEvent_t* tev = buf.timing.data() + (band % 2) * 4 * c.nblocks;
    for (std::int64_t blk = 0; blk < c.nblocks; ++blk) {
      float ms[3] = {0, 0, 0};
      for (int q = 0; q < 3; ++q) FPCERT_CUDA_CHECK(cudaEventElapsedTime(&ms[q], tev[4 * blk + q], tev[4 * blk + q + 1]));
      times.slice_s += 1e-3 * ms[0];
      times.gemm_s += 1e-3 * ms[1];
      times.finish_s += 1e-3 * ms[2];
      ++times.blocks;
    }
    if (band == 0) {
      t0 = std::chrono::steady_clock::now();
      alloc.get();
      times.alloc_wait_s += seconds_since(t0);
    }
    t0 = std::chrono::steady_clock::now();
    const auto o = static_cast<std::size_t>(band * Mb * N), len = static_cast<std::size_t>(band_rows(band) * N);
    download(out_c.data() + o, ref + o, len * sizeof(RefValue), buf.stage, buf.ev, buf.copy, threads);
    download(out_abs.data() + o, absd + o, len * 8, buf.stage, buf.ev, buf.copy, threads);
    download(out_status.data() + o, status + o, len, buf.stage, buf.ev, buf.copy, threads);
    times.download_s += seconds_since(t0);
  }
  unsigned long long cnt[4];
  FPCERT_CUDA_CHECK(cudaMemcpyAsync(cnt, counters, sizeof cnt, cudaMemcpyDeviceToHost, stream));
  FPCERT_CUDA_CHECK(cudaStreamSynchronize(stream));
  times.bands_s += seconds_since(t_bands);
  times.bands += nbands;
  r.c = std::move(out_c);
  r.abs_sum = std::move(out_abs);
  r.status = std::move(out_status);

  // Elements with a NaN or Inf input: IEEE's sum of the non-finite products in k order (as the CPU and exact_dot).
  t0 = std::chrono::steady_clock::now();
  if (cnt[3]) {
    const auto finish_nf = [&](std::int64_t i, std::int64_t j) {
      double x = 0;
      for (std::int64_t k = 0; k < K; ++k) {
        const double av = a.at(i, k), bv = b.at(k, j);
        if (!std::isfinite(av) || !std::isfinite(bv)) x += av * bv;
      }
      const auto idx = static_cast<std::size_t>(i * N + j);
      r.c[idx] = {std::isnan(x) ? std::numeric_limits<double>::quiet_NaN() : x, 0.0, 0};
      r.abs_sum[idx] = std::numeric_limits<double>::infinity();
    };
    parallel_for(
        static_cast<std::uint64_t>(M), 1,
        [&](std::uint64_t i0, std::uint64_t i1, unsigned) {
          for (std::uint64_t i = i0; i < i1; ++i)
            for (std::int64_t j = 0; j < N; ++j)
              if (hnf_a[i] || hnf_b[static_cast<std::size_t>(j)]) finish_nf(static_cast<std::int64_t>(i), j);
        },
        threads);
  }
  times.host_s += seconds_since(t0);

  r.m = M;
  r.n = N;
  r.info.path = "ozaki";
  r.info.slices = c.S;
  r.info.beta = c.beta;
  r.info.kblock = c.kc;
  r.info.gemms = c.G + 1;
  r.info.uncaptured_a = un_a;
  r.info.uncaptured_b = un_b;
  r.info.fast_elements = static_cast<std::int64_t>(cnt[0]);
  r.info.exact_elements = static_cast<std::int64_t>(cnt[1]);
  r.info.nonfinite = static_cast<std::int64_t>(cnt[3]);
  r.fallbacks = static_cast<std::int64_t>(cnt[2]);
  ++times.whole;
  return true;
}

}  // namespace fpcert
