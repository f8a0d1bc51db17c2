// cli/cmd/cmd_quantize.cpp — `fpcert quantize`: an array into a block-scaled format (OCP MX, NVFP4) with its
// element codes, scale codes, exact dequantized values and a per-block error summary; `--check`: the
// quantizer model against MPFR over structured exhaustive sweeps (oracle/block/block_check.hpp);
// `--list`: the block formats. docs/block_formats.md states the rules.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>

#include "base/atomic_file.hpp"
#include "base/error.hpp"
#include "base/input_file.hpp"
#include "base/npy.hpp"
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/options.hpp"
#include "oracle/block/block_check.hpp"
#include "oracle/block/block_format.hpp"

namespace fpcert::cli {
namespace {

struct QuantizeArgs {
  std::string to, rule, rounding = "rn", input, out, json;
  int block = 0;
  int axis = -1;
  std::uint64_t seed = 0;
  double tensor_scale = 0;
  bool check = false, list = false;
  std::uint64_t stride = 1, other_stride = 61;
  std::uint32_t scale_stride = 1;
  unsigned threads = 0;
};

const BlockFormat& block_format_arg(const std::string& name) {
  const BlockFormat* f = find_block_format(name);
  if (!f) throw InputError("fpcert quantize: unknown block format '" + name + "' (one of " + block_format_tags() + ")");
  return *f;
}

ScaleRule rule_arg(const BlockFormat& f, const std::string& name) {
  if (name.empty()) return f.default_rule;
  const auto r = parse_scale_rule(name);
  if (!r) throw InputError("fpcert quantize: unknown scale rule '" + name + "' (floor, ceil, even or rceil)");
  std::string why;
  if (!rule_valid(f, *r, &why)) throw InputError("fpcert quantize: " + why);
  return *r;
}

int run_list() {
  fmt::print("{:<11} {:<5} {:<6} {:>5} {:>9} {:>5} {:<7} {}\n", "format", "elem", "scale", "block", "max_elem", "emax", "rule", "source");
  for (const BlockFormat* f : all_block_formats())
    fmt::print("{:<11} {:<5} {:<6} {:>5} {:>9} {:>5} {:<7} {}\n", f->tag, f->element->tag, f->pow2_scales() ? "ue8m0" : "ue4m3",
               f->block, f->max_elem(), f->emax_elem(), to_string(f->default_rule), f->source);
  fmt::print("rules: floor (OCP), ceil, even, rceil (NVIDIA); NVFP4 also carries an fp32 tensor scale\n");
  return kExitPass;
}

int run_check(const QuantizeArgs& a) {
  std::vector<const BlockFormat*> fmts;
  if (a.to == "all") fmts.assign(all_block_formats().begin(), all_block_formats().end());
  else fmts.push_back(&block_format_arg(a.to));
  if (a.stride < 1 || a.other_stride < 1 || a.scale_stride < 1) throw InputError("fpcert quantize --check: strides must be >= 1");
  BlockCheckOptions o;
  o.stride = a.stride;
  o.other_stride = a.other_stride;
  o.scale_stride = a.scale_stride;
  o.threads = a.threads;
  nlohmann::json out = nlohmann::json::array();
  bool pass = true;
  fmt::print("{:<11} {:<11} {:>14} {:>10} {:>9}\n", "format", "part", "checked", "mismatches", "seconds");
  for (const BlockFormat* f : fmts) {
    const BlockCheckResult r = check_block_format(*f, o);
    nlohmann::json parts = nlohmann::json::array();
    for (const BlockCheckPart& p : r.parts) {
      fmt::print("{:<11} {:<11} {:>14} {:>10} {:>9.2f}\n", f->tag, p.name, p.checked, p.mismatches, p.seconds);
      for (const std::string& l : p.listed) fmt::print("    MISMATCH {}\n", l);
      parts.push_back({{"part", p.name}, {"checked", p.checked}, {"mismatches", p.mismatches}, {"seconds", p.seconds}, {"listed", p.listed}});
    }
    fmt::print("{:<11} {:<11} {:>14} {:>10} {:>9.2f}  {}\n", f->tag, "total", r.checked(), r.mismatches(), r.seconds(),
               r.passed() ? "PASS" : "FAIL");
    pass = pass && r.passed();
    out.push_back({{"format", f->tag}, {"passed", r.passed()}, {"checked", r.checked()}, {"mismatches", r.mismatches()},
                   {"seconds", r.seconds()}, {"parts", parts}});
  }
  if (!a.json.empty())
    write_file_atomic(a.json, nlohmann::json{{"check", out},
                                              {"stride", a.stride},
                                              {"other_stride", a.other_stride},
                                              {"scale_stride", a.scale_stride},
                                              {"command", command_line()}}
                                      .dump(2) + "\n");
  return pass ? kExitPass : kExitGateFailed;
}

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  const auto i = static_cast<std::size_t>(std::floor(q * static_cast<double>(v.size() - 1) + 0.5));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(i), v.end());
  return v[i];
}

