// suites/reveal/reveal_replay.cpp — order revelation's replay (suites/reveal/reveal.hpp, docs/reveal.md): each revealed
// class's tree run bit for bit against the kernel on random inputs, under the first arithmetic that agrees.
#include "suites/reveal/reveal.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <optional>
#include <span>

#include "base/codes.hpp"
#include "base/error.hpp"
#include "base/parallel.hpp"
#include "generators/generate.hpp"
#include "oracle/order/tree_replay.hpp"
#include "oracle/ulp.hpp"

namespace fpcert {

// ======================================================================================
// Replay
// ======================================================================================

namespace {

struct Candidate {
  TreeArith arith;
  std::string label;
};

/// The arithmetic the replay may assume for a tree, most likely first: the traits' formats, an FMA
/// when products are exact, round-to-nearest adds, the lower k first; then the alternatives the tree's
/// node kinds make relevant; fused nodes with each block model.
std::vector<Candidate> candidates(const KernelTraits& t, const SumTree& tree, const std::vector<BlockModelChoice>& models) {
  bool add = false, join = false, two = false, fused = false;
  for (const auto& ch : tree.nodes) {
    int leaves = 0;
    for (int c : ch) leaves += tree.is_leaf(c);
    if (ch.size() > 2) fused = true;
    else if (leaves == 0) add = true;
    else if (leaves == 1) join = true;
    else two = true;
  }
  TreeArith base;
  base.a = t.a_input;
  base.b = t.b_input;
  base.a_operand = t.a_operand;
  base.b_operand = t.b_operand;
  base.operand_rounding = t.input_rounding;
  base.acc = t.acc;
  base.out = t.out;
  std::vector<Rounding> roundings{Rounding::NearestEven};
  if ((add || join || two) && t.acc_rounding != Rounding::NearestEven) roundings.push_back(t.acc_rounding);
  std::vector<LeafJoin> joins{t.exact_products ? LeafJoin::Fma : LeafJoin::MulAdd};
  if (join || two) joins.push_back(t.exact_products ? LeafJoin::MulAdd : LeafJoin::Fma);
  std::vector<bool> firsts{true};
  if (two) firsts.push_back(false);
  std::vector<std::optional<BlockModelChoice>> blocks;
  if (fused)
    for (const auto& m : models) {
      blocks.push_back(m);
      // An instruction that reads a narrower format from wider containers (tf32 from fp32 patterns) reads
      // the low bits its way (the card's operand_read); a library may round the operands itself first
      // (cuBLAS's TF32 path: cvt.rna), which is the same node with another read: each is a candidate.
      if (m.params.a.precision() < t.a_input->precision() || m.params.b.precision() < t.b_input->precision())
        for (Rounding r : {Rounding::NearestAway, Rounding::NearestEven})
          if (r != m.params.operand_read) {
            BlockModelChoice v = m;
            v.params.operand_read = r;
            v.source += fmt::format(", operands rounded {} to {} before the instruction", to_string(r), m.params.a.tag);
            blocks.push_back(std::move(v));
          }
    }
  if (blocks.empty()) blocks.push_back(std::nullopt);
  std::vector<Candidate> out;
  for (const auto& b : blocks)
    for (Rounding r : roundings)
      for (LeafJoin j : joins)
        for (bool f : firsts) {
          Candidate c{base, ""};
          c.arith.acc_rounding = r;
          c.arith.leaf_join = j;
          c.arith.first_low = f;
          if (b) {
            c.arith.fused = b->params;
            c.arith.fused_source = b->source;
          }
          c.label = c.arith.describe();
          out.push_back(std::move(c));
        }
  return out;
}

std::vector<std::uint64_t> round_inputs(const std::vector<double>& v, const Format& f, Rounding r) {
  std::vector<std::uint64_t> out(v.size());
  const Rounder rr{r, default_saturation(f), NanPayload::Preserve};
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = round_double(f, v[i], rr).code;
  return out;
}

}  // namespace

void replay_classes(GemmKernel& kernel, DeviceApi& api, RevealResult& res, const std::vector<int>& class_of, const RevealOptions& o,
                    std::vector<std::optional<TreeArith>>* chosen) {
  const KernelTraits& t = kernel.traits();
  if (chosen) chosen->assign(res.classes.size(), std::nullopt);
  const int m = static_cast<int>(res.m), n = static_cast<int>(res.n), k = static_cast<int>(res.k);
  const std::vector<BlockModelChoice> models = block_models_for(t, o.cards);
  struct Live {
    int cls;
    std::vector<Candidate> cands;
    std::unique_ptr<TreeReplay> replay;
  };
  std::vector<Live> live;
  for (std::size_t ci = 0; ci < res.classes.size(); ++ci) {
    RevealClass& c = res.classes[ci];
    if (!c.revealed) continue;
    Live l{static_cast<int>(ci), candidates(t, c.tree, models), nullptr};
    c.replay.requested = true;
    c.replay.inputs = fmt::format("uniform [-1, 1), normal N(0, 1) and exponents in [-8, 8] in turn (generators, seed {} + trial), rounded into {}/{}",
                                  o.seed, t.a_input->tag, t.b_input->tag);
    live.push_back(std::move(l));
  }
  if (live.empty()) return;
  const int ab = container_bytes(*t.a_input), bb = container_bytes(*t.b_input), cb = container_bytes(*t.out);
  std::vector<std::uint8_t> ha(static_cast<std::size_t>(res.m * res.k * ab)), hb(static_cast<std::size_t>(res.k * res.n * bb)), hc(static_cast<std::size_t>(res.m * res.n * cb)), hc2(hc.size());
  void* da = api.alloc(ha.size());
  void* db = api.alloc(hb.size());
  void* dc = api.alloc(hc.size());
  struct Free {
    DeviceApi& api;
    void *a, *b, *c;
    ~Free() {
      api.free(a);
      api.free(b);
      api.free(c);
    }
  } freer{api, da, db, dc};
  std::vector<std::uint64_t> ca, cbv;  // codes of the trial's inputs, A row-major, B column-major (each column contiguous)
  const auto run_kernel = [&](std::vector<std::uint8_t>& out) {
    GemmOperands ops;
    ops.m = res.m;
    ops.n = res.n;
    ops.k = res.k;
    ops.a = da;
    ops.lda = res.k;
    ops.b = db;
    ops.ldb = res.n;
    ops.c = dc;
    ops.ldc = res.n;
    ops.stream = api.stream();
    kernel.run(ops);
    api.synchronize(o.timeout_ms);
    api.to_host(out.data(), dc, out.size());
  };
  const std::uint64_t target = std::max<std::uint64_t>(1, o.replay_samples);
  for (int trial = 0; trial < o.replay_trials_max; ++trial) {
    bool more = false;
    for (const Live& l : live) more = more || res.classes[static_cast<std::size_t>(l.cls)].replay.compared < target;
    if (!more) break;
    const char* family = trial % 3 == 0 ? "uniform" : trial % 3 == 1 ? "normal" : "exp_uniform";
    const std::string spec = fmt::format("{}:m={},n={},k={},seed={}{}", family, res.m, res.n, res.k, o.seed + static_cast<std::uint64_t>(trial),
                                         trial % 3 == 2 ? ",emin=-8,emax=8" : "");
    GenerateOptions gopt;
    gopt.kappa_products = 0;
    const Problem p = generate(spec, gopt);
    ca = round_inputs(p.a.data, *t.a_input, t.input_rounding);
    const auto bcodes = round_inputs(p.b.data, *t.b_input, t.input_rounding);
    for (std::size_t i = 0; i < ca.size(); ++i) store_code(ha.data(), static_cast<std::int64_t>(i), ab, to_container(*t.a_input, ca[i]));
    for (std::size_t i = 0; i < bcodes.size(); ++i) store_code(hb.data(), static_cast<std::int64_t>(i), bb, to_container(*t.b_input, bcodes[i]));
    cbv.resize(bcodes.size());
    for (int kk = 0; kk < k; ++kk)
      for (int c = 0; c < n; ++c)
        cbv[static_cast<std::size_t>(c) * static_cast<std::size_t>(k) + static_cast<std::size_t>(kk)] = bcodes[static_cast<std::size_t>(kk) * static_cast<std::size_t>(n) + static_cast<std::size_t>(c)];
    api.to_device(da, ha.data(), ha.size());
    api.to_device(db, hb.data(), hb.size());
    run_kernel(hc);
    if (trial == 0) {  // the same inputs twice: a kernel whose output changes is not replayable
      run_kernel(hc2);
      if (hc != hc2) {
        for (const Live& l : live) res.classes[static_cast<std::size_t>(l.cls)].replay.why_not = "the kernel gave different outputs for the same random inputs twice";
        res.deterministic = false;
        res.status = "nondeterministic";
        res.message += "; on random inputs the kernel's output changes between identical launches";
        return;
      }
    }
    const auto kernel_code = [&](int r, int c) { return from_container(*t.out, load_code(hc.data(), static_cast<std::int64_t>(r) * n + c, cb)); };
    const auto a_line = [&](const TreeReplay& rp, int r) {
      return rp.line_a(std::span<const std::uint64_t>(ca.data() + static_cast<std::size_t>(r) * static_cast<std::size_t>(k), static_cast<std::size_t>(k)));
    };
    const auto b_line = [&](const TreeReplay& rp, int c) {
      return rp.line_b(std::span<const std::uint64_t>(cbv.data() + static_cast<std::size_t>(c) * static_cast<std::size_t>(k), static_cast<std::size_t>(k)));
    };
    for (Live& l : live) {
      RevealClass& cls = res.classes[static_cast<std::size_t>(l.cls)];
      RevealReplay& rep = cls.replay;
      if (rep.compared >= target || !rep.why_not.empty()) continue;
      std::vector<std::pair<int, int>> els;
      for (int r = 0; r < m; ++r)
        for (int c = 0; c < n; ++c)
          if (class_of[static_cast<std::size_t>(r) * static_cast<std::size_t>(n) + static_cast<std::size_t>(c)] == l.cls) els.push_back({r, c});
      if (!l.replay) {
        // Choose the arithmetic on the first trial's first elements: the first candidate that agrees with all of them.
        const std::size_t probe = std::min<std::size_t>(els.size(), 512);
        int best = -1;
        std::uint64_t best_eq = 0;
        std::string last_error;
        for (std::size_t ci = 0; ci < l.cands.size(); ++ci) {
          std::unique_ptr<TreeReplay> rp;
          try {
            rp = std::make_unique<TreeReplay>(cls.tree, l.cands[ci].arith);
          } catch (const InputError& e) {
            last_error = e.what();
            rep.tried.push_back(l.cands[ci].label + ": cannot run (" + last_error + ")");
            continue;
          }
          std::uint64_t eq = 0;
          for (std::size_t e = 0; e < probe; ++e) eq += rp->run(a_line(*rp, els[e].first), b_line(*rp, els[e].second)) == kernel_code(els[e].first, els[e].second);
          rep.tried.push_back(fmt::format("{}: {} of {} equal", l.cands[ci].label, eq, probe));
          if (best < 0 || eq > best_eq) {
            best = static_cast<int>(ci);
            best_eq = eq;
          }
          if (eq == probe) break;
        }
        if (best < 0) {
          rep.why_not = last_error;
          continue;
        }
        l.replay = std::make_unique<TreeReplay>(cls.tree, l.cands[static_cast<std::size_t>(best)].arith);
        rep.assumed = l.cands[static_cast<std::size_t>(best)].label;
        rep.ran = true;
        if (chosen) (*chosen)[static_cast<std::size_t>(l.cls)] = l.cands[static_cast<std::size_t>(best)].arith;
      }
      // Every element of the class, rows in parallel.
      const TreeReplay& rp = *l.replay;
      std::vector<std::uint64_t> got(els.size());
      std::vector<ReplayLine> blines(static_cast<std::size_t>(n));
      std::vector<char> need_col(static_cast<std::size_t>(n), 0);
      for (const auto& [r, c] : els) need_col[static_cast<std::size_t>(c)] = 1;
      parallel_for(static_cast<std::uint64_t>(n), 16, [&](std::uint64_t b0, std::uint64_t b1, unsigned) {
        for (std::uint64_t c = b0; c < b1; ++c)
          if (need_col[c]) blines[c] = b_line(rp, static_cast<int>(c));
      });
      // Group the elements by row so each row's line is made once.
      std::vector<std::size_t> row_start(static_cast<std::size_t>(m) + 1, 0);
      for (const auto& [r, c] : els) ++row_start[static_cast<std::size_t>(r) + 1];
      for (int r = 0; r < m; ++r) row_start[static_cast<std::size_t>(r) + 1] += row_start[static_cast<std::size_t>(r)];
      parallel_for(static_cast<std::uint64_t>(m), 1, [&](std::uint64_t r0, std::uint64_t r1, unsigned) {
        for (std::uint64_t r = r0; r < r1; ++r) {
          if (row_start[r] == row_start[r + 1]) continue;
          const ReplayLine al = a_line(rp, static_cast<int>(r));
          for (std::size_t e = row_start[r]; e < row_start[r + 1]; ++e) got[e] = rp.run(al, blines[static_cast<std::size_t>(els[e].second)]);
        }
      });
      for (std::size_t e = 0; e < els.size(); ++e) {
        const auto [r, c] = els[e];
        const std::uint64_t kc = kernel_code(r, c);
        ++rep.compared;
        if (kc == got[e]) {
          ++rep.equal;
          continue;
        }
        if (rep.diffs.size() < 8) {
          const double kv = to_double(*t.out, kc), rv = to_double(*t.out, got[e]);
          rep.diffs.push_back({trial, r, c, kc, got[e], fmt::format("kernel {} ({:#x}), replay {} ({:#x}), {} ulp apart; inputs {}", kv, kc, rv, got[e],
                                                                     std::llabs(code_ordinal(*t.out, kc) - code_ordinal(*t.out, got[e])), spec)});
        }
      }
      ++rep.trials;
    }
  }
}

}  // namespace fpcert
