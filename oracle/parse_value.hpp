// oracle/parse_value.hpp — decimal or hex-float text, and bit patterns, into a format (MPFR).
#pragma once

#include <cstdint>
#include <string_view>

#include "oracle/format.hpp"
#include "oracle/round.hpp"

namespace fpcert {

struct ParsedValue {
  std::uint64_t code = 0;  ///< the value in the requested format
  bool exact = true;       ///< the text was exactly representable in the format
};

/// Correct rounding (nearest-even, with the format's default saturation) of decimal or hex-float
/// text, "inf", "-inf" or "nan", into format f. Throws InputError on malformed text.
ParsedValue parse_value(const Format& f, std::string_view text);

/// Parse a bit pattern given as 0x... (container layout) for format f. Throws InputError when it
/// is malformed or does not fit.
std::uint64_t parse_bits(const Format& f, std::string_view text);

}  // namespace fpcert
