// oracle/decimal.hpp — exact decimal text of binary values, and decimal text into a format.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "oracle/format.hpp"
#include "oracle/round.hpp"

namespace fpcert {

/// The exact decimal expansion of a finite double (every binary value has one), e.g.
/// 1.00069999694824218750 for fp32(1.0007); "inf", "-inf", "nan" for the rest. Trailing zeros
/// trimmed; scientific notation when the expansion would be long (digits kept exact).
std::string exact_decimal(double x);

/// Shortest round-trip text of a double (for tables): %.17g trimmed.
std::string short_decimal(double x);

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