int run_quantize(const QuantizeArgs& a) {
  if (a.to.empty()) throw InputError("fpcert quantize: --to FORMAT is required (one of " + block_format_tags() + ")");
  const BlockFormat& f = block_format_arg(a.to);
  BlockQuantOptions o;
  o.rule = rule_arg(f, a.rule);
  const auto rounding = parse_rounding(a.rounding);
  if (!rounding) throw InputError("fpcert quantize: unknown rounding '" + a.rounding + "' (" + rounding_names() + ")");
  o.rounding = *rounding;
  o.seed = a.seed;
  if (a.block < 0) throw InputError("fpcert quantize: --block must be >= 1");
  o.block = a.block;
  if (a.tensor_scale != 0) {
    if (!f.tensor_scale) throw InputError("fpcert quantize: --tensor-scale applies to nvfp4 only");
    if (!(a.tensor_scale > 0) || !std::isfinite(a.tensor_scale))
      throw InputError("fpcert quantize: --tensor-scale must be positive and finite");
    const Rounded r = round_double(f32, a.tensor_scale, Rounder{Rounding::NearestEven, Saturation::Finite, NanPayload::Canonical});
    o.tensor_scale = to_double(f32, r.code);
    if (o.tensor_scale == 0) throw InputError("fpcert quantize: --tensor-scale underflows fp32");
  }
  if (a.input.empty()) throw InputError("fpcert quantize: --input X.npy is required");
  if (a.out.empty()) throw InputError("fpcert quantize: -o DIR is required");
  // The folder is checked before anything is read; it is written as one set (base/atomic_file.hpp).
  OutputDir dir(a.out, {"codes.npy", "scales.npy", "dequant.npy", "blocks.csv", "summary.json"}, "fpcert quantize -o", {a.input});
  const NpyArray in = read_npy(a.input);
  if (in.type != NpyType::F32 && in.type != NpyType::F64)
    throw InputError("fpcert quantize: " + a.input + " holds " + to_string(in.type) + "; give float32 or float64 values");
  const bool one_d = in.shape.size() == 1;
  const std::int64_t rows = one_d ? 1 : in.rows(), cols = one_d ? in.shape[0] : in.cols();
  if (a.axis < -1 || a.axis > 1 || (one_d && a.axis == 1))
    throw InputError(fmt::format("fpcert quantize: --axis {} does not exist for a {}-D array (0{} or -1)", a.axis, one_d ? 1 : 2,
                                 one_d ? "" : ", 1"));
  o.axis = (one_d || a.axis != 0) ? 1 : 0;
  std::vector<double> x(static_cast<std::size_t>(rows * cols));
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) {
      const std::int64_t src = in.fortran_order ? j * rows + i : i * cols + j;
      x[static_cast<std::size_t>(i * cols + j)] = in.value(src);
    }
  const auto t0 = std::chrono::steady_clock::now();
  const BlockTensor t = quantize_tensor(f, o, x.data(), rows, cols);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::vector<double> v = dequantize_tensor(t);

  write_npy(dir.file("codes.npy"), NpyType::U8, one_d ? cols : rows, one_d ? -1 : cols, t.codes.data());
  write_npy(dir.file("scales.npy"), NpyType::U8, one_d ? t.scale_cols : t.scale_rows, one_d ? -1 : t.scale_cols, t.scales.data());
  write_npy_f64(dir.file("dequant.npy"), one_d ? cols : rows, one_d ? -1 : cols, v);

  // Per-block and overall errors of the exact dequantized values.
  std::string csv = "block_row,block_col,scale_code,scale,amax,max_abs_err,max_rel_err,max_err_over_amax,saturated,flushed,nonfinite\n";
  std::vector<double> rel;
  double sum_e2 = 0, sum_x2 = 0, max_abs = 0;
  std::int64_t sat = 0, flushed = 0, max_sat_blocks = 0, nan_blocks = 0, zero_blocks = 0;
  for (std::int64_t br = 0; br < t.scale_rows; ++br)
    for (std::int64_t bc = 0; bc < t.scale_cols; ++bc) {
      const auto b = static_cast<std::size_t>(br * t.scale_cols + bc);
      const BlockSummary& s = t.blocks[b];
      double amax = 0, babs = 0, brel = 0;
      for (std::int64_t q = 0; q < t.block; ++q) {
        const std::int64_t i = t.axis == 1 ? br : br * t.block + q, j = t.axis == 1 ? bc * t.block + q : bc;
        if (i >= rows || j >= cols) break;
        const auto e = static_cast<std::size_t>(i * cols + j);
        if (!std::isfinite(x[e])) continue;
        amax = std::max(amax, std::fabs(x[e]));
        if (s.nonfinite) continue;
        const double err = std::fabs(x[e] - v[e]);  // both exact doubles; the difference rounds once
        babs = std::max(babs, err);
        sum_e2 += err * err;
        sum_x2 += x[e] * x[e];
        if (x[e] != 0) {
          rel.push_back(err / std::fabs(x[e]));
          brel = std::max(brel, rel.back());
        }
      }
      max_abs = std::max(max_abs, babs);
      sat += s.saturated;
      flushed += s.flushed;
      max_sat_blocks += s.max_saturated;
      nan_blocks += s.nonfinite;
      zero_blocks += (!s.nonfinite && amax == 0);
      csv += fmt::format("{},{},0x{:02x},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g},{},{},{}\n", br, bc, s.scale, scale_value(f, s.scale), amax,
                         babs, brel, amax > 0 ? babs / amax : 0.0, s.saturated, s.flushed, s.nonfinite ? 1 : 0);
    }
  write_file_atomic(dir.file("blocks.csv"), csv);
  const double max_rel = rel.empty() ? 0 : *std::max_element(rel.begin(), rel.end());
  nlohmann::json summary = {
      {"format", f.tag},
      {"scale_rule", to_string(o.rule)},
      {"rounding", to_string(o.rounding)},
      {"block", t.block},
      {"axis", one_d ? 0 : t.axis},
      {"shape", one_d ? nlohmann::json::array({cols}) : nlohmann::json::array({rows, cols})},
      {"scales_shape", one_d ? nlohmann::json::array({t.scale_cols}) : nlohmann::json::array({t.scale_rows, t.scale_cols})},
      {"tensor_scale", t.tensor_scale},
      {"blocks", t.scales.size()},
      {"elements", rows * cols},
      {"saturated_elements", sat},
      {"blocks_max_saturated", max_sat_blocks},
      {"flushed_elements", flushed},
      {"nonfinite_blocks", nan_blocks},
      {"zero_blocks", zero_blocks},
      {"max_abs_error", max_abs},
      {"max_rel_error", max_rel},
      {"median_rel_error", quantile(rel, 0.5)},
      {"p99_rel_error", quantile(rel, 0.99)},
      {"frobenius_rel_error", sum_x2 > 0 ? std::sqrt(sum_e2 / sum_x2) : 0.0},
      {"seconds", secs},
      {"files", {"codes.npy", "scales.npy", "dequant.npy", "blocks.csv", "summary.json"}},
      {"command", command_line()}};
  if (o.rounding == Rounding::Stochastic) summary["seed"] = a.seed;
  write_file_atomic(dir.file("summary.json"), summary.dump(2) + "\n");
  dir.commit();
  fmt::print("{} ({} rule, {} elements, blocks of {} along axis {}): {} elements in {} blocks -> {}\n", f.tag, to_string(o.rule),
             to_string(o.rounding), t.block, one_d ? 0 : t.axis, rows * cols, t.scales.size(), printable(dir.dir()));
  if (f.tensor_scale) fmt::print("  tensor scale {:.9g}\n", t.tensor_scale);
  fmt::print("  saturated {} elements ({} blocks at their maximum), flushed to zero {}, NaN/Inf blocks {}\n", sat, max_sat_blocks,
             flushed, nan_blocks);
  fmt::print("  relative error: median {:.4g}, p99 {:.4g}, max {:.4g}; Frobenius {:.4g}\n", quantile(rel, 0.5), quantile(rel, 0.99),
             max_rel, sum_x2 > 0 ? std::sqrt(sum_e2 / sum_x2) : 0.0);
  return kExitPass;
}

}  // namespace

