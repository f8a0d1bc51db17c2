#!/usr/bin/env python3
"""scripts/probe_fp8_accum.py — what cuBLASLt's FP8 GEMM (torch._scaled_mm, e4m3 x e4m3) accumulates in, measured from
outside on designed inputs (docs/epilogue.md, "FP8 accumulation on the H200").

Two probes, each on one row of A and one column of B (every other row / column zero), D in fp32 so that no output
rounding hides the accumulator:

* **bits** — a large product 2^16 at k = 0 and one small product 2^(16 - t) at k = 1: the smallest t at which the small
  product is lost (or truncated) is the number of bits the tensor core keeps below the largest exponent in one MMA.
* **window** — the large product 2^16 at k = 0 and products of 1 at every other k (2^-16 of the large one: below the
  tensor core's window, exact in fp32). The ones that share the large product's accumulation interval are lost; the
  ones of later intervals, promoted to fp32 separately, are kept. D - 2^16 = K - (lost): the interval is lost + 1 (when
  no split-K reorders the sum: the shape M = N = 64 is also run at 1024 to see a split).

Each probe runs with use_fast_accum False (cuBLASLt's default, FAST_ACCUM = 0: "periodic promotion") and True.
Prints one line per measurement and writes JSON (--json). Needs a CUDA GPU with FP8 (sm_89+) and torch.
"""
import argparse
import json
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", default="")
    ap.add_argument("--ks", default="256,512,1024,4096,10240")
    a = ap.parse_args()
    import torch

    if not torch.cuda.is_available():
        print("probe_fp8_accum: no CUDA device (skipped)")
        return 77
    dev = torch.device("cuda")
    e4m3 = torch.float8_e4m3fn
    one = torch.ones((), device=dev, dtype=torch.float32)
    out = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "bits": [], "window": []}

    def gemm(av, bv, m, n, fast, out_dtype=torch.float32):
        """av, bv: the K values of row 0 of A and column 0 of B (float64 lists, e4m3-exact). Returns D[0][0] as float."""
        k = len(av)
        A = torch.zeros((m, k), device=dev, dtype=torch.float32)
        Bt = torch.zeros((n, k), device=dev, dtype=torch.float32)
        A[0] = torch.tensor(av, device=dev, dtype=torch.float32)
        Bt[0] = torch.tensor(bv, device=dev, dtype=torch.float32)
        A8, B8 = A.to(e4m3), Bt.to(e4m3)
        assert torch.equal(A8.float(), A) and torch.equal(B8.float(), Bt), "inputs not e4m3-exact"
        D = torch._scaled_mm(A8, B8.t(), scale_a=one, scale_b=one, out_dtype=out_dtype, use_fast_accum=fast)
        torch.cuda.synchronize()
        return float(D[0, 0].item())

    for fast in (False, True):
        # bits: 2^16 + 2^(16 - t); small products made as 2^-u * 2^-v with e4m3 operands (subnormals down to 2^-9).
        for t in range(8, 35):
            e = 16 - t
            u = max(-9, min(8, e // 2))
            v = e - u
            if v < -9 or v > 8:
                continue
            av = [256.0, 2.0 ** u] + [0.0] * 30
            bv = [256.0, 2.0 ** v] + [0.0] * 30
            d = gemm(av, bv, 64, 64, fast)
            kept = (d - 65536.0) / 2.0 ** e
            out["bits"].append({"fast_accum": fast, "t": t, "d": d, "kept_fraction": kept})
            print(f"bits  fast_accum={fast!s:5} 2^16 + 2^{e:<4} -> D - 2^16 = {d - 65536.0:.10g} (kept {kept:.6g} of the small product)")
        # window: 2^16 then ones.
        for m in (64, 1024):
            for k in [int(x) for x in a.ks.split(",")]:
                av = [256.0] + [1.0] * (k - 1)
                bv = [256.0] + [1.0] * (k - 1)
                d = gemm(av, bv, m, m, fast)
                kept = d - 65536.0
                lost = (k - 1) - kept
                out["window"].append({"fast_accum": fast, "m": m, "k": k, "d": d, "ones_kept": kept, "ones_lost": lost})
                print(f"window fast_accum={fast!s:5} M=N={m:<5} K={k:<6} D - 2^16 = {kept:.10g}: {lost:.10g} of {k - 1} ones lost"
                      f" (interval {lost + 1:.10g} if no split-K)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
