// oracle/gemm_engine.hpp — who multiplies the slice matrices of the fast exact GEMM (oracle/gemm_fast.cpp): the
// built-in Eigen tiles, or another double GEMM (cuBLAS DGEMM on a GPU: kernels/device/exact_gemm_cuda.hpp), chosen
// per call or for the whole process. No CUDA here.
//
// Why any double GEMM will do (docs/oracle.md, "Exact GEMMs" and "On the GPU"): every product of two slices is an
// integer and every partial sum of a K block's products is an integer below 2^53, so any order, blocking, with or
// without FMA, computes the slice GEMMs exactly: the same integers, hence the same reference bit for bit. The last
// operand pair (|A| 2^-e_i times |B| 2^-e_j, the abs_sum bound) is not exact; docs/oracle.md, "abs_sum", proves its
// bound for any order with or without FMA, so it holds under every engine.
//
// The CPU oracle stays the definition: references from an engine other than the built-in one are checked on a sample
// of elements against exact_dot, bit for bit; a difference throws DeviceError (exit 3), never a silent verdict.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "oracle/gemm_ref.hpp"

namespace fpcert {

struct CardChains;  // oracle/card_chains.hpp

/// The operands of one K block: `count` pairs (A_g, B_g), the first count - 1 of integer slices (exact), the last the
/// scaled |A| and |B| (the abs_sum GEMM). A_g is m x k row-major (a[g][i * k + kk]); B_g is k x n column-major
/// (b[g][j * k + kk]): both are lines of k contiguous doubles, as oracle/gemm_fast.cpp slices them.
struct SliceBlock {
  int count = 0;
  std::int64_t m = 0, n = 0, k = 0;
  const double* const* a = nullptr;
  const double* const* b = nullptr;
};

/// The exact residue GEMMs of an Ozaki-II emulation (kernels/gemm/cpu/ozaki2.cpp, step 3; docs/fp64.md): for each modulus
/// l < count, out[l m n + i n + j] = (sum_q a_l(i, q) b_l(q, j)) mod moduli[l] in [0, moduli[l]), with a_l row-major
/// m x k at ops + l (m k + n k) and b_l stored column by column (column j contiguous along K) at ops + l (m k + n k) + m k.
/// The entries are residues of at most 128 in magnitude and K is summed in blocks of kblock (< 2^17: every block sum
/// exact in int32) reduced after each block: every reduction is exact, so any engine and any blocking give the same
/// residues bit for bit.
struct ResidueGemms {
  int count = 0;
  const int* moduli = nullptr;
  std::int64_t m = 0, n = 0, k = 0, kblock = 0;
  const std::int8_t* ops = nullptr;
  double products() const { return static_cast<double>(count) * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k); }
};

