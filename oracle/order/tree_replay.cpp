// oracle/order/tree_replay.cpp — a GEMM element in a summation tree's order (oracle/order/tree_replay.hpp).
#include "oracle/order/tree_replay.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "base/error.hpp"
#include "oracle/refvalue.hpp"

namespace fpcert {

std::string_view to_string(LeafJoin j) { return j == LeafJoin::Fma ? "fma" : "mul_add"; }

std::string TreeArith::describe() const {
  std::string s = "partial sums in " + std::string(acc->tag) + " (" + std::string(to_string(acc_rounding)) + "); a product joins a partial sum by " +
                  (leaf_join == LeafJoin::Fma ? "an FMA (one rounding)" : "a rounded product and an add (two roundings)") +
                  "; a node of two products starts from +0 with the " + (first_low ? "lower" : "higher") + " k";
  if (!(*a_operand == *a) || !(*b_operand == *b))
    s += "; operands rounded " + std::string(a->tag) + " -> " + std::string(a_operand->tag) + " (" + std::string(to_string(operand_rounding)) + ")";
  if (fused) s += "; nodes of more than two terms: " + (fused_source.empty() ? std::string("block model") : fused_source) + " (" + fpcert::describe(*fused) + ")";
  else s += "; no block model for nodes of more than two terms";
  s += "; output " + std::string(out->tag) + " (" + std::string(to_string(out_rounding)) + ")";
  return s;
}

TreeReplay::TreeReplay(const SumTree& tree, TreeArith arith) : arith_(std::move(arith)), k_(tree.k) {
  if (const std::string why = check_tree(tree); !why.empty()) throw InputError("replay: not a summation tree: " + why);
  acc_r_ = Rounder{arith_.acc_rounding, default_saturation(*arith_.acc), NanPayload::Preserve};
  out_r_ = Rounder{arith_.out_rounding, default_saturation(*arith_.out), NanPayload::Preserve};
  const auto float_exact = [](const Format& f) { return f.precision() <= 24 && f.emax() <= 127 && f.emin() - f.frac_bits >= -149; };
  fast_f32_ = *arith_.acc == f32 && arith_.acc_rounding == Rounding::NearestEven && float_exact(*arith_.a_operand) && float_exact(*arith_.b_operand);
  if (arith_.fused)
    if (const std::string why = check(*arith_.fused); !why.empty()) throw InputError("replay: block model: " + why);
  if (tree.is_leaf(tree.root)) {
    root_leaf_ = tree.root;
    return;
  }
  // Post-order over the tree (iterative: chains are deep); each internal node becomes one step whose
  // result lives in slot = its step index.
  std::vector<int> slot(static_cast<std::size_t>(tree.size()), -1);
  std::vector<std::pair<int, std::size_t>> st{{tree.root, 0}};
  while (!st.empty()) {
    auto& [id, next] = st.back();
    if (next < tree.children(id).size()) {
      const int c = tree.children(id)[next++];
      if (!tree.is_leaf(c)) st.push_back({c, 0});
      continue;
    }
    std::vector<int> inner, lv;
    for (int c : tree.children(id)) (tree.is_leaf(c) ? lv : inner).push_back(tree.is_leaf(c) ? c : slot[static_cast<std::size_t>(c)]);
    std::sort(lv.begin(), lv.end());
    Step s{};
    if (tree.children(id).size() == 2) {
      if (inner.size() == 2) s = {Op::Add, inner[0], inner[1]};
      else if (inner.size() == 1) s = {Op::JoinLeaf, inner[0], lv[0]};
      else s = {Op::TwoLeaves, arith_.first_low ? lv[0] : lv[1], arith_.first_low ? lv[1] : lv[0]};
    } else {
      const std::string node = "a node of " + std::to_string(tree.children(id).size()) + " terms (" + std::to_string(lv.size()) + " products)";
      if (!arith_.fused) throw InputError("replay: " + node + " needs a tensor-core block model (a behaviour card)");
      if (inner.size() > 1) throw InputError("replay: " + node + " joins " + std::to_string(inner.size()) + " partial sums; the block model takes one (C)");
      if (static_cast<int>(lv.size()) > arith_.fused->fused_length)
        throw InputError("replay: " + node + " holds more products than the block model's fused length " + std::to_string(arith_.fused->fused_length));
      s = {Op::Fused, inner.empty() ? -1 : inner[0], 0, static_cast<std::uint32_t>(leaves_.size()), static_cast<std::uint32_t>(lv.size())};
      leaves_.insert(leaves_.end(), lv.begin(), lv.end());
    }
    slot[static_cast<std::size_t>(id)] = static_cast<int>(steps_.size());
    steps_.push_back(s);
    st.pop_back();
  }
}

ReplayLine TreeReplay::line(std::span<const std::uint64_t> codes, const Format& in, const Format& operand) const {
  ReplayLine l;
  l.codes.resize(codes.size());
  l.values.resize(codes.size());
  const bool narrow = !(operand == in);
  const Rounder rr{arith_.operand_rounding, default_saturation(operand), NanPayload::Preserve};
  for (std::size_t i = 0; i < codes.size(); ++i) {
    l.codes[i] = static_cast<std::uint32_t>(to_container(in, codes[i]));
    const double v = to_double(in, codes[i]);
    l.values[i] = narrow ? to_double(operand, round_double(operand, v, rr).code) : v;
  }
  return l;
}
ReplayLine TreeReplay::line_a(std::span<const std::uint64_t> codes) const { return line(codes, *arith_.a, *arith_.a_operand); }
ReplayLine TreeReplay::line_b(std::span<const std::uint64_t> codes) const { return line(codes, *arith_.b, *arith_.b_operand); }

double TreeReplay::add(double x, double y) const {
  if (fast_f32_) return static_cast<double>(static_cast<float>(x) + static_cast<float>(y));
  if (!std::isfinite(x) || !std::isfinite(y)) return to_double(*arith_.acc, round_double(*arith_.acc, x + y, acc_r_).code);
  if (x == -y) {  // an exact zero: +0, or -0 when both are -0 or the rounding is toward -Inf (IEEE 754 6.3)
    if (x == 0 && std::signbit(x) && std::signbit(y)) return -0.0;
    return arith_.acc_rounding == Rounding::Down ? -0.0 : 0.0;
  }
  return to_double(*arith_.acc, round_ref(*arith_.acc, ref_from_two_sum(x, y), acc_r_).code);
}

double TreeReplay::join(double x, double a, double b) const {
  if (fast_f32_) {
    const float fx = static_cast<float>(x), fa = static_cast<float>(a), fb = static_cast<float>(b);
    return arith_.leaf_join == LeafJoin::Fma ? std::fma(fa, fb, fx) : fx + fa * fb;  // -ffp-contract=off: the product is rounded
  }
  const double p = a * b;  // exact: operands of at most 26 significant bits, in fp32's range
  if (arith_.leaf_join == LeafJoin::Fma) return add(x, p);
  return add(x, to_double(*arith_.acc, round_double(*arith_.acc, p, acc_r_).code));
}

std::uint64_t TreeReplay::run(const ReplayLine& a, const ReplayLine& b) const {
  if (root_leaf_ >= 0) {
    const auto k = static_cast<std::size_t>(root_leaf_);
    return round_double(*arith_.out, join(0.0, a.values[k], b.values[k]), out_r_).code;
  }
  thread_local std::vector<double> slots;
  slots.resize(steps_.size());
  std::array<FusedTerm, 256> terms;
  for (std::size_t i = 0; i < steps_.size(); ++i) {
    const Step& s = steps_[i];
    double v = 0;
    switch (s.op) {
      case Op::Add: v = add(slots[static_cast<std::size_t>(s.x)], slots[static_cast<std::size_t>(s.y)]); break;
      case Op::JoinLeaf: {
        const auto k = static_cast<std::size_t>(s.y);
        v = join(slots[static_cast<std::size_t>(s.x)], a.values[k], b.values[k]);
        break;
      }
      case Op::TwoLeaves: {
        const auto f = static_cast<std::size_t>(s.x), g = static_cast<std::size_t>(s.y);
        v = join(join(0.0, a.values[f], b.values[f]), a.values[g], b.values[g]);
        break;
      }
      case Op::Fused: {
        const FusedDotParams& p = *arith_.fused;
        for (std::uint32_t t = 0; t < s.count; ++t) {
          const auto k = static_cast<std::size_t>(leaves_[s.first + t]);
          terms[t] = fused_product(p, a.codes[k], b.codes[k]);
        }
        const double c = s.x < 0 ? 0.0 : slots[static_cast<std::size_t>(s.x)];
        const std::uint64_t cc = round_double(p.acc, c, Rounder::nearest(p.acc)).code;  // exact: c is a value of acc
        v = to_double(p.acc, fused_block(p, std::span<const FusedTerm>(terms.data(), s.count), cc));
        break;
      }
    }
    slots[i] = v;
  }
  return round_double(*arith_.out, slots.back(), out_r_).code;
}

}  // namespace fpcert
