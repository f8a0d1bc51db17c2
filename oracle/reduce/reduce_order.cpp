// oracle/reduce/reduce_order.cpp — the declared orders of a reduction, emulated bit for bit
// (reduce_order.hpp states the contract; docs/reductions.md, "Orders", the conventions).
#include "oracle/reduce/reduce_order.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "oracle/reduce/reduce_acc.hpp"
#include "oracle/convert/representable.hpp"

namespace fpcert {
namespace {

using detail::Acc;

/// The terms and whether one alone must be rounded (an exact product) or already is an acc value.
struct Terms {
  std::vector<double> t;
  bool exact_products = false;
};

void check_input(const ReduceArith& a, double v, const char* what) {
  if (std::isfinite(v) && !exactly_representable(*a.acc, v))
    throw std::invalid_argument(std::string("emulate_reduce: ") + what + " value " + std::to_string(v) +
                                " is not exactly representable in the accumulator format " + std::string(a.acc->tag));
}

void check_arith(const ReduceArith& a, const ReduceOrder& o) {
  if (a.acc == nullptr || a.acc->precision() > 26 || a.acc->specials == Specials::ScaleOnly)
    throw std::invalid_argument("emulate_reduce: the accumulator must be a signed format of at most 26 bits of precision");
  switch (o.kind) {
    case ReduceOrderKind::Unknown: throw std::invalid_argument("emulate_reduce: an unknown order cannot be emulated");
    case ReduceOrderKind::Blocked:
    case ReduceOrderKind::NumpyPairwise:
      if (o.block < 1) throw std::invalid_argument("emulate_reduce: blocked and NumPy orders need block >= 1");
      break;
    case ReduceOrderKind::WarpTree:
    case ReduceOrderKind::BlockTree:
      if (o.lanes < 1 || o.lanes > 1024 || (o.lanes & (o.lanes - 1)) != 0)
        throw std::invalid_argument("emulate_reduce: warp tree lanes must be a power of two in [1, 1024]");
      if (o.kind == ReduceOrderKind::BlockTree &&
          (o.block < 1 || o.block > 1024 || (o.warps == WarpCombine::Butterfly && o.block > o.lanes)))
        throw std::invalid_argument("emulate_reduce: a block tree needs 1 .. 1024 warps (at most `lanes` for a butterfly)");
      break;
    default: break;
  }
}

/// t_b, t_{b+stride}, ... (indices < e) summed in a sequential chain from `start`; +0 when empty.
double chain(Acc& acc, const Terms& T, std::size_t b, std::size_t e, std::size_t stride, ChainStart start) {
  if (b >= e) return 0.0;
  std::size_t i = b;
  double s = 0.0;
  if (start == ChainStart::First) {
    s = T.exact_products ? acc.lone(T.t[b]) : T.t[b];
    i += stride;
  }
  for (; i < e; i += stride) s = acc.add(s, T.t[i]);
  return s;
}

/// Recursive halving of t_b .. t_{b+n-1}: the first ceil(n/2) terms, then the rest, one rounded addition.
/// A leaf is its term rounded into the accumulator (an exact product is rounded there; other terms are
/// acc values already), as kernels/order.hpp's pairwise GEMM order rounds each product.
double pairwise(Acc& acc, const Terms& T, std::size_t b, std::size_t n) {
  if (n == 0) return 0.0;
  if (n == 1) return T.exact_products ? acc.lone(T.t[b]) : T.t[b];
  const std::size_t h = (n + 1) / 2;
  const double left = pairwise(acc, T, b, h);
  const double right = pairwise(acc, T, b + h, n - h);
  return acc.add(left, right);
}

/// NumPy's pairwise_sum over t_b .. t_{b+n-1} (the order described in reduce_order.hpp and docs/reductions.md;
/// written from that description).
double numpy_pairwise(Acc& acc, const Terms& T, std::size_t b, std::size_t n) {
  auto leaf = [&](std::size_t i) { return T.exact_products ? acc.lone(T.t[i]) : T.t[i]; };
  if (n < 8) {
    double s = 0.0;
    for (std::size_t i = 0; i < n; ++i) s = acc.add(s, T.t[b + i]);
    return s;
  }
  if (n <= 128) {
    double r[8];
    for (std::size_t j = 0; j < 8; ++j) r[j] = leaf(b + j);
    const std::size_t full = n - n % 8;
    std::size_t i = 8;
    for (; i < full; i += 8)
      for (std::size_t j = 0; j < 8; ++j) r[j] = acc.add(r[j], T.t[b + i + j]);
    const double left = acc.add(acc.add(r[0], r[1]), acc.add(r[2], r[3]));
    const double right = acc.add(acc.add(r[4], r[5]), acc.add(r[6], r[7]));
    double s = acc.add(left, right);
    for (; i < n; ++i) s = acc.add(s, T.t[b + i]);
    return s;
  }
  std::size_t n2 = n / 2;
  n2 -= n2 % 8;
  const double left = numpy_pairwise(acc, T, b, n2);
  const double right = numpy_pairwise(acc, T, b + n2, n - n2);
  return acc.add(left, right);
}

/// The xor butterfly over the lanes' values (a power of two of them): v_l = R(v_l + v_{l xor o}) for o = L/2, ...,
/// 1, every lane at once (each reads its partner's value from before the level); lane 0's value.
double butterfly(Acc& acc, std::vector<double> v) {
  std::vector<double> w(v.size());
  for (std::size_t off = v.size() / 2; off >= 1; off /= 2) {
    for (std::size_t l = 0; l < v.size(); ++l) w[l] = acc.add(v[l], v[l ^ off]);
    v.swap(w);
  }
  return v[0];
}

double run(const Terms& T, const ReduceOrder& o, Acc& acc) {
  const std::size_t n = T.t.size();
  switch (o.kind) {
    case ReduceOrderKind::Sequential: return chain(acc, T, 0, n, 1, o.start);
    case ReduceOrderKind::Pairwise: return pairwise(acc, T, 0, n);
    case ReduceOrderKind::Blocked: {
      // Block j holds t_{jB} .. t_{min((j+1)B, n) - 1}, summed from o.start; the partials are summed
      // sequentially from the first partial (no +0: kernels/order.hpp's convention for combining partials).
      const auto B = static_cast<std::size_t>(o.block);
      if (n == 0) return 0.0;
      double s = chain(acc, T, 0, std::min(B, n), 1, o.start);
      for (std::size_t b = B; b < n; b += B) s = acc.add(s, chain(acc, T, b, std::min(b + B, n), 1, o.start));
      return s;
    }
    case ReduceOrderKind::BlockTree: {
      // Threads t = w L + l; thread t sums t_t, t_{t+T}, ... from o.start; warp w's butterfly as below; then the
      // warps' results, sequentially from w_0 or by one more butterfly (lane j of a warp holding w_j, others +0).
      const auto L = static_cast<std::size_t>(o.lanes), W = static_cast<std::size_t>(o.block), Tn = L * W;
      std::vector<double> v(Tn), wres(W);
      for (std::size_t t = 0; t < Tn; ++t) v[t] = chain(acc, T, t, n, Tn, o.start);
      for (std::size_t w = 0; w < W; ++w) wres[w] = butterfly(acc, std::vector<double>(v.begin() + w * L, v.begin() + (w + 1) * L));
      if (o.warps == WarpCombine::Butterfly) {
        std::vector<double> lanes(L, 0.0);
        std::copy(wres.begin(), wres.end(), lanes.begin());
        return butterfly(acc, std::move(lanes));
      }
      double s = wres[0];
      for (std::size_t w = 1; w < W; ++w) s = acc.add(s, wres[w]);
      return s;
    }
    case ReduceOrderKind::WarpTree: {
      // Lane l sums t_l, t_{l+L}, t_{l+2L}, ... sequentially from o.start (an empty lane holds +0). Then
      // v_l = v_l + v_{l xor o} for o = L/2, ..., 2, 1, every lane at once (__shfl_xor_sync hands each lane
      // its partner's value from before the level). IEEE addition commutes, so lanes l and l xor o compute
      // one value; lane 0's is the result.
      const auto L = static_cast<std::size_t>(o.lanes);
      std::vector<double> v(L);
      for (std::size_t l = 0; l < L; ++l) v[l] = chain(acc, T, l, n, L, o.start);
      return butterfly(acc, std::move(v));
    }
    case ReduceOrderKind::NumpyPairwise: {
      // The ufunc's reduction loop sees the array in buffer-sized chunks: io = io + pairwise_sum(chunk), io = +0
      // first (the identity of add).
      const auto B = static_cast<std::size_t>(o.block);
      if (n == 0) return 0.0;
      double s = o.start == ChainStart::Zero ? acc.add(0.0, numpy_pairwise(acc, T, 0, std::min(B, n)))
                                             : numpy_pairwise(acc, T, 0, std::min(B, n));
      for (std::size_t b = B; b < n; b += B) s = acc.add(s, numpy_pairwise(acc, T, b, std::min(B, n - b)));
      return s;
    }
    case ReduceOrderKind::Unknown: break;
  }
  throw std::invalid_argument("emulate_reduce: unknown order");
}

/// Terms of a dot product (y == x for nrm2's squares), with the product rounding the arithmetic declares.
Terms product_terms(const double* x, const double* y, std::size_t n, const ReduceArith& a, Acc& acc) {
  Terms T;
  T.t.resize(n);
  T.exact_products = a.products == ProductRounding::Exact;
  for (std::size_t i = 0; i < n; ++i) {
    check_input(a, x[i], "x");
    check_input(a, y[i], "y");
    // Exact in double: both factors have at most 26 significant bits and lie in [2^-149, 2^128) (every
    // acc format allowed), so the product has at most 52 bits and lies in double's normal range.
    const double p = x[i] * y[i];
    T.t[i] = T.exact_products ? p : acc.lone(p);
  }
  return T;
}

}  // namespace

std::string_view to_string(ReduceOrderKind k) {
  switch (k) {
    case ReduceOrderKind::Unknown: return "unknown";
    case ReduceOrderKind::Sequential: return "sequential";
    case ReduceOrderKind::Pairwise: return "pairwise";
    case ReduceOrderKind::Blocked: return "blocked";
    case ReduceOrderKind::WarpTree: return "warp_tree";
    case ReduceOrderKind::NumpyPairwise: return "numpy_pairwise";
    case ReduceOrderKind::BlockTree: return "block_tree";
  }
  return "?";
}

std::string describe(const ReduceOrder& o) {
  const std::string from = o.start == ChainStart::Zero ? "from +0" : "from the first term";
  switch (o.kind) {
    case ReduceOrderKind::Unknown: return "unknown (any binary tree)";
    case ReduceOrderKind::Sequential: return "sequential " + from;
    case ReduceOrderKind::Pairwise: return "pairwise (first ceil(n/2) terms, then the rest)";
    case ReduceOrderKind::Blocked:
      return "blocked B=" + std::to_string(o.block) + " (blocks sequential " + from + "; partials sequential from the first)";
    case ReduceOrderKind::WarpTree:
      return "warp tree L=" + std::to_string(o.lanes) + " (lanes strided, sequential " + from + "; xor butterfly " +
             std::to_string(o.lanes / 2) + "..1)";
    case ReduceOrderKind::BlockTree:
      return "block tree of " + std::to_string(o.block) + " warps x " + std::to_string(o.lanes) + " lanes (threads strided, " +
             "sequential " + from + "; xor butterfly per warp; warps " +
             (o.warps == WarpCombine::Sequential ? "sequential from the first)" : "by one more butterfly)");
    case ReduceOrderKind::NumpyPairwise:
      return "NumPy sum: chunks of " + std::to_string(o.block) +
             " by pairwise_sum (8 accumulators up to 128 terms, halves at multiples of 8 above), added in turn" +
             (o.start == ChainStart::Zero ? " to +0" : "");
  }
  return "?";
}

double emulate_sum(const double* x, std::size_t n, const ReduceOrder& order, const ReduceArith& arith) {
  check_arith(arith, order);
  Terms T;
  T.t.assign(x, x + n);
  for (double v : T.t) check_input(arith, v, "x");
  Acc acc(arith);
  return run(T, order, acc);
}

double emulate_dot(const double* x, const double* y, std::size_t n, const ReduceOrder& order, const ReduceArith& arith) {
  check_arith(arith, order);
  Acc acc(arith);
  const Terms T = product_terms(x, y, n, arith, acc);
  return run(T, order, acc);
}

double emulate_nrm2(const double* x, std::size_t n, const ReduceOrder& order, const ReduceArith& arith) {
  check_arith(arith, order);
  Acc acc(arith);
  const Terms T = product_terms(x, x, n, arith, acc);
  return acc.sqrt(run(T, order, acc));
}

double emulate_reduce(ReduceKind kind, const double* x, const double* y, std::size_t n, const ReduceOrder& order,
                      const ReduceArith& arith) {
  switch (kind) {
    case ReduceKind::Sum: return emulate_sum(x, n, order, arith);
    case ReduceKind::Dot: return emulate_dot(x, y, n, order, arith);
    case ReduceKind::Nrm2: return emulate_nrm2(x, n, order, arith);
  }
  throw std::invalid_argument("emulate_reduce: unknown kind");
}

}  // namespace fpcert
