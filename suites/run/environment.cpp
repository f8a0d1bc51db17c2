// suites/run/environment.cpp — host and device facts for the environment stamp.
#include "suites/run/environment.hpp"

#include <unistd.h>

#include <chrono>
#include <ctime>
#include <fstream>
#include <string>
#include <thread>

#ifndef FPCERT_BUILD_FLAGS
#define FPCERT_BUILD_FLAGS "unknown"
#endif

namespace fpcert {

const char* fpcert_version() { return "0.1.0"; }

namespace {
std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      const auto c = line.find(':');
      if (c != std::string::npos) return line.substr(c + 2) + ", " + std::to_string(std::thread::hardware_concurrency()) + " threads";
    }
  return std::to_string(std::thread::hardware_concurrency()) + " threads";
}
}  // namespace

Environment make_environment(const std::string& command, const DeviceApi* device) {
  Environment e;
  e.fpcert_version = fpcert_version();
  e.command = command;
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  e.timestamp = buf;
  char host[256] = {0};
  if (::gethostname(host, sizeof host - 1) == 0) e.host = host;
  e.cpu = cpu_model();
#if defined(__clang__)
  e.compiler = std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
  e.compiler = std::string("g++ ") + __VERSION__;
#endif
  e.build_flags = FPCERT_BUILD_FLAGS;
  if (device && device->is_device()) {
    const DeviceInfo d = device->info();
    e.device = d.name;
    e.compute_capability = std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor);
    e.sm_count = d.sm_count;
    e.clock_mhz = d.clock_mhz;
    e.mem_clock_mhz = d.mem_clock_mhz;
    e.driver = d.driver;
    e.cuda_runtime = d.runtime;
    e.cublas = d.cublas;
    e.cuda_archs = d.arch_flags;
  } else {
    e.device = "host CPU";
  }
  return e;
}

}  // namespace fpcert
