// bench/attention_bwd_fa_rule.cpp — FlashAttention's own test rule for the backward beside fpcert's verdict on the same
// faults (issue 45; docs/backward.md, "fpcert against FlashAttention's 2x rule"). FlashAttention's tests
// (tests/test_flash_attn.py) accept each gradient when
//   max |dq - dq_ref| <= 2 max |dq_pt - dq_ref| + 1e-5      (and so for dk, dv),
// dq_ref the gradient of the attention computed in fp32 from the same inputs, dq_pt the same computed in the dtype. Here
// dq_ref is the exact gradient (ref64: what an fp32 pipeline approaches) and dq_pt the dtype pipeline emulated in double
// with a rounding into the dtype after each step (S, P, dP, D = rowsum(P dP), dS, each GEMM). For a kernel and each fault
// it carries (with_bug), on every case of `attention_backward`: the rule's verdict and fpcert's (the runner's case status),
// a fault counted caught by either when one of its cases fails. No assertion: the table is the measure.
// Usage: bench_attention_bwd_fa_rule [kernel] [--json FILE] (default model_attention_bwd_f16_flash; a CUDA kernel runs on the
// GPU); --json FILE also writes the table for `fpcert report` (results/fa_rule.hpp).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "base/codes.hpp"
#include "bench/fa_rule_args.hpp"
#include "generators/attention/attention_bwd.hpp"
#include "generators/generate.hpp"
#include "kernels/attention/attention_backward_kernel.hpp"
#include "kernels/device/device_api.hpp"
#include "kernels/register.hpp"
#include "oracle/attention/attention_bwd_ref.hpp"
#include "oracle/round.hpp"
#include "suites/ops/attention_bwd/attention_bwd_operation.hpp"
#include "suites/ops/attention_bwd/attention_bwd_runner.hpp"

using namespace fpcert;

namespace {

double rn(const Format& f, double x) { return to_double(f, round_double(f, x, Rounder::nearest(f)).code); }

struct Case {
  CaseSpec spec;
  Problem p;
  AttentionProblemShape s;
  AttentionBwdInputs in;
  std::vector<double> o, lse;
  std::vector<double> ref, pt;  ///< dQ, dK, dV stacked (rows x head_dim each): exact, and the dtype pipeline's
};

/// The dtype pipeline (PyTorch autograd of attention_ref(upcast=False)): every step rounded into f.
std::vector<double> dtype_pipeline(const AttentionBwdInputs& bi, const Format& f) {
  const AttentionInputs& in = bi.fwd;
  const std::int64_t d = in.head_dim, rows = in.rows(), kv = bi.kv_rows();
  std::vector<double> out(static_cast<std::size_t>((rows + 2 * kv) * d), 0.0);
  double* dq = out.data();
  double* dk = dq + rows * d;
  double* dv = dk + kv * d;
  std::vector<double> acc_k(static_cast<std::size_t>(kv * d), 0.0), acc_v(acc_k.size(), 0.0);
  std::vector<double> p(static_cast<std::size_t>(in.len_k)), ds(p.size());
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t kb = in.kv_base(r);
    double m = -INFINITY;
    for (std::int64_t j = 0; j < in.len_k; ++j) {
      double x = 0;
      for (std::int64_t c = 0; c < d; ++c) x += in.q_row(r)[c] * in.k[(kb + j) * d + c];
      p[static_cast<std::size_t>(j)] = in.visible(r, j) ? rn(f, rn(f, in.scale * x) + in.mask_at(r, j)) : -INFINITY;
      m = std::max(m, p[static_cast<std::size_t>(j)]);
    }
    if (m == -INFINITY) continue;
    double l = 0;
    for (double z : p) l += z == -INFINITY ? 0 : std::exp(z - m);
    for (double& z : p) z = z == -INFINITY ? 0 : rn(f, std::exp(z - m) / l);
    double dd = 0;
    for (std::int64_t j = 0; j < in.len_k; ++j) {
      double dp = 0;
      for (std::int64_t c = 0; c < d; ++c) dp += bi.d_o[r * d + c] * in.v[(kb + j) * d + c];
      ds[static_cast<std::size_t>(j)] = rn(f, dp);
      dd += p[static_cast<std::size_t>(j)] * ds[static_cast<std::size_t>(j)];
    }
    dd = rn(f, dd);
    for (std::int64_t j = 0; j < in.len_k; ++j)
      ds[static_cast<std::size_t>(j)] = rn(f, p[static_cast<std::size_t>(j)] * rn(f, ds[static_cast<std::size_t>(j)] - dd));
    for (std::int64_t c = 0; c < d; ++c) {
      double x = 0;
      for (std::int64_t j = 0; j < in.len_k; ++j) x += ds[static_cast<std::size_t>(j)] * in.k[(kb + j) * d + c];
      dq[r * d + c] = rn(f, in.scale * rn(f, x));
    }
    for (std::int64_t j = 0; j < in.len_k; ++j)
      for (std::int64_t c = 0; c < d; ++c) {
        acc_k[static_cast<std::size_t>((kb + j) * d + c)] += ds[static_cast<std::size_t>(j)] * in.q_row(r)[c];
        acc_v[static_cast<std::size_t>((kb + j) * d + c)] += p[static_cast<std::size_t>(j)] * bi.d_o[r * d + c];
      }
  }
  for (std::size_t e = 0; e < acc_k.size(); ++e) dk[e] = rn(f, in.scale * rn(f, acc_k[e])), dv[e] = rn(f, acc_v[e]);
  return out;
}

