// plugin/loader.hpp — loads plugins built against plugin/fpcert_plugin.h (installed
// as <fpcert/plugin.h>), validates what they declare, and makes their kernels fpcert kernels.
//
// load_plugin() dlopens a library (RTLD_NOW | RTLD_LOCAL), looks up fpcert_plugin_enumerate, refuses
// another ABI major (naming both versions), validates every descriptor (known enum values,
// consistent traits, unique names) and registers each GEMM kernel in the kernel registry (backend
// plugin, memory space as declared) and each conversion kernel as a PluginConverter. Anything wrong
// is a PluginError (an InputError: exit 2, before anything runs).
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
#include "oracle/convert_check.hpp"
#include "oracle/round.hpp"

extern "C" {
struct fpcert_plugin_info;
struct fpcert_kernel;
}

namespace fpcert {

class DeviceApi;

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
  std::vector<std::string> conversion_kernels;  ///< available through make_plugin_converter
};

/// Load a plugin (once per resolved path: a second call returns the first summary) and register
/// its kernels. Throws PluginError with a message naming the library and what is wrong.
const PluginSummary& load_plugin(const std::string& path);
/// Every plugin loaded so far, in load order.
const std::vector<PluginSummary>& loaded_plugins();

/// Check a plugin's table against this fpcert (ABI version, sizes, enum values, traits, names) and
/// return one line per problem (empty: valid). `origin` prefixes each line (the library path).
/// Names already in the kernel registry or among loaded conversion kernels count as taken.
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

// ---- translation of ABI values (nullptr / nullopt for unknown values) ----
const Format* format_from_abi(std::int32_t v);
std::int32_t format_to_abi(const Format& f);
std::optional<Rounding> rounding_from_abi(std::int32_t v);
std::optional<Saturation> saturation_from_abi(std::int32_t v);
std::string_view status_name(std::int32_t status);

/// A conversion kernel of a plugin: converts codes of src() into codes of dst() under rounder(),
/// in its memory space. Throws NotSupportedError (the plugin said NOT_SUPPORTED) or DeviceError.
class PluginConverter {
 public:
  PluginConverter(const fpcert_kernel* desc, std::string origin, std::shared_ptr<void> keepalive);
  const std::string& name() const { return name_; }
  std::string description() const { return description_; }
  const std::string& origin() const { return origin_; }
  const Format& src() const { return *src_; }
  const Format& dst() const { return *dst_; }
  /// The rounding, saturation and NaN payload the plugin claims.
  const Rounder& rounder() const { return rounder_; }
  MemorySpace memory() const { return memory_; }
  /// dst[i] = convert(src[i]) for i < count; pointers in memory(), codes in their containers.
  void run(const void* src, void* dst, std::int64_t count, void* stream);

 private:
  const fpcert_kernel* desc_;
  std::string origin_, name_, description_;
  const Format* src_;
  const Format* dst_;
  Rounder rounder_;
  MemorySpace memory_;
  std::shared_ptr<void> keepalive_;
};

/// A conversion kernel of a loaded plugin by name; nullptr when unknown.
std::unique_ptr<PluginConverter> make_plugin_converter(const std::string& name);
/// Names of the loaded conversion kernels, sorted.
std::vector<std::string> plugin_converter_names();

/// The exhaustive check of a plugin conversion: source codes [spec.first, spec.first + count) in
/// chunks, each converted by the plugin (through `api`: host memory, or device memory with copies)
/// into an output pre-filled with a pattern and followed by guard bytes, then compared pattern by
/// pattern with the model and MPFR by check_conversion_chunk (spec.src/dst/rounder must be the
/// converter's). Guard bytes overwritten → DeviceError naming the offset; a chunk that does not
/// finish within timeout_ms → DeviceError ("hung"). progress(fraction) is called after each chunk.
ConvertCheckResult check_plugin_conversion(PluginConverter& conv, const ConvertCheckSpec& spec, DeviceApi& api,
                                           const std::function<void(double)>& progress = {},
                                           double timeout_ms = 600000, std::uint64_t chunk = std::uint64_t{1} << 20);

}  // namespace fpcert
