// kernels/tc/instruction.cpp — the table of tensor-core instructions the probe knows; the device
// factory when the build has no CUDA.
#include "kernels/tc/instruction.hpp"

#include <array>

#include "base/error.hpp"

namespace fpcert::tc {
namespace {

using F = Family;
// PTX ISA, "Warp-level matrix multiply-accumulate instructions" (mma: f16/bf16 m16n8k16 and tf32
// m16n8k8 from sm_80; e4m3/e5m2 m16n8k32 from sm_89, their .f16 accumulator from PTX ISA 8.7; s8
// m16n8k32 from sm_80) and "Asynchronous warpgroup level matrix multiply-accumulate" (wgmma, sm_90a:
// m64nNk16 f16/bf16, m64nNk8 tf32, m64nNk32 e4m3/e5m2; N = 8 here).
constexpr std::array kInstructions{
    InstructionSpec{"mma_f16_f32", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", F::MmaSync, &f16, &f16, &f32, 16, 8, 16, 80, false},
    InstructionSpec{"mma_f16_f16", "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16", F::MmaSync, &f16, &f16, &f16, 16, 8, 16, 80, false},
    InstructionSpec{"mma_bf16_f32", "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", F::MmaSync, &bf16, &bf16, &f32, 16, 8, 16, 80, false},
    InstructionSpec{"mma_tf32_f32", "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", F::MmaSync, &tf32, &tf32, &f32, 16, 8, 8, 80, false},
    InstructionSpec{"mma_e4m3_f32", "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32", F::MmaSync, &e4m3, &e4m3, &f32, 16, 8, 32, 89, false},
    InstructionSpec{"mma_e4m3_f16", "mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16", F::MmaSync, &e4m3, &e4m3, &f16, 16, 8, 32, 89, false},
    InstructionSpec{"mma_e5m2_f32", "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32", F::MmaSync, &e5m2, &e5m2, &f32, 16, 8, 32, 89, false},
    InstructionSpec{"mma_e5m2_f16", "mma.sync.aligned.m16n8k32.row.col.f16.e5m2.e5m2.f16", F::MmaSync, &e5m2, &e5m2, &f16, 16, 8, 32, 89, false},
    InstructionSpec{"mma_s8_s32", "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32", F::MmaSync, nullptr, nullptr, nullptr, 16, 8, 32, 80, false},
    InstructionSpec{"wgmma_f16_f32", "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16", F::Wgmma, &f16, &f16, &f32, 64, 8, 16, 90, true},
    InstructionSpec{"wgmma_f16_f16", "wgmma.mma_async.sync.aligned.m64n8k16.f16.f16.f16", F::Wgmma, &f16, &f16, &f16, 64, 8, 16, 90, true},
    InstructionSpec{"wgmma_bf16_f32", "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16", F::Wgmma, &bf16, &bf16, &f32, 64, 8, 16, 90, true},
    InstructionSpec{"wgmma_tf32_f32", "wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32", F::Wgmma, &tf32, &tf32, &f32, 64, 8, 8, 90, true},
    InstructionSpec{"wgmma_e4m3_f32", "wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3", F::Wgmma, &e4m3, &e4m3, &f32, 64, 8, 32, 90, true},
    InstructionSpec{"wgmma_e4m3_f16", "wgmma.mma_async.sync.aligned.m64n8k32.f16.e4m3.e4m3", F::Wgmma, &e4m3, &e4m3, &f16, 64, 8, 32, 90, true},
    InstructionSpec{"wgmma_e5m2_f32", "wgmma.mma_async.sync.aligned.m64n8k32.f32.e5m2.e5m2", F::Wgmma, &e5m2, &e5m2, &f32, 64, 8, 32, 90, true},
    InstructionSpec{"wgmma_e5m2_f16", "wgmma.mma_async.sync.aligned.m64n8k32.f16.e5m2.e5m2", F::Wgmma, &e5m2, &e5m2, &f16, 64, 8, 32, 90, true},
    InstructionSpec{"wgmma_s8_s32", "wgmma.mma_async.sync.aligned.m64n8k32.s32.s8.s8", F::Wgmma, nullptr, nullptr, nullptr, 64, 8, 32, 90, true},
};

}  // namespace

std::string_view to_string(Family f) { return f == Family::MmaSync ? "mma.sync" : "wgmma"; }

int InstructionSpec::in_bytes() const { return a ? (a->container_bits + 7) / 8 : 1; }
int InstructionSpec::acc_bytes() const { return acc ? (acc->container_bits + 7) / 8 : 4; }
std::string InstructionSpec::a_tag() const { return a ? std::string(a->tag) : "s8"; }
std::string InstructionSpec::acc_tag() const { return acc ? std::string(acc->tag) : "s32"; }

std::span<const InstructionSpec> all_instructions() { return kInstructions; }

const InstructionSpec* find_instruction(std::string_view name) {
  for (const auto& s : kInstructions)
    if (s.id == name || s.ptx == name) return &s;
  return nullptr;
}

std::string tc_instructions_for(const Format& operand, const Format& acc) {
  std::string out;
  for (const InstructionSpec& s : all_instructions())
    if (!s.integer() && *s.a == operand && *s.acc == acc) out += (out.empty() ? "" : "|") + std::string(s.id);
  return out;
}

std::string instruction_ids() {
  std::string s;
  for (const auto& x : kInstructions) {
    if (!s.empty()) s += ", ";
    s += x.id;
  }
  return s;
}

void check_batch(const InstructionSpec& spec, const MmaBatch& batch) {
  const auto n = static_cast<std::size_t>(batch.count);
  if (batch.count < 0 || batch.a.size() != n * spec.m * spec.k || batch.b.size() != n * spec.n * spec.k ||
      batch.c.size() != n * spec.m * spec.n)
    throw InputError("MMA batch sizes do not match " + std::string(spec.id) + " x " + std::to_string(batch.count));
}

#if !defined(FPCERT_HAVE_CUDA)
std::unique_ptr<MmaInstruction> make_device_instruction(const InstructionSpec&, std::string* why) {
  if (why) *why = "this fpcert was built without CUDA (no nvcc at configure time, or FPCERT_CUDA=OFF)";
  return nullptr;
}
#endif

}  // namespace fpcert::tc
