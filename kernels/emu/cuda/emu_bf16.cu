// kernels/emu/cuda/emu_bf16.cu — BF16 GEMMs on FP16 tensor cores, one kernel per strategy of
// kernels/emu/bf16_on_fp16.hpp: gemm_bf16_on_f16_{cast,tensor,rowcol,kblock64,kblock128,outlier,auto}_mma_sm80, and the
// same strategies with their MMA stage on Hopper's wgmma + TMA mainloop, gemm_bf16_on_f16_<tag>_wgmma_sm90 (issue 43;
// kernels/emu/cuda/emu_bf16_wgmma_kernel.cuh): every other stage is shared.
//
// Each is a pipeline of device stages (time_stages times them one by one):
//   exponent reduction  per line (row of A, column of B) and K-block of 64: the largest and smallest
//                       binade (fine_stats_*); then per line the plan (decide_lines): scales, the
//                       MMA mode, outlier windows (a 261-bin histogram per line or block where the
//                       span exceeds 32) and outlier counts;
//   packing             bf16 -> fp16 scaled by 2^s (emu::bf16_to_f16_scaled: one rounding, exact
//                       inside the window), conversion statistics; outlier lists (CSR, k ascending)
//                       after an exclusive scan of the counts;
//   MMA                 kernels/emu/cuda/emu_bf16_kernel.cuh, row mode and/or K-block mode; the power-of-two
//                       rescale is its epilogue (or its per-block promotion);
//   fallback            the outliers' products on an fp32 path: corr = fma over dA_ik b_kj, then over
//                       a_ik dB_kj (a_ik not in dA), k ascending from +0; C = RN(C + corr).
// The plans equal the CPU models' (bf16_on_f16_cpu: the same rules and the same scalar functions of
// kernels/emu/emu_arith.cuh); tests/kernels/emu/emulation_gpu_test.cpp compares the statistics exactly.
#include <cuda_runtime.h>

#include <cub/cub.cuh>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>

#include "kernels/device/cuda_check.cuh"
#include "kernels/emu/bf16_on_fp16.hpp"
#include "kernels/emu/cuda/emu_bf16_kernel.cuh"
#include "kernels/emu/cuda/emu_bf16_stages.cuh"
#include "kernels/emu/cuda/emu_bf16_wgmma_kernel.cuh"
#include "kernels/emu/cuda/emu_host.cuh"
#include "kernels/gemm/cuda/wgmma_host.cuh"
#include "kernels/register.hpp"

