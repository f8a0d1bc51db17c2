// suites/ops/reduce/reduce_suites.cpp — the reduction suites (docs/suites.md, "Reductions"): every generator family
// of generators/reduce.hpp at lengths 1 .. 4097, fitted to the kernel's kind (sums and dots: cancellation at several
// condition numbers, the whole exponent range, subnormal tails; nrm2: its overflow and underflow traps) and to its
// input format (the data are made in that format where the generators can, so condition numbers stay as asked).
#include <fmt/format.h>

#include "suites/ops/reduce/reduce_operation.hpp"

namespace fpcert {

namespace {

/// The source format the generators make data in: the kernel's input format where the families support it.
std::string source_for(const Format& f) {
  for (const char* tag : {"f32", "f16", "bf16", "e4m3", "e5m2"})
    if (f.tag == tag) return tag;
  return "f32";
}

/// Condition numbers sum_cancel can reach at n = 1000 in the source format (docs/generators.md, "sum_cancel").
std::vector<std::string> kappas(const std::string& src) {
  if (src == "f32") return {"1e2", "1e6", "1e12"};
  if (src == "bf16") return {"1e2", "1e6"};
  if (src == "f16") return {"10", "1e4"};
  return {"4"};
}

}  // namespace

std::vector<CaseSpec> reduce_cases(const std::string& suite, const ReduceTraits& t) {
  const bool quick = suite == "reduce_quick";
  const std::string src = source_for(*t.x_input);
  const std::string s = ",source=" + src;
  std::vector<CaseSpec> c;
  auto add = [&](std::string id, std::string spec, std::string note, std::string family) {
    c.push_back({std::move(id), std::move(spec), BoundVariant::Independent, std::move(note), std::move(family)});
  };
  // Random data (uniform in (-1, 1): nrm2_trap with no entry in a trap) at every length that splits a warp or a block.
  const std::vector<int> lengths = quick ? std::vector<int>{1, 33, 1000} : std::vector<int>{1, 2, 31, 32, 33, 1000, 4097};
  for (int n : lengths) {
    const int vectors = n >= 4097 ? 32 : n >= 1000 ? 128 : 256;
    add(fmt::format("uniform_n{}", n), fmt::format("nrm2_trap:vectors={},n={},fraction=0,seed={}{}", vectors, n, 11 + n, s),
        "uniform in (-1, 1)", "uniform");
  }
  if (t.x_input->specials == Specials::IEEE && t.y_input->specials == Specials::IEEE)  // inputs that can hold Inf and NaN
    add("specials", fmt::format("nrm2_trap:vectors=64,n=33,fraction=0,seed=13{}", s),
        "NaN, +Inf, -Inf and +Inf (nrm2: Inf and NaN) put into the data by the runner", "specials");
  if (t.kind != ReduceKind::Nrm2) {
    for (const std::string& k : quick ? std::vector<std::string>{kappas(src).back()} : kappas(src))
      add("cancel_kappa" + k, fmt::format("sum_cancel:vectors=128,n=1000,kappa={},seed=5{}", k, s),
          "sums with condition number " + k, "cancel");
    add("cancel_cols", fmt::format("sum_cancel:vectors=64,n=1000,kappa={},axis=col,seed=6{}", kappas(src).front(), s),
        "cancellation, vectors as columns", "cancel");
    if (!quick) {
      add("range_normal", fmt::format("sum_range:vectors=128,n=1000,mode=normal,headroom=12,seed=7{}", s),
          "exponents over the normal range", "range");
      add("range_full", fmt::format("sum_range:vectors=128,n=1000,mode=full,headroom=12,seed=8{}", s),
          "exponents over the whole range, subnormals included", "range");
      add("subnormal_tail", fmt::format("sum_range:vectors=128,n=1000,mode=subnormal_tail,seed=9{}", s),
          "a subnormal tail deciding the low bits", "range");
    }
  } else {
    const std::string acc = source_for(*t.arith.acc);
    for (const char* trap : {"overflow", "underflow", "mixed"}) {
      if (quick && std::string(trap) != "mixed") continue;
      add(fmt::format("trap_{}", trap), fmt::format("nrm2_trap:vectors=128,n=1000,trap={},acc={},fraction=0.5,seed=12{}", trap, acc, s),
          fmt::format("squares {} the accumulator's range", trap), "nrm2_trap");
    }
    if (!quick)
      add("subnormal_tail", fmt::format("sum_range:vectors=128,n=1000,mode=subnormal_tail,seed=9{}", s),
          "a subnormal tail deciding the low bits", "range");
  }
  return c;
}

std::string reduction_suite_name(const SuiteInfo& suite) {
  if (suite.operation == Operation::Reduction) return suite.name;
  return suite.name == "quick" ? "reduce_quick" : "reduce";
}

std::vector<SuiteInfo> reduce_suites() {
  auto make = [](std::string name, std::string description) {
    SuiteInfo s;
    s.name = name;
    s.description = std::move(description);
    s.operation = Operation::Reduction;
    s.cases = [name](const SuiteContext&) { return reduce_cases(name, ReduceTraits{}); };  // a sum in f32, for listings
    return s;
  };
  return {make("reduce",
               "reductions (sums, dots, nrm2): uniform data at lengths 1 .. 4097, cancellation at several condition "
               "numbers, the exponent range, subnormal tails, nrm2's traps; fitted to each kernel's kind and formats"),
          make("reduce_quick", "reductions, a few cases of the reduce suite")};
}

}  // namespace fpcert
