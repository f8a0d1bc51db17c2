// kernels/softmax/cuda/softmax_cuda.cu — CUDA softmax built-ins (docs/softmax.md, "Kernels"), one warp per row:
//  - *_warp_cuda: fused shifted softmax: the row's max by a __shfl_xor_sync butterfly of fmaxf, lane l sums
//    __expf(z_j - max) over j = l, l + 32, ... from +0, the butterfly adds the lanes (ReduceOrder::warp_tree(32)), then
//    y_j = __expf(z_j - max) / sum (IEEE division, __fdiv_rn), log-softmax (z_j - max) - logf(sum);
//  - *_online_cuda: online softmax with the accurate expf: lane l keeps a running max and sum over its elements, element
//    by element (s = s expf(m_old - m_new) + expf(z - m_new)), the butterfly combines the (max, sum) pairs, then
//    y_j = expf(z_j - max) / sum;
//  - *_warp_ops_cuda: the fused kernel with oracle/math/expf_ops.hpp's expf_ops for __expf: its whole arithmetic is
//    declared (binary32 operations, the warp tree, IEEE division), so the bitwise tier checks it bit for bit
//    (oracle/softmax/softmax_emulate.hpp; docs/softmax.md, "Bitwise tier").
// z_j = RN(scale x_j) + mask_j in fp32 (scale 1: x_j + mask_j). Every fault of SoftmaxBug is a runtime switch of the
// same kernels (with_bug), so a mutant is the kernel with its own arithmetic changed, not a model of it.
#define FPCERT_HD __host__ __device__
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <memory>
#include <string>

#include "kernels/device/cuda_check.cuh"
#include "kernels/device/row_io.cuh"
#include "kernels/register.hpp"
#include "kernels/softmax/softmax_kernel.hpp"
#include "oracle/math/expf_ops.hpp"

