// tests/reports/tc_card_html_test.cpp — the tensor-core cards as HTML: well-formed and self-contained
// under the strict checker (tests/reports/check_html.py), every card, its verdict, its disagreements
// with their inputs and the published comparison on the page, text escaped.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>

#include "kernels/tc/probe.hpp"
#include "reports/tc_card_html.hpp"
#include "tests/support/check_html.hpp"

using namespace fpcert;

namespace {

/// A simulated instruction whose D is off by one bit where C's low 12 bits are 0xa5a.
class OffByOne final : public tc::MmaInstruction {
 public:
  explicit OffByOne(std::unique_ptr<tc::MmaInstruction> inner) : inner_(std::move(inner)) {}
  const tc::InstructionSpec& spec() const override { return inner_->spec(); }
  std::string origin() const override { return "simulated <off by one>"; }
  std::vector<std::uint32_t> run(const tc::MmaBatch& b) override {
    auto d = inner_->run(b);
    for (std::size_t i = 0; i < d.size(); ++i)
      if ((b.c[i] & 0xFFF) == 0xA5A && (d[i] & 0x7F800000u) != 0x7F800000u) d[i] ^= 1;
    return d;
  }

 private:
  std::unique_ptr<tc::MmaInstruction> inner_;
};

}  // namespace

TEST_CASE("tc cards: the HTML page passes the strict checker and shows every card") {
  tc::ProbeOptions opt;
  opt.samples = 20000;
  std::vector<BehaviourCard> cards;
  const auto& f16 = *tc::find_instruction("mma_f16_f32");
  auto good = tc::make_model_instruction(f16, *tc::mma_sim_hopper(f16), "simulated");
  cards.push_back(tc::probe_instruction(*good, opt));
  OffByOne bad(tc::make_model_instruction(*tc::find_instruction("mma_bf16_f32"), *tc::mma_sim_hopper(*tc::find_instruction("mma_bf16_f32")),
                                          "simulated"));
  cards.push_back(tc::probe_instruction(bad, opt));
  auto s8 = tc::make_integer_model_instruction(*tc::find_instruction("mma_s8_s32"), true, "simulated");
  cards.push_back(tc::probe_instruction(*s8, opt));
  cards.push_back(tc::unsupported_card(*tc::find_instruction("wgmma_e4m3_f32"), "this machine", "needs sm_90a; this device is sm_80"));
  REQUIRE(cards[0].passed());
  REQUIRE_FALSE(cards[1].passed());
  REQUIRE_FALSE(cards[1].disagreements.empty());

  const std::string html = tc_cards_page(cards, "fpcert probe tensor-cores --html 'a<b>.html'");
  const test::HtmlCheck chk = test::check_html(html, "tc_card_html_test_tmp", "cards.html");
  CHECK_MESSAGE(chk.ok, chk.output);

  for (const auto& c : cards) CHECK(html.find("id=\"tc-" + c.id + "\"") != std::string::npos);
  CHECK(html.find("model validated") != std::string::npos);
  CHECK(html.find("disagreements</span>") != std::string::npos);
  CHECK(html.find("needs sm_90a; this device is sm_80") != std::string::npos);
  CHECK(html.find("this is not a pass") != std::string::npos);
  CHECK(html.find("Against the published models") != std::string::npos);
  // The first disagreement's C appears with its value, and the origin text is escaped.
  char c_hex[16];
  std::snprintf(c_hex, sizeof c_hex, "0x%x", cards[1].disagreements.front().c);
  CHECK(html.find(c_hex) != std::string::npos);
  CHECK(html.find("simulated &lt;off by one&gt;") != std::string::npos);
  CHECK(html.find("<off by one>") == std::string::npos);
  CHECK(html.find("a&lt;b&gt;.html") != std::string::npos);
  std::filesystem::remove_all("tc_card_html_test_tmp");
}
