// python/module.cpp — the Python entry's native part (`fpcert._fpcert`, pybind11): references,
// traits, tolerances, grading and certification of a Python callable through the same runner,
// suites and verdicts as the C++ kernels, and the JSON / JUnit / HTML writers. The NumPy and torch
// conversions live in python/fpcert/__init__.py; docs/python.md is the user's guide.
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <span>
#include <nlohmann/json.hpp>

#include "base/atomic_file.hpp"
#include "base/error.hpp"
#include "generators/generate.hpp"
#include "kernels/device/exact_gemm_cuda.hpp"
#include "oracle/ulp.hpp"
#include "reports/html/html.hpp"
#include "reports/junit.hpp"
#include "results/results_json.hpp"
#include "results/elementwise.hpp"
#include "suites/ops/elementwise/eltwise_check.hpp"
#include "suites/run/environment.hpp"
#include "suites/verdict/grade.hpp"
#include "suites/run/suite.hpp"
#include "suites/verdict/tolerance.hpp"
#include "python/py_support.hpp"

namespace py = pybind11;
using namespace fpcert;

namespace {

using namespace fpcert::py_support;

using F64Array = py::array_t<double, py::array::c_style | py::array::forcecast>;
using U64Array = py::array_t<std::uint64_t, py::array::c_style | py::array::forcecast>;

/// A 2-D float64 array as a Matrix of exact values.
Matrix to_matrix(const F64Array& a, const char* what) {
  if (a.ndim() != 2) throw InputError(std::string(what) + " must be a 2-D array");
  Matrix m(a.shape(0), a.shape(1));
  std::memcpy(m.data.data(), a.data(), m.data.size() * sizeof(double));
  return m;
}

py::array_t<double> to_array(std::span<const double> v, std::int64_t rows, std::int64_t cols) {
  py::array_t<double> out({rows, cols});
  std::memcpy(out.mutable_data(), v.data(), v.size() * sizeof(double));
  return out;
}

/// A problem from the caller's own inputs (exact values; source: the wider of the two formats given).
Problem user_problem(const F64Array& A, const F64Array& B, const std::string& source, const std::string& spec) {
  Problem p;
  p.a = to_matrix(A, "A");
  p.b = to_matrix(B, "B");
  if (p.a.cols != p.b.rows)
    throw InputError("A is " + std::to_string(p.a.rows) + "x" + std::to_string(p.a.cols) + " but B is " +
                     std::to_string(p.b.rows) + "x" + std::to_string(p.b.cols));
  p.m = p.a.rows, p.k = p.a.cols, p.n = p.b.cols;
  p.source = &format_of(source);
  p.spec = spec;
  p.family = "python";
  return p;
}

struct Reference {
  GemmRef ref;
  Problem problem;
};

/// A bound's variant as text (a string or an enum, as the results model spells it).
/// The course gate's bounds name their variant; the per-element envelope (docs/bound_model.md) has none.
std::string variant_text(const std::optional<BoundVariant>& v) { return v ? std::string(to_string(*v)) : std::string("envelope"); }

py::dict bound_dict(const Bound& b) {
  py::list terms;
  for (const BoundTerm& t : b.terms) terms.append(py::dict(py::arg("name") = t.name, py::arg("value") = t.value, py::arg("formula") = t.formula));
  return py::dict(py::arg("variant") = variant_text(b.variant), py::arg("rtol") = b.rtol, py::arg("atol") = b.atol,
                  py::arg("out_term") = b.out_term, py::arg("vacuous") = b.vacuous, py::arg("eta_a") = b.eta_a,
                  py::arg("eta_b") = b.eta_b, py::arg("eta_abs") = b.eta_abs, py::arg("terms") = terms,
                  py::arg("allowed") = b.allowed, py::arg("arithmetic") = b.arithmetic);
}

/// A Python callable as a host-memory kernel. `adapter(a_codes, b_codes) -> c_codes` (python/fpcert
/// wraps the user's fn(A, B) -> C with the NumPy / torch conversions); an exception in it becomes the
/// case's error ("kernel threw: ..."), never a crash.
class PyKernel final : public GemmKernel {
 public:
  PyKernel(std::string name, std::string description, KernelTraits traits, PyHandle adapter, PyHandle can_implement = nullptr)
      : name_(std::move(name)), description_(std::move(description)), traits_(std::move(traits)), adapter_(std::move(adapter)),
        can_implement_(std::move(can_implement)) {}
  /// The callable's own can_implement(m, n, k), when it has one (fpcert.certify passes fn.can_implement): asked before
  /// any data, so a shape it cannot take is "not supported" (after the data it would be a declaration failure). None or
  /// True takes the call; False or a string (the reason) declines it.
  Support can_implement(std::int64_t m, std::int64_t n, std::int64_t k) const override {
    if (!can_implement_) return Support::yes();
    py::gil_scoped_acquire gil;
    py::object r;
    try {
      r = (*can_implement_)(m, n, k);
    } catch (py::error_already_set& e) {
      rethrow_python_error(e);
    }
    if (r.is_none() || (py::isinstance<py::bool_>(r) && r.cast<bool>())) return Support::yes();
    if (py::isinstance<py::str>(r)) return Support::no(r.cast<std::string>());
    return Support::no("the callable's can_implement(" + std::to_string(m) + ", " + std::to_string(n) + ", " + std::to_string(k) + ") declines it");
  }
  const std::string& name() const override { return name_; }
  std::string description() const override { return description_; }
  Backend backend() const override { return Backend::Plugin; }
  const KernelTraits& traits() const override { return traits_; }
  void run(const GemmOperands& ops) override {
    if (ops.a_layout != Layout::RowMajor || ops.b_layout != Layout::RowMajor)
      throw NotSupportedError("python kernels take row-major operands");
    py::gil_scoped_acquire gil;
    const Format& of = *traits_.out;
    const int cb = container_bytes(of);
    try {
      // Strided batches (traits batched): (batch, m, k) x (batch, k, n) arrays, a broadcast operand (stride 0) as
      // (1, ...); the callable returns (batch, m, n). One matrix: the 2-D arrays of a plain GEMM.
      const bool bt = traits_.batched && ops.batch > 1;
      const std::int64_t nb = bt ? ops.batch : 1;
      const auto operand = [&](const void* p, std::int64_t stride, std::int64_t rows, std::int64_t cols, std::int64_t ld, const Format& f) {
        return bt ? container_array3(p, stride ? nb : 1, stride, rows, cols, ld, f) : container_array(p, rows, cols, ld, f);
      };
      py::array a = operand(ops.a, ops.stride_a, ops.m, ops.k, ops.lda, *traits_.a_input);
      py::array b = operand(ops.b, ops.stride_b, ops.k, ops.n, ops.ldb, *traits_.b_input);
      // D = alpha A B + beta C (traits alpha_beta): C goes to the callable only where beta != 0 (BLAS: beta = 0 never
      // reads C; the runner's C holds NaN there), as codes of the output format.
      const bool ab = traits_.alpha_beta;
      if (ab && ops.beta != 0 && ops.c_layout != Layout::RowMajor) throw NotSupportedError("python kernels take a row-major C");
      const py::object c_in =
          ab && ops.beta != 0 ? py::object(operand(ops.c_in, ops.stride_c, ops.m, ops.n, ops.ldc, *traits_.out)) : py::object(py::none());
      // The fused epilogue (traits epilogue): keyword arguments (python/gemm_epilogue.cpp; docs/python.md).
      py::array_t<double> amax_out;
      const py::dict kw = traits_.epilogue.active() ? epilogue_kwargs(traits_, ops, &amax_out) : py::dict();
      const py::object c = ab ? (*adapter_)(a, b, c_in, ops.alpha, ops.beta, **kw) : (*adapter_)(a, b, **kw);
      // The result through the buffer protocol (PEP 3118), not py::array's itemsize: pybind11 2.10 (Debian 12's)
      // reads NumPy 1's descriptor layout, and under NumPy 2 itemsize() is garbage (seen on the H200's NumPy
      // 2.5: every case "not an array of ..."). The buffer's shape, strides and item size are NumPy's own.
      const py::buffer_info info = py::reinterpret_borrow<py::buffer>(c).request();
      const int d0 = bt ? 1 : 0;  // the row axis
      if (info.ndim != 2 + d0 || (bt && info.shape[0] != nb) || info.shape[d0] != ops.m || info.shape[d0 + 1] != ops.n || info.itemsize != cb)
        throw std::runtime_error("the kernel's result is not an " + (bt ? std::to_string(nb) + "x" : std::string()) + std::to_string(ops.m) +
                                 "x" + std::to_string(ops.n) + " array of " + std::string(of.tag) + " values");
      for (std::int64_t t = 0; t < nb; ++t) {
        const auto* src = static_cast<const std::uint8_t*>(info.ptr) + (bt ? t * info.strides[0] : 0);
        auto* dst = static_cast<std::uint8_t*>(ops.c) + t * ops.stride_c * cb;
        for (std::int64_t i = 0; i < ops.m; ++i)
          for (std::int64_t j = 0; j < ops.n; ++j)
            std::memcpy(dst + (i * ops.ldc + j) * cb, src + i * info.strides[d0] + j * info.strides[d0 + 1], static_cast<std::size_t>(cb));
      }
      if (ops.amax) store_amax(amax_out, traits_, ops);
    } catch (py::error_already_set& e) {
      // NotImplementedError: the callable cannot take this call (an epilogue its library does not offer): "not supported"
      if (e.matches(PyExc_NotImplementedError)) {
        const std::string what = e.what();
        e.restore();
        PyErr_Clear();
        throw NotSupportedError(what);
      }
      rethrow_python_error(e);  // the case records it; the suite goes on
    }
  }

