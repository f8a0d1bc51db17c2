// suites/run/case_run.cpp — what every operation's case runner shares (suites/run/case_run.hpp).
#include "suites/run/case_run.hpp"

#include "base/error.hpp"
#include "generators/problem.hpp"
#include "kernels/device/device_api.hpp"
#include "kernels/kernel.hpp"
#include "oracle/round.hpp"

namespace fpcert {

std::uint64_t prefill_code(const Format& out) {
  switch (out.specials) {
    case Specials::IEEE: {
      const std::uint64_t quiet = std::uint64_t{1} << (out.frac_bits - 1);
      return out.inf_code() | quiet | (0x5A5A5A5A5A5A5A5AULL & (out.frac_mask() >> 1));
    }
    case Specials::FiniteNaN:
    case Specials::ScaleOnly: return out.canonical_nan_code();
    case Specials::FiniteOnly: return out.max_finite_code();
  }
  return 0;
}

bool run_kernel_guarded(CaseResult& r, const std::function<void()>& fn) {
  try {
    fn();
    return true;
  } catch (const NotSupportedError& e) {
    r.status = CaseStatus::NotSupported;
    r.reason = e.what();
  } catch (const DeviceError& e) {
    r.status = e.kind == FailureKind::Hung ? CaseStatus::Hung : CaseStatus::Crashed;
    r.reason = e.what();
  } catch (const InputError&) {
    throw;  // bad input is the user's, not the kernel's: exit 2
  } catch (const std::exception& e) {
    r.status = CaseStatus::Error;
    r.reason = std::string("kernel threw: ") + e.what();
  }
  return false;
}

std::string memory_mismatch(const Kernel& k, const DeviceApi& api) {
  if ((k.memory() == MemorySpace::Device) == api.is_device()) return {};
  return k.memory() == MemorySpace::Device ? "this kernel needs a CUDA device" : "host kernel given a device API";
}

CaseResult case_skeleton(const Kernel& k, std::string traits, const std::string& suite, const std::string& case_id,
                         const std::string& family, const Problem& p, const std::string& repro, const Format& out) {
  CaseResult r;
  r.suite = suite;
  r.case_id = case_id;
  r.family = family;
  r.kernel = k.name();
  r.kernel_traits = std::move(traits);
  r.backend = std::string(to_string(k.backend()));
  r.spec = p.spec;
  r.repro = repro;
  r.achieved = p.achieved;
  r.source_format = std::string(p.source->tag);
  r.out_format = std::string(out.tag);
  return r;
}

bool exact_codes(const std::vector<double>& values, const Format& in, std::vector<std::uint64_t>& codes) {
  codes.resize(values.size());
  const Rounder rn = Rounder::nearest(in);
  for (std::size_t e = 0; e < values.size(); ++e) {
    const Rounded q = round_double(in, values[e], rn);
    if (to_double(in, q.code) != values[e]) return false;
    codes[e] = q.code;
  }
  return true;
}

}  // namespace fpcert
