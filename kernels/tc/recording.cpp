// kernels/tc/recording.cpp — recorded device answers (kernels/tc/recording.hpp).
#include "kernels/tc/recording.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "base/atomic_file.hpp"
#include "base/error.hpp"
#include "oracle/order/tc_card.hpp"

namespace fpcert::tc {
namespace {

void put_hex(std::string& s, std::uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "%x", v);
  s += b;
}
std::uint32_t get_hex(const std::string& t, const std::string& where) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(t.c_str(), &end, 16);
  if (t.empty() || *end != '\0' || v > 0xFFFFFFFFull) throw InputError(where + ": bad hex code '" + t + "'");
  return static_cast<std::uint32_t>(v);
}

/// The query's key: C and the nonzero positions, exactly as the file writes them.
std::string key(const DotQuery& q) {
  std::string s;
  put_hex(s, q.c);
  for (std::size_t i = 0; i < q.a.size(); ++i)
    if (q.a[i] || q.b[i]) {
      s += ' ';
      s += std::to_string(i);
      s += ':';
      put_hex(s, q.a[i]);
      s += ':';
      put_hex(s, q.b[i]);
    }
  return s;
}

class RecordingDots final : public DotSource {
 public:
  RecordingDots(DotSource& inner, Recording& rec) : inner_(inner), rec_(rec) {}
  std::vector<std::uint32_t> answer(const std::vector<DotQuery>& qs) override {
    std::vector<std::uint32_t> d = inner_.answer(qs);
    for (std::size_t i = 0; i < qs.size(); ++i) rec_.dots.push_back({qs[i], d[i]});
    return d;
  }

 private:
  DotSource& inner_;
  Recording& rec_;
};

class ReplayDots final : public DotSource {
 public:
  ReplayDots(const Recording& rec, const InstructionSpec& spec) : spec_(spec) {
    for (const auto& d : rec.dots) map_.emplace(key(d.q), d.d);
    // The recorded tiles of the probe's sample distributions answer its sample dots (sample_dots), so a
    // recording made before the probe asked them still replays.
    static_assert(kTileCodes >= kSampleCodes);
    if (spec.integer() || rec.seed != kSampleSeed) return;
    for (const auto& t : rec.tiles) {
      if (std::find(std::begin(kSampleDistributions), std::end(kSampleDistributions), t.dist) == std::end(kSampleDistributions)) continue;
      const MmaBatch b = validation_batch(spec, t.dist, rec.seed, t.mma, 1, nullptr);
      for (std::size_t e = 0; e < t.d.size(); ++e) {
        const std::size_t i = e / static_cast<std::size_t>(spec.n), j = e % static_cast<std::size_t>(spec.n);
        DotQuery q;
        q.a.assign(b.a.begin() + static_cast<std::ptrdiff_t>(i * spec.k), b.a.begin() + static_cast<std::ptrdiff_t>((i + 1) * spec.k));
        q.b.assign(b.b.begin() + static_cast<std::ptrdiff_t>(j * spec.k), b.b.begin() + static_cast<std::ptrdiff_t>((j + 1) * spec.k));
        q.c = b.c[e];
        map_.emplace(key(q), t.d[e]);
      }
    }
  }
  std::vector<std::uint32_t> answer(const std::vector<DotQuery>& qs) override {
    std::vector<std::uint32_t> out;
    out.reserve(qs.size());
    for (const DotQuery& q : qs) {
      const auto it = map_.find(key(q));
      if (it == map_.end())
        throw InputError("the recording of " + std::string(spec_.id) + " has no answer for the query " + key(q) +
                         " (the probe logic changed since it was recorded: record again on the device)");
      out.push_back(it->second);
    }
    return out;
  }

 private:
  const InstructionSpec& spec_;
  std::unordered_map<std::string, std::uint32_t> map_;
};

}  // namespace

void Recording::write(const std::string& path) const {
  std::string s = "fpcert-tc-recording 1\ninstruction " + instruction + "\norigin " + origin + "\nseed " + std::to_string(seed) + "\ncard " + card + "\n";
  if (!tiles_card.empty()) s += "tiles-card " + tiles_card + "\n";
  for (const Dot& d : dots) {
    s += "q ";
    std::string k = key(d.q);
    const std::size_t sp = k.find(' ');
    s += k.substr(0, sp);
    s += ' ';
    put_hex(s, d.d);
    if (sp != std::string::npos) s += k.substr(sp);
    s += '\n';
  }
  for (const Tile& t : tiles) {
    s += "t " + std::string(to_string(t.dist)) + " " + std::to_string(t.mma);
    for (std::uint32_t v : t.d) {
      s += ' ';
      put_hex(s, v);
    }
    s += '\n';
  }
  write_file_atomic(path, s);
}