namespace fpcert {
namespace {

using namespace mma_device;
using namespace emu_bf16_stages;
using S = Bf16OnF16Strategy;

// ---- the kernel object ----

unsigned grid_y(std::int64_t rows, std::int64_t cap) { return static_cast<unsigned>(std::max<std::int64_t>(1, std::min(rows, cap))); }

class Bf16OnF16MmaKernel final : public GemmKernel, public Bf16OnF16Kernel, public StagedKernel {
 public:
  Bf16OnF16MmaKernel(const Bf16OnF16Policy& p, bool wgmma)
      : policy_(p), name_(wgmma ? bf16_on_f16_wgmma_kernel_name(p) : bf16_on_f16_kernel_name(p)), wgmma_(wgmma) {
    traits_ = bf16_on_f16_traits(p, true);
    if (p.strategy == S::Auto) {  // mixed tiles: the coarser (no promotion) traits
      traits_.promote_every = 0;
      traits_.promote_format = nullptr;
    }
    if (wgmma_) {  // the MMA stage's instruction and K padding (whole 128-byte stages of 64 fp16)
      traits_.sum_order.block_model.instruction = "wgmma_f16_f32";
      traits_.sum_order.block_model.pad = wgmma_device::kStageK / 2;
      const std::string mma = "fp16 mma.sync m16n8k16 on the fp32 accumulator fragment (k-blocks of 16 ascending;";
      const std::size_t at = traits_.order.find(mma);
      if (at == std::string::npos) throw std::logic_error(name_ + ": the traits' order text changed");
      traits_.order.replace(at, mma.size(),
                            std::string("fp16 wgmma m64n") + (row_tile_n() == 256 ? "256" : "128") +
                                "k16 from TMA-loaded shared memory on fp32 accumulators (k-steps of 16 ascending, K zero-padded "
                                "to stages of 64; K-blocks of " + std::to_string(policy_.kblock) + " = whole stages;");
      traits_.tile_m = wgmma_device::kBM;
      traits_.tile_n = row_tile_n();
    }
  }
  const std::string& name() const override { return name_; }
  std::string description() const override {
    return std::string("bf16 GEMM on fp16 tensor cores (") +
           (wgmma_ ? "wgmma m64n" + std::to_string(row_tile_n()) + "k16 with TMA, tiles 128x" + std::to_string(row_tile_n())
                   : std::string("mma.sync m16n8k16, block 128x128")) +
           "), strategy " + policy_.tag + ": exponent reduction, scaled packing, MMA with exact power-of-two rescale" +
           (outlier_capable() ? ", outliers on an fp32 path" : "");
  }
  Backend backend() const override { return Backend::Cuda; }
  MemorySpace memory() const override { return MemorySpace::Device; }
  const KernelTraits& traits() const override { return traits_; }
  const Bf16OnF16Policy& policy() const override { return policy_; }
  Support can_implement(std::int64_t m, std::int64_t n, std::int64_t k) const override {
    if (outlier_capable() && (m * k > 0x7FFFFFFF || k * n > 0x7FFFFFFF)) return Support::no("outlier lists are indexed with 32-bit integers: m k and k n < 2^31");
    if (!wgmma_) return cuda::mma_support(m, n, k, 80, f16_scaled_gemm<false, true>);
    if (m < 0 || n < 0 || k < 0) return Support::no("negative dimension");
    if (m > 0x7FFFFFFF - 256 || n > 0x7FFFFFFF - 256 || k > 0x7FFFFFFF - 64) return Support::no("a dimension of 2^31 or more");
    return wgmma_host::hopper_support(wgmma_device::wgmma_f16_scaled<false, true, 256>);
  }

  void run(const GemmOperands& ops) override {
    if (ops.a_layout != Layout::RowMajor || ops.b_layout != Layout::RowMajor)
      throw NotSupportedError(name_ + ": row-major A and B only");
    last_m_ = ops.m, last_n_ = ops.n;
    if (ops.m == 0 || ops.n == 0) return;
    auto stream = static_cast<cudaStream_t>(ops.stream);
    prepare(ops, stream);
    reduce(ops, stream);
    pack(ops, stream);
    mma(ops, stream, true);
    fallback(ops, stream);
  }

  Bf16OnF16Stats last_stats() const override {
    Bf16OnF16Stats s;
    if (!ran_ || last_m_ == 0 || last_n_ == 0) return s;
    FPCERT_CUDA_CHECK(cudaDeviceSynchronize());
    unsigned long long h[2 * kStatCount];
    FPCERT_CUDA_CHECK(cudaMemcpy(h, stats_, sizeof h, cudaMemcpyDeviceToHost));
    auto op = [&](int o) {
      Bf16OnF16OperandStats r;
      const unsigned long long* c = h + o * kStatCount;
      r.nonzero = static_cast<std::int64_t>(c[0]);
      r.inexact = static_cast<std::int64_t>(c[1]);
      r.overflow = static_cast<std::int64_t>(c[2]);
      r.underflow_zero = static_cast<std::int64_t>(c[3]);
      r.subnormal = static_cast<std::int64_t>(c[4]);
      r.outliers = static_cast<std::int64_t>(c[5]);
      return r;
    };
    s.a = op(0);
    s.b = op(1);
    const std::int64_t tm = (last_m_ + kModeTile - 1) / kModeTile, tn = (last_n_ + kModeTile - 1) / kModeTile;
    if (policy_.strategy == S::Auto) {
      std::vector<std::uint32_t> rows(static_cast<std::size_t>(tm)), cols(static_cast<std::size_t>(tn));
      FPCERT_CUDA_CHECK(cudaMemcpy(rows.data(), mode_rows_, rows.size() * 4, cudaMemcpyDeviceToHost));
      FPCERT_CUDA_CHECK(cudaMemcpy(cols.data(), mode_cols_, cols.size() * 4, cudaMemcpyDeviceToHost));
      for (auto r : rows)
        for (auto c : cols) (std::max(r, c) == kModeKBlock ? s.tiles_kblock : s.tiles_row) += 1;
    } else {
      (policy_.strategy == S::KBlock ? s.tiles_kblock : s.tiles_row) = tm * tn;
    }
    return s;
  }

