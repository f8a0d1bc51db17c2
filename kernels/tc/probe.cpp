// kernels/tc/probe.cpp — the tensor-core probe (kernels/tc/probe.hpp; docs/tensor_cores.md).
#include "kernels/tc/probe.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <numeric>

#include "generators/rng.hpp"
#include "kernels/tc/recording.hpp"
#include "base/error.hpp"
#include "base/parallel.hpp"

namespace fpcert::tc {
namespace {

// ---------------------------------------------------------------------------------------------------
// Text helpers
// ---------------------------------------------------------------------------------------------------

std::string hex(std::uint32_t v) { return code_hex(v); }
std::string num(double v) {
  if (v == 0) return std::signbit(v) ? "-0" : "0";
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  int e;
  const double m = std::frexp(std::fabs(v), &e);
  char b[64];
  if (m == 0.5) {
    std::snprintf(b, sizeof b, "%s2^%d", v < 0 ? "-" : "", e - 1);
    return b;
  }
  std::snprintf(b, sizeof b, "%.9g", v);
  return b;
}
std::string pow2(int e) { return "2^" + std::to_string(e); }

// ---------------------------------------------------------------------------------------------------
// Dot queries through an instruction
// ---------------------------------------------------------------------------------------------------

class InstructionDots final : public DotSource {
 public:
  explicit InstructionDots(MmaInstruction& insn) : insn_(insn) {}
  std::vector<std::uint32_t> answer(const std::vector<DotQuery>& qs) override {
    const InstructionSpec& s = insn_.spec();
    const int per = std::min(s.m, s.n);
    const int count = static_cast<int>((qs.size() + per - 1) / per);
    MmaBatch b;
    b.count = count;
    b.a.assign(static_cast<std::size_t>(count) * s.m * s.k, 0);
    b.b.assign(static_cast<std::size_t>(count) * s.n * s.k, 0);
    b.c.assign(static_cast<std::size_t>(count) * s.m * s.n, 0);
    for (std::size_t q = 0; q < qs.size(); ++q) {
      const std::size_t t = q / per, i = q % per;
      if (qs[q].a.size() != static_cast<std::size_t>(s.k) || qs[q].b.size() != static_cast<std::size_t>(s.k))
        throw InputError("dot query of the wrong length for " + std::string(s.id));
      std::copy(qs[q].a.begin(), qs[q].a.end(), b.a.begin() + static_cast<std::ptrdiff_t>((t * s.m + i) * s.k));
      std::copy(qs[q].b.begin(), qs[q].b.end(), b.b.begin() + static_cast<std::ptrdiff_t>((t * s.n + i) * s.k));
      b.c[(t * s.m + i) * s.n + i] = qs[q].c;
    }
    const std::vector<std::uint32_t> d = insn_.run(b);
    std::vector<std::uint32_t> out(qs.size());
    for (std::size_t q = 0; q < qs.size(); ++q) {
      const std::size_t t = q / per, i = q % per;
      out[q] = d[(t * s.m + i) * s.n + i];
    }
    return out;
  }

 private:
  MmaInstruction& insn_;
};

// ---------------------------------------------------------------------------------------------------
// The model as an instruction
// ---------------------------------------------------------------------------------------------------

class ModelInstruction final : public MmaInstruction {
 public:
  ModelInstruction(const InstructionSpec& s, const FusedDotParams& p, bool integer, bool wraps, std::string origin)
      : spec_(s), p_(p), integer_(integer), wraps_(wraps), origin_(std::move(origin)) {}
  const InstructionSpec& spec() const override { return spec_; }
  std::string origin() const override { return origin_; }
  std::vector<std::uint32_t> run(const MmaBatch& b) override {
    check_batch(spec_, b);
    const int m = spec_.m, n = spec_.n, k = spec_.k;
    std::vector<std::uint32_t> d(static_cast<std::size_t>(b.count) * m * n);
    parallel_for(static_cast<std::uint64_t>(b.count), 64, [&](std::uint64_t lo, std::uint64_t hi, unsigned) {
      for (std::uint64_t t = lo; t < hi; ++t)
        for (int i = 0; i < m; ++i)
          for (int j = 0; j < n; ++j) {
            const std::uint32_t* a = &b.a[(t * m + i) * k];
            const std::uint32_t* bb = &b.b[(t * n + j) * k];
            const std::uint32_t c = b.c[(t * m + i) * n + j];
            d[(t * m + i) * n + j] = integer_ ? int_dot(wraps_, a, bb, k, c)
                                              : static_cast<std::uint32_t>(fused_dot(p_, a, bb, k, c));
          }
    });
    return d;
  }

 private:
  const InstructionSpec& spec_;
  FusedDotParams p_;
  bool integer_, wraps_;
  std::string origin_;
};

// ---------------------------------------------------------------------------------------------------
// Exact inputs
// ---------------------------------------------------------------------------------------------------

/// The container code of exactly x in f, or nullopt (x not representable).
std::optional<std::uint32_t> exact_code(const Format& f, double x, bool allow_subnormal = true) {
  if (std::isnan(x)) return std::nullopt;
  if (std::isinf(x)) {
    if (!f.has_inf()) return std::nullopt;
    return static_cast<std::uint32_t>(to_container(f, (x < 0 ? f.sign_mask() : 0) | f.inf_code()));
  }
  const Rounded r = round_double(f, x, Rounder{Rounding::NearestEven, Saturation::Inf, NanPayload::Preserve});
  if (r.flags & kOverflow) return std::nullopt;
  if (to_double(f, r.code) != x || (std::signbit(to_double(f, r.code)) != std::signbit(x))) return std::nullopt;
  if (!allow_subnormal && classify(f, r.code) == FpClass::Subnormal) return std::nullopt;
  return static_cast<std::uint32_t>(to_container(f, r.code));
}

/// Builds probe inputs for one instruction.
class Values {
 public:
  explicit Values(const InstructionSpec& s) : s_(s) {}
  bool subnormals = true;  ///< may subnormal inputs be used (set once measured)

  /// a, b with a * b == v exactly, b = sb * 2^y (a power of two times sb); exponents balanced.
  std::optional<std::pair<std::uint32_t, std::uint32_t>> product(double v, double sb = 1.0) const {
    if (v == 0) return std::make_pair(std::signbit(v) ? static_cast<std::uint32_t>(to_container(*s_.a, s_.a->sign_mask())) : 0u, 0u);
    const int e = std::ilogb(v);
    const Format& fb = *s_.b;
    std::vector<int> ys;
    for (int y = fb.emin() - fb.frac_bits - 1; y <= fb.emax() + 1; ++y) ys.push_back(y);
    std::stable_sort(ys.begin(), ys.end(), [&](int x, int y) { return std::abs(2 * x - e) < std::abs(2 * y - e); });
    for (int y : ys) {
      const double b = std::ldexp(sb, y);
      const auto cb = exact_code(fb, b, subnormals);
      if (!cb) continue;
      const double a = v / b;
      if (a * b != v) continue;
      const auto ca = exact_code(*s_.a, a, subnormals);
      if (!ca) continue;
      return std::make_pair(*ca, *cb);
    }
    return std::nullopt;
  }
  std::optional<std::uint32_t> acc(double v) const { return exact_code(*s_.acc, v, true); }

 private:
  const InstructionSpec& s_;
};

// ---------------------------------------------------------------------------------------------------
// The fit: queries asked per stage, candidates selected by the model
// ---------------------------------------------------------------------------------------------------

struct Asked {
  DotQuery q;
  std::uint32_t d = 0;
  std::string note;
  int stage = 0;
};

struct Candidate {
  std::string label;
  FusedDotParams p;
};

class Prober {
 public:
  Prober(const InstructionSpec& s, DotSource& src, BehaviourCard& card) : s_(s), src_(src), card_(card), v_(s) {}

  void run();

