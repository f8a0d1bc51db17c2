// suites/diagnose/row_hypotheses.cpp — see row_hypotheses.hpp.
#include "suites/diagnose/row_hypotheses.hpp"

#include <fmt/format.h>

#include <memory>
#include <stdexcept>

#include "base/codes.hpp"
#include "base/error.hpp"
#include "kernels/norm/norm_kernel.hpp"
#include "kernels/reduce/reduce_kernel.hpp"
#include "kernels/softmax/softmax_kernel.hpp"
#include "oracle/reduce/reduce_order.hpp"
#include "oracle/round.hpp"
#include "oracle/softmax/softmax_emulate.hpp"
#include "suites/diagnose/diagnose.hpp"
#include "suites/diagnose/norm_recipe.hpp"
#include "suites/ops/norm/norm_faults.hpp"
#include "suites/ops/reduce/reduce_faults.hpp"
#include "suites/ops/softmax/softmax_faults.hpp"

namespace fpcert {
namespace {

/// A reduction hypothesis computed by the oracle's emulation of an order (oracle/reduce/reduce_order.hpp) with the
/// accumulator's arithmetic; inputs wider than the accumulator are rounded into it first (to nearest), as a kernel that
/// loads them into that format does.
class ReduceVariant final : public ReduceKernel {
 public:
  /// t: what it declares; order: what it computes (t.order, or, where the accumulator cannot hold the inputs and the
  /// runner's bitwise tier would refuse a fixed order, an unknown order declared and `order` computed).
  ReduceVariant(std::string name, ReduceTraits t, ReduceOrder order) : name_(std::move(name)), t_(std::move(t)), order_(order) {}
  const std::string& name() const override { return name_; }
  std::string description() const override { return "diagnosis hypothesis (" + describe_reduce_traits(t_) + ")"; }
  Backend backend() const override { return Backend::Cpu; }
  bool is_mutant() const override { return true; }
  const ReduceTraits& reduce_traits() const override { return t_; }
  void run(const ReduceOperands& o) override {
    const Format& acc = *t_.arith.acc;
    const int xb = container_bytes(*t_.x_input), yb = container_bytes(*t_.y_input), ob = container_bytes(*t_.out);
    const auto load = [&](const void* p, std::int64_t at, const Format& f, int b) {
      const double v = to_double(f, from_container(f, load_code(p, at, b)));
      return f.precision() > acc.precision() ? to_double(acc, round_double(acc, v, Rounder::nearest(acc)).code) : v;
    };
    std::vector<double> x(static_cast<std::size_t>(o.length)), y(x.size());
    for (std::int64_t v = 0; v < o.count; ++v) {
      for (std::int64_t i = 0; i < o.length; ++i) {
        const bool rows = o.axis == ReduceAxis::Rows;
        x[static_cast<std::size_t>(i)] = load(o.x, rows ? v * o.ldx + i : i * o.ldx + v, *t_.x_input, xb);
        if (t_.kind == ReduceKind::Dot) y[static_cast<std::size_t>(i)] = load(o.y, rows ? v * o.ldy + i : i * o.ldy + v, *t_.y_input, yb);
      }
      double r = 0;
      try {
        r = emulate_reduce(t_.kind, x.data(), y.data(), x.size(), order_, t_.arith);
      } catch (const std::invalid_argument& e) {
        throw NotSupportedError(std::string("the emulation refuses these inputs: ") + e.what());
      }
      const Rounder ro{t_.arith.rounder.rounding, default_saturation(*t_.out), NanPayload::Preserve};
      store_code(o.out, v, ob, to_container(*t_.out, round_double(*t_.out, r, ro).code));
    }
  }

