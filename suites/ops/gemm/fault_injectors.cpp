// suites/ops/gemm/fault_injectors.cpp — the injectors that realise each fault of suites/mutation/faults.hpp from calls of
// the wrapped kernel (docs/mutation.md derives each realisation).
#include "suites/ops/gemm/fault_injectors.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <map>
#include <optional>

#include "base/codes.hpp"
#include "base/error.hpp"
#include "kernels/device/device_api.hpp"
#include "oracle/refvalue.hpp"
#include "suites/mutation/injector_api.hpp"
#include "suites/ops/gemm/epilogue_faults.hpp"
#include "suites/verdict/bound.hpp"

namespace fpcert {
namespace {

// ---- the kernel's memory, through its DeviceApi ----

/// The host image of a matrix in a kernel's buffer: element (r, c) at r*ld + c (row-major) or c*ld + r
/// (column-major), each in its format's container of cb bytes; the image covers the buffer from the
/// first element to the last, padding between rows (columns) included.
struct Image {
  std::int64_t rows = 0, cols = 0, ld = 0;
  Layout layout = Layout::RowMajor;
  const Format* fmt = &f32;
  std::vector<std::uint8_t> bytes;

  int cb() const { return container_bytes(*fmt); }
  std::int64_t index(std::int64_t r, std::int64_t c) const { return layout == Layout::RowMajor ? r * ld + c : c * ld + r; }
  std::int64_t extent() const {
    if (rows == 0 || cols == 0) return 0;
    return layout == Layout::RowMajor ? (rows - 1) * ld + cols : (cols - 1) * ld + rows;
  }
  std::uint64_t code(std::int64_t r, std::int64_t c) const { return from_container(*fmt, load_code(bytes.data(), index(r, c), cb())); }
  /// Set a code; true when the stored bits changed.
  bool set(std::int64_t r, std::int64_t c, std::uint64_t code) {
    const std::uint64_t bits = to_container(*fmt, code);
    if (load_code(bytes.data(), index(r, c), cb()) == bits) return false;
    store_code(bytes.data(), index(r, c), cb(), bits);
    return true;
  }
  double value(std::int64_t r, std::int64_t c) const { return to_double(*fmt, code(r, c)); }
};

/// A buffer in the kernel's memory space, freed on scope exit.
class Scratch {
 public:
  Scratch(DeviceApi& api, std::size_t bytes) : api_(api), p_(api.alloc(bytes)) {}
  ~Scratch() { api_.free(p_); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  void* get() const { return p_; }

 private:
  DeviceApi& api_;
  void* p_;
};

/// A scratch buffer kept across calls and grown on demand: the K-chunks of one run reuse it.
class ReusedScratch {
 public:
  void* get(DeviceApi& api, std::size_t bytes) {
    bytes = std::max<std::size_t>(1, bytes);
    if (!buf_ || bytes > size_) {
      buf_.reset();
      buf_ = std::make_unique<Scratch>(api, bytes);
      size_ = bytes;
    }
    return buf_->get();
  }

 private:
  std::unique_ptr<Scratch> buf_;
  std::size_t size_ = 0;
};

/// Correct rounding of x + y (exact sum) into f under mode r.
double add_round(const Format& f, Rounding r, double x, double y) {
  const Rounder rr{r, default_saturation(f), NanPayload::Preserve};
  if (!std::isfinite(x) || !std::isfinite(y)) return to_double(f, round_double(f, x + y, rr).code);
  return to_double(f, round_ref(f, ref_from_two_sum(x, y), rr).code);
}

/// `f` with max(1, frac/2) fraction bits: the precision a switched path keeps (same exponent range).
struct HalfPrecision {
  explicit HalfPrecision(const Format& f)
      : tag(std::string(f.tag) + "_half"),
        fmt{tag, tag, f.sign_bits, f.exp_bits, std::max(1, f.frac_bits / 2), f.bias, f.subnormals, f.specials, f.container_bits} {}
  std::string tag;
  Format fmt;
};

class FaultInjector final : public GemmKernel {
 public:
  FaultInjector(std::unique_ptr<GemmKernel> wrapped, Fault f, const FaultOptions& opt)
      : wrapped_(std::move(wrapped)), fault_(f), opt_(opt), name_(mutant_name(wrapped_->name(), f)) {
    // The tail-tile mutant is a kernel tiled in opt.tile x opt.tile outputs: it declares that tile when the
    // kernel it wraps declares none (a report then shows its worst elements in tile coordinates).
    if (f == Fault::TailTile && wrapped_->traits().tile_m == 0) {
      tiled_ = wrapped_->traits();
      tiled_->tile_m = tiled_->tile_n = std::max<std::int64_t>(1, opt_.tile);
    }
  }
  const std::string& name() const override { return name_; }
  std::string description() const override {
    return fmt::format("{} (mutant of {}: {})", fault_info(fault_).what, wrapped_->name(), fault_info(fault_).realisation);
  }
  Backend backend() const override { return wrapped_->backend(); }
  MemorySpace memory() const override { return wrapped_->memory(); }
  const KernelTraits& traits() const override { return tiled_ ? *tiled_ : wrapped_->traits(); }
  Support can_implement(std::int64_t m, std::int64_t n, std::int64_t k) const override { return wrapped_->can_implement(m, n, k); }
  Support can_implement_operands(const GemmOperands& ops) const override { return wrapped_->can_implement_operands(ops); }
  Support can_implement_layout(const GemmLayout& l) const override { return wrapped_->can_implement_layout(l); }
  bool is_mutant() const override { return true; }

