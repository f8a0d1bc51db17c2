// bench/attention_fa_rule.cpp — FlashAttention's own test rule beside fpcert's verdict on the same faults (issue 41,
// docs/attention.md, "FlashAttention's 2x rule"). FlashAttention's tests (tests/test_flash_attn.py) accept an output when
//   max |out - out_ref| <= 2 max |out_pt - out_ref| + 1e-5,
// out_ref the attention computed in fp32 from the same inputs and cast to the dtype, out_pt the same computed in the dtype
// (attention_ref(upcast=False, reorder_ops=True): S = q (k / sqrt(d)) rounded to the dtype after an fp32-accumulated
// product, the softmax in fp32 rounded to the dtype, P V rounded to the dtype). Here out_ref is the exact attention
// rounded once into the dtype (what an fp32 pipeline approaches) and out_pt that dtype pipeline emulated in double with a
// rounding after each of its three steps. For a kernel and each fault it carries (with_bug), on every case of the
// `attention` suite: the rule's verdict and fpcert's (the runner's case status), the fault counted caught by either when
// one of its cases fails. No assertion: the table is the measure. Usage: bench_attention_fa_rule [kernel] [--json FILE] (default
// model_attention_f16_flash; a CUDA kernel runs on the GPU); --json FILE also writes the table for `fpcert report`.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "base/codes.hpp"
#include "bench/fa_rule_args.hpp"
#include "generators/attention/attention.hpp"
#include "generators/generate.hpp"
#include "kernels/attention/attention_kernel.hpp"
#include "kernels/device/device_api.hpp"
#include "kernels/register.hpp"
#include "oracle/attention/attention_ref.hpp"
#include "oracle/round.hpp"
#include "suites/ops/attention/attention_operation.hpp"
#include "suites/ops/attention/attention_runner.hpp"

using namespace fpcert;

