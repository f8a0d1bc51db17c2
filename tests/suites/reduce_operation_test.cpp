// tests/suites/reduce_operation_test.cpp — reductions through the runner (suites/ops/reduce/): a correct sequential
// model passes every case bitwise, a wrong one fails for its own reason, a run-to-run (atomics-like) model passes by
// the envelope and fails when it drops an element, and a reduction case's record round-trips through JSON.
//
// The kernels here are small host models written with native float arithmetic (an independent realisation of
// the declared order: the oracle's emulation rounds through oracle/round.hpp, these through the FPU), until the
// CPU models of kernels/reduce/cpu/ land.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "base/codes.hpp"
#include "kernels/reduce/reduce_kernel.hpp"
#include "results/results_json.hpp"
#include "suites/run/operation.hpp"
#include "suites/run/suite.hpp"

namespace fpcert {
namespace {

enum class Flavour { Correct, DropLast, Atomic, AtomicDropLast, PairwiseClaimedSequential };

class TestReduce final : public ReduceKernel {
 public:
  TestReduce(std::string name, ReduceKind kind, Flavour f) : name_(std::move(name)), f_(f) {
    t_.kind = kind;
    t_.order = ReduceOrder::sequential();
    if (f == Flavour::Atomic || f == Flavour::AtomicDropLast) {
      t_.order = ReduceOrder::unknown();
      t_.determinism = Determinism::RunToRun;
    }
  }
  const std::string& name() const override { return name_; }
  std::string description() const override { return "test reduction model"; }
  Backend backend() const override { return Backend::Cpu; }
  const ReduceTraits& reduce_traits() const override { return t_; }
  void run(const ReduceOperands& o) override {
    ++calls_;
    std::vector<float> x(static_cast<std::size_t>(o.length)), y(x.size());
    for (std::int64_t v = 0; v < o.count; ++v) {
      for (std::int64_t i = 0; i < o.length; ++i) {
        const std::int64_t at = o.axis == ReduceAxis::Rows ? v * o.ldx + i : i * o.ldx + v;
        const std::uint32_t bx = static_cast<std::uint32_t>(load_code(o.x, at, 4));
        std::memcpy(&x[static_cast<std::size_t>(i)], &bx, 4);
        if (o.y) {
          const std::int64_t aty = o.axis == ReduceAxis::Rows ? v * o.ldy + i : i * o.ldy + v;
          const std::uint32_t by = static_cast<std::uint32_t>(load_code(o.y, aty, 4));
          std::memcpy(&y[static_cast<std::size_t>(i)], &by, 4);
        }
      }
      std::vector<std::size_t> idx(x.size());
      std::iota(idx.begin(), idx.end(), std::size_t{0});
      if (f_ == Flavour::Atomic || f_ == Flavour::AtomicDropLast)  // another order on every call: a rotation
        std::rotate(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(idx.empty() ? 0 : (calls_ * 7) % idx.size()), idx.end());
      std::size_t n = idx.size();
      if ((f_ == Flavour::DropLast || f_ == Flavour::AtomicDropLast) && n > 0) --n;
      float acc = 0.0f;
      if (f_ == Flavour::PairwiseClaimedSequential) {
        std::vector<float> t(x.begin(), x.end());
        acc = pairwise(t.data(), t.size());
      } else {
        for (std::size_t q = 0; q < n; ++q) {
          const std::size_t i = idx[q];
          switch (t_.kind) {
            case ReduceKind::Sum: acc = acc + x[i]; break;
            case ReduceKind::Dot: acc = std::fmaf(x[i], y[i], acc); break;
            case ReduceKind::Nrm2: acc = std::fmaf(x[i], x[i], acc); break;
          }
        }
      }
      if (t_.kind == ReduceKind::Nrm2) acc = std::sqrt(acc);
      std::uint32_t b;
      std::memcpy(&b, &acc, 4);
      store_code(o.out, v, 4, b);
    }
  }

