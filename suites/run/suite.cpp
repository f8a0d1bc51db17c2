// suites/run/suite.cpp — running suites: problems and references once, kernels side by side.
#include "suites/run/suite.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>

#include "base/atomic_file.hpp"
#include "base/error.hpp"
#include "base/fpenv.hpp"
#include "generators/generate.hpp"
#include "results/results_json.hpp"
#include "suites/run/environment.hpp"
#include "suites/run/isolate.hpp"
#include "suites/run/operation.hpp"

namespace fpcert {

const std::vector<SuiteInfo>& builtin_suites() {
  static const std::vector<SuiteInfo> s = [] {
    std::vector<SuiteInfo> all;
    for (const OperationRunner* op : operation_runners())
      for (SuiteInfo& info : op->suites()) all.push_back(std::move(info));
    return all;
  }();
  return s;
}

const SuiteInfo* find_suite(const std::string& name) {
  for (const auto& s : builtin_suites())
    if (s.name == name) return &s;
  return nullptr;
}

bool case_matches(const std::string& pattern, const std::string& id) {
  if (!pattern.empty() && pattern.back() == '*') return id.starts_with(std::string_view(pattern).substr(0, pattern.size() - 1));
  return id == pattern;
}

std::string suite_names() {
  std::string r;
  for (const auto& s : builtin_suites()) r += (r.empty() ? "" : ", ") + s.name;
  return r;
}

double estimated_case_cost(const std::string& spec) {
  const ParsedSpec ps = parse_generator_spec(spec);
  double work = 1;
  if (ps.has("m") && ps.has("n") && ps.has("k"))
    work = static_cast<double>(ps.integer("m")) * static_cast<double>(ps.integer("n")) * static_cast<double>(ps.integer("k"));
  else if (ps.has("n"))
    work = static_cast<double>(ps.integer("n"));
  return work + 1e5;  // a case's fixed cost (setup, grading, the process): about a 46^3 GEMM's reference
}

std::vector<PlanItem> plan_suite(const SuiteInfo& suite, const std::vector<std::string>& kernels, const SuiteRunOptions& opt) {
  return operation_runner(suite.operation).plan(suite, kernels, opt);
}

RunResult run_suite(const SuiteInfo& suite, const std::vector<std::string>& kernels, const SuiteRunOptions& opt) {
  return operation_runner(suite.operation).run(suite, kernels, opt);
}

void require_evidence(RunResult& r) {
  for (const OperationRunner* op : operation_runners()) op->require_evidence(r);
}

Environment run_environment(const std::string& command, const DeviceApi* dev, bool any_device, bool in_process) {
  // The device's facts for the stamp. With --isolate only the children touched the device, and the
  // parent must not either: CUDA does not survive fork(), so a parent that initialised it would leave
  // every later child (the next suite, the mutation score's runs) without a device. The facts are
  // then read in a child of their own.
  // The device facts of this process's latest stamp with a device: a later part of the run that ran nothing on the
  // device (a --devices worker or shard holding none of a suite's cases) has the same device, and a child could not
  // read it once this process has initialised CUDA.
  static std::mutex mu;
  static std::optional<Environment> seen;
  Environment env = make_environment(command, dev);
  if (dev && dev->is_device()) {
    const std::lock_guard<std::mutex> lock(mu);
    seen = env;
  } else if (!dev && any_device) {
    const std::lock_guard<std::mutex> lock(mu);
    if (seen) {
      Environment e = *seen;
      e.command = env.command;
      e.timestamp = env.timestamp;
      return e;
    }
  }
  if (!dev && any_device && in_process) {
    // This process runs its kernels itself (no --isolate): it holds or will hold a CUDA context anyway, so the facts are
    // read here, without a child's context of its own (2-3 s under a loaded host, once per --devices worker).
    try {
      const std::unique_ptr<DeviceApi> api = make_cuda_api(nullptr);  // nullptr without a device: the host's facts
      env = make_environment(command, api.get());
      if (api) {
        const std::lock_guard<std::mutex> lock(mu);
        seen = env;
      }
    } catch (const DeviceError&) {
      // a device that fails to answer: the host's facts alone, as a failed child leaves them
    }
    return env;
  }
  if (!dev && any_device) {
    const ChildOutcome c = run_in_child(
        [&] {
          const std::unique_ptr<DeviceApi> api = make_cuda_api(nullptr);
          return to_json(make_environment(command, api.get())).dump();
        },
        120);
    if (c.ok) {
      env = environment_from_json(nlohmann::json::parse(c.payload));  // the same process image: host facts equal
      // Kept as this process's device stamp: the next suite without a case on the device reuses it instead of starting
      // another child (a CUDA context each, 2-3 s under a loaded host: a --devices worker holding none of a suite's
      // cases paid it for every such suite, about 15 s of a main-job worker's time on an H100 host, 2026-12-07).
      const std::lock_guard<std::mutex> lock(mu);
      seen = env;
    }
  }
  return env;
}

}  // namespace fpcert
