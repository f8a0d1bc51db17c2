// suites/experiments/scale_rules.hpp — the scale-rule comparison (`fpcert experiment scale-rules`): for every block
// format and scale rule, on normal and heavy-tailed data, how often the rule saturates a block's maximum,
// the elements' relative error distribution, the relative Frobenius error of a GEMM whose operands are
// quantized (against the exact product of the unquantized ones), and the blocks where rules disagree.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "oracle/block/block_format.hpp"

namespace fpcert {

struct ScaleRuleRow {
  std::string format, rule, data;     ///< data: the generator spec of the quantized array
  std::int64_t blocks = 0, elements = 0;
  double max_saturated = 0;           ///< fraction of blocks whose largest element was clamped
  double saturated = 0;               ///< fraction of elements clamped
  double flushed = 0;                 ///< fraction of nonzero elements that became zero
  double rel_median = 0, rel_p99 = 0, rel_max = 0;  ///< |x - q(x)| / |x| over nonzero x
  double gemm_frobenius = 0;          ///< ||deq(A) deq(B) - A B||_F / ||A B||_F (both exact products)
};

/// Where a rule disagrees with the OCP rule (floor; NVFP4: its default, even): blocks whose scale differs,
/// blocks whose dequantized values differ (a different scale alone can leave every value the same: power-
/// of-two scaling keeps significands, so only saturated, subnormal and flushed elements can change), and
/// among those how often the rule's block error (max |x - q(x)| / amax) was smaller or larger.
struct ScaleRuleDisagreement {
  std::string format, data, rule, versus;
  std::int64_t blocks = 0, scale_differs = 0, values_differ = 0, better = 0, worse = 0;
  std::vector<std::string> examples;  ///< a few blocks whose values differ: amax, both scales and errors
};

struct ScaleRuleReport {
  std::vector<ScaleRuleRow> rows;
  std::vector<ScaleRuleDisagreement> disagreements;
  std::string normal_spec, heavy_spec;
};

/// rows x cols arrays of each kind (blocks along rows), and an m x k times k x n GEMM for the Frobenius
/// column. Deterministic for a seed.
ScaleRuleReport scale_rule_experiment(std::uint64_t seed, std::int64_t rows = 256, std::int64_t cols = 1024,
                                      std::int64_t gemm_mn = 128, std::int64_t gemm_k = 1024);

}  // namespace fpcert