  std::vector<StageTime> time_stages(const GemmOperands& ops, int warmups, int timed) override {
    auto stream = static_cast<cudaStream_t>(ops.stream);
    if (ops.m == 0 || ops.n == 0) return {};
    prepare(ops, stream);
    emu_host::StageClock clock(stream, 6);
    for (int r = 0; r < warmups + timed; ++r) {
      clock.start();
      reduce(ops, stream);
      clock.mark(0);
      pack(ops, stream);
      clock.mark(1);
      mma(ops, stream, false);
      clock.mark(2);
      mma(ops, stream, true);
      clock.mark(3);
      fallback(ops, stream);
      clock.mark(4);
      run(ops);
      clock.mark(5);
      if (r >= warmups) clock.collect();
      else FPCERT_CUDA_CHECK(cudaStreamSynchronize(stream));
    }
    const double mma_raw = clock.median(2), mma = clock.median(3);
    return {{"exponent reduction", clock.median(0)},
            {"packing", clock.median(1)},
            {"MMA (rescale skipped)", mma_raw},
            {"MMA with rescale", mma},
            {"rescale epilogue (difference)", mma - mma_raw},
            {"fallback (fp32 outlier path)", clock.median(4)},
            {"end to end", clock.median(5)}};
  }

 private:
  bool outlier_capable() const { return policy_.strategy == S::Outlier || policy_.strategy == S::Auto; }
  bool segmented() const { return policy_.strategy == S::KBlock || policy_.strategy == S::Auto; }
  bool shared_scale() const { return policy_.strategy == S::Cast || policy_.strategy == S::Tensor; }
  /// The wgmma kernels' tile width in row mode: 256, but 128 for Auto (its modes are decided per 128 x 128 tile).
  int row_tile_n() const { return policy_.strategy == S::Auto || policy_.strategy == S::KBlock ? 128 : 256; }

