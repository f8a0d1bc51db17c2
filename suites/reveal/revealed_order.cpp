// suites/reveal/revealed_order.cpp — the bitwise tier with a revealed order (suites/reveal/revealed_order.hpp, docs/reveal.md).
#include "suites/reveal/revealed_order.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <span>

#include "base/error.hpp"
#include "base/parallel.hpp"

namespace fpcert {

namespace {

/// The kernel a mutant <kernel>~<fault> wraps (the name itself otherwise).
std::string base_kernel(const std::string& name) { return name.substr(0, name.find('~')); }

std::string shape_text(std::int64_t m, std::int64_t n, std::int64_t k) { return fmt::format("{}x{}x{}", m, n, k); }

/// The class list in words: "every element: sequential chain ..." / "rows 0..23 x columns 0..47: ...; ...".
std::string trees_text(const RevealResult& r) {
  std::string s;
  for (const auto& c : r.classes)
    s += fmt::format("{}{}: {}", s.empty() ? "" : "; ", c.where, c.revealed ? c.headline : "not revealed (" + c.why + ")");
  return s;
}

/// The fallback reason of a revelation that cannot be used, or empty.
std::string unusable(const RevealResult& r) {
  if (r.status != "revealed") return fmt::format("revelation {}: {}", r.status, r.message);
  if (r.class_of.size() != static_cast<std::size_t>(r.m * r.n)) return "the revelation does not say which class each element belongs to";
  for (std::size_t ci = 0; ci < r.classes.size(); ++ci) {
    const RevealClass& c = r.classes[ci];
    if (!c.revealed) return fmt::format("class {} ({}) not revealed: {}", ci, c.where, c.why);
    if (c.verify_mismatches) return fmt::format("class {} ({}): {} of {} verification answers disagree with its tree", ci, c.where, c.verify_mismatches, c.verified);
  }
  return {};
}

}  // namespace

OrderFile read_order_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError("--order " + path + ": cannot read the file");
  nlohmann::json j;
  try {
    in >> j;
  } catch (const nlohmann::json::exception& e) {
    throw InputError("--order " + path + ": not JSON (" + std::string(e.what()) + ")");
  }
  OrderFile f{path, {}};
  try {
    f.reveal = reveal_from_json(j);
  } catch (const InputError& e) {
    throw InputError("--order " + path + ": " + e.what() + " (expected the JSON of fpcert reveal --json)");
  }
  RevealResult& r = f.reveal;
  if (r.status != "revealed")
    throw InputError(fmt::format("--order {}: the revelation of {} at {} did not succeed ({}: {}): there is no order to certify with", path, r.kernel,
                                 shape_text(r.m, r.n, r.k), r.status, r.message));
  if (r.class_of.empty() && r.classes.size() == 1 && r.classes.front().elements == r.m * r.n)
    r.class_of.assign(static_cast<std::size_t>(r.m * r.n), 0);  // one class: every element
  if (r.class_of.empty())
    throw InputError(fmt::format("--order {}: {} classes of elements but no element_classes (written by an older fpcert reveal): reveal again",
                                 path, r.classes.size()));
  if (const std::string why = unusable(r); !why.empty()) throw InputError("--order " + path + ": " + why);
  return f;
}