namespace {

double rn(const Format& f, double x) { return to_double(f, round_double(f, x, Rounder::nearest(f)).code); }

struct Case {
  CaseSpec spec;
  Problem p;
  AttentionProblemShape s;
  AttentionInputs in;
  std::vector<double> q, k, v, mask;
  std::vector<double> ref, pt;  ///< out_ref and out_pt, rows x head_dim (NaN where the row sees no key)
};

/// The dtype pipeline of FlashAttention's attention_ref(upcast=False, reorder_ops=True), emulated: k / sqrt(d) rounded to
/// the dtype, scores rounded to the dtype, softmax in fp32 (here double) rounded to the dtype, P V rounded to the dtype.
std::vector<double> dtype_pipeline(const AttentionInputs& in, const Format& f) {
  const std::int64_t d = in.head_dim, rows = in.rows();
  std::vector<double> out(static_cast<std::size_t>(rows * d), std::nan(""));
  const double inv = 1.0 / std::sqrt(static_cast<double>(d));
  const double s_over = static_cast<double>(in.scale) / inv;  // the suite's scale relative to 1/sqrt(d) (1 when it is that)
  std::vector<double> sc(static_cast<std::size_t>(in.len_k)), kk(static_cast<std::size_t>(d));
  for (std::int64_t r = 0; r < rows; ++r) {
    const double* q = in.q_row(r);
    const std::int64_t base = in.kv_base(r);
    double m = -INFINITY;
    for (std::int64_t j = 0; j < in.len_k; ++j) {
      if (!in.visible(r, j)) {
        sc[static_cast<std::size_t>(j)] = -INFINITY;
        continue;
      }
      double x = 0;
      for (std::int64_t c = 0; c < d; ++c) x += q[c] * rn(f, in.k[(base + j) * d + c] * inv);
      x = rn(f, rn(f, x * s_over) + in.mask_at(r, j));
      sc[static_cast<std::size_t>(j)] = x;
      m = std::max(m, x);
    }
    if (m == -INFINITY) continue;
    double l = 0;
    for (std::int64_t j = 0; j < in.len_k; ++j) l += sc[static_cast<std::size_t>(j)] == -INFINITY ? 0 : std::exp(sc[static_cast<std::size_t>(j)] - m);
    for (std::int64_t c = 0; c < d; ++c) {
      double o = 0;
      for (std::int64_t j = 0; j < in.len_k; ++j) {
        if (sc[static_cast<std::size_t>(j)] == -INFINITY) continue;
        o += rn(f, std::exp(sc[static_cast<std::size_t>(j)] - m) / l) * in.v[(base + j) * d + c];
      }
      out[static_cast<std::size_t>(r * d + c)] = rn(f, o);
    }
  }
  return out;
}

/// The kernel's O on the case (plain buffers, ld = head_dim), as doubles.
std::vector<double> run_kernel(AttentionKernel& kern, const Case& cs, DeviceApi& api) {
  const AttentionTraits& t = kern.attention_traits();
  const std::int64_t d = cs.s.head_dim;
  const int ib = container_bytes(*t.input), ob = container_bytes(*t.out);
  auto pack = [&](const std::vector<double>& x, const Format& f, int bytes) {
    std::vector<std::uint8_t> b(x.size() * static_cast<std::size_t>(bytes));
    for (std::size_t i = 0; i < x.size(); ++i) store_code(b.data(), static_cast<std::int64_t>(i), bytes, round_double(f, x[i], Rounder::nearest(f)).code);
    return b;
  };
  const auto hq = pack(cs.q, *t.input, ib), hk = pack(cs.k, *t.input, ib), hv = pack(cs.v, *t.input, ib);
  const auto hm = cs.mask.empty() ? std::vector<std::uint8_t>{} : pack(cs.mask, f32, 4);
  const std::size_t ob_total = cs.q.size() * static_cast<std::size_t>(ob);
  auto up = [&](const std::vector<std::uint8_t>& h) -> void* {
    if (h.empty()) return nullptr;
    void* p = api.alloc(h.size());
    api.to_device(p, h.data(), h.size());
    return p;
  };
  void *dq = up(hq), *dk = up(hk), *dv = up(hv), *dm = up(hm), *dout = api.alloc(ob_total);
  AttentionOperands o;
  o.shape = {cs.s.batch, cs.s.heads_q, cs.s.heads_kv, cs.s.len_q, cs.s.len_k, d};
  o.q = dq, o.k = dk, o.v = dv, o.mask = dm;
  o.ldq = o.ldk = o.ldv = o.ldo = d;
  o.ldm = cs.s.len_k;
  o.causal = cs.s.causal == 1 ? CausalAlign::TopLeft : cs.s.causal == 2 ? CausalAlign::BottomRight : CausalAlign::None;
  o.scale = static_cast<float>(cs.s.scale);
  o.o = dout;
  o.stream = api.stream();
  kern.run(o);
  api.synchronize(120000);
  std::vector<std::uint8_t> h(ob_total);
  api.to_host(h.data(), dout, ob_total);
  for (void* p : {dq, dk, dv, dm, dout})
    if (p) api.free(p);
  std::vector<double> out(cs.q.size());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = to_double(*t.out, load_code(h.data(), static_cast<std::int64_t>(i), ob));
  return out;
}

/// FlashAttention's rule on one case: max |out - ref| <= 2 max |pt - ref| + 1e-5 over rows that see a key (NaN anywhere
/// in out where ref is finite fails).
bool fa_rule(const std::vector<double>& out, const Case& cs, double* lhs, double* rhs) {
  double a = 0, b = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (std::isnan(cs.ref[i])) continue;  // a fully masked row: the reference tests compare nothing there
    a = std::max(a, std::isnan(out[i]) ? INFINITY : std::fabs(out[i] - cs.ref[i]));
    b = std::max(b, std::fabs(cs.pt[i] - cs.ref[i]));
  }
  *lhs = a, *rhs = 2 * b + 1e-5;
  return a <= *rhs;
}

}  // namespace

