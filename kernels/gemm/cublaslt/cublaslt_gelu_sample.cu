// kernels/gemm/cublaslt/cublaslt_gelu_sample.cu — cuBLASLt's GELU epilogue on chosen arguments (cublaslt_gelu_sample.hpp).
// In cuBLASLt's column-major terms: D (1 x n) = A^T B with A (2 x 1) = [1, 1] (op T) and B (2 x n) = the columns
// (hi_j, lo_j) (op N), so D_j = act(hi_j + lo_j) after an fp32 accumulation of two exact products.
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "kernels/device/cuda_check.cuh"
#include "kernels/gemm/cublaslt/cublaslt_gelu_sample.hpp"
#include "kernels/gemm/cublaslt/cublaslt_loader.cuh"
#include "kernels/kernel.hpp"

namespace fpcert {
namespace {

std::uint16_t encode16(cudaDataType_t t, float x) {
  std::uint16_t u;
  if (t == CUDA_R_16BF) {
    const __nv_bfloat16 b = __float2bfloat16_rn(x);
    std::memcpy(&u, &b, 2);
  } else {
    const __half h = __float2half_rn(x);
    std::memcpy(&u, &h, 2);
  }
  return u;
}

float decode16(cudaDataType_t t, std::uint16_t u) {
  if (t == CUDA_R_16BF) {
    __nv_bfloat16 b;
    std::memcpy(&b, &u, 2);
    return __bfloat162float(b);
  }
  __half h;
  std::memcpy(&h, &u, 2);
  return __half2float(h);
}

/// cudaMalloc'ed bytes freed at scope exit.
struct DevBuf {
  void* p = nullptr;
  explicit DevBuf(std::size_t bytes) { FPCERT_CUDA_CHECK(cudaMalloc(&p, bytes)); }
  ~DevBuf() { cudaFree(p); }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
};

/// The descriptors of one call, destroyed at scope exit.
struct LtCall {
  const cublaslt::Api& lt;
  cublasLtHandle_t handle = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  explicit LtCall(const cublaslt::Api& api) : lt(api) {}
  ~LtCall() {
    if (pref) lt.pref_destroy(pref);
    for (cublasLtMatrixLayout_t l : {a, b, d})
      if (l) lt.layout_destroy(l);
    if (desc) lt.desc_destroy(desc);
    if (handle) lt.destroy(handle);
  }
  LtCall(const LtCall&) = delete;
  LtCall& operator=(const LtCall&) = delete;
};

void declined(cublasStatus_t s, const char* what) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  if (s == CUBLAS_STATUS_NOT_SUPPORTED || s == CUBLAS_STATUS_ARCH_MISMATCH)
    throw NotSupportedError(std::string("cublaslt_gelu_sample: ") + what + " answered " + cublaslt::status_text(s));
  throw DeviceError(std::string("cublaslt_gelu_sample: ") + what + " failed: " + cublaslt::status_text(s));
}

}  // namespace

std::vector<float> cublaslt_gelu_sample(const Format& io, bool f32_out, bool gelu, const std::vector<float>& hi, const std::vector<float>& lo) {
  if (io != bf16 && io != f16) throw InputError("cublaslt_gelu_sample: the argument format is bf16 or f16, not " + std::string(io.name));
  if (hi.size() != lo.size() || hi.empty()) throw InputError("cublaslt_gelu_sample: hi and lo need one length > 0");
  const cudaDataType_t t = io == bf16 ? CUDA_R_16BF : CUDA_R_16F, dt = f32_out ? CUDA_R_32F : t;
  const std::size_t n = hi.size();
  std::vector<std::uint16_t> hb(2 * n), ha(2, encode16(t, 1.f));
  for (std::size_t j = 0; j < n; ++j) {
    hb[2 * j] = encode16(t, hi[j]), hb[2 * j + 1] = encode16(t, lo[j]);
    if (decode16(t, hb[2 * j]) != hi[j] || decode16(t, hb[2 * j + 1]) != lo[j])
      throw InputError("cublaslt_gelu_sample: argument " + std::to_string(j) + " (hi, lo) is not representable in " + std::string(io.name));
  }
  const cublaslt::Api& lt = cublaslt::api();
  const std::size_t d_bytes = n * (f32_out ? 4 : 2);
  constexpr std::size_t kWorkspace = std::size_t{32} << 20;
  DevBuf da(256), db(hb.size() * 2), dd(d_bytes), ws(kWorkspace);
  FPCERT_CUDA_CHECK(cudaMemcpy(da.p, ha.data(), 4, cudaMemcpyHostToDevice));
  FPCERT_CUDA_CHECK(cudaMemcpy(db.p, hb.data(), hb.size() * 2, cudaMemcpyHostToDevice));
  LtCall c(lt);
  FPCERT_CUBLASLT_CHECK(lt.create(&c.handle));
  declined(lt.desc_create(&c.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
  const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  const cublasLtEpilogue_t epi = gelu ? CUBLASLT_EPILOGUE_GELU : CUBLASLT_EPILOGUE_DEFAULT;
  FPCERT_CUBLASLT_CHECK(lt.desc_set(c.desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
  FPCERT_CUBLASLT_CHECK(lt.desc_set(c.desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
  FPCERT_CUBLASLT_CHECK(lt.desc_set(c.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
  declined(lt.layout_create(&c.a, t, 2, 1, 2), "cublasLtMatrixLayoutCreate");
  declined(lt.layout_create(&c.b, t, 2, n, 2), "cublasLtMatrixLayoutCreate");
  declined(lt.layout_create(&c.d, dt, 1, n, 1), "cublasLtMatrixLayoutCreate");
  declined(lt.pref_create(&c.pref), "cublasLtMatmulPreferenceCreate");
  const std::uint64_t wsb = kWorkspace;
  FPCERT_CUBLASLT_CHECK(lt.pref_set(c.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsb, sizeof wsb));
  cublasLtMatmulHeuristicResult_t r{};
  int found = 0;
  declined(lt.heuristic(c.handle, c.desc, c.a, c.b, c.d, c.d, c.pref, 1, &r, &found), "cublasLtMatmulAlgoGetHeuristic");
  if (found == 0) throw NotSupportedError("cublaslt_gelu_sample: cublasLtMatmulAlgoGetHeuristic found no algorithm");
  const float alpha = 1, beta = 0;
  declined(lt.matmul(c.handle, c.desc, &alpha, da.p, c.a, db.p, c.b, &beta, dd.p, c.d, dd.p, c.d, &r.algo, ws.p, kWorkspace, nullptr),
           "cublasLtMatmul");
  FPCERT_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<unsigned char> bytes(d_bytes);
  FPCERT_CUDA_CHECK(cudaMemcpy(bytes.data(), dd.p, d_bytes, cudaMemcpyDeviceToHost));
  std::vector<float> out(n);
  for (std::size_t j = 0; j < n; ++j) {
    if (f32_out) {
      std::memcpy(&out[j], &bytes[4 * j], 4);
    } else {
      std::uint16_t u;
      std::memcpy(&u, &bytes[2 * j], 2);
      out[j] = decode16(t, u);
    }
  }
  return out;
}

}  // namespace fpcert
