// base/npy.cpp — a small, strict .npy reader and writer (little-endian hosts).
#include "base/npy.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <utility>

#include "base/atomic_file.hpp"
#include "base/error.hpp"
#include "base/input_file.hpp"

namespace fpcert {
namespace {

struct TypeInfo {
  NpyType type;
  const char* descr;
  int size;
};
constexpr TypeInfo kTypes[] = {{NpyType::F64, "<f8", 8}, {NpyType::F32, "<f4", 4}, {NpyType::U8, "|u1", 1},
                               {NpyType::U16, "<u2", 2}, {NpyType::U32, "<u4", 4}, {NpyType::U64, "<u8", 8},
                               {NpyType::I64, "<i8", 8}, {NpyType::F16, "<f2", 2}, {NpyType::V2, "|V2", 2},
                               {NpyType::BF16, "bfloat16", 2}};

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
    case NpyType::BF16: {  // the upper half of an fp32
      const auto w = static_cast<std::uint32_t>(bits(i)) << 16;
      float v;
      std::memcpy(&v, &w, 4);
      return v;
    }
    case NpyType::F16: {  // 1/5/10, bias 15: subnormals 2^-24 m, exponent 31 Inf or NaN
      const auto h = static_cast<std::uint32_t>(bits(i));
      const int e = static_cast<int>((h >> 10) & 0x1F);
      const double mant = static_cast<double>(h & 0x3FF), sign = (h & 0x8000) ? -1.0 : 1.0;
      if (e == 31) return mant != 0 ? std::numeric_limits<double>::quiet_NaN() : sign * std::numeric_limits<double>::infinity();
      return sign * (e == 0 ? std::ldexp(mant, -24) : std::ldexp(1024 + mant, e - 25));
    }
    default: return static_cast<double>(bits(i));
  }
}

std::uint64_t NpyArray::bits(std::int64_t i) const {
  const int sz = info(type).size;
  std::uint64_t v = 0;
  std::memcpy(&v, bytes.data() + i * sz, static_cast<std::size_t>(sz));
  return v;
}

namespace {

/// Header text as it can be printed: printable ASCII as is, anything else as \xNN; long text cut.
std::string header_text(std::string_view s, std::size_t max = 200) { return fpcert::printable(s, max, true); }

struct NpyHeader {
  NpyType type = NpyType::F64;
  std::vector<std::int64_t> shape;
  bool fortran_order = false;
  std::uint64_t data_bytes = 0;
};

/// A strict parser of the header's Python dict literal: {'descr': '<f8', 'fortran_order': False,
/// 'shape': (3, 4), } with string keys, string / True / False / tuple-of-integers values.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::function<InputError(const std::string&)>& bad) : t_(text), bad_(bad) {}