 private:
  // ---- asking ----
  DotQuery blank() const {
    DotQuery q;
    q.a.assign(static_cast<std::size_t>(s_.k), 0);
    q.b.assign(static_cast<std::size_t>(s_.k), 0);
    return q;
  }
  bool put(DotQuery& q, int i, double v, double sb = 1.0) const {
    if (i < 0 || i >= s_.k) return false;
    const auto ab = v_.product(v, sb);
    if (!ab) return false;
    q.a[static_cast<std::size_t>(i)] = ab->first;
    q.b[static_cast<std::size_t>(i)] = ab->second;
    return true;
  }
  bool put_c(DotQuery& q, double v) const {
    const auto c = v_.acc(v);
    if (!c) return false;
    q.c = *c;
    return true;
  }
  /// Queue a query of the current stage.
  void add(DotQuery q, std::string note) { pending_.push_back({std::move(q), 0, std::move(note), stage_}); }
  /// Ask every queued query; returns the index of the first.
  std::size_t flush() {
    const std::size_t first = asked_.size();
    if (pending_.empty()) return first;
    std::vector<DotQuery> qs;
    for (const auto& p : pending_) qs.push_back(p.q);
    const std::vector<std::uint32_t> d = src_.answer(qs);
    if (d.size() != qs.size()) throw DeviceError("the instruction answered " + std::to_string(d.size()) + " of " + std::to_string(qs.size()) + " queries");
    for (std::size_t i = 0; i < pending_.size(); ++i) {
      pending_[i].d = d[i];
      asked_.push_back(std::move(pending_[i]));
    }
    pending_.clear();
    return first;
  }
  std::uint32_t model(const FusedDotParams& p, const DotQuery& q) const {
    return static_cast<std::uint32_t>(fused_dot(p, q.a.data(), q.b.data(), s_.k, q.c));
  }
  bool explains(const FusedDotParams& p, std::size_t first, std::size_t last) const {
    for (std::size_t i = first; i < last; ++i)
      if (model(p, asked_[i].q) != asked_[i].d) return false;
    return true;
  }
  /// Keep the candidates that explain queries [first, last); the first survivor becomes P. Returns the
  /// survivors' labels (empty: none explains them; P unchanged and the property records it).
  std::vector<std::string> select(const std::vector<Candidate>& cands, std::size_t first, std::size_t last, CardProperty& prop) {
    std::vector<std::string> alive;
    std::vector<char> ok(cands.size(), 0);
    parallel_for(cands.size(), 16, [&](std::uint64_t lo, std::uint64_t hi, unsigned) {
      for (std::uint64_t i = lo; i < hi; ++i) ok[i] = explains(cands[i].p, first, last);
    });
    int chosen = -1;
    for (std::size_t i = 0; i < cands.size(); ++i)
      if (ok[i]) {
        if (chosen < 0) chosen = static_cast<int>(i);
        alive.push_back(cands[i].label);
      }
    if (chosen >= 0) {
      P_ = cands[static_cast<std::size_t>(chosen)].p;
      prop.conclusion = cands[static_cast<std::size_t>(chosen)].label;
      for (std::size_t i = 1; i < alive.size() && prop.alternatives.size() < 12; ++i) prop.alternatives.push_back(alive[i]);
      if (alive.size() > 13) prop.alternatives.push_back("... " + std::to_string(alive.size() - 13) + " more");
    } else {
      prop.conclusion = "no candidate explains every answer; kept: " + (cands.empty() ? std::string("-") : cands.front().label);
      if (!cands.empty()) P_ = cands.front().p;
    }
    return alive;
  }
  CardQuery example(std::size_t i) const {
    CardQuery q;
    const Asked& a = asked_[i];
    for (int x = 0; x < s_.k; ++x)
      if (a.q.a[static_cast<std::size_t>(x)] || a.q.b[static_cast<std::size_t>(x)])
        q.products.push_back({x, a.q.a[static_cast<std::size_t>(x)], a.q.b[static_cast<std::size_t>(x)]});
    q.c = a.q.c;
    q.observed = a.d;
    q.note = a.note;
    return q;
  }
  double acc_value(std::uint32_t code) const { return to_double(*s_.acc, code); }
  /// "note -> D; note -> D; ..." for the queries asked since `first`.
  std::string answers(std::size_t first, std::size_t last = SIZE_MAX) const {
    std::string o;
    for (std::size_t i = first; i < std::min(last, asked_.size()); ++i) {
      o += (o.empty() ? "" : "; ") + asked_[i].note + " -> " + num(acc_value(asked_[i].d));
      if (classify(*s_.acc, asked_[i].d) == FpClass::NaN) o += " (" + hex(asked_[i].d) + ")";
    }
    return o;
  }
  CardProperty& begin(std::string name, std::string method) {
    ++stage_;
    card_.properties.push_back(CardProperty{std::move(name), std::move(method), "", "", 0, 0, {}, {}});
    stage_first_.push_back(asked_.size());
    return card_.properties.back();
  }

  // ---- stages ----
  bool sanity();
  void specials();
  void operand_reading();
  void subnormal_inputs();
  void window();
  void block_rounding();
  void fused_length();
  void c_join();
  void products();
  void subnormal_results();
  void overflow();
  void align_floor();
  void monotonicity();
  void carries();
  void finish();
  void integer_stages();

  int anchor() const;          ///< E0: the exponent of the probes' large terms
  int ladder_depth(int e0) const;  ///< how far below E0 exact product terms 2^(E0 - j) exist

