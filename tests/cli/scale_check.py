#!/usr/bin/env python3
"""tests/cli/scale_check.py — scale-out end to end on the CPU models (docs/scale.md): the shards of a
run (--shard I/N, --shard slurm), merged with `fpcert merge`, the workers of --devices, and the ranks
of `mpirun -n 2 --mpi` must give exactly the single run's results: every case in the same order with
the same verdict, reason, checks and figures (scripts/compare_results.py: all but times and the
environment stamp), the same counts and exit code, the same JUnit (times masked). Mixtures are
refused, each named.

  scale_check.py FPCERT SCRATCH [MPIRUN]

MPIRUN: the mpirun to test --mpi with (when fpcert was built with MPI); without it, --mpi must exit 2.
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
import compare_results  # noqa: E402

FPCERT, SCRATCH = sys.argv[1], sys.argv[2]
MPIRUN = sys.argv[3] if len(sys.argv) > 3 and sys.argv[3] else None
FAILURES = []


def run(args, env=None, expect=None):
    e = dict(os.environ)
    e.pop("FPCERT_WORKER_SHARD", None)
    e.pop("FPCERT_WORKER_JSON", None)
    for k in [k for k in e if k.startswith("SLURM_")]:
        del e[k]
    if env:
        e.update(env)
    p = subprocess.run(args, capture_output=True, text=True, env=e)
    if expect is not None and p.returncode != expect:
        FAILURES.append(f"{' '.join(args)}: exit {p.returncode}, expected {expect}\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    return p


def path(name):
    return os.path.join(SCRATCH, name)


def load(p):
    with open(p, encoding="utf-8") as f:
        return json.load(f)


def same(label, single, other):
    a, b = load(single), load(other)
    diffs = []
    compare_results.compare_run(a, b, diffs)
    order_a = [(c["suite"], c["case"], c["kernel"]) for c in a["cases"]]
    order_b = [(c["suite"], c["case"], c["kernel"]) for c in b["cases"]]
    if order_a != order_b:
        diffs.append("cases in another order")
    if "shard" in b:
        diffs.append("the merged result still carries a shard stamp")
    if diffs:
        FAILURES.append(f"{label}: differs from the single run:\n  " + "\n  ".join(diffs[:20]))
    else:
        counts = a["counts"]
        print(f"SAME {label}: {len(a['cases'])} cases, counts {counts}")


def same_junit(label, x, y):
    def masked(p):
        with open(p, encoding="utf-8") as f:
            text = re.sub(r'<property name="(command|timestamp|host)" value="[^"]*"/>', "", f.read())  # the stamp, as in the JSON
            return re.sub(r'time="[^"]*"', 'time=""', re.sub(r"timestamp=\"[^\"]*\"", "", text))
    if masked(x) != masked(y):
        FAILURES.append(f"{label}: JUnit differs from the single run's")


def refused(label, args, *needles):
    p = run(args, expect=2)
    for n in needles:
        if n not in p.stderr:
            FAILURES.append(f"{label}: stderr lacks {n!r}:\n{p.stderr[-1500:]}")


def check_run(tag, base, single_exit):
    single = path(f"{tag}_single.json")
    run(base + ["--json", single, "--junit", path(f"{tag}_single.xml")], expect=single_exit)
    data = load(single)
    if len(data["cases"]) < 4:
        FAILURES.append(f"{tag}: the single run has {len(data['cases'])} cases: too few to shard meaningfully")
    # Three shards; each file stamped with its shard, the plan, the suite and the environment.
    shards = []
    covered = 0
    for i in (1, 2, 3):
        s = path(f"{tag}_shard{i}.json")
        run(base + ["--shard", f"{i}/3", "--json", s])
        d = load(s)
        if d.get("shard", {}).get("shard") != f"{i}/3" or len(d["shard"].get("plan", [])) != len(data["cases"]):
            FAILURES.append(f"{tag}: shard {i}/3's stamp is {d.get('shard')}")
        if not d["environment"].get("fpcert_version") or d["suite"] != data["suite"]:
            FAILURES.append(f"{tag}: shard {i}/3 lacks the suite or version stamp")
        covered += len(d["cases"])
        shards.append(s)
    if covered != len(data["cases"]):
        FAILURES.append(f"{tag}: the shards hold {covered} cases, the run {len(data['cases'])}")
    merged = path(f"{tag}_merged.json")
    p = run([FPCERT, "merge", shards[2], shards[0], shards[1], "-o", merged, "--junit", path(f"{tag}_merged.xml"),
             "--html", path(f"{tag}_merged.html")], expect=single_exit)
    same(f"{tag}: --shard 1/3..3/3 + merge", single, merged)
    same_junit(f"{tag}: merge", path(f"{tag}_single.xml"), path(f"{tag}_merged.xml"))
    if not os.path.getsize(path(f"{tag}_merged.html")):
        FAILURES.append(f"{tag}: merge wrote an empty HTML report")
    # Slurm array tasks 0..2 are shards 1/3..3/3.
    for t in (0, 1, 2):
        s = path(f"{tag}_slurm{t}.json")
        run(base + ["--shard", "slurm", "--json", s], env={"SLURM_ARRAY_TASK_ID": str(t), "SLURM_ARRAY_TASK_COUNT": "3",
                                                          "SLURM_ARRAY_TASK_MIN": "0"})
        if [c["case"] + c["kernel"] for c in load(s)["cases"]] != [c["case"] + c["kernel"] for c in load(shards[t])["cases"]]:
            FAILURES.append(f"{tag}: --shard slurm task {t} covers other cases than --shard {t + 1}/3")
    # Workers, one per (pretend) device: the CPU models ignore CUDA_VISIBLE_DEVICES.
    dev = path(f"{tag}_devices.json")
    run(base + ["--devices", "0,1", "--json", dev], expect=single_exit)
    same(f"{tag}: --devices 0,1", single, dev)
    # Three workers sharing one device (--devices 0:3: their host work in parallel), then all:2 (CUDA_VISIBLE_DEVICES
    # names the pretend devices).
    dev3 = path(f"{tag}_devices3.json")
    run(base + ["--devices", "0:3", "--json", dev3], expect=single_exit)
    same(f"{tag}: --devices 0:3", single, dev3)
    dev4 = path(f"{tag}_devices4.json")
    run(base + ["--devices", "all:2", "--json", dev4], env={"CUDA_VISIBLE_DEVICES": "0,1"}, expect=single_exit)
    same(f"{tag}: --devices all:2 (two devices)", single, dev4)
    dev5 = path(f"{tag}_host2.json")
    run(base + ["--devices", "host:2", "--json", dev5], expect=single_exit)
    same(f"{tag}: --devices host:2 (no GPU)", single, dev5)
    # Two-level: shard 2/3 run by two workers, merged by its parent; then merged with 1/3 and 3/3.
    dev2 = path(f"{tag}_shard2_devices.json")
    run(base + ["--shard", "2/3", "--devices", "0,1", "--json", dev2])
    if load(dev2).get("shard", {}).get("shard") != "2/3":
        FAILURES.append(f"{tag}: --shard 2/3 --devices 0,1 is stamped {load(dev2).get('shard', {}).get('shard')}")
    merged2 = path(f"{tag}_merged2.json")
    run([FPCERT, "merge", shards[0], dev2, shards[2], "-o", merged2], expect=single_exit)
    same(f"{tag}: --shard 2/3 --devices 0,1 merged with 1/3 and 3/3", single, merged2)
    if MPIRUN:
        mp = path(f"{tag}_mpi.json")
        extra = ["--allow-run-as-root"] if os.geteuid() == 0 else []
        run([MPIRUN, "-n", "2", "--oversubscribe"] + extra + base + ["--mpi", "--json", mp], expect=single_exit,
            env={"OMPI_MCA_btl": "self,vader", "OMPI_MCA_btl_vader_single_copy_mechanism": "none"})
        if os.path.exists(mp):
            same(f"{tag}: mpirun -n 2 --mpi", single, mp)
        else:
            FAILURES.append(f"{tag}: mpirun -n 2 --mpi wrote no {mp}")
    return shards


def dying_worker():
    """A worker killed mid-run (--devices 0:2, claims): exit 3; the kernels it claimed and had not finished are crashed,
    every other case is there once, and the live worker's mutation scores appear once each."""
    import signal
    import time
    kernels = ["model_gemm_f32", "model_gemm_f16_f32acc", "model_gemm_bf16_f32acc", "model_gemm_tf32_f32acc",
               "model_gemm_f32_pairwise", "model_gemm_f64"]
    out = path("dying.json")
    claims = out + ".workers/claims"
    e = dict(os.environ)
    for k in ("FPCERT_WORKER_SHARD", "FPCERT_WORKER_JSON", "FPCERT_WORKER_CLAIMS"):
        e.pop(k, None)
    p = subprocess.Popen([FPCERT, "certify", "--suite", "certify", "--kernel", ",".join(kernels), "--devices", "0:2", "--json", out],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=e)
    victim = None
    deadline = time.time() + 120
    while victim is None and time.time() < deadline and p.poll() is None:
        held = []
        if os.path.isdir(claims):
            for f in os.listdir(claims):
                if f.startswith("unit"):  # not the claim order
                    with open(os.path.join(claims, f), encoding="utf-8") as h:
                        held.append(h.read().strip())
        if "2/2" in held:  # worker 2/2 holds a kernel: kill it (whichever process carries its shard)
            for pid in os.listdir("/proc"):
                try:
                    with open(f"/proc/{pid}/environ", "rb") as h:
                        if b"FPCERT_WORKER_SHARD=2/2\0" in h.read() and pid != str(os.getpid()):
                            with open(f"/proc/{pid}/cmdline", "rb") as c:
                                if out.encode() in c.read():
                                    victim = int(pid)
                except OSError:
                    pass
        time.sleep(0.05)
    if victim is None:
        p.wait()
        print("dying worker: not tested (the run ended before worker 2/2 claimed a kernel)")
        return
    os.kill(victim, signal.SIGKILL)
    _, err = p.communicate()
    if p.returncode != 3:
        FAILURES.append(f"dying worker: exit {p.returncode}, expected 3\n{err[-1500:]}")
        return
    d = load(out)
    keys = [(c["case"], c["kernel"]) for c in d["cases"]]
    crashed = {c["kernel"] for c in d["cases"] if c["status"] == "crashed"}
    holder = {}
    for f in os.listdir(claims):
        if f.startswith("unit"):
            with open(os.path.join(claims, f), encoding="utf-8") as h:
                holder[f] = h.read().strip()
    scores = [m["kernel"] for m in d.get("mutation", [])]
    if len(keys) != len(set(keys)) or not crashed or len(set(scores)) != len(scores) or set(scores) & crashed:
        FAILURES.append(f"dying worker: {len(keys)} cases ({len(set(keys))} distinct), crashed kernels {sorted(crashed)}, scores {scores}")
    elif sum(1 for v in holder.values() if v == "2/2") < len(crashed):
        FAILURES.append(f"dying worker: {sorted(crashed)} crashed but worker 2/2 held only {holder}")
    else:
        print(f"dying worker: exit 3, {len(keys)} cases once each, crashed {sorted(crashed)} (held by 2/2), scores {scores}")


