// suites/run/case_run.cpp — what every operation's case runner shares (suites/run/case_run.hpp).
#include "suites/run/case_run.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

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

std::string outside_domain(const KernelTraits& t, const Problem& p, std::string* span) {
  const InputDomain& d = t.domain;
  if (!d.restricted()) return {};
  struct Op {
    const Matrix* m;
    const Format* in;
    const Format* operand;
    const char* name;
    bool rows_are_lines;  // A (m x k): lines are rows, K runs along them; B (k x n): lines are columns
  };
  for (const Op& op : {Op{&p.a, t.a_input, t.a_operand, "A", true}, Op{&p.b, t.b_input, t.b_operand, "B", false}}) {
    const Rounder rr{t.input_rounding, default_saturation(*op.in), NanPayload::Preserve};
    const std::int64_t rows = op.m->rows, cols = op.m->cols;
    const std::int64_t lines = op.rows_are_lines ? rows : cols, klen = std::max<std::int64_t>(1, op.rows_are_lines ? cols : rows);
    const bool blocked = d.span_scope == SpanScope::KBlock;
    const std::int64_t blk = blocked ? std::max(1, d.kblock) : klen, nblk = (klen + blk - 1) / blk;
    const std::int64_t groups = d.span_scope == SpanScope::Tensor ? 1 : lines * nblk;
    std::vector<int> lo, hi;
    if (d.span_scope != SpanScope::None) {
      lo.assign(static_cast<std::size_t>(groups), std::numeric_limits<int>::max());
      hi.assign(static_cast<std::size_t>(groups), std::numeric_limits<int>::min());
    }
    double mx = 0;
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t c = 0; c < cols; ++c) {
        const double v = to_double(*op.in, round_double(*op.in, (*op.m)(r, c), rr).code);
        if (d.finite_only && !std::isfinite(v))
          return fmt::format("{}({}, {}) is {}: the kernel declares finite inputs only (its arithmetic is not defined on Inf "
                             "or NaN)", op.name, r, c, std::isnan(v) ? "NaN" : v > 0 ? "+Inf" : "-Inf");
        if (!std::isfinite(v) || v == 0) continue;
        mx = std::max(mx, std::fabs(v));
        if (d.span_scope == SpanScope::None) continue;
        const std::int64_t line = op.rows_are_lines ? r : c, kk = op.rows_are_lines ? c : r;
        const auto g = static_cast<std::size_t>(d.span_scope == SpanScope::Tensor ? 0 : line * nblk + kk / blk);
        const int e = std::ilogb(v);
        lo[g] = std::min(lo[g], e);
        hi[g] = std::max(hi[g], e);
      }
    if (d.operand_range) {
      const Rounded o = round_double(*op.operand, mx, Rounder{t.input_rounding, default_saturation(*op.operand), NanPayload::Preserve});
      if (o.flags & kOverflow)
        return fmt::format("{} reaches {:.4g}, beyond {}'s largest finite value {:.4g}: {}", op.name, mx, op.operand->tag,
                           op.operand->max_finite(), d.note);
    }
    for (std::int64_t g = 0; g < static_cast<std::int64_t>(lo.size()); ++g) {
      const auto gi = static_cast<std::size_t>(g);
      if (lo[gi] > hi[gi] || hi[gi] - lo[gi] <= d.max_span) continue;
      std::string where;
      if (d.span_scope == SpanScope::Tensor) where = fmt::format("the nonzero entries of {}", op.name);
      else {
        where = fmt::format("{} {} of {}", op.rows_are_lines ? "row" : "column", g / nblk, op.name);
        if (blocked) where += fmt::format(", K-block {} (k = {}..{})", g % nblk, (g % nblk) * blk, std::min(klen, (g % nblk + 1) * blk) - 1);
      }
      std::string why = fmt::format("{} {} {} binades (2^{} .. 2^{}), more than the kernel's domain allows ({}): {}", where,
                                    d.span_scope == SpanScope::Tensor ? "span" : "spans", hi[gi] - lo[gi], lo[gi], hi[gi], d.max_span, d.note);
      if (!span) return why;
      if (span->empty()) *span = std::move(why);
      break;
    }
  }
  return {};
}

}  // namespace fpcert
