// tests/oracle/sum_tree_test.cpp — summation trees: validity checks, canonical comparison, the FPRev
// query (LCA sizes) against brute force on random trees, the known orders built by hand, the summary's
// names for them, a drawing that stays small, JSON.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>

#include "base/error.hpp"
#include "base/philox.hpp"
#include "oracle/order/sum_tree.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;

namespace {

/// A random tree over k leaves: repeatedly join 2 to 4 random current roots into one node.
SumTree random_tree(int k, std::uint64_t seed) {
  SumTree t;
  t.k = k;
  std::vector<int> roots(static_cast<std::size_t>(k));
  for (int i = 0; i < k; ++i) roots[static_cast<std::size_t>(i)] = i;
  std::uint64_t draw = 0;
  while (roots.size() > 1) {
    const auto w = philox_4x32(seed, 1, draw++);
    const std::size_t n = std::min<std::size_t>(roots.size(), 2 + w[0] % 3);
    std::vector<int> ch;
    for (std::size_t j = 0; j < n; ++j) {
      const std::size_t pick = philox_4x32(seed, 2, draw++)[0] % roots.size();
      ch.push_back(roots[pick]);
      roots.erase(roots.begin() + static_cast<long>(pick));
    }
    roots.push_back(t.add(ch));
  }
  t.root = roots.front();
  return t;
}

/// Leaves under every id, as sets (brute force).
std::vector<std::set<int>> leaf_sets(const SumTree& t) {
  std::vector<std::set<int>> s(static_cast<std::size_t>(t.size()));
  for (int i = 0; i < t.k; ++i) s[static_cast<std::size_t>(i)] = {i};
  // Nodes are appended after their children in every builder here, so id order is a post-order.
  for (int id = t.k; id < t.size(); ++id)
    for (int c : t.children(id)) s[static_cast<std::size_t>(id)].insert(s[static_cast<std::size_t>(c)].begin(), s[static_cast<std::size_t>(c)].end());
  return s;
}

}  // namespace

TEST_CASE("sum_tree: check_tree refuses what is not a tree over the leaves") {
  SumTree t;
  t.k = 3;
  const int a = t.add({0, 1});
  t.root = t.add({a, 2});
  CHECK(check_tree(t).empty());
  SumTree twice = t;
  twice.nodes[1] = {a, 1};  // leaf 1 under two nodes, leaf 2 under none
  CHECK(check_tree(twice).find("two nodes") != std::string::npos);
  SumTree unary = t;
  unary.nodes[1] = {a};
  CHECK(check_tree(unary).find("fewer than two") != std::string::npos);
  SumTree stray = t;
  stray.root = a;  // leaf 2 and the top node are not under the root
  CHECK(!check_tree(stray).empty());
  SumTree bad = t;
  bad.nodes[0] = {0, 7};
  CHECK(check_tree(bad).find("not a node") != std::string::npos);
}

TEST_CASE("sum_tree: the same order, written differently, compares equal; another order does not") {
  SumTree a;
  a.k = 4;
  const int x = a.add({1, 0});
  const int y = a.add({3, 2});
  a.root = a.add({y, x});
  SumTree b;
  b.k = 4;
  const int u = b.add({2, 3});
  const int v = b.add({0, 1});
  b.root = b.add({v, u});
  CHECK(same_order(a, b));
  CHECK(same_order(a, pairwise_tree(4)));
  CHECK_FALSE(same_order(a, sequential_tree(4)));
}

TEST_CASE("sum_tree: LCA sizes equal the brute-force size of the smallest common subtree (random trees)") {
  const std::uint64_t seed = test::seed();
  for (int k : {1, 2, 3, 17, 200}) {
    const SumTree t = random_tree(k, seed + static_cast<std::uint64_t>(k));
    REQUIRE(check_tree(t).empty());
    const auto sets = leaf_sets(t);
    const LcaIndex idx(t);
    for (int x = 0; x < k; ++x)
      for (int y = x + 1; y < k; ++y) {
        std::size_t best = static_cast<std::size_t>(k) + 1;
        for (const auto& s : sets)
          if (s.count(x) && s.count(y)) best = std::min(best, s.size());
        REQUIRE(static_cast<std::size_t>(idx.lca_size(x, y)) == best);
      }
  }
}

