// suites/ops/reduce/reduce_faults.cpp — the reduction fault injectors (suites/ops/reduce/reduce_faults.hpp).
#include "suites/ops/reduce/reduce_faults.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "base/codes.hpp"
#include "base/error.hpp"
#include "kernels/device/device_api.hpp"
#include "suites/mutation/injector_api.hpp"

namespace fpcert {

std::string reduce_fault_not_applicable(Fault f, const ReduceTraits& t) {
  if (fault_info(f).operation != Operation::Reduction) return "a fault of GEMM kernels";
  switch (f) {
    case Fault::RedWrongTree:
      if (t.order.kind == ReduceOrderKind::Unknown && t.scaling != Nrm2Scaling::Lapack)
        return "the kernel declares no order: any tree is one it admits";
      break;
    case Fault::RedAccF16:
      if (t.arith.acc->precision() <= f16.precision()) return "the kernel accumulates in a format no wider than fp16";
      break;
    case Fault::RedUnscaledNrm2:
      if (t.kind != ReduceKind::Nrm2 || t.scaling != Nrm2Scaling::Lapack) return "only a scaled nrm2 can lose its scaling";
      break;
    default: break;
  }
  return {};
}

namespace {

/// A buffer in the kernel's memory space, freed on scope exit.
class Scratch {
 public:
  Scratch(DeviceApi& api, std::size_t bytes) : api_(api), p_(api.alloc(std::max<std::size_t>(bytes, 1))) {}
  ~Scratch() { api_.free(p_); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  void* get() const { return p_; }

 private:
  DeviceApi& api_;
  void* p_;
};

/// The reduction fault injectors. Every access to the kernel's buffers goes through a DeviceApi of the
/// kernel's memory space (host memory, or the CUDA device: the inputs and results are copied, changed on the
/// host and copied back), so device kernels (CUDA built-ins, CUB, plugins) take the same faults as the models.
class ReduceMutant final : public ReduceKernel {
 public:
  ReduceMutant(std::unique_ptr<ReduceKernel> inner, Fault f, std::string name) : in_(std::move(inner)), f_(f), name_(std::move(name)) {}
  const std::string& name() const override { return name_; }
  std::string description() const override { return in_->description() + " with fault " + std::string(fault_info(f_).id); }
  Backend backend() const override { return in_->backend(); }
  MemorySpace memory() const override { return in_->memory(); }
  bool is_mutant() const override { return true; }
  const ReduceTraits& reduce_traits() const override { return in_->reduce_traits(); }
  Support can_implement(std::int64_t c, std::int64_t n, ReduceAxis a) const override { return in_->can_implement(c, n, a); }
  void run(const ReduceOperands& o) override {
    const ReduceTraits& t = in_->reduce_traits();
    const int ob = container_bytes(*t.out);
    const auto out_bytes = static_cast<std::size_t>(o.count * ob);
    switch (f_) {
      case Fault::RedDropElement: {
        const int xb = container_bytes(*t.x_input);
        const std::int64_t rows = o.axis == ReduceAxis::Rows ? o.count : o.length;
        std::vector<std::uint8_t> x(static_cast<std::size_t>(rows * o.ldx * xb));
        if (!x.empty()) api().to_host(x.data(), o.x, x.size());
        for (std::int64_t v = 0; v < o.count && o.length > 0; ++v) {
          const std::int64_t at = o.axis == ReduceAxis::Rows ? v * o.ldx + o.length - 1 : (o.length - 1) * o.ldx + v;
          store_code(x.data(), at, xb, 0);
        }
        Scratch xs(api(), x.size());
        if (!x.empty()) api().to_device(xs.get(), x.data(), x.size());
        ReduceOperands p = o;
        p.x = xs.get();
        call(p);
        return;
      }
      case Fault::RedNanToZero: {
        call(o);
        std::vector<std::uint8_t> out(out_bytes);
        if (!out.empty()) api().to_host(out.data(), o.out, out.size());
        for (std::int64_t v = 0; v < o.count; ++v)
          if (std::isnan(to_double(*t.out, from_container(*t.out, load_code(out.data(), v, ob))))) store_code(out.data(), v, ob, 0);
        if (!out.empty()) api().to_device(o.out, out.data(), out.size());
        return;
      }
      case Fault::RedWrongTree:
      case Fault::RedAccF16:
      case Fault::RedUnscaledNrm2: {
        // The wrong tree: the kernel on each third of the vector, the partials joined in order (halves would be
        // the declared tree itself for a pairwise kernel, whose first split is ceil(n/2)).
        const std::int64_t chunk = f_ == Fault::RedWrongTree ? (o.length + 2) / 3 : f_ == Fault::RedAccF16 ? 16 : 1;
        const Format& acc = f_ == Fault::RedAccF16 ? f16 : *t.arith.acc;
        const Rounder ra{t.arith.rounder.rounding, default_saturation(acc), NanPayload::Preserve};
        const bool nrm2 = t.kind == ReduceKind::Nrm2;
        std::vector<double> sum(static_cast<std::size_t>(o.count), 0.0);
        std::vector<std::uint8_t> part(out_bytes);
        Scratch ps(api(), out_bytes);
        const int xb = container_bytes(*t.x_input), yb = container_bytes(*t.y_input);
        for (std::int64_t s = 0; s < std::max<std::int64_t>(o.length, 1); s += std::max<std::int64_t>(chunk, 1)) {
          ReduceOperands p = o;
          p.length = std::min(chunk, o.length - s);
          const std::int64_t off = o.axis == ReduceAxis::Rows ? s : s * o.ldx;
          p.x = static_cast<const std::uint8_t*>(o.x) + off * xb;
          if (o.y) p.y = static_cast<const std::uint8_t*>(o.y) + (o.axis == ReduceAxis::Rows ? s : s * o.ldy) * yb;
          p.out = ps.get();
          call(p);
          if (!part.empty()) api().to_host(part.data(), ps.get(), part.size());
          for (std::int64_t v = 0; v < o.count; ++v) {
            double r = to_double(*t.out, from_container(*t.out, load_code(part.data(), v, ob)));
            if (nrm2) r = to_double(acc, round_double(acc, r * r, ra).code);
            auto& a = sum[static_cast<std::size_t>(v)];
            a = s == 0 ? to_double(acc, round_double(acc, r, ra).code) : to_double(acc, round_double(acc, a + r, ra).code);
          }
          if (o.length == 0) break;
        }
        const Rounder ro{t.arith.rounder.rounding, default_saturation(*t.out), NanPayload::Preserve};
        for (std::int64_t v = 0; v < o.count; ++v) {
          double a = sum[static_cast<std::size_t>(v)];
          if (nrm2) a = to_double(acc, round_double(acc, std::sqrt(a), ra).code);
          store_code(part.data(), v, ob, to_container(*t.out, round_double(*t.out, a, ro).code));
        }
        if (!part.empty()) api().to_device(o.out, part.data(), part.size());
        return;
      }
      default: call(o);
    }
  }

