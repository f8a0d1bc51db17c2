// suites/emulate.cpp — the declared arithmetic, interpreted: one step function per rounding, one loop per
// order kind (kernels/order.hpp gives the semantics this file follows).
#include "suites/emulate.hpp"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "base/parallel.hpp"
#include "kernels/emu/split.hpp"
#include "oracle/exact_sum.hpp"
#include "oracle/refvalue.hpp"

namespace fpcert {

namespace {

/// Every finite value of f is a float (so fp32 arithmetic on its values is exact input handling).
bool fits_f32(const Format& f) {
  return f.precision() <= 24 && f.emax() <= 127 && f.min_subnormal() >= f32.min_subnormal();
}
/// Products of two values of these formats are exact in double (at most 53 significant bits, and far
/// from double's range: both formats fit fp32's range).
bool exact_double_products(const Format& a, const Format& b) {
  return a.precision() + b.precision() <= 53 && fits_f32(a) && fits_f32(b);
}

double to_value(const Format& f, std::uint64_t code) { return to_double(f, code); }

}  // namespace

double emulate_add(const Format& f, Rounding r, double x, double y) {
  const Rounder rr{r, default_saturation(f), NanPayload::Preserve};
  if (!std::isfinite(x) || !std::isfinite(y)) return to_value(f, round_double(f, x + y, rr).code);  // IEEE Inf/NaN rules
  if (x == -y) {
    // An exact zero sum (IEEE 754 §6.3): two zeros of one sign keep it; any other exact zero is +0,
    // or -0 when rounding toward -Inf.
    if (x == 0 && std::signbit(x) == std::signbit(y)) return x;
    return r == Rounding::Down ? -0.0 : 0.0;
  }
  return to_value(f, round_ref(f, ref_from_two_sum(x, y), rr).code);
}

double emulate_fma(const Format& f, Rounding r, double a, double b, double acc) {
  if (!std::isfinite(a) || !std::isfinite(b) || !std::isfinite(acc))
    return to_value(f, round_double(f, a * b + acc, Rounder{r, default_saturation(f), NanPayload::Preserve}).code);
  return emulate_add(f, r, a * b, acc);  // a * b exact (the caller's operands have at most 26 bits)
}

std::vector<double> round_values(const std::vector<double>& exact, const Format& f, Rounding r) {
  std::vector<double> v(exact.size());
  const Rounder rr{r, default_saturation(f), NanPayload::Preserve};
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = to_value(f, round_double(f, exact[i], rr).code);
  return v;
}

bool narrower_format(const Format& f, const Format& wide) {
  return f.precision() < wide.precision() || f.max_finite() < wide.max_finite() || f.min_subnormal() > wide.min_subnormal();
}

std::vector<double> operand_values(const std::vector<double>& inputs, const Format& input, const Format& operand, Rounding r) {
  if (!narrower_format(operand, input)) return inputs;
  return round_values(inputs, operand, r);
}

std::string emulation_unavailable(const KernelTraits& t) {
  const SummationOrder& o = t.sum_order;
  if (const std::string why = check_order(o); !why.empty()) return "the declared order is malformed: " + why;
  if (o.kind == OrderKind::Unknown) return "the kernel declares no summation order";
  if (t.acc_rounding == Rounding::Stochastic) return "stochastic accumulation: the random bits are the kernel's";
  const bool tc = o.kind == OrderKind::TensorCoreBlock || (o.kind == OrderKind::SplitProducts && o.term_order == OrderKind::TensorCoreBlock);
  if (tc && !o.block_model.measured)
    return "tensor-core block whose model is not measured (" + o.block_model.source + "): judged by the envelope";
  if (o.kind == OrderKind::SplitProducts) {
    if (!(*t.a_input == f32) || !(*t.b_input == f32) || !(*t.acc == f32) || !(*t.out == f32))
      return "split products are defined for fp32 inputs, accumulator and output";
    return {};
  }
  if (t.operand_u > 0) return "split operands (operand_u) without a split_products order";
  if (!exact_double_products(*t.a_operand, *t.b_operand))
    return fmt::format("operands {}/{} too wide for the exact step (products must be exact in fp64)", t.a_operand->tag, t.b_operand->tag);
  if (!fits_f32(*t.acc) && !(*t.acc == f64)) return fmt::format("accumulator {} outside fp32's range", t.acc->tag);
  if (!t.exact_products && !t.product_format) return "rounded products without a product format";
  if (t.promote_every > 0) {
    if (!t.promote_format) return "promotion without a format";
    if (o.kind != OrderKind::Sequential && !(o.kind == OrderKind::BlockedK && o.block == t.promote_every))
      return fmt::format("promotion every {} products with a {} order (promotion is blocked-with-a-wider-outer: declare "
                         "sequential, or blocked with block = {})",
                         t.promote_every, to_string(o.kind), t.promote_every);
  }
  return {};
}

namespace {

/// Rounding into one format: exact inputs, one rounding per call.
struct Arith {
  const Format* f;
  Rounding r;
  bool fast;  ///< fp32, round to nearest even: the host's float arithmetic is exactly this
  Arith(const Format& fmt_, Rounding r_) : f(&fmt_), r(r_), fast(fmt_ == f32 && r_ == Rounding::NearestEven) {}
  double add(double x, double y) const {
    return fast ? static_cast<double>(static_cast<float>(x) + static_cast<float>(y)) : emulate_add(*f, r, x, y);
  }
  double fma(double a, double b, double acc) const {
    return fast ? static_cast<double>(std::fma(static_cast<float>(a), static_cast<float>(b), static_cast<float>(acc)))
                : emulate_fma(*f, r, a, b, acc);
  }
  double round(double x) const { return to_value(*f, round_double(*f, x, Rounder{r, default_saturation(*f), NanPayload::Preserve}).code); }
};

/// What one element needs: its row of A and column of B (operand values, contiguous along K).
struct Line {
  const double* a;
  const double* b;
};

class Emulator {
 public:
  explicit Emulator(const KernelTraits& t)
      : t_(t), o_(t.sum_order), acc_(*t.acc, t.acc_rounding),
        prod_(t.exact_products ? *t.acc : *t.product_format, t.acc_rounding),
        outer_(t.promote_every > 0 ? Arith(*t.promote_format, Rounding::NearestEven) : acc_) {}

