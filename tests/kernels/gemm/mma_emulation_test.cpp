// tests/kernels/gemm/mma_emulation_test.cpp — the mma.sync GEMM's device code (kernels/gemm/cuda/mma_kernel.cuh)
// run on the host, without a GPU: every CUDA thread is a std::thread, __syncthreads a std::barrier, and
// mma.sync a warp-collective emulation that rebuilds the 16 x K and K x 8 operand tiles from the 32
// lanes' registers with the PTX ISA's fragment tables ("Matrix Fragments for mma.m16n8k8 / k16 / k32",
// written here element by element as the ISA states them, independently of the kernel's word-level
// formulation). The emulated MMA adds the block's exact products to the accumulator and rounds once
// (to fp32 nearest, or to 13 fraction bits toward zero, the FP8 accumulator model), so the kernel's
// output is predictable bit for bit from a reference that walks K in the kernel's order (blocks of
// the MMA's K, ascending; promotion every N products). What this proves: the staging, the transposed
// B tile, the fragment loads, the K tails, the M/N edges, the ldc handling and the promotion counter.
// What it cannot prove: the hardware's own MMA arithmetic — tests/kernels/gemm/mma_gpu_test.cpp does that on a device.
#include <doctest/doctest.h>

#include <array>
#include <atomic>
#include <barrier>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "base/philox.hpp"
#include "kernels/gemm/cpu/model.hpp"
#include "oracle/round.hpp"
#include "tests/support/test_seed.hpp"

// ---- the CUDA surface the kernel uses, for the host ----
#include "tests/support/cuda_host_surface.hpp"

#include "kernels/gemm/cuda/mma_kernel.cuh"
#include "tests/support/mma_fragments.hpp"

using namespace fpcert;
using namespace fpcert::mma_emulated;
using namespace fpcert::test;

namespace {

/// The accumulator the emulated MMA rounds into after adding its block.
enum class AccModel { RoundNearestF32, TowardZero13 };
AccModel g_acc_model = AccModel::RoundNearestF32;
std::atomic<int> g_unrounded_tf32{0};  // tf32 operands whose low 13 bits were not cleared by the kernel

const Format& acc13() { return *make_cpu_model("model_gemm_e4m3_lpacc")->traits().acc; }  // f32r13

double acc_round(double exact) {
  if (g_acc_model == AccModel::RoundNearestF32) return static_cast<float>(exact);  // one RN rounding
  const Rounder rz{Rounding::TowardZero, Saturation::Inf, NanPayload::Preserve};
  return to_double(acc13(), round_double(acc13(), exact, rz).code);
}

thread_local WarpExchange* tl_warp = nullptr;

const Format& operand_format(Mma t) {
  switch (t) {
    case Mma::F16: return f16;
    case Mma::BF16: return bf16;
    case Mma::TF32: return tf32;
    case Mma::E4M3: return e4m3;
    case Mma::E5M2: return e5m2;
  }
  return f32;
}

/// Value of element i of a lane's fragment (register and position as the PTX ISA packs them).
double element(Mma t, const std::uint32_t* regs, int i) {
  switch (t) {
    case Mma::F16:
    case Mma::BF16: return to_double(operand_format(t), (regs[i / 2] >> (16 * (i % 2))) & 0xFFFF);
    case Mma::E4M3:
    case Mma::E5M2: return to_double(operand_format(t), (regs[i / 4] >> (8 * (i % 4))) & 0xFF);
    case Mma::TF32:
      if (regs[i] & 0x1FFF) g_unrounded_tf32.fetch_add(1);
      return static_cast<double>(std::bit_cast<float>(regs[i]));
  }
  return 0;
}

}  // namespace

namespace fpcert::mma_emulated {

template <Mma T>
void emulated_mma(float (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2]) {
  warp_mma(*tl_warp, T, static_cast<int>(threadIdx.x) & 31, d, a, b,
           [](const std::uint32_t* regs, int i) { return element(T, regs, i); }, [](double x) { return acc_round(x); });
}

std::uint32_t emulated_tf32_rna(std::uint32_t bits) {
  const double x = std::bit_cast<float>(bits);
  const Rounder rna{Rounding::NearestAway, Saturation::Inf, NanPayload::Preserve};
  return static_cast<std::uint32_t>(to_container(tf32, round_double(tf32, x, rna).code));
}

template void emulated_mma<Mma::F16>(float (&)[4], const std::uint32_t (&)[4], const std::uint32_t (&)[2]);
template void emulated_mma<Mma::BF16>(float (&)[4], const std::uint32_t (&)[4], const std::uint32_t (&)[2]);
template void emulated_mma<Mma::TF32>(float (&)[4], const std::uint32_t (&)[4], const std::uint32_t (&)[2]);
template void emulated_mma<Mma::E4M3>(float (&)[4], const std::uint32_t (&)[4], const std::uint32_t (&)[2]);
template void emulated_mma<Mma::E5M2>(float (&)[4], const std::uint32_t (&)[4], const std::uint32_t (&)[2]);

}  // namespace fpcert::mma_emulated