 private:
  DeviceApi& api() { return injector_api(api_, memory(), in_->name()); }
  /// Run the kernel on the injector's stream and wait for it: its results are read right after.
  void call(const ReduceOperands& o) {
    ReduceOperands x = o;
    x.stream = api().stream();
    in_->run(x);
    api().synchronize(kTimeoutMs);
  }
  static constexpr double kTimeoutMs = 60'000;  // a hung kernel becomes a DeviceError (the case's, not the run's)

  std::unique_ptr<ReduceKernel> in_;
  Fault f_;
  std::string name_;
  std::unique_ptr<DeviceApi> api_;
};

}  // namespace

std::unique_ptr<ReduceKernel> make_reduce_mutant(std::unique_ptr<ReduceKernel> inner, Fault f, std::string name) {
  return std::make_unique<ReduceMutant>(std::move(inner), f, std::move(name));
}

std::string register_reduce_mutant(const std::string& kernel, Fault f) {
  const KernelInfo* info = find_kernel_info(kernel);
  if (!info || info->operation != Operation::Reduction) throw InputError("unknown reduction kernel '" + kernel + "'");
  const std::string name = mutant_name(kernel, f);
  register_kernel(name, info->backend, true, [kernel, f, name] { return make_reduce_mutant(make_reduce_kernel(kernel), f, name); },
                  Operation::Reduction);
  return name;
}

}  // namespace fpcert
