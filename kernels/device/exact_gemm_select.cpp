// kernels/device/exact_gemm_select.cpp — --reference cpu|gpu|auto (exact_gemm_cuda.hpp): the GPU engine made at its
// first use, and the engine's absence in a build without CUDA.
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "base/error.hpp"
#include "kernels/device/exact_gemm_cuda.hpp"
#include "oracle/card_chains.hpp"

namespace fpcert {

#if !defined(FPCERT_HAVE_CUDA)
std::shared_ptr<CudaExactGemmEngine> make_cuda_exact_gemm_engine(std::string* why) {
  if (why) *why = "this fpcert was built without CUDA (no nvcc at configure time, or FPCERT_CUDA=OFF)";
  return nullptr;
}
#endif

namespace {

/// The cuBLAS engine, made when a reference first needs it: a process that initialised CUDA cannot give the device to
/// the children it forks afterwards (the tensor-core cards' probe, the environment stamp, --isolate), so the process
/// default stays off the device until the first reference of at least kGpuReferenceMinProducts. `required` (--reference
/// gpu): a device that cannot be used then is an error; otherwise (auto) the CPU oracle answers from then on.
class LazyCudaEngine final : public CudaExactGemmEngine {
 public:
  explicit LazyCudaEngine(bool required) : required_(required) {}
  const char* name() const override { return "gpu-cublas-dgemm"; }
  bool per_tile() const override { return false; }
  std::size_t panel_bytes() const override { return get().panel_bytes(); }
  void begin_block(const SliceBlock& ops) override { get().begin_block(ops); }
  void multiply(const SliceBlock& ops, std::int64_t i0, std::int64_t tm, std::int64_t j0, std::int64_t tn,
                double* out) override {
    get().multiply(ops, i0, tm, j0, tn, out);
  }
  double* panel_memory(std::size_t doubles) override { return get().panel_memory(doubles); }
  bool whole_reference(const MatrixView& a, const MatrixView& b, unsigned threads, GemmRef& r) override {
    return get().whole_reference(a, b, threads, r);
  }
  bool takes(double products) override { return products >= static_cast<double>(kGpuReferenceMinProducts) && device_ready(); }
  bool card_chains(const CardChains& job, std::uint32_t* d, std::uint8_t* general) override {
    return job.products() >= static_cast<double>(kGpuCardChainMinProducts) && device_ready() && get().card_chains(job, d, general);
  }
  bool residue_gemms(const ResidueGemms& job, std::uint8_t* out) override {
    return job.products() >= static_cast<double>(kGpuResidueMinProducts) && device_ready() && get().residue_gemms(job, out);
  }
  ExactGemmTimes times() const override {
    const std::lock_guard<std::mutex> lock(mu_);
    return real_ ? real_->times() : ExactGemmTimes{};
  }
  void reset_times() override {
    const std::lock_guard<std::mutex> lock(mu_);
    if (real_) real_->reset_times();
  }
  void set_whole(bool on) override { get().set_whole(on); }
  void set_band_elements(std::int64_t n) override { get().set_band_elements(n); }

 private:
  CudaExactGemmEngine& get() const {
    const std::lock_guard<std::mutex> lock(mu_);
    if (!real_) make_locked(true);
    return *real_;
  }
  /// Whether the device answers (made at the first call; auto: once it did not, never again in this process).
  bool device_ready() {
    const std::lock_guard<std::mutex> lock(mu_);
    if (unusable_) return false;
    if (real_ || make_locked(required_)) return true;
    unusable_ = true;  // auto: the CPU oracle from now on
    return false;
  }
  /// Makes the engine (mu_ held); without a usable device throws DeviceError with the reason when `or_throw`, else
  /// returns false.
  bool make_locked(bool or_throw) const {
    std::string why;
    real_ = make_cuda_exact_gemm_engine(&why);
    if (!real_ && or_throw) throw DeviceError("--reference gpu: no usable CUDA device for the exact reference: " + why);
    return real_ != nullptr;
  }
  const bool required_;
  mutable std::mutex mu_;
  mutable std::shared_ptr<CudaExactGemmEngine> real_;
  bool unusable_ = false;
};

}  // namespace

std::string use_reference_engine(const std::string& choice, const std::function<bool(std::string*)>& usable) {
  if (choice != "cpu" && choice != "gpu" && choice != "auto")
    throw InputError("--reference: expected 'cpu', 'gpu' or 'auto', got '" + choice + "'");
  if (choice == "cpu") {
    set_default_gemm_engine(nullptr);
    return eigen_gemm_engine().name();
  }
  if (choice == "gpu") {  // asked now, so that a machine without a device stops before anything runs
    std::string why;
    if (!usable(&why)) throw DeviceError("--reference gpu: no usable CUDA device for the exact reference: " + why);
  }
  // auto asks nothing until a reference of kGpuReferenceMinProducts comes (most runs have none: no probe, no context).
  set_default_gemm_engine(std::make_shared<LazyCudaEngine>(choice == "gpu"));
  return choice == "gpu" ? "gpu-cublas-dgemm" : "auto: gpu-cublas-dgemm from 2^27 products where a device answers, else cpu-eigen";
}

}  // namespace fpcert
