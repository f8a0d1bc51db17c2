// kernels/device/tensor_cores.hpp — which number formats a GPU of a given compute capability multiplies on
// its tensor cores (no CUDA here: `fpcert formats` reads the device's capability through DeviceApi).
#pragma once

#include <string>

#include "oracle/format.hpp"

namespace fpcert {

/// For format f as a tensor-core input on a device of compute capability cc_major.cc_minor: a short
/// answer that starts with "yes" or "no" and names the instruction or the requirement, e.g.
/// "yes (sm_80+ mma)", "no (needs sm_89+)". Thresholds (PTX ISA, mma / wgmma / tcgen05 target notes):
///   f16 sm_75 (m16n8k8; the threshold — Volta's sm_70 has only the m8n8k4 quad-pair form),
///   bf16 and tf32 sm_80, f64 sm_80 (DMMA), e4m3/e5m2 sm_89, e2m3/e3m2/e2m1 the sm_100a..sm_120a
///   family targets (kind::f8f6f4), ue8m0 only as block scales there; f32 never (tf32 rounds it).
std::string tensor_core_support(const Format& f, int cc_major, int cc_minor);

/// The minimum compute capability as major * 10 + minor for the formats with a plain threshold
/// (f64, tf32, f16, bf16, e4m3, e5m2); 0 for the others.
int tensor_core_min_sm(const Format& f);

}  // namespace fpcert
