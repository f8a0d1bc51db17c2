#!/usr/bin/env python3
"""scripts/tolerance_table.py — fpcert's derived GEMM tolerances beside torch.testing.assert_close's
defaults, for common dtypes and K (the table of docs/python.md). fpcert's side is computed by the
package (fpcert.shape_tolerance); torch's defaults are the documented constants below, and with
--torch they are read from the installed torch as a cross-check.

Usage: PYTHONPATH=<build>/python scripts/tolerance_table.py [--torch] [--k 64,256,...]"""
import argparse
import sys

import fpcert

# torch.testing.assert_close default (rtol, atol) by dtype: the table in its documentation
# (https://pytorch.org/docs/stable/testing.html, "default values" of rtol and atol).
TORCH_DEFAULTS = {"float32": (1.3e-6, 1e-5), "float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5)}
ROWS = [("float32", False, "float32"), ("float32", True, "float32 (TF32 on)"), ("float16", False, "float16"),
        ("bfloat16", False, "bfloat16")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--k", default="64,256,1024,4096,16384")
    ap.add_argument("--torch", action="store_true", help="read torch's defaults from the installed torch")
    args = ap.parse_args()
    ks = [int(x) for x in args.k.split(",")]
    defaults = dict(TORCH_DEFAULTS)
    if args.torch:
        import torch
        from torch.testing._comparison import default_tolerances
        for name in defaults:
            got = default_tolerances(torch.empty(0, dtype=getattr(torch, name)))
            if tuple(got) != defaults[name]:
                print(f"note: torch {torch.__version__} defaults for {name} are {got}, not {defaults[name]}", file=sys.stderr)
            defaults[name] = tuple(got)
    print("| dtype (torch.matmul traits) | torch rtol / atol | " + " | ".join(f"K={k}" for k in ks) + " |")
    print("|---|---|" + "---|" * len(ks))
    for dtype, tf32, label in ROWS:
        t = fpcert.torch_traits(dtype, tf32)
        cells = []
        for k in ks:
            s = fpcert.shape_tolerance(t, 1024, 1024, k, inputs_exact=True)  # tensors already in their dtype
            e = s["element"]
            env = "vacuous" if e["vacuous"] else f"{e['rtol']:.2g}"
            cells.append(f"{s['normwise']['rtol']:.2g} / {env}")
        rt, at = defaults[dtype]
        print(f"| {label} | {rt:g} / {at:g} | " + " | ".join(cells) + " |")
    print("\nEach fpcert cell: normwise rtol (|c - ref| <= rtol (max|ref| + |ref|)) / the envelope's coef "
          "(|c - ref| <= E + u_out (|ref| + E), E = coef (|A||B|)_ij + underflow; summation order unknown). "
          "Traits: fpcert.TORCH_MATMUL_TRAITS.")


if __name__ == "__main__":
    main()
