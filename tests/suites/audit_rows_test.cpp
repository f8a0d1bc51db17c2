// tests/suites/audit_rows_test.cpp — `fpcert audit` of the row operations (suites/audit/audit_softmax.cpp,
// audit_norm.cpp, audit_rows.hpp; docs/audit.md, "Softmax" and "Normalisation"): log-softmax, masks and scales, the
// test's own logits, the online evaluation, declarations by --traits, and LayerNorm / RMSNorm. Each expectation is
// derived here (long double references, hand counts, the models' own arithmetic restated), not copied from output.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <limits>

#include <fmt/format.h>

#include "base/error.hpp"
#include "base/npy.hpp"
#include "generators/generate.hpp"
#include "generators/norm/norm.hpp"
#include "generators/softmax.hpp"
#include "results/audit.hpp"
#include "suites/audit/audit.hpp"
#include "suites/audit/audit_rows.hpp"

using namespace fpcert;

namespace {

const AuditMutantRow* mrow(const AuditRecord& r, const std::string& id) {
  for (const AuditMutantRow& m : r.mutants)
    if (m.mutant == id) return &m;
  return nullptr;
}
const AuditVariantRow* vrow(const AuditRecord& r, const std::string& name) {
  for (const AuditVariantRow& v : r.variants)
    if (v.name == name) return &v;
  return nullptr;
}

AuditOptions rows_audit(const char* op, const char* kernel, std::int64_t m, std::int64_t n, const char* inputs, const char* rule) {
  AuditOptions o;
  o.op = op;
  o.kernel = kernel;
  o.m = m, o.n = n;
  o.inputs = inputs;
  o.seeds = {1, 2};
  o.rule = parse_audit_rule(rule);
  return o;
}

/// Round to the nearest float (ties to even) through the FPU: an fp32 rounding independent of fpcert's Format code.
double to_f32(long double x) { return static_cast<double>(static_cast<float>(x)); }

}  // namespace

TEST_CASE("audit --op log_softmax: atol 1e-5 is unsatisfiable on logits spread over 2048 (softmax's same rule is not)") {
  // Log-softmax outputs are z_j - max - log S: down to about -2048 here. An f32 ulp at |y| in [256, 2048) is 2^-15 .. 2^-12,
  // half of it above 1e-5 from |y| >= 256 on: there RN_f32(y) itself misses atol = 1e-5 unless y lies close to a float.
  AuditOptions o = rows_audit("log_softmax", "model_log_softmax_f32_shifted", 16, 256, "softmax:spread=2048", "allclose:rtol=0,atol=1e-5");
  o.mutants = false;
  std::int64_t expect = 0, total = 0;
  for (std::uint64_t seed : o.seeds) {
    const Problem p = generate(fmt::format("softmax:spread=2048,rows=16,cols=256,seed={},source=f32", seed));
    for (std::int64_t i = 0; i < 16; ++i) {
      long double mx = -INFINITY, s = 0;
      for (std::int64_t j = 0; j < 256; ++j) mx = std::max<long double>(mx, softmax_logit(p, i, j));
      for (std::int64_t j = 0; j < 256; ++j) s += std::exp(static_cast<long double>(softmax_logit(p, i, j)) - mx);
      for (std::int64_t j = 0; j < 256; ++j) {
        const long double y = softmax_logit(p, i, j) - mx - std::log(s);
        expect += std::fabs(static_cast<long double>(to_f32(y)) - y) > 1e-5L;
        ++total;
      }
    }
  }
  REQUIRE(expect > total / 2);  // most outputs are large negatives: the derivation's premise
  const AuditRecord r = run_audit(o);
  CHECK(r.op == "log_softmax");
  CHECK(r.elements == total);
  CHECK(std::llabs(r.cr_fail - expect) <= 2);  // double rounding of the long double reference: a boundary case or two at most
  CHECK(r.cr_fail_runs == 2);
  CHECK(r.false_alarm_runs == r.variant_runs);  // every correct arithmetic fails on every seed
  CHECK(audit_finds_wanting(r));
  // the same rule on softmax of the same logits: outputs in [0, 1], half an ulp at most 2^-25: satisfiable, no false alarm
  AuditOptions s = rows_audit("softmax", "model_softmax_f32_shifted", 16, 256, "softmax:spread=2048", "allclose:rtol=0,atol=1e-5");
  s.mutants = false;
  const AuditRecord rs = run_audit(s);
  CHECK(rs.cr_fail_runs == 0);
  CHECK(rs.false_alarm_runs == 0);
  // the operation must match the kernel's declaration
  o.op = "softmax";
  CHECK_THROWS_WITH_AS(run_audit(o), doctest::Contains("declares a log_softmax"), InputError);
}

