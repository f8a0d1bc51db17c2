// suites/diagnose/diagnose_conversion.cpp — see diagnose_conversion.hpp.
#include "suites/diagnose/diagnose_conversion.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>

#include "base/codes.hpp"
#include "base/error.hpp"
#include "base/philox.hpp"
#include "oracle/round.hpp"
#include "oracle/ulp.hpp"
#include "suites/ops/conversion/conversion_faults.hpp"
#include "suites/ops/conversion/conversion_suite.hpp"
#include "suites/ops/conversion/convert_runner.hpp"
#include "suites/ops/conversion/device_sweep.hpp"
#include "suites/ops/conversion/fault_classes.hpp"

namespace fpcert {
namespace {

/// The declared conversion with (at most) one change.
struct ConvHypothesis {
  std::string id = "declared";
  std::string what = "the declared conversion";
  Rounder r;
  bool daz = false;  ///< subnormal source codes read as a zero of their sign
  bool ftz = false;  ///< subnormal results written as a zero of their sign
  bool zero_plus = false;       ///< every zero result written as +0 (the sign of zero lost)
  bool quiet_from_src = false;  ///< a NaN result's quiet bit is the source's (a signaling NaN not quieted)
};

/// The quiet bit of an IEEE format's NaN (the top fraction bit).
std::uint64_t quiet_bit(const Format& f) { return std::uint64_t{1} << (f.frac_bits - 1); }

std::string_view rounding_words(Rounding r) {
  switch (r) {
    case Rounding::NearestEven: return "to nearest, ties to even";
    case Rounding::NearestAway: return "to nearest, ties away from zero";
    case Rounding::TowardZero: return "toward zero (truncation)";
    case Rounding::Up: return "toward +Inf";
    case Rounding::Down: return "toward -Inf";
    case Rounding::Stochastic: return "stochastically";
  }
  return "?";
}

std::string_view saturation_words(Saturation s) {
  switch (s) {
    case Saturation::Inf: return "to Inf";
    case Saturation::Finite: return "to the largest finite value (satfinite)";
    case Saturation::NaN: return "to NaN";
  }
  return "?";
}

/// Every single change that alters the declared conversion (rounding modes other than stochastic, the saturations and
/// NaN conventions the destination allows, FTZ where the destination has subnormals, DAZ where the source has).
std::vector<ConvHypothesis> conversion_hypotheses(const ConversionTraits& t) {
  const Format& src = *t.src;
  const Format& dst = *t.dst;
  std::vector<ConvHypothesis> hs;
  ConvHypothesis decl;
  decl.r = t.rounder;
  hs.push_back(decl);
  // One change: `set` applied to a copy of the declaration.
  const auto add = [&](std::string id, std::string what, const auto& set) {
    ConvHypothesis h = decl;
    set(h);
    h.id = std::move(id);
    h.what = std::move(what);
    hs.push_back(std::move(h));
  };
  for (const Rounding m : kAllRoundings)
    if (m != Rounding::Stochastic && m != t.rounder.rounding)
      add(fmt::format("round={}", to_string(m)), fmt::format("rounding {} instead of {}", rounding_words(m), rounding_words(t.rounder.rounding)),
          [m](ConvHypothesis& h) { h.r.rounding = m; });
  for (const Saturation x : kAllSaturations)
    if (x != t.rounder.saturation && saturation_valid(dst, x))
      add(fmt::format("sat={}", to_string(x)), fmt::format("overflow {} instead of {}", saturation_words(x), saturation_words(t.rounder.saturation)),
          [x](ConvHypothesis& h) { h.r.saturation = x; });
  for (const NanPayload n : kAllNanPayloads)
    if (n != t.rounder.nan && nan_payload_problem(dst, n).empty())
      add(fmt::format("nan={}", to_string(n)),
          fmt::format("NaN convention {} ({}) instead of {}", to_string(n), describe_nan_convention(dst, n), to_string(t.rounder.nan)),
          [n](ConvHypothesis& h) { h.r.nan = n; });
  if (dst.subnormals) add("ftz", "subnormal results flushed to zero (FTZ)", [](ConvHypothesis& h) { h.ftz = true; });
  if (src.subnormals) add("daz", "subnormal inputs read as zero (DAZ)", [](ConvHypothesis& h) { h.daz = true; });
  // Conversion faults of the kind kernels make (docs/mutation.md, "Conversion faults"): the sign of a zero result lost
  // (where the destination has a sign), a signaling NaN's quiet bit carried over instead of set (IEEE source and
  // destination, NaN payloads kept: with no payload bit left the result is Inf's code).
  if (dst.sign_bits) add("zero_sign_lost", "every zero result written as +0 (the sign of zero lost)", [](ConvHypothesis& h) { h.zero_plus = true; });
  if (src.has_inf() && dst.has_inf())
    add("nan_not_quieted", "a NaN result's quiet bit copied from the source (a signaling NaN not quieted)",
        [](ConvHypothesis& h) { h.quiet_from_src = true; });
  return hs;
}

std::uint64_t evaluate(const ConvHypothesis& h, const ConversionTraits& t, std::uint64_t code) {
  const Format& src = *t.src;
  const Format& dst = *t.dst;
  const std::uint32_t rbits = h.r.rounding == Rounding::Stochastic ? random_bits32(t.seed, code) : 0;
  if (h.daz && classify(src, code) == FpClass::Subnormal) code &= src.sign_mask();
  std::uint64_t res = convert(src, code, dst, h.r, rbits).code;
  if (h.ftz && classify(dst, res) == FpClass::Subnormal) res &= dst.sign_mask();
  if (h.quiet_from_src && classify(src, code) == FpClass::NaN && classify(dst, res) == FpClass::NaN)
    res = (res & ~quiet_bit(dst)) | ((code & quiet_bit(src)) ? quiet_bit(dst) : 0);
  if (h.zero_plus && classify(dst, res) == FpClass::Zero) res &= ~dst.sign_mask();
  return res;
}

/// Whether the kernel's result `got` is what hypothesis `h` gives (`want`): the same code, or under the NaN convention
/// "any" any NaN of the destination where `want` is one.
bool matches(const ConvHypothesis& h, const Format& dst, std::uint64_t want, std::uint64_t got) {
  if (want == got) return true;
  return h.r.nan == NanPayload::Any && dst.has_nan() && classify(dst, want) == FpClass::NaN && classify(dst, got) == FpClass::NaN;
}

/// Distance in ulps of the destination between two codes (infinity when either is not finite).
double code_ulps(const Format& dst, std::uint64_t x, std::uint64_t y) {
  const FpClass cx = classify(dst, x), cy = classify(dst, y);
  if (cx == FpClass::Inf || cx == FpClass::NaN || cy == FpClass::Inf || cy == FpClass::NaN)
    return std::numeric_limits<double>::infinity();
  return std::fabs(static_cast<double>(code_ordinal(dst, x) - code_ordinal(dst, y)));
}

}  // namespace

DiagnosisRecord diagnose_conversion(const std::string& kernel, const ConversionTraits& declared, const ConversionDiagnoseCase& c,
                                    int top, int unexplained) {
  if (c.codes.size() != c.got.size())
    throw InputError(fmt::format("diagnose {}: {} source codes but {} results", kernel, c.codes.size(), c.got.size()));
  if (c.codes.empty()) throw InputError(fmt::format("diagnose {}: the case {} has no source codes", kernel, c.label));
  const auto t0 = std::chrono::steady_clock::now();
  const Format& src = *declared.src;
  const Format& dst = *declared.dst;
  const std::vector<ConvHypothesis> hs = conversion_hypotheses(declared);
  const std::size_t nh = hs.size();
  std::vector<DiagnosisHypothesis> out(nh);
  // A digest of each hypothesis's results (FNV-1a over the codes) groups look-alikes: equal results on every code.
  std::vector<std::uint64_t> digest(nh, 14695981039346656037ULL);
  std::vector<std::size_t> first_unexplained;
  std::vector<std::uint64_t> want(nh);
  for (std::size_t i = 0; i < c.codes.size(); ++i) {
    bool any = false;
    for (std::size_t h = 0; h < nh; ++h) {
      want[h] = evaluate(hs[h], declared, c.codes[i]);
      // Under "any" a NaN stands for every NaN: its digest marks it apart, so it is a look-alike only of another "any".
      const bool any_nan = hs[h].r.nan == NanPayload::Any && classify(dst, want[h]) == FpClass::NaN;
      digest[h] = (digest[h] ^ (any_nan ? ~std::uint64_t{0} : want[h])) * 1099511628211ULL;
      if (matches(hs[h], dst, want[h], c.got[i])) {
        ++out[h].matched;
        any = true;
      } else {
        out[h].max_ulps = std::max(out[h].max_ulps, code_ulps(dst, want[h], c.got[i]));
      }
    }
    if (!any && first_unexplained.size() < static_cast<std::size_t>(std::max(unexplained, 0))) first_unexplained.push_back(i);
  }
  for (std::size_t h = 0; h < nh; ++h) {
    DiagnosisHypothesis& d = out[h];
    d.id = hs[h].id;
    d.what = hs[h].what;
    d.changes = h == 0 ? 0 : 1;
    d.elements = static_cast<std::int64_t>(c.codes.size());
    d.envelope_exceed = -1;  // a conversion promises its bits: no envelope
    for (std::size_t g = 0; g < nh; ++g)
      if (g != h && digest[g] == digest[h]) d.same_as.push_back(hs[g].id);
  }
  std::vector<std::size_t> order(nh);
  for (std::size_t h = 0; h < nh; ++h) order[h] = h;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    if (out[x].matched != out[y].matched) return out[x].matched > out[y].matched;
    if (out[x].changes != out[y].changes) return out[x].changes < out[y].changes;
    // equal otherwise, the hypothesis that gives the NaN bits before nan=any (any NaN for a NaN: less specific)
    const bool ax = hs[x].r.nan == NanPayload::Any, ay = hs[y].r.nan == NanPayload::Any;
    if (ax != ay) return ay;
    return out[x].max_ulps < out[y].max_ulps;
  });

  DiagnosisRecord r;
  r.kernel = kernel;
  r.declared = fmt::format("{} -> {}, rounding {}, saturation {}, NaN convention {}", src.tag, dst.tag, to_string(declared.rounder.rounding),
                           to_string(declared.rounder.saturation), to_string(declared.rounder.nan));
  r.cases = {c.label};
  r.tried = static_cast<std::int64_t>(nh);
  const DiagnosisHypothesis& best = out[order[0]];
  const std::size_t n = c.codes.size();
  const bool declared_top = order[0] == 0 || std::find(best.same_as.begin(), best.same_as.end(), "declared") != best.same_as.end();
  const std::string alike = best.same_as.empty() ? "" : fmt::format("; indistinguishable on these codes from {}", fmt::join(best.same_as, ", "));
  if (best.matched == best.elements && declared_top) {
    r.kind = "declared";
    r.verdict = fmt::format("consistent with the declared conversion: bit for bit on every result ({} of {} source codes)", n, n);
  } else if (best.matched == best.elements) {
    r.kind = "consistent";
    r.verdict = fmt::format("consistent with {} [{}]: bit for bit on every result ({} of {} source codes){}", best.what, best.id, n, n, alike);
  } else {
    r.kind = "logic_error";
    std::vector<std::string> codes;
    for (const std::size_t i : first_unexplained) codes.push_back(hex_code(src, c.codes[i]));
    r.verdict = fmt::format(
        "no known arithmetic explains it — a logic error; the closest is {} [{}], bit for bit on {:.1f} % of {} source codes; the first "
        "inputs no hypothesis explains are {}",
        best.what, best.id, 100.0 * best.fraction(), n, codes.empty() ? "(none: each code is explained by some hypothesis, no one by all)" : fmt::format("{}", fmt::join(codes, ", ")));
  }
  for (const std::size_t i : first_unexplained) {
    DiagnosisElement e;
    e.case_label = fmt::format("{} source {} -> got {}", c.label, hex_code(src, c.codes[i]), hex_code(dst, c.got[i]));
    e.i = static_cast<std::int64_t>(i);
    e.j = static_cast<std::int64_t>(c.codes[i]);
    e.got = to_double(dst, c.got[i]);
    e.ref = to_double(src, c.codes[i]);
    e.best = to_double(dst, evaluate(hs[order[0]], declared, c.codes[i]));
    r.unexplained.push_back(e);
  }
  for (int k = 0; k < top && k < static_cast<int>(nh); ++k) r.ranked.push_back(out[order[static_cast<std::size_t>(k)]]);
  r.notes.push_back("the hypotheses are the declared conversion's rounding mode, saturation, NaN convention, FTZ and DAZ, the sign of "
                    "zero lost and a signaling NaN not quieted, one change at a time (docs/diagnose.md, \"Conversions\")");
  if (declared.rounder.rounding == Rounding::Stochastic)
    r.notes.push_back(fmt::format("stochastic rounding: the declared conversion draws the bits of code c as random_bits32({}, c)", declared.seed));
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

