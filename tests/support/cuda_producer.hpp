// tests/support/cuda_producer.hpp — the CUDA conversion producer the device tests of the conversion table
// share (one per process; a missing device fails the test, gpu_main.cpp has already said "skipped").
#pragma once

#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "kernels/convert/device_convert.hpp"

namespace fpcert::test {

inline ConversionProducer& producer() {
  static std::unique_ptr<ConversionProducer> p = [] {
    std::string why;
    auto q = make_cuda_conversion_producer(&why);
    if (!q) FAIL("no conversion producer: " << why);
    return q;
  }();
  return *p;
}

}  // namespace fpcert::test
