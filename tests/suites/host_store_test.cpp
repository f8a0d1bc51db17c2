// tests/suites/host_store_test.cpp — the host store that --devices workers share (suites/run/host_store.hpp): the first
// process makes and writes, the others read what it made; processes asking at once make it once; a damaged file, a
// maker that died and a missing folder cost time only, never a wrong or lost result.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "suites/run/host_store.hpp"

using namespace fpcert;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  std::string path;
  TempDir() {
    std::string t = (fs::temp_directory_path() / "fpcert-store-test-XXXXXX").string();
    REQUIRE(::mkdtemp(t.data()) != nullptr);
    path = t;
  }
  ~TempDir() { fs::remove_all(path); }
};

using Data = std::vector<double>;

/// Values that are not a constant (a reader that returned zeros or the wrong length would differ).
Data values(std::size_t n, double seed) {
  Data d(n);
  for (std::size_t i = 0; i < n; ++i) d[i] = seed / static_cast<double>(i + 3) + static_cast<double>(i);
  return d;
}

Data get(const std::string& dir, const std::string& key, const Data& made, int* makes, StoreFetch* how,
         std::chrono::milliseconds slow = std::chrono::milliseconds(0)) {
  return host_store_get<Data>(
      dir, key,
      [&] {
        ++*makes;
        std::this_thread::sleep_for(slow);
        return made;
      },
      [](const Data& d, StoreWriter& w) { w.vec(d); }, [](StoreReader& r) { return r.vec<double>(); }, how);
}

std::vector<fs::path> files_ending(const std::string& dir, const std::string& tail) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.size() >= tail.size() && name.compare(name.size() - tail.size(), tail.size(), tail) == 0) out.push_back(e.path());
  }
  return out;
}

/// A store holding one key's file, made from `a` (b: other values of the same length), and that file's path.
struct Stored {
  TempDir t;
  int makes = 0;
  StoreFetch how{};
  Data a, b;
  fs::path bin;
  Stored(std::size_t n, double sa, double sb) : a(values(n, sa)), b(values(n, sb)) {
    REQUIRE(get(t.path, "key", a, &makes, &how) == a);
    bin = files_ending(t.path, ".bin").at(0);
  }
};

}  // namespace

TEST_CASE("host store: no folder makes; the first process makes and writes, the next reads the same values") {
  int makes = 0;
  StoreFetch how{};
  const Data a = values(1000, 7.5);
  CHECK(get("", "k", a, &makes, &how) == a);
  CHECK(how == StoreFetch::Made);
  CHECK(makes == 1);

  TempDir t;
  CHECK(get(t.path, "case one", a, &makes, &how) == a);
  CHECK(how == StoreFetch::Made);
  CHECK(makes == 2);
  CHECK(files_ending(t.path, ".bin").size() == 1);
  CHECK(files_ending(t.path, ".lock").empty());  // the maker's lock is gone
  // A second request (another process, in the store's eyes) reads; the made values would differ if it made instead.
  const Data other = values(1000, -1.25);
  CHECK(get(t.path, "case one", other, &makes, &how) == a);
  CHECK(how == StoreFetch::Read);
  CHECK(makes == 2);
  // Another key is its own file.
  CHECK(get(t.path, "case two", other, &makes, &how) == other);
  CHECK(how == StoreFetch::Made);
  CHECK(files_ending(t.path, ".bin").size() == 2);
}

