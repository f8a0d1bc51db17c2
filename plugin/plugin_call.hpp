// plugin/plugin_call.hpp — calling into a plugin (plugin/loader.cpp, plugin/reduce_plugin.cpp): every plugin function
// runs from a noexcept frame with a terminate handler that names the kernel, the floating-point environment restored
// afterwards, and its message buffer owned by fpcert.
#pragma once

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "base/error.hpp"
#include "base/fpenv.hpp"
#include "plugin/fpcert_plugin.h"
#include "plugin/loader.hpp"

namespace fpcert::plugin_detail {

// ---- calling into a plugin -------------------------------------------------------------------

/// Which plugin function is running, for the terminate handler's message.
inline thread_local const char* g_in_plugin_kernel = nullptr;
inline thread_local const char* g_in_plugin_function = nullptr;

[[noreturn]] inline void plugin_terminate_handler() {
  std::string what = "an exception of unknown type";
  if (const auto ep = std::current_exception()) {
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = std::string("std::exception: ") + e.what();
    } catch (...) {
    }
  }
  std::fprintf(stderr,
               "fpcert: plugin kernel '%s' let a C++ exception escape from %s() (%s). The plugin ABI forbids "
               "exceptions across the boundary (docs/plugin.md): the process ends here; with --isolate the case "
               "is reported as crashed.\n",
               g_in_plugin_kernel ? g_in_plugin_kernel : "?", g_in_plugin_function ? g_in_plugin_function : "?",
               what.c_str());
  std::fflush(stderr);
  std::abort();
}

/// Calls a plugin function from a noexcept frame: an exception escaping the plugin cannot unwind
/// into fpcert (it reaches std::terminate, whose handler names the kernel and aborts). The caller's
/// floating-point environment (rounding mode, FTZ/DAZ) is restored afterwards, whatever the plugin set.
template <class Fn, class... Args>
std::int32_t call_plugin(const std::string& kernel, const char* function, Fn fn, Args... args) noexcept {
  const FpEnvRestore fp_env;
  g_in_plugin_kernel = kernel.c_str();
  g_in_plugin_function = function;
  const std::terminate_handler previous = std::set_terminate(plugin_terminate_handler);
  const std::int32_t st = fn(args...);
  std::set_terminate(previous);
  g_in_plugin_kernel = nullptr;
  g_in_plugin_function = nullptr;
  return st;
}

/// fpcert's side of the message buffer: zeroed, and NUL-terminated whatever the plugin wrote.
struct Message {
  std::array<char, 2048> buf{};
  std::string text() {
    buf.back() = '\0';
    return std::string(buf.data());
  }
};

inline std::string describe_failure(const std::string& kernel, const char* function, std::int32_t st, Message& m) {
  std::string text = m.text();
  return fmt::format("plugin kernel '{}': {}() returned {} ({}){}{}", kernel, function, status_name(st), st,
                     text.empty() ? "" : ": ", text.empty() ? "without a message" : text);
}

/// A can_implement function's status as fpcert's answer: OK yes, NOT_SUPPORTED no (with the plugin's reason), anything
/// else a failure (DeviceError: the case fails with the plugin's message).
inline Support support_from_status(const std::string& kernel, const char* function, std::int32_t st, Message& m) {
  if (st == FPCERT_STATUS_OK) return Support::yes();
  if (st == FPCERT_STATUS_NOT_SUPPORTED) return Support::no(m.text().empty() ? "the plugin declines this shape" : m.text());
  throw DeviceError(describe_failure(kernel, function, st, m));
}

/// A run function's status as fpcert's verdict: OK returns, NOT_SUPPORTED "not supported" (NotSupportedError), anything
/// else the case's failure with the plugin's message (DeviceError: the runner's "kernel failed").
inline void check_run_status(const std::string& kernel, const char* function, std::int32_t st, Message& m) {
  if (st == FPCERT_STATUS_OK) return;
  if (st == FPCERT_STATUS_NOT_SUPPORTED) throw NotSupportedError(describe_failure(kernel, function, st, m));
  throw DeviceError(describe_failure(kernel, function, st, m));
}

}  // namespace fpcert::plugin_detail