namespace fpcert {
namespace {

constexpr unsigned kFull = 0xffffffffu;
constexpr int kWarps = 4;  // warps (rows in flight) per block

using row_io::Io;
using row_io::io_of;
using row_io::load_x;
using row_io::store_y;
/// The exp a kernel uses: __expf (ex2.approx), CUDA's expf, or fpcert's expf_ops (declared exactly).
enum class Exp : int { Fast, Accurate, Ops };


struct Args {
  std::int64_t rows, cols;
  const void* x;
  std::int64_t ldx;
  const float* mask;
  std::int64_t ldm;
  float scale;
  void* out;
  std::int64_t ldo;
  Io in, outio;
  bool log;
  bool nan_rows;  ///< declared policy: NaN for fully masked rows
  SoftmaxBug bug;
  Exp exp;        ///< the fused kernel's exp (the online one uses expf)
};

__device__ float arg(const Args& a, std::int64_t r, std::int64_t j) {
  const float x = load_x(a.in, a.x, r * a.ldx + j);
  const float sx = a.scale == 1.0f ? x : __fmul_rn(a.scale, x);
  if (!a.mask || a.bug == SoftmaxBug::MaskAfterExp) return sx;
  return __fadd_rn(sx, a.mask[r * a.ldm + j]);
}
__device__ bool masked_at(const Args& a, std::int64_t r, std::int64_t j) { return a.mask && a.mask[r * a.ldm + j] == -INFINITY; }

__device__ float sum_add(const Args& a, float s, float e) {
  const float t = __fadd_rn(s, e);
  return a.bug == SoftmaxBug::F16RowSum ? __half2float(__float2half_rn(t)) : t;
}

/// The fully masked row (max -Inf): the declared policy, or the fault's NaN.
__device__ void masked_row(const Args& a, std::int64_t r, int lane) {
  const bool nan = a.nan_rows || a.bug == SoftmaxBug::NanMaskedRows;
  for (std::int64_t j = lane; j < a.cols; j += 32) store_y(a.outio, a.out, r * a.ldo + j, nan ? NAN : (a.log ? -INFINITY : 0.0f));
}

__device__ float exp_of(Exp e, float d) { return e == Exp::Fast ? __expf(d) : e == Exp::Ops ? math::expf_ops(d) : expf(d); }

/// Results of row r given its shift m and sum s (exp: the implementation the kernel declares).
__device__ void write_row(const Args& a, Exp e, std::int64_t r, int lane, float m, float s) {
  const float ls = a.log ? logf(s) : 0.0f;
  for (std::int64_t j = lane; j < a.cols; j += 32) {
    const float d = __fsub_rn(arg(a, r, j), m);
    float y = a.log ? __fsub_rn(d, ls) : __fdiv_rn(exp_of(e, d), s);
    if (a.bug == SoftmaxBug::MaskAfterExp && masked_at(a, r, j)) y = a.log ? -INFINITY : 0.0f;
    if (a.bug == SoftmaxBug::Zeros) y = 0.0f;
    store_y(a.outio, a.out, r * a.ldo + j, y);
  }
}

__global__ void warp_fused(Args a) {
  const int lane = threadIdx.x % 32;
  for (std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * kWarps + threadIdx.x / 32; r < a.rows;
       r += static_cast<std::int64_t>(gridDim.x) * kWarps) {
    float m = -INFINITY;
    bool nan = false;
    for (std::int64_t j = lane; j < a.cols; j += 32) {
      const float z = arg(a, r, j);
      m = fmaxf(m, z);  // fmaxf ignores a NaN: it reaches every result through z - m below
      nan = nan || z != z;
    }
    for (int off = 16; off >= 1; off /= 2) m = fmaxf(m, __shfl_xor_sync(kFull, m, off));
    nan = __any_sync(kFull, nan);
    if (m == -INFINITY && !nan) {
      masked_row(a, r, lane);
      continue;
    }
    if (a.bug == SoftmaxBug::NoMaxShift) m = 0.0f;
    float s = 0.0f;
    for (std::int64_t j = lane; j < a.cols; j += 32) s = sum_add(a, s, exp_of(a.exp, __fsub_rn(arg(a, r, j), m)));
    for (int off = 16; off >= 1; off /= 2) s = sum_add(a, s, __shfl_xor_sync(kFull, s, off));
    write_row(a, a.exp, r, lane, m, s);
  }
}

/// The running (max, sum) of a lane after z: s expf(m - m') + expf(z - m'), m' = max(m, z).
__device__ void online_step(const Args& a, float& m, float& s, float m2, float s2) {
  const float mn = fmaxf(m, m2);
  if (mn == -INFINITY) return;  // nothing unmasked yet on either side: s stays +0
  const float keep = a.bug == SoftmaxBug::WrongRescale ? s : __fmul_rn(s, expf(__fsub_rn(m, mn)));
  const float add = __fmul_rn(s2, expf(__fsub_rn(m2, mn)));
  s = sum_add(a, keep, add);
  m = mn;
}

__global__ void warp_online(Args a) {
  const int lane = threadIdx.x % 32;
  for (std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * kWarps + threadIdx.x / 32; r < a.rows;
       r += static_cast<std::int64_t>(gridDim.x) * kWarps) {
    float m = -INFINITY, s = 0.0f;
    bool nan = false;
    for (std::int64_t j = lane; j < a.cols; j += 32) {
      const float z = arg(a, r, j);
      nan = nan || z != z;
      if (a.bug == SoftmaxBug::NoMaxShift) {
        s = sum_add(a, s, expf(z));
        m = 0.0f;
        continue;
      }
      const float mn = fmaxf(m, z);
      if (mn == -INFINITY) continue;
      const float keep = a.bug == SoftmaxBug::WrongRescale ? s : __fmul_rn(s, expf(__fsub_rn(m, mn)));
      s = sum_add(a, keep, expf(__fsub_rn(z, mn)));  // a NaN z: expf(NaN) = NaN, the row's sum NaN
      m = mn;
    }
    for (int off = 16; off >= 1; off /= 2) {
      const float m2 = __shfl_xor_sync(kFull, m, off), s2 = __shfl_xor_sync(kFull, s, off);
      if (a.bug == SoftmaxBug::NoMaxShift) s = sum_add(a, s, s2);
      else online_step(a, m, s, m2, s2);
    }
    nan = __any_sync(kFull, nan);
    if (m == -INFINITY && !nan) {
      masked_row(a, r, lane);
      continue;
    }
    // A NaN logit makes the whole row NaN (its sum is NaN). The running max cannot carry it: fmaxf ignores a NaN, and a
    // lane whose first logit is NaN (m = -Inf, mn = -Inf) skips it above, so without this the row came out finite but
    // for the NaN's own column (the H200 run of 2026-12-04 refused both online kernels on `specials` for this).
    if (nan) s = NAN;
    write_row(a, Exp::Accurate, r, lane, m, s);
  }
}

struct Spec {
  std::string name;
  SoftmaxFn fn;
  bool online;
  const Format* io;
  std::string note;
  Exp exp = Exp::Fast;  ///< the fused kernel's exp
};

class CudaSoftmax final : public SoftmaxKernel {
 public:
  CudaSoftmax(Spec s, SoftmaxBug bug) : s_(std::move(s)), bug_(bug) {
    SoftmaxArith& a = t_.arith;
    a.fn = s_.fn;
    a.shift = s_.online ? SoftmaxShift::Online : SoftmaxShift::Shifted;
    a.block = s_.online ? 1 : 0;  // a lane's running (max, sum) changes element by element
    a.compute = &f32;
    a.exp = s_.online ? exp_error_cuda_expf() : s_.exp == Exp::Ops ? exp_error_expf_ops() : exp_error_cuda_fast();
    a.exp_exact = s_.exp == Exp::Ops ? SoftmaxExpExact::ExpfOps : SoftmaxExpExact::None;
    a.log = log_error_cuda_logf();
    a.sum_acc = &f32;
    a.sum_order = ReduceOrder::warp_tree(32);
    a.out = s_.io;
    t_.x_input = s_.io;
    t_.masked_rows = MaskedRowPolicy::Zero;
    t_.note = s_.note;
  }
  const std::string& name() const override { return s_.name; }
  std::string description() const override { return s_.note + " (" + describe_softmax_traits(t_) + ")"; }
  Backend backend() const override { return Backend::Cuda; }
  MemorySpace memory() const override { return MemorySpace::Device; }
  bool is_mutant() const override { return bug_ != SoftmaxBug::None; }
  const SoftmaxTraits& softmax_traits() const override { return t_; }
  std::unique_ptr<SoftmaxKernel> with_bug(SoftmaxBug bug) const override {
    if (bug == SoftmaxBug::WrongRescale && !s_.online) return nullptr;
    return std::make_unique<CudaSoftmax>(s_, bug);
  }
  void run(const SoftmaxOperands& o) override {
    if (o.rows == 0 || o.cols == 0) return;
    Args a{o.rows, o.cols, o.x, o.ldx, static_cast<const float*>(o.mask), o.ldm, o.scale, o.out, o.ldo,
           io_of(*s_.io), io_of(*s_.io), s_.fn == SoftmaxFn::LogSoftmax, t_.masked_rows == MaskedRowPolicy::Nan, bug_, s_.exp};
    const auto stream = static_cast<cudaStream_t>(o.stream);
    const auto blocks = static_cast<unsigned>(std::clamp<std::int64_t>((o.rows + kWarps - 1) / kWarps, 1, 65535));
    if (s_.online) warp_online<<<blocks, 32 * kWarps, 0, stream>>>(a);
    else warp_fused<<<blocks, 32 * kWarps, 0, stream>>>(a);
    FPCERT_CUDA_LAUNCH_CHECK(s_.name.c_str());
  }

