// python/rows_entry.cpp — fpcert.certify_softmax's and fpcert.certify_norm's native parts (and their declarations, which
// fpcert.diagnose_softmax / diagnose_norm share): a Python callable that maps each row of a rows x cols array
// (torch.softmax(x, -1), torch.nn.functional.layer_norm, rms_norm, a NumPy function) as a SoftmaxKernel or NormKernel with
// the arithmetic the caller declares, registered for one run: certified by the runner on the operation's suite
// (certify_declared; docs/python.md, "Softmax and normalisation"; docs/softmax.md, docs/normalization.md) or diagnosed
// (python/diagnose_entry.cpp).
#include <pybind11/pybind11.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <optional>

#include "kernels/norm/norm_kernel.hpp"
#include "kernels/softmax/softmax_kernel.hpp"
#include "python/py_support.hpp"
#include "reports/mutation_report.hpp"
#include "results/results_json.hpp"
#include "suites/mutation/mutation.hpp"
#include "suites/run/environment.hpp"
#include "suites/run/suite.hpp"

namespace fpcert::py_support {

/// "ulps:N" -> N (a non-negative number), else nullopt.
static std::optional<double> ulps_of(const std::string& s) {
  if (s.rfind("ulps:", 0) != 0) return std::nullopt;
  try {
    std::size_t used = 0;
    const double v = std::stod(s.substr(5), &used);
    if (used == s.size() - 5 && v >= 0 && std::isfinite(v)) return v;
  } catch (const std::exception&) {
  }
  throw InputError("'" + s + "': expected a non-negative number of ulps after 'ulps:'");
}

/// The exp a softmax declares: "expf" (CUDA, 2 ulp), "__expf" (CUDA fast), "libm" (glibc's exp in double, rounded to
/// fp32), "cr" (correctly rounded), "ulps:N", "expf_ops" (fpcert's expf as binary32 operations, oracle/math/expf_ops.hpp:
/// declared exactly, so a shifted fp32 softmax with a declared order gets the bitwise tier; docs/softmax.md).
ElemFnError exp_of(const std::string& s) {
  if (s == "expf_ops") return exp_error_expf_ops();
  if (s == "expf") return exp_error_cuda_expf();
  if (s == "__expf") return exp_error_cuda_fast();
  if (s == "libm") return exp_error_libm_f32();
  if (s == "cr") return ElemFnError{0.5, 0, 0, "declared correctly rounded by the caller"};
  if (const auto u = ulps_of(s)) return ElemFnError{*u, 0, 0, "declared by the caller (fpcert.certify_softmax(exp=...))"};
  throw InputError("unknown exp '" + s + "' (expf, __expf, libm, expf_ops, cr, ulps:N)");
}

ElemFnError log_of(const std::string& s) {
  if (s == "logf") return log_error_cuda_logf();
  if (s == "libm") return log_error_libm_f32();
  if (s == "cr") return ElemFnError{0.5, 0, 0, "declared correctly rounded by the caller"};
  if (const auto u = ulps_of(s)) return ElemFnError{*u, 0, 0, "declared by the caller (fpcert.certify_softmax(log=...))"};
  throw InputError("unknown log '" + s + "' (logf, libm, cr, ulps:N)");
}

std::string with_registered(const PyKernelDeclaration& d, const std::function<std::string()>& body) {
  register_kernel(KernelInfo{d.name, Backend::Plugin, false, d.make, "python", d.op});
  std::string out;
  try {
    py::gil_scoped_release nogil;
    out = body();
  } catch (...) {
    unregister_kernel_and_derived(d.name);  // the GIL held again here: the callable's handle is released with it
    throw;
  }
  unregister_kernel_and_derived(d.name);
  return out;
}

namespace {

/// fpcert.mutate's request (python/fpcert/mutate.py): while it is on, a certify entry's run is the mutation score of the
/// declared kernel on the entry's suite (run_mutation), as `fpcert mutate` computes it for a registered kernel.
struct MutationRequest {
  bool on = false;
  std::string faults;  ///< comma-separated fault ids; empty: every fault of the operation
  bool all_cases = false;
};
MutationRequest& mutation_request() {
  static thread_local MutationRequest r;
  return r;
}

std::string mutate_registered(const PyKernelDeclaration& d, const SuiteInfo& suite, const std::string& command) {
  MutationOptions mo;
  mo.faults = parse_fault_list(mutation_request().faults);
  mo.all_cases = mutation_request().all_cases;
  mo.run.command = command;
  return with_registered(d, [&] {
    RunResult run;
    run.kind = RunKind::Mutation;
    run.suite = suite.name;
    run.kernels = {d.name};
    run.env = make_environment(command, nullptr);
    mo.env = &run.env;
    mo.on_honest_case = [&run](const CaseResult& c) { run.cases.push_back(c); };
    run.mutation.push_back(run_mutation(suite, d.name, mo));
    return to_json(run).dump();
  });
}

}  // namespace

bool mutation_requested() { return mutation_request().on; }

/// Registers the kernel, runs the suite (with certify's evidence rule), removes it; the results as JSON. Under fpcert.mutate,
/// the kernel's mutation score on the suite instead.
std::string certify_registered(const PyKernelDeclaration& d, const SuiteInfo& suite, const std::string& entry, const std::string& command) {
  if (mutation_request().on) return mutate_registered(d, suite, command);
  SuiteRunOptions opt;
  opt.command = command;
  opt.repro_prefix = "python: fpcert." + entry + "(..., suite=\"" + suite.name + "\")";
  return with_registered(d, [&] {
    RunResult res = run_suite(suite, {d.name}, opt);
    require_evidence(res);  // as `fpcert certify`: a suite that grades nothing non-vacuously certifies nothing
    return to_json(res).dump();
  });
}

std::string certify_registered(const std::string& name, Operation op, const std::function<std::unique_ptr<Kernel>()>& make,
                               const SuiteInfo& suite, const std::string& entry, const std::string& command) {
  return certify_registered(PyKernelDeclaration{name, op, make}, suite, entry, command);
}

const SuiteInfo& suite_of(const std::string& suite_name, Operation op, const char* names) {
  const SuiteInfo* suite = find_suite(suite_name);
  if (!suite || suite->operation != op) throw InputError("'" + suite_name + "' is not a " + std::string(to_string(op)) + " suite (" + names + ")");
  return *suite;
}

const SuiteInfo& suite_of(const std::string& suite_name, Operation op) {
  std::string names;
  for (const SuiteInfo& s : builtin_suites())
    if (s.operation == op) names += (names.empty() ? "" : ", ") + s.name;
  return suite_of(suite_name, op, names.c_str());
}

namespace {

/// "unknown" (any tree), "sequential", "pairwise", "warp:L".
ReduceOrder sum_order_of(const std::string& s) {
  if (s.empty() || s == "unknown") return ReduceOrder::unknown();
  if (s == "sequential") return ReduceOrder::sequential();
  if (s == "pairwise") return ReduceOrder::pairwise();
  if (s.rfind("warp:", 0) == 0) {
    try {
      std::size_t used = 0;
      const int v = std::stoi(s.substr(5), &used);
      if (used == s.size() - 5 && v >= 1) return ReduceOrder::warp_tree(v);
    } catch (const std::exception&) {
    }
  }
  throw InputError("unknown sum order '" + s + "' (unknown, sequential, pairwise, warp:L)");
}

/// Calls the adapter with the rows as container codes and copies its rows x cols result (container codes of `out`).
void call_rows(const PyHandle& adapter, const py::object& x, const py::object& extra1, const py::object& extra2, double scalar,
               const Format& out, std::int64_t rows, std::int64_t cols, void* dst, std::int64_t ldo) {
  py::gil_scoped_acquire gil;
  try {
    copy_rows((*adapter)(x, extra1, extra2, scalar), out, rows, cols, dst, ldo, "result");
  } catch (py::error_already_set& e) {
    rethrow_python_error(e);  // the case records it; the suite goes on
  }
}

/// The callable as a host softmax: `adapter(x_codes, mask or None, None, scale) -> out codes`.
class PySoftmaxKernel final : public SoftmaxKernel {
 public:
  PySoftmaxKernel(std::string name, std::string description, SoftmaxTraits t, bool accepts_scale, PyHandle adapter)
      : name_(std::move(name)), description_(std::move(description)), traits_(std::move(t)), accepts_scale_(accepts_scale),
        adapter_(std::move(adapter)) {}
  const std::string& name() const override { return name_; }
  std::string description() const override { return description_; }
  Backend backend() const override { return Backend::Plugin; }
  const SoftmaxTraits& softmax_traits() const override { return traits_; }
  void run(const SoftmaxOperands& o) override {
    if (o.scale != 1.0f && !accepts_scale_) throw NotSupportedError("the callable takes no scale (accepts_scale=False)");
    py::gil_scoped_acquire gil;
    const py::object x = container_array(o.x, o.rows, o.cols, o.ldx, *traits_.x_input);
    const py::object mask = o.mask ? py::object(container_array(o.mask, o.rows, o.cols, o.ldm, f32)) : py::object(py::none());
    call_rows(adapter_, x, mask, py::none(), o.scale, *traits_.arith.out, o.rows, o.cols, o.out, o.ldo);
  }