int main(int argc, char** argv) {
  std::string name = "model_attention_f16_flash", json_path;
  if (!bench::fa_rule_args(argc, argv, name, json_path)) return 2;
  register_builtin_kernels();
  std::unique_ptr<AttentionKernel> kern = make_attention_kernel(name);
  if (!kern) {
    std::fprintf(stderr, "bench_attention_fa_rule: '%s' is not an attention kernel\n", name.c_str());
    return 2;
  }
  std::unique_ptr<DeviceApi> api = kern->memory() == MemorySpace::Device ? make_cuda_api() : make_host_api();
  if (!api) {
    std::printf("bench_attention_fa_rule: %s needs a CUDA device: skipped\n", name.c_str());
    return 0;
  }
  const AttentionTraits& t = kern->attention_traits();
  const Format& f = *t.out;
  std::vector<Case> cases;
  for (const CaseSpec& cs : attention_cases("attention", t)) {
    Case c;
    c.spec = cs;
    c.p = generate(cs.spec);
    c.s = attention_shape(c.p);
    if (!kern->can_implement({c.s.batch, c.s.heads_q, c.s.heads_kv, c.s.len_q, c.s.len_k, c.s.head_dim},
                             c.s.causal == 1 ? CausalAlign::TopLeft : c.s.causal == 2 ? CausalAlign::BottomRight : CausalAlign::None, c.s.mask)
             .ok)
      continue;
    const std::int64_t d = c.s.head_dim, k0 = attention_k_row0(c.s), v0 = attention_v_row0(c.s);
    const std::int64_t nq = k0, nk = v0 - k0;
    c.q.assign(c.p.a.data.begin(), c.p.a.data.begin() + nq * d);
    c.k.assign(c.p.a.data.begin() + k0 * d, c.p.a.data.begin() + v0 * d);
    c.v.assign(c.p.a.data.begin() + v0 * d, c.p.a.data.begin() + (v0 + nk) * d);
    if (c.s.mask) c.mask = c.p.b.data;
    c.in = AttentionInputs{c.s.batch, c.s.heads_q, c.s.heads_kv, c.s.len_q, c.s.len_k, d, c.q.data(), c.k.data(), c.v.data(),
                           c.s.mask ? c.mask.data() : nullptr, c.s.scale, c.s.causal != 0,
                           c.s.causal == 2 ? c.s.len_k - c.s.len_q : 0};
    const AttentionRef r = attention_reference(c.in, f, MaskedRowPolicy::Nan, true);
    c.ref = r.value;
    for (std::size_t i = 0; i < c.ref.size(); ++i) c.ref[i] = std::isnan(r.value[i]) ? NAN : to_double(f, r.code[i]);
    c.pt = dtype_pipeline(c.in, f);
    cases.push_back(std::move(c));
  }
  std::printf("FlashAttention's rule (max|out - out_ref| <= 2 max|out_pt - out_ref| + 1e-5) beside fpcert, kernel %s, %zu cases of "
              "the attention suite\n",
              name.c_str(), cases.size());
  std::printf("%-26s %-8s %-8s  %s\n", "variant", "FA rule", "fpcert", "cases failed (FA / fpcert), worst lhs / rhs of the rule");
  const AttentionBug bugs[] = {AttentionBug::None,           AttentionBug::NoRescale,       AttentionBug::ScaleAfterSoftmax,
                               AttentionBug::CausalOffByOne, AttentionBug::LseNoMax,        AttentionBug::PRoundedLower,
                               AttentionBug::DropLastKeyBlock, AttentionBug::Zeros};
  int faults = 0, fa_caught = 0, fp_caught = 0;
  FaRuleRecord rec;
  rec.operation = "attention";
  rec.kernel = name;
  rec.suite = "attention";
  rec.rule = "max|out - out_ref| <= 2 max|out_pt - out_ref| + 1e-5";
  for (AttentionBug b : bugs) {
    std::unique_ptr<AttentionKernel> k = b == AttentionBug::None ? make_attention_kernel(name) : kern->with_bug(b);
    if (!k) continue;
    int fa_fail = 0, fp_fail = 0;
    double worst = 0;
    for (const Case& c : cases) {
      double lhs = 0, rhs = 0;
      const std::vector<double> out = run_kernel(*k, c, *api);
      if (!fa_rule(out, c, &lhs, &rhs)) ++fa_fail;
      worst = std::max(worst, lhs / rhs);
      AttentionCaseSetup setup{"attention", c.spec.id, &c.p, "", c.spec.family};
      RunOptions opt;
      opt.timed = 1;
      opt.warmups = 0;
      const CaseResult cr = run_attention_case(*k, setup, *api, opt);
      if (cr.status != CaseStatus::Pass && cr.status != CaseStatus::NotSupported) ++fp_fail;
    }
    const bool correct = b == AttentionBug::None;
    rec.rows.push_back({correct ? "correct kernel" : std::string(to_string(b)), correct, static_cast<int>(cases.size()), fa_fail, fp_fail, worst});
    if (!correct) ++faults, fa_caught += fa_fail > 0, fp_caught += fp_fail > 0;
    std::printf("%-26s %-8s %-8s  %d / %d, %.3g\n", correct ? "correct kernel" : std::string(to_string(b)).c_str(),
                fa_fail ? (correct ? "FAILS" : "caught") : (correct ? "passes" : "MISSED"),
                fp_fail ? (correct ? "FAILS" : "caught") : (correct ? "passes" : "MISSED"), fa_fail, fp_fail, worst);
  }
  std::printf("faults caught: FlashAttention's rule %d / %d, fpcert %d / %d\n", fa_caught, faults, fp_caught, faults);
  bench::write_fa_rule(rec, json_path);
  return 0;
}
