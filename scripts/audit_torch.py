"""scripts/audit_torch.py — issue 46's H200 measure: audit torch.matmul in bf16 at rtol = atol = 1e-2 through the Python
entry (fpcert.audit; docs/audit.md), and print the tables with the mutants the rule passes. Run by
scripts/device_run.sh's part `audit`. Usage: python3 scripts/audit_torch.py [OUT_DIR] [m n k]"""
import json
import os
import sys

import torch

import fpcert

out = sys.argv[1] if len(sys.argv) > 1 else "out"
m, n, k = (int(x) for x in sys.argv[2:5]) if len(sys.argv) > 4 else (256, 256, 1024)
os.makedirs(out, exist_ok=True)
torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False  # the declaration torch_traits makes
print("torch", torch.__version__, "device", torch.cuda.get_device_name(0))
for inputs in ("normal", "uniform:lo=0,hi=1"):
    a = fpcert.audit(torch.matmul, fpcert.torch_traits(torch.bfloat16), shape=(m, n, k), rtol=1e-2, atol=1e-2, inputs=inputs,
                     seeds=(1, 2, 3), device="cuda", name="torch.matmul")
    print(f"\n##### torch.matmul bf16, {m}x{n}x{k}, inputs {inputs}, allclose rtol=atol=1e-2")
    print(a.text())
    print("mutants the rule passes (changed the output, rule passed on some seed):", ", ".join(a.passed_mutants()) or "none")
    with open(os.path.join(out, f"audit_torch_bf16_{inputs.split(':')[0]}.json"), "w") as f:
        json.dump(a, f, indent=2)
