// suites/operations.cpp — the operations the runner knows (suites/run/operation.hpp), GEMM first: the one list a
// new operation joins (docs/architecture.md, "Adding an operation").
#include "suites/ops/conversion/conversion_operation.hpp"
#include "suites/ops/attention/attention_operation.hpp"
#include "suites/ops/elementwise/eltwise_operation.hpp"
#include "suites/ops/gemm/gemm_operation.hpp"
#include "suites/ops/reduce/reduce_operation.hpp"
#include "suites/ops/norm/norm_operation.hpp"
#include "suites/ops/norm_bwd/norm_bwd_operation.hpp"
#include "suites/ops/softmax/softmax_operation.hpp"
#include "suites/ops/softmax_bwd/softmax_bwd_operation.hpp"  // issue 45
// Attention backward (issue 45).
#include "suites/ops/attention_bwd/attention_bwd_operation.hpp"

namespace fpcert {

std::span<const OperationRunner* const> operation_runners() {
  static const GemmOperation gemm;
  static const ConversionOperation conversion;
  static const ReduceOperation reduction;
  static const ElementwiseOperation elementwise;
  static const SoftmaxOperation softmax;
  static const NormOperation norm;
  static const AttentionOperation attention;
  static const SoftmaxBwdOperation softmax_bwd;  // issue 45
  static const NormBwdOperation norm_backward;
  static const AttentionBwdOperation attention_bwd;
  static const OperationRunner* const all[] = {&gemm, &conversion, &reduction, &elementwise, &softmax, &norm, &attention,
                                               &softmax_bwd, &norm_backward, &attention_bwd};
  return all;
}

}  // namespace fpcert