def claim_history():
    """Workers claim kernels costliest first by the times an earlier run kept (FPCERT_COST_FILE): the first run with
    claims writes every kernel's seconds; a corrupt file is said and rewritten; the history changes no result."""
    costs = os.environ["FPCERT_COST_FILE"]
    kernels = "model_gemm_f32,model_gemm_f16_f32acc,model_gemm_f32~k_minus_1"
    base = [FPCERT, "certify", "--suite", "quick", "--mn", "16", "--kernel", kernels]
    with open(costs, "w", encoding="utf-8") as f:
        f.write("{not json")
    first = path("history1.json")
    p = run(base + ["--devices", "0:2", "--json", first], expect=1)
    if "not a cost file" not in p.stderr or "by the plan's estimate" not in p.stdout:
        FAILURES.append(f"claim history: a corrupt cost file was not said, or the order not by the plan\n{p.stdout[-800:]}\n{p.stderr[-800:]}")
    try:
        held = load(costs)["unit_seconds"]
    except (OSError, ValueError, KeyError) as e:
        FAILURES.append(f"claim history: no cost file after a run with claims ({e})")
        return
    want = {"quick\t" + k for k in kernels.split(",")}
    if set(held) != want or any(not isinstance(v, (int, float)) or v <= 0 for v in held.values()):
        FAILURES.append(f"claim history: the cost file holds {held}, expected a positive time for each of {sorted(want)}")
    second = path("history2.json")
    p = run(base + ["--devices", "0:2", "--json", second], expect=1)
    if "3 of them timed by an earlier run" not in p.stdout:
        FAILURES.append(f"claim history: the second run did not order claims by the first's times\n{p.stdout[-800:]}")
    same("claim history: the second run (claims in the order of the first's times)", first, second)
    print(f"claim history: {len(held)} kernels timed, the second run ordered by them, same results")