std::vector<std::pair<std::uint64_t, std::uint64_t>> conversion_diagnose_ranges(const Format& src, const std::string& c) {
  const std::uint64_t all = src.total_bits() >= 64 ? 0 : std::uint64_t{1} << src.total_bits();
  if (c == "all" || c == "sample") {
    if (src.total_bits() > 32)
      throw InputError(fmt::format("diagnose: a {} source has too many codes for '{}'; give FIRST+COUNT", src.tag, c));
    return strided_sample_ranges(src);  // every code up to 2^24 of them, the strided sample beyond
  }
  const auto plus = c.find('+');
  if (plus == std::string::npos || plus == 0 || plus + 1 == c.size())
    throw InputError(fmt::format("diagnose: conversion case '{}': give all, sample, classes or FIRST+COUNT (source codes, e.g. 0x3c00+256)", c));
  std::uint64_t first = 0, count = 0;
  try {
    std::size_t used = 0;
    const std::string a = c.substr(0, plus), b = c.substr(plus + 1);
    first = std::stoull(a, &used, 0);
    if (used != a.size()) throw std::invalid_argument(a);
    count = std::stoull(b, &used, 0);
    if (used != b.size()) throw std::invalid_argument(b);
  } catch (const std::exception&) {
    throw InputError(fmt::format("diagnose: conversion case '{}': FIRST and COUNT must be integers (decimal or 0x hex)", c));
  }
  if (count == 0 || (all != 0 && (first >= all || count > all - first)))
    throw InputError(fmt::format("diagnose: conversion case '{}': codes outside {} (0 ... {:#x})", c, src.tag, all - 1));
  if (count > (std::uint64_t{1} << 26)) throw InputError(fmt::format("diagnose: conversion case '{}': at most 2^26 codes", c));
  return {{first, count}};
}

