// tests/support/gemm_call.hpp — one call of a GEMM kernel on buffers of its memory space, for tests that
// compare kernels on hand-made inputs (the fault injectors' tests on the host and on the device).
#pragma once

#include <mpfr.h>

#include <cstdint>
#include <vector>

#include "base/codes.hpp"
#include "kernels/device/device_api.hpp"
#include "kernels/kernel.hpp"
#include "tests/support/problems.hpp"

namespace fpcert::test {

/// Row-major exact values of A (m x k) and B (k x n).
struct GemmInputs {
  std::int64_t m = 0, n = 0, k = 0;
  std::vector<double> a, b;
  double& A(std::int64_t i, std::int64_t p) { return a[static_cast<std::size_t>(i * k + p)]; }
  double& B(std::int64_t p, std::int64_t j) { return b[static_cast<std::size_t>(p * n + j)]; }
  double A(std::int64_t i, std::int64_t p) const { return a[static_cast<std::size_t>(i * k + p)]; }
  double B(std::int64_t p, std::int64_t j) const { return b[static_cast<std::size_t>(p * n + j)]; }
};

/// Uniform [-1, 1) inputs rounded to `source` (tests/support/problems.hpp).
inline GemmInputs uniform_gemm_inputs(std::int64_t m, std::int64_t n, std::int64_t k, const Format& source, std::uint64_t seed) {
  const Problem p = uniform_problem(m, n, k, source, seed);
  return {m, n, k, p.a.data, p.b.data};
}

/// x + y (doubles) correctly rounded by MPFR to `prec` bits in mode `rnd`: an accumulation step of a
/// format of that precision, within its normal range (fp32: 24, bf16: 8), independent of fpcert's rounding.
inline double mpfr_sum(double x, double y, mpfr_prec_t prec, mpfr_rnd_t rnd) {
  mpfr_t a, b, s;
  mpfr_inits2(200, a, b, static_cast<mpfr_ptr>(nullptr));
  mpfr_init2(s, prec);
  mpfr_set_d(a, x, MPFR_RNDN);
  mpfr_set_d(b, y, MPFR_RNDN);
  mpfr_add(s, a, b, rnd);
  const double r = mpfr_get_d(s, MPFR_RNDN);
  mpfr_clears(a, b, s, static_cast<mpfr_ptr>(nullptr));
  return r;
}

/// One call of `kern` through `api`: A with leading dimension lda (0: k; its padding holds 0.75), B packed,
/// C with ldc = n + 3, all in the kernel's memory space. Returns C's codes row-major m x n; `a_after`
/// receives A's buffer (its container bytes) after the call.
inline std::vector<std::uint64_t> gemm_call(GemmKernel& kern, DeviceApi& api, const GemmInputs& in, std::int64_t lda = 0,
                                            std::vector<std::uint8_t>* a_after = nullptr) {
  const KernelTraits& t = kern.traits();
  if (lda == 0) lda = in.k;
  const int ab = container_bytes(*t.a_input), bb = container_bytes(*t.b_input), cb = container_bytes(*t.out);
  const Rounder ra{t.input_rounding, default_saturation(*t.a_input), NanPayload::Preserve};
  const Rounder rb{t.input_rounding, default_saturation(*t.b_input), NanPayload::Preserve};
  std::vector<std::uint8_t> a(static_cast<std::size_t>(std::max<std::int64_t>(1, in.m * lda) * ab));
  std::vector<std::uint8_t> b(static_cast<std::size_t>(std::max<std::int64_t>(1, in.k * in.n) * bb));
  const std::uint64_t pad = to_container(*t.a_input, round_double(*t.a_input, 0.75, ra).code);
  for (std::int64_t x = 0; x < in.m * lda; ++x) store_code(a.data(), x, ab, pad);
  for (std::int64_t i = 0; i < in.m; ++i)
    for (std::int64_t p = 0; p < in.k; ++p)
      store_code(a.data(), i * lda + p, ab, to_container(*t.a_input, round_double(*t.a_input, in.A(i, p), ra).code));
  for (std::int64_t x = 0; x < in.k * in.n; ++x)
    store_code(b.data(), x, bb, to_container(*t.b_input, round_double(*t.b_input, in.b[static_cast<std::size_t>(x)], rb).code));
  const std::int64_t ldc = in.n + 3;
  std::vector<std::uint8_t> c(static_cast<std::size_t>(std::max<std::int64_t>(1, in.m * ldc) * cb), 0xA5);
  void* da = api.alloc(a.size());
  void* db = api.alloc(b.size());
  void* dc = api.alloc(c.size());
  api.to_device(da, a.data(), a.size());
  api.to_device(db, b.data(), b.size());
  api.to_device(dc, c.data(), c.size());
  GemmOperands o;
  o.m = in.m;
  o.n = in.n;
  o.k = in.k;
  o.a = da;
  o.lda = lda;
  o.b = db;
  o.ldb = in.n;
  o.c = dc;
  o.ldc = ldc;
  o.stream = api.stream();
  kern.run(o);
  api.synchronize(60000);
  api.to_host(c.data(), dc, c.size());
  if (a_after) {
    a_after->resize(a.size());
    api.to_host(a_after->data(), da, a.size());
  }
  api.free(da);
  api.free(db);
  api.free(dc);
  std::vector<std::uint64_t> r(static_cast<std::size_t>(in.m * in.n));
  for (std::int64_t i = 0; i < in.m; ++i)
    for (std::int64_t j = 0; j < in.n; ++j)
      r[static_cast<std::size_t>(i * in.n + j)] = from_container(*t.out, load_code(c.data(), i * ldc + j, cb));
  return r;
}

}  // namespace fpcert::test
