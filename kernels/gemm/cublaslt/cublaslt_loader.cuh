// kernels/gemm/cublaslt/cublaslt_loader.cuh — cuBLASLt loaded on first use (dlopen), as cuBLAS is
// (kernels/gemm/cublas/cublas_loader.cuh): fpcert starts and runs everything else where cuBLASLt is absent; only a
// cublaslt_* kernel's run() loads it. The types come from <cublasLt.h>; the functions from this table.
#pragma once

#include <cublasLt.h>

#include <string>

#include "base/error.hpp"

namespace fpcert::cublaslt {

/// The cuBLASLt functions fpcert calls.
struct Api {
  decltype(&cublasLtCreate) create;
  decltype(&cublasLtDestroy) destroy;
  decltype(&cublasLtMatmulDescCreate) desc_create;
  decltype(&cublasLtMatmulDescDestroy) desc_destroy;
  decltype(&cublasLtMatmulDescSetAttribute) desc_set;
  decltype(&cublasLtMatrixLayoutCreate) layout_create;
  decltype(&cublasLtMatrixLayoutDestroy) layout_destroy;
  decltype(&cublasLtMatrixLayoutSetAttribute) layout_set;
  decltype(&cublasLtMatmulPreferenceCreate) pref_create;
  decltype(&cublasLtMatmulPreferenceDestroy) pref_destroy;
  decltype(&cublasLtMatmulPreferenceSetAttribute) pref_set;
  decltype(&cublasLtMatmulAlgoGetHeuristic) heuristic;
  decltype(&cublasLtMatmul) matmul;
  decltype(&cublasLtGetStatusName) status_name;
  decltype(&cublasLtGetStatusString) status_string;
  decltype(&cublasLtGetVersion) get_version;
};

/// The table, loading libcublasLt.so.<major of the headers> on the first call: the dynamic loader's search path first,
/// then the CUDA library folder fpcert was built against, then /usr/local/cuda/lib64. nullptr when it cannot be
/// loaded, with the reason in *why.
const Api* try_api(std::string* why = nullptr);
/// The same; throws DeviceError (exit 3) with the reason when cuBLASLt cannot be loaded.
const Api& api();

/// A cuBLAS status as "NAME (text)", through the loaded cuBLASLt.
std::string status_text(cublasStatus_t s);

}  // namespace fpcert::cublaslt

/// Every cuBLASLt call checked; failures become DeviceError (exit 3).
#define FPCERT_CUBLASLT_CHECK(call)                                                                                           \
  do {                                                                                                                        \
    const cublasStatus_t fpcert_lt_status_ = (call);                                                                          \
    if (fpcert_lt_status_ != CUBLAS_STATUS_SUCCESS)                                                                           \
      throw ::fpcert::DeviceError(std::string(#call) + " failed: " + ::fpcert::cublaslt::status_text(fpcert_lt_status_) +    \
                                  " at " + __FILE__ + ":" + std::to_string(__LINE__));                                        \
  } while (0)
