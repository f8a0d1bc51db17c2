// generators/generate.cpp — the family registry, generate(), and what every problem measures.
#include "generators/generate.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>
#include <mutex>
#include <sstream>
#include <stdexcept>

#include "base/error.hpp"
#include "base/parallel.hpp"
#include "generators/family.hpp"
#include "oracle/gemm_ref.hpp"

namespace fpcert {
namespace detail {

ParamInfo p_int(const std::string& name, std::int64_t dflt, std::int64_t lo, std::int64_t hi, const std::string& help) {
  ParamInfo p;
  p.name = name;
  p.type = ParamType::Int;
  p.default_value = std::to_string(dflt);
  p.lo = static_cast<double>(lo);
  p.hi = static_cast<double>(hi);
  p.help = help;
  return p;
}

ParamInfo p_real(const std::string& name, double dflt, double lo, double hi, const std::string& help) {
  ParamInfo p;
  p.name = name;
  p.type = ParamType::Real;
  p.default_value = canonical_real(dflt);
  p.lo = lo;
  p.hi = hi;
  p.help = help;
  return p;
}

ParamInfo p_choice(const std::string& name, const std::string& dflt, std::vector<std::string> choices, const std::string& help) {
  ParamInfo p;
  p.name = name;
  p.type = ParamType::Choice;
  p.default_value = dflt;
  p.choices = std::move(choices);
  p.help = help;
  return p;
}

ParamInfo p_format(const std::string& name, const std::string& dflt, std::vector<std::string> choices, const std::string& help) {
  ParamInfo p = p_choice(name, dflt, std::move(choices), help);
  p.type = ParamType::Format;
  return p;
}

ParamInfo p_seed() {
  ParamInfo p;
  p.name = "seed";
  p.type = ParamType::Seed;
  p.default_value = "1";
  p.help = "Philox key: the same seed gives the same bits on every machine";
  return p;
}

std::vector<ParamInfo> p_shape(std::int64_t m, std::int64_t n, std::int64_t k) {
  return {p_int("m", m, 1, kMaxDim, "rows of A and C"), p_int("n", n, 1, kMaxDim, "columns of B and C"),
          p_int("k", k, 1, kMaxDim, "inner dimension: columns of A, rows of B")};
}

ParamInfo p_source(const std::string& dflt) {
  return p_format("source", dflt, {"f32", "f64", "f16", "bf16", "tf32", "e4m3", "e5m2"},
                  "format every input value is exactly representable in (bf16/f16/e4m3/e5m2: written as uint16 bits; "
                  "tf32: as float32 values)");
}

void set_gemm_shape(const ParsedSpec& ps, Problem& p) {
  p.m = ps.integer("m");
  p.n = ps.integer("n");
  p.k = ps.integer("k");
  if (p.m * p.k > kMaxElements || p.k * p.n > kMaxElements)
    ps.fail("A (m x k = " + std::to_string(p.m * p.k) + " entries) or B (k x n = " + std::to_string(p.k * p.n) +
            ") exceeds the limit of " + std::to_string(kMaxElements) + " entries per operand");
  p.a = Matrix(p.m, p.k);
  p.b = Matrix(p.k, p.n);
  p.dot = false;
}

void set_dot_shape(const ParsedSpec&, Problem& p, std::int64_t n) {
  p.m = 1;
  p.n = 1;
  p.k = n;
  p.a = Matrix(1, n);
  p.b = Matrix(n, 1);
  p.dot = true;
}

double to_source(const Format& src, double x) {
  return to_double(src, round_double(src, x, Rounder{Rounding::NearestEven, Saturation::Finite, NanPayload::Preserve}).code);
}

void fill(Matrix& m, const GenContext& ctx, const std::function<double(std::uint64_t)>& fn) {
  const auto n = static_cast<std::uint64_t>(m.data.size());
  double* d = m.data.data();
  parallel_for(n, 4096, [&](std::uint64_t b, std::uint64_t e, unsigned) {
    for (std::uint64_t i = b; i < e; ++i) d[i] = fn(i);
  }, ctx.threads);
}

void fill_source(Matrix& m, const Format& src, const GenContext& ctx, const std::function<double(std::uint64_t)>& fn) {
  fill(m, ctx, [&](std::uint64_t i) { return to_source(src, fn(i)); });
}

int exponent_of(double x) { return std::ilogb(x); }


}  // namespace detail

namespace {

using detail::Family;

const std::vector<Family>& registry() {
  static const std::vector<Family> r = [] {
    std::vector<Family> all;
    for (auto* f : {&detail::distribution_families, &detail::exponent_families, &detail::edge_families,
                    &detail::cancel_families, &detail::spectral_families, &detail::probe_families,
                    &detail::pattern_families, &detail::special_families, &detail::order_free_families,
                    &detail::reduce_families, &detail::softmax_families, &detail::norm_families,
                    &detail::attention_families, &detail::softmax_bwd_families,
                    &detail::norm_bwd_families, &detail::attention_bwd_families}) {
      auto v = (*f)();
      for (auto& x : v) all.push_back(std::move(x));
    }
    return all;
  }();
  return r;
}

const std::vector<GeneratorInfo>& infos() {
  static const std::vector<GeneratorInfo> v = [] {
    std::vector<GeneratorInfo> r;
    for (const auto& f : registry()) r.push_back(f.info);
    return r;
  }();
  return v;
}

/// Largest / smallest nonzero magnitude, exponent range and span, zero fraction of one operand.
void operand_stats(const Matrix& x, const std::string& suf, std::map<std::string, double>& out) {
  double mx = 0, mn = INFINITY;
  int emin = 1 << 20, emax = -(1 << 20);
  std::int64_t zeros = 0;
  for (double v : x.data) {
    const double a = std::fabs(v);
    if (!std::isfinite(a)) continue;  // Inf and NaN (the `specials` family): counted by the family itself
    if (a == 0) {
      ++zeros;
      continue;
    }
    mx = std::max(mx, a);
    mn = std::min(mn, a);
    const int e = detail::exponent_of(a);
    emin = std::min(emin, e);
    emax = std::max(emax, e);
  }
  out["max_abs" + suf] = mx;
  out["zero_fraction" + suf] = x.data.empty() ? 0.0 : static_cast<double>(zeros) / static_cast<double>(x.data.size());
  if (mx > 0) {
    out["min_abs" + suf] = mn;
    out["exp_min" + suf] = emin;
    out["exp_max" + suf] = emax;
    out["exp_span" + suf] = emax - emin;
  }
}

void measure_not_representable(Problem& p, const detail::GenContext& ctx) {
  const auto fmts = narrower_formats(*p.source);
  const std::uint64_t na = p.a.data.size(), total = na + p.b.data.size();
  std::vector<std::uint64_t> counts(fmts.size(), 0);
  std::mutex mu;
  parallel_for(total, 1 << 16, [&](std::uint64_t b, std::uint64_t e, unsigned) {
    std::vector<std::uint64_t> local(fmts.size(), 0);
    for (std::uint64_t i = b; i < e; ++i) {
      const double v = i < na ? p.a.data[i] : p.b.data[i - na];
      for (std::size_t f = 0; f < fmts.size(); ++f) local[f] += !exactly_representable(*fmts[f], v);
    }
    std::lock_guard<std::mutex> lock(mu);
    for (std::size_t f = 0; f < fmts.size(); ++f) counts[f] += local[f];  // integer sums: order-free
  }, ctx.threads);
  for (std::size_t f = 0; f < fmts.size(); ++f)
    p.not_representable[std::string(fmts[f]->tag)] = total ? static_cast<double>(counts[f]) / static_cast<double>(total) : 0.0;
}

/// kappa_ij = sum |a_ik b_kj| / |c_ij| with the exact oracle: min, median (lower middle), max.
void measure_kappa(Problem& p, const detail::GenContext& ctx) {
  GemmRefOptions o;
  o.threads = ctx.threads;
  const GemmRef r = gemm_reference(p.a.view(), p.b.view(), o);
  std::vector<double> kap;
  std::int64_t zeros = 0;
  for (std::size_t i = 0; i < r.c.size(); ++i) {
    if (r.status[i] & (kRefNonFinite | kRefOverflow)) continue;
    if (r.c[i].hi == 0) {
      ++zeros;
      continue;
    }
    kap.push_back(r.abs_sum[i] / std::fabs(r.c[i].hi));
  }
  p.achieved["c_zero_fraction"] = r.c.empty() ? 0.0 : static_cast<double>(zeros) / static_cast<double>(r.c.size());
  if (kap.empty()) return;
  std::sort(kap.begin(), kap.end());
  p.achieved["kappa_min"] = kap.front();
  p.achieved["kappa_median"] = kap[(kap.size() - 1) / 2];
  p.achieved["kappa_max"] = kap.back();
}

std::string type_text(const ParamInfo& p) { return to_string(p.type); }

std::string allowed_text(const ParamInfo& p) {
  switch (p.type) {
    case ParamType::Int:
      return "[" + std::to_string(static_cast<std::int64_t>(p.lo)) + ", " + std::to_string(static_cast<std::int64_t>(p.hi)) + "]";
    case ParamType::Real: return "[" + canonical_real(p.lo) + ", " + canonical_real(p.hi) + "]";
    case ParamType::Seed: return "[0, 2^64-1]";
    case ParamType::Choice:
    case ParamType::Format: {
      std::string s;
      for (const auto& c : p.choices) s += (s.empty() ? "" : "|") + c;
      return s;
    }
  }
  return "";
}

}  // namespace

std::vector<const Format*> narrower_formats(const Format& source) {
  std::vector<const Format*> r;
  for (const Format* f : all_formats())
    if (*f != source && *f != f64 && *f != ue8m0) r.push_back(f);
  return r;
}

const std::vector<GeneratorInfo>& list_generators() { return infos(); }

ParsedSpec parse_generator_spec(const std::string& spec) { return parse_spec(spec, infos()); }

std::string canonical_spec(const std::string& spec) { return parse_generator_spec(spec).canonical; }

Problem generate(const std::string& spec, const GenerateOptions& opt) {
  const ParsedSpec ps = parse_generator_spec(spec);
  const Family* fam = nullptr;
  for (const auto& f : registry())
    if (f.info.name == ps.family()) fam = &f;
  Problem p;
  p.spec = ps.canonical;
  p.family = ps.family();
  p.seed = ps.seed();
  p.source = &ps.format("source");
  detail::GenContext ctx;
  ctx.threads = opt.threads;
  fam->make(ps, p, ctx);

  // Every value must be exactly representable in the source format (the families guarantee it;
  // this check turns a broken guarantee into an error rather than a silently wrong test). Inf and NaN
  // only from a family that plants them (`specials`).
  for (const Matrix* x : {&p.a, &p.b})
    for (double v : x->data) {
      if (fam->non_finite && !std::isfinite(v)) continue;
      if (!exactly_representable(*p.source, v))
        throw std::logic_error("generator '" + p.family + "' produced a value not exactly representable in " +
                               std::string(p.source->tag) + " (spec " + p.spec + ")");
    }

  operand_stats(p.a, "_a", p.achieved);
  operand_stats(p.b, "_b", p.achieved);
  measure_not_representable(p, ctx);
  const auto products = static_cast<std::uint64_t>(p.m) * static_cast<std::uint64_t>(p.n) * static_cast<std::uint64_t>(p.k);
  // A softmax or attention problem's B is its mask (generators/softmax.hpp, attention.hpp): A B has no meaning to measure.
  if (!p.achieved.count("kappa_max") && !p.achieved.count("softmax_rows") && !p.achieved.count("norm_rows") &&
      !p.achieved.count("attention_len_q") && !p.achieved.count("softmax_bwd_rows") && products <= opt.kappa_products) measure_kappa(p, ctx);
  return p;
}

std::string generator_list_text() {
  std::ostringstream o;
  o << "Generators (fpcert gen SPEC -o DIR; SPEC = family:key=value,...; docs/generators.md)\n";
  for (const auto& g : infos()) {
    o << "\n" << g.name << (g.dot ? "  [dot product: writes x.npy, y.npy]" : "") << "\n";
    o << "  " << g.summary << "\n";
    if (!g.details.empty()) o << "  " << g.details << "\n";
    if (!g.reference.empty()) o << "  Source: " << g.reference << "\n";
    std::size_t w = 0;
    for (const auto& p : g.params) w = std::max(w, p.name.size());
    for (const auto& p : g.params) {
      o << "    " << p.name << std::string(w - p.name.size() + 2, ' ') << type_text(p) << std::string(8 - type_text(p).size(), ' ')
        << "default " << p.default_value << "  " << allowed_text(p) << "\n"
        << "    " << std::string(w + 2, ' ') << p.help << "\n";
    }
  }
  return o.str();
}

std::uint64_t fnv1a64(const void* data, std::size_t size, std::uint64_t h) {
  const auto* b = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < size; ++i) {
    h ^= b[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}

std::uint64_t problem_hash(const Problem& p) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  auto put64 = [&](std::uint64_t v) {
    unsigned char le[8];
    for (int i = 0; i < 8; ++i) le[i] = static_cast<unsigned char>(v >> (8 * i));
    h = fnv1a64(le, 8, h);
  };
  put64(static_cast<std::uint64_t>(p.m));
  put64(static_cast<std::uint64_t>(p.n));
  put64(static_cast<std::uint64_t>(p.k));
  for (const Matrix* x : {&p.a, &p.b})
    for (double v : x->data) put64(std::bit_cast<std::uint64_t>(v));
  return h;
}

}  // namespace fpcert
