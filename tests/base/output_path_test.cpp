// tests/base/output_path_test.cpp — outputs are checked before any work and written where they
// really point (base/output_path.hpp, base/atomic_file.hpp): devices and FIFOs in place, symlinks
// followed, directories refused, clashes between outputs and inputs refused; folders of outputs
// replaced as one set (OutputDir). Regression tests for the hardening issue's classes 1, 5, 7, 8, 9.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>

#include "base/atomic_file.hpp"
#include "base/error.hpp"
#include "base/output_path.hpp"

using namespace fpcert;
namespace fs = std::filesystem;

namespace {

fs::path scratch(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("fpcert_output_path_test_" + std::to_string(::getpid())) / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

int entries(const fs::path& d) {
  int n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(d)) ++n;
  return n;
}

}  // namespace

TEST_CASE("a character device is written in place: /dev/null stays a device (class 1)") {
  write_file_atomic("/dev/null", "results\n");
  struct stat st {};
  REQUIRE(::stat("/dev/null", &st) == 0);
  CHECK(S_ISCHR(st.st_mode));
  CHECK(plan_output("/dev/null", "--json").how == OutputHow::InPlace);
}

TEST_CASE("/dev/full: the write error names the file and the reason") {
  CHECK(error_of([] { write_file_atomic("/dev/full", "x"); }) == "cannot write '/dev/full': No space left on device");
  struct stat st {};
  REQUIRE(::stat("/dev/full", &st) == 0);
  CHECK(S_ISCHR(st.st_mode));
}

TEST_CASE("a FIFO is written in place, never replaced by a regular file") {
  const fs::path d = scratch("fifo");
  const std::string fifo = (d / "pipe").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::string got;
  std::thread reader([&] { got = slurp(fifo); });
  write_file_atomic(fifo, "through the pipe\n");
  reader.join();
  CHECK(got == "through the pipe\n");
  struct stat st {};
  REQUIRE(::lstat(fifo.c_str(), &st) == 0);
  CHECK(S_ISFIFO(st.st_mode));
  CHECK(entries(d) == 1);  // no temporary file beside it
}

TEST_CASE("a symlink is followed: the target is replaced, the link stays a link") {
  const fs::path d = scratch("symlink");
  fs::create_directories(d / "real");
  { std::ofstream(d / "real" / "r.json") << "old\n"; }
  fs::create_symlink(d / "real" / "r.json", d / "link.json");
  write_file_atomic((d / "link.json").string(), "new\n");
  CHECK(fs::is_symlink(d / "link.json"));
  CHECK(slurp(d / "real" / "r.json") == "new\n");
  // A dangling link: the file is created where it points.
  fs::create_symlink(d / "real" / "later.json", d / "dangling.json");
  write_file_atomic((d / "dangling.json").string(), "made\n");
  CHECK(fs::is_symlink(d / "dangling.json"));
  CHECK(slurp(d / "real" / "later.json") == "made\n");
  CHECK(entries(d / "real") == 2);
}

TEST_CASE("a symlink loop is an error, not a hang") {
  const fs::path d = scratch("loop");
  fs::create_symlink(d / "b", d / "a");
  fs::create_symlink(d / "a", d / "b");
  CHECK(error_of([&] { plan_output((d / "a").string(), "--json"); }).find("too many levels of symbolic links") != std::string::npos);
}

TEST_CASE("a directory, a missing folder, an empty path and a path ending in / are refused before any work (class 9)") {
  const fs::path d = scratch("refuse");
  CHECK(error_of([&] { plan_output(d.string(), "--json"); }) == "--json '" + d.string() + "': is a directory (give a file name inside it)");
  CHECK(error_of([&] { plan_output((d / "no" / "r.json").string(), "--html"); }) ==
        "--html '" + (d / "no" / "r.json").string() + "': the folder '" + (d / "no").string() + "' does not exist");
  CHECK(error_of([] { plan_output("", "--json"); }) == "--json: an empty path (give a file name, or leave the option out)");
  CHECK(error_of([&] { plan_output((d / "new/").string(), "--json"); }).find("names a directory") != std::string::npos);
  // A missing folder is fine where the command will create it (a config's output folder).
  CHECK(plan_output((d / "no" / "r.json").string(), "--json", true).how == OutputHow::Replace);
  CHECK(plan_output("-", "--json").how == OutputHow::Stdout);
}

TEST_CASE("an unwritable folder is refused before any work (as a user who cannot write there)") {
  if (::geteuid() == 0) {
    // root writes everywhere: check the refusal in a child that gives up root.
    const fs::path d = scratch("unwritable");
    fs::permissions(d, fs::perms::owner_read | fs::perms::owner_exec);
    const pid_t pid = ::fork();
    if (pid == 0) {
      if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(10);
      try {
        plan_output((d / "r.json").string(), "--json");
      } catch (const InputError& e) {
        const std::string w = e.what();  // no search permission: stat fails; search but no write: access fails
        ::_exit(w.find("cannot write in") != std::string::npos || w.find("Permission denied") != std::string::npos ? 0 : 11);
      }
      ::_exit(12);
    }
    int st = 0;
    ::waitpid(pid, &st, 0);
    fs::permissions(d, fs::perms::owner_all);
    CHECK(WIFEXITED(st));
    CHECK(WEXITSTATUS(st) == 0);
  } else {
    const fs::path d = scratch("unwritable");
    fs::permissions(d, fs::perms::owner_read | fs::perms::owner_exec);
    CHECK(error_of([&] { plan_output((d / "r.json").string(), "--json"); }).find("cannot write in") != std::string::npos);
    fs::permissions(d, fs::perms::owner_all);
  }
}

