// suites/diagnose/diagnose_eltwise.cpp — see diagnose_eltwise.hpp.
#include "suites/diagnose/diagnose_eltwise.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <limits>
#include <mutex>
#include <optional>

#include "base/codes.hpp"
#include "base/error.hpp"
#include "base/fpenv.hpp"
#include "base/parallel.hpp"
#include "oracle/math/binary.hpp"
#include "oracle/math/elementary.hpp"
#include "oracle/round.hpp"
#include "suites/ops/elementwise/eltwise_check.hpp"
#include "suites/ops/elementwise/eltwise_faults.hpp"
#include "suites/ops/elementwise/eltwise_operation.hpp"
#include "suites/run/case_run.hpp"
#include "suites/run/device_apis.hpp"
#include "suites/run/guarded_buffer.hpp"
#include "suites/run/guarded_input.hpp"

namespace fpcert {
namespace {

/// f(x) correctly rounded with (at most) a few changes, or another kernel's results (kernel >= 0).
struct EltHypothesis {
  std::string id = "declared";
  std::string what;
  int changes = 0;
  Rounding rounding = Rounding::NearestEven;
  bool daz = false, ftz = false;
  const Format* via = nullptr;  ///< rounded into this format first (f32: double rounding; bf16: 8 bits; tf32: 11 bits)
  bool clear_last = false;      ///< the result's last significand bit cleared
  int kernel = -1;              ///< index into `others`
};

std::string_view mode_words(Rounding r) {
  switch (r) {
    case Rounding::TowardZero: return "toward zero (truncation)";
    case Rounding::Up: return "toward +Inf";
    case Rounding::Down: return "toward -Inf";
    case Rounding::NearestAway: return "to nearest, ties away";
    default: return "to nearest, ties to even";
  }
}

bool has_f32_subnormals(const Format& f) { return f.exp_bits == 8; }  // f32, bf16: inputs below 2^-126 exist

std::vector<EltHypothesis> eltwise_hypotheses(const EltwiseTraits& t, const std::vector<EltwiseOtherKernel>& others) {
  std::vector<EltHypothesis> hs;
  EltHypothesis decl;
  decl.daz = t.daz;
  decl.ftz = t.ftz;
  decl.what = fmt::format("f(x) correctly rounded (to nearest, ties to even) into {}{}", t.out->tag,
                          t.daz || t.ftz ? (t.daz && t.ftz ? ", DAZ and FTZ as declared" : t.daz ? ", DAZ as declared" : ", FTZ as declared") : "");
  hs.push_back(decl);
  const auto add = [&](std::string id, std::string what, int changes, const auto& set) {
    EltHypothesis h = decl;
    set(h);
    h.id = std::move(id);
    h.what = std::move(what);
    h.changes = changes;
    hs.push_back(std::move(h));
  };
  for (const Rounding m : {Rounding::TowardZero, Rounding::Up, Rounding::Down})
    add(fmt::format("round={}", to_string(m)), fmt::format("f(x) rounded {} instead of to nearest", mode_words(m)), 1,
        [m](EltHypothesis& h) { h.rounding = m; });
  if (t.out->subnormals && !t.ftz) add("ftz", "subnormal results flushed to zero (FTZ)", 1, [](EltHypothesis& h) { h.ftz = true; });
  if (t.ftz) add("no_ftz", "subnormal results kept (no FTZ, which the kernel declares)", 1, [](EltHypothesis& h) { h.ftz = false; });
  if (has_f32_subnormals(*t.in) && !t.daz) add("daz", "subnormal inputs read as zero (DAZ)", 1, [](EltHypothesis& h) { h.daz = true; });
  if (t.daz) add("no_daz", "subnormal inputs read as they are (no DAZ, which the kernel declares)", 1, [](EltHypothesis& h) { h.daz = false; });
  if (has_f32_subnormals(*t.in) && !t.daz && t.out->subnormals && !t.ftz)
    add("daz+ftz", "subnormal inputs read as zero and subnormal results flushed (a fast-math build)", 2, [](EltHypothesis& h) {
      h.daz = h.ftz = true;
    });
  if (t.out->container_bits == 16)
    add("double_rounding", fmt::format("f(x) rounded to f32 first, then to {} (double rounding)", t.out->tag), 1,
        [](EltHypothesis& h) { h.via = &f32; });
  if (t.out->frac_bits > tf32.frac_bits)
    add("bits=11", fmt::format("f(x) rounded to 11 significand bits (f16's precision, f32's range), then into {}", t.out->tag), 1,
        [](EltHypothesis& h) { h.via = &tf32; });
  if (t.out->frac_bits > bf16.frac_bits)
    add("bits=8", fmt::format("f(x) rounded to 8 significand bits (bf16), then into {}", t.out->tag), 1, [](EltHypothesis& h) { h.via = &bf16; });
  add("last_bit_cleared", "the correctly rounded result's last significand bit cleared (truncated last bit)", 1,
      [](EltHypothesis& h) { h.clear_last = true; });
  for (std::size_t k = 0; k < others.size(); ++k)
    add("kernel=" + others[k].name, others[k].what.empty() ? fmt::format("computes what {} computes", others[k].name) : others[k].what,
        others[k].changes,
        [k](EltHypothesis& h) { h.kernel = static_cast<int>(k); });
  return hs;
}

/// The oracle's results already computed for one input (several hypotheses share a rounding of the same value: the
/// declaration, FTZ, the last bit cleared; DAZ wherever the input is not flushed), searched linearly (at most ~8).
struct InputCache {
  struct Entry {
    Rounding rounding;
    const Format* via;
    std::uint32_t xbits, x2bits;
    std::uint64_t code;
  };
  std::vector<Entry> e;
};

/// The hypothesis's result for input code xc (an arithmetic hypothesis; kernels' results are read elsewhere).
std::uint32_t evaluate(const EltHypothesis& h, const EltwiseTraits& t, std::uint32_t xc, InputCache* cache = nullptr,
                       std::uint32_t x2c = 0) {
  const bool two = math::arity(t.fn) == 2;
  const auto read = [&](std::uint32_t c) {
    float v = static_cast<float>(to_double(*t.in, c));  // exact: f16/bf16 values are floats
    if (h.daz && std::fabs(v) < 0x1p-126f) v = std::signbit(v) ? -0.0f : 0.0f;
    return v;
  };
  const float x = read(xc), x2 = two ? read(x2c) : 0.0f;
  const std::uint32_t xbits = std::bit_cast<std::uint32_t>(x), x2bits = std::bit_cast<std::uint32_t>(x2);
  std::uint64_t code = 0;
  const auto hit = cache ? std::find_if(cache->e.begin(), cache->e.end(), [&](const InputCache::Entry& c) {
    return c.rounding == h.rounding && c.via == h.via && c.xbits == xbits && c.x2bits == x2bits;
  }) : std::vector<InputCache::Entry>::iterator{};
  if (cache && hit != cache->e.end()) {
    code = hit->code;
  } else {
    const Rounder r{h.rounding, Saturation::Inf, NanPayload::Preserve};
    const Format& first = h.via ? *h.via : *t.out;
    code = two ? math::evaluate_binary(t.fn, x, x2, first, r).code : math::evaluate(t.fn, x, first, r).rounded.code;
    if (h.via) code = convert(*h.via, code, *t.out, Rounder{Rounding::NearestEven, Saturation::Inf, NanPayload::Preserve}).code;
    if (cache) cache->e.push_back({h.rounding, h.via, xbits, x2bits, code});
  }
  const FpClass c = classify(*t.out, code);
  if (h.ftz && c == FpClass::Subnormal) code &= t.out->sign_mask();
  if (h.clear_last && (c == FpClass::Normal || c == FpClass::Subnormal)) code &= ~std::uint64_t{1};
  return static_cast<std::uint32_t>(code);
}

bool same(const math::CodeFormat& f, std::uint32_t a, std::uint32_t b) { return a == b || (f.is_nan(a) && f.is_nan(b)); }

std::uint64_t mix(std::uint64_t v) {  // splitmix64's finaliser
  v += 0x9e3779b97f4a7c15ULL;
  v = (v ^ (v >> 30)) * 0xbf58476d1ce4e5b9ULL;
  v = (v ^ (v >> 27)) * 0x94d049bb133111ebULL;
  return v ^ (v >> 31);
}

std::string hex(const Format& f, std::uint32_t c) { return fmt::format("0x{:0{}x}", c, f.container_bits / 4); }

}  // namespace

DiagnosisRecord diagnose_eltwise(const std::string& kernel, const EltwiseTraits& t, const std::vector<EltwiseDiagnoseCase>& cases,
                                 const std::vector<EltwiseOtherKernel>& others, int top, int unexplained) {
  if (const std::string why = eltwise_traits_problem(t); !why.empty()) throw InputError("diagnose " + kernel + ": " + why);
  const bool two = math::arity(t.fn) == 2;
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<EltHypothesis> hs = eltwise_hypotheses(t, others);
  const std::size_t nh = hs.size();
  const math::CodeFormat& oc = *code_format(*t.out);
  std::vector<DiagnosisHypothesis> out(nh);
  std::vector<std::uint64_t> digest(nh, 0);  // a sum of mixed (position, code) pairs: equal on every input -> look-alikes
  EltwiseTally claim;                        // the declared claim judged on every input (the envelope column of `declared`)
  std::int64_t total = 0;
  struct Miss {
    std::size_t c, i;
  };
  std::vector<Miss> misses;
  std::mutex mu;
  for (std::size_t ci = 0; ci < cases.size(); ++ci) {
    const EltwiseDiagnoseCase& dc = cases[ci];
    if (dc.codes.size() != dc.got.size() || (two && dc.codes2.size() != dc.codes.size()))
      throw InputError(fmt::format("diagnose {}: {} input codes but {} results", kernel, dc.codes.size(), dc.got.size()));
    for (const EltwiseOtherKernel& o : others)
      if (o.results.size() != cases.size() || o.results[ci].size() != dc.codes.size())
        throw InputError(fmt::format("diagnose {}: kernel {} has no results for case {}", kernel, o.name, dc.label));
    std::vector<std::uint8_t> explained(dc.codes.size(), 0);
    parallel_for(dc.codes.size(), 1 << 12, [&](std::uint64_t b, std::uint64_t e, unsigned) {
      std::vector<std::int64_t> matched(nh, 0);
      std::vector<double> ulps(nh, 0);
      std::vector<std::uint64_t> dig(nh, 0);
      EltwiseTally part;
      InputCache cache;
      for (std::uint64_t i = b; i < e; ++i) {
        cache.e.clear();
        const std::uint32_t xc = dc.codes[i], got = dc.got[i], x2c = two ? dc.codes2[i] : 0;
        if (two) eltwise_check_two(t, xc, x2c, got, part);
        else eltwise_check_one(t, xc, got, part);
        bool any = false;
        for (std::size_t h = 0; h < nh; ++h) {
          const std::uint32_t want = hs[h].kernel >= 0 ? others[static_cast<std::size_t>(hs[h].kernel)].results[ci][i] : evaluate(hs[h], t, xc, &cache, x2c);
          dig[h] += mix((static_cast<std::uint64_t>(ci) << 40) ^ (i << 1) ^ (static_cast<std::uint64_t>(oc.is_nan(want) ? oc.inf_code() | 1 : want) << 8));
          if (same(oc, want, got)) {
            ++matched[h];
            any = true;
          } else {
            const std::uint64_t d = math::ulp_distance(want, got, oc);
            ulps[h] = std::max(ulps[h], d == math::kNanDistance ? std::numeric_limits<double>::infinity() : static_cast<double>(d));
          }
        }
        explained[i] = any;
      }
      const std::lock_guard<std::mutex> lock(mu);
      for (std::size_t h = 0; h < nh; ++h) {
        out[h].matched += matched[h];
        out[h].max_ulps = std::max(out[h].max_ulps, ulps[h]);
        digest[h] += dig[h];
      }
      claim.merge(part);
    });
    pin_fp_env();
    for (std::size_t i = 0; i < dc.codes.size() && misses.size() < static_cast<std::size_t>(std::max(unexplained, 0)); ++i)
      if (!explained[i]) misses.push_back({ci, i});
    total += static_cast<std::int64_t>(dc.codes.size());
  }
  if (total == 0) throw InputError(fmt::format("diagnose {}: the cases hold no input", kernel));
  for (std::size_t h = 0; h < nh; ++h) {
    DiagnosisHypothesis& d = out[h];
    d.id = hs[h].id;
    d.what = hs[h].what;
    d.changes = hs[h].changes;
    d.elements = total;
    d.envelope_exceed = -1;  // bits promised: no envelope, except the declared claim below
    for (std::size_t g = 0; g < nh; ++g)
      if (g != h && digest[g] == digest[h]) d.same_as.push_back(hs[g].id);
  }
  out[0].envelope_exceed = static_cast<std::int64_t>(claim.above);
  out[0].envelope_holds = claim.above == 0;
  std::vector<std::size_t> order(nh);
  for (std::size_t h = 0; h < nh; ++h) order[h] = h;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    if (out[x].matched != out[y].matched) return out[x].matched > out[y].matched;
    if (out[x].changes != out[y].changes) return out[x].changes < out[y].changes;
    return out[x].max_ulps < out[y].max_ulps;
  });

  DiagnosisRecord r;
  r.kernel = kernel;
  r.declared = describe_eltwise_traits(t);
  for (const EltwiseDiagnoseCase& c : cases) r.cases.push_back(c.label);
  r.tried = static_cast<std::int64_t>(nh);
  const DiagnosisHypothesis& best = out[order[0]];
  const bool declared_top = order[0] == 0 || std::find(best.same_as.begin(), best.same_as.end(), "declared") != best.same_as.end();
  // 99.9 %: a kernel that is not correctly rounded (a claim of 1 ulp or more) still matches its arithmetic on nearly
  // every input; below that share no hypothesis is taken for what the kernel computes.
  const bool explains = best.matched * 1000 >= best.elements * 999;
  const std::string share = fmt::format("bit for bit on {:.4g} % of inputs ({} of {})", 100.0 * best.fraction(), best.matched, total);
  const std::string alike = best.same_as.empty() ? "" : fmt::format("; indistinguishable on these inputs from {}", fmt::join(best.same_as, ", "));
  const std::string claim_words =
      claim.above == 0 ? fmt::format("claim ({}) holds on every input", describe_claim(t.claim))
                       : fmt::format("claim ({}) exceeded on {} inputs", describe_claim(t.claim), claim.above);
  if (explains && declared_top) {
    r.kind = "declared";
    r.verdict = fmt::format("consistent with the declared arithmetic, {}: {}; {}", out[0].what, share, claim_words);
    if (best.matched == total && t.claim.kind != math::ClaimKind::CorrectlyRounded && claim.above == 0) {
      r.hint_id = "declared";
      r.hint = fmt::format("correctly rounded on every input ({} of {}), more precise than the claim ({}): the claim could be tightened",
                           total, total, describe_claim(t.claim));
    }
  } else if (explains) {
    r.kind = "consistent";
    r.verdict = fmt::format("consistent with {} [{}]: {}{}; {}", best.what, best.id, share, alike, claim_words);
  } else if (claim.above == 0 && claim.inputs > 0) {
    r.kind = "declared";
    r.verdict = fmt::format(
        "consistent with the declared claim ({}) on every input ({}); no known arithmetic reproduces it bit for bit: at best {:.4g} % "
        "[{}], a hint only",
        describe_claim(t.claim), total, 100.0 * best.fraction(), best.id);
  } else {
    r.kind = "logic_error";
    std::vector<std::string> xs;
    for (const Miss& m : misses)
      xs.push_back(two ? fmt::format("({}, {})", hex(*t.in, cases[m.c].codes[m.i]), hex(*t.in, cases[m.c].codes2[m.i]))
                       : hex(*t.in, cases[m.c].codes[m.i]));
    r.verdict = fmt::format(
        "no known arithmetic explains it — a logic error; the closest is {} [{}], {}; {}; the first inputs no hypothesis explains are {}",
        best.what, best.id, share, claim_words,
        xs.empty() ? "(none: each input is explained by some hypothesis, no one by all)" : fmt::format("{}", fmt::join(xs, ", ")));
  }
  const EltHypothesis& bh = hs[order[0]];
  for (const Miss& m : misses) {
    const EltwiseDiagnoseCase& dc = cases[m.c];
    const std::uint32_t xc = dc.codes[m.i], got = dc.got[m.i], x2c = two ? dc.codes2[m.i] : 0;
    const std::uint32_t cr = two ? evaluate(hs[0], t, xc, nullptr, x2c) : eltwise_reference(t, xc);
    const std::uint32_t bv = bh.kernel >= 0 ? others[static_cast<std::size_t>(bh.kernel)].results[m.c][m.i] : evaluate(bh, t, xc, nullptr, x2c);
    DiagnosisElement e;
    const std::string in = two ? fmt::format("{}, {} ({:.9g}, {:.9g})", hex(*t.in, xc), hex(*t.in, x2c), to_double(*t.in, xc), to_double(*t.in, x2c))
                               : fmt::format("{} ({:.9g})", hex(*t.in, xc), to_double(*t.in, xc));
    e.case_label = fmt::format("{} input {} -> got {}, correctly rounded {}, {} {}", dc.label, in, hex(*t.out, got), hex(*t.out, cr), bh.id,
                               hex(*t.out, bv));
    e.i = static_cast<std::int64_t>(m.i);
    e.j = xc;
    e.got = to_double(*t.out, got);
    e.ref = to_double(*t.out, cr);
    e.best = to_double(*t.out, bv);
    r.unexplained.push_back(e);
  }
  for (int k = 0; k < top && k < static_cast<int>(nh); ++k) r.ranked.push_back(out[order[static_cast<std::size_t>(k)]]);
  r.notes.push_back(
      "the hypotheses are f(x) correctly rounded (the oracle) with one change — rounding mode, FTZ, DAZ, double rounding through f32, "
      "11 or 8 significand bits, the last bit cleared — and every other kernel of this function and these formats that runs here "
      "(docs/diagnose.md, \"Elementwise kernels\"); the envelope column of `declared` counts the inputs beyond the kernel's claim");
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

