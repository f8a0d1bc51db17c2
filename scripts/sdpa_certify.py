#!/usr/bin/env python3
"""scripts/sdpa_certify.py — PyTorch SDPA's outputs with each backend pinned, saved for fpcert's attention reference.

For each backend of torch.nn.attention.SDPBackend (MATH, FLASH_ATTENTION, EFFICIENT_ATTENTION, CUDNN_ATTENTION) pinned
with torch.nn.attention.sdpa_kernel, and a few shapes (f16 and bf16, causal and not, lengths that are no multiple of any
tile, grouped-query heads where the backend takes them), saves Q, K, V (the exact codes the backend read, as .npy of
float16 / bfloat16 bits in uint16, plus float32 copies, which are exact) and the backend's O (bits and float32) in a
folder, with manifest.json describing every file (shape [batch, heads, len, head_dim], dtype, causal alignment: PyTorch's
is_causal is top-left, scale 1/sqrt(head_dim) as SDPA's default computes it). A backend that refuses a shape is listed
with its error and skipped. Standalone: needs torch with CUDA and numpy; exits 0 and prints what it saved.

Usage: scripts/sdpa_certify.py [OUT_DIR] [--seed N]
"""
import argparse
import json
import os
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?", default="out/sdpa")
    ap.add_argument("--seed", type=int, default=41)
    args = ap.parse_args()
    try:
        import numpy as np
        import torch
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except Exception as e:  # noqa: BLE001 — any import failure means this machine cannot run the capture
        print(f"sdpa_certify: skipped: {e}")
        return 0
    if not torch.cuda.is_available():
        print("sdpa_certify: skipped: no CUDA device")
        return 0
    os.makedirs(args.out, exist_ok=True)
    dev = torch.device("cuda")
    backends = [(n, getattr(SDPBackend, n)) for n in ("MATH", "FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION")
                if hasattr(SDPBackend, n)]
    # (batch, heads_q, heads_kv, len_q, len_k, head_dim, causal)
    shapes = [(2, 4, 4, 77, 200, 64, False), (1, 8, 8, 130, 129, 128, True), (1, 8, 2, 256, 256, 128, True),
              (2, 4, 4, 1, 333, 64, False)]
    manifest = {"torch": torch.__version__, "cuda": torch.version.cuda, "device": torch.cuda.get_device_name(0),
                "seed": args.seed, "layout": "[batch][heads][len][head_dim], row-major", "entries": []}
    gen = torch.Generator(device="cpu").manual_seed(args.seed)

    def save(name, t):
        bits = t.detach().contiguous().view(torch.int16).cpu().numpy().view(np.uint16)
        np.save(os.path.join(args.out, name + ".bits.npy"), bits)
        np.save(os.path.join(args.out, name + ".f32.npy"), t.detach().float().cpu().numpy())
        return name

    saved = 0
    for dtype_name, dtype in (("f16", torch.float16), ("bf16", torch.bfloat16)):
        for si, (b, hq, hkv, lq, lk, d, causal) in enumerate(shapes):
            # N(0, 1) drawn in float32 on the host, rounded to nearest into the storage format by .to(dtype).
            q = torch.randn(b, hq, lq, d, generator=gen).to(dtype).to(dev)
            k = torch.randn(b, hkv, lk, d, generator=gen).to(dtype).to(dev)
            v = torch.randn(b, hkv, lk, d, generator=gen).to(dtype).to(dev)
            stem = f"{dtype_name}_s{si}"
            inputs = {"q": save(stem + "_q", q), "k": save(stem + "_k", k), "v": save(stem + "_v", v)}
            for bname, backend in backends:
                entry = {"dtype": dtype_name, "shape": {"batch": b, "heads_q": hq, "heads_kv": hkv, "len_q": lq, "len_k": lk,
                                                        "head_dim": d}, "causal": "top_left" if causal else "none",
                         "scale": 1.0 / d ** 0.5, "backend": bname, "inputs": inputs}
                try:
                    with sdpa_kernel([backend]):
                        kw = {"enable_gqa": True} if hq != hkv else {}
                        o = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal, **kw)
                    torch.cuda.synchronize()
                    entry["o"] = save(f"{stem}_{bname.lower()}_o", o)
                    saved += 1
                    print(f"saved {stem} {bname}: O {tuple(o.shape)} {dtype_name}, causal={causal}")
                except Exception as e:  # noqa: BLE001 — a backend that refuses the shape is recorded, not fatal
                    entry["error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
                    print(f"skipped {stem} {bname}: {entry['error']}")
                manifest["entries"].append(entry)
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    print(f"sdpa_certify: {saved} outputs of {len(manifest['entries'])} (backend, shape) pairs in {args.out}/ (manifest.json)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
