// suites/audit/audit_rows.cpp — `fpcert audit --op softmax|log_softmax|layernorm|rmsnorm --traits SPEC`: a row
// operation's declaration read from a spec (audit_rows.hpp; docs/audit.md).
#include "suites/audit/audit_rows.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <set>
#include <string_view>

#include "base/error.hpp"

namespace fpcert {

namespace {

/// key=value pairs, each key once and from `known`.
std::map<std::string, std::string> spec_keys(const std::string& spec, const std::set<std::string>& known, const char* what) {
  std::map<std::string, std::string> kv;
  std::size_t at = 0;
  while (at <= spec.size() && !spec.empty()) {
    const std::size_t end = std::min(spec.find(',', at), spec.size());
    const std::string item = spec.substr(at, end - at);
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
      throw InputError(fmt::format("audit --traits '{}': '{}' is not key=value ({})", spec, item, what));
    const std::string key = item.substr(0, eq);
    if (!known.count(key)) {
      std::string keys;
      for (const auto& k : known) keys += (keys.empty() ? "" : ", ") + k;
      throw InputError(fmt::format("audit --traits '{}': unknown key '{}' for a {} (keys: {})", spec, key, what, keys));
    }
    if (!kv.emplace(key, item.substr(eq + 1)).second) throw InputError(fmt::format("audit --traits '{}': key '{}' given twice", spec, key));
    at = end + 1;
  }
  return kv;
}

const Format& fmt_of(const std::string& spec, const std::string& key, const std::string& v, bool narrow) {
  const Format* f = find_format(v);
  const bool ok = f && (*f == f32 || (narrow && (*f == f16 || *f == bf16)));
  if (!ok)
    throw InputError(fmt::format("audit --traits '{}': {}={}: expected {}", spec, key, v, narrow ? "f32, f16 or bf16" : "f32"));
  return *f;
}

/// A positive count: decimal, nothing before or after, in [1, hi].
int count_of(const std::string& spec, const std::string& key, const std::string& v, int hi) {
  long long x = 0;
  bool ok = !v.empty() && v.size() <= 9;
  for (char ch : v) ok = ok && ch >= '0' && ch <= '9', x = x * 10 + (ch - '0');
  if (!ok || x < 1 || x > hi) throw InputError(fmt::format("audit --traits '{}': {}={}: expected a count in 1 .. {}", spec, key, v, hi));
  return static_cast<int>(x);
}

/// "ulps:N" or a bare number N (norm's rsqrt): N >= 0 finite.
double ulps_of(const std::string& spec, const std::string& key, const std::string& v) {
  try {
    std::size_t used = 0;
    const double x = std::stod(v, &used);
    if (used == v.size() && x >= 0 && std::isfinite(x)) return x;
  } catch (const std::exception&) {
  }
  throw InputError(fmt::format("audit --traits '{}': {}={}: expected a non-negative number of ulps", spec, key, v));
}

ReduceOrder order_of(const std::string& spec, const std::string& v) {
  if (v == "sequential") return ReduceOrder::sequential();
  if (v == "pairwise") return ReduceOrder::pairwise();
  if (v == "warp_tree") return ReduceOrder::warp_tree(32);
  if (v == "unknown") return ReduceOrder::unknown();
  if (v.rfind("blocked:", 0) == 0) return ReduceOrder::blocked(count_of(spec, "order=blocked:", v.substr(8), 1 << 20));
  throw InputError(fmt::format("audit --traits '{}': order={}: expected sequential, pairwise, blocked:B, warp_tree or unknown", spec, v));
}

}  // namespace

SoftmaxTraits parse_softmax_audit_traits(const std::string& spec) {
  const auto kv = spec_keys(spec, {"fn", "in", "compute", "exp", "log", "sum", "order", "shift", "block", "reciprocal", "out", "masked_rows"},
                            "softmax");
  auto get = [&](const char* k, std::string_view d) { return kv.count(k) ? kv.at(k) : std::string(d); };
  SoftmaxTraits t;
  SoftmaxArith& a = t.arith;
  const std::string fn = get("fn", "softmax");
  if (fn != "softmax" && fn != "log_softmax") throw InputError(fmt::format("audit --traits '{}': fn={}: expected softmax or log_softmax", spec, fn));
  a.fn = fn == "softmax" ? SoftmaxFn::Softmax : SoftmaxFn::LogSoftmax;
  t.x_input = &fmt_of(spec, "in", get("in", "f32"), true);
  a.compute = &fmt_of(spec, "compute", get("compute", "f32"), false);
  a.sum_acc = &fmt_of(spec, "sum", get("sum", "f32"), true);
  a.out = &fmt_of(spec, "out", get("out", t.x_input->tag), true);
  const std::string e = get("exp", "libm");
  if (e == "libm") a.exp = exp_error_libm_f32();
  else if (e == "expf") a.exp = exp_error_cuda_expf();
  else if (e == "__expf") a.exp = exp_error_cuda_fast();
  else if (e == "expf_ops") a.exp = exp_error_expf_ops(), a.exp_exact = SoftmaxExpExact::ExpfOps;
  else if (e == "cr") a.exp = ElemFnError{0.5, 0, 0, "declared correctly rounded (audit --traits exp=cr)"};
  else if (e.rfind("ulps:", 0) == 0) a.exp = ElemFnError{ulps_of(spec, "exp", e.substr(5)), 0, 0, "declared (audit --traits exp=" + e + ")"};
  else throw InputError(fmt::format("audit --traits '{}': exp={}: expected libm, expf, __expf, expf_ops, cr or ulps:N", spec, e));
  const std::string l = get("log", "libm");
  if (l == "libm") a.log = log_error_libm_f32();
  else if (l == "logf") a.log = log_error_cuda_logf();
  else if (l == "cr") a.log = ElemFnError{0.5, 0, 0, "declared correctly rounded (audit --traits log=cr)"};
  else if (l.rfind("ulps:", 0) == 0) a.log = ElemFnError{ulps_of(spec, "log", l.substr(5)), 0, 0, "declared (audit --traits log=" + l + ")"};
  else throw InputError(fmt::format("audit --traits '{}': log={}: expected libm, logf, cr or ulps:N", spec, l));
  const std::string sh = get("shift", "shifted");
  if (sh == "shifted") a.shift = SoftmaxShift::Shifted;
  else if (sh == "online") a.shift = SoftmaxShift::Online;
  else if (sh == "unshifted") a.shift = SoftmaxShift::Unshifted;
  else throw InputError(fmt::format("audit --traits '{}': shift={}: expected shifted, online or unshifted", spec, sh));
  if (kv.count("block") && a.shift != SoftmaxShift::Online) throw InputError(fmt::format("audit --traits '{}': block= goes with shift=online", spec));
  a.block = a.shift == SoftmaxShift::Online ? count_of(spec, "block", get("block", "32"), 1 << 20) : 0;
  a.sum_order = a.shift == SoftmaxShift::Online && !kv.count("order") ? ReduceOrder::blocked(a.block) : order_of(spec, get("order", "unknown"));
  const std::string rc = get("reciprocal", "0");
  if (rc != "0" && rc != "1") throw InputError(fmt::format("audit --traits '{}': reciprocal={}: expected 0 or 1", spec, rc));
  a.reciprocal = rc == "1";
  const std::string mr = get("masked_rows", "zero");
  if (mr != "zero" && mr != "nan") throw InputError(fmt::format("audit --traits '{}': masked_rows={}: expected zero or nan", spec, mr));
  t.masked_rows = mr == "zero" ? MaskedRowPolicy::Zero : MaskedRowPolicy::Nan;
  t.note = "declared by audit --traits " + spec;
  return t;
}

NormTraits parse_norm_audit_traits(const std::string& spec, NormKind kind) {
  const auto kv = spec_keys(spec, {"in", "compute", "acc", "variance", "parts", "rsqrt", "out"}, kind == NormKind::LayerNorm ? "layernorm" : "rmsnorm");
  auto get = [&](const char* k, std::string_view d) { return kv.count(k) ? kv.at(k) : std::string(d); };
  NormTraits t;
  NormArith& a = t.arith;
  a.kind = kind;
  t.x_input = &fmt_of(spec, "in", get("in", "f32"), true);
  a.compute = &fmt_of(spec, "compute", get("compute", "f32"), false);
  a.acc = &fmt_of(spec, "acc", get("acc", "f32"), true);
  a.out = &fmt_of(spec, "out", get("out", t.x_input->tag), true);
  const std::string v = get("variance", "two_pass");
  if (kind == NormKind::RmsNorm && kv.count("variance"))
    throw InputError(fmt::format("audit --traits '{}': an RMSNorm has no variance formula (its mean of squares is summed once)", spec));
  if (v == "two_pass") a.variance = NormVariance::TwoPass;
  else if (v == "welford") a.variance = NormVariance::Welford;
  else if (v == "one_pass") a.variance = NormVariance::OnePass;
  else if (v == "welford_combined") a.variance = NormVariance::WelfordCombined;
  else throw InputError(fmt::format("audit --traits '{}': variance={}: expected two_pass, welford, one_pass or welford_combined", spec, v));
  if (kv.count("parts") && a.variance != NormVariance::WelfordCombined)
    throw InputError(fmt::format("audit --traits '{}': parts= goes with variance=welford_combined", spec));
  a.welford = {WelfordShape{count_of(spec, "parts", get("parts", "32"), 1 << 20), 1}};
  a.rsqrt_ulps = ulps_of(spec, "rsqrt", get("rsqrt", "1"));
  a.rsqrt_source = "declared (audit --traits rsqrt=" + get("rsqrt", "1") + ")";
  t.note = "declared by audit --traits " + spec;
  return t;
}

}  // namespace fpcert
