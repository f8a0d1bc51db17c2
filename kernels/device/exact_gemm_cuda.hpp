// kernels/device/exact_gemm_cuda.hpp — the exact GEMM reference's slice GEMMs on a GPU: cuBLAS DGEMM (FP64, tensor
// cores on sm_80+) as an ExactGemmEngine (oracle/gemm_engine.hpp), and the --reference cpu|gpu|auto choice. No CUDA
// header: the engine lives in exact_gemm_cuda.cu (CUDA builds), the choice in exact_gemm_select.cpp.
//
// docs/oracle.md, "On the GPU": every slice product and partial sum is an integer below 2^53, so DGEMM computes them
// exactly in whatever order and blocking cuBLAS picks; the slicing and the integer combination stay on the host.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "oracle/gemm_engine.hpp"

namespace fpcert {

/// Where the GPU engine's time went since the last reset (seconds; of wall time, each part synchronised, unless said).
struct ExactGemmTimes {
  double upload_s = 0;    ///< slice operands to the device (begin_block); whole references: the wait for the uploads
                          ///< issued while packing, and the transposes
  double gemm_s = 0;      ///< cublasGemmStridedBatchedEx, G + 1 products per panel (whole references: device time)
  double download_s = 0;  ///< the products back to host memory (whole references: hi, lo, tail, abs_sum, status, the
                          ///< host's wall in the downloads, which overlap the next row band's work)
  std::int64_t blocks = 0, panels = 0;
  // Whole references on the device (ExactGemmEngine::whole_reference; exact_gemm_fused.cu):
  double prep_s = 0;    ///< the host's binary32 check and packing of A and B into pinned memory (uploads issued)
  double scan_s = 0;    ///< the scan, the split's choice (on the host, from the device's histograms), the uncaptured
  double slice_s = 0;   ///< slicing (device time, cudaEvents)
  double finish_s = 0;  ///< block sums, the integer combination and the corrections (device time, cudaEvents)
  double bands_s = 0;   ///< wall of the row bands: their device work and their downloads, overlapped
  double host_s = 0;    ///< elements with a NaN or Inf input, finished on the host (exact_dot)
  double alloc_wait_s = 0;  ///< waiting for the host's result arrays (allocated while the device works)
  std::int64_t whole = 0;  ///< references made wholly on the device
  std::int64_t bands = 0;  ///< their row bands
};

class CudaExactGemmEngine : public ExactGemmEngine {
 public:
  virtual ExactGemmTimes times() const = 0;
  virtual void reset_times() = 0;
  /// Whole references on the device for binary32 inputs (on by default; off: the slice DGEMMs only, per panel).
  virtual void set_whole(bool on) = 0;
  /// Elements of C per row band of a whole reference (at least 1; default kWholeBandElements): each band's results
  /// come down while the next band is computed. Tests set it small to make many bands of small problems.
  virtual void set_band_elements(std::int64_t n) = 0;
};

/// A whole reference's row bands hold about this many elements of C (at most 16 bands): 8192^2 in 8 bands of 280 MB
/// of results each.
inline constexpr std::int64_t kWholeBandElements = std::int64_t{1} << 23;

/// The cuBLAS DGEMM engine ("gpu-cublas-dgemm") on device 0, or nullptr with the reason in *why (no CUDA in this
/// build, no device, cuBLAS not loadable).
std::shared_ptr<CudaExactGemmEngine> make_cuda_exact_gemm_engine(std::string* why = nullptr);

/// Below this many products (m n k; 512^3) the CPU oracle on a 16-core host is as fast as the GPU engine with its fixed
/// costs per call (bench_oracle_gemm_gpu, docs/oracle.md "On the GPU"): the process default sends them to the CPU.
inline constexpr std::int64_t kGpuReferenceMinProducts = std::int64_t{1} << 27;
/// The smallest card-chain job (CardChains::products(), m n kp terms) the default engine takes to the device: below it
/// the host emulates the case in about 10 ms on one thread (bench_verdict 1024 1024 1024 on this development machine's
/// 2 threads: gemm_3xbf16_mma_sm80's emulation 1.0 s for 2^30 products of 3 terms, about 0.6 ns per instruction
/// product and thread; docs/tensor_cores.md, "The card emulation on the GPU").
inline constexpr std::int64_t kGpuCardChainMinProducts = std::int64_t{1} << 24;
/// The smallest Ozaki-II residue job (ResidueGemms::products(), moduli m n k) the default engine takes to the device: the
/// host's int8 loop takes at most about 0.4 ns a product on one thread (gemm_f64_ozaki2_int8's fill_device emulation,
/// 1.6e10 residue products and the rest of the scheme, took 6.8 s on one thread of the H100 host, 2026-12-07), so a job
/// below 2^27 costs the host at most about 60 ms (docs/fp64.md, "The bitwise tier on the device").
inline constexpr std::int64_t kGpuResidueMinProducts = std::int64_t{1} << 27;

/// --reference: "cpu" (the built-in Eigen engine), "gpu" (the cuBLAS engine; DeviceError, exit 3, when no device is
/// usable, with the reason, asked at once through `usable`, which must not initialise CUDA in this process: in a
/// child, since CUDA does not survive fork() and the tensor-core cards' probe and --isolate fork later), "auto" (the
/// cuBLAS engine where a device answers when the first reference of kGpuReferenceMinProducts comes, else the CPU).
/// The engine is made at its first use, a reference of at least kGpuReferenceMinProducts; smaller ones stay on the
/// CPU. Sets the process default (set_default_gemm_engine) and returns what was chosen (recorded in certify's
/// notes.reference_engine). InputError (exit 2) for another word.
std::string use_reference_engine(const std::string& choice, const std::function<bool(std::string*)>& usable);

}  // namespace fpcert
