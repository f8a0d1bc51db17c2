// oracle/block/block_format.hpp — block-scaled formats: OCP MX v1.0 (MXFP8 E4M3/E5M2, MXFP6 E2M3/E3M2,
// MXFP4 E2M1, MXINT8; E8M0 power-of-two scales, blocks of 32) and NVIDIA NVFP4 (E2M1 elements, blocks
// of 16, an E4M3 scale used unsigned and one fp32 per-tensor scale): descriptors, the scale rules,
// quantization of elements and blocks, and the exact value of every element.
//
// A block of values x_i becomes one scale code and one element code per value; the value it stands
// for is v_i = element(P_i) * scale(X) [* s_t for NVFP4], exact in double for every code (the largest
// is 2^127 * 57344 < 2^143, the smallest nonzero 2^-149 * 2^-9 * 2^-1 = 2^-159). docs/block_formats.md
// states every rule with its source, and the choices made where the specifications are silent; the
// MPFR reference that checks this code is oracle/block/block_mpfr.hpp.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "oracle/format.hpp"
#include "oracle/round.hpp"

namespace fpcert {

/// How a block's scale is chosen from amax, the largest magnitude in the block (docs/block_formats.md).
/// With E8M0 scales X = 2^e, emax the exponent of the element format's largest binade, max_elem its
/// largest value, p its precision:
enum class ScaleRule : std::uint8_t {
  Floor,  ///< e = floor(log2 amax) - emax (OCP MX v1.0, sec. 6.3); NVFP4: amax / (6 s_t) rounded down into e4m3
  Ceil,   ///< e = ceil(log2 amax) - emax (E8M0 scales only)
  Even,   ///< e = floor(log2 RN_p(amax)) - emax, amax first rounded to the element's precision; NVFP4: rounded to nearest-even
  RCeil,  ///< e = ceil(log2(amax / max_elem)) (NVIDIA's RCEIL, cuBLAS/cuDNN); NVFP4: rounded up into e4m3 (cuDNN)
};
inline constexpr ScaleRule kAllScaleRules[] = {ScaleRule::Floor, ScaleRule::Ceil, ScaleRule::Even, ScaleRule::RCeil};
std::string_view to_string(ScaleRule r);
std::optional<ScaleRule> parse_scale_rule(std::string_view s);  ///< floor|ocp, ceil, even, rceil

/// The MXINT8 element as a format: 8-bit two's complement times 2^-6, used symmetrically (-127..127),
/// has exactly the values of a sign-magnitude format with 1 exponent bit, 6 fraction bits, bias 1 and
/// subnormals: k/64 for k = 0..127, largest 127/64 in the binade of 2^0. Rounding into it is correct
/// rounding to a multiple of 2^-6 (ties to an even k), saturating at +-127/64. Its codes here are
/// sign-magnitude; BlockFormat converts them to and from two's complement bytes.
inline constexpr Format int8_elem{"int8", "int8 * 2^-6 (MXINT8 element, symmetric)", 1, 1, 6, 1, true, Specials::FiniteOnly, 8};

struct BlockFormat {
  std::string_view tag;     ///< mxfp8_e4m3, mxfp8_e5m2, mxfp6_e2m3, mxfp6_e3m2, mxfp4, mxint8, nvfp4
  std::string_view name;    ///< descriptive name
  const Format* element;    ///< the element's value set (mxint8: int8_elem)
  bool int_elements;        ///< element codes are two's complement bytes (MXINT8)
  const Format* scale;      ///< ue8m0, or e4m3 used unsigned (NVFP4)
  int block;                ///< elements per block along the blocking axis (a default; any size >= 1 is allowed)
  bool tensor_scale;        ///< a per-tensor fp32 scale multiplies every value (NVFP4)
  ScaleRule default_rule;
  std::string_view source;  ///< where the format is defined

