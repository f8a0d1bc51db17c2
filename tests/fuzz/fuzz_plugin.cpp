// tests/fuzz/fuzz_plugin.cpp — libFuzzer target: what fpcert checks of a plugin before trusting it.
// The first byte picks the checker: the ELF header and segment bounds of a library file
// (plugin/elf_check.hpp, before dlopen), or the plugin's table (validate_plugin_info: ABI version,
// struct sizes, names, enum values, traits) built from the bytes. Neither may crash, read out of
// bounds or throw; a table the validator accepts can be turned into kernel traits.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <cstdlib>
#include <string>
#include <vector>

#include "plugin/elf_check.hpp"
#include "plugin/fpcert_plugin.h"
#include "plugin/loader.hpp"

namespace {

std::int32_t gemm_run(void*, const fpcert_gemm_args*, void*, std::size_t, void*, char*, std::size_t) { return FPCERT_STATUS_OK; }
std::int32_t conversion_run(void*, const fpcert_conversion_args*, void*, char*, std::size_t) { return FPCERT_STATUS_OK; }
std::int32_t softmax_run(void*, const fpcert_softmax_args*, void*, char*, std::size_t) { return FPCERT_STATUS_OK; }
std::int32_t norm_run(void*, const fpcert_norm_args*, void*, char*, std::size_t) { return FPCERT_STATUS_OK; }
std::int32_t attention_run(void*, const fpcert_attention_args*, void*, char*, std::size_t) { return FPCERT_STATUS_OK; }
std::int32_t eltwise_run(void*, const fpcert_eltwise_args*, void*, char*, std::size_t) { return FPCERT_STATUS_OK; }
std::int32_t attention_bwd_run(void*, const fpcert_attention_bwd_args*, void*, char*, std::size_t) { return FPCERT_STATUS_OK; }

/// An enum value: mostly a valid one, sometimes anything.
std::int32_t pick(FuzzedDataProvider& p, std::int32_t lo, std::int32_t hi) {
  return p.ConsumeBool() ? p.ConsumeIntegralInRange<std::int32_t>(lo, hi) : p.ConsumeIntegral<std::int32_t>();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider p(data, size);
  if (p.ConsumeBool()) {
    const std::string bytes = p.ConsumeRemainingBytesAsString();
    // The file may be longer than what was read (the size comes from fstat): try both.
    (void)fpcert::elf_problem(bytes, bytes.size());
    (void)fpcert::elf_problem(bytes, bytes.size() + 4096);
    return 0;
  }
  fpcert_plugin_info info{};
  info.abi_major = p.ConsumeBool() ? FPCERT_PLUGIN_ABI_MAJOR : p.ConsumeIntegral<std::uint32_t>();
  info.abi_minor = p.ConsumeBool() ? FPCERT_PLUGIN_ABI_MINOR : p.ConsumeIntegral<std::uint32_t>();
  info.struct_size = p.ConsumeBool() ? sizeof(fpcert_plugin_info) : p.ConsumeIntegral<std::uint32_t>();
  info.kernel_struct_size = p.ConsumeBool() ? sizeof(fpcert_kernel) : p.ConsumeIntegral<std::uint32_t>();
  const std::string plugin_name = p.ConsumeRandomLengthString(64);
  const std::string plugin_version = p.ConsumeRandomLengthString(32);
  info.plugin_name = p.ConsumeBool() ? plugin_name.c_str() : nullptr;
  info.plugin_version = p.ConsumeBool() ? plugin_version.c_str() : nullptr;
  const std::uint32_t count = p.ConsumeIntegralInRange<std::uint32_t>(0, 6);
  std::vector<fpcert_kernel> kernels(count);
  std::vector<std::string> texts;  // names, descriptions, notes and orders stay alive while validated
  texts.reserve(16 * count);  // at most 15 a kernel: no reallocation moves a c_str() already taken
  for (auto& k : kernels) {
    k.struct_size = p.ConsumeBool() ? sizeof(fpcert_kernel) : p.ConsumeIntegral<std::uint32_t>();
    k.operation = pick(p, 0, 8);
    texts.push_back(p.ConsumeRandomLengthString(140));
    k.name = p.ConsumeBool() ? texts.back().c_str() : nullptr;
    texts.push_back(p.ConsumeRandomLengthString(40));
    k.description = p.ConsumeBool() ? texts.back().c_str() : nullptr;
    k.memory = pick(p, 0, 3);
    auto& g = k.gemm;
    g.a_input = pick(p, 0, 12);
    g.b_input = pick(p, 0, 12);
    g.input_rounding = pick(p, 0, 7);
    g.a_operand = pick(p, 0, 12);
    g.b_operand = pick(p, 0, 12);
    g.exact_products = pick(p, 0, 2);
    g.product_format = pick(p, 0, 12);
    g.acc_format = pick(p, 0, 12);
    g.acc_rounding = pick(p, 0, 7);
    g.promote_every = pick(p, -2, 256);
    g.promote_format = pick(p, 0, 12);
    g.out_format = pick(p, 0, 12);
    g.operand_u = p.ConsumeBool() ? p.ConsumeProbability<double>() : p.ConsumeFloatingPoint<double>();
    texts.push_back(p.ConsumeRandomLengthString(40));
    g.operand_note = p.ConsumeBool() ? texts.back().c_str() : nullptr;
    texts.push_back(p.ConsumeRandomLengthString(40));
    g.order = p.ConsumeBool() ? texts.back().c_str() : nullptr;
    k.gemm_run = p.ConsumeBool() ? gemm_run : nullptr;
    auto& c = k.conversion;
    c.src_format = pick(p, 0, 12);
    c.dst_format = pick(p, 0, 12);
    c.rounding = pick(p, 0, 7);
    c.saturation = pick(p, 0, 4);
    c.nan_payload = pick(p, 0, 6);  // 0 and 6 invalid; 3-5 valid from minor 2, by destination
    k.conversion_run = p.ConsumeBool() ? conversion_run : nullptr;
    // Softmax and norm (minor 6): every enum and number, the elementary functions' sources.
    auto elem_fn = [&](fpcert_elem_fn_error& e) {
      e.implementation = pick(p, 0, 8);
      e.ulps = p.ConsumeFloatingPoint<double>();
      e.ulps_per_x = p.ConsumeBool() ? 0.0 : p.ConsumeFloatingPoint<double>();
      e.abs_error = p.ConsumeBool() ? 0.0 : p.ConsumeFloatingPoint<double>();
      texts.push_back(p.ConsumeRandomLengthString(40));
      e.source = p.ConsumeBool() ? texts.back().c_str() : nullptr;
    };
    auto& sm = k.softmax;
    sm.fn = pick(p, 0, 3);
    sm.shift = pick(p, 0, 4);
    sm.x_input = pick(p, 0, 12);
    sm.compute_format = pick(p, 0, 12);
    sm.sum_format = pick(p, 0, 12);
    sm.sum_order = pick(p, 0, 6);
    sm.sum_block = pick(p, -1, 64);
    sm.sum_lanes = pick(p, -1, 64);
    sm.sum_chain_from_first = pick(p, 0, 2);
    sm.reciprocal = pick(p, 0, 2);
    sm.out_format = pick(p, 0, 12);
    sm.masked_rows = pick(p, 0, 3);
    sm.accepts_mask = pick(p, 0, 2);
    elem_fn(sm.exp);
    if (p.ConsumeBool()) elem_fn(sm.log);
    k.softmax_run = p.ConsumeBool() ? softmax_run : nullptr;
    auto& nm = k.norm;
    nm.kind = pick(p, 0, 3);
    nm.variance = pick(p, 0, 5);
    nm.welford_parts = p.ConsumeBool() ? pick(p, -2, 64) : 0;
    nm.x_input = pick(p, 0, 12);
    nm.compute_format = pick(p, 0, 12);
    nm.acc_format = pick(p, 0, 12);
    nm.out_format = pick(p, 0, 12);
    nm.eps_placement = pick(p, 0, 3);
    elem_fn(nm.rsqrt);
    k.norm_run = p.ConsumeBool() ? norm_run : nullptr;
    // The fused epilogue (minor 8): masks with unknown bits, any format, func_rel_err anywhere (NaN, negative), flags.
    auto& ep = k.gemm_epilogue;
    ep.bias_kinds = p.ConsumeBool() ? p.ConsumeIntegralInRange<std::uint32_t>(0, 7) : p.ConsumeIntegral<std::uint32_t>();
    ep.bias_format = pick(p, 0, 12);
    ep.activations = p.ConsumeBool() ? p.ConsumeIntegralInRange<std::uint32_t>(0, 31) : p.ConsumeIntegral<std::uint32_t>();
    ep.round_before_act = pick(p, 0, 2);
    ep.func_rel_err = p.ConsumeBool() ? p.ConsumeProbability<double>() : p.ConsumeFloatingPoint<double>();
    texts.push_back(p.ConsumeRandomLengthString(40));
    ep.func_note = p.ConsumeBool() ? texts.back().c_str() : nullptr;
    ep.fp8_scaling = pick(p, 0, 2);
    ep.amax = pick(p, 0, 2);
    // Attention (minor 10): every enum, flag, mask, head-dim list and number; its products as the GEMM's traits above,
    // each with an order of any kind.
    auto product = [&](fpcert_attention_product& pr) {
      pr.traits = g;
      pr.order.kind = pick(p, 0, 8);
      pr.order.step = pick(p, 0, 3);
      pr.order.outer = pick(p, 0, 4);
      pr.order.splits = pick(p, -1, 8);
    };
    auto takes = [&](std::uint32_t& masks, std::int32_t& grouped, std::int32_t& count_dims, std::int32_t* dims) {
      masks = p.ConsumeBool() ? p.ConsumeIntegralInRange<std::uint32_t>(0, 7) : p.ConsumeIntegral<std::uint32_t>();
      grouped = pick(p, 0, 2);
      count_dims = pick(p, -1, 9);
      for (int d = 0; d < FPCERT_ATTENTION_MAX_HEAD_DIMS; ++d) dims[d] = p.ConsumeBool() ? 0 : pick(p, -1, 256);
    };
    auto& at = k.attention;
    at.input = pick(p, 0, 12);
    product(at.qk);
    product(at.pv);
    at.shift = pick(p, 0, 4);
    at.key_block = pick(p, -1, 64);
    at.exp_form = pick(p, 0, 3);
    at.writes_lse = pick(p, 0, 2);
    elem_fn(at.exp);
    if (p.ConsumeBool()) elem_fn(at.log);
    at.sum_format = pick(p, 0, 12);
    at.normalize = pick(p, 0, 4);
    at.out_format = pick(p, 0, 12);
    at.masked_rows = pick(p, 0, 3);
    at.masked_lse = pick(p, 0, 3);
    takes(at.masks, at.grouped_heads, at.head_dim_count, at.head_dims);
    at.score_rel = p.ConsumeBool() ? 0.0 : p.ConsumeFloatingPoint<double>();
    texts.push_back(p.ConsumeRandomLengthString(40));
    at.note = p.ConsumeBool() ? texts.back().c_str() : nullptr;
    k.attention_run = p.ConsumeBool() ? attention_run : nullptr;
    auto& ab = k.attention_bwd;
    ab.input = pick(p, 0, 12);
    for (fpcert_attention_product* pr : {&ab.qk, &ab.dov, &ab.pdo, &ab.dsk, &ab.dsq}) product(*pr);
    ab.exp_form = pick(p, 0, 3);
    ab.reads_saved = pick(p, 0, 2);
    elem_fn(ab.exp);
    ab.d_acc = pick(p, 0, 12);
    ab.compute_format = pick(p, 0, 12);
    ab.dq_determinism = pick(p, 0, 3);
    ab.dq_acc = pick(p, 0, 12);
    ab.dq_out = pick(p, 0, 12);
    ab.dk_out = pick(p, 0, 12);
    ab.dv_out = pick(p, 0, 12);
    ab.masked_lse = pick(p, 0, 3);
    takes(ab.masks, ab.grouped_heads, ab.head_dim_count, ab.head_dims);
    ab.reserved = pick(p, 0, 1);
    k.attention_bwd_run = p.ConsumeBool() ? attention_bwd_run : nullptr;
    // Elementwise (minor 11): any function, format, claim kind, flag bits, domains and numbers (NaN, negative, infinite).
    auto& el = k.eltwise;
    el.fn = pick(p, 0, 33);
    el.in = pick(p, 0, 12);
    el.out = pick(p, 0, 12);
    el.claim = pick(p, 0, 5);
    el.flags = p.ConsumeBool() ? p.ConsumeIntegralInRange<std::uint32_t>(0, 7) : p.ConsumeIntegral<std::uint32_t>();
    el.has_domain = pick(p, -1, 2);
    for (double* d : {&el.ulps, &el.ulp_slope, &el.bound, &el.lo, &el.hi, &el.x2_lo, &el.x2_hi}) *d = p.ConsumeBool() ? 0.0 : p.ConsumeFloatingPoint<double>();
    texts.push_back(p.ConsumeRandomLengthString(40));
    el.claim_source = p.ConsumeBool() ? texts.back().c_str() : nullptr;
    k.eltwise_run = p.ConsumeBool() ? eltwise_run : nullptr;
  }
  info.kernel_count = p.ConsumeBool() ? count : p.ConsumeIntegralInRange<std::uint32_t>(0, count);
  info.kernels = count && p.ConsumeBool() ? kernels.data() : nullptr;
  // A table whose declared stride is longer than this fpcert's entry (a newer minor) is laid out at that
  // stride, as such a plugin's would be; the validator decides whether the stride is acceptable.
  std::vector<std::max_align_t> wide;
  if (info.kernels && info.kernel_struct_size > sizeof(fpcert_kernel) && info.kernel_struct_size <= 65536) {
    wide.resize((count * info.kernel_struct_size + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t));
    for (std::uint32_t i = 0; i < count; ++i)
      std::memcpy(reinterpret_cast<char*>(wide.data()) + std::size_t{i} * info.kernel_struct_size, &kernels[i], sizeof(fpcert_kernel));
    info.kernels = reinterpret_cast<const fpcert_kernel*>(wide.data());
  }
  if (!info.kernels) info.kernel_count = p.ConsumeBool() ? 0 : info.kernel_count;  // a NULL table with a count
  try {
    (void)fpcert::validate_plugin_info(&info, "fuzz.so");
  } catch (...) {
    std::abort();  // the validator reports problems as lines, never by throwing
  }
  return 0;
}
