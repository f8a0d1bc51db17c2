// bench/machine.hpp — what a benchmark prints about the machine it ran on: the CPU model and the load
// average (a figure from a loaded machine says so beside it).
#pragma once

#include <fstream>
#include <string>

namespace fpcert::bench {

inline std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

inline std::string load_average() {
  std::ifstream f("/proc/loadavg");
  std::string a, b, c;
  f >> a >> b >> c;
  return a + " " + b + " " + c;
}

}  // namespace fpcert::bench
