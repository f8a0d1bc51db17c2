// kernels/tc/probe.cpp — the tensor-core probe (kernels/tc/probe.hpp; docs/tensor_cores.md).
#include "kernels/tc/probe.hpp"
#include "kernels/tc/probe_internal.hpp"

namespace fpcert::tc {
using namespace probe_internal;  // the Prober and its helpers (kernels/tc/probe_internal.hpp)
namespace {

// ---------------------------------------------------------------------------------------------------
// Validation inputs
// ---------------------------------------------------------------------------------------------------

enum StreamId : std::uint32_t { kStreamValidation = 0x7C000000u };

struct Gen {
  Stream st;
  std::uint64_t base;  ///< counter of the element
  int draw = 0;
  std::array<std::uint32_t, 4> words() { return draw_words(st, base, static_cast<std::uint32_t>(draw++)); }
  double uniform() {
    const auto w = words();
    return u53(w[0], w[1]);
  }
  std::uint32_t bits() { return words()[0]; }
  double normal() {
    // Marsaglia's polar method over this element's draws (generators/rng.hpp's normal(), on a sub-counter).
    for (;;) {
      const auto w = words();
      const double u = 2.0 * u53(w[0], w[1]) - 1.0, v = 2.0 * u53(w[2], w[3]) - 1.0;
      const double q = u * u + v * v;
      if (q > 0.0 && q < 1.0) return u * std::sqrt((-2.0 * det_log(q)) / q);
    }
  }
};

std::uint32_t rne_code(const Format& f, double x) {
  return static_cast<std::uint32_t>(to_container(f, round_double(f, x, Rounder{Rounding::NearestEven, default_saturation(f), NanPayload::Preserve}).code));
}

/// A random code of f: finite with random sign, exponent and fraction; Inf/NaN 1 time in 256.
std::uint32_t wide_code(const Format& f, Gen& g) {
  for (;;) {
    std::uint32_t bits = g.bits();
    const bool special_ok = (g.bits() & 0xFF) == 0;
    std::uint64_t code = f == tf32 ? (bits >> 13) : (bits & f.code_mask());
    const FpClass c = classify(f, code);
    if ((c == FpClass::NaN || c == FpClass::Inf) && !special_ok) continue;
    if (f == tf32) return bits;  // random low container bits: the operand reading is validated too
    return static_cast<std::uint32_t>(code);
  }
}

/// sign * (1 + random fraction) * 2^e rounded into f (nearest-even, saturating at the largest finite).
std::uint32_t scaled_code(const Format& f, Gen& g, int e) {
  const double m = 1.0 + g.uniform();
  const double sign = (g.bits() & 1) ? -1.0 : 1.0;
  const double x = std::clamp(sign * std::ldexp(m, e), -f.max_finite(), f.max_finite());
  return rne_code(f, x);
}

}  // namespace

// ---------------------------------------------------------------------------------------------------
// Public functions
// ---------------------------------------------------------------------------------------------------

std::unique_ptr<DotSource> instruction_dots(MmaInstruction& insn) { return std::make_unique<InstructionDots>(insn); }

FusedDotParams starting_params(const InstructionSpec& spec) {
  FusedDotParams p;
  if (spec.integer()) return p;
  p.a = *spec.a;
  p.b = *spec.b;
  p.acc = *spec.acc;
  p.fused_length = spec.k;
  p.acc_bits = spec.acc->frac_bits;
  p.block_rounding = Rounding::TowardZero;
  p.nan_code = spec.acc->canonical_nan_code();
  return p;
}

std::uint32_t int_dot(bool wraps, const std::uint32_t* a, const std::uint32_t* b, int k, std::uint32_t c) {
  std::int64_t s = static_cast<std::int32_t>(c);
  for (int i = 0; i < k; ++i)
    s += static_cast<std::int64_t>(static_cast<std::int8_t>(a[i] & 0xFF)) * static_cast<std::int8_t>(b[i] & 0xFF);
  if (wraps) return static_cast<std::uint32_t>(s);
  return static_cast<std::uint32_t>(static_cast<std::int32_t>(std::clamp<std::int64_t>(s, INT32_MIN, INT32_MAX)));
}

std::unique_ptr<MmaInstruction> make_model_instruction(const InstructionSpec& spec, const FusedDotParams& params, std::string origin) {
  if (spec.integer()) throw InputError("make_model_instruction: " + std::string(spec.id) + " is an integer instruction");
  if (const std::string bad = check(params); !bad.empty()) throw InputError("block model parameters: " + bad);
  return std::make_unique<ModelInstruction>(spec, params, false, true, std::move(origin));
}

std::unique_ptr<MmaInstruction> make_integer_model_instruction(const InstructionSpec& spec, bool wraps, std::string origin) {
  return std::make_unique<ModelInstruction>(spec, FusedDotParams{}, true, wraps, std::move(origin));
}

std::string_view to_string(Distribution d) {
  switch (d) {
    case Distribution::Uniform: return "uniform";
    case Distribution::Normal: return "normal";
    case Distribution::Wide: return "wide";
    case Distribution::Cancellation: return "cancellation";
    case Distribution::NearOverflow: return "near-overflow";
    case Distribution::Ties: return "ties";
  }
  return "?";
}
std::optional<Distribution> parse_distribution(std::string_view s) {
  for (Distribution d : kAllDistributions)
    if (to_string(d) == s) return d;
  return std::nullopt;
}

MmaBatch validation_batch(const InstructionSpec& spec, Distribution dist, std::uint64_t seed, std::uint64_t first_mma, int count,
                          const FusedDotParams* fitted) {
  const int m = spec.m, n = spec.n, k = spec.k;
  MmaBatch b;
  b.count = count;
  b.a.resize(static_cast<std::size_t>(count) * m * k);
  b.b.resize(static_cast<std::size_t>(count) * n * k);
  b.c.resize(static_cast<std::size_t>(count) * m * n);
  const Stream st{seed, kStreamValidation + static_cast<std::uint32_t>(dist) * 16};
  const std::uint64_t per_mma = static_cast<std::uint64_t>(m * k + n * k + m * n);
  const int F = fitted ? fitted->align_bits : 24;
  parallel_for(static_cast<std::uint64_t>(count), 64, [&](std::uint64_t lo, std::uint64_t hi, unsigned) {
    for (std::uint64_t t = lo; t < hi; ++t) {
      const std::uint64_t mma = first_mma + t;
      const auto gen = [&](std::uint64_t elem) { return Gen{st, mma * per_mma + elem}; };
      std::uint32_t* A = &b.a[t * m * k];
      std::uint32_t* B = &b.b[t * n * k];
      std::uint32_t* C = &b.c[t * m * n];
      if (spec.integer()) {
        for (int i = 0; i < m * k; ++i) A[i] = gen(i).bits() & 0xFF;
        for (int i = 0; i < n * k; ++i) B[i] = gen(m * k + i).bits() & 0xFF;
        for (int i = 0; i < m * n; ++i) {
          Gen g = gen(m * k + n * k + i);
          const std::uint32_t r = g.bits();
          if (dist == Distribution::NearOverflow) C[i] = (r & 1) ? static_cast<std::uint32_t>(INT32_MAX - static_cast<int>(r >> 20)) : static_cast<std::uint32_t>(INT32_MIN + static_cast<int>(r >> 20));
          else if (dist == Distribution::Wide) C[i] = r;
          else C[i] = static_cast<std::uint32_t>(static_cast<std::int32_t>(r % 200001) - 100000);
        }
        continue;
      }
      const Format& fa = *spec.a;
      const Format& fb = *spec.b;
      const Format& acc = *spec.acc;
      const auto input = [&](const Format& f, Gen g, int row, int col, bool is_a) -> std::uint32_t {
        switch (dist) {
          case Distribution::Uniform: return rne_code(f, 2 * g.uniform() - 1);
          case Distribution::Normal: return rne_code(f, g.normal());
          case Distribution::Wide: return wide_code(f, g);
          case Distribution::NearOverflow: return scaled_code(f, g, f.emax() - static_cast<int>(g.bits() % 3));
          case Distribution::Cancellation: {
            // The second half repeats the first with A negated: products cancel pairwise; 1 in 8 redrawn.
            const int kk = is_a ? col : row;
            if (kk >= k / 2 && (g.bits() & 7) != 0) return 0xFFFFFFFFu;  // filled below from the mirror
            return rne_code(f, g.normal());
          }
          case Distribution::Ties: {
            // Position 0 of each row/column near 1; the others put their product's exponent around the
            // window's last kept bit: e_a + e_b in [-F-3, -F+1].
            const int kk = is_a ? col : row;
            if (kk == 0) return scaled_code(f, g, 0);
            const int e = -F - 3 + static_cast<int>(g.bits() % 5);
            const int ea = is_a ? e / 2 : e - e / 2;
            return scaled_code(f, g, std::max(ea, f.emin()));
          }
        }
        return 0;
      };
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < k; ++j) A[i * k + j] = input(fa, gen(static_cast<std::uint64_t>(i * k + j)), i, j, true);
      for (int col = 0; col < n; ++col)
        for (int j = 0; j < k; ++j) B[col * k + j] = input(fb, gen(static_cast<std::uint64_t>(m * k + col * k + j)), j, col, false);
      if (dist == Distribution::Cancellation) {
        for (int i = 0; i < m; ++i)
          for (int j = k / 2; j < k; ++j)
            if (A[i * k + j] == 0xFFFFFFFFu) A[i * k + j] = A[i * k + j - k / 2] ^ static_cast<std::uint32_t>(to_container(fa, fa.sign_mask()));
        for (int col = 0; col < n; ++col)
          for (int j = k / 2; j < k; ++j)
            if (B[col * k + j] == 0xFFFFFFFFu) B[col * k + j] = B[col * k + j - k / 2];
      }
      const int pmin = fa.emin() + fb.emin(), pmax = std::min(fa.emax() + fb.emax(), acc.emax());
      for (int i = 0; i < m * n; ++i) {
        Gen g = gen(static_cast<std::uint64_t>(m * k + n * k + i));
        switch (dist) {
          case Distribution::Uniform: C[i] = rne_code(acc, 2 * g.uniform() - 1); break;
          case Distribution::Normal: C[i] = rne_code(acc, g.normal()); break;
          case Distribution::Wide:
            C[i] = (g.bits() & 1) ? wide_code(acc, g)
                                  : scaled_code(acc, g, std::max(acc.emin(), pmin - 8 + static_cast<int>(g.bits() % static_cast<std::uint32_t>(pmax - pmin + 16))));
            break;
          case Distribution::NearOverflow:
            C[i] = (g.bits() & 3) ? scaled_code(acc, g, acc.emax()) : static_cast<std::uint32_t>(((g.bits() & 1) ? acc.sign_mask() : 0) | acc.max_finite_code());
            break;
          case Distribution::Cancellation: C[i] = rne_code(acc, g.normal() * 0x1p-12); break;
          case Distribution::Ties: C[i] = scaled_code(acc, g, -static_cast<int>(g.bits() % 3)); break;
        }
      }
    }
  });
  return b;
}

