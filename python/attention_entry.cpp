// python/attention_entry.cpp — fpcert.certify_attention's native part: a Python callable computing scaled-dot-product
// attention (torch.nn.functional.scaled_dot_product_attention with a backend pinned, a NumPy function) as an
// AttentionKernel with the arithmetic the caller declares, certified by the runner on an attention suite (docs/python.md,
// "Attention"; docs/attention.md).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>

#include "kernels/attention/attention_kernel.hpp"
#include "python/py_support.hpp"
#include "suites/verdict/tolerance.hpp"

namespace fpcert::py_support {

namespace {

/// The callable as a host attention kernel: adapter(q, k, v, mask or None, causal, scale, shape) -> (o, lse or None), the
/// tensors as 2-D container codes (rows: batch x heads x len, columns: head_dim; the mask len_q x len_k fp32 codes).
class PyAttentionKernel final : public AttentionKernel {
 public:
  PyAttentionKernel(std::string name, std::string description, AttentionTraits t, PyHandle adapter)
      : name_(std::move(name)), description_(std::move(description)), traits_(std::move(t)), adapter_(std::move(adapter)) {}
  const std::string& name() const override { return name_; }
  std::string description() const override { return description_; }
  Backend backend() const override { return Backend::Plugin; }
  const AttentionTraits& attention_traits() const override { return traits_; }
  void run(const AttentionOperands& o) override {
    const AttentionShape& s = o.shape;
    const Format& in = *traits_.input;
    py::gil_scoped_acquire gil;
    try {
      const py::object q = container_array(o.q, s.batch * s.heads_q * s.len_q, s.head_dim, o.ldq, in);
      const py::object k = container_array(o.k, s.batch * s.heads_kv * s.len_k, s.head_dim, o.ldk, in);
      const py::object v = container_array(o.v, s.batch * s.heads_kv * s.len_k, s.head_dim, o.ldv, in);
      const py::object mask = o.mask ? py::object(container_array(o.mask, s.len_q, s.len_k, o.ldm, f32)) : py::object(py::none());
      const py::tuple shape = py::make_tuple(s.batch, s.heads_q, s.heads_kv, s.len_q, s.len_k, s.head_dim);
      // FP8 descale factors (AttentionTraits::descales): the callable gets them as descale=(dq, dk, dv); else None.
      const py::object descale = traits_.descales ? py::object(py::make_tuple(o.descale_q, o.descale_k, o.descale_v)) : py::object(py::none());
      const py::object r = (*adapter_)(q, k, v, mask, std::string(to_string(o.causal)), o.scale, shape, descale);
      const py::tuple t = r.cast<py::tuple>();
      if (t.size() != 2) throw std::runtime_error("the adapter returns (o, lse)");
      const std::int64_t rows = s.batch * s.heads_q * s.len_q;
      copy_rows(t[0], *traits_.out, rows, s.head_dim, o.o, o.ldo, "result");
      if (o.lse) {
        if (t[1].is_none()) throw std::runtime_error("the callable returned no LSE while it declares lse=True");
        copy_rows(t[1], f32, rows, 1, o.lse, 1, "LSE");
      }
    } catch (py::error_already_set& e) {
      const std::string what = e.what();
      const bool unsupported = e.matches(PyExc_NotImplementedError);  // the callable cannot take this call
      e.restore();
      PyErr_Clear();  // the case records it; the suite goes on
      if (unsupported) throw NotSupportedError(what);
      throw std::runtime_error(what);
    }
  }

