// python/audit_entry.cpp — fpcert.audit's native part (docs/python.md, "Auditing a test's rule"; docs/audit.md): a
// GEMM test's acceptance rule audited for false alarms and power, on a Python callable (as fpcert.certify takes it),
// a registered host kernel or a traits declaration; the record as JSON and its terminal tables.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "python/py_support.hpp"
#include "reports/audit_text.hpp"
#include "results/audit.hpp"
#include "suites/audit/audit.hpp"
#include "suites/audit/audit_rows.hpp"

namespace fpcert::py_support {

void add_audit_entry(py::module_& m) {
  m.def("audit", [](py::object adapter, const py::object& traits, const std::string& kernel, const std::string& name,
                    const std::string& description, std::int64_t mm, std::int64_t n, std::int64_t k, const std::string& inputs,
                    const std::vector<std::uint64_t>& seeds, const std::string& rule, bool mutants, std::int64_t sample_rows,
                    const std::string& command, bool batch_invariant, std::vector<double> a, std::int64_t a_rows, std::int64_t a_cols,
                    std::vector<double> b, std::int64_t b_rows, std::int64_t b_cols, const std::string& reference,
                    const std::string& a_format, const std::string& b_format, const std::vector<std::string>& allow,
                    const std::string& op) {
    AuditOptions o;
    o.op = op;  // gemm, softmax, log_softmax, layernorm, rmsnorm (docs/audit.md, "Softmax", "Normalisation")
    o.reference = reference;
    o.allow = allow;  // docs/audit.md, "Allowed arithmetic"
    o.m = mm, o.n = n, o.k = k;
    AuditTensors tensors;  // the test's own tensors (A=, B=), when given: their shapes give m, n, k
    if (op != "gemm" && !a.empty() && b.empty()) {  // a softmax's own logits (A=): -inf entries are masked entries
      tensors = audit_logits(a_rows, a_cols, std::move(a), fmt::format("A ({} x {} {})", a_rows, a_cols, a_format));
      tensors.a_format = a_format;
      o.m = tensors.m, o.n = tensors.n;
      o.tensors = &tensors;
    } else if (!a.empty() || !b.empty()) {
      tensors = audit_tensors(a_rows, a_cols, std::move(a), b_rows, b_cols, std::move(b),
                              fmt::format("A ({} x {} {})", a_rows, a_cols, a_format), fmt::format("B ({} x {} {})", b_rows, b_cols, b_format));
      tensors.a_format = a_format, tensors.b_format = b_format;  // the dtype the values came in, each exact in it
      o.m = tensors.m, o.n = tensors.n, o.k = tensors.k;
      o.tensors = &tensors;
    }
    o.inputs = inputs;
    o.seeds = seeds;
    o.rule = parse_audit_rule(rule);
    o.mutants = mutants;
    o.sample_rows = sample_rows;
    o.command = command;
    o.batch_invariant = batch_invariant;  // docs/audit.md, "Batch invariance and reproducibility"
    if (adapter.is_none()) {
      // a registered kernel, or a traits spec computed by fpcert's emulator (fpcert audit --kernel / --traits)
      if (!kernel.empty()) o.kernel = kernel;
      else o.traits = traits.cast<std::string>();
      py::gil_scoped_release nogil;
      return audit_to_json(run_audit(o)).dump();
    }
    PyHandle h = make_handle(std::move(adapter));
    if (op == "softmax" || op == "log_softmax") {  // a Python softmax callable declaring a --traits spec (suites/audit/audit_rows.hpp)
      const std::string spec = traits.cast<std::string>();
      SoftmaxTraits t = parse_softmax_audit_traits(spec);
      if (op == "log_softmax" && spec.find("fn=") == std::string::npos) t.arith.fn = SoftmaxFn::LogSoftmax;  // as --op says
      register_kernel(KernelInfo{name, Backend::Plugin, false, [=] { return make_python_softmax_kernel(name, description, t, true, h); }, "python",
                                 Operation::Softmax});
    } else if (op == "layernorm" || op == "rmsnorm") {
      const NormTraits t = parse_norm_audit_traits(traits.cast<std::string>(), op == "rmsnorm" ? NormKind::RmsNorm : NormKind::LayerNorm);
      register_kernel(KernelInfo{name, Backend::Plugin, false, [=] { return make_python_norm_kernel(name, description, t, h); }, "python",
                                 Operation::Norm});
    } else {
      const KernelTraits t = traits.cast<KernelTraits>();
      register_kernel(KernelInfo{name, Backend::Plugin, false,
                                 [=] { return std::unique_ptr<Kernel>(make_python_gemm_kernel(name, description, t, h).release()); }, "python"});
    }
    h.reset();
    o.kernel = name;
    std::string out;
    try {
      py::gil_scoped_release nogil;
      out = audit_to_json(run_audit(o)).dump();
    } catch (...) {
      unregister_kernel(name);
      throw;
    }
    unregister_kernel(name);
    return out;
  }, py::arg("adapter"), py::arg("traits"), py::arg("kernel"), py::arg("name"), py::arg("description"), py::arg("m"), py::arg("n"),
     py::arg("k"), py::arg("inputs"), py::arg("seeds"), py::arg("rule"), py::arg("mutants") = true, py::arg("sample_rows") = -1,
     py::arg("command") = "python", py::arg("batch_invariant") = false,
     py::arg("a") = std::vector<double>{}, py::arg("a_rows") = 0, py::arg("a_cols") = 0, py::arg("b") = std::vector<double>{},
     py::arg("b_rows") = 0, py::arg("b_cols") = 0, py::arg("reference") = "exact",
     py::arg("a_format") = "f64", py::arg("b_format") = "f64", py::arg("allow") = std::vector<std::string>{},
     py::arg("op") = "gemm");
  m.def("audit_text", [](const std::string& record) { return audit_text(audit_from_json(nlohmann::json::parse(record))); },
        py::arg("record"), "The audit's terminal tables (what `fpcert audit` prints) from its record");
}

}  // namespace fpcert::py_support
