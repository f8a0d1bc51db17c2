// examples/plugin/cuda/example_cuda_plugin.cu — a CUDA plugin for fpcert: a naive device GEMM with
// fp16 storage and fp32 accumulation (one thread per output, __fmaf_rn along K), and an fp32 -> bf16
// conversion by __float2bfloat16_rn. Built against the installed <fpcert/plugin.h>.
//
//   fpcert certify --plugin ./libexample_cuda_plugin.so --kernel example_cuda_gemm_f16_f32acc --suite quick
//   fpcert convert --plugin ./libexample_cuda_plugin.so --kernel example_cuda_cvt_f32_to_bf16 --exhaustive --range 0x7f000000:16777216
//
// Rules this file follows (docs/plugin.md): work is enqueued on the stream fpcert passes and not
// waited for (fpcert synchronises and reports asynchronous errors itself); launch errors come back as
// FPCERT_STATUS_DEVICE_ERROR with cudaGetErrorString's text; no C++ exception leaves the plugin.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <fpcert/plugin.h>

#include <cstdint>
#include <exception>

namespace {

__device__ std::int64_t at(fpcert_layout layout, std::int64_t i, std::int64_t j, std::int64_t ld) {
  return layout == FPCERT_LAYOUT_ROW_MAJOR ? i * ld + j : j * ld + i;
}

/// C[i][j] = fma(a[i][k], b[k][j], acc) for k = 0..K-1 in fp32 from +0 (products of fp16 values are exact).
__global__ void gemm_f16_f32acc(fpcert_gemm_args a) {
  const std::int64_t i = blockIdx.y * static_cast<std::int64_t>(blockDim.y) + threadIdx.y;
  const std::int64_t j = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= a.shape.m || j >= a.shape.n) return;
  const auto* A = static_cast<const unsigned short*>(a.a);
  const auto* B = static_cast<const unsigned short*>(a.b);
  float acc = 0.0f;
  for (std::int64_t k = 0; k < a.shape.k; ++k)
    acc = __fmaf_rn(__half2float(__ushort_as_half(A[at(a.shape.a_layout, i, k, a.lda)])),
                    __half2float(__ushort_as_half(B[at(a.shape.b_layout, k, j, a.ldb)])), acc);
  static_cast<float*>(a.c)[i * a.ldc + j] = acc;
}

__global__ void cvt_f32_to_bf16(const float* src, unsigned short* dst, std::int64_t n) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  // cvt.rn.bf16.f32 writes every NaN as 0x7FFF, NVIDIA's NaN: the kernel declares FPCERT_NAN_NVIDIA (ABI minor
  // 2), which fpcert enforces exactly (docs/plugin.md, "Declaring the NaN convention").
  if (i < n) dst[i] = __bfloat16_as_ushort(__float2bfloat16_rn(src[i]));
}

fpcert_status launch_status(char* message, size_t cap) {
  const cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) return FPCERT_STATUS_OK;
  fpcert_plugin_set_message(message, cap, cudaGetErrorString(e));
  return FPCERT_STATUS_DEVICE_ERROR;
}

fpcert_status gemm_can_implement(void*, const fpcert_gemm_shape* s, char* message, size_t cap) {
  if (s->c_layout != FPCERT_LAYOUT_ROW_MAJOR) {
    fpcert_plugin_set_message(message, cap, "C must be row-major");
    return FPCERT_STATUS_NOT_SUPPORTED;
  }
  if ((s->m + 15) / 16 > 65535) {  // grid.y limit
    fpcert_plugin_set_message(message, cap, "m > 1048560 exceeds this naive kernel's grid");
    return FPCERT_STATUS_NOT_SUPPORTED;
  }
  return FPCERT_STATUS_OK;
}

fpcert_status gemm_run(void*, const fpcert_gemm_args* a, void*, size_t, void* stream, char* message, size_t cap) {
  try {
    const dim3 block(16, 16);
    const dim3 grid(static_cast<unsigned>((a->shape.n + 15) / 16), static_cast<unsigned>((a->shape.m + 15) / 16));
    gemm_f16_f32acc<<<grid, block, 0, static_cast<cudaStream_t>(stream)>>>(*a);
    return launch_status(message, cap);
  } catch (const std::exception& e) {  // nothing here throws; the boundary is guarded all the same
    fpcert_plugin_set_message(message, cap, e.what());
    return FPCERT_STATUS_INTERNAL;
  } catch (...) {
    fpcert_plugin_set_message(message, cap, "unknown exception");
    return FPCERT_STATUS_INTERNAL;
  }
}