  void prepare(const GemmOperands& ops, cudaStream_t stream) {
    const std::int64_t m = ops.m, n = ops.n, k = ops.k;
    lda16_ = (k + 7) / 8 * 8;
    ldb16_ = (n + 7) / 8 * 8;
    nfine_ = (k + kFine - 1) / kFine;
    seg_len_ = segmented() ? policy_.kblock : std::max<std::int64_t>(k, 1);
    segs_ = segmented() ? std::max<std::int64_t>(1, (k + seg_len_ - 1) / seg_len_) : 1;
    const std::int64_t cells_a = shared_scale() ? 1 : m * segs_, cells_b = shared_scale() ? 1 : n * segs_;
    const std::int64_t nf = std::max<std::int64_t>(nfine_, 1);
    const std::int64_t tm = (m + kModeTile - 1) / kModeTile, tn = (n + kModeTile - 1) / kModeTile;
    std::size_t scan_need = 0;
    if (outlier_capable())
      FPCERT_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, scan_need, static_cast<int*>(nullptr), static_cast<int*>(nullptr),
                                                      static_cast<int>(std::max(m, n) + 1), stream));
    ws_.begin();
    const auto o_a16 = ws_.reserve(static_cast<std::size_t>(m * lda16_ * 2));
    const auto o_b16 = ws_.reserve(static_cast<std::size_t>(k * ldb16_ * 2));
    const auto o_fa = ws_.reserve(static_cast<std::size_t>(m * nf * 4));
    const auto o_fb = ws_.reserve(static_cast<std::size_t>(n * nf * 4));
    const auto o_sa = ws_.reserve(static_cast<std::size_t>(cells_a * 2));
    const auto o_sb = ws_.reserve(static_cast<std::size_t>(cells_b * 2));
    const auto o_oa = ws_.reserve(static_cast<std::size_t>(cells_a));
    const auto o_ob = ws_.reserve(static_cast<std::size_t>(cells_b));
    const auto o_mr = ws_.reserve(static_cast<std::size_t>(tm * 4));
    const auto o_mc = ws_.reserve(static_cast<std::size_t>(tn * 4));
    const auto o_small = ws_.reserve(2 * kStatCount * 8 + 16);  // stats, then the two tensor maxima
    const bool oc = outlier_capable();
    const auto o_ca = ws_.reserve(oc ? static_cast<std::size_t>((m + 1) * 4) : 0);
    const auto o_cb = ws_.reserve(oc ? static_cast<std::size_t>((n + 1) * 4) : 0);
    const auto o_pa = ws_.reserve(oc ? static_cast<std::size_t>((m + 1) * 4) : 0);
    const auto o_pb = ws_.reserve(oc ? static_cast<std::size_t>((n + 1) * 4) : 0);
    const auto o_ia = ws_.reserve(oc ? static_cast<std::size_t>(m * k * 4) : 0);
    const auto o_va = ws_.reserve(oc ? static_cast<std::size_t>(m * k * 4) : 0);
    const auto o_ib = ws_.reserve(oc ? static_cast<std::size_t>(k * n * 4) : 0);
    const auto o_vb = ws_.reserve(oc ? static_cast<std::size_t>(k * n * 4) : 0);
    const auto o_scan = ws_.reserve(scan_need);
    scan_bytes_ = scan_need;
    std::uint8_t* base = ws_.commit();
    a16_ = reinterpret_cast<std::uint16_t*>(base + o_a16);
    b16_ = reinterpret_cast<std::uint16_t*>(base + o_b16);
    fhi_a_ = reinterpret_cast<std::int16_t*>(base + o_fa);
    flo_a_ = fhi_a_ + m * nf;
    fhi_b_ = reinterpret_cast<std::int16_t*>(base + o_fb);
    flo_b_ = fhi_b_ + n * nf;
    scale_a_ = reinterpret_cast<std::int16_t*>(base + o_sa);
    scale_b_ = reinterpret_cast<std::int16_t*>(base + o_sb);
    outl_a_ = base + o_oa;
    outl_b_ = base + o_ob;
    mode_rows_ = reinterpret_cast<std::uint32_t*>(base + o_mr);
    mode_cols_ = reinterpret_cast<std::uint32_t*>(base + o_mc);
    stats_ = reinterpret_cast<unsigned long long*>(base + o_small);
    tensor_hi_ = reinterpret_cast<int*>(base + o_small + 2 * kStatCount * 8);
    count_a_ = reinterpret_cast<int*>(base + o_ca);
    count_b_ = reinterpret_cast<int*>(base + o_cb);
    off_a_ = reinterpret_cast<int*>(base + o_pa);
    off_b_ = reinterpret_cast<int*>(base + o_pb);
    idx_a_ = reinterpret_cast<int*>(base + o_ia);
    val_a_ = reinterpret_cast<float*>(base + o_va);
    idx_b_ = reinterpret_cast<int*>(base + o_ib);
    val_b_ = reinterpret_cast<float*>(base + o_vb);
    scan_tmp_ = base + o_scan;
    tm_ = tm, tn_ = tn, cells_a_ = cells_a, cells_b_ = cells_b;
    ran_ = true;
  }

  DecideArgs decide_args(bool is_a, const GemmOperands& ops) const {
    DecideArgs d{};
    d.strategy = static_cast<int>(policy_.strategy);
    d.lines = is_a ? ops.m : ops.n;
    d.k = ops.k;
    d.nfine = nfine_;
    d.segs = segs_;
    d.seg_fine = segmented() ? policy_.kblock / kFine : std::max<std::int64_t>(nfine_, 1);
    d.fhi = is_a ? fhi_a_ : fhi_b_;
    d.flo = is_a ? flo_a_ : flo_b_;
    d.codes = static_cast<const std::uint16_t*>(is_a ? ops.a : ops.b);
    d.line_stride = is_a ? ops.lda : 1;
    d.k_stride = is_a ? 1 : ops.ldb;
    d.scale = is_a ? scale_a_ : scale_b_;
    d.outl = is_a ? outl_a_ : outl_b_;
    d.mode_blk = is_a ? mode_rows_ : mode_cols_;
    d.count = outlier_capable() ? (is_a ? count_a_ : count_b_) : nullptr;
    d.tensor_hi = tensor_hi_ + (is_a ? 0 : 1);
    return d;
  }

