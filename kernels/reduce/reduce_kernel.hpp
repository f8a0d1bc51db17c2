// kernels/reduce/reduce_kernel.hpp — the reduction operation's kernel interface (docs/reductions.md): a kernel
// that reduces each of `count` vectors of `length` elements to one value — a sum, a dot product with a second
// operand, or a Euclidean norm (nrm2) — with the traits the oracle's bounds and emulations read
// (oracle/reduce/): input formats, the accumulator's arithmetic, the declared summation order (or none), the
// output format, whether nrm2 scales against overflow, and whether runs repeat bit for bit.
//
// The vectors are the rows of a count x length row-major matrix (ReduceAxis::Rows: row sums, a batch of dot
// products, per-row norms) or the columns of a length x count one (ReduceAxis::Cols: column sums); the runner
// owns every buffer (inputs as codes of the kernel's input formats, the count results as codes of its output
// format, pre-filled and guarded), as it does for GEMM and conversion kernels (kernels/kernel.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/kernel.hpp"
#include "oracle/reduce/reduce_order.hpp"
#include "oracle/reduce/reduce_ref.hpp"

namespace fpcert {

/// Which vectors of the input matrix are reduced.
enum class ReduceAxis : std::uint8_t {
  Rows,  ///< vector v is row v of a count x length row-major matrix (ld >= length): element i at x[v ld + i]
  Cols,  ///< vector v is column v of a length x count row-major matrix (ld >= count): element i at x[i ld + v]
};
std::string_view to_string(ReduceAxis a);

/// How nrm2 guards against overflow and underflow of its squares.
enum class Nrm2Scaling : std::uint8_t {
  None,    ///< sqrt of the plain sum of squares (overflows once sum x_i^2 passes the accumulator's range)
  Lapack,  ///< Blue's three accumulators as LAPACK 3.10's nrm2 (Anderson 2017; oracle/reduce/nrm2_scaled.hpp)
};

/// What the bound model, the bitwise emulation and the envelope read about a reduction kernel's arithmetic.
struct ReduceTraits {
  ReduceKind kind = ReduceKind::Sum;
  const Format* x_input = &f32;                     ///< format x is passed in (codes in its container)
  const Format* y_input = &f32;                     ///< format y is passed in (Dot only)
  Rounding input_rounding = Rounding::NearestEven;  ///< how the runner rounds exact source values into them
  /// The accumulator: its format, the rounding of every addition (and of sqrt), and whether a dot's products
  /// are fused into the additions (Exact: FMA) or rounded into the accumulator first.
  ReduceArith arith;
  /// The declared summation order: what the bitwise tier emulates (oracle/reduce/reduce_order.hpp). Unknown
  /// (libraries, atomics): the envelope alone decides, with the depth of any binary tree (n - 1).
  ReduceOrder order = ReduceOrder::unknown();
  const Format* out = &f32;  ///< output format (the accumulator's value rounded once into it, by arith's rounding mode)
  Nrm2Scaling scaling = Nrm2Scaling::None;  ///< nrm2 only
  /// nrm2 with both an Inf and a NaN among its inputs: which answer the kernel gives (docs/reductions.md).
  Nrm2Specials nrm2_specials = Nrm2Specials::InfWins;
  Determinism determinism = Determinism::Deterministic;  ///< RunToRun: atomics, whose order changes between runs
  std::string determinism_note;
  std::string note;  ///< where the declaration comes from (design, documentation, measured)
};

/// One reduction call. Pointers in the kernel's memory space; x, y codes of x_input / y_input in their
/// containers, out `count` codes of the output format, contiguous.
struct ReduceOperands {
  std::int64_t count = 0;   ///< how many vectors (results)
  std::int64_t length = 0;  ///< elements per vector (n)
  ReduceAxis axis = ReduceAxis::Rows;
  const void* x = nullptr;
  std::int64_t ldx = 0;
  const void* y = nullptr;  ///< Dot only: laid out as x, with its own leading dimension
  std::int64_t ldy = 0;
  void* out = nullptr;
  void* stream = nullptr;  ///< cudaStream_t for device kernels
};

/// A reduction kernel. run() throws NotSupportedError when it finds out only at run time that it cannot do
/// this call, DeviceError when the device fails; it must not throw for ordinary inputs.
class ReduceKernel : public Kernel {
 public:
  Operation operation() const final { return Operation::Reduction; }
  virtual const ReduceTraits& reduce_traits() const = 0;
  virtual Support can_implement(std::int64_t count, std::int64_t length, ReduceAxis axis) const {
    (void)count, (void)length, (void)axis;
    return Support::yes();
  }
  virtual void run(const ReduceOperands& ops) = 0;
};

/// Make a reduction kernel by name; nullptr when unknown or of another operation.
std::unique_ptr<ReduceKernel> make_reduce_kernel(const std::string& name);
/// "sum, in f16 (rn), acc f32 (rn), out f32; order pairwise from +0".
std::string describe_reduce_traits(const ReduceTraits& t);
/// Why a reduction kernel's declarations contradict each other (empty: coherent): a RunToRun kernel with a
/// fixed order, a Dot's second operand missing, a scaled nrm2 declared for another kind, a fixed order whose
/// emulation needs inputs the accumulator cannot hold exactly (oracle/reduce/reduce_order.hpp).
std::string reduce_traits_problem(const ReduceTraits& t);

}  // namespace fpcert