  /// The value of one element before the output rounding.
  double element(const Line& l, std::int64_t k) const {
    switch (o_.kind) {
      case OrderKind::Sequential:
        if (t_.promote_every > 0) return blocked(l, k, t_.promote_every, Combine::Sequential, Combine::Sequential);
        return sequential(l, 0, k);
      case OrderKind::BlockedK: return blocked(l, k, o_.block, o_.inner, o_.outer);
      case OrderKind::SplitK: {
        const std::int64_t chunk = (k + o_.splits - 1) / o_.splits;
        std::vector<double> parts(static_cast<std::size_t>(o_.splits));
        for (int s = 0; s < o_.splits; ++s)
          parts[static_cast<std::size_t>(s)] = sequential(l, std::min(k, s * chunk), std::min(k, (s + 1) * chunk));
        return combine(parts, o_.outer, acc_);
      }
      case OrderKind::Pairwise: return pairwise_products(l, 0, k);
      case OrderKind::TensorCoreBlock: return tensor_core(l, k);
      case OrderKind::SplitProducts:
      case OrderKind::Unknown: break;
    }
    throw std::logic_error("emulator: unhandled order");
  }

 private:
  /// acc = step(acc, a_q, b_q) for q = lo..hi-1, from +0.
  double sequential(const Line& l, std::int64_t lo, std::int64_t hi) const {
    double acc = 0.0;
    if (o_.step == StepKind::Fma) {
      if (acc_.fast) {  // the hot loop: fmaf on floats
        float s = 0.0f;
        for (std::int64_t q = lo; q < hi; ++q) s = std::fma(static_cast<float>(l.a[q]), static_cast<float>(l.b[q]), s);
        return s;
      }
      for (std::int64_t q = lo; q < hi; ++q) acc = acc_.fma(l.a[q], l.b[q], acc);
    } else {
      for (std::int64_t q = lo; q < hi; ++q) acc = acc_.add(acc, leaf(l, q));
    }
    return acc;
  }
  /// A product as a leaf of a tree or the addend of mul_add: rounded into the product format (or into
  /// the accumulator when products are declared exact: exact there whenever the declaration is consistent).
  double leaf(const Line& l, std::int64_t q) const { return prod_.round(l.a[q] * l.b[q]); }

