#!/usr/bin/env python3
"""tests/reports/cli_report_check.py — `fpcert report` and `--html` from the command line.

Usage: cli_report_check.py FPCERT SAMPLE_DIR
SAMPLE_DIR holds sample_r*.json (report_sample). Writes SAMPLE_DIR/report.html (for the rendering
test) after checking it with check_html.py against the JSON it came from, and SAMPLE_DIR/diff.html (the
comparison of the two `tiles` runs); runs certify --compare end to end.
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


def check_presets(fpcert, d):
    """fpcert experiment --preset and run-suite --preset (docs/experiments.md): the method printed before the
    table, JSON records, HTML tables whose numbers equal the JSON's, fpcert report on records, clear errors."""
    e_json, e_html = os.path.join(d, "split_panorama.json"), os.path.join(d, "split_panorama.html")
    rc, out, err = run([fpcert, "experiment", "split-scalar", "--preset", "panorama", "--pairs", "20000", "--seed", "3",
                        "--json", e_json, "--html", e_html])
    expect(rc == 0, f"experiment split-scalar --preset panorama (exit {rc}) {err.strip()}")
    expect(out.find("Method: 20000 pairs") >= 0 and out.find("Method:") < out.find("9xbf16"),
           "the method paragraph comes first, with the pair count")
    if os.path.exists(e_json):
        with open(e_json) as fh:
            rec = json.load(fh)
        methods = [r["method"] for r in rec["tables"][0]["rows"]]
        expect(rec["kind"] == "experiment" and rec["preset"] == "panorama" and
               methods == ["fp32", "1xtf32", "3xtf32", "1xbf16", "3xbf16", "6xbf16", "9xbf16"],
               f"split-scalar record: kind, preset, the seven methods ({methods})")
        expect(rec["extra"]["seed"] == 3, "the seed is recorded")
    if os.path.exists(e_html):
        expect(check_html(e_html, [("e0", e_json)]) == 0, "experiment --html: strict parse, numbers equal the JSON's")

    a_json = os.path.join(d, "accumulation.json")
    rc, out, err = run([fpcert, "experiment", "accumulation", "--device", "cpu", "--mn", "8", "--json", a_json])
    expect(rc == 0, f"experiment accumulation --device cpu (exit {rc}) {err.strip()}")
    if os.path.exists(a_json):
        with open(a_json) as fh:
            rec = json.load(fh)
        fit = {r["pipeline"]: r["exponent"] for r in rec["tables"][2]["rows"]}
        stall = rec["tables"][0]["rows"][0]["value"]
        expect(stall == 2048, f"the fp16 running sum stalls at 2048 ({stall})")
        # fp16 accumulation: rounding errors of the running sum add up, E_F ~ K^0.5; fp32 accumulation of fp16
        # inputs: the input rounding dominates, E_F flat in K. A gap of 0.25 leaves room for 64 samples per K.
        expect(fit["FP16 in, fp16 acc"] - fit["FP16 in, fp32 acc"] > 0.25, f"fitted exponents: fp16 acc grows faster ({fit})")

    c_json = os.path.join(d, "course.json")
    rc, out, err = run([fpcert, "experiment", "three-pipeline", "--preset", "course", "--device", "cpu", "--mn", "16",
                        "--json", c_json])
    expect(rc == 0 and "This run differs: M = N = 16" in out, f"three-pipeline --preset course --mn 16 (exit {rc}) {err.strip()}")
    if os.path.exists(c_json):
        with open(c_json) as fh:
            rec = json.load(fh)
        expect(len(rec["tables"][0]["rows"]) == 9 and len(rec["tables"][1]["rows"]) == 3,
               "course record: 3 K x 3 pipelines, and 3 fp16-acc / fp32-acc ratios")

    p_json, p_html = os.path.join(d, "panorama_a.json"), os.path.join(d, "panorama_a.html")
    rc, out, err = run([fpcert, "run-suite", "accuracy-vs-k", "--preset", "panorama", "--mn", "8", "--case", "k64_uniform",
                        "--kernels", "model_gemm_f32,model_gemm_f16_f16acc", "--json", p_json, "--html", p_html])
    expect(rc == 0 and "E_max (row-sum)" in out and out.find("Method:") < out.find("Normwise errors"),
           f"run-suite --preset panorama: method first, then the source's table (exit {rc}) {err.strip()}")
    if os.path.exists(p_html):
        expect(check_html(p_html, [("r0", p_json)]) == 0, "run-suite --preset --html: strict parse, numbers equal the JSON's")

    all_html = os.path.join(d, "experiments.html")
    rc, out, err = run([fpcert, "report", e_json, p_json, a_json, "-o", all_html])
    expect(rc == 0, f"fpcert report on experiment records and a preset run (exit {rc}) {err.strip()}")
    if os.path.exists(all_html):
        expect(check_html(all_html, [("e0", e_json), ("e1", a_json), ("r0", p_json)]) == 0,
               "report of records: strict parse, numbers equal the JSON's")

    for args, what in ((["experiment", "split-scalar", "--preset", "course"], "a preset the experiment has not"),
                       (["experiment", "split-scalar", "--preset", "panorama", "--device", "cuda"], "panorama split-scalar on cuda"),
                       (["experiment", "split-scalar", "--preset", "panorama", "--emin", "-10"], "panorama with --emin"),
                       (["experiment", "three-pipeline", "--preset", "course", "--device", "gpu"], "a device that is not one"),
                       (["run-suite", "quick", "--preset", "panorama", "--kernels", "model_gemm_f32"], "a suite without the preset")):
        rc, out, err = run([fpcert, *args])
        expect(rc == 2 and err.strip() != "", f"{what}: exit {rc}, message {err.strip()!r}")


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

    # Two runs of one suite (the sample's `tiles` runs: model_gemm_f32, then its tail-tile mutant under its name):
    # the comparison report, for the rendering test too.
    tiles = []
    for p in runs:
        with open(p) as fh:
            if json.load(fh)["suite"] == "tiles":
                tiles.append(p)
    expect(len(tiles) == 2, f"two sample runs of the suite tiles ({tiles})")
    if len(tiles) == 2:
        diff = os.path.join(d, "diff.html")
        rc, out, err = run([fpcert, "report", tiles[0], tiles[1], "-o", diff])
        expect(rc == 0 and os.path.exists(diff), f"fpcert report OLD NEW -o diff.html (exit {rc}) {err.strip()}")
        if os.path.exists(diff):
            expect(check_html(diff, [("r0", tiles[0]), ("r1", tiles[1])]) == 0, "diff.html: strict parse, numbers equal the JSON's")
            with open(diff) as fh:
                h = fh.read()
            expect('<section class="compare"' in h and "REGRESSED" in h and "tail_40x40" in h,
                   "diff.html opens with the comparison and names the flipped case")
            expect(h.find('<section class="compare"') < h.find('<section class="run"'), "the comparison comes before the runs")

    # certify --compare: the comparison printed after the verdict and at the top of --html.
    q1, q2, qh = (os.path.join(d, x) for x in ("cmp_old.json", "cmp_new.json", "cmp.html"))
    base = [fpcert, "certify", "--kernel", "model_gemm_f32", "--suite", "quick", "--no-mutation", "--mn", "24"]
    rc, out, err = run(base + ["--json", q1])
    expect(rc == 0 and os.path.exists(q1), f"certify quick --json (exit {rc}) {err.strip()[-300:]}")
    rc, out, err = run(base + ["--compare", q1, "--json", q2, "--html", qh, "--error-maps"])
    expect(rc == 0 and "compared with" in out and "0 verdict(s) flipped" in out,
           f"certify --compare: the comparison printed, nothing flipped (exit {rc}) {out.strip()[-300:]} {err.strip()[-300:]}")
    for path, maps in ((q1, False), (q2, True)):
        if os.path.exists(path):
            with open(path) as fh:
                cases = json.load(fh)["cases"]
            have = [("error_map" in c) for c in cases if c["status"] == "pass"]
            expect(len(have) > 0 and all(h == maps for h in have),
                   f"{os.path.basename(path)}: passing cases {'carry' if maps else 'carry no'} error maps ({sum(have)} of {len(have)})")
            for c in cases:
                if "error_map" in c:
                    e = c["error_map"]
                    expect(e["rows"] * e["cols"] == len(e["max_frac"]) and e["rows"] <= 64 and e["cols"] <= 64,
                           f"{c['case']}: error map {e['rows']}x{e['cols']} cells, at most 64 a side")
                    break
    if os.path.exists(qh):
        expect(check_html(qh, [("r0", q1), ("r1", q2)]) == 0, "certify --compare --html: strict parse, numbers equal the JSON's")
        with open(qh) as fh:
            h = fh.read()
        expect('<section class="compare"' in h, "certify --compare --html holds the comparison")
        expect("Error maps of passing cases" in h, "certify --error-maps --html draws the passing cases' maps")
    rc, out, err = run(base + ["--compare", os.path.join(d, "missing.json")])
    expect(rc == 2 and "missing.json" in err, f"certify --compare on a missing file: exit {rc}, message {err.strip()!r}")

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

    check_presets(fpcert, d)

    print(f"cli_report_check: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