  // ---- derived (never typed twice) ----
  constexpr int element_bits() const { return element->total_bits(); }
  constexpr int emax_elem() const { return element->emax(); }  ///< exponent of the largest element binade
  constexpr int elem_precision() const { return element->precision(); }
  constexpr std::uint32_t element_codes() const { return 1u << element_bits(); }
  constexpr bool pow2_scales() const { return scale->specials == Specials::ScaleOnly; }
  /// The scale code fpcert writes for a block holding a NaN or an Inf: ue8m0 0xFF, e4m3 0x7F.
  constexpr std::uint8_t scale_nan_code() const { return pow2_scales() ? 0xFF : 0x7F; }
  double max_elem() const { return element->max_finite(); }  ///< 448, 57344, 7.5, 28, 6, 127/64, 6
  /// Scale codes a quantizer can write (the NaN code included): ue8m0 0x00..0xFF, e4m3 0x00..0x7F.
  constexpr std::uint32_t scale_codes() const { return pow2_scales() ? 256u : 128u; }
  friend constexpr bool operator==(const BlockFormat& a, const BlockFormat& b) { return a.tag == b.tag; }
};

//                                          tag            name                                element  int    scale   block tensor default            source
inline constexpr BlockFormat mxfp8_e4m3{"mxfp8_e4m3", "MXFP8 (E4M3 elements, E8M0 scale)", &e4m3,     false, &ue8m0, 32, false, ScaleRule::Floor, "OCP MX v1.0, sec. 5 (format), 6.3 (conversion)"};
inline constexpr BlockFormat mxfp8_e5m2{"mxfp8_e5m2", "MXFP8 (E5M2 elements, E8M0 scale)", &e5m2,     false, &ue8m0, 32, false, ScaleRule::Floor, "OCP MX v1.0, sec. 5 (format), 6.3 (conversion)"};
inline constexpr BlockFormat mxfp6_e2m3{"mxfp6_e2m3", "MXFP6 (E2M3 elements, E8M0 scale)", &e2m3,     false, &ue8m0, 32, false, ScaleRule::Floor, "OCP MX v1.0, sec. 5 (format), 6.3 (conversion)"};
inline constexpr BlockFormat mxfp6_e3m2{"mxfp6_e3m2", "MXFP6 (E3M2 elements, E8M0 scale)", &e3m2,     false, &ue8m0, 32, false, ScaleRule::Floor, "OCP MX v1.0, sec. 5 (format), 6.3 (conversion)"};
inline constexpr BlockFormat mxfp4     {"mxfp4",      "MXFP4 (E2M1 elements, E8M0 scale)", &e2m1,     false, &ue8m0, 32, false, ScaleRule::Floor, "OCP MX v1.0, sec. 5 (format), 6.3 (conversion)"};
inline constexpr BlockFormat mxint8    {"mxint8",     "MXINT8 (int8 * 2^-6 elements, E8M0 scale)", &int8_elem, true, &ue8m0, 32, false, ScaleRule::Floor, "OCP MX v1.0, sec. 5 (format), 6.3 (conversion)"};
inline constexpr BlockFormat nvfp4     {"nvfp4",      "NVFP4 (E2M1 elements, UE4M3 scale, fp32 tensor scale)", &e2m1, false, &e4m3, 16, true, ScaleRule::Even, "NVIDIA (Blackwell NVFP4; cuDNN block scaling)"};

std::span<const BlockFormat* const> all_block_formats();
/// By tag (mxfp8_e4m3, ...) or alias (mxfp8 = mxfp8_e4m3, mxfp6 = mxfp6_e3m2, mxfp4_e2m1, ...).
const BlockFormat* find_block_format(std::string_view name);
std::string block_format_tags();
/// Whether a rule applies to a format's scale (Ceil needs power-of-two scales); the reason when not.
bool rule_valid(const BlockFormat& f, ScaleRule r, std::string* why = nullptr);

// ---- scales ----
/// The unclamped exponent e of X = 2^e that an E8M0 rule gives for 0 < amax < Inf (exact).
int pow2_scale_exponent(const BlockFormat& f, ScaleRule r, double amax);
/// The scale code for a block whose largest magnitude is amax (>= 0, finite) or, with nonfinite, a
/// block holding a NaN or an Inf (-> the NaN code). E8M0: e clamped below to -127 (also for amax = 0),
/// above 127 the NaN code. NVFP4: amax / (6 * tensor_scale) rounded into e4m3 by the rule, clamped to
/// [2^-9, 448] (so an all-zero block has scale 2^-9).
std::uint8_t block_scale_code(const BlockFormat& f, ScaleRule r, double amax, bool nonfinite, double tensor_scale = 1);
/// The value a scale code stands for: 2^(c - 127) (0xFF: NaN); NVFP4 the e4m3 value of the code with
/// its sign bit ignored (S.1111.111: NaN).
double scale_value(const BlockFormat& f, std::uint8_t code);
/// NVFP4's per-tensor scale from the tensor's largest finite magnitude: RN_f32(amax / (448 * 6)), so
/// the largest block scale lands on e4m3's largest value; 1 for an all-zero tensor, 2^-149 where the
/// quotient underflows fp32.
double nvfp4_tensor_scale(double amax_tensor);

// ---- elements ----
enum ElementFlag : std::uint8_t {
  kElemInexact = 1,    ///< the element code's value differs from x / scale
  kElemSaturated = 2,  ///< |x| / scale rounded beyond the largest element: clamped to it
  kElemFlushed = 4,    ///< x != 0 became a zero element
};
struct ElementCode {
  std::uint8_t code = 0;
  std::uint8_t flags = 0;
  friend bool operator==(const ElementCode&, const ElementCode&) = default;
};
/// The exact value of an element code, unscaled (float elements: the format's value; MXINT8: the
/// two's complement byte times 2^-6, -128 included, though fpcert never writes it).
double element_value(const BlockFormat& f, std::uint8_t code);
/// The element code of a finite x in a block with scale code `scale` (not the NaN code): x / (scale
/// value * tensor scale) rounded once, saturating to the largest element (clamping, OCP sec. 6.3).
ElementCode quantize_element(const BlockFormat& f, double x, std::uint8_t scale, double tensor_scale, Rounding r,
                             std::uint32_t rbits = 0);
/// The exact value element(code) * scale(scale_code) [* tensor_scale]: NaN for the NaN scale code and for
/// NaN element codes (e4m3, e5m2), +-Inf for e5m2's Inf codes.
double dequantize(const BlockFormat& f, std::uint8_t code, std::uint8_t scale_code, double tensor_scale = 1);
/// Element codes in MXINT8 are two's complement bytes; these map them to and from int8_elem's codes.
std::uint8_t int8_byte_from_code(std::uint64_t sign_magnitude);
std::uint64_t int8_code_from_byte(std::uint8_t byte);

// ---- blocks and tensors ----
struct BlockQuantOptions {
  ScaleRule rule = ScaleRule::Floor;
  Rounding rounding = Rounding::NearestEven;
  int block = 0;             ///< 0: the format's
  int axis = 1;              ///< 1 (or -1): blocks run along rows (the last axis); 0: down columns
  std::uint64_t seed = 0;    ///< stochastic rounding: element (i, j) uses Philox(seed, i * cols + j)
  double tensor_scale = 0;   ///< NVFP4: 0 = nvfp4_tensor_scale(largest finite |x|); else this value
};

struct BlockSummary {
  std::uint8_t scale = 0;
  bool nonfinite = false;       ///< the block held a NaN or an Inf: NaN scale, element codes 0
  bool max_saturated = false;   ///< an element of the block's largest magnitude was clamped
  int saturated = 0, flushed = 0, inexact = 0;
};

/// Quantize one block of n values x[i * stride] (element index for stochastic rounding: flat0 + i *
/// flat_stride) into codes[i * stride].
BlockSummary quantize_block(const BlockFormat& f, const BlockQuantOptions& o, double tensor_scale, const double* x,
                            std::int64_t n, std::int64_t stride, std::uint8_t* codes, std::int64_t flat0 = 0,
                            std::int64_t flat_stride = 1);

/// A quantized rows x cols array (row-major; a 1-D array is one row).
struct BlockTensor {
  const BlockFormat* format = nullptr;
  ScaleRule rule = ScaleRule::Floor;
  Rounding rounding = Rounding::NearestEven;
  int block = 0;
  int axis = 1;
  std::int64_t rows = 0, cols = 0;
  std::vector<std::uint8_t> codes;               ///< rows x cols element codes
  std::int64_t scale_rows = 0, scale_cols = 0;   ///< axis 1: rows x ceil(cols / B); axis 0: ceil(rows / B) x cols
  std::vector<std::uint8_t> scales;
  std::vector<BlockSummary> blocks;              ///< one per scale, same order
  double tensor_scale = 1;                       ///< NVFP4's s_t (1 otherwise)
  std::uint8_t scale_of(std::int64_t i, std::int64_t j) const {
    return axis == 1 ? scales[static_cast<std::size_t>(i * scale_cols + j / block)]
                     : scales[static_cast<std::size_t>((i / block) * scale_cols + j)];
  }
  double value(std::int64_t i, std::int64_t j) const {
    return dequantize(*format, codes[static_cast<std::size_t>(i * cols + j)], scale_of(i, j), tensor_scale);
  }
};

/// Quantize a rows x cols row-major array of exact values (doubles) into blocks along an axis.
/// Throws std::invalid_argument for a rule the format cannot take, a block size < 1 or a bad axis.
BlockTensor quantize_tensor(const BlockFormat& f, const BlockQuantOptions& o, const double* x, std::int64_t rows,
                            std::int64_t cols);
/// Every value of a quantized array, exact (rows x cols row-major).
std::vector<double> dequantize_tensor(const BlockTensor& t);

}  // namespace fpcert
