// kernels/gemm/cublas/cublas_loader.cuh — cuBLAS loaded on first use (dlopen), not at start-up.
// cuBLAS and cuBLASLt map several hundred MB: linked into fpcert they made every command, `fpcert
// formats` included, fail before main under a low `ulimit -v` or on a machine without them. Only
// what runs a cuBLAS kernel (or stamps its version) loads them now. The types still come from
// <cublas_v2.h>; the functions from this table.
#pragma once

#include <cublas_v2.h>

#include <string>

#include "base/error.hpp"

namespace fpcert::cublas {

/// The cuBLAS functions fpcert calls.
struct Api {
  decltype(&cublasCreate_v2) create;
  decltype(&cublasDestroy_v2) destroy;
  decltype(&cublasSetStream_v2) set_stream;
  decltype(&cublasSetMathMode) set_math_mode;
  // The C entry points (cuBLAS's C++ overloads of these take other argument types).
  cublasStatus_t (*set_emulation_strategy)(cublasHandle_t, cublasEmulationStrategy_t);
  cublasStatus_t (*gemm_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*, const void*,
                            cudaDataType, int, const void*, cudaDataType, int, const void*, void*, cudaDataType, int,
                            cublasComputeType_t, cublasGemmAlgo_t);
  cublasStatus_t (*gemm_strided_batched_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                                            const void*, cudaDataType, int, long long, const void*, cudaDataType, int, long long,
                                            const void*, void*, cudaDataType, int, long long, int, cublasComputeType_t,
                                            cublasGemmAlgo_t);
  decltype(&cublasGetStatusName) status_name;
  decltype(&cublasGetStatusString) status_string;
  decltype(&cublasGetVersion_v2) get_version;
};

/// The table, loading libcublas.so.<major of the headers> on the first call: the dynamic loader's
/// search path first (LD_LIBRARY_PATH, the ld cache), then the CUDA library folder fpcert was built
/// against, then /usr/local/cuda/lib64. nullptr when it cannot be loaded, with the reason in *why.
const Api* try_api(std::string* why = nullptr);
/// The same; throws DeviceError (exit 3) with the reason when cuBLAS cannot be loaded.
const Api& api();

/// A cuBLAS status as "NAME (text)", through the loaded library.
std::string status_text(cublasStatus_t s);

}  // namespace fpcert::cublas

/// Every cuBLAS call checked; failures become DeviceError (exit 3).
#define FPCERT_CUBLAS_CHECK(call)                                                                                          \
  do {                                                                                                                     \
    const cublasStatus_t fpcert_cublas_status_ = (call);                                                                  \
    if (fpcert_cublas_status_ != CUBLAS_STATUS_SUCCESS)                                                                    \
      throw ::fpcert::DeviceError(std::string(#call) + " failed: " + ::fpcert::cublas::status_text(fpcert_cublas_status_) + \
                                  " at " + __FILE__ + ":" + std::to_string(__LINE__));                                     \
  } while (0)
