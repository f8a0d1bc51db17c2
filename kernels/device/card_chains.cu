// kernels/device/card_chains.cu — the card chains on the GPU (card_chains.cuh).
#include "kernels/device/card_chains.cuh"

#include <vector>

#include "kernels/device/cuda_check.cuh"
#include "kernels/device/device_array.cuh"

namespace fpcert {

namespace {

using fused_detail::FastOp;

constexpr int kTile = 16;  // 16 x 16 elements per thread block, one thread each

/// The job as the kernel takes it (by value): the slices of A and of B each in one device array.
struct ChainArgs {
  fused_detail::FastBlockParams block;
  fused_detail::Decoder a_dec, b_dec;
  int step;
  long long m, n, kp;
  int terms;
  CardChainTerm term[kCardChainMaxTerms];
  bool add_slots;
  long long promote_every;
  const std::uint32_t* a;  ///< slice s, row i at a + (s m + i) kp
  const std::uint32_t* b;  ///< slice s, column j at b + (s n + j) kp
  std::uint32_t* d;
  std::uint8_t* general;
};

/// Per K step and term: the tile's 16 rows of A's slice and 16 columns of B's slice decoded into shared memory once
/// (fast_operand), then each thread chains its element's instruction (fast_instruction). An element whose block leaves
/// the fast path stops there and is marked general.
__global__ void __launch_bounds__(kTile * kTile) card_chains_kernel(ChainArgs g) {
  __shared__ FastOp sa[kTile][kCardChainMaxStep];
  __shared__ FastOp sb[kTile][kCardChainMaxStep];
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y), tid = ty * kTile + tx;
  const long long i0 = static_cast<long long>(blockIdx.y) * kTile, j0 = static_cast<long long>(blockIdx.x) * kTile;
  const long long i = i0 + ty, j = j0 + tx;
  const bool inside = i < g.m && j < g.n;
  std::uint32_t s0 = 0, s1 = 0;  // +0
  float outer = 0.0f;            // promote_every: the fp32 accumulator the chain is promoted into
  bool ok = true;
  for (long long q = 0; q < g.kp; q += g.step) {
    for (int t = 0; t < g.terms; ++t) {
      const CardChainTerm tm = g.term[t];
      __syncthreads();
      for (int e = tid; e < kTile * g.step; e += kTile * kTile) {
        const int r = e / g.step, c = e % g.step;
        const long long ia = i0 + r, jb = j0 + r;
        sa[r][c] = fused_detail::fast_operand(g.a_dec, ia < g.m ? g.a[(tm.a_slice * g.m + ia) * g.kp + q + c] : 0u);
        sb[r][c] = fused_detail::fast_operand(g.b_dec, jb < g.n ? g.b[(tm.b_slice * g.n + jb) * g.kp + q + c] : 0u);
      }
      __syncthreads();
      if (inside && ok) {
        std::uint32_t s = tm.slot ? s1 : s0;
        ok = fused_detail::fast_instruction(g.block, sa[ty], sb[tx], g.step, s, s);
        if (tm.slot) s1 = s;
        else s0 = s;
      }
    }
    if (g.promote_every > 0 && (q + g.step) % g.promote_every == 0) {
      outer = __fadd_rn(outer, __uint_as_float(s1));
      s1 = 0;
    }
  }
  if (!inside) return;
  const long long x = i * g.n + j;
  // The split schemes' last step: RN_f32(small terms' chain + the leading term's chain), one fp32 addition.
  g.d[x] = g.add_slots               ? __float_as_uint(__fadd_rn(__uint_as_float(s0), __uint_as_float(s1)))
            : g.promote_every > 0 ? __float_as_uint(__fadd_rn(outer, __uint_as_float(s1)))
                                  : s1;
  g.general[x] = ok ? 0 : 1;
}

}  // namespace

bool cuda_card_chains(const CardChains& job, std::uint32_t* d, std::uint8_t* general, cudaStream_t stream) {
  if (job.step < 1 || job.step > kCardChainMaxStep || job.kp % job.step != 0 || job.slices < 1 || job.slices > kCardChainMaxSlices ||
      job.terms < 1 || job.terms > kCardChainMaxTerms || job.m < 1 || job.n < 1 || (job.m + kTile - 1) / kTile > 65535 ||
      job.promote_every < 0 || job.promote_every % job.step != 0 || (job.promote_every > 0 && job.add_slots))
    return false;
  for (int t = 0; t < job.terms; ++t)
    if (job.term[t].a_slice < 0 || job.term[t].a_slice >= job.slices || job.term[t].b_slice < 0 || job.term[t].b_slice >= job.slices ||
        job.term[t].slot < 0 || job.term[t].slot > 1)
      return false;
  const auto S = static_cast<std::size_t>(job.slices), m = static_cast<std::size_t>(job.m), n = static_cast<std::size_t>(job.n),
             kp = static_cast<std::size_t>(job.kp);
  cuda::DeviceArray<std::uint32_t> da(S * m * kp, stream), db(S * n * kp, stream), dd(m * n, stream);
  cuda::DeviceArray<std::uint8_t> dg(m * n, stream);
  if (!da.p || !db.p || !dd.p || !dg.p) return false;
  for (std::size_t s = 0; s < S; ++s) {
    FPCERT_CUDA_CHECK(cudaMemcpyAsync(da.p + s * m * kp, job.a[s], m * kp * sizeof(std::uint32_t), cudaMemcpyHostToDevice, stream));
    FPCERT_CUDA_CHECK(cudaMemcpyAsync(db.p + s * n * kp, job.b[s], n * kp * sizeof(std::uint32_t), cudaMemcpyHostToDevice, stream));
  }
  ChainArgs g{job.block, job.a_dec, job.b_dec, job.step, job.m, job.n, job.kp, job.terms, {}, job.add_slots, job.promote_every, da.p, db.p, dd.p, dg.p};
  for (int t = 0; t < job.terms; ++t) g.term[t] = job.term[t];
  const dim3 grid(static_cast<unsigned>((n + kTile - 1) / kTile), static_cast<unsigned>((m + kTile - 1) / kTile)), block(kTile, kTile);
  card_chains_kernel<<<grid, block, 0, stream>>>(g);
  FPCERT_CUDA_LAUNCH_CHECK("card_chains_kernel");
  FPCERT_CUDA_CHECK(cudaMemcpyAsync(d, dd.p, m * n * sizeof(std::uint32_t), cudaMemcpyDeviceToHost, stream));
  FPCERT_CUDA_CHECK(cudaMemcpyAsync(general, dg.p, m * n, cudaMemcpyDeviceToHost, stream));
  FPCERT_CUDA_CHECK(cudaStreamSynchronize(stream));
  return true;
}

}  // namespace fpcert
