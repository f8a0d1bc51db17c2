// suites/ops/gemm/block_suite.cpp — the `block-scaled` suite: cases that tell a block-scaled GEMM's quantizer and
// scale handling apart from a faulty one (docs/block_formats.md).
#include "suites/ops/gemm/block_suite.hpp"

#include <fmt/format.h>

namespace fpcert {

std::vector<CaseSpec> block_scaled_cases(const SuiteContext& c) {
  const std::int64_t mn = c.mn.value_or(c.device ? 256 : 48);
  // Tiles of the kernel's block size along K (32; NVFP4 16), so every quantization block is one tile.
  int blk = 32;
  std::vector<const KernelTraits*> all = c.all;
  if (all.empty() && c.traits) all.push_back(c.traits);
  for (const KernelTraits* t : all)
    if (t->block.active()) blk = t->block.block > 0 ? t->block.block : t->block.format->block;
  auto gemm = [&](const char* fam, std::int64_t k, std::uint64_t seed, const std::string& extra) {
    return fmt::format("{}:m={},n={},k={},seed={}{}{}", fam, mn, mn, k, seed, extra.empty() ? "" : ",", extra);
  };
  return {
      {"uniform", gemm("uniform", 512, 100, ""), BoundVariant::Independent, "uniform [-1, 1): nearly every block has the same scale"},
      {"normal", gemm("normal", 1024, 101, ""), BoundVariant::Independent, "N(0, 1), K = 1024"},
      {"span_kb_shift", gemm("span", 512, 102, fmt::format("s=6,block={},shift=12,source=f32", blk)), BoundVariant::Componentwise,
       fmt::format("every K-block of {} spans 6 binades and is shifted by up to +-12, independently in A and B: the block "
                   "scales of A and B differ (swapped or misplaced scales show)",
                   blk)},
      {"exp_wide", gemm("exp_uniform", 256, 103, "emin=-24,emax=24"), BoundVariant::Componentwise,
       "exponents uniform in [-24, 24]: within a block most entries flush or keep few bits"},
      {"outliers", gemm("outlier", 512, 104, "p=0.02,e=12"), BoundVariant::Componentwise,
       "N(0, 1) with 2% of the entries times 2^12: outliers set their blocks' scales"},
  };
}

}  // namespace fpcert
