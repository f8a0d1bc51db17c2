// tests/cli/quantize_cli_test.cpp — `fpcert quantize` as a subprocess: the files it writes checked against
// the MPFR reference (oracle/block/block_mpfr.hpp), shapes for both axes and 1-D inputs, --check at a stride,
// --list, and bad input refused with exit 2 and nothing written.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "oracle/block/block_mpfr.hpp"
#include "oracle/mpfr_ref.hpp"
#include "base/npy.hpp"
#include "tests/support/run_command.hpp"

using namespace fpcert;
namespace fs = std::filesystem;

namespace {

fs::path scratch(const std::string& name) {
  const fs::path p = fs::path(FPCERT_TEST_SCRATCH) / name;
  fs::remove_all(p);
  fs::create_directories(p.parent_path());
  return p;
}

test::CommandResult run_fpcert(std::vector<std::string> args) {
  args.insert(args.begin(), FPCERT_BIN);
  return test::run_command(args, 600);
}

/// 5 x 70 fp32 values that force rounding (0.1 steps times odd factors), one NaN block, one zero block.
std::vector<double> sample(std::int64_t rows, std::int64_t cols) {
  std::vector<double> v(static_cast<std::size_t>(rows * cols));
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j)
      v[static_cast<std::size_t>(i * cols + j)] = static_cast<float>((j % 2 ? -1 : 1) * (0.1 + 0.37 * static_cast<double>(j)) * std::ldexp(1.0, static_cast<int>(i) * 5 - 8));
  v[3] = std::numeric_limits<double>::quiet_NaN();                    // row 0, block 0: a NaN block
  for (std::int64_t j = 32; j < 64; ++j) v[static_cast<std::size_t>(cols + j)] = 0;  // row 1, block 1: zeros
  return v;
}

}  // namespace

TEST_CASE("fpcert quantize: codes, scales and exact values against MPFR, every format") {
  const std::int64_t rows = 5, cols = 70;
  const std::vector<double> x = sample(rows, cols);
  const fs::path in = scratch("quantize/x.npy");
  write_npy_f32(in.string(), rows, cols, x);
  for (const BlockFormat* f : all_block_formats()) {
    CAPTURE(f->tag);
    const fs::path out = scratch(std::string("quantize/out_") + std::string(f->tag));
    const auto r = run_fpcert({"quantize", "--to", std::string(f->tag), "--input", in.string(), "-o", out.string()});
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const std::int64_t B = f->block;
    const NpyArray codes = read_npy((out / "codes.npy").string()), scales = read_npy((out / "scales.npy").string());
    const NpyArray deq = read_npy((out / "dequant.npy").string());
    CHECK(codes.type == NpyType::U8);
    CHECK(deq.type == NpyType::F64);
    const std::int64_t nb = (cols + B - 1) / B;
    REQUIRE(codes.shape == std::vector<std::int64_t>{rows, cols});
    REQUIRE(scales.shape == std::vector<std::int64_t>{rows, nb});
    std::ifstream sj(out / "summary.json");
    const nlohmann::json s = nlohmann::json::parse(sj);
    CHECK(s["format"] == std::string(f->tag));
    CHECK(s["nonfinite_blocks"] == 1);
    CHECK(s["zero_blocks"] == 32 / B);  // row 1, columns 32..63
    CHECK(fs::exists(out / "blocks.csv"));
    double amax_t = 0;
    for (double v : x)
      if (std::isfinite(v)) amax_t = std::max(amax_t, std::fabs(v));
    const double ts = f->tensor_scale ? mpfr_ref::nvfp4_tensor_scale(amax_t) : 1.0;
    CHECK(s["tensor_scale"].get<double>() == ts);
    mpfr_ref::Mpfr m(128);
    std::int64_t inexact = 0;
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t b = 0; b < nb; ++b) {
        double amax = 0;
        bool nonfinite = false;
        for (std::int64_t j = b * B; j < std::min(cols, (b + 1) * B); ++j) {
          const double v = x[static_cast<std::size_t>(i * cols + j)];
          if (!std::isfinite(v)) nonfinite = true;
          else amax = std::max(amax, std::fabs(v));
        }
        const std::uint8_t sc = mpfr_ref::block_scale_code(*f, f->default_rule, amax, nonfinite, ts);
        REQUIRE(scales.bits(i * nb + b) == sc);
        for (std::int64_t j = b * B; j < std::min(cols, (b + 1) * B); ++j) {
          const auto e = i * cols + j;
          const double v = x[static_cast<std::size_t>(e)];
          if (nonfinite) {
            CHECK(codes.bits(e) == 0);
            CHECK(std::isnan(deq.value(e)));
            continue;
          }
          const ElementCode want = mpfr_ref::quantize_element(*f, v, sc, ts, Rounding::NearestEven);
          REQUIRE(codes.bits(e) == want.code);
          REQUIRE(mpfr_ref::dequantize(m, *f, want.code, sc, ts));
          CHECK(mpfr_cmp_d(m, deq.value(e)) == 0);
          inexact += (want.flags & kElemInexact) != 0;
        }
      }
    CHECK(inexact > rows * cols / 2);
  }
}

