// generators/softmax.hpp — how a softmax problem sits in a Problem (family `softmax`, generators/softmax.cpp;
// docs/generators.md, "Softmax"; docs/softmax.md): A holds the rows x cols logits (exact in the source format), B the
// additive mask transposed (cols x rows, entries +0 or -Inf), so the Problem keeps a GEMM's shapes; the scale
// (temperature) is an fp32 value recorded in achieved["softmax_scale"], the mask's presence in achieved["softmax_masked"].
#pragma once

#include <cstdint>

#include "generators/problem.hpp"

namespace fpcert {

/// True for a problem of the `softmax` family.
bool is_softmax_problem(const Problem& p);
/// Its rows and columns (std::invalid_argument for any other problem).
std::int64_t softmax_rows(const Problem& p);
std::int64_t softmax_cols(const Problem& p);
/// Whether a mask comes with the logits (none: every mask entry +0, and the kernel gets no mask operand).
bool softmax_masked(const Problem& p);
/// The scale s (an fp32 value): the kernel computes softmax(s x + mask).
double softmax_scale(const Problem& p);
/// Logit (r, j) and mask entry (r, j).
inline double softmax_logit(const Problem& p, std::int64_t r, std::int64_t j) { return p.a(r, j); }
inline double softmax_mask(const Problem& p, std::int64_t r, std::int64_t j) { return p.b(j, r); }

}  // namespace fpcert
