// base/fpenv.cpp — reading, pinning and restoring the floating-point environment (rounding mode,
// flush-to-zero, denormals-are-zero) of the calling thread.
#include "base/fpenv.hpp"

#include <cfenv>
#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace fpcert {
namespace {

#if defined(__x86_64__) || defined(__i386__)
constexpr unsigned kFtz = 0x8000u, kDaz = 0x0040u;  // MXCSR bits 15 and 6
unsigned control_word() { return _mm_getcsr(); }
void set_control_word(unsigned v) { _mm_setcsr(v); }
#elif defined(__aarch64__)
constexpr unsigned kFtz = 1u << 24, kDaz = 0;  // FPCR.FZ (flushes inputs and results alike)
unsigned control_word() {
  std::uint64_t v;
  __asm__ __volatile__("mrs %0, fpcr" : "=r"(v));
  return static_cast<unsigned>(v);
}
void set_control_word(unsigned v) {
  const std::uint64_t w = v;
  __asm__ __volatile__("msr fpcr, %0" : : "r"(w));
}
#else
constexpr unsigned kFtz = 0, kDaz = 0;
unsigned control_word() { return 0; }
void set_control_word(unsigned) {}
#endif

}  // namespace

FpEnvState fp_env_state() {
  const unsigned c = control_word();
  return {std::fegetround() == FE_TONEAREST, kFtz != 0 && (c & kFtz) != 0, kDaz != 0 && (c & kDaz) != 0};
}

void pin_fp_env() {
  std::fesetround(FE_TONEAREST);
  set_control_word(control_word() & ~(kFtz | kDaz));
}

FpEnvRestore::FpEnvRestore() : round_(std::fegetround()), control_(control_word()) {}
FpEnvRestore::~FpEnvRestore() {
  std::fesetround(round_);
  set_control_word(control_);
}

}  // namespace fpcert
