// tests/generators/softmax_bwd_test.cpp — the softmax_bwd family (generators/softmax_bwd/softmax_bwd.hpp): y is a real
// forward output (softmax rows of non-negative values summing to 1 within the format's rounding, log-softmax rows of
// non-positive values whose exponentials sum to 1), masked entries are zero probabilities (log-softmax: -Inf with dy = 0),
// dy = cancel makes dy_j - D small beside dy_j, one-hot dy has one -1 a row, and every value is exact in the source.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "generators/generate.hpp"
#include "generators/softmax_bwd/softmax_bwd.hpp"
#include "oracle/round.hpp"

namespace fpcert {

TEST_CASE("softmax_bwd generator: y is a forward output, dy as the mode says, values exact in the source") {
  for (const char* src : {"f16", "bf16", "f32"})
    for (const char* fn : {"softmax", "log_softmax"}) {
      CAPTURE(src);
      CAPTURE(fn);
      const Format& f = *find_format(src);
      const Problem p = generate(std::string("softmax_bwd:rows=9,cols=77,mask=random,dy=cancel,scale=0.7,seed=3,fn=") + fn + ",source=" + src);
      REQUIRE(is_softmax_bwd_problem(p));
      CHECK(softmax_bwd_rows(p) == 9);
      CHECK(softmax_bwd_cols(p) == 77);
      CHECK(softmax_bwd_scale(p) == static_cast<double>(0.7f));
      const bool log = softmax_bwd_fn(p) == SoftmaxFn::LogSoftmax;
      CHECK(log == (std::string(fn) == "log_softmax"));
      int masked = 0, cancelling = 0;
      for (std::int64_t r = 0; r < 9; ++r) {
        double sum = 0, d = 0;
        for (std::int64_t j = 0; j < 77; ++j) {
          const double y = softmax_bwd_y(p, r, j), dy = softmax_bwd_dy(p, r, j);
          CHECK(dy == quantize(f, dy));
          if (log) {
            CHECK(y <= 0);
            if (y == -std::numeric_limits<double>::infinity()) {
              ++masked;
              CHECK(dy == 0);
              continue;
            }
            CHECK(y == quantize(f, y));
            sum += std::exp(y);
            d += dy;
          } else {
            CHECK(y >= 0);
            CHECK(y == quantize(f, y));
            masked += y == 0;
            sum += y;
            d += dy * y;
          }
        }
        CHECK(std::fabs(sum - 1) < 77 * f.unit_roundoff() * 2);
        for (std::int64_t j = 0; j < 77; ++j) {
          const double y = softmax_bwd_y(p, r, j), dy = softmax_bwd_dy(p, r, j);
          if (std::isinf(y) || y == 0) continue;
          const double t = log ? dy - std::exp(y) * d : dy - d;
          cancelling += std::fabs(t) < 0x1p-6 * std::fabs(dy);
        }
      }
      CHECK(masked > 9 * 20);           // about half of every row
      CHECK(cancelling > 9 * 77 / 8);   // dy_j - D cancels
    }
  const Problem h = generate("softmax_bwd:rows=5,cols=17,dy=onehot,seed=4");
  for (std::int64_t r = 0; r < 5; ++r) {
    int ones = 0;
    for (std::int64_t j = 0; j < 17; ++j) ones += softmax_bwd_dy(h, r, j) == -1;
    CHECK(ones == 1);
  }
}

}  // namespace fpcert
