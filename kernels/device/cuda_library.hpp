// kernels/device/cuda_library.hpp — a CUDA library (cuBLAS, cuBLASLt) opened on first use with dlopen, so that fpcert
// starts and runs everything else where the library is absent (kernels/gemm/cublas/cublas_loader.cuh,
// kernels/gemm/cublaslt/cublaslt_loader.cuh). No CUDA header: the loaders' tables bring the types.
#pragma once

#include <string>

#include "base/error.hpp"

namespace fpcert::cuda_library {

/// dlopen (RTLD_NOW | RTLD_LOCAL) of `soname` from the dynamic loader's search path, then from the CUDA library folder
/// fpcert was built against, then /usr/local/cuda/lib64. nullptr when none loads, with every attempt's error in
/// `errors`. The library stays loaded until the process exits.
void* open(const std::string& soname, std::string& errors);

/// dlsym of `name` in `lib`; nullptr when absent.
void* symbol(void* lib, const char* name);

/// `fn` bound to the symbol `name`; false when absent, the first absent name recorded in `why` ("<lib> has no <name>").
template <class Fn>
bool bind(void* lib, const char* lib_name, const char* name, Fn& fn, std::string& why) {
  fn = reinterpret_cast<Fn>(symbol(lib, name));
  if (!fn && why.empty()) why = std::string(lib_name) + " has no " + name;
  return fn != nullptr;
}

/// A library's function table once loaded: `ok`, or why not.
template <class Api>
struct Loaded {
  Api api{};
  bool ok = false;
  std::string why;
};

/// `what` ("cuBLAS") opened from `soname` and its table filled by bind_all(b, api), b(name, fn) binding one symbol
/// (true when found): ok, or why not (the library missing, or the first missing symbol). The library stays loaded
/// until the process exits.
template <class Api, class BindAll>
Loaded<Api> load(const std::string& soname, const char* what, BindAll bind_all) {
  Loaded<Api> l;
  std::string errors;
  void* lib = open(soname, errors);
  if (!lib) {
    l.why = std::string(what) + " could not be loaded (" + errors + ")";
    return l;
  }
  std::string why;
  const auto b = [&](const char* name, auto& fn) { return bind(lib, soname.c_str(), name, fn, why); };
  l.ok = bind_all(b, l.api);
  l.why = l.ok ? "" : std::string(what) + " " + soname + " is unusable: " + why;
  return l;
}

/// The table, or nullptr with the reason in *why.
template <class Api>
const Api* try_api(const Loaded<Api>& l, std::string* why) {
  if (!l.ok && why) *why = l.why;
  return l.ok ? &l.api : nullptr;
}

/// The table; DeviceError (exit 3) with the reason when the library could not be loaded.
template <class Api>
const Api& api(const Loaded<Api>& l) {
  if (!l.ok) throw DeviceError(l.why);
  return l.api;
}

/// A status as "NAME (text)" through the loaded library's own functions, or "<lib> status N" when it is not loaded.
template <class Api, class Status>
std::string status_text(const Loaded<Api>& l, Status s, const char* lib) {
  if (!l.ok) return std::string(lib) + " status " + std::to_string(static_cast<int>(s));
  return std::string(l.api.status_name(s)) + " (" + l.api.status_string(s) + ")";
}

}  // namespace fpcert::cuda_library
