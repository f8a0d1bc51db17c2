// suites/diagnose/hypotheses.cpp — the catalogue of hypotheses and their bit-for-bit evaluation (hypotheses.hpp).
#include "suites/diagnose/hypotheses.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <memory>

#include "base/codes.hpp"
#include "oracle/ulp.hpp"
#include "suites/audit/audit_kernels.hpp"
#include "suites/ops/gemm/fault_injectors.hpp"
#include "suites/verdict/emulate/emulate.hpp"

namespace fpcert {
namespace {

/// fp32's exponent range with `frac` fraction bits: an accumulator that keeps fewer bits than fp32 (the tag says how
/// many, "f32p19" keeps 19). Kept for the process's life: formats are compared and named by their tags.
const Format& narrow_f32(int frac) {
  static std::deque<std::pair<std::string, Format>> made;
  const std::string tag = fmt::format("f32p{}", frac);
  for (const auto& [t, f] : made)
    if (t == tag) return f;
  auto& e = made.emplace_back(tag, f32);
  e.second.tag = e.first;
  e.second.name = e.first;
  e.second.frac_bits = frac;
  return e.second;
}

std::string_view rounding_tag(Rounding r) {
  switch (r) {
    case Rounding::NearestEven: return "rn";
    case Rounding::NearestAway: return "rna";
    case Rounding::TowardZero: return "rz";
    default: return "other";
  }
}

const Format& seen(const Format& input, const Format& operand) { return narrower_format(operand, input) ? operand : input; }

}  // namespace

Hypothesis declared_hypothesis(const KernelTraits& declared, std::string* note) {
  Hypothesis h;
  h.traits = declared;
  h.traits.determinism = Determinism::Deterministic;
  if (!declared.sum_order.known() || declared.sum_order.outer == Combine::Atomic) {
    h.traits.sum_order = declared.sum_order.kind == OrderKind::SplitK ? SummationOrder::split_k(std::max(2, declared.sum_order.splits))
                                                                        : SummationOrder::sequential(StepKind::Fma);
    if (note)
      *note = fmt::format("the declared order ({}) has no fixed member: the hypotheses compute {} (each order change is its own "
                          "hypothesis)",
                          order_spec(declared.sum_order), order_spec(h.traits.sum_order));
  }
  return h;
}

std::vector<Change> single_changes(const KernelTraits& t, std::int64_t k) {
  std::vector<Change> c;
  const Format& sa = seen(*t.a_input, *t.a_operand);
  // Operands: the inputs narrowed before the multiplier (TF32 tensor cores, a bf16 cast), or not narrowed at all.
  for (const Format* f : {&tf32, &bf16, &f16})
    if (narrower_format(*f, sa) && f->precision() < sa.precision())
      for (Rounding r : *f == tf32 ? std::vector<Rounding>{Rounding::NearestEven, Rounding::NearestAway, Rounding::TowardZero}
                                    : std::vector<Rounding>{Rounding::NearestEven, Rounding::TowardZero})
        c.push_back({fmt::format("operands={}/{}", f->tag, rounding_tag(r)),
                     fmt::format("inputs rounded to {} ({}) before the products", f->tag, rounding_tag(r)), ChangeClass::Operands, false,
                     [f, r](Hypothesis& h) {
                       h.traits.a_operand = h.traits.b_operand = f;
                       h.traits.input_rounding = r;
                     }});
  if (narrower_format(*t.a_operand, *t.a_input) || narrower_format(*t.b_operand, *t.b_input))
    c.push_back({"operands=inputs", "the inputs multiplied as given (not narrowed)", ChangeClass::Operands, true, [](Hypothesis& h) {
                   h.traits.a_operand = h.traits.a_input;
                   h.traits.b_operand = h.traits.b_input;
                 }});
  // Products: rounded into a format before they are added (step mul_add), or exact (fma).
  const bool fma = t.exact_products && t.sum_order.step == StepKind::Fma;
  if (fma && (t.sum_order.kind == OrderKind::Sequential || !t.sum_order.known()))
    c.push_back({fmt::format("products={}", t.acc->tag), fmt::format("products rounded to {} before the addition (mul_add)", t.acc->tag),
                 ChangeClass::Products, false, [](Hypothesis& h) { h.traits.sum_order.step = StepKind::MulAdd; }});
  for (const Format* f : {&f16, &bf16})
    if (!(t.product_format && *t.product_format == *f) && narrower_format(*f, *t.acc))
      c.push_back({fmt::format("products={}", f->tag), fmt::format("products rounded to {}", f->tag), ChangeClass::Products, false,
                   [f](Hypothesis& h) {
                     h.traits.exact_products = false;
                     h.traits.product_format = f;
                     h.traits.sum_order.step = StepKind::MulAdd;
                   }});
  if (!t.exact_products || t.sum_order.step == StepKind::MulAdd)
    c.push_back({"products=exact", "exact products, one rounding per step (fma)", ChangeClass::Products, true, [](Hypothesis& h) {
                   h.traits.exact_products = true;
                   h.traits.product_format = nullptr;
                   h.traits.sum_order.step = StepKind::Fma;
                 }});
  // Accumulator: another format, or fp32's range with fewer fraction bits.
  std::vector<const Format*> accs = {&f16, &bf16, &f32};
  for (int frac : {13, 16, 19, 22}) accs.push_back(&narrow_f32(frac));
  for (const Format* f : accs) {
    if (*f == *t.acc || (t.acc->precision() > 24 && !(*f == f32))) continue;
    const bool tighter = f->precision() > t.acc->precision() && f->max_finite() >= t.acc->max_finite();
    c.push_back({fmt::format("acc={}", f->tag),
                 f->tag.substr(0, 4) == "f32p" ? fmt::format("partial sums kept with {} fraction bits (fp32's range)", f->frac_bits)
                                               : fmt::format("partial sums carried in {}", f->tag),
                 ChangeClass::Accumulator, tighter, [f](Hypothesis& h) {
                   h.traits.acc = f;
                   h.traits.promote_every = 0;
                   h.traits.promote_format = nullptr;
                 }});
  }
  // Rounding of the accumulation.
  if (t.acc_rounding == Rounding::NearestEven)
    c.push_back({"acc_rounding=rz", fmt::format("every addition rounded toward zero in {}", t.acc->tag), ChangeClass::AccRounding, false,
                 [](Hypothesis& h) { h.traits.acc_rounding = Rounding::TowardZero; }});
  else
    c.push_back({"acc_rounding=rn", "every addition rounded to nearest", ChangeClass::AccRounding, true,
                 [](Hypothesis& h) { h.traits.acc_rounding = Rounding::NearestEven; }});
  // Order family and block size. Where the declaration fixes no order (unknown, atomic split-K), each order is a member
  // of the declared family: naming it is more precise than the declaration, not a departure from it.
  const bool order_free = !t.sum_order.known() || t.sum_order.outer == Combine::Atomic;
  auto order = [&](std::string id, std::string what, SummationOrder o) {
    if (t.sum_order == o) return;
    c.push_back({"order=" + id, std::move(what), ChangeClass::Order, order_free, [o](Hypothesis& h) {
                   SummationOrder x = o;
                   x.step = h.traits.sum_order.step;
                   h.traits.sum_order = x;
                   h.traits.promote_every = 0;
                 }});
  };
  order("sequential", "summed sequentially along K", SummationOrder::sequential());
  if (k > 2) order("pairwise", "summed by recursive halving", SummationOrder::pairwise());
  for (int b : {4, 8, 16, 32, 64, 128, 256})
    if (b < k) order(fmt::format("blocked{}", b), fmt::format("blocks of {} products, partials joined in order", b), SummationOrder::blocked(b));
  for (int s : {2, 3, 4, 8, 16})
    if (s < k) order(fmt::format("splitk{}", s), fmt::format("split-K in {} chunks, partials added in order", s), SummationOrder::split_k(s));
  // A tensor-core block model (the behaviour card's parameters) with one parameter changed: a wrong card, or a card
  // of another instruction (docs/tensor_cores.md).
  if (t.sum_order.kind == OrderKind::TensorCoreBlock && t.sum_order.block_model.params) {
    const FusedDotParams p0 = *t.sum_order.block_model.params;
    auto card = [&](std::string id, std::string what, const std::function<void(FusedDotParams&)>& edit) {
      FusedDotParams p = p0;
      edit(p);
      if (p == p0 || !check(p).empty()) return;
      c.push_back({"card:" + id, "tensor-core block with " + what, ChangeClass::Order, false, [p](Hypothesis& h) {
                     if (h.traits.sum_order.block_model.params) h.traits.sum_order.block_model.params = p;
                   }});
    };
    for (int d : {-3, -2, -1, 1, 2, 3})
      card(fmt::format("align_bits={}", p0.align_bits + d), fmt::format("{} alignment bits", p0.align_bits + d),
           [d](FusedDotParams& p) { p.align_bits += d; });
    card("align=rn", "alignment rounded to nearest", [](FusedDotParams& p) { p.align_rounding = AlignRounding::NearestEven; });
    card("align=rz", "alignment truncated", [](FusedDotParams& p) { p.align_rounding = AlignRounding::TowardZero; });
    card("align=rd", "alignment toward -inf", [](FusedDotParams& p) { p.align_rounding = AlignRounding::Down; });
    card("block=rn", "block result rounded to nearest", [](FusedDotParams& p) { p.block_rounding = Rounding::NearestEven; });
    card("block=rz", "block result truncated", [](FusedDotParams& p) { p.block_rounding = Rounding::TowardZero; });
    for (int f : {2, 4, 8, 16, 32})
      if (f <= t.sum_order.block)
        card(fmt::format("fused={}", f), fmt::format("{} products per rounding", f), [f](FusedDotParams& p) { p.fused_length = f; });
    for (int b : {p0.acc_bits - 1, p0.acc_bits + 1})
      card(fmt::format("acc_bits={}", b), fmt::format("{} result fraction bits", b), [b](FusedDotParams& p) { p.acc_bits = b; });
  }
  // Split-K with the partials stored in the output format, where it is narrower than the accumulator: cuBLAS's
  // reduced-precision reduction for fp16/bf16 outputs (CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION unset; torch's
  // allow_{fp16,bf16}_reduced_precision_reduction), as cuBLASLt's reduction schemes OUTPUT_TYPE (partials in a workspace
  // of the output type, reduced in a separate step) and INPLACE (each partial added into C, held in the output type).
  if (t.out->precision() < t.acc->precision())
    for (int s : {2, 4, 8, 16})
      if (s < k)
        for (bool inplace : {false, true}) {
          const Format* p = t.out;
          c.push_back({fmt::format("partials=splitk{}/{}{}", s, p->tag, inplace ? "/inplace" : ""),
                       inplace ? fmt::format("split-K in {} chunks, each partial added into C held in {} (in-place reduction in the output type)", s, p->tag)
                               : fmt::format("split-K in {} chunks, partials stored in {} and summed in {} (reduction in the output type)", s, p->tag, t.acc->tag),
                       ChangeClass::Partials, false, [p, s, inplace](Hypothesis& h) {
                         h.partials = p;
                         h.partial_splits = s;
                         h.partials_inplace = inplace;
                       }});
        }
  // A dropped K tail: K rounded down to a multiple of the tile (the remainder loop missing).
  for (std::int64_t tile : {8, 16, 32, 64})
    if (k > tile && k % tile != 0) {
      const std::int64_t keep = k / tile * tile;
      c.push_back({fmt::format("tail={}", tile), fmt::format("the last {} products dropped (K rounded down to a multiple of {})", k - keep, tile),
                   ChangeClass::Tail, false, [keep](Hypothesis& h) { h.keep_k = keep; }});
    }
  // The faults of the catalogue that change values (memory and determinism faults are named by the runner's checks).
  for (const FaultInfo& f : fault_catalogue()) {
    if (f.operation != Operation::Gemm || f.cls == FaultClass::Memory || f.cls == FaultClass::Determinism) continue;
    // lda ignored reads A's padding, which a hypothesis computed on dense operands does not have: it would equal the
    // declared arithmetic on every case (docs/diagnose.md, "Misses").
    if (f.fault == Fault::LdaIgnored) continue;
    if (!fault_not_applicable(f.fault, t).empty()) continue;
    const Fault fault = f.fault;
    c.push_back({"fault=" + std::string(f.id), std::string(f.what), ChangeClass::Fault, false, [fault](Hypothesis& h) { h.fault = fault; }});
  }
  return c;
}

Hypothesis with_changes(const Hypothesis& base, const std::vector<const Change*>& changes) {
  Hypothesis h = base;
  h.id.clear();
  h.what.clear();
  h.tighter = !changes.empty();
  for (const Change* ch : changes) {
    ch->apply(h);
    h.id += (h.id.empty() ? "" : "+") + ch->id;
    h.what += (h.what.empty() ? "" : "; ") + ch->what;
    h.tighter = h.tighter && ch->tighter;
    h.classes.push_back(ch->cls);
    ++h.changes;
  }
  if (changes.empty()) h.id = "declared", h.what = "the declared arithmetic";
  return h;
}

std::string hypothesis_unavailable(const Hypothesis& h) { return emulation_unavailable(h.traits); }

namespace {

/// Split-K with partials stored in h.partials (Hypothesis): each chunk's sum by the emulator (the chunk's traits with
/// the accumulator as output: its value unrounded), then the partials rounded and combined as declared.
std::vector<std::uint64_t> evaluate_partials(const Hypothesis& h, std::int64_t m, std::int64_t n, std::int64_t k, std::vector<double> a,
                                             const std::vector<double>& b) {
  const KernelTraits& t = h.traits;
  if (h.fault) throw std::invalid_argument("split-K partials around a fault are not composed");
  if (h.keep_k >= 0)
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t p = h.keep_k; p < k; ++p) a[static_cast<std::size_t>(i * k + p)] = 0.0;
  KernelTraits ct = t;
  ct.out = t.acc;
  const Format& pf = *h.partials;
  const std::int64_t chunk = (k + h.partial_splits - 1) / h.partial_splits;
  std::vector<double> c(static_cast<std::size_t>(m * n), 0.0);
  for (std::int64_t lo = 0, s = 0; lo < k; lo += chunk, ++s) {
    const std::int64_t kc = std::min(chunk, k - lo);
    std::vector<double> as(static_cast<std::size_t>(m * kc));
    for (std::int64_t i = 0; i < m; ++i)
      std::copy_n(a.begin() + i * k + lo, kc, as.begin() + i * kc);
    const std::vector<double> bs(b.begin() + lo * n, b.begin() + (lo + kc) * n);
    const std::vector<std::uint64_t> part = emulate_gemm(ct, m, n, kc, as, bs);
    for (std::size_t x = 0; x < c.size(); ++x) {
      const double v = to_double(*t.acc, part[x]);
      if (h.partials_inplace) c[x] = emulate_round(pf, Rounding::NearestEven, s == 0 ? v : emulate_add(*t.acc, Rounding::NearestEven, c[x], v));
      else c[x] = s == 0 ? emulate_round(pf, Rounding::NearestEven, v) : emulate_add(*t.acc, Rounding::NearestEven, c[x], emulate_round(pf, Rounding::NearestEven, v));
    }
  }
  std::vector<std::uint64_t> out(c.size());
  const Rounder rn = Rounder::nearest(*t.out);
  for (std::size_t x = 0; x < c.size(); ++x) out[x] = round_double(*t.out, c[x], rn).code;
  return out;
}

/// The formats two hypotheses' values pass through, pairwise: what differs between them.
struct FormatPair {
  const Format *x, *y;
  Rounding rx, ry;
  bool wide_k;  ///< a sum's format (accumulator, partials): its precision shows over a long K
  const char* role;
};

std::vector<FormatPair> format_pairs(const Hypothesis& x, const Hypothesis& y) {
  const KernelTraits &s = x.traits, &t = y.traits;
  std::vector<FormatPair> r;
  r.push_back({&seen(*s.a_input, *s.a_operand), &seen(*t.a_input, *t.a_operand), s.input_rounding, t.input_rounding, false, "operands"});
  const Format* px = s.exact_products ? s.acc : s.product_format;
  const Format* py = t.exact_products ? t.acc : t.product_format;
  r.push_back({px, py, s.acc_rounding, t.acc_rounding, false, "products"});
  r.push_back({s.acc, t.acc, s.acc_rounding, t.acc_rounding, true, "accumulator"});
  if (x.partials || y.partials)
    r.push_back({x.partials ? x.partials : s.acc, y.partials ? y.partials : t.acc, Rounding::NearestEven, Rounding::NearestEven, true, "split-K partials"});
  return r;
}

}  // namespace