TEST_CASE("audit --op softmax: masks and scales; fully masked rows under the NaN policy make allclose unsatisfiable") {
  // mask=rows: every fourth row fully masked. torch.softmax's policy gives NaN there, in the reference and in every
  // correct output; allclose with equal_nan off fails NaN against NaN: no kernel can pass.
  AuditOptions o = rows_audit("softmax", "model_softmax_f32_shifted_nanrows", 16, 64, "softmax:mask=rows,scale=0.125", "allclose:rtol=1e-5,atol=1e-8");
  o.mutants = false;
  const AuditRecord r = run_audit(o);
  CHECK(r.cr_fail_runs == 2);
  CHECK(r.false_alarm_runs == 0);  // on the finite elements every correct arithmetic meets the rule
  CHECK(r.elements == 2 * 12 * 64);  // the rule sees the 12 rows of 16 that are not fully masked
  bool said = false;
  for (const std::string& f : r.findings) said = said || (f.find("equal_nan=False") != std::string::npos && f.find("512 element(s)") != std::string::npos);
  CHECK(said);
  o.rule = parse_audit_rule("fpcert");
  CHECK(run_audit(o).cr_fail_runs == 0);  // fpcert grades special values as the declared policy's
  o.rule = parse_audit_rule("allclose:rtol=1e-5,atol=1e-8,equal_nan=1");  // the test written with equal_nan=True
  const AuditRecord eq = run_audit(o);
  CHECK(eq.cr_fail_runs == 0);
  CHECK(eq.false_alarm_runs == 0);
  CHECK_THROWS_WITH_AS(parse_audit_rule("allclose:equal_nan=2"), doctest::Contains("equal_nan is 0 or 1"), InputError);
  CHECK_THROWS_WITH_AS(parse_audit_rule("maxabs:tol=1,equal_nan=1"), doctest::Contains("unknown key 'equal_nan'"), InputError);
  // a zero policy: masked entries are +0 and part of the rule; the fault "NaN for fully masked rows" fails the rule,
  // the fault "mask after exp" (masked entries in the normaliser) is refused by fpcert
  AuditOptions z = rows_audit("softmax", "model_softmax_f32_shifted", 16, 64, "softmax:mask=rows,scale=0.125", "allclose:rtol=1e-5,atol=1e-8");
  const AuditRecord rz = run_audit(z);
  CHECK(rz.cr_fail_runs == 0);
  CHECK(rz.false_alarm_runs == 0);
  CHECK(rz.elements == 2 * 16 * 64);
  const AuditMutantRow* nan_rows = mrow(rz, "smx_nan_masked_rows");
  REQUIRE(nan_rows != nullptr);
  CHECK(nan_rows->dormant == 0);
  CHECK(nan_rows->rule_passed == 0);
  const AuditMutantRow* after = mrow(rz, "smx_mask_after_exp");
  REQUIRE(after != nullptr);
  CHECK(after->fpcert_refused == 2);
  CHECK(after->rule_passed == 0);
}

