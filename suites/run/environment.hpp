// suites/run/environment.hpp — the environment stamp every result carries.
#pragma once

#include <string>

#include "kernels/device/device_api.hpp"
#include "results/results.hpp"

namespace fpcert {

/// fpcert's version string.
const char* fpcert_version();

/// Host facts (version, time, host, CPU, compiler, build flags), plus the device's when api is a
/// device; `command` is the exact command line.
Environment make_environment(const std::string& command, const DeviceApi* device);

}  // namespace fpcert
