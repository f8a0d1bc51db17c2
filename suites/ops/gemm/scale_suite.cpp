// suites/ops/gemm/scale_suite.cpp — the `scale` suite: launch-grid limits and 32-bit index overflow
// (docs/suites.md, "The scale suite"). Every case is graded on a sampled exact reference; the unwritten check
// covers all of C.
#include "suites/ops/gemm/scale_suite.hpp"

#include <fmt/format.h>

namespace fpcert {

std::vector<CaseSpec> scale_cases(const SuiteContext& c) {
  const bool d = c.device;
  auto shape = [](const char* family, std::int64_t m, std::int64_t n, std::int64_t k, std::uint64_t seed) {
    return fmt::format("{}:m={},n={},k={},seed={}", family, m, n, k, seed);
  };
  SampleSpec every_col;  // skinny C: every column of the sampled rows
  every_col.on = true;
  every_col.rows = 32;
  every_col.cols = -1;
  SampleSpec every_row = every_col;  // wide C: every row of the sampled columns
  every_row.rows = -1;
  every_row.cols = 32;
  SampleSpec both;
  both.on = true;
  const std::int64_t tall = d ? std::int64_t{1} << 21 : 4096, odd = tall + 3;
  // m lda >= 2^31 with lda = k + 8 or k + 16 (padded_ld): 1,044,600 x 2056 = 2,147,697,600 >= 2^31 = 2,147,483,648,
  // and m stays below 1,048,560 (= 65,535 x 16) so that the grid limit is not what this case finds.
  const std::int64_t big = d ? 1044600 : 1024, big_k = d ? 2048 : 256;
  std::vector<CaseSpec> r = {
      {"tall_2e21", shape("uniform", tall, 8, 16, 300), BoundVariant::Independent,
       fmt::format("M = {}, N = 8, K = 16: row tiles past gridDim.y = 65,535 (rows past 65,535 x 16 = 1,048,560 are where a "
                   "capped grid stops)", tall)},
      {"tall_2e21_odd", shape("uniform", odd, 7, 13, 301), BoundVariant::Independent,
       fmt::format("M = {}, N = 7, K = 13: the same with partial tiles in every dimension", odd)},
      {"wide_2e21", shape("uniform", 8, tall, 16, 302), BoundVariant::Independent,
       fmt::format("M = 8, N = {}, K = 16: the transpose, column tiles past 65,535 for a kernel that maps N to y or z", tall)},
      {"wide_2e21_odd", shape("uniform", 7, odd, 13, 303), BoundVariant::Independent,
       fmt::format("M = 7, N = {}, K = 13: the transpose with partial tiles", odd)},
      {"a_2e31", shape("uniform", big, 16, big_k, 304), BoundVariant::Independent,
       fmt::format("M = {}, N = 16, K = {}: A holds m lda >= 2^31 elements on a device (rows past 2^31 / lda start beyond "
                   "int's range)", big, big_k)},
      {"b_2e31", shape("uniform", 16, d ? 2048 : 256, big, 305), BoundVariant::Independent,
       fmt::format("M = 16, N = {}, K = {}: B holds k ldb >= 2^31 elements (the transpose of a_2e31)", d ? 2048 : 256, big)},
      {"llm_16384x8192x8192", shape("normal", d ? 16384 : 512, d ? 8192 : 256, d ? 8192 : 256, 306), BoundVariant::Independent,
       "an LLM-sized product (16384 x 8192 x 8192 on a device), certified in seconds on a sample"},
  };
  for (std::size_t i = 0; i < r.size(); ++i) {
    r[i].sample = i < 2 || i == 4 ? every_col : i < 4 || i == 5 ? every_row : both;
    r[i].covers = {i < 4 ? "scale.grid_limit" : i < 6 ? "scale.index_2e31" : "scale.llm"};
  }
  return r;
}

}  // namespace fpcert