TEST_CASE("audit --op softmax: the online evaluation and the declared --traits compute what the models compute, bit for bit") {
  // model_softmax_f32_online_b32 runs the online normaliser in blocks of 32 in fp32 with fl32(exp): the audit's
  // "online blocks of 32" row restates that arithmetic, so its normwise error ratio (relfro: every element counts)
  // equals the kernel's own (the same outputs), and another arithmetic's differs.
  AuditOptions o = rows_audit("softmax", "model_softmax_f32_online_b32", 8, 300, "softmax:spread=16", "relfro:tol=1e-8");
  o.mutants = false;
  const AuditRecord r = run_audit(o);
  const AuditVariantRow* k = vrow(r, "kernel model_softmax_f32_online_b32");
  const AuditVariantRow* on = vrow(r, "exp rn, online blocks of 32");
  const AuditVariantRow* seq = vrow(r, "exp rn, sum sequential");
  REQUIRE((k && on && seq));
  CHECK(on->worst_ratio == k->worst_ratio);
  CHECK(seq->worst_ratio != k->worst_ratio);  // the shifted sequential evaluation is another arithmetic on these rows
  // with fpcert's own bound as the rule, no admissible arithmetic (online ones included) fails
  o.rule = parse_audit_rule("fpcert");
  CHECK(run_audit(o).false_alarm_runs == 0);

  // --traits: a bf16 softmax with fl32(exp) and a sequential fp32 row sum is model_softmax_bf16_shifted's arithmetic
  AuditOptions m = rows_audit("softmax", "model_softmax_bf16_shifted", 8, 300, "softmax", "relfro:tol=1e-4");
  AuditOptions t = m;
  t.kernel.clear();
  t.traits = "in=bf16,exp=libm,order=sequential";
  const AuditRecord rm = run_audit(m), rt = run_audit(t);
  CHECK(rt.kernel == "traits:in=bf16,exp=libm,order=sequential");
  REQUIRE(rm.variants.size() == rt.variants.size());
  CHECK(rt.variants[0].worst_ratio == rm.variants[0].worst_ratio);
  CHECK(rt.variants[0].rule_failed == rm.variants[0].rule_failed);
  // the declaration's stand-in carries the catalogue's faults in its own arithmetic: the same power table
  REQUIRE(rm.mutants.size() == rt.mutants.size());
  for (std::size_t i = 0; i < rm.mutants.size(); ++i) {
    CHECK(rt.mutants[i].mutant == rm.mutants[i].mutant);
    CHECK_MESSAGE(rt.mutants[i].rule_passed == rm.mutants[i].rule_passed, rm.mutants[i].mutant);
    CHECK_MESSAGE(rt.mutants[i].fpcert_refused == rm.mutants[i].fpcert_refused, rm.mutants[i].mutant);
  }
  // bad declarations
  CHECK_THROWS_WITH_AS(parse_softmax_audit_traits("in=f32,acc=f32"), doctest::Contains("unknown key 'acc'"), InputError);
  CHECK_THROWS_WITH_AS(parse_softmax_audit_traits("block=64"), doctest::Contains("block= goes with shift=online"), InputError);
  CHECK_THROWS_WITH_AS(parse_softmax_audit_traits("exp=fast"), doctest::Contains("exp=fast"), InputError);
  CHECK_THROWS_WITH_AS(parse_softmax_audit_traits("in=f8"), doctest::Contains("in=f8"), InputError);
  CHECK(parse_softmax_audit_traits("fn=log_softmax,shift=online,block=64").arith.sum_order.block == 64);
  t.traits = "in=bf16";
  t.kernel = "model_softmax_bf16_shifted";
  CHECK_THROWS_WITH_AS(run_audit(t), doctest::Contains("--kernel K"), InputError);  // one of the two
}

