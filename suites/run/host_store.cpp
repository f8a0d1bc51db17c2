// suites/run/host_store.cpp — the host store's protocol (suites/run/host_store.hpp): a file per key, made under an
// exclusive lock file that names its maker, renamed into place when whole.
#include "suites/run/host_store.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>

namespace fpcert {

void StoreWriter::bytes(const void* p, std::size_t n) {
  if (ok_ && n && std::fwrite(p, 1, n, f_) != n) ok_ = false;
}

void StoreWriter::str(const std::string& s) {
  pod(static_cast<std::uint64_t>(s.size()));
  bytes(s.data(), s.size());
}

void StoreReader::throw_short() { throw std::runtime_error("the store file is shorter than what it says it holds"); }

void StoreReader::bytes(void* p, std::size_t n) {
  if (n > left_ || (n && std::fread(p, 1, n, f_) != n)) throw_short();
  left_ -= n;
}

std::string StoreReader::str() {
  const auto n = pod<std::uint64_t>();
  if (n > left_) throw_short();
  std::string s(static_cast<std::size_t>(n), '\0');
  bytes(s.data(), s.size());
  return s;
}

std::string host_store_dir() {
  const char* v = std::getenv("FPCERT_CASE_STORE");
  return v ? std::string(v) : std::string();
}

namespace host_store_detail {
namespace {

constexpr char kMagic[] = "fpcert host store 1\n";

/// FNV-1a, 64 bits: the file name of a key (the file's header holds the key itself, so a collision is only a miss).
std::uint64_t name_hash(const std::string& s) {
  std::uint64_t h = 1469598103934665603ull;
  for (const unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

struct File {
  std::FILE* f = nullptr;
  explicit File(std::FILE* g) : f(g) {}
  ~File() {
    if (f) std::fclose(f);
  }
  File(const File&) = delete;
  File& operator=(const File&) = delete;
};

enum class Tried { Missing, Read, Bad };

/// The file at `bin`, if there is one and it holds `key`, given to read_file.
Tried try_read(const std::string& bin, const std::string& key, const std::function<void(StoreReader&)>& read_file) {
  File in(std::fopen(bin.c_str(), "rb"));
  if (!in.f) return errno == ENOENT ? Tried::Missing : Tried::Bad;
  struct stat st {};
  if (::fstat(fileno(in.f), &st) != 0) return Tried::Bad;
  std::setvbuf(in.f, nullptr, _IOFBF, 1 << 20);
  try {
    StoreReader r(in.f, static_cast<std::uint64_t>(st.st_size));
    char magic[sizeof kMagic - 1];
    r.bytes(magic, sizeof magic);
    if (std::memcmp(magic, kMagic, sizeof magic) != 0 || r.str() != key) return Tried::Bad;
    read_file(r);
    return r.left() == 0 ? Tried::Read : Tried::Bad;
  } catch (const std::exception&) {
    return Tried::Bad;
  }
}

/// Whether the process named in the lock file is gone (a lock still being written names nobody yet: alive).
bool maker_gone(const std::string& lock) {
  File in(std::fopen(lock.c_str(), "r"));
  if (!in.f) return errno != ENOENT;  // gone: its maker finished (look again); unreadable: treat as dead
  long pid = 0;
  if (std::fscanf(in.f, "%ld", &pid) != 1 || pid <= 0) return false;
  return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

/// Mark the key as one the store could not take (a full disk, a folder that refuses files): the others make it at once
/// instead of waiting, one after another, for makers that cannot write either.
void mark_unstored(const std::string& unstored) {
  const int fd = ::open(unstored.c_str(), O_WRONLY | O_CREAT, 0644);
  if (fd >= 0) ::close(fd);
}

/// Make the data and write it to `bin` (beside it, then renamed); the lock is this process's and is removed.
void make_into(const std::string& bin, const std::string& lock, const std::string& unstored, const std::string& key,
               const std::function<void(StoreWriter*)>& make_and_write) {
  const std::string tmp = fmt::format("{}.tmp.{}", bin, ::getpid());
  struct Cleanup {
    const std::string& tmp;
    const std::string& lock;
    ~Cleanup() {
      std::remove(tmp.c_str());
      std::remove(lock.c_str());
    }
  } cleanup{tmp, lock};
  File out(std::fopen(tmp.c_str(), "wb"));
  if (!out.f) {
    mark_unstored(unstored);
    return make_and_write(nullptr);
  }
  std::setvbuf(out.f, nullptr, _IOFBF, 1 << 20);
  StoreWriter w(out.f);
  w.bytes(kMagic, sizeof kMagic - 1);
  w.str(key);
  make_and_write(&w);
  const bool ok = w.ok() && std::fflush(out.f) == 0;
  std::fclose(out.f);
  out.f = nullptr;
  if (!ok || std::rename(tmp.c_str(), bin.c_str()) != 0) mark_unstored(unstored);
}

}  // namespace

StoreFetch fetch(const std::string& dir, const std::string& key, const std::function<void(StoreReader&)>& read_file,
                 const std::function<void(StoreWriter*)>& make_and_write) {
  if (dir.empty()) {
    make_and_write(nullptr);
    return StoreFetch::Made;
  }
  const std::string base = fmt::format("{}/{:016x}", dir, name_hash(key));
  const std::string bin = base + ".bin", lock = base + ".lock", unstored = base + ".unstored";
  const auto unstorable = [&] { return ::access(unstored.c_str(), F_OK) == 0; };
  for (int wait_us = 500;; wait_us = std::min(wait_us * 2, 50000)) {
    switch (try_read(bin, key, read_file)) {
      case Tried::Read: return StoreFetch::Read;
      case Tried::Bad: make_and_write(nullptr); return StoreFetch::Made;  // another key's file, or damaged: made here
      case Tried::Missing: break;
    }
    if (unstorable()) {  // a maker could not write it: made here, no lock taken, no one waits on this process
      make_and_write(nullptr);
      return StoreFetch::Made;
    }
    const int fd = ::open(lock.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd >= 0) {
      const std::string pid = std::to_string(::getpid()) + "\n";
      // A lock whose pid did not get written reads as alive: the others wait for this process, which goes on.
      [[maybe_unused]] const ssize_t written = ::write(fd, pid.data(), pid.size());
      ::close(fd);
      // The maker before us may have renamed its file and removed its lock between our look and our lock.
      if (try_read(bin, key, read_file) == Tried::Read) {
        std::remove(lock.c_str());
        return StoreFetch::Read;
      }
      make_into(bin, lock, unstored, key, make_and_write);
      return StoreFetch::Made;
    }
    // No store here (a missing folder, no permission), its maker died, or a maker could not write it.
    if (errno != EEXIST || maker_gone(lock) || unstorable()) {
      make_and_write(nullptr);
      return StoreFetch::Made;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(wait_us));  // another process is making it
  }
}

}  // namespace host_store_detail
}  // namespace fpcert
