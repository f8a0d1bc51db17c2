// oracle/order/sum_tree.cpp — summation trees: checks, canonical form, LCA sizes, known orders, summary,
// drawing and JSON (oracle/order/sum_tree.hpp). Every traversal is iterative: a sequential chain of K = 65536
// products is a tree of depth 65535, too deep for recursion on a thread's stack.
#include "oracle/order/sum_tree.hpp"

#include <algorithm>
#include <bit>
#include <functional>
#include <map>
#include <numeric>

#include "base/error.hpp"

namespace fpcert {

int SumTree::add(std::vector<int> children) {
  nodes.push_back(std::move(children));
  return k + static_cast<int>(nodes.size()) - 1;
}

namespace {

std::size_t ix(int id) { return static_cast<std::size_t>(id); }

/// Post-order of the ids reachable from the root (children before parents, children in stored order).
std::vector<int> post_order(const SumTree& t) {
  std::vector<int> out;
  if (t.root < 0) return out;
  out.reserve(ix(t.size()));
  std::vector<std::pair<int, std::size_t>> st{{t.root, 0}};
  while (!st.empty()) {
    auto& [id, next] = st.back();
    if (t.is_leaf(id) || next == t.children(id).size()) {
      out.push_back(id);
      st.pop_back();
      continue;
    }
    const int c = t.children(id)[next++];
    st.push_back({c, 0});
  }
  return out;
}

/// Smallest leaf under every id.
std::vector<int> min_leaves(const SumTree& t, const std::vector<int>& post) {
  std::vector<int> m(ix(t.size()), 0);
  for (int id : post) {
    if (t.is_leaf(id)) {
      m[ix(id)] = id;
      continue;
    }
    int v = t.k;
    for (int c : t.children(id)) v = std::min(v, m[ix(c)]);
    m[ix(id)] = v;
  }
  return m;
}

std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  // splitmix64 finaliser over h ^ v: a hash, not a proof; equal shapes are confirmed by size and order where it matters.
  std::uint64_t z = h ^ (v + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2));
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

}  // namespace

std::string check_tree(const SumTree& t) {
  if (t.k < 1) return "a tree needs at least one leaf";
  if (t.root < 0 || t.root >= t.size()) return "root " + std::to_string(t.root) + " is not a node";
  std::vector<int> parent(ix(t.size()), -1);
  for (int n = 0; n < static_cast<int>(t.nodes.size()); ++n) {
    const int id = t.k + n;
    if (t.nodes[ix(n)].size() < 2) return "node " + std::to_string(id) + " has fewer than two children";
    for (int c : t.nodes[ix(n)]) {
      if (c < 0 || c >= t.size()) return "node " + std::to_string(id) + " has child " + std::to_string(c) + ", not a node";
      if (parent[ix(c)] >= 0) return "id " + std::to_string(c) + " is the child of two nodes";
      parent[ix(c)] = id;
    }
  }
  if (parent[ix(t.root)] >= 0) return "the root has a parent";
  // Every id reachable from the root exactly once (a cycle or a second component leaves some unreached).
  std::vector<char> seen(ix(t.size()), 0);
  std::vector<int> st{t.root};
  int reached = 0;
  while (!st.empty()) {
    const int id = st.back();
    st.pop_back();
    if (seen[ix(id)]) return "id " + std::to_string(id) + " is reached twice";
    seen[ix(id)] = 1;
    ++reached;
    if (!t.is_leaf(id))
      for (int c : t.children(id)) st.push_back(c);
  }
  if (reached != t.size()) return std::to_string(t.size() - reached) + " ids are not under the root";
  return {};
}

SumTree canonical(const SumTree& t) {
  const std::vector<int> post = post_order(t);
  const std::vector<int> mins = min_leaves(t, post);
  SumTree out;
  out.k = t.k;
  std::vector<int> new_id(ix(t.size()), -1);
  // Children sorted by smallest leaf: a post-order that visits children in that order numbers the
  // nodes canonically. Sort each node's children first, then traverse.
  SumTree sorted = t;
  for (auto& ch : sorted.nodes) std::sort(ch.begin(), ch.end(), [&](int a, int b) { return mins[ix(a)] < mins[ix(b)]; });
  for (int id : post_order(sorted)) {
    if (sorted.is_leaf(id)) {
      new_id[ix(id)] = id;
      continue;
    }
    std::vector<int> ch;
    for (int c : sorted.children(id)) ch.push_back(new_id[ix(c)]);
    new_id[ix(id)] = out.add(std::move(ch));
  }
  out.root = t.root < 0 ? -1 : new_id[ix(t.root)];
  return out;
}