  const InstructionSpec& s_;
  DotSource& src_;
  BehaviourCard& card_;
  Values v_;
  FusedDotParams P_;
  std::vector<Asked> asked_, pending_;
  std::vector<std::size_t> stage_first_;
  int stage_ = -1;
  int E0_ = 0;
};

int Prober::anchor() const {
  // As high as the inputs allow while keeping ~44 binades of exact product terms below it, ~8 binades of
  // carry headroom under the accumulator's largest exponent, and the products normal.
  const int pmax = s_.a->emax() + s_.b->emax() - 1;
  const int pmin = s_.a->emin() + s_.b->emin();
  int e0 = std::max(0, pmin + 44);
  e0 = std::min({e0, pmax, s_.acc->emax() - 8});
  return e0;
}

int Prober::ladder_depth(int e0) const {
  int j = 0;
  while (j < 56 && v_.product(std::ldexp(1.0, e0 - j - 1))) ++j;
  return j;
}

// ---- stage: the harness itself (exact small-integer sums) ----
bool Prober::sanity() {
  CardProperty& prop = begin("operand layout",
                             "every position i alone (a_i = 1, b_i = 2), a mixed sum of small integers, and C alone: "
                             "results exact in any arithmetic, so a mismatch means the harness, not the tensor core");
  std::vector<double> want;
  for (int i = 0; i < s_.k; ++i) {
    DotQuery q = blank();
    put(q, i, 2.0, 2.0);
    add(q, "position " + std::to_string(i) + ": 1 * 2 = 2");
    want.push_back(2.0);
  }
  DotQuery q = blank();
  double sum = 0;
  for (int i = 0; i < s_.k; ++i) {
    const double a = 1 + i % 3, b = 1 + (i / 3) % 2;
    put(q, i, a * b, b);
    sum += a * b;
  }
  put_c(q, 3.0);
  add(q, "sum of small integer products + 3 = " + num(sum + 3));
  want.push_back(sum + 3);
  DotQuery c = blank();
  put_c(c, 5.0);
  add(c, "C = 5 alone");
  want.push_back(5.0);
  const std::size_t first = flush();
  int bad = 0;
  for (std::size_t i = first; i < asked_.size(); ++i) {
    if (acc_value(asked_[i].d) != want[i - first]) {
      if (bad++ < 3) prop.examples.push_back(example(i));
    }
  }
  prop.queries = static_cast<int>(asked_.size() - first);
  prop.observed = bad ? std::to_string(bad) + " of " + std::to_string(prop.queries) + " exact sums wrong"
                      : "all " + std::to_string(prop.queries) + " exact sums right";
  prop.conclusion = bad ? "the answers are not those of this instruction's operand layout: nothing else is measured" : "operands reach the instruction as laid out";
  prop.disagree = bad;
  return bad == 0;
}

// ---- stage: Inf, NaN, signed zeros ----
void Prober::specials() {
  CardProperty& prop = begin("Inf, NaN and zero signs",
                             "NaN and Inf inputs and C, Inf * 0, Inf - Inf, -0 terms, exact cancellation");
  const Format& fa = *s_.a;
  const Format& acc = *s_.acc;
  const auto nan_a = static_cast<std::uint32_t>(to_container(fa, fa.canonical_nan_code()));
  const std::uint32_t one_b = *exact_code(*s_.b, 1.0);
  const std::uint32_t one_a = *exact_code(fa, 1.0);
  auto q = blank();
  q.a[0] = nan_a;
  q.b[0] = one_b;
  add(q, "a_0 = NaN");
  if (fa.has_inf()) {
    q = blank();
    q.a[0] = *exact_code(fa, INFINITY);
    q.b[0] = one_b;
    add(q, "a_0 = +Inf, b_0 = 1");
    q.a[0] = *exact_code(fa, -INFINITY);
    add(q, "a_0 = -Inf, b_0 = 1");
    q = blank();
    q.a[0] = *exact_code(fa, INFINITY);
    add(q, "Inf * 0");
    q = blank();
    q.a[0] = *exact_code(fa, INFINITY);
    q.b[0] = one_b;
    q.a[1] = *exact_code(fa, -INFINITY);
    q.b[1] = one_b;
    add(q, "Inf - Inf");
    q = blank();
    q.a[0] = *exact_code(fa, INFINITY);
    q.b[0] = one_b;
    q.c = static_cast<std::uint32_t>(acc.sign_mask() | acc.inf_code());
    add(q, "C = -Inf, product +Inf");
  }
  q = blank();
  q.a[0] = one_a;
  q.b[0] = one_b;
  q.c = static_cast<std::uint32_t>(acc.inf_code());
  add(q, "C = +Inf, product 1");
  q = blank();
  q.c = static_cast<std::uint32_t>(acc.canonical_nan_code());
  add(q, "C = NaN");
  q = blank();
  q.c = static_cast<std::uint32_t>(acc.sign_mask());
  add(q, "C = -0, products +0");
  q = blank();
  q.c = static_cast<std::uint32_t>(acc.sign_mask());
  q.a[0] = static_cast<std::uint32_t>(to_container(fa, fa.sign_mask()));
  q.b[0] = one_b;
  add(q, "C = -0, product -0 * 1");
  q = blank();
  q.c = static_cast<std::uint32_t>(acc.sign_mask());
  for (int i = 0; i < s_.k; ++i) q.a[static_cast<std::size_t>(i)] = static_cast<std::uint32_t>(to_container(fa, fa.sign_mask())), q.b[static_cast<std::size_t>(i)] = one_b;
  add(q, "C = -0, every product -0 * 1");
  q = blank();
  put(q, 0, 1.0);
  put(q, 1, -1.0);
  add(q, "1 - 1 (exact cancellation)");
  const std::size_t first = flush();
  // The NaN D carries: the first NaN answer's code.
  P_.nan_code = acc.canonical_nan_code();
  for (std::size_t i = first; i < asked_.size(); ++i)
    if (classify(acc, asked_[i].d) == FpClass::NaN) {
      P_.nan_code = asked_[i].d;
      break;
    }
  prop.observed = answers(first);
  std::vector<Candidate> cands;
  FusedDotParams p = P_;
  p.ieee_negative_zero = false;
  cands.push_back({"NaN results " + hex(static_cast<std::uint32_t>(P_.nan_code)) + "; exact zero sums are +0", p});
  p.ieee_negative_zero = true;
  cands.push_back({"NaN results " + hex(static_cast<std::uint32_t>(P_.nan_code)) + "; -0 when every term is -0", p});
  select(cands, first, asked_.size(), prop);
  for (std::size_t i = first; i < asked_.size() && prop.examples.size() < 4; ++i)
    if (asked_[i].note.find("Inf - Inf") != std::string::npos || asked_[i].note.find("-0") != std::string::npos)
      prop.examples.push_back(example(i));
}

// ---- stage: how fp32 containers are read as tf32 ----
void Prober::operand_reading() {
  if (!(*s_.a == tf32)) return;
  CardProperty& prop = begin("tf32 operand reading",
                             "single products whose fp32 containers carry bits below tf32's 10 fraction bits: "
                             "1 + 2^-11 + 2^-20 (above half), 1 + 2^-11 (a tie, even below), 1 + 3 * 2^-11 (a tie, odd below)");
  const double xs[] = {1 + 0x1p-11 + 0x1p-20, 1 + 0x1p-11, 1 + 3 * 0x1p-11, -(1 + 0x1p-11 + 0x1p-20), -(1 + 3 * 0x1p-11)};
  const std::uint32_t one = *exact_code(tf32, 1.0);
  for (int side = 0; side < 2; ++side)
    for (double x : xs) {
      DotQuery q = blank();
      const std::uint32_t bits = std::bit_cast<std::uint32_t>(static_cast<float>(x));
      (side == 0 ? q.a[0] : q.b[0]) = bits;
      (side == 0 ? q.b[0] : q.a[0]) = one;
      add(q, std::string(side == 0 ? "a" : "b") + "_0 container " + num(x));
    }
  const std::size_t first = flush();
  prop.observed = answers(first, first + 5);
  std::vector<Candidate> cands;
  for (Rounding r : {Rounding::TowardZero, Rounding::NearestEven, Rounding::NearestAway}) {
    FusedDotParams p = P_;
    p.operand_read = r;
    const char* what = r == Rounding::TowardZero ? "the low 13 bits are ignored (truncation)"
                       : r == Rounding::NearestEven ? "rounded to nearest even"
                                                    : "rounded to nearest, ties away";
    cands.push_back({what, p});
  }
  select(cands, first, asked_.size(), prop);
  prop.examples.push_back(example(first));
  prop.examples.push_back(example(first + 1));
}

// ---- stage: subnormal inputs ----
void Prober::subnormal_inputs() {
  CardProperty& prop = begin("subnormal inputs",
                             "the smallest subnormal (and 3x it) of each operand times a power of two that brings the product near 1");
  const Format& fa = *s_.a;
  const Format& fb = *s_.b;
  const auto pair = [&](const Format& fs, const Format& fo, double sub, bool sub_is_a) {
    const int y = std::min(fo.emax(), -std::ilogb(sub));
    const double other = std::ldexp(1.0, y);
    DotQuery q = blank();
    const auto cs = exact_code(fs, sub);
    const auto co = exact_code(fo, other);
    if (!cs || !co) return;
    (sub_is_a ? q.a[0] : q.b[0]) = *cs;
    (sub_is_a ? q.b[0] : q.a[0]) = *co;
    add(q, std::string(sub_is_a ? "a" : "b") + " = " + num(sub) + " times " + num(other));
  };
  pair(fa, fb, fa.min_subnormal(), true);
  if (fa.frac_bits >= 2) pair(fa, fb, 3 * fa.min_subnormal(), true);
  pair(fb, fa, fb.min_subnormal(), false);
  const std::size_t first = flush();
  prop.observed = answers(first);
  FusedDotParams p = P_;
  p.input_subnormals = true;
  FusedDotParams q = P_;
  q.input_subnormals = false;
  select({{"kept (exact)", p}, {"read as zero", q}}, first, asked_.size(), prop);
  v_.subnormals = P_.input_subnormals;
  if (first < asked_.size()) prop.examples.push_back(example(first));
}

// ---- stage: the alignment window ----
void Prober::window() {
  E0_ = anchor();
  const int e0 = E0_;
  CardProperty& prop = begin("alignment window",
                             "X - X + t with X = " + pow2(e0) + " (a_0 b_0 = X, a_1 b_1 = -X): t = C = 2^(E-j), t = a_2 b_2 = 2^(E-j), "
                             "and with X = 2.25 * " + pow2(e0) + " = (1.5 * 2^x)(1.5 * 2^y); then terms a fraction of the last kept bit, "
                             "both signs, to see how the discarded bits go (E = " + std::to_string(e0) + ")");
  const int jp = ladder_depth(e0);
  int jc = 0;
  while (jc < 56 && v_.acc(std::ldexp(1.0, e0 - jc - 1))) ++jc;
  // W1: C ladder
  for (int j = 1; j <= jc; ++j) {
    DotQuery q = blank();
    put(q, 0, std::ldexp(1.0, e0));
    put(q, 1, -std::ldexp(1.0, e0));
    put_c(q, std::ldexp(1.0, e0 - j));
    add(q, "X - X + C, C = 2^(E-" + std::to_string(j) + ")");
  }
  const std::size_t w1 = flush();
  // W2: product ladder
  for (int j = 1; j <= jp; ++j) {
    DotQuery q = blank();
    put(q, 0, std::ldexp(1.0, e0));
    put(q, 1, -std::ldexp(1.0, e0));
    put(q, 2, std::ldexp(1.0, e0 - j));
    add(q, "X - X + 2^(E-" + std::to_string(j) + ")");
  }
  const std::size_t w2 = flush();
  // W3: unnormalised product as the largest term
  {
    DotQuery q = blank();
    if (put(q, 0, 2.25 * std::ldexp(1.0, e0), 1.5) && put(q, 1, -2.25 * std::ldexp(1.0, e0), 1.5))
      for (int j = 1; j <= jp; ++j) {
        DotQuery r = q;
        put(r, 2, std::ldexp(1.0, e0 - j));
        add(r, "2.25X - 2.25X + 2^(E-" + std::to_string(j) + ")");
      }
  }
  const std::size_t w3 = flush();
  const auto cut = [&](std::size_t from, std::size_t to) {
    int last = 0;
    for (std::size_t i = from; i < to; ++i) {
      const int j = static_cast<int>(i - from) + 1;
      if (acc_value(asked_[i].d) == std::ldexp(1.0, e0 - j)) last = j;
    }
    return last;
  };
  const int fc = cut(w1, w2), fp = cut(w2, w3), fu = cut(w3, asked_.size());
  const int F = fp;
  // W4: terms a fraction of the last kept bit 2^(E-F), both signs
  const double lsb = std::ldexp(1.0, e0 - F);
  const double fracs[] = {-0.5, -0.75, 0.75, -1.5, 1.5, -0.25};
  for (double f : fracs) {
    DotQuery q = blank();
    put(q, 0, std::ldexp(1.0, e0));
    put(q, 1, -std::ldexp(1.0, e0));
    if (put(q, 2, f * lsb)) add(q, "X - X + (" + num(f) + ") * 2^(E-" + std::to_string(F) + ")");
  }
  const std::size_t w4 = flush();
  char obs[512];
  std::snprintf(obs, sizeof obs,
                "C = 2^(E-j) survives X - X up to j = %d (of %d tried); a product 2^(E-j) up to j = %d (of %d); beside 2.25X up to j = %d",
                fc, jc, fp, jp, fu);
  std::string o = obs;
  for (std::size_t i = w4; i < asked_.size(); ++i) o += "; " + asked_[i].note + " -> " + num(acc_value(asked_[i].d));
  prop.observed = o;
  // Candidates: window width x reference x alignment rounding (C in the block; where C joins is measured later).
  std::vector<Candidate> cands;
  const int fmin = std::max(0, std::min({fp, fc, fu}) - 2), fmax = std::min(56, std::max({fp, fc, fu}) + 3);
  for (int f = fmin; f <= fmax; ++f)
    for (AlignReference ref : {AlignReference::ProductExponents, AlignReference::LeadingBit})
      for (AlignRounding ar : {AlignRounding::TowardZero, AlignRounding::Down, AlignRounding::NearestEven}) {
        FusedDotParams p = P_;
        p.align_bits = f;
        p.reference = ref;
        p.align_rounding = ar;
        cands.push_back({std::to_string(f) + " fraction bits below the " +
                             (ref == AlignReference::ProductExponents ? "largest e_a + e_b" : "largest leading-bit exponent") +
                             ", discarded bits " + std::string(to_string(ar)),
                         p});
      }
  select(cands, w1, asked_.size(), prop);
  if (fp == jp) prop.alternatives.insert(prop.alternatives.begin(), "the ladder found no cut: at least " + std::to_string(jp) + " bits");
  const auto ex = [&](std::size_t from, int j) {
    if (j >= 1 && from + static_cast<std::size_t>(j) - 1 < asked_.size()) prop.examples.push_back(example(from + static_cast<std::size_t>(j) - 1));
  };
  ex(w2, fp);
  ex(w2, fp + 1);
  ex(w3, fu);
  ex(w3, fu + 1);
  for (std::size_t i = w4; i < asked_.size() && i < w4 + 2; ++i) prop.examples.push_back(example(i));
}

// ---- stage: rounding of the block result ----
void Prober::block_rounding() {
  const int e0 = E0_;
  const int F = P_.align_bits;
  CardProperty& prop = begin("rounding of the block result",
                             "2^s anchors X = " + pow2(e0) + " plus one term 2^(E-j) (s = 0, 1, 2): the last j kept gives the result's "
                             "fraction bits; then residues of 1/4, 1/2 and 3/4 of the result's ulp on even and odd bases, both signs");
  const int jp = std::min(F, ladder_depth(e0));
  for (int s = 0; s <= 2; ++s) {
    if ((1 << s) + 1 > s_.k) break;
    for (int j = 1; j <= jp; ++j) {
      DotQuery q = blank();
      for (int i = 0; i < (1 << s); ++i) put(q, i, std::ldexp(1.0, e0));
      put(q, 1 << s, std::ldexp(1.0, e0 - j));
      add(q, std::to_string(1 << s) + "X + 2^(E-" + std::to_string(j) + ")");
    }
  }
  const std::size_t r1 = flush();
  std::vector<Candidate> cands;
  const Rounding modes[] = {Rounding::TowardZero, Rounding::NearestEven, Rounding::NearestAway, Rounding::Down, Rounding::Up};
  for (int bits = s_.acc->frac_bits; bits >= 1; --bits)
    for (Rounding r : modes) {
      FusedDotParams p = P_;
      p.acc_bits = bits;
      p.block_rounding = r;
      cands.push_back({std::string(to_string(r)) + " to " + std::to_string(bits) + " fraction bits", p});
    }
  CardProperty scratch;
  select(cands, r1, asked_.size(), scratch);
  const std::size_t r2 = asked_.size();
  const int acc_bits = P_.acc_bits;
  // R2: residues around the result's ulp u = 2^(E + s - acc_bits), s chosen so a quarter ulp is >= the window's last bit.
  int s = std::max(0, acc_bits + 3 - F);
  while (s > 0 && (1 << s) + 3 > s_.k) --s;
  const double X = std::ldexp(1.0, e0);
  const double u = std::ldexp(1.0, e0 + s - acc_bits);
  for (int sign : {1, -1})
    for (int odd : {0, 1})
      for (double r : {0.25, 0.5, 0.75}) {
        DotQuery q = blank();
        int pos = 0;
        for (int i = 0; i < (1 << s); ++i) put(q, pos++, sign * X);
        if (odd) put(q, pos++, sign * u);
        if (put(q, pos, sign * r * u))
          add(q, std::string(sign > 0 ? "+" : "-") + "(" + std::to_string(1 << s) + "X" + (odd ? " + u" : "") + " + " + num(r) + "u), u = " +
                     pow2(e0 + s - acc_bits));
      }
  flush();
  char obs[256];
  std::snprintf(obs, sizeof obs, "1X + 2^(E-j) exact up to j = %d", [&] {
    int last = 0;
    for (std::size_t i = r1; i < r1 + static_cast<std::size_t>(jp) && i < asked_.size(); ++i)
      if (acc_value(asked_[i].d) == X + std::ldexp(1.0, e0 - static_cast<int>(i - r1) - 1)) last = static_cast<int>(i - r1) + 1;
    return last;
  }());
  std::string o = obs;
  for (std::size_t i = r2; i < asked_.size(); ++i) o += "; " + asked_[i].note + " -> " + num(acc_value(asked_[i].d));
  prop.observed = o;
  // Final selection over both query sets: result bits x rounding.
  select(cands, r1, asked_.size(), prop);
  for (std::size_t i = r2; i < asked_.size() && prop.examples.size() < 4; ++i)
    if (asked_[i].note.find(" 0.5u") != std::string::npos) prop.examples.push_back(example(i));
}

// ---- stage: fused length and alignment groups ----
void Prober::fused_length() {
  const int e0 = E0_, F = P_.align_bits, acc_bits = P_.acc_bits;
  CardProperty& prop = begin("fused length and alignment groups",
                             "a positive group (2^s anchors X and delta = 2^(E-F), whose rounded partial sum would lose delta) and "
                             "2^s products -X on either side of every position b: D = delta only if no rounding separates them; then X at 0, "
                             "C = -X and two half-bits 2^(E-F-1) at positions i, j: D = 2^(E-F) only if i and j are aligned "
                             "together apart from position 0");
  // The positive group: 2^s anchors X and delta = 2^(E-F), kept by the window (its largest exponent is
  // E) but lost by any rounding of their partial sum 2^s X + delta, which needs s + F > acc_bits
  // fraction bits; the negative group: 2^s products -X (each -X, so the window stays at E).
  const int s = std::max(0, acc_bits - F + 1);
  const int np = (1 << s) + 1, nn = 1 << s;
  const double X = std::ldexp(1.0, e0), delta = std::ldexp(1.0, e0 - F);
  const auto group = [&](DotQuery& q, int from, bool positive) {
    bool ok = true;
    if (positive) {
      for (int i = 0; i < nn; ++i) ok &= put(q, from + i, X);
      ok &= put(q, from + nn, delta);
    } else {
      for (int i = 0; i < nn; ++i) ok &= put(q, from + i, -X);
    }
    return ok;
  };
  for (int b = 1; b < s_.k; ++b) {
    if (b >= np && b + nn <= s_.k) {
      DotQuery q = blank();
      if (group(q, b - np, true) && group(q, b, false))
        add(q, "positives at " + std::to_string(b - np) + ".." + std::to_string(b - 1) + ", negatives from " + std::to_string(b));
    }
    if (b >= nn && b + np <= s_.k) {
      DotQuery q = blank();
      if (group(q, b - nn, false) && group(q, b, true))
        add(q, "negatives to " + std::to_string(b - 1) + ", positives at " + std::to_string(b) + ".." + std::to_string(b + np - 1));
    }
  }
  const std::size_t l1 = flush();
  const double half = std::ldexp(1.0, e0 - F - 1);
  for (int i = 1; i < s_.k; ++i)
    for (int d : {1, 2, 4, 8}) {
      const int j = i + d;
      if (j >= s_.k) continue;
      DotQuery q = blank();
      if (put(q, 0, X) && put(q, i, half) && put(q, j, half) && put_c(q, -X))
        add(q, "X at 0, C = -X, half-bits at " + std::to_string(i) + " and " + std::to_string(j));
    }
  const std::size_t l2 = flush();
  int together = 0, apart = 0;
  for (std::size_t i = l1; i < l2; ++i) (acc_value(asked_[i].d) == delta ? together : apart)++;
  std::string groups_seen;
  for (std::size_t i = l2; i < asked_.size(); ++i)
    if (acc_value(asked_[i].d) == std::ldexp(1.0, e0 - F)) {
      if (groups_seen.size() < 200) groups_seen += (groups_seen.empty() ? "" : ", ") + asked_[i].note.substr(asked_[i].note.find("half-bits at ") + 13);
    }
  prop.observed = std::to_string(together) + " of " + std::to_string(l2 - l1) + " split probes returned delta exactly; half-bit pairs kept at: " +
                  (groups_seen.empty() ? std::string("none") : groups_seen);
  std::vector<Candidate> cands;
  for (int L = s_.k; L >= 1; --L) {
    if (s_.k % L) continue;
    FusedDotParams p = P_;
    p.fused_length = L;
    p.grouping = Grouping::None;
    p.groups = 1;
    cands.push_back({"blocks of " + std::to_string(L) + " products, one alignment each", p});
    for (int g : {2, 4, 8}) {
      if (g > L) continue;
      p.grouping = Grouping::Interleaved;
      p.groups = g;
      cands.push_back({"blocks of " + std::to_string(L) + ", " + std::to_string(g) + " interleaved alignment groups", p});
      if (L % g == 0 && g < L) {
        p.grouping = Grouping::Contiguous;
        cands.push_back({"blocks of " + std::to_string(L) + ", " + std::to_string(g) + " contiguous alignment groups", p});
      }
    }
  }
  select(cands, l1, asked_.size(), prop);
  // Deciding examples: the first split probe that did not return delta, and the first kept pair.
  for (std::size_t i = l1; i < l2; ++i)
    if (acc_value(asked_[i].d) != delta) {
      prop.examples.push_back(example(i));
      break;
    }
  if (l1 < l2) prop.examples.push_back(example(l1));
  for (std::size_t i = l2; i < asked_.size(); ++i)
    if (acc_value(asked_[i].d) == std::ldexp(1.0, e0 - F)) {
      prop.examples.push_back(example(i));
      break;
    }
}

// ---- stage: where C enters ----
void Prober::c_join() {
  const int e0 = E0_, F = P_.align_bits;
  CardProperty& prop = begin("where C enters",
                             "C = +-X and n products each just below the last kept bit of X's window (2 - 2^-f) 2^(E-F-1): in the block each "
                             "is truncated; summed first and added to C their sum shows");
  const int n = std::min(s_.k, P_.fused_length);
  const double sa = 2 - std::ldexp(1.0, -s_.a->frac_bits);
  for (int sign : {1, -1})
    for (int m : {n, std::max(1, n / 2)}) {
      DotQuery q = blank();
      bool ok = put_c(q, sign * std::ldexp(1.0, e0));
      for (int i = 0; i < m; ++i) ok &= put(q, i, sa * std::ldexp(1.0, e0 - F - 1));
      if (ok) add(q, "C = " + std::string(sign > 0 ? "+" : "-") + "X, " + std::to_string(m) + " products (2-2^-" + std::to_string(s_.a->frac_bits) + ") 2^(E-F-1)");
    }
  const std::size_t first = flush();
  prop.observed = answers(first);
  FusedDotParams a = P_, b = P_;
  a.c_join = CJoin::InBlock;
  b.c_join = CJoin::After;
  select({{"C is aligned with the products (in the block)", a}, {"C is added to the block's sum (after)", b}}, first, asked_.size(), prop);
  if (first < asked_.size()) prop.examples.push_back(example(first));
}

// ---- stage: products ----
void Prober::products() {
  const int e0 = E0_;
  const int fa = s_.a->frac_bits, fb = s_.b->frac_bits;
  CardProperty& prop = begin("products",
                             "(1 + 2^-fa)(1 + 2^-fb) X - X and (2 - 2^-fa)(2 - 2^-fb) X - 4X: the product's last bit 2^-(fa+fb) "
                             "shows when the window is at least fa + fb bits");
  const double X = std::ldexp(1.0, e0);
  for (int sign : {1, -1}) {
    DotQuery q = blank();
    const double a = 1 + std::ldexp(1.0, -fa), b = 1 + std::ldexp(1.0, -fb);
    if (put(q, 0, sign * a * b * X, b) && put(q, 1, -sign * X)) add(q, std::string(sign > 0 ? "+" : "-") + "((1+2^-fa)(1+2^-fb) - 1) X");
    DotQuery r = blank();
    const double a2 = 2 - std::ldexp(1.0, -fa), b2 = 2 - std::ldexp(1.0, -fb);
    if (put(r, 0, sign * a2 * b2 * X / 4, b2) && put(r, 1, -sign * X)) add(r, std::string(sign > 0 ? "+" : "-") + "((2-2^-fa)(2-2^-fb)/4 - 1) X");
  }
  const std::size_t first = flush();
  prop.observed = answers(first);
  std::vector<Candidate> cands;
  FusedDotParams p = P_;
  p.product_frac_bits = -1;
  cands.push_back({"exact", p});
  for (int q = fa + fb - 1; q >= 0; --q) {
    p.product_frac_bits = q;
    cands.push_back({"truncated to " + std::to_string(q) + " fraction bits", p});
  }
  select(cands, first, asked_.size(), prop);
  if (first < asked_.size()) prop.examples.push_back(example(first));
  if (fa + fb > P_.align_bits)
    prop.alternatives.insert(prop.alternatives.begin(), "the window (" + std::to_string(P_.align_bits) + " bits) hides a product's last " +
                                                            std::to_string(fa + fb - P_.align_bits) + " bits: exact up to what can be seen");
}

// ---- observation: carries ----
void Prober::carries() {
  const int e0 = E0_;
  CardProperty& prop = begin("carries",
                             "every product near its largest significand, (2 - 2^-fa)(2 - 2^-fb) 2^(E-2), and C near 2X, both signs: "
                             "k + 1 terms of the largest size add without losing a carry");
  const double X = std::ldexp(1.0, e0);
  for (int sign : {1, -1}) {
    DotQuery q = blank();
    const double sa = 2 - std::ldexp(1.0, -s_.a->frac_bits), sb = 2 - std::ldexp(1.0, -s_.b->frac_bits);
    bool ok = true;
    for (int i = 0; i < s_.k; ++i) ok &= put(q, i, sign * sa * sb * std::ldexp(1.0, e0 - 2), sb);
    ok &= put_c(q, sign * (2 - std::ldexp(1.0, -s_.acc->frac_bits)) * X);
    if (ok) add(q, std::string(sign > 0 ? "+" : "-") + "(k products (2-2^-fa)(2-2^-fb)2^(E-2) + C near 2X)");
  }
  const std::size_t first = flush();
  std::string o;
  for (std::size_t i = first; i < asked_.size(); ++i) {
    o += (o.empty() ? "" : "; ") + asked_[i].note + " -> " + num(acc_value(asked_[i].d)) + " (model " + num(acc_value(model(P_, asked_[i].q))) + ")";
    prop.examples.push_back(example(i));
  }
  prop.observed = o;
  prop.conclusion = "exact carries (the model's integer sum); the count of answers it does not reproduce is below";
}

// ---- stage: subnormal results ----
void Prober::subnormal_results() {
  const Format& acc = *s_.acc;
  CardProperty& prop = begin("subnormal results",
                             "C a subnormal of the accumulator with no products; C = smallest normal minus a product of half of it; a product "
                             "alone in the subnormal range");
  // The smallest subnormal of the result's grid (acc_bits fraction bits: 2^(emin - acc_bits)).
  const double sub = std::ldexp(1.0, acc.emin() - P_.acc_bits), mn = acc.min_normal();
  DotQuery q = blank();
  put_c(q, sub);
  add(q, "C = " + num(sub) + " alone");
  q = blank();
  if (put_c(q, 3 * sub)) add(q, "C = 3 * " + num(sub) + " alone");
  q = blank();
  if (put_c(q, mn) && put(q, 0, -mn / 2)) add(q, "C = " + num(mn) + ", product -" + num(mn / 2));
  q = blank();
  if (put(q, 0, mn / 4)) add(q, "product " + num(mn / 4) + " alone");
  const std::size_t first = flush();
  prop.observed = answers(first);
  FusedDotParams a = P_, b = P_;
  a.output_subnormals = true;
  b.output_subnormals = false;
  select({{"kept", a}, {"flushed to zero (and subnormal C read as zero)", b}}, first, asked_.size(), prop);
  if (first < asked_.size()) prop.examples.push_back(example(first));
}

// ---- stage: overflow ----
void Prober::overflow() {
  const Format& acc = *s_.acc;
  CardProperty& prop = begin("overflow",
                             "C = the largest finite value plus one ulp of the result (or more), both signs; and products beyond the "
                             "accumulator's range that cancel: 2^(emax+2) - 2^(emax+2) + 1");
  const double mx = acc.max_finite();
  const double ulp_top = std::ldexp(1.0, acc.emax() - P_.acc_bits);
  for (int sign : {1, -1}) {
    DotQuery q = blank();
    if (put_c(q, sign * mx) && put(q, 0, sign * ulp_top)) add(q, std::string(sign > 0 ? "" : "-") + "(max + one result ulp)");
    q = blank();
    if (put_c(q, sign * mx) && put(q, 0, sign * std::ldexp(1.0, acc.emax()))) add(q, std::string(sign > 0 ? "" : "-") + "(max + 2^emax)");
  }
  DotQuery q = blank();
  const double big = std::ldexp(1.0, acc.emax() + 2);
  if (put(q, 0, big) && put(q, 1, -big) && put_c(q, 1.0)) add(q, "2^(emax+2) - 2^(emax+2) + 1");
  const std::size_t first = flush();
  const std::string o = answers(first);
  prop.observed = o.empty() ? "not reachable: products of these inputs stay far below the accumulator's range" : o;
  std::vector<Candidate> cands;
  for (OverflowTo ov : {OverflowTo::Inf, OverflowTo::MaxFinite})
    for (bool wide : {true, false}) {
      FusedDotParams p = P_;
      p.overflow = ov;
      p.wide_block = wide;
      cands.push_back({std::string("overflow to ") + std::string(to_string(ov)) +
                           (wide ? "; no overflow inside the block" : "; products beyond the range are Inf"),
                       p});
    }
  select(cands, first, asked_.size(), prop);
  if (first < asked_.size()) prop.examples.push_back(example(first));
}

// ---- stage: a lower limit on the alignment exponent ----
void Prober::align_floor() {
  const Format& acc = *s_.acc;
  CardProperty& prop = begin("alignment floor",
                             "half the accumulator's smallest subnormal plus a tiny product 2^(e-j): a round-to-nearest result breaks the "
                             "tie upward only while the tiny term is kept, which a floor on the alignment exponent stops");
  const double t0 = std::ldexp(1.0, acc.emin() - P_.acc_bits - 1);  // half the result grid's smallest subnormal
  const int e = std::ilogb(t0);
  for (int j = 1; j <= 40; ++j) {
    DotQuery q = blank();
    if (put(q, 0, t0) && put(q, 1, std::ldexp(1.0, e - j))) add(q, num(t0) + " + 2^(" + std::to_string(e) + "-" + std::to_string(j) + ")");
  }
  const std::size_t first = flush();
  int last = 0, tried = static_cast<int>(asked_.size() - first);
  for (std::size_t i = first; i < asked_.size(); ++i)
    if (asked_[i].d != 0) last = static_cast<int>(i - first) + 1;
  prop.observed = tried ? "the tie is broken upward for j <= " + std::to_string(last) + " of " + std::to_string(tried)
                        : "not reachable: products of these inputs cannot reach the accumulator's subnormal range";
  std::vector<Candidate> cands;
  FusedDotParams p = P_;
  p.align_floor = kNoAlignFloor;
  cands.push_back({"none", p});
  for (int f = e - 2; f <= e + P_.align_bits + 2; ++f) {
    p.align_floor = f;
    cands.push_back({"the alignment exponent is at least " + std::to_string(f), p});
  }
  select(cands, first, asked_.size(), prop);
  if (first < asked_.size() && last >= 1) prop.examples.push_back(example(first + static_cast<std::size_t>(last) - 1));
}

// ---- observation: monotonicity ----
void Prober::monotonicity() {
  const int e0 = E0_, F = P_.align_bits;
  CardProperty& prop = begin("monotonicity",
                             "C = X(1 - 2^-p) and C = X with n products 2^(E-F-1): kept beside the smaller C (its window reaches one bit "
                             "lower), truncated beside X; the model picks the smallest n that makes D fall when C rises");
  const double X = std::ldexp(1.0, e0);
  const double c1 = X * (1 - std::ldexp(1.0, -(s_.acc->frac_bits + 1)));
  const double t = std::ldexp(1.0, e0 - F - 1);
  int chosen = 0;
  for (int n = 1; n <= std::min(s_.k, P_.fused_length) && !chosen; ++n) {
    DotQuery lo = blank(), hi = blank();
    bool ok = put_c(lo, c1) && put_c(hi, X);
    for (int i = 0; i < n; ++i) ok &= put(lo, i, t) && put(hi, i, t);
    if (ok && acc_value(model(P_, lo)) > acc_value(model(P_, hi))) {
      chosen = n;
      add(lo, "C = X(1-2^-" + std::to_string(s_.acc->frac_bits + 1) + ") + " + std::to_string(n) + " * 2^(E-F-1)");
      add(hi, "C = X + " + std::to_string(n) + " * 2^(E-F-1)");
    }
  }
  const std::size_t first = flush();
  if (!chosen) {
    prop.observed = "the model predicts no fall for any n up to the fused length";
    prop.conclusion = "monotone on this test";
    return;
  }
  const double dlo = acc_value(asked_[first].d), dhi = acc_value(asked_[first + 1].d);
  prop.observed = "raising C from " + num(c1) + " to " + num(X) + " with " + std::to_string(chosen) + " small products: D went from " + num(dlo) +
                  " to " + num(dhi);
  prop.conclusion = dhi < dlo ? "not monotone: a larger C gave a smaller D (alignment to the largest exponent, Fasi et al. 2021)"
                              : "no fall observed where the model predicts one";
  prop.examples.push_back(example(first));
  prop.examples.push_back(example(first + 1));
}

// ---- every query against the final model ----
void Prober::finish() {
  stage_first_.push_back(asked_.size());
  int total_bad = 0;
  for (std::size_t st = 0; st + 1 < stage_first_.size(); ++st) {
    CardProperty& prop = card_.properties[st];
    if (prop.name == "operand layout") {
      total_bad += prop.disagree;
      prop.queries = static_cast<int>(stage_first_[st + 1] - stage_first_[st]);
      continue;
    }
    int bad = 0;
    for (std::size_t i = stage_first_[st]; i < stage_first_[st + 1]; ++i) {
      const std::uint32_t m = model(P_, asked_[i].q);
      if (m != asked_[i].d) ++bad;
    }
    prop.queries = static_cast<int>(stage_first_[st + 1] - stage_first_[st]);
    prop.disagree = bad;
    total_bad += bad;
    for (auto& ex : prop.examples) {
      DotQuery q = blank();
      for (const auto& x : ex.products) {
        q.a[static_cast<std::size_t>(x.i)] = x.a;
        q.b[static_cast<std::size_t>(x.i)] = x.b;
      }
      q.c = ex.c;
      ex.model = model(P_, q);
    }
  }
  card_.probe_queries = static_cast<int>(asked_.size());
  card_.probe_disagreements = total_bad;
  card_.params = P_;
  card_.summary = describe(P_);
  card_.published = compare_published(s_, card_, [&](const FusedDotParams& p) { return explains(p, stage_first_[1], asked_.size()); });
}

// ---- the integer instruction ----
void Prober::integer_stages() {
  CardProperty& prop = begin("integer accumulation",
                             "exact sums of small and extreme s8 products, and C at the int32 limits plus or minus one product");
  const auto s8 = [](int v) { return static_cast<std::uint32_t>(static_cast<std::uint8_t>(static_cast<std::int8_t>(v))); };
  const auto s32 = [](std::int64_t v) { return static_cast<std::uint32_t>(static_cast<std::int32_t>(v)); };
  struct Want {
    DotQuery q;
    std::int64_t exact;
    std::string note;
  };
  std::vector<Want> w;
  for (int i = 0; i < s_.k; ++i) {
    DotQuery q = blank();
    q.a[static_cast<std::size_t>(i)] = s8(1);
    q.b[static_cast<std::size_t>(i)] = s8(2);
    w.push_back({q, 2, "position " + std::to_string(i) + ": 1 * 2"});
  }
  for (int pa : {-128, 127})
    for (int pb : {-128, 127}) {
      DotQuery q = blank();
      for (int i = 0; i < s_.k; ++i) q.a[static_cast<std::size_t>(i)] = s8(pa), q.b[static_cast<std::size_t>(i)] = s8(pb);
      q.c = s32(-7);
      w.push_back({q, static_cast<std::int64_t>(s_.k) * pa * pb - 7, "every product " + std::to_string(pa) + " * " + std::to_string(pb) + ", C = -7"});
    }
  const std::size_t exact_n = w.size();
  DotQuery q = blank();
  q.a[0] = s8(1), q.b[0] = s8(1), q.c = s32(INT32_MAX);
  w.push_back({q, std::int64_t{INT32_MAX} + 1, "INT32_MAX + 1"});
  q.a[0] = s8(-1), q.c = s32(INT32_MIN);
  w.push_back({q, std::int64_t{INT32_MIN} - 1, "INT32_MIN - 1"});
  for (auto& x : w) add(x.q, x.note);
  const std::size_t first = flush();
  int bad_exact = 0, wraps = 0, sats = 0;
  for (std::size_t i = 0; i < w.size(); ++i) {
    const auto got = static_cast<std::int32_t>(asked_[first + i].d);
    if (i < exact_n) {
      bad_exact += got != w[i].exact;
    } else {
      wraps += got == static_cast<std::int32_t>(static_cast<std::uint32_t>(w[i].exact));
      sats += got == (w[i].exact > 0 ? INT32_MAX : INT32_MIN);
    }
    if (i >= exact_n || got != w[i].exact) prop.examples.push_back(example(first + i));
  }
  card_.integer_wraps = wraps >= sats;
  prop.observed = std::to_string(exact_n - static_cast<std::size_t>(bad_exact)) + " of " + std::to_string(exact_n) + " exact sums right; past the limits: " +
                  std::to_string(wraps) + " wrapped, " + std::to_string(sats) + " saturated";
  prop.conclusion = std::string("exact int32 sums, ") + (card_.integer_wraps ? "wrapping modulo 2^32" : "saturating at the int32 limits");
  stage_first_.push_back(asked_.size());
  int bad = 0;
  for (std::size_t i = first; i < asked_.size(); ++i)
    bad += int_dot(card_.integer_wraps, asked_[i].q.a.data(), asked_[i].q.b.data(), s_.k, asked_[i].q.c) != asked_[i].d;
  for (auto& ex : prop.examples) {
    DotQuery dq = blank();
    for (const auto& x : ex.products) dq.a[static_cast<std::size_t>(x.i)] = x.a, dq.b[static_cast<std::size_t>(x.i)] = x.b;
    ex.model = int_dot(card_.integer_wraps, dq.a.data(), dq.b.data(), s_.k, ex.c);
  }
  prop.queries = static_cast<int>(asked_.size() - first);
  prop.disagree = bad;
  card_.probe_queries = prop.queries;
  card_.probe_disagreements = bad;
  card_.summary = prop.conclusion;
}

void Prober::run() {
  if (s_.integer()) {
    integer_stages();
    return;
  }
  P_ = starting_params(s_);
  if (!sanity()) {
    card_.probe_queries = static_cast<int>(asked_.size());
    card_.probe_disagreements = card_.properties.front().disagree;
    card_.params = P_;
    card_.summary = "not measured: the operand layout check failed";
    return;
  }
  specials();
  operand_reading();
  subnormal_inputs();
  window();
  block_rounding();
  fused_length();
  c_join();
  products();
  carries();
  subnormal_results();
  overflow();
  align_floor();
  monotonicity();
  finish();
}

// ---------------------------------------------------------------------------------------------------
// Validation inputs
// ---------------------------------------------------------------------------------------------------

enum StreamId : std::uint32_t { kStreamValidation = 0x7C000000u };

struct Gen {
  Stream st;
  std::uint64_t base;  ///< counter of the element
  int draw = 0;
  std::array<std::uint32_t, 4> words() { return draw_words(st, base, static_cast<std::uint32_t>(draw++)); }
  double uniform() {
    const auto w = words();
    return u53(w[0], w[1]);
  }
  std::uint32_t bits() { return words()[0]; }
  double normal() {
    // Marsaglia's polar method over this element's draws (generators/rng.hpp's normal(), on a sub-counter).
    for (;;) {
      const auto w = words();
      const double u = 2.0 * u53(w[0], w[1]) - 1.0, v = 2.0 * u53(w[2], w[3]) - 1.0;
      const double q = u * u + v * v;
      if (q > 0.0 && q < 1.0) return u * std::sqrt((-2.0 * det_log(q)) / q);
    }
  }
};

std::uint32_t rne_code(const Format& f, double x) {
  return static_cast<std::uint32_t>(to_container(f, round_double(f, x, Rounder{Rounding::NearestEven, default_saturation(f), NanPayload::Preserve}).code));
}

/// A random code of f: finite with random sign, exponent and fraction; Inf/NaN 1 time in 256.
std::uint32_t wide_code(const Format& f, Gen& g) {
  for (;;) {
    std::uint32_t bits = g.bits();
    const bool special_ok = (g.bits() & 0xFF) == 0;
    std::uint64_t code = f == tf32 ? (bits >> 13) : (bits & f.code_mask());
    const FpClass c = classify(f, code);
    if ((c == FpClass::NaN || c == FpClass::Inf) && !special_ok) continue;
    if (f == tf32) return bits;  // random low container bits: the operand reading is validated too
    return static_cast<std::uint32_t>(code);
  }
}

/// sign * (1 + random fraction) * 2^e rounded into f (nearest-even, saturating at the largest finite).
std::uint32_t scaled_code(const Format& f, Gen& g, int e) {
  const double m = 1.0 + g.uniform();
  const double sign = (g.bits() & 1) ? -1.0 : 1.0;
  const double x = std::clamp(sign * std::ldexp(m, e), -f.max_finite(), f.max_finite());
  return rne_code(f, x);
}

}  // namespace

// ---------------------------------------------------------------------------------------------------
// Public functions
// ---------------------------------------------------------------------------------------------------

std::unique_ptr<DotSource> instruction_dots(MmaInstruction& insn) { return std::make_unique<InstructionDots>(insn); }

FusedDotParams starting_params(const InstructionSpec& spec) {
  FusedDotParams p;
  if (spec.integer()) return p;
  p.a = *spec.a;
  p.b = *spec.b;
  p.acc = *spec.acc;
  p.fused_length = spec.k;
  p.acc_bits = spec.acc->frac_bits;
  p.block_rounding = Rounding::TowardZero;
  p.nan_code = spec.acc->canonical_nan_code();
  return p;
}

std::uint32_t int_dot(bool wraps, const std::uint32_t* a, const std::uint32_t* b, int k, std::uint32_t c) {
  std::int64_t s = static_cast<std::int32_t>(c);
  for (int i = 0; i < k; ++i)
    s += static_cast<std::int64_t>(static_cast<std::int8_t>(a[i] & 0xFF)) * static_cast<std::int8_t>(b[i] & 0xFF);
  if (wraps) return static_cast<std::uint32_t>(s);
  return static_cast<std::uint32_t>(static_cast<std::int32_t>(std::clamp<std::int64_t>(s, INT32_MIN, INT32_MAX)));
}

std::unique_ptr<MmaInstruction> make_model_instruction(const InstructionSpec& spec, const FusedDotParams& params, std::string origin) {
  if (spec.integer()) throw InputError("make_model_instruction: " + std::string(spec.id) + " is an integer instruction");
  if (const std::string bad = check(params); !bad.empty()) throw InputError("block model parameters: " + bad);
  return std::make_unique<ModelInstruction>(spec, params, false, true, std::move(origin));
}

std::unique_ptr<MmaInstruction> make_integer_model_instruction(const InstructionSpec& spec, bool wraps, std::string origin) {
  return std::make_unique<ModelInstruction>(spec, FusedDotParams{}, true, wraps, std::move(origin));
}

std::string_view to_string(Distribution d) {
  switch (d) {
    case Distribution::Uniform: return "uniform";
    case Distribution::Normal: return "normal";
    case Distribution::Wide: return "wide";
    case Distribution::Cancellation: return "cancellation";
    case Distribution::NearOverflow: return "near-overflow";
    case Distribution::Ties: return "ties";
  }
  return "?";
}
std::optional<Distribution> parse_distribution(std::string_view s) {
  for (Distribution d : kAllDistributions)
    if (to_string(d) == s) return d;
  return std::nullopt;
}

MmaBatch validation_batch(const InstructionSpec& spec, Distribution dist, std::uint64_t seed, std::uint64_t first_mma, int count,
                          const FusedDotParams* fitted) {
  const int m = spec.m, n = spec.n, k = spec.k;
  MmaBatch b;
  b.count = count;
  b.a.resize(static_cast<std::size_t>(count) * m * k);
  b.b.resize(static_cast<std::size_t>(count) * n * k);
  b.c.resize(static_cast<std::size_t>(count) * m * n);
  const Stream st{seed, kStreamValidation + static_cast<std::uint32_t>(dist) * 16};
  const std::uint64_t per_mma = static_cast<std::uint64_t>(m * k + n * k + m * n);
  const int F = fitted ? fitted->align_bits : 24;
  parallel_for(static_cast<std::uint64_t>(count), 64, [&](std::uint64_t lo, std::uint64_t hi, unsigned) {
    for (std::uint64_t t = lo; t < hi; ++t) {
      const std::uint64_t mma = first_mma + t;
      const auto gen = [&](std::uint64_t elem) { return Gen{st, mma * per_mma + elem}; };
      std::uint32_t* A = &b.a[t * m * k];
      std::uint32_t* B = &b.b[t * n * k];
      std::uint32_t* C = &b.c[t * m * n];
      if (spec.integer()) {
        for (int i = 0; i < m * k; ++i) A[i] = gen(i).bits() & 0xFF;
        for (int i = 0; i < n * k; ++i) B[i] = gen(m * k + i).bits() & 0xFF;
        for (int i = 0; i < m * n; ++i) {
          Gen g = gen(m * k + n * k + i);
          const std::uint32_t r = g.bits();
          if (dist == Distribution::NearOverflow) C[i] = (r & 1) ? static_cast<std::uint32_t>(INT32_MAX - static_cast<int>(r >> 20)) : static_cast<std::uint32_t>(INT32_MIN + static_cast<int>(r >> 20));
          else if (dist == Distribution::Wide) C[i] = r;
          else C[i] = static_cast<std::uint32_t>(static_cast<std::int32_t>(r % 200001) - 100000);
        }
        continue;
      }
      const Format& fa = *spec.a;
      const Format& fb = *spec.b;
      const Format& acc = *spec.acc;
      const auto input = [&](const Format& f, Gen g, int row, int col, bool is_a) -> std::uint32_t {
        switch (dist) {
          case Distribution::Uniform: return rne_code(f, 2 * g.uniform() - 1);
          case Distribution::Normal: return rne_code(f, g.normal());
          case Distribution::Wide: return wide_code(f, g);
          case Distribution::NearOverflow: return scaled_code(f, g, f.emax() - static_cast<int>(g.bits() % 3));
          case Distribution::Cancellation: {
            // The second half repeats the first with A negated: products cancel pairwise; 1 in 8 redrawn.
            const int kk = is_a ? col : row;
            if (kk >= k / 2 && (g.bits() & 7) != 0) return 0xFFFFFFFFu;  // filled below from the mirror
            return rne_code(f, g.normal());
          }
          case Distribution::Ties: {
            // Position 0 of each row/column near 1; the others put their product's exponent around the
            // window's last kept bit: e_a + e_b in [-F-3, -F+1].
            const int kk = is_a ? col : row;
            if (kk == 0) return scaled_code(f, g, 0);
            const int e = -F - 3 + static_cast<int>(g.bits() % 5);
            const int ea = is_a ? e / 2 : e - e / 2;
            return scaled_code(f, g, std::max(ea, f.emin()));
          }
        }
        return 0;
      };
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < k; ++j) A[i * k + j] = input(fa, gen(static_cast<std::uint64_t>(i * k + j)), i, j, true);
      for (int col = 0; col < n; ++col)
        for (int j = 0; j < k; ++j) B[col * k + j] = input(fb, gen(static_cast<std::uint64_t>(m * k + col * k + j)), j, col, false);
      if (dist == Distribution::Cancellation) {
        for (int i = 0; i < m; ++i)
          for (int j = k / 2; j < k; ++j)
            if (A[i * k + j] == 0xFFFFFFFFu) A[i * k + j] = A[i * k + j - k / 2] ^ static_cast<std::uint32_t>(to_container(fa, fa.sign_mask()));
        for (int col = 0; col < n; ++col)
          for (int j = k / 2; j < k; ++j)
            if (B[col * k + j] == 0xFFFFFFFFu) B[col * k + j] = B[col * k + j - k / 2];
      }
      const int pmin = fa.emin() + fb.emin(), pmax = std::min(fa.emax() + fb.emax(), acc.emax());
      for (int i = 0; i < m * n; ++i) {
        Gen g = gen(static_cast<std::uint64_t>(m * k + n * k + i));
        switch (dist) {
          case Distribution::Uniform: C[i] = rne_code(acc, 2 * g.uniform() - 1); break;
          case Distribution::Normal: C[i] = rne_code(acc, g.normal()); break;
          case Distribution::Wide:
            C[i] = (g.bits() & 1) ? wide_code(acc, g)
                                  : scaled_code(acc, g, std::max(acc.emin(), pmin - 8 + static_cast<int>(g.bits() % static_cast<std::uint32_t>(pmax - pmin + 16))));
            break;
          case Distribution::NearOverflow:
            C[i] = (g.bits() & 3) ? scaled_code(acc, g, acc.emax()) : static_cast<std::uint32_t>(((g.bits() & 1) ? acc.sign_mask() : 0) | acc.max_finite_code());
            break;
          case Distribution::Cancellation: C[i] = rne_code(acc, g.normal() * 0x1p-12); break;
          case Distribution::Ties: C[i] = scaled_code(acc, g, -static_cast<int>(g.bits() % 3)); break;
        }
      }
    }
  });
  return b;
}

