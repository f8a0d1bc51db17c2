#!/usr/bin/env python3
"""tests/suites/reveal_cli_check.py — `fpcert reveal` and `certify --order revealed` end to end on CPU models (docs/reveal.md).

Usage: reveal_cli_check.py FPCERT SCRATCH_DIR

1. model_gemm_f32 at 8 x 8 x 64 with --replay, --json, --html: exit 0; the JSON says revealed and
   passed, one class of every element, a sequential chain whose tree has 63 nodes, the replay compared
   every element bit for bit; the terminal shows the tree; the HTML draws it as SVG.
2. A shape whose probe values cannot fit the formats (e4m3 at K = 65536): exit 2, the JSON says refused.
3. Usage errors exit 2 (unknown kernel, element outside the output); a cuBLAS kernel without a device
   exits 3 (or 2 where the build has no cuBLAS kernels).
4. certify model_gemm_f32_pairwise on the quick suite with --order revealed: exit 0; every case in the bitwise
   tier with the revealed order (JSON: order.source revealed, order.used, a pairwise tree, launches > 0; the
   bitwise check names the revealed order); the terminal has the order lines and "bitwise (revealed order)"
   rows; the HTML says the order was revealed, not declared, and passes tests/reports/check_html.py (its
   numbers, the order block's included, equal to the JSON's).
5. certify --order FILE: a revelation written by fpcert reveal --json at a case's shape grades that case
   bitwise (order.source file); a file of another shape, or of another kernel, is refused (exit 2) with the
   reason; a missing file, or KERNEL=revealed for a kernel not in the run, is exit 2.
6. certify with a budget of one launch per class: the case falls back to the declared tier, stated in the
   terminal, the JSON and a flag.
Exit 0 when every check holds; 1 with one line per failure otherwise.
"""
import json
import os
import shutil
import subprocess
import sys


def run(fpcert, *args):
    p = subprocess.run([fpcert, "reveal", "--quiet", *args], capture_output=True, text=True, timeout=600)
    return p.returncode, p.stdout + p.stderr


def cli(fpcert, *args):
    p = subprocess.run([fpcert, *args], capture_output=True, text=True, timeout=900)
    return p.returncode, p.stdout + p.stderr


