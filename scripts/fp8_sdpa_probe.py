#!/usr/bin/env python3
"""What FP8 scaled-dot-product attention this PyTorch offers (issue 41): the quantized SDPA entry (FA3 per head, cuDNN per
tensor), the aten ops behind it, and one call of each on e4m3 inputs, its output dtype and whether it raises."""
import importlib
import sys
import traceback

import torch

print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version())
print("device", torch.cuda.get_device_name(0), torch.cuda.get_device_capability(0))
for op in ("_scaled_dot_product_cudnn_attention_quantized_per_tensor", "_scaled_dot_product_flash_attention",
           "_scaled_dot_product_cudnn_attention"):
    print("aten op", op, hasattr(torch.ops.aten, op))
try:
    print("flash overloads", torch.ops.aten._scaled_dot_product_flash_attention.overloads())
except Exception as e:  # noqa: BLE001
    print("flash overloads: error", e)
try:
    import torch.nn.attention as na
    print("list_flash_attention_impls", getattr(na, "list_flash_attention_impls", lambda: "absent")())
    print("current_flash_attention_impl", getattr(na, "current_flash_attention_impl", lambda: "absent")())
except Exception as e:  # noqa: BLE001
    print("torch.nn.attention:", e)
try:
    m = importlib.import_module("torch.nn.attention.experimental._scaled_dot_product_attention_quantized")
    print("quantized entry: present;", [n for n in dir(m) if not n.startswith("__")])
except Exception as e:  # noqa: BLE001
    m = None
    print("quantized entry: absent:", e)

act = None
try:
    import torch.nn.attention as na
    na.activate_flash_attention_impl("FA3")
    act = "FA3"
    print("activate_flash_attention_impl('FA3'): ok; current", na.current_flash_attention_impl())
except Exception as e:  # noqa: BLE001
    print("activate_flash_attention_impl('FA3'): raises", type(e).__name__, str(e).splitlines()[0][:300] if str(e) else "")

dev = "cuda"
torch.manual_seed(0)
B, H, L, D = 1, 2, 128, 128
q = (torch.randn(B, H, L, D, device=dev) * 4).to(torch.float8_e4m3fn)
k = (torch.randn(B, H, L, D, device=dev) * 4).to(torch.float8_e4m3fn)
v = (torch.randn(B, H, L, D, device=dev) * 4).to(torch.float8_e4m3fn)
one4 = torch.ones(1, 1, 1, 1, device=dev)
for name, call in [
    ("cudnn per tensor op", lambda: torch.ops.aten._scaled_dot_product_cudnn_attention_quantized_per_tensor(q, k, v, one4, one4, one4, 256.0, False, scale=None)),
    ("quantized entry PER_TENSOR", lambda: m._scaled_dot_product_attention_quantized(q, k, v, q_descale=one4, k_descale=one4, v_descale=one4,
                                                                                      q_descale_type=m.DescaleType.PER_TENSOR,
                                                                                      k_descale_type=m.DescaleType.PER_TENSOR,
                                                                                      v_descale_type=m.DescaleType.PER_TENSOR)),
    ("quantized entry PER_HEAD", lambda: m._scaled_dot_product_attention_quantized(q, k, v, q_descale=torch.ones(B, H, device=dev),
                                                                                    k_descale=torch.ones(B, H, device=dev),
                                                                                    v_descale=torch.ones(B, H, device=dev))),
    ("aten flash quantized (all outputs)", lambda: print("  outputs:", [(type(x).__name__, getattr(x, 'dtype', None), tuple(getattr(x, 'shape', ()))) for x in
        torch.ops.aten._scaled_dot_product_flash_attention.quantized(q, k, v, torch.ones(B, H, device=dev), torch.ones(B, H, device=dev),
                                                                     torch.ones(B, H, device=dev), 0.0, True, False, scale=0.125)]) or (q,)),
    ("sdpa bf16 flash backend with FA3 active", lambda: torch.nn.functional.scaled_dot_product_attention(q.to(torch.bfloat16), k.to(torch.bfloat16), v.to(torch.bfloat16))),
    ("sdpa e4m3 (plain)", lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v)),
]:
    try:
        r = call()
        r = r[0] if isinstance(r, (tuple, list)) else r
        torch.cuda.synchronize()
        print(f"{name}: ok, out {r.dtype} {tuple(r.shape)}, finite {bool(torch.isfinite(r.float()).all())}")
    except Exception as e:  # noqa: BLE001
        print(f"{name}: raises {type(e).__name__}: {str(e).splitlines()[0][:300]}")
sys.exit(0)
