// kernels/gemm/cpu/model.hpp — CPU models of GEMM kernels: software that states its exact operation
// order, so a GPU kernel with the same order can be checked against it bit for bit, and the
// models themselves graded against the exact oracle.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/kernel.hpp"

namespace fpcert {

/// Operands decoded to exact doubles: A row-major m x k, B row-major k x n (values of the
/// kernel's input formats).
struct DecodedOperands {
  std::int64_t m = 0, n = 0, k = 0;
  std::vector<double> a, b;
  double A(std::int64_t i, std::int64_t t) const { return a[static_cast<std::size_t>(i * k + t)]; }
  double B(std::int64_t t, std::int64_t j) const { return b[static_cast<std::size_t>(t * n + j)]; }
};

/// Base of the CPU models: decodes the operand codes, calls compute(), writes the output codes.
class CpuModel : public GemmKernel {
 public:
  CpuModel(std::string name, std::string description, KernelTraits traits)
      : name_(std::move(name)), description_(std::move(description)), traits_(std::move(traits)) {
    traits_.batched = !traits_.block.active();  // run() loops over strided batches (model.cpp); block-scaled: per case
  }
  const std::string& name() const override { return name_; }
  std::string description() const override { return description_; }
  Backend backend() const override { return Backend::Cpu; }
  const KernelTraits& traits() const override { return traits_; }
  void run(const GemmOperands& ops) override;

  /// C as codes of traits().out, row-major m x n.
  virtual std::vector<std::uint64_t> compute(const DecodedOperands& d) const = 0;

  static DecodedOperands decode(const GemmOperands& ops, const KernelTraits& t);

 protected:
  std::string name_, description_;
  KernelTraits traits_;
};

/// The traits of an atomics split-K GEMM in fp32 (kernels/gemm/cpu/nondet_models.cpp, kernels/gemm/cuda/splitk_atomic.cu):
/// `splits` chunks of ceil(K/splits) summed by FMA from +0, partials added into C (+0 first) in an arrival order that
/// changes run to run: order splitk:combine=atomic, determinism run_to_run.
KernelTraits atomic_splitk_traits(int splits);

/// The traits of the fused-epilogue models (kernels/gemm/cpu/epilogue_models.cpp; docs/epilogue.md): operands in `in`,
/// fp32 accumulation and epilogue, output `out`, the bias in `bias_format` (nullptr: the output format); every bias
/// kind and activation (glibc's erff/tanhf/expf, 2^-22), FP8 scale factors, amax, every layout, alpha/beta.
KernelTraits epilogue_model_traits(const Format& in, const Format& out, const Format* bias_format);
/// The generic fused-epilogue model: fp32 FMA along K, then the epilogue its traits declare (t.epilogue, e.g. with
/// round_before_act), as kernels/gemm/cpu/epilogue_models.cpp states it. t.acc must be fp32.
std::unique_ptr<CpuModel> make_epilogue_model(std::string name, std::string description, KernelTraits t);

/// Makes a built-in CPU model of kernels/gemm/cpu/models.cpp by name (nullptr when unknown).
std::unique_ptr<CpuModel> make_cpu_model(const std::string& name);

}  // namespace fpcert
