// python/py_support.hpp — what the native module's entries share (python/module.cpp, python/reduce_entry.cpp):
// formats by tag, the Python callable's handle, operands as NumPy arrays of container codes, kernel removal.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <functional>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "kernels/kernel.hpp"
#include "oracle/format.hpp"
#include "oracle/softmax/softmax_bound.hpp"

namespace fpcert {
struct SoftmaxTraits;
struct NormTraits;
}  // namespace fpcert
#include "suites/run/suite.hpp"

namespace fpcert::py_support {

namespace py = pybind11;

inline const Format& format_of(const std::string& tag) {
  const Format* f = find_format(tag);
  if (!f) throw InputError("unknown format '" + tag + "' (one of " + format_tags() + ")");
  return *f;
}

/// The Python callable's handle, released with the GIL held (also when the last kernel copy dies
/// on a thread without it).
using PyHandle = std::shared_ptr<py::object>;
inline PyHandle make_handle(py::object o) {
  return PyHandle(new py::object(std::move(o)), [](py::object* p) {
    py::gil_scoped_acquire gil;
    delete p;
  });
}

/// Raw container codes of one operand, as the runner laid them out (row-major, ld), as a NumPy array
/// of the container's unsigned type.
inline py::array container_array(const void* data, std::int64_t rows, std::int64_t cols, std::int64_t ld, const Format& f) {
  const int bytes = container_bytes(f);
  py::dtype dt = bytes == 1 ? py::dtype::of<std::uint8_t>() : bytes == 2 ? py::dtype::of<std::uint16_t>()
                 : bytes == 4 ? py::dtype::of<std::uint32_t>() : py::dtype::of<std::uint64_t>();
  // Strides given explicitly: pybind11 2.10 (Debian 12's) computes default strides from the dtype's item
  // size as NumPy 1 laid out its descriptor, which under NumPy 2 is garbage (seen on the H200's NumPy 2.5:
  // every array handed to a Python kernel was scrambled).
  py::array out(dt, std::vector<py::ssize_t>{rows, cols}, std::vector<py::ssize_t>{cols * bytes, bytes});
  auto* dst = static_cast<std::uint8_t*>(out.mutable_data());
  const auto* src = static_cast<const std::uint8_t*>(data);
  for (std::int64_t i = 0; i < rows; ++i)
    std::memcpy(dst + i * cols * bytes, src + i * ld * bytes, static_cast<std::size_t>(cols * bytes));
  return out;
}

/// `count` matrices of rows x cols codes, matrix t at data + t * stride elements, as a (count, rows, cols) array (a
/// strided batched GEMM's operand; count 1: the broadcast one).
inline py::array container_array3(const void* data, std::int64_t count, std::int64_t stride, std::int64_t rows, std::int64_t cols,
                                  std::int64_t ld, const Format& f) {
  const int bytes = container_bytes(f);
  py::dtype dt = bytes == 1 ? py::dtype::of<std::uint8_t>() : bytes == 2 ? py::dtype::of<std::uint16_t>()
                 : bytes == 4 ? py::dtype::of<std::uint32_t>() : py::dtype::of<std::uint64_t>();
  py::array out(dt, std::vector<py::ssize_t>{count, rows, cols}, std::vector<py::ssize_t>{rows * cols * bytes, cols * bytes, bytes});
  auto* dst = static_cast<std::uint8_t*>(out.mutable_data());
  for (std::int64_t t = 0; t < count; ++t) {
    const auto* src = static_cast<const std::uint8_t*>(data) + t * stride * bytes;
    for (std::int64_t i = 0; i < rows; ++i)
      std::memcpy(dst + (t * rows + i) * cols * bytes, src + i * ld * bytes, static_cast<std::size_t>(cols * bytes));
  }
  return out;
}

/// Copies a callable's result (n rows x cols container codes of `f`, any strides) into dst (row stride ld); `what` names
/// it in the error ("result", "LSE") when its shape or item size is not that.
inline void copy_rows(const py::handle& r, const Format& f, std::int64_t n, std::int64_t cols, void* dst, std::int64_t ld, const char* what) {
  const int bytes = container_bytes(f);
  const py::buffer_info info = py::reinterpret_borrow<py::buffer>(r).request();
  if (info.ndim != 2 || info.shape[0] != n || info.shape[1] != cols || info.itemsize != bytes)
    throw std::runtime_error("the callable's " + std::string(what) + " is not " + std::to_string(n) + " x " + std::to_string(cols) +
                             " values of " + std::string(f.tag));
  const auto* src = static_cast<const std::uint8_t*>(info.ptr);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < cols; ++j)
      std::memcpy(static_cast<std::uint8_t*>(dst) + (i * ld + j) * bytes, src + i * info.strides[0] + j * info.strides[1],
                  static_cast<std::size_t>(bytes));
}

/// A Python exception raised inside a kernel's call, as the case records it: its text in a std::runtime_error, the
/// Python error state cleared so that the suite goes on (every Python kernel's run() catches py::error_already_set here).
[[noreturn]] inline void rethrow_python_error(py::error_already_set& e) {
  const std::string what = e.what();
  e.restore();
  PyErr_Clear();
  throw std::runtime_error(what);
}

/// Remove a kernel from the registry (its factory's handle is released here, with the GIL held).
inline void unregister_kernel(const std::string& name) {
  auto& reg = kernel_registry();
  std::erase_if(reg, [&](const KernelInfo& k) { return k.name == name; });
}

