// suites/run/device_apis.hpp — the DeviceApi each kernel of a run needs (the host's, or the CUDA one, created on
// first need and kept for the run), for every operation's runner.
#pragma once

#include <memory>
#include <string>

#include "kernels/device/device_api.hpp"
#include "kernels/kernel.hpp"

namespace fpcert {

class DeviceApis {
 public:
  /// The kernel's API; nullptr (and why) when it runs on a device this process cannot reach.
  DeviceApi* for_kernel(const Kernel& k, std::string& why) {
    if (k.memory() == MemorySpace::Host) {
      if (!host_) host_ = make_host_api();
      return host_.get();
    }
    if (!cuda_tried_) {
      cuda_tried_ = true;
      cuda_ = make_cuda_api(&cuda_why_);
    }
    why = cuda_why_;
    return cuda_.get();
  }
  /// The CUDA API when one was made (the environment stamp reads the device's facts from it).
  const DeviceApi* device() const { return cuda_.get(); }

 private:
  std::unique_ptr<DeviceApi> host_, cuda_;
  bool cuda_tried_ = false;
  std::string cuda_why_;
};

}  // namespace fpcert
