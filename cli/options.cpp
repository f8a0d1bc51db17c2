// cli/options.cpp — validators of numeric options, the environment, outputs and memory estimates.
#include "cli/options.hpp"

#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>

#include "base/error.hpp"
#include "base/input_file.hpp"
#include "base/output_path.hpp"
#include "generators/generate.hpp"

namespace fpcert::cli {
namespace {

/// The value of an integer literal (decimal or 0x hex), or an error message.
std::string parse_integer(const std::string& s, std::uint64_t& v) {
  std::string digits = s;
  int base = 10;
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
    digits = digits.substr(2);
    base = 16;
  }
  if (digits.empty()) return "expected an integer, got '" + s + "'";
  v = 0;
  for (char c : digits) {
    int d;
    if (c >= '0' && c <= '9') d = c - '0';
    else if (base == 16 && c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else if (base == 16 && c >= 'A' && c <= 'F') d = c - 'A' + 10;
    else return "expected a non-negative integer (decimal or 0x hex), got '" + s + "'";
    if (v > (std::numeric_limits<std::uint64_t>::max() - static_cast<std::uint64_t>(d)) / static_cast<std::uint64_t>(base))
      return "'" + s + "' is larger than 2^64 - 1";
    v = v * static_cast<std::uint64_t>(base) + static_cast<std::uint64_t>(d);
  }
  return {};
}

/// A number as a double, or an error message (strict: the whole text, finite).
std::string parse_number(const std::string& s, double& v) {
  if (s.empty()) return "expected a number, got ''";
  char* end = nullptr;
  v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || std::isspace(static_cast<unsigned char>(s[0]))) return "expected a number, got '" + s + "'";
  if (!std::isfinite(v)) return "expected a finite number, got '" + s + "'";
  return {};
}

}  // namespace

CLI::Validator integer_in(std::uint64_t lo, std::uint64_t hi) {
  return CLI::Validator(
      [lo, hi](std::string& s) -> std::string {
        std::uint64_t v = 0;
        if (std::string e = parse_integer(s, v); !e.empty()) return e;
        if (v < lo || v > hi) return fmt::format("expected an integer in [{}, {}], got {}", lo, hi, s);
        return {};
      },
      fmt::format("INT in [{}, {}]", lo, hi), "integer_in");
}

CLI::Validator signed_integer_in(std::int64_t lo, std::int64_t hi) {
  return CLI::Validator(
      [lo, hi](std::string& s) -> std::string {
        const bool neg = !s.empty() && s[0] == '-';
        std::uint64_t mag = 0;
        if (std::string e = parse_integer(neg ? s.substr(1) : s, mag); !e.empty()) return "expected an integer, got '" + s + "'";
        const long double v = neg ? -static_cast<long double>(mag) : static_cast<long double>(mag);
        if (v < static_cast<long double>(lo) || v > static_cast<long double>(hi)) return fmt::format("expected an integer in [{}, {}], got {}", lo, hi, s);
        return {};
      },
      fmt::format("INT in [{}, {}]", lo, hi), "signed_integer_in");
}

CLI::Validator positive_number() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        double v = 0;
        if (std::string e = parse_number(s, v); !e.empty()) return e;
        if (!(v > 0)) return "expected a number > 0, got " + s;
        return {};
      },
      "NUMBER > 0", "positive_number");
}

CLI::Validator number_in(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& s) -> std::string {
        double v = 0;
        if (std::string e = parse_number(s, v); !e.empty()) return e;
        if (!(v >= lo && v <= hi)) return fmt::format("expected a number in [{}, {}], got {}", lo, hi, s);
        return {};
      },
      fmt::format("NUMBER in [{}, {}]", lo, hi), "number_in");
}

CLI::Validator output_path(bool journal) {
  CLI::Validator v = path_text();
  v.name(journal ? "output_path_journal" : "output_path");
  return v;
}

CLI::Validator output_dir() {
  CLI::Validator v = path_text();
  v.name("output_dir");
  return v;
}

CLI::Validator path_text() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        if (s.empty()) return "an empty path (give a file name, or leave the option out)";
        return {};
      },
      "PATH", "path_text");
}

CLI::Validator seconds() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        double v = 0;
        if (std::string e = parse_number(s, v); !e.empty()) return e;
        if (!(v >= 0.1 && v <= 1e7)) return "expected seconds in [0.1, 10000000], got " + s;
        return {};
      },
      "SECONDS in [0.1, 1e7]", "seconds");
}

void refuse_without(const CLI::App& app, const std::vector<std::string>& options, bool given, const std::string& needs) {
  if (given) return;
  for (const auto& o : options)
    if (const CLI::Option* opt = app.get_option_no_throw(o); opt && opt->count() > 0)
      throw InputError(o + " has no effect without " + needs + ": give that too, or leave " + o + " out");
}

void check_environment() {
  if (const char* t = std::getenv("FPCERT_THREADS")) {
    // Decimal only: its readers (base/parallel.cpp) read decimal, so 0x10 would have meant 0.
    const std::string text = t;
    std::uint64_t v = 0;
    const std::string e = text.find_first_not_of("0123456789") == std::string::npos ? parse_integer(text, v) : "not decimal";
    if (!e.empty() || v < 1 || v > 4096)
      throw InputError(fmt::format("FPCERT_THREADS: expected a decimal integer in [1, 4096], got '{}' (unset it to use every core)", t));
  }
}

