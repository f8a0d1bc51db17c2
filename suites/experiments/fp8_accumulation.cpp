// suites/experiments/fp8_accumulation.cpp — the FP8 accumulation experiment (suites/experiments/fp8_accumulation.hpp).
#include "suites/experiments/fp8_accumulation.hpp"

#include <fmt/format.h>

#include <cmath>

#include "generators/generate.hpp"
#include "kernels/device/device_api.hpp"
#include "kernels/kernel.hpp"
#include "kernels/tc/cards.hpp"
#include "oracle/gemm_ref.hpp"
#include "results/results.hpp"
#include "suites/verdict/emulate/emulate.hpp"
#include "suites/ops/gemm/runner.hpp"

namespace fpcert {

namespace {

/// Normwise Frobenius and componentwise errors of outputs (codes of f32) against the exact reference.
std::pair<double, double> errors(const std::vector<std::uint64_t>& codes, const GemmRef& ref) {
  double e2 = 0, r2 = 0, cw = 0;
  for (std::size_t x = 0; x < codes.size(); ++x) {
    const double err = std::fabs((to_double(f32, codes[x]) - ref.c[x].hi) - ref.c[x].lo);
    e2 += err * err;
    r2 += ref.c[x].hi * ref.c[x].hi;
    if (ref.abs_sum[x] > 0) cw = std::max(cw, err / ref.abs_sum[x]);
  }
  return {r2 > 0 ? std::sqrt(e2 / r2) : 0.0, cw};
}

constexpr const char* kFamilies[] = {"mma_sm89", "wgmma_sm90"};
constexpr int kPromotions[] = {0, 128};

std::string kernel_name(const Format& f, const char* family, int promote) {
  return fmt::format("gemm_{}_f32acc_{}{}", f.tag, family, promote ? fmt::format("_promote{}", promote) : "");
}

}  // namespace

std::vector<std::string> fp8_accumulation_kernels() {
  std::vector<std::string> names;
  for (const Format* f : {&e4m3, &e5m2})
    for (const char* family : kFamilies)
      for (int promote : kPromotions) names.push_back(kernel_name(*f, family, promote));
  return names;
}

Fp8AccReport fp8_accumulation_experiment(std::int64_t mn, std::int64_t k, bool device) {
  Fp8AccReport rep;
  rep.m = rep.n = mn;
  rep.k = k;
  std::unique_ptr<DeviceApi> api;
  std::string why = "not asked (model side only)";
  if (device) api = make_cuda_api(&why);
  rep.device = api ? api->info().name : "none: " + why;
  std::uint64_t seed = 41;
  for (const Format* f : {&e4m3, &e5m2}) {
    // N(0, 1) values rounded into the FP8 format: the kernels receive them exactly, ref is ref'.
    Problem p = generate(fmt::format("normal:m={},n={},k={},seed={}", mn, mn, k, seed++));
    p.a.data = round_values(p.a.data, *f, Rounding::NearestEven);
    p.b.data = round_values(p.b.data, *f, Rounding::NearestEven);
    p.spec += fmt::format(" (values rounded to {})", f->tag);
    const GemmRef ref = gemm_reference(p.a.view(), p.b.view());
    // fp32 accumulation of the same products: one FMA per product, k ascending (the CPU model's order).
    KernelTraits fp32 = make_gemm_kernel(fmt::format("model_gemm_{}_f32acc", f->tag))->traits();
    const auto [f_fro, f_cw] = errors(emulate_gemm(fp32, mn, mn, k, p.a.data, p.b.data), ref);
    for (const char* family : kFamilies)  // the order of fp8_accumulation_kernels()
    for (int promote : kPromotions) {
      Fp8AccRow row;
      row.format = f->tag;
      row.promote_every = promote;
      row.kernel = kernel_name(*f, family, promote);
      row.fp32_fro = f_fro;
      row.fp32_cw = f_cw;
      const auto kernel = make_gemm_kernel(row.kernel);
      if (!kernel) {
        row.status = "not built (no CUDA in this build)";
        rep.rows.push_back(row);
        continue;
      }
      const KernelTraits t = tc::with_installed_cards(kernel->traits());
      const BlockModel& bm = t.sum_order.block_model;
      std::vector<std::uint64_t> predicted;
      if (bm.params) {
        row.card = describe(*bm.params);
        row.card_align_bits = bm.params->align_bits;
        row.card_acc_bits = bm.params->acc_bits;
        predicted = emulate_gemm(t, mn, mn, k, p.a.data, p.b.data);
        std::tie(row.predicted_fro, row.predicted_cw) = errors(predicted, ref);
      } else {
        row.card = bm.source;
      }
      if (!api) {
        row.status = "not run: " + why;
        rep.rows.push_back(row);
        continue;
      }
      // The device run through the runner (guarded buffers, checks): its bitwise check compares the device
      // output with the emulation of the declared arithmetic, which is the prediction above.
      CaseSetup s;
      s.suite = "fp8-accumulation";
      s.case_id = fmt::format("{}_k{}", f->tag, k);
      s.problem = &p;
      s.ref = &ref;
      const CaseResult r = run_case(*kernel, s, *api, RunOptions{});
      row.status = std::string(to_string(r.status)) + (r.reason.empty() ? "" : ": " + r.reason);
      if (r.status == CaseStatus::Pass || r.status == CaseStatus::Fail) {
        row.measured_fro = r.metrics.frobenius_rel;
        row.measured_cw = r.metrics.componentwise;
        if (const CheckResult* b = find_check(r, CheckKind::Bitwise)) {
          row.agrees = b->passed && b->first_index < 0 ? 1 : 0;
          row.agreement = b->detail;
        }
      }
      rep.rows.push_back(row);
    }
  }
  return rep;
}

}  // namespace fpcert
