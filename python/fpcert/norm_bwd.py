"""fpcert.certify_norm_backward: a Python LayerNorm / RMSNorm backward callable (torch's native_layer_norm_backward,
_fused_rms_norm_backward, autograd of rms_norm, a NumPy function) certified through fpcert's runner on norm_backward:
dx, dgamma and dbeta against the exact gradients at the given codes, rounded once, and the per-element bound of the
arithmetic the caller declares (docs/backward.md, "LayerNorm and RMSNorm backward")."""
import sys

import numpy as np

from . import _fpcert


def _pkg():
    return sys.modules[__package__]


def certify_norm_backward(fn, dtype: str = "f32", kind: str = "layernorm", *, compute: str = "f32", acc: str = "f32",
                          dx_out: str | None = None, param_acc: str = "f32", param_out: str = "f32",
                          determinism: str = "deterministic", reads_saved: bool = True, device=None,
                          suite: str = "norm_backward_quick", name: str | None = None, json=None, junit=None, html=None):
    """Certify a LayerNorm (``kind="layernorm"``) or RMSNorm (``kind="rmsnorm"``) backward over the last axis.

    ``fn(x, dy, weight, mean, rstd)`` receives x and dy (rows x cols, format ``dtype``; torch tensors on ``device`` when
    given), weight (1-D, ``dtype``; ones when the case has no gamma), and the statistics a forward saved: mean (LayerNorm;
    None for RMSNorm) and rstd as 1-D float32 arrays of rows entries (the correctly rounded fp32 statistics of x with the
    case's eps, fp32(1e-5) in every norm_backward case). It returns ``(dx, dweight, dbias)``: dx rows x cols in ``dx_out`` (default
    ``dtype``), dweight and dbias 1-D in ``param_out`` (dbias None for RMSNorm).

    The declaration: ``compute`` format, the row sums' accumulator ``acc`` (any order), the column sums' accumulator
    ``param_acc`` and ``determinism`` ("run_to_run": added with atomics, graded run by run, the spread reported),
    ``reads_saved`` (False: the callable ignores mean and rstd and recomputes them from x with eps = 1e-5, e.g. autograd
    of a composite rms_norm)."""
    p = _pkg()
    dx_out = dx_out or dtype

    def arr(codes, fmt):
        if codes is None:
            return None
        a = p._from_codes(codes, fmt)
        return p._to_device(a, fmt, device) if device is not None else a

    def codes(r, fmt, rows):
        c, tc = p._to_numpy(r.reshape(rows, -1) if rows == 1 else r, fmt)
        return p._codes(c, tc, fmt).astype(p._CONTAINER[p._CONTAINER_BITS[fmt]])

    def adapter(x_codes, dy_codes, g_codes, mean_codes, rstd_codes):
        x, dy = arr(x_codes, dtype), arr(dy_codes, dtype)
        rows, cols = x_codes.shape
        if g_codes is None:  # no gamma in the case: gamma = 1
            g_codes = _fpcert.encode(dtype, np.ones((1, cols)))
        g = arr(g_codes, dtype).reshape(-1)
        mean = arr(mean_codes, "f32")
        rstd = arr(rstd_codes, "f32")
        dx, dg, db = fn(x, dy, g, None if mean is None else mean.reshape(-1), rstd.reshape(-1))
        if device is not None and str(device).startswith("cuda"):
            p._torch().cuda.synchronize()  # a failure inside the kernel surfaces here, in this case
        return (codes(dx, dx_out, rows), None if dg is None else codes(dg, param_out, 1),
                None if db is None else codes(db, param_out, 1))

    kname = "python:" + (name or getattr(fn, "__qualname__", None) or getattr(fn, "__name__", "fn"))
    run = _fpcert.certify_norm_backward(adapter, kind, dtype, dx_out, compute, acc, param_acc, param_out, determinism,
                                        bool(reads_saved), kname, f"Python {kind} backward {kname}", suite,
                                        "python: fpcert.certify_norm_backward(" + kname + ", suite=" + repr(suite) + ")")
    from .rows import _finish
    return _finish(run, json, junit, html)


def torch_layer_norm_backward():
    """torch.ops.aten.native_layer_norm_backward as a subject: the saved mean and rstd reshaped to PyTorch's (rows, 1),
    weight given, a zero bias, output_mask all True; dweight and dbias come back in the input's dtype."""
    torch = _pkg()._torch()

    def fn(x, dy, w, mean, rstd):
        n = x.shape[-1]
        dx, dw, db = torch.ops.aten.native_layer_norm_backward(dy, x, [n], mean.reshape(-1, 1), rstd.reshape(-1, 1), w,
                                                               torch.zeros_like(w), [True, True, True])
        return dx, dw, db
    fn.__qualname__ = "native_layer_norm_backward"
    return fn


def torch_rms_norm_backward(eps: float = 1e-5):
    """RMSNorm backward in torch: torch.ops.aten._fused_rms_norm_backward (reads the saved rstd) where the installed
    torch has it, else autograd of torch.nn.functional.rms_norm, which recomputes rstd: declare reads_saved=False then.
    Returns (fn, reads_saved)."""
    torch = _pkg()._torch()
    if hasattr(torch.ops.aten, "_fused_rms_norm_backward"):
        def fused(x, dy, w, mean, rstd):
            dx, dw = torch.ops.aten._fused_rms_norm_backward(dy, x, [x.shape[-1]], rstd.reshape(-1, 1), w, [True, True])
            return dx, dw, None
        fused.__qualname__ = "_fused_rms_norm_backward"
        return fused, True

    def autograd(x, dy, w, mean, rstd):
        xa, wa = x.detach().clone().requires_grad_(True), w.detach().clone().requires_grad_(True)
        y = torch.nn.functional.rms_norm(xa, (x.shape[-1],), wa, eps)
        y.backward(dy)
        return xa.grad, wa.grad, None
    autograd.__qualname__ = "rms_norm_autograd"
    return autograd, False
