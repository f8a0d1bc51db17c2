#!/usr/bin/env python3
"""tests/suites/reveal_certify_check.py — `fpcert certify --order revealed / FILE` end to end on CPU models
(docs/reveal.md, "Certifying with a revealed order").

Usage: reveal_certify_check.py FPCERT SCRATCH_DIR

1. certify model_gemm_f32_pairwise on the quick suite with --order revealed: exit 0; every case in the bitwise
   tier with the revealed order (JSON: order.source revealed, order.used, a pairwise tree, launches > 0; the
   bitwise check names the revealed order); the terminal has the order lines and "bitwise (revealed order)"
   rows; the HTML says the order was revealed, not declared.
2. --order FILE: a revelation written by fpcert reveal --json at a case's shape grades that case bitwise
   (order.source file); a file of another shape, or of another kernel, is refused (exit 2) with the reason;
   a missing file or a bad --order value is exit 2.
3. A budget of one launch per class: the cases fall back to the declared tier, the JSON says why.
Exit 0 when every check holds; 1 with one line per failure otherwise.
"""
import json
import os
import shutil
import subprocess
import sys


def run(fpcert, *args):
    p = subprocess.run([fpcert, *args], capture_output=True, text=True, timeout=900)
    return p.returncode, p.stdout + p.stderr


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    fpcert, scratch = sys.argv[1], sys.argv[2]
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    errors = []

    def expect(cond, what, out=""):
        if not cond:
            errors.append(what + ("\n" + out[-3000:] if out else ""))

    kernel = "model_gemm_f32_pairwise"
    j, h = os.path.join(scratch, "c.json"), os.path.join(scratch, "c.html")
    rc, out = run(fpcert, "certify", "--kernel", kernel, "--suite", "quick", "--order", "revealed", "--no-mutation", "--json", j, "--html", h)
    expect(rc == 0, f"1: exit {rc}, want 0", out)
    expect(f"order of {kernel} at 48x48x256: revealed, not declared" in out, "1: no order line for 48x48x256", out)
    expect("bitwise (revealed order)" in out, "1: no row says bitwise (revealed order)", out)
    shapes = set()
    if os.path.exists(j):
        r = json.load(open(j))
        cases = [c for c in r.get("cases", []) if c.get("kernel") == kernel and c.get("case") != "evidence"]
        expect(len(cases) >= 3, f"1: {len(cases)} cases")
        for c in cases:
            o = c.get("order", {})
            shapes.add((c.get("m"), c.get("n"), c.get("k")))
            expect(o.get("source") == "revealed" and o.get("used") is True, f"1: {c.get('case')}: order {o}")
            expect(c.get("tier") == "bitwise" and c.get("status") == "pass", f"1: {c.get('case')}: {c.get('tier')} {c.get('status')} {c.get('reason')}")
            expect("pairwise" in o.get("tree", ""), f"1: {c.get('case')}: tree {o.get('tree')}")
            expect(o.get("launches", 0) > 0 and (o.get("m"), o.get("n"), o.get("k")) == (c.get("m"), c.get("n"), c.get("k")),
                   f"1: {c.get('case')}: launches {o.get('launches')}, shape {o.get('m')}x{o.get('n')}x{o.get('k')}")
            bw = [x for x in c.get("checks", []) if x.get("kind") == "bitwise"]
            expect(bw and bw[0].get("passed") and "revealed order" in bw[0].get("detail", ""), f"1: {c.get('case')}: bitwise check {bw}")
    else:
        errors.append("1: no JSON written")
    if os.path.exists(h):
        html = open(h).read()
        expect("Summation order: revealed, not declared" in html and "<script" not in html, "1: the HTML does not say the order was revealed")
    else:
        errors.append("1: no HTML written")

    # 2. order files
    f256 = os.path.join(scratch, "r256.json")
    rc, out = run(fpcert, "reveal", "--quiet", "--kernel", kernel, "--m", "48", "--n", "48", "--k", "256", "--json", f256)
    expect(rc == 0, f"2: reveal exit {rc}", out)
    j2 = os.path.join(scratch, "f.json")
    rc, out = run(fpcert, "certify", "--kernel", kernel, "--suite", "quick", "--case", "k256_uniform", "--order", f256, "--no-mutation", "--json", j2)
    expect(rc == 0, f"2: certify --order FILE exit {rc}, want 0", out)
    expect("read from " + f256 in out, "2: the order line does not name the file", out)
    if os.path.exists(j2):
        c = [c for c in json.load(open(j2)).get("cases", []) if c.get("case") == "k256_uniform"]
        expect(c and c[0].get("order", {}).get("source") == "file" and c[0].get("order", {}).get("used") is True and c[0].get("tier") == "bitwise",
               f"2: case {c[0].get('order') if c else None}")
    f64 = os.path.join(scratch, "r64.json")
    rc, out = run(fpcert, "reveal", "--quiet", "--kernel", kernel, "--m", "8", "--n", "8", "--k", "64", "--json", f64)
    expect(rc == 0, f"2: reveal 8x8x64 exit {rc}", out)
    rc, out = run(fpcert, "certify", "--kernel", kernel, "--suite", "quick", "--order", f64, "--no-mutation")
    expect(rc == 2 and "no case of this run has that shape" in out and "48x48x256" in out, f"2: another shape: exit {rc}", out)
    rc, out = run(fpcert, "certify", "--kernel", "model_gemm_f32", "--suite", "quick", "--order", f256, "--no-mutation")
    expect(rc == 2 and "which this run does not certify" in out, f"2: another kernel: exit {rc}", out)
    rc, out = run(fpcert, "certify", "--kernel", kernel, "--suite", "quick", "--order", os.path.join(scratch, "missing.json"), "--no-mutation")
    expect(rc == 2 and "no such file" in out, f"2: a missing file: exit {rc}", out)
    rc, out = run(fpcert, "certify", "--kernel", kernel, "--suite", "quick", "--order", "model_gemm_f32=revealed", "--no-mutation")
    expect(rc == 2 and "not a kernel of this run" in out, f"2: KERNEL=revealed for another kernel: exit {rc}", out)

    # 3. a launch budget too small: stated fall-back to the declared tier
    j3 = os.path.join(scratch, "b.json")
    rc, out = run(fpcert, "certify", "--kernel", kernel, "--suite", "quick", "--case", "k256_uniform", "--order", "revealed",
                  "--reveal-max-launches", "1", "--no-mutation", "--json", j3)
    expect(rc == 0, f"3: exit {rc}, want 0 (the declared tier still passes a correct kernel)", out)
    expect("fell back: k256_uniform" in out and "reveal-max-launches" in out, "3: the fall-back is not stated", out)
    if os.path.exists(j3):
        c = [c for c in json.load(open(j3)).get("cases", []) if c.get("case") == "k256_uniform"]
        o = c[0].get("order", {}) if c else {}
        expect(o.get("used") is False and "reveal-max-launches" in o.get("fallback", ""), f"3: order {o}")
        expect(any("not used (" in f for f in (c[0].get("flags", []) if c else [])), "3: no flag says the revealed order was not used")

    for e in errors:
        print("FAIL:", e)
    print(f"{'FAILED' if errors else 'OK'}: certify --order revealed / FILE end to end ({len(errors)} failure(s))")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
