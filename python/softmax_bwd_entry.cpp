// python/softmax_bwd_entry.cpp — fpcert.certify_softmax_backward's native part: a Python callable mapping the saved
// forward output y and the incoming gradient dy (rows x cols each) to dx (PyTorch's aten._softmax_backward_data or
// _log_softmax_backward_data, a NumPy function) as a SoftmaxBwdKernel with the arithmetic the caller declares,
// certified by the runner on a softmax_backward suite (docs/python.md; docs/backward.md, "Softmax and log-softmax
// backward").
#include <pybind11/pybind11.h>

#include "kernels/softmax/softmax_backward_kernel.hpp"
#include "python/py_support.hpp"
#include "suites/run/suite.hpp"

namespace fpcert::py_support {

namespace {

/// "unknown" (any order), "sequential", "pairwise", "warp:L" (32 strided lane sums, then the xor butterfly).
ReduceOrder dot_order_of(const std::string& s) {
  if (s == "unknown") return ReduceOrder::unknown();
  if (s == "sequential") return ReduceOrder::sequential();
  if (s == "pairwise") return ReduceOrder::pairwise();
  if (s == "warp:32") return ReduceOrder::warp_tree(32);
  throw InputError("unknown order '" + s + "' (unknown, sequential, pairwise, warp:32)");
}

/// The callable as a host softmax backward: `adapter(y_codes, dy_codes, None, scale) -> dx codes`.
class PySoftmaxBwdKernel final : public SoftmaxBwdKernel {
 public:
  PySoftmaxBwdKernel(std::string name, std::string description, SoftmaxBwdTraits t, bool accepts_scale, PyHandle adapter)
      : name_(std::move(name)), description_(std::move(description)), traits_(std::move(t)), accepts_scale_(accepts_scale),
        adapter_(std::move(adapter)) {}
  const std::string& name() const override { return name_; }
  std::string description() const override { return description_; }
  Backend backend() const override { return Backend::Plugin; }
  const SoftmaxBwdTraits& softmax_bwd_traits() const override { return traits_; }
  void run(const SoftmaxBwdOperands& o) override {
    if (o.scale != 1.0f && !accepts_scale_) throw NotSupportedError("the callable takes no scale (accepts_scale=False)");
    py::gil_scoped_acquire gil;
    const py::object y = container_array(o.y, o.rows, o.cols, o.ldy, *traits_.y_input);
    const py::object dy = container_array(o.dy, o.rows, o.cols, o.lddy, *traits_.dy_input);
    try {
      copy_rows((*adapter_)(y, dy, py::none(), o.scale), *traits_.out, o.rows, o.cols, o.dx, o.lddx, "result");
    } catch (py::error_already_set& e) {
      const std::string what = e.what();
      e.restore();
      PyErr_Clear();  // the case records it; the suite goes on
      throw std::runtime_error(what);
    }
  }

 private:
  std::string name_, description_;
  SoftmaxBwdTraits traits_;
  bool accepts_scale_;
  PyHandle adapter_;
};

std::string certify_softmax_backward(py::object adapter, const std::string& kind, const std::string& y, const std::string& dy,
                                     const std::string& out, const std::string& compute, const std::string& dot, const std::string& order,
                                     bool fma, bool expanded, const std::string& prod, const std::string& exp, bool accepts_scale, const std::string& name,
                                     const std::string& description, const std::string& suite_name, const std::string& command) {
  const SuiteInfo& suite = suite_of(suite_name, Operation::SoftmaxBackward, "softmax_backward, softmax_backward_quick");
  SoftmaxBwdTraits t;
  if (kind == "softmax") t.fn = SoftmaxFn::Softmax;
  else if (kind == "log_softmax") t.fn = SoftmaxFn::LogSoftmax;
  else throw InputError("unknown kind '" + kind + "' (softmax, log_softmax)");
  t.y_input = &format_of(y);
  t.dy_input = &format_of(dy);
  t.compute = &format_of(compute);
  t.dot_acc = &format_of(dot);
  t.dot_order = dot_order_of(order);
  t.fma = fma;
  t.expanded = expanded;
  if (!prod.empty()) t.prod = &format_of(prod);
  t.exp = exp_of(exp);
  t.out = &format_of(out);
  t.note = "declared by the caller (fpcert.certify_softmax_backward)";
  t.takes_scale = accepts_scale;
  PyHandle h = make_handle(std::move(adapter));
  auto make = [=] { return std::unique_ptr<Kernel>(new PySoftmaxBwdKernel(name, description, t, accepts_scale, h)); };
  h.reset();
  return certify_registered(name, Operation::SoftmaxBackward, make, suite, "certify_softmax_backward", command);
}

}  // namespace

void add_softmax_bwd_entry(py::module_& m) {
  m.def("certify_softmax_backward", &certify_softmax_backward, py::arg("adapter"), py::arg("kind"), py::arg("y"), py::arg("dy"),
        py::arg("out"), py::arg("compute"), py::arg("dot"), py::arg("order"), py::arg("fma"), py::arg("expanded"), py::arg("prod"), py::arg("exp"), py::arg("accepts_scale"),
        py::arg("name"), py::arg("description"), py::arg("suite"), py::arg("command"),
        "Certify a Python softmax / log-softmax backward callable on a softmax_backward suite; the run's results as JSON "
        "(fpcert.certify_softmax_backward wraps it)");
}

}  // namespace fpcert::py_support
