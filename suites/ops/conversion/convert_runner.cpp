// suites/ops/conversion/convert_runner.cpp — buffers, guards, chunks, the check and the verdict of one conversion case.
#include "suites/ops/conversion/convert_runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "base/codes.hpp"
#include "base/error.hpp"
#include "base/parallel.hpp"
#include "kernels/convert/device_convert.hpp"
#include "oracle/convert/convert_check.hpp"
#include "results/conversion.hpp"
#include "suites/ops/conversion/device_sweep.hpp"
#include "suites/run/guarded_buffer.hpp"
#include "suites/run/guarded_input.hpp"
#include "suites/run/case_run.hpp"

namespace fpcert {
namespace {

/// Above this many patterns MPFR runs only where the kernel and fpcert's model disagree, plus a
/// sample: the model itself is held to MPFR on every pattern by tests/oracle.
constexpr std::uint64_t kMpfrEveryLimit = std::uint64_t{1} << 24;

std::uint64_t all_codes(const Format& f) { return f.code_count() ? f.code_count() : ~std::uint64_t{0}; }

std::vector<std::pair<std::uint64_t, std::uint64_t>> case_ranges(const ConversionKernel& k, const ConversionCase& c) {
  if (!c.ranges.empty()) return c.ranges;
  return {{0, all_codes(*k.conversion().src)}};
}

/// A container code whose every byte is the guard byte: what an output holds until written.
std::uint64_t guard_fill(int bytes) {
  std::uint64_t v = 0;
  for (int b = 0; b < bytes; ++b) v = (v << 8) | kGuardByte;
  return v;
}

std::string who(const ConversionKernel& k) {
  return fmt::format("{} '{}'", k.backend() == Backend::Plugin ? "plugin kernel" : "kernel", k.name());
}

/// The runner-fed path: chunks of consecutive codes in, guarded results out, each chunk checked.
ConvertCheckResult sweep_fed(ConversionKernel& k, const ConversionCase& c, DeviceApi& api, const ConversionRunOptions& o,
                             double& kernel_ms, std::uint64_t& nondeterministic) {
  const ConversionTraits& t = k.conversion();
  const Format& src = *t.src;
  const Format& dst = *t.dst;
  const auto ranges = case_ranges(k, c);
  std::uint64_t total = 0;
  for (const auto& [first, count] : ranges) total += count;
  ConvertCheckSpec spec;
  spec.src = &src;
  spec.dst = &dst;
  spec.rounder = t.rounder;
  spec.seed = t.seed;
  spec.strict_nan = c.check.strict_nan;
  spec.nan_counted_apart = t.nan_counted_apart;
  spec.mpfr_every = c.mpfr_every < 0 ? total <= kMpfrEveryLimit : c.mpfr_every != 0;
  spec.mpfr_sample = c.check.mpfr_sample;
  spec.threads = c.check.threads;
  spec.max_listed = c.check.max_listed;
  // Odd chunk lengths (a kernel that assumes pairs or vectors must handle the tail), and every other
  // chunk's source one element past an aligned address, inside guard bytes that must survive.
  std::uint64_t chunk = std::max<std::uint64_t>(1, std::min<std::uint64_t>({o.chunk, total, std::uint64_t{1} << 24}));
  if (chunk > 1 && chunk % 2 == 0) --chunk;
  const int sb = container_bytes(src), db = container_bytes(dst);
  std::vector<std::uint8_t> in;
  std::uint64_t chunk_index = 0;
  GuardedBuffer out(api, static_cast<std::size_t>(chunk) * static_cast<std::size_t>(db), o.guard_bytes);
  const unsigned threads = c.check.threads ? c.check.threads : thread_count();
  const std::uint64_t fill = guard_fill(db);
  ConvertCheckResult result;
  std::vector<std::uint8_t> first_run;  // the first chunk's results, for the bitwise comparison
  std::uint64_t done = 0;
  for (const auto& [range_first, range_count] : ranges)
    for (std::uint64_t off = 0; off < range_count; off += chunk) {
      const std::uint64_t n = std::min(chunk, range_count - off);
      const std::uint64_t first = range_first + off;
      in.resize(static_cast<std::size_t>(n) * static_cast<std::size_t>(sb));
      for (std::uint64_t i = 0; i < n; ++i) store_code(in.data(), static_cast<std::int64_t>(i), sb, to_container(src, first + i));
      GuardedInput d_in(api, in, 1, static_cast<std::int64_t>(n), static_cast<std::int64_t>(n), sb, o.guard_bytes, chunk_index++ % 2 == 1);
      const int runs = first_run.empty() && done == 0 ? 2 : 1;  // the first chunk twice: the results must not change
      for (int run = 0; run < runs; ++run) {
        out.prefill(1, static_cast<std::int64_t>(n), static_cast<std::int64_t>(n), db, fill);
        api.timer_start();
        k.run(ConvertOperands{first, static_cast<std::int64_t>(n), d_in.elements(), out.elements(), api.stream()});
        kernel_ms += api.timer_stop_ms();
        api.synchronize(o.timeout_ms);
        const InputReport ir = d_in.check();
        if (ir.modified || ir.guard_changed)
          throw DeviceError(fmt::format("{} {} (a call with count {}, source codes from {})", who(k),
                                        ir.modified ? fmt::format("modified its source: {} element(s), first at {}", ir.modified, ir.first_modified)
                                                    : "wrote around its source: " + ir.first_guard,
                                        n, hex_code(src, first)));
        const GuardReport g = out.download_and_check();
        if (g.where == GuardReport::Where::Before)
          throw DeviceError(fmt::format("{} wrote before its output (byte -{} of a call with count {}, source codes from {})", who(k),
                                        g.offset, n, hex_code(src, first)));
        if (g.where != GuardReport::Where::None)
          throw DeviceError(fmt::format("{} wrote past the end of its output (byte {} after element {} of a call with count {}, "
                                        "source codes from {})",
                                        who(k), g.offset, n - 1, n, hex_code(src, first)));
        const std::size_t bytes = static_cast<std::size_t>(n) * static_cast<std::size_t>(db);
        if (runs == 2 && run == 0) {
          first_run.assign(out.host_elements(), out.host_elements() + bytes);
        } else if (runs == 2) {
          std::uint64_t differ = 0;
          for (std::uint64_t i = 0; i < n; ++i)
            differ += std::memcmp(first_run.data() + i * static_cast<std::uint64_t>(db), out.host_elements() + i * static_cast<std::uint64_t>(db),
                                  static_cast<std::size_t>(db)) != 0;
          nondeterministic += differ;
        }
      }
      std::vector<ConvertCheckResult> per(threads);
      const std::uint64_t grain = std::max<std::uint64_t>(1024, n / (threads * 8) + 1);
      const std::uint8_t* res = out.host_elements();
      parallel_for(
          n, grain,
          [&](std::uint64_t b, std::uint64_t e, unsigned w) {
            check_conversion_chunk(spec, first + b, e - b, SubjectChunk{res + b * static_cast<std::uint64_t>(db), db, true}, per[w]);
          },
          threads);
      for (const auto& p : per) result.merge(p, spec.max_listed);
      done += n;
      if (o.progress) o.progress(static_cast<double>(done) / static_cast<double>(total));
    }
  return result;
}

}  // namespace

std::uint64_t conversion_case_patterns(const ConversionKernel& kernel, const ConversionCase& c) {
  std::uint64_t n = 0;
  for (const auto& [first, count] : case_ranges(kernel, c)) n += count;
  return n;
}

CaseResult conversion_skeleton(const ConversionKernel& k, const ConversionCase& c) {
  const ConversionTraits& t = k.conversion();
  CaseResult r;
  r.suite = c.suite;
  r.case_id = c.case_id.empty() ? k.name() : c.case_id;
  r.kernel = k.name();
  r.backend = std::string(to_string(k.backend()));
  r.kernel_traits = fmt::format("{} -> {}, rounding {}, saturation {}, NaN convention {}", t.src->tag, t.dst->tag,
                                to_string(t.rounder.rounding), to_string(t.rounder.saturation), to_string(t.rounder.nan));
  r.source_format = std::string(t.src->tag);
  r.out_format = std::string(t.dst->tag);
  r.repro = c.repro;
  nlohmann::json record;
  if (auto* table = dynamic_cast<const DeviceTableKernel*>(&k)) {
    record = device_entry_json(table->entry());  // a device row that did not run: the entry's own fields
  } else {
    record = {{"kind", "conversion"},
              {"command", c.command},
              {"device", k.memory() == MemorySpace::Device ? "cuda" : "cpu"},
              {"subject", c.subject.empty() ? k.name() : c.subject},
              {"kernel", k.name()},
              {"from", t.src->tag},
              {"to", t.dst->tag},
              {"rounding", to_string(t.rounder.rounding)},
              {"saturation", to_string(t.rounder.saturation)},
              {"nan_payload", to_string(t.rounder.nan)},
              {"seed", t.seed},
              {"first", c.ranges.empty() ? 0 : c.ranges.front().first}};
    if (t.nan_counted_apart) record["nan_counted_apart"] = true;  // a PRESERVE of ABI minor 0/1 (docs/plugin.md)
  }
  r.conversion = conversion_from_json(record);
  return r;
}

void settle_conversion_record(CaseResult& r) {
  if (!r.conversion || r.status == CaseStatus::Pass || r.status == CaseStatus::Fail) return;
  nlohmann::json record = r.conversion->record;
  if (record.contains("status") && record.at("status") != "ok") return;
  record["status"] = std::string(to_string(r.status));
  record["reason"] = r.reason;
  record["passed"] = false;
  r.conversion = conversion_from_json(record);
}

CaseResult run_conversion_case(ConversionKernel& k, const ConversionCase& c, DeviceApi& api, const ConversionRunOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  const ConversionTraits& t = k.conversion();
  CaseResult r = conversion_skeleton(k, c);
  nlohmann::json record = r.conversion->record;
  auto* table = dynamic_cast<DeviceTableKernel*>(&k);
  const bool ran = run_kernel_guarded(r, [&] {
    if (table) {
      const DeviceSweepResult s = sweep_device_kernel(*table, c, o.progress);
      record = device_sweep_record(s, sweep_options_for(c));
      r.status = s.passed() ? CaseStatus::Pass : CaseStatus::Fail;
      for (const auto& f : s.failures) r.reason += (r.reason.empty() ? "" : "; ") + f;
      return;
    }
    if (std::string why = memory_mismatch(k, api); !why.empty()) throw NotSupportedError(why);
    double kernel_ms = 0;
    std::uint64_t nondeterministic = 0;
    const ConvertCheckResult res = sweep_fed(k, c, api, o, kernel_ms, nondeterministic);
    add_check_json(record, res, *t.src, *t.dst);
    record["status"] = "ok";
    record["kernel_ms"] = kernel_ms;
    record["nondeterministic"] = nondeterministic;
    r.status = res.passed() && nondeterministic == 0 ? CaseStatus::Pass : CaseStatus::Fail;
    if (nondeterministic) {
      record["passed"] = false;
      r.reason = fmt::format("not deterministic: {} results of the first chunk differ between two runs", nondeterministic);
    } else if (!res.passed()) {
      r.reason = fmt::format("{} of {} results differ from the truth{}", res.mismatches + res.model_mismatches, res.patterns,
                             res.model_mismatches ? fmt::format(" ({} where fpcert's model disagrees with MPFR: a bug in fpcert)", res.model_mismatches)
                                                  : "");
    }
  });
  r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!table) record["seconds"] = r.wall_seconds;
  r.conversion = conversion_from_json(record);
  if (!ran) settle_conversion_record(r);
  return r;
}

}  // namespace fpcert
