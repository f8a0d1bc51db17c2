// tests/plugins/cuda_sticky_plugin.cu — a CUDA plugin that leaves a sticky error: an honest device
// GEMM (fp16 storage, fp32 __fmaf_rn along K) except at K = 1024, where one thread stores through an
// address no allocation covers. The launch succeeds and run() returns OK; the illegal address shows up
// when fpcert synchronises, and the context stays broken (a sticky error) — without isolation every
// later case in the process would fail too.
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <fpcert/plugin.h>

#include <cstdint>

namespace {

__global__ void gemm(fpcert_gemm_args a, float* poison) {
  const std::int64_t i = blockIdx.y * static_cast<std::int64_t>(blockDim.y) + threadIdx.y;
  const std::int64_t j = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= a.shape.m || j >= a.shape.n) return;
  const auto* A = static_cast<const unsigned short*>(a.a);
  const auto* B = static_cast<const unsigned short*>(a.b);
  float acc = 0.0f;
  for (std::int64_t k = 0; k < a.shape.k; ++k)
    acc = __fmaf_rn(__half2float(__ushort_as_half(A[i * a.lda + k])), __half2float(__ushort_as_half(B[k * a.ldb + j])), acc);
  static_cast<float*>(a.c)[i * a.ldc + j] = acc;
  if (poison && i == 0 && j == 0) *poison = acc;  // the sticky fault
}

fpcert_status run(void*, const fpcert_gemm_args* a, void*, size_t, void* stream, char* msg, size_t cap) {
  if (a->shape.a_layout != FPCERT_LAYOUT_ROW_MAJOR || a->shape.b_layout != FPCERT_LAYOUT_ROW_MAJOR) {
    fpcert_plugin_set_message(msg, cap, "row-major A and B only");
    return FPCERT_STATUS_NOT_SUPPORTED;
  }
  // An address in no allocation (high in the 49-bit virtual space, 4-byte aligned).
  float* poison = a->shape.k == 1024 ? reinterpret_cast<float*>(std::uintptr_t{0x1ff0000000000}) : nullptr;
  const dim3 block(16, 16);
  const dim3 grid(static_cast<unsigned>((a->shape.n + 15) / 16), static_cast<unsigned>((a->shape.m + 15) / 16));
  gemm<<<grid, block, 0, static_cast<cudaStream_t>(stream)>>>(*a, poison);
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) {
    fpcert_plugin_set_message(msg, cap, cudaGetErrorString(e));
    return FPCERT_STATUS_DEVICE_ERROR;
  }
  return FPCERT_STATUS_OK;
}

fpcert_kernel make_kernel() {
  fpcert_kernel k{};
  k.struct_size = sizeof(fpcert_kernel);
  k.operation = FPCERT_OPERATION_GEMM;
  k.name = "fault_cuda_sticky";
  k.description = "test plugin: honest device GEMM except at K = 1024 (illegal address: sticky error)";
  k.memory = FPCERT_MEMORY_DEVICE;
  k.gemm.a_input = k.gemm.b_input = k.gemm.a_operand = k.gemm.b_operand = FPCERT_FORMAT_F16;
  k.gemm.input_rounding = FPCERT_ROUNDING_NEAREST_EVEN;
  k.gemm.exact_products = 1;
  k.gemm.acc_format = FPCERT_FORMAT_F32;
  k.gemm.acc_rounding = FPCERT_ROUNDING_NEAREST_EVEN;
  k.gemm.out_format = FPCERT_FORMAT_F32;
  k.gemm.order = "C[i][j] = __fmaf_rn(a[i][k], b[k][j], C) for k = 0..K-1 in fp32, from +0; exact products";
  k.gemm_run = run;
  return k;
}

const fpcert_kernel kKernel = make_kernel();
const fpcert_plugin_info kInfo = {FPCERT_PLUGIN_INFO_HEADER, "fpcert-test-cuda-sticky", "0", 1, 0, &kKernel};

}  // namespace

extern "C" FPCERT_PLUGIN_EXPORT const fpcert_plugin_info* fpcert_plugin_enumerate(std::uint32_t, std::uint32_t, char*, size_t) {
  return &kInfo;
}