  /// Stage 1: exponent statistics and plans (nothing to do for the direct cast: scale 0).
  void reduce(const GemmOperands& ops, cudaStream_t stream) {
    const std::int64_t m = ops.m, n = ops.n, k = ops.k;
    FPCERT_CUDA_CHECK(cudaMemsetAsync(stats_, 0, 2 * kStatCount * 8 + 16, stream));
    FPCERT_CUDA_CHECK(cudaMemsetAsync(mode_rows_, 0, static_cast<std::size_t>(tm_ * 4), stream));
    FPCERT_CUDA_CHECK(cudaMemsetAsync(mode_cols_, 0, static_cast<std::size_t>(tn_ * 4), stream));
    FPCERT_CUDA_CHECK(cudaMemsetAsync(outl_a_, 0, static_cast<std::size_t>(cells_a_), stream));
    FPCERT_CUDA_CHECK(cudaMemsetAsync(outl_b_, 0, static_cast<std::size_t>(cells_b_), stream));
    if (outlier_capable()) {
      FPCERT_CUDA_CHECK(cudaMemsetAsync(count_a_, 0, static_cast<std::size_t>((m + 1) * 4), stream));
      FPCERT_CUDA_CHECK(cudaMemsetAsync(count_b_, 0, static_cast<std::size_t>((n + 1) * 4), stream));
    }
    if (policy_.strategy == S::Cast) {
      FPCERT_CUDA_CHECK(cudaMemsetAsync(scale_a_, 0, 2, stream));
      FPCERT_CUDA_CHECK(cudaMemsetAsync(scale_b_, 0, 2, stream));
      return;
    }
    if (nfine_ > 0) {
      const std::int64_t cells = m * nfine_;
      fine_stats_rows<<<static_cast<unsigned>((cells + 7) / 8), 256, 0, stream>>>(
          m, k, static_cast<const std::uint16_t*>(ops.a), ops.lda, nfine_, fhi_a_, flo_a_);
      FPCERT_CUDA_LAUNCH_CHECK("fine_stats_rows");
      fine_stats_cols<<<dim3(static_cast<unsigned>((n + 255) / 256), grid_y(nfine_, 65535)), 256, 0, stream>>>(
          k, n, static_cast<const std::uint16_t*>(ops.b), ops.ldb, nfine_, fhi_b_, flo_b_);
      FPCERT_CUDA_LAUNCH_CHECK("fine_stats_cols");
    }
    for (const bool is_a : {true, false}) {
      const DecideArgs d = decide_args(is_a, ops);
      decide_lines<<<static_cast<unsigned>((d.lines + 31) / 32), 32, 0, stream>>>(d);
      FPCERT_CUDA_LAUNCH_CHECK("decide_lines");
    }
    if (policy_.strategy == S::Tensor) {
      finalize_tensor<<<1, 1, 0, stream>>>(tensor_hi_, scale_a_);
      finalize_tensor<<<1, 1, 0, stream>>>(tensor_hi_ + 1, scale_b_);
      FPCERT_CUDA_LAUNCH_CHECK("finalize_tensor");
    }
  }

