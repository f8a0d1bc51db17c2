// tests/reports/escape_test.cpp — the one escaper of XML and HTML text: markup characters become
// entities in both; control characters are dropped in HTML and shown as '?' in JUnit XML (XML 1.0
// allows neither them nor references to them).
#include <doctest/doctest.h>

#include <string>

#include "reports/escape.hpp"
#include "reports/junit.hpp"

using namespace fpcert;

TEST_CASE("markup characters become entities under both policies") {
  for (ControlChars c : {ControlChars::Drop, ControlChars::Replace})
    CHECK(xml_escape("<a href='x'>&\"", c) == "&lt;a href=&#39;x&#39;&gt;&amp;&quot;");
  CHECK(html_escape("1 < 2 & 3 > 2") == "1 &lt; 2 &amp; 3 &gt; 2");
}

TEST_CASE("control characters: dropped in HTML, '?' in JUnit; tab and newline kept in both, CR in JUnit only") {
  const std::string s = std::string("a\x01" "b\tc\nd\re\x1f");
  CHECK(xml_escape(s, ControlChars::Drop) == "ab\tc\nde");
  CHECK(xml_escape(s, ControlChars::Replace) == "a?b\tc\nd\re?");
}

TEST_CASE("a JUnit document carries a reason with control characters as '?'") {
  RunResult r;
  r.suite = "quick";
  CaseResult c;
  c.case_id = "k256_uniform";
  c.kernel = "k";
  c.status = CaseStatus::Fail;
  c.reason = std::string("bad\x07" "bell <here>");
  r.cases.push_back(c);
  const std::string x = junit_xml(r);
  CHECK(x.find("message=\"bad?bell &lt;here&gt;\"") != std::string::npos);
  CHECK(x.find('\x07') == std::string::npos);
}
