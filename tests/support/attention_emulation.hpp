// tests/support/attention_emulation.hpp — the per-thread state of the emulated warp of the CUDA attention kernels
// (kernels/attention/cuda/flash_kernel.cuh's FPCERT_MMA_EMULATION functions), shared by the forward's and the backward's
// emulation tests. The functions that read it (emulated_shfl_xor, emulated_round16, emulated_via_e4m3,
// emulated_flash_mma, emulated_any, emulated_via_f16) are defined once, in
// tests/kernels/attention/attention_cuda_emulation_test.cpp; both tests link into test_kernels.
#pragma once

#include <barrier>

#include "tests/support/mma_fragments.hpp"

namespace fpcert::test::attn_emu {

/// The warp's shuffle: every lane posts its value, then reads its partner's.
struct ShuffleExchange {
  std::barrier<> bar{32};
  float v[32];
};
inline thread_local WarpExchange* tl_flash_warp = nullptr;               ///< the calling thread's warp (emulated MMA)
inline thread_local ShuffleExchange* tl_shuffle = nullptr;                ///< the calling thread's warp (shuffles)

}  // namespace fpcert::test::attn_emu
