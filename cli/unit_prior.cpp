// cli/unit_prior.cpp — the seconds each built-in unit of the main job took in one measured run: the claim order of a
// machine with no history of its own (docs/scale.md, "Fresh machines against warm ones").
#include <map>
#include <string>

#include "cli/scale.hpp"

namespace fpcert::cli {

namespace {

/// `fpcert certify --kernel cuda --suite certify --devices all:16`, the second run on a fresh H100 80GB HBM3 host (16
/// cores, 2026-12-07): each unit's cases and mutation campaign, in seconds of its worker (one thread each). Only the
/// order matters: units this table does not know are placed by the plan's estimate scaled to it.
const std::map<std::string, double>& measured() {
  static const std::map<std::string, double> m = {
      {"certify\tsimt_f32_epilogue_cuda", 68.4},
      {"certify\tsimt_bf16_epilogue_cuda", 63.6},
      {"certify\tgemm_f64_ozaki2_int8", 63.3},
      {"certify\tgemm_nvfp4_even_deqbf16_f32acc_mma_sm80", 38.5},
      {"certify\tgemm_nvfp4_even_deqbf16_f32acc_wgmma_sm90", 36.8},
      {"certify\tgemm_f64_dmma_sm80", 35.4},
      {"certify\tgemm_9xbf16_mma_sm80", 34.4},
      {"certify\tgemm_9xbf16_wgmma_sm90", 34.1},
      {"certify\tgemm_nvfp4_even_blocksum_f32acc_mma_sm80", 31.3},
      {"certify\tgemm_nvfp4_even_blocksum_f32acc_wgmma_sm90", 30.2},
      {"certify\tgemm_6xbf16_mma_sm80", 27.5},
      {"certify\tgemm_6xbf16_wgmma_sm90", 25.8},
      {"certify\tgemm_f32_splitk4_atomic", 22.1},
      {"certify\tgemm_mxfp6_e3m2_floor_deqbf16_f32acc_wgmma_sm90", 19.3},
      {"certify\tgemm_3xbf16_mma_sm80", 18.7},
      {"certify\tgemm_mxfp4_floor_deqbf16_f32acc_mma_sm80", 18.7},
      {"certify\tgemm_3xtf32_wgmma_sm90", 18.6},
      {"certify\tgemm_mxint8_floor_deqbf16_f32acc_mma_sm80", 17.9},
      {"certify\tgemm_mxfp8_e4m3_rceil_deqbf16_f32acc_wgmma_sm90", 17.4},
      {"certify\tgemm_mxfp6_e2m3_floor_deqbf16_f32acc_wgmma_sm90", 17.0},
      {"certify\tgemm_3xtf32_mma_sm80", 16.7},
      {"certify\tgemm_mxfp6_e3m2_floor_deqbf16_f32acc_mma_sm80", 16.3},
      {"certify\tgemm_bf16_on_f16_cast_wgmma_sm90", 15.9},
      {"certify\tgemm_bf16_on_f16_cast_mma_sm80", 15.8},
      {"certify\tgemm_mxfp8_e4m3_rceil_deqbf16_f32acc_mma_sm80", 15.5},
      {"certify\tgemm_mxfp6_e2m3_floor_deqbf16_f32acc_mma_sm80", 15.1},
      {"certify\tgemm_3xtf32rz_wgmma_sm90", 14.9},
      {"certify\tgemm_mxfp8_e4m3_floor_deqbf16_f32acc_wgmma_sm90", 14.6},
      {"certify\tgemm_mxfp8_e5m2_floor_deqbf16_f32acc_mma_sm80", 14.3},
      {"certify\tgemm_3xbf16_wgmma_sm90", 13.4},
      {"certify\tgemm_e4m3_f32acc_mma_sm89", 13.3},
      {"certify\tgemm_mxfp6_e2m3_floor_blocksum_f32acc_mma_sm80", 13.2},
      {"certify\tgemm_mxint8_floor_blocksum_f32acc_mma_sm80", 12.9},
      {"certify\tgemm_3xtf32rz_mma_sm80", 12.7},
      {"certify\tgemm_mxint8_floor_deqbf16_f32acc_wgmma_sm90", 12.3},
      {"certify\tgemm_mxfp4_floor_blocksum_f32acc_mma_sm80", 12.2},
      {"certify\tgemm_mxfp4_floor_deqbf16_f32acc_wgmma_sm90", 12.2},
      {"certify\tgemm_mxfp8_e4m3_floor_deqbf16_f32acc_mma_sm80", 11.5},
      {"certify\tgemm_mxfp6_e3m2_floor_blocksum_f32acc_mma_sm80", 11.4},
      {"certify\tgemm_e5m2_f32acc_mma_sm89", 10.9},
      {"certify\tgemm_mxfp8_e5m2_floor_deqbf16_f32acc_wgmma_sm90", 10.8},
      {"certify\tgemm_e5m2_f32acc_mma_sm89_promote128", 10.7},
      {"certify\tgemm_mxint8_floor_blocksum_f32acc_wgmma_sm90", 10.4},
      {"certify\tgemm_mxfp6_e3m2_floor_blocksum_f32acc_wgmma_sm90", 10.1},
      {"certify\tgemm_e4m3_f32acc_mma_sm89_promote128", 9.5},
      {"certify\tgemm_mxfp6_e2m3_floor_blocksum_f32acc_wgmma_sm90", 9.4},
      {"certify\tgemm_mxfp4_floor_blocksum_f32acc_wgmma_sm90", 9.3},
      {"certify\tgemm_tf32_f32acc_mma_sm80", 8.7},
      {"certify\tgemm_e5m2_f32acc_wgmma_sm90_promote128", 8.7},
      {"certify\tgemm_bf16_on_f16_kblock128_mma_sm80", 8.5},
      {"certify\tgemm_bf16_on_f16_kblock64_wgmma_sm90", 8.4},
      {"certify\tgemm_bf16_on_f16_rowcol_mma_sm80", 8.4},
      {"certify\tgemm_bf16_f32acc_wgmma_sm90", 8.3},
      {"certify\tgemm_bf16_on_f16_tensor_wgmma_sm90", 8.2},
      {"certify\tgemm_bf16_on_f16_rowcol_wgmma_sm90", 8.2},
      {"certify\tgemm_bf16_on_f16_kblock128_wgmma_sm90", 8.2},
      {"certify\tgemm_tf32_f32acc_wgmma_sm90", 8.0},
      {"certify\tgemm_bf16_on_f16_tensor_mma_sm80", 8.0},
      {"certify\tgemm_e5m2_f32acc_wgmma_sm90", 8.0},
      {"certify\tgemm_e4m3_f32acc_wgmma_sm90_promote128", 7.9},
      {"certify\tgemm_f16_f32acc_wgmma_sm90", 7.8},
      {"certify\tgemm_bf16_on_f16_kblock64_mma_sm80", 7.6},
      {"certify\tgemm_bf16_on_f16_auto_mma_sm80", 7.4},
      {"certify\tgemm_e4m3_f32acc_wgmma_sm90", 7.4},
      {"certify\tgemm_1xbf16_wgmma_sm90", 7.3},
      {"certify\tgemm_bf16_on_f16_outlier_wgmma_sm90", 7.3},
      {"certify\tgemm_1xbf16_mma_sm80", 7.2},
      {"certify\tgemm_bf16_on_f16_auto_wgmma_sm90", 7.1},
      {"certify\tgemm_f16_f16acc_tiled", 7.1},
      {"certify\tgemm_bf16_f32acc_mma_sm80", 7.1},
      {"certify\tgemm_bf16_on_f16_outlier_mma_sm80", 6.8},
      {"certify\tgemm_f32_tiled", 6.8},
      {"certify\tgemm_f16_f32acc_mma_sm80", 5.9},
      {"certify\tgemm_f16_f32acc_tiled", 5.1},
  };
  return m;
}

}  // namespace

std::map<std::string, double> with_built_in_prior(std::map<std::string, double> history, std::size_t* from_prior) {
  std::size_t n = 0;
  for (const auto& [key, seconds] : measured()) n += history.emplace(key, seconds).second;
  if (from_prior) *from_prior = n;
  return history;
}

}  // namespace fpcert::cli
