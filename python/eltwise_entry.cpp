// python/eltwise_entry.cpp — fpcert.certify_elementwise's native part (docs/elementwise.md, "From Python"): a Python callable
// y = f(x) (numpy.exp, torch.exp on a device, a binary f(x, x2)) as an ElementwiseKernel declaring the caller's claim,
// certified by the runner on an elementwise suite: every 16-bit input, every fp32 input in chunks of 2^22 (elementwise_full)
// or the special and sampled inputs (elementwise), binary functions on the CLI's special and sampled pairs. Each result is
// judged by the host check fpcert.check_elementwise uses (eltwise_check_one, eltwise_check_two), through the runner's
// guarded buffers like every kernel's.
#include <pybind11/pybind11.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/elementwise/eltwise_kernel.hpp"
#include "oracle/math/elementary.hpp"
#include "python/py_support.hpp"

namespace fpcert::py_support {

namespace {

/// `count` container codes of `f` as a 1-D NumPy array of the container's unsigned type.
py::array codes_1d(const void* data, std::int64_t count, const Format& f) {
  const int bytes = container_bytes(f);
  py::dtype dt = bytes == 2 ? py::dtype::of<std::uint16_t>() : py::dtype::of<std::uint32_t>();
  py::array out(dt, std::vector<py::ssize_t>{count}, std::vector<py::ssize_t>{bytes});  // strides explicit (py_support.hpp)
  std::memcpy(out.mutable_data(), data, static_cast<std::size_t>(count * bytes));
  return out;
}

/// The callable as a host-memory elementwise kernel: `adapter(x_codes, x2_codes or None) -> y codes`, `count` of each.
class PyEltwiseKernel final : public ElementwiseKernel {
 public:
  PyEltwiseKernel(std::string name, std::string description, EltwiseTraits t, PyHandle adapter)
      : name_(std::move(name)), description_(std::move(description)), traits_(std::move(t)), adapter_(std::move(adapter)) {}
  const std::string& name() const override { return name_; }
  std::string description() const override { return description_; }
  Backend backend() const override { return Backend::Plugin; }
  const EltwiseTraits& eltwise_traits() const override { return traits_; }
  void run(const EltwiseOperands& o) override {
    py::gil_scoped_acquire gil;
    const int ob = container_bytes(*traits_.out);
    try {
      const py::object x = codes_1d(o.x, o.count, *traits_.in);
      const py::object x2 = o.x2 ? py::object(codes_1d(o.x2, o.count, *traits_.in)) : py::object(py::none());
      const py::object r = (*adapter_)(x, x2);
      const py::buffer_info info = py::reinterpret_borrow<py::buffer>(r).request();
      if (info.ndim != 1 || info.shape[0] != o.count || info.itemsize != ob)
        throw std::runtime_error("the callable's result is not " + std::to_string(o.count) + " values of " + std::string(traits_.out->tag));
      const auto* src = static_cast<const std::uint8_t*>(info.ptr);
      for (std::int64_t i = 0; i < o.count; ++i)
        std::memcpy(static_cast<std::uint8_t*>(o.y) + i * ob, src + i * info.strides[0], static_cast<std::size_t>(ob));
    } catch (py::error_already_set& e) {
      rethrow_python_error(e);  // the case records it; the suite goes on
    }
  }

 private:
  std::string name_, description_;
  EltwiseTraits traits_;
  PyHandle adapter_;
};

/// The claim the Python arguments state: ulps < 0 correctly rounded, else ulps + floor(slope |x|) ulp; a bound > 0 an
/// absolute (relative when `relative`) bound on [lo, hi], ulps then the fallback outside (< 0: none).
math::Claim claim_of(double ulps, double slope, double bound, bool relative, double lo, double hi) {
  math::Claim c;
  if (!(slope >= 0) || std::isinf(slope)) throw InputError("certify_elementwise: slope must be finite and >= 0");
  if (!(lo <= hi)) throw InputError("certify_elementwise: domain (lo, hi) needs lo <= hi");
  c.lo = lo, c.hi = hi;
  if (bound > 0) {
    if (std::isinf(bound)) throw InputError("certify_elementwise: the bound must be finite");
    if (slope != 0) throw InputError("certify_elementwise: slope is for an ulp claim, not an absolute or relative bound");
    c.kind = relative ? math::ClaimKind::Relative : math::ClaimKind::Absolute;
    c.bound = bound;
    c.ulps = ulps > 0 ? ulps : 0;
  } else if (ulps >= 0) {
    if (std::isinf(ulps)) throw InputError("certify_elementwise: ulps must be finite");
    c.kind = math::ClaimKind::Ulp;
    c.ulps = ulps, c.ulp_slope = slope;
  } else if (slope != 0) {
    throw InputError("certify_elementwise: slope needs ulps (a correctly rounded claim has none)");
  }
  return c;
}

std::string certify_elementwise(py::object adapter, const std::string& function, const std::string& in, const std::string& out, double ulps,
                                double slope, double bound, bool relative, double lo, double hi, double x2_lo, double x2_hi, bool daz, bool ftz,
                                const std::string& source, const std::string& name, const std::string& description,
                                const std::string& suite_name, const std::string& command) {
  const auto f = math::parse_fn(function);
  if (!f) throw InputError("certify_elementwise: unknown function '" + function + "'");
  EltwiseTraits t;
  t.fn = *f;
  t.in = &format_of(in);
  t.out = &format_of(out);
  if (const std::string why = eltwise_traits_problem(t); !why.empty()) throw InputError("certify_elementwise: " + why);
  t.claim = claim_of(ulps, slope, bound, relative, lo, hi);
  t.daz = daz, t.ftz = ftz;
  if (math::arity(*f) == 2) {
    if (!(x2_lo >= 0 && x2_lo <= x2_hi)) throw InputError("certify_elementwise: x2_domain (lo, hi) needs 0 <= lo <= hi (|x2|)");
    t.x2_lo = x2_lo, t.x2_hi = x2_hi;
  } else if (x2_lo != 0 || x2_hi != std::numeric_limits<double>::infinity()) {
    throw InputError("certify_elementwise: x2_domain is for binary functions (div, pow, atan2, fmax, fmin)");
  }
  t.claim_source = source;
  const SuiteInfo& suite = suite_of(suite_name, Operation::Elementwise, "elementwise, elementwise_full");
  PyHandle h = make_handle(std::move(adapter));
  auto make = [=] { return std::unique_ptr<Kernel>(new PyEltwiseKernel(name, description, t, h)); };
  h.reset();
  return certify_registered(name, Operation::Elementwise, make, suite, "certify_elementwise", command);
}

}  // namespace

void add_eltwise_entry(py::module_& m) {
  m.def("certify_elementwise", &certify_elementwise, py::arg("adapter"), py::arg("function"), py::arg("in_format"), py::arg("out_format"),
        py::arg("ulps"), py::arg("slope"), py::arg("bound"), py::arg("relative"), py::arg("lo"), py::arg("hi"), py::arg("x2_lo"),
        py::arg("x2_hi"), py::arg("daz"), py::arg("ftz"), py::arg("source"), py::arg("name"), py::arg("description"), py::arg("suite"),
        py::arg("command"),
        "Certify a Python elementwise callable on an elementwise suite; the run's results as JSON (fpcert.certify_elementwise wraps it)");
}

}  // namespace fpcert::py_support