/// The kernel's dQ, dK, dV on the case (plain buffers, ld = head_dim), stacked, as doubles.
std::vector<double> run_kernel(AttentionBwdKernel& kern, const Case& cs, DeviceApi& api) {
  const AttentionBwdTraits& t = kern.attention_bwd_traits();
  const AttentionInputs& in = cs.in.fwd;
  const std::int64_t d = in.head_dim, rows = in.rows(), kv = cs.in.kv_rows();
  const int ib = container_bytes(*t.input), ob = container_bytes(*t.dq_out);
  auto up = [&](const double* x, std::size_t n, const Format& f, int bytes) -> void* {
    if (!x) return nullptr;
    std::vector<std::uint8_t> b(n * static_cast<std::size_t>(bytes));
    for (std::size_t i = 0; i < n; ++i)
      store_code(b.data(), static_cast<std::int64_t>(i), bytes, to_container(f, round_double(f, x[i], Rounder::nearest(f)).code));
    void* p = api.alloc(b.size());
    api.to_device(p, b.data(), b.size());
    return p;
  };
  const auto nq = static_cast<std::size_t>(rows * d), nk = static_cast<std::size_t>(kv * d);
  void *q = up(in.q, nq, *t.input, ib), *k = up(in.k, nk, *t.input, ib), *v = up(in.v, nk, *t.input, ib), *o = up(cs.o.data(), nq, *t.input, ib);
  void *g = up(cs.in.d_o, nq, *t.input, ib), *l = up(cs.lse.data(), cs.lse.size(), f32, 4);
  void* m = in.mask ? up(in.mask, static_cast<std::size_t>(in.len_q * in.len_k), f32, 4) : nullptr;
  const std::size_t total = (nq + 2 * nk) * static_cast<std::size_t>(ob);
  void* out = api.alloc(total);
  AttentionBwdOperands op;
  op.shape = {in.batch, in.heads_q, in.heads_kv, in.len_q, in.len_k, d};
  op.q = q, op.k = k, op.v = v, op.o = o, op.d_o = g, op.lse = l, op.mask = m;
  op.ldq = op.ldk = op.ldv = op.ldo = op.lddo = op.lddq = op.lddk = op.lddv = d;
  op.ldm = in.len_k;
  op.causal = cs.s.causal == 1 ? CausalAlign::TopLeft : cs.s.causal == 2 ? CausalAlign::BottomRight : CausalAlign::None;
  op.scale = static_cast<float>(cs.s.scale);
  op.dq = out;
  op.dk = static_cast<std::uint8_t*>(out) + nq * static_cast<std::size_t>(ob);
  op.dv = static_cast<std::uint8_t*>(out) + (nq + nk) * static_cast<std::size_t>(ob);
  op.stream = api.stream();
  kern.run(op);
  api.synchronize(120000);
  std::vector<std::uint8_t> h(total);
  api.to_host(h.data(), out, total);
  for (void* p : {q, k, v, o, g, l, m, out})
    if (p) api.free(p);
  std::vector<double> r(nq + 2 * nk);
  for (std::size_t i = 0; i < r.size(); ++i) {
    const Format& f = i < nq ? *t.dq_out : i < nq + nk ? *t.dk_out : *t.dv_out;
    r[i] = to_double(f, from_container(f, load_code(h.data(), static_cast<std::int64_t>(i), ob)));
  }
  return r;
}