TEST_CASE("the same file for two outputs is refused, also through a symlink; /dev/null twice is fine (class 7)") {
  const fs::path d = scratch("clash");
  const std::string x = (d / "x").string();
  CHECK(error_of([&] { check_outputs({{"--json", x}, {"--html", x}}); }) ==
        "--html '" + x + "' and --json '" + x + "' are the same file: each output needs its own (one would overwrite the other)");
  fs::create_symlink(d / "x", d / "alias");
  { std::ofstream(x) << "exists\n"; }
  CHECK(error_of([&] { check_outputs({{"--json", x}, {"--junit", (d / "alias").string()}}); }).find("are the same file") != std::string::npos);
  CHECK(error_of([&] { check_outputs({{"--json", x}, {"--junit", (d / "." / "x").string()}}); }).find("are the same file") != std::string::npos);
  CHECK_NOTHROW(check_outputs({{"--json", "/dev/null"}, {"--html", "/dev/null"}}));
  CHECK(error_of([] { check_outputs({{"--json", "-"}, {"--html", "-"}}); }).find("are the same file") != std::string::npos);
  CHECK(check_outputs({{"--json", x}, {"--html", ""}}).size() == 1);  // an output not asked for
}

TEST_CASE("an output that is one of the inputs is refused (report g.json -o g.json)") {
  const fs::path d = scratch("input");
  const std::string g = (d / "g.json").string();
  { std::ofstream(g) << "{}\n"; }
  CHECK(error_of([&] { check_outputs({{"-o", g}}, {g}); }) ==
        "-o '" + g + "' is the input '" + g + "': writing it would destroy what is being read (choose another output path)");
  CHECK(slurp(g) == "{}\n");
}

TEST_CASE("a replaced file keeps its permissions - a new one gets the umask's") {
  const fs::path d = scratch("mode");
  const std::string f = (d / "r.json").string();
  { std::ofstream(f) << "old\n"; }
  ::chmod(f.c_str(), 0640);
  write_file_atomic(f, "new\n");
  struct stat st {};
  REQUIRE(::stat(f.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0640);
}

TEST_CASE("a file-size limit (ulimit -f, SIGXFSZ ignored as fpcert does) fails the write and leaves no temporary file (class 8)") {
  const fs::path d = scratch("xfsz");
  const std::string f = (d / "big.json").string();
  { std::ofstream(f) << "old\n"; }
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    rlimit rl{10240, 10240};
    ::setrlimit(RLIMIT_FSIZE, &rl);
    try {
      write_file_atomic(f, std::string(100000, 'x'));
    } catch (const InputError& e) {
      ::_exit(std::string(e.what()).find("ulimit -f") != std::string::npos ? 0 : 11);
    }
    ::_exit(12);
  }
  int st = 0;
  ::waitpid(pid, &st, 0);
  CHECK(WIFEXITED(st));
  CHECK(WEXITSTATUS(st) == 0);
  CHECK(slurp(f) == "old\n");
  CHECK(entries(d) == 1);
}

TEST_CASE("OutputDir: a folder of outputs replaced as one set (class 5)") {
  const fs::path d = scratch("outdir");
  const std::string out = (d / "set").string();
  const std::vector<std::string> owned = {"A.npy", "B.npy", "meta.json"};
  {
    OutputDir o(out, owned, "-o");
    write_file_atomic(o.file("A.npy"), "A1");
    write_file_atomic(o.file("B.npy"), "B1");
    write_file_atomic(o.file("meta.json"), "M1");
    CHECK_FALSE(fs::exists(out));  // nothing visible before commit
    o.commit();
  }
  CHECK(slurp(d / "set" / "A.npy") == "A1");
  SUBCASE("an interrupted second set (no commit) leaves the first whole, and no staging folder") {
    {
      OutputDir o(out, owned, "-o");
      write_file_atomic(o.file("A.npy"), "A2");
    }
    CHECK(slurp(d / "set" / "A.npy") == "A1");
    CHECK(slurp(d / "set" / "B.npy") == "B1");
    CHECK(entries(d) == 1);
  }
  SUBCASE("a committed second set replaces the whole folder: no file of the first remains") {
    {
      OutputDir o(out, owned, "-o");
      write_file_atomic(o.file("A.npy"), "A2");
      write_file_atomic(o.file("meta.json"), "M2");
      o.commit();
    }
    CHECK(slurp(d / "set" / "A.npy") == "A2");
    CHECK_FALSE(fs::exists(d / "set" / "B.npy"));
    CHECK(entries(d) == 1);
  }
  SUBCASE("a folder holding files of the user's is refused before any work, and kept") {
    { std::ofstream(d / "set" / "notes.txt") << "mine\n"; }
    CHECK(error_of([&] { OutputDir o(out, owned, "-o"); }).find("holds files this command did not write (notes.txt)") != std::string::npos);
    CHECK(slurp(d / "set" / "notes.txt") == "mine\n");
  }
  SUBCASE("an input inside the folder is refused (it would be deleted)") {
    CHECK(error_of([&] { OutputDir o(out, owned, "-o", {(d / "set" / "A.npy").string()}); }).find("holds the input") != std::string::npos);
  }
  SUBCASE("a path that is a file is refused") {
    CHECK(error_of([&] { OutputDir o((d / "set" / "A.npy").string(), owned, "-o"); }).find("exists and is not a directory") != std::string::npos);
  }
}