std::vector<std::uint32_t> eltwise_run_codes(ElementwiseKernel& k, const std::vector<std::uint32_t>& codes,
                                             const std::vector<std::uint32_t>* codes2) {
  DeviceApis apis;
  std::string why;
  DeviceApi* api = apis.for_kernel(k, why);
  if (!api) throw InputError(fmt::format("{}: no device to run it on: {}", k.name(), why));
  const EltwiseTraits& t = k.eltwise_traits();
  const int ib = container_bytes(*t.in), ob = container_bytes(*t.out);
  const RunOptions opt;
  const std::uint64_t pre = to_container(*t.out, prefill_code(*t.out));
  std::vector<std::uint32_t> ys(codes.size());
  constexpr std::size_t kChunk = std::size_t{1} << 22;
  for (std::size_t at = 0; at < codes.size(); at += kChunk) {
    const std::size_t m = std::min(kChunk, codes.size() - at);
    std::vector<std::uint8_t> packed(m * static_cast<std::size_t>(ib));
    for (std::size_t i = 0; i < m; ++i) store_code(packed.data(), static_cast<std::int64_t>(i), ib, to_container(*t.in, codes[at + i]));
    const auto cols = static_cast<std::int64_t>(m);
    GuardedInput dx(*api, packed, 1, cols, cols, ib, opt.guard_bytes, false);
    std::optional<GuardedInput> dx2;
    if (codes2) {
      std::vector<std::uint8_t> packed2(packed.size());
      for (std::size_t i = 0; i < m; ++i) store_code(packed2.data(), static_cast<std::int64_t>(i), ib, to_container(*t.in, (*codes2)[at + i]));
      dx2.emplace(*api, packed2, 1, cols, cols, ib, opt.guard_bytes, false);
    }
    GuardedBuffer dy(*api, m * static_cast<std::size_t>(ob), opt.guard_bytes);
    dy.prefill(1, cols, cols, ob, pre);
    EltwiseOperands ops{cols, dx.elements(), dy.elements(), api->stream(), dx2 ? dx2->elements() : nullptr};
    k.run(ops);
    api->synchronize(opt.timeout_ms);
    dy.download_and_check();
    for (std::size_t i = 0; i < m; ++i) ys[at + i] = static_cast<std::uint32_t>(from_container(*t.out, dy.code(0, static_cast<std::int64_t>(i))));
  }
  pin_fp_env();
  return ys;
}