  double pairwise_products(const Line& l, std::int64_t lo, std::int64_t hi) const {
    if (hi <= lo) return 0.0;
    if (hi - lo == 1) return acc_.round(leaf(l, lo));
    const std::int64_t mid = lo + (hi - lo + 1) / 2;
    return acc_.add(pairwise_products(l, lo, mid), pairwise_products(l, mid, hi));
  }

  double combine(const std::vector<double>& parts, Combine how, const Arith& ar) const {
    if (how == Combine::Sequential) {
      double total = 0.0;
      for (double p : parts) total = ar.add(total, p);
      return total;
    }
    return pairwise_values(parts, 0, static_cast<std::int64_t>(parts.size()), ar);
  }
  double pairwise_values(const std::vector<double>& v, std::int64_t lo, std::int64_t hi, const Arith& ar) const {
    if (hi <= lo) return 0.0;
    if (hi - lo == 1) return v[static_cast<std::size_t>(lo)];
    const std::int64_t mid = lo + (hi - lo + 1) / 2;
    return ar.add(pairwise_values(v, lo, mid, ar), pairwise_values(v, mid, hi, ar));
  }

  double blocked(const Line& l, std::int64_t k, std::int64_t block, Combine inner, Combine outer) const {
    std::vector<double> parts;
    for (std::int64_t q = 0; q < k; q += block) {
      const std::int64_t e = std::min(k, q + block);
      parts.push_back(inner == Combine::Sequential ? sequential(l, q, e) : pairwise_products(l, q, e));
    }
    // Promotion: the partials move into the wider outer format exactly (it holds every inner value).
    return combine(parts, outer, outer_);
  }

  /// Steps of the instruction's k, each chaining blocks of the fused length: D = round(C + the block's
  /// exact products), with promotion to the outer format every promote_every products.
  double tensor_core(const Line& l, std::int64_t k) const {
    const int fused = o_.block_model.fused_length > 0 ? o_.block_model.fused_length : o_.block;
    const Rounder rr{o_.block_model.block_rounding, default_saturation(*t_.acc), NanPayload::Preserve};
    ExactSum sum;
    double frag = 0.0, outer = 0.0;
    for (std::int64_t q = 0; q < k; q += fused) {
      sum.clear();
      sum.add(frag);
      for (std::int64_t x = q; x < std::min(k, q + fused); ++x) sum.add_product(l.a[x], l.b[x]);
      std::uint8_t st = 0;
      frag = to_value(*t_.acc, round_ref(*t_.acc, sum.finalize(st), rr).code);
      if (t_.promote_every > 0 && (q + fused) % t_.promote_every == 0) {
        outer = outer_.add(outer, frag);
        frag = 0.0;
      }
    }
    return t_.promote_every > 0 ? outer_.add(outer, frag) : frag;
  }

