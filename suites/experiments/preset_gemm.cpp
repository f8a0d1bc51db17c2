// suites/experiments/preset_gemm.cpp — the course's three-pipeline table and the TF32 article's accumulation
// experiment, run through the runner (guards, timing, fpcert's own grade) and measured by the
// source's method (docs/experiments.md).
#include "suites/experiments/preset_gemm.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <memory>

#include "generators/generate.hpp"
#include "kernels/device/device_api.hpp"
#include "kernels/kernel.hpp"
#include "base/error.hpp"
#include "oracle/gemm_ref.hpp"
#include "oracle/round.hpp"
#include "suites/run/environment.hpp"
#include "suites/experiments/presets.hpp"
#include "results/results_json.hpp"
#include "suites/ops/gemm/runner.hpp"

namespace fpcert {

PresetDevice parse_preset_device(const std::string& s) {
  if (s == "auto") return PresetDevice::Auto;
  if (s == "cuda") return PresetDevice::Cuda;
  if (s == "cpu") return PresetDevice::Cpu;
  throw InputError("--device: expected auto, cuda or cpu, got '" + s + "'");
}

namespace {

/// The API the preset runs on: the CUDA device (Cuda: DeviceError without one; Auto: when one answers)
/// or the host.
std::unique_ptr<DeviceApi> preset_api(PresetDevice d, const char* what) {
  if (d == PresetDevice::Cpu) return make_host_api();
  std::string why;
  auto api = make_cuda_api(&why);
  if (api) return api;
  if (d == PresetDevice::Cuda) throw DeviceError(std::string(what) + " --device cuda: " + why);
  return make_host_api();
}

struct Pipeline {
  std::string label;   ///< the source's name of the pipeline
  std::string kernel;  ///< the fpcert kernel that runs it
};

/// A pipeline of a method: its name, the kernel on a CUDA device and the CPU model.
struct PipelineChoice {
  const char* label;
  const char* cuda;
  const char* cpu;
};
constexpr PipelineChoice kCoursePipelines[] = {
    {"fp32", "cublas_gemm_f32_pedantic", "model_gemm_f32"},
    {"fp16 storage, fp32 acc", "cublas_gemm_f16_f32acc", "model_gemm_f16_f32acc"},
    {"fp16 storage, fp16 acc", "cublas_gemm_f16_f16acc", "model_gemm_f16_f16acc"},
};
constexpr PipelineChoice kArticlePipelines[] = {
    {"TF32 in, fp32 acc", "gemm_tf32_f32acc_mma_sm80", "model_gemm_tf32_f32acc"},
    {"FP16 in, fp32 acc", "gemm_f16_f32acc_mma_sm80", "model_gemm_f16_f32acc"},
    {"BF16 in, fp32 acc", "gemm_bf16_f32acc_mma_sm80", "model_gemm_bf16_f32acc"},
    {"FP16 in, fp16 acc", "cublas_gemm_f16_f16acc", "model_gemm_f16_f16acc"},
};

std::unique_ptr<GemmKernel> make_or_throw(const std::string& name) {
  auto k = make_gemm_kernel(name);
  if (!k) throw InputError("kernel '" + name + "' is not registered in this build");
  return k;
}

/// What a method runs on: the API (preset_api) and its pipelines' kernels for that backend.
struct Bench {
  std::unique_ptr<DeviceApi> api;
  bool device = false;
  std::vector<Pipeline> ps;
  std::vector<std::unique_ptr<GemmKernel>> ks;
};
template <std::size_t N>
Bench bench(PresetDevice d, const char* what, const PipelineChoice (&choices)[N]) {
  Bench b;
  b.api = preset_api(d, what);
  b.device = b.api->is_device();
  for (const auto& c : choices) {
    b.ps.push_back({c.label, b.device ? c.cuda : c.cpu});
    b.ks.push_back(make_or_throw(b.ps.back().kernel));
  }
  return b;
}

/// One kernel on one problem through the runner; `out` receives C (empty when it did not run).
CaseResult run_one(GemmKernel& k, const std::string& suite, const std::string& case_id, const Problem& p, const GemmRef& ref,
                   BoundVariant variant, DeviceApi& api, RunOptions ro, std::vector<double>* out) {
  CaseSetup s;
  s.suite = suite;
  s.case_id = case_id;
  s.problem = &p;
  s.ref = &ref;
  s.variant = variant;
  ro.output = out;
  return run_case(k, s, api, ro);
}

bool graded(const CaseResult& c) { return c.status == CaseStatus::Pass || c.status == CaseStatus::Fail; }

RunResult run_of(const std::string& suite, const std::vector<Pipeline>& ps, std::vector<CaseResult> cases, const PresetGemmOptions& opt,
                 const DeviceApi& api) {
  RunResult r;
  r.kind = RunKind::Gemm;
  r.suite = suite;
  for (const auto& p : ps) r.kernels.push_back(p.kernel);
  r.cases = std::move(cases);
  r.env = make_environment(opt.command, api.is_device() ? &api : nullptr);
  return r;
}

}  // namespace

// ---- the course ----

double course_rtol(const Format& storage, std::int64_t k) {
  double table = 0;
  if (storage == f32) table = 1e-5;
  else if (storage == f16) table = 1e-2;
  else throw InputError(fmt::format("the course's gate is stated for fp32 and fp16 storage, not {}", storage.tag));
  const double eps = std::ldexp(1.0, -storage.frac_bits);
  return std::max(table, 4 * eps * std::sqrt(static_cast<double>(k)));
}

CourseGate course_gate(const std::vector<double>& got, const std::vector<double>& ref, double rtol) {
  CourseGate g;
  g.rtol = rtol;
  double ref_max = 0;
  for (double r : ref) ref_max = std::max(ref_max, std::fabs(r));
  g.atol = rtol * ref_max;
  for (std::size_t x = 0; x < got.size() && x < ref.size(); ++x) {
    if (!std::isfinite(got[x])) {
      ++g.nonfinite;
      continue;
    }
    const double err = std::fabs(got[x] - ref[x]);
    const double allowed = g.atol + rtol * std::fabs(ref[x]);
    g.max_abs = std::max(g.max_abs, err);
    g.gate_fraction = std::max(g.gate_fraction, err == 0 ? 0.0 : (allowed > 0 ? err / allowed : INFINITY));
  }
  g.pass = g.nonfinite == 0 && g.gate_fraction <= 1 && got.size() == ref.size() && !got.empty();
  return g;
}

ExperimentRecord three_pipeline_course(const PresetGemmOptions& opt) {
  Bench b = bench(opt.device, "three-pipeline --preset course", kCoursePipelines);
  auto& [api, device, ps, ks] = b;
  RunOptions ro;
  ro.warmups = device ? 3 : 0;  // the course: 3 warm-ups, 10 timed runs; a CPU model's time says nothing of a GPU's
  ro.timed = device ? 10 : 1;

  ExperimentRecord rec;
  rec.experiment = "three-pipeline";
  rec.preset = "course";
  rec.source = find_preset("experiment three-pipeline", "course").source;
  rec.device = api->info().name;
  ExperimentTable t;
  t.title = "Three pipelines, the course's gate";
  t.columns = {{"k", "K", "int"},               {"pipeline", "pipeline", ""},       {"kernel", "kernel", ""},
               {"max_abs", "max abs err", "e"}, {"rtol", "rtol", "g"},             {"gate_fraction", "gate frac", "g"},
               {"status", "status", ""},        {"time_ms", "time ms", "g"},       {"speed_vs_fp32", "speed vs fp32", "f2"}};
  ExperimentTable ratio;
  ratio.title = "fp16 accumulation against fp32 accumulation";
  ratio.note = "max abs error of the fp16-acc pipeline over the fp16-storage/fp32-acc pipeline's, same inputs.";
  ratio.columns = {{"k", "K", "int"}, {"ratio", "fp16-acc / fp32-acc max error", "g"}};
  std::vector<CaseResult> cases;
  nlohmann::json ref_check = nlohmann::json::array();
  bool all_ran = true;
  for (std::int64_t k : {256, 1024, 2048}) {
    const std::int64_t mn = opt.mn > 0 ? opt.mn : k;
    if (opt.on_progress) opt.on_progress(fmt::format("K = {}: inputs and the exact reference", k));
    const Problem p = generate(fmt::format("int_pattern:m={},n={},k={},a_mod=7,b_mod=5,a_scale=0.013,b_scale=0.017,seed=0", mn, mn, k));
    const GemmRef ref = gemm_reference(p.a.view(), p.b.view());
    std::vector<double> ref64(ref.c.size());  // the fp64 reference: the exact product rounded once to fp64
    for (std::size_t x = 0; x < ref.c.size(); ++x) ref64[x] = ref.c[x].hi;
    double f32_time = 0, f32acc_max = -1;
    for (std::size_t q = 0; q < ks.size(); ++q) {
      if (opt.on_progress) opt.on_progress(fmt::format("K = {}: {}", k, ps[q].kernel));
      std::vector<double> c;
      CaseResult cr = run_one(*ks[q], "three-pipeline-course", fmt::format("k{}", k), p, ref, BoundVariant::Independent, *api, ro, &c);
      const Format& storage = *ks[q]->traits().a_operand;
      const double rtol = course_rtol(storage, k);
      nlohmann::json row = {{"k", k}, {"pipeline", ps[q].label}, {"kernel", ps[q].kernel}, {"rtol", rtol}};
      if (c.empty()) {  // not supported, crashed, hung: the table is incomplete (exit 1, or 3 for a crash)
        all_ran = false;
        rec.passed = false;
        row.update({{"max_abs", nullptr}, {"gate_fraction", nullptr}, {"status", std::string(to_string(cr.status))},
                    {"time_ms", nullptr}, {"speed_vs_fp32", nullptr}, {"reason", cr.reason}});
      } else {
        const CourseGate g = course_gate(c, ref64, rtol);
        if (q == 0) f32_time = cr.time_ms_median;
        const double speed = f32_time > 0 && cr.time_ms_median > 0 ? f32_time / cr.time_ms_median : 0;
        row.update({{"max_abs", json_number(g.max_abs)}, {"atol", g.atol}, {"gate_fraction", json_number(g.gate_fraction)},
                    {"status", g.pass ? "pass" : "fail"}, {"nonfinite", g.nonfinite}, {"time_ms", cr.time_ms_median},
                    {"speed_vs_fp32", speed}, {"fpcert_status", std::string(to_string(cr.status))},
                    {"fpcert_gate_fraction", json_number(cr.gate_fraction)}});
        if (q == 1) f32acc_max = g.max_abs;
        if (q == 2 && f32acc_max > 0) ratio.rows.push_back({{"k", k}, {"ratio", g.max_abs / f32acc_max}});
        rec.passed = rec.passed && g.pass;
      }
      t.rows.push_back(row);
      cases.push_back(std::move(cr));
    }
    // How far the fp64 reference is from the exact product (the course's fp64 GEMM is as far, or a few ulps farther).
    double worst = 0;
    for (std::size_t x = 0; x < ref.c.size(); ++x)
      if (ref.c[x].hi != 0) worst = std::max(worst, std::fabs(ref.c[x].lo / ref.c[x].hi));
    ref_check.push_back({{"k", k}, {"fp64_ref_max_rel_error", worst}});
  }
  const bool square = opt.mn <= 0;
  rec.method = fmt::format(
      "The reference course's table. A and B are fp32 matrices of a fixed repeating pattern of small non-negative integers: "
      "A's row-major entry t is (t mod 7) * 0.013 and B's (t mod 5) * 0.017, each product taken in fp32 (generator "
      "int_pattern). Square M = N = K, K in {{256, 1024, 2048}}. Pipelines: fp32; fp16 storage with fp32 accumulation; fp16 storage with "
      "fp16 accumulation ({}). Reference: fp64 over the fp32 inputs (here the exact product rounded once to fp64). Gate: "
      "rtol = max(table rtol, 4 eps sqrt(K)) with eps = 2^-23 for fp32 and 2^-10 (fp16) for the fp16-storage pipelines, table "
      "rtol 1e-5 (fp32) and 1e-2 (fp16); atol = rtol max|ref|; pass iff every |c - ref| <= atol + rtol |ref|; gate "
      "fraction = max |c - ref| / (atol + rtol |ref|). Time: median of 10 timed runs after 3 warm-ups (copies excluded); "
      "speed = the fp32 pipeline's time over the pipeline's. Last: the fp16-acc / fp32-acc ratio of max abs errors.",
      device ? "cuBLAS: CUBLAS_COMPUTE_32F_PEDANTIC, fp16 inputs with CUBLAS_COMPUTE_32F and with CUBLAS_COMPUTE_16F (tensor cores)"
             : "CPU models of the pipelines: sequential fp32 FMA, fp16 inputs with fp32 FMA, fused fp16 FMA along K");
  std::string dev;
  if (!square) dev = fmt::format("M = N = {} instead of the course's square M = N = K. ", opt.mn);
  if (!device) dev += "CPU models: 1 timed run, no warm-up (a model's time is not the pipeline's); the device table needs a GPU.";
  rec.deviations = dev;
  t.note = all_ran ? "status: the course's gate. fpcert's own verdict on the same outputs is in the JSON (fpcert_status)."
                   : "A pipeline did not run (see reason in the JSON).";
  rec.tables.push_back(std::move(t));
  rec.tables.push_back(std::move(ratio));
  const RunResult run = run_of("three-pipeline-course", ps, std::move(cases), opt, *api);
  rec.env = run.env;
  rec.extra = {{"pattern", "A[t] = (t mod 7) * fp32(0.013), B[t] = (t mod 5) * fp32(0.017), fp32 products, t row-major"},
               {"fp64_reference", ref_check},
               {"run", to_json(run)}};
  return rec;
}

// ---- the TF32 article ----

Fp16Stall fp16_running_sum_stall() {
  Fp16Stall s;
  const Rounder rn = Rounder::nearest(f16);
  double sum = 0;
  for (;;) {
    const double next = to_double(f16, round_double(f16, sum + 1.0, rn).code);  // sum + 1 is exact in double
    if (next == sum) break;
    sum = next;
    ++s.additions;
  }
  s.value = sum;
  s.spacing = std::ldexp(1.0, std::ilogb(sum) - f16.frac_bits);
  return s;
}

ExperimentRecord accumulation_tf32_article(const PresetGemmOptions& opt) {
  Bench b = bench(opt.device, "accumulation --preset tf32-article", kArticlePipelines);
  auto& [api, device, ps, ks] = b;
  const std::int64_t mn = opt.mn > 0 ? opt.mn : (device ? 512 : 32);
  const RunOptions ro;  // the runner's defaults: 3 warm-ups and 10 timed runs on a device, 1 run on the host
  std::vector<CaseResult> cases;

  ExperimentRecord rec;
  rec.experiment = "accumulation";
  rec.preset = "tf32-article";
  rec.source = find_preset("experiment accumulation", "tf32-article").source;
  rec.device = api->info().name;

  // 1. The running sum, and the same sum through each pipeline: C = ones(16 x 4096) ones(4096 x 16).
  const Fp16Stall st = fp16_running_sum_stall();
  ExperimentTable sum;
  sum.title = "Summing 1.0";
  sum.note = fmt::format(
      "fp16 has 11 significant bits: from 2^11 = 2048 on its spacing is 2, so 2048 + 1 = 2049 lies halfway between 2048 and "
      "2050 and rounds to even (2048 = 1.0000000000 x 2^11); every later +1 is lost the same way. A GEMM's fp16 accumulator "
      "stalls likewise unless it adds several products before rounding (a tensor core's block).");
  sum.columns = {{"what", "sum", ""}, {"kernel", "kernel", ""}, {"value", "result", "g"}, {"exact", "exact", "g"}};
  sum.rows.push_back({{"what", "scalar fp16 running sum s = RN_f16(s + 1)"}, {"kernel", "oracle (exact rounding)"},
                      {"value", st.value}, {"exact", nullptr}, {"additions", st.additions}, {"spacing", st.spacing}});
  {
    const Problem p = generate("probe:m=16,n=16,k=4096,kind=ones,seed=0");
    const GemmRef ref = gemm_reference(p.a.view(), p.b.view());
    for (std::size_t q = 0; q < ks.size(); ++q) {
      if (opt.on_progress) opt.on_progress(fmt::format("ones probe: {}", ps[q].kernel));
      std::vector<double> c;
      CaseResult cr = run_one(*ks[q], "accumulation-tf32-article", "ones_k4096", p, ref, BoundVariant::WorstCase, *api, ro, &c);
      sum.rows.push_back({{"what", "C = 1(16x4096) 1(4096x16), " + ps[q].label}, {"kernel", ps[q].kernel},
                          {"value", c.empty() ? nlohmann::json(nullptr) : nlohmann::json(json_number(c[0]))}, {"exact", 4096},
                          {"status", std::string(to_string(cr.status))}});
      cases.push_back(std::move(cr));
    }
  }

  // 2. Relative Frobenius error against K.
  ExperimentTable err;
  err.title = "Relative Frobenius error ||C - C*||_F / ||C*||_F";
  err.columns = {{"k", "K", "int"}};
  for (std::size_t q = 0; q < ps.size(); ++q) err.columns.push_back({fmt::format("p{}", q), ps[q].label, "e"});
  std::vector<double> kx;
  std::vector<std::vector<double>> ey(ps.size());
  std::vector<int> gates_passed(ps.size(), 0), gates_run(ps.size(), 0);
  std::uint64_t seed = 200;
  for (std::int64_t k = 256; k <= 65536; k *= 2) {
    if (opt.on_progress) opt.on_progress(fmt::format("K = {}: inputs and the exact reference", k));
    const Problem p = generate(fmt::format("uniform:m={},n={},k={},seed={}", mn, mn, k, seed++));
    const GemmRef ref = gemm_reference(p.a.view(), p.b.view());
    nlohmann::json row = {{"k", k}};
    kx.push_back(static_cast<double>(k));
    for (std::size_t q = 0; q < ks.size(); ++q) {
      if (opt.on_progress) opt.on_progress(fmt::format("K = {}: {}", k, ps[q].kernel));
      CaseResult cr = run_one(*ks[q], "accumulation-tf32-article", fmt::format("k{}", k), p, ref, BoundVariant::Independent, *api, ro, nullptr);
      const double e = graded(cr) ? cr.metrics.frobenius_rel : std::numeric_limits<double>::quiet_NaN();
      row[fmt::format("p{}", q)] = graded(cr) ? json_number(e) : nlohmann::json(nullptr);
      ey[q].push_back(e);
      gates_run[q] += graded(cr);
      gates_passed[q] += cr.status == CaseStatus::Pass;
      cases.push_back(std::move(cr));
    }
    err.rows.push_back(row);
  }
  err.note = "C* exact (fpcert's oracle); each K draws new inputs.";

  // 3. Growth: E_F ~ c K^e.
  ExperimentTable fit;
  fit.title = "Growth with K: E_F ~ c K^e (least squares in log-log)";
  fit.note = "e near 0: the error is set by the input rounding and does not grow with K (errors of random sign); e near 0.5: "
             "the accumulator's rounding errors add up like a random walk.";
  fit.columns = {{"pipeline", "pipeline", ""}, {"kernel", "kernel", ""}, {"exponent", "fitted e", "f2"},
                 {"coefficient", "c", "e"},    {"points", "points", "int"},   {"fpcert_passed", "fpcert gates passed", ""}};
  for (std::size_t q = 0; q < ps.size(); ++q) {
    const PowerFit f = fit_power_law(kx, ey[q]);
    fit.rows.push_back({{"pipeline", ps[q].label}, {"kernel", ps[q].kernel}, {"exponent", json_number(f.exponent)},
                        {"coefficient", json_number(f.coefficient)}, {"points", f.points},
                        {"fpcert_passed", fmt::format("{} of {}", gates_passed[q], gates_run[q])}});
  }

  rec.method = fmt::format(
      "The TF32 article's accumulation experiment. First an fp16 running sum of 1.0, s = RN_f16(s + 1) from 0, until it "
      "stops (and the same sum as a GEMM through each pipeline). Then C = AB with A, B entries uniform on [-1, 1] (fp64 "
      "draws rounded once to fp32, Philox), M = N = {}, K = 256, 512, ..., 65536, through four pipelines: TF32 inputs "
      "(fp32 rounded nearest-away to tf32) with fp32 accumulation, FP16 and BF16 inputs (rounded to nearest) with fp32 "
      "accumulation, and FP16 inputs with fp16 accumulation; {}. Error: the relative Frobenius error ||C - C*||_F / "
      "||C*||_F against the exact product C*; growth: the exponent e of E_F ~ c K^e fitted by least squares to "
      "(log2 K, log2 E_F) over the nine K.",
      mn,
      device ? "on the GPU the tensor-core kernels: fpcert's mma.sync kernels for TF32, FP16 and BF16 with fp32 accumulation, and "
               "cuBLAS CUBLAS_COMPUTE_16F for fp16 accumulation (fpcert has no mma.sync kernel accumulating in fp16)"
             : "on the CPU the kernels' models: one rounding per FMA along K in order (a tensor core's block order and its "
               "truncated alignment are not modelled: the device figures need a GPU)");
  if (opt.mn > 0) rec.deviations = fmt::format("M = N = {} (--mn).", opt.mn);
  else if (!device) rec.deviations = "M = N = 32 on the CPU (M and N only add samples; the device run uses 512).";
  rec.tables.push_back(std::move(sum));
  rec.tables.push_back(std::move(err));
  rec.tables.push_back(std::move(fit));
  const RunResult run = run_of("accumulation-tf32-article", ps, std::move(cases), opt, *api);
  rec.env = run.env;
  rec.extra = {{"mn", mn}, {"stall", {{"value", st.value}, {"additions", st.additions}, {"spacing", st.spacing}}}, {"run", to_json(run)}};
  return rec;
}

}  // namespace fpcert
