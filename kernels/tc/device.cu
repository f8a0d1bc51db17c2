// kernels/tc/device.cu — the tensor-core probe's device side: kernels that run ONE MMA instruction
// per warp (mma.sync) or per warpgroup (wgmma) on many independent operand blocks per launch, and the
// MmaInstruction that drives them (kernels/tc/instruction.hpp).
//
// Operands in device memory, per MMA t (kernels/tc/instruction.hpp, MmaBatch): A is m rows of 32 bytes
// (the K step of every type here: 16 f16/bf16, 8 tf32, 32 e4m3/e5m2/s8), B is n columns of 32 bytes,
// C and D are m x n row-major (4-byte f32/s32 or 2-byte f16).
//
// mma.sync fragments (PTX ISA, "Matrix Fragments for mma.m16n8k16 / m16n8k8 / m16n8k32"; the same maps
// as kernels/gemm/cuda/mma_kernel.cuh), g = lane / 4, t = lane % 4: A register r is the 32-bit word of row
// g + 8 (r & 1) at byte 4t + 16 (r >> 1) of the row; B register r the word of column g at byte 4t + 16r;
// f32/s32 C/D element i is (g + 8 (i >> 1), 2t + (i & 1)); f16 C/D register r holds (g + 8r, 2t) in its
// low half and (g + 8r, 2t + 1) in its high half.
//
// wgmma (PTX ISA, "Asynchronous warpgroup level matrix multiply-accumulate"): A (64 x 32 bytes) and B
// (8 x 32 bytes) from shared memory in the canonical K-major layout without swizzling,
// ((8, m), (T, 2k)) : ((1T, SBO), (1, LBO)) in 16-byte units: core matrices of 8 rows x 16 bytes stored
// contiguously, SBO = 128 bytes between row groups, LBO between the two 16-byte halves of K (A: 8 row
// groups, 1024 bytes; B: one row group, 128 bytes). The accumulator fragment of m64n8: thread
// 32w + lane of the warpgroup holds rows 16w + g (+8) and columns 2t, 2t + 1, as mma.sync's.
//
// Every instruction is compiled only for architectures that have it (sm_80, sm_89, sm_90a: the
// __CUDA_ARCH__ / __CUDA_ARCH_FEAT_SM90_ALL guards); a kernel whose instruction was compiled out writes
// status 1 and touches nothing, and the factory reports "not supported" — never a pass.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "kernels/device/cuda_check.cuh"
#include "kernels/gemm/cuda/mma_host.cuh"
#include "kernels/tc/instruction.hpp"

namespace fpcert::tc {
namespace {

enum class Op : int {
  MmaF16F32, MmaF16F16, MmaBf16F32, MmaTf32F32, MmaE4m3F32, MmaE4m3F16, MmaE5m2F32, MmaE5m2F16, MmaS8S32,
  WgF16F32, WgF16F16, WgBf16F32, WgTf32F32, WgE4m3F32, WgE4m3F16, WgE5m2F32, WgE5m2F16, WgS8S32,
};
constexpr bool is_wgmma(Op o) { return static_cast<int>(o) >= static_cast<int>(Op::WgF16F32); }
constexpr bool acc_is_f16(Op o) {
  return o == Op::MmaF16F16 || o == Op::MmaE4m3F16 || o == Op::MmaE5m2F16 || o == Op::WgF16F16 || o == Op::WgE4m3F16 ||
         o == Op::WgE5m2F16;
}
constexpr int kRowBytes = 32;  // one K step of every instruction here
constexpr int kWgM = 64, kWgN = 8;  // the wgmma shape used (m64n8)

// ---- mma.sync: one instruction, D = A B + D in place ----
#define FPCERT_TC_MMA_F32(types)                                                                               \
  asm volatile("mma.sync.aligned." types " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"           \
               : "+f"(f[0]), "+f"(f[1]), "+f"(f[2]), "+f"(f[3])                                               \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))
#define FPCERT_TC_MMA_F16(types)                                                                               \
  asm volatile("mma.sync.aligned." types " {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%0,%1};\n"                       \
               : "+r"(d[0]), "+r"(d[1])                                                                      \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))

