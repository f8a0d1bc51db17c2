// kernels/convert/model_convert.hpp — fpcert's own conversion model as a conversion kernel: the fast
// path of oracle/convert/convert_batch.hpp (the scalar oracle/round.hpp path for formats wider than 32 bits)
// behind the ConversionKernel interface, so that `fpcert convert --exhaustive` on the CPU and the
// `conversions` suite without a device run it through the runner like any other kernel. Its results
// are the model's, so the check holds the model to MPFR (on every pattern, or on a sample).
#pragma once

#include <memory>

#include "kernels/kernel.hpp"

namespace fpcert {

/// The model converting src to dst under r (stochastic bits from seed), named
/// model_<src>_to_<dst>_<rounding>[_<saturation>] unless `name` is given.
std::unique_ptr<ConversionKernel> make_model_conversion_kernel(const Format& src, const Format& dst, const Rounder& r,
                                                               std::uint64_t seed = 0, std::string name = {});

}  // namespace fpcert
