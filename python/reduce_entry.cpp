// python/reduce_entry.cpp — fpcert.certify_reduction's and fpcert.diagnose_reduction's native part: a Python callable that
// reduces each row of a count x length array (numpy.sum(x, axis=1), torch.sum(x, dim=1), a dot product of two such arrays,
// a norm) declared as a ReduceKernel with the arithmetic the caller declares, then certified by the runner on a reduction
// suite (python/rows_entry.cpp, certify_declared) or diagnosed (python/diagnose_entry.cpp) (docs/python.md, "Reductions";
// docs/reductions.md).
#include <pybind11/pybind11.h>

#include <nlohmann/json.hpp>

#include "kernels/reduce/reduce_kernel.hpp"
#include "python/py_support.hpp"

namespace fpcert::py_support {

namespace {

/// "unknown", "sequential", "pairwise", "numpy" (NumPy's pairwise sum of float32, blocks of 128 lanes of 8),
/// "blocked:B", "warp:L" (a warp tree of L lanes).
ReduceOrder order_of(const std::string& s) {
  auto number = [&](std::size_t at) {
    try {
      std::size_t used = 0;
      const int v = std::stoi(s.substr(at), &used);
      if (used == s.size() - at && v >= 1) return v;
    } catch (const std::exception&) {
    }
    throw InputError("order '" + s + "': expected a positive integer after ':'");
  };
  if (s.empty() || s == "unknown") return ReduceOrder::unknown();
  if (s == "sequential") return ReduceOrder::sequential();
  if (s == "pairwise") return ReduceOrder::pairwise();
  if (s == "numpy") return ReduceOrder::numpy_pairwise();
  if (s.rfind("blocked:", 0) == 0) return ReduceOrder::blocked(number(8));
  if (s.rfind("warp:", 0) == 0) return ReduceOrder::warp_tree(number(5));
  throw InputError("unknown order '" + s + "' (unknown, sequential, pairwise, numpy, blocked:B, warp:L)");
}

ReduceKind kind_of(const std::string& s) {
  if (s == "sum") return ReduceKind::Sum;
  if (s == "dot") return ReduceKind::Dot;
  if (s == "nrm2") return ReduceKind::Nrm2;
  throw InputError("unknown reduction kind '" + s + "' (sum, dot, nrm2)");
}

/// The callable as a host-memory reduction: `adapter(x_codes, y_codes or None) -> out codes` over the vectors
/// as rows (the runner's column cases are handed over transposed: the callable always reduces along axis 1).
class PyReduceKernel final : public ReduceKernel {
 public:
  PyReduceKernel(std::string name, std::string description, ReduceTraits t, PyHandle adapter)
      : name_(std::move(name)), description_(std::move(description)), traits_(std::move(t)), adapter_(std::move(adapter)) {}
  const std::string& name() const override { return name_; }
  std::string description() const override { return description_; }
  Backend backend() const override { return Backend::Plugin; }
  const ReduceTraits& reduce_traits() const override { return traits_; }
  void run(const ReduceOperands& o) override {
    py::gil_scoped_acquire gil;
    const int ob = container_bytes(*traits_.out);
    try {
      const py::object x = rows_of(o.x, o.ldx, o, *traits_.x_input);
      const py::object y = traits_.kind == ReduceKind::Dot ? py::object(rows_of(o.y, o.ldy, o, *traits_.y_input)) : py::object(py::none());
      const py::object r = (*adapter_)(x, y);
      const py::buffer_info info = py::reinterpret_borrow<py::buffer>(r).request();
      if (info.ndim != 1 || info.shape[0] != o.count || info.itemsize != ob)
        throw std::runtime_error("the callable's result is not " + std::to_string(o.count) + " values of " + std::string(traits_.out->tag));
      const auto* src = static_cast<const std::uint8_t*>(info.ptr);
      for (std::int64_t v = 0; v < o.count; ++v)
        std::memcpy(static_cast<std::uint8_t*>(o.out) + v * ob, src + v * info.strides[0], static_cast<std::size_t>(ob));
    } catch (py::error_already_set& e) {
      rethrow_python_error(e);  // the case records it; the suite goes on
    }
  }

 private:
  /// The vectors as the rows of a count x length array of container codes.
  static py::array rows_of(const void* data, std::int64_t ld, const ReduceOperands& o, const Format& f) {
    if (o.axis == ReduceAxis::Rows) return container_array(data, o.count, o.length, ld, f);
    const int b = container_bytes(f);
    std::vector<std::uint8_t> t(static_cast<std::size_t>(o.count * o.length * b));
    const auto* src = static_cast<const std::uint8_t*>(data);
    for (std::int64_t i = 0; i < o.length; ++i)
      for (std::int64_t v = 0; v < o.count; ++v)
        std::memcpy(t.data() + (v * o.length + i) * b, src + (i * ld + v) * b, static_cast<std::size_t>(b));
    return container_array(t.data(), o.count, o.length, o.length, f);
  }
  std::string name_, description_;
  ReduceTraits traits_;
  PyHandle adapter_;
};

/// The reduction callable's declaration (fpcert.certify_reduction's and fpcert.diagnose_reduction's keywords) as a kernel to register.
PyKernelDeclaration reduction_declaration(py::object adapter, const std::string& kind, const std::string& x, const std::string& y,
                                          const std::string& acc, const std::string& rounding, bool fma, const std::string& order,
                                          const std::string& out, bool deterministic, bool nrm2_scaled, const std::string& name,
                                          const std::string& description) {
  ReduceTraits t;
  t.kind = kind_of(kind);
  t.x_input = &format_of(x);
  t.y_input = t.kind == ReduceKind::Dot ? &format_of(y.empty() ? x : y) : t.x_input;
  t.arith.acc = &format_of(acc);
  const auto r = parse_rounding(rounding);
  if (!r || *r == Rounding::Stochastic) throw InputError("rounding '" + rounding + "': one of rn, rna, rz, ru, rd");
  t.arith.rounder = Rounder{*r, default_saturation(*t.arith.acc), NanPayload::Preserve};
  t.arith.products = fma ? ProductRounding::Exact : ProductRounding::Rounded;
  t.order = order_of(order);
  t.out = &format_of(out);
  t.scaling = nrm2_scaled ? Nrm2Scaling::Lapack : Nrm2Scaling::None;
  if (!deterministic) {
    t.determinism = Determinism::RunToRun;
    t.determinism_note = "declared by the caller (fpcert.certify_reduction(..., deterministic=False))";
  }
  t.note = "declared by the caller (fpcert.certify_reduction)";
  if (const std::string why = reduce_traits_problem(t); !why.empty()) throw InputError("the declarations contradict each other: " + why);
  PyHandle h = make_handle(std::move(adapter));
  auto make = [=] { return std::unique_ptr<Kernel>(new PyReduceKernel(name, description, t, h)); };
  h.reset();
  return PyKernelDeclaration{name, Operation::Reduction, std::move(make)};
}

}  // namespace

void add_reduction_entry(py::module_& m) {
  m.def("reduction_declaration", &reduction_declaration, py::arg("adapter"), py::arg("kind"), py::arg("x"), py::arg("y"), py::arg("acc"),
        py::arg("rounding"), py::arg("fma"), py::arg("order"), py::arg("out"), py::arg("deterministic"), py::arg("nrm2_scaled"),
        py::arg("name"), py::arg("description"),
        "A Python reduction callable's declaration (fpcert.certify_reduction, fpcert.diagnose_reduction wrap it)");
}

}  // namespace fpcert::py_support
