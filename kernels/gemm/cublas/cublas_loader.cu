// kernels/gemm/cublas/cublas_loader.cu — dlopen of cuBLAS on first use (cublas_loader.cuh).
#include "kernels/gemm/cublas/cublas_loader.cuh"

#include <dlfcn.h>

#include <mutex>
#include <vector>

#include "base/error.hpp"

#ifndef FPCERT_CUBLAS_DIR
#define FPCERT_CUBLAS_DIR "/usr/local/cuda/lib64"
#endif

namespace fpcert::cublas {
namespace {

struct Loaded {
  Api api{};
  bool ok = false;
  std::string why;
};

template <class Fn>
bool bind(void* lib, const char* name, Fn& fn, std::string& why) {
  fn = reinterpret_cast<Fn>(::dlsym(lib, name));
  if (!fn && why.empty()) why = std::string("libcublas has no ") + name;
  return fn != nullptr;
}

Loaded load() {
  Loaded l;
  const std::string soname = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
  const std::vector<std::string> candidates = {soname, std::string(FPCERT_CUBLAS_DIR) + "/" + soname, "/usr/local/cuda/lib64/" + soname};
  void* lib = nullptr;
  std::string errors;
  for (const auto& c : candidates) {
    lib = ::dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib) break;
    const char* e = ::dlerror();
    errors += std::string(errors.empty() ? "" : "; ") + (e ? e : c + ": not found");
  }
  if (!lib) {
    l.why = "cuBLAS could not be loaded (" + errors + ")";
    return l;
  }
  std::string why;
  bool ok = bind(lib, "cublasCreate_v2", l.api.create, why);
  ok = bind(lib, "cublasDestroy_v2", l.api.destroy, why) && ok;
  ok = bind(lib, "cublasSetStream_v2", l.api.set_stream, why) && ok;
  ok = bind(lib, "cublasSetMathMode", l.api.set_math_mode, why) && ok;
  ok = bind(lib, "cublasSetEmulationStrategy", l.api.set_emulation_strategy, why) && ok;
  ok = bind(lib, "cublasGemmEx", l.api.gemm_ex, why) && ok;
  ok = bind(lib, "cublasGemmStridedBatchedEx", l.api.gemm_strided_batched_ex, why) && ok;
  ok = bind(lib, "cublasGetStatusName", l.api.status_name, why) && ok;
  ok = bind(lib, "cublasGetStatusString", l.api.status_string, why) && ok;
  ok = bind(lib, "cublasGetVersion_v2", l.api.get_version, why) && ok;
  l.ok = ok;
  l.why = ok ? "" : "cuBLAS " + soname + " is unusable: " + why;
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

}  // namespace fpcert::cublas