  void run(const GemmOperands& ops) override {
    // A fault of one matrix applied to every batch of a strided batched call, one call per batch (an epilogue's amax
    // merged over them); the batch faults change the batched call itself.
    if (ops.batch > 1 && fault_ != Fault::BatchStrideIgnored && fault_ != Fault::BatchLastDropped) {
      run_batches_merging_amax(ops, traits(), api(), [this](const GemmOperands& o) { run(o); });
      return;
    }
    ++calls_;
    bool active = false;
    switch (fault_) {
      case Fault::OutputUlp:
        active = run_then_edit(ops, [&](Image& c) {
          if (c.rows == 0 || c.cols == 0) return false;
          const Format& f = *c.fmt;
          const std::uint64_t code = c.code(c.rows / 2, c.cols / 2);
          const FpClass cls = classify(f, code);
          if (cls == FpClass::NaN || cls == FpClass::Inf) return false;
          const std::uint64_t mag = code & f.magnitude_mask();
          return c.set(c.rows / 2, c.cols / 2, (code & f.sign_mask()) | (mag == f.max_finite_code() ? mag - 1 : mag + 1));
        });
        break;
      case Fault::ZeroRow:
        active = run_then_edit(ops, [](Image& c) {
          bool any = false;
          for (std::int64_t j = 0; j < c.cols && c.rows > 0; ++j) any |= c.set(c.rows - 1, j, 0);
          return any;
        });
        break;
      case Fault::ZeroColumn:
        active = run_then_edit(ops, [](Image& c) {
          bool any = false;
          for (std::int64_t i = 0; i < c.rows && c.cols > 0; ++i) any |= c.set(i, c.cols - 1, 0);
          return any;
        });
        break;
      case Fault::FlushOutputs: active = run_then_edit(ops, [](Image& c) { return edit_codes(c, flush_subnormal); }); break;
      case Fault::NanToZero:
        active = run_then_edit(ops, [](Image& c) {
          return edit_codes(c, [](const Format& f, std::uint64_t code) { return classify(f, code) == FpClass::NaN ? 0 : code; });
        });
        break;
      case Fault::InfToMax:
        active = run_then_edit(ops, [](Image& c) {
          return edit_codes(c, [](const Format& f, std::uint64_t code) {
            return classify(f, code) == FpClass::Inf ? (code & f.sign_mask()) | f.max_finite_code() : code;
          });
        });
        break;
      case Fault::WritesNan:
        active = run_then_edit(ops, [](Image& c) { return c.rows > 0 && c.cols > 0 && c.set(0, 0, c.fmt->canonical_nan_code()); });
        break;
      case Fault::DropLastProduct:
        active = run_on_inputs(ops, [](Image& a, Image&) {
          bool any = false;
          for (std::int64_t i = 0; i < a.rows && a.cols > 0; ++i) any |= a.set(i, a.cols - 1, 0);
          return any;
        });
        break;
      case Fault::TransposedB:
        active = run_on_inputs(ops, [](Image&, Image& b) {
          // B'(p, j) = the (j K + p)-th element of B's row-major sequence: B read column-major with ld = K.
          Image t = b;
          bool any = false;
          for (std::int64_t p = 0; p < b.rows; ++p)
            for (std::int64_t j = 0; j < b.cols; ++j) {
              const std::int64_t f = j * b.rows + p;
              any |= t.set(p, j, b.code(f / b.cols, f % b.cols));
            }
          b = std::move(t);
          return any;
        });
        break;
      case Fault::LdaIgnored:
        active = run_on_inputs(ops, [](Image& a, Image&) {
          // A'(i, p) = the element at offset i*K + p (row-major; p*M + i column-major) of A's buffer.
          Image t = a;
          bool any = false;
          const std::int64_t inner = a.layout == Layout::RowMajor ? a.cols : a.rows;
          for (std::int64_t i = 0; i < a.rows; ++i)
            for (std::int64_t p = 0; p < a.cols; ++p) {
              const std::int64_t off = a.layout == Layout::RowMajor ? i * inner + p : p * inner + i;
              any |= t.set(i, p, from_container(*a.fmt, load_code(a.bytes.data(), off, a.cb())));
            }
          a = std::move(t);
          return any;
        });
        break;
      case Fault::TransposedLd:
        active = run_on_inputs(ops, [](Image& a, Image& b) {
          // A column-major operand read with its column length (A: M, B: K) as stride: X'(r, c) = offset c*rows + r.
          bool any = false;
          for (Image* x : {&a, &b}) {
            if (x->layout != Layout::ColMajor) continue;
            Image t = *x;
            for (std::int64_t r = 0; r < x->rows; ++r)
              for (std::int64_t c = 0; c < x->cols; ++c)
                any |= t.set(r, c, from_container(*x->fmt, load_code(x->bytes.data(), c * x->rows + r, x->cb())));
            *x = std::move(t);
          }
          return any;
        });
        break;
      case Fault::Beta0ReadsC: {
        if (ops.beta != 0 || !ops.c_in) {
          call(ops);
          break;
        }
        // C as it was before the call (in place, the call overwrites it), then D + 0 * c element by element.
        const Image cin = download(ops.c_in, ops.m, ops.n, ops.ldc, ops.c_layout, *traits().out);
        active = run_then_edit(ops, [&](Image& c) {
          bool any = false;
          for (std::int64_t i = 0; i < c.rows; ++i)
            for (std::int64_t j = 0; j < c.cols; ++j) {
              const FpClass k = classify(*c.fmt, cin.code(i, j));
              if (k == FpClass::NaN || k == FpClass::Inf) any |= c.set(i, j, c.fmt->canonical_nan_code());
            }
          return any;
        });
        break;
      }
      case Fault::BetaIgnored: {
        GemmOperands o = ops;
        active = o.beta != 0;
        o.beta = 0;
        call(o);
        break;
      }
      case Fault::BatchStrideIgnored: {
        GemmOperands o = ops;
        active = o.batch > 1 && o.stride_a != 0;
        o.stride_a = 0;
        call(o);
        break;
      }
      case Fault::BatchLastDropped: {
        GemmOperands o = ops;
        active = o.batch > 1;
        o.batch = std::max<std::int64_t>(1, o.batch - 1);
        call(o);
        break;
      }
      case Fault::TailTile:
        active = run_on_inputs(ops, [&](Image& a, Image& b) {
          bool any = false;
          const std::int64_t T = std::max<std::int64_t>(1, opt_.tile);
          if (a.rows % T)
            for (std::int64_t i = a.rows / T * T; i < a.rows; ++i)
              for (std::int64_t p = 0; p < a.cols; ++p) any |= a.set(i, p, 0);
          if (b.cols % T)
            for (std::int64_t j = b.cols / T * T; j < b.cols; ++j)
              for (std::int64_t p = 0; p < b.rows; ++p) any |= b.set(p, j, 0);
          return any;
        });
        break;
      case Fault::PrecisionSwitch:
        active = run_on_inputs(ops, [&](Image& a, Image& b) {
          const KernelTraits& t = traits();
          const HalfPrecision ha(storage_format(*t.a_input, *t.a_operand)), hb(storage_format(*t.b_input, *t.b_operand));
          bool any = false;
          for (std::int64_t i = 0; i < a.rows; ++i)
            for (std::int64_t p = opt_.switch_k; p < a.cols; ++p) any |= a.set(i, p, narrow(*a.fmt, ha.fmt, a.code(i, p)));
          for (std::int64_t p = opt_.switch_k; p < b.rows; ++p)
            for (std::int64_t j = 0; j < b.cols; ++j) any |= b.set(p, j, narrow(*b.fmt, hb.fmt, b.code(p, j)));
          return any;
        });
        break;
      case Fault::FlushInputs:
        active = run_on_inputs(ops, [](Image& a, Image& b) {
          const bool in_a = edit_codes(a, flush_subnormal);  // both operands flushed: no short circuit
          const bool in_b = edit_codes(b, flush_subnormal);
          return in_a || in_b;
        });
        break;
      case Fault::OneRunInN:
        if (calls_ % std::max(1, opt_.one_in) == 0)
          active = run_on_inputs(ops, [](Image& a, Image& b) {
            // Rotated rather than reversed: a pairwise tree over a reversed power-of-two K adds the same
            // pairs, mirrored (x + y = y + x), and would not change a bit.
            const Image a0 = a, b0 = b;
            bool any = false;
            for (std::int64_t i = 0; i < a.rows; ++i)
              for (std::int64_t p = 0; p < a.cols; ++p) any |= a.set(i, p, a0.code(i, (p + 1) % a.cols));
            for (std::int64_t p = 0; p < b.rows; ++p)
              for (std::int64_t j = 0; j < b.cols; ++j) any |= b.set(p, j, b0.code((p + 1) % b.rows, j));
            return any;
          });
        else
          call(ops);
        break;
      case Fault::AccF16: active = run_accumulating(ops, f16, Rounding::NearestEven); break;
      case Fault::AccBf16: active = run_accumulating(ops, bf16, Rounding::NearestEven); break;
      case Fault::AccF32: active = run_accumulating(ops, f32, Rounding::NearestEven); break;
      case Fault::AccTowardZero: active = run_accumulating(ops, *traits().acc, Rounding::TowardZero); break;
      case Fault::OutputTowardZero: active = run_output_toward_zero(ops); break;
      case Fault::UnwrittenRow: active = run_unwritten_row(ops); break;
      case Fault::WritePastEnd: {
        call(ops);
        const int cb = container_bytes(*traits().out);
        const std::vector<std::uint8_t> zero(static_cast<std::size_t>(cb), 0);
        const std::int64_t lines = ops.c_layout == Layout::RowMajor ? ops.m : ops.n;  // C's stored rows (columns when column-major)
        api().to_device(static_cast<std::uint8_t*>(ops.c) + lines * ops.ldc * cb, zero.data(), zero.size());
        active = true;
        break;
      }
      case Fault::ClobbersA: {
        call(ops);
        if (ops.m > 0 && ops.k > 0) {
          const Format& f = *traits().a_input;
          const int cb = container_bytes(f);
          std::vector<std::uint8_t> one(static_cast<std::size_t>(cb));
          api().to_host(one.data(), ops.a, one.size());
          store_code(one.data(), 0, cb, to_container(f, from_container(f, load_code(one.data(), 0, cb)) ^ f.sign_mask()));
          api().to_device(const_cast<void*>(ops.a), one.data(), one.size());
          active = f.sign_mask() != 0;
        }
        break;
      }
      case Fault::RedDropElement:
      case Fault::RedWrongTree:
      case Fault::RedAccF16:
      case Fault::RedUnscaledNrm2:
      case Fault::RedNanToZero:  // reduction faults (suites/ops/reduce/reduce_faults.hpp): never made for a GEMM kernel
      case Fault::SmxNoMaxShift:  // softmax faults (suites/ops/softmax/softmax_faults.hpp): never made for a GEMM kernel
      case Fault::SmxWrongRescale:
      case Fault::SmxMaskAfterExp:
      case Fault::SmxF16RowSum:
      case Fault::SmxNanMaskedRows:
      case Fault::SmxZeros:
      case Fault::NormEpsOutsideSqrt:  // norm faults (suites/ops/norm/norm_faults.hpp): never made for a GEMM kernel
      case Fault::NormBessel:
      case Fault::NormNoMeanSubtract:
      case Fault::NormOnePassVariance:
      case Fault::NormF16RowSum:
      case Fault::NormAffineSwapped:
      case Fault::NormAffineIgnored:
      case Fault::NormZeros:
      case Fault::AttnNoRescale:  // attention faults (suites/ops/attention/attention_faults.hpp): never made for a GEMM kernel
      case Fault::AttnScaleAfterSoftmax:
      case Fault::AttnCausalOffByOne:
      case Fault::AttnLseNoMax:
      case Fault::AttnPRoundedLower:
      case Fault::AttnDropLastKeyBlock:
      case Fault::AttnZeros:
      case Fault::AttnDescaleVDropped:
      case Fault::SbwdNoDotSubtract:
      case Fault::SbwdDotF16:
      case Fault::SbwdScaleMissing:
      case Fault::SbwdScaleTwice:
      case Fault::SbwdLogNoExp:
      case Fault::SbwdZeros:
      case Fault::NbwdNoMeanTerm:
      case Fault::NbwdNoProjTerm:
      case Fault::NbwdGammaIgnored:
      case Fault::NbwdRstdSquared:
      case Fault::NbwdDGammaF16:
      case Fault::NbwdDGammaNoXhat:
      case Fault::NbwdZeros:
      case Fault::AbwdDFromWrongO:
      case Fault::AbwdNoDSubtract:
      case Fault::AbwdDqScaleMissing:
      case Fault::AbwdDqScaleTwice:
      case Fault::AbwdLseWrongBase:
      case Fault::AbwdGqaNotSummed:
      case Fault::AbwdDqAtomicsBf16:
      case Fault::AbwdCausalOffByOne:
      case Fault::AbwdZeros:
      case Fault::EltUlpAway:  // elementwise faults (issue 42): suites/ops/elementwise/eltwise_faults.hpp
      case Fault::EltNarrowBf16:
      case Fault::EltFtz:
      case Fault::EltDaz:
      case Fault::EltAbsInput:
      case Fault::EltLargeArg:
      case Fault::EltNanToZero:
      case Fault::EltInfToMax:
      case Fault::EltHeadUnwritten:
      case Fault::EltWritePastEnd:
      case Fault::EltClobbersX:
      case Fault::EltZeros:
        wrapped_->run(ops);
        break;
      case Fault::EpiBiasIgnored:  // epilogue faults (issue 37): suites/ops/gemm/epilogue_faults.hpp
      case Fault::EpiBiasPerRow:
      case Fault::EpiBiasScaledByAlpha:
      case Fault::EpiActivationDropped:
      case Fault::EpiGeluFormSwapped:
      case Fault::EpiScaleDIgnored:
      case Fault::EpiScaleBIgnored:
      case Fault::EpiAmaxScaled:
        active = run_epilogue_fault(fault_, ops, traits(), api(), [this](const GemmOperands& o) { call(o); });
        break;
    }
    note_activity(name_, active, activity_exact(fault_));
  }

