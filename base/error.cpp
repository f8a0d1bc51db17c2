// base/error.cpp — names of the failure kinds.
#include "base/error.hpp"

namespace fpcert {

std::string_view to_string(FailureKind k) {
  switch (k) {
    case FailureKind::Crashed: return "crashed";
    case FailureKind::Hung: return "hung";
  }
  return "?";
}

}  // namespace fpcert
