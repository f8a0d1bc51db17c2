// tests/base/input_file_test.cpp — bounded reads of input files (base/input_file.hpp): a folder,
// /dev/zero, binary data and files over the limit are refused with the file's name, after reading
// no more than the limit (the hardening issue's class 2: `certify --config /dev/zero` grew to 24 GB).
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "base/error.hpp"
#include "base/input_file.hpp"

using namespace fpcert;

TEST_CASE("/dev/zero is refused as binary data at once, whatever the limit") {
  CHECK_THROWS_WITH_AS(read_input_file("/dev/zero", kResultsLimit, "--config"),
                       "--config '/dev/zero' holds binary data (a NUL byte at offset 0): not a text file", InputError);
}

TEST_CASE("an endless text stream stops at the limit") {
  // /dev/zero read as binary never ends: the limit stops it.
  CHECK_THROWS_WITH_AS(read_input_file("/dev/zero", 100000, "results file", false),
                       "results file '/dev/zero' is longer than the 97.7 KiB such a file may have", InputError);
}

TEST_CASE("a folder, a missing file and a file over the limit: each named") {
  CHECK_THROWS_WITH_AS(read_input_file("/tmp", kConfigLimit, "--config"), "--config '/tmp' is a directory, not a file", InputError);
  CHECK_THROWS_WITH_AS(read_input_file("/no/such/file", kConfigLimit, "--config"),
                       "cannot read --config '/no/such/file': No such file or directory", InputError);
  const std::string path = std::filesystem::temp_directory_path() / ("fpcert_input_file_test_" + std::to_string(::getpid()));
  { std::ofstream(path) << std::string(2000, 'a'); }
  CHECK_THROWS_WITH_AS(read_input_file(path, 1024, "--config"), ("--config '" + path + "' is 1.95 KiB, more than the 1 KiB such a file may have").c_str(),
                       InputError);
  CHECK(read_input_file(path, 2000, "--config").size() == 2000);
  std::filesystem::remove(path);
}

TEST_CASE("byte sizes as text") {
  CHECK(byte_size_text(0) == "0 bytes");
  CHECK(byte_size_text(1023) == "1023 bytes");
  CHECK(byte_size_text(1024) == "1 KiB");
  CHECK(byte_size_text(std::uint64_t{24} << 30) == "24 GiB");
}
