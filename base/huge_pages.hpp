// base/huge_pages.hpp — large buffers on transparent huge pages, pooled for reuse (the fast exact GEMM
// reference's slice buffers, oracle/gemm_fast.cpp).
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#include "base/parallel.hpp"

namespace fpcert {

/// Large blocks on transparent huge pages, kept for reuse by later calls (up to kPoolBytes): on
/// the VMs fpcert runs on, a first touch of a 4 KiB page costs ~20 us and a fresh huge page must
/// be zeroed, so the slice buffers (tens of MiB) would otherwise cost as much as the GEMMs.
class BlockPool {
 public:
  static constexpr std::size_t kHuge = std::size_t{2} << 20;
  static constexpr std::size_t kPoolBytes = std::size_t{512} << 20;
  static BlockPool& get() {
    static BlockPool pool;
    return pool;
  }
  /// A block of at least `bytes` (rounded up to 2 MiB): returns the pointer and its size.
  std::pair<void*, std::size_t> acquire(std::size_t bytes) {
    bytes = (bytes + kHuge - 1) / kHuge * kHuge;
    {
      std::lock_guard<std::mutex> lock(mu_);
      std::size_t best = free_.size();
      for (std::size_t i = 0; i < free_.size(); ++i)
        if (free_[i].second >= bytes && (best == free_.size() || free_[i].second < free_[best].second)) best = i;
      if (best != free_.size()) {
        auto blk = free_[best];
        free_.erase(free_.begin() + static_cast<std::ptrdiff_t>(best));
        held_ -= blk.second;
        return blk;
      }
    }
    void* p = std::aligned_alloc(kHuge, bytes);
    if (!p) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
    ::madvise(p, bytes, MADV_HUGEPAGE);  // advice only: failure changes nothing but speed
#endif
    return {p, bytes};
  }
  void release(void* p, std::size_t bytes) {
    if (!p) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (held_ + bytes <= kPoolBytes) {
        free_.emplace_back(p, bytes);
        held_ += bytes;
        return;
      }
    }
    std::free(p);
  }
  ~BlockPool() {
    for (auto& b : free_) std::free(b.first);
  }

 private:
  std::mutex mu_;
  std::vector<std::pair<void*, std::size_t>> free_;
  std::size_t held_ = 0;
};

/// An uninitialised buffer from the BlockPool.
template <class T>
class HugeBuffer {
 public:
  HugeBuffer() = default;
  HugeBuffer(const HugeBuffer&) = delete;
  HugeBuffer& operator=(const HugeBuffer&) = delete;
  HugeBuffer(HugeBuffer&& o) noexcept : p_(o.p_), n_(o.n_), bytes_(o.bytes_) { o.p_ = nullptr; o.n_ = o.bytes_ = 0; }
  ~HugeBuffer() { BlockPool::get().release(p_, bytes_); }
  void resize(std::size_t n) {
    if (n * sizeof(T) > bytes_) {
      BlockPool::get().release(p_, bytes_);
      p_ = nullptr;
      bytes_ = 0;
      const auto blk = BlockPool::get().acquire(n * sizeof(T));
      p_ = static_cast<T*>(blk.first);
      bytes_ = blk.second;
    }
    n_ = n;
  }
  T* data() { return p_; }
  const T* data() const { return p_; }
  std::size_t size() const { return n_; }
  T& operator[](std::size_t i) { return p_[i]; }
  const T& operator[](std::size_t i) const { return p_[i]; }

 private:
  T* p_ = nullptr;
  std::size_t n_ = 0, bytes_ = 0;
};

/// v emptied and given fresh storage for n elements, the whole 2 MiB pages inside it advised onto huge pages before
/// their first touch (advice only: failure changes nothing but speed).
template <class T, class A>
void reserve_huge(std::vector<T, A>& v, std::size_t n) {
  v.clear();
  v.shrink_to_fit();
  v.reserve(n);
#ifdef MADV_HUGEPAGE
  constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
  const auto begin = (reinterpret_cast<std::uintptr_t>(v.data()) + kHuge - 1) & ~(kHuge - 1);
  const auto end = (reinterpret_cast<std::uintptr_t>(v.data() + n)) & ~(kHuge - 1);
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#endif
}

/// v = n copies of x, the storage advised onto huge pages before its first touch (see HugeBuffer).
template <class T, class A>
void assign_huge(std::vector<T, A>& v, std::size_t n, const T& x) {
  reserve_huge(v, n);
  v.assign(n, x);
}

namespace detail {
inline thread_local bool leave_unset = false;  // set by resize_unset only, around its resize
}

/// std::allocator, except that an element value-initialised by resize(n) or vector(n) inside resize_unset is left as
/// the allocation gave it. Every other construction is std::allocator's, so a vector with this allocator behaves as
/// std::vector everywhere else. For results whose every element is then written by threads or a device: the GPU
/// reference's host arrays (oracle/gemm_ref.hpp's RefArray, 2.2 GB at 8192^2), which a value-initialising resize
/// wrote once more on one thread, after the kernel had zeroed each page.
template <class T>
struct ResultAllocator : std::allocator<T> {
  using value_type = T;
  template <class U>
  struct rebind {
    using other = ResultAllocator<U>;
  };
  ResultAllocator() = default;
  template <class U>
  ResultAllocator(const ResultAllocator<U>&) noexcept {}
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    if constexpr (sizeof...(Args) == 0) {
      static_assert(std::is_trivially_copyable_v<U> && std::is_trivially_destructible_v<U>,
                    "elements left unset must be of an implicit-lifetime kind");
      if (detail::leave_unset) return;
    }
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  friend bool operator==(const ResultAllocator&, const ResultAllocator&) noexcept { return true; }
};

/// v = n elements whose values are unset: the caller writes each before anyone reads it. The storage is advised onto
/// huge pages and its pages are first touched by `threads` workers (0: thread_count()): the kernel zeroes a fresh page
/// at its first touch, so one thread touching 2.2 GB takes ~0.2 s where 16 take a tenth of that.
template <class T>
void resize_unset(std::vector<T, ResultAllocator<T>>& v, std::size_t n, unsigned threads = 0) {
  reserve_huge(v, n);
  detail::leave_unset = true;
  try {
    v.resize(n);
  } catch (...) {
    detail::leave_unset = false;
    throw;
  }
  detail::leave_unset = false;
  // One byte per 4 KiB page, written (a read would map the shared zero page and fault again at the write).
  auto* bytes = reinterpret_cast<volatile unsigned char*>(v.data());
  const std::uint64_t pages = (n * sizeof(T) + 4095) / 4096;
  parallel_for(
      pages, 512,
      [&](std::uint64_t p0, std::uint64_t p1, unsigned) {
        for (std::uint64_t p = p0; p < p1; ++p) bytes[p * 4096] = 0;
      },
      threads);
}

}  // namespace fpcert
