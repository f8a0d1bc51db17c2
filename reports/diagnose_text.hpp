// reports/diagnose_text.hpp — a diagnosis record as terminal text (docs/diagnose.md): the verdict, then the ranked
// hypotheses with their share of elements bit for bit, their envelope and residual, then the unexplained elements.
#pragma once

#include <string>

#include "results/diagnosis.hpp"

namespace fpcert {

std::string diagnosis_text(const DiagnosisRecord& r);

}  // namespace fpcert
