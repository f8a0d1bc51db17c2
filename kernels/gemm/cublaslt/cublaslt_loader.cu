// kernels/gemm/cublaslt/cublaslt_loader.cu — dlopen of cuBLASLt on first use (cublaslt_loader.cuh).
#include "kernels/gemm/cublaslt/cublaslt_loader.cuh"

#include <dlfcn.h>

#include <vector>

#ifndef FPCERT_CUBLAS_DIR
#define FPCERT_CUBLAS_DIR "/usr/local/cuda/lib64"
#endif

namespace fpcert::cublaslt {
namespace {

struct Loaded {
  Api api{};
  bool ok = false;
  std::string why;
};

template <class Fn>
bool bind(void* lib, const char* name, Fn& fn, std::string& why) {
  fn = reinterpret_cast<Fn>(::dlsym(lib, name));
  if (!fn && why.empty()) why = std::string("libcublasLt has no ") + name;
  return fn != nullptr;
}

Loaded load() {
  Loaded l;
  const std::string soname = "libcublasLt.so." + std::to_string(CUBLAS_VER_MAJOR);
  void* lib = nullptr;
  std::string errors;
  for (const std::string& c : {soname, std::string(FPCERT_CUBLAS_DIR) + "/" + soname, "/usr/local/cuda/lib64/" + soname}) {
    if ((lib = ::dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL))) break;
    const char* e = ::dlerror();
    errors += std::string(errors.empty() ? "" : "; ") + (e ? e : c + ": not found");
  }
  if (!lib) {
    l.why = "cuBLASLt could not be loaded (" + errors + ")";
    return l;
  }
  std::string why;
  bool ok = true;
  ok = bind(lib, "cublasLtCreate", l.api.create, why) && ok;
  ok = bind(lib, "cublasLtDestroy", l.api.destroy, why) && ok;
  ok = bind(lib, "cublasLtMatmulDescCreate", l.api.desc_create, why) && ok;
  ok = bind(lib, "cublasLtMatmulDescDestroy", l.api.desc_destroy, why) && ok;
  ok = bind(lib, "cublasLtMatmulDescSetAttribute", l.api.desc_set, why) && ok;
  ok = bind(lib, "cublasLtMatrixLayoutCreate", l.api.layout_create, why) && ok;
  ok = bind(lib, "cublasLtMatrixLayoutDestroy", l.api.layout_destroy, why) && ok;
  ok = bind(lib, "cublasLtMatrixLayoutSetAttribute", l.api.layout_set, why) && ok;
  ok = bind(lib, "cublasLtMatmulPreferenceCreate", l.api.pref_create, why) && ok;
  ok = bind(lib, "cublasLtMatmulPreferenceDestroy", l.api.pref_destroy, why) && ok;
  ok = bind(lib, "cublasLtMatmulPreferenceSetAttribute", l.api.pref_set, why) && ok;
  ok = bind(lib, "cublasLtMatmulAlgoGetHeuristic", l.api.heuristic, why) && ok;
  ok = bind(lib, "cublasLtMatmul", l.api.matmul, why) && ok;
  ok = bind(lib, "cublasLtGetStatusName", l.api.status_name, why) && ok;
  ok = bind(lib, "cublasLtGetStatusString", l.api.status_string, why) && ok;
  ok = bind(lib, "cublasLtGetVersion", l.api.get_version, why) && ok;
  l.ok = ok;
  l.why = ok ? "" : "cuBLASLt " + soname + " is unusable: " + why;
  return l;  // the library stays loaded until the process exits
}

const Loaded& loaded() {
  static const Loaded l = load();
  return l;
}

}  // namespace

const Api* try_api(std::string* why) {
  const Loaded& l = loaded();
  if (!l.ok && why) *why = l.why;
  return l.ok ? &l.api : nullptr;
}

const Api& api() {
  std::string why;
  const Api* a = try_api(&why);
  if (!a) throw DeviceError(why);
  return *a;
}

std::string status_text(cublasStatus_t s) {
  const Api* a = try_api();
  if (!a) return "cuBLAS status " + std::to_string(static_cast<int>(s));
  return std::string(a->status_name(s)) + " (" + a->status_string(s) + ")";
}

}  // namespace fpcert::cublaslt
