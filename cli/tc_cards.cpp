// cli/tc_cards.cpp — probing or reading the behaviour cards a run needs, and installing them (cli/tc_cards.hpp).
#include "cli/tc_cards.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <stdexcept>

#include "base/error.hpp"
#include "base/shard.hpp"
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
    // --devices workers on one device probe it once between them (suites/run/host_store.hpp): each instruction's card is
    // made by the first worker to get there and read by the others, as --card FILE of this device would give them. The
    // key names the device (the worker's CUDA_VISIBLE_DEVICES), the samples and the instruction; each worker starts at
    // its own place in the list (its shard index), so that the workers probe different instructions side by side
    // (18 instructions of 1e6 samples take about 20 s on one core: each of 16 workers probed them all before).
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    const std::string store = visible && *visible ? host_store_dir() : std::string();
    std::size_t first = 0;
    if (const char* shard = std::getenv("FPCERT_WORKER_SHARD"); shard && *shard) {  // the worker's level is the innermost
      const ShardLevel me = parse_shard(shard).levels.back();
      first = static_cast<std::size_t>(me.index - 1) * ids.size() / static_cast<std::size_t>(me.count);
    }
    const std::string device = visible ? visible : "";
    const ChildOutcome o = run_in_child(
        [&ids, samples, &store, &device, first] {
          nlohmann::json out = nlohmann::json::array();
          std::vector<std::string> cards(ids.size());
          std::vector<int> read(ids.size(), 0);
          for (std::size_t r = 0; r < ids.size(); ++r) {
            const std::size_t at = (first + r) % ids.size();
            const std::string& id = ids[at];
            const tc::InstructionSpec* s = tc::find_instruction(id);
            if (!s) continue;
            struct NotKept {  // no device or a device failure: this worker's card, not kept for the others (they try)
              std::string card;
            };
            const auto make = [&] {
              BehaviourCard c;
              try {
                std::string why;
                auto insn = tc::make_device_instruction(*s, &why);
                if (!insn) throw NotKept{to_json(tc::unsupported_card(*s, "this machine", why)).dump()};
                tc::ProbeOptions opt;
                opt.samples = samples;
                c = tc::probe_instruction(*insn, opt);
              } catch (const std::exception& e) {
                c = tc::unsupported_card(*s, "this machine", std::string("device failure: ") + e.what());
                c.supported = true;
                throw NotKept{to_json(c).dump()};
              }
              return to_json(c).dump();
            };
            StoreFetch how = StoreFetch::Made;
            try {
              cards[at] = host_store_get<std::string>(
                  store, fmt::format("tensor-core card|device {}|samples {}|{}", device, samples, id), make,
                  [](const std::string& v, StoreWriter& w) { w.str(v); }, [](StoreReader& rd) { return rd.str(); }, &how);
            } catch (const NotKept& e) {
              cards[at] = e.card;
            }
            read[at] = how == StoreFetch::Read;
          }
          for (std::size_t i = 0; i < ids.size(); ++i)
            if (!cards[i].empty()) out.push_back({{"card", nlohmann::json::parse(cards[i])}, {"read", read[i]}});
          return out.dump();
        },
        600);
    if (!o.ok) {
      fmt::print("tensor-core cards: probing {} failed ({}): their kernels keep the placeholder block model\n", list, o.reason);
      return;
    }
    std::size_t read = 0;
    for (const auto& j : nlohmann::json::parse(o.payload)) {
      set.cards.push_back(card_from_json(j.at("card")));
      read += j.at("read").get<int>();
    }
    if (read) fmt::print("tensor-core cards: {} of {} read from the other workers' probes of this device\n", read, set.cards.size());
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