  const KernelTraits& t_;
  const SummationOrder& o_;
  Arith acc_, prod_, outer_;
};

/// Columns of B (k x n, row-major) as rows of a n x k matrix, so every element reads both operands along K.
std::vector<double> transpose(const std::vector<double>& b, std::int64_t k, std::int64_t n) {
  std::vector<double> t(b.size());
  for (std::int64_t q = 0; q < k; ++q)
    for (std::int64_t j = 0; j < n; ++j) t[static_cast<std::size_t>(j * k + q)] = b[static_cast<std::size_t>(q * n + j)];
  return t;
}

/// Split products: slices per operand, each kept slice product summed over K by fp32 FMA from +0
/// (k ascending), the terms merged in fp32 in the scheme's order starting from the first term.
std::vector<double> split_products(const SplitScheme& sc, std::int64_t m, std::int64_t n, std::int64_t k, const std::vector<double>& a,
                                   const std::vector<double>& bt) {
  auto slices = [&](const std::vector<double>& v) {
    std::vector<std::vector<float>> s(static_cast<std::size_t>(sc.slices), std::vector<float>(v.size()));
    float sl[3];
    for (std::size_t x = 0; x < v.size(); ++x) {
      split_value(sc, static_cast<float>(v[x]), sl);
      for (int q = 0; q < sc.slices; ++q) s[static_cast<std::size_t>(q)][x] = sl[q];
    }
    return s;
  };
  const auto as = slices(a), bs = slices(bt);
  std::vector<double> c(static_cast<std::size_t>(m * n));
  parallel_for(static_cast<std::uint64_t>(m * n), 64, [&](std::uint64_t x0, std::uint64_t x1, unsigned) {
    for (std::uint64_t x = x0; x < x1; ++x) {
      const std::int64_t i = static_cast<std::int64_t>(x) / n, j = static_cast<std::int64_t>(x) % n;
      float merged = 0.0f;
      bool first = true;
      for (const auto& [ia, ib] : sc.terms) {
        const float* pa = as[static_cast<std::size_t>(ia)].data() + i * k;
        const float* pb = bs[static_cast<std::size_t>(ib)].data() + j * k;
        float s = 0.0f;
        for (std::int64_t q = 0; q < k; ++q) s = std::fma(pa[q], pb[q], s);
        merged = first ? s : merged + s;
        first = false;
      }
      c[x] = merged;
    }
  });
  return c;
}

}  // namespace

std::vector<std::uint64_t> emulate_gemm(const KernelTraits& t, std::int64_t m, std::int64_t n, std::int64_t k,
                                        const std::vector<double>& a, const std::vector<double>& b) {
  if (const std::string why = emulation_unavailable(t); !why.empty()) throw std::invalid_argument("emulate_gemm: " + why);
  const std::vector<double> bt = transpose(b, k, n);
  std::vector<double> value;
  if (t.sum_order.kind == OrderKind::SplitProducts) {
    value = split_products(*find_split_scheme(t.sum_order.split_scheme), m, n, k, a, bt);
  } else {
    const std::vector<double> ao = operand_values(a, *t.a_input, *t.a_operand, t.input_rounding);
    const std::vector<double> bo = operand_values(bt, *t.b_input, *t.b_operand, t.input_rounding);
    const Emulator e(t);
    value.resize(static_cast<std::size_t>(m * n));
    parallel_for(static_cast<std::uint64_t>(m * n), 16, [&](std::uint64_t x0, std::uint64_t x1, unsigned) {
      for (std::uint64_t x = x0; x < x1; ++x) {
        const std::int64_t i = static_cast<std::int64_t>(x) / n, j = static_cast<std::int64_t>(x) % n;
        value[x] = e.element(Line{ao.data() + i * k, bo.data() + j * k}, k);
      }
    });
  }
  // The output rounding (round to nearest even into the output format; exact when it is the final format).
  const Format& of = *t.out;
  const Rounder rn = Rounder::nearest(of);
  std::vector<std::uint64_t> codes(value.size());
  for (std::size_t x = 0; x < value.size(); ++x) codes[x] = round_double(of, value[x], rn).code;
  return codes;
}

}  // namespace fpcert
