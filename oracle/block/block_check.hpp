// oracle/block/block_check.hpp — the block quantizer model (oracle/block/block_format.hpp) checked against MPFR
// (oracle/block/block_mpfr.hpp) over structured exhaustive sweeps; what `fpcert quantize --to F --check` runs.
//
// Three parts per format (docs/block_formats.md, "Checking the model"):
//   codes       every element code under every scale code (NVFP4: every scale code under three tensor
//               scales): the exact dequantized value against MPFR, and the code's value, the midpoints
//               between neighbouring values, the first values past the largest element and below the
//               smallest, each nudged one double ulp either way, both signs, quantized under every
//               rounding mode, element code and flags against MPFR;
//   fp32-sweep  every fp32 value of the binade range an element can reach (two binades below the
//               smallest subnormal up to a controlled block maximum at the top of the largest binade),
//               both signs, placed in every block position around that maximum (which visits every
//               position too), quantized as whole blocks with nearest-even; against a ladder of the
//               scaled element values and midpoints computed in MPFR and walked in order (a different
//               algorithm from the model's bit arithmetic). Every `other_stride`-th value also under
//               rna, rz, ru, rd (the ladder) and stochastic rounding (MPFR);
//   boundaries  for every scale rule, the block maxima where the rule's scale changes (powers of two,
//               2^e (2 - 2^-p), max_elem 2^e; NVFP4: every e4m3 value and midpoint times 6 s_t), each with
//               its fp32 and double neighbours, across the whole scale range and past both clamps, in
//               blocks with other values derived from the maximum; plus zero, NaN, Inf, subnormal-only
//               and one-element blocks: scale code, every element code and flag and every dequantized
//               value against MPFR; NVFP4 also the tensor scale.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "oracle/block/block_format.hpp"

namespace fpcert {

struct BlockCheckOptions {
  std::uint64_t stride = 1;         ///< fp32-sweep: every stride-th fp32 pattern (1: every one)
  std::uint64_t other_stride = 61;  ///< fp32-sweep: every n-th pattern also under the other roundings
  std::uint32_t scale_stride = 1;   ///< codes: every n-th scale code (and always the two lowest and highest)
  unsigned threads = 0;             ///< 0: thread_count()
  std::size_t max_listed = 10;      ///< mismatches described per part
};

struct BlockCheckPart {
  std::string name;                ///< codes, fp32-sweep, boundaries
  std::uint64_t checked = 0;       ///< comparisons made (element codes, scale codes, values)
  std::uint64_t mismatches = 0;
  double seconds = 0;
  std::vector<std::string> listed;  ///< the first mismatches, with their inputs in hex
};

struct BlockCheckResult {
  const BlockFormat* format = nullptr;
  std::vector<BlockCheckPart> parts;
  std::uint64_t checked() const;
  std::uint64_t mismatches() const;
  double seconds() const;
  bool passed() const { return mismatches() == 0; }
};

BlockCheckResult check_block_format(const BlockFormat& f, const BlockCheckOptions& o = {});

}  // namespace fpcert