namespace {

constexpr float kSentinel = -12345.5f;  // C's pre-fill: never a result of these inputs (they are tiny)

struct Shape {
  std::int64_t m, n, k, lda, ldb, ldc;
};

/// Runs the kernel's grid block after block, 256 host threads per block.
template <Mma T, bool P>
void run_grid(const Shape& s, const std::uint8_t* a, bool vec_a, const std::uint8_t* b, bool vec_b, float* c,
              int promote_steps) {
  const unsigned gx = static_cast<unsigned>((s.n + kBN - 1) / kBN), gy = static_cast<unsigned>((s.m + kBM - 1) / kBM);
  for (unsigned by = 0; by < gy; ++by)
    for (unsigned bx = 0; bx < gx; ++bx) {
      std::barrier<> block_barrier(kThreads);
      std::array<std::unique_ptr<WarpExchange>, kThreads / 32> warps;
      for (auto& w : warps) w = std::make_unique<WarpExchange>();
      std::vector<std::thread> threads;
      threads.reserve(kThreads);
      for (int i = 0; i < kThreads; ++i)
        threads.emplace_back([&, i] {
          threadIdx.x = static_cast<unsigned>(i);
          blockIdx.x = bx;
          blockIdx.y = by;
          tl_block_barrier = &block_barrier;
          tl_warp = warps[static_cast<std::size_t>(i / 32)].get();
          mma_gemm<T, P>(s.m, s.n, s.k, a, s.lda, vec_a, b, s.ldb, vec_b, c, s.ldc, promote_steps);
        });
      for (auto& t : threads) t.join();
    }
}

/// Inputs: values r / 2^bits (|r| <= 2^bits) rounded to the input format, as codes in its container.
struct Operands {
  std::vector<double> a, b;             // the values the MMA sees (after tf32 rounding for tf32)
  std::vector<std::uint8_t> a_bytes, b_bytes;
};
Operands make_operands(Mma t, const Shape& s, std::uint64_t seed) {
  const Format& in = t == Mma::TF32 ? f32 : operand_format(t);
  const int bits = t == Mma::TF32 ? 20 : 10;  // tf32: 20-bit fp32 inputs, so cvt.rna really rounds
  const int cb = container_bytes(in);
  Operands o;
  std::uint64_t ctr = 0;
  auto fill = [&](std::int64_t rows, std::int64_t cols, std::int64_t ld, std::vector<double>& vals,
                  std::vector<std::uint8_t>& bytes) {
    vals.assign(static_cast<std::size_t>(rows * cols), 0.0);
    // Everything that is not an element (the ld padding, one more row, a tail) holds 0xFF bytes, a
    // NaN code in every input format: a read outside the matrix poisons C even where it meets a
    // zero-filled partner (0 * NaN = NaN), so out-of-range loads cannot hide.
    bytes.assign(static_cast<std::size_t>(((rows + 1) * ld + 64) * cb), 0xFF);
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < cols; ++j) {
        const auto w = philox_4x32(seed, 1, ctr++);
        const std::int64_t r = static_cast<std::int64_t>(w[0] % ((2u << bits) + 1)) - (std::int64_t{1} << bits);
        const double x = std::ldexp(static_cast<double>(r), -bits);
        const std::uint64_t code = round_double(in, x, Rounder::nearest(in)).code;
        std::uint64_t cont = to_container(in, code);
        std::memcpy(bytes.data() + (i * ld + j) * cb, &cont, static_cast<std::size_t>(cb));
        double v = to_double(in, code);
        if (t == Mma::TF32) v = to_double(tf32, round_double(tf32, v, {Rounding::NearestAway, Saturation::Inf, NanPayload::Preserve}).code);
        vals[static_cast<std::size_t>(i * cols + j)] = v;
      }
  };
  fill(s.m, s.k, s.lda, o.a, o.a_bytes);
  fill(s.k, s.n, s.ldb, o.b, o.b_bytes);
  return o;
}

/// The kernel's order: blocks of the MMA's K ascending, one acc_round per block; with promotion
/// every `every` products the block sums go to an inner accumulator flushed into fp32 by one RN add.
std::vector<float> reference(Mma t, const Shape& s, const Operands& o, int every) {
  const int K = mma_k(t);
  std::vector<float> c(static_cast<std::size_t>(s.m * s.n));
  for (std::int64_t i = 0; i < s.m; ++i)
    for (std::int64_t j = 0; j < s.n; ++j) {
      double inner = 0;
      float outer = 0;
      int blocks = 0;
      for (std::int64_t k0 = 0; k0 < s.k; k0 += K) {
        double sum = inner;
        for (std::int64_t q = k0; q < std::min<std::int64_t>(k0 + K, s.k); ++q)
          sum += o.a[static_cast<std::size_t>(i * s.k + q)] * o.b[static_cast<std::size_t>(q * s.n + j)];
        inner = static_cast<float>(acc_round(sum));
        if (every > 0 && ++blocks == every / K) {
          outer = outer + static_cast<float>(inner);
          inner = 0, blocks = 0;
        }
      }
      c[static_cast<std::size_t>(i * s.n + j)] = every > 0 ? outer + static_cast<float>(inner) : static_cast<float>(inner);
    }
  return c;
}

