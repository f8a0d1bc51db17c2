// kernels/emu/cuda/emu_split_traits.hpp — the traits every split-product tensor-core kernel declares (the mma.sync
// ones of emu_split.cu and the wgmma ones of emu_split_wgmma.cu): the scheme's slices and operand_u, fp32
// accumulation, and the order — per instruction k-block the small terms into one accumulator in the table's order,
// the leading term into another, merged once — with the instruction whose behaviour card gives the block model.
// Host code; no CUDA header.
#pragma once

#include <string>

#include "kernels/emu/split.hpp"
#include "kernels/kernel.hpp"

namespace fpcert::emu {

/// The kernel's K-loop: the instruction's k, its card's id ("mma_bf16_f32", "wgmma_tf32_f32"), the K padding (whole
/// shared-memory stages, in elements) and the words naming the instruction in the order text.
struct SplitLoop {
  int k;
  std::string insn;
  int pad;
  std::string how;
};

KernelTraits split_kernel_traits(const SplitScheme& sc, const SplitLoop& loop);

}  // namespace fpcert::emu
