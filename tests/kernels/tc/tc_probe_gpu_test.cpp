// tests/gpu/tc_probe_test.cpp — the tensor-core probe on the device: every instruction this device
// and binary can run gets a card whose fitted block model reproduces every probe answer and 10^7
// validation samples bit for bit; an instruction the device should have but the binary lacks fails.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "kernels/device/device_api.hpp"
#include "kernels/tc/probe.hpp"
#include "oracle/round.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;
using namespace fpcert::tc;

namespace {

/// Validation samples: 10^7 unless FPCERT_TC_SAMPLES says otherwise (a quicker look while developing).
std::uint64_t samples() {
  if (const char* s = std::getenv("FPCERT_TC_SAMPLES")) return std::strtoull(s, nullptr, 10);
  return 10'000'000;
}

}  // namespace

TEST_CASE("tc device: every A, B and C element reaches the instruction where the fragment tables put it") {
  // Element maps on f16 and tf32 (every id below 2^11 is exact in both, every sum here a single
  // product): A[r][k] = r K + k + 1 with B selecting column k of A into output column j; B[j][k] =
  // j K + k + 1 with A selecting row k; C[r][j] = r N + j + 1 with A = B = 0. A wrong id names the
  // element the instruction read instead. The fp8 and s8 kernels use the same 32-byte rows.
  for (const char* id : {"mma_f16_f32", "mma_tf32_f32", "wgmma_f16_f32", "wgmma_tf32_f32"}) {
    const InstructionSpec& s = *find_instruction(id);
    std::string why;
    auto insn = make_device_instruction(s, &why);
    if (!insn) {
      CHECK_MESSAGE(why.find("needs sm_") != std::string::npos, id, ": ", why);
      continue;
    }
    try {
      const int m = s.m, n = s.n, k = s.k;
      const auto code = [&](const Format& f, double v) { return static_cast<std::uint32_t>(to_container(f, round_double(f, v, Rounder::nearest(f)).code)); };
      const auto value = [&](std::uint32_t c) { return to_double(f32, c); };
      int bad = 0;
      // A: one MMA per group of n columns of K.
      for (int c0 = 0; c0 < k; c0 += n) {
        MmaBatch b{1, std::vector<std::uint32_t>(static_cast<std::size_t>(m * k)), std::vector<std::uint32_t>(static_cast<std::size_t>(n * k), 0),
                   std::vector<std::uint32_t>(static_cast<std::size_t>(m * n), 0)};
        for (int r = 0; r < m; ++r)
          for (int kk = 0; kk < k; ++kk) b.a[static_cast<std::size_t>(r * k + kk)] = code(*s.a, r * k + kk + 1);
        for (int j = 0; j < n && c0 + j < k; ++j) b.b[static_cast<std::size_t>(j * k + c0 + j)] = code(*s.b, 1.0);
        const auto d = insn->run(b);
        for (int r = 0; r < m; ++r)
          for (int j = 0; j < n && c0 + j < k; ++j) {
            const double got = value(d[static_cast<std::size_t>(r * n + j)]), want = r * k + c0 + j + 1;
            if (got != want && bad++ < 8)
              std::printf("%s: A[%d][%d] read as id %g (A[%d][%d])\n", id, r, c0 + j, got, static_cast<int>(got - 1) / k, static_cast<int>(got - 1) % k);
          }
      }
      {  // B: A selects row kk = r of B for r < k.
        MmaBatch b{1, std::vector<std::uint32_t>(static_cast<std::size_t>(m * k), 0), std::vector<std::uint32_t>(static_cast<std::size_t>(n * k)),
                   std::vector<std::uint32_t>(static_cast<std::size_t>(m * n), 0)};
        for (int j = 0; j < n; ++j)
          for (int kk = 0; kk < k; ++kk) b.b[static_cast<std::size_t>(j * k + kk)] = code(*s.b, j * k + kk + 1);
        for (int r = 0; r < k && r < m; ++r) b.a[static_cast<std::size_t>(r * k + r)] = code(*s.a, 1.0);
        const auto d = insn->run(b);
        for (int r = 0; r < k && r < m; ++r)
          for (int j = 0; j < n; ++j) {
            const double got = value(d[static_cast<std::size_t>(r * n + j)]), want = j * k + r + 1;
            if (got != want && bad++ < 16)
              std::printf("%s: B[k=%d][n=%d] read as id %g (B[k=%d][n=%d])\n", id, r, j, got, static_cast<int>(got - 1) % k, static_cast<int>(got - 1) / k);
          }
      }
      {  // C and D
        MmaBatch b{1, std::vector<std::uint32_t>(static_cast<std::size_t>(m * k), 0), std::vector<std::uint32_t>(static_cast<std::size_t>(n * k), 0),
                   std::vector<std::uint32_t>(static_cast<std::size_t>(m * n))};
        for (int i = 0; i < m * n; ++i) b.c[static_cast<std::size_t>(i)] = code(f32, i + 1);
        const auto d = insn->run(b);
        for (int i = 0; i < m * n; ++i)
          if (value(d[static_cast<std::size_t>(i)]) != i + 1 && bad++ < 24)
            std::printf("%s: D[%d][%d] holds C id %g\n", id, i / n, i % n, value(d[static_cast<std::size_t>(i)]));
      }
      CHECK_MESSAGE(bad == 0, id, ": ", bad, " elements misplaced");
    } catch (const std::exception& e) {
      FAIL_CHECK(id << ": " << e.what());
    }
  }
}