 private:
  DeviceApi& api() { return injector_api(api_, memory(), wrapped_->name()); }

  /// Run the wrapped kernel on `o` on the injector's stream and wait for it (a hang becomes DeviceError).
  void call(const GemmOperands& o) {
    GemmOperands x = o;
    x.stream = api().stream();
    wrapped_->run(x);
    api().synchronize(opt_.timeout_ms);
  }

  Image download(const void* p, std::int64_t rows, std::int64_t cols, std::int64_t ld, Layout layout, const Format& f) {
    Image im;
    im.rows = rows;
    im.cols = cols;
    im.ld = ld;
    im.layout = layout;
    im.fmt = &f;
    im.bytes.resize(static_cast<std::size_t>(im.extent() * im.cb()));
    if (!im.bytes.empty()) api().to_host(im.bytes.data(), p, im.bytes.size());
    return im;
  }
  void upload(void* p, const Image& im) {
    if (!im.bytes.empty()) api().to_device(p, im.bytes.data(), im.bytes.size());
  }
  Image image_a(const GemmOperands& o) { return download(o.a, o.m, o.k, o.lda, o.a_layout, *traits().a_input); }
  Image image_b(const GemmOperands& o) { return download(o.b, o.k, o.n, o.ldb, o.b_layout, *traits().b_input); }
  Image image_c(const GemmOperands& o) { return download(o.c, o.m, o.n, o.ldc, o.c_layout, *traits().out); }

