// kernels/norm/norm_backward_kernel.hpp — the LayerNorm and RMSNorm backward kernel interface (issue 45;
// docs/backward.md). From x, the incoming gradient dy, gamma and the statistics the forward saved (mean and rstd per
// row, fp32, as PyTorch's native_layer_norm saves them; RMSNorm: rstd only), with n = cols, xh_j = (x_j - mean) rstd
// (RMSNorm: x_j rstd) and g_j = dy_j gamma_j (gamma_j = 1 without gamma):
//   dx_j     = rstd (g_j - (1/n) sum_k g_k - xh_j (1/n) sum_k g_k xh_k)     (RMSNorm: without the (1/n) sum_k g_k term)
//   dgamma_j = sum_rows dy_j xh_j,  dbeta_j = sum_rows dy_j                 (column sums over the rows)
// The reference is the exact value of these formulas at the given codes (the saved statistics are inputs: a backward
// kernel never recomputes them), correctly rounded into the output formats. dgamma/dbeta are column reductions over
// the batch, often added with atomics: the traits declare whether they are deterministic (Determinism, as for GEMM
// split-K: "run_to_run" kernels are graded run by run by the envelope and their spread reported).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "kernels/kernel.hpp"
#include "oracle/norm/norm_ref.hpp"
#include "oracle/reduce/reduce_order.hpp"

namespace fpcert {

struct NormBwdTraits {
  NormKind kind = NormKind::LayerNorm;
  const Format* input = &f32;      ///< x, dy and gamma
  const Format* compute = &f32;    ///< every operation but the sums, nearest even
  const Format* acc = &f32;        ///< the row sums sum g and sum g xh (any order)
  const Format* dx_out = &f32;     ///< dx rounded into it once
  bool writes_param_grads = true;  ///< dgamma (and LayerNorm: dbeta) written
  const Format* param_acc = &f32;  ///< the column sums' accumulator
  ReduceOrder param_order = ReduceOrder::unknown();  ///< the column sums' order (unknown: any)
  Determinism param_determinism = Determinism::Deterministic;  ///< RunToRun: column sums added with atomics
  const Format* param_out = &f32;  ///< dgamma, dbeta rounded into it once (exact when it is param_acc)
  /// false: the kernel ignores the saved mean and rstd and recomputes them (autograd of a composite rms_norm): the
  /// reference then uses the exact statistics of x (and eps), and the bound adds the recomputation's error.
  bool reads_saved = true;
  std::string note;                ///< where the declaration comes from
};

/// One call. x, dy: rows x cols codes of `input` (ldx, lddy); gamma: null (no affine: gamma = 1) or cols codes of
/// `input`; mean: null (RMSNorm) or rows fp32 codes; rstd: rows fp32 codes; dx: rows x cols codes of dx_out (lddx);
/// dgamma, dbeta: null (not wanted) or cols codes of param_out. A kernel that adds into dgamma/dbeta with atomics
/// clears them itself first.
struct NormBwdOperands {
  std::int64_t rows = 0, cols = 0;
  const void* x = nullptr;
  std::int64_t ldx = 0;
  const void* dy = nullptr;
  std::int64_t lddy = 0;
  const void* gamma = nullptr;
  const void* mean = nullptr;
  const void* rstd = nullptr;
  void* dx = nullptr;
  std::int64_t lddx = 0;
  void* dgamma = nullptr;
  void* dbeta = nullptr;
  void* stream = nullptr;  ///< cudaStream_t for device kernels
};

/// Faults a built-in carries in its own arithmetic (docs/mutation.md, "Backward passes").
enum class NormBwdBug : std::uint8_t {
  None,
  NoMeanTerm,    ///< LayerNorm: the (1/n) sum g term left out
  NoProjTerm,    ///< the xh (1/n) sum g xh term left out
  GammaIgnored,  ///< g_j = dy_j (gamma never applied)
  RstdSquared,   ///< rstd^2 where rstd is meant (the saved value taken for 1/var)
  DGammaF16,     ///< dgamma (and dbeta) reduced in fp16
  DGammaNoXhat,  ///< dgamma = sum dy (xh left out)
  Zeros,         ///< every output +0
};
std::string_view to_string(NormBwdBug b);

class NormBwdKernel : public Kernel {
 public:
  Operation operation() const final { return Operation::NormBackward; }
  virtual const NormBwdTraits& norm_bwd_traits() const = 0;
  virtual Support can_implement(std::int64_t rows, std::int64_t cols) const {
    (void)rows, (void)cols;
    return Support::yes();
  }
  virtual void run(const NormBwdOperands& ops) = 0;
  virtual std::unique_ptr<NormBwdKernel> with_bug(NormBwdBug bug) const {
    (void)bug;
    return nullptr;
  }
};

std::unique_ptr<NormBwdKernel> make_norm_bwd_kernel(const std::string& name);
/// "layernorm backward, in f16, compute f32, row sums f32 (any order), dx f16; dgamma/dbeta f32 atomics (run_to_run)".
std::string describe_norm_bwd_traits(const NormBwdTraits& t);

}  // namespace fpcert