bool same_order(const SumTree& a, const SumTree& b) {
  if (a.k != b.k || a.nodes.size() != b.nodes.size()) return false;
  const SumTree ca = canonical(a), cb = canonical(b);
  return ca.root == cb.root && ca.nodes == cb.nodes;
}

std::vector<int> subtree_sizes(const SumTree& t) {
  std::vector<int> s(ix(t.size()), 0);
  for (int id : post_order(t)) {
    if (t.is_leaf(id)) {
      s[ix(id)] = 1;
      continue;
    }
    for (int c : t.children(id)) s[ix(id)] += s[ix(c)];
  }
  return s;
}

std::vector<int> parents(const SumTree& t) {
  std::vector<int> p(ix(t.size()), -1);
  for (int n = 0; n < static_cast<int>(t.nodes.size()); ++n)
    for (int c : t.nodes[ix(n)]) p[ix(c)] = t.k + n;
  return p;
}

// ---- LCA: Euler tour + sparse table of the least-depth position ----

LcaIndex::LcaIndex(const SumTree& t) {
  first_.assign(ix(t.size()), -1);
  size_ = subtree_sizes(t);
  if (t.root < 0) return;
  std::vector<int> depth_of(ix(t.size()), 0);
  std::vector<std::pair<int, std::size_t>> st{{t.root, 0}};
  while (!st.empty()) {
    auto& [id, next] = st.back();
    if (next == 0) first_[ix(id)] = static_cast<int>(euler_.size());
    euler_.push_back(id);
    depth_.push_back(depth_of[ix(id)]);
    if (t.is_leaf(id) || next == t.children(id).size()) {
      st.pop_back();
      continue;
    }
    const int c = t.children(id)[next++];
    depth_of[ix(c)] = depth_of[ix(id)] + 1;
    st.push_back({c, 0});
  }
  const std::size_t n = euler_.size();
  sparse_.push_back(std::vector<int>(n));
  std::iota(sparse_[0].begin(), sparse_[0].end(), 0);
  for (std::size_t j = 1; (std::size_t{1} << j) <= n; ++j) {
    const auto& prev = sparse_[j - 1];
    std::vector<int> cur(n - (std::size_t{1} << j) + 1);
    for (std::size_t i = 0; i < cur.size(); ++i) {
      const int a = prev[i], b = prev[i + (std::size_t{1} << (j - 1))];
      cur[i] = depth_[ix(a)] <= depth_[ix(b)] ? a : b;
    }
    sparse_.push_back(std::move(cur));
  }
}

int LcaIndex::lca(int x, int y) const {
  int a = first_[ix(x)], b = first_[ix(y)];
  if (a > b) std::swap(a, b);
  const std::size_t len = static_cast<std::size_t>(b - a + 1);
  const int j = std::bit_width(len) - 1;
  const int p = sparse_[ix(j)][ix(a)], q = sparse_[ix(j)][static_cast<std::size_t>(b) + 1 - (std::size_t{1} << j)];
  return euler_[ix(depth_[ix(p)] <= depth_[ix(q)] ? p : q)];
}

// ---- known orders ----

