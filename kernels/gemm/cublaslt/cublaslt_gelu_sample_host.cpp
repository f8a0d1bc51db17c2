// kernels/gemm/cublaslt/cublaslt_gelu_sample_host.cpp — cublaslt_gelu_sample without CUDA (cublaslt_gelu_sample.hpp).
#include "kernels/gemm/cublaslt/cublaslt_gelu_sample.hpp"

#include "base/error.hpp"

namespace fpcert {

#if !defined(FPCERT_HAVE_CUDA)
std::vector<float> cublaslt_gelu_sample(const Format&, bool, bool, const std::vector<float>&, const std::vector<float>&) {
  throw DeviceError("this fpcert was built without CUDA (no nvcc at configure time, or FPCERT_CUDA=OFF): no cuBLASLt");
}
#endif

}  // namespace fpcert