 private:
  static float pairwise(const float* x, std::size_t n) {
    if (n == 0) return 0.0f;
    if (n == 1) return x[0];
    const std::size_t h = (n + 1) / 2;
    return pairwise(x, h) + pairwise(x + h, n - h);
  }
  std::string name_;
  Flavour f_;
  ReduceTraits t_;
  std::int64_t calls_ = 0;
};

void register_test_kernels() {
  static const bool done = [] {
    auto reg = [](const std::string& name, ReduceKind k, Flavour f) {
      register_kernel(name, Backend::Cpu, false, [=] { return std::make_unique<TestReduce>(name, k, f); }, Operation::Reduction);
    };
    reg("test_sum_f32_seq", ReduceKind::Sum, Flavour::Correct);
    reg("test_dot_f32_seq", ReduceKind::Dot, Flavour::Correct);
    reg("test_nrm2_f32_seq", ReduceKind::Nrm2, Flavour::Correct);
    reg("test_sum_f32_droplast", ReduceKind::Sum, Flavour::DropLast);
    reg("test_sum_f32_pairwise_as_seq", ReduceKind::Sum, Flavour::PairwiseClaimedSequential);
    reg("test_sum_f32_atomic", ReduceKind::Sum, Flavour::Atomic);
    reg("test_sum_f32_atomic_drop", ReduceKind::Sum, Flavour::AtomicDropLast);
    return true;
  }();
  (void)done;
}

RunResult run(const std::string& suite, const std::string& kernel) {
  register_test_kernels();
  const SuiteInfo* s = find_suite(suite);
  REQUIRE(s);
  CHECK(s->operation == Operation::Reduction);
  SuiteRunOptions opt;
  return run_suite(*s, {kernel}, opt);
}

bool any_failed(const CaseResult& c, CheckKind k) {
  return std::any_of(c.checks.begin(), c.checks.end(), [&](const CheckResult& x) { return x.kind == k && !x.passed; });
}

}  // namespace

TEST_CASE("reduce suite: correct sequential models pass every case bitwise, with evidence") {
  for (const char* k : {"test_sum_f32_seq", "test_dot_f32_seq"}) {
    CAPTURE(k);
    RunResult r = run("reduce", k);
    REQUIRE(r.cases.size() >= 10);
    std::int64_t vectors = 0;
    for (const CaseResult& c : r.cases) {
      CAPTURE(c.case_id);
      CAPTURE(c.reason);
      CHECK(c.status == CaseStatus::Pass);
      CHECK(c.tier == Tier::Bitwise);
      REQUIRE(c.reduction);
      vectors += c.reduction->vectors;
      CHECK(c.reduction->bitwise_mismatches == 0);
      CHECK(c.metrics.err_frac_max <= 1);
    }
    CHECK(vectors >= 2000);  // "a few thousand vectors"
    operation_runner(Operation::Reduction).require_evidence(r);
    CHECK(r.cases.back().case_id != "evidence");
  }
}

TEST_CASE("reduce suite: an unscaled nrm2 passes its cases and declines the overflow trap") {
  RunResult r = run("reduce", "test_nrm2_f32_seq");
  bool trap_declined = false;
  for (const CaseResult& c : r.cases) {
    CAPTURE(c.case_id);
    CAPTURE(c.reason);
    if (c.case_id == "trap_overflow" || c.case_id == "trap_mixed") {
      CHECK(c.status == CaseStatus::NotSupported);
      trap_declined = true;
    } else {
      CHECK(c.status == CaseStatus::Pass);
    }
  }
  CHECK(trap_declined);
}

TEST_CASE("reduce suite: a dropped element and an undeclared order fail bitwise") {
  for (const char* k : {"test_sum_f32_droplast", "test_sum_f32_pairwise_as_seq"}) {
    CAPTURE(k);
    const RunResult r = run("reduce_quick", k);
    int failed = 0;
    for (const CaseResult& c : r.cases) failed += any_failed(c, CheckKind::Bitwise);
    CHECK(failed > 0);
  }
}

TEST_CASE("reduce suite: a run-to-run model passes by the envelope; dropping an element fails it") {
  const RunResult ok = run("reduce", "test_sum_f32_atomic");
  bool saw_spread = false;
  for (const CaseResult& c : ok.cases) {
    CAPTURE(c.case_id);
    CAPTURE(c.reason);
    CHECK(c.status == CaseStatus::Pass);
    CHECK(c.tier == Tier::Envelope);
    saw_spread = saw_spread || !c.metrics.deterministic;
  }
  CHECK(saw_spread);  // the rotation really changed results between runs
  const RunResult bad = run("reduce", "test_sum_f32_atomic_drop");
  int failed = 0;
  for (const CaseResult& c : bad.cases) failed += any_failed(c, CheckKind::Envelope) || any_failed(c, CheckKind::Spread);
  CHECK(failed > 0);
}

TEST_CASE("reduce case record round-trips through JSON") {
  const RunResult r = run("reduce_quick", "test_sum_f32_seq");
  REQUIRE(!r.cases.empty());
  const CaseResult& c = r.cases.front();
  const CaseResult back = case_from_json(to_json(c));
  REQUIRE(back.reduction);
  CHECK(back.reduction->kind == "sum");
  CHECK(back.reduction->vectors == c.reduction->vectors);
  CHECK(back.reduction->length == c.reduction->length);
  CHECK(back.reduction->worst_bound == c.reduction->worst_bound);
  CHECK(to_json(back).dump() == to_json(c).dump());
}

}  // namespace fpcert
