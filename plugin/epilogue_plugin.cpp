// plugin/epilogue_plugin.cpp — fused GEMM epilogues of plugin kernels (ABI minor 8): validation, translation, the call.
#include "plugin/epilogue_plugin.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <utility>

#include "plugin/fpcert_plugin.h"
#include "plugin/loader.hpp"

namespace fpcert {

// The minor 8 layout: gemm_epilogue right after the minor 7 fields, the call's epilogue right after the batch fields;
// on LP64 the sizes are pinned, so that an edit of the header that moves a field fails here instead of breaking every
// built plugin silently.
static_assert(FPCERT_KERNEL_SIZE_MINOR7 + sizeof(fpcert_gemm_epilogue_traits) == FPCERT_KERNEL_SIZE_MINOR8);
// Minor 9: gemm_round_before_bias and its reserved twin right after gemm_epilogue; minor 10 ends with gemm_shape_multiple
// and its reserved twin (after the attention fields).
static_assert(FPCERT_KERNEL_SIZE_MINOR8 + 2 * sizeof(std::int32_t) == FPCERT_KERNEL_SIZE_MINOR9);
static_assert(offsetof(fpcert_kernel, reserved_minor10) + sizeof(std::int32_t) == FPCERT_KERNEL_SIZE_MINOR10);  // minor 11 appends after it
static_assert(offsetof(fpcert_gemm_args, epilogue) == offsetof(fpcert_gemm_args, stride_c) + sizeof(std::int64_t));
static_assert(sizeof(void*) != 8 || (sizeof(fpcert_gemm_epilogue_traits) == 40 && sizeof(fpcert_gemm_epilogue_args) == 48 &&
                                     FPCERT_KERNEL_SIZE_MINOR7 == 576 && sizeof(fpcert_gemm_args) == 216));

namespace {

// The ABI's values and fpcert's, side by side (fpcert_plugin_epilogue.h; kernels/kernel.hpp).
constexpr std::array<std::pair<std::int32_t, BiasKind>, 2> kBias = {{{FPCERT_BIAS_ROW, BiasKind::PerRow}, {FPCERT_BIAS_COLUMN, BiasKind::PerColumn}}};
constexpr std::array<std::pair<std::int32_t, Activation>, 4> kAct = {{{FPCERT_ACTIVATION_RELU, Activation::Relu},
                                                                      {FPCERT_ACTIVATION_GELU_ERF, Activation::GeluErf},
                                                                      {FPCERT_ACTIVATION_GELU_TANH, Activation::GeluTanh},
                                                                      {FPCERT_ACTIVATION_SILU, Activation::Silu}}};
constexpr std::uint32_t kElementaryActs = FPCERT_EPILOGUE_BIT(FPCERT_ACTIVATION_GELU_ERF) |
                                          FPCERT_EPILOGUE_BIT(FPCERT_ACTIVATION_GELU_TANH) | FPCERT_EPILOGUE_BIT(FPCERT_ACTIVATION_SILU);

/// "relu 0x2, gelu_erf 0x4, ...": the mask bits fpcert knows, for messages.
template <class Table>
std::string known_bits(const Table& table) {
  std::string s;
  for (const auto& [abi, ours] : table) s += fmt::format("{}{} 0x{:X}", s.empty() ? "" : ", ", to_string(ours), FPCERT_EPILOGUE_BIT(abi));
  return s;
}

}  // namespace

bool has_epilogue_abi_field(const fpcert_kernel& k) { return k.struct_size >= FPCERT_KERNEL_SIZE_MINOR7 + sizeof(k.gemm_epilogue); }
bool has_round_before_bias_field(const fpcert_kernel& k) { return k.struct_size >= FPCERT_KERNEL_SIZE_MINOR8 + 2 * sizeof(std::int32_t); }
bool has_shape_multiple_field(const fpcert_kernel& k) { return k.struct_size >= offsetof(fpcert_kernel, reserved_minor10) + sizeof(std::int32_t); }

void validate_epilogue_abi(const fpcert_kernel& k, const std::function<void(const std::string&)>& kerr, const std::string& versions) {
  if (!has_epilogue_abi_field(k)) return;
  const fpcert_gemm_epilogue_traits& e = k.gemm_epilogue;
  // Bit 0 is NONE, which every kernel takes: allowed, and ignored.
  if (const std::uint32_t bad = e.bias_kinds & ~(FPCERT_BIAS_KINDS_ALL | 1u))
    kerr(fmt::format("gemm_epilogue.bias_kinds: unknown bits 0x{:X} (valid: FPCERT_EPILOGUE_BIT of FPCERT_BIAS_ROW and "
                     "FPCERT_BIAS_COLUMN: {}){}", bad, known_bits(kBias), versions));
  if (const std::uint32_t bad = e.activations & ~(FPCERT_ACTIVATIONS_ALL | 1u))
    kerr(fmt::format("gemm_epilogue.activations: unknown bits 0x{:X} (valid: FPCERT_EPILOGUE_BIT of an FPCERT_ACTIVATION_*: {}){}", bad,
                     known_bits(kAct), versions));
  if (e.bias_format != FPCERT_FORMAT_NONE) {
    const Format* f = format_from_abi(e.bias_format);
    if (!(e.bias_kinds & FPCERT_BIAS_KINDS_ALL))
      kerr("gemm_epilogue.bias_format must be FPCERT_FORMAT_NONE when no bias kind is declared (bias_kinds 0)");
    else if (!f)
      kerr(fmt::format("gemm_epilogue.bias_format: unknown format value {} (valid: {}; FPCERT_FORMAT_NONE: the output format){}",
                       e.bias_format, abi_format_list(), versions));
    else if (*f == ue8m0)
      kerr("gemm_epilogue.bias_format: ue8m0 is a scale format (no sign, no zero); it is valid only for conversions");
  }
  const bool elementary = (e.activations & kElementaryActs) != 0;
  if (!(e.func_rel_err >= 0 && e.func_rel_err < 1))  // NaN fails both
    kerr(fmt::format("gemm_epilogue.func_rel_err = {}: must be a relative error in [0, 1) (0 only without GELU or SiLU)", e.func_rel_err));
  else if (elementary && e.func_rel_err == 0)
    kerr("gemm_epilogue.func_rel_err is required (> 0) with GELU or SiLU: the relative error of the erf, tanh or exp the "
         "activation calls (e.g. 2^-22 = 2.38e-7 for CUDA's erff, tanhf, expf: 2 ulp); no floating-point function is exact");
  else if (!elementary && e.func_rel_err != 0)
    kerr(fmt::format("gemm_epilogue.func_rel_err = {}: must be 0 when neither GELU nor SiLU is declared (ReLU calls no elementary "
                     "function)", e.func_rel_err));
  else if (e.func_rel_err > 0 && (!e.func_note || !*e.func_note))
    kerr("gemm_epilogue.func_note is required when func_rel_err > 0 (where the error comes from: a library's documented ulps)");
  for (const auto& [field, v] : {std::pair<const char*, std::int32_t>{"round_before_act", e.round_before_act}, {"amax", e.amax}})
    if (v != 0 && v != 1) kerr(fmt::format("gemm_epilogue.{} = {}: 0 or 1{}", field, v, versions));
  // 2, scale_a and scale_b without scale_d, from minor 10 (a kernel as long as minor 10's).
  if (e.fp8_scaling != 0 && e.fp8_scaling != 1 && !(e.fp8_scaling == 2 && has_shape_multiple_field(k)))
    kerr(fmt::format("gemm_epilogue.fp8_scaling = {}: 0, 1 or (ABI minor 10) 2{}", e.fp8_scaling, versions));
  if (has_round_before_bias_field(k)) {  // minor 9
    if (k.gemm_round_before_bias != 0 && k.gemm_round_before_bias != 1)
      kerr(fmt::format("gemm_round_before_bias = {}: 0 or 1{}", k.gemm_round_before_bias, versions));
    else if (k.gemm_round_before_bias == 1 && e.bias_kinds == 0)
      kerr("gemm_round_before_bias = 1 without a bias (gemm_epilogue.bias_kinds is 0): it describes where the bias is added");
    if (k.reserved_minor9 != 0) kerr(fmt::format("reserved_minor9 = {}: must be 0{}", k.reserved_minor9, versions));
  }
}

EpilogueTraits epilogue_from_abi(const fpcert_kernel& k) {
  EpilogueTraits t;
  if (!has_epilogue_abi_field(k)) return t;
  const fpcert_gemm_epilogue_traits& e = k.gemm_epilogue;
  for (const auto& [abi, ours] : kBias)
    if (e.bias_kinds & FPCERT_EPILOGUE_BIT(abi)) t.bias |= bit(ours);
  for (const auto& [abi, ours] : kAct)
    if (e.activations & FPCERT_EPILOGUE_BIT(abi)) t.activations |= bit(ours);
  t.bias_format = t.bias ? format_from_abi(e.bias_format) : nullptr;  // NONE: nullptr, the output format
  t.func_rel_err = e.func_rel_err;
  t.func_note = e.func_note ? e.func_note : "";
  t.round_before_act = e.round_before_act == 1;
  t.round_before_bias = has_round_before_bias_field(k) && k.gemm_round_before_bias == 1;  // minor 9; older: 0
  t.fp8_scaling = e.fp8_scaling == 1 || e.fp8_scaling == 2;
  t.fp8_scale_d = e.fp8_scaling != 2;  // 2: scale_a and scale_b only (minor 10)
  t.amax = e.amax == 1;
  return t;
}

std::string epilogue_call_problem(const EpilogueTraits& t, const GemmOperands& ops) {
  if (!t.takes(ops.bias_kind)) return fmt::format("a bias per {}, which the kernel does not declare", to_string(ops.bias_kind));
  if (!t.takes(ops.activation)) return fmt::format("the activation {}, which the kernel does not declare", to_string(ops.activation));
  if (!t.fp8_scaling && (ops.scale_a != 1 || ops.scale_b != 1 || ops.scale_d != 1))
    return "FP8 scale factors, which the kernel does not declare (fp8_scaling 0)";
  if (!t.amax && ops.amax) return "amax, which the kernel does not declare";
  return {};
}

void epilogue_args_to_abi(const GemmOperands& ops, fpcert_gemm_epilogue_args& out) {
  out = fpcert_gemm_epilogue_args{};
  for (const auto& [abi, ours] : kBias)
    if (ops.bias_kind == ours) out.bias_kind = abi;
  for (const auto& [abi, ours] : kAct)
    if (ops.activation == ours) out.activation = abi;
  out.bias = ops.bias_kind == BiasKind::None ? nullptr : ops.bias;
  out.scale_a = ops.scale_a;
  out.scale_b = ops.scale_b;
  out.scale_d = ops.scale_d;
  out.amax = ops.amax;
}

}  // namespace fpcert
