// kernels/convert/cuda/convert_launch.hpp — how the host side (convert_producer.cpp) reaches the sweep
// kernels (convert_*.cu) without CUDA types: launchers by table name, the side-result layout and
// the architecture probe.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace fpcert::cuda_convert {

/// Lane differences and stray results listed per chunk (the counts are exact).
inline constexpr int kSideListed = 16;

/// Side results of one chunk, as the kernel writes them in device memory and the host reads them.
struct SideResults {
  unsigned long long lane_count;
  unsigned long long stray_count;
  std::uint32_t lane_src[kSideListed], lane_lo[kSideListed], lane_hi[kSideListed];
  std::uint32_t stray_src[kSideListed], stray_raw[kSideListed];
};

struct LaunchArgs {
  std::uint64_t first = 0;      ///< first source code
  std::uint32_t n = 0;          ///< codes
  void* out = nullptr;          ///< device buffer, n results of the launcher's out_bytes
  void* side = nullptr;         ///< device SideResults, zeroed
  std::uint32_t valid_mask = 0; ///< bits a result may have (the format's code in its container)
  void* stream = nullptr;       ///< cudaStream_t
};
using LaunchFn = void (*)(const LaunchArgs&);
struct CheckLaunchArgs;  // kernels/convert/cuda/convert_check_launch.hpp: the device check (convert and compare)
using CheckLaunchFn = void (*)(const CheckLaunchArgs&);

struct Launcher {
  const char* name;  ///< the table entry (kernels/convert/device_convert.cpp)
  LaunchFn fn;
  int out_bytes;
  CheckLaunchFn check;  ///< the same op converting and checking in one pass (kernels/convert/cuda/convert_check_kernel.cuh)
};

std::span<const Launcher> launchers_f16_bf16();  ///< convert_f16_bf16.cu: fp16, bf16, tf32, bf16 -> fp16
std::span<const Launcher> launchers_fp8();       ///< convert_fp8.cu: fp8 and ue8m0
std::span<const Launcher> launchers_fp6_fp4();   ///< convert_fp6_fp4.cu: fp6 and fp4
/// The launcher of a table entry, from the three lists (nullptr: none in this build).
const Launcher* find_launcher(std::string_view name);
/// Wait for a recorded cudaEvent_t, polling, so that a hang becomes a DeviceError after
/// $FPCERT_DEVICE_TIMEOUT_MS (default 120 s); a device fault becomes a DeviceError too.
void wait_event(void* event, const char* what);

/// __CUDA_ARCH__ and __CUDA_ARCH_FAMILY_SPECIFIC__ (0 if undefined) of the code that runs on the
/// current device (convert_probe.cu); returns false when the probe could not run.
bool probe_arch(int* arch, int* family_specific, void* stream);

}  // namespace fpcert::cuda_convert
