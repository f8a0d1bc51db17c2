"""fpcert.certify_softmax and fpcert.certify_norm: a Python softmax, log-softmax, LayerNorm or RMSNorm callable
(torch.softmax, torch.nn.functional.layer_norm / rms_norm, a NumPy function) certified through fpcert's runner on the
operation's suite, against the correctly rounded reference and the per-element bound of the arithmetic the caller
declares (docs/python.md, "Softmax and normalisation"; docs/softmax.md; docs/normalization.md). The declarations made
here are fpcert.diagnose_softmax's and diagnose_norm's too (python/fpcert/diagnose_rows.py)."""
import json as _json
import sys

import numpy as np

from . import _fpcert


def _pkg():
    return sys.modules[__package__]


def _row_adapter(call, x_fmt, out_fmt, device):
    """The adapter the native part calls, adapter(x_codes, extra1, extra2, scalar) -> out codes: the codes made arrays
    in format x_fmt (torch tensors on `device` when it is given), `call` run on them, its result as codes of out_fmt."""
    p = _pkg()

    def arr(codes, fmt):
        if codes is None:
            return None
        a = p._from_codes(codes, fmt)
        return p._to_device(a, fmt, device) if device is not None else a

    def adapter(x_codes, e1, e2, scalar):
        r = call(arr(x_codes, x_fmt), e1, e2, float(scalar), arr)
        if device is not None and str(device).startswith("cuda"):
            p._torch().cuda.synchronize()  # a failure inside the kernel surfaces here, in this case
        c, tc = p._to_numpy(r, out_fmt)
        return p._codes(c, tc, out_fmt).astype(p._CONTAINER[p._CONTAINER_BITS[out_fmt]])
    return adapter


def _softmax_call(fn):
    """A softmax callable as the adapter calls it: fn(x), with mask= (f32 0 / -inf) and scale= where the case has them."""
    def call(xa, mask_codes, _unused, scale, arr):
        kw = {}
        if mask_codes is not None:
            kw["mask"] = arr(mask_codes, "f32")
        if scale != 1.0:
            kw["scale"] = scale
        return fn(xa, **kw)
    return call


def _norm_call(fn, x_fmt):
    """A normalisation callable as the adapter calls it: fn(x, weight, bias, eps), weight and bias 1-D arrays of x_fmt
    or None."""
    def call(xa, g_codes, b_codes, eps, arr):
        g, b = arr(g_codes, x_fmt), arr(b_codes, x_fmt)
        return fn(xa, None if g is None else g.reshape(-1), None if b is None else b.reshape(-1), eps)
    return call


def _finish(run_json, json, junit, html):
    return _pkg()._finish(_json.loads(run_json), json, junit, html)


def _kname(fn, name):
    return "python:" + (name or getattr(fn, "__qualname__", None) or getattr(fn, "__name__", "fn"))


def certify_softmax(fn, *, log: bool = False, x: str = "f32", out: str | None = None, compute: str = "f32",
                    shift: str = "shifted", block: int = 0, exp: str = "expf", log_impl: str = "logf", sum: str = "f32",
                    order: str = "unknown", reciprocal: bool = False, masked_rows: str = "nan", accepts_mask: bool = False,
                    accepts_scale: bool = False, device=None, suite: str = "softmax_quick", name: str | None = None,
                    json=None, junit=None, html=None):
    """Certify a softmax (``log=True``: log-softmax) over the last axis of a rows x cols array.

    ``fn(x)`` receives the logits in format ``x`` (NumPy; torch tensors on ``device`` when it is given) and returns the
    rows x cols results in format ``out`` (default ``x``). With ``accepts_mask`` the masked cases call
    ``fn(x, mask=m)`` (m: float32, +0 or -inf, added to the logits); with ``accepts_scale`` the temperature cases call
    ``fn(x, scale=s)`` (softmax(RN(s x) + mask)); cases the callable does not take are reported not supported.

    The declaration is what the bound reads: ``compute`` format, ``shift`` (shifted, unshifted, online with ``block``
    columns per running-max update), ``exp`` (expf: CUDA's 2 ulp; __expf; libm; cr; ulps:N; expf_ops: fpcert's expf as binary32 operations, declared
    exactly, so that a shifted fp32 softmax with a declared order is graded bit for bit), ``log_impl`` (logf, libm,
    cr, ulps:N), the row sum's accumulator ``sum`` and ``order`` (unknown: any tree; sequential; pairwise; warp:L),
    ``reciprocal`` (e_j * fl(1/S)), ``masked_rows`` (nan as torch.softmax; zero as a "safe" softmax)."""
    d = _softmax_declaration(fn, log=log, x=x, out=out, compute=compute, shift=shift, block=block, exp=exp, log_impl=log_impl,
                             sum=sum, order=order, reciprocal=reciprocal, masked_rows=masked_rows, accepts_mask=accepts_mask,
                             accepts_scale=accepts_scale, device=device, name=name)
    run = _fpcert.certify_declared(d, suite, "certify_softmax", "python: fpcert.certify_softmax(" + d.name + ", suite=" + repr(suite) + ")")
    return _finish(run, json, junit, html)


