// tests/support/attention_emulation.hpp — the per-thread state of the emulated warp of the CUDA attention kernels
// (kernels/attention/cuda/flash_kernel.cuh's FPCERT_MMA_EMULATION functions), shared by the forward's and the backward's
// emulation tests. The functions that read it (emulated_shfl_xor, emulated_round16, emulated_via_e4m3,
// emulated_flash_mma, emulated_any, emulated_via_f16) are defined once, in
// tests/kernels/attention/attention_cuda_emulation_test.cpp; both tests link into test_kernels.
#pragma once

#include <barrier>
#include <memory>
#include <thread>
#include <vector>

#include "tests/support/cuda_host_surface.hpp"
#include "tests/support/mma_fragments.hpp"

namespace fpcert::test::attn_emu {

/// The warp's shuffle: every lane posts its value, then reads its partner's.
struct ShuffleExchange {
  std::barrier<> bar{32};
  float v[32];
};
inline thread_local WarpExchange* tl_flash_warp = nullptr;               ///< the calling thread's warp (emulated MMA)
inline thread_local ShuffleExchange* tl_shuffle = nullptr;                ///< the calling thread's warp (shuffles)

/// `threads` host threads of one CTA (blockIdx bx, by, bz) running f, with their warps' exchanges.
template <class F>
inline void run_cta(int threads, unsigned bx, unsigned by, unsigned bz, F f) {
  std::barrier<> block_barrier(threads);
  std::vector<std::unique_ptr<WarpExchange>> warps(static_cast<std::size_t>((threads + 31) / 32));
  std::vector<std::unique_ptr<ShuffleExchange>> shuffles(warps.size());
  for (auto& w : warps) w = std::make_unique<WarpExchange>();
  for (auto& s : shuffles) s = std::make_unique<ShuffleExchange>();
  std::vector<std::thread> ts;
  for (int i = 0; i < threads; ++i)
    ts.emplace_back([&, i] {
      mma_emulated::threadIdx.x = static_cast<unsigned>(i);
      mma_emulated::blockIdx.x = bx, mma_emulated::blockIdx.y = by, mma_emulated::blockIdx.z = bz;
      mma_emulated::blockDim.x = static_cast<unsigned>(threads), mma_emulated::gridDim.x = 1;
      mma_emulated::tl_block_barrier = &block_barrier;
      tl_flash_warp = warps[static_cast<std::size_t>(i / 32)].get();
      tl_shuffle = shuffles[static_cast<std::size_t>(i / 32)].get();
      f();
    });
  for (auto& t : ts) t.join();
}

}  // namespace fpcert::test::attn_emu
