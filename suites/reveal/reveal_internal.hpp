// suites/reveal/reveal_internal.hpp — order revelation's internals shared by suites/reveal/reveal.cpp and suites/reveal/reveal_search.cpp.
// The pair's text, the GEMM pair source and the helpers that pick a class's elements and other probe values
// (docs/reveal.md). Not an interface: include only there.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "suites/reveal/reveal.hpp"

namespace fpcert::reveal_internal {

inline std::string pair_text(int x, int y) { return "(" + std::to_string(x) + ", " + std::to_string(y) + ")"; }

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

// Defined in suites/reveal/reveal_search.cpp ("Pairs from GEMM launches"), used by reveal_order.

LaunchSpec uniform_spec(const GemmProber& p, int x, int y);

struct ElementSet {
  std::vector<int> rows, cols;                  // a rectangle inside the class
  std::vector<std::pair<int, int>> slots;       // distinct rows and columns inside the class
};

ElementSet elements_of(const std::vector<int>& grid, int m, int n, int cls, int ar, int ac);
std::string class_where(const std::vector<int>& grid, int m, int n, int cls, std::int64_t count);
std::optional<ProbePlan> shifted(const KernelTraits& t, const ProbePlan& p, int d);

}  // namespace fpcert::reveal_internal