def mixed_suites():
    """certify over suites of several operations: GEMM kernels claimed, the softmax and reduction cases dealt out by the
    partition and run first by each worker (cli/cmd/cmd_certify.cpp); the merge gives the single run's results."""
    kernels = "model_gemm_f32,model_gemm_f16_f32acc,model_softmax_bf16_shifted,model_log_softmax_f32_shifted,model_dot_f32_seq"
    base = [FPCERT, "certify", "--suite", "certify", "--mn", "16", "--kernel", kernels]
    single = path("mixed_single.json")
    code = run(base + ["--json", single]).returncode
    if load(single)["suite"].count("+") < 2:
        FAILURES.append(f"mixed suites: the run holds suites {load(single)['suite']}, expected GEMM, softmax and reduction")
    workers = path("mixed_devices.json")
    p = run(base + ["--devices", "host:3", "--json", workers], expect=code)
    # Where the workers' time went, the rest split by the workers' own clocks (cli/scale.cpp): each part a count of
    # worker-seconds, none negative (a part counted twice would drive "among the units" below zero).
    split = re.search(r"workers done between .*the rest (-?\d+) \(the cases' problems and exact references (-?\d+), start-up to "
                      r"the first claim (-?\d+) of which the plan (-?\d+), among the units (-?\d+), launch and results (-?\d+)\)", p.stdout)
    if not split:
        FAILURES.append(f"mixed suites: no line on where the workers' time went\n{p.stdout[-800:]}")
    elif min(int(g) for g in split.groups()) < 0:
        FAILURES.append(f"mixed suites: a negative part of the workers' time: {split.group(0)}")
    # The workers share the GEMM cases' data through the host store (suites/run/host_store.hpp): how many they read
    # depends on which worker claimed which kernel (one worker may take both), so the line is required, not a count;
    # tests/suites/case_data_test.cpp holds what is read to what is made.
    shared = re.search(r"case data and references, in and outside the cases: made \d+ worker-seconds, read \d+ from the "
                       r"workers' shared store \((\d+) read\)", p.stdout)
    if not shared:
        FAILURES.append(f"mixed suites: no line on the workers' shared case data\n{p.stdout[-800:]}")
    same("mixed suites: --devices host:3 (GEMM kernels claimed, the other operations' cases partitioned)", single, workers)
    leftover = [d for d in glob.glob(os.path.join(SCRATCH, "**", "cases"), recursive=True) if os.path.isdir(d)]
    if leftover:
        FAILURES.append(f"mixed suites: the workers' case store was left behind: {leftover}")
    print(f"mixed suites: the workers read {shared.group(1) if shared else '?'} case data files the others made")


