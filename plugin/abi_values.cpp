// plugin/abi_values.cpp — the plugin ABI's enumerations (plugin/fpcert_plugin.h) translated to fpcert's
// formats, rounding and saturation modes, and status names (split from loader.cpp).
#include <fmt/format.h>

#include <array>

#include "plugin/fpcert_plugin.h"
#include "plugin/loader.hpp"

namespace fpcert {

// ---- ABI values ----------------------------------------------------------------------------

namespace {

// Index = ABI value (fpcert_plugin.h): the order of the FPCERT_FORMAT_* constants.
constexpr std::array<const Format*, 12> kAbiFormats = {nullptr, &f64, &f32, &tf32, &f16, &bf16,
                                                       &e4m3,   &e5m2, &e2m3, &e3m2, &e2m1, &ue8m0};

}  // namespace

std::string abi_format_list() {
  std::string s;
  for (std::size_t i = 1; i < kAbiFormats.size(); ++i) s += fmt::format("{}{} {}", i > 1 ? ", " : "", i, kAbiFormats[i]->tag);
  return s;
}

const Format* format_from_abi(std::int32_t v) {
  return v > 0 && static_cast<std::size_t>(v) < kAbiFormats.size() ? kAbiFormats[static_cast<std::size_t>(v)] : nullptr;
}

std::int32_t format_to_abi(const Format& f) {
  for (std::size_t i = 1; i < kAbiFormats.size(); ++i)
    if (*kAbiFormats[i] == f) return static_cast<std::int32_t>(i);
  return FPCERT_FORMAT_NONE;
}

std::optional<Rounding> rounding_from_abi(std::int32_t v) {
  switch (v) {
    case FPCERT_ROUNDING_NEAREST_EVEN: return Rounding::NearestEven;
    case FPCERT_ROUNDING_NEAREST_AWAY: return Rounding::NearestAway;
    case FPCERT_ROUNDING_TOWARD_ZERO: return Rounding::TowardZero;
    case FPCERT_ROUNDING_UP: return Rounding::Up;
    case FPCERT_ROUNDING_DOWN: return Rounding::Down;
    case FPCERT_ROUNDING_STOCHASTIC: return Rounding::Stochastic;
    default: return std::nullopt;
  }
}

std::optional<Saturation> saturation_from_abi(std::int32_t v) {
  switch (v) {
    case FPCERT_SATURATION_INF: return Saturation::Inf;
    case FPCERT_SATURATION_FINITE: return Saturation::Finite;
    case FPCERT_SATURATION_NAN: return Saturation::NaN;
    default: return std::nullopt;
  }
}

std::string_view status_name(std::int32_t status) {
  switch (status) {
    case FPCERT_STATUS_OK: return "OK";
    case FPCERT_STATUS_NOT_SUPPORTED: return "NOT_SUPPORTED";
    case FPCERT_STATUS_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case FPCERT_STATUS_INTERNAL: return "INTERNAL";
    case FPCERT_STATUS_DEVICE_ERROR: return "DEVICE_ERROR";
    case FPCERT_STATUS_OUT_OF_MEMORY: return "OUT_OF_MEMORY";
    default: return "unknown status";
  }
}

}  // namespace fpcert
