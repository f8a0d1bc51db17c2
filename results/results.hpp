// results/results.hpp — the results model: what a run produced, case by case, with the environment
// stamp, for GEMM and conversion kernels alike. suites/ produces it, reports/ renders it (JSON, JUnit
// XML, terminal tables, HTML); results_json.hpp reads and writes it (JSON round-trips). Enums are
// stored as enums; their JSON is their name.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
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

/// The gate variants of the bound model (suites/verdict/bound.hpp).
enum class BoundVariant : std::uint8_t { Independent, Componentwise, WorstCase };
std::string_view to_string(BoundVariant v);
std::optional<BoundVariant> parse_bound_variant(std::string_view s);

/// One term of an error bound, printed so a reader can recompute it.
struct BoundTerm {
  std::string name;     ///< "storage A (f16)", "accumulation (f32, rn)", ...
  double value = 0;     ///< contribution to rtol
  std::string formula;  ///< "4 * sqrt(256) * 2^-11 = 0.03125"
};

struct Bound {
  std::optional<BoundVariant> variant;  ///< none for cases that were not graded
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

/// ULP statistics leave out the elements whose exact value is dominated by cancellation:
/// (|A||B|)_ij / |ref_ij| above this (more than 10 bits of the sum cancelled, or ref_ij = 0 with
/// (|A||B|)_ij > 0). Their ULP distance measures the cancellation, not the kernel
/// (docs/report.md, "Errors in units that mean something").
inline constexpr double kCancellationRatio = 1024;
/// Whether an element with exact value ref and (|A||B|)_ij = abs_sum is cancellation-dominated.
bool cancellation_dominated(double ref, double abs_sum);

/// Buckets of the error fraction err / allowed (allowed: the envelope's per-element bound):
/// 0: exactly 0, 1: (0, 2^-10], 2..11: (2^-11+b, 2^-10+b] up to (1/2, 1], 12: (1, 2], 13: (2, 4],
/// 14: (4, 16], 15: above 16, 16: non-finite output where the reference is finite.
inline constexpr int kErrFracBuckets = 17;
int err_frac_bucket(double frac);
/// The buckets' labels: "0", "<=2^-10" (with \u2264 and superscript digits), ..., "<=1", "<=2", "<=4", "<=16", ">16", "Inf/NaN".
const std::vector<std::string>& err_frac_bucket_labels();

/// err / allowed over the M x N output, downsampled keeping the maximum: cell (r, c) holds the largest
/// fraction over elements [r*cell_rows, (r+1)*cell_rows) x [c*cell_cols, (c+1)*cell_cols) (inf: a
/// non-finite output where the reference is finite; NaN: no element of the cell graded). At most
/// kErrorMapCells cells a side, so a results file stays small whatever the shape.
struct ErrorMap {
  std::int64_t rows = 0, cols = 0;            ///< cells
  std::int64_t cell_rows = 1, cell_cols = 1;  ///< elements of C per cell (the last row/column of cells may hold fewer)
  std::vector<double> max_frac;               ///< rows * cols, row-major
  /// fp64 outputs: the fewest correct bits (suites/verdict/correct_bits.hpp) of each cell's elements, on the same grid
  /// (NaN: no element); empty for other outputs. Certifying an emulation: where in C the bits were lost (docs/fp64.md).
  std::vector<double> min_correct_bits;
};
inline constexpr std::int64_t kErrorMapCells = 64;

/// Error metrics of one case (DESIGN.md, "Metrics").
struct Metrics {
  double max_abs = 0;            ///< max |c - c_ref|
  double frobenius_rel = 0;      ///< ||C - Cref||_F / ||Cref||_F
  double max_rel = 0;            ///< ||C - Cref||_max / ||Cref||_max
  double rowsum_rel = 0;         ///< ||C - Cref||_inf / ||Cref||_inf, the max-row-sum (induced) norm
  double componentwise = 0;      ///< max |c - c_ref| / (|A||B|)_ij
  /// The error fraction: per element |c - ref'| / allowed, allowed the envelope's per-element bound (the
  /// headline metric; the case's envelope check passes iff err_frac_max <= 1). Graded elements only.
  double err_frac_max = 0, err_frac_median = 0, err_frac_p99 = 0;
  std::vector<std::uint64_t> err_frac_hist;  ///< kErrFracBuckets buckets (err_frac_bucket)
  /// ULP distance to the correctly rounded reference in the output format, over the elements that are
  /// not cancellation-dominated (kCancellationRatio); those are counted in ulp_cancelled only.
  double ulp_max = 0, ulp_median = 0, ulp_p99 = 0;
  std::vector<std::uint64_t> ulp_hist;  ///< buckets: [0, 0.5], (0.5, 1], (1, 2], ..., (2^14, inf), non-finite
  std::int64_t ulp_cancelled = 0;       ///< finite outputs left out of the ULP statistics (cancellation-dominated)
  /// What the declared arithmetic predicts (the bitwise tier's emulation, graded like the kernel): the
  /// same histograms; empty when the case had no emulation.
  std::vector<std::uint64_t> predicted_ulp_hist, predicted_err_frac_hist;
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
  /// Correct bits per element against the correctly rounded result (suites/verdict/correct_bits.hpp; docs/fp64.md):
  /// measured for outputs wider than fp32 only (fp64), so every other result stays as it was; -1 / empty: not measured.
  int correct_bits_min = -1;
  double correct_bits_median = -1;
  std::vector<std::uint64_t> correct_bits_hist;  ///< [b]: elements with exactly b correct bits, b = 0..p
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

/// The run-to-run spread of a kernel that declares run-to-run nondeterminism (docs/bound_model.md,
/// "Nondeterministic kernels"): every later run compared with the checked one, element by element, against
/// the largest difference the declared arithmetic allows between two of its admissible orders.
struct RunSpread {
  int runs = 0;                      ///< runs compared (the checked one included)
  int differing_runs = 0;            ///< later runs that differ from the checked one somewhere
  std::int64_t elements = 0;         ///< elements that differ between some run and the checked one
  std::int64_t max_elements = 0;     ///< the most elements one run differs in
  double max_ulps = 0;               ///< largest |c_run - c_checked| in ulps of the output format (not cancellation-dominated elements)
  double max_frac = 0;               ///< largest |c_run - c_checked| / allowed_ij (<= 1: within what the arithmetic allows)
  std::int64_t worst_index = -1;     ///< element of max_frac (row-major), -1: none differs
  double worst_diff = 0;             ///< |c_run - c_checked| there
  double worst_allowed = 0;          ///< allowed_ij there
  double worst_allowed_ulps = 0;     ///< allowed_ij in ulps of the output at that element
  std::string bound;                 ///< how allowed_ij is derived ("2 gamma_{S-1}(u) (1 + gamma_L(u)) sum|a b|", ...)
  std::int64_t order_free = 0;       ///< order-free elements checked in every run (one value in every order)
  std::int64_t order_free_differ = 0;  ///< of them, differing from that value in some run
  std::int64_t envelope_exceed = 0;  ///< elements beyond the envelope in a later run (the checked run's are the envelope check's)
  double envelope_worst = 0;         ///< max |c - ref'| / allowed over the later runs
};

/// One element's error fraction under the envelope (the error map's worst elements).
struct ElementFraction {
  std::int64_t i = 0, j = 0;
  double frac = 0;  ///< |c - ref'| / allowed (+inf: a non-finite output where the reference is finite)
};

enum class CaseStatus { Pass, Fail, NotSupported, Crashed, Hung, Error };
std::string_view to_string(CaseStatus s);
std::optional<CaseStatus> parse_case_status(std::string_view s);

/// Every reason a case can fail, one value each (docs/bound_model.md, "Checks"). A case records the
/// checks it ran; its status derives from the decisive ones. JSON spells each as its stable string.
enum class CheckKind : std::uint8_t {
  Bitwise,                ///< "bitwise": output differs from the emulation of the declared arithmetic
  Envelope,               ///< "envelope": an element exceeds its rigorous per-element bound
  Statistical,            ///< "statistical": signed errors biased beyond what round-to-nearest allows
  Nonfinite,              ///< "nonfinite": Inf/NaN where the reference is finite
  SpecialValues,          ///< "special_values": wrong IEEE result where Inf/NaN/overflow is expected
  NanPolicy,              ///< "nan_policy": NaN payload/sign/canonical form not what the format declares
  Unwritten,              ///< "unwritten": outputs still holding the pre-fill pattern
  GuardOutput,            ///< "guard_output": bytes changed around C or in its ldc padding
  GuardInputs,            ///< "guard_inputs": A/B guards or padding changed
  InputsModified,         ///< "inputs_modified": A or B changed by the call
  Nondeterministic,       ///< "nondeterministic": runs differ bit for bit (a kernel that does not declare run-to-run nondeterminism)
  Spread,                 ///< "spread": a run-to-run difference the declared nondeterminism does not allow (order-free elements, beyond the bound)
  Crashed,                ///< "crashed": the kernel crashed, threw or left a sticky device error
  Hung,                   ///< "hung": the watchdog expired
  NotSupportedAfterData,  ///< "not_supported_after_data": run() declined after seeing the data
  Declaration,            ///< "declaration": traits inconsistent (e.g. operand_u below what the formats imply)
  Baseline,               ///< "baseline": error beyond --factor times the baseline kernel's
  CourseGate,             ///< "course_gate": the design source's normwise gate; reported, never decides
  Amax,                   ///< "amax": the amax a GEMM epilogue reports outside what its elements allow (docs/epilogue.md)
  SchemeBound,            ///< "scheme_bound": an element beyond the error bound its declared scheme claims (Ozaki-II's, docs/fp64.md)
};
inline constexpr CheckKind kAllCheckKinds[] = {
    CheckKind::Bitwise,     CheckKind::Envelope,       CheckKind::Statistical,      CheckKind::Nonfinite,
    CheckKind::SpecialValues, CheckKind::NanPolicy,    CheckKind::Unwritten,        CheckKind::GuardOutput,
    CheckKind::GuardInputs, CheckKind::InputsModified, CheckKind::Nondeterministic, CheckKind::Crashed,
    CheckKind::Hung,        CheckKind::NotSupportedAfterData, CheckKind::Declaration, CheckKind::Baseline,
    CheckKind::CourseGate,  CheckKind::Spread,         CheckKind::Amax,             CheckKind::SchemeBound};
std::string_view to_string(CheckKind k);
std::optional<CheckKind> parse_check_kind(std::string_view s);
/// Whether a failed check of this kind decides the case (everything but the course gate).
constexpr bool is_decisive(CheckKind k) { return k != CheckKind::CourseGate; }

/// One check of one case: what was checked, whether it held, and the figures that say by how much.
struct CheckResult {
  CheckKind kind = CheckKind::Envelope;
  bool passed = true;
  std::string detail;             ///< what was checked, or what failed, in words
  std::int64_t first_index = -1;  ///< first offending element (row-major in C, or the byte/element the check names); -1: none
  double measured = 0;            ///< the measured figure (e.g. max err/allowed, ulps, z-score)
  double limit = 0;               ///< its limit (the check fails when measured exceeds it)
};

/// The verdict tier a case was decided with, strongest first (docs/bound_model.md, "Tiers").
enum class Tier : std::uint8_t {
  None,                  ///< "none": not graded (not supported, crashed, hung, error)
  Bitwise,               ///< "bitwise": equal to the emulation of the declared order and roundings
  Envelope,              ///< "envelope": within the rigorous per-element bound
  EnvelopeStatistical,   ///< "envelope+statistical": within the bound and unbiased as round-to-nearest requires
};
std::string_view to_string(Tier t);
std::optional<Tier> parse_tier(std::string_view s);

/// What a case varies within its family (a report plots the family along it).
enum class CaseAxis : std::uint8_t { None, K, ExponentSpan, Kappa };
std::string_view to_string(CaseAxis a);
std::optional<CaseAxis> parse_case_axis(std::string_view s);

/// A reduction kernel's case (docs/reductions.md, "Certifying a reduction"): what the GEMM fields cannot say.
/// m = the count of vectors (results), k = their length, n = 1.
struct ElementwiseResult;  // results/elementwise.hpp

struct ReductionResult {
  std::string kind;                 ///< "sum" | "dot" | "nrm2"
  std::string axis;                 ///< "rows" | "cols": how the vectors lie in the input matrix
  std::string order;                ///< the declared order (describe), or "unknown"
  std::string accumulator;          ///< accumulator format tag
  std::int64_t vectors = 0, length = 0;
  std::int64_t bitwise_mismatches = 0;   ///< vectors whose result differs from the emulation (bitwise tier)
  std::int64_t vacuous_vectors = 0;      ///< vectors whose bound admits a zero result (no evidence)
  std::int64_t unjudged_vectors = 0;     ///< vectors the bound does not cover (non-finite data, h u >= 1, overflow)
  std::int64_t worst_vector = -1;        ///< the vector of the largest error fraction
  double worst_bound = 0;                ///< its bound (absolute)
  int runs = 0;                          ///< runs graded (every run of a run-to-run kernel; the checked one else)
};

/// One conversion check (a conversion kernel swept over source codes), as its record: the typed
/// fields every record has, and the whole record (docs/conversions.md; results/conversion.hpp reads
/// and writes it; the report's numbers point into `record`).
struct ConversionResult {
  struct Outcome {
    std::string name;
    std::uint64_t count = 0;
    std::string key;  ///< its key in the JSON ("/outcomes/<key>" or "/outcomes/<index>/count")
  };
  struct Mismatch {
    std::string src_bits, src_value, expected_bits, got_bits, outcome;
    bool model_bug = false;
  };
  std::string command, device, subject, from, to, rounding, saturation, nan_payload;
  std::uint64_t patterns = 0, mpfr_checked = 0, mismatches = 0, model_mismatches = 0, nan_differences = 0;
  bool has_patterns = false, has_mpfr_checked = false, has_model_mismatches = false, has_nan_differences = false,
       has_seconds = false;
  std::vector<Outcome> outcomes;
  bool outcomes_listed = false;  ///< outcomes came as a list: pointers are /outcomes/<i>/count
  std::vector<Mismatch> listed;
  double seconds = 0;
  bool passed = false;
  bool has_environment = false;
  Environment env;
  nlohmann::json record;  ///< the whole record as read or written
};

/// Where the order of a case's bitwise tier came from when it is not the kernel's declaration: revealed
/// from outside at the case's shape (certify --order revealed) or read from a revelation's JSON (--order
/// FILE); docs/reveal.md, "Certifying with a revealed order".
struct OrderRecord {
  std::string source;                ///< "revealed" or "file"
  std::string file;                  ///< source "file": the revelation's JSON
  std::int64_t m = 0, n = 0, k = 0;  ///< the shape it was revealed at
  std::string tree;                  ///< the trees' summary, class by class ("every element: ...")
  std::string arithmetic;            ///< the roundings the replay assumed (chosen and checked on random inputs)
  std::string checks;                ///< what the revelation checked (determinism, other probe values, replay), in words
  std::int64_t launches = 0;         ///< kernel launches of the revelation and the replay check
  bool used = false;                 ///< the bitwise tier emulated this order
  std::string fallback;              ///< not used: why (the case then has the declared tier)
};

/// One batch of a strided batched GEMM case (docs/suites.md, "batch.strided"), graded as its own m x n matrix.
struct BatchOutcome {
  bool passed = true;
  double max_abs = 0;        ///< its largest |D - ref|
  double max_fraction = 0;   ///< its largest err / allowed of the decisive tier (the envelope's)
  std::string reason;        ///< why it failed (empty: passed)
};

struct CaseResult {
  std::string suite;
  std::string case_id;
  std::string family;            ///< the cases this one is plotted with ("uniform" of k64_uniform .. k16384_uniform)
  CaseAxis axis = CaseAxis::None;  ///< what varies within the family (K here, c.k the value)
  std::string kernel;
  std::string kernel_traits;     ///< describe_traits()
  std::string backend;
  std::string spec;              ///< generator spec string (reproduces the inputs)
  std::int64_t m = 0, n = 0, k = 0;
  std::string source_format, out_format;
  CaseStatus status = CaseStatus::Pass;
  std::string reason;            ///< why it failed / was not supported / crashed
  std::vector<CheckResult> checks;  ///< every check run on this case, decisive or not
  Tier tier = Tier::None;        ///< the verdict tier used
  bool vacuous = false;          ///< the tier's bound admits an all-zeros output: the case is no evidence
  std::vector<std::string> flags;   ///< e.g. "inputs-exact-in-storage: ..."
  std::vector<std::string> coverage;  ///< the coverage classes this case exercises ("shape.prime", ...; docs/suites.md)
  Metrics metrics;
  Bound bound;                   ///< the course gate's bound (the design source's table; never decisive)
  Bound envelope;                ///< the envelope tier's per-element bound (variant "envelope")
  std::vector<std::string> evidence;  ///< the kernel's error sources this case exercised with a non-vacuous verdict
  double gate_fraction = 0;      ///< max_ij err / allowed of the course gate (reported; the checks decide)
  std::int64_t worst_index = -1;
  std::vector<WorstElement> worst;
  std::int64_t tile_m = 0, tile_n = 0;   ///< the output tile the kernel declares (0: none); worst elements are shown in it
  std::optional<ErrorMap> error_map;     ///< err / allowed downsampled: failing cases always, passing ones on request
  std::vector<ElementFraction> worst_envelope;  ///< the largest error fractions (the map's), largest first, at most worst_count
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
  std::optional<ConversionResult> conversion;  ///< a conversion kernel's case: its record (GEMM fields unused)
  std::optional<ReductionResult> reduction;    ///< a reduction kernel's case (operation "reduction")
  /// An elementwise kernel's case (operation "elementwise"; results/elementwise.hpp): shared, never changed once made.
  std::shared_ptr<const ElementwiseResult> elementwise;
  std::optional<OrderRecord> order;  ///< the order came from a revelation, not the declaration (certify --order revealed / FILE)
  std::string determinism = "deterministic";  ///< what the kernel declares: deterministic | run_to_run
  /// A GEMM case that stores A, B or C column-major (docs/suites.md, "layout.transposes"): "nt/c_row", "tt/c_col", ...
  /// (A then B: n row-major, t column-major); empty: fpcert's default nn/c_row (JSON "layout", written when not empty).
  std::string layout;
  std::optional<RunSpread> spread;   ///< a kernel declaring run_to_run: its measured run-to-run spread
  /// A strided batched case: each batch's outcome, in batch order (JSON "batches", written when not empty); the
  /// case's checks and metrics are those of its first failing batch (else of the batch with the largest error).
  std::vector<BatchOutcome> batches;
};

/// The status the decisive checks give: Crashed, Hung or NotSupported (run() declined after data)
/// when such a check failed, else Fail when any decisive check failed, else Pass; nullopt when the
/// case holds no decisive check (a status set before any check ran stands).
std::optional<CaseStatus> status_from_checks(const std::vector<CheckResult>& checks);
/// The failed decisive checks' details, "; "-joined (a case's reason).
std::string reason_from_checks(const std::vector<CheckResult>& checks);
/// Set status and reason of c from its checks (unchanged when it holds no decisive check).
void decide(CaseResult& c);
/// The first check of kind k in c, or nullptr.
const CheckResult* find_check(const CaseResult& c, CheckKind k);

/// What a shard of a run covers (docs/scale.md): its place in the partition and the whole run's plan,
/// so that `fpcert merge` can check that shards fit together and order the cases as one run would.
struct ShardStamp {
  std::string shard;              ///< "2/3", "2/3:1/2" (a worker of shard 2/3); empty: not a shard
  std::vector<std::string> plan;  ///< every item of the whole run (case_key), in a single run's order
  std::string run;                ///< fingerprint of the run: the items' inputs and the options that decide verdicts
  bool evidence = false;          ///< certify's: the merge that completes the run applies the evidence rule (suites/run/suite.hpp)
  bool present() const { return !shard.empty(); }
};

/// The key that names a case in a run's plan: "suite/case/kernel".
std::string case_key(const CaseResult& c);
std::string case_key(const std::string& suite, const std::string& case_id, const std::string& kernel);

/// What became of one injected fault (docs/mutation.md). A mutant is killed for its own fault when a
/// check of a kind it expects fails on a case the unmutated kernel passes; refused by any other check
/// only, it is "killed_other" (the suite saw something, but not the fault it was made with).
enum class MutantOutcome : std::uint8_t {
  Killed,         ///< "killed": a check of an expected kind failed
  KilledOther,    ///< "killed_other": only checks of other kinds failed
  Survived,       ///< "survived": every case the unmutated kernel passes, the mutant passed too
  NotApplicable,  ///< "not_applicable": the fault cannot change a kernel with these traits (not counted)
};
std::string_view to_string(MutantOutcome o);
std::optional<MutantOutcome> parse_mutant_outcome(std::string_view s);

/// What two tolerance rules in wide use say of a kernel's outputs, case by case (docs/mutation.md, "Beside the
/// heuristics"): torch.allclose at KernelBench's atol = rtol = 1e-2 against the exact reference (equal_nan False, as
/// torch's default), and FlashAttention's rule max|out - ref| <= 2 max|out_same_precision - ref| + 1e-5, the
/// same-precision implementation being the unmutated kernel (torch's max propagates NaN: a NaN anywhere refuses).
/// Measured where the operation's runner tallies them (the row operations: softmax, normalisation); cases = 0 elsewhere.
struct HeuristicVerdicts {
  int cases = 0;                      ///< cases where they were measured
  int fpcert_refused = 0;             ///< of them, cases fpcert refused (the kernel's status not pass)
  int allclose_refused = 0;           ///< of them, cases torch.allclose(atol=1e-2, rtol=1e-2) refuses
  int fa2x_refused = 0;               ///< of them, cases the 2x rule refuses
  int allclose_missed = 0;            ///< cases fpcert refused and allclose accepted (a wrong result passed)
  int fa2x_missed = 0;                ///< cases fpcert refused and the 2x rule accepted
  std::string first_allclose_refused, first_fa2x_refused, first_allclose_missed, first_fa2x_missed;  ///< case ids
};

struct MutantResult {
  std::string mutant;                 ///< registry name, <kernel>~<fault>
  std::string fault;                  ///< fault id (acc_rz, ...)
  std::string fault_class;            ///< output | arithmetic | data | memory | determinism
  std::string what;                   ///< the fault in words
  std::vector<CheckKind> expected;    ///< kinds that kill it for its own fault
  MutantOutcome outcome = MutantOutcome::Survived;
  std::string case_id;                ///< the case that killed it (killed, killed_other)
  std::vector<CheckKind> fired;       ///< the failed decisive checks on that case
  std::string detail;                 ///< that case's reason; why not applicable; what a suite needs to see it
  std::string repro;                  ///< the command that reruns the killing case on the mutant
  int cases_run = 0;                  ///< cases it ran (it stops at its first kill for its own fault)
  int runs = -1, active_runs = -1;    ///< calls, and calls where the fault changed something (-1: unknown, --isolate)
  double seconds = 0;
  HeuristicVerdicts heuristics;       ///< what torch.allclose and the 2x rule said on the cases it ran
};

/// killed / total of one fault class (not-applicable mutants are not counted).
struct ClassScore {
  std::string fault_class;
  int total = 0, killed = 0, killed_other = 0, survived = 0;
};

/// The mutation score of one kernel on one suite.
struct MutationScore {
  std::string kernel;
  std::string suite;
  int cases = 0;                      ///< cases of the suite
  std::vector<std::string> invalid_cases;  ///< "id: status: reason" where the unmutated kernel did not pass (no mutant judged there)
  std::vector<MutantResult> mutants;
  double seconds = 0;
  HeuristicVerdicts honest_heuristics;  ///< what they said of the unmutated kernel (a refusal there is a false alarm)
  int total() const;                  ///< applicable mutants
  int count(MutantOutcome o) const;
  double score() const;               ///< killed (own fault) / total; 1 when total is 0
  std::vector<ClassScore> by_class() const;  ///< in the order the classes first appear
};
/// What a run ran: GEMM cases of a suite, conversion cases, an experiment, or a suite over the
/// mutants of kernels (fpcert mutate, selftest: GEMM cases, with the mutation scores).
enum class RunKind : std::uint8_t { Gemm, Conversion, Experiment, Mutation };
std::string_view to_string(RunKind k);
std::optional<RunKind> parse_run_kind(std::string_view s);

struct RunResult {
  RunKind kind = RunKind::Gemm;
  Environment env;
  std::string suite;
  std::vector<std::string> kernels;
  std::vector<CaseResult> cases;
  std::map<std::string, std::string> notes;
  std::vector<MutationScore> mutation;  ///< certify and mutate: per kernel, what the suite refused (docs/mutation.md)
  ShardStamp shard;              ///< set only in a shard's results (--shard, --devices workers, MPI ranks)
  bool passed() const;
  int count(CaseStatus s) const;
};

}  // namespace fpcert
