// suites/mutation/injector_api.hpp — the memory API a fault injector made around a kernel uses for its own work (its
// stream, copies of the outputs it changes): one helper for every operation's injectors (suites/ops/*/..._faults.cpp).
#pragma once

#include <memory>
#include <string>

#include "kernels/device/device_api.hpp"
#include "kernels/kernel.hpp"

namespace fpcert {

/// The host's API or a CUDA device's, by the wrapped kernel's memory space, made into `api` on first use. DeviceError
/// when the kernel lives on a device and there is none.
DeviceApi& injector_api(std::unique_ptr<DeviceApi>& api, MemorySpace memory, const std::string& kernel);

}  // namespace fpcert