namespace {

/// Sequential chain over terms (ids) in the given order: ((t0 + t1) + t2) + ...
int chain_of(SumTree& t, const std::vector<int>& terms) {
  int cur = terms.front();
  for (std::size_t i = 1; i < terms.size(); ++i) cur = t.add({cur, terms[i]});
  return cur;
}
int pairwise_of(SumTree& t, const std::vector<int>& terms, std::size_t lo, std::size_t hi) {
  // Iterative would need an explicit stack; depth here is log2(n), so recursion is safe.
  if (hi - lo == 1) return terms[lo];
  const std::size_t mid = lo + (hi - lo + 1) / 2;
  const int a = pairwise_of(t, terms, lo, mid), b = pairwise_of(t, terms, mid, hi);
  return t.add({a, b});
}
int fused_chain_of(SumTree& t, int first, int count, int width) {
  int cur = -1;
  for (int s = first; s < first + count; s += width) {
    std::vector<int> ch;
    if (cur >= 0) ch.push_back(cur);
    for (int x = s; x < std::min(first + count, s + width); ++x) ch.push_back(x);
    cur = ch.size() == 1 ? ch.front() : t.add(std::move(ch));
  }
  return cur;
}
std::vector<int> iota_ids(int first, int count) {
  std::vector<int> v(ix(count));
  std::iota(v.begin(), v.end(), first);
  return v;
}

}  // namespace

SumTree sequential_tree(int k) {
  SumTree t;
  t.k = k;
  t.root = chain_of(t, iota_ids(0, k));
  return t;
}

SumTree pairwise_tree(int k) {
  SumTree t;
  t.k = k;
  const auto ids = iota_ids(0, k);
  t.root = pairwise_of(t, ids, 0, ids.size());
  return t;
}

SumTree fused_chain_tree(int k, int width) {
  SumTree t;
  t.k = k;
  t.root = fused_chain_of(t, 0, k, std::max(1, width));
  return t;
}

SumTree partitioned_tree(int k, int chunk, PartOrder inner, PartOrder outer, int inner_width) {
  SumTree t;
  t.k = k;
  chunk = std::max(1, chunk);
  std::vector<int> partials;
  for (int s = 0; s < k; s += chunk) {
    const int n = std::min(chunk, k - s);
    const auto ids = iota_ids(s, n);
    if (inner_width > 1) partials.push_back(fused_chain_of(t, s, n, inner_width));
    else partials.push_back(inner == PartOrder::Sequential ? chain_of(t, ids) : pairwise_of(t, ids, 0, ids.size()));
  }
  t.root = outer == PartOrder::Sequential ? chain_of(t, partials) : pairwise_of(t, partials, 0, partials.size());
  return t;
}

// ---- summary ----

