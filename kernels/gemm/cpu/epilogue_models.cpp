// kernels/gemm/cpu/epilogue_models.cpp — CPU models of GEMMs with a fused epilogue as cuBLASLt's cublasLtMatmul
// computes it (docs/epilogue.md; issue 37), and four deliberately wrong entries built on them (the fixtures of
// docs/suites.md, "epilogue.*": each passes the certify suite without the epilogue cases and fails one of them).
//
// The arithmetic, all of it in fp32 (IEEE binary32, round to nearest even; the build has -ffp-contract=off):
//   acc = fma(a_{K-1}, b_{K-1}, ... fma(a_0, b_0, +0))       k ascending, exact products of the stored operands
//   alpha' = RN(RN(alpha scale_a) scale_b)                   (alpha alone when no scale is passed)
//   z = RN(RN(alpha' acc) + RN(beta c))                      (RN(alpha' acc) when beta = 0: C is never read)
//   z = RN_out(z)                                            only when the traits declare round_before_bias and C is read
//   z = RN(z + bias_j) or RN(z + bias_i)                     per column / per row, the bias exact in fp32
//   z = RN_out(z)                                            only when the traits declare round_before_act
//   y = act(z)                                               ReLU max(z, 0); GELU, SiLU below, through glibc's
//                                                            erff, tanhf, expf (std::erf/tanh/exp on float)
//   amax = max |y|                                           over every element (and batch) of the call
//   D = RN_out(RN(scale_d y))                                (RN_out(y) when scale_d is 1); into e4m3 (no Inf)
//                                                            beyond 464 (448 + half its ulp) NaN, OCP's e4m3 overflow
// GELU (erf) 0.5 z (1 + erf(z RN(1/sqrt 2))), GELU (tanh) 0.5 z (1 + tanh(RN(sqrt(2/pi)) (z + 0.044715 z^3))),
// SiLU z / (1 + exp(-z)), each operation one fp32 rounding. glibc's manual ("Known Maximum Errors in Math Functions")
// lists at most 2 ulp for erff, tanhf and expf on x86_64 and aarch64: func_rel_err = 2 ulp of fp32 = 2^-22.
#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>

#include "base/codes.hpp"
#include "kernels/gemm/cpu/model.hpp"
#include "kernels/register.hpp"
#include "kernels/tc/instruction.hpp"
#include "kernels/tc/probe.hpp"
#include "oracle/fused_dot.hpp"

namespace fpcert {
namespace {

/// What is wrong with a fixture (None: the correct model).
enum class EpiFlaw : std::uint8_t {
  None,
  TanhForErf,   ///< GELU's tanh form computed where the erf form is asked (both declared)
  BiasPerRow,   ///< a bias per column applied per row: element (i, j) gets bias[i mod n]
  AmaxScaled,   ///< amax of the scaled result, max |RN(scale_d y)|, where max |y| is defined
  Beta0ReadsC,  ///< with an epilogue, C read whatever beta: z = RN(RN(alpha' acc) + RN(0 c)), NaN where C is NaN
  ScaleDTwice,  ///< scale_d applied twice: D = RN_out(RN(scale_d RN(scale_d y)))
};

constexpr float kRsqrt2 = 0.70710678118654752440f;   // RN_f32(1/sqrt 2)
constexpr float kSqrt2OverPi = 0.79788456080286535588f;  // RN_f32(sqrt(2/pi))
constexpr float kGeluCubic = 0.044715f;               // RN_f32(0.044715)

float gelu_erf(float z) { return 0.5f * (z * (1.0f + std::erf(z * kRsqrt2))); }
float gelu_tanh(float z) { return 0.5f * (z * (1.0f + std::tanh(kSqrt2OverPi * (z + kGeluCubic * (z * (z * z)))))); }
float silu(float z) { return z / (1.0f + std::exp(-z)); }

float activate(Activation a, float z) {
  switch (a) {
    case Activation::None: return z;
    case Activation::Relu: return std::isnan(z) ? z : (z > 0.0f ? z : 0.0f);
    case Activation::GeluErf: return gelu_erf(z);
    case Activation::GeluTanh: return gelu_tanh(z);
    case Activation::Silu: return silu(z);
  }
  return z;
}

/// max(a, b) that keeps a NaN (an amax of a NaN element is NaN, as a max reduction of |y| with fmaxf would not be).
float nan_max(float a, float b) { return std::isnan(a) || std::isnan(b) ? std::numeric_limits<float>::quiet_NaN() : std::max(a, b); }

class EpilogueModel final : public CpuModel {
 public:
  EpilogueModel(std::string name, std::string desc, KernelTraits t, EpiFlaw flaw)
      : CpuModel(std::move(name), std::move(desc), std::move(t)), flaw_(flaw) {
    if (!(*traits_.acc == f32)) throw std::logic_error("EpilogueModel: the epilogue models accumulate in fp32");
  }
  bool is_mutant() const override { return flaw_ != EpiFlaw::None; }