namespace {

bool has_validator(const CLI::Option* o, const std::string& name) {
  try {
    return const_cast<CLI::Option*>(o)->get_validator(name) != nullptr;
  } catch (const CLI::OptionNotFound&) {
    return false;
  }
}

/// The option as messages name it: its first name (-o of -o,--output), or a positional's name.
std::string option_label(const CLI::Option* o) {
  const std::string n = o->get_name(false, true);
  return n.empty() ? o->get_name() : n.substr(0, n.find(','));
}

std::string trimmed(std::string p) {
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> journal_outputs(const std::string& what, const std::string& path) {
  if (path.empty() || path == "-") return {};
  return {{what + "'s journal", path + ".partial.jsonl"}};
}

std::vector<std::string> command_inputs(const CLI::App& app) {
  std::vector<std::string> in;
  for (const CLI::Option* o : app.get_options()) {
    if (o->get_type_size() == 0 || has_validator(o, "output_path") || has_validator(o, "output_path_journal") ||
        has_validator(o, "output_dir"))
      continue;
    for (const std::string& v : o->results()) {
      struct stat st {};
      if (!v.empty() && v != "-" && ::stat(v.c_str(), &st) == 0 && (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))) in.push_back(v);
    }
  }
  return in;
}

std::vector<std::pair<std::string, std::string>> command_outputs(const CLI::App& app) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const CLI::Option* o : app.get_options()) {
    const bool journal = has_validator(o, "output_path_journal");
    if (!journal && !has_validator(o, "output_path")) continue;
    for (const std::string& v : o->results()) {
      out.emplace_back(option_label(o), v);
      if (journal)
        for (auto& j : journal_outputs(option_label(o), v)) out.push_back(std::move(j));
    }
  }
  return out;
}

void check_command_io(const CLI::App& app, const std::vector<std::pair<std::string, std::string>>& extra_outputs, bool create_parents) {
  std::vector<std::pair<std::string, std::string>> outputs = command_outputs(app);
  for (const auto& [what, path] : extra_outputs) {
    outputs.emplace_back(what, path);
    for (auto& j : journal_outputs(what, path)) outputs.push_back(std::move(j));
  }
  std::vector<std::string> inputs = command_inputs(app);
  std::vector<std::string> files, dirs;  // inputs that are files; inputs that are folders
  for (const auto& in : inputs) (std::filesystem::is_directory(in) ? dirs : files).push_back(in);
  (void)check_outputs(outputs, files, create_parents);
  // An output folder holds no input (it is replaced as a whole).
  for (const CLI::Option* o : app.get_options())
    if (has_validator(o, "output_dir"))
      for (const std::string& d : o->results()) check_output_dir(trimmed(d), option_label(o), files);
}

void check_command_outputs(const std::vector<std::pair<std::string, std::string>>& outputs, const std::vector<std::string>& inputs,
                           bool create_parents) {
  (void)check_outputs(outputs, inputs, create_parents);
}

namespace {

/// Bytes this process may still use: the smaller of MemAvailable and the address-space limit.
std::uint64_t memory_available() {
  std::uint64_t avail = std::numeric_limits<std::uint64_t>::max();
  std::ifstream mi("/proc/meminfo");
  std::string key;
  std::uint64_t kb = 0;
  std::string unit;
  while (mi >> key >> kb >> unit)
    if (key == "MemAvailable:") {
      avail = kb * 1024;
      break;
    }
  if (avail == std::numeric_limits<std::uint64_t>::max()) {
    const long pages = ::sysconf(_SC_AVPHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0) avail = static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page);
  }
  rlimit rl{};
  if (::getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) avail = std::min<std::uint64_t>(avail, rl.rlim_cur);
  return avail;
}

std::string bytes_text(long double b) { return byte_size_text(static_cast<std::uint64_t>(std::min<long double>(b, 1.8e19L))); }

/// Refuse when the inputs (`in` bytes) and the outputs (`out` bytes) exceed what the machine can give.
void check_bytes(std::int64_t m, std::int64_t n, std::int64_t k, long double in, long double out, const std::string& what) {
  const std::uint64_t avail = memory_available();
  if (in + out > static_cast<long double>(avail))
    throw InputError(fmt::format("{}: a {} x {} x {} problem needs about {} (inputs {}{}); this machine can give {}: lower the size", what,
                                 m, n, k, bytes_text(in + out), bytes_text(in),
                                 out > 0 ? ", outputs and references " + bytes_text(out) : std::string(), byte_size_text(avail)));
}

}  // namespace

void check_gemm_memory(std::int64_t m, std::int64_t n, std::int64_t k, const std::string& what) {
  // Per element of A and B: the exact value (8 bytes) and the kernel's copy (up to 8); per element of
  // C: the reference (hi, lo, tail, |A||B|, status: 33 bytes), the output image and its read-back (up
  // to 16), the codes graded (8) and the metrics' work arrays (about 24): 96 bytes, rounded up.
  const long double mk = static_cast<long double>(m) * static_cast<long double>(k);
  const long double kn = static_cast<long double>(k) * static_cast<long double>(n);
  check_bytes(m, n, k, 16.0L * (mk + kn), 96.0L * static_cast<long double>(m) * static_cast<long double>(n), what);
}

void check_spec_memory(const std::string& spec, bool graded, const std::string& what) {
  const ParsedSpec ps = parse_generator_spec(spec);
  const auto dim = [&](const char* key) { return ps.has(key) ? ps.integer(key) : std::int64_t{1}; };
  std::int64_t m = dim("m"), n = dim("n"), k = dim("k");
  if (ps.info->dot) {  // a dot product of length n: x and y, 1 x n times n x 1
    k = n;
    m = n = 1;
  }
  if (graded) return check_gemm_memory(m, n, k, what);
  // gen: the exact values (8 bytes) and their files' images (up to 8 more) of A and B.
  check_bytes(m, n, k, 16.0L * (static_cast<long double>(m) * k + static_cast<long double>(k) * n), 0, what);
}

}  // namespace fpcert::cli
