// kernels/elementwise/cpu/eltwise_hwy.cpp — Google Highway's hwy/contrib/math functions (a dependency already: the SIMD
// conversion model) as subjects of the elementwise check: Exp, Log, Log2, Log10 on float lanes, compiled for the static
// target of this build (no runtime dispatch: the subject is what this binary runs). Claims as math-inl.h states them:
// Exp 1 ulp on [-FLT_MAX, 104], Log 4 ulp, Log2 and Log10 2 ulp on (0, FLT_MAX].
#include <hwy/highway.h>
#include <hwy/contrib/math/math-inl.h>

#include <cfloat>
#include <cstring>
#include <vector>

#include "base/codes.hpp"
#include "kernels/elementwise/eltwise_kernel.hpp"

namespace fpcert {

namespace {

namespace hn = hwy::HWY_NAMESPACE;

template <math::Fn F>
void apply(const float* x, float* y, std::size_t n) {
  const hn::ScalableTag<float> d;
  const std::size_t N = hn::Lanes(d);
  std::vector<float> tx(N, 1.0f), ty(N);
  for (std::size_t i = 0; i < n; i += N) {
    const bool whole = i + N <= n;
    if (!whole) std::memcpy(tx.data(), x + i, (n - i) * sizeof(float));  // the tail through a padded vector
    const auto v = hn::LoadU(d, whole ? x + i : tx.data());
    hn::Vec<decltype(d)> r;
    if constexpr (F == math::Fn::Exp) r = hn::Exp(d, v);
    else if constexpr (F == math::Fn::Log) r = hn::Log(d, v);
    else if constexpr (F == math::Fn::Log2) r = hn::Log2(d, v);
    else r = hn::Log10(d, v);
    if (whole) {
      hn::StoreU(r, d, y + i);
    } else {
      hn::StoreU(r, d, ty.data());
      std::memcpy(y + i, ty.data(), (n - i) * sizeof(float));
    }
  }
}

class HwyEltwise final : public ElementwiseKernel {
 public:
  HwyEltwise(std::string name, EltwiseTraits t) : name_(std::move(name)), t_(std::move(t)) {}
  const std::string& name() const override { return name_; }
  std::string description() const override { return std::string("Highway hwy/contrib/math, static target ") + hwy::TargetName(HWY_TARGET); }
  Backend backend() const override { return Backend::Cpu; }
  const EltwiseTraits& eltwise_traits() const override { return t_; }
  void run(const EltwiseOperands& o) override {
    const auto n = static_cast<std::size_t>(o.count);
    const auto* x = static_cast<const float*>(o.x);
    auto* y = static_cast<float*>(o.y);
    switch (t_.fn) {
      case math::Fn::Exp: apply<math::Fn::Exp>(x, y, n); break;
      case math::Fn::Log: apply<math::Fn::Log>(x, y, n); break;
      case math::Fn::Log2: apply<math::Fn::Log2>(x, y, n); break;
      case math::Fn::Log10: apply<math::Fn::Log10>(x, y, n); break;
      default: throw NotSupportedError(name_ + ": no such Highway function");
    }
  }

 private:
  std::string name_;
  EltwiseTraits t_;
};

}  // namespace

void register_eltwise_hwy_kernels() {
  struct Spec {
    const char* name;
    math::Fn fn;
    double ulps, lo, hi;
  };
  const Spec specs[] = {{"hwy_exp_f32", math::Fn::Exp, 1, -FLT_MAX, 104.0},
                        {"hwy_log_f32", math::Fn::Log, 4, 0x1p-149, FLT_MAX},
                        {"hwy_log2_f32", math::Fn::Log2, 2, 0x1p-149, FLT_MAX},
                        {"hwy_log10_f32", math::Fn::Log10, 2, 0x1p-149, FLT_MAX}};
  for (const Spec& s : specs) {
    EltwiseTraits t;
    t.fn = s.fn;
    t.claim = {math::ClaimKind::Ulp, s.ulps, 0, 0, s.lo, s.hi};
    t.claim_source = "Highway math-inl.h: Max Error and Valid Range";
    const std::string name = s.name;
    register_kernel(name, Backend::Cpu, false, [name, t] { return std::make_unique<HwyEltwise>(name, t); }, Operation::Elementwise);
  }
}

}  // namespace fpcert
