// tests/base/files_test.cpp — atomic replacement and durable appends (base/atomic_file.hpp), and .npy
// files written and read back (base/npy.hpp), with the errors bad files must give.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "base/atomic_file.hpp"
#include "base/error.hpp"
#include "base/npy.hpp"

using namespace fpcert;
namespace fs = std::filesystem;

namespace {
fs::path scratch(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("fpcert_base_test_" + std::to_string(::getpid())) / name;
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
}  // namespace

TEST_CASE("write_file_atomic replaces the whole file and leaves no temporary behind") {
  const fs::path d = scratch("atomic");
  const std::string path = (d / "r.json").string();
  write_file_atomic(path, "first version, longer than the second\n");
  write_file_atomic(path, "second\n");
  CHECK(slurp(path) == "second\n");
  int entries = 0;
  for (const auto& e : fs::directory_iterator(d)) entries += e.is_regular_file();
  CHECK(entries == 1);  // no r.json.tmp.<pid> left
  CHECK_THROWS_AS(write_file_atomic((d / "no_such_dir" / "x").string(), "x"), InputError);
}

TEST_CASE("append_line adds one line per call") {
  const fs::path d = scratch("append");
  const std::string path = (d / "cases.jsonl").string();
  append_line(path, R"({"case":1})");
  append_line(path, R"({"case":2})");
  CHECK(slurp(path) == "{\"case\":1}\n{\"case\":2}\n");
  CHECK_THROWS_AS(append_line((d / "no_such_dir" / "x").string(), "x"), InputError);
}

TEST_CASE("npy: a 2-D float64 and a 1-D uint16 array come back with their shape, type and bits") {
  const fs::path d = scratch("npy");
  // Values whose float64 bits a text round trip could lose: 0.1 is not a short binary fraction.
  const std::vector<double> v = {0.1, -2.5, 1e-310, 3.0, -0.0, 6.02214076e23};
  write_npy_f64((d / "a.npy").string(), 2, 3, v);
  const NpyArray a = read_npy((d / "a.npy").string());
  CHECK(a.type == NpyType::F64);
  REQUIRE(a.shape == std::vector<std::int64_t>{2, 3});
  CHECK_FALSE(a.fortran_order);
  for (std::int64_t i = 0; i < 6; ++i) CHECK(std::bit_cast<std::uint64_t>(a.value(i)) == std::bit_cast<std::uint64_t>(v[i]));

  const std::vector<std::uint16_t> codes = {0x3c00, 0x7e01, 0x0001, 0xfbff};
  write_npy((d / "c.npy").string(), NpyType::U16, 4, -1, codes.data());
  const NpyArray c = read_npy((d / "c.npy").string());
  CHECK(c.type == NpyType::U16);
  REQUIRE(c.shape == std::vector<std::int64_t>{4});
  for (std::int64_t i = 0; i < 4; ++i) CHECK(c.bits(i) == codes[static_cast<std::size_t>(i)]);
}

TEST_CASE("npy: a file that is not .npy, or is cut short, is an InputError naming the file") {
  const fs::path d = scratch("npy_bad");
  const std::string text = (d / "text.npy").string();
  { std::ofstream(text) << "not numpy at all"; }
  CHECK_THROWS_WITH_AS(read_npy(text), doctest::Contains("text.npy"), InputError);
  // A valid file with its last data byte removed.
  const std::vector<double> v = {1, 2, 3, 4};
  const std::string good = (d / "good.npy").string();
  write_npy_f64(good, 2, 2, v);
  std::string bytes = slurp(good);
  bytes.pop_back();
  const std::string cut = (d / "cut.npy").string();
  { std::ofstream(cut, std::ios::binary) << bytes; }
  CHECK_THROWS_WITH_AS(read_npy(cut), doctest::Contains("cut.npy"), InputError);
  CHECK_THROWS_AS(read_npy((d / "missing.npy").string()), InputError);
}
