// kernels/kernel.hpp — the interface every kernel under test implements (CPU model, CUDA kernel,
// cuBLAS baseline, plugin), with its two operations, GEMM and conversion, their traits (what the
// bound model and the conversion check read) and the one registry of both.
//
// A GEMM kernel computes C = A * B. It receives A and B already in its input formats (codes, as
// the runner rounded the problem's exact values into them), and writes C as codes of its output
// format, in the memory space it declares (host for CPU models, device for CUDA kernels): the
// runner owns every buffer, so it can pre-fill outputs with NaN, surround them with guard bytes
// and time the call without the copies. A conversion kernel converts consecutive source codes of one
// format into codes of another under the rounding, saturation and NaN rule it claims; the runner
// owns its buffers too, and compares every result with fpcert's model and MPFR.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "oracle/block/block_format.hpp"
#include "oracle/format.hpp"
#include "kernels/order.hpp"
#include "oracle/gemm_ref.hpp"
#include "oracle/round.hpp"

namespace fpcert {

/// What a kernel computes: every kernel has exactly one operation.
/// Reduction: kernels/reduce/reduce_kernel.hpp. Elementwise (y = f(x)): kernels/elementwise/eltwise_kernel.hpp.
/// Softmax (softmax and log-softmax over rows): kernels/softmax/softmax_kernel.hpp.
/// Norm (LayerNorm and RMSNorm over rows): kernels/norm/norm_kernel.hpp.
/// Attention (fused scaled-dot-product attention forward): kernels/attention/attention_kernel.hpp.
enum class Operation : std::uint8_t {
  Gemm, Conversion, Reduction, Elementwise, Softmax, Norm, Attention,
  SoftmaxBackward, NormBackward, AttentionBackward,  ///< issue 45 (docs/backward.md)
};
std::string_view to_string(Operation o);
enum class Backend : std::uint8_t { Cpu, Cuda, Cublas, Plugin };
enum class MemorySpace : std::uint8_t { Host, Device };
std::string_view to_string(Backend b);

/// The inputs a kernel's traits hold for. A case outside is "not supported" (the runner checks the
/// rounded inputs before running): a fast path that is exact only on a restricted domain states the
/// restriction instead of failing, or silently passing, on data it was never meant for.
enum class SpanScope : std::uint8_t {
  None,    ///< no limit on exponent spans
  Tensor,  ///< the nonzero entries of each operand as a whole
  Line,    ///< each row of A and each column of B
  KBlock,  ///< each (row, K-block) of A and (K-block, column) of B
};
struct InputDomain {
  SpanScope span_scope = SpanScope::None;
  int max_span = 0;            ///< largest minus smallest binade of the nonzero entries of one group
  int kblock = 0;              ///< block length along K for SpanScope::KBlock
  bool operand_range = false;  ///< every input inside the operand format's finite range (nothing scales it first)
  /// Finite inputs only: the arithmetic is not defined on Inf or NaN (a split x - hi(x) makes Inf - Inf, a block
  /// scale of an infinite amax is NaN). A case with a non-finite input is "not supported" (docs/suites.md,
  /// "values.special"), and the faults that only a non-finite reference can show are not applicable.
  bool finite_only = false;
  std::string note;            ///< why, in one phrase
  /// Beyond the span only (finite inputs in range): graded by the declared scheme's own claims, the bitwise emulation
  /// and the check of kind scheme_bound (suites/verdict/scheme_bound.hpp), with fp64's envelope not applied, instead of
  /// "not supported". For an order whose scheme claims a bound of its own (Ozaki-II; the `declaration` check
  /// refuses it on any other).
  bool span_scheme_graded = false;
  bool restricted() const { return span_scope != SpanScope::None || operand_range || finite_only; }
};


/// Block scaling a kernel applies to its inputs before it multiplies (docs/block_formats.md): A quantized in
/// blocks along K (its rows), B along K (its columns), with this format, scale rule and element rounding. The
/// runner then grades against the exact product of the operands as this quantizer makes them.
struct BlockScaling {
  const BlockFormat* format = nullptr;  ///< nullptr: none
  ScaleRule rule = ScaleRule::Floor;
  Rounding rounding = Rounding::NearestEven;
  int block = 0;  ///< 0: the format's
  bool active() const { return format != nullptr; }
};

/// Whether repeated runs of a kernel on the same inputs give the same bits (docs/bound_model.md,
/// "Nondeterministic kernels"). Deterministic (the default, and what a plugin of ABI minor 0 or 1 reads as):
/// every later run must equal the checked one bit for bit. RunToRun: the kernel's order is not fixed between
/// runs (partial sums added with atomics: split-K / stream-K, cuBLAS's atomics mode, Triton split-K); each
/// run is graded on its own by the envelope, the order-free elements must equal their one value in every run,
/// and the spread between runs is measured against what the declared arithmetic allows. Its order is then
/// an order family, never one fixed order: unknown, or split-K with combine=atomic.
enum class Determinism : std::uint8_t { Deterministic, RunToRun };
std::string_view to_string(Determinism d);  ///< "deterministic", "run_to_run"
std::optional<Determinism> parse_determinism(std::string_view s);

/// How A, B and C are stored in one GEMM call (docs/suites.md, "layout.transposes"). fpcert's logical operands are
/// A (m x k), B (k x n) and C (m x n); each is stored row-major (its rows contiguous, the leading dimension between
/// rows) or column-major (its columns contiguous). In the BLAS names of a row-major library (CBLAS with
/// CblasRowMajor): A or B "N" is row-major, "T" (stored transposed) is column-major; NN is fpcert's default.
struct GemmLayout {
  Layout a = Layout::RowMajor, b = Layout::RowMajor, c = Layout::RowMajor;
  bool row_major() const { return a == Layout::RowMajor && b == Layout::RowMajor && c == Layout::RowMajor; }
  /// Bit of this combination in KernelTraits::layouts: bit (a + 2 b + 4 c), 0 = row-major, 1 = column-major.
  std::uint8_t bit() const {
    return static_cast<std::uint8_t>(1u << ((a == Layout::ColMajor) + 2 * (b == Layout::ColMajor) + 4 * (c == Layout::ColMajor)));
  }
  friend bool operator==(const GemmLayout&, const GemmLayout&) = default;
};
/// "nn", "nt", "tn", "tt" (A then B: n row-major, t column-major), then "/c_row" or "/c_col".
std::string to_string(const GemmLayout& l);
/// The layout masks of KernelTraits::layouts.
inline constexpr std::uint8_t kLayoutsRowMajor = 1;    ///< row-major A, B and C only (every kernel's default)
inline constexpr std::uint8_t kLayoutsAll = 0xFF;      ///< every combination of row- and column-major A, B, C
inline constexpr std::uint8_t kLayoutsAnyAB = 0x0F;    ///< A and B either way, C row-major
/// The combinations a mask holds, as "nn/c_row, nt/c_row" ("every layout" for kLayoutsAll).
std::string describe_layouts(std::uint8_t mask);

/// A GEMM's fused epilogue (docs/epilogue.md; issue 37), as cuBLASLt's cublasLtMatmul defines it:
///   Z = alpha' (A B) + beta C + bias,  alpha' = alpha scale_a scale_b (scale_a = scale_b = 1 unless FP8 scaling),
///   D = RN_out(scale_d act(Z)),        amax = max_ij |act(Z_ij)| (before scale_d; CUBLASLT_MATMUL_DESC_AMAX_D_POINTER).
/// The bias: per column (bias_j added to every row: a Linear layer's bias, length n; cuBLASLt's bias of its
/// column-major D's rows, called for a row-major D) or per row (bias_i, length m); one vector for every batch.
enum class BiasKind : std::uint8_t { None = 0, PerRow = 1, PerColumn = 2 };
/// The activation: ReLU max(z, 0); GELU's erf form z Phi(z) = z (1 + erf(z / sqrt 2)) / 2; its tanh form
/// z (1 + tanh(sqrt(2/pi) (z + 0.044715 z^3))) / 2 (Hendrycks and Gimpel 2016; PyTorch's approximate="tanh",
/// cuBLASLt's GELU epilogue); SiLU z / (1 + e^-z) (Elfwing et al. 2018).
enum class Activation : std::uint8_t { None = 0, Relu = 1, GeluErf = 2, GeluTanh = 3, Silu = 4 };
/// "none", "row", "column" / "none", "relu", "gelu_erf", "gelu_tanh", "silu"; parse_* answer nullopt for anything else.
std::string_view to_string(BiasKind b);
std::string_view to_string(Activation a);
std::optional<BiasKind> parse_bias_kind(std::string_view s);
std::optional<Activation> parse_activation(std::string_view s);
/// The mask bit of a bias kind (EpilogueTraits::bias) or an activation (EpilogueTraits::activations).
constexpr std::uint8_t bit(BiasKind b) { return static_cast<std::uint8_t>(1u << static_cast<unsigned>(b)); }
constexpr std::uint8_t bit(Activation a) { return static_cast<std::uint8_t>(1u << static_cast<unsigned>(a)); }

/// What a GEMM kernel's epilogue takes and how it computes (KernelTraits::epilogue). Default: none of it (the
/// epilogue cases are "not supported" for the kernel). The epilogue's arithmetic is in the accumulator format
/// (unit u, smallest subnormal eta): alpha' formed from the scalars (up to two roundings), alpha' acc, beta c and
/// their sum with the bias (any order), the activation from the elementary function the kernel calls (func_rel_err),
/// scale_d's product, then the output rounding; suites/ops/gemm/epilogue.hpp derives the per-element bound.
struct EpilogueTraits {
  std::uint8_t bias = 0;                 ///< bit(BiasKind) of each bias kind it takes (0: no bias)
  const Format* bias_format = nullptr;   ///< the bias vector's format (codes in its container); nullptr: the output format
  std::uint8_t activations = 0;          ///< bit(Activation) of each activation it takes besides None
  /// Relative error of the elementary function (erf, tanh, exp) its GELU / SiLU call, over the accumulator format's
  /// range: 2^-22 for CUDA's erff, tanhf, expf (2 ulp, CUDA C++ Programming Guide, "Mathematical Functions");
  /// 2^-10.99 for tanh.approx.f32 (PTX ISA). func_note says where it comes from.
  double func_rel_err = 0;
  std::string func_note;
  /// Z rounded into the output format before the activation (an unfused linear then activation, as eager
  /// PyTorch computes F.gelu(F.linear(x, w, b))): one more rounding, u_out (|Z| + X).
  bool round_before_act = false;
  /// With beta != 0 and a bias, alpha' acc + beta C rounded into the output format before the bias is added (and the
  /// activation applied): cuBLASLt's bias epilogues with C (measured on the H200: docs/epilogue.md, "What cuBLASLt
  /// computes with beta C and a bias"). One more rounding, u_out (|alpha' A B| + |beta C| + X) + eta_out / 2.
  bool round_before_bias = false;
  bool fp8_scaling = false;              ///< takes scale_a, scale_b, scale_d (GemmOperands; cuBLASLt's FP8 semantics)
  /// With fp8_scaling: scale_d is applied too (false: scale_a and scale_b only, as cuBLASLt with a D that is not FP8,
  /// which neither applies scale_d nor computes amax; the cases with scale_d != 1 are "not supported" for the kernel).
  bool fp8_scale_d = true;
  bool amax = false;                     ///< writes amax = max |act(Z)| (before scale_d) to GemmOperands::amax when asked
  bool active() const { return bias || activations || fp8_scaling || amax; }
  bool takes(BiasKind b) const { return b == BiasKind::None || (bias & bit(b)); }
  bool takes(Activation a) const { return a == Activation::None || (activations & bit(a)); }
};
/// The epilogue in words ("bias per column (bf16), relu, gelu_tanh (erf/tanh/exp within 2^-22); FP8 scales; amax").
std::string describe_epilogue(const EpilogueTraits& e);

/// What the bound model needs to know about a kernel's arithmetic.
struct KernelTraits {
  const Format* a_input = &f32;        ///< format A is passed in (codes in its container)
  const Format* b_input = &f32;
  Rounding input_rounding = Rounding::NearestEven;  ///< how the runner rounds exact source values into a_input/b_input
  const Format* a_operand = &f32;      ///< precision at which the multiplier sees A (tf32 for TF32 tensor cores)
  const Format* b_operand = &f32;
  double operand_u = 0;                ///< effective unit roundoff of split emulations (0: use the operand formats' u)
  std::string operand_note;            ///< derivation of operand_u for split emulations
  bool exact_products = true;          ///< a*b exact (false: rounded to product_format)
  const Format* product_format = nullptr;
  const Format* acc = &f32;            ///< accumulator format
  Rounding acc_rounding = Rounding::NearestEven;
  int promote_every = 0;               ///< partial sums promoted to promote_format every N products (0: never)
  const Format* promote_format = nullptr;
  const Format* out = &f32;            ///< output format
  std::string order;                   ///< the operation order, stated exactly where it is fixed
  SummationOrder sum_order;            ///< the same, machine-readable (kernels/order.hpp): what the bitwise tier emulates
  InputDomain domain;                  ///< where the traits hold (default: every input the formats can store)
  BlockScaling block;                  ///< block-scaled kernels: how A and B are quantized first
  /// The output tile one thread block (or one step of a tiled loop) computes, rows x columns of C (0: not
  /// declared). Only reports read it: the worst elements are shown in tile coordinates (docs/report.md).
  std::int64_t tile_m = 0, tile_n = 0;
  /// Run to run: Deterministic (bitwise reproducible) or RunToRun (an order family whose member changes
  /// between runs; see Determinism). determinism_note says where the claim comes from (documentation, design).
  Determinism determinism = Determinism::Deterministic;
  std::string determinism_note;
  /// The storage layouts the kernel takes, one bit per GemmLayout (GemmLayout::bit); default row-major A, B and C
  /// only. GemmKernel::can_implement_layout reads it; the layout cases of the certify suite are "not supported"
  /// for a combination outside it (docs/suites.md, "layout.transposes").
  std::uint8_t layouts = kLayoutsRowMajor;
  /// M, N and K the kernel takes are multiples of this (1: any shape). cuBLASLt's FP8 GEMM: 16 (cuBLAS documentation,
  /// cublasLtMatmul, "FP8" requirements). The runner answers "not supported" for another shape before can_implement
  /// is asked, and a fault that changes only a partial tile of 16 rows or columns (tail_tile) is not applicable to a
  /// kernel declaring a multiple of 16 (docs/mutation.md).
  std::int64_t shape_multiple = 1;
  /// Batch invariance (deterministic inference, docs/audit.md "Batch invariance"): a row of C does not depend on the
  /// batch size M nor on the row's position in the batch, bit for bit (no split-K, tile or order chosen from M).
  /// `fpcert audit` checks it where declared: each probe row embedded in batches of several sizes and positions must
  /// give its M = 1 result. batch_invariant_note says where the claim comes from.
  bool batch_invariant = false;
  std::string batch_invariant_note;
  /// D = alpha (A B) + beta C as BLAS defines it (docs/suites.md, "epilogue.alpha_beta"): the kernel reads
  /// GemmOperands::alpha, beta and c_in. alpha and beta are values of the accumulator format (the scalar format:
  /// fp32 for the fp32/f16/bf16 GEMMs), C codes of the output format (BLAS's and cublasGemmEx's Ctype). Declared
  /// epilogue: acc the accumulated A B, D = RN_out(RN_acc(RN_acc(alpha acc) + RN_acc(beta c))), or any form with
  /// fewer roundings (an fma of either product with the other rounded); beta = 0 never reads C. Default false:
  /// the kernel gets alpha = 1, beta = 0 and no C, and the alpha/beta cases are "not supported" for it.
  bool alpha_beta = false;
  /// Strided batched GEMM as cublasGemmStridedBatchedEx defines it (docs/suites.md, "batch.strided"): the kernel
  /// computes GemmOperands::batch products, matrix b of A at a + b * stride_a (stride 0: batch 0's A for every
  /// batch, BLAS's broadcast), of B, C and C's input likewise. Default false: the kernel gets batch = 1 and the
  /// batch cases are "not supported" for it.
  bool batched = false;
  /// The fused epilogue (EpilogueTraits; docs/epilogue.md): bias, activation, FP8 scale factors and amax.
  EpilogueTraits epilogue;
};

/// Why a kernel's determinism contradicts its declared order (empty: coherent). A RunToRun kernel has no
/// fixed order: it declares unknown, or split-K with combine=atomic (S fixed chunks, partials added in an
/// unknown arrival order); a Deterministic kernel cannot declare an atomic combine.
std::string determinism_problem(const KernelTraits& t);

/// One GEMM call: C (m x n, ldc) = A (m x k) * B (k x n), pointers in the kernel's memory space, each element a
/// code of the kernel's a_input/b_input/out format stored in that format's container (1, 2, 4 or 8 bytes). Each
/// operand row- or column-major as its layout says (GemmLayout): element (i, j) of a row-major operand at
/// i * ld + j, of a column-major one at j * ld + i. Only layouts the kernel declares are passed (KernelTraits::layouts).
struct GemmOperands {
  std::int64_t m = 0, n = 0, k = 0;
  const void* a = nullptr;
  std::int64_t lda = 0;
  Layout a_layout = Layout::RowMajor;
  const void* b = nullptr;
  std::int64_t ldb = 0;
  Layout b_layout = Layout::RowMajor;
  void* c = nullptr;
  std::int64_t ldc = 0;
  void* stream = nullptr;  ///< cudaStream_t for device kernels
  Layout c_layout = Layout::RowMajor;  ///< column-major: ldc >= m separates C's columns
  GemmLayout layout() const { return {a_layout, b_layout, c_layout}; }
  /// D = alpha (A B) + beta C (KernelTraits::alpha_beta; only such kernels get other values than alpha = 1, beta = 0
  /// and no C). The result D goes to `c` as always; C, the input, at `c_in`: codes of the output format with c's
  /// ldc and layout. c_in == c: in place (BLAS). beta = 0: c_in must not be read (the runner fills it with NaN).
  double alpha = 1, beta = 0;
  const void* c_in = nullptr;
  /// Strided batches (KernelTraits::batched; only such kernels get batch > 1): elements between consecutive
  /// matrices of A, B and C (C's input too, at c_in + b * stride_c). 0 for A or B: the same matrix for every batch;
  /// stride_c separates the outputs (>= C's span).
  std::int64_t batch = 1, stride_a = 0, stride_b = 0, stride_c = 0;
  /// The fused epilogue (KernelTraits::epilogue; only such kernels get anything but the defaults). bias: codes of
  /// the epilogue's bias_format, n of them (PerColumn) or m (PerRow), one vector for every batch; null when
  /// bias_kind is None. scale_a, scale_b, scale_d: values of the accumulator format (fp8_scaling kernels; a kernel
  /// that needs them in device memory copies them there). amax: one value of the accumulator format, in its
  /// container, in the kernel's memory space (null: not asked); with batches, the max over every batch.
  BiasKind bias_kind = BiasKind::None;
  const void* bias = nullptr;
  Activation activation = Activation::None;
  double scale_a = 1, scale_b = 1, scale_d = 1;
  void* amax = nullptr;
};

/// A GEMM case's scalars and C (docs/suites.md, "epilogue.alpha_beta"): alpha and beta (rounded into the kernel's
/// accumulator format before the call), C drawn uniform in [-1, 1) from `c_seed` (rounded into the output format),
/// in place (C's buffer is D's) or in a buffer of its own. Inactive: the plain D = A B call.
struct AlphaBetaCase {
  bool active = false;
  double alpha = 1, beta = 0;
  bool in_place = false;
  std::uint64_t c_seed = 0;
};

/// A GEMM case's fused epilogue (docs/suites.md, "epilogue.*"): the bias (drawn uniform in [-2, 2) from bias_seed,
/// rounded into the kernel's bias format), the activation, the FP8 scale factors (rounded into the accumulator
/// format before the call) and whether amax is asked. Inactive: no epilogue.
struct EpilogueCase {
  bool active = false;
  BiasKind bias = BiasKind::None;
  Activation activation = Activation::None;
  bool fp8_scaling = false;
  double scale_a = 1, scale_b = 1, scale_d = 1;
  bool amax = false;
  std::uint64_t bias_seed = 0;
};

/// Batch b of a strided batched call as a call of one batch: a, b, c and c_in advanced by b times their strides
/// (elements of t's a_input, b_input and out containers), batch = 1. Kernels that loop over batches call it.
GemmOperands batch_slice(const GemmOperands& ops, std::int64_t b, const KernelTraits& t);

/// A strided batched case (docs/suites.md, "batch.strided"): `count` problems of one shape, each with data of its own
/// (seeds apart) unless A or B is broadcast (stride 0: batch 0's matrix for every batch); `gap_rows` stored rows
/// between consecutive matrices of each operand (A and B: its NaN poison, C: the pre-fill, checked unchanged).
/// Inactive (count 1): one matrix.
struct BatchCase {
  std::int64_t count = 1;
  std::int64_t gap_rows = 0;
  bool broadcast_a = false, broadcast_b = false;
  bool active() const { return count > 1; }
};

/// Thrown by run() when the kernel finds out only at run time that it cannot do this call (e.g.
/// cuBLAS answers CUBLAS_STATUS_NOT_SUPPORTED for a compute type on this GPU): the case's verdict
/// is "not supported", not a crash.
struct NotSupportedError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// "Not supported" is a verdict of its own, not a failure.
struct Support {
  bool ok = true;
  std::string reason;
  static Support yes() { return {}; }
  static Support no(std::string why) { return {false, std::move(why)}; }
};

/// What every kernel is: a name, a backend, the memory space its buffers live in, one operation.
class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual Operation operation() const = 0;
  virtual const std::string& name() const = 0;
  virtual std::string description() const = 0;
  virtual Backend backend() const = 0;
  virtual MemorySpace memory() const { return MemorySpace::Host; }
  /// True for the framework's own mutants and deliberately wrong entries (excluded from `fpcert
  /// kernels` and from backend groups unless asked).
  virtual bool is_mutant() const { return false; }
};

