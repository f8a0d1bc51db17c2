// cli/cmd/convert_args.hpp — the arguments of `fpcert convert` and what its front-ends share: formats and
// the rounder from the command line (the progress line on a terminal is cli/progress.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cli/scale.hpp"
#include "oracle/format.hpp"
#include "oracle/round.hpp"
#include "suites/ops/conversion/convert_runner.hpp"

namespace fpcert::cli {

struct ConvertArgs {
  std::string from, to, rounding = "rn", saturate, nan = "preserve", value, bits, json, range, html;
  bool exhaustive = false, strict_nan = false;
  std::uint64_t seed = 0;
  unsigned threads = 0;
  std::size_t list = 20;
  // --device cuda
  std::string device = "cpu", intrinsic, scale;
  bool all = false, sample = false, include_test = false;
  std::uint64_t mpfr_sample = 4099;
  std::string check = "auto";  ///< where the comparison runs: auto (on the device when it can), device, host
  // --kernel NAME: a registered conversion kernel (a plugin's, after --plugin LIB)
  std::vector<std::string> plugins;
  std::string kernel;
  bool no_isolate = false;
  double timeout_s = 3600;  ///< per 2^20 patterns
  bool rounding_given = false, saturate_given = false, nan_given = false;
  ScaleArgs scale_out;  ///< --shard, --devices, --mpi: with --all (docs/scale.md)
};

/// A format by tag; InputError naming the option otherwise.
const Format& need_format(const std::string& name, const char* what);
/// The rounder of --rounding, --saturate and --nan for destination dst; InputError when impossible.
Rounder make_rounder(const ConvertArgs& a, const Format& dst);
/// --strict-nan, --mpfr-sample, --threads, --list.
ConversionCheckOptions check_options(const ConvertArgs& a);

// The front-ends (cli/cmd/cmd_convert.cpp, cli/cmd/convert_device.cpp).
int run_value(const ConvertArgs& a, const Format& src, const Format& dst, const Rounder& r);
int run_exhaustive(const ConvertArgs& a, const Format& src, const Format& dst, const Rounder& r);
int run_kernel(const ConvertArgs& a);
int run_device(const ConvertArgs& a);
int run_list(const ConvertArgs& a);
int run_all(const ConvertArgs& a);

}  // namespace fpcert::cli
