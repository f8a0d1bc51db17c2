// suites/run/host_store.hpp — data that processes of one host would each make alike, made by one and read by the
// others: the --devices workers' case data (a GEMM case's problem and exact reference; suites/ops/gemm/gemm_operation.hpp).
//
// The store is a folder (FPCERT_CASE_STORE, which a --devices parent sets for its workers: docs/scale.md). The first
// process that asks for a key makes the data and writes it there (a file written beside and renamed into place); a
// process that asks while another makes it waits for the file, or makes the data itself when the maker has died. The
// store is a cache: a file that cannot be written, read or that names another key changes nothing but the time (the
// data is made here), and what is read is what make() gives bit for bit (the key names everything that decides it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

namespace fpcert {

/// Writes a store file: raw bytes, in this host's byte order (the file never leaves the host).
class StoreWriter {
 public:
  explicit StoreWriter(std::FILE* f) : f_(f) {}
  void bytes(const void* p, std::size_t n);
  template <class T>
  void pod(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    bytes(&v, sizeof v);
  }
  void str(const std::string& s);
  template <class T, class A>
  void vec(const std::vector<T, A>& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    pod(static_cast<std::uint64_t>(v.size()));
    bytes(v.data(), v.size() * sizeof(T));
  }
  bool ok() const { return ok_; }

 private:
  std::FILE* f_;
  bool ok_ = true;
};

/// Reads what a StoreWriter wrote; a short or malformed file throws (std::runtime_error).
class StoreReader {
 public:
  StoreReader(std::FILE* f, std::uint64_t size) : f_(f), left_(size) {}
  void bytes(void* p, std::size_t n);
  template <class T>
  T pod() {
    static_assert(std::is_trivially_copyable_v<T>);
    T v;
    bytes(&v, sizeof v);
    return v;
  }
  std::string str();
  template <class T, class A = std::allocator<T>>
  std::vector<T, A> vec() {
    static_assert(std::is_trivially_copyable_v<T>);
    const auto n = pod<std::uint64_t>();
    if (n > left_ / sizeof(T)) throw_short();
    std::vector<T, A> v(static_cast<std::size_t>(n));
    bytes(v.data(), v.size() * sizeof(T));
    return v;
  }
  std::uint64_t left() const { return left_; }

 private:
  [[noreturn]] static void throw_short();
  std::FILE* f_;
  std::uint64_t left_;
};

/// The store's folder: FPCERT_CASE_STORE, or empty (no store: every process makes its own data).
std::string host_store_dir();

/// What became of one request (for the worker's account of its time, docs/scale.md).
enum class StoreFetch : std::uint8_t {
  Made,    ///< made here (and written to the store when there is one)
  Read,    ///< read from the store (another process made it; waited for it if it was being made)
};

/// The data under `key`: read from the store in `dir` with `read`, or made by `make` (written with `write` for the
/// others). With `dir` empty: make(). `how` (if given) says which.
template <class T>
T host_store_get(const std::string& dir, const std::string& key, const std::function<T()>& make,
                 const std::function<void(const T&, StoreWriter&)>& write, const std::function<T(StoreReader&)>& read,
                 StoreFetch* how = nullptr);

namespace host_store_detail {
/// The type-free protocol behind host_store_get: `read_file` reads a file whose header matched the key (true) and
/// `make_and_write` makes the data, writing it with the given writer when that is not null.
StoreFetch fetch(const std::string& dir, const std::string& key, const std::function<void(StoreReader&)>& read_file,
                 const std::function<void(StoreWriter*)>& make_and_write);
}  // namespace host_store_detail

template <class T>
T host_store_get(const std::string& dir, const std::string& key, const std::function<T()>& make,
                 const std::function<void(const T&, StoreWriter&)>& write, const std::function<T(StoreReader&)>& read, StoreFetch* how) {
  T out{};
  const StoreFetch f = host_store_detail::fetch(
      dir, key, [&](StoreReader& r) { out = read(r); },
      [&](StoreWriter* w) {
        out = make();
        if (w) write(out, *w);
      });
  if (how) *how = f;
  return out;
}

}  // namespace fpcert