 private:
  std::string name_, description_;
  SoftmaxTraits traits_;
  bool accepts_scale_;
  PyHandle adapter_;
};

/// The callable as a host norm: `adapter(x_codes, gamma or None, beta or None, eps) -> out codes`.
class PyNormKernel final : public NormKernel {
 public:
  PyNormKernel(std::string name, std::string description, NormTraits t, PyHandle adapter)
      : name_(std::move(name)), description_(std::move(description)), traits_(std::move(t)), adapter_(std::move(adapter)) {}
  const std::string& name() const override { return name_; }
  std::string description() const override { return description_; }
  Backend backend() const override { return Backend::Plugin; }
  const NormTraits& norm_traits() const override { return traits_; }
  void run(const NormOperands& o) override {
    py::gil_scoped_acquire gil;
    const Format& f = *traits_.x_input;
    const py::object x = container_array(o.x, o.rows, o.cols, o.ldx, f);
    const py::object g = o.gamma ? py::object(container_array(o.gamma, 1, o.cols, o.cols, f)) : py::object(py::none());
    const py::object b = o.beta ? py::object(container_array(o.beta, 1, o.cols, o.cols, f)) : py::object(py::none());
    call_rows(adapter_, x, g, b, o.eps, *traits_.arith.out, o.rows, o.cols, o.out, o.ldo);
  }

