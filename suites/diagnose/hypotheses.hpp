// suites/diagnose/hypotheses.hpp — the hypotheses of a GEMM diagnosis (docs/diagnose.md): the declared arithmetic with one
// change, or two, each computed bit for bit by fpcert's own machinery: the bitwise tier's emulator for a changed
// declaration (operand, product and accumulator formats, accumulator width and rounding, order family and block size,
// a dropped K tail), and the fault injectors of the mutation score wrapped around that emulation for the faults of the
// catalogue (suites/mutation/faults.hpp: accumulation in fp16/bf16 or toward zero, output toward zero, DAZ, FTZ, ...);
// split-K with its partials stored in the output format (cuBLAS's reduced-precision reduction), composed from the
// emulator's chunk sums; and the cases that separate two hypotheses, derived from where their formats differ.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kernels/kernel.hpp"
#include "suites/mutation/faults.hpp"

namespace fpcert {

/// What a change alters; a pair of changes alters two different things (a fault counts as its own class).
enum class ChangeClass : std::uint8_t { Operands, Products, Accumulator, AccRounding, Order, Tail, Fault, Partials };

struct Hypothesis {
  std::string id = "declared";  ///< "operands=tf32/rn", "acc=bf16+order=pairwise", "fault=acc_rz"
  std::string what = "the declared arithmetic";
  int changes = 0;
  bool tighter = false;          ///< every change is more precise than the declaration
  KernelTraits traits;           ///< the hypothesised arithmetic (an order the emulator runs)
  std::optional<Fault> fault;    ///< a fault of the catalogue injected around it
  std::int64_t keep_k = -1;      ///< dropped K tail: products k >= keep_k left out (-1: none)
  /// Split-K with partials stored in a narrower format (cuBLAS's reduced-precision reduction): K cut into
  /// `partial_splits` contiguous chunks, each summed by traits' order into the accumulator, rounded (RN) into
  /// `partials`; then either summed in the accumulator and rounded into the output (a workspace of that format), or
  /// (`partials_inplace`) added one after the other into C held in `partials`: C = RN_p(RN_acc(C + partial)).
  const Format* partials = nullptr;
  int partial_splits = 0;
  bool partials_inplace = false;
  std::vector<ChangeClass> classes;
};

struct Change {
  std::string id, what;
  ChangeClass cls;
  bool tighter = false;
  std::function<void(Hypothesis&)> apply;
};

/// The declared arithmetic as an emulable hypothesis: the declaration, with an unknown order computed sequentially
/// (fma) and run-to-run nondeterminism set aside (one member of its order family). `note` says what was assumed.
Hypothesis declared_hypothesis(const KernelTraits& declared, std::string* note = nullptr);

/// Every single change that alters the declared arithmetic at depth k (changes that would leave it as it is are left
/// out: an fp16 accumulator for a kernel declaring one, a block no shorter than K, a fault that cannot apply).
std::vector<Change> single_changes(const KernelTraits& declared, std::int64_t k);

/// `base` with the changes applied (ids and words joined with '+').
Hypothesis with_changes(const Hypothesis& base, const std::vector<const Change*>& changes);

/// Why fpcert cannot compute the hypothesis bit for bit (empty: it can).
std::string hypothesis_unavailable(const Hypothesis& h);

/// A case on which two hypotheses differ (a generator spec) and why: derived from the first thing their arithmetics
/// differ in — a format's range (inputs beyond the narrower range: overflow or lost bits there, none in the wider),
/// its precision (operands or products: a short K, where the narrowing dominates every other error; accumulator or
/// partials: a long K of positive terms, where the roundings of the sum add up), or a rounding mode (ties of the
/// narrower format at every input). Empty when they differ in none of these (an order, a fault).
struct SeparatingSpec {
  std::string spec, why;
};
std::vector<SeparatingSpec> separating_specs(const Hypothesis& x, const Hypothesis& y, std::uint64_t seed);

/// The hypothesis computed on inputs a (m x k) and b (k x n), row-major values of the declared input formats as the
/// kernel received them: codes of traits.out, row-major m x n.
std::vector<std::uint64_t> evaluate_hypothesis(const Hypothesis& h, std::int64_t m, std::int64_t n, std::int64_t k,
                                               const std::vector<double>& a, const std::vector<double>& b);

}  // namespace fpcert
