// cli/scale.cpp — shards, one worker process per device, MPI ranks: one plan, one partition, one
// merge (results/merge.hpp) for every command that runs many cases (docs/scale.md).
#include "cli/scale.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "base/atomic_file.hpp"
#include "base/error.hpp"
#include "base/shard.hpp"
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/mpi.hpp"
#include "generators/generate.hpp"
#include "results/merge.hpp"
#include "results/results_json.hpp"
#include "suites/ops/gemm/gemm_operation.hpp"

namespace fpcert::cli {

void add_scale_options(CLI::App* app, ScaleArgs& s) {
  app->add_option("--shard", s.shard,
                  "Run part I of N of the work (I/N, 1 <= I <= N; or slurm: from SLURM_ARRAY_TASK_ID/COUNT); merge the parts' "
                  "--json files with fpcert merge (docs/scale.md)");
  app->add_option("--devices", s.devices,
                  "One worker process per GPU: all, or ordinals 0,1,...; all:N or 0:N,1:N: N workers share each (their host work "
                  "in parallel); host:N: N workers and no GPU (CPU kernels); the results are merged as one run's (docs/scale.md)");
  app->add_flag("--mpi", s.mpi, "Split the work over the ranks of mpirun/srun; rank 0 writes the merged outputs (docs/scale.md)");
}

std::vector<std::string> RunPlan::keys() const {
  std::vector<std::string> k;
  k.reserve(items.size());
  for (const auto& i : items) k.push_back(i.key());
  return k;
}

std::string RunPlan::fingerprint() const {
  std::string text = options + "\n";
  for (const auto& i : items) text += i.key() + "\t" + i.spec + "\n";
  return fmt::format("{:016x}", fnv1a64(text.data(), text.size()));
}

namespace {

// When a worker first consults its selection (the command starts walking its work: the end of its start-up).
std::chrono::steady_clock::time_point g_first_claim;
std::once_flag g_first_claim_once;
void mark_first_claim() { std::call_once(g_first_claim_once, [] { g_first_claim = std::chrono::steady_clock::now(); }); }
double since(std::chrono::steady_clock::time_point t0, std::chrono::steady_clock::time_point t) { return std::chrono::duration<double>(t - t0).count(); }

std::vector<std::size_t> units_of(const RunPlan& plan, const Shard& shard) {
  std::vector<double> costs;
  for (const auto& u : plan.units) costs.push_back(u.cost);
  return shard_units(costs, shard);
}

/// The items of these units: every one (All), or those outside claimable units (Fixed).
enum class Units { All, Fixed };
std::set<std::string> items_of(const RunPlan& plan, const std::vector<std::size_t>& units, Units which) {
  std::set<std::string> sel;
  for (const std::size_t u : units)
    if (which == Units::All || !plan.units[u].claimable)
      for (const std::size_t i : plan.units[u].items) sel.insert(plan.items[i].key());
  return sel;
}

}  // namespace

std::set<std::string> shard_selection(const RunPlan& plan, const std::string& shard_text) {
  return items_of(plan, units_of(plan, parse_shard(shard_text)), Units::All);
}

std::string claims_dir(const std::string& workers_dir) { return workers_dir + "/claims"; }
std::string claim_file(const std::string& dir, std::size_t unit) { return fmt::format("{}/unit{}", dir, unit); }

Selection::Selection(const RunPlan& plan, std::set<std::string> fixed, const std::vector<std::size_t>& eligible, std::string dir,
                     std::string worker, const std::vector<std::size_t>& order)
    : fixed_(std::move(fixed)), dir_(std::move(dir)), worker_(std::move(worker)) {
  for (const std::size_t u : eligible)
    if (plan.units[u].claimable)
      for (const std::size_t i : plan.units[u].items) unit_of_[plan.items[i].key()] = u;
  for (const std::size_t u : order) rank_.emplace(u, rank_.size());
}

std::size_t Selection::rank(const std::string& key) const {
  mark_first_claim();
  const auto it = unit_of_.find(key);
  if (it == unit_of_.end()) return SIZE_MAX;
  const auto r = rank_.find(it->second);
  return r != rank_.end() ? r->second : rank_.size() + it->second;  // not in the order: after it, in plan order
}

std::string cost_file() {
  if (const char* f = std::getenv("FPCERT_COST_FILE")) return f;  // set empty: no history
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/fpcert/unit-seconds.json";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/fpcert/unit-seconds.json";
  return "";
}

std::map<std::string, double> read_unit_seconds(const std::string& path, std::string* problem) {
  std::map<std::string, double> out;
  std::ifstream in(path);
  if (path.empty() || !in) return out;  // no history yet
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    for (const auto& [k, v] : j.at("unit_seconds").items())
      if (v.is_number() && v.get<double>() >= 0) out[k] = v.get<double>();
  } catch (const std::exception& e) {
    out.clear();
    if (problem) *problem = fmt::format("{}: not a cost file ({}); it is rewritten after this run", path, e.what());
  }
  return out;
}

