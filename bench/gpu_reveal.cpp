// bench/gpu_reveal.cpp — order revelation on cuBLAS (docs/reveal.md): (1) the time to reveal the
// summation tree of every output element at K = 2048, 16384 and 65536 for each pinned compute type
// (fp32 pedantic, TF32, fp16 and bf16 inputs with fp32 accumulation), with launches, pairs and the tree
// found; goal: K = 65536 under 60 s and K = 2048 under 1 s; (2) the replay: each compute type revealed
// at three shapes of 2^20 or more elements, then emulated from the tree (and the behaviour card's block
// model for fused nodes) on random inputs and compared bit for bit with cuBLAS, every element.
// Usage: bench_gpu_reveal [--out DIR] [--kernels a,b] [--mn N] [--ks 2048,16384,65536] [--shapes MxNxK,...]
//                         [--budget-s S] [--card FILE] [--part time|replay|all]
// (CPU models run too, on the host: --kernels model_gemm_f32 --ks 256 --shapes 64x64x100 tries the flow anywhere.)
// Writes DIR/reveal_<kernel>_<m>x<n>x<k>.json and .html for every run. Without a CUDA device the device
// kernels are skipped with a message (exit 0); exit 1 when a revelation or a replay did not pass.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "base/atomic_file.hpp"
#include "base/error.hpp"
#include "kernels/device/device_api.hpp"
#include "reports/reveal_html.hpp"
#include "suites/reveal/reveal.hpp"

using namespace fpcert;