TEST_CASE("sum_tree: known orders as their loops build them") {
  // sequential_tree(4) = ((p0 + p1) + p2) + p3: L(0,1) = 2, L(0,2) = L(1,2) = 3, L(x,3) = 4.
  const LcaIndex s(sequential_tree(4));
  CHECK(s.lca_size(0, 1) == 2);
  CHECK(s.lca_size(1, 2) == 3);
  CHECK(s.lca_size(2, 3) == 4);
  // pairwise_tree(5) = ((p0 + p1) + p2) + (p3 + p4): the first half holds ceil(5/2) = 3.
  const LcaIndex p(pairwise_tree(5));
  CHECK(p.lca_size(0, 1) == 2);
  CHECK(p.lca_size(0, 2) == 3);
  CHECK(p.lca_size(3, 4) == 2);
  CHECK(p.lca_size(2, 3) == 5);
  // fused_chain_tree(10, 4): {p0..p3}, {node, p4..p7}, {node, p8, p9}.
  const SumTree f = fused_chain_tree(10, 4);
  CHECK(f.nodes.size() == 3);
  const LcaIndex fi(f);
  CHECK(fi.lca_size(0, 3) == 4);
  CHECK(fi.lca_size(0, 4) == 8);
  CHECK(fi.lca_size(5, 7) == 8);
  CHECK(fi.lca_size(8, 9) == 10);
  // partitioned_tree(8, 3, seq, seq): parts {0,1,2}, {3,4,5}, {6,7}; ((P0 + P1) + P2).
  const LcaIndex q(partitioned_tree(8, 3, PartOrder::Sequential, PartOrder::Sequential));
  CHECK(q.lca_size(3, 4) == 2);
  CHECK(q.lca_size(3, 5) == 3);
  CHECK(q.lca_size(0, 3) == 6);
  CHECK(q.lca_size(6, 7) == 2);
  CHECK(q.lca_size(5, 6) == 8);
  CHECK(same_order(partitioned_tree(9, 1, PartOrder::Sequential, PartOrder::Sequential), sequential_tree(9)));
  CHECK(same_order(partitioned_tree(9, 9, PartOrder::Pairwise, PartOrder::Sequential), pairwise_tree(9)));
}

TEST_CASE("sum_tree: the summary names the known orders and describes partitions") {
  CHECK(summarize(sequential_tree(2048)).headline.find("sequential") == 0);
  CHECK(summarize(sequential_tree(2048)).headline.find("k = 0..2047 ascending") != std::string::npos);
  CHECK(summarize(pairwise_tree(1000)).known == "pairwise");
  const TreeSummary f = summarize(fused_chain_tree(4096, 16));
  CHECK(f.fused_width == 16);
  CHECK(f.known == "fused chain of 16");
  CHECK(f.headline.find("256 fused nodes of 16 products") != std::string::npos);
  const TreeSummary sk = summarize(partitioned_tree(4096, 1024, PartOrder::Sequential, PartOrder::Sequential));
  CHECK(sk.parts.size() == 4);
  CHECK(sk.headline.find("4 partial sums over contiguous ranges of k, the partials added sequentially") == 0);
  CHECK(sk.details.front().find("every partial: sequential") == 0);
  const TreeSummary pw = summarize(partitioned_tree(4096, 256, PartOrder::Sequential, PartOrder::Pairwise));
  CHECK(pw.headline.find("added pairwise") != std::string::npos);
  const TreeSummary tc = summarize(partitioned_tree(4096, 1024, PartOrder::Sequential, PartOrder::Sequential, 16));
  CHECK(tc.fused_width == 16);
  CHECK(tc.details.front().find("fused nodes of 16 products") != std::string::npos);
  // Interleaved: part j holds k = j mod 4, each sequential, joined sequentially.
  SumTree il;
  il.k = 16;
  std::vector<int> partial;
  for (int j = 0; j < 4; ++j) {
    int cur = j;
    for (int x = j + 4; x < 16; x += 4) cur = il.add({cur, x});
    partial.push_back(cur);
  }
  int r = partial[0];
  for (int j = 1; j < 4; ++j) r = il.add({r, partial[static_cast<std::size_t>(j)]});
  il.root = r;
  REQUIRE(check_tree(il).empty());
  CHECK(summarize(il).headline.find("interleaved (part j holds k = j mod 4)") != std::string::npos);
}

TEST_CASE("sum_tree: the drawing stays small for any K") {
  const auto count = [](const DisplayNode& d) {
    int n = 0;
    std::vector<const DisplayNode*> st{&d};
    while (!st.empty()) {
      const DisplayNode* x = st.back();
      st.pop_back();
      ++n;
      for (const auto& c : x->children) st.push_back(&c);
    }
    return n;
  };
  for (const SumTree& t : {sequential_tree(65536), pairwise_tree(65536), fused_chain_tree(65536, 16),
                           partitioned_tree(65536, 8192, PartOrder::Sequential, PartOrder::Pairwise, 16)}) {
    const DisplayNode d = display_tree(t, 60);
    CHECK(count(d) <= 80);
    CHECK(count(d) >= 3);
  }
  const DisplayNode small = display_tree(sequential_tree(3));
  CHECK(small.label == "+");
  CHECK(small.children.size() == 2);
}

TEST_CASE("sum_tree: JSON round trip; a malformed tree is an input error") {
  const SumTree t = partitioned_tree(100, 30, PartOrder::Pairwise, PartOrder::Sequential);
  CHECK(same_order(sum_tree_from_json(to_json(t)), t));
  nlohmann::json j = to_json(t);
  j["nodes"][0] = {0, 0};
  CHECK_THROWS_AS(sum_tree_from_json(j), InputError);
  CHECK_THROWS_AS(sum_tree_from_json(nlohmann::json{{"k", 3}}), InputError);
}
