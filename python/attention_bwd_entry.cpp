// python/attention_bwd_entry.cpp — fpcert.certify_attention_backward's native part: a Python callable computing the
// attention backward (PyTorch's SDPA backward ops with a backend pinned, autograd of the math backend, a NumPy function)
// as an AttentionBwdKernel with the arithmetic the caller declares, certified by the runner on an attention backward
// suite (docs/python.md, "Attention"; docs/backward.md, "Attention backward").
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "kernels/attention/attention_backward_kernel.hpp"
#include "python/py_support.hpp"
#include "suites/verdict/tolerance.hpp"

namespace fpcert::py_support {

namespace {

/// The callable as a host kernel: adapter(q, k, v, o, do, lse, mask or None, causal, scale, shape) -> (dq, dk, dv), the
/// tensors as 2-D container codes (rows: batch x heads x len, columns: head_dim; lse: rows x 1 fp32 codes).
class PyAttentionBwdKernel final : public AttentionBwdKernel {
 public:
  PyAttentionBwdKernel(std::string name, std::string description, AttentionBwdTraits t, PyHandle adapter)
      : name_(std::move(name)), description_(std::move(description)), traits_(std::move(t)), adapter_(std::move(adapter)) {}
  const std::string& name() const override { return name_; }
  std::string description() const override { return description_; }
  Backend backend() const override { return Backend::Plugin; }
  const AttentionBwdTraits& attention_bwd_traits() const override { return traits_; }
  void run(const AttentionBwdOperands& o) override {
    const AttentionShape& s = o.shape;
    const Format& in = *traits_.input;
    const std::int64_t rq = s.batch * s.heads_q * s.len_q, rk = s.batch * s.heads_kv * s.len_k;
    py::gil_scoped_acquire gil;
    try {
      const py::object q = container_array(o.q, rq, s.head_dim, o.ldq, in), k = container_array(o.k, rk, s.head_dim, o.ldk, in);
      const py::object v = container_array(o.v, rk, s.head_dim, o.ldv, in), out = container_array(o.o, rq, s.head_dim, o.ldo, in);
      const py::object g = container_array(o.d_o, rq, s.head_dim, o.lddo, in), lse = container_array(o.lse, rq, 1, 1, f32);
      const py::object mask = o.mask ? py::object(container_array(o.mask, s.len_q, s.len_k, o.ldm, f32)) : py::object(py::none());
      const py::tuple shape = py::make_tuple(s.batch, s.heads_q, s.heads_kv, s.len_q, s.len_k, s.head_dim);
      const py::object r = (*adapter_)(q, k, v, out, g, lse, mask, std::string(to_string(o.causal)), o.scale, shape);
      const py::tuple t = r.cast<py::tuple>();
      if (t.size() != 3) throw std::runtime_error("the adapter returns (dq, dk, dv)");
      copy_rows(t[0], *traits_.dq_out, rq, s.head_dim, o.dq, o.lddq, "dQ");
      copy_rows(t[1], *traits_.dk_out, rk, s.head_dim, o.dk, o.lddk, "dK");
      copy_rows(t[2], *traits_.dv_out, rk, s.head_dim, o.dv, o.lddv, "dV");
    } catch (py::error_already_set& e) {
      const std::string what = e.what();
      const bool unsupported = e.matches(PyExc_NotImplementedError);  // the callable cannot take this call
      e.restore();
      PyErr_Clear();
      if (unsupported) throw NotSupportedError(what);
      throw std::runtime_error(what);
    }
  }

