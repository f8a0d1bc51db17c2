#!/usr/bin/env python3
"""tests/kernels/tc_cli_check.py — `fpcert probe tensor-cores` end to end on simulated instructions.

Usage: tc_cli_check.py FPCERT SCRATCH_DIR

1. --simulate mma-sim on two instructions with --json/--html/--record: exit 0, both cards validated,
   the JSON's fitted parameters equal MMA-Sim's Hopper model.
2. --simulate PARAMS.json (a card's params with a 24-bit window): the card says 24.
3. --replay of the recording: exit 0, the same parameters.
4. A recording with one answer changed: exit 1 (the replay differs or disagrees).
5. Usage errors exit 2 (unknown instruction, --record with --replay, a bad --simulate file);
   without a device and without --simulate nothing runs: exit 3.
Exit 0 when every check holds; 1 with one line per failure otherwise.
"""
import json
import os
import shutil
import subprocess
import sys


def run(fpcert, *args):
    p = subprocess.run([fpcert, "probe", "tensor-cores", "--quiet", *args], capture_output=True, text=True, timeout=600)
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

    j, h, rec = (os.path.join(scratch, n) for n in ("cards.json", "cards.html", "rec"))
    rc, out = run(fpcert, "--simulate", "mma-sim", "--instruction", "mma_f16_f32,wgmma_tf32_f32", "--samples", "6000",
                  "--json", j, "--html", h, "--record", rec)
    expect(rc == 0, f"simulate mma-sim: exit {rc}", out)
    cards = json.load(open(j))["cards"] if os.path.exists(j) else []
    expect([c["id"] for c in cards] == ["mma_f16_f32", "wgmma_tf32_f32"], "the cards are the two instructions asked for")
    for c in cards:
        expect(c["passed"] and c["validation_disagreements"] == 0 and c["validated_samples"] >= 6000, f"{c['id']} validated")
        p = c.get("params", {})
        expect(p.get("align_bits") == 25 and p.get("block_rounding") == "rz" and p.get("c_join") == "in-block",
               f"{c['id']}: MMA-Sim's Hopper model recovered, got {p}")
    expect(os.path.exists(h) and "<section" in open(h).read(), "the HTML page was written")
    expect(sorted(os.listdir(rec)) == ["mma_f16_f32.tcrec", "wgmma_tf32_f32.tcrec"] if os.path.isdir(rec) else False, "one recording per card")

    params = dict(cards[0]["params"]) if cards else {}
    params["align_bits"] = 24
    pf = os.path.join(scratch, "params.json")
    json.dump({"params": params}, open(pf, "w"))
    j2 = os.path.join(scratch, "cards24.json")
    rc, out = run(fpcert, "--simulate", pf, "--instruction", "mma_f16_f32", "--samples", "3000", "--json", j2)
    expect(rc == 0, f"simulate a params file: exit {rc}", out)
    if os.path.exists(j2):
        expect(json.load(open(j2))["cards"][0]["params"]["align_bits"] == 24, "a 24-bit window is measured as 24 bits")

    j3 = os.path.join(scratch, "replayed.json")
    rc, out = run(fpcert, "--replay", rec, "--instruction", "mma_f16_f32,wgmma_tf32_f32", "--json", j3)
    expect(rc == 0, f"replay: exit {rc}", out)
    if os.path.exists(j3) and cards:
        replayed = json.load(open(j3))["cards"]
        expect([c.get("params") for c in replayed] == [c.get("params") for c in cards], "the replay gives back the recorded cards")

    bad = os.path.join(scratch, "bad")
    shutil.copytree(rec, bad)
    path = os.path.join(bad, "mma_f16_f32.tcrec")
    lines = open(path).read().splitlines()
    for i, line in enumerate(lines):
        if line.startswith("t "):
            f = line.split()
            f[3] = format(int(f[3], 16) ^ 1, "x")
            lines[i] = " ".join(f)
            break
    open(path, "w").write("\n".join(lines) + "\n")
    rc, out = run(fpcert, "--replay", bad, "--instruction", "mma_f16_f32")
    expect(rc == 1, f"a changed recorded answer: exit {rc}, want 1", out)

    for args in (["--instruction", "nope"], ["--record", rec, "--replay", rec], ["--simulate", os.path.join(scratch, "missing.json")]):
        rc, out = run(fpcert, *args)
        expect(rc == 2, f"{' '.join(args)}: exit {rc}, want 2", out)
    rc, out = run(fpcert, "--instruction", "mma_f16_f32")
    expect(rc in (0, 1, 3), f"on this machine's device: exit {rc}", out)
    if rc == 3:
        expect("nothing was measured" in out, "without a device the command says nothing was measured", out)

    for e in errors:
        print(e)
    print(f"tc_cli_check: {len(errors)} problem(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
