// python/norm_bwd_entry.cpp — fpcert.certify_norm_backward's native part: a Python callable that maps x, dy, gamma and
// the saved mean and rstd of a rows x cols LayerNorm / RMSNorm to (dx, dgamma, dbeta) (torch's
// native_layer_norm_backward, _fused_rms_norm_backward, autograd of rms_norm, a NumPy function) as a NormBwdKernel with
// the arithmetic the caller declares, certified by the runner on norm_backward (docs/backward.md, "LayerNorm and RMSNorm
// backward"; docs/python.md).
#include <pybind11/pybind11.h>

#include "kernels/norm/norm_backward_kernel.hpp"
#include "python/py_support.hpp"
#include "suites/run/suite.hpp"

namespace fpcert::py_support {

namespace {

/// The callable as a host backward: `adapter(x, dy, gamma or None, mean or None, rstd) -> (dx, dgamma or None, dbeta or None)`,
/// every array as container codes (mean and rstd: 1 x rows fp32).
class PyNormBwdKernel final : public NormBwdKernel {
 public:
  PyNormBwdKernel(std::string name, std::string description, NormBwdTraits t, PyHandle adapter)
      : name_(std::move(name)), description_(std::move(description)), traits_(std::move(t)), adapter_(std::move(adapter)) {}
  const std::string& name() const override { return name_; }
  std::string description() const override { return description_; }
  Backend backend() const override { return Backend::Plugin; }
  const NormBwdTraits& norm_bwd_traits() const override { return traits_; }
  void run(const NormBwdOperands& o) override {
    py::gil_scoped_acquire gil;
    const Format& f = *traits_.input;
    auto opt = [](const void* p, std::int64_t n, const Format& fmt) {
      return p ? py::object(container_array(p, 1, n, n, fmt)) : py::object(py::none());
    };
    try {
      const py::object r = (*adapter_)(container_array(o.x, o.rows, o.cols, o.ldx, f), container_array(o.dy, o.rows, o.cols, o.lddy, f),
                                       opt(o.gamma, o.cols, f), opt(o.mean, o.rows, f32), opt(o.rstd, o.rows, f32));
      const py::tuple t = r.cast<py::tuple>();
      if (t.size() != 3) throw std::runtime_error("the callable must return (dx, dgamma, dbeta)");
      copy_rows(t[0], *traits_.dx_out, o.rows, o.cols, o.dx, o.lddx, "dx");
      if (o.dgamma) copy_rows(t[1], *traits_.param_out, 1, o.cols, o.dgamma, o.cols, "dgamma");
      if (o.dbeta) copy_rows(t[2], *traits_.param_out, 1, o.cols, o.dbeta, o.cols, "dbeta");
    } catch (py::error_already_set& e) {
      rethrow_python_error(e);  // the case records it; the suite goes on
    }
  }

 private:
  std::string name_, description_;
  NormBwdTraits traits_;
  PyHandle adapter_;
};

std::string certify_norm_backward(py::object adapter, const std::string& kind, const std::string& x, const std::string& dx_out,
                                  const std::string& compute, const std::string& acc, const std::string& param_acc,
                                  const std::string& param_out, const std::string& determinism, bool reads_saved, const std::string& name,
                                  const std::string& description, const std::string& suite_name, const std::string& command) {
  const SuiteInfo& suite = suite_of(suite_name, Operation::NormBackward, "norm_backward, norm_backward_quick");
  NormBwdTraits t;
  if (kind == "layernorm") t.kind = NormKind::LayerNorm;
  else if (kind == "rmsnorm") t.kind = NormKind::RmsNorm;
  else throw InputError("unknown kind '" + kind + "' (layernorm, rmsnorm)");
  t.input = &format_of(x);
  t.compute = &format_of(compute);
  t.acc = &format_of(acc);
  t.dx_out = &format_of(dx_out);
  t.param_acc = &format_of(param_acc);
  t.param_out = &format_of(param_out);
  if (determinism == "deterministic") t.param_determinism = Determinism::Deterministic;
  else if (determinism == "run_to_run") t.param_determinism = Determinism::RunToRun;
  else throw InputError("unknown determinism '" + determinism + "' (deterministic, run_to_run: dgamma/dbeta added with atomics)");
  t.reads_saved = reads_saved;
  t.note = "declared by the caller (fpcert.certify_norm_backward)";
  PyHandle h = make_handle(std::move(adapter));
  auto make = [=] { return std::unique_ptr<Kernel>(new PyNormBwdKernel(name, description, t, h)); };
  h.reset();
  return certify_registered(name, Operation::NormBackward, make, suite, "certify_norm_backward", command);
}

}  // namespace

void add_norm_bwd_entry(py::module_& m) {
  m.def("certify_norm_backward", &certify_norm_backward, py::arg("adapter"), py::arg("kind"), py::arg("x"), py::arg("dx_out"),
        py::arg("compute"), py::arg("acc"), py::arg("param_acc"), py::arg("param_out"), py::arg("determinism"), py::arg("reads_saved"),
        py::arg("name"), py::arg("description"), py::arg("suite"), py::arg("command"),
        "Certify a Python LayerNorm/RMSNorm backward callable on a norm_backward suite; the run's results as JSON "
        "(fpcert.certify_norm_backward wraps it)");
}

}  // namespace fpcert::py_support