  /// Run the kernel, then change its output on the host; whether the edit changed anything.
  bool run_then_edit(const GemmOperands& ops, const std::function<bool(Image&)>& edit) {
    call(ops);
    Image c = image_c(ops);
    const bool changed = edit(c);
    if (changed) upload(ops.c, c);
    return changed;
  }

  /// Run the kernel on changed copies of its inputs (same leading dimensions and layouts).
  bool run_on_inputs(const GemmOperands& ops, const std::function<bool(Image&, Image&)>& edit) {
    Image a = image_a(ops), b = image_b(ops);
    const bool changed = edit(a, b);
    Scratch sa(api(), std::max<std::size_t>(1, a.bytes.size())), sb(api(), std::max<std::size_t>(1, b.bytes.size()));
    upload(sa.get(), a);
    upload(sb.get(), b);
    GemmOperands o = ops;
    o.a = sa.get();
    o.b = sb.get();
    call(o);
    return changed;
  }

  /// The shortest K the kernel supports for these M, N (powers of two up to K): its chunk.
  std::int64_t chunk_length(const GemmOperands& ops) const {
    for (std::int64_t kc = 1; kc <= std::max<std::int64_t>(1, ops.k); kc *= 2)
      if (wrapped_->can_implement_shape(ops.m, ops.n, kc).ok) return kc;
    throw NotSupportedError(fmt::format("fault injector: {} supports no K <= {} at M = {}, N = {} to run K-chunks", wrapped_->name(),
                                        ops.k, ops.m, ops.n));
  }