 private:
  std::string name_, description_;
  AttentionTraits traits_;
  PyHandle adapter_;
};

std::uint8_t masks_of(const std::vector<std::string>& names) {
  std::uint8_t m = 0;
  for (const std::string& n : names) {
    if (n == "top_left") m |= kAttnMaskCausalTopLeft;
    else if (n == "bottom_right") m |= kAttnMaskCausalBottomRight;
    else if (n == "additive") m |= kAttnMaskAdditive;
    else throw InputError("unknown mask '" + n + "' (top_left, bottom_right, additive)");
  }
  return m;
}

/// A GEMM of the attention declared by a traits spec (suites/verdict/tolerance.hpp), e.g. "in=f16,acc=f32,acc_rounding=rz".
KernelTraits gemm_of(const std::string& spec, const char* which) {
  try {
    return parse_traits_spec(spec);
  } catch (const InputError& e) {
    throw InputError(std::string(which) + ": " + e.what());
  }
}

std::string certify_attention(py::object adapter, const std::string& in, const std::string& out, const std::string& qk,
                              const std::string& pv, const std::string& shift, int key_block, const std::string& exp_form,
                              const std::string& exp, double exp_abs, const std::string& normalize, bool lse, const std::string& log,
                              const std::string& masked_rows, const std::string& masked_lse, const std::vector<std::string>& masks,
                              const std::vector<int>& head_dims, bool grouped_heads, double score_rel, const std::string& note,
                              bool descales, int descale_roundings, int p_offset, const std::string& name,
                              const std::string& description, const std::string& suite_name, const std::string& command) {
  const SuiteInfo& suite = suite_of(suite_name, Operation::Attention, "attention, attention_quick");
  AttentionTraits t;
  t.input = &format_of(in);
  t.out = &format_of(out);
  t.qk = gemm_of(qk, "qk");
  t.pv = gemm_of(pv, "pv");
  if (shift == "online" || shift == "online_fa2") t.shift = SoftmaxShift::Online;
  else if (shift == "shifted") t.shift = SoftmaxShift::Shifted;
  else throw InputError("unknown shift '" + shift + "' (online, online_fa2, shifted)");
  t.rescale_by_difference = shift == "online_fa2";  // FlashAttention-2's rescaling factor (AttentionTraits)
  if (t.shift == SoftmaxShift::Online && key_block < 1) throw InputError("an online softmax needs key_block >= 1");
  t.key_block = t.shift == SoftmaxShift::Online ? key_block : 0;
  if (exp_form == "natural") t.exp_form = AttentionExpForm::Natural;
  else if (exp_form == "base2") t.exp_form = AttentionExpForm::Base2Folded;
  else if (exp_form == "base2_scaled") t.exp_form = AttentionExpForm::Base2Scaled;
  else throw InputError("unknown exp_form '" + exp_form + "' (natural, base2, base2_scaled)");
  t.exp = exp_of(exp);
  if (!(exp_abs >= 0 && exp_abs < 1)) throw InputError("exp_abs must be in [0, 1)");
  t.exp.abs = std::max(t.exp.abs, exp_abs);
  if (normalize == "divide") t.normalize = AttentionNormalize::Divide;
  else if (normalize == "reciprocal") t.normalize = AttentionNormalize::Reciprocal;
  else if (normalize == "reciprocal_approx") t.normalize = AttentionNormalize::Reciprocal, t.recip_ulps = 2;  // fast-math 1.f / l
  else if (normalize == "probabilities") t.normalize = AttentionNormalize::Probabilities;
  else throw InputError("unknown normalize '" + normalize + "' (divide, reciprocal, reciprocal_approx, probabilities)");
  t.writes_lse = lse;
  t.log = log_of(log);
  if (masked_rows == "zero") t.masked_rows = MaskedRowPolicy::Zero;
  else if (masked_rows == "nan") t.masked_rows = MaskedRowPolicy::Nan;
  else throw InputError("unknown masked_rows '" + masked_rows + "' (zero, nan)");
  if (masked_lse == "+inf") t.masked_lse = MaskedLse::PosInf;
  else if (masked_lse == "-inf") t.masked_lse = MaskedLse::NegInf;
  else throw InputError("unknown masked_lse '" + masked_lse + "' (+inf, -inf)");
  t.masks = masks_of(masks);
  t.head_dims = head_dims;
  t.grouped_heads = grouped_heads;
  if (!(score_rel >= 0 && score_rel < 0.5)) throw InputError("score_rel must be in [0, 0.5)");
  t.score_rel = score_rel;
  // FP8 (docs/attention.md, "FP8 and descale factors"), as the plugin ABI's attention_fp8 checks them.
  if (descale_roundings < 0 || descale_roundings > 8 || (!descales && descale_roundings != 0))
    throw InputError("descale_roundings must be in 0 .. 8, and 0 without descales");
  if (p_offset < 0 || p_offset > 16) throw InputError("p_offset must be in 0 .. 16 (P formed as 2^p_offset times the probability)");
  if (p_offset > 0 && t.exp_form != AttentionExpForm::Base2Folded) throw InputError("p_offset > 0 needs exp_form='base2' (the shift RN(m c) - k)");
  t.descales = descales;
  t.descale_roundings = descale_roundings;
  t.p_offset_log2 = p_offset;
  t.note = note.empty() ? "declared by the caller (fpcert.certify_attention)" : note;
  PyHandle h = make_handle(std::move(adapter));
  auto make = [=] { return std::unique_ptr<Kernel>(new PyAttentionKernel(name, description, t, h)); };
  h.reset();
  return certify_registered(name, Operation::Attention, make, suite, "certify_attention", command);
}

}  // namespace

void add_attention_entry(py::module_& m) {
  m.def("certify_attention", &certify_attention, py::arg("adapter"), py::arg("input"), py::arg("out"), py::arg("qk"), py::arg("pv"),
        py::arg("shift"), py::arg("key_block"), py::arg("exp_form"), py::arg("exp"), py::arg("exp_abs"), py::arg("normalize"), py::arg("lse"),
        py::arg("log"), py::arg("masked_rows"), py::arg("masked_lse"), py::arg("masks"), py::arg("head_dims"),
        py::arg("grouped_heads"), py::arg("score_rel"), py::arg("note"), py::arg("descales"), py::arg("descale_roundings"),
        py::arg("p_offset"), py::arg("name"), py::arg("description"),
        py::arg("suite"), py::arg("command"),
        "Certify a Python attention callable on an attention suite; the run's results as JSON (fpcert.certify_attention wraps it)");
}

}  // namespace fpcert::py_support
