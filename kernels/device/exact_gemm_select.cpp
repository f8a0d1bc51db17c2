// kernels/device/exact_gemm_select.cpp — --reference cpu|gpu|auto (exact_gemm_cuda.hpp), and the engine's absence in a
// build without CUDA.
#include <memory>
#include <string>

#include "base/error.hpp"
#include "kernels/device/exact_gemm_cuda.hpp"

namespace fpcert {

#if !defined(FPCERT_HAVE_CUDA)
std::shared_ptr<CudaExactGemmEngine> make_cuda_exact_gemm_engine(std::string* why) {
  if (why) *why = "this fpcert was built without CUDA (no nvcc at configure time, or FPCERT_CUDA=OFF)";
  return nullptr;
}
#endif

std::string use_reference_engine(const std::string& choice) {
  if (choice != "cpu" && choice != "gpu" && choice != "auto")
    throw InputError("--reference: expected 'cpu', 'gpu' or 'auto', got '" + choice + "'");
  if (choice == "cpu") {
    set_default_gemm_engine(nullptr);
    return eigen_gemm_engine().name();
  }
  std::string why;
  std::shared_ptr<CudaExactGemmEngine> e = make_cuda_exact_gemm_engine(&why);
  if (!e) {
    if (choice == "gpu") throw DeviceError("--reference gpu: no usable CUDA device for the exact reference: " + why);
    set_default_gemm_engine(nullptr);
    return eigen_gemm_engine().name();
  }
  const std::string name = e->name();
  set_default_gemm_engine(std::move(e));
  return name;
}

}  // namespace fpcert
