// suites/audit/batch_invariance.cpp — batch invariance and reproducibility checks (batch_invariance.hpp).
#include "suites/audit/batch_invariance.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "base/codes.hpp"
#include "base/error.hpp"
#include "oracle/round.hpp"

namespace fpcert {
namespace {

std::vector<std::uint8_t> encode(const std::vector<double>& v, const Format& f) {
  const int b = container_bytes(f);
  std::vector<std::uint8_t> out(v.size() * static_cast<std::size_t>(b));
  const Rounder rn = Rounder::nearest(f);
  for (std::size_t i = 0; i < v.size(); ++i) store_code(out.data(), static_cast<std::int64_t>(i), b, to_container(f, round_double(f, v[i], rn).code));
  return out;
}

std::string hex(const Format& f, std::uint64_t code) { return fmt::format("{:a} (0x{:x})", to_double(f, code), code); }

}  // namespace

std::vector<std::uint64_t> run_host_gemm(GemmKernel& kernel, std::int64_t m, std::int64_t n, std::int64_t k, const std::vector<double>& a,
                                         const std::vector<double>& b, std::string* why) {
  const KernelTraits& t = kernel.traits();
  if (kernel.memory() != MemorySpace::Host) throw InputError("batch invariance: kernel '" + kernel.name() + "' is not a host kernel");
  const Support s = kernel.can_implement(m, n, k);
  if (!s.ok) {
    if (why) *why = s.reason;
    return {};
  }
  const auto da = encode(a, *t.a_input), db = encode(b, *t.b_input);
  const int cb = container_bytes(*t.out);
  std::vector<std::uint8_t> dc(static_cast<std::size_t>(m * n * cb), 0xFF);
  GemmOperands ops;
  ops.m = m, ops.n = n, ops.k = k;
  ops.a = da.data(), ops.lda = k;
  ops.b = db.data(), ops.ldb = n;
  ops.c = dc.data(), ops.ldc = n;
  kernel.run(ops);
  std::vector<std::uint64_t> c(static_cast<std::size_t>(m * n));
  for (std::size_t x = 0; x < c.size(); ++x) c[x] = from_container(*t.out, load_code(dc.data(), static_cast<std::int64_t>(x), cb));
  return c;
}

void check_batch_invariance(const std::function<std::unique_ptr<GemmKernel>()>& make, std::int64_t a_rows, std::int64_t n, std::int64_t k,
                            const std::vector<double>& a, const std::vector<double>& b, const std::vector<std::int64_t>& probes,
                            const std::vector<std::int64_t>& sizes, AuditRecord& out) {
  const auto row = [&](std::int64_t i) { return a.begin() + i * k; };
  // Each probe alone: the result every batch must reproduce.
  std::vector<std::vector<std::uint64_t>> solo;
  for (std::int64_t p : probes) {
    auto kernel = make();
    std::string why;
    solo.push_back(run_host_gemm(*kernel, 1, n, k, std::vector<double>(row(p), row(p) + k), b, &why));
    if (solo.back().empty()) throw InputError(fmt::format("batch invariance: the kernel declines M = 1: {}", why));
  }
  const Format& of = *make()->traits().out;
  for (std::int64_t m : sizes) {
    AuditBatchRow r;
    r.batch = m;
    // The probes' positions: first, last, middle (distinct ones only).
    std::vector<std::int64_t> pos;
    for (std::int64_t q : {std::int64_t{0}, m - 1, m / 2})
      if (pos.size() < probes.size() && std::find(pos.begin(), pos.end(), q) == pos.end()) pos.push_back(q);
    std::vector<std::int64_t> src(static_cast<std::size_t>(m));
    for (std::int64_t i = 0; i < m; ++i) src[static_cast<std::size_t>(i)] = i % a_rows;  // A's rows in turn
    for (std::size_t j = 0; j < pos.size(); ++j) src[static_cast<std::size_t>(pos[j])] = probes[j];
    std::vector<double> am;
    am.reserve(static_cast<std::size_t>(m * k));
    for (std::int64_t i : src) am.insert(am.end(), row(i), row(i) + k);
    auto kernel = make();
    std::string why;
    const auto c = run_host_gemm(*kernel, m, n, k, am, b, &why);
    if (c.empty()) {
      r.first = "not supported: " + why;
      out.batch_rows.push_back(r);
      continue;
    }
    for (std::size_t j = 0; j < pos.size(); ++j) {
      ++r.probes;
      const std::vector<std::uint64_t>& s = solo[j];
      for (std::int64_t col = 0; col < n; ++col) {
        const std::uint64_t got = c[static_cast<std::size_t>(pos[j] * n + col)], want = s[static_cast<std::size_t>(col)];
        if (got == want) continue;
        ++r.differ;
        if (r.first.empty())
          r.first = fmt::format("row {} of A at position {} of M = {}: C[{}, {}] = {}, at M = 1 {}", probes[j], pos[j], m, pos[j], col,
                                hex(of, got), hex(of, want));
        break;
      }
    }
    out.batch_rows.push_back(r);
  }
}

void check_reproducible(GemmKernel& kernel, std::int64_t m, std::int64_t n, std::int64_t k, const std::vector<double>& a,
                        const std::vector<double>& b, int runs, AuditRecord& out) {
  const auto first = run_host_gemm(kernel, m, n, k, a, b);
  out.repro_runs = first.empty() ? 0 : 1;
  out.reproducible = true;
  for (int r = 1; r < runs && !first.empty(); ++r) {
    const auto again = run_host_gemm(kernel, m, n, k, a, b);
    ++out.repro_runs;
    for (std::size_t x = 0; x < first.size() && out.reproducible; ++x)
      if (again[x] != first[x]) {
        out.reproducible = false;
        out.repro_first = fmt::format("run {} of {}: C[{}, {}] = {}, run 1 {}", r + 1, runs, static_cast<std::int64_t>(x) / n,
                                      static_cast<std::int64_t>(x) % n, hex(*kernel.traits().out, again[x]), hex(*kernel.traits().out, first[x]));
      }
  }
}

}  // namespace fpcert
