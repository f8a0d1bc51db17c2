// kernels/elementwise/eltwise_kernel.hpp — the elementwise operation's kernel interface (issue 42, docs/elementwise.md):
// a kernel computing y = f(x) for each of `count` inputs, codes of its input format in, codes of its output format
// out, with the traits the check reads: the function, the formats, the claimed accuracy (correctly rounded, an ulp
// bound, an absolute bound on an interval, a relative bound) and its flush-to-zero behaviour. The runner owns every
// buffer (pre-filled and guarded) as for the other operations (kernels/kernel.hpp).
//
// A device kernel may also offer the sweep: every input of a range checked on the GPU in one pass (reference,
// subject, comparison), only the histogram, the worst result, the results beyond the claim and the inputs the GPU's
// reference cannot decide travelling back (EltwiseSweepChunk); the host then decides those with MPFR.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "kernels/kernel.hpp"
#include "oracle/math/elementary.hpp"
#include "oracle/math/eltwise_ref.hpp"

namespace fpcert {

/// What the check reads about an elementwise kernel.
struct EltwiseTraits {
  math::Fn fn = math::Fn::Exp;
  const Format* in = &f32;   ///< f32, f16 or bf16 (codes in their containers)
  const Format* out = &f32;  ///< f32, f16 or bf16
  math::Claim claim;         ///< judged against f(x) rounded to nearest-even into `out`
  bool daz = false;          ///< subnormal inputs read as zero (the claim is then judged on the flushed input)
  bool ftz = false;          ///< subnormal results flushed to zero (a flushed result counts 0 ulp where the reference is subnormal)
  std::string claim_source;  ///< where the claim comes from ("CUDA Programming Guide, Table 13", "glibc manual", ...)
  /// Binary functions (math::arity(fn) == 2: z = f(x1, x2), f32 only; docs/elementwise.md, "Binary functions"): the claim
  /// holds where |x2| lies in [x2_lo, x2_hi] (CUDA's __fdividef: [2^-126, 2^126]); elsewhere it claims nothing, except
  /// the documented results below.
  double x2_lo = 0, x2_hi = std::numeric_limits<double>::infinity();
  /// __fdividef's documented results for 2^126 < |x2| < 2^128 (CUDA Math API): 0 for finite x1, NaN for infinite x1.
  bool fdividef_large_x2 = false;
};

/// One call: y[i] = f(x[i]) (binary: f(x[i], x2[i])) for i < count, pointers in the kernel's memory space.
struct EltwiseOperands {
  std::int64_t count = 0;
  const void* x = nullptr;
  void* y = nullptr;
  void* stream = nullptr;
  const void* x2 = nullptr;  ///< the second operand of a binary function (codes of `in`), else nullptr
};

/// What one chunk of a device sweep sends back (kernels/elementwise/cuda/eltwise_sweep.cu).
struct EltwiseSweepChunk {
  std::uint64_t first = 0, count = 0;                   ///< the input codes checked
  std::array<std::uint64_t, math::kUlpBins> histogram{};  ///< decided inputs only
  std::uint64_t above = 0;                              ///< decided results beyond the claim
  std::uint64_t worst = 0;                              ///< (min(ulps, 2^31 - 1) << 32) | input code of the largest (decided)
  std::uint64_t nan_mismatch = 0;                       ///< decided results NaN on one side only (counted in histogram's last bin too)
  std::uint64_t unclaimed = 0;                          ///< decided inputs outside the claim's domain (not in `worst`)
  struct Item { std::uint32_t x, got; };
  std::vector<Item> listed;                             ///< results beyond the claim, at most max_listed (ascending not guaranteed)
  std::vector<Item> undecided;                          ///< inputs whose reference the GPU could not decide, all of them
  bool undecided_overflow = false;                      ///< more undecided inputs than the buffer held: the chunk is incomplete
  double kernel_ms = 0;
};

class ElementwiseKernel : public Kernel {
 public:
  Operation operation() const final { return Operation::Elementwise; }
  virtual const EltwiseTraits& eltwise_traits() const = 0;
  /// Compute y. Throws NotSupportedError / DeviceError as the other operations' kernels.
  virtual void run(const EltwiseOperands& ops) = 0;
  /// Whether the device sweep is available (device kernels of this build with a device).
  virtual bool can_sweep() const { return false; }
  /// Check input codes [first, first + count) on the device (count <= 2^32). Throws DeviceError.
  virtual EltwiseSweepChunk sweep(std::uint64_t first, std::uint64_t count, std::size_t max_listed) {
    (void)first, (void)count, (void)max_listed;
    throw NotSupportedError(name() + ": no device sweep");
  }
};

/// Make an elementwise kernel by name; nullptr when unknown or of another operation.
std::unique_ptr<ElementwiseKernel> make_eltwise_kernel(const std::string& name);
/// The claim in words: "correctly rounded", "<= 2 ulp", "<= 2 + floor(1.173 |x|) ulp", "abs <= 2^-21.41 on [0.5, 2]".
std::string describe_claim(const math::Claim& c);
/// "exp, f32 -> f32, claim <= 2 ulp (CUDA ...)"; binary: "div, f32 x f32 -> f32, claim <= 2 ulp for |x2| in [...] ...".
std::string describe_eltwise_traits(const EltwiseTraits& t);
/// The code format of f32, f16 or bf16 (nullptr for any other).
const math::CodeFormat* code_format(const Format& f);
/// Why the declarations cannot be checked (empty: they can): formats other than f32/f16/bf16.
std::string eltwise_traits_problem(const EltwiseTraits& t);

void register_eltwise_cpu_kernels();   ///< kernels/elementwise/cpu/eltwise_cpu.cpp: glibc's functions, fixtures
void register_eltwise_hwy_kernels();   ///< kernels/elementwise/cpu/eltwise_hwy.cpp: Highway's hwy/contrib/math
void register_eltwise_cuda_kernels();  ///< kernels/elementwise/cuda/eltwise_cuda.cu: CUDA's functions and intrinsics
void register_eltwise_cuda_fastmath_kernels();  ///< kernels/elementwise/cuda/eltwise_cuda_fastmath.cu: the -use_fast_math twin
void register_eltwise2_cuda_kernels();  ///< kernels/elementwise/cuda/eltwise2_cuda.cu: CUDA's binary functions (div, powf, atan2f, ...)
void register_eltwise2_cuda_fastmath_kernels();  ///< kernels/elementwise/cuda/eltwise2_cuda_fastmath.cu: their -use_fast_math twin

}  // namespace fpcert