std::vector<DotQuery> sample_dots(const InstructionSpec& spec) {
  std::vector<DotQuery> out;
  if (spec.integer()) return out;
  const int k = spec.k, codes = std::min(spec.m * spec.n, kSampleCodes);
  for (Distribution dist : kSampleDistributions) {
    const MmaBatch b = validation_batch(spec, dist, kSampleSeed, 0, 1, nullptr);
    for (int e = 0; e < codes; ++e) {
      const std::size_t i = static_cast<std::size_t>(e / spec.n), j = static_cast<std::size_t>(e % spec.n);
      DotQuery q;
      q.a.assign(b.a.begin() + static_cast<std::ptrdiff_t>(i * k), b.a.begin() + static_cast<std::ptrdiff_t>((i + 1) * k));
      q.b.assign(b.b.begin() + static_cast<std::ptrdiff_t>(j * k), b.b.begin() + static_cast<std::ptrdiff_t>((j + 1) * k));
      q.c = b.c[static_cast<std::size_t>(e)];
      out.push_back(std::move(q));
    }
  }
  return out;
}

BehaviourCard unsupported_card(const InstructionSpec& spec, const std::string& origin, const std::string& why) {
  BehaviourCard c;
  c.instruction = std::string(spec.ptx);
  c.id = std::string(spec.id);
  c.family = std::string(to_string(spec.family));
  c.device = origin;
  c.m = spec.m, c.n = spec.n, c.k = spec.k;
  c.a_format = spec.a_tag();
  c.b_format = spec.a_tag();
  c.acc_format = spec.acc_tag();
  c.integer = spec.integer();
  c.supported = false;
  c.why = why;
  return c;
}

