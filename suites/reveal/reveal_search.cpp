// suites/reveal/reveal_search.cpp — order revelation's search (suites/reveal/reveal.hpp, docs/reveal.md): the breadth-first
// FPRev search, and the helpers of its pairs packed into GEMM launches (the pair source itself is in
// suites/reveal/reveal_internal.hpp).
#include "suites/reveal/reveal_internal.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <numeric>
#include <set>

namespace fpcert {
using namespace reveal_internal;  // pair_text and the GEMM pair source (suites/reveal/reveal_internal.hpp)

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

}  // namespace

namespace reveal_internal {

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

}  // namespace reveal_internal

}  // namespace fpcert