std::vector<EltwiseDiagnoseCase> eltwise_diagnose_cases(const EltwiseTraits& t, const std::vector<std::string>& names) {
  const std::vector<CaseSpec> suite = eltwise_cases("elementwise", t);
  std::vector<EltwiseDiagnoseCase> out;
  const auto from_spec = [&](const CaseSpec& c) {
    EltwiseDiagnoseCase d;
    d.label = c.id;
    const EltwiseInputs in = parse_eltwise_inputs(c.spec);
    if (math::arity(t.fn) == 2) {
      eltwise_input_pairs(in, t, d.codes, d.codes2);
    } else if (in.kind == EltwiseInputs::Kind::All) {
      if (t.in->container_bits > 16) throw InputError("diagnose: every f32 input is 2^32 codes; give FIRST+COUNT");
      for (std::uint32_t x = 0; x < (std::uint32_t{1} << t.in->container_bits); ++x) d.codes.push_back(x);
    } else {
      d.codes = eltwise_input_codes(in, t);
    }
    out.push_back(std::move(d));
  };
  for (const std::string& n : names.empty() ? std::vector<std::string>{"all"} : names) {
    if (n == "all") {
      for (const CaseSpec& c : suite) from_spec(c);
      continue;
    }
    const auto it = std::find_if(suite.begin(), suite.end(), [&](const CaseSpec& c) { return c.id == n; });
    if (it != suite.end()) {
      from_spec(*it);
      continue;
    }
    const auto plus = math::arity(t.fn) == 2 ? std::string::npos : n.find('+');
    std::string ids;
    for (const CaseSpec& c : suite) ids += ", " + c.id;
    if (plus == std::string::npos || plus == 0 || plus + 1 == n.size())
      throw InputError(fmt::format("diagnose: elementwise case '{}': give all{} or FIRST+COUNT (input codes, e.g. 0x3c00+256)", n, ids));
    std::uint64_t first = 0, count = 0;
    try {
      std::size_t used = 0;
      const std::string a = n.substr(0, plus), b = n.substr(plus + 1);
      first = std::stoull(a, &used, 0);
      if (used != a.size()) throw std::invalid_argument(a);
      count = std::stoull(b, &used, 0);
      if (used != b.size()) throw std::invalid_argument(b);
    } catch (const std::exception&) {
      throw InputError(fmt::format("diagnose: elementwise case '{}': FIRST and COUNT must be integers (decimal or 0x hex)", n));
    }
    const std::uint64_t all = std::uint64_t{1} << t.in->container_bits;
    if (count == 0 || first >= all || count > all - first)
      throw InputError(fmt::format("diagnose: elementwise case '{}': codes outside {} (0 ... {:#x})", n, t.in->tag, all - 1));
    if (count > (std::uint64_t{1} << 26)) throw InputError(fmt::format("diagnose: elementwise case '{}': at most 2^26 codes", n));
    EltwiseDiagnoseCase d;
    d.label = n;
    for (std::uint64_t x = first; x < first + count; ++x) d.codes.push_back(static_cast<std::uint32_t>(x));
    out.push_back(std::move(d));
  }
  return out;
}