  /// The kernel's result on products [k0, k1) (padded with zero products to a multiple of `kc`), as
  /// values of its output format, row-major m x n.
  std::vector<double> partial(const GemmOperands& ops, const Image& a, const Image& b, std::int64_t k0, std::int64_t k1, std::int64_t kc) {
    const std::int64_t len = (k1 - k0 + kc - 1) / kc * kc;
    const KernelTraits& t = traits();
    // The chunks keep the call's layouts of A and B (a kernel may take only some: cuBLASLt's FP8 takes A row-major
    // and B column-major only), unpadded; C row-major.
    const bool a_col = ops.a_layout == Layout::ColMajor, b_col = ops.b_layout == Layout::ColMajor;
    Image ca{ops.m, len, a_col ? ops.m : len, ops.a_layout, t.a_input, {}}, cb{len, ops.n, b_col ? len : ops.n, ops.b_layout, t.b_input, {}};
    ca.bytes.assign(static_cast<std::size_t>(ca.extent() * ca.cb()), 0);
    cb.bytes.assign(static_cast<std::size_t>(cb.extent() * cb.cb()), 0);
    for (std::int64_t i = 0; i < ops.m; ++i)
      for (std::int64_t p = k0; p < k1; ++p) ca.set(i, p - k0, a.code(i, p));
    for (std::int64_t p = k0; p < k1; ++p)
      for (std::int64_t j = 0; j < ops.n; ++j) cb.set(p - k0, j, b.code(p, j));
    const std::size_t c_bytes = static_cast<std::size_t>(ops.m * ops.n * container_bytes(*t.out));
    void* sa = chunk_a_.get(api(), ca.bytes.size());
    void* sb = chunk_b_.get(api(), cb.bytes.size());
    void* sc = chunk_c_.get(api(), c_bytes);
    upload(sa, ca);
    upload(sb, cb);
    GemmOperands o = without_epilogue(ops);  // the partial products alone: a fused epilogue is not the chunks' to apply
    o.k = len;
    o.a = sa;
    o.lda = ca.ld;
    o.a_layout = ops.a_layout;
    o.b = sb;
    o.ldb = cb.ld;
    o.b_layout = ops.b_layout;
    o.c = sc;
    o.ldc = ops.n;
    o.c_layout = Layout::RowMajor;
    o.alpha = 1;  // the partial products alone: an alpha/beta epilogue is not the chunks' to apply
    o.beta = 0;
    o.c_in = nullptr;
    call(o);
    const Image c = download(sc, ops.m, ops.n, ops.n, Layout::RowMajor, *t.out);
    std::vector<double> v(static_cast<std::size_t>(ops.m * ops.n));
    for (std::int64_t i = 0; i < ops.m; ++i)
      for (std::int64_t j = 0; j < ops.n; ++j) v[static_cast<std::size_t>(i * ops.n + j)] = c.value(i, j);
    return v;
  }

