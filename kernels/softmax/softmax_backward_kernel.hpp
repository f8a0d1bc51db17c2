// kernels/softmax/softmax_backward_kernel.hpp — the softmax and log-softmax backward kernel interface (issue 45;
// docs/backward.md): from the saved forward output y (softmax: probabilities; log-softmax: log-probabilities, in their
// storage format) and the incoming gradient dy, each row's gradient with respect to the forward's logits x, where the
// forward computed softmax(s x + mask) (s = 1 for PyTorch's softmax):
//   softmax:      dx_j = s y_j (dy_j - D),        D = sum_k dy_k y_k
//   log-softmax:  dx_j = s (dy_j - e^{y_j} G),    G = sum_k dy_k
// The reference is the exact value of these formulas at the given codes of y and dy (a softmax backward kernel never
// sees x), correctly rounded into the output format. The traits say the arithmetic the bound reads. The runner owns
// every buffer (codes of the kernel's formats, pre-filled and guarded), as for every operation (kernels/kernel.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "kernels/kernel.hpp"
#include "oracle/reduce/reduce_order.hpp"
#include "oracle/softmax/softmax_bound.hpp"
#include "oracle/softmax/softmax_bwd_bound.hpp"

namespace fpcert {

/// What the bound and the runner read about a softmax backward kernel.
struct SoftmaxBwdTraits {
  SoftmaxFn fn = SoftmaxFn::Softmax;
  const Format* y_input = &f32;   ///< the saved forward output y
  const Format* dy_input = &f32;  ///< the incoming gradient dy
  const Format* compute = &f32;   ///< every operation but the row sum, rounded to nearest even
  const Format* dot_acc = &f32;   ///< D (or G)'s accumulator, nearest even
  ReduceOrder dot_order = ReduceOrder::unknown();  ///< D (or G)'s order (unknown: any order, the bound takes the worst)
  bool fma = false;               ///< softmax: y_j (dy_j - D) with dy_j - D rounded, then the product (false); the products dy_k y_k of D fused into the sum (true)
  ElemFnError exp;                ///< log-softmax: e^{y_j} in the compute format, documented error
  const Format* out = &f32;       ///< dx rounded into it once
  std::string note;               ///< where the declaration comes from
  /// softmax: dx_j = fl(fl(dy_j y_j) - fl(y_j D)) (or the second product fused into the subtraction), as PyTorch's CUDA
  /// kernels compute it, in place of y_j (dy_j - D) (added in session 9; the bound covers either with expanded = true).
  bool expanded = false;
  /// softmax, expanded: the format each product g_j = dy_j y_j is rounded into before D's sum and the subtraction
  /// (PyTorch's softmax_backward_cuda forms grad * output as a tensor of the storage dtype first); null: the compute format.
  const Format* prod = nullptr;
  /// Whether it takes the forward's scale s (false: a call with s != 1 is not supported; the scale's faults made around a
  /// closed kernel, by the scale it is called with, then cannot reach it).
  bool takes_scale = true;
};

/// One call. Pointers in the kernel's memory space: y rows x cols codes of y_input (ldy), dy rows x cols codes of
/// dy_input (lddy), dx rows x cols codes of out (lddx). scale: the forward's s (dx is with respect to x, not s x).
struct SoftmaxBwdOperands {
  std::int64_t rows = 0, cols = 0;
  const void* y = nullptr;
  std::int64_t ldy = 0;
  const void* dy = nullptr;
  std::int64_t lddy = 0;
  float scale = 1.0f;
  void* dx = nullptr;
  std::int64_t lddx = 0;
  void* stream = nullptr;  ///< cudaStream_t for device kernels
};

/// Faults a built-in kernel can carry in its own arithmetic (docs/mutation.md, "Backward passes").
enum class SoftmaxBwdBug : std::uint8_t {
  None,
  NoDotSubtract,  ///< softmax: dx_j = s y_j dy_j (D never subtracted); log-softmax: dx_j = s dy_j
  DotF16,         ///< D (or G) accumulated in fp16
  ScaleMissing,   ///< dx without the forward's scale s
  ScaleTwice,     ///< dx with s applied twice
  LogNoExp,       ///< log-softmax: y_j used where e^{y_j} is meant
  Zeros,          ///< every output +0
};
std::string_view to_string(SoftmaxBwdBug b);

class SoftmaxBwdKernel : public Kernel {
 public:
  Operation operation() const final { return Operation::SoftmaxBackward; }
  virtual const SoftmaxBwdTraits& softmax_bwd_traits() const = 0;
  virtual Support can_implement(std::int64_t rows, std::int64_t cols) const {
    (void)rows, (void)cols;
    return Support::yes();
  }
  /// Throws NotSupportedError when it cannot do this call, DeviceError when the device fails.
  virtual void run(const SoftmaxBwdOperands& ops) = 0;
  /// The same kernel with `bug` in its own arithmetic; nullptr when it cannot carry it.
  virtual std::unique_ptr<SoftmaxBwdKernel> with_bug(SoftmaxBwdBug bug) const {
    (void)bug;
    return nullptr;
  }
};

/// Make a softmax backward kernel by name; nullptr when unknown or of another operation.
std::unique_ptr<SoftmaxBwdKernel> make_softmax_bwd_kernel(const std::string& name);
/// "softmax backward, y f16, dy f16, compute f32, D f32 (any order), out f16".
std::string describe_softmax_bwd_traits(const SoftmaxBwdTraits& t);
/// The arithmetic the bound reads (oracle/softmax/softmax_bwd_bound.hpp), from the traits (added in session 9).
SoftmaxBwdArith softmax_bwd_arith(const SoftmaxBwdTraits& t);

}  // namespace fpcert