DiagnosisRecord diagnose_eltwise_kernel(ElementwiseKernel& k, const std::vector<std::string>& names, int top) {
  const EltwiseTraits& t = k.eltwise_traits();
  std::vector<EltwiseDiagnoseCase> cases = eltwise_diagnose_cases(t, names);
  for (EltwiseDiagnoseCase& c : cases) c.got = eltwise_run_codes(k, c.codes, c.codes2.empty() ? nullptr : &c.codes2);
  // The other implementations: same function and formats, not k, not its base (k = base~change), not their mutants.
  const std::string base = k.name().substr(0, k.name().find('~'));
  std::vector<EltwiseOtherKernel> others;
  std::vector<std::pair<std::string, std::vector<std::string>>> skipped;  // why, which kernels
  for (const KernelInfo& info : kernel_registry()) {
    if (info.operation != Operation::Elementwise || info.name == k.name() || info.name == base || info.name.find('~') != std::string::npos)
      continue;
    std::unique_ptr<ElementwiseKernel> o = make_eltwise_kernel(info.name);
    if (!o) continue;
    const EltwiseTraits& u = o->eltwise_traits();
    if (u.fn != t.fn || u.in->tag != t.in->tag || u.out->tag != t.out->tag) continue;
    EltwiseOtherKernel ok;
    ok.name = info.name;
    // The same implementation built with DAZ and FTZ (a pair of changes): on the H200, -use_fast_math's expf is __expf
    // with subnormal inputs read as zero and subnormal results flushed, which neither hypothesis alone reproduces.
    const bool flushable = has_f32_subnormals(*t.in) && !(u.daz && u.ftz);
    EltwiseOtherKernel fz;
    fz.name = info.name + "+daz+ftz";
    fz.what = fmt::format("computes what {} computes, with subnormal inputs read as zero and subnormal results flushed (a "
                          "fast-math build of it)", info.name);
    fz.changes = 3;
    try {
      for (const EltwiseDiagnoseCase& c : cases) ok.results.push_back(eltwise_run_codes(*o, c.codes, c.codes2.empty() ? nullptr : &c.codes2));
      if (flushable)
        for (const EltwiseDiagnoseCase& c : cases) {
          std::vector<std::uint32_t> x = c.codes, x2 = c.codes2;
          for (std::uint32_t& v : x) v = eltwise_flush(*t.in, v);
          for (std::uint32_t& v : x2) v = eltwise_flush(*t.in, v);
          std::vector<std::uint32_t> y = eltwise_run_codes(*o, x, x2.empty() ? nullptr : &x2);
          for (std::uint32_t& v : y) v = eltwise_flush(*t.out, v);
          fz.results.push_back(std::move(y));
        }
    } catch (const std::exception& e) {
      std::string why = e.what();
      if (why.rfind(info.name + ": ", 0) == 0) why = why.substr(info.name.size() + 2);
      const auto it = std::find_if(skipped.begin(), skipped.end(), [&](const auto& s) { return s.first == why; });
      if (it == skipped.end()) skipped.push_back({why, {info.name}});
      else it->second.push_back(info.name);
      continue;
    }
    others.push_back(std::move(ok));
    if (flushable) others.push_back(std::move(fz));
  }
  DiagnosisRecord r = diagnose_eltwise(k.name(), t, cases, others, top);
  for (const auto& [why, names] : skipped)
    r.notes.push_back(fmt::format("not hypotheses (they did not run here: {}): {}", why, fmt::join(names, ", ")));
  return r;
}

}  // namespace fpcert

