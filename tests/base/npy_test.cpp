// tests/base/npy_test.cpp — the .npy header as NumPy defines it, read strictly (base/npy.hpp):
// overflowing shapes, negative and non-integer dimensions, repeated keys (the last wins, as in a
// Python dict), NUL bytes and bounded reads of files that never end. Regression tests for the
// hardening issue's classes 2, 11 and 14 (each header below is one the issue names).
#include <doctest/doctest.h>

#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/npy.hpp"

using namespace fpcert;

namespace {

/// A version 1.0 file with this header text (padded as NumPy pads it) and `data` after it.
std::string npy_with_header(const std::string& dict, const std::string& data = "") {
  std::string header = dict;
  const std::size_t total = 10 + header.size() + 1;
  header += std::string((64 - total % 64) % 64, ' ') + "\n";
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xFF);
  out += static_cast<char>((header.size() >> 8) & 0xFF);
  return out + header + data;
}

std::string error_of(const std::string& bytes) {
  try {
    parse_npy(bytes, "t.npy");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string f8(std::initializer_list<double> v) {
  std::string s(v.size() * 8, '\0');
  std::size_t i = 0;
  for (double x : v) std::memcpy(s.data() + 8 * i++, &x, 8);
  return s;
}

}  // namespace

TEST_CASE("shape (4611686018427387905, 4) overflows the byte count: refused, not wrapped to a small size") {
  // 4611686018427387905 * 4 * 8 = 2^66 + 32 bytes: modulo 2^64 that is 32, the size of the data given.
  const std::string e = error_of(npy_with_header("{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387905, 4), }",
                                                 std::string(32, '\0')));
  CHECK(e == "'t.npy' is not a usable .npy file: shape (4611686018427387905, 4) of <f8 needs more than 2^63 bytes");
}

TEST_CASE("negative dimensions are refused ((-4, 3) was read as 4 x 3)") {
  const std::string e = error_of(npy_with_header("{'descr': '<f8', 'fortran_order': False, 'shape': (-4, 3), }", std::string(96, '\0')));
  CHECK(e == "'t.npy' is not a usable .npy file: shape (-4, 3): negative dimension -4");
}

TEST_CASE("a non-integer dimension says so (shape (4.5, 3))") {
  const std::string e = error_of(npy_with_header("{'descr': '<f8', 'fortran_order': False, 'shape': (4.5, 3), }"));
  CHECK(e == "'t.npy' is not a usable .npy file: shape (4.5, 3): dimension '4.5' is not a non-negative integer");
}

TEST_CASE("a key given twice takes the last value, as NumPy (a Python dict) does") {
  const NpyArray a = parse_npy(
      npy_with_header("{'descr': '<f4', 'descr': '<f8', 'fortran_order': True, 'fortran_order': False, 'shape': (9,), 'shape': (2,), }",
                      f8({1.5, -2.25})),
      "t.npy");
  CHECK(a.type == NpyType::F64);
  CHECK_FALSE(a.fortran_order);
  REQUIRE(a.shape == std::vector<std::int64_t>{2});
  CHECK(a.value(0) == 1.5);
  CHECK(a.value(1) == -2.25);
}

TEST_CASE("a NUL byte in the header is printed as \\x00, never raw") {
  std::string dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }";
  dict[3] = '\0';
  const std::string e = error_of(npy_with_header(dict, f8({1})));
  CHECK(e.find("a NUL byte in the header: {'d\\x00scr'") != std::string::npos);
  CHECK(e.find('\0') == std::string::npos);
}

TEST_CASE("headers NumPy writes are read: 1-D, 2-D, Fortran order, zero-size, Python 2 longs, version 2") {
  CHECK(parse_npy(npy_with_header("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", f8({1, 2, 3})), "t").shape ==
        std::vector<std::int64_t>{3});
  const NpyArray f = parse_npy(npy_with_header("{'descr': '<f8', 'fortran_order': True, 'shape': (2, 1), }", f8({1, 2})), "t");
  CHECK(f.fortran_order);
  CHECK(parse_npy(npy_with_header("{'descr': '<f8', 'fortran_order': False, 'shape': (0, 5), }"), "t").size() == 0);
  CHECK(parse_npy(npy_with_header("{'descr': '<f8', 'fortran_order': False, 'shape': (2L,), }", f8({1, 2})), "t").rows() == 2);
  std::string v2 = npy_with_header("{\"descr\": \"<f8\", \"fortran_order\": False, \"shape\": (1,)}", f8({7}));
  // Re-frame as version 2.0: a 4-byte header length.
  const std::size_t hlen = static_cast<unsigned char>(v2[8]) | (static_cast<std::size_t>(static_cast<unsigned char>(v2[9])) << 8);
  std::string v2b = "\x93NUMPY";
  v2b += '\x02';
  v2b += '\x00';
  v2b += static_cast<char>(hlen & 0xFF);
  v2b += static_cast<char>(hlen >> 8);
  v2b += '\0';
  v2b += '\0';
  v2b += v2.substr(10);
  CHECK(parse_npy(v2b, "t").value(0) == 7);
}

