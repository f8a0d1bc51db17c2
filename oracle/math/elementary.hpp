// oracle/math/elementary.hpp — correctly rounded elementwise functions of fp32 inputs (issue 42's
// oracle), into f32, f16 or bf16 under every rounding mode of oracle/round.hpp. Ziv's method: a fast
// evaluation in double with a proved relative error bound (oracle/math/exp_kernel.hpp); when the bracket
// around it rounds to two values, MPFR decides. docs/elementwise.md states the method and the bounds.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "oracle/format.hpp"
#include "oracle/math/exp_kernel.hpp"
#include "oracle/math/expm1_log1p_kernel.hpp"
#include "oracle/math/fn.hpp"
#include "oracle/math/log_kernel.hpp"
#include "oracle/round.hpp"

namespace fpcert::math {

constexpr ExpKind exp_kind(Fn f) { return f == Fn::Exp ? ExpKind::Exp : f == Fn::Exp2 ? ExpKind::Exp2 : ExpKind::Exp10; }
constexpr LogKind log_kind(Fn f) { return f == Fn::Log ? LogKind::Log : f == Fn::Log2 ? LogKind::Log2 : LogKind::Log10; }
std::string_view to_string(Fn f);
std::optional<Fn> parse_fn(std::string_view s);

/// The tables of the exp family, computed with MPFR on first use (thread-safe).
const ExpTables& exp_tables();
/// The tables of the log family (oracle/math/log_kernel.hpp), computed with MPFR on first use (thread-safe).
const LogTables& log_tables();

struct MathResult {
  Rounded rounded;    ///< the code in the destination (flags as oracle/round.hpp states them)
  bool used_mpfr = false;  ///< the fast bracket was inconclusive (or the value exact): MPFR decided
};

/// Correctly rounded f(x) into d under r (rbits: stochastic rounding's random bits, as round_double).
/// `tables` defaults to exp_tables(); tests pass a corrupted copy to show the MPFR comparison catches it. `bracket`
/// <= 0: the function's own (kExpBracket, kLogBracket).
MathResult evaluate(Fn f, float x, const Format& d, const Rounder& r, std::uint32_t rbits = 0,
                    const ExpTables* tables = nullptr, double bracket = 0);

/// The fast path alone: the answer when the bracket rounds to one value, else nullopt. Special values
/// (NaN, Inf, 0, clamped overflow/underflow) are answered here too.
std::optional<Rounded> evaluate_fast(Fn f, float x, const Format& d, const Rounder& r, std::uint32_t rbits,
                                     const ExpTables& t, double bracket = 0);

/// MPFR alone (Ziv's loop on f computed by MPFR, rounded by mpfr_ref::round): the fall-back.
Rounded evaluate_mpfr(Fn f, float x, const Format& d, const Rounder& r, std::uint32_t rbits = 0);

}  // namespace fpcert::math