/// A double GEMM for the slice operands (docs/oracle.md, "On the GPU").
class ExactGemmEngine {
 public:
  virtual ~ExactGemmEngine() = default;
  /// Recorded in GemmRefInfo::engine: "cpu-eigen", "gpu-cublas-dgemm", ...
  virtual const char* name() const = 0;
  /// true: multiply() is called per output tile from the oracle's worker threads (it must be thread-safe) and the
  /// tile is combined at once, while in cache; false: once per panel of rows (all N columns) from one thread, the
  /// panel then combined by the workers (an engine with its own parallelism, a GPU).
  virtual bool per_tile() const = 0;
  /// Per-panel engines: the most bytes of results (count * rows * N doubles) one multiply() may produce; the oracle
  /// cuts the rows into panels under it (at least one row each).
  virtual std::size_t panel_bytes() const { return std::size_t{1} << 31; }
  /// Called once per K block before its multiply() calls (a GPU engine uploads the operands here).
  virtual void begin_block(const SliceBlock& ops) { (void)ops; }
  /// out[g * tm * tn + ii * tn + jj] = sum_kk A_g(i0 + ii, kk) B_g(kk, j0 + jj) for g < ops.count, ii < tm, jj < tn,
  /// in any order, with or without FMA (exact for g < count - 1: the sums are integers below 2^53).
  virtual void multiply(const SliceBlock& ops, std::int64_t i0, std::int64_t tm, std::int64_t j0, std::int64_t tn,
                        double* out) = 0;
  /// Host memory for a panel's results (count * tm * N doubles) that this engine copies into faster (pinned memory
  /// for a GPU), or nullptr: the oracle uses its own. Valid until the next call.
  virtual double* panel_memory(std::size_t doubles) {
    (void)doubles;
    return nullptr;
  }
  /// An engine that computes whole references itself (a GPU: scan, slicing, products and the integer combination on
  /// the device, docs/oracle.md "On the GPU") for the problems it takes: fills r's c, abs_sum, status, fallbacks and
  /// info (all but engine and sample_checked) exactly as the oracle's own path would (abs_sum within its documented
  /// tolerance) and returns true; false (the default) leaves r untouched and the oracle's path runs with multiply().
  virtual bool whole_reference(const MatrixView& a, const MatrixView& b, unsigned threads, GemmRef& r) {
    (void)a, (void)b, (void)threads, (void)r;
    return false;
  }
  /// As the process default (set_default_gemm_engine): whether this engine takes a problem of `products` = m n k;
  /// false sends it to the built-in engine (a GPU engine below the size where it pays, or one that found no device).
  /// An engine given in GemmRefOptions::engine takes every problem.
  virtual bool takes(double products) {
    (void)products;
    return true;
  }
  /// Whether references made with this engine are checked on a sample against exact_dot (all but the built-in one).
  virtual bool sample_checked() const { return true; }
  /// The bitwise tier's tensor-core card chains (oracle/card_chains.hpp) on this engine's device: d (m x n fp32 codes)
  /// and general (m x n: 1 where the host must compute the element by fused_dot) filled, true; false (the default)
  /// when the engine does not take the job (no device, a job too small to pay): the host emulates every element.
  virtual bool card_chains(const CardChains& job, std::uint32_t* d, std::uint8_t* general) {
    (void)job, (void)d, (void)general;
    return false;
  }
  /// The bitwise tier's Ozaki-II residue GEMMs (ResidueGemms) on this engine's device: out (count m n residues) filled,
  /// true; false (the default) when the engine does not take the job (no device, a job too small to pay, not the memory):
  /// the host computes them.
  virtual bool residue_gemms(const ResidueGemms& job, std::uint8_t* out) {
    (void)job, (void)out;
    return false;
  }
};

/// The built-in engine: Eigen's double GEMM per output tile in the oracle's threads ("cpu-eigen"; not sample-checked:
/// tests/oracle/gemm_ref_test.cpp holds it to MPFR).
ExactGemmEngine& eigen_gemm_engine();

/// The process default used by gemm_reference when GemmRefOptions::engine is null. nullptr restores the built-in
/// engine. A default set in one process is not inherited by a child made with fork() (a CUDA context does not survive
/// fork): there the built-in engine answers.
void set_default_gemm_engine(std::shared_ptr<ExactGemmEngine> engine);
std::shared_ptr<ExactGemmEngine> default_gemm_engine();

/// Elements a sample check compares (docs/oracle.md, "On the GPU"): every element when m n k <= kSampleAllProducts,
/// else kSampleElements of them (the four corners and pseudo-random others, from the shape: reproducible).
inline constexpr std::int64_t kSampleAllProducts = std::int64_t{1} << 22;
inline constexpr std::int64_t kSampleElements = 64;
/// The elements (row-major indices, sorted) the sample check of an m x n x k reference compares.
std::vector<std::int64_t> sample_elements(std::int64_t m, std::int64_t n, std::int64_t k);
/// Compares the sample's elements of r (C = A B from `engine`) with exact_dot: hi, lo, tail bit for bit, status but
/// kRefFallback, abs_sum >= exact_dot's RU(sum |ab|) and, when abs_upper_factor > 0, <= RU * abs_upper_factor.
/// Returns the number of elements compared; throws DeviceError (exit 3) at the first difference, with both values.
std::int64_t check_reference_sample(const MatrixView& a, const MatrixView& b, const GemmRef& r, const char* engine,
                                    double abs_upper_factor);

}  // namespace fpcert
