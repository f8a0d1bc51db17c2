// oracle/gemm_engine.cpp — the built-in Eigen engine of the fast exact GEMM, the process default, and the sample
// check of references made by another engine (oracle/gemm_engine.hpp).
#include "oracle/gemm_engine.hpp"

#include <Eigen/Core>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "oracle/gemm_ref.hpp"

namespace fpcert {
namespace {

class EigenEngine final : public ExactGemmEngine {
 public:
  const char* name() const override { return "cpu-eigen"; }
  bool per_tile() const override { return true; }
  bool sample_checked() const override { return false; }
  void multiply(const SliceBlock& ops, std::int64_t i0, std::int64_t tm, std::int64_t j0, std::int64_t tn,
                double* out) override {
    using RowMat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    using ColMat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;
    using Stride = Eigen::OuterStride<>;
    const std::int64_t w = ops.k;
    for (int g = 0; g < ops.count; ++g) {
      Eigen::Map<const RowMat, 0, Stride> A(ops.a[g] + i0 * w, tm, w, Stride(w));
      Eigen::Map<const ColMat, 0, Stride> B(ops.b[g] + j0 * w, w, tn, Stride(w));
      Eigen::Map<RowMat> T(out + g * tm * tn, tm, tn);
      T.noalias() = A * B;  // exact for g < count - 1 (docs/oracle.md, "Exact GEMMs")
    }
  }
};

struct DefaultEngine {
  std::mutex mu;
  std::shared_ptr<ExactGemmEngine> engine;
  pid_t pid = 0;  // the process that set it
};
DefaultEngine& default_slot() {
  static DefaultEngine* d = new DefaultEngine;  // never destroyed: a GPU engine must not outlive the CUDA runtime at exit
  return *d;
}

std::uint64_t splitmix64(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

bool same_bits(double x, double y) {
  return (std::isnan(x) && std::isnan(y)) || std::bit_cast<std::uint64_t>(x) == std::bit_cast<std::uint64_t>(y);
}

std::string show(const RefValue& v, std::uint8_t status, double abs_sum) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "{hi %a, lo %a, tail %d, status %u, abs_sum %a}", v.hi, v.lo, v.tail, status, abs_sum);
  return buf;
}

}  // namespace

ExactGemmEngine& eigen_gemm_engine() {
  static EigenEngine e;
  return e;
}

void set_default_gemm_engine(std::shared_ptr<ExactGemmEngine> engine) {
  DefaultEngine& d = default_slot();
  std::lock_guard<std::mutex> lock(d.mu);
  d.engine = std::move(engine);
  d.pid = ::getpid();
}

std::shared_ptr<ExactGemmEngine> default_gemm_engine() {
  DefaultEngine& d = default_slot();
  std::lock_guard<std::mutex> lock(d.mu);
  if (!d.engine || d.pid != ::getpid()) return {};  // forked child: the built-in engine
  return d.engine;
}

std::vector<std::int64_t> sample_elements(std::int64_t m, std::int64_t n, std::int64_t k) {
  std::vector<std::int64_t> idx;
  const std::int64_t mn = m * n;
  if (mn == 0) return idx;
  if (mn <= kSampleElements || mn * std::max<std::int64_t>(k, 1) <= kSampleAllProducts) {
    for (std::int64_t e = 0; e < mn; ++e) idx.push_back(e);
    return idx;
  }
  idx = {0, n - 1, (m - 1) * n, mn - 1};
  std::uint64_t s = static_cast<std::uint64_t>(m) * 0x100000001b3ULL ^ static_cast<std::uint64_t>(n) << 21 ^
                    static_cast<std::uint64_t>(k);
  while (static_cast<std::int64_t>(idx.size()) < kSampleElements) {
    const auto e = static_cast<std::int64_t>(splitmix64(s) % static_cast<std::uint64_t>(mn));
    if (std::find(idx.begin(), idx.end(), e) == idx.end()) idx.push_back(e);
  }
  std::sort(idx.begin(), idx.end());
  return idx;
}

std::int64_t check_reference_sample(const MatrixView& a, const MatrixView& b, const GemmRef& r, const char* engine,
                                    double abs_upper_factor) {
  const std::int64_t K = a.cols;
  const std::vector<std::int64_t> idx = sample_elements(r.m, r.n, K);
  std::vector<double> row(static_cast<std::size_t>(K)), col(static_cast<std::size_t>(K));
  for (const std::int64_t e : idx) {
    const std::int64_t i = e / r.n, j = e % r.n;
    for (std::int64_t t = 0; t < K; ++t) {
      row[static_cast<std::size_t>(t)] = a.at(i, t);
      col[static_cast<std::size_t>(t)] = b.at(t, j);
    }
    const DotRef d = exact_dot(row.data(), col.data(), static_cast<std::size_t>(K));
    const auto u = static_cast<std::size_t>(e);
    const RefValue& v = r.c[u];
    const std::uint8_t st = static_cast<std::uint8_t>(r.status[u] & ~kRefFallback);
    bool ok = same_bits(v.hi, d.value.hi) && same_bits(v.lo, d.value.lo) && v.tail == d.value.tail && st == d.status;
    // abs_sum: RU(sum |ab|) <= U (always), U <= RU * factor (when the caller knows the factor; docs/oracle.md, "abs_sum").
    if (ok && !(r.abs_sum[u] >= d.abs_sum)) ok = false;
    if (ok && abs_upper_factor > 0 && std::isfinite(d.abs_sum) &&
        !(r.abs_sum[u] <= std::nextafter(d.abs_sum * abs_upper_factor, HUGE_VAL)))  // the product rounded up
      ok = false;
    if (!ok)
      throw DeviceError("internal error: the exact GEMM reference made with engine " + std::string(engine) +
                        " differs from the CPU oracle (exact_dot) at C[" + std::to_string(i) + "][" + std::to_string(j) +
                        "] of " + std::to_string(r.m) + " x " + std::to_string(r.n) + " x " + std::to_string(K) + ": " +
                        show(v, r.status[u], r.abs_sum[u]) + " vs " + show(d.value, d.status, d.abs_sum) +
                        "; no verdict is given on a reference that is not the oracle's (docs/oracle.md, \"On the GPU\")");
  }
  return static_cast<std::int64_t>(idx.size());
}

}  // namespace fpcert
