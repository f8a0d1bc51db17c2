// suites/mutation/injector_api.cpp — the fault injectors' memory API (suites/mutation/injector_api.hpp).
#include "suites/mutation/injector_api.hpp"

#include "base/error.hpp"

namespace fpcert {

DeviceApi& injector_api(std::unique_ptr<DeviceApi>& api, MemorySpace memory, const std::string& kernel) {
  if (!api) {
    if (memory == MemorySpace::Host) {
      api = make_host_api();
    } else {
      std::string why;
      api = make_cuda_api(&why);
      if (!api) throw DeviceError("fault injector: no CUDA device for " + kernel + ": " + why);
    }
  }
  return *api;
}

}  // namespace fpcert
