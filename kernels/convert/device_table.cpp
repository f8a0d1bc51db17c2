// kernels/convert/device_table.cpp — the device conversion table as data: one row per conversion the
// CUDA 13.0 headers (cuda_fp16.h, cuda_bf16.h, cuda_fp8.h, cuda_fp6.h, cuda_fp4.h) and PTX offer
// between fpcert's formats, as kernels/convert/cuda/convert_*.cu calls it; docs/conversions.md prints
// it (`fpcert convert --intrinsic list --include-test-entries`).
#include <string_view>
#include <vector>

#include "kernels/convert/device_convert.hpp"

namespace fpcert {
namespace {

constexpr Rounding RN = Rounding::NearestEven, RNA = Rounding::NearestAway, RZ = Rounding::TowardZero, RU = Rounding::Up,
                   RD = Rounding::Down;
constexpr Saturation SAT_INF = Saturation::Inf, SAT_FIN = Saturation::Finite, SAT_NAN = Saturation::NaN;

// ---- NaN statements (docs/conversions.md, "NaN conventions of the table, and NaN statements") ----
constexpr NanStatement kNone{NanRule::NotApplicable, 0, true,
                             "no NaN payload to choose (the destination has one NaN code or none, or the source has no "
                             "NaN): the ordinary check covers it bit for bit"};
constexpr NanStatement kF16CanonHw{NanRule::Canonical, 0x7FFF, false,
                                   "device cvt to f16: NaN result undocumented; cuda_fp16.hpp's host emulation writes 0x7FFF"};
constexpr NanStatement kBf16CanonHw{NanRule::Canonical, 0x7FFF, false,
                                    "device cvt to bf16: NaN result undocumented; cuda_bf16.hpp's emulation writes 0x7FFF"};
constexpr NanStatement kBf16CanonSw{NanRule::Canonical, 0x7FFF, true,
                                    "cuda_bf16.hpp __internal_float2bfloat16: any NaN -> 0x7FFF"};
constexpr NanStatement kF32CanonHw{NanRule::Canonical, 0x7FFFFFFF, false,
                                   "cvt.f32.f16: NaN result undocumented; cuda_fp16.hpp's host emulation writes 0x7FFFFFFF"};
constexpr NanStatement kF32ShiftSw{NanRule::ShiftPayload, 0, true,
                                   "mov.b32 {0,h}: the bf16 bits become the top half, the payload moves unchanged"};
constexpr NanStatement kF32ShiftHw{NanRule::ShiftPayload, 0, false,
                                   "cvt.f32.bf16 (sm_90): NaN result undocumented; expected to move the bits like the "
                                   "sm_80 path (mov.b32 {0,h})"};
constexpr NanStatement kTf32Unstated{NanRule::Unstated, 0, false, "cvt.*.tf32.f32: NaN result undocumented; no claim"};
constexpr NanStatement kFp8CanonHw{NanRule::Canonical, 0x7F, false,
                                   "cvt.rn.satfinite.{e4m3,e5m2}x2: NaN result undocumented; cuda_fp8.hpp's emulation "
                                   "writes 0x7F"};
constexpr NanStatement kFp8CanonSw{NanRule::Canonical, 0x7F, true,
                                   "cuda_fp8.hpp: a NaN input becomes fp32 0x7FFFFFFF, then e4m3 0x7F (S.1111.111 with "
                                   "S = 0) or e5m2 0x7F (0.11111.11)"};
constexpr NanStatement kF16FromFp8Hw{NanRule::Canonical, 0x7FFF, false,
                                     "cvt.rn.f16x2.{e4m3,e5m2}x2: NaN result undocumented; cuda_fp8.hpp's emulation "
                                     "writes 0x7FFF"};
constexpr NanStatement kF16FromFp8Sw{NanRule::Canonical, 0x7FFF, true,
                                     "cuda_fp8.hpp __nv_cvt_fp8_to_halfraw (emulation): any NaN -> 0x7FFF"};
constexpr NanStatement kF32FromFp8{NanRule::Canonical, 0x7FFFFFFF, false,
                                   "fp8 -> fp16 (NaN 0x7FFF), then cvt.f32.f16: NaN result undocumented, 0x7FFFFFFF "
                                   "expected"};
constexpr NanStatement kBf16FromE8m0Sw{NanRule::Canonical, 0x7FFF, true,
                                       "cuda_fp8.hpp __internal_e8m0_to_bf16: 0xFF -> 0x7FFF"};
constexpr NanStatement kBf16FromE8m0Hw{NanRule::Canonical, 0x7FFF, false,
                                       "cvt.rn.bf16x2.ue8m0x2: NaN result undocumented; the emulation writes 0x7FFF"};

// ---- the table ----

enum Flag : unsigned {
  kPair = 1,    ///< an x2 form: both lanes checked (docs/conversions.md, "Paired forms")
  kAlias = 2,   ///< another spelling of an entry with the same semantics (not the one `--device cuda` picks)
  kScaled = 4,  ///< the scaled round trip bf16 -> (x 2^s) -> fp16 -> (x 2^-s) -> bf16
  kTest = 8,    ///< deliberately wrong: the checker must catch it (tests/kernels/convert/convert_gpu_test.cpp)
};

/// One row: name, the call as the kernel writes it, source and destination, the Rounder's rounding and
/// saturation (its NaN convention follows from the NaN statements: convention_of), flags; where the
/// rounding happens (HwPath, its first __CUDA_ARCH__, the instruction), the NaN statements of the
/// hardware and software paths, the lowest __CUDA_ARCH__ the kernel exists for, a note.
struct Row {
  std::string_view name, call;
  const Format *src, *dst;
  Rounding rounding;
  Saturation saturation;
  unsigned flags;
  HwPath hw;
  int hw_arch;
  std::string_view instr;
  const NanStatement *nan_hw, *nan_sw;
  int min_arch;
  std::string_view note;
};

// Test-only rows last (device_conversions(false) stops at the first one).
const Row kRows[] = {
    {"f32_to_f16", "__float2half(x)", &f32, &f16, RN, SAT_INF, kAlias,
     HwPath::Always, 0, "cvt.rn.f16.f32", &kF16CanonHw, &kF16CanonHw, 0, ""},
    {"f32_to_f16_rn", "__float2half_rn(x)", &f32, &f16, RN, SAT_INF, 0,
     HwPath::Always, 0, "cvt.rn.f16.f32", &kF16CanonHw, &kF16CanonHw, 0, ""},
    {"f32_to_f16_rz", "__float2half_rz(x)", &f32, &f16, RZ, SAT_INF, 0,
     HwPath::Always, 0, "cvt.rz.f16.f32", &kF16CanonHw, &kF16CanonHw, 0, ""},
    {"f32_to_f16_rd", "__float2half_rd(x)", &f32, &f16, RD, SAT_INF, 0,
     HwPath::Always, 0, "cvt.rm.f16.f32", &kF16CanonHw, &kF16CanonHw, 0, ""},
    {"f32_to_f16_ru", "__float2half_ru(x)", &f32, &f16, RU, SAT_INF, 0,
     HwPath::Always, 0, "cvt.rp.f16.f32", &kF16CanonHw, &kF16CanonHw, 0, ""},
    {"f32x2_to_f16x2_rn", "__float22half2_rn(make_float2(a, b))", &f32, &f16, RN, SAT_INF, kPair,
     HwPath::Always, 0, "cvt.rn.f16x2.f32 (sm_80+; two cvt.rn.f16.f32 below)", &kF16CanonHw, &kF16CanonHw, 0, ""},
    {"tf32_to_f16_rn", "__float2half_rn(x), x a tf32 value in fp32 bits", &tf32, &f16, RN, SAT_INF, 0,
     HwPath::Always, 0, "cvt.rn.f16.f32", &kF16CanonHw, &kF16CanonHw, 0, ""},
    {"f16_to_f32", "__half2float(h)", &f16, &f32, RN, SAT_INF, 0,
     HwPath::Always, 0, "cvt.f32.f16", &kF32CanonHw, &kF32CanonHw, 0, ""},
    {"f16x2_to_f32x2", "__half22float2(h2)", &f16, &f32, RN, SAT_INF, kPair,
     HwPath::Always, 0, "cvt.f32.f16", &kF32CanonHw, &kF32CanonHw, 0, ""},
    {"f32_to_bf16", "__float2bfloat16(x)", &f32, &bf16, RN, SAT_INF, kAlias,
     HwPath::FromArch, 800, "cvt.rn.bf16.f32", &kBf16CanonHw, &kBf16CanonSw, 0, ""},
    {"f32_to_bf16_rn", "__float2bfloat16_rn(x)", &f32, &bf16, RN, SAT_INF, 0,
     HwPath::FromArch, 800, "cvt.rn.bf16.f32", &kBf16CanonHw, &kBf16CanonSw, 0, ""},
    {"f32_to_bf16_rz", "__float2bfloat16_rz(x)", &f32, &bf16, RZ, SAT_INF, 0,
     HwPath::FromArch, 800, "cvt.rz.bf16.f32", &kBf16CanonHw, &kBf16CanonSw, 0, ""},
    {"f32_to_bf16_rd", "__float2bfloat16_rd(x)", &f32, &bf16, RD, SAT_INF, 0,
     HwPath::FromArch, 900, "cvt.rm.bf16.f32", &kBf16CanonHw, &kBf16CanonSw, 0, ""},
    {"f32_to_bf16_ru", "__float2bfloat16_ru(x)", &f32, &bf16, RU, SAT_INF, 0,
     HwPath::FromArch, 900, "cvt.rp.bf16.f32", &kBf16CanonHw, &kBf16CanonSw, 0, ""},
    {"f32x2_to_bf16x2_rn", "__float22bfloat162_rn(make_float2(a, b))", &f32, &bf16, RN, SAT_INF, kPair,
     HwPath::FromArch, 800, "cvt.rn.bf16x2.f32", &kBf16CanonHw, &kBf16CanonSw, 0, ""},
    {"tf32_to_bf16_rn", "__float2bfloat16_rn(x), x a tf32 value in fp32 bits", &tf32, &bf16, RN, SAT_INF, 0,
     HwPath::FromArch, 800, "cvt.rn.bf16.f32", &kBf16CanonHw, &kBf16CanonSw, 0, ""},
    {"bf16_to_f32", "__bfloat162float(b)", &bf16, &f32, RN, SAT_INF, 0,
     HwPath::FromArch, 900, "cvt.f32.bf16", &kF32ShiftHw, &kF32ShiftSw, 0, ""},
    {"bf16x2_to_f32x2", "__bfloat1622float2(b2)", &bf16, &f32, RN, SAT_INF, kPair,
     HwPath::FromArch, 900, "cvt.f32.bf16", &kF32ShiftHw, &kF32ShiftSw, 0, ""},
    {"f32_to_tf32_rna", "cvt.rna.tf32.f32", &f32, &tf32, RNA, SAT_INF, 0,
     HwPath::Always, 0, "cvt.rna.tf32.f32", &kTf32Unstated, &kTf32Unstated, 800, ""},
    {"f32_to_tf32_rna_satfinite", "cvt.rna.satfinite.tf32.f32", &f32, &tf32, RNA, SAT_FIN, 0,
     HwPath::Always, 0, "cvt.rna.satfinite.tf32.f32", &kTf32Unstated, &kTf32Unstated, 800, "PTX ISA 8.1, sm_80"},
    {"f32_to_tf32_rn", "cvt.rn.tf32.f32", &f32, &tf32, RN, SAT_INF, 0,
     HwPath::Always, 0, "cvt.rn.tf32.f32", &kTf32Unstated, &kTf32Unstated, 900, "PTX ISA 7.8, sm_90 (.satfinite needs sm_100)"},
    {"f32_to_tf32_rz", "cvt.rz.tf32.f32", &f32, &tf32, RZ, SAT_INF, 0,
     HwPath::Always, 0, "cvt.rz.tf32.f32", &kTf32Unstated, &kTf32Unstated, 900, "PTX ISA 7.8, sm_90 (.satfinite needs sm_100)"},
    {"bf16_to_f16_direct", "__float2half_rn(__bfloat162float(x))", &bf16, &f16, RN, SAT_INF, 0,
     HwPath::Always, 0, "cvt.f32.bf16 (exact) + cvt.rn.f16.f32", &kF16CanonHw, &kF16CanonHw, 0, "one rounding: bf16 -> fp32 is exact"},
    {"bf16_to_f16_pow2_scaled", "h = __float2half_rn(__fmul_rn(__bfloat162float(x), 2^s)); y = __float2bfloat16_rn(__fmul_rn(__half2float(h), 2^-s)), every s in [-126, 127]", &bf16, &bf16, RN, SAT_INF, kScaled,
     HwPath::Always, 0, "cvt.rn.f16.f32, cvt.f32.f16, cvt.rn.bf16.f32", &kF16CanonHw, &kF16CanonHw, 0, "fp16 part checked against RN_f16(x * 2^s); round trip exact in the window of binades [-17 - s, 15 - s]"},
    {"f32_to_e4m3_satfinite", "__nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3)", &f32, &e4m3, RN, SAT_FIN, 0,
     HwPath::FromArch, 890, "cvt.rn.satfinite.e4m3x2.f32", &kFp8CanonHw, &kFp8CanonSw, 0, ""},
    {"f32_to_e4m3_nosat", "__nv_cvt_float_to_fp8(x, __NV_NOSAT, __NV_E4M3)", &f32, &e4m3, RN, SAT_NAN, 0,
     HwPath::Never, 0, "", &kFp8CanonSw, &kFp8CanonSw, 0, ""},
    {"f32x2_to_e4m3x2_satfinite", "__nv_cvt_float2_to_fp8x2(make_float2(a, b), __NV_SATFINITE, __NV_E4M3)", &f32, &e4m3, RN, SAT_FIN, kPair,
     HwPath::FromArch, 890, "cvt.rn.satfinite.e4m3x2.f32", &kFp8CanonHw, &kFp8CanonSw, 0, ""},
    {"f32x2_to_e4m3x2_nosat", "__nv_cvt_float2_to_fp8x2(make_float2(a, b), __NV_NOSAT, __NV_E4M3)", &f32, &e4m3, RN, SAT_NAN, kPair,
     HwPath::Never, 0, "", &kFp8CanonSw, &kFp8CanonSw, 0, ""},
    {"f32_to_e5m2_satfinite", "__nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E5M2)", &f32, &e5m2, RN, SAT_FIN, 0,
     HwPath::FromArch, 890, "cvt.rn.satfinite.e5m2x2.f32", &kFp8CanonHw, &kFp8CanonSw, 0, ""},
    {"f32_to_e5m2_nosat", "__nv_cvt_float_to_fp8(x, __NV_NOSAT, __NV_E5M2)", &f32, &e5m2, RN, SAT_INF, 0,
     HwPath::Never, 0, "", &kFp8CanonSw, &kFp8CanonSw, 0, ""},
    {"f32x2_to_e5m2x2_satfinite", "__nv_cvt_float2_to_fp8x2(make_float2(a, b), __NV_SATFINITE, __NV_E5M2)", &f32, &e5m2, RN, SAT_FIN, kPair,
     HwPath::FromArch, 890, "cvt.rn.satfinite.e5m2x2.f32", &kFp8CanonHw, &kFp8CanonSw, 0, ""},
    {"f32x2_to_e5m2x2_nosat", "__nv_cvt_float2_to_fp8x2(make_float2(a, b), __NV_NOSAT, __NV_E5M2)", &f32, &e5m2, RN, SAT_INF, kPair,
     HwPath::Never, 0, "", &kFp8CanonSw, &kFp8CanonSw, 0, ""},
    {"f16_to_e4m3_satfinite", "__nv_cvt_halfraw_to_fp8(h, __NV_SATFINITE, __NV_E4M3)", &f16, &e4m3, RN, SAT_FIN, 0,
     HwPath::FromArch, 890, "cvt.rn.satfinite.e4m3x2.f16x2", &kFp8CanonHw, &kFp8CanonSw, 0, ""},
    {"f16_to_e4m3_nosat", "__nv_cvt_halfraw_to_fp8(h, __NV_NOSAT, __NV_E4M3)", &f16, &e4m3, RN, SAT_NAN, 0,
     HwPath::Never, 0, "", &kFp8CanonSw, &kFp8CanonSw, 0, ""},
    {"f16x2_to_e4m3x2_satfinite", "__nv_cvt_halfraw2_to_fp8x2(h2, __NV_SATFINITE, __NV_E4M3)", &f16, &e4m3, RN, SAT_FIN, kPair,
     HwPath::FromArch, 890, "cvt.rn.satfinite.e4m3x2.f16x2", &kFp8CanonHw, &kFp8CanonSw, 0, ""},
    {"f16x2_to_e4m3x2_nosat", "__nv_cvt_halfraw2_to_fp8x2(h2, __NV_NOSAT, __NV_E4M3)", &f16, &e4m3, RN, SAT_NAN, kPair,
     HwPath::Never, 0, "", &kFp8CanonSw, &kFp8CanonSw, 0, ""},
    {"f16_to_e5m2_satfinite", "__nv_cvt_halfraw_to_fp8(h, __NV_SATFINITE, __NV_E5M2)", &f16, &e5m2, RN, SAT_FIN, 0,
     HwPath::FromArch, 890, "cvt.rn.satfinite.e5m2x2.f16x2", &kFp8CanonHw, &kFp8CanonSw, 0, ""},
    {"f16_to_e5m2_nosat", "__nv_cvt_halfraw_to_fp8(h, __NV_NOSAT, __NV_E5M2)", &f16, &e5m2, RN, SAT_INF, 0,
     HwPath::Never, 0, "", &kFp8CanonSw, &kFp8CanonSw, 0, ""},
    {"f16x2_to_e5m2x2_satfinite", "__nv_cvt_halfraw2_to_fp8x2(h2, __NV_SATFINITE, __NV_E5M2)", &f16, &e5m2, RN, SAT_FIN, kPair,
     HwPath::FromArch, 890, "cvt.rn.satfinite.e5m2x2.f16x2", &kFp8CanonHw, &kFp8CanonSw, 0, ""},
    {"f16x2_to_e5m2x2_nosat", "__nv_cvt_halfraw2_to_fp8x2(h2, __NV_NOSAT, __NV_E5M2)", &f16, &e5m2, RN, SAT_INF, kPair,
     HwPath::Never, 0, "", &kFp8CanonSw, &kFp8CanonSw, 0, ""},
    {"bf16_to_e4m3_satfinite", "__nv_cvt_bfloat16raw_to_fp8(b, __NV_SATFINITE, __NV_E4M3)", &bf16, &e4m3, RN, SAT_FIN, 0,
     HwPath::FromArch, 890, "cvt.rn.satfinite.e4m3x2.f32 (after an exact bf16 -> fp32)", &kFp8CanonHw, &kFp8CanonSw, 0, ""},
    {"bf16_to_e4m3_nosat", "__nv_cvt_bfloat16raw_to_fp8(b, __NV_NOSAT, __NV_E4M3)", &bf16, &e4m3, RN, SAT_NAN, 0,
     HwPath::Never, 0, "", &kFp8CanonSw, &kFp8CanonSw, 0, ""},
    {"bf16x2_to_e4m3x2_satfinite", "__nv_cvt_bfloat16raw2_to_fp8x2(b2, __NV_SATFINITE, __NV_E4M3)", &bf16, &e4m3, RN, SAT_FIN, kPair,
     HwPath::FromArch, 890, "cvt.rn.satfinite.e4m3x2.f32 (after an exact bf16 -> fp32)", &kFp8CanonHw, &kFp8CanonSw, 0, ""},
    {"bf16x2_to_e4m3x2_nosat", "__nv_cvt_bfloat16raw2_to_fp8x2(b2, __NV_NOSAT, __NV_E4M3)", &bf16, &e4m3, RN, SAT_NAN, kPair,
     HwPath::Never, 0, "", &kFp8CanonSw, &kFp8CanonSw, 0, ""},
    {"bf16_to_e5m2_satfinite", "__nv_cvt_bfloat16raw_to_fp8(b, __NV_SATFINITE, __NV_E5M2)", &bf16, &e5m2, RN, SAT_FIN, 0,
     HwPath::FromArch, 890, "cvt.rn.satfinite.e5m2x2.f32 (after an exact bf16 -> fp32)", &kFp8CanonHw, &kFp8CanonSw, 0, ""},
    {"bf16_to_e5m2_nosat", "__nv_cvt_bfloat16raw_to_fp8(b, __NV_NOSAT, __NV_E5M2)", &bf16, &e5m2, RN, SAT_INF, 0,
     HwPath::Never, 0, "", &kFp8CanonSw, &kFp8CanonSw, 0, ""},
    {"bf16x2_to_e5m2x2_satfinite", "__nv_cvt_bfloat16raw2_to_fp8x2(b2, __NV_SATFINITE, __NV_E5M2)", &bf16, &e5m2, RN, SAT_FIN, kPair,
     HwPath::FromArch, 890, "cvt.rn.satfinite.e5m2x2.f32 (after an exact bf16 -> fp32)", &kFp8CanonHw, &kFp8CanonSw, 0, ""},
    {"bf16x2_to_e5m2x2_nosat", "__nv_cvt_bfloat16raw2_to_fp8x2(b2, __NV_NOSAT, __NV_E5M2)", &bf16, &e5m2, RN, SAT_INF, kPair,
     HwPath::Never, 0, "", &kFp8CanonSw, &kFp8CanonSw, 0, ""},
    {"e4m3_to_f16", "__nv_cvt_fp8_to_halfraw(v, __NV_E4M3)", &e4m3, &f16, RN, SAT_INF, 0,
     HwPath::FromArch, 890, "cvt.rn.f16x2.e4m3x2", &kF16FromFp8Hw, &kF16FromFp8Sw, 0, ""},
    {"e4m3x2_to_f16x2", "__nv_cvt_fp8x2_to_halfraw2(v2, __NV_E4M3)", &e4m3, &f16, RN, SAT_INF, kPair,
     HwPath::FromArch, 890, "cvt.rn.f16x2.e4m3x2", &kF16FromFp8Hw, &kF16FromFp8Sw, 0, ""},
    {"e4m3_to_f32", "float(__nv_fp8_e4m3) (fp8 -> fp16 -> cvt.f32.f16)", &e4m3, &f32, RN, SAT_INF, 0,
     HwPath::FromArch, 890, "cvt.rn.f16x2.e4m3x2 + cvt.f32.f16", &kF32FromFp8, &kF32FromFp8, 0, ""},
    {"e5m2_to_f16", "__nv_cvt_fp8_to_halfraw(v, __NV_E5M2)", &e5m2, &f16, RN, SAT_INF, 0,
     HwPath::FromArch, 890, "cvt.rn.f16x2.e5m2x2", &kF16FromFp8Hw, &kF16FromFp8Sw, 0, ""},
    {"e5m2x2_to_f16x2", "__nv_cvt_fp8x2_to_halfraw2(v2, __NV_E5M2)", &e5m2, &f16, RN, SAT_INF, kPair,
     HwPath::FromArch, 890, "cvt.rn.f16x2.e5m2x2", &kF16FromFp8Hw, &kF16FromFp8Sw, 0, ""},
    {"e5m2_to_f32", "float(__nv_fp8_e5m2) (fp8 -> fp16 -> cvt.f32.f16)", &e5m2, &f32, RN, SAT_INF, 0,
     HwPath::FromArch, 890, "cvt.rn.f16x2.e5m2x2 + cvt.f32.f16", &kF32FromFp8, &kF32FromFp8, 0, ""},
    {"f32_to_ue8m0_rz_satfinite", "__nv_cvt_float_to_e8m0(x, __NV_SATFINITE, cudaRoundZero)", &f32, &ue8m0, RZ, SAT_FIN, 0,
     HwPath::FamilySpecific, 0, "cvt.rz.satfinite.ue8m0x2.f32", &kNone, &kNone, 0, ""},
    {"f32_to_ue8m0_rz_nosat", "__nv_cvt_float_to_e8m0(x, __NV_NOSAT, cudaRoundZero)", &f32, &ue8m0, RZ, SAT_NAN, 0,
     HwPath::FamilySpecific, 0, "cvt.rz.ue8m0x2.f32", &kNone, &kNone, 0, ""},
    {"f32_to_ue8m0_ru_satfinite", "__nv_cvt_float_to_e8m0(x, __NV_SATFINITE, cudaRoundPosInf)", &f32, &ue8m0, RU, SAT_FIN, 0,
     HwPath::FamilySpecific, 0, "cvt.rp.satfinite.ue8m0x2.f32", &kNone, &kNone, 0, ""},
    {"f32_to_ue8m0_ru_nosat", "__nv_cvt_float_to_e8m0(x, __NV_NOSAT, cudaRoundPosInf)", &f32, &ue8m0, RU, SAT_NAN, 0,
     HwPath::FamilySpecific, 0, "cvt.rp.ue8m0x2.f32", &kNone, &kNone, 0, ""},
    {"f32x2_to_ue8m0x2_rz_satfinite", "__nv_cvt_float2_to_e8m0x2(make_float2(a, b), __NV_SATFINITE, cudaRoundZero)", &f32, &ue8m0, RZ, SAT_FIN, kPair,
     HwPath::FamilySpecific, 0, "cvt.rz.satfinite.ue8m0x2.f32", &kNone, &kNone, 0, ""},
    {"f32x2_to_ue8m0x2_rz_nosat", "__nv_cvt_float2_to_e8m0x2(make_float2(a, b), __NV_NOSAT, cudaRoundZero)", &f32, &ue8m0, RZ, SAT_NAN, kPair,
     HwPath::FamilySpecific, 0, "cvt.rz.ue8m0x2.f32", &kNone, &kNone, 0, ""},
    {"f32x2_to_ue8m0x2_ru_satfinite", "__nv_cvt_float2_to_e8m0x2(make_float2(a, b), __NV_SATFINITE, cudaRoundPosInf)", &f32, &ue8m0, RU, SAT_FIN, kPair,
     HwPath::FamilySpecific, 0, "cvt.rp.satfinite.ue8m0x2.f32", &kNone, &kNone, 0, ""},
    {"f32x2_to_ue8m0x2_ru_nosat", "__nv_cvt_float2_to_e8m0x2(make_float2(a, b), __NV_NOSAT, cudaRoundPosInf)", &f32, &ue8m0, RU, SAT_NAN, kPair,
     HwPath::FamilySpecific, 0, "cvt.rp.ue8m0x2.f32", &kNone, &kNone, 0, ""},
    {"bf16_to_ue8m0_rz_satfinite", "__nv_cvt_bfloat16raw_to_e8m0(b, __NV_SATFINITE, cudaRoundZero)", &bf16, &ue8m0, RZ, SAT_FIN, 0,
     HwPath::FamilySpecific, 0, "cvt.rz.satfinite.ue8m0x2.bf16x2", &kNone, &kNone, 0, ""},
    {"bf16_to_ue8m0_rz_nosat", "__nv_cvt_bfloat16raw_to_e8m0(b, __NV_NOSAT, cudaRoundZero)", &bf16, &ue8m0, RZ, SAT_NAN, 0,
     HwPath::FamilySpecific, 0, "cvt.rz.ue8m0x2.bf16x2", &kNone, &kNone, 0, ""},
    {"bf16_to_ue8m0_ru_satfinite", "__nv_cvt_bfloat16raw_to_e8m0(b, __NV_SATFINITE, cudaRoundPosInf)", &bf16, &ue8m0, RU, SAT_FIN, 0,
     HwPath::FamilySpecific, 0, "cvt.rp.satfinite.ue8m0x2.bf16x2", &kNone, &kNone, 0, ""},
    {"bf16_to_ue8m0_ru_nosat", "__nv_cvt_bfloat16raw_to_e8m0(b, __NV_NOSAT, cudaRoundPosInf)", &bf16, &ue8m0, RU, SAT_NAN, 0,
     HwPath::FamilySpecific, 0, "cvt.rp.ue8m0x2.bf16x2", &kNone, &kNone, 0, ""},
    {"bf16x2_to_ue8m0x2_rz_satfinite", "__nv_cvt_bfloat162raw_to_e8m0x2(b2, __NV_SATFINITE, cudaRoundZero)", &bf16, &ue8m0, RZ, SAT_FIN, kPair,
     HwPath::FamilySpecific, 0, "cvt.rz.satfinite.ue8m0x2.bf16x2", &kNone, &kNone, 0, ""},
    {"bf16x2_to_ue8m0x2_rz_nosat", "__nv_cvt_bfloat162raw_to_e8m0x2(b2, __NV_NOSAT, cudaRoundZero)", &bf16, &ue8m0, RZ, SAT_NAN, kPair,
     HwPath::FamilySpecific, 0, "cvt.rz.ue8m0x2.bf16x2", &kNone, &kNone, 0, ""},
    {"bf16x2_to_ue8m0x2_ru_satfinite", "__nv_cvt_bfloat162raw_to_e8m0x2(b2, __NV_SATFINITE, cudaRoundPosInf)", &bf16, &ue8m0, RU, SAT_FIN, kPair,
     HwPath::FamilySpecific, 0, "cvt.rp.satfinite.ue8m0x2.bf16x2", &kNone, &kNone, 0, ""},
    {"bf16x2_to_ue8m0x2_ru_nosat", "__nv_cvt_bfloat162raw_to_e8m0x2(b2, __NV_NOSAT, cudaRoundPosInf)", &bf16, &ue8m0, RU, SAT_NAN, kPair,
     HwPath::FamilySpecific, 0, "cvt.rp.ue8m0x2.bf16x2", &kNone, &kNone, 0, ""},
    {"ue8m0_to_bf16", "__nv_cvt_e8m0_to_bf16raw(v)", &ue8m0, &bf16, RN, SAT_INF, 0,
     HwPath::FamilySpecific, 0, "cvt.rn.bf16x2.ue8m0x2", &kBf16FromE8m0Hw, &kBf16FromE8m0Sw, 0, ""},
    {"ue8m0x2_to_bf16x2", "__nv_cvt_e8m0x2_to_bf162raw(v2)", &ue8m0, &bf16, RN, SAT_INF, kPair,
     HwPath::FamilySpecific, 0, "cvt.rn.bf16x2.ue8m0x2", &kBf16FromE8m0Hw, &kBf16FromE8m0Sw, 0, ""},
    {"f32_to_e2m3_rn", "__nv_cvt_float_to_fp6(x, __NV_E2M3, cudaRoundNearest)", &f32, &e2m3, RN, SAT_FIN, 0,
     HwPath::FamilySpecific, 0, "cvt.rn.satfinite.e2m3x2.f32", &kNone, &kNone, 0, ""},
    {"f32_to_e2m3_rz", "__nv_cvt_float_to_fp6(x, __NV_E2M3, cudaRoundZero)", &f32, &e2m3, RZ, SAT_FIN, 0,
     HwPath::Never, 0, "", &kNone, &kNone, 0, ""},
    {"f32x2_to_e2m3x2_rn", "__nv_cvt_float2_to_fp6x2(make_float2(a, b), __NV_E2M3, cudaRoundNearest)", &f32, &e2m3, RN, SAT_FIN, kPair,
     HwPath::FamilySpecific, 0, "cvt.rn.satfinite.e2m3x2.f32", &kNone, &kNone, 0, ""},
    {"f32x2_to_e2m3x2_rz", "__nv_cvt_float2_to_fp6x2(make_float2(a, b), __NV_E2M3, cudaRoundZero)", &f32, &e2m3, RZ, SAT_FIN, kPair,
     HwPath::Never, 0, "", &kNone, &kNone, 0, ""},
    {"f16_to_e2m3_rn", "__nv_cvt_halfraw_to_fp6(h, __NV_E2M3, cudaRoundNearest)", &f16, &e2m3, RN, SAT_FIN, 0,
     HwPath::FamilySpecific, 0, "cvt.rn.satfinite.e2m3x2.f32", &kNone, &kNone, 0, ""},
    {"f16_to_e2m3_rz", "__nv_cvt_halfraw_to_fp6(h, __NV_E2M3, cudaRoundZero)", &f16, &e2m3, RZ, SAT_FIN, 0,
     HwPath::Never, 0, "", &kNone, &kNone, 0, ""},
    {"f16x2_to_e2m3x2_rn", "__nv_cvt_halfraw2_to_fp6x2(h2, __NV_E2M3, cudaRoundNearest)", &f16, &e2m3, RN, SAT_FIN, kPair,
     HwPath::FamilySpecific, 0, "cvt.rn.satfinite.e2m3x2.f32", &kNone, &kNone, 0, ""},
    {"f16x2_to_e2m3x2_rz", "__nv_cvt_halfraw2_to_fp6x2(h2, __NV_E2M3, cudaRoundZero)", &f16, &e2m3, RZ, SAT_FIN, kPair,
     HwPath::Never, 0, "", &kNone, &kNone, 0, ""},
    {"bf16_to_e2m3_rn", "__nv_cvt_bfloat16raw_to_fp6(b, __NV_E2M3, cudaRoundNearest)", &bf16, &e2m3, RN, SAT_FIN, 0,
     HwPath::FamilySpecific, 0, "cvt.rn.satfinite.e2m3x2.f32", &kNone, &kNone, 0, ""},
    {"bf16_to_e2m3_rz", "__nv_cvt_bfloat16raw_to_fp6(b, __NV_E2M3, cudaRoundZero)", &bf16, &e2m3, RZ, SAT_FIN, 0,
     HwPath::Never, 0, "", &kNone, &kNone, 0, ""},
    {"bf16x2_to_e2m3x2_rn", "__nv_cvt_bfloat16raw2_to_fp6x2(b2, __NV_E2M3, cudaRoundNearest)", &bf16, &e2m3, RN, SAT_FIN, kPair,
     HwPath::FamilySpecific, 0, "cvt.rn.satfinite.e2m3x2.f32", &kNone, &kNone, 0, ""},
    {"bf16x2_to_e2m3x2_rz", "__nv_cvt_bfloat16raw2_to_fp6x2(b2, __NV_E2M3, cudaRoundZero)", &bf16, &e2m3, RZ, SAT_FIN, kPair,
     HwPath::Never, 0, "", &kNone, &kNone, 0, ""},
    {"e2m3_to_f16", "__nv_cvt_fp6_to_halfraw(v, __NV_E2M3)", &e2m3, &f16, RN, SAT_INF, 0,
     HwPath::FamilySpecific, 0, "cvt.rn.f16x2.e2m3x2", &kNone, &kNone, 0, ""},
    {"e2m3x2_to_f16x2", "__nv_cvt_fp6x2_to_halfraw2(v2, __NV_E2M3)", &e2m3, &f16, RN, SAT_INF, kPair,
     HwPath::FamilySpecific, 0, "cvt.rn.f16x2.e2m3x2", &kNone, &kNone, 0, ""},
    {"e2m3_to_f32", "float(__nv_fp6_e2m3) (-> fp16 -> cvt.f32.f16)", &e2m3, &f32, RN, SAT_INF, 0,
     HwPath::FamilySpecific, 0, "cvt.rn.f16x2.e2m3x2 + cvt.f32.f16", &kNone, &kNone, 0, ""},
    {"f32_to_e3m2_rn", "__nv_cvt_float_to_fp6(x, __NV_E3M2, cudaRoundNearest)", &f32, &e3m2, RN, SAT_FIN, 0,
     HwPath::FamilySpecific, 0, "cvt.rn.satfinite.e3m2x2.f32", &kNone, &kNone, 0, ""},
    {"f32_to_e3m2_rz", "__nv_cvt_float_to_fp6(x, __NV_E3M2, cudaRoundZero)", &f32, &e3m2, RZ, SAT_FIN, 0,
     HwPath::Never, 0, "", &kNone, &kNone, 0, ""},
    {"f32x2_to_e3m2x2_rn", "__nv_cvt_float2_to_fp6x2(make_float2(a, b), __NV_E3M2, cudaRoundNearest)", &f32, &e3m2, RN, SAT_FIN, kPair,
     HwPath::FamilySpecific, 0, "cvt.rn.satfinite.e3m2x2.f32", &kNone, &kNone, 0, ""},
    {"f32x2_to_e3m2x2_rz", "__nv_cvt_float2_to_fp6x2(make_float2(a, b), __NV_E3M2, cudaRoundZero)", &f32, &e3m2, RZ, SAT_FIN, kPair,
     HwPath::Never, 0, "", &kNone, &kNone, 0, ""},
    {"f16_to_e3m2_rn", "__nv_cvt_halfraw_to_fp6(h, __NV_E3M2, cudaRoundNearest)", &f16, &e3m2, RN, SAT_FIN, 0,
     HwPath::FamilySpecific, 0, "cvt.rn.satfinite.e3m2x2.f32", &kNone, &kNone, 0, ""},
    {"f16_to_e3m2_rz", "__nv_cvt_halfraw_to_fp6(h, __NV_E3M2, cudaRoundZero)", &f16, &e3m2, RZ, SAT_FIN, 0,
     HwPath::Never, 0, "", &kNone, &kNone, 0, ""},
    {"f16x2_to_e3m2x2_rn", "__nv_cvt_halfraw2_to_fp6x2(h2, __NV_E3M2, cudaRoundNearest)", &f16, &e3m2, RN, SAT_FIN, kPair,
     HwPath::FamilySpecific, 0, "cvt.rn.satfinite.e3m2x2.f32", &kNone, &kNone, 0, ""},
    {"f16x2_to_e3m2x2_rz", "__nv_cvt_halfraw2_to_fp6x2(h2, __NV_E3M2, cudaRoundZero)", &f16, &e3m2, RZ, SAT_FIN, kPair,
     HwPath::Never, 0, "", &kNone, &kNone, 0, ""},
    {"bf16_to_e3m2_rn", "__nv_cvt_bfloat16raw_to_fp6(b, __NV_E3M2, cudaRoundNearest)", &bf16, &e3m2, RN, SAT_FIN, 0,
     HwPath::FamilySpecific, 0, "cvt.rn.satfinite.e3m2x2.f32", &kNone, &kNone, 0, ""},
    {"bf16_to_e3m2_rz", "__nv_cvt_bfloat16raw_to_fp6(b, __NV_E3M2, cudaRoundZero)", &bf16, &e3m2, RZ, SAT_FIN, 0,
     HwPath::Never, 0, "", &kNone, &kNone, 0, ""},
    {"bf16x2_to_e3m2x2_rn", "__nv_cvt_bfloat16raw2_to_fp6x2(b2, __NV_E3M2, cudaRoundNearest)", &bf16, &e3m2, RN, SAT_FIN, kPair,
     HwPath::FamilySpecific, 0, "cvt.rn.satfinite.e3m2x2.f32", &kNone, &kNone, 0, ""},
    {"bf16x2_to_e3m2x2_rz", "__nv_cvt_bfloat16raw2_to_fp6x2(b2, __NV_E3M2, cudaRoundZero)", &bf16, &e3m2, RZ, SAT_FIN, kPair,
     HwPath::Never, 0, "", &kNone, &kNone, 0, ""},
    {"e3m2_to_f16", "__nv_cvt_fp6_to_halfraw(v, __NV_E3M2)", &e3m2, &f16, RN, SAT_INF, 0,
     HwPath::FamilySpecific, 0, "cvt.rn.f16x2.e3m2x2", &kNone, &kNone, 0, ""},
    {"e3m2x2_to_f16x2", "__nv_cvt_fp6x2_to_halfraw2(v2, __NV_E3M2)", &e3m2, &f16, RN, SAT_INF, kPair,
     HwPath::FamilySpecific, 0, "cvt.rn.f16x2.e3m2x2", &kNone, &kNone, 0, ""},
    {"e3m2_to_f32", "float(__nv_fp6_e3m2) (-> fp16 -> cvt.f32.f16)", &e3m2, &f32, RN, SAT_INF, 0,
     HwPath::FamilySpecific, 0, "cvt.rn.f16x2.e3m2x2 + cvt.f32.f16", &kNone, &kNone, 0, ""},
    {"f32_to_e2m1_rn", "__nv_cvt_float_to_fp4(x, __NV_E2M1, cudaRoundNearest)", &f32, &e2m1, RN, SAT_FIN, 0,
     HwPath::FamilySpecific, 0, "cvt.rn.satfinite.e2m1x2.f32", &kNone, &kNone, 0, ""},
    {"f32_to_e2m1_rz", "__nv_cvt_float_to_fp4(x, __NV_E2M1, cudaRoundZero)", &f32, &e2m1, RZ, SAT_FIN, 0,
     HwPath::Never, 0, "", &kNone, &kNone, 0, ""},
    {"f32x2_to_e2m1x2_rn", "__nv_cvt_float2_to_fp4x2(make_float2(a, b), __NV_E2M1, cudaRoundNearest)", &f32, &e2m1, RN, SAT_FIN, kPair,
     HwPath::FamilySpecific, 0, "cvt.rn.satfinite.e2m1x2.f32", &kNone, &kNone, 0, ""},
    {"f32x2_to_e2m1x2_rz", "__nv_cvt_float2_to_fp4x2(make_float2(a, b), __NV_E2M1, cudaRoundZero)", &f32, &e2m1, RZ, SAT_FIN, kPair,
     HwPath::Never, 0, "", &kNone, &kNone, 0, ""},
    {"f16_to_e2m1_rn", "__nv_cvt_halfraw_to_fp4(h, __NV_E2M1, cudaRoundNearest)", &f16, &e2m1, RN, SAT_FIN, 0,
     HwPath::FamilySpecific, 0, "cvt.rn.satfinite.e2m1x2.f32", &kNone, &kNone, 0, ""},
    {"f16_to_e2m1_rz", "__nv_cvt_halfraw_to_fp4(h, __NV_E2M1, cudaRoundZero)", &f16, &e2m1, RZ, SAT_FIN, 0,
     HwPath::Never, 0, "", &kNone, &kNone, 0, ""},
    {"f16x2_to_e2m1x2_rn", "__nv_cvt_halfraw2_to_fp4x2(h2, __NV_E2M1, cudaRoundNearest)", &f16, &e2m1, RN, SAT_FIN, kPair,
     HwPath::FamilySpecific, 0, "cvt.rn.satfinite.e2m1x2.f32", &kNone, &kNone, 0, ""},
    {"f16x2_to_e2m1x2_rz", "__nv_cvt_halfraw2_to_fp4x2(h2, __NV_E2M1, cudaRoundZero)", &f16, &e2m1, RZ, SAT_FIN, kPair,
     HwPath::Never, 0, "", &kNone, &kNone, 0, ""},
    {"bf16_to_e2m1_rn", "__nv_cvt_bfloat16raw_to_fp4(b, __NV_E2M1, cudaRoundNearest)", &bf16, &e2m1, RN, SAT_FIN, 0,
     HwPath::FamilySpecific, 0, "cvt.rn.satfinite.e2m1x2.f32", &kNone, &kNone, 0, ""},
    {"bf16_to_e2m1_rz", "__nv_cvt_bfloat16raw_to_fp4(b, __NV_E2M1, cudaRoundZero)", &bf16, &e2m1, RZ, SAT_FIN, 0,
     HwPath::Never, 0, "", &kNone, &kNone, 0, ""},
    {"bf16x2_to_e2m1x2_rn", "__nv_cvt_bfloat16raw2_to_fp4x2(b2, __NV_E2M1, cudaRoundNearest)", &bf16, &e2m1, RN, SAT_FIN, kPair,
     HwPath::FamilySpecific, 0, "cvt.rn.satfinite.e2m1x2.f32", &kNone, &kNone, 0, ""},
    {"bf16x2_to_e2m1x2_rz", "__nv_cvt_bfloat16raw2_to_fp4x2(b2, __NV_E2M1, cudaRoundZero)", &bf16, &e2m1, RZ, SAT_FIN, kPair,
     HwPath::Never, 0, "", &kNone, &kNone, 0, ""},
    {"e2m1_to_f16", "__nv_cvt_fp4_to_halfraw(v, __NV_E2M1)", &e2m1, &f16, RN, SAT_INF, 0,
     HwPath::FamilySpecific, 0, "cvt.rn.f16x2.e2m1x2", &kNone, &kNone, 0, ""},
    {"e2m1x2_to_f16x2", "__nv_cvt_fp4x2_to_halfraw2(v2, __NV_E2M1)", &e2m1, &f16, RN, SAT_INF, kPair,
     HwPath::FamilySpecific, 0, "cvt.rn.f16x2.e2m1x2", &kNone, &kNone, 0, ""},
    {"e2m1_to_f32", "float(__nv_fp4_e2m1) (-> fp16 -> cvt.f32.f16)", &e2m1, &f32, RN, SAT_INF, 0,
     HwPath::FamilySpecific, 0, "cvt.rn.f16x2.e2m1x2 + cvt.f32.f16", &kNone, &kNone, 0, ""},
    {"test_f32_to_f16_rn_flip", "__float2half_rn(x), low bit flipped for x = 0x3f800001", &f32, &f16, RN, SAT_INF, kTest,
     HwPath::Always, 0, "cvt.rn.f16.f32", &kF16CanonHw, &kF16CanonHw, 0, ""},
    {"test_e5m2_to_f16_signflip", "__nv_cvt_fp8_to_halfraw(v, __NV_E5M2), sign flipped for v = 0x3c", &e5m2, &f16, RN, SAT_INF, kTest,
     HwPath::FromArch, 890, "cvt.rn.f16x2.e5m2x2", &kF16FromFp8Hw, &kF16FromFp8Sw, 0, ""},
    {"test_f16x2_to_e4m3x2_satfinite_hilane", "__nv_cvt_halfraw2_to_fp8x2(h2, __NV_SATFINITE, __NV_E4M3), high lane's low bit flipped for h = 0x3c00", &f16, &e4m3, RN, SAT_FIN, kPair | kTest,
     HwPath::FromArch, 890, "cvt.rn.satfinite.e4m3x2.f16x2", &kFp8CanonHw, &kFp8CanonSw, 0, ""},
    {"test_f32_to_tf32_rna_stray", "cvt.rna.tf32.f32, bit 0 set for x = 0x3f800000", &f32, &tf32, RNA, SAT_INF, kTest,
     HwPath::Always, 0, "cvt.rna.tf32.f32", &kTf32Unstated, &kTf32Unstated, 800, ""},
    {"test_f32_to_e4m3_nosat_nan", "__nv_cvt_float_to_fp8(x, __NV_NOSAT, __NV_E4M3), 0xff for x = 0x7fc00000", &f32, &e4m3, RN, SAT_NAN, kTest,
     HwPath::Never, 0, "", &kFp8CanonSw, &kFp8CanonSw, 0, ""},
    {"test_f32_to_e4m3_nosat_negnan", "__nv_cvt_float_to_fp8(x, __NV_NOSAT, __NV_E4M3), negative overflows written 0x7f (sign dropped)", &f32, &e4m3, RN, SAT_NAN, kTest,
     HwPath::Never, 0, "", &kFp8CanonSw, &kFp8CanonSw, 0, ""},
};

/// The NaN convention an entry declares (its Rounder's nan, which the sweep enforces exactly), from what
/// its NaN statements say on every path it may take (docs/conversions.md, "NaN conventions of the table"):
/// NVIDIA's all-ones NaN (dst.magnitude_mask(): 0x7FFF, 0x7FFFFFFF, 0x7F) where every path writes it, or a
/// destination whose NaN is not a choice (finite-only: CUDA's +largest, the same code; ue8m0: 0xFF; sources
/// without NaN); "any NaN" where a path's NaN is unspecified (PTX: cvt.f32.bf16, cvt.*.tf32.f32) or moves
/// the payload (the sm_80 bf16 -> f32 bit move keeps a signalling NaN signalling).
NanPayload convention_of(const Row& r) {
  auto nvidia = [&](const NanStatement& s) {
    return s.rule == NanRule::NotApplicable || (s.rule == NanRule::Canonical && s.code == r.dst->magnitude_mask());
  };
  return nvidia(*r.nan_hw) && nvidia(*r.nan_sw) ? NanPayload::Nvidia : NanPayload::Any;
}

DeviceConversion entry_of(const Row& r) {
  DeviceConversion e;
  e.name = r.name;
  e.call = r.call;
  e.src = r.src;
  e.dst = r.dst;
  e.rounder = Rounder{r.rounding, r.saturation, convention_of(r)};
  e.pair = (r.flags & kPair) != 0;
  e.min_arch = r.min_arch;
  e.hw = r.hw;
  e.hw_arch = r.hw_arch;
  e.hw_instr = r.instr;
  e.nan_hw = *r.nan_hw;
  e.nan_sw = *r.nan_sw;
  e.kind = (r.flags & kScaled) ? ConversionKind::ScaledRoundTrip : ConversionKind::Convert;
  e.test_only = (r.flags & kTest) != 0;
  e.primary = (r.flags & (kPair | kAlias | kScaled | kTest)) == 0;
  e.note = r.note;
  return e;
}

const std::vector<DeviceConversion>& table() {
  static const std::vector<DeviceConversion> t = [] {
    std::vector<DeviceConversion> v;
    for (const Row& r : kRows) v.push_back(entry_of(r));
    return v;
  }();
  return t;
}

}  // namespace

std::span<const DeviceConversion> device_conversions(bool include_test_only) {
  const auto& t = table();
  if (include_test_only) return {t.data(), t.size()};
  std::size_t n = 0;
  while (n < t.size() && !t[n].test_only) ++n;
  return {t.data(), n};
}

const DeviceConversion* find_device_conversion(std::string_view name) {
  for (const auto& e : table())
    if (e.name == name) return &e;
  return nullptr;
}

std::vector<const DeviceConversion*> device_conversions_for(const Format& src, const Format& dst) {
  std::vector<const DeviceConversion*> r;
  for (const auto& e : device_conversions(false))
    if (*e.src == src && *e.dst == dst) r.push_back(&e);
  return r;
}

}  // namespace fpcert