  /// Write values into C (rounded into the output format with `r`), keeping its padding.
  void write_output(const GemmOperands& ops, const std::vector<double>& v, Rounding r) {
    Image c = image_c(ops);
    const Format& f = *c.fmt;
    const Rounder rr{r, default_saturation(f), NanPayload::Preserve};
    for (std::int64_t i = 0; i < ops.m; ++i)
      for (std::int64_t j = 0; j < ops.n; ++j) c.set(i, j, round_double(f, v[static_cast<std::size_t>(i * ops.n + j)], rr).code);
    upload(ops.c, c);
  }

  /// The partial sums of K-chunks combined on the host as acc = round_{acc, r}(acc + partial).
  bool run_accumulating(const GemmOperands& ops, const Format& acc, Rounding r) {
    const std::int64_t kc = chunk_length(ops);
    const Image a = image_a(ops), b = image_b(ops);
    std::vector<double> sum(static_cast<std::size_t>(ops.m * ops.n), 0.0);
    int chunks = 0;
    for (std::int64_t k0 = 0; k0 < ops.k || chunks == 0; k0 += kc, ++chunks) {
      const std::vector<double> p = partial(ops, a, b, k0, std::min(ops.k, k0 + kc), kc);
      for (std::size_t x = 0; x < sum.size(); ++x) sum[x] = add_round(acc, r, sum[x], p[x]);
    }
    write_output(ops, sum, Rounding::NearestEven);
    return chunks > 1;
  }

