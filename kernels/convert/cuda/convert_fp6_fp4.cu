// kernels/convert/cuda/convert_fp6_fp4.cu — the fp6 (e2m3, e3m2) and fp4 (e2m1) conversions of the device
// table (cuda_fp6.h, cuda_fp4.h), one op per entry of kernels/convert/device_convert.cpp. Round-to-nearest
// uses a hardware cvt only in arch-family-specific builds (sm_100f and later); round-toward-zero is
// the header's software path everywhere.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp4.h>
#include <cuda_fp6.h>

#include "kernels/convert/cuda/convert_kernels.cuh"

namespace fpcert::cuda_convert {
namespace {

constexpr cudaRoundMode RN = cudaRoundNearest, RZ = cudaRoundZero;

// ---- fp6: an x2 storage holds lane x in bits 0-7 and lane y in bits 8-15, each with 2 zero MSBs ----
template <__nv_fp6_interpretation_t I, cudaRoundMode M>
struct F32ToFp6 : One {
  __device__ static std::uint32_t one(std::uint32_t c) { return __nv_cvt_float_to_fp6(f32_of(c), I, M); }
};
template <__nv_fp6_interpretation_t I, cudaRoundMode M>
struct F32x2ToFp6x2 : Pair {
  __device__ static void pair(std::uint32_t a, std::uint32_t b, std::uint32_t& lo, std::uint32_t& hi) {
    split_bytes(__nv_cvt_float2_to_fp6x2(make_float2(f32_of(a), f32_of(b)), I, M), lo, hi);
  }
};
template <__nv_fp6_interpretation_t I, cudaRoundMode M>
struct F16ToFp6 : One {
  __device__ static std::uint32_t one(std::uint32_t c) { return __nv_cvt_halfraw_to_fp6(hraw(c), I, M); }
};
template <__nv_fp6_interpretation_t I, cudaRoundMode M>
struct F16x2ToFp6x2 : Pair {
  __device__ static void pair(std::uint32_t a, std::uint32_t b, std::uint32_t& lo, std::uint32_t& hi) {
    split_bytes(__nv_cvt_halfraw2_to_fp6x2(h2raw(a, b), I, M), lo, hi);
  }
};
template <__nv_fp6_interpretation_t I, cudaRoundMode M>
struct Bf16ToFp6 : One {
  __device__ static std::uint32_t one(std::uint32_t c) { return __nv_cvt_bfloat16raw_to_fp6(braw(c), I, M); }
};
template <__nv_fp6_interpretation_t I, cudaRoundMode M>
struct Bf16x2ToFp6x2 : Pair {
  __device__ static void pair(std::uint32_t a, std::uint32_t b, std::uint32_t& lo, std::uint32_t& hi) {
    split_bytes(__nv_cvt_bfloat16raw2_to_fp6x2(b2raw(a, b), I, M), lo, hi);
  }
};
template <__nv_fp6_interpretation_t I>
struct Fp6ToF16 : One {
  __device__ static std::uint32_t one(std::uint32_t c) {
    return __nv_cvt_fp6_to_halfraw(static_cast<__nv_fp6_storage_t>(c), I).x;
  }
};
template <__nv_fp6_interpretation_t I>
struct Fp6x2ToF16x2 : Pair {
  __device__ static void pair(std::uint32_t a, std::uint32_t b, std::uint32_t& lo, std::uint32_t& hi) {
    const __half2_raw r = __nv_cvt_fp6x2_to_halfraw2(static_cast<__nv_fp6x2_storage_t>(a | (b << 8)), I);
    lo = r.x;
    hi = r.y;
  }
};
constexpr __nv_fp6_interpretation_t E2M3 = __NV_E2M3, E3M2 = __NV_E3M2;
using f32_to_e2m3_rn = F32ToFp6<E2M3, RN>;
using f32_to_e2m3_rz = F32ToFp6<E2M3, RZ>;
using f32x2_to_e2m3x2_rn = F32x2ToFp6x2<E2M3, RN>;
using f32x2_to_e2m3x2_rz = F32x2ToFp6x2<E2M3, RZ>;
using f16_to_e2m3_rn = F16ToFp6<E2M3, RN>;
using f16_to_e2m3_rz = F16ToFp6<E2M3, RZ>;
using f16x2_to_e2m3x2_rn = F16x2ToFp6x2<E2M3, RN>;
using f16x2_to_e2m3x2_rz = F16x2ToFp6x2<E2M3, RZ>;
using bf16_to_e2m3_rn = Bf16ToFp6<E2M3, RN>;
using bf16_to_e2m3_rz = Bf16ToFp6<E2M3, RZ>;
using bf16x2_to_e2m3x2_rn = Bf16x2ToFp6x2<E2M3, RN>;
using bf16x2_to_e2m3x2_rz = Bf16x2ToFp6x2<E2M3, RZ>;
using f32_to_e3m2_rn = F32ToFp6<E3M2, RN>;
using f32_to_e3m2_rz = F32ToFp6<E3M2, RZ>;
using f32x2_to_e3m2x2_rn = F32x2ToFp6x2<E3M2, RN>;
using f32x2_to_e3m2x2_rz = F32x2ToFp6x2<E3M2, RZ>;
using f16_to_e3m2_rn = F16ToFp6<E3M2, RN>;
using f16_to_e3m2_rz = F16ToFp6<E3M2, RZ>;
using f16x2_to_e3m2x2_rn = F16x2ToFp6x2<E3M2, RN>;
using f16x2_to_e3m2x2_rz = F16x2ToFp6x2<E3M2, RZ>;
using bf16_to_e3m2_rn = Bf16ToFp6<E3M2, RN>;
using bf16_to_e3m2_rz = Bf16ToFp6<E3M2, RZ>;
using bf16x2_to_e3m2x2_rn = Bf16x2ToFp6x2<E3M2, RN>;
using bf16x2_to_e3m2x2_rz = Bf16x2ToFp6x2<E3M2, RZ>;
using e2m3_to_f16 = Fp6ToF16<E2M3>;
using e3m2_to_f16 = Fp6ToF16<E3M2>;
using e2m3x2_to_f16x2 = Fp6x2ToF16x2<E2M3>;
using e3m2x2_to_f16x2 = Fp6x2ToF16x2<E3M2>;
struct e2m3_to_f32 : One {
  __device__ static std::uint32_t one(std::uint32_t c) {
    __nv_fp6_e2m3 v;
    v.__x = static_cast<__nv_fp6_storage_t>(c);
    return bits_of(static_cast<float>(v));
  }
};
struct e3m2_to_f32 : One {
  __device__ static std::uint32_t one(std::uint32_t c) {
    __nv_fp6_e3m2 v;
    v.__x = static_cast<__nv_fp6_storage_t>(c);
    return bits_of(static_cast<float>(v));
  }
};

// ---- fp4: an x2 storage (one byte) holds lane x in bits 0-3 and lane y in bits 4-7 ----
template <cudaRoundMode M>
struct F32ToFp4 : One {
  __device__ static std::uint32_t one(std::uint32_t c) { return __nv_cvt_float_to_fp4(f32_of(c), __NV_E2M1, M); }
};
template <cudaRoundMode M>
struct F32x2ToFp4x2 : Pair {
  __device__ static void pair(std::uint32_t a, std::uint32_t b, std::uint32_t& lo, std::uint32_t& hi) {
    const std::uint32_t v = __nv_cvt_float2_to_fp4x2(make_float2(f32_of(a), f32_of(b)), __NV_E2M1, M);
    lo = v & 0xFu;
    hi = (v >> 4) & 0xFu;
  }
};
template <cudaRoundMode M>
struct F16ToFp4 : One {
  __device__ static std::uint32_t one(std::uint32_t c) { return __nv_cvt_halfraw_to_fp4(hraw(c), __NV_E2M1, M); }
};
template <cudaRoundMode M>
struct F16x2ToFp4x2 : Pair {
  __device__ static void pair(std::uint32_t a, std::uint32_t b, std::uint32_t& lo, std::uint32_t& hi) {
    const std::uint32_t v = __nv_cvt_halfraw2_to_fp4x2(h2raw(a, b), __NV_E2M1, M);
    lo = v & 0xFu;
    hi = (v >> 4) & 0xFu;
  }
};
template <cudaRoundMode M>
struct Bf16ToFp4 : One {
  __device__ static std::uint32_t one(std::uint32_t c) { return __nv_cvt_bfloat16raw_to_fp4(braw(c), __NV_E2M1, M); }
};
template <cudaRoundMode M>
struct Bf16x2ToFp4x2 : Pair {
  __device__ static void pair(std::uint32_t a, std::uint32_t b, std::uint32_t& lo, std::uint32_t& hi) {
    const std::uint32_t v = __nv_cvt_bfloat16raw2_to_fp4x2(b2raw(a, b), __NV_E2M1, M);
    lo = v & 0xFu;
    hi = (v >> 4) & 0xFu;
  }
};
struct e2m1_to_f16 : One {
  __device__ static std::uint32_t one(std::uint32_t c) {
    return __nv_cvt_fp4_to_halfraw(static_cast<__nv_fp4_storage_t>(c), __NV_E2M1).x;
  }
};
struct e2m1x2_to_f16x2 : Pair {
  __device__ static void pair(std::uint32_t a, std::uint32_t b, std::uint32_t& lo, std::uint32_t& hi) {
    const __half2_raw r = __nv_cvt_fp4x2_to_halfraw2(static_cast<__nv_fp4x2_storage_t>((a & 0xFu) | (b << 4)), __NV_E2M1);
    lo = r.x;
    hi = r.y;
  }
};
struct e2m1_to_f32 : One {
  __device__ static std::uint32_t one(std::uint32_t c) {
    __nv_fp4_e2m1 v;
    v.__x = static_cast<__nv_fp4_storage_t>(c);
    return bits_of(static_cast<float>(v));
  }
};
using f32_to_e2m1_rn = F32ToFp4<RN>;
using f32_to_e2m1_rz = F32ToFp4<RZ>;
using f32x2_to_e2m1x2_rn = F32x2ToFp4x2<RN>;
using f32x2_to_e2m1x2_rz = F32x2ToFp4x2<RZ>;
using f16_to_e2m1_rn = F16ToFp4<RN>;
using f16_to_e2m1_rz = F16ToFp4<RZ>;
using f16x2_to_e2m1x2_rn = F16x2ToFp4x2<RN>;
using f16x2_to_e2m1x2_rz = F16x2ToFp4x2<RZ>;
using bf16_to_e2m1_rn = Bf16ToFp4<RN>;
using bf16_to_e2m1_rz = Bf16ToFp4<RZ>;
using bf16x2_to_e2m1x2_rn = Bf16x2ToFp4x2<RN>;
using bf16x2_to_e2m1x2_rz = Bf16x2ToFp4x2<RZ>;

#define FPCERT_LAUNCHER(NAME, OUT) Launcher{#NAME, &launch<NAME, OUT>, static_cast<int>(sizeof(OUT)), &launch_check<NAME, OUT>}
const Launcher kLaunchers[] = {
    FPCERT_LAUNCHER(f32_to_e2m3_rn, std::uint8_t),       FPCERT_LAUNCHER(f32_to_e2m3_rz, std::uint8_t),
    FPCERT_LAUNCHER(f32x2_to_e2m3x2_rn, std::uint8_t),   FPCERT_LAUNCHER(f32x2_to_e2m3x2_rz, std::uint8_t),
    FPCERT_LAUNCHER(f16_to_e2m3_rn, std::uint8_t),       FPCERT_LAUNCHER(f16_to_e2m3_rz, std::uint8_t),
    FPCERT_LAUNCHER(f16x2_to_e2m3x2_rn, std::uint8_t),   FPCERT_LAUNCHER(f16x2_to_e2m3x2_rz, std::uint8_t),
    FPCERT_LAUNCHER(bf16_to_e2m3_rn, std::uint8_t),      FPCERT_LAUNCHER(bf16_to_e2m3_rz, std::uint8_t),
    FPCERT_LAUNCHER(bf16x2_to_e2m3x2_rn, std::uint8_t),  FPCERT_LAUNCHER(bf16x2_to_e2m3x2_rz, std::uint8_t),
    FPCERT_LAUNCHER(f32_to_e3m2_rn, std::uint8_t),       FPCERT_LAUNCHER(f32_to_e3m2_rz, std::uint8_t),
    FPCERT_LAUNCHER(f32x2_to_e3m2x2_rn, std::uint8_t),   FPCERT_LAUNCHER(f32x2_to_e3m2x2_rz, std::uint8_t),
    FPCERT_LAUNCHER(f16_to_e3m2_rn, std::uint8_t),       FPCERT_LAUNCHER(f16_to_e3m2_rz, std::uint8_t),
    FPCERT_LAUNCHER(f16x2_to_e3m2x2_rn, std::uint8_t),   FPCERT_LAUNCHER(f16x2_to_e3m2x2_rz, std::uint8_t),
    FPCERT_LAUNCHER(bf16_to_e3m2_rn, std::uint8_t),      FPCERT_LAUNCHER(bf16_to_e3m2_rz, std::uint8_t),
    FPCERT_LAUNCHER(bf16x2_to_e3m2x2_rn, std::uint8_t),  FPCERT_LAUNCHER(bf16x2_to_e3m2x2_rz, std::uint8_t),
    FPCERT_LAUNCHER(e2m3_to_f16, std::uint16_t),         FPCERT_LAUNCHER(e3m2_to_f16, std::uint16_t),
    FPCERT_LAUNCHER(e2m3x2_to_f16x2, std::uint16_t),     FPCERT_LAUNCHER(e3m2x2_to_f16x2, std::uint16_t),
    FPCERT_LAUNCHER(e2m3_to_f32, std::uint32_t),         FPCERT_LAUNCHER(e3m2_to_f32, std::uint32_t),
    FPCERT_LAUNCHER(f32_to_e2m1_rn, std::uint8_t),       FPCERT_LAUNCHER(f32_to_e2m1_rz, std::uint8_t),
    FPCERT_LAUNCHER(f32x2_to_e2m1x2_rn, std::uint8_t),   FPCERT_LAUNCHER(f32x2_to_e2m1x2_rz, std::uint8_t),
    FPCERT_LAUNCHER(f16_to_e2m1_rn, std::uint8_t),       FPCERT_LAUNCHER(f16_to_e2m1_rz, std::uint8_t),
    FPCERT_LAUNCHER(f16x2_to_e2m1x2_rn, std::uint8_t),   FPCERT_LAUNCHER(f16x2_to_e2m1x2_rz, std::uint8_t),
    FPCERT_LAUNCHER(bf16_to_e2m1_rn, std::uint8_t),      FPCERT_LAUNCHER(bf16_to_e2m1_rz, std::uint8_t),
    FPCERT_LAUNCHER(bf16x2_to_e2m1x2_rn, std::uint8_t),  FPCERT_LAUNCHER(bf16x2_to_e2m1x2_rz, std::uint8_t),
    FPCERT_LAUNCHER(e2m1_to_f16, std::uint16_t),         FPCERT_LAUNCHER(e2m1x2_to_f16x2, std::uint16_t),
    FPCERT_LAUNCHER(e2m1_to_f32, std::uint32_t),
};
#undef FPCERT_LAUNCHER

}  // namespace

std::span<const Launcher> launchers_fp6_fp4() { return kLaunchers; }

}  // namespace fpcert::cuda_convert