def shared_cards():
    """--devices workers on one device probe its tensor-core cards once between them, through the host store
    (cli/tc_cards.cpp): a second process with the same store and device reads every card the first probed. Without a
    usable device the probe fails and nothing is kept (the next worker would probe again)."""
    store = path("card_store")
    os.makedirs(store, exist_ok=True)
    env = {"CUDA_VISIBLE_DEVICES": "0", "FPCERT_CASE_STORE": store}
    args = [FPCERT, "certify", "--suite", "certify", "--case", "uniform", "--no-mutation", "--kernel",
            "gemm_f16_f32acc_wgmma_sm90,gemm_9xbf16_mma_sm80"]
    first = run(args, env=env)
    second = run(args, env=env)
    leftover = [f for f in os.listdir(store) if not f.endswith(".bin")]
    if leftover:
        FAILURES.append(f"shared cards: the store holds {leftover} after the probes (locks or partial files)")
    read = "2 of 2 read from the other workers' probes" in second.stdout
    if "no usable CUDA device" in first.stdout:
        if "read from the other workers' probes" in second.stdout:
            FAILURES.append(f"shared cards: a failed probe was kept for the other workers\n{second.stdout[-600:]}")
        print("shared cards: no device here: the failed probe was not kept")
        return
    if not read:
        FAILURES.append(f"shared cards: the second worker did not read both cards the first probed\n{second.stdout[-600:]}")
    print("shared cards: both cards probed once and read by the next worker")


