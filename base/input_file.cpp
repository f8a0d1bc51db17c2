// base/input_file.cpp — bounded reads of input files.
#include "base/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "base/error.hpp"

namespace fpcert {

std::string byte_size_text(std::uint64_t bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 6) {
    v /= 1024;
    ++u;
  }
  char buf[64];
  if (u == 0) std::snprintf(buf, sizeof buf, "%llu bytes", static_cast<unsigned long long>(bytes));
  else std::snprintf(buf, sizeof buf, "%.3g %s", v, units[u]);
  return buf;
}

std::string read_input_file(const std::string& path, std::size_t limit, const std::string& what, bool text) {
  const std::string name = what + " '" + path + "'";
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError("cannot read " + name + ": " + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw InputError("cannot read " + name + ": " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw InputError(name + " is a directory, not a file");
  if (S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) > limit)
    throw InputError(name + " is " + byte_size_text(static_cast<std::uint64_t>(st.st_size)) + ", more than the " +
                     byte_size_text(limit) + " such a file may have");
  std::string out;
  if (S_ISREG(st.st_mode)) out.reserve(static_cast<std::size_t>(st.st_size));
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw InputError("cannot read " + name + ": " + std::strerror(errno));
    }
    if (n == 0) break;
    if (text)
      if (const void* nul = std::memchr(buf, '\0', static_cast<std::size_t>(n)))
        throw InputError(name + " holds binary data (a NUL byte at offset " +
                         std::to_string(out.size() + static_cast<std::size_t>(static_cast<const char*>(nul) - buf)) +
                         "): not a text file");
    if (out.size() + static_cast<std::size_t>(n) > limit)
      throw InputError(name + " is longer than the " + byte_size_text(limit) + " such a file may have");
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

std::string printable(std::string_view s, std::size_t max, bool ascii_only) {
  std::string out;
  for (std::size_t i = 0; i < s.size() && i < max; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f || (ascii_only && c >= 0x80)) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (s.size() > max) out += "... (" + std::to_string(s.size()) + " characters)";
  return out;
}

}  // namespace fpcert
