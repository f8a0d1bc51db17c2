// cli/cmd_formats.cpp — `fpcert formats`: the format table with derived properties.
#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "oracle/decimal.hpp"
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
                     {"specials", to_string(f->specials)}});
    }
    fmt::print("{}\n", arr.dump(2));
    return 0;
  }
  fmt::print("{:<6} {:<16} {:>7} {:>3} {:>7} {:>12} {:>12} {:>12} {:>12} {:>7}  {}\n", "tag", "name", "S/E/M", "p", "u",
             "max finite", "min normal", "min subnorm", "emin..emax", "Inf/NaN", "specials");
  for (const Format* f : all_formats()) {
    fmt::print("{:<6} {:<16} {:>7} {:>3} {:>7} {:>12} {:>12} {:>12} {:>12} {:>7}  {}\n", f->tag, f->name,
               fmt::format("{}/{}/{}", f->sign_bits, f->exp_bits, f->frac_bits), f->precision(),
               pow2(f->unit_roundoff()), value_text(f->max_finite()), pow2(f->min_normal()),
               f->subnormals ? pow2(f->min_subnormal()) : std::string("-"),
               fmt::format("{}..{}", f->emin(), f->emax()),
               fmt::format("{}/{}", f->has_inf() ? "yes" : "no", f->has_nan() ? "yes" : "no"), to_string(f->specials));
  }
  return 0;
}

}  // namespace

namespace {
void add_formats(CLI::App& root, Registry& reg) {
  auto* app = root.add_subcommand("formats", "The format table: precision, range, special values");
  auto json = std::make_shared<bool>(false);
  app->add_flag("--json", *json, "Print the table as JSON");
  reg.push_back({app, [json] { return run_formats(*json); }});
}

const Registrar kRegistrar("formats", 10, add_formats);
}  // namespace

}  // namespace fpcert::cli
