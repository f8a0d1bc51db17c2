// kernels/softmax/softmax_kernel.cpp — registry access, descriptions and the implementations' error declarations of
// softmax kernels (kernels/softmax/softmax_kernel.hpp).
#include "kernels/softmax/softmax_kernel.hpp"

#include "oracle/math/expf_ops.hpp"

namespace fpcert {

std::string_view to_string(SoftmaxBug b) {
  switch (b) {
    case SoftmaxBug::None: return "none";
    case SoftmaxBug::NoMaxShift: return "no_max_shift";
    case SoftmaxBug::WrongRescale: return "wrong_rescale";
    case SoftmaxBug::MaskAfterExp: return "mask_after_exp";
    case SoftmaxBug::F16RowSum: return "f16_row_sum";
    case SoftmaxBug::NanMaskedRows: return "nan_masked_rows";
    case SoftmaxBug::Zeros: return "zeros";
    case SoftmaxBug::Bf16RowSum: return "bf16_row_sum";
  }
  return "?";
}

std::unique_ptr<SoftmaxKernel> make_softmax_kernel(const std::string& name) {
  const KernelInfo* k = find_kernel_info(name);
  if (!k || k->operation != Operation::Softmax) return nullptr;
  return std::unique_ptr<SoftmaxKernel>(static_cast<SoftmaxKernel*>(k->make().release()));
}

namespace {
std::string fn_text(const ElemFnError& e) {
  std::string s = std::to_string(e.ulps);
  s.erase(s.find_last_not_of('0') + 1);
  if (s.back() == '.') s.pop_back();
  if (e.ulps_per_x > 0) {
    std::string k = std::to_string(e.ulps_per_x);
    k.erase(k.find_last_not_of('0') + 1);
    s += " + floor(" + k + "|x|)";
  }
  return s + " ulp";
}
}  // namespace

std::string describe_softmax_traits(const SoftmaxTraits& t) {
  const SoftmaxArith& a = t.arith;
  std::string s = std::string(to_string(a.fn)) + " " + std::string(to_string(a.shift));
  if (a.shift == SoftmaxShift::Online) s += " (block " + std::to_string(a.block) + ")";
  s += ", in " + std::string(t.x_input->tag) + ", compute " + std::string(a.compute->tag) + ", exp " + fn_text(a.exp);
  if (a.exp_exact != SoftmaxExpExact::None) s += " (" + std::string(to_string(a.exp_exact)) + ", declared exactly)";
  if (a.fn == SoftmaxFn::LogSoftmax) s += ", log " + fn_text(a.log);
  s += ", sum " + std::string(a.sum_acc->tag) + " ";
  s += a.shift == SoftmaxShift::Online ? "online" : describe(a.sum_order);
  if (a.fn == SoftmaxFn::Softmax) s += a.reciprocal ? ", reciprocal" : ", divide";
  s += ", out " + std::string(a.out->tag) + "; masked rows " + std::string(to_string(t.masked_rows));
  return s;
}

ElemFnError exp_error_libm_f32() {
  // The model rounds glibc's double exp (documented below 1 ulp of double, glibc manual "Errors in Math Functions")
  // to fp32: 0.5 ulp + 2^-28 ulp of fp32 < 1 ulp; a subnormal fp32 result: half a subnormal ulp plus that, < 2^-149.
  return {1, 0, 0x1p-149, "fl32(exp) of glibc's double exp: 0.5 ulp + 2^-28 ulp (glibc manual, Errors in Math Functions)"};
}
ElemFnError log_error_libm_f32() { return {1, 0, 0, "fl32(log) of glibc's double log: 0.5 ulp + 2^-28 ulp"}; }
ElemFnError exp_error_cuda_expf() {
  return {2, 0, 2 * 0x1p-149, "CUDA expf: 2 ulp, full range (CUDA C Programming Guide, Mathematical Functions, single precision)"};
}
ElemFnError exp_error_cuda_fast() {
  return {2, 1.173, 0x1p-126,
          "CUDA __expf: 2 + floor(abs(1.173 x)) ulp (CUDA C Programming Guide, Intrinsic Functions); ex2.approx.ftz flushes "
          "results below 2^-126"};
}
ElemFnError exp_error_expf_ops() {
  // Measured over all 2^32 inputs (0.94 ulp at most, bench/bench_expf_ops.cpp) and checked as a claim by the elementwise
  // suite (subjects fpcert_expf_ops, cuda_fpcert_expf_ops); subnormal results within one subnormal ulp.
  return {math::kExpfOpsUlps, 0, 0x1p-149,
          "fpcert expf_ops: 1 ulp, every binary32 input (oracle/math/expf_ops.hpp; the elementwise check holds the claim)"};
}
ElemFnError log_error_cuda_logf() { return {1, 0, 0, "CUDA logf: 1 ulp (CUDA C Programming Guide, Mathematical Functions)"}; }

}  // namespace fpcert