DiagnosisRecord diagnose_conversion_kernel(ConversionKernel& k, const std::string& c, int top) {
  if (k.memory() != MemorySpace::Host)
    throw InputError(fmt::format("diagnose {}: a device conversion kernel is not diagnosed yet (only kernels with host buffers: "
                                 "fpcert's models, host plugin kernels)", k.name()));
  const ConversionTraits& t = k.conversion();
  ConversionDiagnoseCase dc;
  dc.label = c == "all" && t.src->total_bits() > 24 ? "all (a 32-bit source: its strided sample)" : c;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
  if (c == "classes") {  // every class of a 32-bit source's codes (suites/ops/conversion/fault_classes.hpp)
    if (const std::string why = conversion_classes_problem(t); !why.empty())
      throw InputError(fmt::format("diagnose {}: no 'classes' case for this conversion: {}", k.name(), why));
    const ConversionClassCodes cc = conversion_all_class_codes(t);
    ranges = cc.ranges;
    dc.label = fmt::format("classes ({} codes: a representative of every class of {} codes, and {} random codes)", cc.class_codes,
                           t.src->tag, cc.sample_codes);
  } else {
    ranges = conversion_diagnose_ranges(*t.src, c);
  }
  const int sb = container_bytes(*t.src), db = container_bytes(*t.dst);
  for (const auto& [first, count] : ranges) {
    constexpr std::uint64_t kChunk = std::uint64_t{1} << 20;
    for (std::uint64_t at = first; at < first + count; at += kChunk) {
      const std::uint64_t m = std::min(kChunk, first + count - at);
      std::vector<std::uint64_t> in(m), res(m, 0);  // 8-byte slots hold every container
      for (std::uint64_t i = 0; i < m; ++i) store_code(in.data(), static_cast<std::int64_t>(i), sb, to_container(*t.src, at + i));
      ConvertOperands ops;
      ops.first = at;
      ops.count = static_cast<std::int64_t>(m);
      ops.src = in.data();
      ops.dst = res.data();
      try {
        k.run(ops);
      } catch (const NotSupportedError& e) {
        throw InputError(fmt::format("diagnose {}: the kernel declines codes {:#x}+{}: {}", k.name(), at, m, e.what()));
      }
      for (std::uint64_t i = 0; i < m; ++i) {
        dc.codes.push_back(at + i);
        dc.got.push_back(from_container(*t.dst, load_code(res.data(), static_cast<std::int64_t>(i), db)));
      }
    }
  }
  return diagnose_conversion(k.name(), t, dc, top);
}

