// suites/ops/elementwise/eltwise_faults.cpp — the elementwise fault injectors (eltwise_faults.hpp).
#include "suites/ops/elementwise/eltwise_faults.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "base/codes.hpp"
#include "base/error.hpp"
#include "kernels/device/device_api.hpp"
#include "oracle/round.hpp"
#include "suites/mutation/injector_api.hpp"

namespace fpcert {

namespace {

// The code's class by the oracle's decoder (oracle/format.hpp, classify).
bool is_nan(const Format& f, std::uint64_t c) { return classify(f, c) == FpClass::NaN; }
bool is_inf(const Format& f, std::uint64_t c) { return classify(f, c) == FpClass::Inf; }
bool is_nan_or_inf(const Format& f, std::uint64_t c) { return is_nan(f, c) || is_inf(f, c); }
bool is_subnormal(const Format& f, std::uint64_t c) { return classify(f, c) == FpClass::Subnormal; }

/// Even functions: |x| changes no result (the fault cannot be seen).
bool even(math::Fn fn) { return fn == math::Fn::Cos || fn == math::Fn::Cosh || fn == math::Fn::Cospi; }

/// Functions with no subnormal result when input and output share a format: f(x) is 0, or at least the square (cube)
/// root of the smallest subnormal (above the smallest normal in f32, f16, bf16), or |log_b(1 + ulp(1))| (above it too),
/// or cosh >= 1. elt_ftz cannot change one of their results.
bool no_subnormal_results(math::Fn fn) {
  using math::Fn;
  return fn == Fn::Sqrt || fn == Fn::Rsqrt || fn == Fn::Cbrt || fn == Fn::Cosh || fn == Fn::Log || fn == Fn::Log2 || fn == Fn::Log10;
}

/// Functions with f(0) = 1 and |f(x) - 1| <= 2.31 |x| (exp10's slope ln 10; erfc's 2/sqrt(pi); cos, cosh, cospi: O(x^2)):
/// for a subnormal x (|x| < 2^-14 in f16, 2^-126 in f32 and bf16) the distance stays below half an ulp under 1
/// (2^-12 in f16), so f(x) rounds to 1 = f(0) and elt_daz cannot change a result.
bool flat_at_zero(math::Fn fn) {
  using math::Fn;
  return fn == Fn::Exp || fn == Fn::Exp2 || fn == Fn::Exp10 || fn == Fn::Cos || fn == Fn::Cosh || fn == Fn::Cospi || fn == Fn::Erfc;
}

/// Functions whose range has no infinity (|f| <= 2, or tan, whose poles no float of one format reaches: the largest
/// |tan x| of an f16 input is about 2000): elt_inf_to_max cannot change a result when input and output share a format.
bool bounded(math::Fn fn) {
  using math::Fn;
  return fn == Fn::Sin || fn == Fn::Cos || fn == Fn::Tan || fn == Fn::Sinpi || fn == Fn::Cospi || fn == Fn::Tanh || fn == Fn::Erf ||
         fn == Fn::Erfc || fn == Fn::Sigmoid;
}

/// f in double for the functions monotone in |x| beyond 1 (NaN for the others): enough to see where a result saturates.
double monotone_value(math::Fn fn, double x) {
  using math::Fn;
  switch (fn) {
    case Fn::Exp: return std::exp(x);
    case Fn::Exp2: return std::exp2(x);
    case Fn::Exp10: return std::pow(10.0, x);
    case Fn::Expm1: return std::expm1(x);
    case Fn::Tanh: return std::tanh(x);
    case Fn::Erf: return std::erf(x);
    case Fn::Erfc: return std::erfc(x);
    case Fn::Sigmoid: return 1 / (1 + std::exp(-x));
    case Fn::Sinh: return std::sinh(x);
    case Fn::Cosh: return std::cosh(x);
    default: return std::numeric_limits<double>::quiet_NaN();
  }
}

/// Whether f, monotone in x beyond 2^(p-1) in each direction, already rounds there to what it rounds to at the largest
/// finite input (+Inf, 0, +-1, -1): then every input elt_large_arg changes keeps its result. The values are far from a
/// rounding boundary where they agree (f16's exp(1024), bf16's tanh(128)); where they are near one they differ, and the
/// fault stays applicable: double's libm decides which.
bool saturated_beyond_large(math::Fn fn, const Format& in, const Format& out) {
  const double t = std::ldexp(1.0, in.frac_bits), big = in.max_finite();
  const Rounder rn = Rounder::nearest(out);
  for (double s : {1.0, -1.0}) {
    const double a = monotone_value(fn, s * t), b = monotone_value(fn, s * big);
    if (std::isnan(a) || std::isnan(b)) return false;
    if (round_double(out, a, rn).code != round_double(out, b, rn).code) return false;
  }
  return true;
}

/// Inputs changed before the call, results after it, or the call itself.
enum class Stage : std::uint8_t { Inputs, Outputs, Call };

Stage stage_of(Fault f) {
  switch (f) {
    case Fault::EltDaz:
    case Fault::EltAbsInput:
    case Fault::EltLargeArg: return Stage::Inputs;
    case Fault::EltHeadUnwritten:
    case Fault::EltWritePastEnd:
    case Fault::EltClobbersX: return Stage::Call;
    default: return Stage::Outputs;
  }
}

/// The input faults on one code of the input format (x1: the first operand; DAZ flushes both).
std::uint32_t input_fault(Fault f, const Format& in, std::uint32_t c, bool first) {
  switch (f) {
    case Fault::EltDaz: return eltwise_flush(in, c);
    case Fault::EltAbsInput: return first ? static_cast<std::uint32_t>(c & ~in.sign_mask()) : c;
    case Fault::EltLargeArg: {
      // |x| >= 2^(p - 1): no fraction bits left, where a range reduction (sin's x - k pi/2, log's mantissa split) must
      // keep every bit; the fault reads x with its last 4 significand bits cleared.
      const std::uint64_t e = (c & in.exp_field_mask()) >> in.frac_bits;
      if (!first || is_nan_or_inf(in, c) || e < static_cast<std::uint64_t>(in.frac_bits + in.bias)) return c;
      return c & ~std::uint32_t{0xF};
    }
    default: return c;
  }
}

std::uint32_t output_fault(Fault f, const Format& out, std::uint32_t c) {
  switch (f) {
    case Fault::EltUlpAway: return eltwise_ulp_away(out, c);
    case Fault::EltNarrowBf16: return eltwise_narrow(out, c, bf16.precision());
    case Fault::EltFtz: return eltwise_flush(out, c);
    case Fault::EltNanToZero: return is_nan(out, c) ? 0u : c;
    case Fault::EltInfToMax:
      return is_inf(out, c) ? static_cast<std::uint32_t>((c & out.sign_mask()) | out.max_finite_code()) : c;
    case Fault::EltZeros: return 0u;
    default: return c;
  }
}

/// A mutant under its registry name: the fault made around the wrapped kernel. Buffers are reached through a DeviceApi of
/// the kernel's memory space; the call runs on the mutant's own stream and is waited for.
class EltwiseMutant final : public ElementwiseKernel {
 public:
  EltwiseMutant(std::unique_ptr<ElementwiseKernel> inner, Fault f, std::string name) : in_(std::move(inner)), f_(f), name_(std::move(name)) {}
  const std::string& name() const override { return name_; }
  std::string description() const override { return in_->description() + " with fault " + std::string(fault_info(f_).id); }
  Backend backend() const override { return in_->backend(); }
  MemorySpace memory() const override { return in_->memory(); }
  bool is_mutant() const override { return true; }
  const EltwiseTraits& eltwise_traits() const override { return in_->eltwise_traits(); }
  // No device sweep: the sweep would check the wrapped kernel, not the fault (a mutant's every-code case runs through
  // run(), which the fault wraps).
  bool can_sweep() const override { return false; }