def _softmax_declaration(fn, *, log, x, out, compute, shift, block, exp, log_impl, sum, order, reciprocal, masked_rows,
                         accepts_mask, accepts_scale, device, name):
    """The softmax callable declared as a kernel (certify_softmax's keywords; not registered until a run): what
    certify_softmax and diagnose_softmax share. InputError for a declaration that cannot be read."""
    out = out or x
    kname = _kname(fn, name)
    return _fpcert.softmax_declaration(_row_adapter(_softmax_call(fn), x, out, device), bool(log), x, out, compute, shift, int(block),
                                       exp, log_impl, sum, order, bool(reciprocal), masked_rows, bool(accepts_mask),
                                       bool(accepts_scale), kname, f"Python {'log-softmax' if log else 'softmax'} {kname}")


def certify_norm(fn, kind: str = "layernorm", *, variance: str = "two_pass", parts=None, x: str = "f32", out: str | None = None,
                 compute: str = "f32", acc: str = "f32", rsqrt: str = "rsqrtf", device=None, suite: str = "norm_quick",
                 name: str | None = None, json=None, junit=None, html=None):
    """Certify a LayerNorm (``kind="layernorm"``) or RMSNorm (``kind="rmsnorm"``) over the last axis of a rows x cols
    array.

    ``fn(x, weight, bias, eps)`` receives x in format ``x`` (NumPy; torch tensors on ``device`` when given), weight and
    bias as 1-D arrays of the same format or None (a case without the affine part), eps a float; it returns the
    rows x cols results in format ``out`` (default ``x``). E.g. torch:
    ``lambda x, w, b, eps: torch.nn.functional.layer_norm(x, x.shape[-1:], w, b, eps)``.

    The declaration: ``variance`` (two_pass: mean first; welford: one sequential Welford pass; welford_combined: Welford
    per part, the parts' (count, mean, M2) combined pairwise as Chan, Golub and LeVeque, over ``parts``: P parts (entries
    j = t, t + P, ... for part t) or "PxV" (part t takes the V-entry vectors t, t + P, ...), an int, a string or a list
    of them when the kernel uses one of several splits, e.g. ``parts=[512, "128x4"]`` for PyTorch's CUDA layer_norm;
    one_pass: E[x^2] - E[x]^2), ``compute`` format,
    the row sums' accumulator ``acc`` (any order), ``rsqrt`` (rsqrtf: CUDA's 2 ulp; cr; sqrt_div: 1/sqrt both
    correctly rounded; ulps:N)."""
    d = _norm_declaration(fn, kind, variance=variance, parts=parts, x=x, out=out, compute=compute, acc=acc, rsqrt=rsqrt,
                          device=device, name=name)
    run = _fpcert.certify_declared(d, suite, "certify_norm", "python: fpcert.certify_norm(" + d.name + ", suite=" + repr(suite) + ")")
    return _finish(run, json, junit, html)


def _norm_declaration(fn, kind, *, variance, parts, x, out, compute, acc, rsqrt, device, name):
    """The norm callable declared as a kernel (certify_norm's keywords; not registered until a run): what certify_norm and
    diagnose_norm share. InputError for a declaration that cannot be read."""
    out = out or x
    if parts is None:
        parts = 32 if variance == "welford_combined" else ""
    if not isinstance(parts, (list, tuple)):
        parts = [parts]
    parts = ",".join(str(p) for p in parts)
    kname = _kname(fn, name)
    return _fpcert.norm_declaration(_row_adapter(_norm_call(fn, x), x, out, device), kind, variance, parts, x, out, compute, acc, rsqrt,
                                    kname, f"Python {kind} {kname}")