namespace {
std::string history_key(const std::string& suite, const std::string& kernel) { return suite + "\t" + kernel; }
}  // namespace

std::string unit_history_key(const RunPlan& plan, std::size_t unit) {
  const PlanKey& k = plan.items[plan.units[unit].items.front()];
  return history_key(k.suite, k.kernel);
}

std::vector<std::size_t> claim_order(const RunPlan& plan, const std::vector<std::size_t>& units,
                                     const std::map<std::string, double>& history, std::size_t* known) {
  std::vector<std::size_t> claimable;
  std::vector<double> per_cost;  // seconds per plan cost of the units history knows
  for (const std::size_t u : units) {
    if (!plan.units[u].claimable) continue;
    claimable.push_back(u);
    const auto h = history.find(unit_history_key(plan, u));
    if (h != history.end() && plan.units[u].cost > 0) per_cost.push_back(h->second / plan.units[u].cost);
  }
  if (known) *known = per_cost.size();
  double scale = 1;
  if (!per_cost.empty()) {
    std::nth_element(per_cost.begin(), per_cost.begin() + static_cast<std::ptrdiff_t>(per_cost.size() / 2), per_cost.end());
    scale = per_cost[per_cost.size() / 2];
  }
  std::vector<std::pair<double, std::size_t>> est;
  for (const std::size_t u : claimable) {
    const auto h = history.find(unit_history_key(plan, u));
    est.push_back({h != history.end() ? h->second : plan.units[u].cost * scale, u});
  }
  std::stable_sort(est.begin(), est.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::size_t> order;
  for (const auto& e : est) order.push_back(e.second);
  return order;
}

std::map<std::string, double> unit_seconds(const RunPlan& plan, const std::vector<std::size_t>& units, const RunResult& run) {
  std::map<std::string, double> case_seconds, campaign;
  for (const CaseResult& c : run.cases) case_seconds[case_key(c)] = c.wall_seconds;
  for (const MutationScore& m : run.mutation) campaign[history_key(m.suite, m.kernel)] += m.seconds;
  std::map<std::string, double> out;
  for (const std::size_t u : units) {
    if (!plan.units[u].claimable) continue;
    double s = 0;
    bool all = true;
    std::set<std::string> kernels;
    for (const std::size_t i : plan.units[u].items) {
      const auto c = case_seconds.find(plan.items[i].key());
      all = all && c != case_seconds.end();
      if (c != case_seconds.end()) s += c->second;
      kernels.insert(history_key(plan.items[i].suite, plan.items[i].kernel));
    }
    for (const std::string& k : kernels)
      if (const auto m = campaign.find(k); m != campaign.end()) s += m->second;
    if (all) out[unit_history_key(plan, u)] = s;  // a unit some of whose cases never came back says nothing
  }
  return out;
}

bool Selection::has(const std::string& key) const {
  mark_first_claim();
  const auto it = unit_of_.find(key);
  if (it == unit_of_.end()) return fixed_.count(key) != 0;
  const auto m = mine_.find(it->second);
  return m != mine_.end() && m->second;
}

bool Selection::claim(const std::string& key) const {
  mark_first_claim();
  const auto it = unit_of_.find(key);
  if (it == unit_of_.end() || mine_.count(it->second)) return has(key);  // not claimable, or asked before
  // The claim names its holder from the start: written aside, then linked into place (link fails if it exists).
  const std::string path = claim_file(dir_, it->second), tmp = fmt::format("{}.{}", path, ::getpid());
  write_file_atomic(tmp, worker_ + "\n");
  const bool mine = ::link(tmp.c_str(), path.c_str()) == 0;
  const int err = errno;
  std::remove(tmp.c_str());
  if (!mine && err != EEXIST) throw std::runtime_error(fmt::format("claiming {}: {}", path, std::strerror(err)));
  mine_[it->second] = mine;
  return mine;
}

namespace {

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::size_t from = 0;
  for (;;) {
    const auto c = s.find(',', from);
    out.push_back(s.substr(from, c == std::string::npos ? std::string::npos : c - from));
    if (c == std::string::npos) break;
    from = c + 1;
  }
  return out;
}

/// The GPUs this process may use, as CUDA_VISIBLE_DEVICES entries (no CUDA call: a worker's
/// CUDA_VISIBLE_DEVICES must be set before anything initialises CUDA).
std::vector<std::string> visible_gpus() {
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES"); v && *v) return split_commas(v);
  std::vector<std::string> out;
  std::error_code ec;
  std::size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc/driver/nvidia/gpus", ec)) {
    (void)e;
    ++n;
  }
  for (std::size_t i = 0; i < n; ++i) out.push_back(std::to_string(i));
  return out;
}