 private:
  std::string name_;
  ReduceTraits t_;
  ReduceOrder order_;
};

/// A softmax hypothesis computed by the oracle's bitwise tier (oracle/softmax/softmax_emulate.hpp).
class SoftmaxVariant final : public SoftmaxKernel {
 public:
  SoftmaxVariant(std::string name, SoftmaxTraits t) : name_(std::move(name)), t_(std::move(t)) {}
  const std::string& name() const override { return name_; }
  std::string description() const override { return "diagnosis hypothesis (" + describe_softmax_traits(t_) + ")"; }
  Backend backend() const override { return Backend::Cpu; }
  bool is_mutant() const override { return true; }
  const SoftmaxTraits& softmax_traits() const override { return t_; }
  void run(const SoftmaxOperands& o) override {
    const Format& in = *t_.x_input;
    const Format& out = *t_.arith.out;
    const int xb = container_bytes(in), ob = container_bytes(out);
    const auto n = static_cast<std::size_t>(o.cols);
    std::vector<float> x(n), m(n);
    std::vector<std::uint64_t> codes(n);
    for (std::int64_t r = 0; r < o.rows; ++r) {
      for (std::size_t j = 0; j < n; ++j) {
        const auto at = static_cast<std::int64_t>(j);
        x[j] = static_cast<float>(to_double(in, from_container(in, load_code(o.x, r * o.ldx + at, xb))));
        if (o.mask) m[j] = static_cast<float>(to_double(f32, load_code(o.mask, r * o.ldm + at, 4)));
      }
      emulate_softmax_row(t_.arith, t_.masked_rows, x.data(), o.mask ? m.data() : nullptr, o.scale, n, codes.data());
      for (std::size_t j = 0; j < n; ++j) store_code(o.out, r * o.ldo + static_cast<std::int64_t>(j), ob, to_container(out, codes[j]));
    }
  }

 private:
  std::string name_;
  SoftmaxTraits t_;
};

/// The kernel under test re-declared: its results, another declaration (the variant's bound judges them).
template <class Base, class Traits>
class DeclaredAs : public Base {
 public:
  DeclaredAs(std::string name, std::unique_ptr<Base> inner, Traits t) : name_(std::move(name)), in_(std::move(inner)), t_(std::move(t)) {}
  const std::string& name() const override { return name_; }
  std::string description() const override { return in_->description() + " (re-declared for a diagnosis)"; }
  Backend backend() const override { return in_->backend(); }
  MemorySpace memory() const override { return in_->memory(); }
  bool is_mutant() const override { return true; }

