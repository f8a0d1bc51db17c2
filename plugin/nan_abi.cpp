// plugin/nan_abi.cpp — NaN conventions at the plugin boundary: fpcert_nan_payload values by ABI minor, and
// the conventions fpcert.toml's [nan] states for plugin conversion kernels (docs/plugin.md).
#include <fmt/format.h>

#include <map>

#include "base/error.hpp"
#include "plugin/fpcert_plugin.h"
#include "plugin/loader.hpp"

namespace fpcert {
namespace {

/// NaN conventions stated for plugin conversion kernels outside their plugin (declare_plugin_nan), by name.
std::map<std::string, NanPayload>& nan_overrides() {
  static std::map<std::string, NanPayload> m;
  return m;
}

}  // namespace

std::optional<NanPayload> nan_payload_from_abi(std::int32_t v, std::uint32_t abi_minor) {
  switch (v) {
    case FPCERT_NAN_PRESERVE: return NanPayload::Preserve;
    case FPCERT_NAN_CANONICAL: return NanPayload::Canonical;
    case FPCERT_NAN_NVIDIA: return abi_minor >= 2 ? std::optional(NanPayload::Nvidia) : std::nullopt;
    case FPCERT_NAN_ANY: return abi_minor >= 2 ? std::optional(NanPayload::Any) : std::nullopt;
    case FPCERT_NAN_ML_DTYPES: return abi_minor >= 2 ? std::optional(NanPayload::MlDtypes) : std::nullopt;
    default: return std::nullopt;
  }
}

std::int32_t nan_payload_to_abi(NanPayload n) {
  switch (n) {
    case NanPayload::Preserve: return FPCERT_NAN_PRESERVE;
    case NanPayload::Canonical: return FPCERT_NAN_CANONICAL;
    case NanPayload::Nvidia: return FPCERT_NAN_NVIDIA;
    case NanPayload::Any: return FPCERT_NAN_ANY;
    case NanPayload::MlDtypes: return FPCERT_NAN_ML_DTYPES;
  }
  return 0;
}

std::optional<NanPayload> plugin_nan_override(const std::string& kernel) {
  const auto it = nan_overrides().find(kernel);
  return it == nan_overrides().end() ? std::nullopt : std::optional(it->second);
}

void declare_plugin_nan(const std::string& kernel, NanPayload n) {
  const KernelInfo* ki = find_kernel_info(kernel);
  if (!ki) throw InputError(fmt::format("NaN convention for '{}': no such kernel (fpcert kernels lists them; is its plugin loaded?)", kernel));
  if (ki->backend != Backend::Plugin)
    throw InputError(fmt::format("NaN convention for '{}': a built-in kernel declares its own; only plugin kernels take one from fpcert.toml",
                                 kernel));
  if (ki->operation != Operation::Conversion) throw InputError(fmt::format("NaN convention for '{}': not a conversion kernel", kernel));
  nan_overrides().erase(kernel);
  const auto k = make_conversion_kernel(kernel);
  const auto* pc = dynamic_cast<const PluginConverter*>(k.get());
  const ConversionTraits& t = k->conversion();
  if (const std::string why = nan_payload_problem(*t.dst, n); !why.empty())
    throw InputError(fmt::format("NaN convention for '{}': {}", kernel, why));
  // A minor 2 kernel states its convention itself; a minor 0/1 kernel could only say preserve or canonical,
  // which the configuration may replace by what it writes.
  if (pc && pc->abi_minor() >= 2 && t.rounder.nan != n)
    throw InputError(fmt::format("NaN convention for '{}': its plugin declares {}, the configuration says {}; remove one", kernel,
                                 to_string(t.rounder.nan), to_string(n)));
  nan_overrides()[kernel] = n;
}

}  // namespace fpcert
