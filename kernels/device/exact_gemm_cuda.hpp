// kernels/device/exact_gemm_cuda.hpp — the exact GEMM reference's slice GEMMs on a GPU: cuBLAS DGEMM (FP64, tensor
// cores on sm_80+) as an ExactGemmEngine (oracle/gemm_engine.hpp), and the --reference cpu|gpu|auto choice. No CUDA
// header: the engine lives in exact_gemm_cuda.cu (CUDA builds), the choice in exact_gemm_select.cpp.
//
// docs/oracle.md, "On the GPU": every slice product and partial sum is an integer below 2^53, so DGEMM computes them
// exactly in whatever order and blocking cuBLAS picks; the slicing and the integer combination stay on the host.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "oracle/gemm_engine.hpp"

namespace fpcert {

/// Where the GPU engine's time went since the last reset (seconds of wall time, each part synchronised).
struct ExactGemmTimes {
  double upload_s = 0;    ///< slice operands to the device (begin_block)
  double gemm_s = 0;      ///< cublasGemmStridedBatchedEx, G + 1 products per panel
  double download_s = 0;  ///< the products back to host memory
  std::int64_t blocks = 0, panels = 0;
};

class CudaExactGemmEngine : public ExactGemmEngine {
 public:
  virtual ExactGemmTimes times() const = 0;
  virtual void reset_times() = 0;
};

/// The cuBLAS DGEMM engine ("gpu-cublas-dgemm") on device 0, or nullptr with the reason in *why (no CUDA in this
/// build, no device, cuBLAS not loadable).
std::shared_ptr<CudaExactGemmEngine> make_cuda_exact_gemm_engine(std::string* why = nullptr);

/// --reference: "cpu" (the built-in Eigen engine), "gpu" (the cuBLAS engine; DeviceError, exit 3, when no device is
/// usable, with the reason), "auto" (gpu when a device is usable, else cpu). Sets the process default
/// (set_default_gemm_engine) and returns the name of the engine chosen. InputError (exit 2) for another word.
std::string use_reference_engine(const std::string& choice);

}  // namespace fpcert
