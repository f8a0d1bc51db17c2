"""fpcert.certify_softmax_backward: a Python softmax or log-softmax backward callable (PyTorch's
aten._softmax_backward_data / _log_softmax_backward_data, a NumPy function) certified through fpcert's runner on a
softmax_backward suite, against the correctly rounded gradient at the codes it receives and the per-element bound of the
arithmetic the caller declares (docs/python.md; docs/backward.md, "Softmax and log-softmax backward")."""
import sys

from . import _fpcert
from .rows import _finish, _kname, _row_adapter

_TAGS = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "f32": "f32", "f16": "f16", "bf16": "bf16"}


def _tag(dtype):
    t = _TAGS.get(str(dtype).replace("torch.", "").replace("numpy.", ""))
    if t is None:
        raise ValueError(f"dtype {dtype!r}: expected f32, f16, bf16 (or the torch / NumPy dtype)")
    return t


def certify_softmax_backward(fn, dtype="f32", *, kind: str = "softmax", out=None, compute: str = "f32", dot: str = "f32",
                             order: str = "unknown", fma: bool = False, expanded: bool = False, prod=None, exp: str = "expf",
                             accepts_scale: bool = False,
                             device=None, suite: str = "softmax_backward_quick", name: str | None = None, json=None, junit=None,
                             html=None):
    """Certify a softmax (``kind="softmax"``) or log-softmax (``kind="log_softmax"``) backward over the last axis.

    ``fn(y, dy)`` receives the saved forward output y and the incoming gradient dy (rows x cols, format ``dtype``: NumPy;
    torch tensors on ``device`` when it is given; NumPy has no bf16: bf16 arrives as its uint16 codes) and returns dx (format ``out``, default ``dtype``); with
    ``accepts_scale`` the cases whose forward had a scale s call ``fn(y, dy, scale=s)`` (dx with respect to x of
    softmax(s x)); otherwise they are reported not supported.

    The declaration the bound reads: ``compute`` format, D's (G's) accumulator ``dot`` and ``order`` (unknown: any;
    sequential; pairwise; warp:32), ``fma`` (softmax: D's products fused into the sum), ``expanded`` (softmax:
    dx_j = dy_j y_j - y_j D, as PyTorch's CUDA kernels compute it, in place of y_j (dy_j - D)), ``prod`` (expanded: the
    format dy_j y_j is rounded into first, e.g. the storage dtype where PyTorch forms grad * output as a tensor), ``exp`` (log-softmax:
    expf, __expf, libm, cr, ulps:N). A masked log-softmax entry (y = -inf) must give +0 (docs/backward.md, "Special values")."""
    y_fmt = _tag(dtype)
    out = _tag(out) if out is not None else y_fmt
    if kind not in ("softmax", "log_softmax"):
        raise ValueError(f"kind {kind!r}: expected 'softmax' or 'log_softmax'")

    def call(ya, dy_codes, _unused, scale, arr):
        kw = {"scale": scale} if scale != 1.0 else {}
        return fn(ya, arr(dy_codes, y_fmt), **kw)

    kname = _kname(fn, name)
    run = _fpcert.certify_softmax_backward(_row_adapter(call, y_fmt, out, device), kind, y_fmt, y_fmt, out, compute, dot, order,
                                           bool(fma), bool(expanded), _tag(prod) if prod is not None else "", exp, bool(accepts_scale), kname, f"Python {kind} backward {kname}", suite,
                                           "python: fpcert.certify_softmax_backward(" + kname + ", suite=" + repr(suite) + ")")
    return _finish(run, json, junit, html)


def torch_softmax_backward(kind: str = "softmax"):
    """PyTorch's own backward kernel as a subject: ``fn(y, dy)`` calling ``torch.ops.aten._softmax_backward_data(dy, y, -1,
    y.dtype)`` (kind softmax) or ``_log_softmax_backward_data`` (log_softmax), what autograd runs for torch.softmax and
    torch.log_softmax. Declared (docs/backward.md): compute f32 (PyTorch's acc_type for f16/bf16), D in f32 in an order it
    does not document (unknown), dx_j = dy_j y_j - y_j D (``expanded=True``: PyTorch's softmax_warp_backward forms
    dy_j y_j first) with dy_j y_j rounded to the storage dtype (``prod=dtype``: softmax_backward_cuda computes
    ``grad * output`` as a tensor before the kernel, aten/src/ATen/native/cuda/SoftMax.cu), CUDA's expf for log-softmax."""
    torch = sys.modules.get("torch") or __import__("torch")
    op = torch.ops.aten._softmax_backward_data if kind == "softmax" else torch.ops.aten._log_softmax_backward_data

    def fn(y, dy):
        return op(dy, y, -1, y.dtype)
    fn.__qualname__ = f"aten_{kind}_backward_data"
    return fn
