// base/decimal.hpp — exact decimal text of binary values (GMP), and their shortest round-trip text.
#pragma once

#include <string>
#include <string_view>

namespace fpcert {

/// The exact decimal expansion of a finite double (every binary value has one), e.g.
/// 1.00069999694824218750 for fp32(1.0007); "inf", "-inf", "nan" for the rest. Trailing zeros
/// trimmed; scientific notation when the expansion would be long (digits kept exact).
std::string exact_decimal(double x);

/// Shortest round-trip text of a double (for tables): %.17g trimmed.
std::string short_decimal(double x);

}  // namespace fpcert
