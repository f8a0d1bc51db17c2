// kernels/norm/norm_kernel.hpp — the normalisation operation's kernel interface (issue 40; docs/normalization.md): a
// kernel that maps each row of a rows x cols matrix x to LayerNorm or RMSNorm over the row, with optional gamma and
// beta (cols entries each, in the input format) and eps (an fp32 value), and the traits the bound reads
// (oracle/norm/norm_bound.hpp: kind, variance algorithm, compute and accumulator formats, the rsqrt's documented
// error, output format). The runner owns every buffer, pre-filled and guarded, as for every operation.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "kernels/kernel.hpp"
#include "oracle/norm/norm_bound.hpp"

namespace fpcert {

struct NormTraits {
  NormArith arith;                 ///< kind, variance, compute, accumulator, rsqrt error, out
  const Format* x_input = &f32;    ///< format of x, gamma and beta
  std::string note;
};

/// One call. x: rows x cols codes of x_input (ldx); gamma, beta: null or cols codes of x_input; out: rows x cols codes
/// of the output format (ldo).
struct NormOperands {
  std::int64_t rows = 0, cols = 0;
  const void* x = nullptr;
  std::int64_t ldx = 0;
  const void* gamma = nullptr;
  const void* beta = nullptr;
  float eps = 1e-5f;
  void* out = nullptr;
  std::int64_t ldo = 0;
  void* stream = nullptr;
};

/// Faults a built-in carries in its own arithmetic (docs/mutation.md, "Normalisation").
enum class NormBug : std::uint8_t {
  None,
  EpsOutsideSqrt,   ///< 1 / (sqrt(var) + eps)
  Bessel,           ///< variance with 1/(n-1)
  NoMeanSubtract,   ///< RMS where LayerNorm is declared
  OnePassVariance,  ///< E[x^2] - E[x]^2 where two-pass / Welford is declared
  F16RowSum,        ///< the row sums accumulated in fp16
  AffineSwapped,    ///< gamma and beta swapped
  AffineIgnored,    ///< gamma and beta ignored
  Zeros,            ///< every output +0
  Bf16RowSum,       ///< the row sums accumulated in bf16 (not a fault of the catalogue: a hypothesis of fpcert diagnose; CPU models only)
};
std::string_view to_string(NormBug b);

class NormKernel : public Kernel {
 public:
  Operation operation() const final { return Operation::Norm; }
  virtual const NormTraits& norm_traits() const = 0;
  virtual Support can_implement(std::int64_t rows, std::int64_t cols) const {
    (void)rows, (void)cols;
    return Support::yes();
  }
  virtual void run(const NormOperands& ops) = 0;
  virtual std::unique_ptr<NormKernel> with_bug(NormBug bug) const {
    (void)bug;
    return nullptr;
  }
};

std::unique_ptr<NormKernel> make_norm_kernel(const std::string& name);
/// "layernorm two_pass, in f16, compute f32, sums f32 (any order), rsqrt 1 ulp, out f16".
std::string describe_norm_traits(const NormTraits& t);

}  // namespace fpcert
