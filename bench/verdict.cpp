// bench/verdict.cpp — the cost of the verdict tiers against the exact reference of the same case, side by
// side in one run: the exact reference (oracle gemm_reference of the case's inputs), the bitwise tier's
// emulation of the kernel's declared arithmetic (inputs rounded into the kernel's formats included), the
// envelope (the exact reference of the kernel's inputs when storage rounds, the bound per element) and the
// statistical test; then the ratios to the reference. Goal (docs/bound_model.md): emulation <= 2x.
//
// Usage: bench_verdict [M N K] [--kernel NAME]...   (default 256 256 512: the certify suite's size on a device;
//        --kernel: these kernels instead, any GEMM kernel whose order the bitwise tier emulates; e.g. to profile one)
// Inputs: uniform [-1, 1) fp32 values. Threads: $FPCERT_THREADS or all cores. Best of 3 runs each.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "base/parallel.hpp"
#include "generators/generate.hpp"
#include "kernels/emu/bf16_on_fp16.hpp"
#include "kernels/kernel.hpp"
#include "kernels/tc/instruction.hpp"
#include "kernels/tc/probe.hpp"
#include "suites/verdict/block_reference.hpp"
#include "suites/verdict/emulate/emulate.hpp"
#include "suites/verdict/envelope.hpp"
#include "suites/verdict/statistics.hpp"

using namespace fpcert;

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