  /// Stage 2: outlier offsets, the scaled fp16 operands, the outlier lists.
  void pack(const GemmOperands& ops, cudaStream_t stream) {
    const std::int64_t m = ops.m, n = ops.n, k = ops.k;
    if (outlier_capable()) {
      std::size_t bytes = scan_bytes_;
      FPCERT_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(scan_tmp_, bytes, count_a_, off_a_, static_cast<int>(m + 1), stream));
      bytes = scan_bytes_;
      FPCERT_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(scan_tmp_, bytes, count_b_, off_b_, static_cast<int>(n + 1), stream));
    }
    if (k > 0) {
      PackArgs pa{m, k, static_cast<const std::uint16_t*>(ops.a), ops.lda, a16_, lda16_, scale_a_, outl_a_, segs_, seg_len_,
                  shared_scale(), stats_};
      pack_operand<true><<<dim3(static_cast<unsigned>((k + 255) / 256), grid_y(m, 512)), 256, 0, stream>>>(pa);
      FPCERT_CUDA_LAUNCH_CHECK("pack_operand A");
      PackArgs pb{k, n, static_cast<const std::uint16_t*>(ops.b), ops.ldb, b16_, ldb16_, scale_b_, outl_b_, segs_, seg_len_,
                  shared_scale(), stats_ + kStatCount};
      pack_operand<false><<<dim3(static_cast<unsigned>((n + 255) / 256), grid_y(k, 512)), 256, 0, stream>>>(pb);
      FPCERT_CUDA_LAUNCH_CHECK("pack_operand B");
    }
    if (outlier_capable()) {
      GatherArgs ga{m, k, static_cast<const std::uint16_t*>(ops.a), ops.lda, 1, scale_a_, outl_a_, segs_, seg_len_, off_a_, idx_a_, val_a_};
      gather_outliers<<<static_cast<unsigned>((m + 127) / 128), 128, 0, stream>>>(ga);
      FPCERT_CUDA_LAUNCH_CHECK("gather_outliers A");
      GatherArgs gb{n, k, static_cast<const std::uint16_t*>(ops.b), 1, ops.ldb, scale_b_, outl_b_, segs_, seg_len_, off_b_, idx_b_, val_b_};
      gather_outliers<<<static_cast<unsigned>((n + 127) / 128), 128, 0, stream>>>(gb);
      FPCERT_CUDA_LAUNCH_CHECK("gather_outliers B");
    }
  }

  /// Stage 3: the MMA in the strategy's mode(s); scale = false skips the rescale (timing only).
  void mma(const GemmOperands& ops, cudaStream_t stream, bool scale) {
    const dim3 grid(static_cast<unsigned>((ops.n + kBN - 1) / kBN), static_cast<unsigned>((ops.m + kBM - 1) / kBM));
    const bool shared = shared_scale();
    const ScaleView sa{scale_a_, shared ? 0 : segs_, (shared || segs_ == 1) ? 0 : 1, ops.m};
    const ScaleView sb{scale_b_, shared ? 0 : segs_, (shared || segs_ == 1) ? 0 : 1, ops.n};
    const auto* a = reinterpret_cast<const std::uint8_t*>(a16_);
    const auto* b = reinterpret_cast<const std::uint8_t*>(b16_);
    auto* c = static_cast<float*>(ops.c);
    const std::uint32_t* mr = policy_.strategy == S::Auto ? mode_rows_ : nullptr;
    const std::uint32_t* mc = policy_.strategy == S::Auto ? mode_cols_ : nullptr;
    if (wgmma_) {
      wgmma_mma(ops, stream, scale, sa, sb, mr, mc);
      return;
    }
    const int kb_stages = segmented() ? policy_.kblock / 32 : 1;
    if (policy_.strategy != S::KBlock) {
      if (scale)
        f16_scaled_gemm<false, true><<<grid, kThreads, 0, stream>>>(ops.m, ops.n, ops.k, a, lda16_, true, b, ldb16_, true, c, ops.ldc,
                                                                     sa, sb, kb_stages, mr, mc);
      else
        f16_scaled_gemm<false, false><<<grid, kThreads, 0, stream>>>(ops.m, ops.n, ops.k, a, lda16_, true, b, ldb16_, true, c, ops.ldc,
                                                                      sa, sb, kb_stages, mr, mc);
      FPCERT_CUDA_LAUNCH_CHECK((name_ + " (row mode)").c_str());
    }
    if (segmented()) {
      if (scale)
        f16_scaled_gemm<true, true><<<grid, kThreads, 0, stream>>>(ops.m, ops.n, ops.k, a, lda16_, true, b, ldb16_, true, c, ops.ldc,
                                                                    sa, sb, kb_stages, mr, mc);
      else
        f16_scaled_gemm<true, false><<<grid, kThreads, 0, stream>>>(ops.m, ops.n, ops.k, a, lda16_, true, b, ldb16_, true, c, ops.ldc,
                                                                     sa, sb, kb_stages, mr, mc);
      FPCERT_CUDA_LAUNCH_CHECK((name_ + " (K-block mode)").c_str());
    }
  }

  /// Stage 3 on wgmma + TMA: row mode on 128 x 256 tiles (128 x 128 for Auto), K-block mode on 128 x 128 tiles (K-blocks
  /// of kblock / 64 stages). A16 is K-major (m x lda16), B16 row-major (k x ldb16: N-major boxes).
  void wgmma_mma(const GemmOperands& ops, cudaStream_t stream, bool scale, const ScaleView& sa, const ScaleView& sb,
                 const std::uint32_t* mr, const std::uint32_t* mc) {
    namespace wg = wgmma_device;
    CUtensorMap map_a{}, map_b{};
    if (ops.k > 0) {  // K = 0: no stage is loaded (C = +0) and the maps are never read
      map_a = wgmma_host::make_map(name_, a16_, 2, ops.k, ops.m, lda16_, wg::kStageK / 2, wg::kBM);
      map_b = wgmma_host::make_map(name_, b16_, 2, ops.n, ops.k, ldb16_, wg::kNBox, wg::kStageK / 2);
    }
    std::call_once(attr_, [] {
      FPCERT_CUDA_CHECK(cudaFuncSetAttribute(wg::wgmma_f16_scaled<false, true, 256>, cudaFuncAttributeMaxDynamicSharedMemorySize, wg::smem_bytes(256)));
      FPCERT_CUDA_CHECK(cudaFuncSetAttribute(wg::wgmma_f16_scaled<false, false, 256>, cudaFuncAttributeMaxDynamicSharedMemorySize, wg::smem_bytes(256)));
      FPCERT_CUDA_CHECK(cudaFuncSetAttribute(wg::wgmma_f16_scaled<false, true, 128>, cudaFuncAttributeMaxDynamicSharedMemorySize, wg::smem_bytes(128)));
      FPCERT_CUDA_CHECK(cudaFuncSetAttribute(wg::wgmma_f16_scaled<false, false, 128>, cudaFuncAttributeMaxDynamicSharedMemorySize, wg::smem_bytes(128)));
      FPCERT_CUDA_CHECK(cudaFuncSetAttribute(wg::wgmma_f16_scaled<true, true, 128>, cudaFuncAttributeMaxDynamicSharedMemorySize, wg::smem_bytes(128)));
      FPCERT_CUDA_CHECK(cudaFuncSetAttribute(wg::wgmma_f16_scaled<true, false, 128>, cudaFuncAttributeMaxDynamicSharedMemorySize, wg::smem_bytes(128)));
    });
    const int m = static_cast<int>(ops.m), n = static_cast<int>(ops.n), k = static_cast<int>(ops.k);
    auto* c = static_cast<float*>(ops.c);
    auto tiles = [&](int tn) { return static_cast<unsigned>(((ops.m + wg::kBM - 1) / wg::kBM) * ((ops.n + tn - 1) / tn)); };
    if (policy_.strategy != S::KBlock) {
      const int tn = row_tile_n();
      if (tn == 256) {
        if (scale) wg::wgmma_f16_scaled<false, true, 256><<<tiles(256), wg::kThreads, wg::smem_bytes(256), stream>>>(map_a, map_b, m, n, k, c, ops.ldc, sa, sb, 1, mr, mc);
        else wg::wgmma_f16_scaled<false, false, 256><<<tiles(256), wg::kThreads, wg::smem_bytes(256), stream>>>(map_a, map_b, m, n, k, c, ops.ldc, sa, sb, 1, mr, mc);
      } else {
        if (scale) wg::wgmma_f16_scaled<false, true, 128><<<tiles(128), wg::kThreads, wg::smem_bytes(128), stream>>>(map_a, map_b, m, n, k, c, ops.ldc, sa, sb, 1, mr, mc);
        else wg::wgmma_f16_scaled<false, false, 128><<<tiles(128), wg::kThreads, wg::smem_bytes(128), stream>>>(map_a, map_b, m, n, k, c, ops.ldc, sa, sb, 1, mr, mc);
      }
      FPCERT_CUDA_LAUNCH_CHECK((name_ + " (row mode)").c_str());
    }
    if (segmented()) {
      const int kb_stages = policy_.kblock / (wg::kStageK / 2);
      if (scale) wg::wgmma_f16_scaled<true, true, 128><<<tiles(128), wg::kThreads, wg::smem_bytes(128), stream>>>(map_a, map_b, m, n, k, c, ops.ldc, sa, sb, kb_stages, mr, mc);
      else wg::wgmma_f16_scaled<true, false, 128><<<tiles(128), wg::kThreads, wg::smem_bytes(128), stream>>>(map_a, map_b, m, n, k, c, ops.ldc, sa, sb, kb_stages, mr, mc);
      FPCERT_CUDA_LAUNCH_CHECK((name_ + " (K-block mode)").c_str());
    }
  }

  /// Stage 4: the outliers' products, added to C in fp32.
  void fallback(const GemmOperands& ops, cudaStream_t stream) {
    if (!outlier_capable()) return;
    FallbackArgs f{ops.m, ops.n, ops.k, static_cast<const std::uint16_t*>(ops.a), ops.lda, static_cast<const std::uint16_t*>(ops.b),
                   ops.ldb, static_cast<float*>(ops.c), ops.ldc, off_a_, idx_a_, off_b_, idx_b_, val_a_, val_b_, scale_a_, outl_a_,
                   segs_, seg_len_};
    fallback_outliers<<<dim3(static_cast<unsigned>((ops.n + 255) / 256), grid_y(ops.m, 4096)), 256, 0, stream>>>(f);
    FPCERT_CUDA_LAUNCH_CHECK("fallback_outliers");
  }

  Bf16OnF16Policy policy_;
  std::string name_;
  bool wgmma_ = false;
  std::once_flag attr_;
  KernelTraits traits_;
  emu_host::Workspace ws_;
  bool ran_ = false;
  std::int64_t last_m_ = 0, last_n_ = 0;
  std::int64_t lda16_ = 0, ldb16_ = 0, nfine_ = 0, seg_len_ = 0, segs_ = 1, tm_ = 0, tn_ = 0, cells_a_ = 0, cells_b_ = 0;
  std::size_t scan_bytes_ = 0;
  std::uint16_t *a16_ = nullptr, *b16_ = nullptr;
  std::int16_t *fhi_a_ = nullptr, *flo_a_ = nullptr, *fhi_b_ = nullptr, *flo_b_ = nullptr, *scale_a_ = nullptr, *scale_b_ = nullptr;
  std::uint8_t *outl_a_ = nullptr, *outl_b_ = nullptr;
  std::uint32_t *mode_rows_ = nullptr, *mode_cols_ = nullptr;
  unsigned long long* stats_ = nullptr;
  int *tensor_hi_ = nullptr, *count_a_ = nullptr, *count_b_ = nullptr, *off_a_ = nullptr, *off_b_ = nullptr, *idx_a_ = nullptr,
      *idx_b_ = nullptr;
  float *val_a_ = nullptr, *val_b_ = nullptr;
  void* scan_tmp_ = nullptr;
};

template <std::size_t I, bool kWgmma = false>
std::unique_ptr<GemmKernel> make_bf16_on_f16() {
  return std::make_unique<Bf16OnF16MmaKernel>(bf16_on_f16_policies()[I], kWgmma);
}
template <std::size_t I>
void register_both(const Bf16OnF16Policy& p) {
  register_kernel(bf16_on_f16_kernel_name(p), Backend::Cuda, false, &make_bf16_on_f16<I>);
  register_kernel(bf16_on_f16_wgmma_kernel_name(p), Backend::Cuda, false, &make_bf16_on_f16<I, true>);
}

}  // namespace

void register_emu_bf16_kernels() {
  const auto& p = bf16_on_f16_policies();
  if (p.size() != 7) throw std::logic_error("register_emu_bf16_kernels: the policy list changed");
  register_both<0>(p[0]);
  register_both<1>(p[1]);
  register_both<2>(p[2]);
  register_both<3>(p[3]);
  register_both<4>(p[4]);
  register_both<5>(p[5]);
  register_both<6>(p[6]);
}

}  // namespace fpcert