std::vector<SeparatingSpec> separating_specs(const Hypothesis& x, const Hypothesis& y, std::uint64_t seed) {
  std::vector<SeparatingSpec> r;
  const KernelTraits& t = x.traits;
  // The separating inputs keep products and K = 64 sums inside every other format both pass through (the wider of the
  // pair, the outputs, and for operands and products the accumulators): only the narrower format under test overflows
  // or loses bits.
  const int hi_cap = std::min(t.a_input->emax(), t.b_input->emax()), lo_cap = std::max(t.a_input->emin(), t.b_input->emin());
  for (const FormatPair& p : format_pairs(x, y)) {
    if (!p.x || !p.y) continue;
    const Format &f = *p.x, &g = *p.y;
    const bool operand = std::string_view(p.role) == "operands";
    const int top = std::min(f.emax(), g.emax()), bottom = std::max(f.emin(), g.emin());
    const Format& narrow_hi = f.emax() < g.emax() ? f : g;
    const Format& narrow_lo = f.emin() > g.emin() ? f : g;
    const bool sum_role = p.wide_k;
    int sum_emax = std::min({std::max(f.emax(), g.emax()), x.traits.out->emax(), y.traits.out->emax()});
    int sum_emin = std::max({std::min(f.emin(), g.emin()), x.traits.out->emin(), y.traits.out->emin()});
    if (!sum_role) {
      sum_emax = std::min({sum_emax, x.traits.acc->emax(), y.traits.acc->emax()});
      sum_emin = std::max({sum_emin, x.traits.acc->emin(), y.traits.acc->emin()});
    }
    int emax = 4, emin = -4;
    std::string why;
    if (f.emax() != g.emax()) {
      // operands: inputs up to 2^(top + 5); products and sums: products up to 2^(top + 2)
      const int want = operand ? top + 5 : (top + 3) / 2 + 1;
      const int cap = std::min(hi_cap, (sum_emax - 8) / 2);
      if (want <= cap && (operand ? want > top : 2 * want > top)) {
        emax = want;
        why = fmt::format("{}'s range ends below 2^{} ({} overflows there, {} does not)", narrow_hi.tag, top + 1, narrow_hi.tag,
                          (&narrow_hi == &f ? g : f).tag);
      }
    }
    if (f.emin() != g.emin()) {
      const int want = operand ? bottom - 6 : (bottom - 3) / 2 - 1;
      const int cap = std::max(lo_cap, (sum_emin + 8) / 2);
      if (want >= cap) {
        emin = want;
        why += fmt::format("{}{}'s normal range starts at 2^{} ({} loses bits below it, {} does not)", why.empty() ? "" : "; ", narrow_lo.tag,
                           bottom, narrow_lo.tag, (&narrow_lo == &f ? g : f).tag);
      }
    }
    if (emax != 4 || emin != -4)
      r.push_back({fmt::format("exp_uniform:m=32,n=32,k=64,seed={},emin={},emax={}", seed, emin, emax),
                   fmt::format("{} {} vs {}: {}", p.role, f.tag, g.tag, why)});
    if (f.precision() != g.precision()) {
      const Format& narrow = f.precision() < g.precision() ? f : g;
      if (p.wide_k)
        r.push_back({fmt::format("uniform:m=16,n=16,k=4096,seed={},lo=0,hi=1", seed),
                     fmt::format("{} {} vs {}: {} keeps {} bits; over a long K of positive terms its roundings add up", p.role, f.tag, g.tag,
                                 narrow.tag, narrow.precision())});
      else
        r.push_back({fmt::format("uniform:m=32,n=32,k=16,seed={},lo=0,hi=1", seed),
                     fmt::format("{} {} vs {}: {} keeps {} bits; on a short K its rounding dominates every other error", p.role, f.tag, g.tag,
                                 narrow.tag, narrow.precision())});
    } else if (p.rx != p.ry && f == g) {
      // Ties of the format at every input: mantissa 1 + 2^-p is halfway between 1 and its successor (even below:
      // nearest-even rounds down, nearest-away up); 1 + 3 2^-p halfway above an odd neighbour (both nearest modes
      // round up, toward zero down).
      const bool nearest_pair = (p.rx == Rounding::NearestEven || p.rx == Rounding::NearestAway) &&
                                (p.ry == Rounding::NearestEven || p.ry == Rounding::NearestAway);
      const double mant = 1.0 + (nearest_pair ? 1 : 3) * std::ldexp(1.0, -f.precision());
      if (p.wide_k)
        r.push_back({fmt::format("uniform:m=16,n=16,k=4096,seed={},lo=0,hi=1", seed),
                     fmt::format("{} rounding {} vs {}: over a long K of positive terms the directions add up", p.role, rounding_tag(p.rx),
                                 rounding_tag(p.ry))});
      else if (f.precision() < 24)
        r.push_back({fmt::format("exp_sweep:m=32,n=32,k=16,seed={},target=f16,mantissa={},b=ones", seed, mant),
                     fmt::format("{} rounding {} vs {}: every input a tie of {} (mantissa 1 + {}2^-{})", p.role, rounding_tag(p.rx),
                                 rounding_tag(p.ry), f.tag, nearest_pair ? "" : "3 x ", f.precision())});
    }
    if (!r.empty()) break;  // the first thing they differ in
  }
  return r;
}

