// suites/reveal/reveal.cpp — order revelation (suites/reveal/reveal.hpp, docs/reveal.md): classes of output elements, the
// checks (determinism, other probe values, random pairs per element) and the block models of fused nodes; the
// search and its pairs from GEMM launches are in suites/reveal/reveal_search.cpp, the replay in suites/reveal/reveal_replay.cpp.
#include "suites/reveal/reveal.hpp"
#include "suites/reveal/reveal_internal.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <numeric>

#include "base/error.hpp"
#include "base/philox.hpp"
#include "kernels/tc/cards.hpp"
#include "kernels/tc/probe.hpp"
#include "oracle/order/tc_card.hpp"
#include "suites/run/environment.hpp"

namespace fpcert {
using namespace reveal_internal;  // the GEMM pair source and its helpers (suites/reveal/reveal_internal.hpp)

// ======================================================================================
// Block models for fused nodes
// ======================================================================================

std::vector<BlockModelChoice> block_models_for(const KernelTraits& t, const std::vector<BlockModelChoice>& cards) {
  const auto matches = [&](const FusedDotParams& p) {
    const bool a = p.a == *t.a_operand || p.a == *t.a_input;
    const bool acc = p.acc == *t.out || p.acc == *t.acc;
    return a && acc;
  };
  std::vector<BlockModelChoice> out;
  const auto add = [&](const BlockModelChoice& c) {
    for (const auto& o : out)
      if (o.params == c.params) return;
    out.push_back(c);
  };
  for (const auto& c : cards)
    if (matches(c.params)) add(c);
  if (!out.empty()) return out;
  for (const auto& s : tc::all_instructions()) {
    if (s.integer()) continue;
    if (auto p = tc::mma_sim_hopper(s); p && matches(*p)) add({"MMA-Sim's Hopper model of " + std::string(s.id) + " (published, not measured here)", *p});
    if (auto p = tc::khattak_mikaitis_hopper(s); p && matches(*p))
      add({"Khattak and Mikaitis' Hopper model of " + std::string(s.id) + " (published, not measured here)", *p});
  }
  return out;
}

std::vector<BlockModelChoice> block_models_from_cards(const std::string& path) {
  // One reader of card files (kernels/tc/cards.hpp): bounded, every error naming the file.
  std::vector<BlockModelChoice> out;
  for (const BehaviourCard& c : tc::read_cards(path).cards)
    if (c.supported && !c.integer && c.passed()) out.push_back({"card " + c.id + " (" + c.device + ")", c.params});
  if (out.empty()) throw InputError("cards " + path + ": no validated floating-point card in it");
  return out;
}

// ======================================================================================
// The revelation
// ======================================================================================

namespace {

struct Phases {
  std::vector<std::pair<std::string, std::int64_t>> list;
  void add(const std::string& name, std::int64_t n) {
    for (auto& [k, v] : list)
      if (k == name) {
        v += n;
        return;
      }
    list.push_back({name, n});
  }
};

std::vector<std::pair<int, int>> signature_pairs(int k, int count, std::uint64_t seed) {
  std::vector<std::pair<int, int>> v;
  const auto add = [&](int x, int y) {
    if (x == y || x < 0 || y < 0 || x >= k || y >= k) return;
    const std::pair<int, int> p{std::min(x, y), std::max(x, y)};
    if (std::find(v.begin(), v.end(), p) == v.end()) v.push_back(p);
  };
  // Ends and middles of K (where splits and tails show), then random pairs.
  add(0, 1);
  add(0, k - 1);
  add(k - 2, k - 1);
  add(k / 2 - 1, k / 2);
  add(k / 4, 3 * k / 4);
  for (std::uint64_t d = 0; static_cast<int>(v.size()) < count && d < 64 * static_cast<std::uint64_t>(count); ++d) {
    const auto w = philox_4x32(seed, 0x51, d);
    add(static_cast<int>(w[0] % static_cast<std::uint32_t>(k)), static_cast<int>(w[1] % static_cast<std::uint32_t>(k)));
  }
  if (static_cast<int>(v.size()) > count) v.resize(static_cast<std::size_t>(count));
  return v;
}

/// Every element must read exactly the pass's number of units when nothing is planted. Empty when so.
std::string calibrate(GemmProber& p, const Format& out) {
  LaunchSpec none;
  for (int pass = 0; pass < p.plan().passes; ++pass) {
    const auto codes = p.raw(none, pass);
    const double want = std::ldexp(static_cast<double>(p.plan().pass_last(pass) - p.plan().pass_first(pass)), p.plan().ea + p.plan().eb);
    for (std::size_t i = 0; i < codes.size(); ++i) {
      const double v = to_double(out, from_container(out, codes[i]));
      if (v != want)
        return fmt::format("with {} units of 2^{} and nothing planted, output ({}, {}) is {} instead of {} (pass {})", p.plan().pass_last(pass) - p.plan().pass_first(pass),
                           p.plan().ea + p.plan().eb, i / static_cast<std::size_t>(p.n()), i % static_cast<std::size_t>(p.n()), v, want, pass);
    }
  }
  return {};
}

}  // namespace

RevealResult reveal_order(GemmKernel& kernel, DeviceApi& api, const RevealOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto say = [&](const std::string& s) {
    if (o.log) o.log(s);
  };
  if (o.m < 1 || o.n < 1 || o.k < 1) throw InputError("reveal: M, N and K must be at least 1");
  if (o.k > (std::int64_t{1} << 24)) throw InputError("reveal: K is limited to 2^24 (products are indexed as 32-bit integers and counted in fp32)");
  if (o.focus_row < 0 || o.focus_row >= o.m || o.focus_col < 0 || o.focus_col >= o.n)
    throw InputError(fmt::format("reveal: element ({}, {}) is outside the {} x {} output", o.focus_row, o.focus_col, o.m, o.n));
  if (o.m * o.n > (std::int64_t{1} << 26)) throw InputError("reveal: M x N is limited to 2^26 elements (every element's answers are kept)");
  const Support sup = kernel.can_implement_shape(o.m, o.n, o.k);
  if (!sup.ok) throw InputError(fmt::format("reveal: kernel {} does not support {} x {} x {}: {}", kernel.name(), o.m, o.n, o.k, sup.reason));
  const KernelTraits& t = kernel.traits();
  RevealResult res;
  res.kernel = kernel.name();
  res.description = kernel.description();
  res.backend = std::string(to_string(kernel.backend()));
  res.traits = describe_traits(t);
  res.m = o.m;
  res.n = o.n;
  res.k = o.k;
  res.focus_row = o.focus_row;
  res.focus_col = o.focus_col;
  res.env = make_environment("", &api);
  const int m = static_cast<int>(o.m), n = static_cast<int>(o.n), k = static_cast<int>(o.k);
  Phases phases;
  const auto finish = [&](RevealResult& r) -> RevealResult& {
    r.launches_by_phase = phases.list;
    r.launches = 0;
    for (const auto& [name, c] : phases.list) r.launches += c;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
  };

  ProbePlan plan;
  try {
    plan = plan_probes(t, o.k, o.limits);
  } catch (const InputError& e) {
    res.status = "refused";
    res.message = e.what();
    return finish(res);
  }
  auto prober = std::make_unique<GemmProber>(kernel, api, o.m, o.n, plan, o.timeout_ms);
  std::int64_t seen = 0;
  const auto phase = [&](const std::string& name) {
    phases.add(name, prober->launches() - seen);
    seen = prober->launches();
  };
  // ---- calibration: nothing planted, every element counts every unit ----
  std::string bad = calibrate(*prober, *t.out);
  if (!bad.empty() && plan.subnormal_units) {
    // The kernel may flush subnormal inputs: plan again with normal units only.
    say("units are subnormal and did not add up (" + bad + "); trying normal units");
    phase("calibration");
    PlanLimits lim = o.limits;
    lim.allow_subnormal_units = false;
    try {
      plan = plan_probes(t, o.k, lim);
    } catch (const InputError& e) {
      res.status = "refused";
      res.message = std::string(e.what()) + " (subnormal units did not add up: " + bad + ")";
      return finish(res);
    }
    res.kernel_seconds += prober->kernel_seconds();
    prober = std::make_unique<GemmProber>(kernel, api, o.m, o.n, plan, o.timeout_ms);
    seen = 0;
    bad = calibrate(*prober, *t.out);
  }
  res.plan = plan.text;
  res.mode = std::string(to_string(plan.mode));
  res.units_per_pass = plan.units_per_pass;
  res.passes = plan.passes;
  phase("calibration");
  say("probe values: " + plan.text);
  if (!bad.empty()) {
    res.status = "inconsistent";
    res.message = "the kernel does not add the probe's units exactly: " + bad;
    res.kernel_seconds += prober->kernel_seconds();
    return finish(res);
  }
  if (k == 1) {  // one product: nothing to order
    RevealClass c;
    c.elements = o.m * o.n;
    c.where = "every element";
    c.revealed = true;
    c.tree.k = 1;
    c.tree.root = 0;
    c.headline = "one product: no sum";
    res.classes.push_back(c);
    res.class_of.assign(static_cast<std::size_t>(o.m * o.n), 0);
    res.focus_class = 0;
    res.status = "revealed";
    res.message = "K = 1";
    res.kernel_seconds += prober->kernel_seconds();
    return finish(res);
  }
  // ---- signatures (with the determinism check on the first) ----
  res.signature_pairs = signature_pairs(k, o.signatures, o.seed);
  {
    const LaunchSpec s0 = uniform_spec(*prober, res.signature_pairs[0].first, res.signature_pairs[0].second);
    const auto a = prober->raw(s0, 0), b = prober->raw(s0, 0);
    std::int64_t differ = 0;
    std::size_t first = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
      if (a[i] != b[i] && differ++ == 0) first = i;
    res.determinism = fmt::format("one launch of the probe L{} repeated: {} of {} outputs differ", pair_text(res.signature_pairs[0].first, res.signature_pairs[0].second),
                                  differ, a.size());
    phase("determinism");
    if (differ) {
      res.deterministic = false;
      res.determinism += fmt::format(" (first: ({}, {}) gave {:#x}, then {:#x})", first / static_cast<std::size_t>(n), first % static_cast<std::size_t>(n), a[first], b[first]);
      res.status = "nondeterministic";
      res.message = "the kernel's output changes between identical launches: its order is not fixed (" + res.determinism + ")";
      res.kernel_seconds += prober->kernel_seconds();
      return finish(res);
    }
  }
  std::vector<LaunchSpec> sig_specs;
  for (const auto& [x, y] : res.signature_pairs) sig_specs.push_back(uniform_spec(*prober, x, y));
  const auto sig = prober->run(sig_specs);
  phase("signatures");
  // Classes: elements with equal answers to every signature query.
  std::map<std::vector<std::int32_t>, int> key_to_class;
  std::vector<int> grid(static_cast<std::size_t>(m) * static_cast<std::size_t>(n));
  std::vector<std::int64_t> counts;
  std::vector<std::vector<std::int32_t>> keys;
  for (std::size_t e = 0; e < grid.size(); ++e) {
    std::vector<std::int32_t> key(sig.size());
    for (std::size_t s = 0; s < sig.size(); ++s) key[s] = sig[s][e];
    auto [it, fresh] = key_to_class.try_emplace(key, static_cast<int>(counts.size()));
    if (fresh) {
      counts.push_back(0);
      keys.push_back(key);
    }
    grid[e] = it->second;
    ++counts[static_cast<std::size_t>(it->second)];
  }
  // Order: the focus element's class, then by size.
  const int focus_cls = grid[static_cast<std::size_t>(o.focus_row) * static_cast<std::size_t>(n) + static_cast<std::size_t>(o.focus_col)];
  std::vector<int> order(counts.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    if ((a == focus_cls) != (b == focus_cls)) return a == focus_cls;
    return counts[static_cast<std::size_t>(a)] > counts[static_cast<std::size_t>(b)];
  });
  std::vector<int> renum(counts.size());
  for (std::size_t i = 0; i < order.size(); ++i) renum[static_cast<std::size_t>(order[i])] = static_cast<int>(i);
  for (int& g : grid) g = renum[static_cast<std::size_t>(g)];
  res.focus_class = 0;
  say(fmt::format("{} signature queries: {} class(es) of elements", sig.size(), counts.size()));
  bool all_ok = true;
  std::string first_problem;
  for (std::size_t ci = 0; ci < order.size(); ++ci) {
    const int old = order[ci];
    RevealClass c;
    c.elements = counts[static_cast<std::size_t>(old)];
    c.signature = keys[static_cast<std::size_t>(old)];
    c.where = class_where(grid, m, n, static_cast<int>(ci), c.elements);
    for (std::size_t e = 0; e < grid.size() && c.examples.size() < 4; ++e)
      if (grid[e] == static_cast<int>(ci)) c.examples.push_back({static_cast<int>(e / static_cast<std::size_t>(n)), static_cast<int>(e % static_cast<std::size_t>(n))});
    if (std::find(c.signature.begin(), c.signature.end(), kGarbage) != c.signature.end()) {
      c.why = "its outputs are not exact counts of units for some signature query (the probe values are not absorbed as FPRev needs, or the "
              "kernel is not a sum of the products)";
    } else if (static_cast<int>(ci) >= o.max_classes) {
      c.why = fmt::format("not searched: only the first {} classes are (--max-classes)", o.max_classes);
    }
    if (!c.why.empty()) {
      all_ok = false;
      if (first_problem.empty()) first_problem = fmt::format("class {} ({}): {}", ci, c.where, c.why);
      res.classes.push_back(std::move(c));
      continue;
    }
    const int ar = ci == 0 ? o.focus_row : c.examples.front().first, ac = ci == 0 ? o.focus_col : c.examples.front().second;
    const ElementSet es = elements_of(grid, m, n, static_cast<int>(ci), ar, ac);
    GemmPairSource src(*prober, es.rows, es.cols, es.slots);
    src.budget = o.max_launches;
    say(fmt::format("class {} ({} elements, {}): searching with {}", ci, c.elements, c.where,
                    plan.mode == ProbeMode::Outer && std::min(es.rows.size(), es.cols.size()) >= 8
                        ? fmt::format("a {} x {} rectangle of outputs", es.rows.size(), es.cols.size())
                        : fmt::format("{} outputs on distinct rows and columns", es.slots.size())));
    TreeSearch ts;
    try {
      ts = search_tree(k, src, o.log);
    } catch (const GemmPairSource::BudgetExceeded& b) {
      ts.why = b.why + fmt::format(" of {} (--max-launches)", o.max_launches);
    }
    phase("search");
    c.rounds = ts.rounds;
    c.queries = ts.queries;
    res.queries += ts.queries;
    if (!src.conflicts.empty()) {
      ts.ok = false;
      ts.why = "elements of this class answered one pair differently: " + src.conflicts.front();
    }
    if (!ts.ok) {
      c.why = ts.why;
      all_ok = false;
      if (first_problem.empty()) first_problem = fmt::format("class {} ({}): {}", ci, c.where, c.why);
      res.classes.push_back(std::move(c));
      continue;
    }
    c.revealed = true;
    c.tree = std::move(ts.tree);
    const TreeSummary s = summarize(c.tree);
    c.headline = s.headline;
    c.details = s.details;
    c.fused_width = s.fused_width;
    // The tree must give back the class's own signature answers.
    const LcaIndex lca(c.tree);
    for (std::size_t q = 0; q < res.signature_pairs.size(); ++q) {
      const auto [x, y] = res.signature_pairs[q];
      ++c.verified;
      if (lca.lca_size(x, y) != c.signature[q]) {
        ++c.verify_mismatches;
        if (c.mismatches.size() < 6)
          c.mismatches.push_back(fmt::format("signature L{} = {}, the tree says {}", pair_text(x, y), c.signature[q], lca.lca_size(x, y)));
      }
    }
    say(fmt::format("class {}: {} ({} rounds, {} pairs, {} launches)", ci, c.headline, c.rounds, c.queries, src.launches));
    res.classes.push_back(std::move(c));
  }
  // ---- verification: random pairs at every element, against its class's tree ----
  {
    std::vector<std::unique_ptr<LcaIndex>> lcas;
    for (const auto& c : res.classes) lcas.push_back(c.revealed ? std::make_unique<LcaIndex>(c.tree) : nullptr);
    std::vector<LaunchSpec> specs;
    for (int v = 0; v < o.verify_launches; ++v) {
      LaunchSpec s;
      const auto pos = [&](std::uint64_t stream, int i) { return static_cast<int>(philox_4x32(o.seed, 0x7E00 + stream, static_cast<std::uint64_t>(i))[0] % static_cast<std::uint32_t>(k)); };
      if (plan.mode == ProbeMode::Outer) {
        s.row_x.resize(static_cast<std::size_t>(m));
        s.col_y.resize(static_cast<std::size_t>(n));
        for (int r = 0; r < m; ++r) s.row_x[static_cast<std::size_t>(r)] = pos(2 * static_cast<std::uint64_t>(v), r);
        for (int cc = 0; cc < n; ++cc) s.col_y[static_cast<std::size_t>(cc)] = pos(2 * static_cast<std::uint64_t>(v) + 1, cc);
        for (int r = 0; r < m; ++r)
          for (int cc = 0; cc < n; ++cc) s.wanted.push_back({r, cc});
      } else {
        s.row_x.assign(static_cast<std::size_t>(m), -1);
        s.row_y.assign(static_cast<std::size_t>(m), -1);
        s.col_x.assign(static_cast<std::size_t>(n), -1);
        s.col_y.assign(static_cast<std::size_t>(n), -1);
        const int shift = static_cast<int>(philox_4x32(o.seed, 0x7F00, static_cast<std::uint64_t>(v))[0] % static_cast<std::uint32_t>(n));
        for (int r = 0; r < std::min(m, n); ++r) {
          const int cc = (r + shift) % n, x = pos(2 * static_cast<std::uint64_t>(v), r);
          int y = pos(2 * static_cast<std::uint64_t>(v) + 1, r);
          if (y == x) y = (x + 1) % k;
          s.row_x[static_cast<std::size_t>(r)] = s.col_x[static_cast<std::size_t>(cc)] = x;
          s.row_y[static_cast<std::size_t>(r)] = s.col_y[static_cast<std::size_t>(cc)] = y;
          s.wanted.push_back({r, cc});
        }
      }
      specs.push_back(std::move(s));
    }
    const auto ans = prober->run(specs);
    phase("verification");
    for (std::size_t v = 0; v < specs.size(); ++v)
      for (std::size_t w = 0; w < specs[v].wanted.size(); ++w) {
        const auto [r, cc] = specs[v].wanted[w];
        const auto [x, y] = prober->pair_of(specs[v], r, cc);
        const int cls = grid[static_cast<std::size_t>(r) * static_cast<std::size_t>(n) + static_cast<std::size_t>(cc)];
        if (x < 0 || !lcas[static_cast<std::size_t>(cls)]) continue;
        RevealClass& c = res.classes[static_cast<std::size_t>(cls)];
        ++c.verified;
        const int want = lcas[static_cast<std::size_t>(cls)]->lca_size(x, y);
        if (ans[v][w] != want) {
          ++c.verify_mismatches;
          if (c.mismatches.size() < 6)
            c.mismatches.push_back(fmt::format("output ({}, {}) answered L{} = {}, the class's tree says {}", r, cc, pair_text(x, y),
                                               ans[v][w] == kGarbage ? std::string("no count") : std::to_string(ans[v][w]), want));
        }
      }
  }
  // ---- other probe values: the same signature queries with A's values scaled by 2^-1 (or 2^+1) ----
  {
    std::optional<ProbePlan> alt = shifted(t, plan, -1);
    if (!alt) alt = shifted(t, plan, +1);
    if (!alt) {
      res.value_check = "not run: no other exact probe values in these formats";
    } else {
      res.kernel_seconds += prober->kernel_seconds();
      phase("verification");
      prober.reset();  // one set of buffers at a time
      GemmProber p2(kernel, api, o.m, o.n, *alt, o.timeout_ms);
      const std::size_t q = std::min<std::size_t>(4, sig_specs.size());
      const std::vector<LaunchSpec> specs(sig_specs.begin(), sig_specs.begin() + static_cast<long>(q));
      const auto a2 = p2.run(specs);
      std::int64_t differ = 0;
      std::string first;
      for (std::size_t s = 0; s < q; ++s)
        for (std::size_t e = 0; e < a2[s].size(); ++e)
          if (a2[s][e] != sig[s][e] && differ++ == 0)
            first = fmt::format("; first: output ({}, {}) answered L{} = {} with A's units 2^{} and {} with 2^{}", e / static_cast<std::size_t>(n), e % static_cast<std::size_t>(n),
                                pair_text(res.signature_pairs[s].first, res.signature_pairs[s].second), sig[s][e], plan.ea, a2[s][e], alt->ea);
      res.value_check = fmt::format("{} signature queries again with A's probe values scaled by 2^{}: {} of {} answers differ{}", q, alt->ea - plan.ea, differ,
                                    q * static_cast<std::size_t>(m) * static_cast<std::size_t>(n), first);
      res.kernel_seconds += p2.kernel_seconds();
      phases.add("value check", p2.launches());
      if (differ) {
        all_ok = false;
        if (first_problem.empty()) first_problem = "the answers depend on the probe values: the order depends on the data (" + res.value_check + ")";
      }
    }
  }
  if (prober) res.kernel_seconds += prober->kernel_seconds();
  prober.reset();
  for (const auto& c : res.classes)
    if (c.revealed && c.verify_mismatches) {
      all_ok = false;
      if (first_problem.empty()) first_problem = "answers at some elements disagree with their class's tree: " + c.mismatches.front();
    }
  // ---- the fused width against the block models ----
  const std::vector<BlockModelChoice> models = block_models_for(t, o.cards);
  for (auto& c : res.classes) {
    if (!c.revealed || c.fused_width == 0) continue;
    if (models.empty()) {
      c.card_check = fmt::format("fused nodes of {} products; no behaviour card or published model has these formats", c.fused_width);
      continue;
    }
    for (const auto& bm : models)
      c.card_check += fmt::format("{}{}: fused length {} — {}", c.card_check.empty() ? "" : "; ", bm.source, bm.params.fused_length,
                                  bm.params.fused_length == c.fused_width ? "agrees" : fmt::format("differs from the revealed {}", c.fused_width));
  }
  res.status = all_ok ? "revealed" : "inconsistent";
  const RevealClass& fc = res.classes.front();
  res.message = fc.revealed ? fmt::format("element ({}, {}): {}", o.focus_row, o.focus_col, fc.headline) : "element's class not revealed: " + fc.why;
  if (!first_problem.empty()) res.message += "; " + first_problem;
  std::int64_t search_launches = 0;
  for (const auto& [name, c] : phases.list)
    if (name == "search") search_launches = c;
  int max_rounds = 0;
  for (const auto& c : res.classes) max_rounds = std::max(max_rounds, c.rounds);
  finish(res);
  res.complexity = fmt::format("{} launches in all ({} for the search) answered {} pairs the search asked, {} rounds of queries; FPRev asks one pair "
                               "per launch ({} launches); {} mode: up to {} pairs per launch{}",
                               res.launches, search_launches, res.queries, max_rounds, res.queries, res.mode,
                               plan.mode == ProbeMode::Outer ? o.m * o.n : std::min(o.m, o.n),
                               plan.passes > 1 ? fmt::format(", each launch repeated for {} passes over K", plan.passes) : std::string());
  res.class_of = grid;
  if (o.replay && all_ok) replay_classes(kernel, api, res, grid, o);
  finish(res);
  return res;
}

}  // namespace fpcert
