// suites/experiments.hpp — experiments that are not GEMM cases: the scalar split-product study.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fpcert {

struct SplitScalarRow {
  std::string method;         ///< "fp32", "tf32", or a split scheme name
  double median = 0, p99 = 0, max = 0;  ///< relative error |p - a b| / |a b|
  std::int64_t zero = 0;      ///< products that came out 0 (underflow of slices or products)
  std::int64_t samples = 0;
};

/// `pairs` pairs of fp32 normals (random significands, exponents uniform in [emin, emax], random
/// signs; Philox keyed by seed), each method's product against the exact product (in fp64, exact
/// for two fp32 values): median, 99th percentile and maximum relative error.
std::vector<SplitScalarRow> split_scalar_experiment(std::uint64_t pairs, std::uint64_t seed, int emin, int emax,
                                                    unsigned threads = 0);

}  // namespace fpcert
