// kernels/tc/probe_internal.hpp — the probe's internals shared by kernels/tc/probe.cpp (fitting, validation,
// cards) and kernels/tc/probe_stages.cpp (the Prober's stages): text helpers, the instruction as a dot
// source, exact codes, and the Prober itself (docs/tensor_cores.md). Not an interface: include only there.
#pragma once


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


namespace fpcert::tc::probe_internal {


// ---------------------------------------------------------------------------------------------------
// Text helpers
// ---------------------------------------------------------------------------------------------------

inline std::string hex(std::uint32_t v) { return code_hex(v); }
inline std::string num(double v) {
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
inline std::string pow2(int e) { return "2^" + std::to_string(e); }

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
inline std::optional<std::uint32_t> exact_code(const Format& f, double x, bool allow_subnormal = true) {
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
  void emulated_structure();
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

inline int Prober::anchor() const {
  // As high as the inputs allow while keeping ~44 binades of exact product terms below it, ~8 binades of
  // carry headroom under the accumulator's largest exponent, and the products normal.
  const int pmax = s_.a->emax() + s_.b->emax() - 1;
  const int pmin = s_.a->emin() + s_.b->emin();
  int e0 = std::max(0, pmin + 44);
  e0 = std::min({e0, pmax, s_.acc->emax() - 8});
  return e0;
}

inline int Prober::ladder_depth(int e0) const {
  int j = 0;
  while (j < 56 && v_.product(std::ldexp(1.0, e0 - j - 1))) ++j;
  return j;
}


}  // namespace fpcert::tc::probe_internal