/// A GEMM kernel: C = A * B with the traits the bound model reads.
class GemmKernel : public Kernel {
 public:
  Operation operation() const final { return Operation::Gemm; }
  virtual const KernelTraits& traits() const = 0;
  virtual Support can_implement(std::int64_t m, std::int64_t n, std::int64_t k) const {
    (void)m, (void)n, (void)k;
    return Support::yes();
  }
  /// The shape as the runner asks it: traits().shape_multiple first (M, N, K multiples of it), then can_implement.
  Support can_implement_shape(std::int64_t m, std::int64_t n, std::int64_t k) const;
  /// The storage layouts of A, B and C this kernel takes (GemmLayout): asked first, before any other can_implement.
  /// Default: the combinations traits().layouts declares (row-major A, B and C unless the kernel declares more).
  virtual Support can_implement_layout(const GemmLayout& l) const;
  /// The call as it will be made: leading dimensions and base addresses (a kernel with a vector path that needs
  /// 16-byte aligned rows declines a misaligned A or an odd lda here: "not supported", docs/suites.md,
  /// "layout.misaligned_vector"). The runner asks after can_implement, with the buffers the run will use,
  /// before run() sees any data.
  virtual Support can_implement_operands(const GemmOperands& ops) const {
    (void)ops;
    return Support::yes();
  }
  /// Compute C. Throws DeviceError when the device fails; must not throw for ordinary inputs.
  virtual void run(const GemmOperands& ops) = 0;
};