std::vector<ConversionFaultRow> measure_conversion_faults(const std::vector<std::string>& kernels) {
  std::vector<ConversionFaultRow> rows;
  const std::unique_ptr<DeviceApi> host = make_host_api();
  for (const std::string& name : kernels) {
    const auto probe = make_conversion_kernel(name);
    if (!probe) throw InputError("unknown conversion kernel '" + name + "'");
    for (const ConversionFaultInfo& f : conversion_fault_catalogue()) {
      if (!conversion_fault_not_applicable(f.fault, probe->conversion()).empty()) continue;
      ConversionFaultRow row;
      row.kernel = name;
      row.fault = f.id;
      row.named = conversion_fault_named(f.fault, probe->conversion());
      const auto mutant = make_conversion_fault_injector(make_conversion_kernel(name), f.fault);
      ConversionCase c = conversion_suite_case(*mutant, SuiteRunOptions{});
      // A 32-bit source: the classes the fault touches, and the diagnosis on every class (fault_classes.hpp).
      const bool by_class = !c.ranges.empty() && conversion_classes_problem(probe->conversion()).empty();
      if (by_class) {
        c.ranges = conversion_fault_class_codes(f.fault, probe->conversion()).ranges;
        c.mpfr_every = 0;
      }
      row.killed = run_conversion_case(*mutant, c, *host, ConversionRunOptions{}).status == CaseStatus::Fail;
      const DiagnosisRecord d = diagnose_conversion_kernel(*mutant, by_class ? "classes" : "all", 40);
      if (!d.ranked.empty()) {
        const DiagnosisHypothesis& top = d.ranked.front();
        row.top = top.id;
        row.dormant = d.kind == "declared";
        row.identified = d.kind == "consistent" &&
                         (top.id == row.named || std::find(top.same_as.begin(), top.same_as.end(), row.named) != top.same_as.end());
      }
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

}  // namespace fpcert
