// plugin/gemm_abi.hpp — a GEMM's declaration in the plugin ABI (fpcert_gemm_traits and fpcert_gemm_order,
// plugin/fpcert_plugin.h): its validation and its translation into KernelTraits, shared by GEMM kernels (plugin/loader.cpp)
// and the matrix products inside attention kernels (plugin/attention_plugin.cpp: fpcert_attention_product).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "kernels/kernel.hpp"

extern "C" {
struct fpcert_gemm_traits;
struct fpcert_gemm_order;
}

namespace fpcert {

/// A format field: required (not NONE), known, and not ue8m0 unless `allow_scale`; the format, or nullptr with one kerr().
const Format* need_format_abi(const std::string& field, std::int32_t v, bool allow_scale, const std::function<void(const std::string&)>& kerr,
                             const std::string& versions);
/// A rounding field: known, and not STOCHASTIC unless `allow_stochastic`.
void need_rounding_abi(const std::string& field, std::int32_t v, bool allow_stochastic, const std::function<void(const std::string&)>& kerr,
                       const std::string& versions);

/// Every problem of a fpcert_gemm_traits, one kerr() call each, each field named with `prefix` ("gemm.",
/// "attention.qk.traits."): formats required and known (not ue8m0), roundings known (stochastic only for the accumulator),
/// exact_products / product_format, promote_every / promote_format, operand_u with its note, the order text required.
/// `versions` is appended where an unknown value may come from a newer minor.
void validate_gemm_traits_abi(const std::string& prefix, const fpcert_gemm_traits& g, const std::function<void(const std::string&)>& kerr,
                              const std::string& versions);
/// Every problem of a fpcert_gemm_order (each kind's required fields, then check_order), fields named with `prefix`
/// ("gemm_order.", "attention.qk.order.").
void validate_gemm_order_abi(const std::string& prefix, const fpcert_gemm_order& g, const std::function<void(const std::string&)>& kerr,
                             const std::string& versions);

/// The order a validated fpcert_gemm_order states.
SummationOrder gemm_order_from_abi(const fpcert_gemm_order& g);
/// The arithmetic a validated fpcert_gemm_traits declares (operands, products, accumulator, promotion, output, the order
/// text); sum_order is `order`, every other field of KernelTraits its default.
KernelTraits gemm_traits_from_abi(const fpcert_gemm_traits& g, const SummationOrder& order);

}  // namespace fpcert