/// Runs the instruction of O on this lane's registers; false when this compilation lacks it.
template <Op O>
__device__ __forceinline__ bool mma_once(std::uint32_t (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2]) {
  [[maybe_unused]] float f[4] = {__uint_as_float(d[0]), __uint_as_float(d[1]), __uint_as_float(d[2]), __uint_as_float(d[3])};
  bool ran = false;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if constexpr (O == Op::MmaF16F32) { FPCERT_TC_MMA_F32("m16n8k16.row.col.f32.f16.f16.f32"); ran = true; }
  if constexpr (O == Op::MmaBf16F32) { FPCERT_TC_MMA_F32("m16n8k16.row.col.f32.bf16.bf16.f32"); ran = true; }
  if constexpr (O == Op::MmaTf32F32) { FPCERT_TC_MMA_F32("m16n8k8.row.col.f32.tf32.tf32.f32"); ran = true; }
  if constexpr (O == Op::MmaF16F16) { FPCERT_TC_MMA_F16("m16n8k16.row.col.f16.f16.f16.f16"); ran = true; }
  if constexpr (O == Op::MmaS8S32) {
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    return true;
  }
#if __CUDA_ARCH__ >= 890
  if constexpr (O == Op::MmaE4m3F32) { FPCERT_TC_MMA_F32("m16n8k32.row.col.f32.e4m3.e4m3.f32"); ran = true; }
  if constexpr (O == Op::MmaE5m2F32) { FPCERT_TC_MMA_F32("m16n8k32.row.col.f32.e5m2.e5m2.f32"); ran = true; }
  if constexpr (O == Op::MmaE4m3F16) { FPCERT_TC_MMA_F16("m16n8k32.row.col.f16.e4m3.e4m3.f16"); ran = true; }
  if constexpr (O == Op::MmaE5m2F16) { FPCERT_TC_MMA_F16("m16n8k32.row.col.f16.e5m2.e5m2.f16"); ran = true; }
#endif
#endif
  if constexpr (!acc_is_f16(O))
    for (int i = 0; i < 4; ++i) d[i] = __float_as_uint(f[i]);
  return ran;
}
#undef FPCERT_TC_MMA_F32
#undef FPCERT_TC_MMA_F16

__device__ __forceinline__ std::uint32_t word(const std::uint8_t* p) { return *reinterpret_cast<const std::uint32_t*>(p); }

/// A thread's accumulator fragment in a tile of 8 columns (kAcc bytes per element): rows r0 and r0 + 8,
/// columns 2t and 2t + 1. f32/s32: element i at (r0 + 8 (i >> 1), 2t + (i & 1)); f16: register r holds
/// (r0 + 8r, 2t) in its low half and (r0 + 8r, 2t + 1) in its high half (one 32-bit word).
template <int kAcc>
__device__ __forceinline__ std::uint32_t* acc_word(std::uint8_t* tile, int r0, int t, int i) {
  constexpr int kN = 8;
  if constexpr (kAcc == 4) return reinterpret_cast<std::uint32_t*>(tile + ((r0 + 8 * (i >> 1)) * kN + 2 * t + (i & 1)) * 4);
  else return reinterpret_cast<std::uint32_t*>(tile + ((r0 + 8 * i) * kN + 2 * t) * 2);
}
template <int kAcc>
__device__ __forceinline__ void load_acc(std::uint32_t (&d)[4], const std::uint8_t* tile, int r0, int t) {
  for (int i = 0; i < (kAcc == 4 ? 4 : 2); ++i) d[i] = *acc_word<kAcc>(const_cast<std::uint8_t*>(tile), r0, t, i);
}
template <int kAcc>
__device__ __forceinline__ void store_acc(const std::uint32_t (&d)[4], std::uint8_t* tile, int r0, int t) {
  for (int i = 0; i < (kAcc == 4 ? 4 : 2); ++i) *acc_word<kAcc>(tile, r0, t, i) = d[i];
}

