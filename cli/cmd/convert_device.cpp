// cli/cmd/convert_device.cpp — `fpcert convert --device cuda`: one entry of the device conversion table
// (kernels/convert/device_convert.hpp) swept on the GPU and checked on the CPU, the table itself
// (--intrinsic list), or every entry (--all: the conversions suite, suites/ops/conversion/conversion_suite.hpp, with
// the output `convert --all` has always had).
#include <fmt/format.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "base/atomic_file.hpp"
#include "base/error.hpp"
#include "base/parallel.hpp"
#include "cli/commands.hpp"
#include "cli/cmd/convert_args.hpp"
#include "cli/cmd/convert_print.hpp"
#include "cli/exit_codes.hpp"
#include "cli/progress.hpp"
#include "cli/run_outputs.hpp"
#include "cli/scale.hpp"
#include "kernels/convert/device_convert.hpp"
#include "reports/html/html.hpp"
#include "results/conversion.hpp"
#include "results/results_json.hpp"
#include "suites/ops/conversion/conversion_suite.hpp"
#include "suites/ops/conversion/device_sweep.hpp"
#include "suites/run/environment.hpp"

namespace fpcert::cli {
namespace {

ConversionProducer& need_producer() {
  std::string why;
  ConversionProducer* p = shared_cuda_conversion_producer(&why);
  if (!p) throw DeviceError("--device cuda: no CUDA device to run on (" + why + ")");
  return *p;
}

/// The case of one entry: --range, or with --sample the strided sample of an fp32 source.
ConversionCase device_case(const ConvertArgs& a, const DeviceConversion& e) {
  ConversionCase c;
  c.case_id = std::string(e.name);
  c.subject = std::string(e.call);
  c.check = check_options(a);
  c.command = command_line();
  if (!a.range.empty()) {
    c.ranges.push_back(parse_first_count(a.range, entry_code_count(e),
                                         e.kind == ConversionKind::ScaledRoundTrip ? "(scale, bf16) pairs" : e.src->tag));
  } else if (a.sample && e.kind == ConversionKind::Convert) {
    c.ranges = strided_sample_ranges(*e.src);
    if (c.ranges.size() == 1 && c.ranges[0].second == e.src->code_count()) c.ranges.clear();  // small formats: all of them
  }
  return c;
}

/// The entry --intrinsic names, or the table's entry for (from, to, rounding, saturation).
const DeviceConversion& pick_entry(const ConvertArgs& a) {
  if (!a.intrinsic.empty()) {
    const DeviceConversion* e = find_device_conversion(a.intrinsic);
    if (!e) throw InputError("--intrinsic: no device conversion '" + a.intrinsic + "' (--intrinsic list shows the table)");
    if (!a.from.empty() && need_format(a.from, "--from") != *e->src)
      throw InputError(fmt::format("--intrinsic {} converts from {}, not {}", e->name, e->src->tag, a.from));
    if (!a.to.empty() && need_format(a.to, "--to") != *e->dst)
      throw InputError(fmt::format("--intrinsic {} converts to {}, not {}", e->name, e->dst->tag, a.to));
    return *e;
  }
  if (a.from.empty() || a.to.empty()) throw InputError("convert: give --from and --to (or --intrinsic NAME)");
  const Format& src = need_format(a.from, "--from");
  const Format& dst = need_format(a.to, "--to");
  if (!a.scale.empty()) {
    if (a.scale != "pow2") throw InputError("--scale: expected 'pow2', got '" + a.scale + "'");
    if (src != bf16 || dst != f16) throw InputError("--scale pow2 is the bf16 -> fp16 -> bf16 round trip: use --from bf16 --to f16");
    return *find_device_conversion("bf16_to_f16_pow2_scaled");
  }
  const Rounder r = make_rounder(a, dst);
  const auto cands = device_conversions_for(src, dst);
  const DeviceConversion* pick = nullptr;
  for (const bool primary_only : {true, false}) {
    for (const DeviceConversion* e : cands)
      if (e->kind == ConversionKind::Convert && e->rounder.rounding == r.rounding && e->rounder.saturation == r.saturation &&
          (e->primary || !primary_only)) {
        pick = e;
        break;
      }
    if (pick) break;
  }
  // The entry declares its own NaN convention (docs/conversions.md): a different --nan contradicts it.
  if (pick && a.nan_given && pick->rounder.nan != r.nan)
    throw InputError(fmt::format("--nan {}: {} declares the NaN convention {} ({}); drop --nan or match it", a.nan, pick->name,
                                 to_string(pick->rounder.nan), describe_nan_convention(dst, pick->rounder.nan)));
  if (pick) return *pick;
  std::string have;
  for (const DeviceConversion* e : cands)
    have += fmt::format("\n  {:<34} {} ({})", e->name, e->call, rounder_text(e->rounder));
  if (have.empty())
    throw InputError(fmt::format("the device table has no conversion from {} to {} (--intrinsic list shows the table)", src.tag, dst.tag));
  throw InputError(fmt::format("no device conversion {} -> {} with {}; the table has:{}\n(pick one with --intrinsic NAME, or "
                               "give its --rounding and --saturate)",
                               src.tag, dst.tag, rounder_text(r), have));
}

}  // namespace

int run_device(const ConvertArgs& a) {
  const DeviceConversion& e = pick_entry(a);
  const ConversionCase c = device_case(a, e);
  ConversionProducer& producer = need_producer();
  const EntrySupport sup = entry_support(e, producer.running_arch());
  if (!sup.ok) throw InputError(fmt::format("{} cannot run on {}: {}", e.name, producer.device_name(), sup.reason));
  DeviceTableKernel kernel(e, &producer);
  auto host = make_host_api();
  ConversionRunOptions o;
  o.progress = terminal_progress(conversion_case_patterns(kernel, c));
  const CaseResult res = run_conversion_case(kernel, c, *host, o);
  if (res.status != CaseStatus::Pass && res.status != CaseStatus::Fail) {  // the device failed mid-sweep
    fmt::print("{}: {}\n", to_string(res.status), res.reason);
    return kExitKernelFailed;
  }
  nlohmann::json j = res.conversion->record;
  print_device_record(j);
  j["kind"] = "conversion";
  j["command"] = command_line();
  j["subject"] = e.call;
  j["intrinsic"] = e.name;
  if (!a.json.empty()) {
    auto api = make_cuda_api();
    j["environment"] = to_json(make_environment(command_line(), api.get()));
    write_file_atomic(a.json, j.dump(2) + "\n");
  }
  if (!a.html.empty()) write_html_report(a.html, ReportInput{{}, {conversion_from_json(j)}});
  return res.status == CaseStatus::Pass ? kExitPass : kExitGateFailed;
}

int run_list(const ConvertArgs& a) {
  std::string why;
  auto producer = make_cuda_conversion_producer(&why, 65536);  // small buffers: only the probe is wanted
  const RunningArch arch = producer ? producer->running_arch() : RunningArch{};
  if (producer)
    fmt::print("device: {} (cc {}.{}), running code for __CUDA_ARCH__ {}{}\n", producer->device_name(), arch.cc_major, arch.cc_minor,
               arch.arch, arch.family_specific ? fmt::format(" (family-specific {})", arch.family_specific) : "");
  else
    fmt::print("device: none ({})\n", why);
  fmt::print("{:<38} {:<6} {:<6} {:<4} {:<10} {:<4} {:<48} {}\n", "name", "from", "to", "rnd", "saturation", "x2", "on this device",
             "NaN convention declared; statement");
  nlohmann::json list = nlohmann::json::array();
  for (const DeviceConversion& e : device_conversions(a.include_test)) {
    std::string here = "-";
    bool hw = e.hw == HwPath::Always;
    if (producer) {
      const EntrySupport s = entry_support(e, arch);
      hw = s.hardware;
      here = s.ok ? (s.hardware ? "hw: " + std::string(e.hw_instr) : std::string("sw: header emulation")) : "not supported: " + s.reason;
    }
    auto nan_text = [&](const NanStatement& st) {
      std::string t(to_string(st.rule));
      if (st.rule == NanRule::Canonical) t += " " + hex_code(*e.dst, st.code);
      if (st.rule != NanRule::NotApplicable && st.rule != NanRule::Unstated) t += st.decisive ? " (enforced)" : " (expected)";
      return t;
    };
    std::string nan = nan_text(nan_statement(e, hw));
    if (!producer && e.hw != HwPath::Always && e.hw != HwPath::Never && nan_text(e.nan_hw) != nan_text(e.nan_sw))
      nan = "hardware: " + nan_text(e.nan_hw) + "; software: " + nan_text(e.nan_sw);
    nan = std::string(to_string(e.rounder.nan)) + "; " + nan;  // the convention the sweep enforces, then the statement
    fmt::print("{:<38} {:<6} {:<6} {:<4} {:<10} {:<4} {:<48} {}\n", e.name, e.src->tag, e.dst->tag, to_string(e.rounder.rounding),
               to_string(e.rounder.saturation), e.pair ? "x2" : "", here.size() > 48 ? here.substr(0, 45) + "..." : here, nan);
    nlohmann::json j = device_entry_json(e);
    j["on_this_device"] = here;
    list.push_back(j);
  }
  if (!a.json.empty())
    write_file_atomic(a.json, nlohmann::json{{"kind", "conversion_table"}, {"command", command_line()}, {"conversions", list}}.dump(2) + "\n");
  return kExitPass;
}

/// The conversions suite on the device table, printed and written as `convert --all` always has been:
/// one row per entry, one JSON document rewritten after each entry. With --shard, --devices or --mpi
/// (docs/scale.md) the entries are split like any run's cases: --devices and --mpi write the same
/// document from the merged results; a --shard writes the runner's results file, which `fpcert merge`
/// merges (into the conversions suite's results, as `certify --suite conversions --json` writes them).
int run_all(const ConvertArgs& a) {
  const SuiteInfo* suite = find_suite("conversions");
  std::vector<std::string> kernels;
  for (const DeviceConversion& e : device_conversions(a.include_test)) kernels.push_back(std::string(e.name));
  const auto options = [&] {
    SuiteRunOptions o;
    o.sample = a.sample;
    o.conversion = check_options(a);
    o.command = command_line();
    return o;
  };
  const auto t0 = std::chrono::steady_clock::now();
  // The document of a run's rows; done: the last write (the HTML report too).
  nlohmann::json rows = nlohmann::json::array();
  std::uint64_t run = 0, passed = 0, failed = 0, unsupported = 0, patterns = 0;
  auto add_row = [&](const CaseResult& c) {
    nlohmann::json rec = c.conversion ? c.conversion->record
                                      : nlohmann::json{{"name", c.kernel}, {"status", to_string(c.status)}, {"reason", c.reason}, {"passed", false}};
    if (c.status == CaseStatus::NotSupported) {
      ++unsupported;
    } else {
      ++run;
      (c.status == CaseStatus::Pass ? passed : failed) += 1;
      patterns += rec.value("patterns", std::uint64_t{0});
    }
    rows.push_back(std::move(rec));
  };
  auto write = [&](bool done) {
    ConversionProducer& producer = need_producer();
    auto api = make_cuda_api();
    const RunningArch arch = producer.running_arch();
    nlohmann::json doc = {{"kind", "conversion_suite"},
                          {"schema_version", 1},
                          {"command", command_line()},
                          {"environment", to_json(make_environment(command_line(), api.get()))},
                          {"device",
                           {{"name", producer.device_name()},
                            {"compute_capability", fmt::format("{}.{}", arch.cc_major, arch.cc_minor)},
                            {"running_arch", arch.arch},
                            {"family_specific", arch.family_specific}}},
                          {"options",
                           {{"fp32", a.sample ? "strided_sample" : "exhaustive"},
                            {"mpfr_sample", a.mpfr_sample},
                            {"strict_nan", a.strict_nan},
                            {"threads", a.threads ? a.threads : thread_count()},
                            {"include_test_entries", a.include_test}}}};
    doc["conversions"] = rows;
    doc["summary"] = {{"entries", rows.size()},
                      {"run", run},
                      {"passed", passed},
                      {"failed", failed},
                      {"not_supported", unsupported},
                      {"patterns", patterns},
                      {"seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()},
                      {"complete", done}};
    doc["passed"] = failed == 0;
    if (!a.json.empty()) write_file_atomic(a.json, doc.dump(2) + "\n");
    if (done && !a.html.empty()) {
      ReportInput in;
      for (const auto& row : rows) in.conversions.push_back(conversion_from_json(row));
      write_html_report(a.html, in);
    }
  };
  auto banner = [&] {
    ConversionProducer& producer = need_producer();
    const RunningArch arch = producer.running_arch();
    fmt::print("fpcert conversions on {} (cc {}.{}, running code for __CUDA_ARCH__ {}), fp32 sources {}\n", producer.device_name(),
               arch.cc_major, arch.cc_minor, arch.arch, a.sample ? "sampled (256 blocks of 2^16)" : "exhaustive (2^32)");
    print_device_row_header();
  };
  ScaledCommand cmd;
  cmd.json = a.json;
  cmd.make_plan = [&] {
    RunPlan plan;  // one unit per entry, costed by the codes it sweeps
    plan.options = fmt::format("convert --all sample={} strict_nan={} mpfr_sample={} list={}", a.sample, a.strict_nan, a.mpfr_sample, a.list);
    for (const PlanItem& it : plan_suite(*suite, kernels, options())) {
      plan.units.push_back({{plan.items.size()}, it.cost});
      plan.items.push_back({it.suite, it.case_id, it.kernel, it.spec});
    }
    return plan;
  };
  cmd.execute = [&](const PartContext& part) {
    SuiteRunOptions o = options();
    const bool whole = !part.selected;  // the run in one process: the document after every entry, as always
    if (!whole) {
      if (!part.json.empty()) o.jsonl_path = part.json + ".partial.jsonl";
      o.select = [sel = part.selected, name = suite->name](const std::string& case_id, const std::string& kernel) {
        return sel->has(case_key(name, case_id, kernel));
      };
    }
    if (part.print_rows) banner();
    o.on_case = [&](const CaseResult& c) {
      if (part.print_rows) {
        print_device_row(c.conversion ? c.conversion->record : nlohmann::json::object(), c.kernel, to_string(c.status), c.reason);
        std::fflush(stdout);
      }
      if (whole) {
        add_row(c);
        write(false);
      }
    };
    return run_suite(*suite, kernels, o);
  };
  cmd.header = [&] {
    RunResult r;
    r.kind = RunKind::Conversion;
    r.suite = suite->name;
    r.kernels = kernels;
    r.env = make_environment(command_line(), nullptr);
    return r;
  };
  cmd.finish = [&](const RunResult& r, bool merged) -> int {
    if (r.shard.present()) return write_run_outputs(r, OutputPaths{a.json, "", a.html}, merged);
    if (merged) {  // rows nobody saw yet, from the workers or ranks
      banner();
      rows = nlohmann::json::array();
      run = passed = failed = unsupported = patterns = 0;
      for (const CaseResult& c : r.cases) {
        print_device_row(c.conversion ? c.conversion->record : nlohmann::json::object(), c.kernel, to_string(c.status), c.reason);
        add_row(c);
      }
    }
    write(true);
    fmt::print("{} conversions run: {} passed, {} failed; {} not supported on this device; {} patterns in {:.1f} s\n", run, passed, failed,
               unsupported, patterns, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    fmt::print("{}\n", failed == 0 ? "PASS" : "FAIL");
    return failed == 0 ? kExitPass : kExitGateFailed;
  };
  return run_scaled(a.scale_out, std::move(cmd));
}

}  // namespace fpcert::cli