BehaviourCard fit_instruction(const InstructionSpec& spec, DotSource& dots, const std::string& origin) {
  const auto t0 = std::chrono::steady_clock::now();
  BehaviourCard card = unsupported_card(spec, origin, "");
  card.supported = true;
  Prober(spec, dots, card).run();
  card.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return card;
}

void validate(BehaviourCard& card, const InstructionSpec& spec, MmaInstruction& insn, const ProbeOptions& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  const int per_mma = spec.m * spec.n, k = spec.k;
  const std::uint64_t per_dist = (opt.samples + std::size(kAllDistributions) - 1) / std::size(kAllDistributions);
  const std::uint64_t mmas = std::max<std::uint64_t>(1, (per_dist + per_mma - 1) / per_mma);
  constexpr std::uint64_t kChunk = 4096;
  card.validation.clear();
  card.disagreements.clear();
  std::mutex mu;
  for (Distribution dist : kAllDistributions) {
    CardValidation v{std::string(to_string(dist)), 0, 0};
    for (std::uint64_t first = 0; first < mmas; first += kChunk) {
      const int count = static_cast<int>(std::min(kChunk, mmas - first));
      const MmaBatch batch = validation_batch(spec, dist, opt.seed, first, count, spec.integer() ? nullptr : &card.params);
      const std::vector<std::uint32_t> d = insn.run(batch);
      if (d.size() != static_cast<std::size_t>(count) * per_mma) throw DeviceError("the instruction returned a short D");
      if (opt.record && first == 0) record_tiles(*opt.record, spec, dist, batch, d, opt.record_tiles);
      std::atomic<std::uint64_t> bad{0};
      parallel_for(static_cast<std::uint64_t>(count), 64, [&](std::uint64_t lo, std::uint64_t hi, unsigned) {
        for (std::uint64_t t = lo; t < hi; ++t)
          for (int i = 0; i < spec.m; ++i)
            for (int j = 0; j < spec.n; ++j) {
              const std::uint32_t* a = &batch.a[(t * spec.m + i) * k];
              const std::uint32_t* b = &batch.b[(t * spec.n + j) * k];
              const std::uint32_t c = batch.c[(t * spec.m + i) * spec.n + j];
              const std::uint32_t want = spec.integer() ? int_dot(card.integer_wraps, a, b, k, c)
                                                        : static_cast<std::uint32_t>(fused_dot(card.params, a, b, k, c));
              const std::uint32_t got = d[(t * spec.m + i) * spec.n + j];
              if (want == got) continue;
              bad.fetch_add(1, std::memory_order_relaxed);
              std::lock_guard lock(mu);
              if (card.disagreements.size() < static_cast<std::size_t>(opt.max_listed))
                card.disagreements.push_back({v.distribution, std::vector<std::uint32_t>(a, a + k), std::vector<std::uint32_t>(b, b + k), c, got, want});
            }
      });
      v.samples += static_cast<std::uint64_t>(count) * per_mma;
      v.disagreements += bad.load();
    }
    if (opt.log)
      opt.log("  " + std::string(spec.id) + " " + v.distribution + ": " + std::to_string(v.samples) + " samples, " + std::to_string(v.disagreements) +
              " disagreements");
    card.validation.push_back(v);
  }
  card.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

bool layout_ok(const BehaviourCard& card) {
  return card.supported && !card.properties.empty() && (card.properties.front().name != "operand layout" || card.properties.front().disagree == 0);
}

BehaviourCard probe_instruction(MmaInstruction& insn, const ProbeOptions& opt) {
  auto dots = instruction_dots(insn);
  BehaviourCard card = fit_instruction(insn.spec(), *dots, insn.origin());
  if (layout_ok(card)) validate(card, insn.spec(), insn, opt);
  return card;
}

// ---------------------------------------------------------------------------------------------------
// Published models
// ---------------------------------------------------------------------------------------------------

std::optional<FusedDotParams> mma_sim_hopper(const InstructionSpec& spec) {
  // mmasim/simulator/nv_ptx.py: Hopper mma: 25 fractional bits, no split-k; its qualifier list for
  // Hopper has no FP8 mma.sync. wgmma: 25 bits, FP8 13 bits with an e8m13 fp32 result. arithmetic.py:
  // fused_sum truncates each significand * 2^(n + e_i - e_max) toward zero (e_i = e_a + e_b,
  // significands in [1, 4)), C included; fp32 results RZ (13 bits for e8m13), fp16 results RNE; NaN
  // 0x7FFFFFFF / 0x7FFF; tf32 operands truncated (truncate_to_tf32).
  if (spec.integer()) return std::nullopt;
  const bool fp8 = *spec.a == e4m3 || *spec.a == e5m2;
  if (spec.family == Family::MmaSync && fp8) return std::nullopt;
  FusedDotParams p;
  p.a = *spec.a;
  p.b = *spec.b;
  p.acc = *spec.acc;
  p.fused_length = spec.k;
  p.align_bits = fp8 ? 13 : 25;
  p.operand_read = Rounding::TowardZero;
  if (*spec.acc == f16) {
    p.acc_bits = 10;
    p.block_rounding = Rounding::NearestEven;
    p.nan_code = 0x7FFF;
  } else {
    p.acc_bits = fp8 ? 13 : 23;
    p.block_rounding = Rounding::TowardZero;
    p.nan_code = 0x7FFFFFFF;
  }
  return p;
}

std::optional<FusedDotParams> khattak_mikaitis_hopper(const InstructionSpec& spec) {
  // models/H100TC.m (H200TC.m calls it): fma 16 (tf32 8, fp8 32), neab 2 (fp8 -10: 13 bits and a
  // 13-bit fp32 result, GEMM.m), denorm_prd 1 (e_a + e_b), late_partial_sum 0 (C in the block), rz
  // (rne for fp16 outputs), min_exp_limit -133 (-21 for fp16 in and out), subnormals kept, prd_limit 0.
  // For FP8 inputs with fp16 outputs GEMM.m reduces the output to 10 - 10 = 0 fraction bits, which
  // we do not take as their model of that instruction.
  if (spec.integer()) return std::nullopt;
  const bool fp8 = *spec.a == e4m3 || *spec.a == e5m2;
  if (fp8 && *spec.acc == f16) return std::nullopt;
  FusedDotParams p;
  p.a = *spec.a;
  p.b = *spec.b;
  p.acc = *spec.acc;
  p.fused_length = std::min(spec.k, fp8 ? 32 : *spec.a == tf32 ? 8 : 16);
  p.align_bits = fp8 ? 13 : 25;
  p.align_floor = -133;
  p.operand_read = Rounding::TowardZero;
  if (*spec.acc == f16) {
    p.acc_bits = 10;
    p.block_rounding = Rounding::NearestEven;
    p.nan_code = 0x7FFF;
    if (*spec.a == f16) p.align_floor = -21;
  } else {
    p.acc_bits = fp8 ? 13 : 23;
    p.block_rounding = Rounding::TowardZero;
    p.nan_code = 0x7FFFFFFF;
  }
  return p;
}

std::vector<CardPublished> compare_published(const InstructionSpec& spec, const BehaviourCard& card,
                                             const std::function<bool(const FusedDotParams&)>& explains) {
  std::vector<CardPublished> rows;
  if (!card.supported || spec.integer() || card.probe_queries == 0) return rows;
  const auto ms = mma_sim_hopper(spec);
  const auto km = khattak_mikaitis_hopper(spec);
  struct Field {
    const char* name;
    std::function<std::string(const FusedDotParams&)> text;
    bool tf32_only = false;
    std::function<void(FusedDotParams&, const FusedDotParams&)> take;  ///< copy this property from a published model
  };
  const std::vector<Field> fields = {
      {"products", [](const FusedDotParams& p) { return p.product_frac_bits < 0 ? std::string("exact") : "truncated to " + std::to_string(p.product_frac_bits) + " bits"; }, false, [](FusedDotParams& d, const FusedDotParams& s) { d.product_frac_bits = s.product_frac_bits; }},
      {"fused length", [](const FusedDotParams& p) { return std::to_string(p.fused_length); }, false, [](FusedDotParams& d, const FusedDotParams& s) { d.fused_length = s.fused_length; }},
      {"k to blocks", [](const FusedDotParams& p) { return p.interleave_run == 0 ? std::string("contiguous") : "dealt in runs of " + std::to_string(p.interleave_run); }, false, [](FusedDotParams& d, const FusedDotParams& s) { d.interleave_run = s.interleave_run; }},
      {"alignment groups", [](const FusedDotParams& p) { return p.grouping == Grouping::None ? std::string("none") : std::to_string(p.groups) + " " + std::string(to_string(p.grouping)); }, false, [](FusedDotParams& d, const FusedDotParams& s) { d.grouping = s.grouping, d.groups = s.groups; }},
      {"alignment bits", [](const FusedDotParams& p) { return std::to_string(p.align_bits); }, false, [](FusedDotParams& d, const FusedDotParams& s) { d.align_bits = s.align_bits; }},
      {"alignment reference", [](const FusedDotParams& p) { return std::string(to_string(p.reference)); }, false, [](FusedDotParams& d, const FusedDotParams& s) { d.reference = s.reference; }},
      {"discarded bits", [](const FusedDotParams& p) { return std::string(to_string(p.align_rounding)); }, false, [](FusedDotParams& d, const FusedDotParams& s) { d.align_rounding = s.align_rounding; }},
      {"C enters", [](const FusedDotParams& p) { return std::string(to_string(p.c_join)); }, false, [](FusedDotParams& d, const FusedDotParams& s) { d.c_join = s.c_join; }},
      {"result bits", [](const FusedDotParams& p) { return std::to_string(p.acc_bits); }, false, [](FusedDotParams& d, const FusedDotParams& s) { d.acc_bits = s.acc_bits; }},
      {"result rounding", [](const FusedDotParams& p) { return std::string(to_string(p.block_rounding)); }, false, [](FusedDotParams& d, const FusedDotParams& s) { d.block_rounding = s.block_rounding; }},
      {"subnormal inputs", [](const FusedDotParams& p) { return std::string(p.input_subnormals ? "kept" : "zero"); }, false, [](FusedDotParams& d, const FusedDotParams& s) { d.input_subnormals = s.input_subnormals; }},
      {"subnormal results", [](const FusedDotParams& p) { return std::string(p.output_subnormals ? "kept" : "flushed"); }, false, [](FusedDotParams& d, const FusedDotParams& s) { d.output_subnormals = s.output_subnormals; }},
      {"overflow", [](const FusedDotParams& p) { return std::string(to_string(p.overflow)); }, false, [](FusedDotParams& d, const FusedDotParams& s) { d.overflow = s.overflow; }},
      {"inside the block", [](const FusedDotParams& p) { return std::string(p.wide_block ? "no overflow" : "products overflow"); }, false, [](FusedDotParams& d, const FusedDotParams& s) { d.wide_block = s.wide_block; }},
      {"alignment floor", [](const FusedDotParams& p) { return p.align_floor == kNoAlignFloor ? std::string("none") : std::to_string(p.align_floor); }, false, [](FusedDotParams& d, const FusedDotParams& s) { d.align_floor = s.align_floor; }},
      {"tf32 reading", [](const FusedDotParams& p) { return std::string(to_string(p.operand_read)); }, true, [](FusedDotParams& d, const FusedDotParams& s) { d.operand_read = s.operand_read; }},
  };
  for (const Field& f : fields) {
    if (f.tf32_only && !(*spec.a == tf32)) continue;
    CardPublished r;
    r.property = f.name;
    r.fpcert = f.text(card.params);
    r.mma_sim = ms ? f.text(*ms) : "";
    r.khattak_mikaitis = km ? f.text(*km) : "";
    // Equal values agree; a published value that still explains every probe answer when put in place
    // of the fitted one is "not distinguished" (the probes cannot tell); anything else differs.
    const auto judge = [&](const std::optional<FusedDotParams>& pub, const std::string& text, const char* who) -> std::string {
      if (!pub) return "";
      if (text == r.fpcert) return std::string("agrees with ") + who;
      FusedDotParams alt = card.params;
      f.take(alt, *pub);
      if (explains && check(alt).empty() && explains(alt)) return std::string("not distinguished from ") + who;
      return std::string("differs from ") + who;
    };
    const std::string a = judge(ms, r.mma_sim, "MMA-Sim"), b = judge(km, r.khattak_mikaitis, "Khattak-Mikaitis");
    r.verdict = a.empty() && b.empty() ? "no published model" : a.empty() ? b : b.empty() ? a : a + "; " + b;
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace fpcert::tc