def main():
    shutil.rmtree(SCRATCH, ignore_errors=True)
    os.makedirs(SCRATCH)
    os.environ["FPCERT_COST_FILE"] = path("unit-seconds.json")  # the claims' history stays in the scratch folder
    # run-suite: two models side by side, one case list; exit 0.
    shards = check_run("suite", [FPCERT, "run-suite", "quick", "--kernels", "model_gemm_f32,model_gemm_f16_f32acc", "--mn", "16"], 0)
    # certify, one case list per kernel; a mutant (a fault injector, docs/mutation.md) fails its gate: exit 1 in every
    # form; the model passes, so its mutation score is measured by one part and merged.
    cshards = check_run("certify", [FPCERT, "certify", "--suite", "quick", "--mn", "16", "--kernel",
                                    "model_gemm_f32,model_gemm_f32~k_minus_1"], 1)
    # With mutation scores measured, a kernel's cases stay in one part (its campaign takes their results there).
    holders = {}
    for i, s in enumerate(cshards):
        for c in load(s)["cases"]:
            holders.setdefault(c["kernel"], set()).add(i)
    if len(holders) != 2 or any(len(h) != 1 for h in holders.values()):
        FAILURES.append(f"certify: a kernel's cases are spread over shards {holders} (one unit per kernel expected)")
    single = load(path("certify_single.json"))
    if [m["kernel"] for m in single.get("mutation", [])] != ["model_gemm_f32"] or not any(c["checks"] for c in single["cases"]):
        FAILURES.append("certify: the single run lacks the model's mutation score or the cases' checks (nothing to carry through)")
    # Mixtures, each named.
    refused("a shard given twice", [FPCERT, "merge", shards[0], shards[0], shards[1], shards[2], "-o", path("x.json")], "given twice")
    refused("a shard missing", [FPCERT, "merge", shards[0], shards[1], "-o", path("x.json")], "missing shard(s): 3/3")
    other = path("other_shard1.json")
    run([FPCERT, "run-suite", "quick", "--kernels", "model_gemm_f32,model_gemm_f16_f32acc", "--mn", "8", "--shard", "1/3", "--json", other])
    refused("another run's shard", [FPCERT, "merge", other, shards[1], shards[2], "-o", path("x.json")], "plan", other)
    refused("not a shard", [FPCERT, "merge", path("suite_single.json"), shards[1], "-o", path("x.json")], "not a shard")
    refused("a bad shard spec", [FPCERT, "run-suite", "quick", "--kernels", "model_gemm_f32", "--shard", "4/3"], "--shard '4/3'")
    for spec, needle in (("0:0", "must be 1 to 64"), ("0:65", "must be 1 to 64"), ("0,0", "given twice (0:N runs N workers"),
                         ("all:x", "must be 1 to 64"), ("al:2", "expected all, all:N"), ("0:", "must be 1 to 64"),
                         ("hostx:2", "expected host or host:N"), ("host:0", "must be 1 to 64")):
        refused(f"--devices {spec}", [FPCERT, "run-suite", "quick", "--kernels", "model_gemm_f32", "--devices", spec], needle)
    refused("slurm without an array", [FPCERT, "run-suite", "quick", "--kernels", "model_gemm_f32", "--shard", "slurm"],
            "SLURM_ARRAY_TASK_ID")
    if not MPIRUN:
        p = run([FPCERT, "run-suite", "quick", "--kernels", "model_gemm_f32", "--mn", "8", "--mpi"])
        if p.returncode == 2:
            if "without MPI" not in p.stderr:
                FAILURES.append("--mpi without MPI in the build: exit 2 but no 'without MPI' message")
            print("--mpi: this build has no MPI: exit 2, said so")
        else:
            print("--mpi: not tested (no mpirun given; the build has MPI)")
    dying_worker()
    claim_history()
    mixed_suites()
    shared_cards()
    if FAILURES:
        print("FAILED:\n" + "\n".join(FAILURES))
        return 1
    print("scale-out: every form gives the single run's results")
    return 0


if __name__ == "__main__":
    sys.exit(main())