 protected:
  std::string name_;
  std::unique_ptr<Base> in_;
  Traits t_;
};

class ReduceDeclaredAs final : public DeclaredAs<ReduceKernel, ReduceTraits> {
 public:
  using DeclaredAs::DeclaredAs;
  const ReduceTraits& reduce_traits() const override { return t_; }
  Support can_implement(std::int64_t c, std::int64_t n, ReduceAxis a) const override { return in_->can_implement(c, n, a); }
  void run(const ReduceOperands& o) override { in_->run(o); }
};

class SoftmaxDeclaredAs final : public DeclaredAs<SoftmaxKernel, SoftmaxTraits> {
 public:
  using DeclaredAs::DeclaredAs;
  const SoftmaxTraits& softmax_traits() const override { return t_; }
  Support can_implement(std::int64_t r, std::int64_t c, bool m) const override { return in_->can_implement(r, c, m); }
  void run(const SoftmaxOperands& o) override { in_->run(o); }
};

class NormDeclaredAs final : public DeclaredAs<NormKernel, NormTraits> {
 public:
  using DeclaredAs::DeclaredAs;
  const NormTraits& norm_traits() const override { return t_; }
  Support can_implement(std::int64_t r, std::int64_t c) const override { return in_->can_implement(r, c); }
  void run(const NormOperands& o) override { in_->run(o); }
};

/// The row sums in bf16: the declared CPU model carrying it in its own arithmetic (with_bug, as the fault injectors ask
/// for f16; CUDA kernels do not carry it), declared with a bf16 accumulator for its envelope.
template <class Kernel, class Traits, class Bug, class AsKernel>
void bf16_sum_variant(const std::string& base, Operation op, std::unique_ptr<Kernel> (*make)(const std::string&), Bug bug,
                      Traits declared, std::vector<RowHypothesisSpec>& hs) {
  const auto k = make(base);
  if (!k || k->backend() != Backend::Cpu || !k->with_bug(bug)) return;
  const std::string name = base + "~bf16_row_sum";
  register_kernel(name, Backend::Cpu, true, [base, make, bug] { return std::unique_ptr<Kernel>(make(base)->with_bug(bug)); }, op);
  RowHypothesisSpec h;
  h.id = "sum=bf16";
  h.what = op == Operation::Softmax ? "the row sum accumulated in bf16" : "the row sums accumulated in bf16";
  h.kernel = name;
  h.declared_as = [declared, make, op](const std::string& kernel) {
    const std::string as = kernel + "@sum=bf16";
    register_kernel(as, find_kernel_info(kernel)->backend, true, [as, kernel, declared, make] { return std::make_unique<AsKernel>(as, make(kernel), declared); }, op);
    return as;
  };
  hs.push_back(std::move(h));
}

std::string traits_text(const std::string& kernel) {
  if (auto k = make_reduce_kernel(kernel)) return describe_reduce_traits(k->reduce_traits());
  if (auto k = make_softmax_kernel(kernel)) return describe_softmax_traits(k->softmax_traits());
  if (auto k = make_norm_kernel(kernel)) return describe_norm_traits(k->norm_traits());
  return {};
}

/// The model's traits text with the kernel's claims on its elementary functions (exp, log, rsqrt errors) put in: equal to
/// the kernel's text when the two declare the same arithmetic but for the accuracy of those functions.
std::string near_text(const std::string& model, const std::string& kernel) {
  if (auto m = make_softmax_kernel(model)) {
    const auto k = make_softmax_kernel(kernel);
    if (!k) return {};
    SoftmaxTraits t = m->softmax_traits();
    t.arith.exp = k->softmax_traits().arith.exp;
    t.arith.log = k->softmax_traits().arith.log;
    t.arith.exp_exact = k->softmax_traits().arith.exp_exact;
    return describe_softmax_traits(t);
  }
  if (auto m = make_norm_kernel(model)) {
    const auto k = make_norm_kernel(kernel);
    if (!k) return {};
    NormTraits t = m->norm_traits();
    t.arith.rsqrt_ulps = k->norm_traits().arith.rsqrt_ulps;
    t.arith.rsqrt_source = k->norm_traits().arith.rsqrt_source;
    return describe_norm_traits(t);
  }
  return {};
}

std::string order_tag(const ReduceOrder& o) {
  switch (o.kind) {
    case ReduceOrderKind::Sequential: return "sequential";
    case ReduceOrderKind::Pairwise: return "pairwise";
    case ReduceOrderKind::WarpTree: return fmt::format("warp{}", o.lanes);
    case ReduceOrderKind::Blocked: return fmt::format("blocked{}", o.block);
    default: return std::string(to_string(o.kind));
  }
}

/// The reduction variants of `base`: accumulators, orders, rounded products.
void reduce_variants(const std::string& base, const ReduceTraits& d, std::vector<RowHypothesisSpec>& hs, std::vector<std::string>* notes) {
  if (d.kind == ReduceKind::Nrm2 && d.scaling != Nrm2Scaling::None) {
    if (notes) notes->push_back("no numeric variants of a scaled nrm2 (the emulation computes unscaled nrm2 only)");
    return;
  }
  const bool unknown = d.order.kind == ReduceOrderKind::Unknown;
  const ReduceOrder order = unknown ? ReduceOrder::sequential() : d.order;
  const std::string in_order = unknown ? " (summed sequentially: the kernel declares no order)" : "";
  const auto add = [&](std::string id, std::string what, bool tighter, ReduceTraits t) {
    t.determinism = Determinism::Deterministic;
    t.determinism_note.clear();
    const ReduceOrder computed = t.order;
    if (!reduce_traits_problem(t).empty()) t.order = ReduceOrder::unknown();  // inputs the accumulator cannot hold: the envelope
    const std::string name = base + "~" + id;
    register_kernel(name, Backend::Cpu, true, [name, t, computed] { return std::make_unique<ReduceVariant>(name, t, computed); },
                    Operation::Reduction);
    RowHypothesisSpec h;
    h.id = id;
    h.what = std::move(what);
    h.tighter = tighter;
    h.kernel = name;
    h.declared_as = [id, t](const std::string& kernel) {
      const std::string as = kernel + "@" + id;
      register_kernel(as, find_kernel_info(kernel)->backend, true,
                      [as, kernel, t] { return std::make_unique<ReduceDeclaredAs>(as, make_reduce_kernel(kernel), t); }, Operation::Reduction);
      return as;
    };
    hs.push_back(std::move(h));
  };
  for (const Format* acc : {&f32, &f16, &bf16}) {
    if (acc == d.arith.acc || acc->precision() == d.arith.acc->precision()) continue;
    ReduceTraits t = d;
    t.arith.acc = acc;
    t.arith.rounder = Rounder{d.arith.rounder.rounding, default_saturation(*acc), NanPayload::Preserve};
    t.order = order;
    const bool narrower = acc->precision() < d.arith.acc->precision();
    add(fmt::format("acc={}", acc->tag),
        fmt::format("accumulation in {} ({}){}{}", acc->tag, narrower ? "narrower than declared" : "wider than declared",
                    acc->precision() < d.x_input->precision() ? fmt::format(", the {} inputs rounded into it first", d.x_input->tag) : "",
                    in_order),
        !narrower, t);
  }
  for (const ReduceOrder& o : {ReduceOrder::sequential(), ReduceOrder::pairwise(), ReduceOrder::warp_tree(32), ReduceOrder::blocked(256)}) {
    if (!unknown && o == d.order) continue;
    ReduceTraits t = d;
    t.order = o;
    add("order=" + order_tag(o), fmt::format("another summation order: {}{}", describe(o), unknown ? " (a member of the declared unknown order)" : ""),
        unknown, t);
  }
  if (d.kind != ReduceKind::Sum && d.arith.products == ProductRounding::Exact) {
    ReduceTraits t = d;
    t.order = order;
    t.arith.products = ProductRounding::Rounded;
    add("products=rounded", "products rounded into the accumulator before the addition (no FMA)" + in_order, false, t);
  }
}

/// The softmax variants of `base` that the bitwise tier can compute.
void softmax_variants(const std::string& base, const SoftmaxTraits& d, std::vector<RowHypothesisSpec>& hs, std::vector<std::string>* notes) {
  const auto add = [&](std::string id, std::string what, SoftmaxTraits t) {
    std::string why;
    if (!softmax_emulable(t.arith, &why)) {
      if (notes) notes->push_back(fmt::format("hypothesis {} not computed: {}", id, why));
      return;
    }
    const std::string name = base + "~" + id;
    register_kernel(name, Backend::Cpu, true, [name, t] { return std::make_unique<SoftmaxVariant>(name, t); }, Operation::Softmax);
    RowHypothesisSpec h;
    h.id = id;
    h.what = std::move(what);
    h.kernel = name;
    h.declared_as = [id, t](const std::string& kernel) {
      const std::string as = kernel + "@" + id;
      register_kernel(as, find_kernel_info(kernel)->backend, true,
                      [as, kernel, t] { return std::make_unique<SoftmaxDeclaredAs>(as, make_softmax_kernel(kernel), t); }, Operation::Softmax);
      return as;
    };
    hs.push_back(std::move(h));
  };
  if (d.arith.sum_acc->precision() > bf16.precision()) {
    SoftmaxTraits t = d;
    t.arith.sum_acc = &bf16;
    bf16_sum_variant<SoftmaxKernel, SoftmaxTraits, SoftmaxBug, SoftmaxDeclaredAs>(base, Operation::Softmax, make_softmax_kernel,
                                                                                  SoftmaxBug::Bf16RowSum, t, hs);
  }
  if (d.arith.exp_exact == SoftmaxExpExact::None) {
    SoftmaxTraits t = d;
    t.arith.exp_exact = SoftmaxExpExact::ExpfOps;
    t.arith.exp = exp_error_expf_ops();
    add("exp=expf_ops", "exp computed by operations (expf_ops: range reduction and a polynomial, 1 ulp) instead of the declared exp", t);
    return;  // the row sum's variants need the declared exp computable as well
  }
  for (const ReduceOrder& o : {ReduceOrder::sequential(), ReduceOrder::pairwise(), ReduceOrder::warp_tree(32)}) {
    if (o == d.arith.sum_order) continue;
    SoftmaxTraits t = d;
    t.arith.sum_order = o;
    add("sum_order=" + order_tag(o), fmt::format("the row sum in another order: {}", describe(o)), t);
  }
  if (d.arith.fn == SoftmaxFn::Softmax) {
    SoftmaxTraits t = d;
    t.arith.reciprocal = !d.arith.reciprocal;
    add(d.arith.reciprocal ? "division=divide" : "division=reciprocal",
        d.arith.reciprocal ? "e_j / S, one rounding, where e_j * (1 / S) is declared" : "e_j * (1 / S), two roundings, where e_j / S is declared", t);
  }
}

/// The norm variants of `base`: its declared model's recipe (suites/diagnose/norm_recipe.hpp) with one change each; and,
/// where `base` is not a CPU model (a kernel no model declares, whose own run is `declared`), the unchanged recipe too.
void norm_variants(const std::string& base, const NormTraits& d, std::vector<RowHypothesisSpec>& hs) {
  std::vector<NormRecipeChange> cs = norm_recipe_changes(d);
  if (!base.starts_with("model_"))
    cs.insert(cs.begin(), NormRecipeChange{"recipe=model", "the declaration computed as fpcert's CPU models compute it (" +
                                                               describe(norm_model_recipe(d)) + ")",
                                           norm_model_recipe(d), d});
  for (const NormRecipeChange& c : cs) {
    const std::string name = base + "~" + c.id;
    register_kernel(name, Backend::Cpu, true, [name, c] { return make_norm_recipe_kernel(name, c.traits, c.recipe); }, Operation::Norm);
    RowHypothesisSpec h;
    h.id = c.id;
    h.what = c.what;
    h.tighter = c.member;
    h.kernel = name;
    h.declared_as = [id = c.id, t = c.traits](const std::string& kernel) {
      const std::string as = kernel + "@" + id;
      register_kernel(as, find_kernel_info(kernel)->backend, true,
                      [as, kernel, t] { return std::make_unique<NormDeclaredAs>(as, make_norm_kernel(kernel), t); }, Operation::Norm);
      return as;
    };
    hs.push_back(std::move(h));
  }
}

}  // namespace

std::optional<Operation> row_operation(const std::string& kernel) {
  const KernelInfo* info = find_kernel_info(kernel);
  if (const auto tilde = kernel.find('~'); !info && tilde != std::string::npos) {  // K~fault: the mutant, registered on first use
    const FaultInfo* f = find_fault(kernel.substr(tilde + 1));
    const KernelInfo* base = find_kernel_info(kernel.substr(0, tilde));
    if (f && base && f->operation == base->operation) {
      if (f->operation == Operation::Reduction) register_reduce_mutant(base->name, f->fault);
      if (f->operation == Operation::Softmax) register_softmax_mutant(base->name, f->fault);
      if (f->operation == Operation::Norm) register_norm_mutant(base->name, f->fault);
      info = find_kernel_info(kernel);
    }
  }
  if (!info) return std::nullopt;
  if (info->operation == Operation::Reduction || info->operation == Operation::Softmax || info->operation == Operation::Norm) return info->operation;
  return std::nullopt;
}

std::string row_base_kernel(const std::string& kernel, std::string* note) {
  const auto op = row_operation(kernel);
  if (!op) throw InputError("diagnose: '" + kernel + "' is not a reduction, softmax or norm kernel");
  const auto say = [&](std::string s) {
    if (note) *note = std::move(s);
  };
  if (const auto tilde = kernel.find('~'); tilde != std::string::npos && row_operation(kernel.substr(0, tilde))) {
    std::string inner;
    const std::string b = row_base_kernel(kernel.substr(0, tilde), &inner);  // a CUDA kernel's mutant: from its CPU twin
    say(fmt::format("the kernel is {} with a fault; {}", kernel.substr(0, tilde), inner));
    return b;
  }
  if (kernel.starts_with("model_")) {
    say(fmt::format("the hypotheses are made from {} itself (a CPU model: its declaration is its arithmetic)", kernel));
    return kernel;
  }
  const std::string mine = traits_text(kernel);
  for (const KernelInfo& k : kernel_registry())
    if (k.backend == Backend::Cpu && k.operation == *op && !k.mutant && k.origin.empty() && k.name.starts_with("model_") &&
        traits_text(k.name) == mine) {
      say(fmt::format("the hypotheses are made from {}, the CPU model declaring the same arithmetic ({})", k.name, mine));
      return k.name;
    }
  for (const KernelInfo& k : kernel_registry())
    if (k.backend == Backend::Cpu && k.operation == *op && !k.mutant && k.origin.empty() && k.name.starts_with("model_") &&
        near_text(k.name, kernel) == mine) {
      say(fmt::format("the hypotheses are made from {}, the CPU model declaring the same arithmetic but for its exp / log / rsqrt "
                      "({}); elements where the kernel's own functions round otherwise are not reproduced by any hypothesis",
                      k.name, traits_text(k.name)));
      return k.name;
    }
  say(fmt::format("no CPU model declares {}'s arithmetic ({}): the hypotheses are made from the kernel itself, so its own run is "
                  "`declared` and only the envelope judges it",
                  kernel, mine));
  return kernel;
}

std::vector<Fault> row_applicable_faults(const std::string& kernel) {
  std::vector<Fault> fs;
  const auto op = row_operation(kernel);
  if (!op) return fs;
  for (const FaultInfo& fi : fault_catalogue()) {
    if (fi.operation != *op) continue;
    std::string why = "?";
    if (*op == Operation::Reduction) why = reduce_fault_not_applicable(fi.fault, make_reduce_kernel(kernel)->reduce_traits());
    if (*op == Operation::Softmax) why = softmax_fault_not_applicable(fi.fault, *make_softmax_kernel(kernel));
    if (*op == Operation::Norm) why = norm_fault_not_applicable(fi.fault, *make_norm_kernel(kernel));
    if (why.empty()) fs.push_back(fi.fault);
  }
  return fs;
}

namespace {

/// Registers `kernel` re-declared with base's traits (--declared-as: the declared envelope judged on the kernel's output).
std::function<std::string(const std::string&)> declared_as_base(const std::string& base, Operation op) {
  return [base, op](const std::string& kernel) {
    const std::string as = kernel + "@declared-as-" + base;
    const Backend b = find_kernel_info(kernel)->backend;
    if (op == Operation::Reduction) {
      const ReduceTraits t = make_reduce_kernel(base)->reduce_traits();
      register_kernel(as, b, true, [as, kernel, t] { return std::make_unique<ReduceDeclaredAs>(as, make_reduce_kernel(kernel), t); }, op);
    } else if (op == Operation::Softmax) {
      const SoftmaxTraits t = make_softmax_kernel(base)->softmax_traits();
      register_kernel(as, b, true, [as, kernel, t] { return std::make_unique<SoftmaxDeclaredAs>(as, make_softmax_kernel(kernel), t); }, op);
    } else {
      const NormTraits t = make_norm_kernel(base)->norm_traits();
      register_kernel(as, b, true, [as, kernel, t] { return std::make_unique<NormDeclaredAs>(as, make_norm_kernel(kernel), t); }, op);
    }
    return as;
  };
}

}  // namespace

std::vector<RowHypothesisSpec> row_hypothesis_specs(const std::string& base, std::vector<std::string>* notes) {
  const auto op = row_operation(base);
  if (!op) throw InputError("diagnose: '" + base + "' is not a reduction, softmax or norm kernel");
  std::vector<RowHypothesisSpec> hs;
  RowHypothesisSpec d;
  d.id = "declared";
  d.what = fmt::format("the declared arithmetic ({}, {})", base, traits_text(base));
  d.changes = 0;
  d.kernel = base;
  d.declared_as = declared_as_base(base, *op);  // used only when the kernel is judged against another's declaration
  hs.push_back(d);
  for (const Fault f : row_applicable_faults(base)) {
    RowHypothesisSpec h;
    h.id = fault_hypothesis_id(f);
    h.what = std::string(fault_info(f).what);
    h.fault = f;
    h.kernel = *op == Operation::Reduction ? register_reduce_mutant(base, f)
               : *op == Operation::Softmax ? register_softmax_mutant(base, f)
                                           : register_norm_mutant(base, f);
    hs.push_back(std::move(h));
  }
  if (*op == Operation::Reduction) reduce_variants(base, make_reduce_kernel(base)->reduce_traits(), hs, notes);
  if (*op == Operation::Softmax) softmax_variants(base, make_softmax_kernel(base)->softmax_traits(), hs, notes);
  if (*op == Operation::Norm) {
    NormTraits t = make_norm_kernel(base)->norm_traits();
    if (t.arith.acc->precision() > bf16.precision()) {
      t.arith.acc = &bf16;
      bf16_sum_variant<NormKernel, NormTraits, NormBug, NormDeclaredAs>(base, Operation::Norm, make_norm_kernel, NormBug::Bf16RowSum, t, hs);
    }
    norm_variants(base, make_norm_kernel(base)->norm_traits(), hs);
  }
  return hs;
}

}  // namespace fpcert
