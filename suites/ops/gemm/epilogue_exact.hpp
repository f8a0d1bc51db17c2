// suites/ops/gemm/epilogue_exact.hpp — the exact Z of a fused-epilogue case, element by element, with the data of its bound:
// grade_epilogue's first step (suites/ops/gemm/epilogue.hpp states the construction and the bound) and the start of the
// epilogue diagnosis (suites/diagnose/diagnose_epilogue.hpp).
#pragma once

#include <string>
#include <vector>

#include "oracle/refvalue.hpp"
#include "suites/ops/gemm/epilogue.hpp"

namespace fpcert {

/// The exact Z = alpha' A'B' + beta C + bias of every element (one exact GEMM of augmented operands: the header) with the
/// data of its bound (EpilogueElement without act_abs and d_abs, which need act(Z)); grade_epilogue's first step, and what
/// `fpcert diagnose` evaluates an epilogue's hypotheses on (suites/diagnose/diagnose_epilogue.hpp). `codes` is not read.
struct EpilogueZ {
  std::vector<RefValue> z;          ///< exact Z, row-major m x n (106+ bits); empty when `why` is set
  std::vector<EpilogueElement> el;  ///< each element's alpha', roundings r, E, |A'B'|, |beta c|, |bias|, |Z|
  std::string why;                  ///< why Z is not formed exactly this way (a piece of alpha' a'_ik not an exact double)
  std::int64_t exact_sums = 0;      ///< elements whose accumulation the exact-sum rule makes exact (E = 0; EnvelopeModel::exact_bits)
  int exact_bits = 0;               ///< that rule's w (0: it does not apply to this kernel's declaration)
};
EpilogueZ epilogue_exact_z(const EpilogueGrade& in);

}  // namespace fpcert
