// reports/audit_text.hpp — the audit record (results/audit.hpp) as the terminal tables `fpcert audit` prints.
#pragma once

#include <string>

#include "results/audit.hpp"

namespace fpcert {

/// The declaration, the static findings, the false-alarm table (arithmetic | runs | rule failed | labels | worst
/// ratio | fpcert) with the flake rate, and the power table (mutant | rule passes? | fpcert refuses?).
std::string audit_text(const AuditRecord& r);

}  // namespace fpcert