fpcert_status cvt_run(void*, const fpcert_conversion_args* a, void* stream, char* message, size_t cap) {
  if (a->count == 0) return FPCERT_STATUS_OK;
  const unsigned blocks = static_cast<unsigned>((a->count + 255) / 256);
  cvt_f32_to_bf16<<<blocks, 256, 0, static_cast<cudaStream_t>(stream)>>>(static_cast<const float*>(a->src),
                                                                          static_cast<unsigned short*>(a->dst), a->count);
  return launch_status(message, cap);
}

fpcert_kernel make_gemm() {
  fpcert_kernel k{};
  k.struct_size = sizeof(fpcert_kernel);
  k.operation = FPCERT_OPERATION_GEMM;
  k.name = "example_cuda_gemm_f16_f32acc";
  k.description = "naive CUDA GEMM: fp16 storage, fp32 __fmaf_rn along K, one thread per output";
  k.memory = FPCERT_MEMORY_DEVICE;
  k.gemm.a_input = k.gemm.b_input = FPCERT_FORMAT_F16;
  k.gemm.input_rounding = FPCERT_ROUNDING_NEAREST_EVEN;
  k.gemm.a_operand = k.gemm.b_operand = FPCERT_FORMAT_F16;
  k.gemm.exact_products = 1;
  k.gemm.product_format = FPCERT_FORMAT_NONE;
  k.gemm.acc_format = FPCERT_FORMAT_F32;
  k.gemm.acc_rounding = FPCERT_ROUNDING_NEAREST_EVEN;
  k.gemm.promote_every = 0;
  k.gemm.promote_format = FPCERT_FORMAT_NONE;
  k.gemm.out_format = FPCERT_FORMAT_F32;
  k.gemm.order = "C[i][j] = __fmaf_rn(a[i][k], b[k][j], C) for k = 0..K-1 in fp32, from +0; exact products";
  k.gemm_order.kind = FPCERT_ORDER_SEQUENTIAL;  // the same, machine-readable: fpcert checks it bit for bit
  k.determinism = FPCERT_DETERMINISTIC;         // the same bits every run (ABI minor 2)
  k.gemm_order.step = FPCERT_STEP_FMA;
  k.gemm_can_implement = gemm_can_implement;
  k.gemm_run = gemm_run;
  return k;
}

fpcert_kernel make_cvt() {
  fpcert_kernel k{};
  k.struct_size = sizeof(fpcert_kernel);
  k.operation = FPCERT_OPERATION_CONVERSION;
  k.name = "example_cuda_cvt_f32_to_bf16";
  k.description = "fp32 -> bf16 by __float2bfloat16_rn (cvt.rn.bf16.f32)";
  k.memory = FPCERT_MEMORY_DEVICE;
  k.conversion.src_format = FPCERT_FORMAT_F32;
  k.conversion.dst_format = FPCERT_FORMAT_BF16;
  k.conversion.rounding = FPCERT_ROUNDING_NEAREST_EVEN;
  k.conversion.saturation = FPCERT_SATURATION_INF;
  k.conversion.nan_payload = FPCERT_NAN_NVIDIA;  // 0x7FFF for every NaN, what cvt.rn.bf16.f32 writes
  k.conversion_run = cvt_run;
  return k;
}

const fpcert_kernel kKernels[] = {make_gemm(), make_cvt()};
const fpcert_plugin_info kInfo = {FPCERT_PLUGIN_INFO_HEADER, "example-cuda", "1.0", 2, 0, kKernels};

}  // namespace

extern "C" FPCERT_PLUGIN_EXPORT const fpcert_plugin_info* fpcert_plugin_enumerate(std::uint32_t, std::uint32_t, char*,
                                                                                  size_t) {
  return &kInfo;
}