 private:
  std::string name_, description_;
  AttentionBwdTraits traits_;
  PyHandle adapter_;
};

KernelTraits gemm_spec(const std::string& spec, const char* which) {
  try {
    return parse_traits_spec(spec);
  } catch (const InputError& e) {
    throw InputError(std::string(which) + ": " + e.what());
  }
}

std::string certify_attention_backward(py::object adapter, const std::string& in, const std::vector<std::string>& gemms,
                                       const std::string& exp_form, const std::string& exp, double exp_abs, const std::string& d_acc,
                                       const std::string& compute, bool dq_atomics, const std::string& dq_acc,
                                       const std::vector<std::string>& outs, const std::vector<std::string>& masks,
                                       const std::vector<int>& head_dims, bool grouped_heads, const std::string& masked_lse,
                                       bool reads_saved, const std::string& note, const std::string& name, const std::string& description,
                                       const std::string& suite_name, const std::string& command) {
  const SuiteInfo& suite = suite_of(suite_name, Operation::AttentionBackward, "attention_backward, attention_backward_quick");
  if (gemms.size() != 5) throw InputError("five GEMM specs: qk, dov, pdo, dsk, dsq");
  if (outs.size() != 3) throw InputError("three output formats: dq, dk, dv");
  AttentionBwdTraits t;
  t.input = &format_of(in);
  t.qk = gemm_spec(gemms[0], "qk");
  t.dov = gemm_spec(gemms[1], "dov");
  t.pdo = gemm_spec(gemms[2], "pdo");
  t.dsk = gemm_spec(gemms[3], "dsk");
  t.dsq = gemm_spec(gemms[4], "dsq");
  if (exp_form == "natural") t.exp_form = AttentionExpForm::Natural;
  else if (exp_form == "base2") t.exp_form = AttentionExpForm::Base2Folded;
  else throw InputError("unknown exp_form '" + exp_form + "' (natural, base2)");
  t.exp = exp_of(exp);
  if (!(exp_abs >= 0 && exp_abs < 1)) throw InputError("exp_abs must be in [0, 1)");
  t.exp.abs = std::max(t.exp.abs, exp_abs);
  t.d_acc = &format_of(d_acc);
  t.compute = &format_of(compute);
  t.dq_determinism = dq_atomics ? Determinism::RunToRun : Determinism::Deterministic;
  t.dq_acc = &format_of(dq_acc);
  t.dq_out = &format_of(outs[0]);
  t.dk_out = &format_of(outs[1]);
  t.dv_out = &format_of(outs[2]);
  t.masks = 0;
  for (const std::string& m : masks) {
    if (m == "top_left") t.masks |= kAttnMaskCausalTopLeft;
    else if (m == "bottom_right") t.masks |= kAttnMaskCausalBottomRight;
    else if (m == "additive") t.masks |= kAttnMaskAdditive;
    else throw InputError("unknown mask '" + m + "' (top_left, bottom_right, additive)");
  }
  t.head_dims = head_dims;
  t.grouped_heads = grouped_heads;
  if (masked_lse == "+inf") t.masked_lse = MaskedLse::PosInf;
  else if (masked_lse == "-inf") t.masked_lse = MaskedLse::NegInf;
  else throw InputError("unknown masked_lse '" + masked_lse + "' (+inf, -inf)");
  t.reads_saved = reads_saved;
  t.note = note.empty() ? "declared by the caller (fpcert.certify_attention_backward)" : note;
  PyHandle h = make_handle(std::move(adapter));
  auto make = [=] { return std::unique_ptr<Kernel>(new PyAttentionBwdKernel(name, description, t, h)); };
  h.reset();
  return certify_registered(name, Operation::AttentionBackward, make, suite, "certify_attention_backward", command);
}

}  // namespace

void add_attention_bwd_entry(py::module_& m) {
  m.def("certify_attention_backward", &certify_attention_backward, py::arg("adapter"), py::arg("input"), py::arg("gemms"),
        py::arg("exp_form"), py::arg("exp"), py::arg("exp_abs"), py::arg("d_acc"), py::arg("compute"), py::arg("dq_atomics"),
        py::arg("dq_acc"), py::arg("outs"), py::arg("masks"), py::arg("head_dims"), py::arg("grouped_heads"), py::arg("masked_lse"),
        py::arg("reads_saved"), py::arg("note"), py::arg("name"), py::arg("description"), py::arg("suite"), py::arg("command"),
        "Certify a Python attention backward callable on an attention backward suite; the run's results as JSON");
}

}  // namespace fpcert::py_support
