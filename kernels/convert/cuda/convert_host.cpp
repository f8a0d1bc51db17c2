// kernels/convert/cuda/convert_host.cpp — the CUDA headers' host code for the device table's entries: the
// same functions compiled for the CPU, where they take the header's software emulation (the path a
// device takes below the hardware instruction's architecture). tests/kernels/convert/device_convert_test.cpp
// sweeps them against the table's Rounders on a machine without a GPU, so that a wrong statement of
// semantics in the table is found before a device run. PTX-only entries (cvt to tf32) have none.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp4.h>
#include <cuda_fp6.h>
#include <cuda_fp8.h>

#include <bit>
#include <cstdint>
#include <string_view>

#include "kernels/convert/device_convert.hpp"

namespace fpcert {
namespace {

using U = std::uint32_t;

float f32(U c) { return std::bit_cast<float>(c); }
U bits(float f) { return std::bit_cast<U>(f); }
__half_raw hraw(U c) {
  __half_raw r;
  r.x = static_cast<unsigned short>(c);
  return r;
}
__half2_raw h2raw(U lo, U hi) {
  __half2_raw r;
  r.x = static_cast<unsigned short>(lo);
  r.y = static_cast<unsigned short>(hi);
  return r;
}
__nv_bfloat16_raw braw(U c) {
  __nv_bfloat16_raw r;
  r.x = static_cast<unsigned short>(c);
  return r;
}
__nv_bfloat162_raw b2raw(U lo, U hi) {
  __nv_bfloat162_raw r;
  r.x = static_cast<unsigned short>(lo);
  r.y = static_cast<unsigned short>(hi);
  return r;
}
U hbits(__half h) { return static_cast<__half_raw>(h).x; }
U bbits(__nv_bfloat16 b) { return static_cast<__nv_bfloat16_raw>(b).x; }
U partner(U c) { return c ^ 1u; }  // as the kernels pair codes (the result is the low lane's)

struct Entry {
  const char* name;
  HostEmulation fn;
};

#define E(NAME, BODY) Entry{#NAME, [](U c) -> U { BODY }}
#define SAT __NV_SATFINITE
#define NOSAT __NV_NOSAT

const Entry kHost[] = {
    // cuda_fp16.h
    E(f32_to_f16, return hbits(__float2half(f32(c)));),
    E(f32_to_f16_rn, return hbits(__float2half_rn(f32(c)));),
    E(f32_to_f16_rz, return hbits(__float2half_rz(f32(c)));),
    E(f32_to_f16_rd, return hbits(__float2half_rd(f32(c)));),
    E(f32_to_f16_ru, return hbits(__float2half_ru(f32(c)));),
    E(f32x2_to_f16x2_rn, return static_cast<__half2_raw>(__float22half2_rn(make_float2(f32(c), f32(partner(c))))).x;),
    E(tf32_to_f16_rn, return hbits(__float2half_rn(f32(c << 13)));),
    E(f16_to_f32, return bits(__half2float(__half(hraw(c))));),
    E(f16x2_to_f32x2, return bits(__half22float2(__half2(h2raw(c, partner(c)))).x);),
    // cuda_bf16.h
    E(f32_to_bf16, return bbits(__float2bfloat16(f32(c)));),
    E(f32_to_bf16_rn, return bbits(__float2bfloat16_rn(f32(c)));),
    E(f32_to_bf16_rz, return bbits(__float2bfloat16_rz(f32(c)));),
    E(f32_to_bf16_rd, return bbits(__float2bfloat16_rd(f32(c)));),
    E(f32_to_bf16_ru, return bbits(__float2bfloat16_ru(f32(c)));),
    E(f32x2_to_bf16x2_rn, return static_cast<__nv_bfloat162_raw>(__float22bfloat162_rn(make_float2(f32(c), f32(partner(c))))).x;),
    E(tf32_to_bf16_rn, return bbits(__float2bfloat16_rn(f32(c << 13)));),
    E(bf16_to_f32, return bits(__bfloat162float(__nv_bfloat16(braw(c))));),
    E(bf16x2_to_f32x2, return bits(__bfloat1622float2(__nv_bfloat162(b2raw(c, partner(c)))).x);),
    E(bf16_to_f16_direct, return hbits(__float2half_rn(__bfloat162float(__nv_bfloat16(braw(c)))));),
    // cuda_fp8.h: fp8
    E(f32_to_e4m3_satfinite, return __nv_cvt_float_to_fp8(f32(c), SAT, __NV_E4M3);),
    E(f32_to_e4m3_nosat, return __nv_cvt_float_to_fp8(f32(c), NOSAT, __NV_E4M3);),
    E(f32_to_e5m2_satfinite, return __nv_cvt_float_to_fp8(f32(c), SAT, __NV_E5M2);),
    E(f32_to_e5m2_nosat, return __nv_cvt_float_to_fp8(f32(c), NOSAT, __NV_E5M2);),
    E(f32x2_to_e4m3x2_satfinite, return __nv_cvt_float2_to_fp8x2(make_float2(f32(c), f32(partner(c))), SAT, __NV_E4M3) & 0xFFu;),
    E(f32x2_to_e4m3x2_nosat, return __nv_cvt_float2_to_fp8x2(make_float2(f32(c), f32(partner(c))), NOSAT, __NV_E4M3) & 0xFFu;),
    E(f32x2_to_e5m2x2_satfinite, return __nv_cvt_float2_to_fp8x2(make_float2(f32(c), f32(partner(c))), SAT, __NV_E5M2) & 0xFFu;),
    E(f32x2_to_e5m2x2_nosat, return __nv_cvt_float2_to_fp8x2(make_float2(f32(c), f32(partner(c))), NOSAT, __NV_E5M2) & 0xFFu;),
    E(f16_to_e4m3_satfinite, return __nv_cvt_halfraw_to_fp8(hraw(c), SAT, __NV_E4M3);),
    E(f16_to_e4m3_nosat, return __nv_cvt_halfraw_to_fp8(hraw(c), NOSAT, __NV_E4M3);),
    E(f16_to_e5m2_satfinite, return __nv_cvt_halfraw_to_fp8(hraw(c), SAT, __NV_E5M2);),
    E(f16_to_e5m2_nosat, return __nv_cvt_halfraw_to_fp8(hraw(c), NOSAT, __NV_E5M2);),
    E(f16x2_to_e4m3x2_satfinite, return __nv_cvt_halfraw2_to_fp8x2(h2raw(c, partner(c)), SAT, __NV_E4M3) & 0xFFu;),
    E(f16x2_to_e4m3x2_nosat, return __nv_cvt_halfraw2_to_fp8x2(h2raw(c, partner(c)), NOSAT, __NV_E4M3) & 0xFFu;),
    E(f16x2_to_e5m2x2_satfinite, return __nv_cvt_halfraw2_to_fp8x2(h2raw(c, partner(c)), SAT, __NV_E5M2) & 0xFFu;),
    E(f16x2_to_e5m2x2_nosat, return __nv_cvt_halfraw2_to_fp8x2(h2raw(c, partner(c)), NOSAT, __NV_E5M2) & 0xFFu;),
    E(bf16_to_e4m3_satfinite, return __nv_cvt_bfloat16raw_to_fp8(braw(c), SAT, __NV_E4M3);),
    E(bf16_to_e4m3_nosat, return __nv_cvt_bfloat16raw_to_fp8(braw(c), NOSAT, __NV_E4M3);),
    E(bf16_to_e5m2_satfinite, return __nv_cvt_bfloat16raw_to_fp8(braw(c), SAT, __NV_E5M2);),
    E(bf16_to_e5m2_nosat, return __nv_cvt_bfloat16raw_to_fp8(braw(c), NOSAT, __NV_E5M2);),
    E(bf16x2_to_e4m3x2_satfinite, return __nv_cvt_bfloat16raw2_to_fp8x2(b2raw(c, partner(c)), SAT, __NV_E4M3) & 0xFFu;),
    E(bf16x2_to_e4m3x2_nosat, return __nv_cvt_bfloat16raw2_to_fp8x2(b2raw(c, partner(c)), NOSAT, __NV_E4M3) & 0xFFu;),
    E(bf16x2_to_e5m2x2_satfinite, return __nv_cvt_bfloat16raw2_to_fp8x2(b2raw(c, partner(c)), SAT, __NV_E5M2) & 0xFFu;),
    E(bf16x2_to_e5m2x2_nosat, return __nv_cvt_bfloat16raw2_to_fp8x2(b2raw(c, partner(c)), NOSAT, __NV_E5M2) & 0xFFu;),
    E(e4m3_to_f16, return __nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(c), __NV_E4M3).x;),
    E(e5m2_to_f16, return __nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(c), __NV_E5M2).x;),
    E(e4m3x2_to_f16x2, return __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(c | (partner(c) << 8)), __NV_E4M3).x;),
    E(e5m2x2_to_f16x2, return __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(c | (partner(c) << 8)), __NV_E5M2).x;),
    E(e4m3_to_f32, __nv_fp8_e4m3 v; v.__x = static_cast<__nv_fp8_storage_t>(c); return bits(static_cast<float>(v));),
    E(e5m2_to_f32, __nv_fp8_e5m2 v; v.__x = static_cast<__nv_fp8_storage_t>(c); return bits(static_cast<float>(v));),
    // cuda_fp8.h: ue8m0
    E(f32_to_ue8m0_rz_satfinite, return __nv_cvt_float_to_e8m0(f32(c), SAT, cudaRoundZero);),
    E(f32_to_ue8m0_rz_nosat, return __nv_cvt_float_to_e8m0(f32(c), NOSAT, cudaRoundZero);),
    E(f32_to_ue8m0_ru_satfinite, return __nv_cvt_float_to_e8m0(f32(c), SAT, cudaRoundPosInf);),
    E(f32_to_ue8m0_ru_nosat, return __nv_cvt_float_to_e8m0(f32(c), NOSAT, cudaRoundPosInf);),
    E(f32x2_to_ue8m0x2_rz_satfinite, return __nv_cvt_float2_to_e8m0x2(make_float2(f32(c), f32(partner(c))), SAT, cudaRoundZero) & 0xFFu;),
    E(f32x2_to_ue8m0x2_rz_nosat, return __nv_cvt_float2_to_e8m0x2(make_float2(f32(c), f32(partner(c))), NOSAT, cudaRoundZero) & 0xFFu;),
    E(f32x2_to_ue8m0x2_ru_satfinite, return __nv_cvt_float2_to_e8m0x2(make_float2(f32(c), f32(partner(c))), SAT, cudaRoundPosInf) & 0xFFu;),
    E(f32x2_to_ue8m0x2_ru_nosat, return __nv_cvt_float2_to_e8m0x2(make_float2(f32(c), f32(partner(c))), NOSAT, cudaRoundPosInf) & 0xFFu;),
    E(bf16_to_ue8m0_rz_satfinite, return __nv_cvt_bfloat16raw_to_e8m0(braw(c), SAT, cudaRoundZero);),
    E(bf16_to_ue8m0_rz_nosat, return __nv_cvt_bfloat16raw_to_e8m0(braw(c), NOSAT, cudaRoundZero);),
    E(bf16_to_ue8m0_ru_satfinite, return __nv_cvt_bfloat16raw_to_e8m0(braw(c), SAT, cudaRoundPosInf);),
    E(bf16_to_ue8m0_ru_nosat, return __nv_cvt_bfloat16raw_to_e8m0(braw(c), NOSAT, cudaRoundPosInf);),
    E(bf16x2_to_ue8m0x2_rz_satfinite, return __nv_cvt_bfloat162raw_to_e8m0x2(b2raw(c, partner(c)), SAT, cudaRoundZero) & 0xFFu;),
    E(bf16x2_to_ue8m0x2_rz_nosat, return __nv_cvt_bfloat162raw_to_e8m0x2(b2raw(c, partner(c)), NOSAT, cudaRoundZero) & 0xFFu;),
    E(bf16x2_to_ue8m0x2_ru_satfinite, return __nv_cvt_bfloat162raw_to_e8m0x2(b2raw(c, partner(c)), SAT, cudaRoundPosInf) & 0xFFu;),
    E(bf16x2_to_ue8m0x2_ru_nosat, return __nv_cvt_bfloat162raw_to_e8m0x2(b2raw(c, partner(c)), NOSAT, cudaRoundPosInf) & 0xFFu;),
    E(ue8m0_to_bf16, return __nv_cvt_e8m0_to_bf16raw(static_cast<__nv_fp8_storage_t>(c)).x;),
    E(ue8m0x2_to_bf16x2, return __nv_cvt_e8m0x2_to_bf162raw(static_cast<__nv_fp8x2_storage_t>(c | (partner(c) << 8))).x;),
    // cuda_fp6.h
    E(f32_to_e2m3_rn, return __nv_cvt_float_to_fp6(f32(c), __NV_E2M3, cudaRoundNearest);),
    E(f32_to_e2m3_rz, return __nv_cvt_float_to_fp6(f32(c), __NV_E2M3, cudaRoundZero);),
    E(f32x2_to_e2m3x2_rn, return __nv_cvt_float2_to_fp6x2(make_float2(f32(c), f32(partner(c))), __NV_E2M3, cudaRoundNearest) & 0xFFu;),
    E(f32x2_to_e2m3x2_rz, return __nv_cvt_float2_to_fp6x2(make_float2(f32(c), f32(partner(c))), __NV_E2M3, cudaRoundZero) & 0xFFu;),
    E(f16_to_e2m3_rn, return __nv_cvt_halfraw_to_fp6(hraw(c), __NV_E2M3, cudaRoundNearest);),
    E(f16_to_e2m3_rz, return __nv_cvt_halfraw_to_fp6(hraw(c), __NV_E2M3, cudaRoundZero);),
    E(f16x2_to_e2m3x2_rn, return __nv_cvt_halfraw2_to_fp6x2(h2raw(c, partner(c)), __NV_E2M3, cudaRoundNearest) & 0xFFu;),
    E(f16x2_to_e2m3x2_rz, return __nv_cvt_halfraw2_to_fp6x2(h2raw(c, partner(c)), __NV_E2M3, cudaRoundZero) & 0xFFu;),
    E(bf16_to_e2m3_rn, return __nv_cvt_bfloat16raw_to_fp6(braw(c), __NV_E2M3, cudaRoundNearest);),
    E(bf16_to_e2m3_rz, return __nv_cvt_bfloat16raw_to_fp6(braw(c), __NV_E2M3, cudaRoundZero);),
    E(bf16x2_to_e2m3x2_rn, return __nv_cvt_bfloat16raw2_to_fp6x2(b2raw(c, partner(c)), __NV_E2M3, cudaRoundNearest) & 0xFFu;),
    E(bf16x2_to_e2m3x2_rz, return __nv_cvt_bfloat16raw2_to_fp6x2(b2raw(c, partner(c)), __NV_E2M3, cudaRoundZero) & 0xFFu;),
    E(f32_to_e3m2_rn, return __nv_cvt_float_to_fp6(f32(c), __NV_E3M2, cudaRoundNearest);),
    E(f32_to_e3m2_rz, return __nv_cvt_float_to_fp6(f32(c), __NV_E3M2, cudaRoundZero);),
    E(f32x2_to_e3m2x2_rn, return __nv_cvt_float2_to_fp6x2(make_float2(f32(c), f32(partner(c))), __NV_E3M2, cudaRoundNearest) & 0xFFu;),
    E(f32x2_to_e3m2x2_rz, return __nv_cvt_float2_to_fp6x2(make_float2(f32(c), f32(partner(c))), __NV_E3M2, cudaRoundZero) & 0xFFu;),
    E(f16_to_e3m2_rn, return __nv_cvt_halfraw_to_fp6(hraw(c), __NV_E3M2, cudaRoundNearest);),
    E(f16_to_e3m2_rz, return __nv_cvt_halfraw_to_fp6(hraw(c), __NV_E3M2, cudaRoundZero);),
    E(f16x2_to_e3m2x2_rn, return __nv_cvt_halfraw2_to_fp6x2(h2raw(c, partner(c)), __NV_E3M2, cudaRoundNearest) & 0xFFu;),
    E(f16x2_to_e3m2x2_rz, return __nv_cvt_halfraw2_to_fp6x2(h2raw(c, partner(c)), __NV_E3M2, cudaRoundZero) & 0xFFu;),
    E(bf16_to_e3m2_rn, return __nv_cvt_bfloat16raw_to_fp6(braw(c), __NV_E3M2, cudaRoundNearest);),
    E(bf16_to_e3m2_rz, return __nv_cvt_bfloat16raw_to_fp6(braw(c), __NV_E3M2, cudaRoundZero);),
    E(bf16x2_to_e3m2x2_rn, return __nv_cvt_bfloat16raw2_to_fp6x2(b2raw(c, partner(c)), __NV_E3M2, cudaRoundNearest) & 0xFFu;),
    E(bf16x2_to_e3m2x2_rz, return __nv_cvt_bfloat16raw2_to_fp6x2(b2raw(c, partner(c)), __NV_E3M2, cudaRoundZero) & 0xFFu;),
    E(e2m3_to_f16, return __nv_cvt_fp6_to_halfraw(static_cast<__nv_fp6_storage_t>(c), __NV_E2M3).x;),
    E(e3m2_to_f16, return __nv_cvt_fp6_to_halfraw(static_cast<__nv_fp6_storage_t>(c), __NV_E3M2).x;),
    E(e2m3x2_to_f16x2, return __nv_cvt_fp6x2_to_halfraw2(static_cast<__nv_fp6x2_storage_t>(c | (partner(c) << 8)), __NV_E2M3).x;),
    E(e3m2x2_to_f16x2, return __nv_cvt_fp6x2_to_halfraw2(static_cast<__nv_fp6x2_storage_t>(c | (partner(c) << 8)), __NV_E3M2).x;),
    E(e2m3_to_f32, __nv_fp6_e2m3 v; v.__x = static_cast<__nv_fp6_storage_t>(c); return bits(static_cast<float>(v));),
    E(e3m2_to_f32, __nv_fp6_e3m2 v; v.__x = static_cast<__nv_fp6_storage_t>(c); return bits(static_cast<float>(v));),
    // cuda_fp4.h
    E(f32_to_e2m1_rn, return __nv_cvt_float_to_fp4(f32(c), __NV_E2M1, cudaRoundNearest);),
    E(f32_to_e2m1_rz, return __nv_cvt_float_to_fp4(f32(c), __NV_E2M1, cudaRoundZero);),
    E(f32x2_to_e2m1x2_rn, return __nv_cvt_float2_to_fp4x2(make_float2(f32(c), f32(partner(c))), __NV_E2M1, cudaRoundNearest) & 0xFu;),
    E(f32x2_to_e2m1x2_rz, return __nv_cvt_float2_to_fp4x2(make_float2(f32(c), f32(partner(c))), __NV_E2M1, cudaRoundZero) & 0xFu;),
    E(f16_to_e2m1_rn, return __nv_cvt_halfraw_to_fp4(hraw(c), __NV_E2M1, cudaRoundNearest);),
    E(f16_to_e2m1_rz, return __nv_cvt_halfraw_to_fp4(hraw(c), __NV_E2M1, cudaRoundZero);),
    E(f16x2_to_e2m1x2_rn, return __nv_cvt_halfraw2_to_fp4x2(h2raw(c, partner(c)), __NV_E2M1, cudaRoundNearest) & 0xFu;),
    E(f16x2_to_e2m1x2_rz, return __nv_cvt_halfraw2_to_fp4x2(h2raw(c, partner(c)), __NV_E2M1, cudaRoundZero) & 0xFu;),
    E(bf16_to_e2m1_rn, return __nv_cvt_bfloat16raw_to_fp4(braw(c), __NV_E2M1, cudaRoundNearest);),
    E(bf16_to_e2m1_rz, return __nv_cvt_bfloat16raw_to_fp4(braw(c), __NV_E2M1, cudaRoundZero);),
    E(bf16x2_to_e2m1x2_rn, return __nv_cvt_bfloat16raw2_to_fp4x2(b2raw(c, partner(c)), __NV_E2M1, cudaRoundNearest) & 0xFu;),
    E(bf16x2_to_e2m1x2_rz, return __nv_cvt_bfloat16raw2_to_fp4x2(b2raw(c, partner(c)), __NV_E2M1, cudaRoundZero) & 0xFu;),
    E(e2m1_to_f16, return __nv_cvt_fp4_to_halfraw(static_cast<__nv_fp4_storage_t>(c), __NV_E2M1).x;),
    E(e2m1x2_to_f16x2, return __nv_cvt_fp4x2_to_halfraw2(static_cast<__nv_fp4x2_storage_t>((c & 0xFu) | (partner(c) << 4)), __NV_E2M1).x;),
    E(e2m1_to_f32, __nv_fp4_e2m1 v; v.__x = static_cast<__nv_fp4_storage_t>(c); return bits(static_cast<float>(v));),
};
#undef E
#undef SAT
#undef NOSAT

}  // namespace

HostEmulation cuda_header_host_emulation(std::string_view name) {
  for (const Entry& e : kHost)
    if (name == e.name) return e.fn;
  return nullptr;
}

}  // namespace fpcert
