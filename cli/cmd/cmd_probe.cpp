// cli/cmd/cmd_probe.cpp — `fpcert probe tensor-cores`: measure what this GPU's MMA instructions compute,
// fit the block model, validate it bit for bit, and write the behaviour cards (docs/tensor_cores.md).
#include <fmt/format.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/options.hpp"
#include "kernels/tc/probe.hpp"
#include "kernels/tc/recording.hpp"
#include "base/atomic_file.hpp"
#include "base/error.hpp"
#include "base/output_path.hpp"
#include "reports/tc_card_html.hpp"

namespace fpcert::cli {
namespace {

struct ProbeArgs {
  std::vector<std::string> instructions;
  std::string json, html, record, replay, simulate;
  std::uint64_t samples = 10'000'000;
  std::uint64_t seed = 1;
  int list = 8;
  int record_tiles = 1;
  bool quiet = false;
};

std::vector<const tc::InstructionSpec*> chosen(const ProbeArgs& a) {
  std::vector<const tc::InstructionSpec*> out;
  if (a.instructions.empty()) {
    for (const auto& s : tc::all_instructions()) out.push_back(&s);
    return out;
  }
  for (const std::string& list : a.instructions) {
    std::size_t start = 0;
    while (start <= list.size()) {
      const std::size_t comma = list.find(',', start);
      const std::string name = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (!name.empty()) {
        const auto* s = tc::find_instruction(name);
        if (!s) throw InputError("unknown instruction '" + name + "' (known: " + tc::instruction_ids() + ")");
        out.push_back(s);
      }
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return out;
}

/// --simulate: "mma-sim", "khattak-mikaitis" (the published Hopper models) or a JSON file of block model
/// parameters (a card's "params"); the formats of the instruction replace the file's.
std::optional<FusedDotParams> simulated_params(const std::string& what, const tc::InstructionSpec& s) {
  if (what == "mma-sim") return tc::mma_sim_hopper(s);
  if (what == "khattak-mikaitis") return tc::khattak_mikaitis_hopper(s);
  std::ifstream in(what);
  if (!in) throw InputError("--simulate: '" + what + "' is neither mma-sim, khattak-mikaitis nor a readable JSON file");
  nlohmann::json j;
  try {
    in >> j;
  } catch (const nlohmann::json::exception& e) {
    throw InputError("--simulate " + what + ": " + e.what());
  }
  if (j.contains("params")) j = j["params"];
  j["a"] = s.a_tag();
  j["b"] = s.a_tag();
  j["acc"] = s.acc_tag();
  return fused_params_from_json(j);
}

void print_card(const BehaviourCard& c) {
  if (c.supported && !c.why.empty()) {
    fmt::print("{:<15} FAILED: {}\n", c.id, c.why);
    return;
  }
  if (!c.supported) {
    fmt::print("{:<15} not supported: {}\n", c.id, c.why);
    return;
  }
  fmt::print("{:<15} {}  probe {} queries ({} not reproduced), validation {} samples, {} disagreements, {:.1f} s\n", c.id,
             c.passed() ? "VALIDATED" : "DISAGREES", c.probe_queries, c.probe_disagreements, c.validated_samples(), c.validation_disagreements(),
             c.seconds);
  fmt::print("{:<15} {}\n", "", c.summary);
  for (const auto& p : c.properties)
    if (p.disagree) fmt::print("{:<15}   {}: {} of {} probe answers not reproduced ({})\n", "", p.name, p.disagree, p.queries, p.conclusion);
  for (const auto& d : c.disagreements) {
    std::string a, b;
    for (auto x : d.a) a += fmt::format("{:x} ", x);
    for (auto x : d.b) b += fmt::format("{:x} ", x);
    fmt::print("{:<15}   disagreement ({}): a = [{}], b = [{}], C = {:#x}: instruction {:#x}, model {:#x}\n", "", d.distribution, a, b, d.c, d.device,
               d.model);
  }
  for (const auto& r : c.published)
    if (r.verdict.find("differs") != std::string::npos)
      fmt::print("{:<15}   vs published: {} = {} (MMA-Sim {}, Khattak-Mikaitis {}): {}\n", "", r.property, r.fpcert, r.mma_sim.empty() ? "-" : r.mma_sim,
                 r.khattak_mikaitis.empty() ? "-" : r.khattak_mikaitis, r.verdict);
}

int run_probe(const ProbeArgs& a) {
  const auto specs = chosen(a);
  if (!a.record.empty() && !a.replay.empty()) throw InputError("--record and --replay exclude each other");
  if (!a.simulate.empty() && !a.replay.empty()) throw InputError("--simulate and --replay exclude each other");
  if (a.samples == 0) throw InputError("--samples must be at least 1");
  if (!a.record.empty()) check_output_dir(a.record, "--record");
  if (!a.record.empty()) std::filesystem::create_directories(a.record);
  tc::ProbeOptions opt;
  opt.samples = a.samples;
  opt.seed = a.seed;
  opt.max_listed = a.list;
  if (!a.quiet) opt.log = [](const std::string& s) { fmt::print(stderr, "{}\n", s); };
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<BehaviourCard> cards;
  int ran = 0, replay_mismatch = 0, device_failures = 0;
  for (const tc::InstructionSpec* s : specs) {
    if (!a.quiet) fmt::print(stderr, "probe {} ...\n", s->id);
    BehaviourCard card;
    if (!a.replay.empty()) {
      const std::string path = tc::recording_path(a.replay, *s);
      if (!std::filesystem::exists(path)) {
        cards.push_back(tc::unsupported_card(*s, "recorded", "no recording " + path));
        print_card(cards.back());
        continue;
      }
      const tc::Recording rec = tc::Recording::read(path);
      auto dots = tc::replay_dots(rec, *s);
      card = tc::fit_instruction(*s, *dots, "recorded: " + rec.origin);
      if (tc::layout_ok(card)) tc::replay_validation(card, *s, rec, a.list);
      // The same card must come out of the same answers.
      // The same card must come out of the same answers (compared as parameters: a card recorded before
      // a field existed reads it as its default).
      const nlohmann::json was = nlohmann::json::parse(rec.card, nullptr, false);
      const nlohmann::json now = s->integer() ? nlohmann::json{{"integer_wraps", card.integer_wraps}} : to_json(card.params);
      const bool same = s->integer() ? was == now : [&] {
        try {
          return fused_params_from_json(was) == card.params;
        } catch (const std::exception&) {
          return false;
        }
      }();
      if (!same) {
        ++replay_mismatch;
        fmt::print("{:<15} REPLAY DIFFERS from the recorded card: recorded {}, replayed {}\n", s->id, was.dump(), now.dump());
      }
    } else {
      std::unique_ptr<tc::MmaInstruction> insn;
      std::string why;
      if (!a.simulate.empty()) {
        if (s->integer()) insn = tc::make_integer_model_instruction(*s, true, "simulated: exact int32, wrapping");
        else if (const auto p = simulated_params(a.simulate, *s)) insn = tc::make_model_instruction(*s, *p, "simulated: " + a.simulate + " model");
        else why = "the " + a.simulate + " model has no parameters for this instruction";
      } else {
        try {
          insn = tc::make_device_instruction(*s, &why);
        } catch (const DeviceError& e) {
          ++device_failures;
          cards.push_back(tc::unsupported_card(*s, "this machine", std::string("device failure: ") + e.what()));
          cards.back().supported = true;
          print_card(cards.back());
          continue;
        }
      }
      if (!insn) {
        cards.push_back(tc::unsupported_card(*s, a.simulate.empty() ? "this machine" : "simulated: " + a.simulate, why));
        print_card(cards.back());
        continue;
      }
      tc::Recording rec;
      std::unique_ptr<tc::DotSource> inner = tc::instruction_dots(*insn);
      std::unique_ptr<tc::DotSource> dots;
      if (!a.record.empty()) {
        rec.instruction = std::string(s->id);
        rec.origin = insn->origin();
        rec.seed = a.seed;
        dots = tc::recording_dots(*inner, rec);
        opt.record = &rec;
        opt.record_tiles = a.record_tiles;
      }
      bool crashed = false;
      try {
        card = tc::fit_instruction(*s, dots ? *dots : *inner, insn->origin());
        if (tc::layout_ok(card)) tc::validate(card, *s, *insn, opt);
      } catch (const DeviceError& e) {
        // A crash or a sticky device error: this card says so, the others (and the files) still come.
        ++device_failures;
        crashed = true;
        card = tc::unsupported_card(*s, insn->origin(), std::string("device failure: ") + e.what());
        card.supported = true;
      }
      opt.record = nullptr;
      if (!a.record.empty() && !crashed) {
        rec.card = s->integer() ? nlohmann::json{{"integer_wraps", card.integer_wraps}}.dump() : to_json(card.params).dump();
        rec.write(tc::recording_path(a.record, *s));
      }
    }
    ++ran;
    cards.push_back(std::move(card));
    print_card(cards.back());
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  int failed = 0;
  for (const auto& c : cards) failed += c.supported && !c.passed();
  fmt::print("{} instruction(s) probed, {} not supported here, {} with disagreements; {:.1f} s\n", ran, cards.size() - static_cast<std::size_t>(ran),
             failed, secs);
  if (!a.json.empty()) {
    nlohmann::json j = {{"kind", "tensor-core-cards"}, {"command", command_line()}, {"seconds", secs}, {"cards", nlohmann::json::array()}};
    for (const auto& c : cards) j["cards"].push_back(to_json(c));
    write_file_atomic(a.json, j.dump(1) + "\n");
  }
  if (!a.html.empty()) write_file_atomic(a.html, tc_cards_page(cards, command_line()));
  if (!a.record.empty()) fmt::print("recordings in {}\n", a.record);
  if (device_failures) {
    fmt::print(stderr, "fpcert: {} instruction(s) failed on the device (their cards say how)\n", device_failures);
    return kExitKernelFailed;
  }
  if (failed || replay_mismatch) return kExitGateFailed;
  if (ran == 0) {
    fmt::print(stderr, "fpcert: no tensor-core instruction could run here: nothing was measured\n");
    return kExitKernelFailed;
  }
  return kExitPass;
}

void add_probe_command(CLI::App& root, Registry& reg) {
  auto* app = root.add_subcommand("probe", "Measure hardware arithmetic: `probe tensor-cores` fits and validates a model of every MMA instruction");
  auto* tcs = app->add_subcommand("tensor-cores", "Probe mma.sync and wgmma instructions: the behaviour card of each (docs/tensor_cores.md)");
  app->require_subcommand(1);
  auto a = std::make_shared<ProbeArgs>();
  tcs->add_option("--instruction", a->instructions, "Instruction id(s), comma-separated or repeated (default: all): " + tc::instruction_ids());
  tcs->add_option("--json", a->json, "Write the cards as JSON here")->check(output_path());
  tcs->add_option("--html", a->html, "Write the cards as a self-contained HTML page here")->check(output_path());
  tcs->add_option("--samples", a->samples, "Validation samples per instruction (model vs instruction, bit for bit)")
      ->capture_default_str()
      ->check(integer_in(1, std::uint64_t{1} << 40));
  tcs->add_option("--seed", a->seed, "Seed of the validation inputs (Philox)")->capture_default_str()->check(integer_in(0, ~std::uint64_t{0}));
  tcs->add_option("--list", a->list, "Disagreements kept per instruction, with their inputs")->capture_default_str()->check(integer_in(0, 1u << 20));
  tcs->add_option("--record", a->record, "Write every probe query and answer (and a few validation tiles) to DIR/<id>.tcrec")->check(path_text());
  tcs->add_option("--record-tiles", a->record_tiles, "With --record: validation MMAs recorded per distribution (their first 64 D codes each)")
      ->capture_default_str()
      ->check(integer_in(1, 1 << 16));
  tcs->add_option("--replay", a->replay, "Answer from DIR/<id>.tcrec instead of a device: the probe logic on recorded answers")->check(path_text());
  tcs->add_option("--simulate", a->simulate, "Answer from the block model instead of a device: mma-sim, khattak-mikaitis, or a JSON file of parameters");
  tcs->add_flag("--quiet", a->quiet, "No progress lines on stderr");
  reg.push_back({tcs, [a] { return run_probe(*a); }});
}

}  // namespace

void add_probe(CLI::App& root, Registry& reg) { add_probe_command(root, reg); }

}  // namespace fpcert::cli
