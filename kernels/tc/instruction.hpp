// kernels/tc/instruction.hpp — one tensor-core instruction as the probe sees it: given blocks of A, B
// and C, one MMA of a known shape and formats returns D. The same interface is served by the real
// instruction on a GPU (kernels/tc/device.cu), by the block model with chosen parameters (the CPU
// tests), and by recorded device answers (kernels/tc/recording.hpp). No CUDA header here.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "oracle/format.hpp"

namespace fpcert::tc {

enum class Family : std::uint8_t { MmaSync, Wgmma };
std::string_view to_string(Family f);

/// The instructions `fpcert probe tensor-cores` knows. Operand A is row-major (K-major), B column-major
/// (K-major); C and D have the accumulator's format.
struct InstructionSpec {
  std::string_view id;    ///< short name for --instruction: mma_f16_f32, wgmma_e4m3_f16, ...
  std::string_view ptx;   ///< the PTX instruction, e.g. mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
  Family family = Family::MmaSync;
  const Format* a = nullptr;    ///< input format; nullptr for s8
  const Format* b = nullptr;
  const Format* acc = nullptr;  ///< f32 or f16; nullptr for s32
  int m = 0, n = 0, k = 0;
  int min_sm = 0;               ///< compute capability as 10 * major + minor
  bool arch_specific = false;   ///< needs the sm_90a ("a") code of the build (wgmma)

  bool integer() const { return a == nullptr; }
  /// Bytes of one A/B element and of one C/D element in device memory.
  int in_bytes() const;
  int acc_bytes() const;
  std::string a_tag() const;  ///< "f16", ..., "s8"
  std::string acc_tag() const;  ///< "f32", "f16", "s32"
};

std::span<const InstructionSpec> all_instructions();
/// By id or PTX spelling; nullptr when unknown.
const InstructionSpec* find_instruction(std::string_view name);
/// The instructions a library GEMM may run for these operand and accumulator formats on tensor cores,
/// '|'-separated ("mma_f16_f32|wgmma_f16_f32"; empty when none has those formats): a SummationOrder's
/// BlockModel::instruction (kernels/order.hpp).
std::string tc_instructions_for(const Format& operand, const Format& acc);
/// Every id, comma-separated (for messages).
std::string instruction_ids();

/// Independent MMAs of one instruction. For MMA t: A is m x k row-major at a[t*m*k], B is stored as n
/// columns of k (column j's codes contiguous) at b[t*n*k], C is m x n row-major at c[t*m*n]. Codes sit
/// in their containers (tf32: fp32 bit patterns; s8: the byte; s32: the word).
struct MmaBatch {
  int count = 0;
  std::vector<std::uint32_t> a, b, c;
};

class MmaInstruction {
 public:
  virtual ~MmaInstruction() = default;
  virtual const InstructionSpec& spec() const = 0;
  /// Where the answers come from, for the card ("NVIDIA H200 (sm_90)", "simulated: ...").
  virtual std::string origin() const = 0;
  /// D of every MMA of the batch (count x m x n codes, row-major per MMA). Throws DeviceError when the
  /// device fails, InputError for a malformed batch.
  virtual std::vector<std::uint32_t> run(const MmaBatch& batch) = 0;
};

/// The instruction on this machine's GPU. nullptr with the reason in *why when it cannot run here: a
/// build without CUDA, no device, a device older than min_sm, or a binary without code for it (the
/// sm_90a code for wgmma, sm_89 code for FP8 mma.sync). Throws DeviceError when the device fails.
std::unique_ptr<MmaInstruction> make_device_instruction(const InstructionSpec& spec, std::string* why);

/// Check a batch's sizes against the spec (InputError when wrong).
void check_batch(const InstructionSpec& spec, const MmaBatch& batch);

}  // namespace fpcert::tc
