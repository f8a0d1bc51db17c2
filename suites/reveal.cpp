// suites/reveal.cpp — order revelation (suites/reveal.hpp, docs/reveal.md): the breadth-first FPRev
// search, its pairs packed into GEMM launches, classes of output elements, the checks (determinism,
// other probe values, random pairs per element) and the replay bit for bit.
#include "suites/reveal.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <numeric>
#include <set>

#include "base/codes.hpp"
#include "base/error.hpp"
#include "base/parallel.hpp"
#include "base/philox.hpp"
#include "generators/generate.hpp"
#include "kernels/tc/probe.hpp"
#include "oracle/tc_card.hpp"
#include "oracle/tree_replay.hpp"
#include "oracle/ulp.hpp"
#include "suites/environment.hpp"

namespace fpcert {

// ======================================================================================
// The search
// ======================================================================================

namespace {

struct Task {
  std::vector<int> members;  // ascending
  int bound = 0;             // every member's subtree is a child of a node of `bound` leaves (the root's: K + 1)
  bool all_pairs = false;
  std::vector<int> values;   // pivot: the sizes of the pivot's ancestors below `bound`
  std::vector<int> chain;    // pivot: the task of the other children of each ancestor
  int rest = -1;             // pivot: the task of the members in other children of the `bound` node
  std::vector<int> forest;   // the subtrees the members form (tree ids)
};

std::string pair_text(int x, int y) { return "(" + std::to_string(x) + ", " + std::to_string(y) + ")"; }

/// The forest of a group whose every pair is known: union-find by increasing L; the clusters joined at
/// one L form one node, which must hold exactly L leaves and whose cross pairs must all say L.
bool forest_from_pairs(const std::vector<int>& mem, int bound, const PairAnswers& ans, SumTree& tree, std::vector<int>& forest, std::string& why) {
  const int n = static_cast<int>(mem.size());
  struct P {
    int l, i, j;
  };
  std::vector<P> ps;
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) {
      const int l = ans.get(mem[static_cast<std::size_t>(i)], mem[static_cast<std::size_t>(j)]);
      if (l < 2 || l > bound) {
        why = fmt::format("L{} = {} is not a count in [2, {}]", pair_text(mem[static_cast<std::size_t>(i)], mem[static_cast<std::size_t>(j)]),
                          l == kGarbage ? "no count (the output was not an exact number of units)" : std::to_string(l), bound);
        return false;
      }
      ps.push_back({l, i, j});
    }
  std::sort(ps.begin(), ps.end(), [](const P& a, const P& b) { return a.l < b.l; });
  std::vector<int> parent(static_cast<std::size_t>(n)), id(static_cast<std::size_t>(n)), size(static_cast<std::size_t>(n), 1);
  std::iota(parent.begin(), parent.end(), 0);
  for (int i = 0; i < n; ++i) id[static_cast<std::size_t>(i)] = mem[static_cast<std::size_t>(i)];
  const std::function<int(int)> find = [&](int x) {
    while (parent[static_cast<std::size_t>(x)] != x) x = parent[static_cast<std::size_t>(x)] = parent[static_cast<std::size_t>(parent[static_cast<std::size_t>(x)])];
    return x;
  };
  for (std::size_t s = 0; s < ps.size();) {
    std::size_t e = s;
    while (e < ps.size() && ps[e].l == ps[s].l) ++e;
    const int v = ps[s].l;
    if (v == bound) {
      for (std::size_t q = s; q < e; ++q)
        if (find(ps[q].i) == find(ps[q].j)) {
          why = fmt::format("L{} = {} for two products already joined in a smaller subtree", pair_text(mem[static_cast<std::size_t>(ps[q].i)], mem[static_cast<std::size_t>(ps[q].j)]), v);
          return false;
        }
      s = e;
      continue;
    }
    // Components of the clusters linked at v.
    std::map<int, int> tmp;  // cluster root -> temporary parent
    const std::function<int(int)> tfind = [&](int x) {
      auto it = tmp.find(x);
      if (it == tmp.end()) {
        tmp[x] = x;
        return x;
      }
      while (tmp[x] != x) x = tmp[x];
      return x;
    };
    for (std::size_t q = s; q < e; ++q) {
      const int a = find(ps[q].i), b = find(ps[q].j);
      if (a == b) {
        why = fmt::format("L{} = {}, but a smaller subtree already holds both", pair_text(mem[static_cast<std::size_t>(ps[q].i)], mem[static_cast<std::size_t>(ps[q].j)]), v);
        return false;
      }
      const int ra = tfind(a), rb = tfind(b);
      if (ra != rb) tmp[ra] = rb;
    }
    std::map<int, std::vector<int>> comps;  // component -> cluster roots
    for (const auto& [c, p] : tmp) comps[tfind(c)].push_back(c);
    std::map<int, std::int64_t> edges;
    for (std::size_t q = s; q < e; ++q) ++edges[tfind(find(ps[q].i))];
    for (const auto& [comp, roots] : comps) {
      std::int64_t leaves = 0, cross = 0;
      for (int r : roots) {
        cross += leaves * size[static_cast<std::size_t>(r)];
        leaves += size[static_cast<std::size_t>(r)];
      }
      if (leaves != v) {
        why = fmt::format("the products joined at L = {} with p_{} number {} (a subtree of L leaves must hold L products)", v, mem[static_cast<std::size_t>(roots.front())], leaves);
        return false;
      }
      if (edges[comp] != cross) {
        why = fmt::format("the pairs of one subtree of {} products disagree ({} of {} say L = {})", v, edges[comp], cross, v);
        return false;
      }
      std::vector<int> ch;
      for (int r : roots) ch.push_back(id[static_cast<std::size_t>(r)]);
      const int node = tree.add(std::move(ch));
      const int keep = roots.front();
      for (int r : roots) parent[static_cast<std::size_t>(r)] = keep;
      id[static_cast<std::size_t>(keep)] = node;
      size[static_cast<std::size_t>(keep)] = static_cast<int>(leaves);
    }
    s = e;
  }
  forest.clear();
  for (int i = 0; i < n; ++i)
    if (find(i) == i) forest.push_back(id[static_cast<std::size_t>(i)]);
  return true;
}

}  // namespace

