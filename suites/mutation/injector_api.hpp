// suites/mutation/injector_api.hpp — what every operation's fault injectors share (suites/ops/*/..._faults.cpp): the
// memory API a fault injector made around a kernel uses for its own work (its stream, copies of the outputs it changes),
// and the registration of a mutant that is the kernel's own faulty arithmetic where it can carry the fault, the fault
// made around it otherwise.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "base/error.hpp"
#include "kernels/device/device_api.hpp"
#include "kernels/kernel.hpp"
#include "suites/mutation/faults.hpp"

namespace fpcert {

/// The host's API or a CUDA device's, by the wrapped kernel's memory space, made into `api` on first use. DeviceError
/// when the kernel lives on a device and there is none.
DeviceApi& injector_api(std::unique_ptr<DeviceApi>& api, MemorySpace memory, const std::string& kernel);

/// Registers <kernel>~<fault> as a kernel of operation `op` and returns its name: made on use as Mutant(own, bug, false,
/// name) from make(kernel)->with_bug(bug) when the kernel carries the fault, as Mutant(kernel, bug, true, name) (the fault
/// made around it) otherwise. InputError when `kernel` is not a registered kernel of `op` (`noun` names them).
template <class Mutant, class Bug, class Make>
std::string register_own_or_wrapped_mutant(const std::string& kernel, Fault f, Operation op, std::string_view noun, Bug bug, Make make) {
  const KernelInfo* info = find_kernel_info(kernel);
  if (!info || info->operation != op) throw InputError("unknown " + std::string(noun) + " kernel '" + kernel + "'");
  const std::string name = mutant_name(kernel, f);
  register_kernel(
      name, info->backend, true,
      [kernel, bug, name, make]() -> std::unique_ptr<Kernel> {
        auto k = make(kernel);
        if (auto own = k->with_bug(bug)) return std::make_unique<Mutant>(std::move(own), bug, false, name);
        return std::make_unique<Mutant>(std::move(k), bug, true, name);
      },
      op);
  return name;
}

}  // namespace fpcert
