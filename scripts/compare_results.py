#!/usr/bin/env python3
"""scripts/compare_results.py — are two fpcert outputs the same result? For a refactoring that must
not change behaviour: the verdicts, counts and figures of a run recorded before and after it.

  compare_results.py BEFORE AFTER

BEFORE/AFTER are files of the same kind:
  *.json  a certify / run-suite results file (cases matched by suite, kernel and case id: status,
          reason, every metric, bound and gate figure compared exactly), or a conversion file of
          `fpcert convert --exhaustive|--all --json` (every field compared exactly);
  *.txt   a printed summary: compared line by line, with times, rates and thread counts masked.
What may differ between two runs of the same build is ignored: timings, the environment stamp, the
command line (paths), thread counts. Fields only AFTER has are listed as added, not as differences.
Exit 0: the same; 1: differences, listed (the first 40); 2: usage.
"""
import json
import re
import sys

# Keys whose values depend on when, where and how fast a run happened, not on what it found.
VOLATILE = {
    "command", "environment", "timestamp", "seconds", "wall_seconds", "time_ms_median", "time_ms_mean", "tflops",
    "speed_ratio", "timing", "kernel_ms", "gpu_ms", "transfer_ms", "wall_s", "gpu_s", "transfer_s", "check_s", "wait_s", "threads",
    "device_info", "env",
}


ADDED = set()


def walk(a, b, path, diffs):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k in VOLATILE:
                continue
            if k not in b:
                diffs.append(f"{path}/{k}: only before")
                continue
            if k not in a:  # a field the new version adds: listed, not a difference
                ADDED.add(re.sub(r"\[\d+\]", "[]", re.sub(r"^case [^/]*/[^/]*/[^/]*", "case", f"{path}/{k}")))
                continue
            walk(a[k], b[k], f"{path}/{k}", diffs)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            diffs.append(f"{path}: {len(a)} items before, {len(b)} after")
        for i, (x, y) in enumerate(zip(a, b)):
            walk(x, y, f"{path}[{i}]", diffs)
    elif a != b:
        diffs.append(f"{path}: {a!r} before, {b!r} after")


def case_key(c):
    return (c.get("suite", ""), c.get("kernel", ""), c.get("case", c.get("case_id", "")))


def compare_run(a, b, diffs):
    ca = {case_key(c): c for c in a["cases"]}
    cb = {case_key(c): c for c in b["cases"]}
    for k in sorted(set(ca) | set(cb)):
        if k not in ca or k not in cb:
            diffs.append(f"case {'/'.join(k)}: only in {'after' if k not in ca else 'before'}")
            continue
        walk(ca[k], cb[k], "case " + "/".join(k), diffs)
    rest_a = {k: v for k, v in a.items() if k != "cases"}
    rest_b = {k: v for k, v in b.items() if k != "cases"}
    walk(rest_a, rest_b, "run", diffs)
    statuses = {}
    for c in b["cases"]:
        statuses[c.get("status")] = statuses.get(c.get("status"), 0) + 1
    return f"{len(cb)} cases ({', '.join(f'{k} {v}' for k, v in sorted(statuses.items()))})"


def mask(line):
    line = re.sub(r"\d+(\.\d+)?(e[-+]?\d+)? ?(s|ms|M patterns/s|threads?)\b", "<t>", line)
    line = re.sub(r"(/[^\s/]+)+/(fpcert|[\w.-]+\.json)", r"\2", line)  # paths of the binary and files
    return line


def compare_text(a, b, diffs):
    # `time` lines and blank lines are the recorder's; an exit status line ("rc=N") is compared when both have one.
    def lines(t):
        return [mask(x) for x in t.splitlines() if x.strip() and not x.startswith(("real\t", "user\t", "sys\t"))]
    la, lb = lines(a), lines(b)
    if any(x.startswith("rc=") for x in la) != any(x.startswith("rc=") for x in lb):
        la = [x for x in la if not x.startswith("rc=")]
        lb = [x for x in lb if not x.startswith("rc=")]
    # Timing columns of tables carry no unit: the certify table's rows are compared without "time ms", the rows of `convert --all` without "seconds" and "Mpat/s".
    def table(l):
        parts = l.split()
        if len(parts) >= 9 and parts[2] in ("pass", "fail", "not_supported", "crashed", "hung", "error"):
            return " ".join(parts[:-2] + parts[-1:])
        if len(parts) == 8 and parts[-1] in ("PASS", "FAIL"):  # convert --all: seconds and Mpat/s columns
            return " ".join(parts[:-3] + parts[-1:])
        return l
    la, lb = [table(x) for x in la], [table(x) for x in lb]
    if len(la) != len(lb):
        diffs.append(f"{len(la)} lines before, {len(lb)} after")
    for i, (x, y) in enumerate(zip(la, lb), 1):
        if x != y:
            diffs.append(f"line {i}: {x!r} before, {y!r} after")
    return f"{len(lb)} lines"


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(sys.argv[1], encoding="utf-8") as f:
        ta = f.read()
    with open(sys.argv[2], encoding="utf-8") as f:
        tb = f.read()
    diffs = []
    if sys.argv[1].endswith(".json"):
        a, b = json.loads(ta), json.loads(tb)
        if isinstance(a, dict) and "cases" in a:
            what = compare_run(a, b, diffs)
        else:
            walk(a, b, "", diffs)
            what = f"conversion results ({a.get('patterns', len(a.get('conversions', [])))} patterns/entries)"
    else:
        what = compare_text(ta, tb, diffs)
    if diffs:
        print(f"DIFFERENT: {sys.argv[1]} vs {sys.argv[2]}: {what}, {len(diffs)} difference(s)")
        for d in diffs[:40]:
            print("  " + d)
        return 1
    print(f"SAME: {sys.argv[1]} vs {sys.argv[2]}: {what}; every verdict, count and figure identical")
    if ADDED:
        print("  fields added after: " + ", ".join(sorted(ADDED)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
