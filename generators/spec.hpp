// generators/spec.hpp — spec strings: `family:key=value,key=value`, parsed strictly, canonicalised.
//
// Grammar: SPEC := FAMILY [ ':' FIELD { ',' FIELD } ], FIELD := KEY '=' VALUE. No spaces. Every
// key a family does not declare, every key given twice, every value with trailing characters,
// out of range or of the wrong kind is an InputError naming the field and listing the valid ones.
// The canonical spec writes every field of the family, defaults filled in, in the family's
// declared order (the order of `fpcert gen --list`), with canonical values: integers in decimal,
// reals as the shortest decimal that reads back to the same double (C++ std::to_chars), choices
// and format tags in their canonical spelling (`fp32` becomes `f32`). generate(canonical) makes the
// same problem as generate(original), bit for bit.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "oracle/format.hpp"

namespace fpcert {

enum class ParamType : std::uint8_t {
  Int,     ///< signed decimal integer in [lo, hi]
  Seed,    ///< unsigned 64-bit decimal integer
  Real,    ///< finite decimal real (e.g. 0.013, 1e12) in [lo, hi]
  Choice,  ///< one of `choices`
  Format,  ///< a format tag or alias, one of `choices` (canonical tags)
};

/// "int", "uint64", "real", "choice", "format": how `fpcert gen --list` names a parameter's type.
const char* to_string(ParamType t);

struct ParamInfo {
  std::string name;
  ParamType type = ParamType::Int;
  std::string default_value;         ///< canonical text of the default
  std::string help;
  double lo = 0, hi = 0;             ///< Int and Real: inclusive range
  std::vector<std::string> choices;  ///< Choice and Format: canonical spellings
};

struct GeneratorInfo {
  std::string name;       ///< the family name of a spec: "normal", "cancel", ...
  std::string summary;    ///< one line
  std::string details;    ///< what it guarantees (a few sentences)
  std::string reference;  ///< where the algorithm comes from
  bool dot = false;       ///< makes a dot product (x, y) rather than a GEMM (A, B)
  std::vector<ParamInfo> params;
};

/// A parsed spec: every field of the family, typed, defaults filled in.
class ParsedSpec {
 public:
  using Value = std::variant<std::int64_t, std::uint64_t, double, std::string>;
  std::string original;   ///< as given
  std::string canonical;  ///< family:all fields in declared order
  const GeneratorInfo* info = nullptr;

  const std::string& family() const;
  std::int64_t integer(const std::string& key) const;
  std::uint64_t seed() const;  ///< the field "seed"
  double real(const std::string& key) const;
  const std::string& choice(const std::string& key) const;
  const Format& format(const std::string& key) const;
  /// The canonical text of a field.
  std::string text(const std::string& key) const;
  bool has(const std::string& key) const { return values.count(key) != 0; }

  /// An InputError whose message starts with "spec '<original>': ".
  [[noreturn]] void fail(const std::string& what) const;

  std::map<std::string, Value> values;
};

/// The longest spec accepted (every real family's canonical spec is a few hundred characters).
inline constexpr std::size_t kMaxSpecLength = 4096;

/// Parse a spec against a list of families (generate.cpp passes the registry). Messages quote at
/// most 120 characters of the spec and 60 of a field, control bytes as \xNN.
ParsedSpec parse_spec(const std::string& spec, const std::vector<GeneratorInfo>& families);

/// Canonical text of a real: the shortest decimal that reads back to the same double.
std::string canonical_real(double v);

}  // namespace fpcert