namespace {

struct Shape {
  std::int64_t m, n, k;
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> v;
  std::size_t p = 0;
  while (p <= s.size()) {
    const std::size_t c = s.find(',', p);
    if (c > p) v.push_back(s.substr(p, c == std::string::npos ? std::string::npos : c - p));
    if (c == std::string::npos) break;
    p = c + 1;
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  std::string out_dir = "out", part = "all", card;
  std::vector<std::string> kernels{"cublas_gemm_f32_pedantic", "cublas_gemm_f32_fast_tf32", "cublas_gemm_f16_f32acc", "cublas_gemm_bf16_f32acc"};
  std::int64_t mn = 256;  // paired mode (fp16/bf16 inputs) answers min(M, N) pairs per launch: more columns, fewer launches
  std::vector<std::int64_t> ks{2048, 16384, 65536};
  std::vector<Shape> shapes{{1024, 1024, 256}, {1024, 1024, 1000}, {512, 2048, 4096}};
  double budget_s = 540;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--out") out_dir = v;
    else if (a == "--kernels") kernels = split(v);
    else if (a == "--mn") mn = std::atoll(v.c_str());
    else if (a == "--ks") {
      ks.clear();
      for (const auto& x : split(v)) ks.push_back(std::atoll(x.c_str()));
    } else if (a == "--shapes") {
      shapes.clear();
      for (const auto& x : split(v)) {
        Shape sh{};
        if (std::sscanf(x.c_str(), "%ldx%ldx%ld", &sh.m, &sh.n, &sh.k) != 3) {
          fmt::print(stderr, "--shapes: expected MxNxK, got {}\n", x);
          return 2;
        }
        shapes.push_back(sh);
      }
    } else if (a == "--budget-s") budget_s = std::atof(v.c_str());
    else if (a == "--card") card = v;
    else if (a == "--part") part = v;
    else {
      fmt::print(stderr, "unknown option {}\n", a);
      return 2;
    }
  }
  std::string why;
  auto cuda = make_cuda_api(&why);
  auto host = make_host_api();
  std::filesystem::create_directories(out_dir);
  const auto t_start = std::chrono::steady_clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count(); };
  std::vector<BlockModelChoice> cards;
  if (!card.empty()) cards = block_models_from_cards(card);
  int failures = 0, skipped = 0;
  const auto one = [&](const std::string& name, const Shape& s, bool replay) -> std::optional<RevealResult> {
    if (elapsed() > budget_s) {
      ++skipped;
      fmt::print("{:<28} {:>5}x{:<5}x{:>6}  skipped: past the --budget-s {} s\n", name, s.m, s.n, s.k, budget_s);
      return std::nullopt;
    }
    auto kernel = make_gemm_kernel(name);
    if (!kernel) {
      fmt::print("{:<28} not built here\n", name);
      return std::nullopt;
    }
    DeviceApi* api = kernel->memory() == MemorySpace::Host ? host.get() : cuda.get();
    if (!api) {
      ++skipped;
      fmt::print("{:<28} no CUDA device ({}): not measured\n", name, why);
      return std::nullopt;
    }
    RevealOptions o;
    o.m = s.m;
    o.n = s.n;
    o.k = s.k;
    o.replay = replay;
    o.replay_samples = static_cast<std::uint64_t>(s.m * s.n);  // one launch: every element once
    o.cards = cards;
    o.max_launches = 200000;  // paired mode peels fused groups of more than 16 products one pivot per round
    try {
      RevealResult r = reveal_order(*kernel, *api, o);
      r.env.command = fmt::format("fpcert reveal --kernel {} --m {} --n {} --k {}{}", name, s.m, s.n, s.k, replay ? " --replay" : "");
      const std::string stem = fmt::format("{}/reveal_{}_{}x{}x{}", out_dir, name, s.m, s.n, s.k);
      write_file_atomic(stem + ".json", to_json(r).dump(1) + "\n");
      write_file_atomic(stem + ".html", reveal_page(r, r.env.command));
      if (!r.passed()) ++failures;
      return r;
    } catch (const std::exception& e) {
      ++failures;
      fmt::print("{:<28} {:>5}x{:<5}x{:>6}  FAILED: {}\n", name, s.m, s.n, s.k, e.what());
      return std::nullopt;
    }
  };
  if (part == "time" || part == "all") {
    fmt::print("== time to reveal: M = N = {}, every element's class, search + verification + probe-value check (no replay)\n", mn);
    fmt::print("{:<28} {:>6} {:>9} {:>9} {:>9} {:>11} {:>7}  {}\n", "kernel", "K", "status", "seconds", "kernel_s", "launches", "classes", "tree (class 0)");
    for (const auto& name : kernels)
      for (std::int64_t k : ks) {
        const auto r = one(name, {mn, mn, k}, false);
        if (!r) continue;
        std::string tree = r->classes.empty() ? r->message : r->classes.front().revealed ? r->classes.front().headline : r->classes.front().why;
        if (!r->classes.empty() && !r->classes.front().card_check.empty()) tree += " [" + r->classes.front().card_check + "]";
        fmt::print("{:<28} {:>6} {:>9} {:>9.3f} {:>9.3f} {:>11} {:>7}  {}\n", name, k, r->passed() ? "revealed" : r->status, r->seconds, r->kernel_seconds,
                   r->launches, r->classes.size(), tree);
        fmt::print("{:<28} {:>6} {}\n", "", "", r->complexity);
        if (!r->passed()) fmt::print("{:<28} {:>6} {}\n", "", "", r->message);
      }
  }
  if (part == "replay" || part == "all") {
    fmt::print("== replay agreement: the revealed tree (+ block model) emulated on random inputs, every element compared bit for bit\n");
    fmt::print("{:<28} {:>16} {:>9} {:>12} {:>12}  {}\n", "kernel", "shape", "status", "equal", "compared", "assumed");
    for (const auto& name : kernels) {
      std::uint64_t eq = 0, cmp = 0;
      for (const Shape& s : shapes) {
        const auto r = one(name, s, true);
        if (!r) continue;
        std::uint64_t e = 0, c = 0;
        std::string assumed;
        for (const auto& cl : r->classes) {
          e += cl.replay.equal;
          c += cl.replay.compared;
          if (assumed.empty()) assumed = cl.replay.ran ? cl.replay.assumed : cl.replay.why_not.empty() ? cl.why : cl.replay.why_not;
        }
        eq += e;
        cmp += c;
        fmt::print("{:<28} {:>16} {:>9} {:>12} {:>12}  {}\n", name, fmt::format("{}x{}x{}", s.m, s.n, s.k), r->passed() ? "agrees" : r->status, e, c, assumed);
        for (const auto& cl : r->classes)
          for (const auto& d : cl.replay.diffs) fmt::print("{:<28} {:>16} differs at ({}, {}): {}\n", "", "", d.row, d.col, d.note);
        if (!r->passed()) fmt::print("{:<28} {:>16} {}\n", "", "", r->message);
      }
      if (cmp) fmt::print("{:<28} {:>16} {:>9} {:>12} {:>12}  agreement {:.9f}\n", name, "all shapes", "", eq, cmp, static_cast<double>(eq) / static_cast<double>(cmp));
    }
  }
  fmt::print("bench_gpu_reveal: {} run(s) did not pass, {} skipped; {:.1f} s\n", failures, skipped, elapsed());
  return failures ? 1 : 0;
}
