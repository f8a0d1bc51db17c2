// kernels/gemm/cublas/cublas_loader.cu — dlopen of cuBLAS on first use (cublas_loader.cuh).
#include "kernels/gemm/cublas/cublas_loader.cuh"

#include "kernels/device/cuda_library.hpp"

namespace fpcert::cublas {
namespace {

using Loaded = cuda_library::Loaded<Api>;

Loaded load() {
  return cuda_library::load<Api>("libcublas.so." + std::to_string(CUBLAS_VER_MAJOR), "cuBLAS", [](auto& b, Api& a) {
    bool ok = b("cublasCreate_v2", a.create);
    ok = b("cublasDestroy_v2", a.destroy) && ok;
    ok = b("cublasSetStream_v2", a.set_stream) && ok;
    ok = b("cublasSetMathMode", a.set_math_mode) && ok;
    ok = b("cublasSetEmulationStrategy", a.set_emulation_strategy) && ok;
    ok = b("cublasGemmEx", a.gemm_ex) && ok;
    ok = b("cublasGemmStridedBatchedEx", a.gemm_strided_batched_ex) && ok;
    ok = b("cublasGetStatusName", a.status_name) && ok;
    ok = b("cublasGetStatusString", a.status_string) && ok;
    ok = b("cublasGetVersion_v2", a.get_version) && ok;
    return ok;
  });
}

const Loaded& loaded() {
  static const Loaded l = load();
  return l;
}

}  // namespace

const Api* try_api(std::string* why) { return cuda_library::try_api(loaded(), why); }

const Api& api() { return cuda_library::api(loaded()); }

std::string status_text(cublasStatus_t s) { return cuda_library::status_text(loaded(), s, "cuBLAS"); }

}  // namespace fpcert::cublas