// ---- the identification measure: known changes injected around a kernel ----

namespace fpcert {
namespace {

/// f(x) in double by libm: the direction of the inner kernel's rounding (independent of fpcert's oracle).
bool libm_double(math::Fn f, double x, double& v) {
  switch (f) {
    case math::Fn::Exp: v = std::exp(x); return true;
    case math::Fn::Exp2: v = std::exp2(x); return true;
    case math::Fn::Exp10: v = std::pow(10.0, x); return true;
    case math::Fn::Log: v = std::log(x); return true;
    case math::Fn::Log2: v = std::log2(x); return true;
    case math::Fn::Log10: v = std::log10(x); return true;
    case math::Fn::Sqrt: v = std::sqrt(x); return true;
    case math::Fn::Expm1: v = std::expm1(x); return true;
    case math::Fn::Log1p: v = std::log1p(x); return true;
    case math::Fn::Tanh: v = std::tanh(x); return true;
    case math::Fn::Sinh: v = std::sinh(x); return true;
    case math::Fn::Cosh: v = std::cosh(x); return true;
    case math::Fn::Cbrt: v = std::cbrt(x); return true;
    case math::Fn::Erf: v = std::erf(x); return true;
    case math::Fn::Erfc: v = std::erfc(x); return true;
    case math::Fn::Sin: v = std::sin(x); return true;
    case math::Fn::Cos: v = std::cos(x); return true;
    case math::Fn::Tan: v = std::tan(x); return true;
    default: return false;
  }
}

class ChangedEltwise final : public ElementwiseKernel {
 public:
  ChangedEltwise(std::unique_ptr<ElementwiseKernel> inner, EltwiseChange c)
      : inner_(std::move(inner)), c_(c), name_(inner_->name() + "~" + to_string(c)) {}
  const std::string& name() const override { return name_; }
  std::string description() const override { return inner_->description() + ", with " + to_string(c_); }
  Backend backend() const override { return inner_->backend(); }
  bool is_mutant() const override { return true; }
  const EltwiseTraits& eltwise_traits() const override { return inner_->eltwise_traits(); }

