// kernels/gemm/cublaslt/cublaslt_loader.cu — dlopen of cuBLASLt on first use (cublaslt_loader.cuh).
#include "kernels/gemm/cublaslt/cublaslt_loader.cuh"

#include "kernels/device/cuda_library.hpp"

namespace fpcert::cublaslt {
namespace {

using Loaded = cuda_library::Loaded<Api>;

Loaded load() {
  Loaded l;
  const std::string soname = "libcublasLt.so." + std::to_string(CUBLAS_VER_MAJOR);
  std::string errors;
  void* lib = cuda_library::open(soname, errors);
  if (!lib) {
    l.why = "cuBLASLt could not be loaded (" + errors + ")";
    return l;
  }
  std::string why;
  const auto b = [&](const char* name, auto& fn) { return cuda_library::bind(lib, "libcublasLt", name, fn, why); };
  bool ok = true;
  ok = b("cublasLtCreate", l.api.create) && ok;
  ok = b("cublasLtDestroy", l.api.destroy) && ok;
  ok = b("cublasLtMatmulDescCreate", l.api.desc_create) && ok;
  ok = b("cublasLtMatmulDescDestroy", l.api.desc_destroy) && ok;
  ok = b("cublasLtMatmulDescSetAttribute", l.api.desc_set) && ok;
  ok = b("cublasLtMatrixLayoutCreate", l.api.layout_create) && ok;
  ok = b("cublasLtMatrixLayoutDestroy", l.api.layout_destroy) && ok;
  ok = b("cublasLtMatrixLayoutSetAttribute", l.api.layout_set) && ok;
  ok = b("cublasLtMatmulPreferenceCreate", l.api.pref_create) && ok;
  ok = b("cublasLtMatmulPreferenceDestroy", l.api.pref_destroy) && ok;
  ok = b("cublasLtMatmulPreferenceSetAttribute", l.api.pref_set) && ok;
  ok = b("cublasLtMatmulAlgoGetHeuristic", l.api.heuristic) && ok;
  ok = b("cublasLtMatmul", l.api.matmul) && ok;
  ok = b("cublasLtGetStatusName", l.api.status_name) && ok;
  ok = b("cublasLtGetStatusString", l.api.status_string) && ok;
  ok = b("cublasLtGetVersion", l.api.get_version) && ok;
  l.ok = ok;
  l.why = ok ? "" : "cuBLASLt " + soname + " is unusable: " + why;
  return l;  // the library stays loaded until the process exits
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
