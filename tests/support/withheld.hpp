// tests/support/withheld.hpp — a kernel that hides its declared order: the tiers without emulation (the
// envelope, the statistical test, order-free elements) must judge it.
#pragma once

#include <memory>
#include <string>

#include "kernels/kernel.hpp"

namespace fpcert::test {

class Withheld final : public GemmKernel {
 public:
  Withheld(std::unique_ptr<GemmKernel> k, std::string name) : k_(std::move(k)), name_(std::move(name)), t_(k_->traits()) {
    t_.sum_order = SummationOrder::unknown();
  }
  const std::string& name() const override { return name_; }
  std::string description() const override { return "withheld order"; }
  Backend backend() const override { return Backend::Cpu; }
  const KernelTraits& traits() const override { return t_; }
  void run(const GemmOperands& ops) override { k_->run(ops); }

 private:
  std::unique_ptr<GemmKernel> k_;
  std::string name_;
  KernelTraits t_;
};

}  // namespace fpcert::test
