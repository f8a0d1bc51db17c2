// cli/convert_plugin.hpp — `fpcert convert --plugin LIB --kernel NAME --exhaustive`: a plugin's
// conversion kernel checked on every source pattern (or a range) against fpcert's model and MPFR.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace fpcert::cli {

struct PluginConvertRequest {
  std::string kernel;
  std::string from, to;                                 ///< optional: must match the kernel's formats
  std::optional<std::string> rounding, saturate, nan;  ///< given on the command line: must match its claims
  std::string range;                                   ///< FIRST:COUNT
  std::string json;
  std::string html;          ///< a self-contained HTML report of the check (reports/html.hpp)
  bool strict_nan = false;
  bool isolate = true;       ///< run the check in a child process (crash → exit 3, not a dead fpcert)
  double timeout_s = 3600;   ///< per chunk of 2^20 patterns (a hung kernel)
  unsigned threads = 0;
  std::size_t list = 20;
};

/// Exit code: 0 every pattern matched, 1 mismatches, 3 the kernel crashed, hung, failed or was not
/// supported; InputError (2) for bad arguments.
int run_plugin_conversion(const PluginConvertRequest& r);

}  // namespace fpcert::cli
