// kernels/convert/device_convert.cpp — the table of device conversions and the sweep that checks them.
//
// Each entry names one call as the kernel in kernels/convert/cuda/convert_*.cu writes it, the fpcert
// Rounder it must equal bit for bit, where its rounding happens (the hardware cvt or the header's
// software emulation, by architecture, as cuda_fp16.hpp, cuda_bf16.hpp, cuda_fp8.hpp, cuda_fp6.hpp
// and cuda_fp4.hpp of CUDA 13.0 select it), and the NaN it writes. docs/conversions.md is the prose.
#include "kernels/convert/device_convert.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cmath>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <string>

#include "base/error.hpp"
#include "base/parallel.hpp"
#include "kernels/convert/convert_check_device.hpp"
#include "kernels/kernel.hpp"
#include "oracle/mpfr_ref.hpp"

namespace fpcert {

std::string_view to_string(NanRule r) {
  switch (r) {
    case NanRule::NotApplicable: return "not_applicable";
    case NanRule::Preserve: return "preserve";
    case NanRule::Canonical: return "canonical";
    case NanRule::ShiftPayload: return "shift_payload";
    case NanRule::Unstated: return "unstated";
  }
  return "?";
}

std::string_view to_string(HwPath p) {
  switch (p) {
    case HwPath::Always: return "always";
    case HwPath::FromArch: return "from_arch";
    case HwPath::FamilySpecific: return "family_specific";
    case HwPath::Never: return "never";
  }
  return "?";
}

namespace {

constexpr Rounder R(Rounding r, Saturation s) { return Rounder{r, s, NanPayload::Preserve}; }
constexpr Rounding RN = Rounding::NearestEven, RNA = Rounding::NearestAway, RZ = Rounding::TowardZero,
                   RU = Rounding::Up, RD = Rounding::Down;
constexpr Saturation SAT_INF = Saturation::Inf, SAT_FIN = Saturation::Finite, SAT_NAN = Saturation::NaN;

// ---- NaN statements (docs/conversions.md, "NaN policies") ----
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

struct Builder {
  DeviceConversion e;
  Builder(std::string_view name, std::string_view call, const Format& src, const Format& dst, Rounder r) {
    e.name = name;
    e.call = call;
    e.src = &src;
    e.dst = &dst;
    e.rounder = r;
  }
  Builder& hw(HwPath p, std::string_view instr, int arch = 0) {
    e.hw = p;
    e.hw_instr = instr;
    e.hw_arch = arch;
    return *this;
  }
  Builder& nan(const NanStatement& on_hw, const NanStatement& on_sw) {
    e.nan_hw = on_hw;
    e.nan_sw = on_sw;
    return *this;
  }
  Builder& nan(const NanStatement& both) { return nan(both, both); }
  Builder& pair() {
    e.pair = true;
    e.primary = false;
    return *this;
  }
  Builder& alias() {
    e.primary = false;
    return *this;
  }
  Builder& min_arch(int a) {
    e.min_arch = a;
    return *this;
  }
  Builder& note(std::string_view n) {
    e.note = n;
    return *this;
  }
  Builder& test_only() {
    e.test_only = true;
    e.primary = false;
    return *this;
  }
  Builder& scaled() {
    e.kind = ConversionKind::ScaledRoundTrip;
    e.primary = false;
    return *this;
  }
  operator DeviceConversion() const { return e; }
};

std::vector<DeviceConversion> build_table() {
  std::vector<DeviceConversion> t;
  auto add = [&](const DeviceConversion& e) { t.push_back(e); };

  // ---- cuda_fp16.h: fp32 <-> fp16 (cvt on every architecture) ----
  add(Builder("f32_to_f16", "__float2half(x)", f32, f16, R(RN, SAT_INF)).hw(HwPath::Always, "cvt.rn.f16.f32").nan(kF16CanonHw).alias());
  add(Builder("f32_to_f16_rn", "__float2half_rn(x)", f32, f16, R(RN, SAT_INF)).hw(HwPath::Always, "cvt.rn.f16.f32").nan(kF16CanonHw));
  add(Builder("f32_to_f16_rz", "__float2half_rz(x)", f32, f16, R(RZ, SAT_INF)).hw(HwPath::Always, "cvt.rz.f16.f32").nan(kF16CanonHw));
  add(Builder("f32_to_f16_rd", "__float2half_rd(x)", f32, f16, R(RD, SAT_INF)).hw(HwPath::Always, "cvt.rm.f16.f32").nan(kF16CanonHw));
  add(Builder("f32_to_f16_ru", "__float2half_ru(x)", f32, f16, R(RU, SAT_INF)).hw(HwPath::Always, "cvt.rp.f16.f32").nan(kF16CanonHw));
  add(Builder("f32x2_to_f16x2_rn", "__float22half2_rn(make_float2(a, b))", f32, f16, R(RN, SAT_INF))
          .hw(HwPath::Always, "cvt.rn.f16x2.f32 (sm_80+; two cvt.rn.f16.f32 below)")
          .nan(kF16CanonHw)
          .pair());
  add(Builder("tf32_to_f16_rn", "__float2half_rn(x), x a tf32 value in fp32 bits", tf32, f16, R(RN, SAT_INF))
          .hw(HwPath::Always, "cvt.rn.f16.f32")
          .nan(kF16CanonHw));
  add(Builder("f16_to_f32", "__half2float(h)", f16, f32, R(RN, SAT_INF)).hw(HwPath::Always, "cvt.f32.f16").nan(kF32CanonHw));
  add(Builder("f16x2_to_f32x2", "__half22float2(h2)", f16, f32, R(RN, SAT_INF)).hw(HwPath::Always, "cvt.f32.f16").nan(kF32CanonHw).pair());

  // ---- cuda_bf16.h: fp32 <-> bf16 ----
  add(Builder("f32_to_bf16", "__float2bfloat16(x)", f32, bf16, R(RN, SAT_INF))
          .hw(HwPath::FromArch, "cvt.rn.bf16.f32", 800)
          .nan(kBf16CanonHw, kBf16CanonSw)
          .alias());
  add(Builder("f32_to_bf16_rn", "__float2bfloat16_rn(x)", f32, bf16, R(RN, SAT_INF))
          .hw(HwPath::FromArch, "cvt.rn.bf16.f32", 800)
          .nan(kBf16CanonHw, kBf16CanonSw));
  add(Builder("f32_to_bf16_rz", "__float2bfloat16_rz(x)", f32, bf16, R(RZ, SAT_INF))
          .hw(HwPath::FromArch, "cvt.rz.bf16.f32", 800)
          .nan(kBf16CanonHw, kBf16CanonSw));
  add(Builder("f32_to_bf16_rd", "__float2bfloat16_rd(x)", f32, bf16, R(RD, SAT_INF))
          .hw(HwPath::FromArch, "cvt.rm.bf16.f32", 900)
          .nan(kBf16CanonHw, kBf16CanonSw));
  add(Builder("f32_to_bf16_ru", "__float2bfloat16_ru(x)", f32, bf16, R(RU, SAT_INF))
          .hw(HwPath::FromArch, "cvt.rp.bf16.f32", 900)
          .nan(kBf16CanonHw, kBf16CanonSw));
  add(Builder("f32x2_to_bf16x2_rn", "__float22bfloat162_rn(make_float2(a, b))", f32, bf16, R(RN, SAT_INF))
          .hw(HwPath::FromArch, "cvt.rn.bf16x2.f32", 800)
          .nan(kBf16CanonHw, kBf16CanonSw)
          .pair());
  add(Builder("tf32_to_bf16_rn", "__float2bfloat16_rn(x), x a tf32 value in fp32 bits", tf32, bf16, R(RN, SAT_INF))
          .hw(HwPath::FromArch, "cvt.rn.bf16.f32", 800)
          .nan(kBf16CanonHw, kBf16CanonSw));
  add(Builder("bf16_to_f32", "__bfloat162float(b)", bf16, f32, R(RN, SAT_INF))
          .hw(HwPath::FromArch, "cvt.f32.bf16", 900)
          .nan(kF32ShiftHw, kF32ShiftSw));
  add(Builder("bf16x2_to_f32x2", "__bfloat1622float2(b2)", bf16, f32, R(RN, SAT_INF))
          .hw(HwPath::FromArch, "cvt.f32.bf16", 900)
          .nan(kF32ShiftHw, kF32ShiftSw)
          .pair());

  // ---- PTX cvt to tf32 (the result is a .b32: the tf32 code in the top 19 bits) ----
  add(Builder("f32_to_tf32_rna", "cvt.rna.tf32.f32", f32, tf32, R(RNA, SAT_INF))
          .hw(HwPath::Always, "cvt.rna.tf32.f32")
          .nan(kTf32Unstated)
          .min_arch(800));
  add(Builder("f32_to_tf32_rna_satfinite", "cvt.rna.satfinite.tf32.f32", f32, tf32, R(RNA, SAT_FIN))
          .hw(HwPath::Always, "cvt.rna.satfinite.tf32.f32")
          .nan(kTf32Unstated)
          .min_arch(800)
          .note("PTX ISA 8.1, sm_80"));
  add(Builder("f32_to_tf32_rn", "cvt.rn.tf32.f32", f32, tf32, R(RN, SAT_INF))
          .hw(HwPath::Always, "cvt.rn.tf32.f32")
          .nan(kTf32Unstated)
          .min_arch(900)
          .note("PTX ISA 7.8, sm_90 (.satfinite needs sm_100)"));
  add(Builder("f32_to_tf32_rz", "cvt.rz.tf32.f32", f32, tf32, R(RZ, SAT_INF))
          .hw(HwPath::Always, "cvt.rz.tf32.f32")
          .nan(kTf32Unstated)
          .min_arch(900)
          .note("PTX ISA 7.8, sm_90 (.satfinite needs sm_100)"));

  // ---- BF16 -> FP16 in software ----
  add(Builder("bf16_to_f16_direct", "__float2half_rn(__bfloat162float(x))", bf16, f16, R(RN, SAT_INF))
          .hw(HwPath::Always, "cvt.f32.bf16 (exact) + cvt.rn.f16.f32")
          .nan(kF16CanonHw)
          .note("one rounding: bf16 -> fp32 is exact"));
  add(Builder("bf16_to_f16_pow2_scaled",
              "h = __float2half_rn(__fmul_rn(__bfloat162float(x), 2^s)); "
              "y = __float2bfloat16_rn(__fmul_rn(__half2float(h), 2^-s)), every s in [-126, 127]",
              bf16, bf16, R(RN, SAT_INF))
          .hw(HwPath::Always, "cvt.rn.f16.f32, cvt.f32.f16, cvt.rn.bf16.f32")
          .nan(kF16CanonHw)
          .scaled()
          .note("fp16 part checked against RN_f16(x * 2^s); round trip exact in the window of binades "
                "[-17 - s, 15 - s]"));

  // ---- cuda_fp8.h: fp8 from fp32, fp16, bf16 (rn; satfinite on the hardware from sm_89) ----
  struct Fp8 {
    const Format* f;
    const char* tag;
    const char* interp;
    Saturation nosat;
  };
  static const Fp8 kFp8[] = {{&e4m3, "e4m3", "__NV_E4M3", SAT_NAN}, {&e5m2, "e5m2", "__NV_E5M2", SAT_INF}};
  // Names and calls are kept in static storage (the table holds string_views; a deque never moves
  // its elements, so the views stay valid).
  static std::deque<std::string> strings;
  auto keep = [](std::string s) -> std::string_view {
    strings.push_back(std::move(s));
    return strings.back();
  };
  struct Src8 {
    const char* tag;
    const char* fn;
    const char* fn2;
    const Format* f;
    const char* arg;
    const char* arg2;
    const char* instr;
  };
  static const Src8 kFp8Srcs[] = {
      {"f32", "__nv_cvt_float_to_fp8", "__nv_cvt_float2_to_fp8x2", &f32, "x", "make_float2(a, b)", "cvt.rn.satfinite.{}x2.f32"},
      {"f16", "__nv_cvt_halfraw_to_fp8", "__nv_cvt_halfraw2_to_fp8x2", &f16, "h", "h2", "cvt.rn.satfinite.{}x2.f16x2"},
      {"bf16", "__nv_cvt_bfloat16raw_to_fp8", "__nv_cvt_bfloat16raw2_to_fp8x2", &bf16, "b", "b2",
       "cvt.rn.satfinite.{}x2.f32 (after an exact bf16 -> fp32)"},
  };
  auto fill = [](std::string pattern, const char* tag) {
    const auto p = pattern.find("{}");
    if (p != std::string::npos) pattern.replace(p, 2, tag);
    return pattern;
  };
  for (const auto& s : kFp8Srcs)
    for (const auto& d : kFp8)
      for (const bool x2 : {false, true})
        for (const bool sat : {true, false}) {
          const std::string name = std::string(s.tag) + (x2 ? "x2" : "") + "_to_" + d.tag + (x2 ? "x2" : "") +
                                   (sat ? "_satfinite" : "_nosat");
          const std::string call = std::string(x2 ? s.fn2 : s.fn) + "(" + (x2 ? s.arg2 : s.arg) + ", " +
                                   (sat ? "__NV_SATFINITE" : "__NV_NOSAT") + ", " + d.interp + ")";
          Builder b(keep(name), keep(call), *s.f, *d.f, R(RN, sat ? SAT_FIN : d.nosat));
          if (sat) b.hw(HwPath::FromArch, keep(fill(s.instr, d.tag)), 890).nan(kFp8CanonHw, kFp8CanonSw);
          else b.hw(HwPath::Never, "").nan(kFp8CanonSw);
          if (x2) b.pair();
          add(b);
        }
  for (const auto& d : kFp8) {
    add(Builder(keep(std::string(d.tag) + "_to_f16"), keep(std::string("__nv_cvt_fp8_to_halfraw(v, ") + d.interp + ")"), *d.f,
                f16, R(RN, SAT_INF))
            .hw(HwPath::FromArch, keep(std::string("cvt.rn.f16x2.") + d.tag + "x2"), 890)
            .nan(kF16FromFp8Hw, kF16FromFp8Sw));
    add(Builder(keep(std::string(d.tag) + "x2_to_f16x2"), keep(std::string("__nv_cvt_fp8x2_to_halfraw2(v2, ") + d.interp + ")"),
                *d.f, f16, R(RN, SAT_INF))
            .hw(HwPath::FromArch, keep(std::string("cvt.rn.f16x2.") + d.tag + "x2"), 890)
            .nan(kF16FromFp8Hw, kF16FromFp8Sw)
            .pair());
    add(Builder(keep(std::string(d.tag) + "_to_f32"),
                keep(std::string("float(__nv_fp8_") + d.tag + ") (fp8 -> fp16 -> cvt.f32.f16)"), *d.f, f32, R(RN, SAT_INF))
            .hw(HwPath::FromArch, keep(std::string("cvt.rn.f16x2.") + d.tag + "x2 + cvt.f32.f16"), 890)
            .nan(kF32FromFp8));
  }

  // ---- cuda_fp8.h: ue8m0 scale factors (rz, rp; hardware only in family-specific builds) ----
  struct E8Src {
    const char* tag;
    const char* fn;
    const char* fn2;
    const Format* f;
    const char* arg;
    const char* arg2;
    const char* instr;
  };
  static const E8Src kE8Srcs[] = {
      {"f32", "__nv_cvt_float_to_e8m0", "__nv_cvt_float2_to_e8m0x2", &f32, "x", "make_float2(a, b)", "ue8m0x2.f32"},
      {"bf16", "__nv_cvt_bfloat16raw_to_e8m0", "__nv_cvt_bfloat162raw_to_e8m0x2", &bf16, "b", "b2", "ue8m0x2.bf16x2"},
  };
  for (const auto& s : kE8Srcs)
    for (const bool x2 : {false, true})
      for (const bool up : {false, true})
        for (const bool sat : {true, false}) {
          const std::string name = std::string(s.tag) + (x2 ? "x2" : "") + "_to_ue8m0" + (x2 ? "x2" : "") +
                                   (up ? "_ru" : "_rz") + (sat ? "_satfinite" : "_nosat");
          const std::string call = std::string(x2 ? s.fn2 : s.fn) + "(" + (x2 ? s.arg2 : s.arg) + ", " +
                                   (sat ? "__NV_SATFINITE" : "__NV_NOSAT") + ", " + (up ? "cudaRoundPosInf" : "cudaRoundZero") + ")";
          const std::string instr = std::string("cvt.") + (up ? "rp" : "rz") + (sat ? ".satfinite" : "") + "." + s.instr;
          Builder b(keep(name), keep(call), *s.f, ue8m0, R(up ? RU : RZ, sat ? SAT_FIN : SAT_NAN));
          b.hw(HwPath::FamilySpecific, keep(instr)).nan(kNone);
          if (x2) b.pair();
          add(b);
        }
  add(Builder("ue8m0_to_bf16", "__nv_cvt_e8m0_to_bf16raw(v)", ue8m0, bf16, R(RN, SAT_INF))
          .hw(HwPath::FamilySpecific, "cvt.rn.bf16x2.ue8m0x2")
          .nan(kBf16FromE8m0Hw, kBf16FromE8m0Sw));
  add(Builder("ue8m0x2_to_bf16x2", "__nv_cvt_e8m0x2_to_bf162raw(v2)", ue8m0, bf16, R(RN, SAT_INF))
          .hw(HwPath::FamilySpecific, "cvt.rn.bf16x2.ue8m0x2")
          .nan(kBf16FromE8m0Hw, kBf16FromE8m0Sw)
          .pair());

  // ---- cuda_fp6.h, cuda_fp4.h: rn (hardware only in family-specific builds) and rz (software) ----
  struct Narrow {
    const Format* f;
    const char* tag;
    const char* interp;
    const char* fam;  // fp6 | fp4
  };
  static const Narrow kNarrow[] = {{&e2m3, "e2m3", "__NV_E2M3", "fp6"}, {&e3m2, "e3m2", "__NV_E3M2", "fp6"}, {&e2m1, "e2m1", "__NV_E2M1", "fp4"}};
  for (const auto& d : kNarrow) {
    struct S {
      const char* tag;
      const char* fn;
      const char* fn2;
      const Format* f;
      const char* arg;
      const char* arg2;
    };
    const std::string fam = d.fam;
    const S srcs[] = {
        {"f32", "__nv_cvt_float_to_", "__nv_cvt_float2_to_", &f32, "x", "make_float2(a, b)"},
        {"f16", "__nv_cvt_halfraw_to_", "__nv_cvt_halfraw2_to_", &f16, "h", "h2"},
        {"bf16", "__nv_cvt_bfloat16raw_to_", "__nv_cvt_bfloat16raw2_to_", &bf16, "b", "b2"},
    };
    for (const auto& s : srcs)
      for (const bool x2 : {false, true})
        for (const bool rz : {false, true}) {
          const std::string name = std::string(s.tag) + (x2 ? "x2" : "") + "_to_" + d.tag + (x2 ? "x2" : "") + (rz ? "_rz" : "_rn");
          const std::string call = std::string(x2 ? s.fn2 : s.fn) + fam + (x2 ? "x2(" : "(") + (x2 ? s.arg2 : s.arg) + ", " +
                                   d.interp + ", " + (rz ? "cudaRoundZero" : "cudaRoundNearest") + ")";
          Builder b(keep(name), keep(call), *s.f, *d.f, R(rz ? RZ : RN, SAT_FIN));
          if (rz) b.hw(HwPath::Never, "");
          else b.hw(HwPath::FamilySpecific, keep(std::string("cvt.rn.satfinite.") + d.tag + "x2.f32"));
          b.nan(kNone);
          if (x2) b.pair();
          add(b);
        }
    add(Builder(keep(std::string(d.tag) + "_to_f16"), keep("__nv_cvt_" + fam + "_to_halfraw(v, " + d.interp + ")"), *d.f, f16,
                R(RN, SAT_INF))
            .hw(HwPath::FamilySpecific, keep(std::string("cvt.rn.f16x2.") + d.tag + "x2"))
            .nan(kNone));
    add(Builder(keep(std::string(d.tag) + "x2_to_f16x2"), keep("__nv_cvt_" + fam + "x2_to_halfraw2(v2, " + d.interp + ")"), *d.f,
                f16, R(RN, SAT_INF))
            .hw(HwPath::FamilySpecific, keep(std::string("cvt.rn.f16x2.") + d.tag + "x2"))
            .nan(kNone)
            .pair());
    add(Builder(keep(std::string(d.tag) + "_to_f32"), keep("float(__nv_" + fam + "_" + d.tag + ") (-> fp16 -> cvt.f32.f16)"),
                *d.f, f32, R(RN, SAT_INF))
            .hw(HwPath::FamilySpecific, keep(std::string("cvt.rn.f16x2.") + d.tag + "x2 + cvt.f32.f16"))
            .nan(kNone));
  }

  // ---- deliberately wrong entries: the checker must catch each (tests/kernels/convert/convert_gpu_test.cpp) ----
  add(Builder("test_f32_to_f16_rn_flip", "__float2half_rn(x), low bit flipped for x = 0x3f800001", f32, f16, R(RN, SAT_INF))
          .hw(HwPath::Always, "cvt.rn.f16.f32")
          .nan(kF16CanonHw)
          .test_only());
  add(Builder("test_e5m2_to_f16_signflip", "__nv_cvt_fp8_to_halfraw(v, __NV_E5M2), sign flipped for v = 0x3c", e5m2, f16,
              R(RN, SAT_INF))
          .hw(HwPath::FromArch, "cvt.rn.f16x2.e5m2x2", 890)
          .nan(kF16FromFp8Hw, kF16FromFp8Sw)
          .test_only());
  add(Builder("test_f16x2_to_e4m3x2_satfinite_hilane",
              "__nv_cvt_halfraw2_to_fp8x2(h2, __NV_SATFINITE, __NV_E4M3), high lane's low bit flipped for h = 0x3c00", f16,
              e4m3, R(RN, SAT_FIN))
          .hw(HwPath::FromArch, "cvt.rn.satfinite.e4m3x2.f16x2", 890)
          .nan(kFp8CanonHw, kFp8CanonSw)
          .pair()
          .test_only());
  add(Builder("test_f32_to_tf32_rna_stray", "cvt.rna.tf32.f32, bit 0 set for x = 0x3f800000", f32, tf32, R(RNA, SAT_INF))
          .hw(HwPath::Always, "cvt.rna.tf32.f32")
          .nan(kTf32Unstated)
          .min_arch(800)
          .test_only());
  add(Builder("test_f32_to_e4m3_nosat_nan", "__nv_cvt_float_to_fp8(x, __NV_NOSAT, __NV_E4M3), 0xff for x = 0x7fc00000",
              f32, e4m3, R(RN, SAT_NAN))
          .hw(HwPath::Never, "")
          .nan(kFp8CanonSw)
          .test_only());
  return t;
}

const std::vector<DeviceConversion>& table() {
  static const std::vector<DeviceConversion> t = build_table();
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

EntrySupport entry_support(const DeviceConversion& e, const RunningArch& a) {
  EntrySupport s;
  if (a.arch < e.min_arch) {
    s.reason = "needs code for __CUDA_ARCH__ >= " + std::to_string(e.min_arch) + "; the code running here is for " +
               std::to_string(a.arch);
    return s;
  }
  s.ok = true;
  switch (e.hw) {
    case HwPath::Always: s.hardware = true; break;
    case HwPath::FromArch: s.hardware = a.arch >= e.hw_arch; break;
    case HwPath::FamilySpecific: s.hardware = a.family_specific >= 1000; break;
    case HwPath::Never: s.hardware = false; break;
  }
  s.reason = s.hardware ? "hardware: " + std::string(e.hw_instr) : std::string("software: the header's emulation");
  return s;
}

const NanStatement& nan_statement(const DeviceConversion& e, bool hardware) { return hardware ? e.nan_hw : e.nan_sw; }

int result_bytes(const DeviceConversion& e) {
  return e.kind == ConversionKind::ScaledRoundTrip ? 4 : container_bytes(*e.dst);
}

std::uint64_t entry_code_count(const DeviceConversion& e) {
  return e.kind == ConversionKind::ScaledRoundTrip ? std::uint64_t{254} << 16 : e.src->code_count();
}

std::vector<std::pair<std::uint64_t, std::uint64_t>> strided_sample_ranges(const Format& src) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> r;
  const std::uint64_t all = src.code_count();
  if (all <= (std::uint64_t{1} << 24)) {
    r.push_back({0, all});
    return r;
  }
  // Block i at i * 2^24 + o_i * 2^16, o_i = (i * 167) mod 256: the blocks' bit 23 (the fp32 exponent's
  // lowest bit) and fraction tops vary from block to block.
  const std::uint64_t step = all >> 8;
  for (std::uint64_t i = 0; i < 256; ++i) r.push_back({i * step + (((i * 167) & 0xFF) << 16) % step, 1 << 16});
  return r;
}

// ---- the sweep ----
std::vector<std::pair<std::uint64_t, std::uint64_t>> nan_code_ranges(const Format& f) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> r;
  const std::uint64_t mag = f.magnitude_mask();
  switch (f.specials) {
    case Specials::IEEE: r.push_back({f.inf_code() + 1, mag + 1}); break;
    case Specials::FiniteNaN:
    case Specials::ScaleOnly: r.push_back({mag, mag + 1}); break;
    case Specials::FiniteOnly: return r;
  }
  if (f.is_signed()) r.push_back({r[0].first + f.sign_mask(), r[0].second + f.sign_mask()});  // the same, negative
  return r;
}

namespace {

std::uint32_t load_result(const void* data, int bytes, std::uint64_t i) {
  switch (bytes) {
    case 1: return static_cast<const std::uint8_t*>(data)[i];
    case 2: return static_cast<const std::uint16_t*>(data)[i];
    default: return static_cast<const std::uint32_t*>(data)[i];
  }
}

/// The NaN the statement says a NaN source code becomes (statements with a rule that names one).
std::uint64_t stated_nan(const NanStatement& s, const DeviceConversion& e, std::uint64_t code) {
  const Format& src = *e.src;
  const Format& dst = *e.dst;
  switch (s.rule) {
    case NanRule::Canonical: return s.code;
    case NanRule::Preserve: return convert(src, code, dst, Rounder{e.rounder.rounding, e.rounder.saturation, NanPayload::Preserve}).code;
    case NanRule::ShiftPayload: {
      const std::uint64_t sign = code_is_negative(src, code) ? dst.sign_mask() : 0;
      return sign | dst.inf_code() | ((code & src.frac_mask()) << (dst.frac_bits - src.frac_bits));
    }
    default: return 0;
  }
}

struct NanAcc {
  NanReport r;
  void add_output(std::uint32_t code) {
    auto it = r.outputs.find(code);
    if (it != r.outputs.end()) ++it->second;
    else if (r.outputs.size() < 16) r.outputs.emplace(code, 1);
    else ++r.outputs_other;
  }
  void merge(const NanAcc& o, std::size_t max_listed) {
    r.inputs += o.r.inputs;
    r.as_stated += o.r.as_stated;
    r.not_as_stated += o.r.not_as_stated;
    r.differ_from_fpcert += o.r.differ_from_fpcert;
    r.outputs_other += o.r.outputs_other;
    for (const auto& [c, n] : o.r.outputs) {
      auto it = r.outputs.find(c);
      if (it != r.outputs.end()) it->second += n;
      else if (r.outputs.size() < 16) r.outputs.emplace(c, n);
      else r.outputs_other += n;
    }
    r.listed.insert(r.listed.end(), o.r.listed.begin(), o.r.listed.end());
    std::sort(r.listed.begin(), r.listed.end(), [](const auto& a, const auto& b) { return a.src < b.src; });
    if (r.listed.size() > max_listed) r.listed.resize(max_listed);
  }
};

/// NaN source codes in [lo, hi) (results at data[code - base]): their results against the statement.
void nan_probe(const DeviceConversion& e, const NanStatement& st, const Format& src_fmt,
               const std::vector<std::pair<std::uint64_t, std::uint64_t>>& nan_ranges, std::uint64_t lo, std::uint64_t hi,
               const void* data, std::uint64_t base, int bytes, std::size_t max_listed, NanAcc& acc) {
  if (st.rule == NanRule::NotApplicable) return;
  const Format& dst = *e.dst;
  for (const auto& [a, b] : nan_ranges) {
    const std::uint64_t from = std::max(a, lo), to = std::min(b, hi);
    for (std::uint64_t code = from; code < to; ++code) {
      const std::uint64_t got = from_container(dst, load_result(data, bytes, code - base));
      ++acc.r.inputs;
      if (classify(dst, got) != FpClass::NaN) continue;  // not a NaN at all: the ordinary check lists it
      acc.add_output(static_cast<std::uint32_t>(got));
      const Rounded truth = mpfr_ref::convert(src_fmt, code, dst, e.rounder);  // specials: the documented policy
      if (got != truth.code) ++acc.r.differ_from_fpcert;
      if (st.rule == NanRule::Unstated) continue;
      const std::uint64_t want = stated_nan(st, e, code);
      if (got == want) {
        ++acc.r.as_stated;
      } else {
        ++acc.r.not_as_stated;
        if (acc.r.listed.size() < max_listed)
          acc.r.listed.push_back({code, static_cast<std::uint32_t>(want), static_cast<std::uint32_t>(got)});
      }
    }
  }
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

struct Piece {
  std::uint64_t first, count;
};

std::vector<Piece> split(const std::vector<std::pair<std::uint64_t, std::uint64_t>>& ranges, std::uint64_t max_chunk) {
  std::vector<Piece> out;
  for (const auto& [first, count] : ranges)
    for (std::uint64_t off = 0; off < count; off += max_chunk) out.push_back({first + off, std::min(max_chunk, count - off)});
  return out;
}

void add_lanes_and_strays(DeviceSweepResult& res, const ProducedChunk& pc, std::size_t max_listed) {
  res.lane_mismatches += pc.lane_mismatches;
  for (const auto& l : pc.lanes)
    if (res.lanes.size() < max_listed) res.lanes.push_back(l);
  res.stray += pc.stray;
  for (const auto& s : pc.strays)
    if (res.strays.size() < max_listed) res.strays.push_back(s);
}

/// Runs the chunks through the producer two slots deep: chunk k + 1 is produced while chunk k is
/// checked. check(piece, chunk) runs on the calling thread (and fans out itself).
template <class Check>
void pipeline(ConversionProducer& producer, const DeviceConversion& e, const std::vector<Piece>& pieces,
              DeviceSweepResult& res, const SweepOptions& opt, Check&& check) {
  if (pieces.empty()) return;
  std::uint64_t total = 0, done = 0;
  for (const auto& p : pieces) total += p.count;
  const auto t0 = std::chrono::steady_clock::now();
  producer.enqueue(e, pieces[0].first, pieces[0].count, 0);
  for (std::size_t k = 0; k < pieces.size(); ++k) {
    if (k + 1 < pieces.size()) producer.enqueue(e, pieces[k + 1].first, pieces[k + 1].count, static_cast<int>((k + 1) % 2));
    const auto tw = std::chrono::steady_clock::now();
    const ProducedChunk pc = producer.wait(static_cast<int>(k % 2));
    res.timing.wait_s += seconds_since(tw);
    res.timing.gpu_s += pc.gpu_ms / 1000.0;
    res.timing.transfer_s += pc.transfer_ms / 1000.0;
    add_lanes_and_strays(res, pc, opt.max_listed);
    const auto tc = std::chrono::steady_clock::now();
    check(pieces[k], pc);
    res.timing.check_s += seconds_since(tc);
    done += pieces[k].count;
    if (opt.progress) opt.progress(static_cast<double>(done) / static_cast<double>(total));
  }
  res.timing.wall_s = seconds_since(t0);
}

/// The device check's pipeline, two slots deep like pipeline(): chunk k + 1 is converted and compared
/// on the device while the host finishes chunk k (MPFR on its differences and sample, NaN inputs).
template <class Finish>
void check_on_device(DeviceChecker& checker, const DeviceConversion& e, const std::vector<Piece>& pieces, DeviceSweepResult& res,
                     const SweepOptions& opt, Finish&& finish) {
  if (pieces.empty()) return;
  std::uint64_t total = 0, done = 0;
  for (const auto& p : pieces) total += p.count;
  const auto t0 = std::chrono::steady_clock::now();
  checker.enqueue(e, pieces[0].first, pieces[0].count, 0);
  for (std::size_t k = 0; k < pieces.size(); ++k) {
    if (k + 1 < pieces.size()) checker.enqueue(e, pieces[k + 1].first, pieces[k + 1].count, static_cast<int>((k + 1) % 2));
    const auto tw = std::chrono::steady_clock::now();
    const DeviceCheckChunk c = checker.wait(static_cast<int>(k % 2));
    res.timing.wait_s += seconds_since(tw);
    res.timing.gpu_s += c.side.gpu_ms / 1000.0;
    res.timing.transfer_s += c.side.transfer_ms / 1000.0;
    add_lanes_and_strays(res, c.side, opt.max_listed);
    const auto tc = std::chrono::steady_clock::now();
    finish(c);
    res.timing.check_s += seconds_since(tc);
    done += pieces[k].count;
    if (opt.progress) opt.progress(static_cast<double>(done) / static_cast<double>(total));
  }
  res.timing.wall_s = seconds_since(t0);
}

void common_failures(DeviceSweepResult& res, const NanStatement& st, bool strict) {
  auto& f = res.failures;
  const auto& c = res.check;
  if (c.model_mismatches)
    f.push_back(std::to_string(c.model_mismatches) + " patterns where fpcert's fast model disagrees with MPFR (a bug in fpcert)");
  if (c.mismatches)
    f.push_back(std::to_string(c.mismatches) + " results differ from the correctly rounded reference" +
                (strict ? " (NaN payloads and signs included: --strict-nan)" : ""));
  if (res.lane_mismatches)
    f.push_back(std::to_string(res.lane_mismatches) + " codes whose result in the high lane differs from the low lane's");
  if (res.stray) f.push_back(std::to_string(res.stray) + " results with bits set outside the format's code in its container");
  if (res.nan_other_differences)
    f.push_back(std::to_string(res.nan_other_differences) +
                " NaN results from non-NaN inputs (overflow, Inf) with other bits than fpcert's policy");
  if (st.decisive && st.rule != NanRule::NotApplicable && st.rule != NanRule::Unstated && res.nan.not_as_stated)
    f.push_back(std::to_string(res.nan.not_as_stated) + " NaN inputs gave another NaN than the stated " +
                std::string(to_string(st.rule)) + (st.rule == NanRule::Canonical ? " " + hex_code(*res.entry->dst, st.code) : std::string()) +
                " (" + std::string(st.basis) + ")");
}

unsigned worker_count(const SweepOptions& opt) { return opt.threads ? opt.threads : thread_count(); }

DeviceSweepResult sweep_scaled(ConversionProducer& producer, const DeviceConversion& e, const SweepOptions& opt,
                               DeviceSweepResult res) {
  // Pseudo formats "bf16 times 2^s": bf16's fields with bias 127 - s, so that the ordinary check
  // (fast model, MPFR, outcome classes) judges h = RN_f16(x * 2^s) code by code.
  constexpr int kScales = 254, kSmin = -126;
  static const std::array<std::string, kScales> tags = [] {
    std::array<std::string, kScales> t;
    for (int i = 0; i < kScales; ++i) t[i] = "bf16*2^" + std::to_string(kSmin + i);
    return t;
  }();
  static const std::array<Format, kScales> scaled_fmt = [] {
    std::array<Format, kScales> f{};
    for (int i = 0; i < kScales; ++i) {
      f[i] = bf16;
      f[i].tag = tags[i];
      f[i].name = tags[i];
      f[i].bias = 127 - (kSmin + i);
    }
    return f;
  }();
  const NanStatement& st = nan_statement(e, res.hardware);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges = opt.ranges;
  if (ranges.empty()) ranges.push_back({0, entry_code_count(e)});
  for (const auto& [first, count] : ranges)
    if (first % 65536 || count % 65536 || first + count > entry_code_count(e))
      throw InputError("bf16_to_f16_pow2_scaled: ranges must be whole scales (multiples of 65536 below 254 * 65536)");
  const auto pieces = split(ranges, producer.max_chunk());
  const unsigned threads = worker_count(opt);
  res.timing.threads = threads;
  std::vector<ConvertCheckResult> per(threads);
  std::vector<NanAcc> nans(threads);
  std::vector<ScaledReport> rep(threads);
  std::vector<ScaleRow> rows(kScales);
  std::mutex rows_mutex;
  const auto nan_ranges = nan_code_ranges(bf16);
  const Rounder rn_f32 = Rounder::nearest(f32), rn_bf16 = Rounder::nearest(bf16);
  pipeline(producer, e, pieces, res, opt, [&](const Piece& piece, const ProducedChunk& pc) {
    parallel_for(
        piece.count / 65536, 1,
        [&](std::uint64_t b, std::uint64_t end, unsigned w) {
          for (std::uint64_t blk = b; blk < end; ++blk) {
            const std::uint64_t p0 = piece.first + blk * 65536;
            const int si = static_cast<int>(p0 >> 16), s = kSmin + si;
            const auto* v = static_cast<const std::uint32_t*>(pc.data) + blk * 65536;
            ConvertCheckSpec spec;
            spec.src = &scaled_fmt[si];
            spec.dst = &f16;
            spec.rounder = e.rounder;
            spec.mpfr_every = false;
            spec.mpfr_sample = opt.mpfr_sample;
            spec.strict_nan = opt.strict_nan;
            spec.max_listed = opt.max_listed;
            check_conversion_chunk(spec, 0, 65536, SubjectChunk{v, 4, false}, per[w]);
            DeviceConversion as_f16 = e;  // the fp16 half of the round trip, for the NaN statement
            as_f16.src = &scaled_fmt[si];
            as_f16.dst = &f16;
            nan_probe(as_f16, st, scaled_fmt[si], nan_ranges, 0, 65536, v, 0, 4, opt.max_listed, nans[w]);
            ScaleRow row;
            row.s = s;
            row.window_lo = std::max(-17 - s, -133);
            row.window_hi = std::min(15 - s, 127);
            ScaledReport& r = rep[w];
            for (std::uint32_t x = 0; x < 65536; ++x) {
              const std::uint32_t y = v[x] & 0xFFFF, z = v[x] >> 16;
              // The unscaled bf16 must be RN_bf16(RN_f32(h * 2^-s)) of the device's own fp16 h.
              const double yd = to_double(f16, y);
              const Rounded w32 = round_double(f32, std::ldexp(yd, -s), rn_f32);
              std::uint64_t zref = round_double(bf16, to_double(f32, w32.code), rn_bf16).code;
              if (z != zref && classify(f16, y) != FpClass::NaN) {  // MPFR arbitrates
                mpfr_ref::Mpfr m(64);
                mpfr_ref::set_code(m, f16, y);
                mpfr_mul_2si(m, m, -s, MPFR_RNDN);
                const Rounded w2 = mpfr_ref::round(f32, m, rn_f32);
                const std::uint64_t z2 = mpfr_ref::convert(f32, w2.code, bf16, rn_bf16).code;
                if (z2 != zref) {
                  ++r.model_window_errors;
                  zref = z2;
                }
              }
              if (z != zref) {
                const bool both_nan = classify(bf16, z) == FpClass::NaN && classify(bf16, zref) == FpClass::NaN;
                if (both_nan && !opt.strict_nan) {
                  ++r.roundtrip_nan_differences;
                } else {
                  ++r.roundtrip_mismatches;
                  if (r.listed.size() < opt.max_listed)
                    r.listed.push_back({p0 | x, zref, z, Outcome::RoundedNormal, false});
                }
              }
              // The window: every finite bf16 whose binade lies in [window_lo, window_hi] (and zeros).
              const FpClass xc = classify(bf16, x);
              if (xc == FpClass::NaN || xc == FpClass::Inf) continue;
              const std::uint32_t mag = x & 0x7FFF, biased = mag >> 7;
              const int e2 = biased ? static_cast<int>(biased) - 127 : -134 + static_cast<int>(std::bit_width(mag));
              const bool in_window = mag == 0 || (e2 >= row.window_lo && e2 <= row.window_hi);
              if (in_window) {
                ++row.window_patterns;
                // The model agrees that x * 2^s is an fp16 number (else the window formula is wrong).
                const Rounded h = round_double(f16, std::ldexp(to_double(bf16, x), s), e.rounder);
                if (h.flags) ++r.model_window_errors;
                if (z == x) {
                  ++row.window_exact;
                } else {
                  ++r.window_failures;
                  if (r.listed.size() < opt.max_listed) r.listed.push_back({p0 | x, x, z, Outcome::ExactNormal, false});
                }
              } else {
                ++row.outside_patterns;
                if (z == x) ++row.outside_exact;
              }
            }
            std::lock_guard<std::mutex> lock(rows_mutex);
            rows[si] = row;
          }
        },
        threads);
  });
  for (unsigned w = 0; w < threads; ++w) {
    res.check.merge(per[w], opt.max_listed);
    if (w) nans[0].merge(nans[w], opt.max_listed);
    res.scaled.window_failures += rep[w].window_failures;
    res.scaled.roundtrip_mismatches += rep[w].roundtrip_mismatches;
    res.scaled.roundtrip_nan_differences += rep[w].roundtrip_nan_differences;
    res.scaled.model_window_errors += rep[w].model_window_errors;
    res.scaled.listed.insert(res.scaled.listed.end(), rep[w].listed.begin(), rep[w].listed.end());
  }
  std::sort(res.scaled.listed.begin(), res.scaled.listed.end(), [](const auto& a, const auto& b) { return a.src < b.src; });
  if (res.scaled.listed.size() > opt.max_listed) res.scaled.listed.resize(opt.max_listed);
  for (const auto& piece : pieces)
    for (std::uint64_t p = piece.first; p < piece.first + piece.count; p += 65536) res.scaled.rows.push_back(rows[p >> 16]);
  res.nan = nans[0].r;
  res.patterns = res.check.patterns;
  res.nan_other_differences = opt.strict_nan ? 0 : res.check.nan_differences - std::min(res.check.nan_differences, res.nan.differ_from_fpcert);
  common_failures(res, st, opt.strict_nan);
  if (res.scaled.window_failures)
    res.failures.push_back(std::to_string(res.scaled.window_failures) + " bf16 values inside the window did not come back exactly");
  if (res.scaled.roundtrip_mismatches)
    res.failures.push_back(std::to_string(res.scaled.roundtrip_mismatches) +
                           " unscaled bf16 results differ from RN_bf16(RN_f32(h * 2^-s)) of the device's fp16 h");
  if (res.scaled.model_window_errors)
    res.failures.push_back(std::to_string(res.scaled.model_window_errors) + " disagreements of fpcert's window or model with MPFR (a bug in fpcert)");
  return res;
}

}  // namespace

DeviceSweepResult sweep_conversion(ConversionProducer& producer, const DeviceConversion& e, const SweepOptions& opt) {
  DeviceSweepResult res;
  res.entry = &e;
  res.device = producer.device_name();
  res.arch = producer.running_arch();
  const EntrySupport sup = entry_support(e, res.arch);
  if (!sup.ok) throw NotSupportedError(std::string(e.name) + ": " + sup.reason);
  res.hardware = sup.hardware;
  res.path = sup.reason;
  res.exhaustive = opt.ranges.empty();
  if (e.kind == ConversionKind::ScaledRoundTrip) return sweep_scaled(producer, e, opt, std::move(res));

  const std::uint64_t all = entry_code_count(e);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges = opt.ranges;
  if (ranges.empty()) ranges.push_back({0, all});
  for (const auto& [first, count] : ranges)
    if (count == 0 || first >= all || count > all - first)
      throw InputError("range " + std::to_string(first) + ":" + std::to_string(count) + " lies outside the " +
                       std::to_string(all) + " codes of " + std::string(e.src->tag));
  const auto pieces = split(ranges, producer.max_chunk());
  const NanStatement& st = nan_statement(e, sup.hardware);
  const auto nan_ranges = nan_code_ranges(*e.src);
  const int bytes = result_bytes(e);
  const unsigned threads = worker_count(opt);
  res.timing.threads = threads;

  ConvertCheckSpec spec;
  spec.src = e.src;
  spec.dst = e.dst;
  spec.rounder = e.rounder;
  spec.mpfr_every = false;
  spec.mpfr_sample = opt.mpfr_sample;
  spec.strict_nan = opt.strict_nan;
  spec.max_listed = opt.max_listed;
  std::vector<ConvertCheckResult> per(threads);
  std::vector<NanAcc> nans(threads);
  // The host check of one chunk of results (all of them on the host).
  auto host_check = [&](const Piece& piece, const ProducedChunk& pc) {
    const std::uint64_t grain = std::max<std::uint64_t>(std::uint64_t{1} << 16, piece.count / (threads * 8ull) + 1);
    parallel_for(
        piece.count, grain,
        [&](std::uint64_t b, std::uint64_t end, unsigned w) {
          const auto* p = static_cast<const std::uint8_t*>(pc.data) + b * static_cast<std::uint64_t>(bytes);
          check_conversion_chunk(spec, piece.first + b, end - b, SubjectChunk{p, bytes, true}, per[w]);
          nan_probe(e, st, *e.src, nan_ranges, piece.first + b, piece.first + end, pc.data, piece.first, bytes, opt.max_listed,
                    nans[w]);
        },
        threads);
  };
  if (opt.checker && opt.checker->supports(e)) {
    res.checked_on = "device";
    check_on_device(*opt.checker, e, split(ranges, opt.checker->max_chunk()), res, opt, [&](const DeviceCheckChunk& c) {
      if (c.overflow) {  // more differences than the list holds: the results come back, the host checks them
        ++res.host_fallback_chunks;
        for (const Piece& p : split({{c.first, c.count}}, producer.max_chunk())) {
          producer.enqueue(e, p.first, p.count, 0);
          host_check(p, producer.wait(0));  // its lanes and strays were counted by the device check
        }
        return;
      }
      add_outcome_keys(*e.src, *e.dst, c.keys.data(), per[0]);
      const ConvertModel model = make_convert_model(*e.src, *e.dst, e.rounder);
      const std::uint64_t grain = std::max<std::uint64_t>(std::uint64_t{1} << 16, c.count / (threads * 8ull) + 1);
      parallel_for(
          c.count, grain,
          [&](std::uint64_t b, std::uint64_t end, unsigned w) {
            const std::uint64_t lo = c.first + b, hi = c.first + end;
            // The device's differences in [lo, hi), and those of NaN inputs, from their results.
            auto from = std::lower_bound(c.listed.begin(), c.listed.end(), lo, [](const ModelDifference& d, std::uint64_t v) { return d.src < v; });
            auto to = std::lower_bound(from, c.listed.end(), hi, [](const ModelDifference& d, std::uint64_t v) { return d.src < v; });
            std::vector<ModelDifference> differ(from, to);
            for (const auto& part : c.nan) {
              const std::uint64_t a0 = std::max(lo, part.first), b0 = std::min(hi, part.first + part.count);
              for (std::uint64_t code = a0; code < b0; ++code) {
                const auto got = static_cast<std::uint32_t>(from_container(*e.dst, load_result(part.data, bytes, code - part.first)));
                if (got != model_convert(model, static_cast<std::uint32_t>(code)).code) differ.push_back({code, got});
              }
              if (a0 < b0)
                nan_probe(e, st, *e.src, nan_ranges, a0, b0, part.data, part.first, bytes, opt.max_listed, nans[w]);
            }
            std::sort(differ.begin(), differ.end(), [](const ModelDifference& x, const ModelDifference& y) { return x.src < y.src; });
            check_conversion_differences(spec, lo, end - b, differ, per[w]);
          },
          threads);
    });
  } else {
    pipeline(producer, e, pieces, res, opt, host_check);
  }
  for (unsigned w = 0; w < threads; ++w) {
    res.check.merge(per[w], opt.max_listed);
    if (w) nans[0].merge(nans[w], opt.max_listed);
  }
  res.nan = nans[0].r;
  res.patterns = res.check.patterns;
  res.nan_other_differences = opt.strict_nan ? 0 : res.check.nan_differences - std::min(res.check.nan_differences, res.nan.differ_from_fpcert);
  common_failures(res, st, opt.strict_nan);
  return res;
}

#if !defined(FPCERT_HAVE_CUDA)
std::unique_ptr<ConversionProducer> make_cuda_conversion_producer(std::string* why, std::uint64_t) {
  if (why) *why = "this fpcert was built without CUDA (no nvcc at configure time, or FPCERT_CUDA=OFF)";
  return nullptr;
}
bool cuda_has_conversion_kernel(std::string_view) { return false; }
HostEmulation cuda_header_host_emulation(std::string_view) { return nullptr; }
std::unique_ptr<DeviceChecker> make_cuda_device_checker(std::string* why, std::uint64_t, std::size_t) {
  if (why) *why = "this fpcert was built without CUDA (no nvcc at configure time, or FPCERT_CUDA=OFF)";
  return nullptr;
}
#endif

}  // namespace fpcert
