#!/usr/bin/env python3
"""scripts/eltwise_table.py — the elementwise table of docs/elementwise.md from fpcert results JSON files (certify
--suite elementwise_full --json ...): per kernel, the function and formats, the claim and its source, the inputs
checked, the largest error in ulps and where, the count beyond the claim with the first counterexample, the time.
Usage: scripts/eltwise_table.py RESULTS.json [...]"""
import json
import sys


def rows(path):
    with open(path) as f:
        d = json.load(f)
    for c in d.get("cases", []):
        e = c.get("elementwise")
        if not e:
            continue
        nan = e["max_ulps"] == 2**64 - 1
        first = "—"
        if e.get("listed"):
            p = e["listed"][0]
            ulps = "NaN" if p["ulps"] == 2**64 - 1 else p["ulps"]
            first = f'x = {p["input_bits"]} → {p["got_bits"]}, correctly rounded {p["ref_bits"]} ({ulps} ulp)'
        verdict = "confirmed" if c["status"] == "pass" else c["status"]
        yield (c["kernel"], f'{e["function"]} {e["in_format"]}→{e["out_format"]}', e["claim"], f'{e["inputs"]} ({e["sweep"]})',
               "NaN" if nan else str(e["max_ulps"]), e["worst"]["input_bits"] if e["max_ulps"] else "—", str(e["above_claim"]),
               verdict, first, str(e["mpfr_decided"]), str(e.get("unclaimed", 0)), f'{e["seconds"]:.3f} s')


def main():
    head = ("kernel", "function", "claim", "inputs", "max ulp", "at x", "beyond claim", "verdict", "first counterexample",
            "MPFR decided", "outside claim", "kernel time")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for path in sys.argv[1:]:
        for r in rows(path):
            print("| " + " | ".join(r) + " |")


if __name__ == "__main__":
    main()
