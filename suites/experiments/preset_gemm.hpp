// suites/experiments/preset_gemm.hpp — GEMM pipelines measured by a published method: the reference course's
// three-pipeline table (fpcert experiment three-pipeline --preset course) and the TF32 article's
// accumulation experiment (fpcert experiment accumulation --preset tf32-article). Each runs the CUDA
// kernels when a device answers and the kernels' CPU models otherwise; docs/experiments.md states
// both methods and the kernels chosen.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "oracle/format.hpp"
#include "results/experiment_record.hpp"

namespace fpcert {

enum class PresetDevice { Auto, Cuda, Cpu };
/// "auto" | "cuda" | "cpu"; InputError otherwise.
PresetDevice parse_preset_device(const std::string& s);

struct PresetGemmOptions {
  PresetDevice device = PresetDevice::Auto;  ///< Auto: CUDA when a device answers, else CPU models
  std::int64_t mn = 0;                       ///< override M = N (0: the method's)
  std::string command;                       ///< for the environment stamp
  std::function<void(const std::string&)> on_progress;
};

// ---- the course's three-pipeline table ----

/// The course's tolerance: rtol = max(table rtol, 4 eps sqrt(K)) with eps = 2^-(fraction bits) of the
/// storage format; table rtol 1e-5 for fp32 storage, 1e-2 for fp16 (InputError for other formats).
double course_rtol(const Format& storage, std::int64_t k);

/// The course's gate on one output: atol = rtol max|ref|; pass iff every |got - ref| <= atol + rtol |ref|
/// and every output is finite; gate fraction = max |got - ref| / (atol + rtol |ref|).
struct CourseGate {
  double rtol = 0, atol = 0, max_abs = 0, gate_fraction = 0;
  std::int64_t nonfinite = 0;
  bool pass = false;
};
CourseGate course_gate(const std::vector<double>& got, const std::vector<double>& ref, double rtol);

/// A and B: (t mod 7) * 0.013 and (t mod 5) * 0.017 in fp32 over the flattened index t (generator
/// int_pattern), M = N = K in {256, 1024, 2048}; the three pipelines; the course's columns.
ExperimentRecord three_pipeline_course(const PresetGemmOptions& opt);

// ---- the TF32 article's accumulation experiment ----

/// An fp16 running sum of 1.0: s = RN_f16(s + 1) from s = 0 until s stops changing.
struct Fp16Stall {
  double value = 0;              ///< where it stops
  std::int64_t additions = 0;    ///< additions that changed s
  double spacing = 0;            ///< fp16's spacing at the stall
};
Fp16Stall fp16_running_sum_stall();

/// The running sum; C = AB with A, B uniform on [-1, 1] at K = 256 .. 65536 through TF32, FP16 and
/// BF16 inputs with fp32 accumulation and FP16 with fp16 accumulation; relative Frobenius error
/// against the exact product; the fitted growth exponent per pipeline.
ExperimentRecord accumulation_tf32_article(const PresetGemmOptions& opt);

}  // namespace fpcert
