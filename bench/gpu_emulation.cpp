// bench/gpu_emulation.cpp — throughput of the emulated-precision kernels (docs/emulation.md), measured
// side by side in one run:
//   1. split products (3xTF32 rn/rz, 1/3/6/9xBF16) at M = N = K in {2048, 4096, 8192}: time, TFLOP/s
//      (2MNK / time: the fp32 GEMM's work), the effective rate relative to cuBLAS COMPUTE_32F_PEDANTIC
//      on the same shape, the split pre-pass (T_overhead) and the MMA stage timed on their own, and the
//      break-even condition P_low / P_32 > m / (1 - T_overhead / T_32) evaluated from measured numbers:
//      m the scheme's slice products, P_low the measured rate of one low-precision product (the 1xBF16
//      kernel's MMA stage for bf16 schemes, the tf32 mma.sync kernel for tf32 schemes), P_32 and T_32
//      cuBLAS pedantic fp32's;
//   2. BF16 on FP16: time per stage (exponent reduction, packing, MMA, rescale epilogue, fallback) and
//      end to end for every strategy, next to the native bf16 mma.sync kernel and cuBLAS bf16 (fp32
//      accumulation), on ordinary bf16 data and on data with 1% outliers times 2^40;
//   3. block-scaled GEMMs (MX, NVFP4; deqbf16 and blocksum, mma.sync and wgmma + TMA) end to end from fp32 inputs, next
//      to the native bf16 wgmma kernel and cuBLAS bf16, each wgmma kernel against its mma.sync twin;
//   and, for 1. and 2., Hopper's native rates: the wgmma + TMA kernels (issue 43) at the same shape ('wgmma pred': the split
//   scheme's T_overhead + m slice products at that rate; 'vs wgmma': the native bf16 wgmma time / end to end), and the
//   split schemes' own wgmma + TMA kernels (gemm_<scheme>_wgmma_sm90) measured beside their mma.sync versions, P_low
//   from their family (the 1xBF16 wgmma kernel's MMA stage; gemm_tf32_f32acc_wgmma_sm90).
// Every time is the median of 10 launches after 3 warm-ups (CUDA events, no copies); inputs are random
// and never zero. Exits 0 with a message when there is no CUDA device.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "bench/gpu_bench.hpp"
#include "kernels/device/device_api.hpp"
#include "kernels/emu/bf16_on_fp16.hpp"
#include "kernels/emu/split.hpp"
#include "kernels/kernel.hpp"
#include "kernels/register.hpp"

using namespace fpcert;
using bench::DeviceBuffer;
using bench::random_codes;

