// python/gemm_epilogue.cpp — a GEMM's fused epilogue for a Python callable (docs/python.md, "Fused epilogues"): the
// keyword arguments python/fpcert's adapter turns into what the callable receives, and the amax it hands back.
#include <cmath>
#include <cstring>
#include <limits>

#include "oracle/round.hpp"
#include "python/py_support.hpp"

namespace fpcert::py_support {

py::dict epilogue_kwargs(const KernelTraits& t, const GemmOperands& ops, py::array_t<double>* amax_out) {
  const EpilogueTraits& e = t.epilogue;
  py::dict kw;
  // The bias: its codes in the bias format's container, one vector for every batch; the adapter shapes it to
  // broadcast against D ((n,) per column, (m, 1) per row).
  const std::int64_t len = ops.bias_kind == BiasKind::PerRow ? ops.m : ops.n;
  kw["bias"] = ops.bias_kind == BiasKind::None || !ops.bias
                   ? py::object(py::none())
                   : py::object(container_array(ops.bias, 1, len, len, e.bias_format ? *e.bias_format : *t.out));
  kw["bias_kind"] = std::string(to_string(ops.bias_kind));
  kw["activation"] = std::string(to_string(ops.activation));
  if (e.fp8_scaling) {
    kw["scale_a"] = ops.scale_a;
    kw["scale_b"] = ops.scale_b;
    kw["scale_d"] = ops.scale_d;
  }
  if (e.amax) {
    if (ops.amax) {
      *amax_out = py::array_t<double>(1);
      amax_out->mutable_data()[0] = std::numeric_limits<double>::quiet_NaN();  // unwritten: NaN, and the amax check fails
      kw["_amax_out"] = *amax_out;
    } else {
      kw["_amax_out"] = py::none();
    }
  }
  return kw;
}

void store_amax(const py::array_t<double>& amax_out, const KernelTraits& t, const GemmOperands& ops) {
  if (!ops.amax) return;
  if (amax_out.size() != 1) throw std::runtime_error("amax asked of a callable whose traits do not declare amax=1");
  const Format& acc = *t.acc;
  const double v = amax_out.data()[0];
  const std::uint64_t code = round_double(acc, v, Rounder::nearest(acc)).code;
  // The callable's amax is a value of the accumulator format (the adapter hands it such an array): fpcert never rounds
  // a kernel's result for it; NaN (never written) goes through as NaN.
  if (!std::isnan(v) && to_double(acc, code) != v)
    throw std::runtime_error("the callable's amax " + std::to_string(v) + " is not a " + std::string(acc.tag) + " value");
  const std::uint64_t c = to_container(acc, code);
  std::memcpy(ops.amax, &c, static_cast<std::size_t>(container_bytes(acc)));  // little-endian host: the low bytes
}

}  // namespace fpcert::py_support