 private:
  std::string name_, description_;
  KernelTraits traits_;
  PyHandle adapter_;
  PyHandle can_implement_;
};

std::string certify_callable(py::object adapter, const KernelTraits& traits, const std::string& name, const std::string& description,
                             const std::string& suite_name, std::int64_t mn, const std::string& only_case, const std::string& variant,
                             const std::string& tier, const std::string& jsonl, const std::string& command, bool deterministic,
                             py::object can_implement) {
  if (mutation_requested())
    throw InputError("fpcert.mutate: fpcert.certify (the GEMM entry) has no Python mutation; `fpcert mutate --plugin` scores a GEMM plugin");
  const SuiteInfo* suite = find_suite(suite_name);
  if (!suite) throw InputError("unknown suite '" + suite_name + "' (one of " + suite_names() + ")");
  SuiteRunOptions opt;
  if (mn > 0) opt.mn = mn;
  opt.only_case = only_case;
  if (!variant.empty()) {
    opt.variant = parse_bound_variant(variant);
    if (!opt.variant) throw InputError("unknown bound variant '" + variant + "'");
  }
  if (!tier.empty()) {
    const auto t = parse_tier(tier);
    if (!t || *t == Tier::None) throw InputError("unknown tier '" + tier + "' (bitwise, envelope+statistical, envelope)");
    opt.run.strongest = *t;
  }
  opt.jsonl_path = jsonl;
  opt.command = command;
  opt.repro_prefix = "python: fpcert.certify(..., suite=\"" + suite_name + "\")";
  // deterministic=False: the callable's runs may differ in their last bits (torch.use_deterministic_algorithms(False)
  // paths, atomics): each run is judged by the envelope and the spread between runs is measured (docs/python.md).
  KernelTraits declared = traits;
  if (!deterministic) {
    declared.determinism = Determinism::RunToRun;
    declared.determinism_note = "declared by the caller (fpcert.certify(..., deterministic=False))";
  }
  PyHandle h = make_handle(std::move(adapter));
  PyHandle ci = can_implement.is_none() ? nullptr : make_handle(std::move(can_implement));
  register_kernel(KernelInfo{name, Backend::Plugin, false,
                             [=] { return std::unique_ptr<Kernel>(new PyKernel(name, description, declared, h, ci)); }, "python"});
  h.reset();
  ci.reset();
  RunResult r;
  try {
    py::gil_scoped_release nogil;
    r = run_suite(*suite, {name}, opt);
    require_evidence(r);  // as `fpcert certify`: a suite that cannot see an error source certifies nothing about it
  } catch (...) {
    unregister_kernel(name);
    throw;
  }
  unregister_kernel(name);
  return to_json(r).dump();
}

}  // namespace

