// suites/experiments/fp8_accumulation.hpp — the FP8 accumulation experiment (docs/tensor_cores.md, "The FP8
// accumulation question"): do FP8 MMAs keep fewer accumulator bits, and does promotion every 128 products
// fix it? The e4m3 and e5m2 mma.sync GEMMs, with and without promotion, at K = 4096 on N(0, 1) inputs
// already in the FP8 format (so every error is the accumulation's): the error the device makes (measured)
// next to the error the installed behaviour card's model predicts for the same inputs (the kernel's
// declared K-loop composed with the card), whether the two outputs agree bit for bit, and fp32
// accumulation of the same products (one FMA per product) for scale.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fpcert {

struct Fp8AccRow {
  std::string kernel;
  std::string format;            ///< e4m3 or e5m2
  int promote_every = 0;
  std::string card;              ///< the card's block model in words, or why there is none
  int card_align_bits = -1, card_acc_bits = -1;  ///< the card's measured window and result bits (-1: no card)
  // Predicted: the card's model on the CPU (-1 when no card applies).
  double predicted_fro = -1, predicted_cw = -1;
  // Measured: the kernel on the device (-1 when it could not run).
  double measured_fro = -1, measured_cw = -1;
  std::string status;            ///< the runner's verdict of the case (or why it did not run)
  int agrees = -1;               ///< device output equal bit for bit to the card's prediction: 1, 0 (differs), -1 (not both)
  std::string agreement;         ///< the bitwise check's detail (how many elements differ, the first)
  // fp32 accumulation of the same products (round to nearest, one FMA per product), for scale.
  double fp32_fro = 0, fp32_cw = 0;
};

struct Fp8AccReport {
  std::int64_t m = 0, n = 0, k = 0;
  std::string device;            ///< the GPU, or "none (model side only)"
  std::vector<Fp8AccRow> rows;
};

/// The kernels the experiment runs, in its rows' order: per format (e4m3, e5m2), Hopper's two FP8 paths (mma.sync,
/// which runs on the f16 datapath there, and wgmma, native with 13-bit sums), each unpromoted then promoted every 128.
std::vector<std::string> fp8_accumulation_kernels();

/// Runs the experiment at M = N = mn and K = k with the installed behaviour cards (kernels/tc/cards.hpp);
/// device = false computes the predictions only.
Fp8AccReport fp8_accumulation_experiment(std::int64_t mn, std::int64_t k, bool device);

}  // namespace fpcert