/// One warp per MMA, grid-stride over the batch.
template <Op O>
__global__ void __launch_bounds__(128) mma_sync_kernel(const std::uint8_t* A, const std::uint8_t* B, const std::uint8_t* C, std::uint8_t* D,
                                                       int count, int* status) {
  constexpr int kM = 16, kN = 8, kAcc = acc_is_f16(O) ? 2 : 4;
  static_assert(kN == kWgN, "both kernels write tiles of 8 columns (acc_word)");
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int g = lane / 4, t = lane % 4;
  const int warps = static_cast<int>(gridDim.x * blockDim.x / 32);
  for (int mma = static_cast<int>((blockIdx.x * blockDim.x + threadIdx.x) / 32); mma < count; mma += warps) {
    const std::uint8_t* a_blk = A + static_cast<std::size_t>(mma) * kM * kRowBytes;
    const std::uint8_t* b_blk = B + static_cast<std::size_t>(mma) * kN * kRowBytes;
    const std::size_t c_off = static_cast<std::size_t>(mma) * kM * kN * kAcc;
    std::uint32_t a[4], b[2], d[4] = {0, 0, 0, 0};
    for (int r = 0; r < 4; ++r) a[r] = word(a_blk + (g + 8 * (r & 1)) * kRowBytes + 4 * t + 16 * (r >> 1));
    for (int r = 0; r < 2; ++r) b[r] = word(b_blk + g * kRowBytes + 4 * t + 16 * r);
    load_acc<kAcc>(d, C + c_off, g, t);
    if (!mma_once<O>(d, a, b)) {
      if (lane == 0) atomicExch(status, 1);
      return;
    }
    store_acc<kAcc>(d, D + c_off, g, t);
  }
}

// ---- wgmma: one warpgroup per MMA ----
constexpr std::uint32_t kSbo = 128;                       // bytes between 8-row groups
constexpr std::uint32_t kLboA = (kWgM / 8) * 128;         // bytes between the two 16-byte halves of K (A)
constexpr std::uint32_t kLboB = (kWgN / 8) * 128;         // same for B
/// Byte offset of (row, byte of K) in the canonical K-major, no-swizzle layout.
__device__ __forceinline__ std::uint32_t canonical(int row, int kbyte, std::uint32_t lbo) {
  return static_cast<std::uint32_t>(kbyte / 16) * lbo + static_cast<std::uint32_t>(row / 8) * kSbo + static_cast<std::uint32_t>(row % 8) * 16 +
         static_cast<std::uint32_t>(kbyte % 16);
}
/// The shared-memory matrix descriptor: start address, LBO, SBO (each >> 4), no swizzle, base offset 0.
__device__ __forceinline__ std::uint64_t descriptor(const void* smem, std::uint32_t lbo) {
  const auto addr = static_cast<std::uint32_t>(__cvta_generic_to_shared(smem));
  return static_cast<std::uint64_t>((addr & 0x3FFFF) >> 4) | (static_cast<std::uint64_t>(lbo >> 4) << 16) |
         (static_cast<std::uint64_t>(kSbo >> 4) << 32);
}

#define FPCERT_TC_WG_F32(types, imms)                                                                     \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\n"                                               \
               "wgmma.mma_async.sync.aligned." types " {%0,%1,%2,%3}, %4, %5, p" imms ";\n}\n"          \
               : "+f"(f[0]), "+f"(f[1]), "+f"(f[2]), "+f"(f[3])                                         \
               : "l"(da), "l"(db), "r"(1))
#define FPCERT_TC_WG_F16(types, imms)                                                                     \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"                                               \
               "wgmma.mma_async.sync.aligned." types " {%0,%1}, %2, %3, p" imms ";\n}\n"                \
               : "+r"(d[0]), "+r"(d[1])                                                                \
               : "l"(da), "l"(db), "r"(1))

template <Op O>
__device__ __forceinline__ bool wgmma_once(std::uint32_t (&d)[4], std::uint64_t da, std::uint64_t db) {
  [[maybe_unused]] float f[4] = {__uint_as_float(d[0]), __uint_as_float(d[1]), __uint_as_float(d[2]), __uint_as_float(d[3])};
  bool ran = false;
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
  // imm-scale-a = imm-scale-b = 1 (no negation); imm-trans-a = imm-trans-b = 0 (K-major) where the type has them.
  if constexpr (O == Op::WgF16F32) { FPCERT_TC_WG_F32("m64n8k16.f32.f16.f16", ", 1, 1, 0, 0"); ran = true; }
  if constexpr (O == Op::WgBf16F32) { FPCERT_TC_WG_F32("m64n8k16.f32.bf16.bf16", ", 1, 1, 0, 0"); ran = true; }
  if constexpr (O == Op::WgTf32F32) { FPCERT_TC_WG_F32("m64n8k8.f32.tf32.tf32", ", 1, 1"); ran = true; }
  if constexpr (O == Op::WgE4m3F32) { FPCERT_TC_WG_F32("m64n8k32.f32.e4m3.e4m3", ", 1, 1"); ran = true; }
  if constexpr (O == Op::WgE5m2F32) { FPCERT_TC_WG_F32("m64n8k32.f32.e5m2.e5m2", ", 1, 1"); ran = true; }
  if constexpr (O == Op::WgF16F16) { FPCERT_TC_WG_F16("m64n8k16.f16.f16.f16", ", 1, 1, 0, 0"); ran = true; }
  if constexpr (O == Op::WgE4m3F16) { FPCERT_TC_WG_F16("m64n8k32.f16.e4m3.e4m3", ", 1, 1"); ran = true; }
  if constexpr (O == Op::WgE5m2F16) { FPCERT_TC_WG_F16("m64n8k32.f16.e5m2.e5m2", ", 1, 1"); ran = true; }
  if constexpr (O == Op::WgS8S32) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n8k32.s32.s8.s8 {%0,%1,%2,%3}, %4, %5, p;\n}\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
                 : "l"(da), "l"(db), "r"(1));
    ran = true;
  }
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  if constexpr (!acc_is_f16(O) && O != Op::WgS8S32)
    for (int i = 0; i < 4; ++i) d[i] = __float_as_uint(f[i]);