/// What a conversion kernel claims: every result must equal fpcert's conversion of the source code
/// under `rounder`, bit for bit (NaN inputs per the rounder's NaN convention, nan_input_code()).
struct ConversionTraits {
  const Format* src = &f32;
  const Format* dst = &f16;
  Rounder rounder{};
  std::uint64_t seed = 0;  ///< stochastic rounding: the bits of code c are random_bits32(seed, c)
  /// A PRESERVE declared by a plugin of ABI minor 0 or 1 keeps what it meant then: NaN results with
  /// other payload or sign bits are counted apart, not mismatches, unless --strict-nan (ConvertCheckSpec).
  bool nan_counted_apart = false;
};

/// One conversion call: the source codes first, first + 1, ..., first + count - 1.
struct ConvertOperands {
  std::uint64_t first = 0;
  std::int64_t count = 0;
  const void* src = nullptr;  ///< those codes in src's container, in the kernel's memory space
  void* dst = nullptr;        ///< count results in dst's container, in the kernel's memory space
  void* stream = nullptr;     ///< cudaStream_t for device kernels
};

/// A conversion kernel: dst[i] = convert(first + i). Throws NotSupportedError when it cannot do
/// this call, DeviceError when the device fails.
class ConversionKernel : public Kernel {
 public:
  Operation operation() const final { return Operation::Conversion; }
  virtual const ConversionTraits& conversion() const = 0;
  virtual void run(const ConvertOperands& ops) = 0;
};

