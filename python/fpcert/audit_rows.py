"""fpcert.audit(op="softmax" | "log_softmax" | "layernorm" | "rmsnorm"): a row operation's test rule audited for false
alarms and power, as `fpcert audit --op ...` does (docs/audit.md, "Softmax" and "Normalisation"; docs/python.md,
"Auditing a test's rule")."""
import json as _json
import sys

import numpy as np

from . import _fpcert

ROW_OPS = ("softmax", "log_softmax", "layernorm", "rmsnorm")


def _pkg():
    return sys.modules[__package__]


def _declared_formats(spec):
    """The input and output format tags of a traits spec (in=, out=; defaults f32 and in)."""
    kv = dict(item.split("=", 1) for item in spec.split(",") if "=" in item)
    x = kv.get("in", "f32")
    return x, kv.get("out", x)


def audit_rows(fn, kernel, op, shape, rtol, atol, rule, inputs, seeds, mutants, A=None, A_format=None, device=None, name=None):
    """The row audit behind fpcert.audit: ``kernel`` a registered kernel of the operation (fpcert.kernel_names()) or
    its declaration as a traits spec (keys of docs/audit.md, "Softmax" / "Normalisation"); with ``fn`` a Python
    callable (NumPy, or torch on ``device``) declaring that spec, called as fpcert.certify_softmax / certify_norm call
    theirs (softmax: fn(x) or fn(x, mask=..., scale=...); normalisation: fn(x, weight, bias, eps)); ``shape=(rows, cols)``;
    ``inputs`` a softmax (softmax ops) or norm (normalisations) generator spec; ``A`` the test's own logits (softmax ops:
    a 2-D float64/32/16 or bfloat16 array or torch tensor; -inf entries are masked entries) instead of shape, inputs and
    seeds. rtol/atol or rule= are required (no torch default: the output dtype is the declaration's)."""
    p = _pkg()
    softmax = op in ("softmax", "log_softmax")
    if op not in ROW_OPS:
        raise p.InputError(f"fpcert.audit: op={op!r}: expected matmul, {', '.join(ROW_OPS)}")
    if not isinstance(kernel, str) or not kernel:
        raise p.InputError(f"fpcert.audit: op={op!r} audits a registered {'softmax' if softmax else 'norm'} kernel or its "
                           f"declaration: fpcert.audit(None, 'model_softmax_f32_shifted' or 'in=bf16,exp=expf', op={op!r}, "
                           "shape=(rows, cols), ...)")
    if rtol is None and atol is None and rule is None:
        raise p.InputError(f"fpcert.audit: op={op!r}: give rtol and atol (or rule=)")
    a_vals, a_rows, a_cols, a_tag = [], 0, 0, "f64"
    if A is not None:
        if not softmax:
            raise p.InputError(f"fpcert.audit: A= gives a softmax's logits; op={op!r} draws its rows from inputs= (norm:...)")
        if shape is not None or inputs is not None or seeds is not None:
            raise p.InputError("fpcert.audit: shape, inputs and seeds do not go with A: the logits are the inputs and their shape "
                               "gives rows and cols")
        arr, a_tag = p._to_numpy(A, A_format)
        a_vals = p._values(arr, a_tag).reshape(-1)
        a_rows, a_cols = int(arr.shape[0]), int(arr.shape[1])
        shape = (a_rows, a_cols)
    rows, cols = ((16, 4096) if softmax else (16, 1024)) if shape is None else (int(x) for x in shape)
    seeds = [int(s) for s in ((1, 2, 3, 4, 5) if seeds is None else seeds)]
    if inputs is None:
        inputs = "softmax:spread=8" if softmax else "norm"
    registered = "=" not in kernel  # a traits spec is key=value pairs; a kernel name has none
    adapter, kname = None, ""
    if fn is not None:
        if registered:
            raise p.InputError(f"fpcert.audit: a callable declares its arithmetic by a traits spec (e.g. 'in=bf16,exp=expf'); "
                               f"{kernel!r} names a registered {'softmax' if softmax else 'norm'} kernel, audited with fn=None")
        from .rows import _kname, _norm_call, _row_adapter, _softmax_call
        x_fmt, out_fmt = _declared_formats(kernel)
        call = _softmax_call(fn) if softmax else _norm_call(fn, x_fmt)
        adapter, kname = _row_adapter(call, x_fmt, out_fmt, device), _kname(fn, name)
    rec = _fpcert.audit(adapter, "" if registered else kernel, kernel if registered else "", kname, f"Python {op} {kname}", rows, cols,
                        cols, inputs, seeds, p._rule_of(rule, rtol, atol, op), bool(mutants), -1,
                        f"python: fpcert.audit({kname or kernel!r}, op={op!r})", False,
                        a=np.asarray(a_vals, dtype=np.float64).tolist(), a_rows=a_rows, a_cols=a_cols, a_format=a_tag, op=op)
    return p.Audit(_json.loads(rec))