std::unique_ptr<GemmKernel> fpcert::py_support::make_python_gemm_kernel(std::string name, std::string description, KernelTraits traits,
                                                                      PyHandle adapter) {
  return std::make_unique<PyKernel>(std::move(name), std::move(description), std::move(traits), std::move(adapter));
}

PYBIND11_MODULE(_fpcert, m) {
  m.doc() = "fpcert's native part: exact references, traits, tolerances and the certification runner";
  py::register_exception<InputError>(m, "InputError", PyExc_ValueError);
  add_reduction_entry(m);  // fpcert.certify_reduction (python/reduce_entry.cpp)
  add_audit_entry(m);      // fpcert.audit (python/audit_entry.cpp)
  add_rows_entries(m);     // fpcert.certify_softmax, fpcert.certify_norm (python/rows_entry.cpp)
  add_softmax_bwd_entry(m);  // fpcert.certify_softmax_backward (python/softmax_bwd_entry.cpp; issue 45)
  add_attention_entry(m);  // fpcert.certify_attention (python/attention_entry.cpp)
  add_norm_bwd_entry(m);   // fpcert.certify_norm_backward (python/norm_bwd_entry.cpp)
  add_attention_bwd_entry(m);  // fpcert.certify_attention_backward (python/attention_bwd_entry.cpp; issue 45)
  add_diagnose_entry(m);   // fpcert.diagnose (python/diagnose_entry.cpp)
  add_eltwise_entry(m);    // fpcert.certify_elementwise (python/eltwise_entry.cpp; issue 42)

  py::class_<KernelTraits>(m, "Traits", "What the bound model reads about a kernel's arithmetic (docs/kernels.md)")
      .def_property_readonly("a_input", [](const KernelTraits& t) { return std::string(t.a_input->tag); })
      .def_property_readonly("b_input", [](const KernelTraits& t) { return std::string(t.b_input->tag); })
      .def_property_readonly("a_operand", [](const KernelTraits& t) { return std::string(t.a_operand->tag); })
      .def_property_readonly("b_operand", [](const KernelTraits& t) { return std::string(t.b_operand->tag); })
      .def_property_readonly("acc", [](const KernelTraits& t) { return std::string(t.acc->tag); })
      .def_property_readonly("acc_rounding", [](const KernelTraits& t) { return std::string(to_string(t.acc_rounding)); })
      .def_property_readonly("exact_products", [](const KernelTraits& t) { return t.exact_products; })
      .def_property_readonly("promote_every", [](const KernelTraits& t) { return t.promote_every; })
      .def_property_readonly("out", [](const KernelTraits& t) { return std::string(t.out->tag); })
      .def_property_readonly("order", [](const KernelTraits& t) { return t.order; })
      .def_property_readonly("determinism", [](const KernelTraits& t) { return std::string(to_string(t.determinism)); })
      .def_property_readonly("alpha_beta", [](const KernelTraits& t) { return t.alpha_beta; })
      .def_property_readonly("batched", [](const KernelTraits& t) { return t.batched; })
      .def_property_readonly("shape_multiple", [](const KernelTraits& t) { return t.shape_multiple; })
      .def_property_readonly("epilogue", [](const KernelTraits& t) {  // the fused epilogue (docs/python.md, "Fused epilogues")
        const EpilogueTraits& e = t.epilogue;
        py::list bias, acts;
        for (BiasKind b : {BiasKind::PerRow, BiasKind::PerColumn})
          if (e.bias & bit(b)) bias.append(std::string(to_string(b)));
        for (Activation a : {Activation::Relu, Activation::GeluErf, Activation::GeluTanh, Activation::Silu})
          if (e.activations & bit(a)) acts.append(std::string(to_string(a)));
        return py::dict(py::arg("bias") = bias, py::arg("bias_format") = e.bias_format ? py::object(py::str(e.bias_format->tag)) : py::object(py::none()),
                        py::arg("activations") = acts, py::arg("func_rel_err") = e.func_rel_err, py::arg("round_before_act") = e.round_before_act,
                        py::arg("round_before_bias") = e.round_before_bias, py::arg("fp8_scaling") = e.fp8_scaling,
                        py::arg("fp8_scale_d") = e.fp8_scale_d, py::arg("amax") = e.amax, py::arg("describe") = describe_epilogue(e));
      })
      .def("describe", [](const KernelTraits& t) { return describe_traits(t); })
      .def("__repr__", [](const KernelTraits& t) { return "<fpcert.Traits " + describe_traits(t) + ">"; });
  m.def("traits", &traits_by_name_or_spec, py::arg("name_or_spec"),
        "Traits of a registered kernel, or from a spec such as 'in=f16,acc=f32,out=f16'");
  m.def("kernel_names", [](bool include_mutants, const std::string& operation) {
    for (int o = 0; o <= static_cast<int>(Operation::AttentionBackward); ++o)
      if (to_string(static_cast<Operation>(o)) == operation) return kernel_names(include_mutants, static_cast<Operation>(o));
    throw InputError("unknown operation '" + operation + "' (gemm, conversion, reduction, elementwise, softmax, norm, attention, ...)");
  }, py::arg("include_mutants") = false, py::arg("operation") = "gemm",
        "The registered kernels of an operation (gemm, reduction, softmax, norm, ...), mutants too with include_mutants");
  m.def("suite_names", [] {
    std::vector<std::string> v;
    for (const auto& s : builtin_suites()) v.push_back(s.name);
    return v;
  });

  m.def("encode", [](const std::string& tag, const F64Array& values, const std::string& rounding, const std::string& nan) {
    const Format& f = format_of(tag);
    const auto r = parse_rounding(rounding);
    if (!r) throw InputError("unknown rounding '" + rounding + "'");
    const auto n = parse_nan_payload(nan);  // the NaN convention (docs/formats.md)
    if (!n) throw InputError("unknown NaN convention '" + nan + "' (valid: " + nan_payload_names() + ")");
    if (const std::string why = nan_payload_problem(f, *n); !why.empty()) throw InputError("nan='" + nan + "': " + why);
    const Rounder rr{*r, default_saturation(f), *n};
    py::array_t<std::uint64_t> out(std::vector<py::ssize_t>(values.shape(), values.shape() + values.ndim()));
    const double* src = values.data();
    auto* dst = out.mutable_data();
    for (py::ssize_t x = 0; x < values.size(); ++x) dst[x] = to_container(f, round_double(f, src[x], rr).code);
    return out;
  }, py::arg("format"), py::arg("values"), py::arg("rounding") = "rn", py::arg("nan") = "preserve",
     "Round values into a format: container codes (uint64); nan: what NaN values become (preserve, canonical, nvidia, any, ml_dtypes)");
  m.def("nan_convention", [](const std::string& tag, const std::string& nan) {
    const auto n = parse_nan_payload(nan);
    if (!n) throw InputError("unknown NaN convention '" + nan + "' (valid: " + nan_payload_names() + ")");
    return describe_nan_convention(format_of(tag), *n);
  }, py::arg("format"), py::arg("nan"), "What a NaN convention writes into a format, e.g. nan_convention('f16', 'nvidia')");
  m.def("decode", [](const std::string& tag, const U64Array& codes) {
    const Format& f = format_of(tag);
    py::array_t<double> out(std::vector<py::ssize_t>(codes.shape(), codes.shape() + codes.ndim()));
    const auto* src = codes.data();
    double* dst = out.mutable_data();
    for (py::ssize_t x = 0; x < codes.size(); ++x) dst[x] = to_double(f, from_container(f, src[x]));
    return out;
  }, py::arg("format"), py::arg("codes"), "The exact values of container codes (float64)");

  py::class_<Reference, std::shared_ptr<Reference>>(m, "Reference", "The exact reference of C = A B (hi + lo + tail per element)")
      .def_property_readonly("hi", [](const Reference& r) {
        std::vector<double> v(r.ref.c.size());
        for (std::size_t x = 0; x < v.size(); ++x) v[x] = r.ref.c[x].hi;
        return to_array(v, r.ref.m, r.ref.n);
      })
      .def_property_readonly("lo", [](const Reference& r) {
        std::vector<double> v(r.ref.c.size());
        for (std::size_t x = 0; x < v.size(); ++x) v[x] = r.ref.c[x].lo;
        return to_array(v, r.ref.m, r.ref.n);
      })
      .def_property_readonly("abs_sum", [](const Reference& r) { return to_array(r.ref.abs_sum, r.ref.m, r.ref.n); },
                             "(|A||B|)_ij, rounded upward")
      .def("rounded_codes", [](const Reference& r, const std::string& tag) {
        const Format& f = format_of(tag);
        py::array_t<std::uint64_t> out({r.ref.m, r.ref.n});
        auto* dst = out.mutable_data();
        for (std::size_t x = 0; x < r.ref.c.size(); ++x) dst[x] = to_container(f, round_ref(f, r.ref.c[x], Rounder::nearest(f)).code);
        return out;
      }, py::arg("format"), "The reference correctly rounded (nearest-even) into a format: container codes")
      .def("ulps", [](const Reference& r, const std::string& tag, const U64Array& codes) {
        const Format& f = format_of(tag);
        if (static_cast<std::size_t>(codes.size()) != r.ref.c.size()) throw InputError("ulps: C has the wrong size");
        std::vector<double> v(r.ref.c.size());
        for (std::size_t x = 0; x < v.size(); ++x) v[x] = ulp_distance(f, from_container(f, codes.data()[x]), r.ref.c[x]);
        return to_array(v, r.ref.m, r.ref.n);
      }, py::arg("format"), py::arg("codes"), "ULP distance of each code of C to the exact reference, in the format's ulps")
      .def_property_readonly("shape", [](const Reference& r) { return py::make_tuple(r.ref.m, r.ref.n); });

  m.def("reference", [](const F64Array& A, const F64Array& B, const std::string& source) {
    auto r = std::make_shared<Reference>();
    r->problem = user_problem(A, B, source, "python:reference");
    py::gil_scoped_release nogil;
    r->ref = gemm_reference(r->problem.a.view(), r->problem.b.view());
    return r;
  }, py::arg("A"), py::arg("B"), py::arg("source") = "f64", "Exact GEMM reference of exact float64 inputs");

  m.def("tolerance", [](const KernelTraits& t, const Reference& r) {
    ElementTolerance e = element_tolerance(t, r.problem, r.ref);
    return py::make_tuple(to_array(e.allowed, r.ref.m, r.ref.n), bound_dict(e.bound));
  }, py::arg("traits"), py::arg("reference"), "Each element's allowed |c - ref| under the envelope tier, and the envelope");

  m.def("shape_tolerance", [](const KernelTraits& t, std::int64_t mm, std::int64_t n, std::int64_t k, bool inputs_exact) {
    ShapeTolerance s = shape_tolerance(t, mm, n, k, inputs_exact);
    return py::dict(py::arg("normwise") = bound_dict(s.normwise), py::arg("element") = bound_dict(s.element),
                    py::arg("derivation") = s.derivation);
  }, py::arg("traits"), py::arg("m"), py::arg("n"), py::arg("k"), py::arg("inputs_exact") = false);

  m.def("grade", [](const KernelTraits& t, const Reference& r, const U64Array& c_codes, const std::string& tier,
                    int worst_count, const std::string& case_id, const std::string& kernel) {
    const auto strongest = tier.empty() ? std::optional<Tier>(Tier::Bitwise) : parse_tier(tier);
    if (!strongest || *strongest == Tier::None) throw InputError("unknown tier '" + tier + "' (bitwise, envelope+statistical, envelope)");
    if (static_cast<std::size_t>(c_codes.size()) != r.ref.c.size()) throw InputError("C has the wrong shape");
    std::vector<std::uint64_t> codes(r.ref.c.size());
    for (std::size_t x = 0; x < codes.size(); ++x) codes[x] = from_container(*t.out, c_codes.data()[x]);
    CaseResult c;
    c.suite = "assert_close";
    c.case_id = case_id;
    c.kernel = kernel;
    c.kernel_traits = describe_traits(t);
    c.backend = "python";
    c.spec = r.problem.spec;
    c.m = r.problem.m, c.n = r.problem.n, c.k = r.problem.k;
    c.source_format = r.problem.source->tag;
    c.out_format = t.out->tag;
    GradeInput gi;
    gi.problem = &r.problem;
    gi.ref = &r.ref;
    gi.traits = &t;
    gi.variant = BoundVariant::Independent;  // the course gate: reported, never decisive
    gi.strongest = *strongest;
    gi.codes = &codes;
    gi.worst_count = worst_count;
    {
      py::gil_scoped_release nogil;
      grade(gi, c);
    }
    return to_json(c).dump();
  }, py::arg("traits"), py::arg("reference"), py::arg("c_codes"), py::arg("tier") = "", py::arg("worst_count") = 5,
     py::arg("case_id") = "assert_close", py::arg("kernel") = "python");

  // Exact GEMM references (docs/oracle.md, "On the GPU"): auto from import, as the CLI's default (nothing touches the
  // device until a reference of 2^27 products); fpcert.set_reference changes it. The device is asked in this process
  // (Python's own CUDA users, torch, hold it here anyway; fpcert forks no child from the Python entry).
  const auto usable_here = [](std::string* why) { return make_cuda_exact_gemm_engine(why) != nullptr; };
  use_reference_engine("auto", usable_here);
  m.def(
      "set_reference", [usable_here](const std::string& kind) { return use_reference_engine(kind, usable_here); },
      py::arg("kind"), "Where exact GEMM references are made from now on: cpu, gpu or auto (docs/oracle.md)");

  m.def("certify", &certify_callable, py::arg("adapter"), py::arg("traits"), py::arg("name"), py::arg("description"),
        py::arg("suite"), py::arg("mn") = 0, py::arg("case") = "", py::arg("variant") = "", py::arg("tier") = "", py::arg("jsonl") = "",
        py::arg("command") = "python", py::arg("deterministic") = true, py::arg("can_implement") = py::none());

  m.def("generate", [](const std::string& spec) {
    Problem p;
    {
      py::gil_scoped_release nogil;
      p = generate(spec);
    }
    return py::make_tuple(to_array(p.a.data, p.a.rows, p.a.cols), to_array(p.b.data, p.b.rows, p.b.cols),
                          py::dict(py::arg("spec") = p.spec, py::arg("family") = p.family, py::arg("source") = std::string(p.source->tag),
                                   py::arg("achieved") = p.achieved, py::arg("not_representable") = p.not_representable));
  }, py::arg("spec"), "A problem from a generator spec: (A, B, info), A and B exact float64 values");

  m.def("environment", [](const std::string& command) { return to_json(make_environment(command, nullptr)).dump(); },
        py::arg("command") = "python");
  m.def("write_json", [](const std::string& run_json, const std::string& path) {
    write_file_atomic(path, to_json(run_from_json(nlohmann::json::parse(run_json))).dump(2) + "\n");
  }, py::arg("run_json"), py::arg("path"));
  m.def("junit", [](const std::string& run_json) { return junit_xml(run_from_json(nlohmann::json::parse(run_json))); },
        py::arg("run_json"));
  m.def("write_html", [](const std::vector<std::string>& runs_json, const std::string& path) {
    std::vector<RunResult> runs;
    for (const auto& s : runs_json) runs.push_back(run_from_json(nlohmann::json::parse(s)));
    write_html_report(path, runs);
  }, py::arg("runs_json"), py::arg("path"));

  // Elementwise math (docs/elementwise.md, "From Python"): a user's results y = f(x), codes of f32/f16/bf16, judged against
  // the correctly rounded value (MPFR where the fast path cannot decide) and the claim; the record as JSON.
  m.def("check_elementwise", [](const std::string& fn, const std::string& in, const std::string& out, const U64Array& x,
                                const U64Array& y, double ulps, double slope, double lo, double hi) {
    const auto f = math::parse_fn(fn);
    if (!f) throw InputError("check_elementwise: unknown function '" + fn + "' (exp, exp2, exp10, log, log2, log10, sqrt, rsqrt, expm1, log1p, tanh, sinh, cosh)");
    if (x.size() != y.size()) throw InputError("check_elementwise: x and y differ in size");
    if (math::arity(*f) == 2) throw InputError("check_elementwise: '" + fn + "' takes two inputs (check_elementwise2)");
    EltwiseTraits t;
    t.fn = *f;
    t.in = &format_of(in);
    t.out = &format_of(out);
    if (const std::string why = eltwise_traits_problem(t); !why.empty()) throw InputError("check_elementwise: " + why);
    t.claim = ulps < 0 ? math::Claim{} : math::Claim{math::ClaimKind::Ulp, ulps, slope, 0, lo, hi};
    EltwiseTally tally;
    {
      py::gil_scoped_release nogil;
      for (py::ssize_t i = 0; i < x.size(); ++i)
        eltwise_check_one(t, static_cast<std::uint32_t>(from_container(*t.in, x.data()[i])),
                          static_cast<std::uint32_t>(from_container(*t.out, y.data()[i])), tally);
    }
    ElementwiseResult e = eltwise_record(t, tally);
    e.sweep = "python";
    return to_json(e).dump();
  }, py::arg("function"), py::arg("in_format"), py::arg("out_format"), py::arg("x_codes"), py::arg("y_codes"), py::arg("ulps") = -1.0,
     py::arg("slope") = 0.0, py::arg("lo") = -HUGE_VAL, py::arg("hi") = HUGE_VAL,
     "Judge y = f(x) (container codes) against the correctly rounded result; ulps < 0: the claim is correctly rounded");
  // Binary functions (docs/elementwise.md, "Binary functions"): z = f(x1, x2) on f32 codes, judged against MPFR.
  m.def("check_elementwise2", [](const std::string& fn, const U64Array& x1, const U64Array& x2, const U64Array& z, double ulps) {
    const auto f = math::parse_fn(fn);
    if (!f || math::arity(*f) != 2) throw InputError("check_elementwise2: '" + fn + "' is not a binary function (div, pow, atan2, fmax, fmin)");
    if (x1.size() != z.size() || x2.size() != z.size()) throw InputError("check_elementwise2: x1, x2 and z differ in size");
    EltwiseTraits t;
    t.fn = *f;
    t.claim = ulps < 0 ? math::Claim{} : math::Claim{math::ClaimKind::Ulp, ulps};
    EltwiseTally tally;
    {
      py::gil_scoped_release nogil;
      for (py::ssize_t i = 0; i < z.size(); ++i)
        eltwise_check_two(t, static_cast<std::uint32_t>(x1.data()[i]), static_cast<std::uint32_t>(x2.data()[i]),
                          static_cast<std::uint32_t>(z.data()[i]), tally);
    }
    ElementwiseResult e = eltwise_record(t, tally);
    e.sweep = "python";
    return to_json(e).dump();
  }, py::arg("function"), py::arg("x1_codes"), py::arg("x2_codes"), py::arg("z_codes"), py::arg("ulps") = -1.0,
     "Judge z = f(x1, x2) (f32 codes) against the correctly rounded result; ulps < 0: the claim is correctly rounded");
}