TEST_CASE("other malformed headers: each names what is wrong") {
  const std::string base = "'t.npy' is not a usable .npy file: ";
  CHECK(error_of(npy_with_header("{'descr': '<f8', 'shape': (1,), }", f8({1}))) == base + "no 'fortran_order' in the header");
  CHECK(error_of(npy_with_header("{'descr': '<f8', 'fortran_order': False, 'shape': (1,), 'extra': 1}", f8({1}))) ==
        base + "unknown header key 'extra' (a .npy header has exactly descr, fortran_order and shape)");
  CHECK(error_of(npy_with_header("{'descr': '>f8', 'fortran_order': False, 'shape': (1,), }", f8({1}))) ==
        base + "dtype '>f8' is not one of <f8, <f4, |u1, <u2, <u4, <u8, <i8, <f2, |V2, bfloat16");
  CHECK(error_of(npy_with_header("{'descr': '<f8', 'fortran_order': False, 'shape': (), }", f8({1}))) ==
        base + "shape () is a 0-dimensional array; fpcert reads 1-D and 2-D arrays");
  CHECK(error_of(npy_with_header("{'descr': '<f8', 'fortran_order': Maybe, 'shape': (1,), }", f8({1}))).find("True or False") !=
        std::string::npos);
  CHECK(error_of(npy_with_header("{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }", f8({1, 2}))) ==
        base + "data has 16 bytes, shape needs 8");
  CHECK(error_of(std::string("\x93NUMPY\x07\x00", 8)) == base + "unsupported format version 7 (fpcert reads versions 1, 2 and 3)");
  CHECK(error_of(std::string("\x93NUMPY\x02\x00\xff\xff\xff\x7f", 12)).find("more than the 65536 fpcert reads") != std::string::npos);
}

TEST_CASE("read_npy on /dev/zero, a directory and a never-ending FIFO-like stream: refused at once, with the file's name (class 2)") {
  CHECK_THROWS_WITH_AS(read_npy("/dev/zero"), "'/dev/zero' is not a usable .npy file: missing the \\x93NUMPY magic", InputError);
  CHECK_THROWS_WITH_AS(read_npy("/tmp"), "'/tmp' is a directory, not a .npy file", InputError);
  // /dev/urandom: random bytes are no .npy header; nothing beyond the first 12 bytes is read.
  CHECK_THROWS_AS(read_npy("/dev/urandom"), InputError);
}

TEST_CASE("read_npy of a regular file: the size is checked against the header before the data is read") {
  const std::string dir = std::filesystem::temp_directory_path() / ("fpcert_npy_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/big.npy";
  { std::ofstream(path, std::ios::binary) << npy_with_header("{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000, 1000), }", f8({1})); }
  CHECK_THROWS_WITH_AS(read_npy(path), ("'" + path + "' is not a usable .npy file: data has 8 bytes, shape needs 8000000000000").c_str(),
                       InputError);
  std::filesystem::remove_all(dir);
}

TEST_CASE("float16 and bfloat16 arrays: '<f2', ml_dtypes' '|V2' (numpy.save) and 'bfloat16' descrs decode exactly") {
  // little-endian 16-bit codes as the data (IEEE 754 binary16 and bfloat16 = the upper half of binary32)
  auto u2 = [](std::initializer_list<unsigned> v) {
    std::string s;
    for (unsigned x : v) s += static_cast<char>(x & 0xFF), s += static_cast<char>(x >> 8);
    return s;
  };
  const NpyArray h = parse_npy(npy_with_header("{'descr': '<f2', 'fortran_order': False, 'shape': (1, 5), }",
                                               u2({0x3C00, 0xC000, 0x7BFF, 0x0001, 0x3555})), "t");
  CHECK(h.type == NpyType::F16);
  CHECK(h.value(0) == 1.0);                     // 0 01111 0000000000
  CHECK(h.value(1) == -2.0);                    // 1 10000 0000000000
  CHECK(h.value(2) == 65504.0);                 // largest finite: (2 - 2^-10) 2^15
  CHECK(h.value(3) == std::ldexp(1.0, -24));    // smallest subnormal
  CHECK(h.value(4) == 1365.0 / 4096);           // 0 01101 0101010101: 1/3 rounded to 11 bits, 0.333251953125
  CHECK(std::isinf(parse_npy(npy_with_header("{'descr': '<f2', 'fortran_order': False, 'shape': (1,), }", u2({0xFC00})), "t").value(0)));
  CHECK(std::isnan(parse_npy(npy_with_header("{'descr': '<f2', 'fortran_order': False, 'shape': (1,), }", u2({0x7E00})), "t").value(0)));
  // numpy.save of an ml_dtypes.bfloat16 array writes descr '|V2' (NumPy's type codes cannot name a user dtype): the
  // bits come back as they are; 'bfloat16' (a header written with str(dtype)) decodes them.
  const NpyArray v = parse_npy(npy_with_header("{'descr': '|V2', 'fortran_order': False, 'shape': (3,), }", u2({0x3F80, 0x4049, 0xC2F7})), "t");
  CHECK(v.type == NpyType::V2);
  CHECK(v.bits(1) == 0x4049);
  CHECK(parse_npy(npy_with_header("{'descr': '<V2', 'fortran_order': False, 'shape': (1,), }", u2({1})), "t").type == NpyType::V2);
  const NpyArray b = parse_npy(npy_with_header("{'descr': 'bfloat16', 'fortran_order': False, 'shape': (3,), }", u2({0x3F80, 0x4049, 0xC2F7})), "t");
  CHECK(b.type == NpyType::BF16);
  CHECK(b.value(0) == 1.0);       // 0x3F800000
  CHECK(b.value(1) == 3.140625);  // 0x40490000: pi to 8 bits
  CHECK(b.value(2) == -123.5);    // 0xC2F70000
  // a 2-byte void of the wrong size is refused by the byte count
  CHECK(error_of(npy_with_header("{'descr': '|V2', 'fortran_order': False, 'shape': (2,), }", u2({1}))) ==
        "'t.npy' is not a usable .npy file: data has 2 bytes, shape needs 4");
}
