// kernels/gemm/cublas/cublas_loader.cu — dlopen of cuBLAS on first use (cublas_loader.cuh).
#include "kernels/gemm/cublas/cublas_loader.cuh"

#include "kernels/device/cuda_library.hpp"

namespace fpcert::cublas {
namespace {

using Loaded = cuda_library::Loaded<Api>;

Loaded load() {
  Loaded l;
  const std::string soname = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
  std::string errors;
  void* lib = cuda_library::open(soname, errors);
  if (!lib) {
    l.why = "cuBLAS could not be loaded (" + errors + ")";
    return l;
  }
  std::string why;
  const auto b = [&](const char* name, auto& fn) { return cuda_library::bind(lib, "libcublas", name, fn, why); };
  bool ok = b("cublasCreate_v2", l.api.create);
  ok = b("cublasDestroy_v2", l.api.destroy) && ok;
  ok = b("cublasSetStream_v2", l.api.set_stream) && ok;
  ok = b("cublasSetMathMode", l.api.set_math_mode) && ok;
  ok = b("cublasSetEmulationStrategy", l.api.set_emulation_strategy) && ok;
  ok = b("cublasGemmEx", l.api.gemm_ex) && ok;
  ok = b("cublasGemmStridedBatchedEx", l.api.gemm_strided_batched_ex) && ok;
  ok = b("cublasGetStatusName", l.api.status_name) && ok;
  ok = b("cublasGetStatusString", l.api.status_string) && ok;
  ok = b("cublasGetVersion_v2", l.api.get_version) && ok;
  l.ok = ok;
  l.why = ok ? "" : "cuBLAS " + soname + " is unusable: " + why;
  return l;  // the library stays loaded until the process exits
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
