// kernels/tc/recording.hpp — recorded device answers: every probe query with its D, and a few
// validation tiles, in a small text file per instruction, so the probe logic can be replayed on a
// machine without a GPU (tests/data/tc/; docs/tensor_cores.md, "Recordings").
//
// Format (one record per line, codes in hex without 0x):
//   fpcert-tc-recording 1
//   instruction <id>
//   origin <where the answers came from>
//   seed <validation seed>
//   card <the recorded card's block model as one JSON line, or {"integer_wraps": bool}>
//   tiles-card <JSON>              optional: the block model the validation tiles' inputs were generated
//                                  with (the ties distribution depends on it) when it is not the card's:
//                                  a recording whose card was refitted by a later probe from the same answers
//   q <c> <d> <i>:<a>:<b> ...      a probe query: C, the answer D, then every position with a nonzero operand
//   t <distribution> <mma> <d...>  a validation tile: the first (up to 64) of its m x n D codes, row-major
//                                  (the inputs regenerate from the seed)
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/tc/probe.hpp"

namespace fpcert::tc {

class Recording {
 public:
  std::string instruction;  ///< the instruction's id
  std::string origin;
  std::uint64_t seed = 1;
  std::string card;  ///< one JSON line: the fitted block model at recording time
  std::string tiles_card;  ///< empty, or the block model the tiles' inputs were generated with (see the format)
  struct Dot {
    DotQuery q;
    std::uint32_t d = 0;
  };
  std::vector<Dot> dots;
  struct Tile {
    Distribution dist = Distribution::Uniform;
    std::uint64_t mma = 0;
    std::vector<std::uint32_t> d;
  };
  std::vector<Tile> tiles;

  /// Write atomically (InputError when the directory is not writable).
  void write(const std::string& path) const;
  /// Read and check against the instruction's shape; InputError with the line number when malformed.
  static Recording read(const std::string& path);
};

/// D codes kept per recorded validation tile (the first rows of the m x n tile): keeps a recording of
/// all instructions at a few hundred KB.
inline constexpr int kTileCodes = 64;

/// Append MMAs [0, tiles) of a validation batch (their first kTileCodes D codes) to the recording.
void record_tiles(Recording& rec, const InstructionSpec& spec, Distribution dist, const MmaBatch& batch, const std::vector<std::uint32_t>& d,
                  int tiles);

/// A DotSource that passes queries to `inner` and appends every query and answer to `rec`.
std::unique_ptr<DotSource> recording_dots(DotSource& inner, Recording& rec);
/// A DotSource answering from a recording; InputError for a query the recording does not hold (the
/// probe logic asked something the device was never asked).
std::unique_ptr<DotSource> replay_dots(const Recording& rec, const InstructionSpec& spec);

/// The recorded validation tiles against the card's fitted model (inputs regenerated from the seed and
/// the recording's tiles-card, else its card): fills card.validation and card.disagreements.
void replay_validation(BehaviourCard& card, const InstructionSpec& spec, const Recording& rec, int max_listed);

/// Path of the recording of `spec` in a directory: <dir>/<id>.tcrec.
std::string recording_path(const std::string& dir, const InstructionSpec& spec);

}  // namespace fpcert::tc
