// tests/support/relabelled_kernel.hpp — a GEMM kernel that runs another and declares other traits (a declaration wrong,
// or looser, on purpose): what the diagnosis tests judge a kernel against.
#pragma once

#include <memory>
#include <string>

#include "kernels/kernel.hpp"

namespace fpcert::test {

class Relabelled final : public GemmKernel {
 public:
  Relabelled(std::unique_ptr<GemmKernel> inner, KernelTraits declared) : inner_(std::move(inner)), t_(std::move(declared)) {}
  const std::string& name() const override { return name_; }
  std::string description() const override { return "relabelled"; }
  Backend backend() const override { return Backend::Cpu; }
  const KernelTraits& traits() const override { return t_; }
  Support can_implement(std::int64_t, std::int64_t, std::int64_t) const override { return Support::yes(); }
  void run(const GemmOperands& ops) override { inner_->run(ops); }

 private:
  std::unique_ptr<GemmKernel> inner_;
  KernelTraits t_;
  std::string name_ = "relabelled";
};

}  // namespace fpcert::test
