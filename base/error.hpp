// base/error.hpp — the error types of fpcert: bad input, and a kernel or device failure with its
// kind (crashed or hung), which the runner maps onto a case verdict without reading the message.
// cli/exit_codes.hpp maps both onto the command's exit codes (DESIGN.md).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace fpcert {

/// Bad input from the user (arguments, spec strings, files): exit 2, nothing written half-way.
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// How a kernel or the device failed: the verdict a case gets for it.
enum class FailureKind : std::uint8_t {
  Crashed,  ///< a fault, a sticky device error, a write outside the output, an allocation or copy that failed
  Hung,     ///< work that did not finish within its time limit (a watchdog fired)
};
std::string_view to_string(FailureKind k);

/// A kernel crashed, hung or the device failed: the case's verdict is `kind`; the command exits 3.
struct DeviceError : std::runtime_error {
  explicit DeviceError(const std::string& what, FailureKind kind = FailureKind::Crashed)
      : std::runtime_error(what), kind(kind) {}
  FailureKind kind;
};

}  // namespace fpcert