TreeSearch search_tree(int k, PairSource& src, const std::function<void(const std::string&)>& log) {
  TreeSearch out;
  out.tree.k = k;
  if (k == 1) {
    out.tree.root = 0;
    out.ok = true;
    return out;
  }
  const int limit = std::max(2, src.all_pairs_limit());
  std::vector<Task> tasks;
  const auto make = [&](std::vector<int> members, int bound) {
    Task t;
    t.members = std::move(members);
    t.bound = bound;
    t.all_pairs = static_cast<int>(t.members.size()) <= limit;
    if (t.members.size() == 1) t.forest = {t.members.front()};
    tasks.push_back(std::move(t));
    return static_cast<int>(tasks.size()) - 1;
  };
  std::vector<int> all(static_cast<std::size_t>(k));
  std::iota(all.begin(), all.end(), 0);
  std::vector<int> pending{make(all, k + 1)};
  PairAnswers ans;
  while (!pending.empty()) {
    if (++out.rounds > k + 2) {
      out.why = "the search does not converge";
      return out;
    }
    std::vector<PairBlock> blocks;
    for (int ti : pending) {
      const Task& t = tasks[static_cast<std::size_t>(ti)];
      if (t.all_pairs) {
        blocks.push_back({t.members, t.members});
        out.queries += static_cast<std::int64_t>(t.members.size() * (t.members.size() - 1) / 2);
      } else {
        blocks.push_back({{t.members.front()}, std::vector<int>(t.members.begin() + 1, t.members.end())});
        out.queries += static_cast<std::int64_t>(t.members.size() - 1);
      }
    }
    if (log) log(fmt::format("  round {}: {} subproblems, {} pairs", out.rounds, pending.size(), out.queries));
    src.answer(blocks, ans);
    std::vector<int> next;
    for (int ti : pending) {
      if (tasks[static_cast<std::size_t>(ti)].all_pairs) {
        Task& t = tasks[static_cast<std::size_t>(ti)];
        if (!forest_from_pairs(t.members, t.bound, ans, out.tree, t.forest, out.why)) return out;
        continue;
      }
      // Pivot: its ancestors below the bound, and the members hanging off each.
      const std::vector<int> members = tasks[static_cast<std::size_t>(ti)].members;
      const int bound = tasks[static_cast<std::size_t>(ti)].bound, pivot = members.front();
      std::map<int, std::vector<int>> by_value;
      for (std::size_t z = 1; z < members.size(); ++z) {
        const int l = ans.get(pivot, members[z]);
        if (l < 2 || l > bound) {
          out.why = fmt::format("L{} = {} is not a count in [2, {}]", pair_text(pivot, members[z]),
                                l == kGarbage ? "no count (the output was not an exact number of units)" : std::to_string(l), bound);
          return out;
        }
        by_value[l].push_back(members[z]);
      }
      int leaves = 1;
      std::vector<int> values, chain;
      int rest = -1;
      for (auto& [v, group] : by_value) {
        if (v == bound) {
          rest = make(std::move(group), bound);
          continue;
        }
        leaves += static_cast<int>(group.size());
        if (leaves != v) {
          out.why = fmt::format("p_{}'s ancestor with L = {} would hold {} products (a subtree of L leaves must hold L)", pivot, v, leaves);
          return out;
        }
        values.push_back(v);
        chain.push_back(make(std::move(group), v));
      }
      Task& t = tasks[static_cast<std::size_t>(ti)];
      t.values = std::move(values);
      t.chain = std::move(chain);
      t.rest = rest;
      for (int c : t.chain)
        if (tasks[static_cast<std::size_t>(c)].members.size() > 1) next.push_back(c);
      if (t.rest >= 0 && tasks[static_cast<std::size_t>(t.rest)].members.size() > 1) next.push_back(t.rest);
    }
    pending = std::move(next);
  }
  // Assemble, children's tasks (made later) first.
  for (int ti = static_cast<int>(tasks.size()) - 1; ti >= 0; --ti) {
    Task& t = tasks[static_cast<std::size_t>(ti)];
    if (t.all_pairs || t.members.size() == 1) continue;
    int cur = t.members.front();
    for (int c : t.chain) {
      std::vector<int> ch{cur};
      const auto& f = tasks[static_cast<std::size_t>(c)].forest;
      ch.insert(ch.end(), f.begin(), f.end());
      cur = out.tree.add(std::move(ch));
    }
    t.forest = {cur};
    if (t.rest >= 0) {
      const auto& f = tasks[static_cast<std::size_t>(t.rest)].forest;
      t.forest.insert(t.forest.end(), f.begin(), f.end());
    }
  }
  if (tasks.front().forest.size() != 1) {
    out.why = fmt::format("the products form {} separate subtrees, not one sum", tasks.front().forest.size());
    return out;
  }
  out.tree.root = tasks.front().forest.front();
  if (const std::string why = check_tree(out.tree); !why.empty()) {
    out.why = "the answers build no tree: " + why;
    return out;
  }
  out.ok = true;
  return out;
}

