// python/diagnose_entry.cpp — fpcert.diagnose's native part (docs/python.md, "Diagnosing a kernel"; docs/diagnose.md):
// which known arithmetic explains a GEMM callable's output (as fpcert.certify takes it) or a registered kernel's, on a
// suite case or a generator spec; a reduction, softmax or norm callable's (fpcert.diagnose_reduction / diagnose_softmax /
// diagnose_norm, declared as certify_* declares it) on its operation's suite cases; the record as JSON and its terminal text.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <nlohmann/json.hpp>

#include "python/py_support.hpp"
#include "reports/diagnose_text.hpp"
#include "results/diagnosis.hpp"
#include "suites/diagnose/diagnose_rows.hpp"
#include "suites/diagnose/diagnose_run.hpp"

namespace fpcert::py_support {

void add_diagnose_entry(py::module_& m) {
  m.def("diagnose", [](py::object adapter, const py::object& traits, const std::string& kernel, const std::string& name,
                       const std::string& description, const std::vector<std::string>& cases, const std::string& suite,
                       const std::string& declared_as, bool separate, bool pairs, int top) {
    DiagnoseKernelOptions o;
    o.suite = suite;
    o.cases = cases;
    o.auto_separate = separate;
    o.declared_as = declared_as;
    o.opt.pairs = pairs;
    o.opt.top = top;
    if (adapter.is_none()) {  // a registered kernel (fpcert diagnose --kernel)
      o.kernel = kernel;
      py::gil_scoped_release nogil;
      if (row_operation(kernel))  // a reduction, softmax or norm kernel: its operation's suite ("certify" stands for it)
        return diagnosis_to_json(diagnose_row_kernel(kernel, suite, cases, top, nullptr, declared_as)).dump();
      return diagnosis_to_json(diagnose_kernel(o)).dump();
    }
    const KernelTraits t = traits.cast<KernelTraits>();
    PyHandle h = make_handle(std::move(adapter));
    const PyKernelDeclaration d{name, Operation::Gemm,
                                [=] { return std::unique_ptr<Kernel>(make_python_gemm_kernel(name, description, t, h).release()); }};
    h.reset();
    o.kernel = name;
    return with_registered(d, [&] { return diagnosis_to_json(diagnose_kernel(o)).dump(); });
  }, py::arg("adapter"), py::arg("traits"), py::arg("kernel"), py::arg("name"), py::arg("description"), py::arg("cases"),
     py::arg("suite") = "certify", py::arg("declared_as") = "", py::arg("separate") = true, py::arg("pairs") = true, py::arg("top") = 8);
  // A reduction, softmax or norm callable (fpcert.diagnose_reduction / diagnose_softmax / diagnose_norm): its declaration made
  // as certify_* makes it, registered for the diagnosis of its operation's suite cases (suites/diagnose/diagnose_rows.hpp).
  m.def("diagnose_declared", [](const PyKernelDeclaration& d, const std::string& suite, const std::vector<std::string>& cases, int top) {
    if (d.op != Operation::Reduction && d.op != Operation::Softmax && d.op != Operation::Norm)
      throw InputError("diagnose_declared: a reduction, softmax or norm declaration, not " + std::string(to_string(d.op)));
    if (top < 1) throw InputError("top=" + std::to_string(top) + ": at least 1 hypothesis is listed");
    const std::string s = suite_of(suite, d.op).name;
    return with_registered(d, [&] { return diagnosis_to_json(diagnose_row_kernel(d.name, s, cases, top)).dump(); });
  }, py::arg("declaration"), py::arg("suite"), py::arg("cases"), py::arg("top") = 8,
        "Diagnose a declared Python reduction, softmax or norm kernel on cases of its operation's suite; the record as JSON");
  m.def("diagnosis_text", [](const std::string& record) { return diagnosis_text(diagnosis_from_json(nlohmann::json::parse(record))); },
        py::arg("record"), "The diagnosis as `fpcert diagnose` prints it, from its record");
}

}  // namespace fpcert::py_support