/// FlashAttention's rule on dQ, dK and dV of one case; worst lhs / rhs returned in `ratio`.
bool fa_rule(const std::vector<double>& out, const Case& cs, double& ratio) {
  const std::size_t nq = static_cast<std::size_t>(cs.in.fwd.rows() * cs.in.fwd.head_dim), nk = static_cast<std::size_t>(cs.in.kv_rows() * cs.in.fwd.head_dim);
  bool ok = true;
  ratio = 0;
  for (auto [b, e] : {std::pair{std::size_t{0}, nq}, std::pair{nq, nq + nk}, std::pair{nq + nk, nq + 2 * nk}}) {
    double a = 0, pt = 0;
    for (std::size_t i = b; i < e; ++i) {
      if (std::isnan(cs.ref[i])) continue;
      a = std::max(a, std::isnan(out[i]) ? INFINITY : std::fabs(out[i] - cs.ref[i]));
      pt = std::max(pt, std::fabs(cs.pt[i] - cs.ref[i]));
    }
    const double rhs = 2 * pt + 1e-5;
    ratio = std::max(ratio, a / rhs);
    ok = ok && a <= rhs;
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  std::string name = "model_attention_bwd_f16_flash", json_path;
  if (!bench::fa_rule_args(argc, argv, name, json_path)) return 2;
  register_builtin_kernels();
  std::unique_ptr<AttentionBwdKernel> kern = make_attention_bwd_kernel(name);
  if (!kern) {
    std::fprintf(stderr, "bench_attention_bwd_fa_rule: '%s' is not an attention backward kernel\n", name.c_str());
    return 2;
  }
  std::unique_ptr<DeviceApi> api = kern->memory() == MemorySpace::Device ? make_cuda_api() : make_host_api();
  if (!api) {
    std::printf("bench_attention_bwd_fa_rule: %s needs a CUDA device: skipped\n", name.c_str());
    return 0;
  }
  const AttentionBwdTraits& t = kern->attention_bwd_traits();
  std::vector<Case> cases;
  for (const CaseSpec& cs : attention_bwd_cases("attention_backward", t)) {
    Case c;
    c.spec = cs;
    c.p = generate(cs.spec);
    c.s = attention_shape(c.p);
    const CausalAlign ca = c.s.causal == 1 ? CausalAlign::TopLeft : c.s.causal == 2 ? CausalAlign::BottomRight : CausalAlign::None;
    if (!kern->can_implement({c.s.batch, c.s.heads_q, c.s.heads_kv, c.s.len_q, c.s.len_k, c.s.head_dim}, ca, c.s.mask).ok) continue;
    const std::int64_t d = c.s.head_dim;
    AttentionInputs& in = c.in.fwd;
    in = AttentionInputs{c.s.batch, c.s.heads_q, c.s.heads_kv, c.s.len_q, c.s.len_k, d, c.p.a.data.data(),
                         c.p.a.data.data() + attention_k_row0(c.s) * d, c.p.a.data.data() + attention_v_row0(c.s) * d,
                         c.s.mask ? c.p.b.data.data() : nullptr, c.s.scale, c.s.causal != 0, c.s.causal == 2 ? c.s.len_k - c.s.len_q : 0};
    const AttentionRef fwd = attention_reference(in, *t.input, MaskedRowPolicy::Zero, t.masked_lse == MaskedLse::PosInf);
    c.o.resize(fwd.code.size());
    c.lse.resize(fwd.lse_code.size());
    for (std::size_t e = 0; e < c.o.size(); ++e) c.o[e] = to_double(*t.input, fwd.code[e]);
    for (std::size_t e = 0; e < c.lse.size(); ++e) c.lse[e] = to_double(f32, fwd.lse_code[e]);
    c.in.o = c.o.data();
    c.in.lse = c.lse.data();
    c.in.d_o = c.p.a.data.data() + attention_do_row0(c.s) * d;
    c.in.reads_saved = t.reads_saved;
    const AttentionBwdRef r = attention_bwd_reference(c.in, *t.dq_out, *t.dk_out, *t.dv_out);
    c.ref = r.dq_value;
    c.ref.insert(c.ref.end(), r.dk_value.begin(), r.dk_value.end());
    c.ref.insert(c.ref.end(), r.dv_value.begin(), r.dv_value.end());
    c.pt = dtype_pipeline(c.in, *t.input);
    cases.push_back(std::move(c));
  }
  std::printf("FlashAttention's backward rule (max|g - g_ref| <= 2 max|g_pt - g_ref| + 1e-5 for dq, dk, dv) beside fpcert, kernel %s, "
              "%zu cases of attention_backward\n", name.c_str(), cases.size());
  std::printf("%-22s %-8s %-8s  %s\n", "variant", "FA rule", "fpcert", "cases failed (FA / fpcert), worst lhs / rhs of the rule");
  const AttentionBwdBug bugs[] = {AttentionBwdBug::None,         AttentionBwdBug::DFromWrongO,   AttentionBwdBug::NoDSubtract,
                                  AttentionBwdBug::DqScaleMissing, AttentionBwdBug::DqScaleTwice, AttentionBwdBug::LseWrongBase,
                                  AttentionBwdBug::GqaNotSummed,  AttentionBwdBug::DqAtomicsBf16, AttentionBwdBug::CausalOffByOne,
                                  AttentionBwdBug::Zeros};
  int faults = 0, fa_caught = 0, fp_caught = 0;
  FaRuleRecord rec;
  rec.operation = "attention_backward";
  rec.kernel = name;
  rec.suite = "attention_backward";
  rec.rule = "max|g - g_ref| <= 2 max|g_pt - g_ref| + 1e-5 for dq, dk, dv";
  for (AttentionBwdBug b : bugs) {
    std::unique_ptr<AttentionBwdKernel> k = b == AttentionBwdBug::None ? make_attention_bwd_kernel(name) : kern->with_bug(b);
    if (!k) continue;
    int fa_fail = 0, fp_fail = 0;
    double worst = 0;
    for (const Case& c : cases) {
      double ratio = 0;
      if (!fa_rule(run_kernel(*k, c, *api), c, ratio)) ++fa_fail;
      worst = std::max(worst, ratio);
      AttentionBwdCaseSetup setup{"attention_backward", c.spec.id, &c.p, "", c.spec.family};
      RunOptions opt;
      opt.timed = 1;
      opt.warmups = 0;
      const CaseResult cr = run_attention_bwd_case(*k, setup, *api, opt);
      if (cr.status != CaseStatus::Pass && cr.status != CaseStatus::NotSupported) ++fp_fail;
    }
    const bool correct = b == AttentionBwdBug::None;
    rec.rows.push_back({correct ? "correct kernel" : std::string(to_string(b)), correct, static_cast<int>(cases.size()), fa_fail, fp_fail, worst});
    if (!correct) ++faults, fa_caught += fa_fail > 0, fp_caught += fp_fail > 0;
    std::printf("%-22s %-8s %-8s  %d / %d, %.3g\n", correct ? "correct kernel" : std::string(to_string(b)).c_str(),
                fa_fail ? (correct ? "FAILS" : "caught") : (correct ? "passes" : "MISSED"),
                fp_fail ? (correct ? "FAILS" : "caught") : (correct ? "passes" : "MISSED"), fa_fail, fp_fail, worst);
  }
  std::printf("faults caught: FlashAttention's rule %d / %d, fpcert %d / %d\n", fa_caught, faults, fp_caught, faults);
  bench::write_fa_rule(rec, json_path);
  return 0;
}