  NpyHeader parse() {
    std::optional<std::string> descr;
    std::optional<bool> fortran;
    std::optional<std::vector<std::string>> shape;
    skip();
    expect('{');
    for (;;) {
      skip();
      if (peek() == '}') break;
      const std::string key = string_literal("a key");
      skip();
      expect(':');
      skip();
      // A key given twice: the last value counts, as in a Python dict (and so in NumPy).
      if (key == "descr") descr = string_literal("the value of 'descr'");
      else if (key == "fortran_order") fortran = boolean();
      else if (key == "shape") shape = tuple();
      else throw bad_("unknown header key '" + header_text(key) + "' (a .npy header has exactly descr, fortran_order and shape)");
      skip();
      if (peek() == ',') {
        ++i_;
        continue;
      }
      skip();
      if (peek() != '}') throw bad_(where("',' or '}'"));
    }
    ++i_;
    skip();
    if (i_ != t_.size()) throw bad_("text after the header's closing '}': '" + header_text(t_.substr(i_), 40) + "'");
    if (!descr) throw bad_("no 'descr' in the header");
    if (!fortran) throw bad_("no 'fortran_order' in the header");
    if (!shape) throw bad_("no 'shape' in the header");
    NpyHeader h;
    h.fortran_order = *fortran;
    bool found = false;
    int item = 0;
    for (const auto& t : kTypes)
      if (*descr == t.descr || (t.size == 1 && (*descr == "<u1" || *descr == ">u1")) || (t.type == NpyType::V2 && *descr == "<V2")) {
        h.type = t.type;
        item = t.size;
        found = true;
      }
    if (!found) throw bad_("dtype '" + header_text(*descr) + "' is not one of <f8, <f4, |u1, <u2, <u4, <u8, <i8, <f2, |V2, bfloat16");
    std::string shape_text;
    for (const auto& d : *shape) shape_text += (shape_text.empty() ? "" : ", ") + d;
    if (shape->empty()) throw bad_("shape () is a 0-dimensional array; fpcert reads 1-D and 2-D arrays");
    if (shape->size() > 2) throw bad_("shape (" + header_text(shape_text) + ") is not 1-D or 2-D");
    std::uint64_t bytes = static_cast<std::uint64_t>(item);
    for (const auto& d : *shape) {
      std::string digits = d;
      if (!digits.empty() && (digits.back() == 'L' || digits.back() == 'l')) digits.pop_back();  // Python 2 long
      if (!digits.empty() && digits[0] == '-') throw bad_("shape (" + header_text(shape_text) + "): negative dimension " + header_text(d));
      if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos)
        throw bad_("shape (" + header_text(shape_text) + "): dimension '" + header_text(d) + "' is not a non-negative integer");
      std::uint64_t v = 0;
      for (char c : digits) {
        if (v > (std::uint64_t{INT64_MAX} - static_cast<std::uint64_t>(c - '0')) / 10)
          throw bad_("shape (" + header_text(shape_text) + "): dimension " + header_text(d) + " is too large");
        v = v * 10 + static_cast<std::uint64_t>(c - '0');
      }
      if (v != 0 && bytes > std::uint64_t{INT64_MAX} / v)
        throw bad_("shape (" + header_text(shape_text) + ") of " + to_string(h.type) + " needs more than 2^63 bytes");
      bytes *= v;
      h.shape.push_back(static_cast<std::int64_t>(v));
    }
    h.data_bytes = bytes;
    return h;
  }

 private:
  char peek() const { return i_ < t_.size() ? t_[i_] : '\0'; }
  void skip() {
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\t' || t_[i_] == '\n' || t_[i_] == '\r')) ++i_;
  }
  std::string where(const std::string& wanted) const {
    if (i_ >= t_.size()) return "the header ends where " + wanted + " was expected";
    return "expected " + wanted + " at byte " + std::to_string(i_) + " of the header, found '" + header_text(t_.substr(i_, 1)) +
           "' (header: " + header_text(t_, 120) + ")";
  }
  void expect(char c) {
    if (peek() != c) throw bad_(where(std::string("'") + c + "'"));
    ++i_;
  }
  std::string string_literal(const std::string& what) {
    const char q = peek();
    if (q != '\'' && q != '"') throw bad_(where(what + " (a quoted string)"));
    const std::size_t end = t_.find(q, i_ + 1);
    if (end == std::string_view::npos) throw bad_("unterminated string in the header: " + header_text(t_.substr(i_), 60));
    std::string s(t_.substr(i_ + 1, end - i_ - 1));
    i_ = end + 1;
    return s;
  }
  bool boolean() {
    if (t_.substr(i_, 4) == "True") {
      i_ += 4;
      return true;
    }
    if (t_.substr(i_, 5) == "False") {
      i_ += 5;
      return false;
    }
    throw bad_(where("True or False for 'fortran_order'"));
  }
  /// A tuple's elements as text ("(3, 4)", "(5,)", "()"): checked as integers by the caller.
  std::vector<std::string> tuple() {
    expect('(');
    std::vector<std::string> items;
    for (;;) {
      skip();
      if (peek() == ')') break;
      const std::size_t b = i_;
      while (i_ < t_.size() && t_[i_] != ',' && t_[i_] != ')' && t_[i_] != ' ' && t_[i_] != '\t') ++i_;
      if (i_ == b) throw bad_(where("a dimension of 'shape'"));
      items.emplace_back(t_.substr(b, i_ - b));
      if (items.size() > 32) throw bad_("shape has more than 32 dimensions");
      skip();
      if (peek() == ',') {
        ++i_;
        continue;
      }
      if (peek() != ')') throw bad_(where("',' or ')' in 'shape'"));
    }
    ++i_;
    return items;
  }

  std::string_view t_;
  std::size_t i_ = 0;
  const std::function<InputError(const std::string&)>& bad_;
};