namespace {

struct Facts {
  std::vector<int> post, mins, maxs, sizes, parent, height;
  std::vector<std::uint64_t> shape;
  std::vector<char> chain;  // internal node with at most one internal child
};

Facts facts_of(const SumTree& t) {
  Facts f;
  f.post = post_order(t);
  f.mins = min_leaves(t, f.post);
  f.maxs.assign(ix(t.size()), 0);
  f.sizes.assign(ix(t.size()), 0);
  f.height.assign(ix(t.size()), 0);
  f.shape.assign(ix(t.size()), 0);
  f.chain.assign(ix(t.size()), 0);
  f.parent = parents(t);
  for (int id : f.post) {
    if (t.is_leaf(id)) {
      f.maxs[ix(id)] = id;
      f.sizes[ix(id)] = 1;
      f.shape[ix(id)] = 1;
      continue;
    }
    std::vector<int> ch = t.children(id);
    std::sort(ch.begin(), ch.end(), [&](int a, int b) { return f.mins[ix(a)] < f.mins[ix(b)]; });
    std::uint64_t h = mix(0x5EED, ch.size());
    int internal = 0, mx = 0, ht = 0;
    for (int c : ch) {
      f.sizes[ix(id)] += f.sizes[ix(c)];
      mx = std::max(mx, f.maxs[ix(c)]);
      ht = std::max(ht, f.height[ix(c)]);
      internal += !t.is_leaf(c);
      h = mix(mix(h, f.shape[ix(c)]), static_cast<std::uint64_t>(f.mins[ix(c)] - f.mins[ix(id)]));
    }
    f.maxs[ix(id)] = mx;
    f.height[ix(id)] = ht + 1;
    f.shape[ix(id)] = h;
    f.chain[ix(id)] = internal <= 1;
  }
  return f;
}

/// "a..b" for a range of products, "a" for one.
std::string range_text(int a, int b) { return a == b ? std::to_string(a) : std::to_string(a) + ".." + std::to_string(b); }

/// How a list of leaf indices runs: "k = 0..2047 ascending", "k = 3, 7, ..., 4095 (stride 4)", ...
std::string order_text(const std::vector<int>& ks) {
  if (ks.size() == 1) return "k = " + std::to_string(ks.front());
  const long d = static_cast<long>(ks[1]) - ks[0];
  bool ap = d != 0;
  for (std::size_t i = 2; i < ks.size() && ap; ++i) ap = static_cast<long>(ks[i]) - ks[i - 1] == d;
  if (ap && d == 1) return "k = " + range_text(ks.front(), ks.back()) + " ascending";
  if (ap && d == -1) return "k = " + std::to_string(ks.front()) + " down to " + std::to_string(ks.back()) + " (descending)";
  if (ap) return "k = " + std::to_string(ks.front()) + ", " + std::to_string(ks[1]) + ", ..., " + std::to_string(ks.back()) + " (stride " + std::to_string(d) + ")";
  std::string s = "k in another order (";
  for (std::size_t i = 0; i < std::min<std::size_t>(ks.size(), 6); ++i) s += (i ? ", " : "") + std::to_string(ks[i]);
  return s + (ks.size() > 6 ? ", ...)" : ")");
}

std::string chain_text(const TreePart& p) {
  std::vector<int> order;
  for (const auto& s : p.steps) order.insert(order.end(), s.begin(), s.end());
  const std::size_t t = p.steps.size();
  if (t == 1 && p.steps[0].size() == 1) return "the single product p_" + std::to_string(p.steps[0][0]);
  std::string kind;
  bool rest_same = true;
  for (std::size_t i = 1; i < t; ++i) rest_same = rest_same && (p.steps[i].size() == p.steps[1].size() || (i + 1 == t && p.steps[i].size() < p.steps[1].size()));
  const std::size_t w0 = p.steps[0].size(), w1 = t > 1 ? p.steps[1].size() : w0;
  if (t == 1)
    kind = std::to_string(w0) + " products in one " + std::to_string(w0) + "-term node (one rounding)";
  else if (w0 == 2 && w1 == 1 && rest_same)
    kind = "sequential, one product per step (" + std::to_string(t) + " two-term nodes: an FMA or an add each)";
  else if (w1 >= 2 && rest_same && w0 >= w1)
    kind = "a chain of " + std::to_string(t) + " fused nodes of " + std::to_string(w1) + " products + the running sum (the first: " +
           std::to_string(w0) + " products), one rounding each";
  else {
    std::map<std::size_t, int> h;
    for (const auto& s : p.steps) ++h[s.size()];
    kind = "a chain of " + std::to_string(t) + " nodes adding";
    bool first = true;
    for (const auto& [w, n] : h) {
      kind += (first ? " " : ", ") + std::to_string(n) + " x " + std::to_string(w) + " product" + (w == 1 ? "" : "s");
      first = false;
    }
  }
  return kind + ", " + order_text(order);
}

/// Describe how the parts (the skeleton's leaves) combine: skeleton nodes are the internal nodes with two or more internal children.
std::string combine_text(const SumTree& t, const Facts& f, const std::vector<TreePart>& parts) {
  const int m = static_cast<int>(parts.size());
  // Skeleton nodes, and per skeleton node its children that are skeleton nodes.
  std::vector<int> skel;
  for (int id : f.post)
    if (!t.is_leaf(id) && !f.chain[ix(id)]) skel.push_back(id);
  const auto is_skel = [&](int id) { return !t.is_leaf(id) && !f.chain[ix(id)]; };
  if (skel.size() == 1) {
    const int root = skel.front();
    return m == 2 ? "the two partials added by one node" : "all " + std::to_string(m) + " partials added in one " + std::to_string(t.children(root).size()) + "-term node (one rounding)";
  }
  // Left-deep: every skeleton node has exactly one skeleton child (except the lowest).
  bool left_deep = true;
  for (int id : skel) {
    int sk = 0;
    for (int c : t.children(id)) sk += is_skel(c);
    if (sk > 1) left_deep = false;
  }
  if (left_deep) {
    // Order in which the partials join: the lowest skeleton node's parts first.
    std::vector<int> seq;
    for (int id : skel) {  // post-order: lowest first
      std::vector<int> ch = t.children(id);
      std::sort(ch.begin(), ch.end(), [&](int a, int b) { return f.mins[ix(a)] < f.mins[ix(b)]; });
      for (int c : ch)
        if (!is_skel(c)) seq.push_back(f.mins[ix(c)]);
    }
    bool ascending = std::is_sorted(seq.begin(), seq.end());
    // Every skeleton node with exactly two children: a sequential sum of the partials.
    bool binary = true;
    for (int id : skel) binary = binary && t.children(id).size() == 2;
    return std::string("the partials added sequentially") + (binary ? " (one add each)" : " (nodes of several partials)") +
           (ascending ? ", in k order: ((P_0 + P_1) + P_2) + ..." : ", not in k order");
  }
  // Balanced binary: every skeleton node binary, the heights of the skeleton balanced (pairwise).
  bool binary = true;
  for (int id : skel) binary = binary && t.children(id).size() == 2;
  if (binary) {
    std::map<int, int> parts_under;
    for (int id : f.post) {
      if (t.is_leaf(id) || !is_skel(id)) continue;
      int n = 0;
      for (int c : t.children(id)) n += is_skel(c) ? parts_under[c] : 1;
      parts_under[id] = n;
    }
    bool halving = true;
    for (int id : skel) {
      std::vector<int> ch = t.children(id);
      std::sort(ch.begin(), ch.end(), [&](int a, int b) { return f.mins[ix(a)] < f.mins[ix(b)]; });
      const int a = is_skel(ch[0]) ? parts_under[ch[0]] : 1, b = is_skel(ch[1]) ? parts_under[ch[1]] : 1;
      halving = halving && (a == (a + b + 1) / 2 || a == (a + b) / 2);
    }
    if (halving) return "the partials added pairwise (recursive halving, " + std::to_string(skel.size()) + " adds)";
  }
  int h = 0;
  for (int id : skel) h = std::max(h, f.height[ix(id)]);
  return "the partials combined by a tree of " + std::to_string(skel.size()) + " nodes";
}

}  // namespace

