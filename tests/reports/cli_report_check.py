#!/usr/bin/env python3
"""tests/reports/cli_report_check.py — `fpcert report` and `--html` from the command line.

Usage: cli_report_check.py FPCERT SAMPLE_DIR
SAMPLE_DIR holds sample_r*.json (report_sample). Writes SAMPLE_DIR/report.html (for the rendering
test) after checking it with check_html.py against the JSON it came from.
"""
import glob
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
failures = []


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    return p.returncode, p.stdout, p.stderr


def expect(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def check_html(html, srcs):
    cmd = [sys.executable, os.path.join(HERE, "check_html.py"), html, "--require-tagged"]
    for k, v in srcs:
        cmd += ["--src", f"{k}={v}"]
    rc, out, err = run(cmd)
    print(out.strip().splitlines()[-1] if out.strip() else err)
    if rc != 0:
        print(out[-4000:])
    return rc


def main(argv):
    fpcert, d = argv[1], argv[2]
    runs = sorted(glob.glob(os.path.join(d, "sample_r*.json")))
    expect(len(runs) >= 1, f"sample results in {d}")

    # A real exhaustive conversion check, with --json and --html.
    conv_json, conv_html = os.path.join(d, "conv_bf16_f16.json"), os.path.join(d, "conv_bf16_f16.html")
    rc, out, err = run([fpcert, "convert", "--from", "bf16", "--to", "f16", "--exhaustive", "--json", conv_json,
                        "--html", conv_html])
    expect(rc in (0, 1) and os.path.exists(conv_json) and os.path.exists(conv_html),
           f"fpcert convert --exhaustive --json --html (exit {rc}) {err.strip()}")
    if os.path.exists(conv_html):
        expect(check_html(conv_html, [("c0", conv_json)]) == 0, "convert --html: strict parse, numbers equal the JSON's")

    # fpcert report on everything.
    report = os.path.join(d, "report.html")
    if os.path.exists(report):
        os.remove(report)
    rc, out, err = run([fpcert, "report", *runs, conv_json, "-o", report])
    expect(rc == 0 and os.path.exists(report), f"fpcert report ... -o report.html (exit {rc}) {err.strip()}")
    srcs = [(f"r{i}", p) for i, p in enumerate(runs)] + [("c0", conv_json)]
    if os.path.exists(report):
        expect(check_html(report, srcs) == 0, "report.html: strict parse, every number equals the JSON's")

    # A crashed run's partial JSON lines are accepted.
    with open(runs[0]) as fh:
        whole = json.load(fh)
    partial = os.path.join(d, "partial.jsonl")
    with open(partial, "w") as fh:
        for c in whole["cases"][:3]:
            fh.write(json.dumps(c) + "\n")
    rc, out, err = run([fpcert, "report", partial, "-o", os.path.join(d, "partial.html")])
    expect(rc == 0, f"fpcert report on .jsonl (exit {rc}) {err.strip()}")

    # Bad input: exit 2 with a message that names the file.
    bad = os.path.join(d, "bad.json")
    for content, what in (("", "empty"), ("{not json", "malformed"), ('{"hello": 1}', "neither results nor conversion"),
                          ('{"cases": [{"case": "x", "status": "bogus"}]}', "bad status")):
        with open(bad, "w") as fh:
            fh.write(content)
        rc, out, err = run([fpcert, "report", bad, "-o", os.path.join(d, "bad.html")])
        expect(rc == 2 and "bad.json" in err, f"{what} file: exit {rc}, message {err.strip()!r}")
    rc, out, err = run([fpcert, "report", os.path.join(d, "missing.json"), "-o", os.path.join(d, "m.html")])
    expect(rc == 2 and "missing.json" in err, f"missing file: exit {rc}, message {err.strip()!r}")
    rc, out, err = run([fpcert, "report", runs[0]])
    expect(rc == 2, f"no -o: exit {rc}")
    expect(not os.path.exists(os.path.join(d, "bad.html")), "nothing written for bad input")

    print(f"cli_report_check: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
