# scripts/sdpa_cudnn_probe.py — PyTorch's cuDNN SDPA backend on the device: its ops' schemas, its forward and backward
# against float64 autograd on one structured case (as scripts/sdpa_bwd_probe.py), then certified through fpcert under
# candidate declarations (FlashAttention-2's arithmetic, the algorithm cuDNN's documentation names, with the exp in its
# natural and its base-2 folded form), each case's verdict printed: the measurements behind the cuDNN declarations of
# python/fpcert/attention.py and attention_bwd.py (docs/attention.md, docs/backward.md). Needs torch, CUDA and fpcert.
import sys

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

import fpcert

print("torch", torch.__version__, "cudnn", torch.backends.cudnn.version(), torch.cuda.get_device_name())
for n in ("_scaled_dot_product_cudnn_attention", "_scaled_dot_product_cudnn_attention_backward"):
    op = getattr(torch.ops.aten, n, None)
    print(n, op.default._schema if op is not None else "absent")

torch.manual_seed(0)
B, H, L, D = 2, 4, 300, 64
q, k, v = (torch.randn(B, H, L, D, device="cuda", dtype=torch.float16) for _ in range(3))
i = torch.arange(L, device="cuda").view(1, 1, L, 1)
c = torch.arange(D, device="cuda").view(1, 1, 1, D)
do = (((7 * i + 3 * c) % 9 - 4) / 8).expand(B, H, L, D).to(torch.float16).contiguous()


def grads(dt, backend, causal):
    Q, K, V = (t.detach().to(dt).requires_grad_() for t in (q, k, v))
    with sdpa_kernel(backend):
        o = torch.nn.functional.scaled_dot_product_attention(Q, K, V, is_causal=causal)
    o.backward(do.to(dt))
    return [o.double()] + [t.grad.double() for t in (Q, K, V)]


for causal in (False, True):
    ref = grads(torch.float64, SDPBackend.MATH, causal)
    for name, be in [("math", SDPBackend.MATH), ("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)]:
        try:
            g = grads(torch.float16, be, causal)
            print(f"causal={causal} {name:<6}", " ".join(f"{n}: {(a - r).abs().max().item():.3e}" for n, a, r in zip(("O", "dQ", "dK", "dV"), g, ref)))
        except Exception as e:  # noqa: BLE001 (a probe: print and go on)
            print(f"causal={causal} {name} error: {str(e)[:300]}")

MMA = "in={t},acc=f32,acc_rounding=rz,out=f32"
suite = sys.argv[1] if len(sys.argv) > 1 else "attention"
bsuite = sys.argv[2] if len(sys.argv) > 2 else "attention_backward"


def report(what, dtype, form, certify):
    """Each case's verdict of one certify call, or the error it raised (a probe: print and go on)."""
    try:
        for x in certify().cases:
            print(f"cudnn {what} {dtype} {form:<7} {x['case']:<24} {x['status']:<14} "
                  f"err/bound {x.get('metrics', {}).get('err_frac_max', 0):.3g} {x['reason'][:150]}")
    except Exception as e:  # noqa: BLE001
        print(f"cudnn {what} {dtype} {form} error: {str(e)[:300]}")


for dtype in ("f16", "bf16"):
    for form in ("natural", "base2"):
        decl = dict(qk=MMA, pv=MMA, shift="online", key_block=32, exp_form=form, exp="ulps:2", exp_abs=2.0 ** -126,
                    normalize="reciprocal", masked_rows="zero", masks=("top_left", "additive"), score_rel=0.0)
        report("fwd", dtype, form, lambda: fpcert.certify_attention(fpcert.sdpa("cudnn"), dtype=dtype, **decl, device="cuda", suite=suite,
                                                                    name=f"torch_sdpa_cudnn_{dtype}_{form}"))
        bdecl = dict(gemms=(MMA,) * 5, exp_form=form, exp="ulps:2", exp_abs=2.0 ** -126, d_acc="f32", compute="f32", dq_atomics=True,
                     dq_acc="f32", masks=("top_left", "additive"), grouped_heads=False, masked_lse="+inf", reads_saved=True)
        report("bwd", dtype, form, lambda: fpcert.certify_attention_backward(fpcert.sdpa_backward("cudnn"), dtype=dtype, **bdecl, device="cuda",
                                                                             suite=bsuite, name=f"torch_sdpa_backward_cudnn_{dtype}_{form}"))
