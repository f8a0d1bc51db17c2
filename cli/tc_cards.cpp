// cli/tc_cards.cpp — probing or reading the behaviour cards a run needs, and installing them (cli/tc_cards.hpp).
#include "cli/tc_cards.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <stdexcept>

#include "base/error.hpp"
#include "cli/plugins.hpp"
#include "kernels/device/device_api.hpp"
#include "kernels/kernel.hpp"
#include "kernels/register.hpp"
#include "kernels/tc/cards.hpp"
#include "kernels/tc/probe.hpp"
#include "suites/run/host_store.hpp"
#include "suites/run/isolate.hpp"

namespace fpcert::cli {

void prepare_cards(const std::string& card, std::uint64_t card_samples, const std::vector<std::string>& kernels) {
  std::vector<KernelTraits> ts;
  for (const std::string& name : kernels)
    if (const auto k = make_gemm_kernel(name)) ts.push_back(k->traits());
  const std::vector<std::string> ids = tc::instructions_of(ts);
  tc::install_cards({});
  if (ids.empty()) return;
  std::string list;
  for (const auto& id : ids) list += (list.empty() ? "" : ", ") + id;
  if (card == "none") {
    fmt::print("tensor-core cards: none (--card none): {} keep their placeholder block model\n", list);
    return;
  }
  tc::CardSet set;
  if (card != "probe") {
    set = tc::read_cards(card);
    // The device here, asked in a child process (this one stays off the device until the cases run).
    const ChildOutcome here = run_in_child(
        [] {
          std::string why;
          const auto api = make_cuda_api(&why);
          return api ? api->info().name : std::string();
        },
        120);
    const std::string name = here.ok ? here.payload : std::string();
    for (const BehaviourCard& c : set.cards)
      if (c.supported && !name.empty() && c.device.rfind(name, 0) != 0)
        throw InputError(fmt::format("--card {}: the card of {} was measured on '{}', this device is '{}': probe this device (omit --card)", card,
                                     c.id, c.device, name));
    if (name.empty()) set.source += " (no device here to compare it with: used as asked)";
  } else {
    const std::uint64_t samples = card_samples;
    const auto probe = [&] { return run_in_child(
        [&ids, samples] {
          nlohmann::json out = nlohmann::json::array();
          for (const std::string& id : ids) {
            const tc::InstructionSpec* s = tc::find_instruction(id);
            if (!s) continue;
            BehaviourCard c;
            try {
              std::string why;
              auto insn = tc::make_device_instruction(*s, &why);
              if (!insn) {
                c = tc::unsupported_card(*s, "this machine", why);
              } else {
                tc::ProbeOptions opt;
                opt.samples = samples;
                c = tc::probe_instruction(*insn, opt);
              }
            } catch (const std::exception& e) {
              c = tc::unsupported_card(*s, "this machine", std::string("device failure: ") + e.what());
              c.supported = true;
            }
            out.push_back(to_json(c));
          }
          return out.dump();
        },
        600); };
    // --devices workers on one device probe it once: the first writes the cards into the workers' host store
    // (suites/run/host_store.hpp), the others read them, as --card FILE of this device would give them. The key names the
    // device (the worker's CUDA_VISIBLE_DEVICES), the samples and the instructions; a failed probe is not kept.
    ChildOutcome o;
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    const std::string store = visible && *visible ? host_store_dir() : std::string();
    try {
      StoreFetch how = StoreFetch::Made;
      o.payload = host_store_get<std::string>(
          store, fmt::format("tensor-core cards|device {}|samples {}|{}", visible ? visible : "", samples, list),
          [&] {
            ChildOutcome p = probe();
            if (!p.ok) throw std::runtime_error(p.reason);
            return p.payload;
          },
          [](const std::string& v, StoreWriter& w) { w.str(v); }, [](StoreReader& r) { return r.str(); }, &how);
      o.ok = true;
      if (how == StoreFetch::Read) fmt::print("tensor-core cards: read from another worker's probe of this device\n");
    } catch (const std::runtime_error& e) {
      o.reason = e.what();
    }
    if (!o.ok) {
      fmt::print("tensor-core cards: probing {} failed ({}): their kernels keep the placeholder block model\n", list, o.reason);
      return;
    }
    for (const auto& j : nlohmann::json::parse(o.payload)) set.cards.push_back(card_from_json(j));
    set.source = fmt::format("this device, probed at certify start ({} validation samples per instruction)", samples);
  }
  for (const std::string& id : ids) {
    const std::string why = tc::card_unusable(set, id);
    const BehaviourCard* c = set.find(id);
    fmt::print("tensor-core card {:<15} {}\n", id, why.empty() ? fmt::format("validated ({} samples): {}", c->validated_samples(), c->summary) : why);
  }
  tc::install_cards(std::move(set));
}

}  // namespace fpcert::cli
