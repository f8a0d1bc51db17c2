// suites/audit/batch_invariance.hpp — batch invariance and run-to-run reproducibility of a host GEMM kernel, bit for
// bit (docs/audit.md, "Batch invariance and reproducibility"): probe rows embedded in batches of several sizes and
// positions against their M = 1 result; repeated runs of one call against the first.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kernels/kernel.hpp"
#include "results/audit.hpp"

namespace fpcert {

/// The batch sizes M the check embeds each probe row in (besides M = 1, each probe's own result).
inline const std::vector<std::int64_t> kBatchSizes = {2, 3, 7, 64, 257};

/// A host GEMM kernel's C as codes of its output format, row-major m x n, from A (m x k) and B (k x n) given as values
/// already representable in its input formats. Empty when the kernel declines the shape (can_implement); `why` says why.
std::vector<std::uint64_t> run_host_gemm(GemmKernel& kernel, std::int64_t m, std::int64_t n, std::int64_t k, const std::vector<double>& a,
                                         const std::vector<double>& b, std::string* why = nullptr);

/// Batch invariance: each probe row of A (a_rows x k, values in the kernel's input format) run alone (M = 1), then
/// embedded in a batch of each size of `sizes` (the other rows are A's rows in turn) at the first, the last and the
/// middle position (probe 0, 1, 2 in that order), each probe row of C compared bit for bit with its M = 1 result.
/// The rows of `out` (one per size) and the first difference in words.
void check_batch_invariance(const std::function<std::unique_ptr<GemmKernel>()>& make, std::int64_t a_rows, std::int64_t n, std::int64_t k,
                            const std::vector<double>& a, const std::vector<double>& b, const std::vector<std::int64_t>& probes,
                            const std::vector<std::int64_t>& sizes, AuditRecord& out);

/// Reproducibility: `runs` calls of one kernel instance on the same inputs (m x k, k x n), each compared bit for bit
/// with the first; fills out.repro_runs, out.reproducible, out.repro_first.
void check_reproducible(GemmKernel& kernel, std::int64_t m, std::int64_t n, std::int64_t k, const std::vector<double>& a,
                        const std::vector<double>& b, int runs, AuditRecord& out);

}  // namespace fpcert
