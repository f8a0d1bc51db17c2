// base/npy.cpp — a small, strict .npy reader and writer (little-endian hosts).
#include "base/npy.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <regex>

#include "base/atomic_file.hpp"
#include "base/error.hpp"

namespace fpcert {
namespace {

struct TypeInfo {
  NpyType type;
  const char* descr;
  int size;
};
constexpr TypeInfo kTypes[] = {{NpyType::F64, "<f8", 8}, {NpyType::F32, "<f4", 4}, {NpyType::U8, "|u1", 1},
                               {NpyType::U16, "<u2", 2}, {NpyType::U32, "<u4", 4}, {NpyType::U64, "<u8", 8},
                               {NpyType::I64, "<i8", 8}};

const TypeInfo& info(NpyType t) {
  for (const auto& i : kTypes)
    if (i.type == t) return i;
  return kTypes[0];
}

}  // namespace

std::string to_string(NpyType t) { return info(t).descr; }

std::int64_t NpyArray::size() const {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return shape.empty() ? 0 : n;
}

double NpyArray::value(std::int64_t i) const {
  const auto* p = bytes.data() + i * info(type).size;
  switch (type) {
    case NpyType::F64: { double v; std::memcpy(&v, p, 8); return v; }
    case NpyType::F32: { float v; std::memcpy(&v, p, 4); return v; }
    case NpyType::I64: { std::int64_t v; std::memcpy(&v, p, 8); return static_cast<double>(v); }
    default: return static_cast<double>(bits(i));
  }
}

std::uint64_t NpyArray::bits(std::int64_t i) const {
  const int sz = info(type).size;
  std::uint64_t v = 0;
  std::memcpy(&v, bytes.data() + i * sz, static_cast<std::size_t>(sz));
  return v;
}

NpyArray read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("cannot open '" + path + "': " + std::strerror(errno));
  std::vector<std::uint8_t> all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto bad = [&](const std::string& why) { return InputError("'" + path + "' is not a usable .npy file: " + why); };
  if (all.size() < 10 || std::memcmp(all.data(), "\x93NUMPY", 6) != 0) throw bad("missing the \\x93NUMPY magic");
  const int major = all[6];
  std::size_t hlen, hstart;
  if (major == 1) {
    hlen = all[8] | (static_cast<std::size_t>(all[9]) << 8);
    hstart = 10;
  } else if (major == 2 || major == 3) {
    if (all.size() < 12) throw bad("truncated header");
    hlen = all[8] | (static_cast<std::size_t>(all[9]) << 8) | (static_cast<std::size_t>(all[10]) << 16) |
           (static_cast<std::size_t>(all[11]) << 24);
    hstart = 12;
  } else {
    throw bad("unsupported format version " + std::to_string(major));
  }
  if (hstart + hlen > all.size()) throw bad("truncated header");
  const std::string header(reinterpret_cast<const char*>(all.data() + hstart), hlen);
  std::smatch m;
  if (!std::regex_search(header, m, std::regex(R"('descr'\s*:\s*'([^']*)')"))) throw bad("no 'descr' in header");
  const std::string descr = m[1];
  NpyArray a;
  bool found = false;
  for (const auto& t : kTypes)
    if (descr == t.descr || (t.size == 1 && (descr == "<u1" || descr == ">u1"))) {
      a.type = t.type;
      found = true;
    }
  if (!found) throw bad("dtype '" + descr + "' is not one of <f8, <f4, |u1, <u2, <u4, <u8, <i8");
  if (!std::regex_search(header, m, std::regex(R"('fortran_order'\s*:\s*(True|False))"))) throw bad("no 'fortran_order'");
  a.fortran_order = m[1] == "True";
  if (!std::regex_search(header, m, std::regex(R"('shape'\s*:\s*\(([^)]*)\))"))) throw bad("no 'shape'");
  const std::string shape = m[1];
  std::regex num(R"(\d+)");
  for (auto it = std::sregex_iterator(shape.begin(), shape.end(), num); it != std::sregex_iterator(); ++it)
    a.shape.push_back(std::stoll(it->str()));
  if (a.shape.empty() || a.shape.size() > 2) throw bad("shape (" + shape + ") is not 1-D or 2-D");
  const auto need = static_cast<std::size_t>(a.size()) * static_cast<std::size_t>(info(a.type).size);
  const std::size_t data_start = hstart + hlen;
  if (all.size() - data_start != need)
    throw bad("data has " + std::to_string(all.size() - data_start) + " bytes, shape needs " + std::to_string(need));
  a.bytes.assign(all.begin() + static_cast<std::ptrdiff_t>(data_start), all.end());
  return a;
}

void write_npy(const std::string& path, NpyType type, std::int64_t rows, std::int64_t cols, const void* data) {
  const TypeInfo& ti = info(type);
  std::string shape = cols < 0 ? "(" + std::to_string(rows) + ",)" : "(" + std::to_string(rows) + ", " + std::to_string(cols) + ")";
  std::string header = "{'descr': '" + std::string(ti.descr) + "', 'fortran_order': False, 'shape': " + shape + ", }";
  const std::size_t total = 10 + header.size() + 1;
  header += std::string((64 - total % 64) % 64, ' ') + "\n";
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xFF);
  out += static_cast<char>((header.size() >> 8) & 0xFF);
  out += header;
  const std::int64_t n = rows * (cols < 0 ? 1 : cols);
  out.append(static_cast<const char*>(data), static_cast<std::size_t>(n) * static_cast<std::size_t>(ti.size));
  write_file_atomic(path, out);
}

void write_npy_f64(const std::string& path, std::int64_t rows, std::int64_t cols, const std::vector<double>& v) {
  write_npy(path, NpyType::F64, rows, cols, v.data());
}

void write_npy_f32(const std::string& path, std::int64_t rows, std::int64_t cols, const std::vector<double>& v) {
  std::vector<float> f(v.begin(), v.end());
  write_npy(path, NpyType::F32, rows, cols, f.data());
}

}  // namespace fpcert
