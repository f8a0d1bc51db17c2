// kernels/gemm/cpu/ozaki2.hpp — fpcert's Ozaki-II FP64 emulation on the host (docs/fp64.md, "The built-in Ozaki-II
// emulation"): the plan for N moduli, the exact host GEMM through INT8 residues (the CUDA kernel's bitwise emulation),
// the scheme's deterministic per-element bound, and the models model_gemm_f64_ozaki2 and its short-moduli mutant.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/gemm/cpu/ozaki2_arith.hpp"
#include "kernels/kernel.hpp"

namespace fpcert {

class ExactGemmEngine;  // oracle/gemm_engine.hpp

namespace ozaki2 {

/// The moduli in the order they are used: pairwise coprime, at most 256, the largest first (the list GEMMul8 uses for
/// its INT8 backend): 256 = 2^8, 255 = 3 5 17, 253 = 11 23, 247 = 13 19, 217 = 7 31, the others prime.
inline constexpr int kModuliTable[kMaxModuli] = {256, 255, 253, 251, 247, 241, 239, 233, 229, 227,
                                                  223, 217, 211, 199, 197, 193, 191, 181, 179, 173};
/// The plan of N moduli (kMinModuli..kMaxModuli; InputError otherwise), K blocks of `kblock` (1..kMaxKBlock).
Plan make_plan(int n, std::int64_t kblock = kMaxKBlock);

/// The scalings the scheme chose for one product: alpha and the exponents s_i (rows of A), t_j (columns of B).
struct Scaling {
  int alpha = 0;
  std::vector<int> s, t;
};
Scaling choose_scaling(const Plan& pl, const double* a, const double* b, std::int64_t m, std::int64_t n, std::int64_t k);

/// The host's own route to the scheme's integers (kernels/gemm/cpu/ozaki2.cpp): residues of a whole value for every
/// modulus at once from its significand's 20-bit pieces, and the reconstruction as the CRT sum sum_l r_l w_l mod P with
/// w_l = (P / m_l) ((P / m_l)^-1 mod m_l), not the kernel's Garner digits (ozaki2_arith.hpp): the bitwise tier then
/// compares two derivations of one integer, and the host emulation runs ~4x faster. tests/kernels/gemm/ozaki2_test.cpp
/// holds both to GMP.
inline constexpr int kPow2Table = 64;  ///< exponents e < 64 of v = M 2^e (M < 2^53): integer-valued doubles below 2^116
struct HostPlan {
  Plan pl;
  std::uint64_t fastmod[kMaxModuli] = {};                     ///< 2^64 / m_l rounded up: x mod m_l for x < 2^32
  std::uint32_t pow2[kMaxModuli][kPow2Table + 40] = {};       ///< 2^e mod m_l
  std::uint32_t w[kMaxModuli][kLimbs] = {};                   ///< the CRT weights, little-endian limbs
  double p_approx = 0;                                        ///< P as a double (the quotient's estimate)
};
HostPlan make_host_plan(const Plan& pl);
/// r[l] = v mod m_l in the symmetric form of ozaki2_arith.hpp's symmetric_residue, for every modulus of the plan; v an
/// integer-valued double below 2^116 (std::logic_error otherwise).
void host_residues(const HostPlan& h, double v, std::int8_t* r);
/// The integer T with T = r_l (mod m_l), -P/2 <= T < P/2, as sign and magnitude: what reconstruct gives.
void host_reconstruct(const HostPlan& h, const int* r, std::uint32_t* mag, bool& neg);

/// C = A B by the scheme (A row-major m x k, B row-major k x n), row-major m x n doubles. Finite inputs are the domain;
/// an element whose row of A or column of B holds Inf or NaN is NaN (the scheme has no residues for them). Route::Host
/// (the bitwise tier's and the CPU model's) takes host_residues and host_reconstruct; Route::Kernel the kernel's own
/// symmetric_residue and Garner reconstruct (tests and bench/ozaki2.cpp compare the two). `engine` (may be null): the
/// residue GEMMs (step 3) on it where it takes them (ExactGemmEngine::residue_gemms; the bitwise tier passes the process
/// default, a GPU from 2^27 products): exact integers, so the same residues, and C, as the host's loop bit for bit.
enum class Route { Host, Kernel };
std::vector<double> gemm(const Plan& pl, const double* a, const double* b, std::int64_t m, std::int64_t n, std::int64_t k,
                         Scaling* used = nullptr, Route route = Route::Host, ExactGemmEngine* engine = nullptr);

/// The deterministic bound of every element (docs/fp64.md, "The bound"): with d_a = 2^-(s_i+1), d_b = 2^-(t_j+1) (half
/// a unit of each scaled operand's rounding, unscaled),
///   E_ij = d_a sum_k |b_kj| + d_b sum_k |a_ik| + K_ij d_a d_b       (the operands' rounding to integers)
///   |c_ij - C_ij| <= E_ij (1 + 2^-53) + 2^-53 |c_ij| + 2^-1074        (and the one final rounding: 2^-1075 below 2^-1022,
///                                                                     rounded up to a double)
/// K_ij = the k with a_ik b_kj != 0. Computed in double and enlarged by bound_slack(K) to cover its own roundings (and by
/// 2^-1072 for the subnormal ones and the final rounding's 2^-1075 below 2^-1022). The rows and columns are the kernel's
/// inputs; the check of kind scheme_bound (suites/verdict/scheme_bound.hpp) holds a kernel to it.
/// 1 + max(2^-40, (K + 8) 2^-52): each sum of K terms falls short of its exact value by at most (K - 1) 2^-53 of it, and
/// the terms after it add a few roundings more (2^-40 alone covered K below about 2^12 only).
inline double bound_slack(std::int64_t k) { return 1 + std::max(0x1p-40, static_cast<double>(k + 8) * 0x1p-52); }
std::vector<double> bound(const Scaling& sc, const double* a, const double* b, const std::vector<double>& exact_abs,
                          std::int64_t m, std::int64_t n, std::int64_t k);
/// The bound's terms in words for one element (i, j), e.g. for a report line.
std::string bound_terms(const Scaling& sc, const double* a, const double* b, std::int64_t m, std::int64_t n, std::int64_t k,
                        std::int64_t i, std::int64_t j);

/// The correct bits (suites/verdict/correct_bits.hpp: 53 - bit_width(ulps from RN(exact))) that a bound guarantees for an
/// element whose correctly rounded value is `rn`: the result lies within bound + half an ulp of rn, so at most
/// floor((bound + ulp / 2) / ulp) ulps away, ulp that of the finer side of rn's binade (0 if that reaches 2^53 ulps).
int guaranteed_bits(double bound, double rn);

/// The largest binade span S of a row of A or column of B for which the scheme provably meets fp64 GEMM's envelope
/// (gamma_K(2^-53) sum |a b| + the underflow terms) at every K >= 1 (docs/fp64.md, "What it claims"): -1 if none.
int fp64_span_domain(const Plan& pl);

}  // namespace ozaki2

/// Registers model_gemm_f64_ozaki2 (20 moduli) and the mutant model_gemm_f64_ozaki2_short (10 moduli, declared as
/// the 20-moduli model: certify must refuse it). Called from kernels/register.cpp.
void register_ozaki2_models();
/// kernels/gemm/cuda/ozaki2.cu (CUDA builds): gemm_f64_ozaki2_int8, the same arithmetic on INT8 tensor cores.
void register_ozaki2_cuda_kernels();
/// The device kernel with N moduli (named gemm_f64_ozaki2_int8 for 20, gemm_f64_ozaki2_int8_nN otherwise), for the
/// moduli sweep of bench/ozaki2.cpp. Without CUDA: DeviceError.
std::unique_ptr<GemmKernel> make_ozaki2_int8_kernel(int n);
/// A model of N moduli (and K blocks of kblock), named as given, declaring the claims of `declared_n` moduli.
std::unique_ptr<GemmKernel> make_ozaki2_model(std::string name, int n, int declared_n, std::int64_t kblock = ozaki2::kMaxKBlock);
/// The input domain of the scheme with N moduli (fp64 GEMM): finite inputs; lines of A and B spanning more binades than
/// its moduli keep within fp64's envelope graded by the scheme's own bound. A plugin kernel declaring the order
/// ozaki2:moduli=N gets it too (plugin/loader.cpp).
InputDomain ozaki2_domain(int n);
/// The traits of an Ozaki-II kernel of N moduli (CPU model and CUDA kernel alike).
KernelTraits ozaki2_traits(int n);

}  // namespace fpcert