TEST_CASE("audit --op softmax --a logits.npy: the test's own logits, -Inf entries as the mask, rounded into the input format") {
  const std::string path = (std::filesystem::temp_directory_path() / fmt::format("fpcert_audit_rows_{}_logits.npy", ::getpid())).string();
  // 4 x 40 fp32 logits k/8 - 2 (exact in f32; in bf16 from 8 significant bits on: |k/8 - 2| < 32 always is), row 2 masked
  // after its first 3 entries; 1/3 in row 0 column 0 (not a bf16 value: rounded)
  std::vector<double> x(160);
  for (std::size_t e = 0; e < x.size(); ++e) x[e] = static_cast<double>(e % 40) / 8 - 2;
  x[0] = static_cast<double>(1.0f / 3.0f);
  for (std::size_t j = 3; j < 40; ++j) x[2 * 40 + j] = -std::numeric_limits<double>::infinity();
  write_npy_f32(path, 4, 40, x);
  const AuditTensors t = read_audit_logits(path);
  CHECK(t.m == 4);
  CHECK(t.n == 40);
  AuditOptions o = rows_audit("softmax", "model_softmax_bf16_shifted", 0, 0, "softmax", "fpcert");
  o.tensors = &t;
  o.m = t.m, o.n = t.n;
  const AuditRecord r = run_audit(o);
  CHECK(r.seeds.size() == 1);
  CHECK(r.elements == 160);
  CHECK(r.false_alarm_runs == 0);
  bool rounded = false;
  for (const std::string& f : r.findings) rounded = rounded || f.find("1 of the 160 logits are not values of bf16") != std::string::npos;
  CHECK(rounded);
  // masked entries give +0 (a zero policy): the mutant computing the mask after the exp is caught by fpcert
  const AuditMutantRow* after = mrow(r, "smx_mask_after_exp");
  REQUIRE(after != nullptr);
  CHECK(after->dormant == 0);
  CHECK(after->fpcert_refused == 1);
  // bad files: a NaN, a +Inf
  x[5] = std::numeric_limits<double>::quiet_NaN();
  write_npy_f32(path, 4, 40, x);
  CHECK_THROWS_WITH_AS(read_audit_logits(path), doctest::Contains("NaN at [0, 5]"), InputError);
  x[5] = std::numeric_limits<double>::infinity();
  write_npy_f32(path, 4, 40, x);
  CHECK_THROWS_WITH_AS(read_audit_logits(path), doctest::Contains("+Inf at [0, 5]"), InputError);
  std::filesystem::remove(path);
}

TEST_CASE("audit --op layernorm: atol = rtol = 1e-5 on bf16 outputs is unsatisfiable; allclose 1e-2 passes a wrong eps and bf16 statistics") {
  // bf16 keeps 8 significant bits: RN_bf16(y) errs by up to 2^-9 |y|, about uniform, so it misses 1e-5 (1 + |y|) on all
  // but ~1 % of outputs of magnitude ~1 (LayerNorm's, times gamma in [0.5, 1.5], plus beta in [-1, 1]).
  AuditOptions o = rows_audit("layernorm", "model_layernorm_bf16_twopass", 16, 1024, "norm", "allclose:rtol=1e-5,atol=1e-5");
  o.seeds = {1, 2, 3};
  o.mutants = false;
  const AuditRecord r = run_audit(o);
  CHECK(r.op == "layernorm");
  CHECK(r.cr_fail_runs == 3);
  CHECK(r.cr_fail > r.elements * 9 / 10);
  for (const AuditVariantRow& v : r.variants) {
    CHECK_MESSAGE(v.rule_failed == v.runs, v.name);
    CHECK_MESSAGE(v.labels.count("unsatisfiable tolerance") == 1, v.name);
  }
  // allclose 1e-2: eps 1e-3 instead of 1e-5 moves y by about (1e-3 - 1e-5) / (2 var) = 1.5e-3 relative (var = 2^2 / 12
  // for the default spread 2), under 1e-2 (1 + |y|); bf16 statistics move the mean by up to 2^-9 |mean| and the variance
  // by 2^-9 relative: both pass the rule, and fpcert's bound (a few bf16 ulps at most) refuses them
  o.rule = parse_audit_rule("allclose:rtol=1e-2,atol=1e-2");
  o.mutants = true;
  const AuditRecord loose = run_audit(o);
  CHECK(loose.cr_fail_runs == 0);
  CHECK(loose.false_alarm_runs == 0);
  for (const char* id : {"eps_x100", "stats_bf16"}) {
    const AuditMutantRow* m = mrow(loose, id);
    REQUIRE_MESSAGE(m != nullptr, id);
    CHECK_MESSAGE(m->dormant == 0, id);
    CHECK_MESSAGE(m->rule_passed == 3, id);
    CHECK_MESSAGE(m->fpcert_refused == 3, id);
    CHECK_MESSAGE(m->defect < 1e-2, id);
  }
  for (const char* id : {"norm_affine_swapped", "norm_zeros", "constant"}) {  // gross faults: the rule sees them
    const AuditMutantRow* m = mrow(loose, id);
    REQUIRE_MESSAGE(m != nullptr, id);
    CHECK_MESSAGE(m->rule_passed == 0, id);
  }
  CHECK(audit_finds_wanting(loose));
}