#else
  (void)da, (void)db, (void)f;
#endif
  return ran;
}
#undef FPCERT_TC_WG_F32
#undef FPCERT_TC_WG_F16

/// One warpgroup (128 threads) per block, grid-stride over the batch.
template <Op O>
__global__ void __launch_bounds__(128) wgmma_kernel(const std::uint8_t* A, const std::uint8_t* B, const std::uint8_t* C, std::uint8_t* D,
                                                    int count, int* status) {
  constexpr int kAcc = acc_is_f16(O) ? 2 : 4;
  __shared__ __align__(128) std::uint8_t sa[kWgM * kRowBytes];
  __shared__ __align__(128) std::uint8_t sb[kWgN * kRowBytes];
  const int tid = static_cast<int>(threadIdx.x);
  const int w = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  for (int mma = static_cast<int>(blockIdx.x); mma < count; mma += static_cast<int>(gridDim.x)) {
    const std::uint8_t* a_blk = A + static_cast<std::size_t>(mma) * kWgM * kRowBytes;
    const std::uint8_t* b_blk = B + static_cast<std::size_t>(mma) * kWgN * kRowBytes;
    const std::size_t c_off = static_cast<std::size_t>(mma) * kWgM * kWgN * kAcc;
    {  // 2048 bytes of A: one 16-byte chunk per thread; 256 bytes of B: threads 0..15
      const int row = tid / 2, half = tid % 2;
      *reinterpret_cast<uint4*>(sa + canonical(row, 16 * half, kLboA)) = *reinterpret_cast<const uint4*>(a_blk + row * kRowBytes + 16 * half);
      if (tid < 16) *reinterpret_cast<uint4*>(sb + canonical(row, 16 * half, kLboB)) = *reinterpret_cast<const uint4*>(b_blk + row * kRowBytes + 16 * half);
    }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");  // generic-proxy stores, seen by the async proxy
#endif
    __syncthreads();
    const int r0 = 16 * w + g;
    std::uint32_t d[4] = {0, 0, 0, 0};
    load_acc<kAcc>(d, C + c_off, r0, t);
    if (!wgmma_once<O>(d, descriptor(sa, kLboA), descriptor(sb, kLboB))) {
      if (tid == 0) atomicExch(status, 1);
      return;
    }
    store_acc<kAcc>(d, D + c_off, r0, t);
    __syncthreads();  // every thread is done with sa/sb before the next MMA refills them
  }
}

using KernelFn = void (*)(const std::uint8_t*, const std::uint8_t*, const std::uint8_t*, std::uint8_t*, int, int*);

KernelFn kernel_of(Op o) {
  switch (o) {
    case Op::MmaF16F32: return mma_sync_kernel<Op::MmaF16F32>;
    case Op::MmaF16F16: return mma_sync_kernel<Op::MmaF16F16>;
    case Op::MmaBf16F32: return mma_sync_kernel<Op::MmaBf16F32>;
    case Op::MmaTf32F32: return mma_sync_kernel<Op::MmaTf32F32>;
    case Op::MmaE4m3F32: return mma_sync_kernel<Op::MmaE4m3F32>;
    case Op::MmaE4m3F16: return mma_sync_kernel<Op::MmaE4m3F16>;
    case Op::MmaE5m2F32: return mma_sync_kernel<Op::MmaE5m2F32>;
    case Op::MmaE5m2F16: return mma_sync_kernel<Op::MmaE5m2F16>;
    case Op::MmaS8S32: return mma_sync_kernel<Op::MmaS8S32>;
    case Op::WgF16F32: return wgmma_kernel<Op::WgF16F32>;
    case Op::WgF16F16: return wgmma_kernel<Op::WgF16F16>;
    case Op::WgBf16F32: return wgmma_kernel<Op::WgBf16F32>;
    case Op::WgTf32F32: return wgmma_kernel<Op::WgTf32F32>;
    case Op::WgE4m3F32: return wgmma_kernel<Op::WgE4m3F32>;
    case Op::WgE4m3F16: return wgmma_kernel<Op::WgE4m3F16>;
    case Op::WgE5m2F32: return wgmma_kernel<Op::WgE5m2F32>;
    case Op::WgE5m2F16: return wgmma_kernel<Op::WgE5m2F16>;
    case Op::WgS8S32: return wgmma_kernel<Op::WgS8S32>;
  }
  return nullptr;
}

