// suites/audit/audit_rows.hpp — the row operations' declarations as `fpcert audit --traits` takes them when no kernel is
// at hand (docs/audit.md, "Softmax" and "Normalisation"): a softmax or log-softmax, a LayerNorm or RMSNorm declared by
// its arithmetic, and the host kernels that compute a declaration (the audit's stand-in for the kernel, and its
// black-box mutants).
#pragma once

#include <memory>
#include <string>

#include "kernels/norm/norm_kernel.hpp"
#include "kernels/softmax/softmax_kernel.hpp"

namespace fpcert {

/// A softmax declared by a spec of comma-separated key=value pairs (each key once; unknown keys and values refused):
///   fn=softmax|log_softmax (default softmax), in=f32|f16|bf16 (the logits' format, default f32), compute=f32,
///   exp=libm|expf|__expf|expf_ops|cr|ulps:N (default libm), log=libm|logf|cr|ulps:N (default libm), sum=FMT (the row
///   sum's accumulator, default f32), order=sequential|pairwise|blocked:B|warp_tree|unknown (default unknown),
///   shift=shifted|online|unshifted (default shifted), block=B (online: columns per running-max update, default 32),
///   reciprocal=0|1, out=FMT (default in), masked_rows=zero|nan (default zero). Throws InputError.
SoftmaxTraits parse_softmax_audit_traits(const std::string& spec);

/// A LayerNorm (kind LayerNorm) or RMSNorm declared by a spec: in=f32|f16|bf16 (x, gamma and beta; default f32),
/// compute=f32, acc=FMT (the row sums, default f32), variance=two_pass|welford|one_pass|welford_combined (LayerNorm;
/// default two_pass), parts=P (welford_combined: the parts, default 32), rsqrt=ULPS (default 1), out=FMT (default in).
/// Throws InputError.
NormTraits parse_norm_audit_traits(const std::string& spec, NormKind kind);

}  // namespace fpcert
