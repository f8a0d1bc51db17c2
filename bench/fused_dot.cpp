// bench/fused_dot.cpp — throughput of the block fused dot product model (oracle/fused_dot.hpp) on one
// core, beside a plain fp32 dot product (a sequential fmaf loop on the same inputs, decoded to float) for
// scale, in one run. Elements are products: a dot of k inputs counts k.
//
// Usage: bench_fused_dot [DOTS]   (default 2,000,000 dot products per configuration)
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/machine.hpp"
#include "kernels/tc/probe.hpp"

using namespace fpcert;

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

using bench::cpu_model;
using bench::load_average;

}  // namespace

int main(int argc, char** argv) {
  const std::uint64_t dots = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 2'000'000;
  fmt::print("block fused dot model vs plain fp32 dot, one core; {} dots per configuration\n", dots);
  fmt::print("machine: {} (load average {})\n\n", cpu_model(), load_average());
  fmt::print("{:<16} {:>3} {:>14} {:>14} {:>14} {:>9} {:>9}  {}\n", "instruction", "k", "model elem/s", "general elem/s", "fp32 elem/s",
             "general/m", "model/fp32", "model");
  for (const char* id : {"mma_f16_f32", "mma_f16_f16", "mma_bf16_f32", "mma_tf32_f32", "wgmma_e4m3_f32", "mma_e4m3_f32"}) {
    const tc::InstructionSpec& s = *tc::find_instruction(id);
    // mma_e4m3_f32: Hopper's emulation as the H200's card has it (docs/tensor_cores.md, "FP8 mma.sync on
    // Hopper"; no published model): two f16 blocks of 16 dealt in runs of 2, C added last.
    const auto published = tc::mma_sim_hopper(s);
    FusedDotParams p = published ? *published : tc::starting_params(s);
    if (!published) p.fused_length = 16, p.interleave_run = 2, p.c_join = CJoin::LastRn;
    // Inputs: the validation's normal distribution (one MMA's rows and columns reused as dots).
    const int k = s.k;
    const std::uint64_t per = 4096;
    const tc::MmaBatch b = tc::validation_batch(s, tc::Distribution::Normal, 7, 0, static_cast<int>((per + s.m - 1) / s.m), nullptr);
    std::vector<float> fa(b.a.size()), fb(b.b.size()), fc(b.c.size());
    for (std::size_t i = 0; i < b.a.size(); ++i) fa[i] = static_cast<float>(to_double(*s.a, from_container(*s.a, b.a[i])));
    for (std::size_t i = 0; i < b.b.size(); ++i) fb[i] = static_cast<float>(to_double(*s.b, from_container(*s.b, b.b[i])));
    for (std::size_t i = 0; i < b.c.size(); ++i) fc[i] = static_cast<float>(to_double(*s.acc, b.c[i]));
    const std::size_t rows = b.a.size() / static_cast<std::size_t>(k), cols = b.b.size() / static_cast<std::size_t>(k);
    std::uint64_t sink = 0;
    double t = now();
    for (std::uint64_t d = 0; d < dots; ++d) {
      const std::size_t r = d % rows, c = (d / rows) % cols;
      sink += fused_dot(p, &b.a[r * static_cast<std::size_t>(k)], &b.b[c * static_cast<std::size_t>(k)], k, b.c[d % b.c.size()]);
    }
    const double t_model = now() - t;
    // The same dots through the general (128-bit window) path: fused_dot's fast path side by side with it.
    t = now();
    for (std::uint64_t d = 0; d < dots; ++d) {
      const std::size_t r = d % rows, c = (d / rows) % cols;
      sink += fused_dot_reference(p, &b.a[r * static_cast<std::size_t>(k)], &b.b[c * static_cast<std::size_t>(k)], k, b.c[d % b.c.size()]);
    }
    const double t_general = now() - t;
    float fsink = 0;
    t = now();
    for (std::uint64_t d = 0; d < dots; ++d) {
      const std::size_t r = d % rows, c = (d / rows) % cols;
      float acc = fc[d % fc.size()];
      const float* x = &fa[r * static_cast<std::size_t>(k)];
      const float* y = &fb[c * static_cast<std::size_t>(k)];
      for (int i = 0; i < k; ++i) acc = std::fmaf(x[i], y[i], acc);
      fsink += acc;
    }
    const double t_fp32 = now() - t;
    const double elems = static_cast<double>(dots) * k;
    fmt::print("{:<16} {:>3} {:>14.3e} {:>14.3e} {:>14.3e} {:>8.2f}x {:>8.1f}x  {} (sink {} {})\n", id, k, elems / t_model,
               elems / t_general, elems / t_fp32, t_general / t_model, t_model / t_fp32,
               published ? "MMA-Sim Hopper parameters" : "the H200 card's emulated structure", sink % 10, fsink != 0 ? 1 : 0);
  }
  return 0;
}