std::vector<std::uint64_t> evaluate_hypothesis(const Hypothesis& h, std::int64_t m, std::int64_t n, std::int64_t k,
                                               const std::vector<double>& a, const std::vector<double>& b) {
  const KernelTraits& t = h.traits;
  if (h.partials) return evaluate_partials(h, m, n, k, a, b);
  if (!h.fault && h.keep_k < 0) return emulate_gemm(t, m, n, k, a, b);
  // Through the host kernel that computes the hypothesis and, for a fault, the injector around it.
  const int ab = container_bytes(*t.a_input), bb = container_bytes(*t.b_input), cb = container_bytes(*t.out);
  std::vector<std::uint8_t> ca(static_cast<std::size_t>(std::max<std::int64_t>(1, m * k) * ab)),
      cbv(static_cast<std::size_t>(std::max<std::int64_t>(1, k * n) * bb)), cc(static_cast<std::size_t>(std::max<std::int64_t>(1, m * n) * cb));
  const Rounder ra = Rounder::nearest(*t.a_input), rb = Rounder::nearest(*t.b_input);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t p = 0; p < k; ++p) {
      const double v = h.keep_k >= 0 && p >= h.keep_k ? 0.0 : a[static_cast<std::size_t>(i * k + p)];
      store_code(ca.data(), i * k + p, ab, to_container(*t.a_input, round_double(*t.a_input, v, ra).code));
    }
  for (std::int64_t x = 0; x < k * n; ++x)
    store_code(cbv.data(), x, bb, to_container(*t.b_input, round_double(*t.b_input, b[static_cast<std::size_t>(x)], rb).code));
  std::unique_ptr<GemmKernel> kernel = make_emulated_kernel("hypothesis", t, t.sum_order);
  if (h.fault) kernel = make_fault_injector(std::move(kernel), *h.fault);
  GemmOperands ops;
  ops.m = m, ops.n = n, ops.k = k;
  ops.a = ca.data(), ops.lda = k;
  ops.b = cbv.data(), ops.ldb = n;
  ops.c = cc.data(), ops.ldc = n;
  kernel->run(ops);
  std::vector<std::uint64_t> out(static_cast<std::size_t>(m * n));
  for (std::int64_t x = 0; x < m * n; ++x) out[static_cast<std::size_t>(x)] = from_container(*t.out, load_code(cc.data(), x, cb));
  return out;
}

}  // namespace fpcert