/// Remove a kernel and every kernel named after it (`<name>~...`, `<name>@...`: mutants, variants and re-declarations a
/// diagnosis registers from it, whose factories refer to it by name).
inline void unregister_kernel_and_derived(const std::string& name) {
  auto& reg = kernel_registry();
  std::erase_if(reg, [&](const KernelInfo& k) {
    return k.name == name || (k.name.size() > name.size() && k.name.starts_with(name) && (k.name[name.size()] == '~' || k.name[name.size()] == '@'));
  });
}


/// Registers fpcert.certify_reduction's native part (python/reduce_entry.cpp).
void add_reduction_entry(py::module_& m);

/// A Python callable `adapter(a_codes, b_codes) -> c_codes` as a host GEMM kernel declaring `traits` (python/module.cpp).
std::unique_ptr<GemmKernel> make_python_gemm_kernel(std::string name, std::string description, KernelTraits traits, PyHandle adapter);

/// A GEMM's fused epilogue for a Python callable (python/gemm_epilogue.cpp; docs/python.md, "Fused epilogues"): the
/// keyword arguments of a call (bias codes or None, bias_kind, activation; scale_a, scale_b, scale_d with FP8 scaling;
/// _amax_out, a 1-element float64 array pre-filled with NaN or None, when the traits declare amax), and the amax the
/// adapter wrote there stored into ops.amax (a value of the accumulator format, never rounded for the callable).
py::dict epilogue_kwargs(const KernelTraits& t, const GemmOperands& ops, py::array_t<double>* amax_out);
void store_amax(const py::array_t<double>& amax_out, const KernelTraits& t, const GemmOperands& ops);

/// Registers fpcert.audit's native part (python/audit_entry.cpp).
void add_audit_entry(py::module_& m);

/// A Python softmax / norm callable's adapter (python/fpcert/rows.py, _row_adapter) as a host kernel declaring `t`
/// (python/rows_entry.cpp): what fpcert.certify_softmax / certify_norm run, and fpcert.audit(fn, op="softmax" | ...).
std::unique_ptr<Kernel> make_python_softmax_kernel(std::string name, std::string description, const SoftmaxTraits& t, bool accepts_scale,
                                                   PyHandle adapter);
std::unique_ptr<Kernel> make_python_norm_kernel(std::string name, std::string description, const NormTraits& t, PyHandle adapter);

/// Registers fpcert.certify_softmax's and fpcert.certify_norm's native parts (python/rows_entry.cpp).
void add_rows_entries(py::module_& m);
/// Registers fpcert.certify_norm_backward's native part (python/norm_bwd_entry.cpp).
void add_norm_bwd_entry(py::module_& m);
/// Shared by the row and attention entries (python/rows_entry.cpp): the exp and log declarations by name ("expf",
/// "__expf", "libm", "expf_ops", "cr", "ulps:N"; "logf", "libm", "cr", "ulps:N"), a suite of an operation by name, and
/// the registration of a Python kernel for one certify run (the suite with certify's evidence rule; results as JSON).
ElemFnError exp_of(const std::string& s);
ElemFnError log_of(const std::string& s);
const SuiteInfo& suite_of(const std::string& suite_name, Operation op, const char* names);
/// The suite `suite_name` when it is one of operation `op`'s, else InputError naming that operation's suites.
const SuiteInfo& suite_of(const std::string& suite_name, Operation op);

/// A Python callable declared as a kernel of one operation, not yet registered: what fpcert.certify_* and fpcert.diagnose_*
/// share (the declaration is read, and refused with an InputError, before anything is registered). Made by
/// softmax_declaration / norm_declaration (python/rows_entry.cpp), reduction_declaration (python/reduce_entry.cpp).
struct PyKernelDeclaration {
  std::string name;
  Operation op = Operation::Gemm;
  std::function<std::unique_ptr<Kernel>()> make;
};
/// Registers `d` under its name, runs `body` with the GIL released, then removes it and every kernel made from it while
/// it ran (a diagnosis's `<name>~<hypothesis>` and `<name>@<hypothesis>`), also when `body` throws.
std::string with_registered(const PyKernelDeclaration& d, const std::function<std::string()>& body);
/// Registers the kernel for one certify run (the suite with certify's evidence rule; results as JSON).
std::string certify_registered(const PyKernelDeclaration& d, const SuiteInfo& suite, const std::string& entry, const std::string& command);
std::string certify_registered(const std::string& name, Operation op, const std::function<std::unique_ptr<Kernel>()>& make,
                               const SuiteInfo& suite, const std::string& entry, const std::string& command);
/// Whether fpcert.mutate's switch is on (python/rows_entry.cpp: certify_registered then runs the mutation score).
bool mutation_requested();
/// fpcert.certify_attention's native part (python/attention_entry.cpp).
void add_attention_entry(py::module_& m);
void add_attention_bwd_entry(py::module_& m);  ///< python/attention_bwd_entry.cpp (issue 45)
/// fpcert.diagnose (python/diagnose_entry.cpp).
void add_diagnose_entry(py::module_& m);
/// fpcert.certify_softmax_backward's native part (python/softmax_bwd_entry.cpp; issue 45).
void add_softmax_bwd_entry(py::module_& m);
/// fpcert.certify_elementwise's native part (python/eltwise_entry.cpp; issue 42).
void add_eltwise_entry(py::module_& m);

}  // namespace fpcert::py_support
