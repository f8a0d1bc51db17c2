// oracle/exact_sum.cpp — ExactSum instantiated once here, so that a mistake in the template (oracle/exact_sum.hpp,
// header-only since the GPU runs the same code) is reported when this file compiles, not only where it is used.
#include "oracle/exact_sum.hpp"

namespace fpcert {

template class BasicExactSum<136, -2176>;

}  // namespace fpcert