BehaviourCard unsupported_card(const InstructionSpec& spec, const std::string& origin, const std::string& why) {
  BehaviourCard c;
  c.instruction = std::string(spec.ptx);
  c.id = std::string(spec.id);
  c.family = std::string(to_string(spec.family));
  c.device = origin;
  c.m = spec.m, c.n = spec.n, c.k = spec.k;
  c.a_format = spec.a_tag();
  c.b_format = spec.a_tag();
  c.acc_format = spec.acc_tag();
  c.integer = spec.integer();
  c.supported = false;
  c.why = why;
  return c;
}

BehaviourCard fit_instruction(const InstructionSpec& spec, DotSource& dots, const std::string& origin) {
  const auto t0 = std::chrono::steady_clock::now();
  BehaviourCard card = unsupported_card(spec, origin, "");
  card.supported = true;
  Prober(spec, dots, card).run();
  card.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return card;
}

void validate(BehaviourCard& card, const InstructionSpec& spec, MmaInstruction& insn, const ProbeOptions& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  const int per_mma = spec.m * spec.n, k = spec.k;
  const std::uint64_t per_dist = (opt.samples + std::size(kAllDistributions) - 1) / std::size(kAllDistributions);
  const std::uint64_t mmas = std::max<std::uint64_t>(1, (per_dist + per_mma - 1) / per_mma);
  constexpr std::uint64_t kChunk = 4096;
  card.validation.clear();
  card.disagreements.clear();
  std::mutex mu;
  for (Distribution dist : kAllDistributions) {
    CardValidation v{std::string(to_string(dist)), 0, 0};
    for (std::uint64_t first = 0; first < mmas; first += kChunk) {
      const int count = static_cast<int>(std::min(kChunk, mmas - first));
      const MmaBatch batch = validation_batch(spec, dist, opt.seed, first, count, spec.integer() ? nullptr : &card.params);
      const std::vector<std::uint32_t> d = insn.run(batch);
      if (d.size() != static_cast<std::size_t>(count) * per_mma) throw DeviceError("the instruction returned a short D");
      if (opt.record && first == 0) record_tiles(*opt.record, spec, dist, batch, d, opt.record_tiles);
      std::atomic<std::uint64_t> bad{0};
      parallel_for(static_cast<std::uint64_t>(count), 64, [&](std::uint64_t lo, std::uint64_t hi, unsigned) {
        for (std::uint64_t t = lo; t < hi; ++t)
          for (int i = 0; i < spec.m; ++i)
            for (int j = 0; j < spec.n; ++j) {
              const std::uint32_t* a = &batch.a[(t * spec.m + i) * k];
              const std::uint32_t* b = &batch.b[(t * spec.n + j) * k];
              const std::uint32_t c = batch.c[(t * spec.m + i) * spec.n + j];
              const std::uint32_t want = spec.integer() ? int_dot(card.integer_wraps, a, b, k, c)
                                                        : static_cast<std::uint32_t>(fused_dot(card.params, a, b, k, c));
              const std::uint32_t got = d[(t * spec.m + i) * spec.n + j];
              if (want == got) continue;
              bad.fetch_add(1, std::memory_order_relaxed);
              std::lock_guard lock(mu);
              if (card.disagreements.size() < static_cast<std::size_t>(opt.max_listed))
                card.disagreements.push_back({v.distribution, std::vector<std::uint32_t>(a, a + k), std::vector<std::uint32_t>(b, b + k), c, got, want});
            }
      });
      v.samples += static_cast<std::uint64_t>(count) * per_mma;
      v.disagreements += bad.load();
    }
    if (opt.log)
      opt.log("  " + std::string(spec.id) + " " + v.distribution + ": " + std::to_string(v.samples) + " samples, " + std::to_string(v.disagreements) +
              " disagreements");
    card.validation.push_back(v);
  }
  card.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

bool layout_ok(const BehaviourCard& card) {
  return card.supported && !card.properties.empty() && (card.properties.front().name != "operand layout" || card.properties.front().disagree == 0);
}

BehaviourCard probe_instruction(MmaInstruction& insn, const ProbeOptions& opt) {
  auto dots = instruction_dots(insn);
  BehaviourCard card = fit_instruction(insn.spec(), *dots, insn.origin());
  if (layout_ok(card)) validate(card, insn.spec(), insn, opt);
  return card;
}

// ---------------------------------------------------------------------------------------------------
// Published models
// ---------------------------------------------------------------------------------------------------

std::optional<FusedDotParams> mma_sim_hopper(const InstructionSpec& spec) {
  // mmasim/simulator/nv_ptx.py: Hopper mma: 25 fractional bits, no split-k; its qualifier list for
  // Hopper has no FP8 mma.sync. wgmma: 25 bits, FP8 13 bits with an e8m13 fp32 result. arithmetic.py:
  // fused_sum truncates each significand * 2^(n + e_i - e_max) toward zero (e_i = e_a + e_b,
  // significands in [1, 4)), C included; fp32 results RZ (13 bits for e8m13), fp16 results RNE; NaN
  // 0x7FFFFFFF / 0x7FFF; tf32 operands truncated (truncate_to_tf32).
  if (spec.integer()) return std::nullopt;
  const bool fp8 = *spec.a == e4m3 || *spec.a == e5m2;
  if (spec.family == Family::MmaSync && fp8) return std::nullopt;
  FusedDotParams p;
  p.a = *spec.a;
  p.b = *spec.b;
  p.acc = *spec.acc;
  p.fused_length = spec.k;
  p.align_bits = fp8 ? 13 : 25;
  p.operand_read = Rounding::TowardZero;
  if (*spec.acc == f16) {
    p.acc_bits = 10;
    p.block_rounding = Rounding::NearestEven;
    p.nan_code = 0x7FFF;
  } else {
    p.acc_bits = fp8 ? 13 : 23;
    p.block_rounding = Rounding::TowardZero;
    p.nan_code = 0x7FFFFFFF;
  }
  return p;
}

std::optional<FusedDotParams> khattak_mikaitis_hopper(const InstructionSpec& spec) {
  // models/H100TC.m (H200TC.m calls it): fma 16 (tf32 8, fp8 32), neab 2 (fp8 -10: 13 bits and a
  // 13-bit fp32 result, GEMM.m), denorm_prd 1 (e_a + e_b), late_partial_sum 0 (C in the block), rz
  // (rne for fp16 outputs), min_exp_limit -133 (-21 for fp16 in and out), subnormals kept, prd_limit 0.
  // For FP8 inputs with fp16 outputs GEMM.m reduces the output to 10 - 10 = 0 fraction bits, which
  // we do not take as their model of that instruction.
  if (spec.integer()) return std::nullopt;
  const bool fp8 = *spec.a == e4m3 || *spec.a == e5m2;
  if (fp8 && *spec.acc == f16) return std::nullopt;
  FusedDotParams p;
  p.a = *spec.a;
  p.b = *spec.b;
  p.acc = *spec.acc;
  p.fused_length = std::min(spec.k, fp8 ? 32 : *spec.a == tf32 ? 8 : 16);
  p.align_bits = fp8 ? 13 : 25;
  p.align_floor = -133;
  p.operand_read = Rounding::TowardZero;
  if (*spec.acc == f16) {
    p.acc_bits = 10;
    p.block_rounding = Rounding::NearestEven;
    p.nan_code = 0x7FFF;
    if (*spec.a == f16) p.align_floor = -21;
  } else {
    p.acc_bits = fp8 ? 13 : 23;
    p.block_rounding = Rounding::TowardZero;
    p.nan_code = 0x7FFFFFFF;
  }
  return p;
}

std::vector<CardPublished> compare_published(const InstructionSpec& spec, const BehaviourCard& card,
                                             const std::function<bool(const FusedDotParams&)>& explains) {
  std::vector<CardPublished> rows;
  if (!card.supported || spec.integer() || card.probe_queries == 0) return rows;
  const auto ms = mma_sim_hopper(spec);
  const auto km = khattak_mikaitis_hopper(spec);
  struct Field {
    const char* name;
    std::function<std::string(const FusedDotParams&)> text;
    bool tf32_only = false;
    std::function<void(FusedDotParams&, const FusedDotParams&)> take;  ///< copy this property from a published model
  };
  const std::vector<Field> fields = {
      {"products", [](const FusedDotParams& p) { return p.product_frac_bits < 0 ? std::string("exact") : "truncated to " + std::to_string(p.product_frac_bits) + " bits"; }, false, [](FusedDotParams& d, const FusedDotParams& s) { d.product_frac_bits = s.product_frac_bits; }},
      {"fused length", [](const FusedDotParams& p) { return std::to_string(p.fused_length); }, false, [](FusedDotParams& d, const FusedDotParams& s) { d.fused_length = s.fused_length; }},
      {"alignment groups", [](const FusedDotParams& p) { return p.grouping == Grouping::None ? std::string("none") : std::to_string(p.groups) + " " + std::string(to_string(p.grouping)); }, false, [](FusedDotParams& d, const FusedDotParams& s) { d.grouping = s.grouping, d.groups = s.groups; }},
      {"alignment bits", [](const FusedDotParams& p) { return std::to_string(p.align_bits); }, false, [](FusedDotParams& d, const FusedDotParams& s) { d.align_bits = s.align_bits; }},
      {"alignment reference", [](const FusedDotParams& p) { return std::string(to_string(p.reference)); }, false, [](FusedDotParams& d, const FusedDotParams& s) { d.reference = s.reference; }},
      {"discarded bits", [](const FusedDotParams& p) { return std::string(to_string(p.align_rounding)); }, false, [](FusedDotParams& d, const FusedDotParams& s) { d.align_rounding = s.align_rounding; }},
      {"C enters", [](const FusedDotParams& p) { return std::string(to_string(p.c_join)); }, false, [](FusedDotParams& d, const FusedDotParams& s) { d.c_join = s.c_join; }},
      {"result bits", [](const FusedDotParams& p) { return std::to_string(p.acc_bits); }, false, [](FusedDotParams& d, const FusedDotParams& s) { d.acc_bits = s.acc_bits; }},
      {"result rounding", [](const FusedDotParams& p) { return std::string(to_string(p.block_rounding)); }, false, [](FusedDotParams& d, const FusedDotParams& s) { d.block_rounding = s.block_rounding; }},
      {"subnormal inputs", [](const FusedDotParams& p) { return std::string(p.input_subnormals ? "kept" : "zero"); }, false, [](FusedDotParams& d, const FusedDotParams& s) { d.input_subnormals = s.input_subnormals; }},
      {"subnormal results", [](const FusedDotParams& p) { return std::string(p.output_subnormals ? "kept" : "flushed"); }, false, [](FusedDotParams& d, const FusedDotParams& s) { d.output_subnormals = s.output_subnormals; }},
      {"overflow", [](const FusedDotParams& p) { return std::string(to_string(p.overflow)); }, false, [](FusedDotParams& d, const FusedDotParams& s) { d.overflow = s.overflow; }},
      {"inside the block", [](const FusedDotParams& p) { return std::string(p.wide_block ? "no overflow" : "products overflow"); }, false, [](FusedDotParams& d, const FusedDotParams& s) { d.wide_block = s.wide_block; }},
      {"alignment floor", [](const FusedDotParams& p) { return p.align_floor == kNoAlignFloor ? std::string("none") : std::to_string(p.align_floor); }, false, [](FusedDotParams& d, const FusedDotParams& s) { d.align_floor = s.align_floor; }},
      {"tf32 reading", [](const FusedDotParams& p) { return std::string(to_string(p.operand_read)); }, true, [](FusedDotParams& d, const FusedDotParams& s) { d.operand_read = s.operand_read; }},
  };
  for (const Field& f : fields) {
    if (f.tf32_only && !(*spec.a == tf32)) continue;
    CardPublished r;
    r.property = f.name;
    r.fpcert = f.text(card.params);
    r.mma_sim = ms ? f.text(*ms) : "";
    r.khattak_mikaitis = km ? f.text(*km) : "";
    // Equal values agree; a published value that still explains every probe answer when put in place
    // of the fitted one is "not distinguished" (the probes cannot tell); anything else differs.
    const auto judge = [&](const std::optional<FusedDotParams>& pub, const std::string& text, const char* who) -> std::string {
      if (!pub) return "";
      if (text == r.fpcert) return std::string("agrees with ") + who;
      FusedDotParams alt = card.params;
      f.take(alt, *pub);
      if (explains && check(alt).empty() && explains(alt)) return std::string("not distinguished from ") + who;
      return std::string("differs from ") + who;
    };
    const std::string a = judge(ms, r.mma_sim, "MMA-Sim"), b = judge(km, r.khattak_mikaitis, "Khattak-Mikaitis");
    r.verdict = a.empty() && b.empty() ? "no published model" : a.empty() ? b : b.empty() ? a : a + "; " + b;
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace fpcert::tc