  /// C = RZ_out(P + Q): P the first K - chunk products, Q the last chunk.
  bool run_output_toward_zero(const GemmOperands& ops) {
    const std::int64_t kc = chunk_length(ops);
    if (ops.k <= kc) {  // one chunk: the kernel's own output is already its last rounding
      call(ops);
      return false;
    }
    const Image a = image_a(ops), b = image_b(ops);
    const std::int64_t split = (ops.k - 1) / kc * kc;  // the last chunk holds products split..K-1
    const std::vector<double> p = partial(ops, a, b, 0, split, kc), q = partial(ops, a, b, split, ops.k, kc);
    const Format& out = *traits().out;
    std::vector<double> sum(p.size());
    for (std::size_t x = 0; x < sum.size(); ++x) {
      // One rounding of the exact P + Q, toward zero: round_ref carries the exact sum.
      const Rounder rz{Rounding::TowardZero, default_saturation(out), NanPayload::Preserve};
      sum[x] = std::isfinite(p[x]) && std::isfinite(q[x]) ? to_double(out, round_ref(out, ref_from_two_sum(p[x], q[x]), rz).code)
                                                          : p[x] + q[x];
    }
    write_output(ops, sum, Rounding::TowardZero);
    return true;
  }

  bool run_unwritten_row(const GemmOperands& ops) {
    const int cb = container_bytes(*traits().out);
    const bool row = ops.c_layout == Layout::RowMajor;
    const std::size_t bytes = static_cast<std::size_t>(std::max<std::int64_t>(1, (row ? ops.m : ops.n) * ops.ldc * cb));
    Scratch sc(api(), bytes);
    GemmOperands o = ops;
    o.c = sc.get();
    call(o);
    if (!row) {  // column-major C: rows 0..m-2 of every column, element by element
      const Image s = download(sc.get(), ops.m, ops.n, ops.ldc, Layout::ColMajor, *traits().out);
      Image c = image_c(ops);
      for (std::int64_t i = 0; i + 1 < ops.m; ++i)
        for (std::int64_t j = 0; j < ops.n; ++j) c.set(i, j, s.code(i, j));
      upload(ops.c, c);
      return ops.m > 0 && ops.n > 0;
    }
    const Image c = download(sc.get(), ops.m, ops.n, ops.ldc, Layout::RowMajor, *traits().out);
    for (std::int64_t i = 0; i + 1 < ops.m; ++i)  // rows 0..m-2, the n written columns of each
      api().to_device(static_cast<std::uint8_t*>(ops.c) + i * ops.ldc * cb, c.bytes.data() + i * ops.ldc * cb,
                      static_cast<std::size_t>(ops.n * cb));
    return ops.m > 0 && ops.n > 0;
  }