 private:
  Spec s_;
  SoftmaxBug bug_;
  SoftmaxTraits t_;
};

}  // namespace

void register_softmax_cuda_kernels() {
  const Spec specs[] = {
      {"softmax_f32_warp_cuda", SoftmaxFn::Softmax, false, &f32, "one warp per row, fused shifted softmax with __expf"},
      {"softmax_f16_warp_cuda", SoftmaxFn::Softmax, false, &f16, "f16 rows, one warp per row, f32 arithmetic, __expf"},
      {"softmax_bf16_warp_cuda", SoftmaxFn::Softmax, false, &bf16, "bf16 rows, one warp per row, f32 arithmetic, __expf"},
      {"log_softmax_f32_warp_cuda", SoftmaxFn::LogSoftmax, false, &f32, "one warp per row, (z - max) - logf(sum __expf)"},
      {"softmax_f32_online_cuda", SoftmaxFn::Softmax, true, &f32, "one warp per row, online (max, sum) per lane with expf, butterfly combine"},
      {"softmax_f16_online_cuda", SoftmaxFn::Softmax, true, &f16, "f16 rows, online softmax with expf"},
      {"softmax_f32_warp_ops_cuda", SoftmaxFn::Softmax, false, &f32, "one warp per row, fused shifted softmax with expf_ops (declared exactly)",
       Exp::Ops},
      {"softmax_bf16_warp_ops_cuda", SoftmaxFn::Softmax, false, &bf16, "bf16 rows, one warp per row, expf_ops (declared exactly)", Exp::Ops},
  };
  for (const Spec& s : specs)
    register_kernel(s.name, Backend::Cuda, false, [s] { return std::make_unique<CudaSoftmax>(s, SoftmaxBug::None); }, Operation::Softmax);
}

}  // namespace fpcert
