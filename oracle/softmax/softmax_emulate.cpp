// oracle/softmax/softmax_emulate.cpp — the bitwise tier's emulation of a softmax declared exactly.
#include "oracle/softmax/softmax_emulate.hpp"

#include <cmath>
#include <limits>
#include <vector>

#include "oracle/math/expf_ops.hpp"
#include "oracle/reduce/reduce_order.hpp"
#include "oracle/round.hpp"

namespace fpcert {

bool softmax_emulable(const SoftmaxArith& a, std::string* why) {
  auto no = [&](const char* w) {
    if (why) *why = w;
    return false;
  };
  if (a.fn != SoftmaxFn::Softmax) return no("log-softmax's log is not declared as operations");
  if (a.shift != SoftmaxShift::Shifted) return no("only the shifted evaluation is emulated");
  if (*a.compute != f32 || *a.sum_acc != f32) return no("the compute format and the row sum's accumulator must be binary32");
  if (a.exp_exact == SoftmaxExpExact::None) return no("the exp is declared by its error only (opaque)");
  if (a.sum_order.kind == ReduceOrderKind::Unknown) return no("the row sum's order is not declared");
  return true;
}

void emulate_softmax_row(const SoftmaxArith& a, MaskedRowPolicy policy, const float* x, const float* mask, float scale,
                         std::size_t n, std::uint64_t* codes) {
  const Rounder out_r = Rounder::nearest(*a.out);
  const std::uint64_t nan_code = round_double(*a.out, std::numeric_limits<double>::quiet_NaN(), out_r).code;
  std::vector<float> z(n);
  float m = -std::numeric_limits<float>::infinity();
  bool nan = false;
  for (std::size_t j = 0; j < n; ++j) {
    float v = scale == 1.0f ? x[j] : scale * x[j];
    if (mask) v = v + mask[j];
    z[j] = v;
    m = std::fmax(m, v);  // a NaN is ignored here (fmaxf) and reaches every result through its own term below
    nan = nan || std::isnan(v);
  }
  if (m == -std::numeric_limits<float>::infinity() && !nan) {  // every entry masked: the declared policy
    const std::uint64_t c = policy == MaskedRowPolicy::Nan ? nan_code : round_double(*a.out, 0.0, out_r).code;
    for (std::size_t j = 0; j < n; ++j) codes[j] = c;
    return;
  }
  std::vector<double> e(n);
  bool finite = true;
  for (std::size_t j = 0; j < n; ++j) {
    const float d = z[j] - m;
    e[j] = static_cast<double>(math::expf_ops(d));
    finite = finite && std::isfinite(e[j]);
  }
  // The row sum in its declared order; a NaN term (a NaN or +Inf logit) makes it NaN in every order.
  const float s = finite ? static_cast<float>(emulate_sum(e.data(), n, a.sum_order, ReduceArith{}))
                         : std::numeric_limits<float>::quiet_NaN();
  const float inv = a.reciprocal ? 1.0f / s : 0.0f;
  for (std::size_t j = 0; j < n; ++j) {
    const float ej = static_cast<float>(e[j]);
    const float y = a.reciprocal ? ej * inv : ej / s;
    codes[j] = std::isnan(y) ? nan_code : round_double(*a.out, static_cast<double>(y), out_r).code;
  }
}

}  // namespace fpcert