std::string first_line_of(const char* path, const char* key) {
  std::ifstream f(path);
  std::string line;
  while (std::getline(f, line))
    if (line.rfind(key, 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

template <class F>
double best_of_3(F&& f) {
  double best = 1e300;
  for (int r = 0; r < 3; ++r) {
    const double t0 = now();
    f();
    best = std::min(best, now() - t0);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  std::int64_t m = 256, n = 256, k = 512;
  std::vector<std::string> dims, only;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--kernel" && i + 1 < argc) only.emplace_back(argv[++i]);
    else dims.push_back(arg);
  }
  if (dims.size() == 3) {
    m = std::atoll(dims[0].c_str());
    n = std::atoll(dims[1].c_str());
    k = std::atoll(dims[2].c_str());
  }
  if ((!dims.empty() && dims.size() != 3) || m <= 0 || n <= 0 || k <= 0) {
    fmt::print(stderr, "usage: bench_verdict [M N K] [--kernel NAME]...\n");
    return 2;
  }
  const std::vector<std::string> names =
      !only.empty() ? only
                    : std::vector<std::string>{"model_gemm_f32", "model_gemm_f16_f32acc", "model_gemm_tf32_f32acc", "model_gemm_f16_f16acc",
                                               "model_gemm_e4m3_lpacc_p128", "model_gemm_f32_splitk4", "model_gemm_f32_pairwise",
                                               "model_gemm_3xbf16", "model_gemm_bf16_on_f16_auto",
                                               "model_gemm_mxfp8_e4m3_floor_blocksum_f32acc", "model_gemm_nvfp4_even_blocksum_f32acc"};
  for (const std::string& name : names) {
    const auto probe = make_gemm_kernel(name);
    const std::string why = probe ? emulation_unavailable(probe->traits()) : "no such GEMM kernel";
    if (!why.empty()) {
      fmt::print(stderr, "bench_verdict: {}: {}\n", name, why);
      return 2;
    }
  }
  std::string load;
  {
    std::ifstream f("/proc/loadavg");
    std::getline(f, load);
  }
  fmt::print("machine: {}, {} threads, load average {}\n", first_line_of("/proc/cpuinfo", "model name"), thread_count(), load);
  const Problem p = generate(fmt::format("uniform:m={},n={},k={},seed=2024", m, n, k));
  fmt::print("case: {} ({} products)\n\n", p.spec, m * n * k);
  GemmRef ref;
  const double t_ref = best_of_3([&] { ref = gemm_reference(p.a.view(), p.b.view()); });
  fmt::print("{:<34} {:>10} {:>10} {:>9} {:>10} {:>9} {:>10} {:>9}\n", "kernel (declared order)", "reference", "emulation", "ratio",
             "envelope", "ratio", "statistic", "ratio");
  auto row = [&](const std::string& name, const KernelTraits& t) {
    std::vector<double> a_in, b_in;
    std::vector<std::uint64_t> codes;
    // A block-scaled kernel's inputs are its quantizer's operands (the runner's block_reference, not timed: the
    // exact reference it computes is the case's reference for that kernel).
    std::optional<BlockReference> q;
    if (t.block.active()) q = block_reference(t, p);
    const double t_emu = best_of_3([&] {
      a_in = q ? q->a.data : round_values(p.a.data, *t.a_input, t.input_rounding);
      b_in = q ? q->b.data : round_values(p.b.data, *t.b_input, t.input_rounding);
      codes = emulate_gemm(t, m, n, k, a_in, b_in, q ? TensorScales{q->a_tensor_scale, q->b_tensor_scale} : TensorScales{});
    });
    // The envelope as grading runs it: operands, their exact reference where something rounded, the sums
    // of magnitudes per row and column, the model, every element.
    GemmRef rop;
    EnvelopeModel env;
    std::vector<double> a_op, b_op;
    const double t_env = best_of_3([&] {
      const bool split = t.operand_u > 0;
      a_op = split ? a_in : operand_values(a_in, *t.a_input, *t.a_operand, t.input_rounding);
      b_op = split ? b_in : operand_values(b_in, *t.b_input, *t.b_operand, t.input_rounding);
      const bool same = a_in == p.a.data && b_in == p.b.data;
      rop = q ? q->ref : same ? ref : gemm_reference(MatrixView::row_major(a_in.data(), m, k), MatrixView::row_major(b_in.data(), k, n));
      std::vector<double> ra(static_cast<std::size_t>(m), 0.0), cb(static_cast<std::size_t>(n), 0.0);
      for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t q = 0; q < k; ++q) ra[static_cast<std::size_t>(i)] += std::fabs(a_in[static_cast<std::size_t>(i * k + q)]);
      for (std::int64_t q = 0; q < k; ++q)
        for (std::int64_t j = 0; j < n; ++j) cb[static_cast<std::size_t>(j)] += std::fabs(b_in[static_cast<std::size_t>(q * n + j)]);
      env = make_envelope(t, k);
      const EnvelopeVerdict v = evaluate_envelope(env, *t.out, m, n, rop, codes, ra, cb);
      if (v.exceed) fmt::print(stderr, "{}: the emulation exceeds the envelope ({} elements)\n", name, v.exceed);
    });
    std::vector<double> got(codes.size());
    for (std::size_t x = 0; x < got.size(); ++x) got[x] = to_double(*t.out, codes[x]);
    const bool stat = bias_test_unavailable(t, env).empty();
    const double t_stat = stat ? best_of_3([&] { (void)rn_bias_test(t, env, m, n, k, a_op, b_op, rop.c, rop.abs_sum, got); }) : 0.0;
    fmt::print("{:<34} {:>9.3f}s {:>9.3f}s {:>8.2f}x {:>9.3f}s {:>8.2f}x {:>9} {:>9}\n",
               std::string(name) + " (" + order_spec(t.sum_order).substr(0, 12) + ")", t_ref, t_emu, t_emu / t_ref, t_env,
               t_env / t_ref, stat ? fmt::format("{:.3f}s", t_stat) : "-", stat ? fmt::format("{:.2f}x", t_stat / t_ref) : "-");
  };
  for (const std::string& name : names) row(name, make_gemm_kernel(name)->traits());
  // The tensor-core kernels' emulations (the card's block model composed with each K-loop), with MMA-Sim's
  // published Hopper models as the cards: the H200's validated cards of mma_f16_f32, mma_bf16_f32 and
  // mma_tf32_f32 have the same parameters (docs/tensor_cores.md). Traits as the CUDA kernels declare them.
  if (only.empty()) {
    auto with_card = [](KernelTraits t, const char* insn) {
      t.sum_order.block_model.params = *tc::mma_sim_hopper(*tc::find_instruction(insn));
      t.sum_order.block_model.measured = true;
      return t;
    };
    KernelTraits mma = make_gemm_kernel("model_gemm_f16_f32acc")->traits();
    mma.sum_order = SummationOrder::tensor_core(16, "mma_f16_f32", 32);
    mma.acc_rounding = Rounding::TowardZero;
    KernelTraits split = make_gemm_kernel("model_gemm_3xbf16")->traits();
    split.sum_order = SummationOrder::split_products("3xbf16", OrderKind::TensorCoreBlock, 16);
    split.sum_order.block_model.instruction = "mma_bf16_f32";
    split.sum_order.block_model.pad = 32;
    KernelTraits deq = make_gemm_kernel("model_gemm_mxfp8_e4m3_floor_deqbf16_f32acc")->traits();
    deq.sum_order = SummationOrder::tensor_core(16, "mma_bf16_f32", 32);
    const KernelTraits b16 = bf16_on_f16_traits(*find_bf16_on_f16_policy("auto"), true);
    // Hopper's FP8 wgmma (blocks of 32, a 13-bit window and result) promoted to fp32 every 128 products, as
    // gemm_e4m3_f32acc_wgmma_sm90_promote128 declares it.
    KernelTraits fp8 = make_gemm_kernel("model_gemm_e4m3_lpacc_p128")->traits();
    fp8.sum_order = SummationOrder::tensor_core(32, "wgmma_e4m3_f32", 128);
    fp8.acc_rounding = Rounding::TowardZero;
    fmt::print("tensor-core kernels (card: MMA-Sim's Hopper model, the H200's cards' parameters)\n");
    row("gemm_f16_f32acc_mma_sm80", with_card(mma, "mma_f16_f32"));
    row("gemm_3xbf16_mma_sm80", with_card(split, "mma_bf16_f32"));
    row("gemm_bf16_on_f16_auto_mma_sm80", with_card(b16, "mma_f16_f32"));
    row("gemm_mxfp8_e4m3_floor_deqbf16_f32acc_mma_sm80", with_card(deq, "mma_bf16_f32"));
    row("gemm_e4m3_f32acc_wgmma_sm90_promote128", with_card(fp8, "wgmma_e4m3_f32"));
  }
  fmt::print("\nratio = time / the exact reference's time for the same case (best of 3 each); the envelope includes the "
             "exact reference of the kernel's inputs where storage rounding occurred (fp16, bf16 ...).\n");
  return 0;
}
