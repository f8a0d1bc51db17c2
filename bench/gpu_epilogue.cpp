// bench/gpu_epilogue.cpp — a Linear layer's GEMM with its bias and GELU, fused and unfused, side by side in one run
// (docs/epilogue.md, "CUDA subjects"): bf16 A (M x K, row-major) times bf16 B (K x N, stored column-major: the weight
// as Linear keeps it), bf16 D, a bf16 bias per column, GELU's tanh form:
//   fused     cublaslt_bf16_epilogue with CUBLASLT_EPILOGUE_GELU_BIAS (one cublasLtMatmul)
//   unfused   cublaslt_bf16_epilogue plain, then the built-in's separate bias + GELU pass over D (bias_act_bf16_pass_cuda)
//   simt      simt_bf16_epilogue_cuda with the same epilogue fused (the SIMT built-in: a subject, not a fast kernel)
// M = N = K in {2048, 4096, 8192} (the SIMT kernel up to 4096: the median of 3 after 1 warm-up), random non-zero
// inputs; the median of 10 timed runs after 3 warm-ups (CUDA events, no copies); ratio = unfused time / this row's time (> 1: faster than unfused). The
// machine is printed first. Exits 0 with a message when there is no CUDA device.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "base/error.hpp"
#include "bench/gpu_bench.hpp"
#include "bench/machine.hpp"
#include "kernels/device/device_api.hpp"
#include "kernels/kernel.hpp"
#include "kernels/register.hpp"

using namespace fpcert;
using bench::DeviceBuffer;

int main() {
  auto api = bench::open_device("bench_gpu_epilogue");
  if (!api) return 0;
  std::printf("host: %s, load %s\n", bench::cpu_model().c_str(), bench::load_average().c_str());
  std::printf("time: median of 10 runs after 3 warm-ups (CUDA events), TFLOP/s = 2*M*N*K / time; ratio = unfused / row "
              "(> 1: faster than cuBLASLt plain + the separate bias/GELU pass)\n");
  constexpr int kWarmups = 3, kTimed = 10;
  auto lt = make_gemm_kernel("cublaslt_bf16_epilogue");
  auto simt = make_gemm_kernel("simt_bf16_epilogue_cuda");
  if (!lt || !simt) {
    std::printf("bench_gpu_epilogue: cublaslt_bf16_epilogue or simt_bf16_epilogue_cuda is not registered\n");
    return 2;
  }
  for (const std::int64_t N : {std::int64_t{2048}, std::int64_t{4096}, std::int64_t{8192}}) {
    const std::size_t elems = static_cast<std::size_t>(N * N);
    std::printf("\nM = N = K = %lld, bf16 in/out, bias bf16 per column, GELU (tanh form)\n%-58s %10s %9s %8s\n", static_cast<long long>(N),
                "run", "ms", "TFLOP/s", "ratio");
    try {
      DeviceBuffer a(*api, elems * 2), b(*api, elems * 2), d(*api, elems * 2), bias(*api, static_cast<std::size_t>(N) * 2);
      const auto ha = bench::random_codes(bf16, elems, 11 + static_cast<std::uint64_t>(N));
      const auto hb = bench::random_codes(bf16, elems, 12 + static_cast<std::uint64_t>(N));
      const auto hbias = bench::random_codes(bf16, static_cast<std::size_t>(N), 13);
      api->to_device(a.p, ha.data(), ha.size());
      api->to_device(b.p, hb.data(), hb.size());
      api->to_device(bias.p, hbias.data(), hbias.size());
      GemmOperands ops;
      ops.m = ops.n = ops.k = N;
      ops.a = a.p, ops.lda = N;
      ops.b = b.p, ops.ldb = N, ops.b_layout = Layout::ColMajor;
      ops.c = d.p, ops.ldc = N;
      ops.stream = api->stream();
      GemmOperands fused = ops;
      fused.bias_kind = BiasKind::PerColumn, fused.bias = bias.p, fused.activation = Activation::GeluTanh;
      const double flop = 2.0 * static_cast<double>(N) * static_cast<double>(N) * static_cast<double>(N);
      const double unfused = bench::median_ms(
          [&] {
            lt->run(ops);
            bias_act_bf16_pass_cuda(d.p, N, N, N, bias.p, Activation::GeluTanh, api->stream());
          },
          *api, kWarmups, kTimed);
      const double plain = bench::median_launch_ms(*lt, ops, *api, kWarmups, kTimed);
      const double lt_fused = bench::median_launch_ms(*lt, fused, *api, kWarmups, kTimed);
      const auto row = [&](const char* what, double ms) {
        std::printf("%-58s %10.4f %9.2f %8.3f\n", what, ms, flop / (ms * 1e-3) / 1e12, unfused / ms);
      };
      row("cuBLASLt plain + separate bias/GELU pass (unfused)", unfused);
      row("cuBLASLt plain (no epilogue; the GEMM alone)", plain);
      row("cuBLASLt GELU_BIAS fused", lt_fused);
      if (N <= 4096) row("simt_bf16_epilogue_cuda, bias + GELU fused", bench::median_launch_ms(*simt, fused, *api, 1, 3));
    } catch (const NotSupportedError& e) {
      std::printf("not supported: %s\n", e.what());
    } catch (const DeviceError& e) {
      std::printf("device error: %s\n", e.what());
      return 3;
    }
    std::fflush(stdout);
  }
  return 0;
}