Recording Recording::read(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError("cannot read the recording " + path);
  Recording r;
  std::string line;
  int no = 0;
  const InstructionSpec* spec = nullptr;
  while (std::getline(in, line)) {
    ++no;
    const std::string where = path + ":" + std::to_string(no);
    if (line.empty()) continue;
    std::istringstream ls(line);
    std::string tag;
    ls >> tag;
    if (no == 1) {
      if (line != "fpcert-tc-recording 1") throw InputError(where + ": not an fpcert tensor-core recording (version 1)");
      continue;
    }
    std::string rest;
    std::getline(ls >> std::ws, rest);
    if (tag == "instruction") {
      r.instruction = rest;
      spec = find_instruction(rest);
      if (!spec) throw InputError(where + ": unknown instruction '" + rest + "' (known: " + instruction_ids() + ")");
    } else if (tag == "origin") {
      r.origin = rest;
    } else if (tag == "seed") {
      r.seed = std::strtoull(rest.c_str(), nullptr, 10);
    } else if (tag == "card") {
      r.card = rest;
    } else if (tag == "tiles-card") {
      r.tiles_card = rest;
    } else if (tag == "q" || tag == "t") {
      if (!spec) throw InputError(where + ": a record before the instruction line");
      std::istringstream rs(rest);
      std::vector<std::string> f;
      for (std::string x; rs >> x;) f.push_back(x);
      if (tag == "q") {
        if (f.size() < 2) throw InputError(where + ": a query needs C and D");
        Dot d;
        d.q.a.assign(static_cast<std::size_t>(spec->k), 0);
        d.q.b.assign(static_cast<std::size_t>(spec->k), 0);
        d.q.c = get_hex(f[0], where);
        d.d = get_hex(f[1], where);
        for (std::size_t i = 2; i < f.size(); ++i) {
          const std::size_t c1 = f[i].find(':'), c2 = f[i].find(':', c1 + 1);
          if (c1 == std::string::npos || c2 == std::string::npos) throw InputError(where + ": bad position '" + f[i] + "'");
          const int pos = std::atoi(f[i].substr(0, c1).c_str());
          if (pos < 0 || pos >= spec->k) throw InputError(where + ": position " + std::to_string(pos) + " outside 0.." + std::to_string(spec->k - 1));
          d.q.a[static_cast<std::size_t>(pos)] = get_hex(f[i].substr(c1 + 1, c2 - c1 - 1), where);
          d.q.b[static_cast<std::size_t>(pos)] = get_hex(f[i].substr(c2 + 1), where);
        }
        r.dots.push_back(std::move(d));
      } else {
        if (f.size() < 3 || f.size() > 2 + static_cast<std::size_t>(spec->m * spec->n))
          throw InputError(where + ": a tile needs 1 to " + std::to_string(spec->m * spec->n) + " codes");
        const auto dist = parse_distribution(f[0]);
        if (!dist) throw InputError(where + ": unknown distribution '" + f[0] + "'");
        Tile t;
        t.dist = *dist;
        t.mma = std::strtoull(f[1].c_str(), nullptr, 10);
        for (std::size_t i = 2; i < f.size(); ++i) t.d.push_back(get_hex(f[i], where));
        r.tiles.push_back(std::move(t));
      }
    } else {
      throw InputError(where + ": unknown record '" + tag + "'");
    }
  }
  if (!spec) throw InputError(path + ": no instruction line");
  return r;
}

void record_tiles(Recording& rec, const InstructionSpec& spec, Distribution dist, const MmaBatch& batch, const std::vector<std::uint32_t>& d,
                  int tiles) {
  const int mn = spec.m * spec.n, keep = std::min(mn, kTileCodes);
  for (int t = 0; t < std::min(tiles, batch.count); ++t)
    rec.tiles.push_back({dist, static_cast<std::uint64_t>(t), std::vector<std::uint32_t>(d.begin() + t * mn, d.begin() + t * mn + keep)});
}

std::unique_ptr<DotSource> recording_dots(DotSource& inner, Recording& rec) { return std::make_unique<RecordingDots>(inner, rec); }
std::unique_ptr<DotSource> replay_dots(const Recording& rec, const InstructionSpec& spec) { return std::make_unique<ReplayDots>(rec, spec); }

void replay_validation(BehaviourCard& card, const InstructionSpec& spec, const Recording& rec, int max_listed) {
  card.validation.clear();
  card.disagreements.clear();
  const int k = spec.k;
  // The ties distribution places its terms by the fit the device was validated against: the recorded
  // card's, which a later fit (a refined probe replaying the answers) need not share.
  FusedDotParams generated = card.params;
  if (const std::string& gen = rec.tiles_card.empty() ? rec.card : rec.tiles_card; !spec.integer() && !gen.empty()) {
    try {
      generated = fused_params_from_json(nlohmann::json::parse(gen));
    } catch (const std::exception&) {
      generated = card.params;  // an unreadable recorded card: the fit's own (what was recorded before cards carried every field)
    }
  }
  for (Distribution dist : kAllDistributions) {
    CardValidation v{std::string(to_string(dist)), 0, 0};
    for (const auto& t : rec.tiles) {
      if (t.dist != dist) continue;
      const MmaBatch b = validation_batch(spec, dist, rec.seed, t.mma, 1, spec.integer() ? nullptr : &generated);
      for (std::size_t e = 0; e < t.d.size(); ++e) {
        const std::size_t i = e / static_cast<std::size_t>(spec.n), j = e % static_cast<std::size_t>(spec.n);
        const std::uint32_t* a = &b.a[i * static_cast<std::size_t>(k)];
        const std::uint32_t* bb = &b.b[j * static_cast<std::size_t>(k)];
        const std::uint32_t c = b.c[e];
        const std::uint32_t want =
            spec.integer() ? int_dot(card.integer_wraps, a, bb, k, c) : static_cast<std::uint32_t>(fused_dot(card.params, a, bb, k, c));
        ++v.samples;
        if (want != t.d[e]) {
          ++v.disagreements;
          if (card.disagreements.size() < static_cast<std::size_t>(max_listed))
            card.disagreements.push_back({v.distribution, std::vector<std::uint32_t>(a, a + k), std::vector<std::uint32_t>(bb, bb + k), c, t.d[e], want});
        }
      }
    }
    card.validation.push_back(v);
  }
}

std::string recording_path(const std::string& dir, const InstructionSpec& spec) { return dir + "/" + std::string(spec.id) + ".tcrec"; }

}  // namespace fpcert::tc
