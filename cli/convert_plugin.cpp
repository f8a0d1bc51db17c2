// cli/convert_plugin.cpp — the exhaustive check of a plugin conversion kernel, isolated in a child.
#include "cli/convert_plugin.hpp"
#include "cli/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "base/atomic_file.hpp"
#include "base/decimal.hpp"
#include "base/error.hpp"
#include "base/parallel.hpp"
#include "cli/commands.hpp"
#include "cli/convert_report.hpp"
#include "cli/exit_codes.hpp"
#include "cli/plugins.hpp"
#include "kernels/device/device_api.hpp"
#include "plugin/loader.hpp"
#include "reports/html.hpp"

namespace fpcert::cli {
namespace {

/// Above this many patterns MPFR runs only where the kernel and fpcert's model disagree, plus a
/// sample: the model itself is checked against MPFR on every pattern by fpcert's own tests.
constexpr std::uint64_t kMpfrEveryLimit = std::uint64_t{1} << 24;

nlohmann::json result_to_json(const ConvertCheckResult& r) {
  nlohmann::json listed = nlohmann::json::array();
  for (const auto& m : r.listed)
    listed.push_back({{"src", m.src}, {"expected", m.expected}, {"got", m.got}, {"outcome", static_cast<int>(m.outcome)}, {"model_bug", m.model_bug}});
  return {{"status", "ok"},
          {"patterns", r.patterns},
          {"outcomes", r.outcomes},
          {"mismatches", r.mismatches},
          {"model_mismatches", r.model_mismatches},
          {"nan_differences", r.nan_differences},
          {"mpfr_checked", r.mpfr_checked},
          {"listed", listed}};
}

ConvertCheckResult result_from_json(const nlohmann::json& j) {
  ConvertCheckResult r;
  r.patterns = j.at("patterns").get<std::uint64_t>();
  r.outcomes = j.at("outcomes").get<decltype(r.outcomes)>();
  r.mismatches = j.at("mismatches").get<std::uint64_t>();
  r.model_mismatches = j.at("model_mismatches").get<std::uint64_t>();
  r.nan_differences = j.at("nan_differences").get<std::uint64_t>();
  r.mpfr_checked = j.at("mpfr_checked").get<std::uint64_t>();
  for (const auto& m : j.at("listed"))
    r.listed.push_back({m.at("src").get<std::uint64_t>(), m.at("expected").get<std::uint64_t>(), m.at("got").get<std::uint64_t>(),
                        static_cast<Outcome>(m.at("outcome").get<int>()), m.at("model_bug").get<bool>()});
  return r;
}

void require_same(const char* option, const std::optional<std::string>& given, std::string_view claimed, std::string_view parsed,
                  const std::string& kernel) {
  if (given && parsed != claimed)
    throw InputError(fmt::format("{} {}: kernel '{}' claims {} (the plugin states what it implements; drop {} or match it)",
                                 option, *given, kernel, claimed, option));
}

}  // namespace

int run_plugin_conversion(const PluginConvertRequest& r) {
  auto conv = make_plugin_converter(r.kernel);
  if (!conv) {
    const auto names = plugin_converter_names();
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    if (find_kernel_info(r.kernel))
      throw InputError(fmt::format("--kernel {}: a GEMM kernel, not a conversion (fpcert certify grades GEMM kernels)", r.kernel));
    throw InputError(fmt::format("--kernel {}: no conversion kernel of that name in the loaded plugins ({})", r.kernel,
                                 list.empty() ? "none loaded: give --plugin LIB" : "conversion kernels: " + list));
  }
  const Format& src = conv->src();
  const Format& dst = conv->dst();
  const Rounder claim = conv->rounder();
  if (!r.from.empty() && find_format(r.from) != &src)
    throw InputError(fmt::format("--from {}: kernel '{}' converts from {}", r.from, r.kernel, src.tag));
  if (!r.to.empty() && find_format(r.to) != &dst)
    throw InputError(fmt::format("--to {}: kernel '{}' converts to {}", r.to, r.kernel, dst.tag));
  if (r.rounding) {
    const auto p = parse_rounding(*r.rounding);
    if (!p) throw InputError(fmt::format("--rounding: unknown mode '{}' (valid: {})", *r.rounding, rounding_names()));
    require_same("--rounding", r.rounding, to_string(claim.rounding), to_string(*p), r.kernel);
  }
  if (r.saturate) {
    const auto p = parse_saturation(*r.saturate);
    if (!p) throw InputError(fmt::format("--saturate: unknown mode '{}' (valid: {})", *r.saturate, saturation_names()));
    require_same("--saturate", r.saturate, to_string(claim.saturation), to_string(*p), r.kernel);
  }
  if (r.nan) {
    if (*r.nan != "preserve" && *r.nan != "canonical") throw InputError("--nan: expected 'preserve' or 'canonical', got '" + *r.nan + "'");
    require_same("--nan", r.nan, to_string(claim.nan), *r.nan == "preserve" ? to_string(NanPayload::Preserve) : to_string(NanPayload::Canonical),
                 r.kernel);
  }

  ConvertCheckSpec spec;
  spec.src = &src;
  spec.dst = &dst;
  spec.rounder = claim;
  spec.strict_nan = r.strict_nan;
  spec.threads = r.threads;
  spec.max_listed = r.list;
  set_check_range(r.range, spec);
  const std::uint64_t total = check_pattern_count(spec);
  spec.mpfr_every = total <= kMpfrEveryLimit;

  const bool device = conv->memory() == MemorySpace::Device;
  const auto t0 = std::chrono::steady_clock::now();
  // The check itself: in this process or a child. Returns a JSON line; kernel failures become statuses.
  auto body = [&]() -> std::string {
    try {
      std::unique_ptr<DeviceApi> api;
      std::string why;
      if (device) {
        api = make_cuda_api(&why);
        if (!api) return nlohmann::json{{"status", "not_supported"}, {"reason", "no CUDA device: " + why}}.dump();
      } else {
        api = make_host_api();
      }
      const ConvertCheckResult res =
          check_plugin_conversion(*conv, spec, *api, terminal_progress(check_pattern_count(spec)), r.timeout_s * 1000);
      return result_to_json(res).dump();
    } catch (const NotSupportedError& e) {
      return nlohmann::json{{"status", "not_supported"}, {"reason", e.what()}}.dump();
    } catch (const DeviceError& e) {
      return nlohmann::json{{"status", to_string(e.kind)}, {"reason", e.what()}}.dump();
    } catch (const std::exception& e) {
      return nlohmann::json{{"status", "error"}, {"reason", e.what()}}.dump();
    }
  };
  nlohmann::json out;
  if (r.isolate) {
    const ChildOutcome c = run_in_child(body, r.timeout_s * static_cast<double>(total / (std::uint64_t{1} << 20) + 1) + 60);
    if (c.kind != ChildOutcome::Kind::Ok) {
      out = {{"status", c.kind == ChildOutcome::Kind::Hung ? "hung" : "crashed"}, {"reason", c.reason}};
    } else {
      try {
        out = nlohmann::json::parse(c.payload);
      } catch (const std::exception&) {
        out = {{"status", "crashed"}, {"reason", "the child process sent an unreadable result"}};
      }
    }
  } else {
    out = nlohmann::json::parse(body());
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  fmt::print("fpcert convert: plugin kernel {} ({}), {} -> {}, rounding {}, saturation {}, NaN payload {}, {} memory\n", conv->name(),
             conv->origin(), src.tag, dst.tag, to_string(claim.rounding), to_string(claim.saturation), to_string(claim.nan),
             device ? "device" : "host");
  nlohmann::json report = {{"kind", "conversion"},
                           {"command", command_line()},
                           {"device", device ? "cuda" : "cpu"},
                           {"subject", fmt::format("plugin kernel {} ({})", conv->name(), conv->origin())},
                           {"from", src.tag},
                           {"to", dst.tag},
                           {"rounding", to_string(claim.rounding)},
                           {"saturation", to_string(claim.saturation)},
                           {"nan_payload", to_string(claim.nan)},
                           {"first", spec.first},
                           {"seconds", secs}};
  const std::string status = out.value("status", "crashed");
  int code = kExitPass;
  if (status != "ok") {
    const std::string reason = out.value("reason", "");
    const char* verdict = status == "not_supported" ? "NOT SUPPORTED" : status == "hung" ? "HUNG" : status == "error" ? "ERROR" : "CRASHED";
    fmt::print("{}: {}\n", verdict, reason);
    if (status == "crashed" || status == "hung")
      fmt::print("(the check ran {}; {})\n", r.isolate ? "in a child process" : "in this process",
                 r.isolate ? "fpcert itself is unaffected" : "--no-isolate was given");
    report["status"] = status;
    report["reason"] = reason;
    report["passed"] = false;
    code = kExitKernelFailed;
  } else {
    const ConvertCheckResult res = result_from_json(out);
    fmt::print("{} patterns in {:.2f} s; MPFR on {}\n", res.patterns, secs,
               spec.mpfr_every ? "every pattern" : fmt::format("{} patterns (disagreements with fpcert's model, and every {}th code)",
                                                               res.mpfr_checked, spec.mpfr_sample));
    print_check_result(res, src, dst);
    report["status"] = "ok";
    add_check_json(report, res, src, dst);
    code = res.passed() ? kExitPass : kExitGateFailed;
  }
  if (!r.json.empty()) write_file_atomic(r.json, report.dump(2) + "\n");
  if (!r.html.empty()) {
    write_html_report(r.html, ReportInput{{}, {conversion_from_json(report)}});
    fmt::print("HTML report: {}\n", r.html);
  }
  return code;
}

}  // namespace fpcert::cli