TEST_CASE("host store: a damaged file, another key's file and a missing folder are made here, right") {
  Stored fx(4096, 3.0, 5.0);
  auto& [t, makes, how, a, b, bin] = fx;
  SUBCASE("cut short") { fs::resize_file(bin, fs::file_size(bin) / 2); }
  SUBCASE("one byte longer") { std::ofstream(bin, std::ios::app) << 'x'; }
  SUBCASE("another key's file under this key's name (a hash collision)") {
    TempDir u;
    int m2 = 0;
    REQUIRE(get(u.path, "some other key", b, &m2, &how) == b);
    fs::copy_file(files_ending(u.path, ".bin").at(0), bin, fs::copy_options::overwrite_existing);
  }
  SUBCASE("header damaged") {
    std::fstream f(bin, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(0);
    f.put('X');
  }
  const int before = makes;
  CHECK(get(t.path, "key", a, &makes, &how) == a);
  CHECK(how == StoreFetch::Made);
  CHECK(makes == before + 1);

  int m3 = 0;
  CHECK(get(t.path + "/no such folder", "key", b, &m3, &how) == b);
  CHECK(how == StoreFetch::Made);
  CHECK(m3 == 1);
}

TEST_CASE("host store: a lock whose maker has died does not hold anyone up; a live maker's lock is waited for") {
  Stored fx(100, 1.5, 2.5);
  auto& [t, makes, how, a, b, bin] = fx;
  std::string lock = bin.string();
  lock.replace(lock.size() - 4, 4, ".lock");
  fs::remove(bin);
  // A maker that died: a child process that has exited (its pid is free, and not ours).
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) ::_exit(0);
  int st = 0;
  REQUIRE(::waitpid(child, &st, 0) == child);
  std::ofstream(lock) << child << "\n";
  const auto t0 = std::chrono::steady_clock::now();
  CHECK(get(t.path, "key", b, &makes, &how) == b);
  CHECK(how == StoreFetch::Made);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
  // A live maker (this process's pid) whose file appears later: the request waits, then reads that file.
  fs::remove(lock);
  REQUIRE(get(t.path, "key", a, &makes, &how) == a);  // made and written again (the lock was free)
  const fs::path kept = bin.string() + ".kept";
  fs::rename(bin, kept);
  std::ofstream(lock) << ::getpid() << "\n";
  std::thread finisher([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    fs::rename(kept, bin);
    fs::remove(lock);
  });
  const int before = makes;
  CHECK(get(t.path, "key", b, &makes, &how) == a);
  finisher.join();
  CHECK(how == StoreFetch::Read);
  CHECK(makes == before);
}

TEST_CASE("host store: eight processes asking at once make the data once; each reads the same values") {
  TempDir t;
  constexpr int kProcs = 8;
  std::vector<pid_t> kids;
  for (int p = 0; p < kProcs; ++p) {
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      int makes = 0;
      StoreFetch how{};
      // Every process would make different values: the one that made them and the ones that read must all agree.
      const Data got = get(t.path, "shared", values(1 << 16, 9.0 + p), &makes, &how, std::chrono::milliseconds(200));
      std::ofstream(t.path + "/out" + std::to_string(p)) << (how == StoreFetch::Made ? "made " : "read ") << got[1] << " "
                                                           << got.back() << "\n";
      ::_exit(0);
    }
    kids.push_back(pid);
  }
  for (const pid_t k : kids) {
    int st = 0;
    REQUIRE(::waitpid(k, &st, 0) == k);
    REQUIRE(WIFEXITED(st));
  }
  int made = 0;
  std::string first;
  for (int p = 0; p < kProcs; ++p) {
    std::ifstream in(t.path + "/out" + std::to_string(p));
    std::string how, rest;
    in >> how;
    std::getline(in, rest);
    made += how == "made";
    if (p == 0) first = rest;
    CHECK(rest == first);
  }
  CHECK(made == 1);
  CHECK(files_ending(t.path, ".lock").empty());
}

TEST_CASE("host store: a maker that cannot write marks the key, and the next request makes at once instead of waiting") {
  Stored fx(256, 4.0, 6.0);  // to learn the key's file name
  auto& [t, makes, how, a, b, bin] = fx;
  TempDir u;
  const std::string name = bin.filename().string();
  // The maker's file beside the target cannot be opened (a folder stands there), as on a full disk.
  fs::create_directory(fs::path(u.path) / (name + ".tmp." + std::to_string(::getpid())));
  int m = 0;
  CHECK(get(u.path, "key", a, &m, &how) == a);
  CHECK(how == StoreFetch::Made);
  CHECK(fs::exists(fs::path(u.path) / (name.substr(0, name.size() - 4) + ".unstored")));
  CHECK(!fs::exists(fs::path(u.path) / name));
  CHECK(files_ending(u.path, ".lock").empty());
  // A live maker's lock (this process) now: the request must not wait on it (without the mark it would, until the
  // lock went away 5 s later).
  const fs::path lock = fs::path(u.path) / (name.substr(0, name.size() - 4) + ".lock");
  std::ofstream(lock) << ::getpid() << "\n";
  std::thread release([&] {
    std::this_thread::sleep_for(std::chrono::seconds(5));
    fs::remove(lock);
  });
  const auto t0 = std::chrono::steady_clock::now();
  CHECK(get(u.path, "key", b, &m, &how) == b);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2));
  CHECK(how == StoreFetch::Made);
  CHECK(m == 2);
  release.join();
}