// ======================================================================================
// Pairs from GEMM launches
// ======================================================================================

namespace {

/// Answers pairs with probe launches, using only the given output elements: a rectangle rows x cols of
/// one class (outer mode, blocks of pairs per launch), or slots (r, c) with distinct rows and columns
/// (paired mode, or a class with no usable rectangle), one pair each per launch.
class GemmPairSource final : public PairSource {
 public:
  GemmPairSource(GemmProber& p, std::vector<int> rows, std::vector<int> cols, std::vector<std::pair<int, int>> slots)
      : p_(p), rows_(std::move(rows)), cols_(std::move(cols)), slots_(std::move(slots)) {
    blocks_ = p_.plan().mode == ProbeMode::Outer && std::min(rows_.size(), cols_.size()) >= 8;
  }
  int all_pairs_limit() const override {
    return blocks_ ? static_cast<int>(std::min<std::size_t>({64, rows_.size(), cols_.size()})) : 16;
  }
  std::int64_t launches = 0;
  std::vector<std::string> conflicts;  // one pair, two different answers from two elements of the class
  std::int64_t budget = 0;             // launches allowed (0: none left)

  void answer(const std::vector<PairBlock>& blocks, PairAnswers& out) override {
    std::vector<LaunchSpec> specs;
    std::vector<std::vector<std::pair<int, int>>> keys;
    if (blocks_) pack_blocks(blocks, specs, keys);
    else pack_slots(blocks, out, specs, keys);
    if (static_cast<std::int64_t>(specs.size()) * p_.plan().passes > budget)
      throw BudgetExceeded{fmt::format("the search needs {} more launches, beyond the budget", static_cast<std::int64_t>(specs.size()) * p_.plan().passes)};
    budget -= static_cast<std::int64_t>(specs.size()) * p_.plan().passes;
    const auto before = p_.launches();
    const auto res = p_.run(specs);
    launches += p_.launches() - before;
    for (std::size_t s = 0; s < specs.size(); ++s)
      for (std::size_t w = 0; w < keys[s].size(); ++w) {
        const auto [x, y] = keys[s][w];
        const std::int32_t l = res[s][w], had = out.get(x, y);
        if (had >= 0 && l >= 0 && had != l && conflicts.size() < 8)
          conflicts.push_back(fmt::format("L{} = {} at output ({}, {}), {} elsewhere", pair_text(x, y), l, specs[s].wanted[w].first, specs[s].wanted[w].second, had));
        if (had < 0 || l < 0) out.put(x, y, had >= 0 ? had : l);
        if (had >= 0 && l >= 0 && had != l) out.put(x, y, kGarbage);  // no answer rather than a guess
      }
  }

