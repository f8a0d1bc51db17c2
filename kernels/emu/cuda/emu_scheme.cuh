// kernels/emu/cuda/emu_scheme.cuh — from the split table (kernels/emu/split.hpp) to what the emulation
// kernels need: the slice kind, the kept terms and the MMA kernels' term mask. Host code only; no CUDA
// header (CPU tests include it).
#pragma once

#include <stdexcept>
#include <string>

#include "kernels/emu/emu_arith.cuh"
#include "kernels/emu/split.hpp"

namespace fpcert::emu {

/// The table's (slice format, rounding) as a SliceKind; throws for a pair the kernels do not implement.
inline SliceKind slice_kind_of(const SplitScheme& s) {
  if (*s.slice == tf32 && s.rounding == Rounding::NearestEven) return SliceKind::Tf32NearestEven;
  if (*s.slice == tf32 && s.rounding == Rounding::TowardZero) return SliceKind::Tf32TowardZero;
  if (*s.slice == bf16 && s.rounding == Rounding::NearestEven) return SliceKind::Bf16NearestEven;
  throw std::logic_error("split scheme " + s.name + ": slices " + std::string(s.slice->tag) + " rounded " +
                         std::string(to_string(s.rounding)) + " have no emulation kernel");
}

/// The table's kept terms, in its order.
inline TermList terms_of(const SplitScheme& s) {
  if (s.terms.empty() || s.terms.size() > 9 || s.slices < 1 || s.slices > 3)
    throw std::logic_error("split scheme " + s.name + ": 1..9 terms of 1..3 slices expected");
  TermList t;
  t.count = static_cast<int>(s.terms.size());
  for (std::size_t q = 0; q < s.terms.size(); ++q) {
    t.i[q] = static_cast<std::int8_t>(s.terms[q].first);
    t.j[q] = static_cast<std::int8_t>(s.terms[q].second);
  }
  return t;
}

/// The MMA kernels' term mask (bit 3i + j for term (i, j)). The kernels issue the kept terms in the
/// canonical order — i + j descending, then i descending, (0, 0) last — so the table's order must be
/// that order (it is for every scheme; a table edit that breaks it is refused here, not silently
/// computed in another order).
inline unsigned term_mask_of(const SplitScheme& s) {
  unsigned mask = 0;
  for (const auto& [i, j] : s.terms) {
    if (i < 0 || j < 0 || i >= s.slices || j >= s.slices) throw std::logic_error("split scheme " + s.name + ": term out of range");
    mask |= term_bit(i, j);
  }
  std::vector<std::pair<int, int>> canonical;
  for (int d = 2 * (s.slices - 1); d >= 0; --d)
    for (int i = s.slices - 1; i >= 0; --i) {
      const int j = d - i;
      if (j >= 0 && j < s.slices && (mask & term_bit(i, j))) canonical.emplace_back(i, j);
    }
  if (canonical != s.terms || !(mask & 1u))
    throw std::logic_error("split scheme " + s.name +
                           ": terms are not in the MMA kernels' order (i + j descending, then i descending, (0,0) kept)");
  return mask;
}

}  // namespace fpcert::emu