TEST_CASE("audit --op layernorm|rmsnorm: the sampled arithmetic restates the models', and fpcert's bound holds over it") {
  // the models compute in fp32 with a sequential row sum: the audit's sequential rows give the kernel's outputs
  struct Case {
    const char *op, *kernel, *row;
  };
  for (const Case& c : {Case{"layernorm", "model_layernorm_f32_twopass", "two_pass, sums sequential"},
                        Case{"layernorm", "model_layernorm_f32_welford", "welford"},
                        Case{"layernorm", "model_layernorm_f32_welford_w32", "welford_combined"},
                        Case{"layernorm", "model_layernorm_f32_onepass", "one_pass, sums sequential"},
                        Case{"rmsnorm", "model_rmsnorm_f16", "mean of squares, sums sequential"}}) {
    AuditOptions o = rows_audit(c.op, c.kernel, 8, 777, "norm:offset=3", "relfro:tol=1e-9");  // every element in the ratio
    o.mutants = false;
    const AuditRecord r = run_audit(o);
    const AuditVariantRow* k = vrow(r, std::string("kernel ") + c.kernel);
    const AuditVariantRow* v = vrow(r, c.row);
    REQUIRE_MESSAGE((k && v), c.kernel);
    CHECK_MESSAGE(v->worst_ratio == k->worst_ratio, c.kernel);
    o.rule = parse_audit_rule("fpcert");
    CHECK_MESSAGE(run_audit(o).false_alarm_runs == 0, c.kernel);
  }
  // --traits: in=bf16 declares model_layernorm_bf16_twopass's arithmetic; an RMSNorm takes no variance key
  AuditOptions t = rows_audit("layernorm", "", 8, 300, "norm", "relfro:tol=1e-4");
  t.traits = "in=bf16";
  AuditOptions m = t;
  m.traits.clear();
  m.kernel = "model_layernorm_bf16_twopass";
  const AuditRecord rt = run_audit(t), rm = run_audit(m);
  CHECK(rt.variants[0].worst_ratio == rm.variants[0].worst_ratio);
  REQUIRE(rt.mutants.size() == rm.mutants.size());
  for (std::size_t i = 0; i < rm.mutants.size(); ++i)
    CHECK_MESSAGE(rt.mutants[i].rule_passed == rm.mutants[i].rule_passed, rm.mutants[i].mutant);
  CHECK_THROWS_WITH_AS(parse_norm_audit_traits("variance=welford", NormKind::RmsNorm), doctest::Contains("no variance formula"), InputError);
  CHECK_THROWS_WITH_AS(parse_norm_audit_traits("parts=8", NormKind::LayerNorm), doctest::Contains("parts= goes with"), InputError);
  m.op = "rmsnorm";
  CHECK_THROWS_WITH_AS(run_audit(m), doctest::Contains("declares a layernorm"), InputError);
  m.inputs = "uniform";
  m.op = "layernorm";
  CHECK_THROWS_WITH_AS(run_audit(m), doctest::Contains("not a norm generator spec"), InputError);
}