def check_certify(fpcert, scratch, expect, errors):
    """4-6: certify --order revealed / FILE (docs/reveal.md, "Certifying with a revealed order")."""
    kernel = "model_gemm_f32_pairwise"
    j, h = os.path.join(scratch, "c.json"), os.path.join(scratch, "c.html")
    rc, out = cli(fpcert, "certify", "--kernel", kernel, "--suite", "quick", "--order", "revealed", "--no-mutation", "--json", j, "--html", h)
    expect(rc == 0, f"4: exit {rc}, want 0", out)
    expect(f"order of {kernel} at 48x48x256: revealed, not declared" in out, "4: no order line for 48x48x256", out)
    expect("bitwise (revealed order)" in out, "4: no row says bitwise (revealed order)", out)
    shapes = set()
    if os.path.exists(j):
        r = json.load(open(j))
        cases = [c for c in r.get("cases", []) if c.get("kernel") == kernel and c.get("case") != "evidence"]
        expect(len(cases) >= 3, f"4: {len(cases)} cases")
        for c in cases:
            o = c.get("order", {})
            shapes.add((c.get("m"), c.get("n"), c.get("k")))
            expect(o.get("source") == "revealed" and o.get("used") is True, f"4: {c.get('case')}: order {o}")
            expect(c.get("tier") == "bitwise" and c.get("status") == "pass", f"4: {c.get('case')}: {c.get('tier')} {c.get('status')} {c.get('reason')}")
            expect("pairwise" in o.get("tree", ""), f"4: {c.get('case')}: tree {o.get('tree')}")
            expect(o.get("launches", 0) > 0 and (o.get("m"), o.get("n"), o.get("k")) == (c.get("m"), c.get("n"), c.get("k")),
                   f"4: {c.get('case')}: launches {o.get('launches')}, shape {o.get('m')}x{o.get('n')}x{o.get('k')}")
            bw = [x for x in c.get("checks", []) if x.get("kind") == "bitwise"]
            expect(bw and bw[0].get("passed") and "revealed order" in bw[0].get("detail", ""), f"4: {c.get('case')}: bitwise check {bw}")
    else:
        errors.append("4: no JSON written")
    if os.path.exists(h):
        html = open(h).read()
        expect("Summation order: revealed, not declared" in html and "<script" not in html, "4: the HTML does not say the order was revealed")
        checker = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reports", "check_html.py")
        p = subprocess.run([sys.executable, checker, h, "--src", "r0=" + j, "--require-tagged"], capture_output=True, text=True, timeout=300)
        expect(p.returncode == 0, "4: the HTML fails tests/reports/check_html.py", p.stdout + p.stderr)
    else:
        errors.append("4: no HTML written")

    # 5. order files
    f256 = os.path.join(scratch, "r256.json")
    rc, out = cli(fpcert, "reveal", "--quiet", "--kernel", kernel, "--m", "48", "--n", "48", "--k", "256", "--json", f256)
    expect(rc == 0, f"5: reveal exit {rc}", out)
    j2 = os.path.join(scratch, "f.json")
    rc, out = cli(fpcert, "certify", "--kernel", kernel, "--suite", "quick", "--case", "k256_uniform", "--order", f256, "--no-mutation", "--json", j2)
    expect(rc == 0, f"5: certify --order FILE exit {rc}, want 0", out)
    expect("read from " + f256 in out, "5: the order line does not name the file", out)
    if os.path.exists(j2):
        c = [c for c in json.load(open(j2)).get("cases", []) if c.get("case") == "k256_uniform"]
        expect(c and c[0].get("order", {}).get("source") == "file" and c[0].get("order", {}).get("used") is True and c[0].get("tier") == "bitwise",
               f"5: case {c[0].get('order') if c else None}")
    f64 = os.path.join(scratch, "r64.json")
    rc, out = cli(fpcert, "reveal", "--quiet", "--kernel", kernel, "--m", "8", "--n", "8", "--k", "64", "--json", f64)
    expect(rc == 0, f"5: reveal 8x8x64 exit {rc}", out)
    rc, out = cli(fpcert, "certify", "--kernel", kernel, "--suite", "quick", "--order", f64, "--no-mutation")
    expect(rc == 2 and "no case of this run has that shape" in out and "48x48x256" in out, f"5: another shape: exit {rc}", out)
    rc, out = cli(fpcert, "certify", "--kernel", "model_gemm_f32", "--suite", "quick", "--order", f256, "--no-mutation")
    expect(rc == 2 and "which this run does not certify" in out, f"5: another kernel: exit {rc}", out)
    rc, out = cli(fpcert, "certify", "--kernel", kernel, "--suite", "quick", "--order", os.path.join(scratch, "missing.json"), "--no-mutation")
    expect(rc == 2 and "no such file" in out, f"5: a missing file: exit {rc}", out)
    rc, out = cli(fpcert, "certify", "--kernel", kernel, "--suite", "quick", "--order", "model_gemm_f32=revealed", "--no-mutation")
    expect(rc == 2 and "not a kernel of this run" in out, f"5: KERNEL=revealed for another kernel: exit {rc}", out)

    # 6. a launch budget too small: stated fall-back to the declared tier
    j3 = os.path.join(scratch, "b.json")
    rc, out = cli(fpcert, "certify", "--kernel", kernel, "--suite", "quick", "--case", "k256_uniform", "--order", "revealed",
                  "--reveal-max-launches", "1", "--no-mutation", "--json", j3)
    expect(rc == 0, f"6: exit {rc}, want 0 (the declared tier still passes a correct kernel)", out)
    expect("fell back: k256_uniform" in out and "reveal-max-launches" in out, "6: the fall-back is not stated", out)
    if os.path.exists(j3):
        c = [c for c in json.load(open(j3)).get("cases", []) if c.get("case") == "k256_uniform"]
        o = c[0].get("order", {}) if c else {}
        expect(o.get("used") is False and "reveal-max-launches" in o.get("fallback", ""), f"6: order {o}")
        expect(any("not used (" in f for f in (c[0].get("flags", []) if c else [])), "6: no flag says the revealed order was not used")


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
            errors.append(what + ("\n" + out[-2000:] if out else ""))

    j, h = os.path.join(scratch, "r.json"), os.path.join(scratch, "r.html")
    rc, out = run(fpcert, "--kernel", "model_gemm_f32", "--m", "8", "--n", "8", "--k", "64", "--i", "3", "--j", "5",
                  "--replay", "--replay-samples", "64", "--json", j, "--html", h)
    expect(rc == 0, f"1: exit {rc}, want 0", out)
    expect("sequential" in out and "`-- " in out, "1: the terminal shows no sequential tree", out)
    if os.path.exists(j):
        r = json.load(open(j))
        expect(r.get("status") == "revealed" and r.get("passed") is True, f"1: status {r.get('status')}, passed {r.get('passed')}")
        cls = r.get("classes", [])
        expect(len(cls) == 1 and cls[0].get("where") == "every element", f"1: classes {[c.get('where') for c in cls]}")
        if cls:
            expect(len(cls[0].get("tree", {}).get("nodes", [])) == 63, "1: the tree does not have 63 nodes")
            rep = cls[0].get("replay", {})
            expect(rep.get("compared", 0) >= 64 and rep.get("equal") == rep.get("compared"), f"1: replay {rep.get('equal')} of {rep.get('compared')}")
        expect(r.get("focus") == [3, 5], f"1: focus {r.get('focus')}")
    else:
        errors.append("1: no JSON written")
    if os.path.exists(h):
        html = open(h).read()
        expect("<svg" in html and "p_0" in html and "<script" not in html, "1: the HTML draws no tree (or has a script)")
    else:
        errors.append("1: no HTML written")

    j2 = os.path.join(scratch, "refused.json")
    rc, out = run(fpcert, "--kernel", "model_gemm_e4m3_f32acc", "--m", "4", "--n", "4", "--k", "65536", "--json", j2)
    expect(rc == 2, f"2: exit {rc}, want 2", out)
    expect(os.path.exists(j2) and json.load(open(j2)).get("status") == "refused", "2: the JSON does not say refused", out)

    rc, out = run(fpcert, "--kernel", "no_such_kernel", "--m", "4", "--n", "4", "--k", "8")
    expect(rc == 2 and "unknown kernel" in out, f"3: unknown kernel: exit {rc}", out)
    rc, out = run(fpcert, "--kernel", "model_gemm_f32", "--m", "4", "--n", "4", "--k", "8", "--i", "4")
    expect(rc == 2, f"3: element outside the output: exit {rc}", out)
    kernels = subprocess.run([fpcert, "kernels"], capture_output=True, text=True, timeout=60).stdout
    has_device = subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode == 0 if shutil.which("nvidia-smi") else False
    if not has_device:
        rc, out = run(fpcert, "--kernel", "cublas_gemm_f32_pedantic", "--m", "4", "--n", "4", "--k", "8")
        want = 3 if "cublas_gemm_f32_pedantic" in kernels else 2
        expect(rc == want, f"3: cuBLAS without a device: exit {rc}, want {want}", out)

    check_certify(fpcert, scratch, expect, errors)

    for e in errors:
        print("FAIL:", e)
    print(f"reveal_cli_check: {'ok' if not errors else str(len(errors)) + ' failure(s)'}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
