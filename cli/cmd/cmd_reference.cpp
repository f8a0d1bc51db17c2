// cli/cmd/cmd_reference.cpp — `fpcert reference`: the exact reference C = A * B of two .npy matrices
// (docs/oracle.md): C_hi, C_lo, C_tail, abs_sum, status and meta.json.
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "base/atomic_file.hpp"
#include "base/error.hpp"
#include "base/input_file.hpp"
#include "base/npy.hpp"
#include "base/parallel.hpp"
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/options.hpp"
#include "kernels/device/exact_gemm_cuda.hpp"
#include "suites/run/isolate.hpp"
#include "oracle/format.hpp"
#include "oracle/gemm_ref.hpp"

namespace fpcert::cli {
namespace {

struct ReferenceArgs {
  std::string a, b, out, format, format_a, format_b, layout = "auto";
  unsigned threads = 0;
  bool mpfr = false;
  std::string reference = "auto";  ///< --reference cpu|gpu|auto (docs/oracle.md, "On the GPU")
};

/// One operand: its exact values as doubles, with the layout of its .npy file.
struct Operand {
  std::vector<double> values;
  std::int64_t rows = 0, cols = 0;
  Layout layout = Layout::RowMajor;
  std::string format;  // the input format's tag (f64, f32, or the --format of a bit-pattern array)
  std::string dtype;
  MatrixView view() const {
    return {values.data(), rows, cols, layout == Layout::RowMajor ? cols : rows, layout};
  }
};

Operand load(const std::string& path, const char* which, const std::string& format_name, const std::string& layout,
             bool is_b) {
  const NpyArray arr = read_npy(path);
  Operand op;
  op.dtype = to_string(arr.type);
  if (arr.shape.size() == 1) {  // a vector: A as one row, B as one column
    op.rows = is_b ? arr.shape[0] : 1;
    op.cols = is_b ? 1 : arr.shape[0];
  } else {
    op.rows = arr.shape[0];
    op.cols = arr.shape[1];
  }
  op.layout = arr.fortran_order ? Layout::ColMajor : Layout::RowMajor;
  if (layout != "auto") {
    const Layout want = layout == "row" ? Layout::RowMajor : Layout::ColMajor;
    if (arr.shape.size() == 2 && want != op.layout)
      throw InputError(fmt::format("--layout {}: '{}' ({}) is stored {} (fortran_order {})", layout, path, which,
                                   arr.fortran_order ? "column-major" : "row-major", arr.fortran_order ? "True" : "False"));
  }
  const std::int64_t n = arr.size();
  op.values.resize(static_cast<std::size_t>(n));
  switch (arr.type) {
    case NpyType::F64:
    case NpyType::F32:
      if (!format_name.empty() && format_name != (arr.type == NpyType::F64 ? "f64" : "f32"))
        throw InputError(fmt::format("{} ('{}') holds {} values; --format {} applies to integer bit-pattern arrays "
                                     "(uint8/uint16/uint32)",
                                     which, path, arr.type == NpyType::F64 ? "float64" : "float32", format_name));
      op.format = arr.type == NpyType::F64 ? "f64" : "f32";
      for (std::int64_t i = 0; i < n; ++i) op.values[static_cast<std::size_t>(i)] = arr.value(i);
      break;
    case NpyType::U8:
    case NpyType::U16:
    case NpyType::U32: {
      if (format_name.empty())
        throw InputError(fmt::format("{} ('{}') holds {} bit patterns: say which format with --format (valid: {})", which,
                                     path, op.dtype, format_tags()));
      const Format* f = find_format(format_name);
      if (!f) throw InputError(fmt::format("--format: unknown format '{}' (valid: {})", format_name, format_tags()));
      if (f->specials == Specials::ScaleOnly)
        throw InputError(fmt::format("--format {}: a scale-only format cannot be a GEMM operand", f->tag));
      op.format = std::string(f->tag);
      const int width = arr.type == NpyType::U8 ? 8 : arr.type == NpyType::U16 ? 16 : 32;
      if (f->container_bits != width)
        throw InputError(fmt::format("{} ('{}'): {} codes travel in {}-bit containers, the file holds {}", which, path,
                                     f->tag, f->container_bits, op.dtype));
      for (std::int64_t i = 0; i < n; ++i) {
        const std::uint64_t bits = arr.bits(i);
        const std::uint64_t code = from_container(*f, bits);
        if (to_container(*f, code) != bits || (code & ~f->code_mask()) != 0)
          throw InputError(fmt::format("{} ('{}'): element {} = 0x{:x} is not a {} code", which, path, i, bits, f->tag));
        op.values[static_cast<std::size_t>(i)] = to_double(*f, code);
      }
      break;
    }
    default:
      throw InputError(fmt::format("{} ('{}'): dtype {} is not float64, float32, uint8, uint16 or uint32", which, path,
                                   op.dtype));
  }
  return op;
}

/// The files reference writes into its folder: an earlier set may be replaced, nothing else.
const std::vector<std::string> kReferenceFiles = {"C_hi.npy", "C_lo.npy", "C_tail.npy", "abs_sum.npy", "status.npy", "meta.json"};

int run_reference(const ReferenceArgs& args) {
  if (args.layout != "auto" && args.layout != "row" && args.layout != "col")
    throw InputError("--layout: expected 'auto', 'row' or 'col', got '" + args.layout + "'");
  const std::string fa = args.format_a.empty() ? args.format : args.format_a;
  const std::string fb = args.format_b.empty() ? args.format : args.format_b;
  // The output folder is checked before anything is read or computed; it is written as one set.
  OutputDir out(args.out, kReferenceFiles, "fpcert reference -o", {args.a, args.b});
  const Operand A = load(args.a, "A", fa, args.layout, false);
  const Operand B = load(args.b, "B", fb, args.layout, true);
  if (A.cols != B.rows)
    throw InputError(fmt::format("shapes do not multiply: A ('{}') is {} x {}, B ('{}') is {} x {}", args.a, A.rows,
                                 A.cols, args.b, B.rows, B.cols));
  check_gemm_memory(A.rows, B.cols, A.cols, "fpcert reference");

  const unsigned threads = args.threads ? args.threads : thread_count();
  if (!args.mpfr) use_reference_engine(args.reference, gpu_reference_usable);
  const auto t0 = std::chrono::steady_clock::now();
  const GemmRef ref = args.mpfr ? gemm_reference_mpfr(A.view(), B.view(), {threads})
                                : gemm_reference(A.view(), B.view(), {threads});
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  const std::int64_t M = ref.m, N = ref.n;
  const auto mn = static_cast<std::size_t>(M * N);
  std::vector<double> hi(mn), lo(mn);
  std::vector<std::int64_t> tail(mn);
  std::int64_t counts[5] = {0, 0, 0, 0, 0};  // ok, nonfinite, overflow, tiny, fallback
  for (std::size_t e = 0; e < mn; ++e) {
    hi[e] = ref.c[e].hi;
    lo[e] = ref.c[e].lo;
    tail[e] = ref.c[e].tail;
    const std::uint8_t s = ref.status[e];
    counts[0] += s == kRefOk;
    counts[1] += (s & kRefNonFinite) != 0;
    counts[2] += (s & kRefOverflow) != 0;
    counts[3] += (s & kRefTiny) != 0;
    counts[4] += (s & kRefFallback) != 0;
  }
  write_npy_f64(out.file("C_hi.npy"), M, N, hi);
  write_npy_f64(out.file("C_lo.npy"), M, N, lo);
  write_npy(out.file("C_tail.npy"), NpyType::I64, M, N, tail.data());
  write_npy_f64(out.file("abs_sum.npy"), M, N, std::vector<double>(ref.abs_sum.begin(), ref.abs_sum.end()));
  write_npy(out.file("status.npy"), NpyType::U8, M, N, ref.status.data());

  nlohmann::json meta = {
      {"command", command_line()},
      {"fpcert_version", "0.1.0"},
      {"shape", {{"m", M}, {"n", N}, {"k", A.cols}}},
      {"a", {{"file", args.a}, {"dtype", A.dtype}, {"format", A.format}, {"shape", {A.rows, A.cols}},
             {"layout", A.layout == Layout::RowMajor ? "row" : "col"}}},
      {"b", {{"file", args.b}, {"dtype", B.dtype}, {"format", B.format}, {"shape", {B.rows, B.cols}},
             {"layout", B.layout == Layout::RowMajor ? "row" : "col"}}},
      {"outputs",
       {{"C_hi.npy", "float64 m x n, row-major: RN(exact C_ij)"},
        {"C_lo.npy", "float64: RN(exact - C_hi)"},
        {"C_tail.npy", "int64 (-1, 0, 1): sign(exact - C_hi - C_lo); exact = hi + lo + tail * infinitesimal"},
        {"abs_sum.npy", "float64: an upper bound of sum_k |a_ik b_kj| (docs/oracle.md gives its tolerance)"},
        {"status.npy", "uint8 bits: 1 non-finite input, 2 fp64 overflow, 4 tiny (< 2^-969), 8 fallback"}}},
      {"path", ref.info.path},
      {"engine", ref.info.engine},
      {"sample_checked", ref.info.sample_checked},
      {"threads", threads},
      {"seconds", secs},
      {"ozaki",
       {{"slices", ref.info.slices}, {"beta", ref.info.beta}, {"kblock", ref.info.kblock}, {"gemms", ref.info.gemms},
        {"uncaptured_a", ref.info.uncaptured_a}, {"uncaptured_b", ref.info.uncaptured_b},
        {"fast_elements", ref.info.fast_elements}, {"exact_elements", ref.info.exact_elements}}},
      {"fallbacks", ref.fallbacks},
      {"status_counts",
       {{"ok", counts[0]}, {"nonfinite", counts[1]}, {"overflow", counts[2]}, {"tiny", counts[3]}, {"fallback", counts[4]}}},
  };
  write_file_atomic(out.file("meta.json"), meta.dump(2) + "\n");
  out.commit();
  fmt::print("reference {} x {} (K = {}) in {:.3f} s, {} threads, path {} (engine {}): {} fallback, {} non-finite -> {}\n", M,
             N, A.cols, secs, threads, ref.info.path, ref.info.engine, ref.fallbacks, counts[1], printable(out.dir()));
  return kExitPass;
}

}  // namespace

void add_reference(CLI::App& root, Registry& reg) {
  auto* app = root.add_subcommand("reference", "Exact reference C = A * B of two .npy matrices (C_hi + C_lo + tail)");
  auto args = std::make_shared<ReferenceArgs>();
  app->add_option("--a", args->a, "A (m x k): float64/float32 .npy, or uint8/16/32 bit patterns with --format")->required();
  app->add_option("--b", args->b, "B (k x n), as A")->required();
  app->add_option("-o,--out", args->out, "Directory for C_hi.npy, C_lo.npy, C_tail.npy, abs_sum.npy, status.npy, meta.json (written as one set)")
      ->required()
      ->check(output_dir());
  app->add_option("--format", args->format, "Format of bit-pattern inputs (bf16, f16, e4m3, e5m2, tf32, ...)");
  app->add_option("--format-a", args->format_a, "Format of A's bit patterns (overrides --format)");
  app->add_option("--format-b", args->format_b, "Format of B's bit patterns (overrides --format)");
  app->add_option("--layout", args->layout,
                  "auto: each file's own order (fortran_order); row|col: require that order (exit 2 otherwise)");
  app->add_option("--threads", args->threads, "Worker threads (default: $FPCERT_THREADS or all cores)")->check(integer_in(1, 4096));
  app->add_option("--reference", args->reference,
                  "cpu (the CPU oracle), gpu (on the device from 2^27 products: whole for binary32 inputs, else its slice "
                  "GEMMs; sample-checked against exact_dot) or auto (gpu where a CUDA device answers; the default)")
      ->capture_default_str();
  app->add_flag("--mpfr", args->mpfr, "Use the MPFR ground truth instead of the fast path (slow; same C bit for bit)");
  reg.push_back({app, [args] { return run_reference(*args); }});
}

}  // namespace fpcert::cli
