// generators/generate.hpp — the generators' public API: a spec string in, a Problem out.
//
//   Problem p = generate("normal:m=1024,n=1024,k=4096,seed=7");
//   Problem q = generate(p.spec);            // the canonical spec: same bits, on any machine
//   for (const GeneratorInfo& g : list_generators()) ...   // families, parameters, defaults
//
// A spec is `family:key=value,...` (generators/spec.hpp gives the grammar); docs/generators.md
// documents every family. Bad specs throw InputError (exit code 2) naming the bad field and the
// valid ones. Every value of a generated problem is exactly representable in its source format.
//
// What generate() measures for every problem (Problem::achieved, docs/generators.md lists the
// keys): per operand the largest and smallest nonzero magnitude, the exponent range and span, the
// fraction of zeros; the condition numbers kappa_ij = sum_k |a_ik b_kj| / |c_ij| of C = A B with
// the exact oracle when m n k <= GenerateOptions::kappa_products (families that target a
// condition number always measure it); and Problem::not_representable for every narrower format.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "generators/problem.hpp"
#include "generators/spec.hpp"

namespace fpcert {

struct GenerateOptions {
  unsigned threads = 0;                              ///< worker threads (0: thread_count()); results do not depend on it
  std::uint64_t kappa_products = std::uint64_t{1} << 22;  ///< measure kappa stats when m * n * k <= this
};

/// Make the problem a spec describes. Throws InputError for a bad spec.
Problem generate(const std::string& spec, const GenerateOptions& opt = {});

/// The canonical form of a spec (all fields, defaults filled in, declared order), without
/// generating anything. Throws InputError for a bad spec.
std::string canonical_spec(const std::string& spec);

/// Parse a spec (typed fields, defaults filled in) without generating anything.
ParsedSpec parse_generator_spec(const std::string& spec);

/// Every family with its parameters and defaults, in documentation order.
const std::vector<GeneratorInfo>& list_generators();

/// The text `fpcert gen --list` prints: every family, its parameters, defaults and ranges.
std::string generator_list_text();

/// Formats for which generate() reports Problem::not_representable: every value format except
/// the source itself, f64 and ue8m0 (a scale format).
std::vector<const Format*> narrower_formats(const Format& source);

/// A 64-bit FNV-1a hash of a problem's shape and values (m, n, k as little-endian int64, then
/// the IEEE binary64 bits of every entry of A and then B, row-major): equal problems, equal hashes.
std::uint64_t problem_hash(const Problem& p);
/// FNV-1a 64 of a byte string (the primitive problem_hash uses; offset basis 0xcbf29ce484222325,
/// prime 0x100000001b3).
std::uint64_t fnv1a64(const void* data, std::size_t size, std::uint64_t h = 0xcbf29ce484222325ULL);

}  // namespace fpcert
