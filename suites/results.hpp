// suites/results.hpp — the results model: what a run produced, case by case, with the environment
// stamp. reports/ turns it into JSON, JUnit XML, terminal tables and HTML; JSON round-trips.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fpcert {

/// Where a result came from (DESIGN.md, runner rules: every result carries it).
struct Environment {
  std::string fpcert_version;
  std::string command;
  std::string timestamp;      ///< UTC, ISO 8601
  std::string host;
  std::string cpu;
  std::string compiler;
  std::string build_flags;
  std::string device;         ///< "host CPU" or the GPU's name
  std::string compute_capability;
  int sm_count = 0;
  int clock_mhz = 0, mem_clock_mhz = 0;
  std::string driver, cuda_runtime, cublas;
  std::string cuda_archs;
};

/// One term of an error bound, printed so a reader can recompute it.
struct BoundTerm {
  std::string name;     ///< "storage A (f16)", "accumulation (f32, rn)", ...
  double value = 0;     ///< contribution to rtol
  std::string formula;  ///< "4 * sqrt(256) * 2^-11 = 0.03125"
};

struct Bound {
  std::string variant;         ///< independent | componentwise | worstcase
  double rtol = 0;
  double atol = 0;             ///< independent: rtol * max|ref|; componentwise/worstcase: 0 (scale is |A||B|)
  double out_term = 0;         ///< u_out, applied to |ref| (componentwise, worstcase)
  bool vacuous = false;        ///< the worst-case bound does not exist (K * u >= 1)
  // Underflow (absolute) terms, rigorous in every variant: an input that lands in its storage
  // format's subnormal range is off by up to eta/2, eta the smallest subnormal, whatever its size.
  double eta_a = 0;            ///< eta/2 of A's storage: times sum_k |b_kj|
  double eta_b = 0;            ///< eta/2 of B's storage: times sum_k |a_ik|
  double eta_abs = 0;          ///< K eta_acc / 2 + eta_out / 2 (+ K eta_p / 2 for rounded products)
  std::vector<BoundTerm> terms;
  std::string allowed;         ///< the per-element inequality in words
  std::string arithmetic;      ///< the whole computation as text
};

/// Error metrics of one case (DESIGN.md, "Metrics").
struct Metrics {
  double max_abs = 0;            ///< max |c - c_ref|
  double frobenius_rel = 0;      ///< ||C - Cref||_F / ||Cref||_F
  double max_rel = 0;            ///< ||C - Cref||_max / ||Cref||_max
  double rowsum_rel = 0;         ///< ||C - Cref||_inf / ||Cref||_inf, the max-row-sum (induced) norm
  double componentwise = 0;      ///< max |c - c_ref| / (|A||B|)_ij
  double ulp_max = 0, ulp_median = 0, ulp_p99 = 0;
  std::vector<std::uint64_t> ulp_hist;  ///< buckets: [0, 0.5], (0.5, 1], (1, 2], ..., (2^14, inf), non-finite
  std::int64_t nonfinite = 0;    ///< outputs that are Inf/NaN where the reference is finite
  std::int64_t ref_overflow = 0; ///< references that are Inf/NaN in the output format (exact value beyond its range, or a NaN/Inf input): not in the norms
  std::int64_t first_nonfinite = -1;
  std::int64_t unwritten = 0;    ///< outputs still holding the NaN pre-fill pattern
  std::int64_t first_unwritten = -1;
  std::int64_t guard_violations = 0;  ///< bytes changed outside C (or in the ldc padding)
  std::string first_guard_violation;
  bool deterministic = true;     ///< all runs bitwise identical
  std::int64_t nondeterministic_elements = 0;
  double ref_max_abs = 0;        ///< max |c_ref|
};

/// An element worth showing: the worst ones by gate fraction.
struct WorstElement {
  std::int64_t i = 0, j = 0;
  std::string got_bits;
  double got = 0;
  double ref_hi = 0, ref_lo = 0;
  std::string ref_bits;          ///< the reference rounded to the output format
  double err = 0, allowed = 0, ulps = 0;
  double abs_sum = 0;
};

enum class CaseStatus { Pass, Fail, NotSupported, Crashed, Hung, Error };
std::string_view to_string(CaseStatus s);
std::optional<CaseStatus> parse_case_status(std::string_view s);

struct CaseResult {
  std::string suite;
  std::string case_id;
  std::string kernel;
  std::string kernel_traits;     ///< describe_traits()
  std::string backend;
  std::string spec;              ///< generator spec string (reproduces the inputs)
  std::int64_t m = 0, n = 0, k = 0;
  std::string source_format, out_format;
  CaseStatus status = CaseStatus::Pass;
  std::string reason;            ///< why it failed / was not supported / crashed
  std::vector<std::string> flags;   ///< e.g. "inputs-exact-in-storage: ..."
  Metrics metrics;
  Bound bound;
  double gate_fraction = 0;      ///< max_ij err / allowed (pass iff <= 1 and nothing else failed)
  std::int64_t worst_index = -1;
  std::vector<WorstElement> worst;
  double time_ms_median = 0, time_ms_mean = 0;
  int timed_runs = 0;
  double tflops = 0;
  std::map<std::string, double> achieved;  ///< the problem's measured properties (kappa, spans, ...)
  // --baseline B
  std::string baseline;
  std::optional<double> baseline_max_abs;
  std::optional<double> baseline_ratio;    ///< this kernel's max abs error / the baseline's
  std::optional<double> speed_ratio;       ///< baseline time / this time
  std::string repro;             ///< the command that reruns exactly this case
  double wall_seconds = 0;       ///< reference + runs + grading
};

struct RunResult {
  std::string kind = "gemm";     ///< gemm | conversion | experiment
  Environment env;
  std::string suite;
  std::vector<std::string> kernels;
  std::vector<CaseResult> cases;
  std::map<std::string, std::string> notes;
  bool passed() const;
  int count(CaseStatus s) const;
};

/// Exit code for a run (DESIGN.md): 0 all gates pass, 1 a gate failed, 3 a kernel crashed or hung.
int exit_code(const RunResult& r);

}  // namespace fpcert