  /// C as codes of the output format without an epilogue (CpuModel's contract): RN_out(acc).
  std::vector<std::uint64_t> compute(const DecodedOperands& d) const override {
    const std::vector<float> acc = accumulate(d);
    std::vector<std::uint64_t> out(acc.size());
    const Rounder rn = Rounder::nearest(*traits_.out);
    for (std::size_t x = 0; x < acc.size(); ++x) out[x] = round_double(*traits_.out, acc[x], rn).code;
    return out;
  }

  void run(const GemmOperands& ops) override {
    // Strided batches: one call per batch; amax is the max over every batch (each slice writes its own into a local).
    if (ops.batch > 1) {
      float amax = 0.0f;
      for (std::int64_t b = 0; b < ops.batch; ++b) {
        GemmOperands o = batch_slice(ops, b, traits_);
        float part = 0.0f;
        if (ops.amax) o.amax = &part;
        run(o);
        amax = b == 0 ? part : nan_max(amax, part);
      }
      if (ops.amax) store_amax(ops.amax, amax);
      return;
    }
    const EpilogueTraits& e = traits_.epilogue;
    if (ops.bias_kind != BiasKind::None && (!e.takes(ops.bias_kind) || !ops.bias))
      throw std::invalid_argument(name_ + ": called with a bias it does not take");
    if (!e.takes(ops.activation)) throw std::invalid_argument(name_ + ": called with an activation it does not take");
    const DecodedOperands d = decode(ops, traits_);
    const std::vector<float> acc = accumulate(d);
    const Format& out = *traits_.out;
    const Format& bf = e.bias_format ? *e.bias_format : out;
    const int cb = container_bytes(out), bb = container_bytes(bf);
    const bool row = ops.c_layout == Layout::RowMajor;
    const Rounder rn = Rounder::nearest(out);
    const bool fused = ops.bias_kind != BiasKind::None || ops.activation != Activation::None || ops.amax || ops.scale_a != 1 ||
                       ops.scale_b != 1 || ops.scale_d != 1;
    const bool read_c = ops.c_in && (ops.beta != 0 || (flaw_ == EpiFlaw::Beta0ReadsC && fused));
    float alpha = static_cast<float>(ops.alpha);
    if (e.fp8_scaling && (ops.scale_a != 1 || ops.scale_b != 1)) alpha = (alpha * static_cast<float>(ops.scale_a)) * static_cast<float>(ops.scale_b);
    const float beta = static_cast<float>(ops.beta), scale_d = e.fp8_scaling ? static_cast<float>(ops.scale_d) : 1.0f;
    const std::int64_t bias_len = ops.bias_kind == BiasKind::PerRow ? ops.m : ops.n;
    auto bias_at = [&](std::int64_t i, std::int64_t j) -> float {
      std::int64_t x = ops.bias_kind == BiasKind::PerRow ? i : j;
      if (flaw_ == EpiFlaw::BiasPerRow && ops.bias_kind == BiasKind::PerColumn) x = i % bias_len;
      return static_cast<float>(to_double(bf, from_container(bf, load_code(ops.bias, x, bb))));
    };
    const Activation act = flaw_ == EpiFlaw::TanhForErf && ops.activation == Activation::GeluErf ? Activation::GeluTanh : ops.activation;
    float amax = 0.0f;
    for (std::int64_t i = 0; i < ops.m; ++i)
      for (std::int64_t j = 0; j < ops.n; ++j) {
        const std::int64_t at = row ? i * ops.ldc + j : j * ops.ldc + i;
        float z = acc[static_cast<std::size_t>(i * ops.n + j)];
        if (alpha != 1.0f) z = alpha * z;
        if (read_c) z = z + beta * static_cast<float>(to_double(out, from_container(out, load_code(ops.c_in, at, cb))));
        if (e.round_before_bias && read_c && ops.bias_kind != BiasKind::None) z = static_cast<float>(to_double(out, round_double(out, z, rn).code));
        if (ops.bias_kind != BiasKind::None) z = z + bias_at(i, j);
        if (e.round_before_act) z = static_cast<float>(to_double(out, round_double(out, z, rn).code));
        float y = activate(act, z);
        float scaled = scale_d != 1.0f ? y * scale_d : y;
        amax = nan_max(amax, std::fabs(flaw_ == EpiFlaw::AmaxScaled ? scaled : y));
        if (flaw_ == EpiFlaw::ScaleDTwice) scaled = scaled * scale_d;
        store_code(ops.c, at, cb, to_container(out, round_double(out, scaled, rn).code));
      }
    if (ops.amax) store_amax(ops.amax, amax);
  }

