// plugin/loader.hpp — loads plugins built against plugin/fpcert_plugin.h (installed
// as <fpcert/plugin.h>), validates what they declare, and makes their kernels fpcert kernels.
//
// load_plugin() dlopens a library (RTLD_NOW | RTLD_LOCAL), looks up fpcert_plugin_enumerate, refuses
// another ABI major (naming both versions), validates every descriptor (known enum values,
// consistent traits, unique names) and registers each GEMM kernel in the kernel registry (backend
// plugin, memory space as declared) and each conversion kernel (a PluginConverter, operation
// conversion) in the same registry. Anything wrong is a PluginError (an InputError: exit 2, before
// anything runs).
//
// At run time a plugin's status codes become fpcert's verdicts: NOT_SUPPORTED → NotSupportedError
// ("not supported"), every other failure → DeviceError with the plugin's message (crashed, exit 3).
// Plugin functions are called from noexcept frames: a C++ exception that escapes a plugin ends the
// process (std::terminate), which isolation (--isolate, the default with plugins) reports as the
// case "crashed"; nothing a plugin does escapes into fpcert as an exception.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "kernels/kernel.hpp"
#include "oracle/round.hpp"

extern "C" {
struct fpcert_plugin_info;
struct fpcert_kernel;
}

namespace fpcert {

/// A plugin that cannot be used: not loadable, no symbol, other ABI major, invalid descriptors.
struct PluginError : InputError {
  using InputError::InputError;
};

/// What load_plugin() found in a library.
struct PluginSummary {
  std::string path;               ///< as given
  std::string resolved;           ///< realpath, the identity used to load a library once
  std::string name, version;      ///< the plugin's own name and version
  std::uint32_t abi_major = 0, abi_minor = 0;
  std::vector<std::string> gemm_kernels;        ///< registered in the kernel registry
  std::vector<std::string> conversion_kernels;  ///< registered too (make_conversion_kernel)
  std::vector<std::string> reduction_kernels;   ///< ABI minor 3: registered too (make_reduce_kernel)
  std::vector<std::string> softmax_kernels;     ///< ABI minor 6: registered too (make_softmax_kernel)
  std::vector<std::string> norm_kernels;        ///< ABI minor 6: registered too (make_norm_kernel)
  std::vector<std::string> attention_kernels;     ///< ABI minor 10: registered too (make_attention_kernel)
  std::vector<std::string> attention_bwd_kernels; ///< ABI minor 10: registered too (make_attention_bwd_kernel)
  std::vector<std::string> eltwise_kernels;       ///< ABI minor 11: registered too (make_eltwise_kernel)
};

/// Load a plugin (once per resolved path: a second call returns the first summary) and register
/// its kernels. Throws PluginError with a message naming the library and what is wrong.
const PluginSummary& load_plugin(const std::string& path);
/// Every plugin loaded so far, in load order.
const std::vector<PluginSummary>& loaded_plugins();

/// Check a plugin's table against this fpcert (ABI version, sizes, enum values, traits, names) and
/// return one line per problem (empty: valid). `origin` prefixes each line (the library path).
/// Names already in the kernel registry count as taken.
std::vector<std::string> validate_plugin_info(const fpcert_plugin_info* info, const std::string& origin);

/// Register the kernels of an already validated table (what load_plugin does after validation);
/// for tests that build a table in-process. `keepalive` is held by every kernel made from it.
PluginSummary register_plugin_info(const fpcert_plugin_info* info, const std::string& origin,
                                   std::shared_ptr<void> keepalive = {});

/// State the summation order of a plugin GEMM kernel that declares none (order unknown: built against
/// ABI minor 0, or FPCERT_ORDER_UNKNOWN): fpcert.toml's [orders], certify's --order. Kernels made from
/// then on carry it. Throws InputError naming the kernel when it is unknown, not a plugin kernel, or
/// declares an order of its own (naming both), or when the order is malformed.
void declare_plugin_order(const std::string& kernel, const SummationOrder& order);

/// State that a plugin GEMM kernel is nondeterministic run to run (fpcert.toml's [determinism]; a plugin of ABI
/// minor 0 or 1 cannot say it): kernels made from then on carry it. Throws InputError naming the kernel when it is
/// unknown, not a plugin GEMM kernel, declares run_to_run itself while the configuration says deterministic, or
/// when its order contradicts the declaration (a fixed order: run_to_run needs unknown or splitk:combine=atomic).
void declare_plugin_determinism(const std::string& kernel, Determinism d);

/// plugin/determinism.cpp: what a kernel declares about run-to-run determinism (ABI minor 2; kernels of minors 0
/// and 1 end before the field: deterministic), or what declare_plugin_determinism stated for it; `note` receives
/// where it comes from. And why the field is invalid (empty: valid): required (0 refused), a known value, coherent
/// with `order` (the kernel's declared order: determinism_problem).
Determinism determinism_of(const fpcert_kernel& k, std::string* note = nullptr);
std::string determinism_abi_problem(const fpcert_kernel& k, const SummationOrder& order);

// ---- translation of ABI values (nullptr / nullopt for unknown values) ----
const Format* format_from_abi(std::int32_t v);
std::int32_t format_to_abi(const Format& f);
/// "1 f64, 2 f32, ...": the valid format values, for messages.
std::string abi_format_list();
std::optional<Rounding> rounding_from_abi(std::int32_t v);
std::optional<Saturation> saturation_from_abi(std::int32_t v);
/// The NaN convention of an fpcert_nan_payload value in a plugin built for ABI minor `abi_minor`: 1, 2 in
/// every minor, 3 nvidia, 4 any, 5 ml_dtypes from minor 2; nullopt for any other value.
std::optional<NanPayload> nan_payload_from_abi(std::int32_t v, std::uint32_t abi_minor);
std::int32_t nan_payload_to_abi(NanPayload n);
/// States the NaN convention of a plugin conversion kernel from outside its plugin (fpcert.toml [nan],
/// docs/plugin.md): for a kernel of ABI minor 0 or 1, which could only say preserve or canonical. InputError
/// for an unknown kernel, one not of a plugin, not a conversion, a convention its destination cannot have,
/// or one that contradicts what a minor 2 plugin declares.
void declare_plugin_nan(const std::string& kernel, NanPayload n);
/// The convention declare_plugin_nan stated for a kernel, if any.
std::optional<NanPayload> plugin_nan_override(const std::string& kernel);
std::string_view status_name(std::int32_t status);

/// A conversion kernel of a plugin (registered in the kernel registry, operation conversion): converts
/// codes under the rounding, saturation and NaN payload the plugin claims, in its memory space.
/// Throws NotSupportedError (the plugin said NOT_SUPPORTED) or DeviceError (any other failure).
class PluginConverter final : public ConversionKernel {
 public:
  /// abi_minor: the plugin's (a PRESERVE of minor 0 or 1 keeps its leniency: ConversionTraits::nan_counted_apart).
  PluginConverter(const fpcert_kernel* desc, std::string origin, std::shared_ptr<void> keepalive, std::uint32_t abi_minor = 2);
  const std::string& name() const override { return name_; }
  std::string description() const override { return description_; }
  Backend backend() const override { return Backend::Plugin; }
  MemorySpace memory() const override { return memory_; }
  const ConversionTraits& conversion() const override { return traits_; }
  const std::string& origin() const { return origin_; }
  std::uint32_t abi_minor() const { return abi_minor_; }
  void run(const ConvertOperands& ops) override;

 private:
  const fpcert_kernel* desc_;
  std::string origin_, name_, description_;
  ConversionTraits traits_;
  MemorySpace memory_;
  std::shared_ptr<void> keepalive_;
  std::uint32_t abi_minor_ = 2;
};

}  // namespace fpcert