std::vector<std::uint64_t> RevealedOrder::emulate(const KernelTraits& t, const std::vector<double>& a, const std::vector<double>& b) const {
  const std::int64_t m = reveal.m, n = reveal.n, k = reveal.k;
  const auto uk = static_cast<std::size_t>(k);
  std::vector<std::uint64_t> ca(a.size()), cb(b.size());  // A row-major; B column by column
  const auto code = [](const Format& f, double v) { return round_double(f, v, Rounder::nearest(f)).code; };  // exact: values of f
  for (std::size_t i = 0; i < a.size(); ++i) ca[i] = code(*t.a_input, a[i]);
  for (std::int64_t q = 0; q < k; ++q)
    for (std::int64_t c = 0; c < n; ++c)
      cb[static_cast<std::size_t>(c) * uk + static_cast<std::size_t>(q)] = code(*t.b_input, b[static_cast<std::size_t>(q * n + c)]);
  std::vector<std::uint64_t> out(static_cast<std::size_t>(m * n), 0);
  for (std::size_t ci = 0; ci < replay.size(); ++ci) {
    const TreeReplay& rp = *replay[ci];
    const int cls = static_cast<int>(ci);
    std::vector<ReplayLine> blines(static_cast<std::size_t>(n));
    parallel_for(static_cast<std::uint64_t>(n), 16, [&](std::uint64_t c0, std::uint64_t c1, unsigned) {
      for (std::uint64_t c = c0; c < c1; ++c) blines[c] = rp.line_b(std::span<const std::uint64_t>(cb.data() + c * uk, uk));
    });
    parallel_for(static_cast<std::uint64_t>(m), 1, [&](std::uint64_t r0, std::uint64_t r1, unsigned) {
      for (std::uint64_t r = r0; r < r1; ++r) {
        const ReplayLine al = rp.line_a(std::span<const std::uint64_t>(ca.data() + r * uk, uk));
        for (std::int64_t c = 0; c < n; ++c) {
          const std::size_t e = r * static_cast<std::size_t>(n) + static_cast<std::size_t>(c);
          if (reveal.class_of[e] == cls) out[e] = rp.run(al, blines[static_cast<std::size_t>(c)]);
        }
      }
    });
  }
  return out;
}

bool OrderSource::reveals(const std::string& kernel) const {
  const std::string base = base_kernel(kernel);
  if (opt_.reveal_all) return true;
  for (const auto& k : opt_.reveal_kernels)
    if (k == kernel || k == base) return true;
  return false;
}

bool OrderSource::applies(const std::string& kernel) const {
  const std::string base = base_kernel(kernel);
  if (reveals(kernel)) return true;
  for (const auto& f : opt_.files)
    if (f.reveal.kernel == kernel || f.reveal.kernel == base) return true;
  return false;
}