/// Processes that share a host share its cores and memory: each gets its part of the threads for the host-side
/// work (references, grading) and of the case cache (suites/ops/gemm/gemm_operation.hpp) unless FPCERT_THREADS or
/// FPCERT_CASE_CACHE_MB says otherwise.
void share_threads(int processes) {
  if (processes <= 1) return;
  const auto n = static_cast<unsigned long long>(processes);
  if (!std::getenv("FPCERT_THREADS")) {
    const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
    ::setenv("FPCERT_THREADS", std::to_string(std::max(1ull, hw / n)).c_str(), 1);
  }
  if (!std::getenv("FPCERT_CASE_CACHE_MB"))
    ::setenv("FPCERT_CASE_CACHE_MB", std::to_string(gemm_case_cache_share(processes) >> 20).c_str(), 1);
}

RunResult stamped(RunResult r, const std::string& shard, const RunPlan& plan) {
  r.shard = ShardStamp{shard, plan.keys(), plan.fingerprint(), plan.evidence};
  return r;
}

/// A result for the items a worker or rank never reported: each one crashed, with the reason.
void fill_missing(RunResult& r, const RunPlan& plan, const std::set<std::string>& selected, const std::string& why) {
  std::set<std::string> have;
  for (const auto& c : r.cases) have.insert(case_key(c));
  for (const auto& item : plan.items) {
    const std::string key = item.key();
    if (!selected.count(key) || have.count(key)) continue;
    CaseResult c;
    c.suite = item.suite;
    c.case_id = item.case_id;
    c.kernel = item.kernel;
    c.status = CaseStatus::Crashed;
    c.reason = why;
    r.cases.push_back(std::move(c));
  }
}

/// Lines in a file (cases a worker has appended to its partial file).
std::size_t count_lines(const std::string& path) {
  std::ifstream in(path);
  std::size_t n = 0;
  std::string line;
  while (std::getline(in, line)) n += !line.empty();
  return n;
}

/// The workers' folder carries a marker that holds a token only this run knows; a worker writes its
/// results only as `workerN.json` in a folder whose marker holds the token it was given. So the worker
/// variables (FPCERT_WORKER_SHARD, _JSON, _TOKEN), set by hand, cannot point a run's results at any file.
constexpr const char* kWorkerMarker = ".fpcert-workers";
/// The note in which a worker gives its parent its case data's times (gemm_case_cache_stats); the parent takes it out.
constexpr const char* kWorkerCaseData = "worker case data";

std::string new_worker_token() {
  std::ifstream r("/dev/urandom", std::ios::binary);
  unsigned char b[16] = {};
  r.read(reinterpret_cast<char*>(b), sizeof b);
  std::string t;
  for (unsigned char c : b) t += fmt::format("{:02x}", c);
  const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
  return t + fmt::format("-{}-{}", ::getpid(), now);
}

/// A worker's results path, checked against the marker of its folder (throws InputError).
void check_worker_json(const std::string& json) {
  const char* token = std::getenv("FPCERT_WORKER_TOKEN");
  const std::filesystem::path p(json);
  const std::string name = p.filename().string();
  const bool named = name.size() > 11 && name.rfind("worker", 0) == 0 && name.compare(name.size() - 5, 5, ".json") == 0 &&
                     name.find_first_not_of("0123456789", 6) == name.size() - 5;
  std::ifstream m(p.parent_path() / kWorkerMarker);
  std::string held;
  std::getline(m, held);
  if (!token || !*token || !named || held.empty() || held != token)
    throw InputError("FPCERT_WORKER_SHARD, FPCERT_WORKER_JSON and FPCERT_WORKER_TOKEN are set by fpcert --devices for its own worker "
                     "processes; these do not name a worker of a running fpcert (unset them)");
}