  void run(const EltwiseOperands& o) override {
    const EltwiseTraits& t = inner_->eltwise_traits();
    const Format& in = *t.in;
    const Format& out = *t.out;
    const int ib = container_bytes(in), ob = container_bytes(out);
    if (c_ == EltwiseChange::DazInputs) {  // the inputs below 2^-126 read as zeros of their sign
      std::vector<std::uint8_t> x(static_cast<std::size_t>(o.count * ib));
      for (std::int64_t i = 0; i < o.count; ++i) {
        std::uint64_t code = from_container(in, load_code(o.x, i, ib));
        if (std::fabs(to_double(in, code)) < 0x1p-126) code &= in.sign_mask();
        store_code(x.data(), i, ib, to_container(in, code));
      }
      EltwiseOperands p = o;
      p.x = x.data();
      return inner_->run(p);
    }
    inner_->run(o);
    const Rounder rn{Rounding::NearestEven, Saturation::Inf, NanPayload::Preserve};
    for (std::int64_t i = 0; i < o.count; ++i) {
      std::uint64_t y = from_container(out, load_code(o.y, i, ob));
      const FpClass cls = classify(out, y);
      const std::uint64_t sign = y & out.sign_mask(), mag = y & ~out.sign_mask();
      switch (c_) {
        case EltwiseChange::FtzResults:
          if (cls == FpClass::Subnormal) y = sign;
          break;
        case EltwiseChange::LastBitCleared:
          if (cls == FpClass::Normal || cls == FpClass::Subnormal) y &= ~std::uint64_t{1};
          break;
        case EltwiseChange::Round8Bits:  // the kernel's own result rounded to bf16's 8 bits, then back into the output
          if (cls != FpClass::NaN) y = convert(bf16, convert(out, y, bf16, rn).code, out, rn).code;
          break;
        default: {  // a directed rounding made from the kernel's nearest result and the direction of f(x) in double
          const double x = to_double(in, from_container(in, load_code(o.x, i, ib)));
          double v = 0;
          if (cls == FpClass::NaN || !libm_double(t.fn, x, v) || std::isnan(v)) break;
          // Beyond double's range (exp of a large f32): the exact value is finite and nonzero, past every output's range.
          if (std::isinf(v) && std::isfinite(x) && x != 0) v = std::copysign(std::numeric_limits<double>::max(), v);
          if (v == 0 && std::isfinite(x) && (math::is_exp(t.fn) || t.fn == math::Fn::Erfc)) v = std::numeric_limits<double>::denorm_min();
          const double yv = to_double(out, y);
          // Within double's rounding of the result (e^x for |x| < 2^-53 is 1 in double): the exact value is not yv for a
          // non-integer x (e^x, 2^x, 10^x are transcendental there; cos x < 1 < cosh x; erfc x = 1 - 2x/sqrt(pi) ...).
          if (v == yv && std::isfinite(x) && x != std::nearbyint(x)) {
            const double inf = std::numeric_limits<double>::infinity();
            if (math::is_exp(t.fn)) v = std::nextafter(v, x > 0 ? inf : -inf);
            else if (t.fn == math::Fn::Cos) v = std::nextafter(v, -inf);
            else if (t.fn == math::Fn::Cosh) v = std::nextafter(v, inf);
            else if (t.fn == math::Fn::Erfc) v = std::nextafter(v, x > 0 ? -inf : inf);
          }
          const auto up = [&] { y = sign && mag > 0 ? sign | (mag - 1) : mag < out.inf_code() ? mag + 1 : y; };
          const auto down = [&] { y = !sign && mag > 0 ? mag - 1 : mag < out.inf_code() ? out.sign_mask() | (mag + 1) : y; };
          if (c_ == EltwiseChange::TowardZero && std::fabs(yv) > std::fabs(v)) y = sign | (mag - 1);
          if (c_ == EltwiseChange::Up && yv < v) up();
          if (c_ == EltwiseChange::Down && yv > v) down();
          break;
        }
      }
      store_code(o.y, i, ob, to_container(out, y));
    }
  }