template <Mma T, bool P>
void check_case(const Shape& s, int every, AccModel model, bool force_scalar) {
  CAPTURE(s.m);
  CAPTURE(s.n);
  CAPTURE(s.k);
  CAPTURE(s.lda);
  CAPTURE(s.ldb);
  CAPTURE(s.ldc);
  CAPTURE(every);
  CAPTURE(force_scalar);
  g_acc_model = model;
  g_unrounded_tf32 = 0;
  const Operands o = make_operands(T, s, test::seed() + static_cast<std::uint64_t>(s.m * 7 + s.n * 13 + s.k));
  constexpr int ES = MmaInfo<T>::kBytes;
  const auto aligned = [](const void* p, std::int64_t ld) {
    return reinterpret_cast<std::uintptr_t>(p) % 16 == 0 && (ld * ES) % 16 == 0;
  };
  const bool vec_a = !force_scalar && aligned(o.a_bytes.data(), s.lda);
  const bool vec_b = !force_scalar && aligned(o.b_bytes.data(), s.ldb);
  // C with 64 guard floats before and after, and the ldc padding, all holding the sentinel.
  constexpr std::size_t kGuard = 64;
  std::vector<float> cbuf(kGuard + static_cast<std::size_t>(s.m * s.ldc) + kGuard, kSentinel);
  run_grid<T, P>(s, o.a_bytes.data(), vec_a, o.b_bytes.data(), vec_b, cbuf.data() + kGuard, every / mma_k(T));
  const std::vector<float> ref = reference(T, s, o, every);
  const GuardedC g = compare_guarded_c(cbuf, kGuard, s.m, s.n, s.ldc, ref, kSentinel);
  CHECK_MESSAGE(g.wrong == 0, g.wrong << " elements differ from the reference in the kernel's order; first at row "
                                      << g.first / s.ldc << " col " << g.first % s.ldc << ": got "
                                      << cbuf[static_cast<std::size_t>(g.first) + kGuard] << ", want "
                                      << ref[static_cast<std::size_t>((g.first / s.ldc) * s.n + g.first % s.ldc)]);
  CHECK_MESSAGE(g.touched == 0, g.touched << " floats outside C (guards or ldc padding) were written");
  CHECK(g_unrounded_tf32.load() == 0);
  // The test must be able to fail: the result is not all zeros.
  double norm = 0;
  for (float v : ref) norm += std::fabs(v);
  CHECK((s.k == 0 || norm > 0));
}

// Shapes: odd edges in M, N and K (partial tiles, K tails inside a stage and inside an MMA step),
// more than one block in M and N, a K spanning several stages, leading dimensions with padding that
// breaks or keeps 16-byte alignment, and K = 0 (C = 0).
const Shape kShapes[] = {
    {131, 137, 203, 203, 137, 141},  // odd everything: gathered loads
    {128, 128, 192, 192, 128, 132},  // a whole tile, aligned rows: vector loads
    {67, 45, 37, 40, 48, 53},        // padded lda/ldb
    {1, 1, 1, 1, 1, 3},
    {5, 9, 0, 1, 9, 12},             // K = 0: C = 0
};

template <Mma T>
void check_kind() {
  for (const Shape& s : kShapes) check_case<T, false>(s, 0, AccModel::RoundNearestF32, false);
  check_case<T, false>(kShapes[1], 0, AccModel::RoundNearestF32, true);  // the gather path where vectors were allowed
}

}  // namespace

TEST_CASE("mma emulation: f16 kernel equals the K-ordered reference bit for bit (edges and tails and ldc)") { check_kind<Mma::F16>(); }
TEST_CASE("mma emulation: bf16 kernel equals the K-ordered reference bit for bit") { check_kind<Mma::BF16>(); }
TEST_CASE("mma emulation: tf32 kernel rounds operands with rna and equals the reference bit for bit") { check_kind<Mma::TF32>(); }
TEST_CASE("mma emulation: e4m3 kernel equals the K-ordered reference bit for bit") { check_kind<Mma::E4M3>(); }
TEST_CASE("mma emulation: e5m2 kernel equals the K-ordered reference bit for bit") { check_kind<Mma::E5M2>(); }

TEST_CASE("mma emulation: FP8 promotion every N products with the 13-bit truncating accumulator model") {
  // The emulated MMA truncates its sum to 13 fraction bits, so every promotion point changes the
  // result: the kernel must flush exactly after each N products (N / 32 MMAs) and at the end.
  const Shape s{67, 137, 203 + 256, 203 + 256, 137, 141};
  for (int every : {32, 64, 128})
    check_case<Mma::E4M3, true>(s, every, AccModel::TowardZero13, false);
  check_case<Mma::E5M2, true>(s, 128, AccModel::TowardZero13, false);
  check_case<Mma::E4M3, false>(s, 0, AccModel::TowardZero13, false);
}
