// kernels/convert/model_convert.cpp — see model_convert.hpp.
#include "kernels/convert/model_convert.hpp"

#include <fmt/format.h>

#include <vector>

#include "base/codes.hpp"
#include "base/philox.hpp"
#include "kernels/convert/device_convert.hpp"
#include "kernels/register.hpp"
#include "oracle/convert/convert_batch.hpp"

namespace fpcert {
namespace {

class ModelConversion final : public ConversionKernel {
 public:
  ModelConversion(std::string name, const ConversionTraits& t) : name_(std::move(name)), t_(t) {}
  const std::string& name() const override { return name_; }
  std::string description() const override {
    return fmt::format("fpcert's conversion model: {} -> {}, rounding {}, saturation {}, NaN convention {}", t_.src->tag, t_.dst->tag,
                       to_string(t_.rounder.rounding), to_string(t_.rounder.saturation), to_string(t_.rounder.nan));
  }
  Backend backend() const override { return Backend::Cpu; }
  const ConversionTraits& conversion() const override { return t_; }
  void run(const ConvertOperands& ops) override {
    const Format& src = *t_.src;
    const Format& dst = *t_.dst;
    const int db = container_bytes(dst);
    const auto n = static_cast<std::size_t>(ops.count);
    if (src.total_bits() <= 32 && dst.total_bits() <= 32) {
      std::vector<std::uint32_t> out(n);
      convert_code_range(src, dst, t_.rounder, t_.seed, ops.first, out.data(), nullptr, n);
      for (std::size_t i = 0; i < n; ++i) store_code(ops.dst, static_cast<std::int64_t>(i), db, to_container(dst, out[i]));
      return;
    }
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t code = ops.first + i;
      const std::uint32_t rbits = t_.rounder.rounding == Rounding::Stochastic ? random_bits32(t_.seed, code) : 0;
      store_code(ops.dst, static_cast<std::int64_t>(i), db, to_container(dst, convert(src, code, dst, t_.rounder, rbits).code));
    }
  }

 private:
  std::string name_;
  ConversionTraits t_;
};

}  // namespace

std::unique_ptr<ConversionKernel> make_model_conversion_kernel(const Format& src, const Format& dst, const Rounder& r,
                                                               std::uint64_t seed, std::string name) {
  if (name.empty()) {
    name = fmt::format("model_{}_to_{}_{}", src.tag, dst.tag, to_string(r.rounding));
    if (r.saturation != default_saturation(dst)) name += fmt::format("_{}", to_string(r.saturation));
  }
  return std::make_unique<ModelConversion>(std::move(name), ConversionTraits{&src, &dst, r, seed});
}

void register_model_conversion_kernels() {
  for (const DeviceConversion& e : device_conversions()) {
    if (!e.primary || e.kind != ConversionKind::Convert) continue;
    const std::string name = "model_" + std::string(e.name);
    const DeviceConversion* entry = &e;
    register_kernel(KernelInfo{name, Backend::Cpu, false,
                               [name, entry] { return make_model_conversion_kernel(*entry->src, *entry->dst, entry->rounder, 0, name); },
                               {}, Operation::Conversion});
  }
}

}  // namespace fpcert