TEST_CASE("tc probe on the device: each instruction's card validates with zero disagreements") {
  int probed = 0;
  for (const InstructionSpec& s : all_instructions()) {
    std::string why;
    auto insn = make_device_instruction(s, &why);
    if (!insn) {
      std::printf("%-15s not supported here: %s\n", std::string(s.id).c_str(), why.c_str());
      // A not-supported instruction is never a pass: on an sm_90 device with this build's sm_90a code,
      // every instruction in the table must run.
      CHECK_MESSAGE(why.find("needs sm_") != std::string::npos, s.id, ": ", why);
      continue;
    }
    ProbeOptions opt;
    opt.samples = samples();
    opt.seed = test::seed();
    BehaviourCard card;
    try {
      card = probe_instruction(*insn, opt);
    } catch (const std::exception& e) {  // a device failure fails this instruction; the others still run
      FAIL_CHECK(s.id << ": " << e.what());
      continue;
    }
    ++probed;
    std::printf("%-15s %s: %d probe queries (%d not reproduced), %llu samples, %llu disagreements, %.1f s\n  %s\n", card.id.c_str(),
                card.passed() ? "VALIDATED" : "DISAGREES", card.probe_queries, card.probe_disagreements,
                static_cast<unsigned long long>(card.validated_samples()), static_cast<unsigned long long>(card.validation_disagreements()),
                card.seconds, card.summary.c_str());
    for (const auto& p : card.properties)
      if (p.disagree) std::printf("  %s: %d of %d not reproduced; observed %s\n", p.name.c_str(), p.disagree, p.queries, p.observed.c_str());
    for (const auto& d : card.disagreements)
      std::printf("  disagreement (%s): C 0x%x, instruction 0x%x, model 0x%x\n", d.distribution.c_str(), d.c, d.device, d.model);
    REQUIRE_FALSE(card.properties.empty());
    CHECK_MESSAGE(card.properties.front().disagree == 0, s.id, ": the operand layout check failed");
    CHECK(card.validated_samples() >= samples());
    // Every instruction validates, the FP8 mma.sync ones on Hopper too: the probe refits them as two f16
    // blocks dealt in runs of 2 with C added last (docs/tensor_cores.md, "FP8 mma.sync on Hopper").
    CHECK_MESSAGE(card.passed(), s.id, ": ", card.summary);
  }
  CHECK(probed > 0);
}