  void run(const EltwiseOperands& o) override {
    const EltwiseTraits& t = in_->eltwise_traits();
    const int ib = container_bytes(*t.in), ob = container_bytes(*t.out);
    const auto n = static_cast<std::size_t>(o.count);
    EltwiseOperands p = o;
    switch (stage_of(f_)) {
      case Stage::Inputs: {
        void* x = changed_input(o.x, n, ib, *t.in, true);
        void* x2 = o.x2 && f_ == Fault::EltDaz ? changed_input(o.x2, n, ib, *t.in, false) : nullptr;
        p.x = x;
        if (x2) p.x2 = x2;
        call(p);
        api().free(x);
        if (x2) api().free(x2);
        return;
      }
      case Stage::Call: {
        if (f_ == Fault::EltHeadUnwritten && p.count > 0) {  // an alignment prologue skipped: y[0] never written
          --p.count;
          p.x = static_cast<const std::uint8_t*>(o.x) + ib;
          p.y = static_cast<std::uint8_t*>(o.y) + ob;
          if (o.x2) p.x2 = static_cast<const std::uint8_t*>(o.x2) + ib;
        }
        call(p);
        if (f_ == Fault::EltWritePastEnd && n > 0) {
          // y[count] := y[count - 1]: one element past the end (the runner's guard bytes see it).
          std::vector<std::uint8_t> last(static_cast<std::size_t>(ob));
          api().to_host(last.data(), static_cast<const std::uint8_t*>(o.y) + (n - 1) * ob, last.size());
          api().to_device(static_cast<std::uint8_t*>(o.y) + n * ob, last.data(), last.size());
        }
        if (f_ == Fault::EltClobbersX && n > 0) {
          std::vector<std::uint8_t> x0(static_cast<std::size_t>(ib));
          api().to_host(x0.data(), o.x, x0.size());
          store_code(x0.data(), 0, ib, load_code(x0.data(), 0, ib) ^ 1);  // the last bit of x[0] flipped: a scratch write
          api().to_device(const_cast<void*>(o.x), x0.data(), x0.size());
        }
        return;
      }
      case Stage::Outputs: {
        call(p);
        std::vector<std::uint8_t> y(n * static_cast<std::size_t>(ob));
        if (y.empty()) return;
        api().to_host(y.data(), o.y, y.size());
        for (std::size_t i = 0; i < n; ++i) {
          const auto at = static_cast<std::int64_t>(i);
          store_code(y.data(), at, ob, output_fault(f_, *t.out, static_cast<std::uint32_t>(load_code(y.data(), at, ob))));
        }
        api().to_device(o.y, y.data(), y.size());
        return;
      }
    }
  }

