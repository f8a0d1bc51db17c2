"""scripts/diagnose_torch.py — issue 47's H200 measures through the Python entry (fpcert.diagnose; docs/diagnose.md):
torch.matmul in fp32 with TF32 allowed, judged against the pedantic fp32 declaration (expect inputs rounded to tf32
named: bit for bit if cuBLAS's order is one fpcert computes, else by its envelope); torch.matmul in bf16 with the
reduced-precision reduction allowed, judged against fp32 accumulation (expect split-K partials stored in bf16, or a
bf16 accumulator, named; the bf16 GEMMs get a second case of long K, where cuBLAS is likelier to split K); and the
controls with both switches off (expect the declared arithmetic, by its envelope at least: "declared" or "hint"). Run by
scripts/device_run.sh's part `diagnose`. Usage: python3 scripts/diagnose_torch.py [OUT_DIR] [m n k]"""
import json
import os
import sys

import torch

import fpcert

out = sys.argv[1] if len(sys.argv) > 1 else "out"
m, n, k = (int(x) for x in sys.argv[2:5]) if len(sys.argv) > 4 else (128, 128, 1024)
os.makedirs(out, exist_ok=True)
print("torch", torch.__version__, "device", torch.cuda.get_device_name(0))
case = f"uniform:m={m},n={n},k={k},seed=1"
mm = torch.backends.cuda.matmul


long_k = "uniform:m=64,n=64,k=8192,seed=2"


def run(label, dtype, tf32, bf16_reduced, expect, cases=()):
    mm.allow_tf32 = tf32
    mm.allow_bf16_reduced_precision_reduction = bf16_reduced
    declared = fpcert.torch_traits(dtype, allow_tf32=False)  # the pedantic declaration: what the switches should not change
    d = fpcert.diagnose(torch.matmul, case, declared=declared, cases=cases, device="cuda", name=f"torch.matmul[{label}]")
    print(f"\n##### {label}: torch.matmul {dtype}, allow_tf32={tf32}, allow_bf16_reduced_precision_reduction={bf16_reduced}")
    print(d.text())
    # an expected change named by the top hypothesis, alone or in a pair ("operands=tf32/rna+order=blocked128"), or by a
    # look-alike of it; the controls: the declared arithmetic (bit for bit, or by its envelope: cuBLAS's order is its own)
    # (an expected id ending in "*" names a family: "partials=*" is split-K partials of any count and format)
    named = [d.top or ""] + (d["ranked"][0]["same_as"] if d["ranked"] else [])
    said = lambda e, part: part.startswith(e[:-1]) if e.endswith("*") else part == e  # noqa: E731
    hit = any(said(e, p) for e in expect for x in named for p in x.split("+")) if expect else d["kind"] in ("declared", "hint")
    for s in d.get("separations", []):
        print(f"separation {label}: {s['first']} / {s['second']} on {s['spec']}: {s['outcome'] or 'not run'}")
    print(f"EXPECT {label}: {'yes' if hit else 'NO'} (top {d.top}, kind {d['kind']}; expected {', '.join(expect) or 'declared'})")
    with open(os.path.join(out, f"diag_torch_{label}.json"), "w") as f:
        json.dump(d, f, indent=2)
    return hit


def reduced_changes_bits(specs):
    """Whether allow_bf16_reduced_precision_reduction changes torch.matmul's bf16 result on any of these cases: where it
    does not (cuBLAS chose no reduced-precision reduction there), the diagnosis can only name the full-precision one."""
    changed = False
    for spec in specs:
        A, B = (torch.from_numpy(x).cuda().to(torch.bfloat16) for x in fpcert.generate(spec))
        mm.allow_bf16_reduced_precision_reduction = False
        full = torch.matmul(A, B)
        mm.allow_bf16_reduced_precision_reduction = True
        red = torch.matmul(A, B)
        torch.cuda.synchronize()
        n = int((full.view(torch.int16) != red.view(torch.int16)).sum().item())
        print(f"reduced-precision reduction on {spec}: {n} of {full.numel()} results differ from the full-precision ones")
        changed |= n > 0
    mm.allow_bf16_reduced_precision_reduction = False
    return changed


ok = True
ok &= run("f32_tf32", torch.float32, True, False, ["operands=tf32/rn", "operands=tf32/rna", "operands=tf32/rz"])
ok &= run("f32_pedantic", torch.float32, False, False, [])
# H200, torch 2.11 + cu130 (2026-12-04): the switch changed no bit on 13 shapes up to 256 x 256 x 65536 (docs/diagnose.md):
# then the honest expectation is the control's.
reduced_expect = ["partials=*", "acc=bf16", "fault=acc_bf16"] if reduced_changes_bits((case, long_k)) else []
ok &= run("bf16_reduced", torch.bfloat16, False, True, reduced_expect, cases=(long_k,))
ok &= run("bf16_full", torch.bfloat16, False, False, [], cases=(long_k,))
mm.allow_bf16_reduced_precision_reduction = False
print("all as expected" if ok else "SOME NOT AS EXPECTED (see EXPECT lines)")