  struct BudgetExceeded {
    std::string why;
  };

 private:
  struct Piece {
    std::vector<int> x, y;
  };
  void pack_blocks(const std::vector<PairBlock>& blocks, std::vector<LaunchSpec>& specs, std::vector<std::vector<std::pair<int, int>>>& keys) {
    const std::size_t cap_r = rows_.size(), cap_c = cols_.size(), chunk = std::max<std::size_t>(1, std::min(cap_r, cap_c) - 1);
    std::vector<Piece> pieces;
    for (const auto& b : blocks) {
      const bool fits = (b.rows.size() <= cap_r && b.cols.size() <= cap_c) || (b.cols.size() <= cap_r && b.rows.size() <= cap_c);
      if (fits) {
        pieces.push_back({b.rows, b.cols});
        continue;
      }
      // Split the longer side (a pivot against many members, usually) into chunks that fit either way.
      const bool split_cols = b.cols.size() >= b.rows.size();
      const auto& longv = split_cols ? b.cols : b.rows;
      const auto& shortv = split_cols ? b.rows : b.cols;
      for (std::size_t s0 = 0; s0 < longv.size(); s0 += chunk)
        for (std::size_t t0 = 0; t0 < shortv.size(); t0 += chunk) {
          std::vector<int> l(longv.begin() + static_cast<long>(s0), longv.begin() + static_cast<long>(std::min(longv.size(), s0 + chunk)));
          std::vector<int> sh(shortv.begin() + static_cast<long>(t0), shortv.begin() + static_cast<long>(std::min(shortv.size(), t0 + chunk)));
          pieces.push_back(split_cols ? Piece{sh, l} : Piece{l, sh});
        }
    }
    std::stable_sort(pieces.begin(), pieces.end(), [](const Piece& a, const Piece& b) { return std::max(a.x.size(), a.y.size()) > std::max(b.x.size(), b.y.size()); });
    struct Bin {
      std::size_t r = 0, c = 0;
      std::vector<std::tuple<const Piece*, bool, std::size_t, std::size_t>> placed;  // piece, transposed, row offset, column offset
    };
    std::vector<Bin> bins;
    for (const Piece& p : pieces) {
      bool done = false;
      for (auto& b : bins) {
        for (bool tr : {false, true}) {
          const std::size_t nr = tr ? p.y.size() : p.x.size(), nc = tr ? p.x.size() : p.y.size();
          if (b.r + nr <= cap_r && b.c + nc <= cap_c) {
            b.placed.push_back({&p, tr, b.r, b.c});
            b.r += nr;
            b.c += nc;
            done = true;
            break;
          }
        }
        if (done) break;
      }
      if (!done) {
        Bin b;
        const bool tr = !(p.x.size() <= cap_r && p.y.size() <= cap_c);
        b.placed.push_back({&p, tr, 0, 0});
        b.r = tr ? p.y.size() : p.x.size();
        b.c = tr ? p.x.size() : p.y.size();
        bins.push_back(std::move(b));
      }
    }
    for (const Bin& b : bins) {
      LaunchSpec s;
      s.row_x.assign(static_cast<std::size_t>(p_.m()), -1);
      s.col_y.assign(static_cast<std::size_t>(p_.n()), -1);
      std::vector<std::pair<int, int>> k;
      for (const auto& [pp, tr, ro, co] : b.placed) {
        const auto& xs = tr ? pp->y : pp->x;
        const auto& ys = tr ? pp->x : pp->y;
        for (std::size_t i = 0; i < xs.size(); ++i) s.row_x[static_cast<std::size_t>(rows_[ro + i])] = xs[i];
        for (std::size_t j = 0; j < ys.size(); ++j) s.col_y[static_cast<std::size_t>(cols_[co + j])] = ys[j];
        for (std::size_t i = 0; i < xs.size(); ++i)
          for (std::size_t j = 0; j < ys.size(); ++j)
            if (xs[i] != ys[j]) {
              s.wanted.push_back({rows_[ro + i], cols_[co + j]});
              k.push_back({xs[i], ys[j]});
            }
      }
      specs.push_back(std::move(s));
      keys.push_back(std::move(k));
    }
  }
  void pack_slots(const std::vector<PairBlock>& blocks, const PairAnswers& known, std::vector<LaunchSpec>& specs,
                  std::vector<std::vector<std::pair<int, int>>>& keys) {
    std::set<std::pair<int, int>> pairs;
    for (const auto& b : blocks)
      for (int x : b.rows)
        for (int y : b.cols)
          if (x != y && !known.has(x, y)) pairs.insert({std::min(x, y), std::max(x, y)});
    const bool paired = p_.plan().mode == ProbeMode::Paired;
    auto it = pairs.begin();
    while (it != pairs.end()) {
      LaunchSpec s;
      s.row_x.assign(static_cast<std::size_t>(p_.m()), -1);
      s.col_y.assign(static_cast<std::size_t>(p_.n()), -1);
      if (paired) {
        s.row_y.assign(static_cast<std::size_t>(p_.m()), -1);
        s.col_x.assign(static_cast<std::size_t>(p_.n()), -1);
      }
      std::vector<std::pair<int, int>> k;
      for (const auto& [r, c] : slots_) {
        if (it == pairs.end()) break;
        const auto [x, y] = *it++;
        s.row_x[static_cast<std::size_t>(r)] = x;
        s.col_y[static_cast<std::size_t>(c)] = y;
        if (paired) {
          s.row_y[static_cast<std::size_t>(r)] = y;
          s.col_x[static_cast<std::size_t>(c)] = x;
        }
        s.wanted.push_back({r, c});
        k.push_back({x, y});
      }
      specs.push_back(std::move(s));
      keys.push_back(std::move(k));
    }
  }

