// tests/support/wrapped_gemm.hpp — a test GEMM kernel that runs a registered one and changes its call or its output
// (a bug on purpose, a looser convention): name, description, backend and traits come from here, run() from the test.
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "kernels/kernel.hpp"
#include "kernels/register.hpp"

namespace fpcert::test {

class WrappedGemm : public GemmKernel {
 public:
  /// `inner`: the registered kernel run underneath (its traits are this kernel's); `name`, `what`: this kernel's.
  WrappedGemm(const std::string& inner, std::string name, std::string what)
      : inner_(make_gemm_kernel(inner)), name_(std::move(name)), what_(std::move(what)) {}
  const std::string& name() const override { return name_; }
  std::string description() const override { return what_; }
  Backend backend() const override { return Backend::Cpu; }
  const KernelTraits& traits() const override { return inner_->traits(); }

 protected:
  std::unique_ptr<GemmKernel> inner_;

 private:
  std::string name_, what_;
};

}  // namespace fpcert::test
