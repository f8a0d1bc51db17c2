// cli/cmd/cmd_formats.cpp — `fpcert formats`: the format table with derived properties.
#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "base/decimal.hpp"
#include "cli/commands.hpp"
#include "kernels/device/device_api.hpp"
#include "kernels/device/tensor_cores.hpp"
#include "oracle/format.hpp"

namespace fpcert::cli {
namespace {

std::string pow2(double v) {
  int e;
  const double m = std::frexp(v, &e);
  if (m == 0.5) return fmt::format("2^{}", e - 1);
  return short_decimal(v);
}

std::string value_text(double v) {
  if (v >= 1e5) return fmt::format("{:.5g}", v);
  return short_decimal(v);
}

int run_formats(bool json) {
  // The tensor-core column: read this machine's GPU at run time (through kernels/, no CUDA here).
  std::string why, device;
  int cc_major = 0, cc_minor = 0;
  if (const auto api = make_cuda_api(&why)) {
    const DeviceInfo info = api->info();
    cc_major = info.cc_major, cc_minor = info.cc_minor;
    device = fmt::format("{} (sm_{}{})", info.name, cc_major, cc_minor);
  }
  const auto tensor_cores = [&](const Format& f) {
    return device.empty() ? std::string("no device") : tensor_core_support(f, cc_major, cc_minor);
  };
  if (json) {
    nlohmann::json arr = nlohmann::json::array();
    for (const Format* f : all_formats()) {
      arr.push_back({{"tag", f->tag},
                     {"name", f->name},
                     {"sign_bits", f->sign_bits},
                     {"exp_bits", f->exp_bits},
                     {"frac_bits", f->frac_bits},
                     {"bias", f->bias},
                     {"precision", f->precision()},
                     {"unit_roundoff", f->unit_roundoff()},
                     {"emin", f->emin()},
                     {"emax", f->emax()},
                     {"max_finite", f->max_finite()},
                     {"min_normal", f->min_normal()},
                     {"min_subnormal", f->min_subnormal()},
                     {"has_inf", f->has_inf()},
                     {"has_nan", f->has_nan()},
                     {"specials", to_string(f->specials)},
                     {"tensor_cores", tensor_cores(*f)}});
    }
    fmt::print("{}\n", arr.dump(2));
    return 0;
  }
  fmt::print("{:<6} {:<16} {:>7} {:>3} {:>7} {:>12} {:>12} {:>12} {:>12} {:>7}  {:<11} {}\n", "tag", "name", "S/E/M", "p", "u",
             "max finite", "min normal", "min subnorm", "emin..emax", "Inf/NaN", "specials", "tensor cores");
  for (const Format* f : all_formats()) {
    fmt::print("{:<6} {:<16} {:>7} {:>3} {:>7} {:>12} {:>12} {:>12} {:>12} {:>7}  {:<11} {}\n", f->tag, f->name,
               fmt::format("{}/{}/{}", f->sign_bits, f->exp_bits, f->frac_bits), f->precision(),
               pow2(f->unit_roundoff()), value_text(f->max_finite()), pow2(f->min_normal()),
               f->subnormals ? pow2(f->min_subnormal()) : std::string("-"),
               fmt::format("{}..{}", f->emin(), f->emax()),
               fmt::format("{}/{}", f->has_inf() ? "yes" : "no", f->has_nan() ? "yes" : "no"), to_string(f->specials),
               tensor_cores(*f));
  }
  fmt::print("tensor cores: {}\n", device.empty() ? "no device (" + why + ")" : device + ", read from the device");
  return 0;
}

}  // namespace

void add_formats(CLI::App& root, Registry& reg) {
  auto* app = root.add_subcommand("formats", "The format table: precision, range, special values");
  auto json = std::make_shared<bool>(false);
  app->add_flag("--json", *json, "Print the table as JSON");
  reg.push_back({app, [json] { return run_formats(*json); }});
}

}  // namespace fpcert::cli
