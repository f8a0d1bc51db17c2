// base/fpenv.hpp — the floating-point environment fpcert computes references, models and verdicts in:
// round to nearest even, no flush-to-zero, no denormals-are-zero, whatever a loaded plugin did to it
// (docs/suites.md, "Floating-point environment").
#pragma once

namespace fpcert {

/// The parts of the calling thread's floating-point environment fpcert depends on.
struct FpEnvState {
  bool nearest = true;  ///< rounding mode is round to nearest (even)
  bool ftz = false;     ///< results that would be subnormal are flushed to zero (x86 MXCSR.FTZ, Arm FPCR.FZ)
  bool daz = false;     ///< subnormal operands are read as zero (x86 MXCSR.DAZ)
  bool pinned() const { return nearest && !ftz && !daz; }
};
FpEnvState fp_env_state();

/// Set round to nearest and clear FTZ/DAZ on the calling thread.
void pin_fp_env();

/// Saves the calling thread's environment and restores it on destruction: around every call into a
/// plugin, so that what the plugin sets does not outlive the call.
class FpEnvRestore {
 public:
  FpEnvRestore();
  ~FpEnvRestore();
  FpEnvRestore(const FpEnvRestore&) = delete;
  FpEnvRestore& operator=(const FpEnvRestore&) = delete;

 private:
  int round_;
  unsigned control_;
};

}  // namespace fpcert