 private:
  std::unique_ptr<ElementwiseKernel> inner_;
  EltwiseChange c_;
  std::string name_;
};

}  // namespace

std::string to_string(EltwiseChange c) {
  switch (c) {
    case EltwiseChange::FtzResults: return "ftz_results";
    case EltwiseChange::DazInputs: return "daz_inputs";
    case EltwiseChange::TowardZero: return "round_rz";
    case EltwiseChange::Up: return "round_ru";
    case EltwiseChange::Down: return "round_rd";
    case EltwiseChange::LastBitCleared: return "last_bit_cleared";
    case EltwiseChange::Round8Bits: return "round_8_bits";
  }
  return "?";
}

std::string eltwise_change_named(EltwiseChange c) {
  switch (c) {
    case EltwiseChange::FtzResults: return "ftz";
    case EltwiseChange::DazInputs: return "daz";
    case EltwiseChange::TowardZero: return fmt::format("round={}", to_string(Rounding::TowardZero));
    case EltwiseChange::Up: return fmt::format("round={}", to_string(Rounding::Up));
    case EltwiseChange::Down: return fmt::format("round={}", to_string(Rounding::Down));
    case EltwiseChange::LastBitCleared: return "last_bit_cleared";
    case EltwiseChange::Round8Bits: return "bits=8";
  }
  return "?";
}

std::unique_ptr<ElementwiseKernel> make_eltwise_change(std::unique_ptr<ElementwiseKernel> inner, EltwiseChange c) {
  if (!inner) throw InputError("make_eltwise_change: no kernel");
  const EltwiseTraits& t = inner->eltwise_traits();
  const std::string why = inner->memory() != MemorySpace::Host               ? "a device kernel (the wrapper changes host buffers)"
                          : math::arity(t.fn) == 2                            ? "a binary function"
                          : c == EltwiseChange::FtzResults && t.ftz           ? "FTZ is declared"
                          : c == EltwiseChange::DazInputs && (t.daz || !has_f32_subnormals(*t.in)) ? "no input below 2^-126 (or DAZ declared)"
                          // From a 16-bit result the wrapper would round 11 bits to 8 (a double rounding: one result in
                          // about 16 lands on a tie of the 8-bit grid), not f(x) to 8 bits: f32 outputs only.
                          : c == EltwiseChange::Round8Bits && t.out->frac_bits != f32.frac_bits      ? "not an f32 output"
                          : (c == EltwiseChange::TowardZero || c == EltwiseChange::Up || c == EltwiseChange::Down) && [&] {
                              double v = 0;
                              return !libm_double(t.fn, 1.0, v);
                            }() ? "no double libm function for the direction"
                                : "";
  if (!why.empty()) throw InputError(fmt::format("{} cannot get {}: {}", inner->name(), to_string(c), why));
  return std::make_unique<ChangedEltwise>(std::move(inner), c);
}

std::vector<EltwiseIdentificationRow> measure_eltwise_identification(const std::vector<std::string>& kernels,
                                                                     const std::vector<EltwiseChange>& changes) {
  std::vector<EltwiseIdentificationRow> rows;
  for (const std::string& name : kernels) {
    for (const EltwiseChange c : changes) {
      std::unique_ptr<ElementwiseKernel> k = make_eltwise_kernel(name);
      if (!k) throw InputError("unknown elementwise kernel '" + name + "'");
      try {
        k = make_eltwise_change(std::move(k), c);
      } catch (const InputError&) {
        continue;  // not applicable to this kernel
      }
      EltwiseIdentificationRow row;
      row.kernel = name;
      row.change = to_string(c);
      row.named = eltwise_change_named(c);
      const DiagnosisRecord d = diagnose_eltwise_kernel(*k, {}, 40);
      bool changed = false;  // dormant: the wrapped kernel's results are the plain kernel's on every input
      std::unique_ptr<ElementwiseKernel> plain = make_eltwise_kernel(name);
      for (const EltwiseDiagnoseCase& dc : eltwise_diagnose_cases(plain->eltwise_traits(), {}))
        changed = changed || eltwise_run_codes(*plain, dc.codes) != eltwise_run_codes(*k, dc.codes);
      row.seconds = d.seconds;
      row.kind = d.kind;
      if (!d.ranked.empty()) {
        const DiagnosisHypothesis& top = d.ranked.front();
        row.top = top.id;
        row.top_fraction = top.fraction();
        row.dormant = !changed;
        row.identified = d.kind == "consistent" &&
                         (top.id == row.named || std::find(top.same_as.begin(), top.same_as.end(), row.named) != top.same_as.end());
      }
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

}  // namespace fpcert
