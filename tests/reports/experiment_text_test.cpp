// tests/reports/experiment_text_test.cpp — experiment records as terminal text: cell formats, column
// alignment, wrapping, the JSON round trip of a record.
#include <doctest/doctest.h>

#include <cmath>

#include "base/error.hpp"
#include "reports/experiment_text.hpp"
#include "results/results_json.hpp"

using namespace fpcert;
using nlohmann::json;

TEST_CASE("cell_text: each column format, null, strings, non-finite numbers") {
  CHECK(cell_text(1.2345e-5, "e") == "1.23e-05");  // 3 significant digits, scientific
  CHECK(cell_text(0.1767767, "g") == "0.1768");    // 4 significant digits
  CHECK(cell_text(0.5, "f2") == "0.50");
  CHECK(cell_text(-0.001, "f2") == "0.00");  // a fitted exponent of -0.001 reads 0.00, not -0.00
  CHECK(cell_text(2048.0, "int") == "2048");
  CHECK(cell_text(json(2000000), "e") == "2000000");  // integers in full whatever the format
  CHECK(cell_text(json(nullptr), "e") == "-");
  CHECK(cell_text(json("6xbf16"), "") == "6xbf16");
  CHECK(cell_text(json_number(INFINITY), "e") == "inf");
  CHECK(cell_text(json(true), "") == "yes");
}

TEST_CASE("table_text: numbers right-aligned, text left-aligned, a dash for a missing value") {
  ExperimentTable t;
  t.title = "T";
  t.note = "a note";
  t.columns = {{"m", "method", ""}, {"x", "median", "e"}};
  t.rows.push_back({{"m", "fp32"}, {"x", 2.07e-8}});
  t.rows.push_back({{"m", "9xbf16"}});  // no "x": a dash
  // widths: method 6 (the header and "9xbf16"), median 8 ("2.07e-08")
  CHECK(table_text(t) == "T\n  method   median\n  fp32   2.07e-08\n  9xbf16        -\n  a note\n");
}

TEST_CASE("wrap_text: words on lines of at most the width, each with the indent") {
  CHECK(wrap_text("aa bb cc dd", 8, "  ") == "  aa bb\n  cc dd\n");  // "  aa bb cc" would be 10 > 8
  CHECK(wrap_text("", 8) == "");
}

TEST_CASE("experiment records round-trip through JSON; malformed ones are input errors") {
  ExperimentRecord r;
  r.experiment = "split-scalar";
  r.preset = "panorama";
  r.method = "m";
  r.deviations = "d";
  r.passed = false;
  ExperimentTable t;
  t.columns = {{"k", "K", "int"}};
  t.rows.push_back({{"k", 256}});
  r.tables.push_back(t);
  const ExperimentRecord q = experiment_from_json(to_json(r));
  CHECK(q.experiment == r.experiment);
  CHECK(q.preset == r.preset);
  CHECK(q.method == r.method);
  CHECK(q.deviations == r.deviations);
  CHECK(!q.passed);
  REQUIRE(q.tables.size() == 1);
  CHECK(q.tables[0].rows == t.rows);
  CHECK(q.tables[0].columns[0].format == "int");
  CHECK(experiment_text(q).find("split-scalar --preset panorama\nMethod: m\nThis run differs: d\n") == 0);
  CHECK_THROWS_AS(experiment_from_json(json{{"kind", "experiment"}}), InputError);
  CHECK_THROWS_AS(experiment_from_json(json::parse(R"({"kind": "experiment", "tables": [{"columns": [{"label": "x"}]}]})")),
                  InputError);
}