/// Bytes of a format's container (1, 2, 4 or 8).
inline int container_bytes(const Format& f) { return f.container_bits / 8; }

// ---- registry ----
/// Makes a fresh kernel. A plain function (`&make_foo`) converts implicitly; plugin kernels use
/// closures that carry their library and descriptor.
using KernelFactory = std::function<std::unique_ptr<Kernel>()>;
struct KernelInfo {
  std::string name;
  Backend backend;
  bool mutant;
  KernelFactory make;
  std::string origin;  ///< where it came from: "" for built-ins, the library path for plugins
  Operation operation = Operation::Gemm;
};
/// Every registered kernel: the built-ins (kernels/register.cpp: CPU models, mutants, CUDA kernels and
/// cuBLAS baselines when built with CUDA) are added on first use; plugins add theirs with register_kernel.
std::vector<KernelInfo>& kernel_registry();
/// Register (or replace, by name) a kernel.
void register_kernel(std::string name, Backend backend, bool mutant, KernelFactory make, Operation op = Operation::Gemm);
void register_kernel(KernelInfo info);
/// The registry entry of a kernel; nullptr when unknown.
const KernelInfo* find_kernel_info(const std::string& name);
/// Make a kernel by name; nullptr when unknown.
std::unique_ptr<Kernel> make_kernel(const std::string& name);
/// Make a kernel of one operation by name; nullptr when unknown or of the other operation.
std::unique_ptr<GemmKernel> make_gemm_kernel(const std::string& name);
std::unique_ptr<ConversionKernel> make_conversion_kernel(const std::string& name);
/// Names of the registered kernels of one operation (mutants only when asked), sorted.
std::vector<std::string> kernel_names(bool include_mutants = false, Operation op = Operation::Gemm);
/// One line describing traits: "in f16/f16 (rn) operand f16 exact products, acc f32 (rn), out f32".
std::string describe_traits(const KernelTraits& t);

}  // namespace fpcert
