// kernels/block/device_block_quant.cpp — the CUDA block quantizer's API in a build without CUDA: no device.
#include "kernels/block/device_block_quant.hpp"

#include "base/error.hpp"

namespace fpcert {

#if !defined(FPCERT_HAVE_CUDA)
bool device_quantizer_supports(const BlockFormat&, const BlockQuantOptions&, std::string* why) {
  if (why) *why = "this fpcert was built without CUDA (no nvcc at configure time, or FPCERT_CUDA=OFF)";
  return false;
}
DeviceQuantized quantize_on_device(const BlockFormat&, const BlockQuantOptions&, const float*, std::int64_t, std::int64_t, int) {
  throw DeviceError("this fpcert was built without CUDA (no nvcc at configure time, or FPCERT_CUDA=OFF)");
}
double device_copy_bandwidth_gbs(std::size_t, int) {
  throw DeviceError("this fpcert was built without CUDA (no nvcc at configure time, or FPCERT_CUDA=OFF)");
}
#endif

}  // namespace fpcert
