// tests/gpu/tc_probe_test.cpp — the tensor-core probe on the device: every instruction this device
// and binary can run gets a card whose fitted block model reproduces every probe answer and 10^7
// validation samples bit for bit; an instruction the device should have but the binary lacks fails.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "kernels/tc/probe.hpp"
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
    const BehaviourCard card = probe_instruction(*insn, opt);
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
    CHECK_MESSAGE(card.passed(), s.id, ": ", card.summary);
  }
  CHECK(probed > 0);
}