void add_quantize(CLI::App& root, Registry& reg) {
  auto* app = root.add_subcommand(
      "quantize", "Quantize an array into a block-scaled format (MX, NVFP4): codes, scales, exact values, errors; --check: the model vs MPFR");
  auto a = std::make_shared<QuantizeArgs>();
  app->add_option("--to", a->to, "Block format: mxfp8_e4m3, mxfp8_e5m2, mxfp6_e2m3, mxfp6_e3m2, mxfp4, mxint8, nvfp4 (with --check: or all)");
  app->add_option("--scale-rule", a->rule, "floor (OCP, default for MX), ceil, even (default for nvfp4) or rceil");
  app->add_option("--block", a->block, "Elements per block (default: 32, nvfp4 16)")->check(integer_in(1, 1 << 20));
  app->add_option("--axis", a->axis, "Axis the blocks run along: -1 (last, default) or 0 (down the columns of a 2-D array)")
      ->capture_default_str()
      ->check(signed_integer_in(-1, 1));
  app->add_option("--rounding", a->rounding, "Element rounding: rn (default), rna, rz, ru, rd, rs (stochastic)")->capture_default_str();
  app->add_option("--seed", a->seed, "Key of the stochastic-rounding bits (Philox; element (i, j) uses counter i * cols + j)")
      ->capture_default_str()
      ->check(integer_in(0, ~std::uint64_t{0}));
  app->add_option("--tensor-scale", a->tensor_scale, "nvfp4: the fp32 per-tensor scale (default: amax / (448 * 6))")->check(positive_number());
  app->add_option("--input", a->input, "float32 or float64 .npy array, 1-D or 2-D")->check(path_text());
  app->add_option("-o,--out", a->out, "Directory for codes.npy, scales.npy, dequant.npy, blocks.csv, summary.json")->check(output_dir());
  app->add_flag("--check", a->check, "Check the quantizer model against MPFR over structured exhaustive sweeps");
  app->add_option("--stride", a->stride, "With --check: every n-th fp32 pattern of the sweep (1: all)")->capture_default_str()->check(integer_in(1, std::uint64_t{1} << 32));
  app->add_option("--other-stride", a->other_stride, "With --check: every n-th swept value also under rna, rz, ru, rd, rs")
      ->capture_default_str()
      ->check(integer_in(1, std::uint64_t{1} << 32));
  app->add_option("--scale-stride", a->scale_stride, "With --check: every n-th scale code in the codes part (1: all)")->capture_default_str()->check(integer_in(1, 256));
  app->add_option("--json", a->json, "With --check: write the results as JSON to this file")->check(output_path());
  app->add_option("--threads", a->threads, "Worker threads (default: all cores, or $FPCERT_THREADS)")->check(integer_in(1, 4096));
  app->add_flag("--list", a->list, "The block formats and their parameters");
  reg.push_back({app, [=] {
                   if (a->list) return run_list();
                   // Options of the check that would do nothing without it are refused (docs/errors.md).
                   refuse_without(*app, {"--stride", "--other-stride", "--scale-stride", "--json"}, a->check, "--check");
                   if (a->check) {
                     if (a->to.empty()) throw InputError("fpcert quantize --check: give --to FORMAT or --to all");
                     return run_check(*a);
                   }
                   return run_quantize(*a);
                 }});
}

}  // namespace fpcert::cli