/// The kernel for an instruction id of kernels/tc/instruction.cpp (one table: a missing id throws).
Op op_of(const InstructionSpec& s) {
  static constexpr struct {
    const char* id;
    Op op;
  } kMap[] = {{"mma_f16_f32", Op::MmaF16F32},       {"mma_f16_f16", Op::MmaF16F16},       {"mma_bf16_f32", Op::MmaBf16F32},
              {"mma_tf32_f32", Op::MmaTf32F32},     {"mma_e4m3_f32", Op::MmaE4m3F32},     {"mma_e4m3_f16", Op::MmaE4m3F16},
              {"mma_e5m2_f32", Op::MmaE5m2F32},     {"mma_e5m2_f16", Op::MmaE5m2F16},     {"mma_s8_s32", Op::MmaS8S32},
              {"wgmma_f16_f32", Op::WgF16F32},      {"wgmma_f16_f16", Op::WgF16F16},      {"wgmma_bf16_f32", Op::WgBf16F32},
              {"wgmma_tf32_f32", Op::WgTf32F32},    {"wgmma_e4m3_f32", Op::WgE4m3F32},    {"wgmma_e4m3_f16", Op::WgE4m3F16},
              {"wgmma_e5m2_f32", Op::WgE5m2F32},    {"wgmma_e5m2_f16", Op::WgE5m2F16},    {"wgmma_s8_s32", Op::WgS8S32}};
  for (const auto& m : kMap)
    if (s.id == m.id) return m.op;
  throw InputError("no device kernel for instruction " + std::string(s.id));
}

/// A device buffer freed on scope exit.
struct DevBuf {
  void* p = nullptr;
  explicit DevBuf(std::size_t bytes) { FPCERT_CUDA_CHECK(cudaMalloc(&p, bytes ? bytes : 1)); }
  ~DevBuf() { cudaFree(p); }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
  std::uint8_t* u8() const { return static_cast<std::uint8_t*>(p); }
};

std::vector<std::uint8_t> pack(const std::vector<std::uint32_t>& codes, int bytes) {
  std::vector<std::uint8_t> out(codes.size() * static_cast<std::size_t>(bytes));
  for (std::size_t i = 0; i < codes.size(); ++i) std::memcpy(&out[i * static_cast<std::size_t>(bytes)], &codes[i], static_cast<std::size_t>(bytes));  // little-endian
  return out;
}

