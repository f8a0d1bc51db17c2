// kernels/device/residue_gemms.cu — the Ozaki-II residue GEMMs on the GPU (residue_gemms.cuh).
#include "kernels/device/residue_gemms.cuh"

#include "kernels/device/cuda_check.cuh"
#include "kernels/device/device_array.cuh"

namespace fpcert {

namespace {

constexpr int kTile = 16;   // 16 x 16 residues per thread block, one thread each
constexpr int kChunk = 64;  // K entries of the tile's rows of A and columns of B staged in shared memory at a time
constexpr int kMaxModulus = 256;
constexpr long long kMaxBlock = (1ll << 17) - 1;

struct ResidueArgs {
  long long m, n, k, kblock;
  const int* moduli;          ///< device copy
  const std::int8_t* ops;     ///< modulus l's A at ops + l (m k + n k), its B (column-major) after
  std::uint8_t* out;          ///< modulus l's residues at out + l m n
};

/// Residue (i, j) of modulus blockIdx.z: int32 sums of kblock products (exact: |r| <= 128, kblock < 2^17), each added
/// into the running residue and reduced into [0, m_l), as the host's loop (kernels/gemm/cpu/ozaki2.cpp) does.
__global__ void __launch_bounds__(kTile * kTile) residue_gemms_kernel(ResidueArgs g) {
  __shared__ int sa[kTile][kChunk + 1];
  __shared__ int sb[kTile][kChunk + 1];
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y), tid = ty * kTile + tx;
  const long long i0 = static_cast<long long>(blockIdx.y) * kTile, j0 = static_cast<long long>(blockIdx.x) * kTile;
  const long long i = i0 + ty, j = j0 + tx;
  const long long l = blockIdx.z;
  const int ml = g.moduli[l];
  const std::int8_t* a = g.ops + l * (g.m * g.k + g.n * g.k);
  const std::int8_t* b = a + g.m * g.k;
  long long acc = 0;  // in [0, ml)
  int blk = 0;
  long long in_block = 0;
  for (long long q0 = 0; q0 < g.k; q0 += kChunk) {
    const int len = static_cast<int>(g.k - q0 < kChunk ? g.k - q0 : kChunk);
    __syncthreads();
    for (int e = tid; e < kTile * kChunk; e += kTile * kTile) {
      const int r = e / kChunk, c = e % kChunk;
      const long long ia = i0 + r, jb = j0 + r;
      sa[r][c] = c < len && ia < g.m ? a[ia * g.k + q0 + c] : 0;
      sb[r][c] = c < len && jb < g.n ? b[jb * g.k + q0 + c] : 0;
    }
    __syncthreads();
    for (int c = 0; c < len; ++c) {
      blk += sa[ty][c] * sb[tx][c];
      if (++in_block == g.kblock) {
        acc = ((acc + blk) % ml + ml) % ml;
        blk = 0;
        in_block = 0;
      }
    }
  }
  acc = ((acc + blk) % ml + ml) % ml;
  if (i < g.m && j < g.n) g.out[l * g.m * g.n + i * g.n + j] = static_cast<std::uint8_t>(acc);
}

}  // namespace

bool cuda_residue_gemms(const ResidueGemms& job, std::uint8_t* out, cudaStream_t stream) {
  if (job.count < 1 || job.count > 65535 || !job.moduli || !job.ops || job.m < 1 || job.n < 1 || job.k < 1 || job.kblock < 1 ||
      job.kblock > kMaxBlock || (job.m + kTile - 1) / kTile > 65535 || (job.n + kTile - 1) / kTile > (1ll << 31) - 1)
    return false;
  for (int l = 0; l < job.count; ++l)
    if (job.moduli[l] < 2 || job.moduli[l] > kMaxModulus) return false;
  const auto count = static_cast<std::size_t>(job.count), m = static_cast<std::size_t>(job.m), n = static_cast<std::size_t>(job.n),
             k = static_cast<std::size_t>(job.k);
  cuda::DeviceArray<std::int8_t> dops(count * (m * k + n * k), stream);
  cuda::DeviceArray<std::uint8_t> dout(count * m * n, stream);
  cuda::DeviceArray<int> dmod(count, stream);
  if (!dops.p || !dout.p || !dmod.p) return false;
  FPCERT_CUDA_CHECK(cudaMemcpyAsync(dops.p, job.ops, count * (m * k + n * k), cudaMemcpyHostToDevice, stream));
  FPCERT_CUDA_CHECK(cudaMemcpyAsync(dmod.p, job.moduli, count * sizeof(int), cudaMemcpyHostToDevice, stream));
  const ResidueArgs g{job.m, job.n, job.k, job.kblock, dmod.p, dops.p, dout.p};
  const dim3 grid(static_cast<unsigned>((n + kTile - 1) / kTile), static_cast<unsigned>((m + kTile - 1) / kTile), static_cast<unsigned>(count));
  const dim3 block(kTile, kTile);
  residue_gemms_kernel<<<grid, block, 0, stream>>>(g);
  FPCERT_CUDA_LAUNCH_CHECK("residue_gemms_kernel");
  FPCERT_CUDA_CHECK(cudaMemcpyAsync(out, dout.p, count * m * n, cudaMemcpyDeviceToHost, stream));
  FPCERT_CUDA_CHECK(cudaStreamSynchronize(stream));
  return true;
}

}  // namespace fpcert
