// oracle/softmax/softmax_bound.hpp — the per-element error bound of a softmax or log-softmax kernel from its declared
// arithmetic (docs/softmax.md, "Bound"): the error analysis of Blanchard, Higham and Higham, "Accurately computing the
// log-sum-exp and softmax functions", IMA J. Numer. Anal. 41(4), 2021 (shifted and unshifted evaluation), made
// componentwise and data dependent: every argument's perturbation (storage, scale, the shift's subtraction), the
// exp implementation's documented ulp error at that argument, the row sum's gamma_h for its declared order, an
// online softmax's rescalings, the division (or the reciprocal and the product), the log's error, the output rounding
// and the absolute errors of results below the least normal. The bound is the exact product of those factors; its
// terms are printed to first order beside it.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "oracle/format.hpp"
#include "oracle/reduce/reduce_order.hpp"
#include "oracle/softmax/softmax_ref.hpp"

namespace fpcert {

/// How an implementation of exp or log errs in its compute format: at most ulps + floor(ulps_per_x |x|) ulp for a
/// result in the normal range (x the argument), and at most abs for a result below the least normal (a flush to zero
/// loses up to the least normal). `source` names the documentation the numbers come from.
struct ElemFnError {
  double ulps = 0.5;
  double ulps_per_x = 0;
  double abs = 0;
  std::string source;
};

/// How the row's maximum is used.
enum class SoftmaxShift : std::uint8_t {
  Shifted,    ///< max first, then exp(z_j - max) (two or three passes)
  Unshifted,  ///< exp(z_j) as it is: overflows once z_j passes log(largest finite)
  Online,     ///< running max and a rescaled running sum, block by block (Milakov and Gimelshein 2018)
};
std::string_view to_string(SoftmaxShift s);  ///< "shifted", "unshifted", "online"

/// An exp a kernel declares exactly, as a sequence of IEEE operations the host can evaluate bit for bit (the bitwise
/// tier, oracle/softmax/softmax_emulate.hpp), or none (the exp is known by its error only).
enum class SoftmaxExpExact : std::uint8_t {
  None,     ///< opaque: only `exp`'s error is declared (libm, CUDA expf, __expf)
  ExpfOps,  ///< oracle/math/expf_ops.hpp's expf_ops, evaluated in the compute format binary32
};
std::string_view to_string(SoftmaxExpExact e);  ///< "none", "expf_ops"

/// The declared arithmetic of a softmax kernel (what the bound reads).
struct SoftmaxArith {
  SoftmaxFn fn = SoftmaxFn::Softmax;
  SoftmaxShift shift = SoftmaxShift::Shifted;
  int block = 0;                   ///< Online: columns per block (the running max changes at most once a block)
  const Format* compute = &f32;    ///< every operation but the row sum, rounded to nearest even
  ElemFnError exp;                 ///< the exp used (compute format)
  ElemFnError log;                 ///< the log used (log-softmax)
  const Format* sum_acc = &f32;    ///< the row sum's accumulator (nearest even)
  ReduceOrder sum_order = ReduceOrder::sequential();  ///< the row sum's order (Online: within a block)
  bool reciprocal = false;         ///< softmax as e_j * fl(1 / S): two roundings instead of one
  const Format* out = &f32;        ///< the result rounded into it once (exact when it is the compute format)
  SoftmaxExpExact exp_exact = SoftmaxExpExact::None;  ///< the exp declared exactly (then `exp` states its claimed error)
};

/// One error source of one element, to first order, in the result's units.
struct SoftmaxBoundTerm {
  std::string name;
  double value = 0;
  std::string law;
};

/// The bound on |computed - exact| of every element of one row, given the exact arguments z (NaN/Inf allowed: such rows
/// are not covered), pert[j] >= |z^_j - z_j| (the perturbation of argument j before the shift: storage and the scale's
/// rounding, computed by the caller), and the reference values y (softmax or log-softmax, within 2^-45). bound[j] = +Inf
/// where the bound does not apply (a row that is not finite, a denominator that can vanish); -Inf entries (masked) get 0.
void softmax_row_bound(const SoftmaxArith& a, const double* z, const double* pert, const double* y, std::size_t n, double* bound);

/// The same bound for element i, term by term (first order) with the exact total last.
std::vector<SoftmaxBoundTerm> softmax_bound_terms(const SoftmaxArith& a, const double* z, const double* pert, const double* y,
                                                  std::size_t n, std::size_t i);

/// The terms as text, one a line, then the total.
std::string to_text(const std::vector<SoftmaxBoundTerm>& terms);

}  // namespace fpcert
