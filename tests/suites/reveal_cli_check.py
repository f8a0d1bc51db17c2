#!/usr/bin/env python3
"""tests/suites/reveal_cli_check.py — `fpcert reveal` end to end on CPU models (docs/reveal.md).

Usage: reveal_cli_check.py FPCERT SCRATCH_DIR

1. model_gemm_f32 at 8 x 8 x 64 with --replay, --json, --html: exit 0; the JSON says revealed and
   passed, one class of every element, a sequential chain whose tree has 63 nodes, the replay compared
   every element bit for bit; the terminal shows the tree; the HTML draws it as SVG.
2. A shape whose probe values cannot fit the formats (e4m3 at K = 65536): exit 2, the JSON says refused.
3. Usage errors exit 2 (unknown kernel, element outside the output); a cuBLAS kernel without a device
   exits 3 (or 2 where the build has no cuBLAS kernels).
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

    for e in errors:
        print("FAIL:", e)
    print(f"reveal_cli_check: {'ok' if not errors else str(len(errors)) + ' failure(s)'}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
