// tests/base/decimal_test.cpp — exact decimal expansions of binary values, and the shortest text that
// reads back to the same double; error kinds.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

#include "base/decimal.hpp"
#include "base/error.hpp"

using namespace fpcert;

TEST_CASE("exact_decimal: every digit of the binary value") {
  // 0.1 in binary64 is 3602879701896397 / 2^55: its 55 fractional decimal digits, ending in 5 (2^-55 = 5^55 / 10^55).
  CHECK(exact_decimal(0.1) == "0.1000000000000000055511151231257827021181583404541015625");
  // fp32(1.0007) = 8394480 / 2^23 (1.0007 * 2^23 = 8394480.03 rounds down): 1.0006999969482421875.
  CHECK(exact_decimal(static_cast<double>(1.0007f)) == "1.0006999969482421875");
  CHECK(exact_decimal(-0.5) == "-0.5");
  CHECK(exact_decimal(-0.0) == "-0");
  CHECK(exact_decimal(1e20) == "100000000000000000000");  // 10^20 = 2^20 * 5^20, exact in binary64
  CHECK(exact_decimal(INFINITY) == "inf");
  CHECK(exact_decimal(-INFINITY) == "-inf");
  CHECK(exact_decimal(std::nan("")) == "nan");
  // The smallest subnormal 2^-1074: 751 significant digits, in scientific notation; reads back exactly.
  const double tiny = std::numeric_limits<double>::denorm_min();
  const std::string t = exact_decimal(tiny);
  CHECK(t == "4.940656458412465441765687928682213723650598026143247644255856825006755072702087518652998363616359923797965646954457177309266567103559397963987747960107818781263007131903114045278458171678489821036887186360569987307230500063874091535649843873124733972731696151400317153853980741262385655911710266585566867681870395603106249319452715914924553293054565444011274801297099995419319894090804165633245247571478690147267801593552386115501348035264934720193790268107107491703332226844753335720832431936092382893458368060106011506169809753078342277318329247904982524730776375927247874656084778203734469699533647017972677717585125660551199131504891101451037862738167250955837389733598993664809941164205702637090279242767544565229087538682506419718265533447265625e-324");
  CHECK(std::strtod(t.c_str(), nullptr) == tiny);
}

TEST_CASE("short_decimal: the shortest text that reads back to the same double") {
  CHECK(short_decimal(0.1) == "0.1");
  CHECK(short_decimal(65504) == "65504");
  for (double x : {1.0 / 3.0, 2.0 / 3.0, std::nextafter(1.0, 2.0), 6.103515625e-05, -1.7976931348623157e308}) {
    const std::string s = short_decimal(x);
    CHECK(std::strtod(s.c_str(), nullptr) == x);
    // One digit fewer no longer reads back (the text is the shortest): %.(p-1)g of x differs from x.
    std::string mant;  // the significant digits: no sign, point or leading zeros
    for (char ch : s.substr(0, s.find('e')))
      if (ch >= '0' && ch <= '9' && !(mant.empty() && ch == '0')) mant += ch;
    const int digits = static_cast<int>(mant.size());
    if (digits > 1) {
      char buf[400];
      std::snprintf(buf, sizeof buf, "%.*g", digits - 1, x);
      CHECK(std::strtod(buf, nullptr) != x);
    }
  }
}

TEST_CASE("DeviceError carries its failure kind; the default is crashed") {
  const DeviceError crash("segfault in the kernel");
  const DeviceError hang("watchdog", FailureKind::Hung);
  CHECK(crash.kind == FailureKind::Crashed);
  CHECK(hang.kind == FailureKind::Hung);
  CHECK(to_string(crash.kind) == "crashed");
  CHECK(to_string(hang.kind) == "hung");
  CHECK(std::string(hang.what()) == "watchdog");
}