  static std::uint64_t flush_subnormal(const Format& f, std::uint64_t code) {
    return classify(f, code) == FpClass::Subnormal ? code & f.sign_mask() : code;
  }
  /// Apply a code-to-code map to every element; whether anything changed.
  template <class F>
  static bool edit_codes(Image& im, F map) {
    bool any = false;
    for (std::int64_t r = 0; r < im.rows; ++r)
      for (std::int64_t c = 0; c < im.cols; ++c) any |= im.set(r, c, map(*im.fmt, im.code(r, c)));
    return any;
  }
  /// A code of `in` rounded (nearest) to the narrower `half`, as a code of `in` again (exact).
  static std::uint64_t narrow(const Format& in, const Format& half, std::uint64_t code) {
    const double v = to_double(in, code);
    if (!std::isfinite(v)) return code;
    const double h = to_double(half, round_double(half, v, Rounder::nearest(half)).code);
    return round_double(in, h, Rounder::nearest(in)).code;
  }

  std::unique_ptr<GemmKernel> wrapped_;
  Fault fault_;
  FaultOptions opt_;
  std::string name_;
  std::optional<KernelTraits> tiled_;  ///< the traits with a declared tile (TailTile; see the constructor)
  std::unique_ptr<DeviceApi> api_;
  ReusedScratch chunk_a_, chunk_b_, chunk_c_;  // after api_: freed before it
  long calls_ = 0;

 public:
  static void note_activity(const std::string& name, bool active, bool exact);

 private:
  /// Whether the fault's `active` false means the outputs are the wrapped kernel's own, bit for bit: the output edits
  /// (active: a stored code changed), the input edits (a value changed; the kernel runs on copies), the batch and beta
  /// conditions. One Run In N alternates runs and the accumulator faults report a split call, not changed bits.
  static bool activity_exact(Fault f) {
    switch (f) {
      case Fault::OutputUlp:
      case Fault::ZeroRow:
      case Fault::ZeroColumn:
      case Fault::FlushOutputs:
      case Fault::NanToZero:
      case Fault::InfToMax:
      case Fault::WritesNan:
      case Fault::DropLastProduct:
      case Fault::TransposedB:
      case Fault::LdaIgnored:
      case Fault::TransposedLd:
      case Fault::Beta0ReadsC:
      case Fault::BetaIgnored:
      case Fault::BatchStrideIgnored:
      case Fault::BatchLastDropped:
      case Fault::TailTile:
      case Fault::PrecisionSwitch:
      case Fault::FlushInputs: return true;
      default: return false;
    }
  }
};

std::map<std::string, FaultActivity>& activity() {
  static std::map<std::string, FaultActivity> a;
  return a;
}

void FaultInjector::note_activity(const std::string& name, bool active, bool exact) {
  FaultActivity& a = activity()[name];
  ++a.runs;
  a.active += active;
  a.inexact += !exact;
}

}  // namespace

std::string register_gemm_mutant(const std::string& kernel, Fault f, const FaultOptions& opt) {
  const KernelInfo* info = find_kernel_info(kernel);
  if (!info) throw InputError("unknown kernel '" + kernel + "' (fpcert kernels lists them)");
  const std::string name = mutant_name(kernel, f);
  register_kernel(name, info->backend, true, [kernel, f, opt]() -> std::unique_ptr<GemmKernel> {
    return make_fault_injector(make_gemm_kernel(kernel), f, opt);
  });
  return name;
}

std::unique_ptr<GemmKernel> make_fault_injector(std::unique_ptr<GemmKernel> wrapped, Fault f, const FaultOptions& opt) {
  if (!wrapped) throw std::invalid_argument("make_fault_injector: no kernel to wrap");
  return std::make_unique<FaultInjector>(std::move(wrapped), f, opt);
}

FaultActivity fault_activity(const std::string& mutant) {
  const auto it = activity().find(mutant);
  return it == activity().end() ? FaultActivity{} : it->second;
}

void reset_fault_activity(const std::string& mutant) { activity().erase(mutant); }

namespace {
std::atomic<int> dormant_scopes{0};
}  // namespace
ScopedDormantVerdicts::ScopedDormantVerdicts() { ++dormant_scopes; }
ScopedDormantVerdicts::~ScopedDormantVerdicts() { --dormant_scopes; }
bool dormant_verdicts() { return dormant_scopes.load() > 0; }

}  // namespace fpcert
