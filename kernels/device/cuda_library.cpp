// kernels/device/cuda_library.cpp — dlopen of CUDA libraries on first use (cuda_library.hpp).
#include "kernels/device/cuda_library.hpp"

#include <dlfcn.h>

#ifndef FPCERT_CUBLAS_DIR
#define FPCERT_CUBLAS_DIR "/usr/local/cuda/lib64"
#endif

namespace fpcert::cuda_library {

void* open(const std::string& soname, std::string& errors) {
  for (const std::string& c : {soname, std::string(FPCERT_CUBLAS_DIR) + "/" + soname, "/usr/local/cuda/lib64/" + soname}) {
    if (void* lib = ::dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL)) return lib;
    const char* e = ::dlerror();
    errors += std::string(errors.empty() ? "" : "; ") + (e ? e : c + ": not found");
  }
  return nullptr;
}

void* symbol(void* lib, const char* name) { return ::dlsym(lib, name); }

}  // namespace fpcert::cuda_library
