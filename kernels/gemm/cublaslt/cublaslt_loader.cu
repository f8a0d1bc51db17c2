// kernels/gemm/cublaslt/cublaslt_loader.cu — dlopen of cuBLASLt on first use (cublaslt_loader.cuh).
#include "kernels/gemm/cublaslt/cublaslt_loader.cuh"

#include "kernels/device/cuda_library.hpp"

namespace fpcert::cublaslt {
namespace {

using Loaded = cuda_library::Loaded<Api>;

Loaded load() {
  return cuda_library::load<Api>("libcublasLt.so." + std::to_string(CUBLAS_VER_MAJOR), "cuBLASLt", [](auto& b, Api& a) {
    bool ok = b("cublasLtCreate", a.create);
    ok = b("cublasLtDestroy", a.destroy) && ok;
    ok = b("cublasLtMatmulDescCreate", a.desc_create) && ok;
    ok = b("cublasLtMatmulDescDestroy", a.desc_destroy) && ok;
    ok = b("cublasLtMatmulDescSetAttribute", a.desc_set) && ok;
    ok = b("cublasLtMatrixLayoutCreate", a.layout_create) && ok;
    ok = b("cublasLtMatrixLayoutDestroy", a.layout_destroy) && ok;
    ok = b("cublasLtMatrixLayoutSetAttribute", a.layout_set) && ok;
    ok = b("cublasLtMatmulPreferenceCreate", a.pref_create) && ok;
    ok = b("cublasLtMatmulPreferenceDestroy", a.pref_destroy) && ok;
    ok = b("cublasLtMatmulPreferenceSetAttribute", a.pref_set) && ok;
    ok = b("cublasLtMatmulAlgoGetHeuristic", a.heuristic) && ok;
    ok = b("cublasLtMatmul", a.matmul) && ok;
    ok = b("cublasLtGetStatusName", a.status_name) && ok;
    ok = b("cublasLtGetStatusString", a.status_string) && ok;
    ok = b("cublasLtGetVersion", a.get_version) && ok;
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

std::string status_text(cublasStatus_t s) { return cuda_library::status_text(loaded(), s, "cuBLASLt"); }

}  // namespace fpcert::cublaslt