class DeviceInstruction final : public MmaInstruction {
 public:
  DeviceInstruction(const InstructionSpec& s, Op op, std::string origin) : spec_(s), op_(op), origin_(std::move(origin)) {}
  const InstructionSpec& spec() const override { return spec_; }
  std::string origin() const override { return origin_; }
  /// Runs the batch; sets *compiled_out = false (and returns zeros) when the kernel's instruction was compiled out.
  std::vector<std::uint32_t> run_checked(const MmaBatch& b, bool* compiled_out) {
    check_batch(spec_, b);
    const int eb = spec_.in_bytes(), ab = spec_.acc_bytes();
    const int mn = spec_.m * spec_.n;
    std::vector<std::uint32_t> d(static_cast<std::size_t>(b.count) * mn, 0);
    if (b.count == 0) return d;
    const auto ha = pack(b.a, eb), hb = pack(b.b, eb), hc = pack(b.c, ab);
    DevBuf da(ha.size()), db(hb.size()), dc(hc.size()), dd(hc.size()), ds(sizeof(int));
    FPCERT_CUDA_CHECK(cudaMemcpy(da.p, ha.data(), ha.size(), cudaMemcpyHostToDevice));
    FPCERT_CUDA_CHECK(cudaMemcpy(db.p, hb.data(), hb.size(), cudaMemcpyHostToDevice));
    FPCERT_CUDA_CHECK(cudaMemcpy(dc.p, hc.data(), hc.size(), cudaMemcpyHostToDevice));
    FPCERT_CUDA_CHECK(cudaMemset(dd.p, 0xFF, hc.size()));
    FPCERT_CUDA_CHECK(cudaMemset(ds.p, 0, sizeof(int)));
    const KernelFn k = kernel_of(op_);
    const int blocks = is_wgmma(op_) ? std::min(b.count, 4096) : std::min((b.count + 3) / 4, 4096);
    k<<<blocks, 128>>>(da.u8(), db.u8(), dc.u8(), dd.u8(), b.count, static_cast<int*>(ds.p));
    FPCERT_CUDA_LAUNCH_CHECK(std::string(spec_.id).c_str());
    FPCERT_CUDA_CHECK(cudaDeviceSynchronize());
    int status = 0;
    FPCERT_CUDA_CHECK(cudaMemcpy(&status, ds.p, sizeof(int), cudaMemcpyDeviceToHost));
    if (compiled_out) *compiled_out = status == 0;
    if (status != 0) {
      if (!compiled_out) throw DeviceError(std::string(spec_.id) + ": the instruction is not in this binary's code for the device");
      return d;
    }
    std::vector<std::uint8_t> hd(hc.size());
    FPCERT_CUDA_CHECK(cudaMemcpy(hd.data(), dd.p, hd.size(), cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < d.size(); ++i) std::memcpy(&d[i], &hd[i * static_cast<std::size_t>(ab)], static_cast<std::size_t>(ab));
    return d;
  }
  std::vector<std::uint32_t> run(const MmaBatch& b) override { return run_checked(b, nullptr); }

 private:
  const InstructionSpec& spec_;
  Op op_;
  std::string origin_;
};

}  // namespace

std::unique_ptr<MmaInstruction> make_device_instruction(const InstructionSpec& spec, std::string* why) {
  std::string reason;
  const int sm = cuda::device_sm(reason);
  if (sm == 0) {
    if (why) *why = reason;
    return nullptr;
  }
  if (sm < spec.min_sm) {
    if (why) *why = "needs sm_" + std::to_string(spec.min_sm) + (spec.arch_specific ? "a" : "") + "; this device is sm_" + std::to_string(sm);
    return nullptr;
  }
  const Op op = op_of(spec);
  cudaFuncAttributes attr{};
  if (const cudaError_t e = cudaFuncGetAttributes(&attr, kernel_of(op)); e != cudaSuccess) {
    cudaGetLastError();
    if (why) *why = std::string("no kernel image for this device: ") + cudaGetErrorName(e);
    return nullptr;
  }
  int dev = 0, driver = 0, runtime = 0;
  cudaDeviceProp prop{};
  FPCERT_CUDA_CHECK(cudaGetDevice(&dev));
  FPCERT_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  const std::string origin = std::string(prop.name) + " (sm_" + std::to_string(sm) + "), driver CUDA " + std::to_string(driver / 1000) + "." +
                             std::to_string((driver % 1000) / 10) + ", runtime " + std::to_string(runtime / 1000) + "." +
                             std::to_string((runtime % 1000) / 10) + ", kernel code sm_" + std::to_string(attr.binaryVersion) +
                             " from compute_" + std::to_string(attr.ptxVersion);
  auto insn = std::make_unique<DeviceInstruction>(spec, op, origin);
  // One MMA of zeros: the instruction answers, or its kernel reports it was compiled out here.
  MmaBatch probe;
  probe.count = 1;
  probe.a.assign(static_cast<std::size_t>(spec.m * spec.k), 0);
  probe.b.assign(static_cast<std::size_t>(spec.n * spec.k), 0);
  probe.c.assign(static_cast<std::size_t>(spec.m * spec.n), 0);
  bool compiled = false;
  insn->run_checked(probe, &compiled);
  if (!compiled) {
    if (why)
      *why = "this binary runs the kernel from sm_" + std::to_string(attr.binaryVersion) + " / compute_" + std::to_string(attr.ptxVersion) +
             " code, which lacks the instruction (needs sm_" + std::to_string(spec.min_sm) + (spec.arch_specific ? "a" : "") +
             " code: add it to FPCERT_CUDA_ARCHS)";
    return nullptr;
  }
  return insn;
}

}  // namespace fpcert::tc