std::string describe_status(int st) {
  if (WIFSIGNALED(st)) return fmt::format("died with signal {} ({})", WTERMSIG(st), strsignal(WTERMSIG(st)));
  return fmt::format("exited with status {}", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

int run_devices(const ScaleArgs& args, const ScaledCommand& cmd, const Shard& outer) {
  const std::vector<std::string> devices = parse_devices(args.devices);
  const int d = static_cast<int>(devices.size());
  // The workers' files: beside --json (kept when a worker fails), else in a fresh temporary folder.
  std::string dir;
  if (!cmd.json.empty()) {
    dir = cmd.json + ".workers";
    std::filesystem::create_directories(dir);
  } else {
    std::string tmpl = (std::filesystem::temp_directory_path() / "fpcert-workers-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error(std::string("mkdtemp: ") + std::strerror(errno));
    dir = tmpl;
  }
  const std::string token = new_worker_token();
  write_file_atomic(dir + "/" + kWorkerMarker, token + "\n");
  struct Worker {
    std::string device, shard, json, log;
    std::set<std::string> selected;
    std::size_t reported = 0;  // cases seen in its partial file (which it removes when it ends)
    pid_t pid = -1;
    int status = 0;
    bool done = false;
    double seconds = 0;  // from the start to its exit
  };
  std::vector<Worker> ws(static_cast<std::size_t>(d));
  // Claimable units (one kernel's cases and campaign) go to whichever worker frees up first (Selection): their claims
  // in a fresh folder. Each worker's other items are its shard's.
  const std::vector<std::size_t> outer_units = units_of(cmd.plan, outer);
  const bool claims = d > 1 && std::any_of(outer_units.begin(), outer_units.end(), [&](std::size_t u) { return cmd.plan.units[u].claimable; });
  const std::string cdir = claims_dir(dir);
  std::filesystem::remove_all(cdir);
  // Claims costliest first (longest processing time first: the last unit claimed is a short one), by each unit's
  // seconds in earlier runs on this machine, else by the plan's estimate; the workers read the order from the folder.
  const std::string costs = cost_file();
  std::string claim_note;
  if (claims) {
    std::filesystem::create_directories(cdir);
    std::string problem, text;
    std::size_t known = 0;
    const auto history = with_built_in_prior(read_unit_seconds(costs, &problem));
    if (!problem.empty()) fmt::print(stderr, "fpcert: {}\n", problem);
    const std::vector<std::size_t> order = claim_order(cmd.plan, outer_units, history, &known);
    for (const std::size_t u : order) text += std::to_string(u) + "\n";
    write_file_atomic(cdir + "/order", text);
    claim_note = fmt::format("--devices: workers claim the {} kernel unit(s) costliest first ({})\n", order.size(),
                             known ? fmt::format("{} of them timed by an earlier run, {}, else by fpcert's own (cli/unit_prior.cpp)", known, costs)
                                   : std::string("by the plan's estimate: no earlier run's times"));
  }
  // The workers' host store (suites/run/host_store.hpp): a case's problem and exact references, and the device's
  // tensor-core cards, made by the first worker that needs them and read by the others. Removed when they end.
  const std::string store = dir + "/cases";
  std::filesystem::remove_all(store);
  if (d > 1) std::filesystem::create_directories(store);
  const std::size_t total = items_of(cmd.plan, outer_units, Units::All).size();
  for (int j = 0; j < d; ++j) {
    Worker& w = ws[static_cast<std::size_t>(j)];
    w.device = devices[static_cast<std::size_t>(j)];
    w.shard = outer.within(j + 1, d).text();
    w.json = fmt::format("{}/worker{}.json", dir, j);
    w.log = fmt::format("{}/worker{}.log", dir, j);
    w.selected = claims ? items_of(cmd.plan, units_of(cmd.plan, parse_shard(w.shard)), Units::Fixed) : shard_selection(cmd.plan, w.shard);
  }
  fmt::print("--devices: {} worker(s) on device(s) {}; {} case(s){}; logs in {}\n", d, args.devices.empty() ? "all" : args.devices,
             total, outer.whole() ? "" : " of shard " + outer.text(), dir);
  fmt::print("{}", claim_note);
  std::fflush(stdout);
  const std::vector<std::string>& argv = command_args();
  for (Worker& w : ws) {
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {  // the worker: this command again, on one device, for its shard
      ::setenv("CUDA_VISIBLE_DEVICES", w.device == "host" ? "" : w.device.c_str(), 1);  // host: no GPU visible
      share_threads(d);
      ::setenv("FPCERT_WORKER_SHARD", w.shard.c_str(), 1);
      ::setenv("FPCERT_WORKER_JSON", w.json.c_str(), 1);
      ::setenv("FPCERT_WORKER_TOKEN", token.c_str(), 1);
      if (claims) ::setenv("FPCERT_WORKER_CLAIMS", "1", 1);
      else ::unsetenv("FPCERT_WORKER_CLAIMS");
      if (d > 1 && !std::getenv("FPCERT_CASE_STORE")) ::setenv("FPCERT_CASE_STORE", store.c_str(), 1);
      std::FILE* log = std::fopen(w.log.c_str(), "w");
      if (log) {
        ::dup2(fileno(log), 1);
        ::dup2(fileno(log), 2);
      }
      std::vector<char*> av;
      for (const auto& s : argv) av.push_back(const_cast<char*>(s.c_str()));
      av.push_back(nullptr);
      ::execv("/proc/self/exe", av.data());
      std::fprintf(stderr, "fpcert: cannot start a worker: %s\n", std::strerror(errno));
      ::_exit(127);
    }
    w.pid = pid;
  }
  // Progress across workers (cases done, rate, ETA) on a terminal; a line per finished worker.
  const bool tty = ::isatty(2);
  const auto t0 = std::chrono::steady_clock::now();
  for (std::size_t left = ws.size(); left > 0;) {
    for (Worker& w : ws) {
      if (w.done) continue;
      const pid_t p = ::waitpid(w.pid, &w.status, WNOHANG);
      if (p == w.pid) {
        w.done = true;
        w.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        --left;
        if (tty) std::fprintf(stderr, "\r\033[K");
        fmt::print("--devices: worker {} (device {}, shard {}) {} after {:.1f} s\n", &w - ws.data(), w.device, w.shard,
                   describe_status(w.status), w.seconds);
        std::fflush(stdout);
      }
    }
    if (left == 0) break;
    if (tty) {
      std::size_t done = 0;
      std::string per;
      for (Worker& w : ws) {
        const std::size_t n = w.reported = std::max(w.reported, w.done ? 0 : count_lines(w.json + ".partial.jsonl"));
        done += n;
        per += fmt::format("{}worker {} (dev {}): {}", per.empty() ? "" : ", ", &w - ws.data(), w.device, n);
      }
      const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const double rate = secs > 0 ? static_cast<double>(done) / secs : 0;  // a worker's last lines may go unseen: an estimate
      const std::string eta = rate > 0 ? fmt::format("{:.0f} s", static_cast<double>(total - done) / rate) : "?";
      std::fprintf(stderr, "\r\033[K[%zu/%zu cases] %.2f cases/s, ETA %s (%s)", done, total, rate, eta.c_str(), per.c_str());
      std::fflush(stderr);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  if (tty) std::fprintf(stderr, "\r\033[K");
  // The claimable units each worker held (a unit nobody claimed, possible only when workers died: the first such
  // worker's, so that it is reported crashed).
  if (claims)
    for (const std::size_t u : outer_units) {
      if (!cmd.plan.units[u].claimable) continue;
      std::string holder;
      std::ifstream(claim_file(cdir, u)) >> holder;
      auto it = std::find_if(ws.begin(), ws.end(), [&](const Worker& w) { return w.shard == holder; });
      if (it == ws.end()) it = std::find_if(ws.begin(), ws.end(), [](const Worker& w) { return !WIFEXITED(w.status) || WEXITSTATUS(w.status) > 1; });
      if (it == ws.end()) it = ws.begin();  // cannot happen: every worker that ends walks every unit
      for (const std::size_t i : cmd.plan.units[u].items) it->selected.insert(cmd.plan.items[i].key());
    }
  {
    std::error_code ec;
    std::filesystem::remove_all(store, ec);  // gigabytes at times: never kept, not even beside a failed worker's log
  }
  // Each worker's results; a worker that died fails its unreported cases only.
  std::vector<NamedRun> parts;
  std::vector<std::string> case_data;  // each worker's kWorkerCaseData note
  std::optional<RunResult> sibling;
  std::vector<std::size_t> broken;
  for (std::size_t j = 0; j < ws.size(); ++j) {
    try {
      RunResult r = read_results(ws[j].json);
      if (const auto it = r.notes.find(kWorkerCaseData); it != r.notes.end()) {  // the worker's own account, not the run's
        case_data.push_back(it->second);
        r.notes.erase(it);
      }
      if (r.shard.shard == ws[j].shard) {
        if (!sibling) {
          sibling = r;
          sibling->cases.clear();
          sibling->mutation.clear();  // the scores are this worker's: a dead worker's part must not repeat them
        }
        parts.push_back({fmt::format("worker {} (device {})", j, ws[j].device), std::move(r)});
        continue;
      }
    } catch (const std::exception&) {
    }
    broken.push_back(j);
    parts.push_back({fmt::format("worker {} (device {})", j, ws[j].device), RunResult{}});
  }
  bool all_ok = broken.empty();
  for (const std::size_t j : broken) {
    const Worker& w = ws[j];
    RunResult r = sibling ? *sibling : cmd.header();
    try {  // the cases it finished before it died
      for (auto& c : read_results(w.json + ".partial.jsonl").cases)
        if (w.selected.count(case_key(c))) r.cases.push_back(std::move(c));
    } catch (const std::exception&) {
    }
    fill_missing(r, cmd.plan, w.selected,
                 fmt::format("the worker process for device {} {} before this case finished (log: {})", w.device, describe_status(w.status), w.log));
    parts[j].run = stamped(std::move(r), w.shard, cmd.plan);
    fmt::print(stderr, "fpcert: worker {} (device {}) {}: its unfinished cases are marked crashed; log: {}\n", j, w.device,
               describe_status(w.status), w.log);
  }
  {  // Where the workers' time went: in cases and campaigns (the units' times), outside them (start-up, and the problems
     // and exact references each worker makes for the cases it runs), and idle while others finished.
    double in_cases = 0, in_campaigns = 0, total = 0, first = INFINITY, last = 0;
    for (std::size_t j = 0; j < ws.size(); ++j) {
      for (const CaseResult& c : parts[j].run.cases) in_cases += c.wall_seconds;
      for (const MutationScore& m : parts[j].run.mutation) in_campaigns += m.seconds;
      total += ws[j].seconds;
      first = std::min(first, ws[j].seconds);
      last = std::max(last, ws[j].seconds);
    }
    // The workers' own account (kWorkerCaseData): the case data outside the cases, and every miss made or read.
    double outside = 0, made = 0, read = 0, reads = 0, plan = 0, start = 0, span = 0;
    for (const std::string& note : case_data) {
      double o = 0, m = 0, r = 0, n = 0, p = 0, c = 0, d = 0;
      if (std::sscanf(note.c_str(), "case data %lf s; made %lf s, read %lf s (%lf); plan %lf s, first claim %lf s, done %lf s", &o, &m, &r, &n,
                      &p, &c, &d) == 7)
        outside += o, made += m, read += r, reads += n, plan += p, start += c, span += d;
    }
    // The rest: each worker's start-up (to its first claim), its time among its units outside cases, campaigns and case
    // data, and outside its own clock (launch, writing its results, exit).
    const double rest = total - in_cases - in_campaigns, among = span - start - in_cases - in_campaigns - outside;
    fmt::print("--devices: workers done between {:.1f} s and {:.1f} s; of their {:.0f} worker-seconds, cases {:.0f}, campaigns {:.0f}, "
               "the rest {:.0f} (the cases' problems and exact references {:.0f}, start-up to the first claim {:.0f} of which the plan "
               "{:.0f}, among the units {:.0f}, launch and results {:.0f}); {:.0f} more idle until the last ended\n",
               first, last, total, in_cases, in_campaigns, rest, outside, start, plan, among, total - span,
               last * static_cast<double>(ws.size()) - total);
    fmt::print("--devices: case data and references, in and outside the cases: made {:.0f} worker-seconds, read {:.0f} from the "
               "workers' shared store ({:.0f} read)\n", made, read, reads);
  }
  RunResult merged = merge_shards(std::move(parts));
  if (claims && !costs.empty()) {  // this run's unit times for the next run's claim order (a cache: failing to write it is no error)
    auto history = read_unit_seconds(costs);
    for (const auto& [k, v] : unit_seconds(cmd.plan, outer_units, merged)) history[k] = v;
    try {
      std::filesystem::create_directories(std::filesystem::path(costs).parent_path());
      nlohmann::json j;
      j["unit_seconds"] = history;
      write_file_atomic(costs, j.dump(1) + "\n");
    } catch (const std::exception& e) {
      fmt::print(stderr, "fpcert: the units' times were not kept for the next run's claim order: {}\n", e.what());
    }
  }
  merged.env.command = command_line();
  if (!merged.shard.present() && !outer.whole()) merged.shard = ShardStamp{outer.text(), cmd.plan.keys(), cmd.plan.fingerprint(), cmd.plan.evidence};
  const int code = cmd.finish(merged, true);
  if (all_ok) {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  return code;
}

int run_mpi(const ScaleArgs& args, ScaledCommand& cmd, const Shard& outer) {
  if (!args.devices.empty()) throw InputError("--mpi and --devices: give one (under MPI each rank takes one GPU of its node)");
  const MpiWorld w = mpi_init();
  int code = 0;
  try {
    // Node-local rank r takes the node's GPU r mod G (set before anything initialises CUDA).
    const std::vector<std::string> gpus = visible_gpus();
    if (!gpus.empty()) ::setenv("CUDA_VISIBLE_DEVICES", gpus[static_cast<std::size_t>(w.local_rank) % gpus.size()].c_str(), 1);
    share_threads(w.local_size);
    cmd.plan = cmd.make_plan();
    const std::string mine = outer.within(w.rank + 1, w.size).text();
    const Selection sel(shard_selection(cmd.plan, mine));
    PartContext ctx;
    ctx.selected = &sel;
    ctx.print_rows = false;
    if (w.rank == 0)
      fmt::print("--mpi: {} rank(s) on this run{}; rank 0 prints the merged table when all are done\n", w.size,
                 outer.whole() ? "" : " of shard " + outer.text());
    std::fflush(stdout);
    const RunResult r = stamped(cmd.execute(ctx), mine, cmd.plan);
    const std::vector<std::string> all = mpi_gather_to_root(to_json(r).dump());
    if (w.rank == 0) {
      std::vector<NamedRun> parts;
      for (std::size_t q = 0; q < all.size(); ++q) parts.push_back({fmt::format("rank {}", q), run_from_json(nlohmann::json::parse(all[q]))});
      RunResult merged = merge_shards(std::move(parts));
      merged.env.command = command_line();
      if (!merged.shard.present() && !outer.whole()) merged.shard = ShardStamp{outer.text(), cmd.plan.keys(), cmd.plan.fingerprint(), cmd.plan.evidence};
      code = cmd.finish(merged, true);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fpcert: rank %d: %s\n", w.rank, e.what());
    std::fflush(stderr);
    mpi_abort(dynamic_cast<const InputError*>(&e) ? kExitUsage : kExitKernelFailed);
  }
  code = mpi_broadcast_from_root(code);
  mpi_finalize();
  return code;
}

}  // namespace

std::vector<std::string> parse_devices(const std::string& spec) {
  const std::vector<std::string> gpus = visible_gpus();
  // An entry is a device (all, or an ordinal) and, after a colon, how many workers share it (1..64).
  const auto workers = [&](const std::string& t, std::string& dev) {
    const std::size_t colon = t.find(':');
    dev = t.substr(0, colon);
    if (colon == std::string::npos) return 1;
    const std::string n = t.substr(colon + 1);
    if (n.empty() || n.size() > 2 || n.find_first_not_of("0123456789") != std::string::npos || std::stoi(n) < 1 || std::stoi(n) > 64)
      throw InputError("--devices '" + spec + "': '" + t + "': the workers per device after ':' must be 1 to 64");
    return std::stoi(n);
  };
  std::string dev;
  if (spec.rfind("host", 0) == 0 && spec.find(',') == std::string::npos) {  // workers without a GPU: host:N
    const int per = workers(spec, dev);
    if (dev != "host") throw InputError("--devices '" + spec + "': expected host or host:N");
    return std::vector<std::string>(static_cast<std::size_t>(per), "host");
  }
  if (spec.rfind("all", 0) == 0 && spec.find(',') == std::string::npos) {
    const int per = workers(spec, dev);
    if (dev != "all") throw InputError("--devices '" + spec + "': expected all, all:N or device ordinals such as 0,1 or 0:4");
    if (gpus.empty())
      throw InputError("--devices all: no GPU found (CUDA_VISIBLE_DEVICES is unset and /proc/driver/nvidia/gpus lists none); "
                       "name the devices, e.g. --devices 0,1");
    std::vector<std::string> out;
    for (const std::string& g : gpus) out.insert(out.end(), static_cast<std::size_t>(per), g);
    return out;
  }
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const std::string& t : split_commas(spec)) {
    const int per = workers(t, dev);
    if (dev.empty() || dev.find_first_not_of("0123456789") != std::string::npos)
      throw InputError("--devices '" + spec + "': expected all, all:N or device ordinals such as 0,1 or 0:4 (got '" + t + "')");
    if (!seen.insert(dev).second)
      throw InputError("--devices '" + spec + "': device " + dev + " given twice (" + dev + ":N runs N workers on it)");
    const std::size_t i = std::stoul(dev);
    const bool mapped = std::getenv("CUDA_VISIBLE_DEVICES") && *std::getenv("CUDA_VISIBLE_DEVICES");
    if (mapped && i >= gpus.size())
      throw InputError(fmt::format("--devices '{}': device {} is not among the {} of CUDA_VISIBLE_DEVICES", spec, dev, gpus.size()));
    out.insert(out.end(), static_cast<std::size_t>(per), mapped ? gpus[i] : dev);
  }
  return out;
}

int run_scaled(const ScaleArgs& args, ScaledCommand cmd) {
  // A worker of a --devices parent: its shard, its results file, nothing else.
  if (const char* ws = std::getenv("FPCERT_WORKER_SHARD"); ws && *ws) {
    const auto entry = std::chrono::steady_clock::now();
    const char* wj = std::getenv("FPCERT_WORKER_JSON");
    if (!wj || !*wj) throw InputError("FPCERT_WORKER_SHARD is set without FPCERT_WORKER_JSON");
    check_worker_json(wj);  // before any work
    cmd.plan = cmd.make_plan();
    const double planned = since(entry, std::chrono::steady_clock::now());
    const Shard me = parse_shard(ws);
    // With claims (the parent's FPCERT_WORKER_CLAIMS=1): the claimable units of the parent's shard as this worker frees
    // up, in the folder beside its results file; without: its shard of the partition.
    const bool claims = std::getenv("FPCERT_WORKER_CLAIMS") && std::string(std::getenv("FPCERT_WORKER_CLAIMS")) == "1";
    const std::string cdir = claims_dir(std::filesystem::path(wj).parent_path().string());
    std::vector<std::size_t> order;  // the parent's claim order (a unit index per line)
    if (claims) {
      std::ifstream in(cdir + "/order");
      for (std::size_t u; in >> u;)
        if (u < cmd.plan.units.size()) order.push_back(u);
    }
    const Selection sel = claims ? Selection(cmd.plan, items_of(cmd.plan, units_of(cmd.plan, me), Units::Fixed),
                                             units_of(cmd.plan, me.parent()), cdir, ws, order)
                                 : Selection(shard_selection(cmd.plan, ws));
    PartContext ctx;
    ctx.selected = &sel;
    ctx.json = wj;
    RunResult r = stamped(cmd.execute(ctx), ws, cmd.plan);
    const GemmCaseCacheStats cs = gemm_case_cache_stats();
    const auto done = std::chrono::steady_clock::now();
    r.notes[kWorkerCaseData] = fmt::format("case data {:.3f} s; made {:.3f} s, read {:.3f} s ({}); plan {:.3f} s, first claim {:.3f} s, done {:.3f} s",
                                           cs.case_data_seconds, cs.made_seconds, cs.read_seconds, cs.store_reads, planned,
                                           since(entry, g_first_claim == std::chrono::steady_clock::time_point{} ? done : g_first_claim), since(entry, done));
    write_file_atomic(wj, to_json(r).dump(2) + "\n");
    std::remove((std::string(wj) + ".partial.jsonl").c_str());
    return exit_code(r);
  }
  const Shard outer = args.shard.empty() ? Shard{} : parse_shard(args.shard);
  if (args.mpi) return run_mpi(args, cmd, outer);
  PartContext ctx;
  ctx.json = cmd.json;
  if (outer.whole() && args.devices.empty()) return cmd.finish(cmd.execute(ctx), false);
  cmd.plan = cmd.make_plan();
  if (!args.devices.empty()) return run_devices(args, cmd, outer);
  const std::set<std::string> keys = shard_selection(cmd.plan, outer.text());
  const Selection sel(keys);
  ctx.selected = &sel;
  fmt::print("--shard {}: {} of the run's {} case(s)\n", outer.text(), keys.size(), cmd.plan.items.size());
  return cmd.finish(stamped(cmd.execute(ctx), outer.text(), cmd.plan), false);
}

}  // namespace fpcert::cli
