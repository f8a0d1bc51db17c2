// suites/ops/gemm/epilogue_run.cpp — the bias and amax buffers of a fused-epilogue case and its grading (header).
#include "suites/ops/gemm/epilogue_run.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "base/codes.hpp"
#include "suites/ops/gemm/batch.hpp"
#include "suites/run/case_run.hpp"

namespace fpcert {

namespace {

/// Append a check; a failed one fails a passing case and joins the reason.
void add_check(CaseResult& r, CheckKind kind, bool passed, std::string detail, std::int64_t index = -1) {
  r.checks.push_back({kind, passed, std::move(detail), index});
  if (passed) return;
  if (r.status == CaseStatus::Pass) r.status = CaseStatus::Fail;
  r.reason += (r.reason.empty() ? "" : "; ") + r.checks.back().detail;
}

double amax_value(const KernelTraits& t, std::uint64_t container) { return to_double(*t.acc, from_container(*t.acc, container)); }

}  // namespace

EpilogueInputs epilogue_inputs(const KernelTraits& t, const EpilogueCase& ec, std::int64_t m, std::int64_t n) {
  EpilogueInputs in;
  in.ec = &ec;
  in.active = ec.active;
  if (!ec.active) return in;
  in.bias_format = &epilogue_bias_format(t);
  in.bias = epilogue_bias(ec, *in.bias_format, m, n);
  if (ec.fp8_scaling) {
    in.scale_a = epilogue_scalar(ec.scale_a, t);
    in.scale_b = epilogue_scalar(ec.scale_b, t);
    in.scale_d = epilogue_scalar(ec.scale_d, t);
  }
  return in;
}

EpilogueBuffers::EpilogueBuffers(DeviceApi& api, const EpilogueInputs& in, const KernelTraits& t, std::size_t guard) : in_(in), t_(t) {
  if (!in.bias.empty()) {
    const Format& f = *in.bias_format;
    const int cb = container_bytes(f);
    const auto len = static_cast<std::int64_t>(in.bias.size());
    bias_ = std::make_unique<GuardedInput>(api, encode_inputs(in.bias, f, Rounding::NearestEven), 1, len, padded_ld(len, cb), cb, guard,
                                           false, poison_code(f));
  }
  if (in.ec->amax) {
    amax_ = std::make_unique<GuardedBuffer>(api, static_cast<std::size_t>(container_bytes(*t.acc)), guard);
    before_run();
  }
}

EpilogueBuffers::~EpilogueBuffers() = default;

void EpilogueBuffers::attach(GemmOperands& ops) const {
  const EpilogueCase& ec = *in_.ec;
  ops.bias_kind = bias_ ? ec.bias : BiasKind::None;
  ops.bias = bias_ ? bias_->elements() : nullptr;
  ops.activation = ec.activation;
  ops.scale_a = in_.scale_a;
  ops.scale_b = in_.scale_b;
  ops.scale_d = in_.scale_d;
  ops.amax = amax_ ? amax_->elements() : nullptr;
}

void EpilogueBuffers::before_run() {
  if (amax_) amax_->prefill(1, 1, 1, container_bytes(*t_.acc), to_container(*t_.acc, prefill_code(*t_.acc)));
}

void EpilogueBuffers::after_run(int run, EpilogueFindings& f) {
  if (bias_) {
    const InputReport x = bias_->check();
    if (!f.bias.modified && x.modified) f.bias.first_modified = x.first_modified;
    if (!f.bias.guard_changed && x.guard_changed) f.bias.first_guard = x.first_guard;
    f.bias.modified = std::max(f.bias.modified, x.modified);
    f.bias.guard_changed = std::max(f.bias.guard_changed, x.guard_changed);
  }
  if (!amax_) return;
  f.amax_guard += amax_->download_and_check().changed;
  const std::uint64_t code = amax_->code(0, 0);
  if (run == 0) {
    f.amax_read = true;
    f.amax_code = code;
  } else if (code != f.amax_code) {
    if (!f.amax_differ++) f.first_amax_differ_run = run;
    if (std::find(f.amax_later.begin(), f.amax_later.end(), code) == f.amax_later.end()) f.amax_later.push_back(code);
  }
}

AmaxInterval grade_epilogue_matrix(const EpilogueInputs& in, const Problem& p, const KernelTraits& t, double alpha, double beta,
                                   const std::vector<double>* c, const std::vector<std::uint64_t>& codes, std::int64_t unwritten,
                                   std::int64_t first_unwritten, CaseResult& out) {
  EpilogueGrade g;
  g.problem = &p;
  g.traits = &t;
  g.epilogue = in.ec;
  g.alpha = alpha;
  g.beta = beta;
  g.c = beta != 0 ? c : nullptr;
  g.bias = in.bias.empty() ? nullptr : &in.bias;
  g.scale_a = in.scale_a;
  g.scale_b = in.scale_b;
  g.scale_d = in.scale_d;
  g.codes = &codes;
  g.unwritten = unwritten;
  g.first_unwritten = first_unwritten;
  return grade_epilogue(g, out);
}

AmaxInterval merge_amax(const std::vector<AmaxInterval>& per, std::int64_t mn) {
  AmaxInterval m;
  for (std::size_t b = 0; b < per.size(); ++b) {
    const AmaxInterval& x = per[b];
    if (b == 0) {
      m = x;
      continue;
    }
    m.lo = std::max(m.lo, x.lo);
    m.hi = std::max(m.hi, x.hi);
    if (x.exact > m.exact) m.exact = x.exact, m.index = x.index < 0 ? -1 : static_cast<std::int64_t>(b) * mn + x.index;
  }
  return m;
}

void finish_epilogue(const EpilogueInputs& in, const EpilogueFindings& f, const AmaxInterval& iv, const KernelTraits& t,
                     bool run_to_run, CaseResult& r) {
  if (!in.active || r.status == CaseStatus::NotSupported) return;
  const EpilogueCase& ec = *in.ec;
  if (ec.amax && f.amax_read) {
    check_amax(amax_value(t, f.amax_code), iv, t, r);
    if (run_to_run) {  // every distinct later amax graded on its own
      for (std::uint64_t code : f.amax_later) {
        CaseResult later;
        check_amax(amax_value(t, code), iv, t, later);
        for (const CheckResult& ch : later.checks)
          if (!ch.passed) add_check(r, CheckKind::Amax, false, "a later run's " + ch.detail);
      }
    } else {
      add_check(r, CheckKind::Nondeterministic, f.amax_differ == 0,
                f.amax_differ ? fmt::format("amax differs from the checked run's in {} later run(s), the first at run {}", f.amax_differ,
                                            f.first_amax_differ_run)
                              : "amax bitwise equal in every later run");
    }
    add_check(r, CheckKind::GuardOutput, f.amax_guard == 0,
              f.amax_guard ? fmt::format("{} guard byte(s) around amax changed: written out of bounds", f.amax_guard)
                           : "guard bytes around amax intact");
  }
  if (!in.bias.empty()) {
    add_check(r, CheckKind::GuardInputs, !f.bias.guard_changed,
              f.bias.guard_changed ? fmt::format("{} guard/padding byte(s) of the bias changed (first: {})", f.bias.guard_changed, f.bias.first_guard)
                                   : "guard bytes around the bias and in its padding unchanged");
    add_check(r, CheckKind::InputsModified, !f.bias.modified,
              f.bias.modified ? fmt::format("the bias modified by the call: {} element(s), first bias[{}]", f.bias.modified, f.bias.first_modified)
                              : "the bias unchanged after every run",
              f.bias.modified ? f.bias.first_modified : -1);
  }
  std::string s = "epilogue:";
  if (ec.bias != BiasKind::None)
    s += fmt::format(" bias per {} ({} {} values uniform in [-2, 2))", to_string(ec.bias), in.bias.size(), in.bias_format->tag);
  if (ec.activation != Activation::None) s += fmt::format("{} {}", ec.bias != BiasKind::None ? "," : "", to_string(ec.activation));
  if (ec.fp8_scaling) s += fmt::format(", scale_a = {:.9g}, scale_b = {:.9g}, scale_d = {:.9g}", in.scale_a, in.scale_b, in.scale_d);
  if (ec.amax) s += f.amax_read ? fmt::format(", amax = {:.9g} (exact max |act(Z)| {:.9g})", amax_value(t, f.amax_code), iv.exact) : ", amax asked";
  r.flags.push_back(std::move(s));
}

}  // namespace fpcert