/// The preamble: magic, version, header length. Returns (header start, header length).
std::pair<std::size_t, std::size_t> preamble(std::string_view b, const std::function<InputError(const std::string&)>& bad) {
  if (b.size() < 8 || std::memcmp(b.data(), "\x93NUMPY", 6) != 0) throw bad("missing the \\x93NUMPY magic");
  const int major = static_cast<unsigned char>(b[6]);
  if (major == 1) {
    if (b.size() < 10) throw bad("truncated header");
    return {10, static_cast<unsigned char>(b[8]) | (static_cast<std::size_t>(static_cast<unsigned char>(b[9])) << 8)};
  }
  if (major == 2 || major == 3) {
    if (b.size() < 12) throw bad("truncated header");
    std::size_t n = 0;
    for (int i = 3; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(b[8 + static_cast<std::size_t>(i)]);
    return {12, n};
  }
  throw bad("unsupported format version " + std::to_string(major) + " (fpcert reads versions 1, 2 and 3)");
}

NpyHeader header_of(std::string_view b, std::size_t start, std::size_t len, const std::function<InputError(const std::string&)>& bad) {
  if (len > kNpyMaxHeader) throw bad("the header claims " + std::to_string(len) + " bytes, more than the " + std::to_string(kNpyMaxHeader) + " fpcert reads");
  if (b.size() < start + len) throw bad("truncated header");
  const std::string_view text = b.substr(start, len);
  if (text.find('\0') != std::string_view::npos) throw bad("a NUL byte in the header: " + header_text(text, 120));
  return HeaderParser(text, bad).parse();
}

std::function<InputError(const std::string&)> bad_for(const std::string& name) {
  return [name](const std::string& why) { return InputError("'" + name + "' is not a usable .npy file: " + why); };
}

NpyArray array_of(NpyHeader&& h, std::vector<std::uint8_t>&& bytes) {
  NpyArray a;
  a.type = h.type;
  a.shape = std::move(h.shape);
  a.fortran_order = h.fortran_order;
  a.bytes = std::move(bytes);
  return a;
}

}  // namespace

NpyArray parse_npy(std::string_view b, const std::string& name) {
  const auto bad = bad_for(name);
  const auto [start, len] = preamble(b, bad);
  NpyHeader h = header_of(b, start, len, bad);
  const std::uint64_t have = b.size() - start - len;
  if (have != h.data_bytes)
    throw bad("data has " + std::to_string(have) + " bytes, shape needs " + std::to_string(h.data_bytes));
  const auto* p = reinterpret_cast<const std::uint8_t*>(b.data()) + start + len;
  return array_of(std::move(h), std::vector<std::uint8_t>(p, p + have));
}

NpyArray read_npy(const std::string& path) {
  const auto bad = bad_for(path);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError("cannot open '" + path + "': " + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw InputError("cannot read '" + path + "': " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw InputError("'" + path + "' is a directory, not a .npy file");
  // Read up to `want` bytes at `dst`; fewer only at the end of the file.
  auto read_into = [&](char* dst, std::size_t want) {
    std::size_t got = 0;
    while (got < want) {
      const ssize_t n = ::read(fd, dst + got, std::min<std::size_t>(want - got, std::size_t{1} << 26));
      if (n < 0) {
        if (errno == EINTR) continue;
        throw InputError("cannot read '" + path + "': " + std::strerror(errno));
      }
      if (n == 0) break;
      got += static_cast<std::size_t>(n);
    }
    return got;
  };
  std::string head(12, '\0');
  head.resize(read_into(head.data(), 12));
  const auto [start, len] = preamble(head, bad);
  if (len > kNpyMaxHeader) (void)header_of(head, start, len, bad);  // throws: header too long
  if (start + len > head.size()) {
    const std::size_t had = head.size();
    head.resize(start + len);
    head.resize(had + read_into(head.data() + had, start + len - had));
  }
  NpyHeader h = header_of(head, start, len, bad);
  const std::uint64_t need = h.data_bytes;
  if (S_ISREG(st.st_mode)) {
    const std::uint64_t size = static_cast<std::uint64_t>(st.st_size);
    const std::uint64_t have = size - std::min<std::uint64_t>(size, start + len);
    if (have != need) throw bad("data has " + std::to_string(have) + " bytes, shape needs " + std::to_string(need));
  }
  // The data, exactly `need` bytes; a stream is read in steps, so one that claims more than it holds
  // fails before the memory is spent.
  std::vector<std::uint8_t> data(head.begin() + static_cast<std::ptrdiff_t>(std::min(head.size(), start + len)), head.end());
  while (data.size() < need) {
    const std::size_t before = data.size();
    const std::size_t step = static_cast<std::size_t>(std::min<std::uint64_t>(need - before, S_ISREG(st.st_mode) ? need : std::uint64_t{1} << 26));
    data.resize(before + step);
    const std::size_t got = read_into(reinterpret_cast<char*>(data.data() + before), step);
    data.resize(before + got);
    if (got == 0) break;
  }
  char extra = 0;
  const bool more = read_into(&extra, 1) == 1;
  if (data.size() != need || more)
    throw bad("data has " + (more ? "more than " + std::to_string(need) : std::to_string(data.size())) + " bytes, shape needs " +
              std::to_string(need));
  return array_of(std::move(h), std::move(data));
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
