// suites/audit/audit_inputs.cpp — what an audit reads besides its rule (audit.hpp; docs/audit.md): the test's own
// tensors, from values or from .npy files of float64/32/16 and bfloat16 (ml_dtypes' '|V2'), and the arithmetic a user
// allows besides the declaration (--allow tf32).
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <tuple>

#include "base/error.hpp"
#include "base/npy.hpp"
#include "oracle/format.hpp"
#include "suites/audit/audit.hpp"

namespace fpcert {

AuditTensors audit_tensors(std::int64_t a_rows, std::int64_t a_cols, std::vector<double> a, std::int64_t b_rows, std::int64_t b_cols,
                           std::vector<double> b, const std::string& what_a, const std::string& what_b) {
  if (a_rows < 1 || a_cols < 1 || b_rows < 1 || b_cols < 1)
    throw InputError(fmt::format("audit: {} is {} x {} and {} is {} x {}: every dimension must be at least 1", what_a, a_rows, a_cols, what_b,
                                 b_rows, b_cols));
  if (a_cols != b_rows)
    throw InputError(fmt::format("audit: shape mismatch: {} is {} x {} (m x k) but {} is {} x {} (k x n): A's columns must equal B's rows",
                                 what_a, a_rows, a_cols, what_b, b_rows, b_cols));
  if (a.size() != static_cast<std::size_t>(a_rows * a_cols) || b.size() != static_cast<std::size_t>(b_rows * b_cols))
    throw InputError("audit: the tensors' values do not fill their shapes");
  auto finite = [](const std::vector<double>& v, std::int64_t cols, const std::string& what) {
    for (std::size_t x = 0; x < v.size(); ++x)
      if (!std::isfinite(v[x]))
        throw InputError(fmt::format("audit: {} holds {} at [{}, {}]: audit needs finite inputs (a NaN or Inf input makes the "
                                     "reference non-finite, which no tolerance measures); replace or drop it",
                                     what, std::isnan(v[x]) ? "NaN" : "Inf", static_cast<std::int64_t>(x) / cols, static_cast<std::int64_t>(x) % cols));
  };
  finite(a, a_cols, what_a);
  finite(b, b_cols, what_b);
  AuditTensors t;
  t.m = a_rows, t.k = a_cols, t.n = b_cols;
  t.a = std::move(a), t.b = std::move(b);
  t.source = what_a + ", " + what_b;
  return t;
}

namespace {

/// One 2-D .npy file's values and the format they are exact in (read_audit_tensors says which dtypes).
std::tuple<std::int64_t, std::int64_t, std::vector<double>> load_npy_2d(const std::string& path, const std::string& hint, std::string& what,
                                                                     std::string& fmt_tag, const char* noun) {
  const NpyArray x = read_npy(path);
  if (x.shape.size() != 2)
    throw InputError(fmt::format("audit: {} has {} dimension(s): {} is a 2-D array", path, x.shape.size(), noun));
  const Format* f = nullptr;
  std::string dtype;
  switch (x.type) {
    case NpyType::F64: f = &f64, dtype = "float64"; break;
    case NpyType::F32: f = &f32, dtype = "float32"; break;
    case NpyType::F16: f = &f16, dtype = "float16"; break;
    case NpyType::BF16: f = &bf16, dtype = "bfloat16"; break;
    case NpyType::V2:
      f = hint == "f16" ? &f16 : &bf16;
      dtype = hint == "f16" ? "2-byte void ('|V2') read as float16 bits" : "bfloat16 as ml_dtypes saves it ('|V2')";
      if (!hint.empty() && hint != "bf16" && hint != "f16")
        throw InputError(fmt::format("audit: {} holds 2-byte void values ('|V2'): its format is bf16 (ml_dtypes' bfloat16, the default) or "
                                     "f16, not '{}'", path, hint));
      break;
    case NpyType::U16:
      if (hint.empty())
        throw InputError("audit: " + path + " holds uint16 values: say which format its bits are with --a-format/--b-format bf16 or f16");
      if (hint != "bf16" && hint != "f16")
        throw InputError(fmt::format("audit: {} holds uint16 values: their format is bf16 or f16, not '{}'", path, hint));
      f = hint == "bf16" ? &bf16 : &f16, dtype = hint + " bits (uint16)";
      break;
    default:
      throw InputError("audit: " + path + " holds " + to_string(x.type) +
                       ": audit reads float64, float32, float16, bfloat16 ('|V2' as numpy.save writes ml_dtypes' bfloat16) or uint16 "
                       "bit patterns with --a-format/--b-format bf16 or f16");
  }
  if (!hint.empty() && x.type != NpyType::V2 && x.type != NpyType::U16 && hint != f->tag)
    throw InputError(fmt::format("audit: {} holds {} values; a format ('{}') is given only for uint16 bit patterns or '|V2' arrays", path,
                                 dtype, hint));
  std::vector<double> v(static_cast<std::size_t>(x.size()));
  const std::int64_t r = x.rows(), c = x.cols();
  const bool bits = x.type == NpyType::V2 || x.type == NpyType::U16 || x.type == NpyType::BF16 || x.type == NpyType::F16;
  for (std::int64_t i = 0; i < r; ++i)
    for (std::int64_t j = 0; j < c; ++j) {
      const std::int64_t at = x.fortran_order ? j * r + i : i * c + j;
      v[static_cast<std::size_t>(i * c + j)] = bits ? to_double(*f, x.bits(at)) : x.value(at);
    }
  what = fmt::format("{} ({} x {} {})", path, r, c, dtype);
  fmt_tag = f->tag;
  return std::make_tuple(r, c, std::move(v));
}

}  // namespace

AuditTensors read_audit_tensors(const std::string& a_npy, const std::string& b_npy, const std::string& a_format, const std::string& b_format) {
  // The file's values and the format they are exact in: float64/32/16 as they say; bfloat16 as ml_dtypes leaves it
  // ('|V2' from numpy.save, 'bfloat16' from a header written with str(dtype)); uint16 bit patterns as --a-format says.
  std::string wa, wb, fa, fb;
  auto [ar, ac, av] = load_npy_2d(a_npy, a_format, wa, fa, "a GEMM input");
  auto [br, bc, bv] = load_npy_2d(b_npy, b_format, wb, fb, "a GEMM input");
  AuditTensors t = audit_tensors(ar, ac, std::move(av), br, bc, std::move(bv), wa, wb);
  t.a_format = fa, t.b_format = fb;
  return t;
}

AuditTensors audit_logits(std::int64_t rows, std::int64_t cols, std::vector<double> x, const std::string& what) {
  if (rows < 1 || cols < 1) throw InputError(fmt::format("audit: {} is {} x {}: every dimension must be at least 1", what, rows, cols));
  if (x.size() != static_cast<std::size_t>(rows * cols)) throw InputError("audit: the logits' values do not fill their shape");
  for (std::size_t e = 0; e < x.size(); ++e)
    if (std::isnan(x[e]) || x[e] == std::numeric_limits<double>::infinity())
      throw InputError(fmt::format("audit: {} holds {} at [{}, {}]: a NaN or +Inf logit makes its whole row NaN, which no tolerance measures; "
                                   "-Inf (a masked entry) is accepted",
                                   what, std::isnan(x[e]) ? "NaN" : "+Inf", static_cast<std::int64_t>(e) / cols, static_cast<std::int64_t>(e) % cols));
  AuditTensors t;
  t.m = rows, t.n = cols, t.k = cols;
  t.a = std::move(x);
  t.source = what;
  return t;
}

AuditTensors read_audit_logits(const std::string& npy, const std::string& format) {
  std::string what, tag;
  auto [r, c, v] = load_npy_2d(npy, format, what, tag, "a softmax's logits");
  AuditTensors t = audit_logits(r, c, std::move(v), what);
  t.a_format = tag;
  return t;
}

void check_audit_allow(const std::vector<std::string>& allow, const KernelTraits& t) {
  for (const std::string& a : allow) {
    if (a != "tf32") throw InputError("audit: --allow '" + a + "': unknown allowance (valid: " + kAuditAllowances + ")");
    if (!(*t.a_input == f32 && *t.b_input == f32 && *t.a_operand == f32 && *t.b_operand == f32 && t.operand_u == 0))
      throw InputError(fmt::format("audit: --allow tf32 admits fp32 inputs read as TF32; the kernel's inputs are {}/{} with operands {}/{}",
                                   t.a_input->tag, t.b_input->tag, t.a_operand->tag, t.b_operand->tag));
  }
}

}  // namespace fpcert