 private:
  DeviceApi& api() { return injector_api(api_, memory(), in_->name()); }
  void call(const EltwiseOperands& o) {
    EltwiseOperands x = o;
    x.stream = api().stream();
    in_->run(x);
    api().synchronize(60'000);
  }
  /// A copy of an input operand with the fault applied, in the kernel's memory space (freed by the caller).
  void* changed_input(const void* src, std::size_t n, int ib, const Format& in, bool first) {
    std::vector<std::uint8_t> h(n * static_cast<std::size_t>(ib));
    if (!h.empty()) api().to_host(h.data(), src, h.size());
    for (std::size_t i = 0; i < n; ++i) {
      const auto at = static_cast<std::int64_t>(i);
      store_code(h.data(), at, ib, input_fault(f_, in, static_cast<std::uint32_t>(load_code(h.data(), at, ib)), first));
    }
    void* d = api().alloc(h.empty() ? 1 : h.size());
    if (!h.empty()) api().to_device(d, h.data(), h.size());
    return d;
  }

  std::unique_ptr<ElementwiseKernel> in_;
  Fault f_;
  std::string name_;
  std::unique_ptr<DeviceApi> api_;
};

}  // namespace

std::uint32_t eltwise_ulp_away(const Format& f, std::uint32_t c) {
  if (is_nan_or_inf(f, c) || (c & f.magnitude_mask()) == 0) return c;
  return c + 1;  // the magnitude one code up, the sign kept: the largest finite becomes Inf
}

std::uint32_t eltwise_narrow(const Format& f, std::uint32_t c, int bits) {
  if (is_nan_or_inf(f, c) || bits >= f.precision()) return c;
  const int shift = f.precision() - bits;
  const std::uint64_t sign = c & f.sign_mask(), mag = c & f.magnitude_mask();
  const std::uint64_t lsb = (mag >> shift) & 1, half = std::uint64_t{1} << (shift - 1);
  // Nearest-even on the code's low bits: a carry runs into the exponent field (the largest values become Inf).
  const std::uint64_t r = ((mag + half - 1 + lsb) >> shift) << shift;
  return static_cast<std::uint32_t>(sign | std::min(r, f.inf_code()));
}

std::uint32_t eltwise_flush(const Format& f, std::uint32_t c) {
  return is_subnormal(f, c) ? static_cast<std::uint32_t>(c & f.sign_mask()) : c;
}

std::string eltwise_fault_not_applicable(Fault f, const ElementwiseKernel& k) {
  if (fault_info(f).operation != Operation::Elementwise) return "not a fault of elementwise kernels";
  const EltwiseTraits& t = k.eltwise_traits();
  switch (f) {
    case Fault::EltNarrowBf16:
      if (t.out->precision() <= bf16.precision()) return "the output has no more significand bits than bf16";
      break;
    case Fault::EltFtz:
      if (t.ftz) return "the kernel declares flushed results (FTZ)";
      if (*t.in == *t.out && no_subnormal_results(t.fn))
        return fmt::format("{} has no subnormal result in {}: flushing one changes nothing", math::to_string(t.fn), t.out->tag);
      break;
    case Fault::EltDaz:
      if (t.daz) return "the kernel declares flushed inputs (DAZ)";
      if (*t.in == *t.out && flat_at_zero(t.fn))
        return fmt::format("{} of every subnormal rounds to f(0) = 1 in {}: flushing the input changes nothing", math::to_string(t.fn),
                           t.out->tag);
      break;
    case Fault::EltAbsInput:
      if (even(t.fn)) return "an even function: f(|x|) = f(x)";
      break;
    case Fault::EltInfToMax:
      if (*t.in == *t.out && bounded(t.fn)) return fmt::format("{} has no infinite result in {}", math::to_string(t.fn), t.out->tag);
      break;
    case Fault::EltLargeArg:
      if (math::arity(t.fn) == 1 && saturated_beyond_large(t.fn, *t.in, *t.out))
        return fmt::format("{} is saturated (Inf, 0 or +-1 in {}) at every input of magnitude >= 2^{}: the cleared bits change no result",
                           math::to_string(t.fn), t.out->tag, t.in->frac_bits);
      break;
    default: break;
  }
  return {};
}

std::string register_eltwise_mutant(const std::string& kernel, Fault f) {
  const KernelInfo* info = find_kernel_info(kernel);
  if (!info || info->operation != Operation::Elementwise) throw InputError("unknown elementwise kernel '" + kernel + "'");
  if (fault_info(f).operation != Operation::Elementwise)
    throw InputError(fmt::format("'{}' is not a fault of elementwise kernels (fpcert mutate --list)", fault_info(f).id));
  const std::string name = mutant_name(kernel, f);
  register_kernel(
      name, info->backend, true,
      [kernel, f, name]() -> std::unique_ptr<Kernel> { return std::make_unique<EltwiseMutant>(make_eltwise_kernel(kernel), f, name); },
      Operation::Elementwise);
  return name;
}

}  // namespace fpcert
