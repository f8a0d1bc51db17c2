// kernels/device/tensor_cores.cpp — the tensor-core support table behind `fpcert formats`.
#include "kernels/device/tensor_cores.hpp"

namespace fpcert {

int tensor_core_min_sm(const Format& f) {
  if (f == f16) return 75;
  if (f == bf16 || f == tf32 || f == f64) return 80;
  if (f == e4m3 || f == e5m2) return 89;
  return 0;
}

std::string tensor_core_support(const Format& f, int cc_major, int cc_minor) {
  const int sm = cc_major * 10 + cc_minor;
  // The FP6/FP4 formats and the block scales exist on the Blackwell family targets only
  // (sm_100a/sm_101a/sm_103a, sm_110a, sm_120a/sm_121a); beyond this table's knowledge say so.
  const bool blackwell = cc_major >= 10 && cc_major <= 12;
  if (f == f32) return "no (never a tensor-core input; tf32 rounds it)";
  if (f == e2m3 || f == e3m2 || f == e2m1) {
    if (blackwell) return "yes (sm_100a/sm_120a mma kind::f8f6f4)";
    if (cc_major > 12) return "unknown (newer than this table)";
    return "no (needs sm_100a or sm_120a)";
  }
  if (f == ue8m0) {
    if (blackwell) return "scales only (block-scaled mma)";
    if (cc_major > 12) return "unknown (newer than this table)";
    return "no (a scale format)";
  }
  const int need = tensor_core_min_sm(f);
  if (need == 0) return "no";
  const std::string what = f == f64 ? " dmma)" : " mma)";
  if (sm >= need) return "yes (sm_" + std::to_string(need) + "+" + what;
  return "no (needs sm_" + std::to_string(need) + "+)";
}

}  // namespace fpcert
