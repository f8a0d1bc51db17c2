// tests/reports/reveal_html_test.cpp — a revelation as text and HTML: the tree drawing stays small for
// any K (boxes counted), names the first and last products, draws fused nodes by their width; the page
// passes the strict checker (tests/reports/check_html.py), escapes text and says what the replay found.
#include <doctest/doctest.h>

#include <filesystem>

#include "reports/reveal_html.hpp"
#include "tests/support/check_html.hpp"

using namespace fpcert;

namespace {

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("reveal html: the tree drawing stays small for any K and names its ends") {
  for (int k : {5, 64, 2048, 65536}) {
    const std::string svg = sum_tree_svg(sequential_tree(k), 48);
    CAPTURE(k);
    CHECK(svg.rfind("<svg", 0) == 0);
    // One rect per box: at most the budget, plus the leaves and ellipses of the last boxes drawn.
    CHECK(count(svg, "<rect") <= 48 * 3);
    CHECK(svg.find(">p_0<") != std::string::npos);
    CHECK(svg.find("p_" + std::to_string(k - 1)) != std::string::npos);
  }
  const std::string fused = sum_tree_svg(fused_chain_tree(256, 16));
  CHECK(fused.find("Σ17") != std::string::npos);  // 16 products and the running sum
  const std::string text = sum_tree_text(pairwise_tree(8));
  CHECK(text.find("`-- ") != std::string::npos);
  CHECK(count(text, "\n") >= 8);
}

TEST_CASE("reveal html: the page is well-formed, self-contained and escaped") {
  RevealResult r;
  r.kernel = "k<1>";
  r.m = r.n = 4;
  r.k = 64;
  r.status = "revealed";
  r.message = "element (0, 0): sequential & more";
  RevealClass c;
  c.elements = 16;
  c.where = "every element";
  c.revealed = true;
  c.tree = sequential_tree(64);
  c.headline = "sequential chain over k = 0..63 ascending";
  c.replay.requested = c.replay.ran = true;
  c.replay.compared = 100;
  c.replay.equal = 99;
  c.replay.assumed = "fp32 FMA chain";
  c.replay.diffs.push_back({0, 1, 2, 0x3f800000, 0x3f800001, "kernel 1, replay 1.0000001, 1 ulp apart"});
  r.classes.push_back(c);
  r.focus_class = 0;
  const std::string html = reveal_page(r, "fpcert reveal --kernel 'k<1>'");
  CHECK(html.find("k&lt;1&gt;") != std::string::npos);
  CHECK(html.find("k<1>") == std::string::npos);
  CHECK(html.find("99 of 100 elements equal") != std::string::npos);
  CHECK(html.find("differs at (1, 2)") != std::string::npos);
  CHECK(html.find("<svg") != std::string::npos);
  const std::string text = reveal_text(r);
  CHECK(text.find("sequential chain") != std::string::npos);
  CHECK(text.find("DIFFERS") != std::string::npos);

  const test::HtmlCheck chk = test::check_html(html, "reveal_html_test_tmp", "reveal.html");
  CHECK_MESSAGE(chk.ok, chk.output);
  std::filesystem::remove_all("reveal_html_test_tmp");
}
