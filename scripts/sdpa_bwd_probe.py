# scripts/sdpa_bwd_probe.py — PyTorch SDPA backward per pinned backend (math, flash, efficient), each through its own
# forward and autograd, against float64 autograd on one structured-dO case (B 2, H 4, L 300, D 64, f16): the check that
# separates a backend kernel from fpcert's adapter (docs/backward.md, "Results on the H200"). Needs torch and CUDA.
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
torch.manual_seed(0)
B, H, L, D = 2, 4, 300, 64
q, k, v = (torch.randn(B, H, L, D, device="cuda", dtype=torch.float16) for _ in range(3))
i = torch.arange(L, device="cuda").view(1, 1, L, 1); c = torch.arange(D, device="cuda").view(1, 1, 1, D)
do = (((7 * i + 3 * c) % 9 - 4) / 8).expand(B, H, L, D).to(torch.float16).contiguous()
def grads(dt, backend):
    Q, K, V = (t.detach().to(dt).requires_grad_() for t in (q, k, v))
    with sdpa_kernel(backend):
        o = torch.nn.functional.scaled_dot_product_attention(Q, K, V)
    o.backward(do.to(dt))
    return [t.grad.double() for t in (Q, K, V)]
ref = grads(torch.float64, SDPBackend.MATH)
for name, be in [("math", SDPBackend.MATH), ("flash", SDPBackend.FLASH_ATTENTION), ("efficient", SDPBackend.EFFICIENT_ATTENTION)]:
    try:
        g = grads(torch.float16, be)
        print(name, " ".join(f"{n}: max|err| {(a - r).abs().max().item():.3e} (max|ref| {r.abs().max().item():.3e})" for n, a, r in zip("QKV", g, ref)))
    except Exception as e:
        print(name, "error", e)
print(torch.__version__)
