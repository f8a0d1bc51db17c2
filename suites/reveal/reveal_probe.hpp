// suites/reveal/reveal_probe.hpp — the probe values of order revelation and the GEMM launches that carry them
// (docs/reveal.md, "Probes"). FPRev's query (Xie et al., USENIX ATC 2025): put +M and -M at products x
// and y of a sum whose other terms are units u with M + (any sum of units) = M; the units inside the
// smallest subtree holding x and y are absorbed, the others survive, so the result counts the units
// outside it and L(x, y) = K - count. fpcert asks many such queries in one GEMM launch:
//   outer mode   row r of A carries +M_A at x_r, column c of B carries -M_B at y_c: output (r, c)
//                answers (x_r, y_c); M·N queries per launch; the ratio M/u is what one operand's
//                format can hold
//   paired mode  row r carries +M_A at x and -M_A at y, column c carries +M_B at both: output (r, c)
//                answers (x, y) when the row's pair equals the column's; min(M, N) queries per launch;
//                the ratio is the product of both operands' (fp16 inputs: 2^78 instead of 2^39)
// Units may be limited to a range of K per launch (passes): each query is then asked once per pass.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/device/device_api.hpp"
#include "kernels/kernel.hpp"

namespace fpcert {

enum class ProbeMode : std::uint8_t { Outer, Paired };
std::string_view to_string(ProbeMode m);

/// The probe values for one kernel and K, and why they are safe.
struct ProbePlan {
  ProbeMode mode = ProbeMode::Outer;
  int ea = 0, eb = 0;      ///< unit of A = 2^ea, of B = 2^eb (a unit product is 2^(ea + eb))
  int sa = 0, sb = 0;      ///< big of A = 2^(ea + sa), of B = 2^(eb + sb); outer mode: sb = sa (each operand alone)
  int ratio_bits = 0;      ///< big product / unit product = 2^ratio_bits (outer: sa; paired: sa + sb)
  std::uint64_t a_unit = 0, a_big = 0, a_neg_big = 0;  ///< codes of a_input
  std::uint64_t b_unit = 0, b_big = 0, b_neg_big = 0;  ///< codes of b_input
  std::int64_t k = 0;
  std::int64_t units_per_pass = 0;  ///< U: at most this many units in one launch
  int passes = 1;                   ///< ceil(K / U)
  bool subnormal_units = false;     ///< a unit is subnormal in its input format
  std::string text;                 ///< the values and the constraints that chose them

  /// Products [first, last) carry units in pass p.
  std::int64_t pass_first(int p) const { return p * units_per_pass; }
  std::int64_t pass_last(int p) const { return std::min(k, (p + 1) * units_per_pass); }
};

struct PlanLimits {
  int max_passes = 64;              ///< beyond this the plan is refused (the launches would multiply)
  bool allow_subnormal_units = true;
  int window_margin = 2;            ///< assumed fraction bits of a tensor-core window beyond the accumulator's precision
};

/// The probe values for kernel traits t at K, or InputError with the reason (the formats cannot hold
/// a ratio that absorbs the units, an accumulator too narrow to count K units within the pass limit).
/// Derivation (docs/reveal.md): a unit product 2^e and partial sums S <= U 2^e must be exact in every
/// accumulating format (U <= 2^p_min, e >= emin); M + S must round to M in the widest accumulator
/// under round-to-nearest and fall below a tensor core's alignment window (U <= 2^(r - p_max - 1 -
/// margin), r the ratio bits); M plus the units must stay finite (e + r + 1 <= emax).
ProbePlan plan_probes(const KernelTraits& t, std::int64_t k, const PlanLimits& lim = {});

/// One launch: the plants of every row and column, and the elements whose answers are wanted.
struct LaunchSpec {
  /// Outer: row_x[r] = position of +M in row r (-1: none), col_y[c] = position of -M in column c.
  /// Paired: row r has +M at row_x[r] and -M at row_y[r]; column c has +M at col_x[c] and col_y[c].
  std::vector<std::int32_t> row_x, row_y, col_x, col_y;
  std::vector<std::pair<std::int32_t, std::int32_t>> wanted;  ///< elements (r, c)
};

/// What a launch's element said: L(x, y), or kGarbage when the output is not an exact count of units.
inline constexpr std::int32_t kGarbage = -1;

/// A GEMM at one shape with probe matrices: buffers in the kernel's memory space (DeviceApi), the
/// background of units written once per pass, plants moved by scatter between launches.
class GemmProber {
 public:
  GemmProber(GemmKernel& kernel, DeviceApi& api, std::int64_t m, std::int64_t n, const ProbePlan& plan, double timeout_ms);
  ~GemmProber();
  GemmProber(const GemmProber&) = delete;
  GemmProber& operator=(const GemmProber&) = delete;

  std::int64_t m() const { return m_; }
  std::int64_t n() const { return n_; }
  const ProbePlan& plan() const { return plan_; }
  /// L for every wanted element of every spec (all passes; passes outermost, so the background is
  /// rewritten once per pass). Throws DeviceError / NotSupportedError from the kernel.
  std::vector<std::vector<std::int32_t>> run(const std::vector<LaunchSpec>& specs);
  /// The raw output codes of one launch of spec in pass p (determinism checks).
  std::vector<std::uint64_t> raw(const LaunchSpec& spec, int pass);
  /// The pair an element of a spec answers ((-1, -1): none).
  std::pair<int, int> pair_of(const LaunchSpec& s, int r, int c) const;

  std::int64_t launches() const { return launches_; }
  double kernel_seconds() const { return kernel_ms_ / 1000.0; }
  double seconds() const { return seconds_; }

 private:
  void set_pass(int p);
  void place(const LaunchSpec& s);
  void launch();
  std::uint64_t a_background(std::int64_t pos) const;

  GemmKernel& kernel_;
  DeviceApi& api_;
  std::int64_t m_, n_, k_;
  ProbePlan plan_;
  double timeout_ms_;
  int ab_, bb_, cb_;                       // container bytes
  void *da_ = nullptr, *db_ = nullptr, *dc_ = nullptr;
  std::vector<std::uint8_t> prefill_, out_;
  int pass_ = -1;
  std::vector<std::vector<std::int32_t>> row_plants_, col_plants_;  // positions currently planted
  std::int64_t launches_ = 0;
  double kernel_ms_ = 0, seconds_ = 0;
};

}  // namespace fpcert
