// cli/cmd/cmd_reveal.cpp — `fpcert reveal`: the summation tree of a GEMM kernel's output elements at one
// shape, found from the outside (FPRev's queries, many per launch), checked, and with --replay emulated
// bit for bit on random inputs (docs/reveal.md).
#include <fmt/format.h>

#include <memory>

#include "base/atomic_file.hpp"
#include "base/error.hpp"
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/options.hpp"
#include "cli/plugins.hpp"
#include "kernels/device/device_api.hpp"
#include "reports/reveal_html.hpp"
#include "suites/reveal/reveal.hpp"

namespace fpcert::cli {
namespace {

struct RevealArgs {
  std::string kernel, json, html;
  std::int64_t m = 0, n = 0, k = 0;
  int i = 0, j = 0;
  bool replay = false, quiet = false, no_tree = false;
  std::uint64_t replay_samples = 1'000'000;
  std::uint64_t seed = 1;
  int max_classes = 8, signatures = 12;
  std::int64_t max_launches = 100000;
  std::vector<std::string> cards, plugins;
};

int run_reveal(const RevealArgs& a) {
  if (a.i >= a.m || a.j >= a.n)
    throw InputError(fmt::format("--i {} --j {}: the element must lie in C ({} x {}): 0 <= i < --m, 0 <= j < --n", a.i, a.j, a.m, a.n));
  load_plugins(a.plugins);
  auto kernel = make_gemm_kernel(a.kernel);
  if (!kernel) throw InputError("unknown kernel '" + a.kernel + "' (not a GEMM kernel fpcert knows: fpcert kernels lists them)");
  std::unique_ptr<DeviceApi> api;
  if (kernel->memory() == MemorySpace::Host) {
    api = make_host_api();
  } else {
    std::string why;
    api = make_cuda_api(&why);
    if (!api) throw DeviceError("reveal " + a.kernel + ": no CUDA device (" + why + ")");
  }
  RevealOptions o;
  o.m = a.m;
  o.n = a.n;
  o.k = a.k;
  o.focus_row = a.i;
  o.focus_col = a.j;
  o.seed = a.seed;
  o.signatures = a.signatures;
  o.max_classes = a.max_classes;
  o.max_launches = a.max_launches;
  o.replay = a.replay;
  o.replay_samples = a.replay_samples;
  for (const auto& c : a.cards) {
    const auto more = block_models_from_cards(c);
    o.cards.insert(o.cards.end(), more.begin(), more.end());
  }
  if (!a.quiet) o.log = [](const std::string& s) { fmt::print(stderr, "{}\n", s); };
  RevealResult r;
  try {
    r = reveal_order(*kernel, *api, o);
  } catch (const NotSupportedError& e) {
    fmt::print(stderr, "fpcert: {} cannot run {} x {} x {}: {}\n", a.kernel, a.m, a.n, a.k, e.what());
    return kExitUsage;
  }
  r.env.command = command_line();
  fmt::print("{}", reveal_text(r, !a.no_tree));
  if (!a.json.empty()) write_file_atomic(a.json, to_json(r).dump(1) + "\n");
  if (!a.html.empty()) write_file_atomic(a.html, reveal_page(r, command_line()));
  if (r.status == "refused") return kExitUsage;
  return r.passed() ? kExitPass : kExitGateFailed;
}

}  // namespace

void add_reveal(CLI::App& root, Registry& reg) {
  auto* app = root.add_subcommand("reveal", "The summation order of a GEMM kernel's elements, found from outside and replayed bit for bit (docs/reveal.md)");
  auto a = std::make_shared<RevealArgs>();
  app->add_option("--kernel", a->kernel, "Kernel name (built-in, cuBLAS at a pinned compute type, or from --plugin)")->required();
  app->add_option("--m", a->m, "Rows of C")->required()->check(integer_in(1, std::uint64_t{1} << 20));
  app->add_option("--n", a->n, "Columns of C")->required()->check(integer_in(1, std::uint64_t{1} << 20));
  app->add_option("--k", a->k, "Products per element (the sum's length)")->required()->check(integer_in(1, std::uint64_t{1} << 24));
  app->add_option("--i", a->i, "Row of the element whose class is revealed first (< --m)")->capture_default_str()->check(integer_in(0, (1 << 20) - 1));
  app->add_option("--j", a->j, "Column of that element (< --n)")->capture_default_str()->check(integer_in(0, (1 << 20) - 1));
  app->add_option("--json", a->json, "Write the revelation (trees included) as JSON here")->check(output_path());
  app->add_option("--html", a->html, "Write a self-contained HTML page with the trees drawn as SVG here")->check(output_path());
  app->add_flag("--replay", a->replay, "Emulate every revealed tree on random inputs and require the kernel's bits");
  app->add_option("--replay-samples", a->replay_samples, "Elements compared per class by --replay (whole launches)")
      ->capture_default_str()
      ->check(integer_in(1, std::uint64_t{1} << 32));
  app->add_option("--card", a->cards, "Behaviour cards (fpcert probe tensor-cores --json) for fused nodes; default: the published Hopper models");
  app->add_option("--seed", a->seed, "Seed of the signature and verification pairs and of the replay inputs")
      ->capture_default_str()
      ->check(integer_in(0, ~std::uint64_t{0}));
  app->add_option("--signatures", a->signatures, "Queries every element answers (they sort elements into classes)")
      ->capture_default_str()
      ->check(integer_in(1, 256));
  app->add_option("--max-classes", a->max_classes, "Classes of elements searched (the focus element's first, then the largest)")
      ->capture_default_str()
      ->check(integer_in(1, 1 << 20));
  app->add_option("--max-launches", a->max_launches, "Launches allowed to one class's search")
      ->capture_default_str()
      ->check(integer_in(1, std::uint64_t{1} << 40));
  app->add_flag("--no-tree", a->no_tree, "Summaries only, no tree drawings on the terminal");
  app->add_flag("--quiet", a->quiet, "No progress lines on stderr");
  add_plugin_option(app, a->plugins);
  reg.push_back({app, [a, app] {
                   refuse_without(*app, {"--replay-samples"}, a->replay, "--replay");  // docs/errors.md
                   return run_reveal(*a);
                 }});
}

}  // namespace fpcert::cli