  GemmProber& p_;
  std::vector<int> rows_, cols_;
  std::vector<std::pair<int, int>> slots_;
  bool blocks_ = false;
};

/// A launch where every element answers (x, y).
LaunchSpec uniform_spec(const GemmProber& p, int x, int y) {
  LaunchSpec s;
  s.row_x.assign(static_cast<std::size_t>(p.m()), x);
  s.col_y.assign(static_cast<std::size_t>(p.n()), y);
  if (p.plan().mode == ProbeMode::Paired) {
    s.row_y.assign(static_cast<std::size_t>(p.m()), y);
    s.col_x.assign(static_cast<std::size_t>(p.n()), x);
  }
  for (int r = 0; r < p.m(); ++r)
    for (int c = 0; c < p.n(); ++c) s.wanted.push_back({r, c});
  return s;
}

/// "0..63, 128..191" for a sorted list of indices (at most `max` ranges, then "...").
std::string ranges_text(const std::vector<int>& v, std::size_t max = 4) {
  std::string s;
  std::size_t n = 0;
  for (std::size_t i = 0; i < v.size();) {
    std::size_t j = i + 1;
    while (j < v.size() && v[j] == v[j - 1] + 1) ++j;
    if (n == max) return s + ", ...";
    s += (n ? ", " : "") + (j - i == 1 ? std::to_string(v[i]) : std::to_string(v[i]) + ".." + std::to_string(v[j - 1]));
    ++n;
    i = j;
  }
  return s;
}

struct ElementSet {
  std::vector<int> rows, cols;                  // a rectangle inside the class
  std::vector<std::pair<int, int>> slots;       // distinct rows and columns inside the class
};

/// A large rectangle and a matching inside class `cls` (grid of class ids), starting from the anchor.
ElementSet elements_of(const std::vector<int>& grid, int m, int n, int cls, int ar, int ac) {
  const auto in = [&](int r, int c) { return grid[static_cast<std::size_t>(r) * static_cast<std::size_t>(n) + static_cast<std::size_t>(c)] == cls; };
  ElementSet best;
  const auto consider = [&](std::vector<int> rows, std::vector<int> cols) {
    const auto score = [](const std::vector<int>& r, const std::vector<int>& c) { return std::make_pair(std::min(r.size(), c.size()), r.size() * c.size()); };
    if (score(rows, cols) > score(best.rows, best.cols)) {
      best.rows = std::move(rows);
      best.cols = std::move(cols);
    }
  };
  {  // the anchor's row: its class columns, then the rows that hold all of them
    std::vector<int> cols, rows;
    for (int c = 0; c < n; ++c)
      if (in(ar, c)) cols.push_back(c);
    for (int r = 0; r < m; ++r)
      if (std::all_of(cols.begin(), cols.end(), [&](int c) { return in(r, c); })) rows.push_back(r);
    consider(rows, cols);
  }
  {  // the anchor's column
    std::vector<int> cols, rows;
    for (int r = 0; r < m; ++r)
      if (in(r, ac)) rows.push_back(r);
    for (int c = 0; c < n; ++c)
      if (std::all_of(rows.begin(), rows.end(), [&](int r) { return in(r, c); })) cols.push_back(c);
    consider(rows, cols);
  }
  std::vector<char> used_c(static_cast<std::size_t>(n), 0);
  for (int r = 0; r < m; ++r)
    for (int c = 0; c < n; ++c)
      if (in(r, c) && !used_c[static_cast<std::size_t>(c)]) {
        used_c[static_cast<std::size_t>(c)] = 1;
        best.slots.push_back({r, c});
        break;
      }
  return best;
}

std::string class_where(const std::vector<int>& grid, int m, int n, int cls, std::int64_t count) {
  if (count == static_cast<std::int64_t>(m) * n) return "every element";
  std::set<int> rs, cs;
  for (int r = 0; r < m; ++r)
    for (int c = 0; c < n; ++c)
      if (grid[static_cast<std::size_t>(r) * static_cast<std::size_t>(n) + static_cast<std::size_t>(c)] == cls) {
        rs.insert(r);
        cs.insert(c);
      }
  const std::vector<int> rv(rs.begin(), rs.end()), cv(cs.begin(), cs.end());
  const bool product = static_cast<std::int64_t>(rv.size()) * static_cast<std::int64_t>(cv.size()) == count;
  return fmt::format("{}rows {} x columns {}", product ? "" : fmt::format("{} elements within ", count), ranges_text(rv), ranges_text(cv));
}

/// Probe values shifted by 2^d on A (units and large values alike), when every value stays exact (normal,
/// unless the plan's units were already subnormal) and the products stay inside the accumulator's range.
std::optional<ProbePlan> shifted(const KernelTraits& t, const ProbePlan& p, int d) {
  ProbePlan q = p;
  q.ea += d;
  const auto code = [&](const Format& f, int e, bool neg) -> std::optional<std::uint64_t> {
    const double v = std::ldexp(neg ? -1.0 : 1.0, e);
    const Rounded r = round_double(f, v, Rounder::nearest(f));
    if (r.flags || to_double(f, r.code) != v || (e < f.emin() && !p.subnormal_units)) return std::nullopt;
    return r.code;
  };
  for (const Format* f : {t.a_input, t.a_operand})
    if (!code(*f, q.ea, false) || !code(*f, q.ea + q.sa, true)) return std::nullopt;
  const int e = q.ea + q.eb;
  for (const Format* f : {t.acc, t.out})
    if (e < f->emin()) return std::nullopt;
  if (e + q.ratio_bits + 1 > t.acc->emax() || std::ldexp(static_cast<double>(p.k), e) > t.out->max_finite()) return std::nullopt;
  q.a_unit = *code(*t.a_input, q.ea, false);
  q.a_big = *code(*t.a_input, q.ea + q.sa, false);
  q.a_neg_big = *code(*t.a_input, q.ea + q.sa, true);
  return q;
}

}  // namespace

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
  std::ifstream in(path);
  if (!in) throw InputError("cards: cannot read '" + path + "'");
  nlohmann::json j;
  try {
    in >> j;
  } catch (const nlohmann::json::exception& e) {
    throw InputError("cards " + path + ": " + e.what());
  }
  std::vector<BlockModelChoice> out;
  const nlohmann::json list = j.contains("cards") ? j.at("cards") : nlohmann::json::array({j});
  for (const auto& cj : list) {
    const BehaviourCard c = card_from_json(cj);
    if (c.supported && !c.integer && c.passed()) out.push_back({"card " + c.id + " (" + c.device + ")", c.params});
  }
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
  const Support sup = kernel.can_implement(o.m, o.n, o.k);
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
  if (o.replay && all_ok) replay_classes(kernel, api, res, grid, o);
  finish(res);
  return res;
}

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
    for (const auto& m : models) blocks.push_back(m);
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

void replay_classes(GemmKernel& kernel, DeviceApi& api, RevealResult& res, const std::vector<int>& class_of, const RevealOptions& o) {
  const KernelTraits& t = kernel.traits();
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
