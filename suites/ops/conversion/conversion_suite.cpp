// suites/ops/conversion/conversion_suite.cpp — the `conversions` suite: its kernels, each kernel's case, the run.
#include "suites/ops/conversion/conversion_suite.hpp"

#include <fmt/format.h>

#include "base/atomic_file.hpp"
#include "base/error.hpp"
#include "kernels/convert/device_convert.hpp"
#include "results/results_json.hpp"
#include "suites/ops/conversion/device_sweep.hpp"
#include "suites/run/environment.hpp"
#include "suites/run/isolate.hpp"

namespace fpcert {

std::vector<std::string> conversion_suite_kernels(bool include_test, std::string* where) {
  std::string why;
  const bool device = shared_cuda_conversion_producer(&why) != nullptr;
  std::vector<std::string> names;
  for (const DeviceConversion& e : device_conversions(include_test)) {
    if (device) {
      if (find_kernel_info(std::string(e.name))) names.push_back(std::string(e.name));
    } else if (e.primary && e.kind == ConversionKind::Convert) {
      names.push_back("model_" + std::string(e.name));
    }
  }
  if (where)
    *where = device ? "the device conversion table's entries on the CUDA device"
                    : "fpcert's conversion model for each of the device table's conversions (no CUDA device: " + why + ")";
  return names;
}

ConversionCase conversion_suite_case(const ConversionKernel& k, const SuiteRunOptions& opt) {
  ConversionCase c;
  c.case_id = k.name();
  c.check = opt.conversion;
  c.command = opt.command;
  c.subject = k.name();
  const Format& src = *k.conversion().src;
  const bool model = k.backend() == Backend::Cpu;  // fpcert's own model: held to MPFR exhaustively by tests/oracle
  const bool wide = src.code_count() == 0 || src.code_count() > (std::uint64_t{1} << 24);
  if (wide && (opt.sample || model) && !dynamic_cast<const DeviceTableKernel*>(&k)) {
    c.ranges = strided_sample_ranges(src);
    c.mpfr_every = 0;
  }
  if (auto* t = dynamic_cast<const DeviceTableKernel*>(&k); t && opt.sample && t->entry().kind == ConversionKind::Convert) {
    c.ranges = strided_sample_ranges(src);
    if (c.ranges.size() == 1 && c.ranges[0].second == src.code_count()) c.ranges.clear();  // small formats: all of them
  }
  return c;
}

namespace {

/// The suite's kernels, those --case leaves (bad names throw before anything runs).
std::vector<std::unique_ptr<ConversionKernel>> suite_kernels(const SuiteInfo& suite, const std::vector<std::string>& names,
                                                             const SuiteRunOptions& opt) {
  if (names.empty()) throw InputError("no kernel given");
  std::vector<std::unique_ptr<ConversionKernel>> ks;
  for (const auto& name : names) {
    auto k = make_conversion_kernel(name);
    if (!k) {
      if (make_gemm_kernel(name))
        throw InputError(fmt::format("'{}' is a GEMM kernel; suite '{}' checks conversion kernels (fpcert kernels lists both)", name,
                                     suite.name));
      throw InputError("unknown kernel '" + name + "' (fpcert kernels lists them)");
    }
    if (!opt.only_case.empty() && k->name() != opt.only_case) continue;
    ks.push_back(std::move(k));
  }
  if (ks.empty()) throw InputError("suite '" + suite.name + "' has no case '" + opt.only_case + "' among the given kernels");
  return ks;
}

}  // namespace

std::vector<PlanItem> plan_conversion_suite(const SuiteInfo& suite, const std::vector<std::string>& names, const SuiteRunOptions& opt) {
  std::vector<PlanItem> plan;
  for (const auto& k : suite_kernels(suite, names, opt)) {
    const ConversionCase c = conversion_suite_case(*k, opt);
    // A pattern costs about as much as a few multiply-adds of a GEMM reference: 1 + the per-case constant.
    plan.push_back({suite.name, c.case_id, k->name(), "", static_cast<double>(conversion_case_patterns(*k, c)) + 1e5});
  }
  return plan;
}

RunResult run_conversion_suite(const SuiteInfo& suite, const std::vector<std::string>& names, const SuiteRunOptions& opt) {
  std::vector<std::unique_ptr<ConversionKernel>> ks = suite_kernels(suite, names, opt);
  if (opt.select)
    std::erase_if(ks, [&](const auto& k) { return !opt.select(conversion_suite_case(*k, opt).case_id, k->name()); });
  RunResult result;
  result.kind = RunKind::Conversion;
  result.suite = suite.name;
  result.kernels = names;
  if (!opt.jsonl_path.empty() && !opt.jsonl_append) write_file_atomic(opt.jsonl_path, "");
  std::unique_ptr<DeviceApi> host = make_host_api(), cuda;
  std::string cuda_why;
  bool cuda_tried = false;
  std::size_t done = 0;
  for (auto& k : ks) {
    if (opt.on_progress) opt.on_progress(fmt::format("[{}/{}] {}", done + 1, ks.size(), k->name()));
    ConversionCase c = conversion_suite_case(*k, opt);
    c.suite = suite.name;
    c.repro = opt.repro_prefix.empty() ? "" : fmt::format("{} --kernel {}", opt.repro_prefix, k->name());
    ConversionRunOptions ro;
    ro.timeout_ms = opt.run.timeout_ms;
    auto run_here = [&]() -> CaseResult {
      DeviceApi* api = host.get();
      if (k->memory() == MemorySpace::Device) {
        if (!cuda_tried) {
          cuda_tried = true;
          cuda = make_cuda_api(&cuda_why);
        }
        if (!cuda) {
          CaseResult r = conversion_skeleton(*k, c);
          r.status = CaseStatus::NotSupported;
          r.reason = "no CUDA device: " + cuda_why;
          return r;
        }
        api = cuda.get();
      }
      return run_conversion_case(*k, c, *api, ro);
    };
    // The device table's kernels are fpcert's own and share one CUDA context: they run in this process.
    const bool isolate = opt.isolate && !dynamic_cast<const DeviceTableKernel*>(k.get());
    CaseResult r = isolate ? run_case_isolated(run_here, opt.isolate_timeout_s, conversion_skeleton(*k, c)) : run_here();
    settle_conversion_record(r);
    if (!opt.jsonl_path.empty()) append_line(opt.jsonl_path, to_json(r).dump());
    if (opt.on_case) opt.on_case(r);
    result.cases.push_back(std::move(r));
    ++done;
  }
  bool any_device = false;
  for (const auto& k : ks) any_device = any_device || k->backend() == Backend::Cuda || k->memory() == MemorySpace::Device;
  if (any_device && !cuda) cuda = make_cuda_api(nullptr);
  result.env = make_environment(opt.command, cuda.get());
  return result;
}

}  // namespace fpcert
