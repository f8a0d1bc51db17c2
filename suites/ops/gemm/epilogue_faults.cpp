// suites/ops/gemm/epilogue_faults.cpp — the epilogue faults realised through the wrapped kernel's own epilogue (header).
#include "suites/ops/gemm/epilogue_faults.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "base/codes.hpp"

namespace fpcert {

namespace {

/// A buffer in the kernel's memory space, freed on scope exit.
class Scratch {
 public:
  Scratch(DeviceApi& api, std::size_t bytes) : api_(api), p_(api.alloc(std::max<std::size_t>(1, bytes))) {}
  ~Scratch() { api_.free(p_); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  void* get() const { return p_; }

 private:
  DeviceApi& api_;
  void* p_;
};

const Format& bias_format(const KernelTraits& t) { return t.epilogue.bias_format ? *t.epilogue.bias_format : *t.out; }

/// The bias vector's codes (containers of its format) as the call passes them.
std::vector<std::uint64_t> download_bias(const GemmOperands& ops, const Format& f, DeviceApi& api) {
  const int cb = container_bytes(f);
  const std::int64_t len = ops.bias_kind == BiasKind::PerRow ? ops.m : ops.n;
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(len * cb));
  if (!bytes.empty()) api.to_host(bytes.data(), ops.bias, bytes.size());
  std::vector<std::uint64_t> codes(static_cast<std::size_t>(len));
  for (std::int64_t x = 0; x < len; ++x) codes[static_cast<std::size_t>(x)] = load_code(bytes.data(), x, cb);
  return codes;
}

/// Call with a bias of these container codes (in a scratch buffer of the kernel's memory) and this kind.
void call_with_bias(const GemmOperands& ops, BiasKind kind, const std::vector<std::uint64_t>& codes, const Format& f, DeviceApi& api,
                    const GemmCall& call) {
  const int cb = container_bytes(f);
  std::vector<std::uint8_t> bytes(codes.size() * static_cast<std::size_t>(cb));
  for (std::size_t x = 0; x < codes.size(); ++x) store_code(bytes.data(), static_cast<std::int64_t>(x), cb, codes[x]);
  Scratch s(api, bytes.size());
  if (!bytes.empty()) api.to_device(s.get(), bytes.data(), bytes.size());
  GemmOperands o = ops;
  o.bias_kind = kind;
  o.bias = s.get();
  call(o);
}

double load_amax(const void* p, const Format& acc, DeviceApi& api) {
  const int cb = container_bytes(acc);
  std::uint8_t buf[8] = {};
  api.to_host(buf, p, static_cast<std::size_t>(cb));
  return to_double(acc, from_container(acc, load_code(buf, 0, cb)));
}

void store_amax(void* p, double v, const Format& acc, DeviceApi& api) {
  const int cb = container_bytes(acc);
  std::uint8_t buf[8] = {};
  store_code(buf, 0, cb, to_container(acc, round_double(acc, v, Rounder::nearest(acc)).code));
  api.to_device(p, buf, static_cast<std::size_t>(cb));
}

}  // namespace

GemmOperands without_epilogue(const GemmOperands& ops) {
  GemmOperands o = ops;
  o.bias_kind = BiasKind::None;
  o.bias = nullptr;
  o.activation = Activation::None;
  o.scale_a = o.scale_b = o.scale_d = 1;
  o.amax = nullptr;
  return o;
}

void run_batches_merging_amax(const GemmOperands& ops, const KernelTraits& t, DeviceApi& api, const GemmCall& run_one) {
  if (!ops.amax) {
    for (std::int64_t b = 0; b < ops.batch; ++b) run_one(batch_slice(ops, b, t));
    return;
  }
  const Format& acc = *t.acc;
  Scratch s(api, static_cast<std::size_t>(container_bytes(acc)));
  double m = 0;
  for (std::int64_t b = 0; b < ops.batch; ++b) {
    GemmOperands o = batch_slice(ops, b, t);
    o.amax = s.get();
    run_one(o);
    const double v = load_amax(s.get(), acc, api);
    m = std::isnan(v) || std::isnan(m) ? std::numeric_limits<double>::quiet_NaN() : std::max(m, v);
  }
  store_amax(ops.amax, m, acc, api);
}

bool run_epilogue_fault(Fault f, const GemmOperands& ops, const KernelTraits& t, DeviceApi& api, const GemmCall& call) {
  GemmOperands o = ops;
  const bool has_bias = ops.bias_kind != BiasKind::None && ops.bias;
  switch (f) {
    case Fault::EpiBiasIgnored:
      o.bias_kind = BiasKind::None;
      o.bias = nullptr;
      call(o);
      return has_bias;
    case Fault::EpiBiasPerRow: {
      if (!has_bias) break;
      // The other kind, its vector of the other length made of the case's values: element x is bias[x mod length].
      const Format& bf = bias_format(t);
      const std::vector<std::uint64_t> v = download_bias(ops, bf, api);
      const BiasKind other = ops.bias_kind == BiasKind::PerRow ? BiasKind::PerColumn : BiasKind::PerRow;
      const std::int64_t len = other == BiasKind::PerRow ? ops.m : ops.n;
      std::vector<std::uint64_t> w(static_cast<std::size_t>(len));
      for (std::int64_t x = 0; x < len && !v.empty(); ++x) w[static_cast<std::size_t>(x)] = v[static_cast<std::size_t>(x) % v.size()];
      call_with_bias(ops, other, w, bf, api, call);
      return true;
    }
    case Fault::EpiBiasScaledByAlpha: {
      // alpha' (A B + bias): the bias multiplied by alpha' = alpha scale_a scale_b, rounded into its format.
      const double ap = ops.alpha * (t.epilogue.fp8_scaling ? ops.scale_a * ops.scale_b : 1.0);
      if (!has_bias || ap == 1) break;
      const Format& bf = bias_format(t);
      std::vector<std::uint64_t> v = download_bias(ops, bf, api);
      const Rounder rn = Rounder::nearest(bf);
      for (std::uint64_t& c : v) c = to_container(bf, round_double(bf, ap * to_double(bf, from_container(bf, c)), rn).code);
      call_with_bias(ops, ops.bias_kind, v, bf, api, call);
      return true;
    }
    case Fault::EpiActivationDropped:
      o.activation = Activation::None;
      call(o);
      return ops.activation != Activation::None;
    case Fault::EpiGeluFormSwapped:
      if (ops.activation == Activation::GeluErf) o.activation = Activation::GeluTanh;
      else if (ops.activation == Activation::GeluTanh) o.activation = Activation::GeluErf;
      call(o);
      return o.activation != ops.activation;
    case Fault::EpiScaleDIgnored:
      o.scale_d = 1;
      call(o);
      return ops.scale_d != 1;
    case Fault::EpiScaleBIgnored:
      o.scale_b = 1;
      call(o);
      return ops.scale_b != 1;
    case Fault::EpiAmaxScaled: {
      call(ops);
      if (!ops.amax || std::fabs(ops.scale_d) == 1) return false;
      const double v = load_amax(ops.amax, *t.acc, api);
      store_amax(ops.amax, std::fabs(ops.scale_d) * v, *t.acc, api);
      return !std::isnan(v) && v != 0;
    }
    default: throw std::logic_error("run_epilogue_fault: not an epilogue fault");
  }
  call(ops);  // nothing the fault can change on this call
  return false;
}

}  // namespace fpcert