 private:
  /// acc: the sequential FMA along K in fp32 on the operands as stored (exact in fp32 for every input format the models
  /// take); or, when the traits carry a tensor-core block model of their own (the cuBLASLt stand-ins), that block:
  /// fused_dot over steps of its fused length from +0, K zero-padded, the step chain added to an fp32 sum (RN) and
  /// restarted from +0 every promote_every products.
  std::vector<float> accumulate(const DecodedOperands& d) const {
    std::vector<float> acc(static_cast<std::size_t>(d.m * d.n));
    const std::optional<FusedDotParams>& card = traits_.sum_order.block_model.params;
    const std::int64_t step = card ? card->fused_length : 1, kp = (d.k + step - 1) / step * step;
    const std::int64_t promote = traits_.promote_every > 0 ? traits_.promote_every : kp;
    // The card's operand codes, once: row i of A at ac[i kp ..], column j of B at bc[j kp ..], zero-padded to kp.
    std::vector<std::uint32_t> ac, bc;
    if (card) {
      const Format &fa = *traits_.a_operand, &fb = *traits_.b_operand;
      ac.assign(static_cast<std::size_t>(d.m * kp), 0);
      bc.assign(static_cast<std::size_t>(d.n * kp), 0);
      for (std::int64_t t = 0; t < d.k; ++t) {
        for (std::int64_t i = 0; i < d.m; ++i)
          ac[static_cast<std::size_t>(i * kp + t)] = static_cast<std::uint32_t>(round_double(fa, d.A(i, t), Rounder::nearest(fa)).code);
        for (std::int64_t j = 0; j < d.n; ++j)
          bc[static_cast<std::size_t>(j * kp + t)] = static_cast<std::uint32_t>(round_double(fb, d.B(t, j), Rounder::nearest(fb)).code);
      }
    }
    for (std::int64_t i = 0; i < d.m; ++i)
      for (std::int64_t j = 0; j < d.n; ++j) {
        float c = 0.0f;
        if (!card) {
          for (std::int64_t t = 0; t < d.k; ++t) c = std::fma(static_cast<float>(d.A(i, t)), static_cast<float>(d.B(t, j)), c);
        } else {
          const std::uint32_t *a = ac.data() + i * kp, *b = bc.data() + j * kp;
          std::uint64_t blk = 0;  // fp32 codes
          for (std::int64_t t = 0; t < kp; t += step) {
            blk = fused_dot(*card, a + t, b + t, static_cast<int>(step), blk);
            if ((t + step) % promote == 0 || t + step == kp) c += std::bit_cast<float>(static_cast<std::uint32_t>(blk)), blk = 0;
          }
        }
        acc[static_cast<std::size_t>(i * d.n + j)] = c;
      }
    return acc;
  }
  /// amax as a value of the accumulator format (fp32) in its container.
  static void store_amax(void* p, float v) { store_code(p, 0, 4, std::bit_cast<std::uint32_t>(v)); }
  EpiFlaw flaw_;
};

const char* kEpiOrder =
    "acc = fma(a[i][k], b[k][j], acc) for k = 0..K-1 in fp32 from +0 (exact products); z = RN(RN(alpha' acc) + RN(beta c)), "
    "alpha' = RN(RN(alpha scale_a) scale_b); z = RN(z + bias); y = act(z) in fp32 (glibc erff/tanhf/expf); amax = max |y|; "
    "D = RN_out(RN(scale_d y))";

/// Every bias kind and activation, FP8 scale factors and amax, in fp32 with glibc's elementary functions; every
/// layout, alpha/beta; batches (CpuModel).
KernelTraits epilogue_traits(const Format& in, const Format& out, const Format* bias_format) {
  KernelTraits t;
  t.a_input = t.b_input = t.a_operand = t.b_operand = &in;
  t.acc = &f32;
  t.out = &out;
  t.order = kEpiOrder;
  t.sum_order = SummationOrder::sequential(StepKind::Fma);
  t.layouts = kLayoutsAll;
  t.alpha_beta = true;
  EpilogueTraits& e = t.epilogue;
  e.bias = bit(BiasKind::PerRow) | bit(BiasKind::PerColumn);
  e.bias_format = bias_format;
  e.activations = bit(Activation::Relu) | bit(Activation::GeluErf) | bit(Activation::GeluTanh) | bit(Activation::Silu);
  e.func_rel_err = 0x1p-22;
  e.func_note = "glibc erff, tanhf, expf: at most 2 ulp of fp32 (the GNU C Library manual, \"Known Maximum Errors in Math Functions\")";
  e.fp8_scaling = true;
  e.amax = true;
  return t;
}

std::unique_ptr<GemmKernel> make(const char* name, const char* desc, KernelTraits t, EpiFlaw flaw) {
  return std::make_unique<EpilogueModel>(name, desc, std::move(t), flaw);
}

std::unique_ptr<GemmKernel> make_f32() {
  return make("model_gemm_f32_epilogue",
              "fp32 in and out, fp32 FMA along K; fused epilogue: bias per row or column, ReLU, GELU (erf, tanh), SiLU in fp32 "
              "(glibc), FP8 scale factors, amax; every layout, alpha/beta",
              epilogue_traits(f32, f32, nullptr), EpiFlaw::None);
}
std::unique_ptr<GemmKernel> make_bf16() {
  return make("model_gemm_bf16_epilogue",
              "bf16 in and out, fp32 accumulation and epilogue, bias bf16: bias per row or column, ReLU, GELU (erf, tanh), SiLU, "
              "scale factors, amax; every layout, alpha/beta",
              epilogue_traits(bf16, bf16, &bf16), EpiFlaw::None);
}
std::unique_ptr<GemmKernel> make_e4m3() {
  return make("model_gemm_e4m3_scaled",
              "e4m3 in, fp32 accumulation, bf16 out, bf16 bias: cuBLASLt's FP8 GEMM, D = scale_d act(scale_a scale_b alpha A B + "
              "beta C + bias), amax of act(Z); every layout, alpha/beta",
              epilogue_traits(e4m3, bf16, &bf16), EpiFlaw::None);
}
std::unique_ptr<GemmKernel> make_e4m3_e4m3out() {
  return make("model_gemm_e4m3_scaled_e4m3out",
              "e4m3 in, fp32 accumulation, e4m3 out (C e4m3), bf16 bias: cuBLASLt's FP8 GEMM with an FP8 D, D = RN_e4m3(scale_d "
              "act(scale_a scale_b alpha A B + beta C + bias)), NaN beyond e4m3's range (no saturation), amax of act(Z) before scale_d; "
              "every layout, alpha/beta",
              epilogue_traits(e4m3, e4m3, &bf16), EpiFlaw::None);
}
/// The FP8 model restricted to the calls cuBLASLt's FP8 GEMM takes (kernels/gemm/cublaslt/cublaslt_gemm.cu, lt_traits):
/// nt/c_row only, M, N, K multiples of 16, a bias per column, ReLU and GELU's tanh form; with a bf16 D no scale_d and no
/// amax; declared as cuBLASLt declares its accumulation and computing it with the Hopper FP8 card (below): a host
/// stand-in that measures, without a GPU, which faults the certify suite can refuse in a kernel given only those calls
/// and that accumulation (docs/epilogue.md, "The FP8 element explained").
KernelTraits lt_fp8_call(KernelTraits t, bool fp8_out) {
  // cuBLASLt's declaration of its accumulation (lt_traits): an unknown order on its FP8 tensor-core instructions, the
  // block results toward zero, promoted to fp32 every 128 products; the stand-in computes it with MMA-Sim's Hopper FP8
  // block (13 alignment bits, results to 13 bits toward zero: the card the H200's probe measured, docs/tensor_cores.md).
  t.acc_rounding = Rounding::TowardZero;
  t.promote_every = 128;
  t.promote_format = &f32;
  t.sum_order = SummationOrder::unknown();
  t.sum_order.block_model.instruction = tc::tc_instructions_for(e4m3, f32);
  t.sum_order.block_model.params = tc::mma_sim_hopper(*tc::find_instruction("wgmma_e4m3_f32"));
  t.sum_order.block_model.source = "MMA-Sim's Hopper FP8 block (wgmma e4m3 -> f32), the stand-in's own arithmetic";
  t.order = "blocks of 32 e4m3 products + C (MMA-Sim's Hopper FP8 block: 13 alignment bits, 13-bit results toward zero) from +0, "
            "the block chain added to an fp32 sum (RN) every 128 products; the epilogue as model_gemm_e4m3_scaled's";
  t.layouts = GemmLayout{Layout::RowMajor, Layout::ColMajor, Layout::RowMajor}.bit();
  t.shape_multiple = 16;
  EpilogueTraits& e = t.epilogue;
  e.bias = bit(BiasKind::PerColumn);
  e.activations = static_cast<std::uint8_t>(bit(Activation::Relu) | bit(Activation::GeluTanh));
  e.fp8_scale_d = fp8_out;
  e.amax = fp8_out;
  return t;
}
std::unique_ptr<GemmKernel> make_lt_call_bf16out() {
  return make("model_gemm_e4m3_ltcall_bf16out",
              "e4m3 in, Hopper FP8 tensor-core blocks promoted to fp32 every 128, bf16 out and bias, given only cuBLASLt's FP8 calls: nt/c_row, M, N, K multiples of 16, bias "
              "per column, ReLU / GELU tanh, scale_a and scale_b (no scale_d, no amax); alpha/beta, batches",
              lt_fp8_call(epilogue_traits(e4m3, bf16, &bf16), false), EpiFlaw::None);
}
std::unique_ptr<GemmKernel> make_lt_call_e4m3out() {
  return make("model_gemm_e4m3_ltcall_e4m3out",
              "e4m3 in, Hopper FP8 tensor-core blocks promoted to fp32 every 128, e4m3 out, bf16 bias, given only cuBLASLt's FP8 calls: nt/c_row, M, N, K multiples of 16, bias "
              "per column, ReLU / GELU tanh, scale_a, scale_b, scale_d, amax; alpha/beta, batches",
              lt_fp8_call(epilogue_traits(e4m3, e4m3, &bf16), true), EpiFlaw::None);
}
std::unique_ptr<GemmKernel> make_scale_d_twice() {
  return make("mutant_gemm_e4m3_scaled_e4m3out_scale_d_twice",
              "fixture: the FP8-output model applying scale_d twice (D = scale_d^2 act(Z)): must fail epilogue_fp8_scaled",
              epilogue_traits(e4m3, e4m3, &bf16), EpiFlaw::ScaleDTwice);
}
std::unique_ptr<GemmKernel> make_tanh_for_erf() {
  return make("mutant_gemm_f32_epilogue_gelu_tanh_for_erf",
              "fixture: the fp32 epilogue model computing GELU's tanh form where the erf form is asked: must fail epilogue_gelu_erf",
              epilogue_traits(f32, f32, nullptr), EpiFlaw::TanhForErf);
}
std::unique_ptr<GemmKernel> make_bias_per_row() {
  return make("mutant_gemm_f32_epilogue_bias_per_row",
              "fixture: the fp32 epilogue model applying a bias per column per row (bias[i mod n]): must fail the per-column cases",
              epilogue_traits(f32, f32, nullptr), EpiFlaw::BiasPerRow);
}
std::unique_ptr<GemmKernel> make_amax_scaled() {
  return make("mutant_gemm_e4m3_scaled_amax_scaled",
              "fixture: the FP8 model reporting the amax of the scaled result (scale_d |act(Z)|): must fail the amax check",
              epilogue_traits(e4m3, bf16, &bf16), EpiFlaw::AmaxScaled);
}
std::unique_ptr<GemmKernel> make_beta0_reads_c() {
  return make("mutant_gemm_f32_epilogue_beta0_reads_c",
              "fixture: the fp32 epilogue model reading C whenever an epilogue is fused, beta = 0 included (0 NaN = NaN): must fail "
              "epilogue_beta0_bias_silu",
              epilogue_traits(f32, f32, nullptr), EpiFlaw::Beta0ReadsC);
}

}  // namespace

std::unique_ptr<CpuModel> make_epilogue_model(std::string name, std::string description, KernelTraits t) {
  return std::make_unique<EpilogueModel>(std::move(name), std::move(description), std::move(t), EpiFlaw::None);
}

KernelTraits epilogue_model_traits(const Format& in, const Format& out, const Format* bias_format) {
  return epilogue_traits(in, out, bias_format);
}

void register_epilogue_models() {
  register_kernel("model_gemm_f32_epilogue", Backend::Cpu, false, &make_f32);
  register_kernel("model_gemm_bf16_epilogue", Backend::Cpu, false, &make_bf16);
  register_kernel("model_gemm_e4m3_scaled", Backend::Cpu, false, &make_e4m3);
  register_kernel("model_gemm_e4m3_scaled_e4m3out", Backend::Cpu, false, &make_e4m3_e4m3out);
  register_kernel("model_gemm_e4m3_ltcall_bf16out", Backend::Cpu, false, &make_lt_call_bf16out);
  register_kernel("model_gemm_e4m3_ltcall_e4m3out", Backend::Cpu, false, &make_lt_call_e4m3out);
  register_kernel("mutant_gemm_e4m3_scaled_e4m3out_scale_d_twice", Backend::Cpu, true, &make_scale_d_twice);
  register_kernel("mutant_gemm_f32_epilogue_gelu_tanh_for_erf", Backend::Cpu, true, &make_tanh_for_erf);
  register_kernel("mutant_gemm_f32_epilogue_bias_per_row", Backend::Cpu, true, &make_bias_per_row);
  register_kernel("mutant_gemm_e4m3_scaled_amax_scaled", Backend::Cpu, true, &make_amax_scaled);
  register_kernel("mutant_gemm_f32_epilogue_beta0_reads_c", Backend::Cpu, true, &make_beta0_reads_c);
}

}  // namespace fpcert