TreeSummary summarize(const SumTree& t) {
  TreeSummary s;
  if (t.root < 0) return s;
  const Facts f = facts_of(t);
  s.height = f.height[ix(t.root)];
  std::map<int, int> widths;
  std::map<std::size_t, int> fused;  // leaves per node among nodes of > 2 children
  for (const auto& ch : t.nodes) {
    ++widths[static_cast<int>(ch.size())];
    if (ch.size() > 2) {
      std::size_t leaves = 0;
      for (int c : ch) leaves += t.is_leaf(c);
      ++fused[leaves];
    }
  }
  s.widths.assign(widths.begin(), widths.end());
  if (!fused.empty()) {
    // The common width; the chain's last node may hold fewer (the K tail).
    const auto best = std::max_element(fused.begin(), fused.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    bool one = true;
    for (const auto& [w, n] : fused) one = one && (w == best->first || (w < best->first && n == 1));
    s.fused_width = one ? static_cast<int>(best->first) : -1;
  }
  // Parts: chain nodes whose parent is not a chain node (or the root), and leaves under non-chain nodes.
  for (int id : f.post) {
    const int p = f.parent[ix(id)];
    const bool head = p < 0 || !f.chain[ix(p)];
    if (!head) continue;
    if (!t.is_leaf(id) && !f.chain[ix(id)]) continue;
    TreePart part;
    part.root = id;
    part.shape = f.shape[ix(id)];
    int cur = id;
    while (cur >= 0) {
      std::vector<int> step;
      int next = -1;
      if (t.is_leaf(cur)) step.push_back(cur);
      else
        for (int c : t.children(cur)) (t.is_leaf(c) ? step.push_back(c) : void(next = c));
      std::sort(step.begin(), step.end());
      part.steps.push_back(std::move(step));
      cur = next;
    }
    std::reverse(part.steps.begin(), part.steps.end());
    s.parts.push_back(std::move(part));
  }
  std::sort(s.parts.begin(), s.parts.end(), [&](const TreePart& a, const TreePart& b) { return f.mins[ix(a.root)] < f.mins[ix(b.root)]; });

  // Known orders first: an exact name is worth more than a description.
  const int k = t.k;
  if (same_order(t, sequential_tree(k))) s.known = "sequential";
  else if (k > 2 && same_order(t, pairwise_tree(k))) s.known = "pairwise";
  else if (s.fused_width > 1 && same_order(t, fused_chain_tree(k, s.fused_width))) s.known = "fused chain of " + std::to_string(s.fused_width);

  if (s.parts.size() == 1) {
    s.headline = chain_text(s.parts.front());
  } else {
    const std::size_t m = s.parts.size();
    // Coverage: contiguous ranges, or one stride (interleaved).
    bool contiguous = true;
    for (const auto& p : s.parts) contiguous = contiguous && f.maxs[ix(p.root)] - f.mins[ix(p.root)] + 1 == f.sizes[ix(p.root)];
    bool interleaved = !contiguous;
    for (std::size_t i = 0; i < m && interleaved; ++i) {
      std::vector<int> ks;
      for (const auto& st : s.parts[i].steps) ks.insert(ks.end(), st.begin(), st.end());
      std::sort(ks.begin(), ks.end());
      interleaved = ks.front() == static_cast<int>(i);
      for (std::size_t j = 1; j < ks.size() && interleaved; ++j) interleaved = ks[j] - ks[j - 1] == static_cast<int>(m);
    }
    std::map<std::uint64_t, int> shapes;
    for (const auto& p : s.parts) ++shapes[p.shape];
    const std::string cover = contiguous ? "contiguous ranges of k" : interleaved ? "interleaved (part j holds k = j mod " + std::to_string(m) + ")" : "scattered over k";
    s.headline = std::to_string(m) + " partial sums over " + cover + ", " + combine_text(t, f, s.parts);
    if (shapes.size() == 1) s.details.push_back("every partial: " + chain_text(s.parts.front()));
    else s.details.push_back(std::to_string(shapes.size()) + " shapes of partial; the first: " + chain_text(s.parts.front()));
    std::string ranges = "partials: ";
    for (std::size_t i = 0; i < m; ++i) {
      if (i == 4 && m > 6) {
        ranges += ", ..., ";
        i = m - 1;
      } else if (i) ranges += ", ";
      ranges += "P_" + std::to_string(i) + " = " + (contiguous ? "k " + range_text(f.mins[ix(s.parts[i].root)], f.maxs[ix(s.parts[i].root)])
                                                               : std::to_string(f.sizes[ix(s.parts[i].root)]) + " products from k = " + std::to_string(f.mins[ix(s.parts[i].root)]));
    }
    s.details.push_back(ranges);
  }
  if (!s.known.empty() && s.headline.rfind(s.known, 0) != 0) s.headline = s.known + ": " + s.headline;  // no "sequential: sequential, ..."
  std::string w = "node widths:";
  for (const auto& [c, n] : s.widths) w += " " + std::to_string(n) + " x " + std::to_string(c) + "-term";
  s.details.push_back(w + "; height " + std::to_string(s.height));
  if (s.fused_width > 0) s.details.push_back("fused nodes add " + std::to_string(s.fused_width) + " products each (one rounding per node)");
  else if (s.fused_width < 0) s.details.push_back("fused nodes of several widths");
  return s;
}

// ---- drawing ----

namespace {

class Drawer {
 public:
  Drawer(const SumTree& t, int budget) : t_(t), f_(facts_of(t)), budget_(budget) {}

  DisplayNode draw(int id) {
    if (t_.is_leaf(id)) return leaf(id);
    if (boxes_ >= budget_) return subtree(id);
    ++boxes_;
    DisplayNode n;
    n.label = label(id);
    std::vector<int> ch = sorted_children(id);
    // A long chain: this node, an ellipsis for the middle, the chain's first node.
    int internal = -1;
    for (int c : ch)
      if (!t_.is_leaf(c)) internal = internal < 0 ? c : -2;
    if (internal >= 0 && f_.chain[ix(id)]) {
      int depth = 0, bottom = internal;
      while (!t_.is_leaf(bottom) && f_.chain[ix(bottom)]) {
        int next = -1;
        for (int c : t_.children(bottom))
          if (!t_.is_leaf(c)) next = c;
        if (next < 0) break;
        bottom = next;
        ++depth;
      }
      if (depth >= 3) {
        add_leaf_runs(n, id);
        DisplayNode e;
        e.kind = DisplayNode::Kind::Ellipsis;
        e.label = "... " + std::to_string(depth) + " more nodes of this chain";
        e.children.push_back(draw(bottom));
        n.children.insert(n.children.begin(), std::move(e));
        return n;
      }
    }
    // Runs of like internal siblings (same shape up to a shift): the first, an ellipsis, the last.
    std::vector<int> inner;
    for (int c : ch)
      if (!t_.is_leaf(c)) inner.push_back(c);
    bool alike = inner.size() >= 4;
    for (int c : inner) alike = alike && f_.shape[ix(c)] == f_.shape[ix(inner.front())];
    if (alike) {
      n.children.push_back(draw(inner.front()));
      DisplayNode e;
      e.kind = DisplayNode::Kind::Ellipsis;
      e.label = "... " + std::to_string(inner.size() - 2) + " more like these";
      n.children.push_back(std::move(e));
      n.children.push_back(draw(inner.back()));
      add_leaf_runs(n, id);
      return n;
    }
    for (int c : ch)
      if (!t_.is_leaf(c)) n.children.push_back(draw(c));
    add_leaf_runs(n, id);
    return n;
  }

 private:
  std::vector<int> sorted_children(int id) const {
    std::vector<int> ch = t_.children(id);
    std::sort(ch.begin(), ch.end(), [&](int a, int b) { return f_.mins[ix(a)] < f_.mins[ix(b)]; });
    return ch;
  }
  std::string label(int id) const {
    const std::size_t n = t_.children(id).size();
    return n == 2 ? "+" : "\xCE\xA3" + std::to_string(n);  // Σn: an n-term node
  }
  DisplayNode leaf(int k) {
    ++boxes_;
    DisplayNode d;
    d.kind = DisplayNode::Kind::Leaf;
    d.label = "p_" + std::to_string(k);
    return d;
  }
  DisplayNode subtree(int id) {
    ++boxes_;
    DisplayNode d;
    d.kind = DisplayNode::Kind::Subtree;
    d.label = "subtree of " + std::to_string(f_.sizes[ix(id)]) + " (k " + range_text(f_.mins[ix(id)], f_.maxs[ix(id)]) + ")";
    return d;
  }
  /// The node's leaf children: contiguous runs of three or more as one box.
  void add_leaf_runs(DisplayNode& n, int id) {
    std::vector<int> ls;
    for (int c : t_.children(id))
      if (t_.is_leaf(c)) ls.push_back(c);
    std::sort(ls.begin(), ls.end());
    for (std::size_t i = 0; i < ls.size();) {
      std::size_t j = i + 1;
      while (j < ls.size() && ls[j] == ls[j - 1] + 1) ++j;
      if (j - i >= 3) {
        ++boxes_;
        DisplayNode d;
        d.kind = DisplayNode::Kind::Leaves;
        d.label = "p_" + std::to_string(ls[i]) + "..p_" + std::to_string(ls[j - 1]);
        n.children.push_back(std::move(d));
      } else
        for (std::size_t x = i; x < j; ++x) n.children.push_back(leaf(ls[x]));
      i = j;
    }
  }

  const SumTree& t_;
  Facts f_;
  int budget_;
  int boxes_ = 0;
};

}  // namespace

DisplayNode display_tree(const SumTree& t, int max_boxes) {
  if (t.root < 0) return {};
  Drawer d(t, max_boxes);
  return d.draw(t.root);
}

// ---- JSON ----

nlohmann::json to_json(const SumTree& t) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const auto& ch : t.nodes) nodes.push_back(ch);
  return {{"k", t.k}, {"root", t.root}, {"nodes", nodes}};
}

SumTree sum_tree_from_json(const nlohmann::json& j) {
  SumTree t;
  try {
    t.k = j.at("k").get<int>();
    t.root = j.at("root").get<int>();
    for (const auto& n : j.at("nodes")) t.nodes.push_back(n.get<std::vector<int>>());
  } catch (const nlohmann::json::exception& e) {
    throw InputError(std::string("summation tree: ") + e.what());
  }
  if (const std::string why = check_tree(t); !why.empty()) throw InputError("summation tree: " + why);
  return t;
}

}  // namespace fpcert
