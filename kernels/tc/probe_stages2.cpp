// kernels/tc/probe_stages2.cpp — the Prober's later stages: products, carries, subnormal results, overflow,
// the alignment floor, monotonicity, the final check of every query, the integer instruction, the run
// (kernels/tc/probe_internal.hpp; docs/tensor_cores.md).
#include "kernels/tc/probe_internal.hpp"

namespace fpcert::tc::probe_internal {

// ---- stage: products ----
void Prober::products() {
  const int e0 = E0_;
  const int fa = s_.a->frac_bits, fb = s_.b->frac_bits;
  CardProperty& prop = begin("products",
                             "(1 + 2^-fa)(1 + 2^-fb) X - X and (2 - 2^-fa)(2 - 2^-fb) X - 4X: the product's last bit 2^-(fa+fb) "
                             "shows when the window is at least fa + fb bits");
  const double X = std::ldexp(1.0, e0);
  for (int sign : {1, -1}) {
    DotQuery q = blank();
    const double a = 1 + std::ldexp(1.0, -fa), b = 1 + std::ldexp(1.0, -fb);
    if (put(q, 0, sign * a * b * X, b) && put(q, 1, -sign * X)) add(q, std::string(sign > 0 ? "+" : "-") + "((1+2^-fa)(1+2^-fb) - 1) X");
    DotQuery r = blank();
    const double a2 = 2 - std::ldexp(1.0, -fa), b2 = 2 - std::ldexp(1.0, -fb);
    if (put(r, 0, sign * a2 * b2 * X / 4, b2) && put(r, 1, -sign * X)) add(r, std::string(sign > 0 ? "+" : "-") + "((2-2^-fa)(2-2^-fb)/4 - 1) X");
  }
  const std::size_t first = flush();
  prop.observed = answers(first);
  std::vector<Candidate> cands;
  FusedDotParams p = P_;
  p.product_frac_bits = -1;
  cands.push_back({"exact", p});
  for (int q = fa + fb - 1; q >= 0; --q) {
    p.product_frac_bits = q;
    cands.push_back({"truncated to " + std::to_string(q) + " fraction bits", p});
  }
  select(cands, first, asked_.size(), prop);
  if (first < asked_.size()) prop.examples.push_back(example(first));
  if (fa + fb > P_.align_bits)
    prop.alternatives.insert(prop.alternatives.begin(), "the window (" + std::to_string(P_.align_bits) + " bits) hides a product's last " +
                                                            std::to_string(fa + fb - P_.align_bits) + " bits: exact up to what can be seen");
}

// ---- observation: carries ----
void Prober::carries() {
  const int e0 = E0_;
  CardProperty& prop = begin("carries",
                             "every product near its largest significand, (2 - 2^-fa)(2 - 2^-fb) 2^(E-2), and C near 2X, both signs: "
                             "k + 1 terms of the largest size add without losing a carry");
  const double X = std::ldexp(1.0, e0);
  for (int sign : {1, -1}) {
    DotQuery q = blank();
    const double sa = 2 - std::ldexp(1.0, -s_.a->frac_bits), sb = 2 - std::ldexp(1.0, -s_.b->frac_bits);
    bool ok = true;
    for (int i = 0; i < s_.k; ++i) ok &= put(q, i, sign * sa * sb * std::ldexp(1.0, e0 - 2), sb);
    ok &= put_c(q, sign * (2 - std::ldexp(1.0, -s_.acc->frac_bits)) * X);
    if (ok) add(q, std::string(sign > 0 ? "+" : "-") + "(k products (2-2^-fa)(2-2^-fb)2^(E-2) + C near 2X)");
  }
  const std::size_t first = flush();
  std::string o;
  for (std::size_t i = first; i < asked_.size(); ++i) {
    o += (o.empty() ? "" : "; ") + asked_[i].note + " -> " + num(acc_value(asked_[i].d)) + " (model " + num(acc_value(model(P_, asked_[i].q))) + ")";
    prop.examples.push_back(example(i));
  }
  prop.observed = o;
  prop.conclusion = "exact carries (the model's integer sum); the count of answers it does not reproduce is below";
}

// ---- stage: subnormal results ----
void Prober::subnormal_results() {
  const Format& acc = *s_.acc;
  CardProperty& prop = begin("subnormal results",
                             "C a subnormal of the accumulator with no products; C = smallest normal minus a product of half of it; a product "
                             "alone in the subnormal range");
  // The smallest subnormal of the result's grid (acc_bits fraction bits: 2^(emin - acc_bits)).
  const double sub = std::ldexp(1.0, acc.emin() - P_.acc_bits), mn = acc.min_normal();
  DotQuery q = blank();
  put_c(q, sub);
  add(q, "C = " + num(sub) + " alone");
  q = blank();
  if (put_c(q, 3 * sub)) add(q, "C = 3 * " + num(sub) + " alone");
  q = blank();
  if (put_c(q, mn) && put(q, 0, -mn / 2)) add(q, "C = " + num(mn) + ", product -" + num(mn / 2));
  q = blank();
  if (put(q, 0, mn / 4)) add(q, "product " + num(mn / 4) + " alone");
  const std::size_t first = flush();
  prop.observed = answers(first);
  FusedDotParams a = P_, b = P_;
  a.output_subnormals = true;
  b.output_subnormals = false;
  select({{"kept", a}, {"flushed to zero (and subnormal C read as zero)", b}}, first, asked_.size(), prop);
  if (first < asked_.size()) prop.examples.push_back(example(first));
}

// ---- stage: overflow ----
void Prober::overflow() {
  const Format& acc = *s_.acc;
  CardProperty& prop = begin("overflow",
                             "C = the largest finite value plus one ulp of the result (or more), both signs; and products beyond the "
                             "accumulator's range that cancel: 2^(emax+2) - 2^(emax+2) + 1");
  const double mx = acc.max_finite();
  const double ulp_top = std::ldexp(1.0, acc.emax() - P_.acc_bits);
  for (int sign : {1, -1}) {
    DotQuery q = blank();
    if (put_c(q, sign * mx) && put(q, 0, sign * ulp_top)) add(q, std::string(sign > 0 ? "" : "-") + "(max + one result ulp)");
    q = blank();
    if (put_c(q, sign * mx) && put(q, 0, sign * std::ldexp(1.0, acc.emax()))) add(q, std::string(sign > 0 ? "" : "-") + "(max + 2^emax)");
  }
  DotQuery q = blank();
  const double big = std::ldexp(1.0, acc.emax() + 2);
  if (put(q, 0, big) && put(q, 1, -big) && put_c(q, 1.0)) add(q, "2^(emax+2) - 2^(emax+2) + 1");
  const std::size_t first = flush();
  const std::string o = answers(first);
  prop.observed = o.empty() ? "not reachable: products of these inputs stay far below the accumulator's range" : o;
  std::vector<Candidate> cands;
  for (OverflowTo ov : {OverflowTo::Inf, OverflowTo::MaxFinite})
    for (bool wide : {true, false}) {
      FusedDotParams p = P_;
      p.overflow = ov;
      p.wide_block = wide;
      cands.push_back({std::string("overflow to ") + std::string(to_string(ov)) +
                           (wide ? "; no overflow inside the block" : "; products beyond the range are Inf"),
                       p});
    }
  select(cands, first, asked_.size(), prop);
  if (first < asked_.size()) prop.examples.push_back(example(first));
}

// ---- stage: a lower limit on the alignment exponent ----
void Prober::align_floor() {
  const Format& acc = *s_.acc;
  CardProperty& prop = begin("alignment floor",
                             "half the accumulator's smallest subnormal plus a tiny product 2^(e-j): a round-to-nearest result breaks the "
                             "tie upward only while the tiny term is kept, which a floor on the alignment exponent stops");
  const double t0 = std::ldexp(1.0, acc.emin() - P_.acc_bits - 1);  // half the result grid's smallest subnormal
  const int e = std::ilogb(t0);
  for (int j = 1; j <= 40; ++j) {
    DotQuery q = blank();
    if (put(q, 0, t0) && put(q, 1, std::ldexp(1.0, e - j))) add(q, num(t0) + " + 2^(" + std::to_string(e) + "-" + std::to_string(j) + ")");
  }
  const std::size_t first = flush();
  int last = 0, tried = static_cast<int>(asked_.size() - first);
  for (std::size_t i = first; i < asked_.size(); ++i)
    if (asked_[i].d != 0) last = static_cast<int>(i - first) + 1;
  prop.observed = tried ? "the tie is broken upward for j <= " + std::to_string(last) + " of " + std::to_string(tried)
                        : "not reachable: products of these inputs cannot reach the accumulator's subnormal range";
  std::vector<Candidate> cands;
  FusedDotParams p = P_;
  p.align_floor = kNoAlignFloor;
  cands.push_back({"none", p});
  for (int f = e - 2; f <= e + P_.align_bits + 2; ++f) {
    p.align_floor = f;
    cands.push_back({"the alignment exponent is at least " + std::to_string(f), p});
  }
  select(cands, first, asked_.size(), prop);
  if (first < asked_.size() && last >= 1) prop.examples.push_back(example(first + static_cast<std::size_t>(last) - 1));
}

// ---- observation: monotonicity ----
void Prober::monotonicity() {
  const int e0 = E0_, F = P_.align_bits;
  CardProperty& prop = begin("monotonicity",
                             "C = X(1 - 2^-p) and C = X with n products 2^(E-F-1): kept beside the smaller C (its window reaches one bit "
                             "lower), truncated beside X; the model picks the smallest n that makes D fall when C rises");
  const double X = std::ldexp(1.0, e0);
  const double c1 = X * (1 - std::ldexp(1.0, -(s_.acc->frac_bits + 1)));
  const double t = std::ldexp(1.0, e0 - F - 1);
  int chosen = 0;
  for (int n = 1; n <= std::min(s_.k, P_.fused_length) && !chosen; ++n) {
    DotQuery lo = blank(), hi = blank();
    bool ok = put_c(lo, c1) && put_c(hi, X);
    for (int i = 0; i < n; ++i) ok &= put(lo, i, t) && put(hi, i, t);
    if (ok && acc_value(model(P_, lo)) > acc_value(model(P_, hi))) {
      chosen = n;
      add(lo, "C = X(1-2^-" + std::to_string(s_.acc->frac_bits + 1) + ") + " + std::to_string(n) + " * 2^(E-F-1)");
      add(hi, "C = X + " + std::to_string(n) + " * 2^(E-F-1)");
    }
  }
  const std::size_t first = flush();
  if (!chosen) {
    prop.observed = "the model predicts no fall for any n up to the fused length";
    prop.conclusion = "monotone on this test";
    return;
  }
  const double dlo = acc_value(asked_[first].d), dhi = acc_value(asked_[first + 1].d);
  prop.observed = "raising C from " + num(c1) + " to " + num(X) + " with " + std::to_string(chosen) + " small products: D went from " + num(dlo) +
                  " to " + num(dhi);
  prop.conclusion = dhi < dlo ? "not monotone: a larger C gave a smaller D (alignment to the largest exponent, Fasi et al. 2021)"
                              : "no fall observed where the model predicts one";
  prop.examples.push_back(example(first));
  prop.examples.push_back(example(first + 1));
}

// ---- stage: a random sample, and a refit of the block structure when it is needed ----
void Prober::emulated_structure() {
  // The earlier stages assume that neighbouring positions share a block and that C joins it; an
  // instruction emulated by narrower ones (Hopper's FP8 mma.sync: two f16 HMMAs on the registers' halves
  // and an FADD) breaks both, and its targeted answers may then fit a wrong one-block model. 128 random
  // dots check the fit; only when it misses one of them or an earlier answer, every answer (operand
  // layout aside) selects among block structures, each with the window, alignment and block rounding
  // refitted.
  const std::size_t from = stage_first_.size() > 1 ? stage_first_[1] : 0;
  CardProperty& prop = begin("random sample and block structure",
                             "the first " + std::to_string(kSampleCodes) + " dots of MMA 0 of the uniform and wide validation inputs (seed 1): "
                             "when the model fitted above misses any of them or any earlier answer, block structures are tried against "
                             "all answers: k in blocks of L (contiguous, or dealt in runs of r: block j takes k with (k / r) mod (k / L) == j), "
                             "C in the block, after it, or added last by an IEEE round-to-nearest addition (the blocks then chained from +0), "
                             "each with the alignment window, its discarded bits, the block rounding and the alignment floor refitted");
  const std::size_t sample = asked_.size();
  for (DotQuery& q : sample_dots(s_)) add(std::move(q), "random dot");
  flush();
  if (explains(P_, from, asked_.size())) {
    prop.observed = "the fitted model reproduces all " + std::to_string(asked_.size() - sample) + " random dots";
    prop.conclusion = "no refit: one structure explains every answer";
    return;
  }
  std::size_t failing = from;
  while (failing < asked_.size() && model(P_, asked_[failing].q) == asked_[failing].d) ++failing;
  const FusedDotParams base = P_;
  std::vector<int> lengths;
  for (int L = s_.k / 2; L >= 4; L /= 2)
    if (s_.k % L == 0) lengths.push_back(L);
  lengths.push_back(s_.k);  // one block with C added last: after every split
  // Window widths nearest the starting 25 bits first (the f16/bf16 datapath's window on Hopper, which an
  // emulation on it keeps), then fewer before more: where the answers leave a range (an fp16 result
  // rounded to nearest hides bits far below its 10), the card takes the one nearest 25, and the
  // validation decides.
  std::vector<int> window_order;
  for (int bits = 10; bits <= 56; ++bits) window_order.push_back(bits);
  const int start = starting_params(s_).align_bits;
  std::stable_sort(window_order.begin(), window_order.end(), [&](int x, int y) { return std::abs(x - start) < std::abs(y - start); });
  // Order (the first survivor is the card's): C added last before C in the block (the stages above
  // measured C beside one block), halves before smaller blocks and one block last, runs of 2 first.
  const auto structures = [&](const std::vector<int>& floors) {
    std::vector<Candidate> cands;
    for (CJoin join : {CJoin::LastRn, CJoin::InBlock, CJoin::After})
      for (int L : lengths)
        for (int run : {2, 1, 4, 8, 0}) {
          if (L == s_.k && run != 0) continue;
          for (int bits : window_order)
            for (Rounding br : {Rounding::TowardZero, Rounding::NearestEven})
              for (AlignRounding ar : {AlignRounding::TowardZero, AlignRounding::NearestEven, AlignRounding::Down})
                for (int fl : floors) {
                  FusedDotParams p = base;
                  p.c_join = join;
                  p.fused_length = L;
                  p.interleave_run = L == s_.k ? 0 : run;
                  p.align_bits = bits;
                  p.block_rounding = br;
                  p.align_rounding = ar;
                  p.align_floor = fl;
                  if (!check(p).empty()) continue;
                  std::string label = "blocks of " + std::to_string(L) +
                                      (p.interleave_run ? " dealt in runs of " + std::to_string(run) : std::string(" contiguous")) + ", C " +
                                      (join == CJoin::LastRn ? "added last (IEEE, nearest even; blocks from +0)"
                                                             : join == CJoin::InBlock ? "in the first block" : "after the block") +
                                      ", " + std::to_string(bits) + " fraction bits discarded " + std::string(to_string(ar)) + ", blocks rounded " +
                                      std::string(to_string(br)) +
                                      (fl == kNoAlignFloor ? std::string("") : ", alignment exponent at least " + std::to_string(fl));
                  cands.push_back({std::move(label), p});
                }
        }
    return cands;
  };
  // The floor as fitted (or none) first; an fp16 accumulator's floor (f16 HMMA: 2^-21) measured beside
  // one block may need refitting too.
  std::vector<int> floors{base.align_floor};
  if (base.align_floor != kNoAlignFloor) floors.push_back(kNoAlignFloor);
  std::vector<Candidate> cands = structures(floors);
  std::vector<std::string> alive = select(cands, from, asked_.size(), prop);
  if (alive.empty() && *s_.acc == f16) {
    floors.clear();
    for (int f = -14; f >= -30; --f) floors.push_back(f);
    cands = structures(floors);
    alive = select(cands, from, asked_.size(), prop);
  }
  int missed_targeted = 0, missed_sample = 0;
  for (std::size_t i = from; i < asked_.size(); ++i)
    if (model(base, asked_[i].q) != asked_[i].d) ++(i < sample ? missed_targeted : missed_sample);
  prop.observed = "the model fitted above (" + std::to_string(base.fused_length) + " products, C " + std::string(to_string(base.c_join)) + ", " +
                  std::to_string(base.align_bits) + " bits) misses " + std::to_string(missed_targeted) + " of " + std::to_string(sample - from) +
                  " targeted answers and " + std::to_string(missed_sample) + " of " + std::to_string(asked_.size() - sample) + " random dots; " +
                  std::to_string(alive.size()) + " of " + std::to_string(cands.size()) + " candidates (structure x window x rounding) explain all of them";
  if (alive.empty()) P_ = base;  // nothing better: keep the stages' fit (its disagreements are reported)
  if (failing < asked_.size()) prop.examples.push_back(example(failing));
  // The answers that tell the chosen structure from contiguous halves with C in the first block.
  FusedDotParams halves = P_;
  halves.interleave_run = 0;
  halves.c_join = CJoin::InBlock;
  for (std::size_t i = from; i < asked_.size() && prop.examples.size() < 4; ++i)
    if (i != failing && model(halves, asked_[i].q) != asked_[i].d && model(P_, asked_[i].q) == asked_[i].d) prop.examples.push_back(example(i));
}

// ---- every query against the final model ----
void Prober::finish() {
  stage_first_.push_back(asked_.size());
  int total_bad = 0;
  for (std::size_t st = 0; st + 1 < stage_first_.size(); ++st) {
    CardProperty& prop = card_.properties[st];
    if (prop.name == "operand layout") {
      total_bad += prop.disagree;
      prop.queries = static_cast<int>(stage_first_[st + 1] - stage_first_[st]);
      continue;
    }
    int bad = 0;
    for (std::size_t i = stage_first_[st]; i < stage_first_[st + 1]; ++i) {
      const std::uint32_t m = model(P_, asked_[i].q);
      if (m != asked_[i].d) ++bad;
    }
    prop.queries = static_cast<int>(stage_first_[st + 1] - stage_first_[st]);
    prop.disagree = bad;
    total_bad += bad;
    for (auto& ex : prop.examples) {
      DotQuery q = blank();
      for (const auto& x : ex.products) {
        q.a[static_cast<std::size_t>(x.i)] = x.a;
        q.b[static_cast<std::size_t>(x.i)] = x.b;
      }
      q.c = ex.c;
      ex.model = model(P_, q);
    }
  }
  card_.probe_queries = static_cast<int>(asked_.size());
  card_.probe_disagreements = total_bad;
  card_.params = P_;
  card_.summary = describe(P_);
  card_.published = compare_published(s_, card_, [&](const FusedDotParams& p) { return explains(p, stage_first_[1], asked_.size()); });
}

// ---- the integer instruction ----
void Prober::integer_stages() {
  CardProperty& prop = begin("integer accumulation",
                             "exact sums of small and extreme s8 products, and C at the int32 limits plus or minus one product");
  const auto s8 = [](int v) { return static_cast<std::uint32_t>(static_cast<std::uint8_t>(static_cast<std::int8_t>(v))); };
  const auto s32 = [](std::int64_t v) { return static_cast<std::uint32_t>(static_cast<std::int32_t>(v)); };
  struct Want {
    DotQuery q;
    std::int64_t exact;
    std::string note;
  };
  std::vector<Want> w;
  for (int i = 0; i < s_.k; ++i) {
    DotQuery q = blank();
    q.a[static_cast<std::size_t>(i)] = s8(1);
    q.b[static_cast<std::size_t>(i)] = s8(2);
    w.push_back({q, 2, "position " + std::to_string(i) + ": 1 * 2"});
  }
  for (int pa : {-128, 127})
    for (int pb : {-128, 127}) {
      DotQuery q = blank();
      for (int i = 0; i < s_.k; ++i) q.a[static_cast<std::size_t>(i)] = s8(pa), q.b[static_cast<std::size_t>(i)] = s8(pb);
      q.c = s32(-7);
      w.push_back({q, static_cast<std::int64_t>(s_.k) * pa * pb - 7, "every product " + std::to_string(pa) + " * " + std::to_string(pb) + ", C = -7"});
    }
  const std::size_t exact_n = w.size();
  DotQuery q = blank();
  q.a[0] = s8(1), q.b[0] = s8(1), q.c = s32(INT32_MAX);
  w.push_back({q, std::int64_t{INT32_MAX} + 1, "INT32_MAX + 1"});
  q.a[0] = s8(-1), q.c = s32(INT32_MIN);
  w.push_back({q, std::int64_t{INT32_MIN} - 1, "INT32_MIN - 1"});
  for (auto& x : w) add(x.q, x.note);
  const std::size_t first = flush();
  int bad_exact = 0, wraps = 0, sats = 0;
  for (std::size_t i = 0; i < w.size(); ++i) {
    const auto got = static_cast<std::int32_t>(asked_[first + i].d);
    if (i < exact_n) {
      bad_exact += got != w[i].exact;
    } else {
      wraps += got == static_cast<std::int32_t>(static_cast<std::uint32_t>(w[i].exact));
      sats += got == (w[i].exact > 0 ? INT32_MAX : INT32_MIN);
    }
    if (i >= exact_n || got != w[i].exact) prop.examples.push_back(example(first + i));
  }
  card_.integer_wraps = wraps >= sats;
  prop.observed = std::to_string(exact_n - static_cast<std::size_t>(bad_exact)) + " of " + std::to_string(exact_n) + " exact sums right; past the limits: " +
                  std::to_string(wraps) + " wrapped, " + std::to_string(sats) + " saturated";
  prop.conclusion = std::string("exact int32 sums, ") + (card_.integer_wraps ? "wrapping modulo 2^32" : "saturating at the int32 limits");
  stage_first_.push_back(asked_.size());
  int bad = 0;
  for (std::size_t i = first; i < asked_.size(); ++i)
    bad += int_dot(card_.integer_wraps, asked_[i].q.a.data(), asked_[i].q.b.data(), s_.k, asked_[i].q.c) != asked_[i].d;
  for (auto& ex : prop.examples) {
    DotQuery dq = blank();
    for (const auto& x : ex.products) dq.a[static_cast<std::size_t>(x.i)] = x.a, dq.b[static_cast<std::size_t>(x.i)] = x.b;
    ex.model = int_dot(card_.integer_wraps, dq.a.data(), dq.b.data(), s_.k, ex.c);
  }
  prop.queries = static_cast<int>(asked_.size() - first);
  prop.disagree = bad;
  card_.probe_queries = prop.queries;
  card_.probe_disagreements = bad;
  card_.summary = prop.conclusion;
}

void Prober::run() {
  if (s_.integer()) {
    integer_stages();
    return;
  }
  P_ = starting_params(s_);
  if (!sanity()) {
    card_.probe_queries = static_cast<int>(asked_.size());
    card_.probe_disagreements = card_.properties.front().disagree;
    card_.params = P_;
    card_.summary = "not measured: the operand layout check failed";
    return;
  }
  specials();
  operand_reading();
  subnormal_inputs();
  window();
  block_rounding();
  fused_length();
  c_join();
  products();
  carries();
  subnormal_results();
  overflow();
  align_floor();
  monotonicity();
  emulated_structure();
  finish();
}


}  // namespace fpcert::tc::probe_internal
