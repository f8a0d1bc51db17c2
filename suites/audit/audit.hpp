// suites/audit/audit.hpp — `fpcert audit` (docs/audit.md): a GEMM test's acceptance rule as people write it
// (allclose, max-abs, relative Frobenius), audited on its own inputs for false alarms (static: a tolerance below
// half an ulp, a relative rule near zero; sampled: the correct arithmetic of the declaration in several orders,
// over seeds) and for power (fpcert's GEMM fault injectors plus zeros and constant: which pass the rule, which
// fpcert's certify verdict refuses on the same case).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/kernel.hpp"
#include "results/audit.hpp"

namespace fpcert {

/// A test's acceptance rule. got: the kernel's output; ref: the test's reference (the exact product of the stored
/// inputs, as an fp64 reference GEMM approximates it).
///   allclose  |got - ref| <= atol + rtol |ref| for every element (torch.allclose / numpy.allclose, equal_nan off)
///   maxabs    max |got - ref| <= tol
///   relfro    ||got - ref||_F <= tol ||ref||_F
///   kref      max |got - ref| <= k max |ref_p - ref|, ref_p the test's reference computed at precision p (FlashAttention's
///             "at most 2x the error of the PyTorch reference in bf16"; kref_reference says how ref_p is computed)
///   cosine    cos(got, ref) >= min (torch.nn.functional.cosine_similarity of the flattened outputs)
///   fpcert    |got - ref| <= allowed_ij, fpcert's envelope for the declared formats in any order
///             (suites/verdict/envelope.hpp): the sound rule audit compares the others with
struct AuditRule {
  enum class Kind { Allclose, MaxAbs, RelFro, KRef, Cosine, Fpcert } kind = Kind::Allclose;
  double rtol = 1e-5, atol = 1e-8;  ///< allclose (numpy.allclose's defaults when a key is missing)
  /// allclose: equal_nan=1, a NaN output meets a NaN reference (torch/numpy equal_nan=True). Only a softmax under the NaN
  /// policy has NaN references (fully masked rows); elsewhere the references are finite and it changes nothing.
  bool equal_nan = false;
  double tol = 0;                   ///< maxabs, relfro; kref: k max |ref_p - ref| once resolved on a case (resolve_rule)
  double k = 2;                     ///< kref: the multiplier (FlashAttention's 2)
  std::string p;                    ///< kref: the precision of the test's second reference (a format tag)
  double min = 0;                   ///< cosine: the smallest similarity accepted
  std::string spec;                 ///< as given
  std::string text() const;         ///< in words, with its formula
  bool elementwise() const { return kind != Kind::RelFro && kind != Kind::Cosine; }
};
/// `allclose:rtol=1e-2,atol=1e-2` (and `equal_nan=1`), `maxabs:tol=0.1`, `relfro:tol=1e-3`, `kref:k=2,p=bf16`, `cosine:min=0.99`,
/// `fpcert`. Throws InputError.
AuditRule parse_audit_rule(const std::string& spec);

/// The kref rule's second reference: the stored inputs (values of `a`, `b`, m x k and k x n) multiplied as a
/// framework's matmul at precision p does (torch.matmul on tensors of dtype p): the inputs rounded into p where p is
/// narrower, exact products summed sequentially by FMA in an fp32 accumulator (fp64 for p = f64), rounded once
/// into p. Its values as doubles. Throws InputError where fpcert's emulator cannot compute that arithmetic.
std::vector<double> kref_reference(const std::string& p, const Format& input, std::int64_t m, std::int64_t n, std::int64_t k,
                                   const std::vector<double>& a, const std::vector<double>& b);
/// cosine's figure 1 - cos(got, ref), computed as ||got/|got| - ref/|ref|||^2 / 2 (no cancellation near 1); 1 where
/// either side is all zeros (cos taken as 0, as torch's eps-guarded cosine_similarity gives); +inf if got is not finite.
double one_minus_cosine(const std::vector<double>& got, const std::vector<double>& ref);

/// The rule on one output. For allclose and maxabs tol_ij = atol + rtol |ref_ij| (maxabs: tol); for fpcert,
/// allowed_ij (`allowed` must then hold it); kref: tol (resolved); relfro and cosine are one normwise figure (cosine's
/// ratio: (1 - cos) / (1 - min)). ratio = error / tolerance (the
/// largest element's for elementwise rules); failing = elements (or 1 for relfro) beyond it; a non-finite output
/// where the reference is finite fails with ratio +inf.
struct RuleOutcome {
  bool pass = true;
  std::int64_t failing = 0;
  double ratio = 0;
  std::int64_t worst = -1;  ///< the element of the largest ratio (elementwise rules)
};
RuleOutcome apply_rule(const AuditRule& r, const std::vector<double>& got, const std::vector<double>& ref,
                       const std::vector<double>& allowed = {});
/// The rule's tolerance on element x (allclose, maxabs, kref, fpcert); +inf for relfro and cosine (not elementwise).
double rule_tolerance(const AuditRule& r, double ref, double allowed);

/// The test's own tensors (docs/audit.md, "The test's own tensors"): A (m x k) and B (k x n) as their values, in
/// row-major order, and where they came from. Every value finite.
struct AuditTensors {
  std::int64_t m = 0, n = 0, k = 0;
  std::vector<double> a, b;
  std::string source;  ///< e.g. "A.npy (32 x 96 float32), B.npy (96 x 32 float32)"
  /// The format each tensor's values are stored in, exactly (f64, f32, f16, bf16): said in the report beside the input
  /// formats they are rounded into ("stored in bf16, no rounding" where they are the same).
  std::string a_format = "f64", b_format = "f64";
};
/// Check shapes and values: A m x k, B k x n with equal k, no dimension 0, every value finite (NaN or Inf refused
/// with its position: the rule's behaviour on non-finite references is not what audit measures). `what_a`, `what_b`
/// name them in messages. Throws InputError.
AuditTensors audit_tensors(std::int64_t a_rows, std::int64_t a_cols, std::vector<double> a, std::int64_t b_rows, std::int64_t b_cols,
                           std::vector<double> b, const std::string& what_a, const std::string& what_b);
/// The same from two 2-D .npy files (base/npy.hpp; Fortran order read as such): float64, float32, float16 ('<f2'),
/// bfloat16 as numpy.save writes an ml_dtypes array ('|V2': two opaque bytes, read as bf16 unless `*_format` says f16;
/// or the descr 'bfloat16'), or uint16 bit patterns with `*_format` bf16 or f16. `a_format`, `b_format`: "" or a format
/// tag; a tag that contradicts the file's dtype is refused. The values are exact in their format (no rounding on
/// reading). Throws InputError.
AuditTensors read_audit_tensors(const std::string& a_npy, const std::string& b_npy, const std::string& a_format = "",
                                const std::string& b_format = "");

/// A softmax test's own logits (docs/audit.md, "Softmax"): rows x cols values in A (b empty; m = rows, n = k = cols);
/// -Inf entries are masked entries (as a test's masked_fill(-inf) leaves them); NaN and +Inf refused with their
/// position. Throws InputError.
AuditTensors audit_logits(std::int64_t rows, std::int64_t cols, std::vector<double> x, const std::string& what);
/// The same from one 2-D .npy file, of the dtypes read_audit_tensors reads (`format`: bf16 or f16 for uint16 bits).
AuditTensors read_audit_logits(const std::string& npy, const std::string& format = "");

/// What `--allow` / `[audit] allow` / allow= may admit as correct arithmetic besides the declaration (docs/audit.md,
/// "Allowed arithmetic"): "tf32" (fp32 inputs rounded to TF32 before the products, to nearest, ties away or even;
/// fp32 accumulation in any sampled order). Throws InputError for another name, or tf32 for a kernel whose inputs
/// or operands are not fp32.
inline constexpr const char* kAuditAllowances = "tf32";
void check_audit_allow(const std::vector<std::string>& allow, const KernelTraits& t);

struct AuditOptions {
  /// The operation the test checks: "gemm" (C = A B), or "softmax" / "log_softmax" (docs/audit.md, "Softmax": a
  /// registered softmax kernel or a --traits declaration (suites/audit/audit_rows.hpp); m rows of n logits from a
  /// softmax generator spec, or tensors' A as the logits; k, allow, reference and kref unused), or "layernorm" /
  /// "rmsnorm" (docs/audit.md, "Normalisation": m rows of n entries from a norm generator spec).
  std::string op = "gemm";
  std::string kernel;         ///< a registered host kernel (fpcert kernels), or empty with traits
  std::string traits;         ///< a traits spec (suites/verdict/tolerance.hpp, parse_traits_spec) when no kernel
  std::int64_t m = 64, n = 64, k = 64;
  std::string inputs = "uniform";  ///< a generator spec; m, n, k and seed are set by the audit
  std::vector<std::uint64_t> seeds = {1, 2, 3, 4, 5};
  /// The test's own tensors instead of the generator (inputs and seeds unused; m, n, k must match): one case, rounded
  /// into the declared input formats as the generator's values are; the false-alarm runs vary the order only.
  const AuditTensors* tensors = nullptr;
  AuditRule rule;
  /// The test's reference, what the rule compares with (docs/audit.md, "The test's reference"): "exact" (the exact
  /// product rounded to double: an fp64 reference GEMM), "f32" (an fp32 GEMM of the stored inputs: exact products
  /// summed sequentially by FMA in fp32, rounded once into fp32, as kref_reference computes it for p = f32) or "out"
  /// (the exact product correctly rounded into the output format). fpcert's envelope and the labels' "beyond bound"
  /// stay against the exact product.
  std::string reference = "exact";
  /// Arithmetic the user allows besides the declaration (check_audit_allow): with "tf32" the false-alarm search runs
  /// TF32-operand variants as correct, fpcert's envelope (static findings, labels) takes TF32 operands, and the power
  /// table drops the inputs_tf32 mutant (no longer a fault).
  std::vector<std::string> allow;
  bool mutants = true;        ///< run the power table
  /// The power table's cases on a sample of C's rows (every column): the structured rows of
  /// suites/verdict/sampled_reference.hpp (first, last, both sides of each power of two) plus this many random ones;
  /// the mutants, the rule and fpcert's verdict all see those rows only. 0: every row; -1 (auto): 16 random rows once
  /// a case has 2^24 or more multiply-adds (docs/audit.md, "Cost").
  std::int64_t sample_rows = -1;
  std::string command;        ///< the command line, for the cases' repro
  /// Batch invariance declared on the command line (besides KernelTraits::batch_invariant): checked bit for bit on the
  /// first seed's case (suites/audit/batch_invariance.hpp). Reproducibility is checked for every kernel.
  bool batch_invariant = false;
  int repro_runs = 3;         ///< calls of the kernel on the first seed's case compared bit for bit
};

/// The whole audit (o.op: a GEMM's, or run_softmax_audit). Throws InputError for a bad kernel, spec or rule.
AuditRecord run_audit(const AuditOptions& o);
/// The softmax audit (suites/audit/audit_softmax.cpp): o.op softmax or log_softmax.
AuditRecord run_softmax_audit(const AuditOptions& o);
/// The normalisation audit (suites/audit/audit_norm.cpp): o.op layernorm or rmsnorm.
AuditRecord run_norm_audit(const AuditOptions& o);

}  // namespace fpcert
