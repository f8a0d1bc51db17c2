// kernels/tc/probe_stages.cpp — the Prober's first stages (harness, specials, operand reading, subnormal inputs,
// window, block rounding, fused length, where C enters), each a set of targeted queries and its conclusion
// (kernels/tc/probe_internal.hpp; docs/tensor_cores.md).
#include "kernels/tc/probe_internal.hpp"

namespace fpcert::tc::probe_internal {

// ---- stage: the harness itself (exact small-integer sums) ----
bool Prober::sanity() {
  CardProperty& prop = begin("operand layout",
                             "every position i alone (a_i = 1, b_i = 2), a mixed sum of small integers, and C alone: "
                             "results exact in any arithmetic, so a mismatch means the harness, not the tensor core");
  std::vector<double> want;
  for (int i = 0; i < s_.k; ++i) {
    DotQuery q = blank();
    put(q, i, 2.0, 2.0);
    add(q, "position " + std::to_string(i) + ": 1 * 2 = 2");
    want.push_back(2.0);
  }
  DotQuery q = blank();
  double sum = 0;
  for (int i = 0; i < s_.k; ++i) {
    const double a = 1 + i % 3, b = 1 + (i / 3) % 2;
    put(q, i, a * b, b);
    sum += a * b;
  }
  put_c(q, 3.0);
  add(q, "sum of small integer products + 3 = " + num(sum + 3));
  want.push_back(sum + 3);
  DotQuery c = blank();
  put_c(c, 5.0);
  add(c, "C = 5 alone");
  want.push_back(5.0);
  const std::size_t first = flush();
  int bad = 0;
  for (std::size_t i = first; i < asked_.size(); ++i) {
    if (acc_value(asked_[i].d) != want[i - first]) {
      if (bad++ < 3) prop.examples.push_back(example(i));
    }
  }
  prop.queries = static_cast<int>(asked_.size() - first);
  prop.observed = bad ? std::to_string(bad) + " of " + std::to_string(prop.queries) + " exact sums wrong"
                      : "all " + std::to_string(prop.queries) + " exact sums right";
  prop.conclusion = bad ? "the answers are not those of this instruction's operand layout: nothing else is measured" : "operands reach the instruction as laid out";
  prop.disagree = bad;
  return bad == 0;
}

// ---- stage: Inf, NaN, signed zeros ----
void Prober::specials() {
  CardProperty& prop = begin("Inf, NaN and zero signs",
                             "NaN and Inf inputs and C, Inf * 0, Inf - Inf, -0 terms, exact cancellation");
  const Format& fa = *s_.a;
  const Format& acc = *s_.acc;
  const auto nan_a = static_cast<std::uint32_t>(to_container(fa, fa.canonical_nan_code()));
  const std::uint32_t one_b = *exact_code(*s_.b, 1.0);
  const std::uint32_t one_a = *exact_code(fa, 1.0);
  auto q = blank();
  q.a[0] = nan_a;
  q.b[0] = one_b;
  add(q, "a_0 = NaN");
  if (fa.has_inf()) {
    q = blank();
    q.a[0] = *exact_code(fa, INFINITY);
    q.b[0] = one_b;
    add(q, "a_0 = +Inf, b_0 = 1");
    q.a[0] = *exact_code(fa, -INFINITY);
    add(q, "a_0 = -Inf, b_0 = 1");
    q = blank();
    q.a[0] = *exact_code(fa, INFINITY);
    add(q, "Inf * 0");
    q = blank();
    q.a[0] = *exact_code(fa, INFINITY);
    q.b[0] = one_b;
    q.a[1] = *exact_code(fa, -INFINITY);
    q.b[1] = one_b;
    add(q, "Inf - Inf");
    q = blank();
    q.a[0] = *exact_code(fa, INFINITY);
    q.b[0] = one_b;
    q.c = static_cast<std::uint32_t>(acc.sign_mask() | acc.inf_code());
    add(q, "C = -Inf, product +Inf");
  }
  q = blank();
  q.a[0] = one_a;
  q.b[0] = one_b;
  q.c = static_cast<std::uint32_t>(acc.inf_code());
  add(q, "C = +Inf, product 1");
  q = blank();
  q.c = static_cast<std::uint32_t>(acc.canonical_nan_code());
  add(q, "C = NaN");
  q = blank();
  q.c = static_cast<std::uint32_t>(acc.sign_mask());
  add(q, "C = -0, products +0");
  q = blank();
  q.c = static_cast<std::uint32_t>(acc.sign_mask());
  q.a[0] = static_cast<std::uint32_t>(to_container(fa, fa.sign_mask()));
  q.b[0] = one_b;
  add(q, "C = -0, product -0 * 1");
  q = blank();
  q.c = static_cast<std::uint32_t>(acc.sign_mask());
  for (int i = 0; i < s_.k; ++i) q.a[static_cast<std::size_t>(i)] = static_cast<std::uint32_t>(to_container(fa, fa.sign_mask())), q.b[static_cast<std::size_t>(i)] = one_b;
  add(q, "C = -0, every product -0 * 1");
  q = blank();
  put(q, 0, 1.0);
  put(q, 1, -1.0);
  add(q, "1 - 1 (exact cancellation)");
  const std::size_t first = flush();
  // The NaN D carries: the first NaN answer's code.
  P_.nan_code = acc.canonical_nan_code();
  for (std::size_t i = first; i < asked_.size(); ++i)
    if (classify(acc, asked_[i].d) == FpClass::NaN) {
      P_.nan_code = asked_[i].d;
      break;
    }
  prop.observed = answers(first);
  std::vector<Candidate> cands;
  FusedDotParams p = P_;
  p.ieee_negative_zero = false;
  cands.push_back({"NaN results " + hex(static_cast<std::uint32_t>(P_.nan_code)) + "; exact zero sums are +0", p});
  p.ieee_negative_zero = true;
  cands.push_back({"NaN results " + hex(static_cast<std::uint32_t>(P_.nan_code)) + "; -0 when every term is -0", p});
  select(cands, first, asked_.size(), prop);
  for (std::size_t i = first; i < asked_.size() && prop.examples.size() < 4; ++i)
    if (asked_[i].note.find("Inf - Inf") != std::string::npos || asked_[i].note.find("-0") != std::string::npos)
      prop.examples.push_back(example(i));
}

// ---- stage: how fp32 containers are read as tf32 ----
void Prober::operand_reading() {
  if (!(*s_.a == tf32)) return;
  CardProperty& prop = begin("tf32 operand reading",
                             "single products whose fp32 containers carry bits below tf32's 10 fraction bits: "
                             "1 + 2^-11 + 2^-20 (above half), 1 + 2^-11 (a tie, even below), 1 + 3 * 2^-11 (a tie, odd below)");
  const double xs[] = {1 + 0x1p-11 + 0x1p-20, 1 + 0x1p-11, 1 + 3 * 0x1p-11, -(1 + 0x1p-11 + 0x1p-20), -(1 + 3 * 0x1p-11)};
  const std::uint32_t one = *exact_code(tf32, 1.0);
  for (int side = 0; side < 2; ++side)
    for (double x : xs) {
      DotQuery q = blank();
      const std::uint32_t bits = std::bit_cast<std::uint32_t>(static_cast<float>(x));
      (side == 0 ? q.a[0] : q.b[0]) = bits;
      (side == 0 ? q.b[0] : q.a[0]) = one;
      add(q, std::string(side == 0 ? "a" : "b") + "_0 container " + num(x));
    }
  const std::size_t first = flush();
  prop.observed = answers(first, first + 5);
  std::vector<Candidate> cands;
  for (Rounding r : {Rounding::TowardZero, Rounding::NearestEven, Rounding::NearestAway}) {
    FusedDotParams p = P_;
    p.operand_read = r;
    const char* what = r == Rounding::TowardZero ? "the low 13 bits are ignored (truncation)"
                       : r == Rounding::NearestEven ? "rounded to nearest even"
                                                    : "rounded to nearest, ties away";
    cands.push_back({what, p});
  }
  select(cands, first, asked_.size(), prop);
  prop.examples.push_back(example(first));
  prop.examples.push_back(example(first + 1));
}

// ---- stage: subnormal inputs ----
void Prober::subnormal_inputs() {
  CardProperty& prop = begin("subnormal inputs",
                             "the smallest subnormal (and 3x it) of each operand times a power of two that brings the product near 1");
  const Format& fa = *s_.a;
  const Format& fb = *s_.b;
  const auto pair = [&](const Format& fs, const Format& fo, double sub, bool sub_is_a) {
    const int y = std::min(fo.emax(), -std::ilogb(sub));
    const double other = std::ldexp(1.0, y);
    DotQuery q = blank();
    const auto cs = exact_code(fs, sub);
    const auto co = exact_code(fo, other);
    if (!cs || !co) return;
    (sub_is_a ? q.a[0] : q.b[0]) = *cs;
    (sub_is_a ? q.b[0] : q.a[0]) = *co;
    add(q, std::string(sub_is_a ? "a" : "b") + " = " + num(sub) + " times " + num(other));
  };
  pair(fa, fb, fa.min_subnormal(), true);
  if (fa.frac_bits >= 2) pair(fa, fb, 3 * fa.min_subnormal(), true);
  pair(fb, fa, fb.min_subnormal(), false);
  const std::size_t first = flush();
  prop.observed = answers(first);
  FusedDotParams p = P_;
  p.input_subnormals = true;
  FusedDotParams q = P_;
  q.input_subnormals = false;
  select({{"kept (exact)", p}, {"read as zero", q}}, first, asked_.size(), prop);
  v_.subnormals = P_.input_subnormals;
  if (first < asked_.size()) prop.examples.push_back(example(first));
}

// ---- stage: the alignment window ----
void Prober::window() {
  E0_ = anchor();
  const int e0 = E0_;
  CardProperty& prop = begin("alignment window",
                             "X - X + t with X = " + pow2(e0) + " (a_0 b_0 = X, a_1 b_1 = -X): t = C = 2^(E-j), t = a_2 b_2 = 2^(E-j), "
                             "and with X = 2.25 * " + pow2(e0) + " = (1.5 * 2^x)(1.5 * 2^y); then terms a fraction of the last kept bit, "
                             "both signs, to see how the discarded bits go (E = " + std::to_string(e0) + ")");
  const int jp = ladder_depth(e0);
  int jc = 0;
  while (jc < 56 && v_.acc(std::ldexp(1.0, e0 - jc - 1))) ++jc;
  // W1: C ladder
  for (int j = 1; j <= jc; ++j) {
    DotQuery q = blank();
    put(q, 0, std::ldexp(1.0, e0));
    put(q, 1, -std::ldexp(1.0, e0));
    put_c(q, std::ldexp(1.0, e0 - j));
    add(q, "X - X + C, C = 2^(E-" + std::to_string(j) + ")");
  }
  const std::size_t w1 = flush();
  // W2: product ladder
  for (int j = 1; j <= jp; ++j) {
    DotQuery q = blank();
    put(q, 0, std::ldexp(1.0, e0));
    put(q, 1, -std::ldexp(1.0, e0));
    put(q, 2, std::ldexp(1.0, e0 - j));
    add(q, "X - X + 2^(E-" + std::to_string(j) + ")");
  }
  const std::size_t w2 = flush();
  // W3: unnormalised product as the largest term
  {
    DotQuery q = blank();
    if (put(q, 0, 2.25 * std::ldexp(1.0, e0), 1.5) && put(q, 1, -2.25 * std::ldexp(1.0, e0), 1.5))
      for (int j = 1; j <= jp; ++j) {
        DotQuery r = q;
        put(r, 2, std::ldexp(1.0, e0 - j));
        add(r, "2.25X - 2.25X + 2^(E-" + std::to_string(j) + ")");
      }
  }
  const std::size_t w3 = flush();
  const auto cut = [&](std::size_t from, std::size_t to) {
    int last = 0;
    for (std::size_t i = from; i < to; ++i) {
      const int j = static_cast<int>(i - from) + 1;
      if (acc_value(asked_[i].d) == std::ldexp(1.0, e0 - j)) last = j;
    }
    return last;
  };
  const int fc = cut(w1, w2), fp = cut(w2, w3), fu = cut(w3, asked_.size());
  const int F = fp;
  // W4: terms a fraction of the last kept bit 2^(E-F), both signs
  const double lsb = std::ldexp(1.0, e0 - F);
  const double fracs[] = {-0.5, -0.75, 0.75, -1.5, 1.5, -0.25};
  for (double f : fracs) {
    DotQuery q = blank();
    put(q, 0, std::ldexp(1.0, e0));
    put(q, 1, -std::ldexp(1.0, e0));
    if (put(q, 2, f * lsb)) add(q, "X - X + (" + num(f) + ") * 2^(E-" + std::to_string(F) + ")");
  }
  const std::size_t w4 = flush();
  char obs[512];
  std::snprintf(obs, sizeof obs,
                "C = 2^(E-j) survives X - X up to j = %d (of %d tried); a product 2^(E-j) up to j = %d (of %d); beside 2.25X up to j = %d",
                fc, jc, fp, jp, fu);
  std::string o = obs;
  for (std::size_t i = w4; i < asked_.size(); ++i) o += "; " + asked_[i].note + " -> " + num(acc_value(asked_[i].d));
  prop.observed = o;
  // Candidates: window width x reference x alignment rounding (C in the block; where C joins is measured later).
  std::vector<Candidate> cands;
  const int fmin = std::max(0, std::min({fp, fc, fu}) - 2), fmax = std::min(56, std::max({fp, fc, fu}) + 3);
  for (int f = fmin; f <= fmax; ++f)
    for (AlignReference ref : {AlignReference::ProductExponents, AlignReference::LeadingBit})
      for (AlignRounding ar : {AlignRounding::TowardZero, AlignRounding::Down, AlignRounding::NearestEven}) {
        FusedDotParams p = P_;
        p.align_bits = f;
        p.reference = ref;
        p.align_rounding = ar;
        cands.push_back({std::to_string(f) + " fraction bits below the " +
                             (ref == AlignReference::ProductExponents ? "largest e_a + e_b" : "largest leading-bit exponent") +
                             ", discarded bits " + std::string(to_string(ar)),
                         p});
      }
  select(cands, w1, asked_.size(), prop);
  if (fp == jp) prop.alternatives.insert(prop.alternatives.begin(), "the ladder found no cut: at least " + std::to_string(jp) + " bits");
  const auto ex = [&](std::size_t from, int j) {
    if (j >= 1 && from + static_cast<std::size_t>(j) - 1 < asked_.size()) prop.examples.push_back(example(from + static_cast<std::size_t>(j) - 1));
  };
  ex(w2, fp);
  ex(w2, fp + 1);
  ex(w3, fu);
  ex(w3, fu + 1);
  for (std::size_t i = w4; i < asked_.size() && i < w4 + 2; ++i) prop.examples.push_back(example(i));
}

// ---- stage: rounding of the block result ----
void Prober::block_rounding() {
  const int e0 = E0_;
  const int F = P_.align_bits;
  CardProperty& prop = begin("rounding of the block result",
                             "2^s anchors X = " + pow2(e0) + " plus one term 2^(E-j) (s = 0, 1, 2): the last j kept gives the result's "
                             "fraction bits; then residues of 1/4, 1/2 and 3/4 of the result's ulp on even and odd bases, both signs");
  const int jp = std::min(F, ladder_depth(e0));
  for (int s = 0; s <= 2; ++s) {
    if ((1 << s) + 1 > s_.k) break;
    for (int j = 1; j <= jp; ++j) {
      DotQuery q = blank();
      for (int i = 0; i < (1 << s); ++i) put(q, i, std::ldexp(1.0, e0));
      put(q, 1 << s, std::ldexp(1.0, e0 - j));
      add(q, std::to_string(1 << s) + "X + 2^(E-" + std::to_string(j) + ")");
    }
  }
  const std::size_t r1 = flush();
  std::vector<Candidate> cands;
  const Rounding modes[] = {Rounding::TowardZero, Rounding::NearestEven, Rounding::NearestAway, Rounding::Down, Rounding::Up};
  for (int bits = s_.acc->frac_bits; bits >= 1; --bits)
    for (Rounding r : modes) {
      FusedDotParams p = P_;
      p.acc_bits = bits;
      p.block_rounding = r;
      cands.push_back({std::string(to_string(r)) + " to " + std::to_string(bits) + " fraction bits", p});
    }
  CardProperty scratch;
  select(cands, r1, asked_.size(), scratch);
  const std::size_t r2 = asked_.size();
  const int acc_bits = P_.acc_bits;
  // R2: residues around the result's ulp u = 2^(E + s - acc_bits), s chosen so a quarter ulp is >= the window's last bit.
  int s = std::max(0, acc_bits + 3 - F);
  while (s > 0 && (1 << s) + 3 > s_.k) --s;
  const double X = std::ldexp(1.0, e0);
  const double u = std::ldexp(1.0, e0 + s - acc_bits);
  for (int sign : {1, -1})
    for (int odd : {0, 1})
      for (double r : {0.25, 0.5, 0.75}) {
        DotQuery q = blank();
        int pos = 0;
        for (int i = 0; i < (1 << s); ++i) put(q, pos++, sign * X);
        if (odd) put(q, pos++, sign * u);
        if (put(q, pos, sign * r * u))
          add(q, std::string(sign > 0 ? "+" : "-") + "(" + std::to_string(1 << s) + "X" + (odd ? " + u" : "") + " + " + num(r) + "u), u = " +
                     pow2(e0 + s - acc_bits));
      }
  flush();
  char obs[256];
  std::snprintf(obs, sizeof obs, "1X + 2^(E-j) exact up to j = %d", [&] {
    int last = 0;
    for (std::size_t i = r1; i < r1 + static_cast<std::size_t>(jp) && i < asked_.size(); ++i)
      if (acc_value(asked_[i].d) == X + std::ldexp(1.0, e0 - static_cast<int>(i - r1) - 1)) last = static_cast<int>(i - r1) + 1;
    return last;
  }());
  std::string o = obs;
  for (std::size_t i = r2; i < asked_.size(); ++i) o += "; " + asked_[i].note + " -> " + num(acc_value(asked_[i].d));
  prop.observed = o;
  // Final selection over both query sets: result bits x rounding.
  select(cands, r1, asked_.size(), prop);
  for (std::size_t i = r2; i < asked_.size() && prop.examples.size() < 4; ++i)
    if (asked_[i].note.find(" 0.5u") != std::string::npos) prop.examples.push_back(example(i));
}

// ---- stage: fused length and alignment groups ----
void Prober::fused_length() {
  const int e0 = E0_, F = P_.align_bits, acc_bits = P_.acc_bits;
  CardProperty& prop = begin("fused length and alignment groups",
                             "a positive group (2^s anchors X and delta = 2^(E-F), whose rounded partial sum would lose delta) and "
                             "2^s products -X on either side of every position b: D = delta only if no rounding separates them; then X at 0, "
                             "C = -X and two half-bits 2^(E-F-1) at positions i, j: D = 2^(E-F) only if i and j are aligned "
                             "together apart from position 0");
  // The positive group: 2^s anchors X and delta = 2^(E-F), kept by the window (its largest exponent is
  // E) but lost by any rounding of their partial sum 2^s X + delta, which needs s + F > acc_bits
  // fraction bits; the negative group: 2^s products -X (each -X, so the window stays at E).
  const int s = std::max(0, acc_bits - F + 1);
  const int np = (1 << s) + 1, nn = 1 << s;
  const double X = std::ldexp(1.0, e0), delta = std::ldexp(1.0, e0 - F);
  const auto group = [&](DotQuery& q, int from, bool positive) {
    bool ok = true;
    if (positive) {
      for (int i = 0; i < nn; ++i) ok &= put(q, from + i, X);
      ok &= put(q, from + nn, delta);
    } else {
      for (int i = 0; i < nn; ++i) ok &= put(q, from + i, -X);
    }
    return ok;
  };
  for (int b = 1; b < s_.k; ++b) {
    if (b >= np && b + nn <= s_.k) {
      DotQuery q = blank();
      if (group(q, b - np, true) && group(q, b, false))
        add(q, "positives at " + std::to_string(b - np) + ".." + std::to_string(b - 1) + ", negatives from " + std::to_string(b));
    }
    if (b >= nn && b + np <= s_.k) {
      DotQuery q = blank();
      if (group(q, b - nn, false) && group(q, b, true))
        add(q, "negatives to " + std::to_string(b - 1) + ", positives at " + std::to_string(b) + ".." + std::to_string(b + np - 1));
    }
  }
  const std::size_t l1 = flush();
  const double half = std::ldexp(1.0, e0 - F - 1);
  for (int i = 1; i < s_.k; ++i)
    for (int d : {1, 2, 4, 8}) {
      const int j = i + d;
      if (j >= s_.k) continue;
      DotQuery q = blank();
      if (put(q, 0, X) && put(q, i, half) && put(q, j, half) && put_c(q, -X))
        add(q, "X at 0, C = -X, half-bits at " + std::to_string(i) + " and " + std::to_string(j));
    }
  const std::size_t l2 = flush();
  int together = 0, apart = 0;
  for (std::size_t i = l1; i < l2; ++i) (acc_value(asked_[i].d) == delta ? together : apart)++;
  std::string groups_seen;
  for (std::size_t i = l2; i < asked_.size(); ++i)
    if (acc_value(asked_[i].d) == std::ldexp(1.0, e0 - F)) {
      if (groups_seen.size() < 200) groups_seen += (groups_seen.empty() ? "" : ", ") + asked_[i].note.substr(asked_[i].note.find("half-bits at ") + 13);
    }
  prop.observed = std::to_string(together) + " of " + std::to_string(l2 - l1) + " split probes returned delta exactly; half-bit pairs kept at: " +
                  (groups_seen.empty() ? std::string("none") : groups_seen);
  std::vector<Candidate> cands;
  for (int L = s_.k; L >= 1; --L) {
    if (s_.k % L) continue;
    FusedDotParams p = P_;
    p.fused_length = L;
    p.grouping = Grouping::None;
    p.groups = 1;
    cands.push_back({"blocks of " + std::to_string(L) + " products, one alignment each", p});
    for (int g : {2, 4, 8}) {
      if (g > L) continue;
      p.grouping = Grouping::Interleaved;
      p.groups = g;
      cands.push_back({"blocks of " + std::to_string(L) + ", " + std::to_string(g) + " interleaved alignment groups", p});
      if (L % g == 0 && g < L) {
        p.grouping = Grouping::Contiguous;
        cands.push_back({"blocks of " + std::to_string(L) + ", " + std::to_string(g) + " contiguous alignment groups", p});
      }
    }
  }
  select(cands, l1, asked_.size(), prop);
  // Deciding examples: the first split probe that did not return delta, and the first kept pair.
  for (std::size_t i = l1; i < l2; ++i)
    if (acc_value(asked_[i].d) != delta) {
      prop.examples.push_back(example(i));
      break;
    }
  if (l1 < l2) prop.examples.push_back(example(l1));
  for (std::size_t i = l2; i < asked_.size(); ++i)
    if (acc_value(asked_[i].d) == std::ldexp(1.0, e0 - F)) {
      prop.examples.push_back(example(i));
      break;
    }
}

// ---- stage: where C enters ----
void Prober::c_join() {
  const int e0 = E0_, F = P_.align_bits;
  CardProperty& prop = begin("where C enters",
                             "C = +-X and n products each just below the last kept bit of X's window (2 - 2^-f) 2^(E-F-1): in the block each "
                             "is truncated; summed first and added to C their sum shows");
  const int n = std::min(s_.k, P_.fused_length);
  const double sa = 2 - std::ldexp(1.0, -s_.a->frac_bits);
  for (int sign : {1, -1})
    for (int m : {n, std::max(1, n / 2)}) {
      DotQuery q = blank();
      bool ok = put_c(q, sign * std::ldexp(1.0, e0));
      for (int i = 0; i < m; ++i) ok &= put(q, i, sa * std::ldexp(1.0, e0 - F - 1));
      if (ok) add(q, "C = " + std::string(sign > 0 ? "+" : "-") + "X, " + std::to_string(m) + " products (2-2^-" + std::to_string(s_.a->frac_bits) + ") 2^(E-F-1)");
    }
  const std::size_t first = flush();
  prop.observed = answers(first);
  FusedDotParams a = P_, b = P_;
  a.c_join = CJoin::InBlock;
  b.c_join = CJoin::After;
  select({{"C is aligned with the products (in the block)", a}, {"C is added to the block's sum (after)", b}}, first, asked_.size(), prop);
  if (first < asked_.size()) prop.examples.push_back(example(first));
}


}  // namespace fpcert::tc::probe_internal