TEST_CASE("fpcert quantize: axis 0, 1-D inputs, rules and rounding") {
  const std::vector<double> x = sample(40, 6);
  const fs::path in = scratch("quantize/x40.npy");
  write_npy_f32(in.string(), 40, 6, x);
  const fs::path out = scratch("quantize/axis0");
  auto r = run_fpcert({"quantize", "--to", "mxfp8_e4m3", "--axis", "0", "--scale-rule", "rceil", "--input", in.string(), "-o", out.string()});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(read_npy((out / "scales.npy").string()).shape == std::vector<std::int64_t>{2, 6});  // ceil(40 / 32) x 6
  const fs::path in1 = scratch("quantize/x1d.npy");
  write_npy_f32(in1.string(), 100, -1, std::vector<double>(x.begin(), x.begin() + 100));
  const fs::path out1 = scratch("quantize/oned");
  r = run_fpcert({"quantize", "--to", "nvfp4", "--rounding", "rs", "--seed", "5", "--input", in1.string(), "-o", out1.string()});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(read_npy((out1 / "codes.npy").string()).shape == std::vector<std::int64_t>{100});
  CHECK(read_npy((out1 / "scales.npy").string()).shape == std::vector<std::int64_t>{7});  // ceil(100 / 16)
}

TEST_CASE("fpcert quantize: bad input exits 2 and writes nothing") {
  const fs::path in = scratch("quantize/bad_x.npy");
  write_npy_f32(in.string(), 2, 8, std::vector<double>(16, 1.5));
  const fs::path u8 = scratch("quantize/bad_u8.npy");
  std::vector<std::uint8_t> bytes(16, 1);
  write_npy(u8.string(), NpyType::U8, 2, 8, bytes.data());
  const fs::path out = scratch("quantize/bad_out");
  struct Bad {
    std::vector<std::string> args;
    const char* says;
  };
  const Bad bad[] = {
      {{"quantize", "--to", "mxfp9", "--input", in.string(), "-o", out.string()}, "unknown block format"},
      {{"quantize", "--to", "nvfp4", "--scale-rule", "ceil", "--input", in.string(), "-o", out.string()}, "power-of-two rule"},
      {{"quantize", "--to", "mxfp4", "--scale-rule", "round", "--input", in.string(), "-o", out.string()}, "unknown scale rule"},
      {{"quantize", "--to", "mxfp4", "--input", (out / "missing.npy").string(), "-o", out.string()}, "missing.npy"},
      {{"quantize", "--to", "mxfp4", "--input", u8.string(), "-o", out.string()}, "float32 or float64"},
      {{"quantize", "--to", "mxfp4", "--block", "-3", "--input", in.string(), "-o", out.string()}, "--block"},
      {{"quantize", "--to", "mxfp4", "--axis", "2", "--input", in.string(), "-o", out.string()}, "--axis"},
      {{"quantize", "--to", "mxfp4", "--tensor-scale", "2", "--input", in.string(), "-o", out.string()}, "nvfp4 only"},
      {{"quantize", "--to", "mxfp4", "--rounding", "up-ish", "--input", in.string(), "-o", out.string()}, "unknown rounding"},
      {{"quantize", "--to", "mxfp4", "--input", in.string()}, "-o DIR"},
      {{"quantize", "--check"}, "--to"},
  };
  for (const Bad& b : bad) {
    const auto r = run_fpcert(b.args);
    CAPTURE(r.command);
    CAPTURE(r.output);
    CHECK(r.exit_code == 2);
    CHECK(r.has(b.says));
    CHECK(!fs::exists(out));
  }
}

TEST_CASE("fpcert quantize --check at a stride passes; --list names every format") {
  const fs::path json = scratch("quantize/check.json");
  const auto r = run_fpcert({"quantize", "--to", "mxfp6_e3m2", "--check", "--stride", "8191", "--scale-stride", "41", "--json", json.string()});
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(r.has("PASS"));
  std::ifstream in(json);
  const nlohmann::json j = nlohmann::json::parse(in);
  CHECK(j["check"][0]["mismatches"] == 0);
  CHECK(j["check"][0]["checked"].get<std::uint64_t>() > 100000);
  const auto l = run_fpcert({"quantize", "--list"});
  CHECK(l.exit_code == 0);
  for (const BlockFormat* f : all_block_formats()) CHECK(l.has(std::string(f->tag)));
}