std::shared_ptr<const RevealedOrder> OrderSource::order_for(GemmKernel& kernel, DeviceApi& api, std::int64_t m, std::int64_t n, std::int64_t k) {
  const std::lock_guard<std::mutex> lock(mu_);
  const std::string key = kernel.name() + "@" + shape_text(m, n, k);
  if (const auto it = cache_.find(key); it != cache_.end()) return it->second;
  auto o = std::make_shared<RevealedOrder>();
  OrderRecord& rec = o->record;
  rec.m = m;
  rec.n = n;
  rec.k = k;
  const std::string base = base_kernel(kernel.name());
  const OrderFile* file = nullptr;
  std::string shapes;
  for (const auto& f : opt_.files)
    if (f.reveal.kernel == kernel.name() || f.reveal.kernel == base) {
      if (f.reveal.m == m && f.reveal.n == n && f.reveal.k == k) file = &f;
      shapes += (shapes.empty() ? "" : ", ") + shape_text(f.reveal.m, f.reveal.n, f.reveal.k) + " in " + f.path;
    }
  RevealOptions ro;
  ro.m = m;
  ro.n = n;
  ro.k = k;
  ro.seed = opt_.seed;
  ro.max_classes = opt_.max_classes;
  ro.max_launches = opt_.max_launches;
  ro.timeout_ms = opt_.timeout_ms;
  ro.cards = opt_.cards;
  ro.replay = false;  // run below, keeping the arithmetic it chose
  ro.replay_samples = opt_.check_samples;
  ro.replay_trials_max = 8;
  const auto done = [&]() -> std::shared_ptr<const RevealedOrder> {
    cache_[key] = o;
    return o;
  };
  if (file) {
    rec.source = "file";
    rec.file = file->path;
    o->reveal = file->reveal;
    for (auto& c : o->reveal.classes) c.replay = {};  // checked again below, on this kernel
    o->reveal.launches = 0;
  } else if (reveals(kernel.name())) {
    rec.source = "revealed";
    try {
      o->reveal = reveal_order(kernel, api, ro);
    } catch (const InputError& e) {
      rec.fallback = std::string("revelation refused: ") + e.what();
      return done();
    } catch (const std::exception& e) {
      rec.fallback = std::string("the kernel failed during the revelation: ") + e.what();
      return done();
    }
  } else {
    rec.source = "file";
    rec.fallback = fmt::format("no revealed order for {} at {} (the order files hold {})", kernel.name(), shape_text(m, n, k), shapes);
    return done();
  }
  RevealResult& r = o->reveal;
  rec.launches = r.launches;
  rec.tree = trees_text(r);
  if (std::string why = unusable(r); !why.empty()) {
    for (std::size_t at; (at = why.find("(--max-launches)")) != std::string::npos;) why.replace(at, 16, "(--reveal-max-launches)");
    rec.fallback = std::move(why);
    return done();
  }
  // The arithmetic of every class: chosen and checked on random inputs against this kernel.
  std::vector<std::optional<TreeArith>> chosen;
  try {
    replay_classes(kernel, api, r, r.class_of, ro, &chosen);
  } catch (const std::exception& e) {
    rec.fallback = std::string("the kernel failed during the replay check: ") + e.what();
    return done();
  }
  int trials = 0;
  for (std::size_t ci = 0; ci < r.classes.size(); ++ci) {
    const RevealClass& c = r.classes[ci];
    trials = std::max(trials, c.replay.trials);
    if (!c.replay.passed() || !chosen[ci]) {
      o->refuted = c.replay.why_not.empty() && c.replay.ran;
      rec.fallback = !c.replay.why_not.empty()
                         ? fmt::format("class {} ({}): the replay cannot run: {}", ci, c.where, c.replay.why_not)
                         : fmt::format("class {} ({}): the replay of its tree under {} gave {} of {} elements equal to the kernel on random inputs{}", ci,
                                       c.where, c.replay.assumed, c.replay.equal, c.replay.compared,
                                       c.replay.diffs.empty() ? "" : "; first: " + c.replay.diffs.front().note);
      return done();
    }
    o->replay.push_back(std::make_shared<const TreeReplay>(c.tree, *chosen[ci]));
    if (rec.arithmetic.find(c.replay.assumed) == std::string::npos) rec.arithmetic += (rec.arithmetic.empty() ? "" : "; ") + c.replay.assumed;
  }
  rec.launches += trials + 1;  // the replay check's launches (the first repeated)
  std::uint64_t equal = 0, compared = 0;
  std::int64_t verified = 0;
  for (const auto& c : r.classes) {
    equal += c.replay.equal;
    compared += c.replay.compared;
    verified += c.verified;
  }
  rec.checks = fmt::format("{}{}{}; replay on random inputs: {} of {} elements equal", r.determinism.empty() ? "" : r.determinism + "; ",
                           r.value_check.empty() ? "" : r.value_check + "; ",
                           verified ? fmt::format("{} answers checked against the trees", verified) : "answers of the file's revelation", equal, compared);
  rec.used = true;
  return done();
}

OrderOverride OrderSource::as_override(const std::shared_ptr<const RevealedOrder>& o, const KernelTraits& t) {
  OrderOverride ov;
  const OrderRecord& rec = o->record;
  ov.name = rec.source == "file" && !rec.file.empty() ? fmt::format("the order revealed in {} ({})", rec.file, rec.tree)
                                                      : fmt::format("the revealed order ({})", rec.tree.empty() ? "no tree" : rec.tree);
  if (!rec.used) {
    ov.fallback = rec.fallback;
    return ov;
  }
  ov.emulate = [o, t](const std::vector<double>& a, const std::vector<double>& b) { return o->emulate(t, a, b); };
  return ov;
}

}  // namespace fpcert