namespace {

constexpr int kWarmups = 3, kTimed = 10;

/// A and B (N x N) of one format on the device, and C.
struct Operands {
  std::unique_ptr<DeviceBuffer> a, b, c;
  GemmOperands ops;
  Operands(DeviceApi& api, const Format& f, std::int64_t N, int outlier_pct) {
    const std::size_t elems = static_cast<std::size_t>(N * N), bytes = elems * static_cast<std::size_t>(container_bytes(f));
    a = std::make_unique<DeviceBuffer>(api, bytes);
    b = std::make_unique<DeviceBuffer>(api, bytes);
    c = std::make_unique<DeviceBuffer>(api, elems * 4);
    const auto ha = random_codes(f, elems, 1 + static_cast<std::uint64_t>(N), outlier_pct);
    const auto hb = random_codes(f, elems, 2 + static_cast<std::uint64_t>(N), outlier_pct);
    api.to_device(a->p, ha.data(), bytes);
    api.to_device(b->p, hb.data(), bytes);
    ops.m = ops.n = ops.k = N;
    ops.a = a->p, ops.lda = N, ops.b = b->p, ops.ldb = N, ops.c = c->p, ops.ldc = N;
    ops.stream = api.stream();
  }
};

/// Median time of run() in ms (3 warm-ups, 10 timed launches); < 0 when not supported.
double time_kernel(GemmKernel& k, const GemmOperands& ops, DeviceApi& api, std::string& why) {
  const Support sup = k.can_implement(ops.m, ops.n, ops.k);
  if (!sup.ok) {
    why = sup.reason;
    return -1;
  }
  try {
    return bench::median_launch_ms(k, ops, api, kWarmups, kTimed);
  } catch (const NotSupportedError& e) {
    why = e.what();
    return -1;
  }
}

double tflops(std::int64_t N, double ms) { return 2.0 * static_cast<double>(N) * static_cast<double>(N) * static_cast<double>(N) / (ms * 1e-3) / 1e12; }

double stage(const std::vector<StageTime>& st, const std::string& name) {
  for (const auto& s : st)
    if (s.name == name) return s.ms;
  return 0;
}

struct SplitRow {
  const char* kernel;
  const char* scheme;
};
// The mma.sync kernels, then their wgmma + TMA versions (issue 43), each family with its own P_low.
const SplitRow kSplit[] = {{"gemm_3xtf32_mma_sm80", "3xtf32"},   {"gemm_3xtf32rz_mma_sm80", "3xtf32_rz"},
                           {"gemm_1xbf16_mma_sm80", "1xbf16"},    {"gemm_3xbf16_mma_sm80", "3xbf16"},
                           {"gemm_6xbf16_mma_sm80", "6xbf16"},    {"gemm_9xbf16_mma_sm80", "9xbf16"},
                           {"gemm_1xbf16_wgmma_sm90", "1xbf16"},  {"gemm_3xtf32_wgmma_sm90", "3xtf32"},
                           {"gemm_3xtf32rz_wgmma_sm90", "3xtf32_rz"}, {"gemm_3xbf16_wgmma_sm90", "3xbf16"},
                           {"gemm_6xbf16_wgmma_sm90", "6xbf16"},  {"gemm_9xbf16_wgmma_sm90", "9xbf16"}};

int split_products(DeviceApi& api) {
  std::printf("\n=== 1. split products vs cuBLAS COMPUTE_32F_PEDANTIC (fp32 in, fp32 out) ===\n");
  std::printf("time = end to end (pre-pass + MMA GEMM); TFLOP/s = 2 N^3 / time (the fp32 GEMM's work); rate vs fp32 = T_32 / time "
              "(> 1: faster than cuBLAS pedantic fp32)\n");
  std::printf("break-even (docs/emulation.md): emulation time ~ T_overhead + m T_low with T_low = 2 N^3 / P_low, so it beats\n"
              "fp32 iff P_low / P_32 > m / (1 - T_overhead / T_32); m = the scheme's slice products, P_low = one low-precision\n"
              "product's measured rate (bf16: the 1xBF16 kernel's MMA stage; tf32: gemm_tf32_f32acc_mma_sm80), P_32 = cuBLAS\n"
              "pedantic fp32's. 'predicted' = T_overhead + m T_low against the measured time: how far the fused kernel is from\n"
              "m separate low-precision GEMMs.\n");
  for (const std::int64_t N : {std::int64_t{2048}, std::int64_t{4096}, std::int64_t{8192}}) {
    std::printf("\nM = N = K = %lld\n", static_cast<long long>(N));
    Operands f32ops(api, f32, N, 0);
    std::string why;
    auto ped = make_gemm_kernel("cublas_gemm_f32_pedantic");
    auto tf32k = make_gemm_kernel("gemm_tf32_f32acc_mma_sm80");
    const double t32 = ped ? time_kernel(*ped, f32ops.ops, api, why) : -1;
    if (t32 <= 0) {
      std::printf("cublas_gemm_f32_pedantic not available (%s): no reference, skipping this size\n", why.c_str());
      continue;
    }
    const double p32 = tflops(N, t32);
    const double ttf = tf32k ? time_kernel(*tf32k, f32ops.ops, api, why) : -1;
    std::printf("%-34s %10.4f ms %8.2f TFLOP/s   (P_32, T_32)\n", "cublas_gemm_f32_pedantic", t32, p32);
    if (ttf > 0) std::printf("%-34s %10.4f ms %8.2f TFLOP/s   (P_low of tf32 schemes)\n", "gemm_tf32_f32acc_mma_sm80", ttf, tflops(N, ttf));
    // Hopper's native rates (issue 43): the wgmma + TMA kernels at the same shape. 'wgmma pred' = T_overhead + m T_low with
    // T_low these kernels' time: what the scheme would take with its slice products at Hopper's native rate.
    double tw_tf32 = -1, tw_bf16 = -1;
    {
      auto wt = make_gemm_kernel("gemm_tf32_f32acc_wgmma_sm90");
      tw_tf32 = wt ? time_kernel(*wt, f32ops.ops, api, why) : -1;
      if (tw_tf32 > 0) std::printf("%-34s %10.4f ms %8.2f TFLOP/s   (Hopper's tf32 rate; B row-major: transposed first)\n", "gemm_tf32_f32acc_wgmma_sm90", tw_tf32, tflops(N, tw_tf32));
      else std::printf("%-34s not supported here: %s\n", "gemm_tf32_f32acc_wgmma_sm90", why.c_str());
      Operands bops(api, bf16, N, 0);
      auto wb = make_gemm_kernel("gemm_bf16_f32acc_wgmma_sm90");
      tw_bf16 = wb ? time_kernel(*wb, bops.ops, api, why) : -1;
      if (tw_bf16 > 0) std::printf("%-34s %10.4f ms %8.2f TFLOP/s   (Hopper's bf16 rate)\n", "gemm_bf16_f32acc_wgmma_sm90", tw_bf16, tflops(N, tw_bf16));
    }
    double p_low_bf16 = -1, p_low_bf16_wg = -1;
    std::printf("%-26s %2s %10s %9s %8s %10s %10s %9s %9s %10s %10s %10s  %s\n", "kernel", "m", "time ms", "TFLOP/s", "vs fp32", "T_oh ms",
                "MMA ms", "P_low/P32", "needed", "predicted", "wgmma pred", "verdict", "measured");
    for (const SplitRow& row : kSplit) {
      auto k = make_gemm_kernel(row.kernel);
      const SplitScheme* sc = find_split_scheme(row.scheme);
      if (!k || !sc) {
        std::printf("%-26s not registered\n", row.kernel);
        continue;
      }
      const double t = time_kernel(*k, f32ops.ops, api, why);
      if (t <= 0) {
        std::printf("%-26s not supported: %s\n", row.kernel, why.c_str());
        continue;
      }
      auto* staged = dynamic_cast<StagedKernel*>(k.get());
      const std::vector<StageTime> st = staged ? staged->time_stages(f32ops.ops, kWarmups, kTimed) : std::vector<StageTime>{};
      const double toh = stage(st, "split pre-pass (T_overhead)"), tmma = stage(st, "MMA GEMM");
      const int m = static_cast<int>(sc->terms.size());
      const bool bf16s = *sc->slice == bf16;
      // P_low per family: the 1xBF16 kernel's MMA stage (mma.sync or wgmma); tf32: the plain tf32 kernel of the family.
      const bool wg = std::string(row.kernel).find("_wgmma_") != std::string::npos;
      if (bf16s && m == 1) (wg ? p_low_bf16_wg : p_low_bf16) = tflops(N, tmma);
      const double p_low_tf32 = wg ? (tw_tf32 > 0 ? tflops(N, tw_tf32) : -1) : (ttf > 0 ? tflops(N, ttf) : -1);
      const double p_low = bf16s ? (wg ? p_low_bf16_wg : p_low_bf16) : p_low_tf32;
      if (p_low <= 0) {
        std::printf("%-26s %2d %10.4f %9.2f %8.3f %10.4f %10.4f  (no P_low measured)\n", row.kernel, m, t, tflops(N, t), t32 / t, toh, tmma);
        continue;
      }
      const double needed = static_cast<double>(m) / (1.0 - toh / t32);
      const double have = p_low / p32;
      const bool model_wins = toh < t32 && have > needed;
      const double predicted = toh + m * (2.0 * static_cast<double>(N) * N * N / (p_low * 1e12)) * 1e3;
      const double tw = bf16s ? tw_bf16 : tw_tf32;
      const double wpred = tw > 0 ? toh + m * tw : NAN;
      std::printf("%-26s %2d %10.4f %9.2f %8.3f %10.4f %10.4f %9.3f %9.3f %10.4f %10.4f %10s  %s\n", row.kernel, m, t, tflops(N, t), t32 / t, toh,
                  tmma, have, needed, predicted, wpred, model_wins ? "wins" : "loses",
                  t < t32 ? "emulation faster than fp32" : "fp32 faster than emulation");
    }
  }
  std::printf("\n'verdict' applies the break-even condition to the measured rates (wins: P_low / P_32 > needed); 'measured' compares\n"
              "the kernel's own end-to-end time with cuBLAS pedantic fp32 on the same shape. They can disagree where the fused\n"
              "kernel runs slower or faster than m separate low-precision GEMMs ('predicted' vs 'time ms').\n");
  return 0;
}

int bf16_on_fp16(DeviceApi& api) {
  std::printf("\n=== 2. BF16 on FP16 tensor cores: time per stage and end to end, next to native bf16 ===\n");
  std::printf("stages (ms): reduce = exponent reduction and plans; pack = bf16 -> fp16 with scales (+ outlier lists); MMA = the\n"
              "fp16 mma.sync GEMM with its power-of-two rescale; rescale = MMA minus the same MMA with the multiplications skipped;\n"
              "fallback = the outliers' fp32 path; end to end = run() as a whole. vs native = native bf16 mma.sync time / end to end.\n");
  for (const int outlier_pct : {0, 1}) {
    std::printf("\ninputs: random bf16 in +-[2^-4, 1)%s\n", outlier_pct ? ", 1% of the entries times 2^40 (lines span ~44 binades)" : "");
    for (const std::int64_t N : {std::int64_t{2048}, std::int64_t{4096}, std::int64_t{8192}}) {
      std::printf("\nM = N = K = %lld\n", static_cast<long long>(N));
      Operands ops(api, bf16, N, outlier_pct);
      std::string why;
      auto native = make_gemm_kernel("gemm_bf16_f32acc_mma_sm80");
      auto cub = make_gemm_kernel("cublas_gemm_bf16_f32acc");
      const double tn = native ? time_kernel(*native, ops.ops, api, why) : -1;
      const double tc = cub ? time_kernel(*cub, ops.ops, api, why) : -1;
      auto wg = make_gemm_kernel("gemm_bf16_f32acc_wgmma_sm90");
      const double tw = wg ? time_kernel(*wg, ops.ops, api, why) : -1;
      std::printf("%-36s %10.4f ms %8.2f TFLOP/s\n", "gemm_bf16_f32acc_mma_sm80 (native)", tn, tn > 0 ? tflops(N, tn) : 0.0);
      std::printf("%-36s %10.4f ms %8.2f TFLOP/s\n", "gemm_bf16_f32acc_wgmma_sm90 (Hopper)", tw, tw > 0 ? tflops(N, tw) : 0.0);
      std::printf("%-36s %10.4f ms %8.2f TFLOP/s\n", "cublas_gemm_bf16_f32acc", tc, tc > 0 ? tflops(N, tc) : 0.0);
      std::printf("%-40s %8s %8s %8s %8s %8s %10s %9s %8s %8s  %s\n", "kernel", "reduce", "pack", "MMA", "rescale", "fallback", "end2end",
                  "TFLOP/s", "vs nat", "vs wgmma", "tiles / outliers");
      std::vector<std::string> names;  // every strategy on mma.sync, then on wgmma + TMA (issue 43)
      for (const auto& pol : bf16_on_f16_policies()) names.push_back(bf16_on_f16_kernel_name(pol));
      for (const auto& pol : bf16_on_f16_policies()) names.push_back(bf16_on_f16_wgmma_kernel_name(pol));
      for (const std::string& name : names) {
        auto k = make_gemm_kernel(name);
        if (!k) {
          std::printf("%-36s not registered\n", name.c_str());
          continue;
        }
        const Support sup = k->can_implement(N, N, N);
        if (!sup.ok) {
          std::printf("%-36s not supported: %s\n", name.c_str(), sup.reason.c_str());
          continue;
        }
        auto* staged = dynamic_cast<StagedKernel*>(k.get());
        const std::vector<StageTime> st = staged->time_stages(ops.ops, kWarmups, kTimed);
        const double e2e = time_kernel(*k, ops.ops, api, why);
        const Bf16OnF16Stats s = dynamic_cast<Bf16OnF16Kernel*>(k.get())->last_stats();
        std::printf("%-40s %8.4f %8.4f %8.4f %8.4f %8.4f %10.4f %9.2f %8.3f %8.3f  %lld row / %lld K-block, %lld outliers, %s\n", name.c_str(),
                    stage(st, "exponent reduction"), stage(st, "packing"), stage(st, "MMA with rescale"),
                    stage(st, "rescale epilogue (difference)"), stage(st, "fallback (fp32 outlier path)"), e2e, tflops(N, e2e),
                    tn > 0 ? tn / e2e : 0.0, tw > 0 ? tw / e2e : 0.0, static_cast<long long>(s.tiles_row), static_cast<long long>(s.tiles_kblock),
                    static_cast<long long>(s.a.outliers + s.b.outliers), s.lossless() ? "lossless" : "LOSSY");
      }
    }
  }
  return 0;
}

int block_scaled(DeviceApi& api) {
  std::printf("\n=== 3. block-scaled GEMMs (OCP MX, NVFP4) emulated on tensor cores: end to end from fp32 inputs ===\n");
  std::printf("time = run() as a whole: quantize A and B along K, the 16-bit operands, the GEMM (deqbf16: dequantized bf16 GEMM;\n"
              "blocksum: exact block sums on fp16, scaled per block); vs bf16 wgmma = the native bf16 wgmma GEMM's time / time;\n"
              "vs mma.sync = the kernel's mma.sync twin's time / time (> 1: the wgmma + TMA version is faster).\n");
  std::vector<std::string> names;
  for (const std::string& name : kernel_names()) {
    const KernelInfo* info = find_kernel_info(name);
    if (!info || info->backend != Backend::Cuda) continue;
    auto k = make_gemm_kernel(name);
    if (k && k->traits().block.active()) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  for (const std::int64_t N : {std::int64_t{2048}, std::int64_t{4096}, std::int64_t{8192}}) {
    std::printf("\nM = N = K = %lld\n", static_cast<long long>(N));
    Operands ops(api, f32, N, 0), bops(api, bf16, N, 0);
    std::string why;
    auto wb = make_gemm_kernel("gemm_bf16_f32acc_wgmma_sm90");
    auto cub = make_gemm_kernel("cublas_gemm_bf16_f32acc");
    const double tw = wb ? time_kernel(*wb, bops.ops, api, why) : -1;
    const double tc = cub ? time_kernel(*cub, bops.ops, api, why) : -1;
    std::printf("%-48s %10.4f ms %8.2f TFLOP/s\n", "gemm_bf16_f32acc_wgmma_sm90 (native bf16)", tw, tw > 0 ? tflops(N, tw) : 0.0);
    std::printf("%-48s %10.4f ms %8.2f TFLOP/s\n", "cublas_gemm_bf16_f32acc", tc, tc > 0 ? tflops(N, tc) : 0.0);
    std::printf("%-48s %10s %9s %14s %12s\n", "kernel", "time ms", "TFLOP/s", "vs bf16 wgmma", "vs mma.sync");
    std::map<std::string, double> times;
    for (const std::string& name : names) {
      auto k = make_gemm_kernel(name);
      const double t = time_kernel(*k, ops.ops, api, why);
      if (t <= 0) {
        std::printf("%-48s not supported: %s\n", name.c_str(), why.c_str());
        continue;
      }
      times[name] = t;
      std::string twin = name;
      const std::size_t at = twin.find("_wgmma_sm90");
      double vs_twin = 0;
      if (at != std::string::npos) {
        twin.replace(at, 11, "_mma_sm80");
        if (times.count(twin)) vs_twin = times[twin] / t;
      }
      std::printf("%-48s %10.4f %9.2f %14.3f %12s\n", name.c_str(), t, tflops(N, t), tw > 0 ? tw / t : 0.0,
                  vs_twin > 0 ? std::to_string(vs_twin).substr(0, 5).c_str() : "-");
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // An optional argument runs one part: "split" (1.), "bf16" (2.) or "block" (3.); none runs all three.
  const std::string only = argc > 1 ? argv[1] : "";
  if (!only.empty() && only != "split" && only != "bf16" && only != "block") {
    std::fprintf(stderr, "usage: bench_gpu_emulation [split|bf16|block]\n");
    return 2;
  }
  std::string why;
  auto api = make_cuda_api(&why);
  if (!api) {
    std::printf("bench_gpu_emulation: no CUDA device (%s): nothing to measure\n", why.c_str());
    return 0;
  }
  const DeviceInfo d = api->info();
  std::printf("device: %s, sm_%d%d, %d SMs, %d MHz; CUDA runtime %s, cuBLAS %s; binary archs %s\n", d.name.c_str(), d.cc_major,
              d.cc_minor, d.sm_count, d.clock_mhz, d.runtime.c_str(), d.cublas.c_str(), d.arch_flags.c_str());
  std::printf("every time: median of %d launches after %d warm-ups (CUDA events), inputs random and never zero\n", kTimed, kWarmups);
  try {
    if (only.empty() || only == "split") split_products(*api);
    if (only.empty() || only == "bf16") bf16_on_fp16(*api);
    if (only.empty() || only == "block") block_scaled(*api);
  } catch (const DeviceError& e) {
    std::printf("device error: %s\n", e.what());
    return 3;
  }
  return 0;
}
