// tests/support/host_gemm_fixture.hpp — a host GEMM kernel written in a test (an arithmetic computed independently of
// what it is judged by): its name, description and traits, and the loads and stores of elements in their formats'
// containers; the test writes run().
#pragma once

#include <string>
#include <utility>

#include "base/codes.hpp"
#include "kernels/kernel.hpp"
#include "oracle/round.hpp"

namespace fpcert::test {

class HostGemmFixture : public GemmKernel {
 public:
  HostGemmFixture(std::string name, std::string description, KernelTraits t)
      : t_(std::move(t)), name_(std::move(name)), description_(std::move(description)) {}
  const std::string& name() const override { return name_; }
  std::string description() const override { return description_; }
  Backend backend() const override { return Backend::Cpu; }
  const KernelTraits& traits() const override { return t_; }
  Support can_implement(std::int64_t, std::int64_t, std::int64_t) const override { return Support::yes(); }

 protected:
  /// Element x of a host buffer of codes of f (in f's container), as a float (exact for formats inside fp32).
  static float load(const Format& f, const void* p, std::int64_t x) {
    return static_cast<float>(to_double(f, from_container(f, load_code(p, x, container_bytes(f)))));
  }
  /// v rounded to nearest into f, stored as element x.
  static void store(const Format& f, void* p, std::int64_t x, double v) {
    store_code(p, x, container_bytes(f), to_container(f, round_double(f, v, Rounder::nearest(f)).code));
  }

  KernelTraits t_;

 private:
  std::string name_, description_;
};

}  // namespace fpcert::test