 private:
  std::string name_, description_;
  NormTraits traits_;
  PyHandle adapter_;
};

/// The softmax callable's declaration (fpcert.certify_softmax's and fpcert.diagnose_softmax's keywords) as a kernel to register.
PyKernelDeclaration softmax_declaration(py::object adapter, bool log_softmax, const std::string& x, const std::string& out, const std::string& compute,
                            const std::string& shift, int block, const std::string& exp, const std::string& log, const std::string& sum,
                            const std::string& order, bool reciprocal, const std::string& masked_rows, bool accepts_mask,
                            bool accepts_scale, const std::string& name, const std::string& description) {
  SoftmaxTraits t;
  SoftmaxArith& a = t.arith;
  a.fn = log_softmax ? SoftmaxFn::LogSoftmax : SoftmaxFn::Softmax;
  if (shift == "shifted") a.shift = SoftmaxShift::Shifted;
  else if (shift == "unshifted") a.shift = SoftmaxShift::Unshifted;
  else if (shift == "online") a.shift = SoftmaxShift::Online;
  else throw InputError("unknown shift '" + shift + "' (shifted, unshifted, online)");
  if (a.shift == SoftmaxShift::Online && block < 1) throw InputError("an online softmax needs block >= 1 (columns per running-max update)");
  a.block = a.shift == SoftmaxShift::Online ? block : 0;
  a.compute = &format_of(compute);
  a.exp = exp_of(exp);
  a.exp_exact = exp == "expf_ops" ? SoftmaxExpExact::ExpfOps : SoftmaxExpExact::None;
  a.log = log_of(log);
  a.sum_acc = &format_of(sum);
  a.sum_order = sum_order_of(order);
  a.reciprocal = reciprocal;
  a.out = &format_of(out);
  t.x_input = &format_of(x);
  if (masked_rows == "nan") t.masked_rows = MaskedRowPolicy::Nan;
  else if (masked_rows == "zero") t.masked_rows = MaskedRowPolicy::Zero;
  else throw InputError("unknown masked_rows '" + masked_rows + "' (nan: torch.softmax; zero: a 'safe' softmax)");
  t.accepts_mask = accepts_mask;
  t.note = "declared by the caller (fpcert.certify_softmax)";
  PyHandle h = make_handle(std::move(adapter));
  auto make = [=] { return std::unique_ptr<Kernel>(new PySoftmaxKernel(name, description, t, accepts_scale, h)); };
  h.reset();
  return PyKernelDeclaration{name, Operation::Softmax, std::move(make)};
}

/// The norm callable's declaration (fpcert.certify_norm's and fpcert.diagnose_norm's keywords) as a kernel to register.
PyKernelDeclaration norm_declaration(py::object adapter, const std::string& kind, const std::string& variance, const std::string& parts,
                         const std::string& x, const std::string& out, const std::string& compute, const std::string& acc, const std::string& rsqrt,
                         const std::string& name, const std::string& description) {
  NormTraits t;
  NormArith& a = t.arith;
  if (kind == "layernorm") a.kind = NormKind::LayerNorm;
  else if (kind == "rmsnorm") a.kind = NormKind::RmsNorm;
  else throw InputError("unknown kind '" + kind + "' (layernorm, rmsnorm)");
  if (variance == "two_pass") a.variance = NormVariance::TwoPass;
  else if (variance == "one_pass") a.variance = NormVariance::OnePass;
  else if (variance == "welford") a.variance = NormVariance::Welford;
  else if (variance == "welford_combined") a.variance = NormVariance::WelfordCombined;
  else
    throw InputError("unknown variance '" + variance +
                     "' (two_pass: mean first; welford: one sequential Welford pass; welford_combined: Welford per part, the parts "
                     "combined pairwise, with parts=; one_pass: E[x^2] - E[x]^2)");
  if (a.variance == NormVariance::WelfordCombined) {
    try {
      a.welford = parse_welford_shapes(parts);
    } catch (const std::invalid_argument& e) {
      throw InputError(std::string("parts: ") + e.what());
    }
  } else if (!parts.empty()) {
    throw InputError("parts= is a declaration of variance='welford_combined' only");
  }
  a.compute = &format_of(compute);
  a.acc = &format_of(acc);
  if (rsqrt == "rsqrtf") {
    a.rsqrt_ulps = 2;
    a.rsqrt_source = "CUDA rsqrtf: 2 ulp (CUDA C Programming Guide, Mathematical Functions)";
  } else if (rsqrt == "cr") {
    a.rsqrt_ulps = 0.5;
    a.rsqrt_source = "declared correctly rounded by the caller";
  } else if (rsqrt == "sqrt_div") {
    // RN(1 / RN(sqrt(t))) = t^-1/2 (1 + d2) / (1 + d1), |d1|, |d2| <= u: relative error <= (1 + u)/(1 - u) - 1 = 2u/(1 - u),
    // which is (1 + 2^-22) 2u at most for u <= 2^-11; the bound reads rho = ulps * 2u (oracle/norm/norm_bound.cpp).
    a.rsqrt_ulps = 1 + 0x1p-22;
    a.rsqrt_source = "1 / sqrt(t), both correctly rounded (IEEE 754): relative error 2u/(1 - u)";
  } else if (const auto u = ulps_of(rsqrt)) {
    a.rsqrt_ulps = *u;
    a.rsqrt_source = "declared by the caller (fpcert.certify_norm(rsqrt=...))";
  } else {
    throw InputError("unknown rsqrt '" + rsqrt + "' (rsqrtf, cr, sqrt_div, ulps:N)");
  }
  a.out = &format_of(out);
  t.x_input = &format_of(x);
  t.note = "declared by the caller (fpcert.certify_norm)";
  PyHandle h = make_handle(std::move(adapter));
  auto make = [=] { return std::unique_ptr<Kernel>(new PyNormKernel(name, description, t, h)); };
  h.reset();
  return PyKernelDeclaration{name, Operation::Norm, std::move(make)};
}

}  // namespace

std::unique_ptr<Kernel> make_python_softmax_kernel(std::string name, std::string description, const SoftmaxTraits& t, bool accepts_scale,
                                                   PyHandle adapter) {
  return std::make_unique<PySoftmaxKernel>(std::move(name), std::move(description), t, accepts_scale, std::move(adapter));
}

std::unique_ptr<Kernel> make_python_norm_kernel(std::string name, std::string description, const NormTraits& t, PyHandle adapter) {
  return std::make_unique<PyNormKernel>(std::move(name), std::move(description), t, std::move(adapter));
}

void add_rows_entries(py::module_& m) {
  py::class_<PyKernelDeclaration>(m, "KernelDeclaration",
                                  "A Python callable declared as a kernel of one operation, registered only while a certify_declared "
                                  "or diagnose_declared call runs")
      .def_readonly("name", &PyKernelDeclaration::name)
      .def_property_readonly("operation", [](const PyKernelDeclaration& d) { return std::string(to_string(d.op)); });
  m.def("softmax_declaration", &softmax_declaration, py::arg("adapter"), py::arg("log_softmax"), py::arg("x"), py::arg("out"),
        py::arg("compute"), py::arg("shift"), py::arg("block"), py::arg("exp"), py::arg("log"), py::arg("sum"), py::arg("order"),
        py::arg("reciprocal"), py::arg("masked_rows"), py::arg("accepts_mask"), py::arg("accepts_scale"), py::arg("name"),
        py::arg("description"), "A Python softmax callable's declaration (fpcert.certify_softmax, fpcert.diagnose_softmax wrap it)");
  m.def("norm_declaration", &norm_declaration, py::arg("adapter"), py::arg("kind"), py::arg("variance"), py::arg("parts"), py::arg("x"),
        py::arg("out"), py::arg("compute"), py::arg("acc"), py::arg("rsqrt"), py::arg("name"), py::arg("description"),
        "A Python LayerNorm/RMSNorm callable's declaration (fpcert.certify_norm, fpcert.diagnose_norm wrap it)");
  m.def("certify_declared", [](const PyKernelDeclaration& d, const std::string& suite, const std::string& entry, const std::string& command) {
    return certify_registered(d, suite_of(suite, d.op), entry, command);
  }, py::arg("declaration"), py::arg("suite"), py::arg("entry"), py::arg("command"),
        "Certify a declared Python kernel on a suite of its operation; the run's results as JSON (fpcert.certify_softmax, certify_norm, "
        "certify_reduction)");
  m.def("set_mutation", [](bool on, const std::string& faults, bool all_cases) {
    if (on) parse_fault_list(faults);  // an unknown fault id: InputError naming the valid ones, before any run
    mutation_request() = MutationRequest{on, faults, all_cases};
  }, py::arg("on"), py::arg("faults"), py::arg("all_cases"),
        "fpcert.mutate's switch: while on, the certify entries of declared kernels run their mutation score instead");
  m.def("mutation_text", [](const std::string& run_json) {
    std::string t;
    for (const MutationScore& s : run_from_json(nlohmann::json::parse(run_json)).mutation) t += mutation_table(s) + mutation_summary(s);
    return t;
  }, py::arg("run_json"), "A mutation run's tables as `fpcert mutate` prints them");
}

}  // namespace fpcert::py_support
