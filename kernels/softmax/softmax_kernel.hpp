// kernels/softmax/softmax_kernel.hpp — the softmax operation's kernel interface (issue 40; docs/softmax.md): a kernel
// that maps each row of a rows x cols matrix of logits x to softmax(s x + mask) or log-softmax(s x + mask) over the row,
// with the traits the bound reads (oracle/softmax/softmax_bound.hpp: the shift, online block size, compute format, the
// exp and log implementations with their documented ulp errors, the row sum's accumulator and order, division or
// reciprocal, output format) and what it gives for a fully masked row. The runner owns every buffer (logits as codes of
// the kernel's input format, the mask as fp32 codes of +0 and -Inf, the results as codes of its output format,
// pre-filled and guarded), as for every operation (kernels/kernel.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "kernels/kernel.hpp"
#include "oracle/softmax/softmax_bound.hpp"

namespace fpcert {

/// What the bound and the runner read about a softmax kernel.
struct SoftmaxTraits {
  SoftmaxArith arith;                               ///< fn, shift, compute, exp/log errors, row sum, division, out
  const Format* x_input = &f32;                     ///< format the logits are passed in
  MaskedRowPolicy masked_rows = MaskedRowPolicy::Zero;  ///< a row of -Inf only
  bool accepts_mask = true;                         ///< takes the additive mask operand (else masked cases are not supported)
  std::string note;                                 ///< where the declaration comes from
};

/// One call. Pointers in the kernel's memory space: x rows x cols codes of x_input (row-major, ldx), mask null or rows x
/// cols fp32 codes (ldm), out rows x cols codes of the output format (ldo). The kernel computes z = RN(scale x) + mask
/// in its compute format (scale 1: z = x + mask).
struct SoftmaxOperands {
  std::int64_t rows = 0, cols = 0;
  const void* x = nullptr;
  std::int64_t ldx = 0;
  const void* mask = nullptr;
  std::int64_t ldm = 0;
  float scale = 1.0f;
  void* out = nullptr;
  std::int64_t ldo = 0;
  void* stream = nullptr;  ///< cudaStream_t for device kernels
};

/// Faults a built-in kernel can carry in its own arithmetic (docs/mutation.md, "Softmax"; the injectors of
/// suites/ops/softmax/softmax_faults.hpp ask for them through with_bug, and wrap the kernel as a black box for the
/// faults that can be made outside it).
enum class SoftmaxBug : std::uint8_t {
  None,
  NoMaxShift,     ///< exp(z_j) without subtracting the row's max
  WrongRescale,   ///< online: the running sum not rescaled when the running max grows
  MaskAfterExp,   ///< the mask applied after exp and the row sum (masked entries in the normaliser, zeroed afterwards)
  F16RowSum,      ///< the row sum accumulated in fp16
  NanMaskedRows,  ///< NaN for a fully masked row (0/0) where zeros are declared
  Zeros,          ///< every output +0
  Bf16RowSum,     ///< the row sum accumulated in bf16 (not a fault of the catalogue: a hypothesis of fpcert diagnose; CPU models only)
};
std::string_view to_string(SoftmaxBug b);

class SoftmaxKernel : public Kernel {
 public:
  Operation operation() const final { return Operation::Softmax; }
  virtual const SoftmaxTraits& softmax_traits() const = 0;
  virtual Support can_implement(std::int64_t rows, std::int64_t cols, bool masked) const {
    (void)rows, (void)cols;
    if (masked && !softmax_traits().accepts_mask) return Support::no("the kernel takes no mask");
    return Support::yes();
  }
  /// Throws NotSupportedError when it cannot do this call, DeviceError when the device fails.
  virtual void run(const SoftmaxOperands& ops) = 0;
  /// The same kernel with `bug` in its own arithmetic; nullptr when it cannot carry it.
  virtual std::unique_ptr<SoftmaxKernel> with_bug(SoftmaxBug bug) const {
    (void)bug;
    return nullptr;
  }
};

/// Make a softmax kernel by name; nullptr when unknown or of another operation.
std::unique_ptr<SoftmaxKernel> make_softmax_kernel(const std::string& name);
/// "softmax shifted, in f16, compute f32, exp 2 + floor(1.173|x|) ulp, sum f32 warp tree L=32, divide, out f16; masked rows zero".
std::string describe_softmax_traits(const SoftmaxTraits& t);

/// The exp and log error declarations of the implementations the built-ins use (docs/softmax.md, "Implementations").
ElemFnError exp_error_libm_f32();     ///< fl32(glibc exp in double): 0.5 ulp + glibc's < 1 ulp of double
ElemFnError log_error_libm_f32();     ///< fl32(glibc log in double)
ElemFnError exp_error_cuda_expf();    ///< CUDA expf: 2 ulp (CUDA C Programming Guide, Mathematical Functions)
ElemFnError exp_error_cuda_fast();    ///< CUDA __expf: 2 + floor(|1.173 x|) ulp; ex2.approx.ftz flushes subnormal results
ElemFnError exp_error_expf_ops();     ///< fpcert's expf_ops (oracle/math/expf_ops.hpp): 1 ulp, every input
ElemFnError log_error_cuda_logf();    ///< CUDA logf: 1 ulp

}  // namespace fpcert
