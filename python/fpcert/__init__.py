"""fpcert from Python: exact references, derived tolerances that explain themselves, and
certification of NumPy or PyTorch GEMM kernels through fpcert's runner (docs/python.md)."""
from __future__ import annotations

import json as _json
import os
import sys

import numpy as np

from . import _fpcert
from ._fpcert import InputError, Traits, kernel_names, suite_names

__all__ = ["InputError", "Traits", "Reference", "Tolerance", "Results", "reference", "traits", "torch_traits",
           "tolerance", "shape_tolerance", "assert_close", "certify", "generate", "kernel_names", "suite_names", "encode",
           "nan_convention", "check_elementwise", "check_elementwise2", "certify_reduction", "audit", "Audit", "TORCH_DEFAULT_TOLERANCES",
           "set_reference"]

#: The pytest plugin (fpcert.pytest_plugin) sets this to a callable taking (kind, dict) for every
#: assert_close and certify call; None when nothing collects.
collector = None

# NumPy dtypes for the formats NumPy holds as numbers; every other format travels as its container bits
# (bfloat16 as uint16: NumPy has no bfloat16).
_FLOAT_DTYPE = {"f64": np.float64, "f32": np.float32, "tf32": np.float32, "f16": np.float16}
_DTYPE_FORMAT = {np.dtype(np.float64): "f64", np.dtype(np.float32): "f32", np.dtype(np.float16): "f16",
                 np.dtype(np.uint16): "bf16"}
_CONTAINER = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
_CONTAINER_BITS = {"f64": 64, "f32": 32, "tf32": 32, "f16": 16, "bf16": 16, "e4m3": 8, "e5m2": 8, "e2m3": 8,
                   "e3m2": 8, "e2m1": 8, "ue8m0": 8}


# ---- arrays: NumPy, and torch tensors when torch is imported -----------------------------------------
def _torch():
    return sys.modules.get("torch")


def _is_torch(x) -> bool:
    t = _torch()
    return t is not None and isinstance(x, t.Tensor)


_TORCH_FORMAT = {"float64": "f64", "float32": "f32", "float16": "f16", "bfloat16": "bf16"}


def _torch_to_numpy(t):
    """A torch tensor (CPU or CUDA) as (NumPy array, format tag), through DLPack: bfloat16 as its
    uint16 bits; a CUDA tensor is copied to the host first (NumPy reads host memory only)."""
    torch = _torch()
    tag = _TORCH_FORMAT.get(str(t.dtype).replace("torch.", ""))
    if tag is None:
        raise InputError(f"fpcert: torch dtype {t.dtype} is not a supported format (float64/32/16, bfloat16)")
    t = t.detach()
    if tag == "bf16":
        t = t.view(torch.int16)
    if t.device.type != "cpu":
        t = t.cpu()
    a = np.from_dlpack(t.contiguous())
    if tag == "bf16":
        a = a.view(np.uint16)
    return a, tag


def _to_numpy(x, fmt=None, ndim=2):
    """(array, format tag) of a NumPy array or torch tensor of `ndim` dimensions (3: a batch of matrices). uint16
    arrays are bfloat16 bits unless fmt says otherwise; an ml_dtypes bfloat16 array is read as its bits."""
    if _is_torch(x):
        a, tag = _torch_to_numpy(x)
    else:
        a = np.asarray(x)
        if a.dtype.name == "bfloat16":
            a = a.view(np.uint16)
        tag = _DTYPE_FORMAT.get(a.dtype)
        if tag is None:
            raise InputError(f"fpcert: arrays of {a.dtype} are not supported (float64, float32, float16, uint16 = bfloat16 bits)")
        if a.dtype == np.uint16 and fmt is not None:
            tag = fmt
    if a.ndim != ndim:
        raise InputError(f"fpcert: expected {'a 2-D matrix' if ndim == 2 else f'a {ndim}-D array'}, got shape {a.shape}")
    return a, tag


def _values(a, tag):
    """Exact float64 values of an array in format tag."""
    if tag in _FLOAT_DTYPE:
        return np.ascontiguousarray(a, dtype=np.float64)
    return _fpcert.decode(tag, np.ascontiguousarray(a).astype(np.uint64))


def _codes(a, tag, out):
    """Container codes (uint64) of array a (format tag) as format `out`; values that `out` cannot hold
    exactly are an error (fpcert never rounds a kernel's result for it)."""
    if tag == out or (tag == "f32" and out == "tf32"):
        bits = _CONTAINER_BITS[out]
        return np.ascontiguousarray(a).view(_CONTAINER[bits]).astype(np.uint64)
    v = _values(a, tag)
    codes = _fpcert.encode(out, v)
    back = _fpcert.decode(out, codes)
    bad = ~((back == v) | (np.isnan(back) & np.isnan(v)))
    if bad.any():
        i = np.argwhere(bad)[0]
        raise InputError(f"fpcert: C is {tag} but the kernel's output format is {out}, and C[{', '.join(map(str, i))}] = {v[tuple(i)]!r} "
                         f"is not a {out} value")
    return codes


def _from_codes(codes, tag):
    """A NumPy array in format tag from container codes: float dtypes where NumPy has one, else the bits."""
    bits = _CONTAINER_BITS[tag]
    c = np.ascontiguousarray(codes).astype(_CONTAINER[bits])
    return c.view(_FLOAT_DTYPE[tag]) if tag in _FLOAT_DTYPE else c


# ---- traits --------------------------------------------------------------------------------------------
def encode(format: str, values, rounding: str = "rn", nan: str = "preserve"):
    """Round values (as float64) into `format`: container codes (uint64). `nan` is the NaN convention NaN
    values follow: preserve, canonical, nvidia (what CUDA's cvt writes), any, ml_dtypes (finite-only formats)
    (docs/formats.md, "NaN conventions")."""
    return _fpcert.encode(format, np.ascontiguousarray(values, dtype=np.float64), rounding, nan)


def nan_convention(format: str, nan: str) -> str:
    """What a NaN convention writes into a format: nan_convention("f16", "nvidia") -> "every NaN input -> 0x7fff"."""
    return _fpcert.nan_convention(format, nan)


def traits(name_or_spec: str | Traits | None = None, **fields) -> Traits:
    """Traits of a registered kernel (``fpcert.traits("model_gemm_f16_f32acc")``), from a spec
    (``"in=f16,acc=f32,out=f16"``) or from keywords (``fpcert.traits(in_="f16", acc="f32", out="f16")``;
    keys as in docs/python.md)."""
    if isinstance(name_or_spec, Traits):
        return name_or_spec
    if fields:
        spec = ",".join(f"{k.rstrip('_')}={v}" for k, v in fields.items())
        name_or_spec = f"{name_or_spec},{spec}" if name_or_spec else spec
    if not name_or_spec:
        raise InputError("fpcert.traits: give a kernel name, a spec or keywords")
    return _fpcert.traits(name_or_spec)


#: What torch.matmul on a CUDA GPU computes, by dtype, with the precision pinned (docs/python.md):
#: float32 without TF32 is cuBLAS SGEMM (exact products in FMAs, fp32 sums); with TF32 the operands
#: lose 13 bits (the conversion is undocumented: truncation, the coarser, is assumed) and the tensor
#: cores' accumulation is modelled as truncation, as for the fp16/bf16 tensor-core paths
#: (kernels/gemm/cublas/cublas_gemm.cu holds the same declarations for cuBLAS's compute types).
TORCH_MATMUL_TRAITS = {
    ("f32", False): "in=f32,acc=f32,out=f32",
    ("f32", True): "in=f32,operand=tf32,input_rounding=rz,acc=f32,acc_rounding=rz,out=f32",
    ("f16", False): "in=f16,acc=f32,acc_rounding=rz,out=f16",
    ("bf16", False): "in=bf16,acc=f32,acc_rounding=rz,out=bf16",
}


def torch_traits(dtype, allow_tf32: bool | None = None) -> Traits:
    """Traits of torch.matmul on a CUDA GPU for a dtype (torch dtype or tag). allow_tf32 None reads
    torch.backends.cuda.matmul.allow_tf32. fp16/bf16 assume the reduced-precision reductions are off
    (torch.backends.cuda.matmul.allow_{fp16,bf16}_reduced_precision_reduction = False)."""
    tag = _TORCH_FORMAT.get(str(dtype).replace("torch.", ""), str(dtype))
    if allow_tf32 is None:
        t = _torch()
        allow_tf32 = bool(t and t.backends.cuda.matmul.allow_tf32)
    key = (tag, bool(allow_tf32) and tag == "f32")
    if key not in TORCH_MATMUL_TRAITS:
        raise InputError(f"fpcert.torch_traits: no declaration for {dtype}")
    return _fpcert.traits(TORCH_MATMUL_TRAITS[key])


# ---- references and tolerances -------------------------------------------------------------------------
class Reference:
    """The exact C = A B of the inputs as given (each element hi + lo + a tail: enough to round it
    correctly into any format)."""

    def __init__(self, A, B):
        self._init(*_to_numpy(A), *_to_numpy(B))

    def _init(self, a, ta, b, tb):
        self.a_values, self.b_values = _values(a, ta), _values(b, tb)
        self.source = ta if _CONTAINER_BITS[ta] >= _CONTAINER_BITS[tb] else tb
        self._ref = _fpcert.reference(self.a_values, self.b_values, self.source)
        return self

    hi = property(lambda self: self._ref.hi, doc="RN(exact) in float64")
    lo = property(lambda self: self._ref.lo, doc="RN(exact - hi)")
    abs_sum = property(lambda self: self._ref.abs_sum, doc="(|A||B|)_ij, rounded upward")
    shape = property(lambda self: self._ref.shape)

    def rounded(self, format: str = "f32"):
        """The reference correctly rounded (nearest-even) into a format: float32/float16/float64 arrays,
        other formats as their container bits (bf16 as uint16)."""
        return _from_codes(self._ref.rounded_codes(format), format)

    def ulps(self, C, format: str | None = None):
        """ULP distance of each element of C to the exact value, in ulps of C's format."""
        c, tag = _to_numpy(C, format)
        out = format or tag
        return self._ref.ulps(out, _codes(c, tag, out))


def reference(A, B) -> Reference:
    """Exact GEMM reference of A (m x k) times B (k x n) as given (NumPy arrays or torch tensors)."""
    return Reference(A, B)


class Tolerance:
    """Each element's allowed |c - ref| (``.allowed``, m x n) and the bound it came from (``.bound``:
    variant, rtol, out_term, terms with formulas, arithmetic)."""

    def __init__(self, allowed, bound):
        self.allowed, self.bound = allowed, bound

    def __array__(self, dtype=None):
        return self.allowed if dtype is None else self.allowed.astype(dtype)

    def explain(self) -> str:
        b = self.bound
        lines = [f"{b['variant']} bound: {b['allowed']}"] + [f"  {t['name']:<34} {t['value']:<12.6g} {t['formula']}" for t in b["terms"]]
        return "\n".join(lines + ["  " + b["arithmetic"]])


def tolerance(traits_, A, B=None) -> Tolerance:
    """The envelope tier: each element's allowed |c - ref| for these inputs (already in the kernel's input
    formats) under the traits' declared formats and order (docs/bound_model.md, "The envelope")."""
    r = A if isinstance(A, Reference) and B is None else Reference(A, B)
    allowed, bound = _fpcert.tolerance(traits(traits_), r._ref)
    return Tolerance(allowed, bound)


def shape_tolerance(traits_, m: int, n: int, k: int, inputs_exact: bool = False) -> dict:
    """The tolerance for a shape (what `fpcert tolerance` prints): normwise and per-element bounds and
    their derivation. inputs_exact: the inputs are already in the input formats (e.g. torch tensors of
    that dtype), so only operands narrower than the inputs (tf32) add a storage term."""
    return _fpcert.shape_tolerance(traits(traits_), m, n, k, inputs_exact)


# ---- assert_close -------------------------------------------------------------------------------------
def _default_traits(ta, tc):
    return _fpcert.traits(f"in={ta},acc=f32,out={tc}")


def _explain(case: dict, ref: Reference, tol: Tolerance, got, ulps, worst: int) -> str:
    """The failed checks, the envelope's terms, and the worst elements by error / allowed."""
    b = tol.bound
    lines = [f"fpcert.assert_close: {case['status']} ({case.get('tier', '')} tier): {case['reason']}",
             f"  traits: {case['kernel_traits']}   shape {case['m']}x{case['n']}x{case['k']}",
             f"  envelope: {b['allowed']}", f"    {b['arithmetic']}"]
    for t in b["terms"]:
        lines.append(f"    {t['name']:<44} {t['value']:<12.6g} {t['formula']}")
    hi, lo, s = ref.hi, ref.lo, ref.abs_sum
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.abs((got - hi) - lo)
        err = np.where(np.isfinite(got) | ~np.isfinite(hi), err, np.inf)
        ratio = np.where(tol.allowed > 0, err / tol.allowed, np.where(err > 0, np.inf, 0.0))
    ratio = np.nan_to_num(ratio, nan=np.inf)
    order = np.argsort(-ratio, axis=None, kind="stable")[:worst]
    lines.append(f"  worst elements by error / allowed (of {ratio.size}):")
    coef, u_out = b["rtol"], b["out_term"]
    for x in order:
        i, j = np.unravel_index(x, ratio.shape)
        refv = hi[i, j] + lo[i, j]
        E = coef * s[i, j]
        kappa = s[i, j] / abs(refv) if refv else float("inf")
        lines.append(f"    C[{i}, {j}] = {got[i, j]!r}, reference {refv!r}: error {err[i, j]:.4g} = {ulps[i, j]:.4g} ulp; "
                     f"allowed {tol.allowed[i, j]:.4g} = coef (|A||B|)_ij {E:.4g} + u_out (|ref| + E) {u_out * (abs(refv) + E):.4g} "
                     f"+ underflow; error/allowed {ratio[i, j]:.3g}; cancellation |A||B|/|AB| = {kappa:.3g}")
    return "\n".join(lines)


def _caller(default):
    return os.environ.get("PYTEST_CURRENT_TEST", default).split(" (")[0]


def _check_op(op, who):
    if op not in ("matmul", "mm", "gemm"):
        raise InputError(f"{who}: op={op!r}: only GEMMs (op='matmul', C = A @ B) are audited and certified from Python")


def assert_close(C, A, B, traits_=None, *, op: str = "matmul", tier: str | None = None, worst: int = 5, name: str | None = None):
    """The replacement of ``torch.testing.assert_close(actual, expected, rtol=..., atol=...)`` for a GEMM:
    ``fpcert.assert_close(actual, A, B, op="matmul")`` takes the inputs instead of an expected tensor and a
    tolerance, and derives each element's bound from the declared arithmetic (traits_; default: the inputs'
    format, fp32 accumulation, the actual's format).
    Raise AssertionError, explaining the worst elements, unless C is A B as the traits declare: graded
    like a certify case (the strongest tier the declarations allow: bitwise for a declared order, else the
    envelope and, for round-to-nearest accumulation, the statistical test; `tier=` caps it). Passes
    silently otherwise and returns the graded case (a dict: the JSON of a certify case)."""
    _check_op(op, "fpcert.assert_close")
    a, ta = _to_numpy(A)
    b, tb = _to_numpy(B)
    c, tc = _to_numpy(C)
    t = traits(traits_) if traits_ is not None else _default_traits(ta, tc)
    ref = Reference.__new__(Reference)._init(a, ta, b, tb)
    if tuple(ref.shape) != c.shape:
        raise InputError(f"fpcert.assert_close: C is {c.shape} but A B is {tuple(ref.shape)}")
    codes = _codes(c, tc, t.out)
    case = _json.loads(_fpcert.grade(t, ref._ref, codes, tier or "", max(worst, 1), name or _caller("assert_close"), "python"))
    if collector is not None:
        collector("assert_close", case)
    if case["status"] != "pass":
        tol = Tolerance(*_fpcert.tolerance(t, ref._ref))
        got = _fpcert.decode(t.out, codes)
        raise AssertionError(_explain(case, ref, tol, got, ref._ref.ulps(t.out, codes), worst))
    return case


# ---- certify ------------------------------------------------------------------------------------------
class Results:
    """A run's results (the same model as `fpcert certify --json`): ``.passed``, ``.cases`` (dicts),
    ``.json`` (the whole run), and the writers ``write_json``, ``junit``, ``write_junit``, ``write_html``."""

    def __init__(self, run: dict):
        self.json = run

    cases = property(lambda self: self.json["cases"])
    passed = property(lambda self: all(c["status"] in ("pass", "not_supported") for c in self.cases) and bool(self.cases))

    def write_json(self, path):
        _fpcert.write_json(_json.dumps(self.json), str(path))

    def junit(self) -> str:
        return _fpcert.junit(_json.dumps(self.json))

    def write_junit(self, path):
        with open(path, "w") as f:
            f.write(self.junit())

    def write_html(self, path):
        _fpcert.write_html([_json.dumps(self.json)], str(path))

    def __repr__(self):
        rows = [f"{c['case']:<28} {c['status']:<10} {c.get('tier', ''):<22} {c['reason'][:100]}" for c in self.cases]
        return f"<fpcert.Results suite {self.json['suite']}: {'PASS' if self.passed else 'FAIL'}>\n" + "\n".join(rows)


def _to_device(a, tag, device):
    torch = _torch()
    if torch is None:
        import torch  # noqa: F811  (a device was asked for: torch is required)
    if tag == "bf16":
        return torch.from_numpy(a.view(np.int16)).view(torch.bfloat16).to(device)
    if tag in ("e4m3", "e5m2"):  # FP8 codes (uint8) as torch's float8 types (torch._scaled_mm's operands)
        return torch.from_numpy(a).view(torch.float8_e4m3fn if tag == "e4m3" else torch.float8_e5m2).to(device)
    return torch.from_numpy(a).to(device)


def _gemm_adapter(fn, t, device):
    """fn(A, B) -> C as the native part calls it: container codes in, container codes out."""
    def adapter(a_codes, b_codes, c_codes=None, alpha=1.0, beta=0.0, **native):
        a, b = _from_codes(a_codes, t.a_input), _from_codes(b_codes, t.b_input)
        if device is not None:
            a, b = _to_device(a, t.a_input, device), _to_device(b, t.b_input, device)
        # The fused epilogue (traits with bias=, activation=, fp8_scaling=, amax=): keyword arguments (docs/python.md)
        kw, amax = _epilogue.call_kwargs(t, native, device) if native else ({}, None)
        if t.alpha_beta:  # fn(A, B, C, alpha, beta) -> D; C is None where beta = 0 (BLAS never reads it there)
            c = None if c_codes is None else _from_codes(c_codes, t.out)
            if c is not None and device is not None:
                c = _to_device(c, t.out, device)
            out = fn(a, b, c, alpha, beta, **kw)
        else:
            out = fn(a, b, **kw)
        if device is not None and str(device).startswith("cuda"):
            _torch().cuda.synchronize()  # a failure inside the kernel surfaces here, in this case
        _epilogue.store_amax(native, amax)
        c, tc = _to_numpy(out, t.out, np.ndim(a_codes))  # 3-D: a strided batched call (traits batched)
        bits = _CONTAINER_BITS[t.out]
        return _codes(c, tc, t.out).astype(_CONTAINER[bits])
    return adapter


def set_reference(kind: str = "auto") -> str:
    """Where exact GEMM references (fpcert.reference, and every certification's) are made from now on in this process
    (docs/oracle.md, "On the GPU"): "cpu" (the CPU oracle), "gpu" (the CUDA device from 2^27 products m n k: whole on
    the device for binary32 inputs, bit for bit the CPU oracle's and sample-checked against it; RuntimeError with the
    reason when no device is usable) or "auto", the default from import (the device, where one answers, once a
    reference of 2^27 products comes; else the CPU). Smaller references always stay on the CPU. Returns the choice."""
    return _fpcert.set_reference(kind)


def certify(fn, traits_, suite: str = "certify", *, name: str | None = None, device=None, mn: int | None = None,
            case: str | None = None, variant: str | None = None, tier: str | None = None, json=None, junit=None,
            html=None, deterministic: bool = True) -> Results:
    """Certify ``fn(A, B) -> C`` through fpcert's runner, suites and verdicts. fn receives A and B in the
    traits' input formats: NumPy arrays (float32/float16; bfloat16 as uint16 bits), or torch tensors on
    ``device`` (e.g. "cuda") when given; it returns C as a NumPy array or torch tensor in the output format.
    An exception in fn fails its case ("kernel threw: ..."); the run goes on. As `fpcert certify`, a kernel
    whose error sources no non-vacuous case exercised gets a failed "evidence" case. deterministic=False declares
    that fn's runs may differ in their last bits (atomics, torch.use_deterministic_algorithms(False) paths): every
    run is then judged by the envelope on its own and the run-to-run spread is measured and reported; the traits'
    order must then be unknown (torch_traits' is). An undeclared difference between runs fails the case.
    Traits with ``alpha_beta=1`` declare ``fn(A, B, C, alpha, beta) -> D``, D = alpha A B + beta C as BLAS defines
    it (C in the output format; None where beta = 0: BLAS never reads C there); the suites' ab_* cases then run
    (docs/python.md, "alpha and beta"). Traits with ``batched=1`` declare strided batches: fn receives (batch, m, k)
    and (batch, k, n) arrays (a broadcast operand as (1, ...)) and returns (batch, m, n) (C too: (batch, m, n)); the
    batch_* cases then run (docs/python.md, "Strided batches"). Traits with a fused epilogue (``bias=column``,
    ``activation=gelu_tanh``, ``func_rel_err=``, ``fp8_scaling=1``, ``amax=1``, ...) declare ``fn(A, B, bias=...,
    activation=...[, scale_a=, scale_b=, scale_d=][, amax=])``; the epilogue cases then run (docs/python.md, "Fused
    epilogues"). A case fn cannot take is declined before its data: what the traits do not declare is "not supported",
    and ``fn.can_implement(m, n, k)``, when fn has it, is asked first (None or True: taken; False or a string, the
    reason: "not supported"); a NotImplementedError raised inside the call comes after the data and fails the case as a
    late decline."""
    t = traits(traits_)
    kname = "python:" + (name or getattr(fn, "__qualname__", None) or getattr(fn, "__name__", "fn"))
    adapter = _gemm_adapter(fn, t, device)
    desc = f"Python callable {kname}" + (f" on {device}" if device is not None else " (NumPy)")
    run = _json.loads(_fpcert.certify(adapter, t, kname, desc, suite, mn or 0, case or "", variant or "", tier or "", "",
                                      "python: fpcert.certify(" + kname + ", suite=" + repr(suite) + ")", bool(deterministic),
                                      getattr(fn, "can_implement", None)))
    return _finish(run, json, junit, html)


def _finish(run: dict, json=None, junit=None, html=None) -> "Results":
    """A certify run's results: handed to the pytest plugin's collector, written where asked (certify, certify_reduction
    and rows.py's certify_* share it)."""
    res = Results(run)
    if collector is not None:
        collector("certify", run)
    if json:
        res.write_json(json)
    if junit:
        res.write_junit(junit)
    if html:
        res.write_html(html)
    return res


def certify_reduction(fn, kind: str = "sum", *, x: str = "f32", y: str | None = None, acc: str = "f32", out: str | None = None,
                      rounding: str = "rn", fma: bool = True, order: str = "unknown", deterministic: bool = True,
                      nrm2_scaled: bool = False, suite: str = "reduce_quick", name: str | None = None, json=None, junit=None,
                      html=None) -> Results:
    """Certify a reduction callable (``numpy.sum(x, axis=1)``, ``torch.sum(x, dim=1)``, a dot product
    ``fn(x, y)``, a norm) through fpcert's runner on a reduction suite (``reduce_quick`` or ``reduce``).
    fn receives the vectors as the rows of a count x length NumPy array in format ``x`` (float32/float16;
    bfloat16 as uint16 bits), for ``kind="dot"`` also ``y``, and returns one value per row in format ``out``
    (default: ``acc``). The declaration is what fpcert grades against: the accumulator ``acc`` and its
    ``rounding``, ``fma`` (dot/nrm2: products fused into the additions), the summation ``order`` ("unknown": the
    envelope alone decides, as for any library whose order is not documented; "sequential", "pairwise",
    "numpy", "blocked:B", "warp:L": graded bit for bit), ``deterministic`` (False: atomics, each run graded on
    its own), ``nrm2_scaled`` (LAPACK's scaled nrm2). docs/python.md, "Reductions"."""
    d = _reduction_declaration(fn, kind, x=x, y=y, acc=acc, out=out, rounding=rounding, fma=fma, order=order,
                               deterministic=deterministic, nrm2_scaled=nrm2_scaled, name=name)
    run = _json.loads(_fpcert.certify_declared(d, suite, "certify_reduction",
                                               "python: fpcert.certify_reduction(" + d.name + ", suite=" + repr(suite) + ")"))
    return _finish(run, json, junit, html)


def _reduction_declaration(fn, kind, *, x, y, acc, out, rounding, fma, order, deterministic, nrm2_scaled, name):
    """The reduction callable declared as a kernel (certify_reduction's keywords; not registered until a run): what
    certify_reduction and diagnose_reduction share. InputError for a declaration that cannot be read."""
    out = out or acc
    kname = "python:" + (name or getattr(fn, "__qualname__", None) or getattr(fn, "__name__", "fn"))

    def adapter(x_codes, y_codes):
        xs = _from_codes(x_codes, x)
        r = fn(xs) if y_codes is None else fn(xs, _from_codes(y_codes, y or x))
        if _is_torch(r):
            r = r.reshape(1, -1)
        else:
            r = np.asarray(r).reshape(1, -1)
        c, tc = _to_numpy(r, out)
        return _codes(c, tc, out).astype(_CONTAINER[_CONTAINER_BITS[out]]).reshape(-1)

    return _fpcert.reduction_declaration(adapter, kind, x, y or "", acc, rounding, bool(fma), order, out, bool(deterministic),
                                         bool(nrm2_scaled), kname, f"Python reduction {kname} ({kind})")


# ---- audit: a test's rule, as people write it (docs/python.md, "Auditing a test's rule"; docs/audit.md) --------
#: torch.testing.assert_close's defaults (rtol, atol) by dtype, used when neither is given (as torch does).
TORCH_DEFAULT_TOLERANCES = {"f16": (1e-3, 1e-5), "bf16": (1.6e-2, 1e-5), "f32": (1.3e-6, 1e-5), "tf32": (1.3e-6, 1e-5),
                            "f64": (1e-7, 1e-7)}


class Audit(dict):
    """The audit record (the JSON of ``fpcert audit --json``: ``static``, ``false_alarms``, ``power``, ...) with
    its tables: ``print(a)`` or ``a.text()``."""

    def text(self) -> str:
        return _fpcert.audit_text(_json.dumps(self))

    __str__ = text

    flake_rate = property(lambda self: self["false_alarms"]["flake_rate"], doc="share of correct runs the rule fails")
    unsatisfiable = property(lambda self: self["static"]["cr_fail_runs"] > 0,
                             doc="even the correctly rounded output fails the rule on some seed")

    def mutant(self, id: str) -> dict:
        """The power table's row of a mutant ("zeros", "acc_bf16", "inputs_tf32", ...)."""
        for m in self["power"]:
            if m["mutant"] == id:
                return m
        raise KeyError(id)

    def passed_mutants(self) -> list:
        """Mutants that changed the output and that the rule passes on some seed."""
        return [m["mutant"] for m in self["power"] if m["dormant"] < m["runs"] and m["rule_passed"] > 0]


def _rule_of(rule, rtol, atol, out_tag):
    if rule is not None:
        if rtol is not None or atol is not None:
            raise InputError("fpcert.audit: give rule= or rtol/atol, not both")
        return rule
    if (rtol is None) != (atol is None):
        raise InputError("fpcert.audit: give both rtol and atol or neither (as torch.testing.assert_close; neither: its "
                         "defaults for the output dtype)")
    if rtol is None:
        if out_tag not in TORCH_DEFAULT_TOLERANCES:
            raise InputError(f"fpcert.audit: no torch.testing default tolerance for {out_tag}; give rtol and atol")
        rtol, atol = TORCH_DEFAULT_TOLERANCES[out_tag]
    return f"allclose:rtol={float(rtol)!r},atol={float(atol)!r}"


def audit(fn=None, traits_=None, *, op: str = "matmul", shape=None, dtype=None, rtol: float | None = None,
          atol: float | None = None, rule: str | None = None, inputs: str | None = None, seeds=None,
          mutants: bool = True, sample_rows="auto", device=None, name: str | None = None, batch_invariant: bool = False,
          A=None, B=None, reference: str = "exact", A_format: str | None = None, B_format: str | None = None,
          allow=()) -> Audit:
    """Audit a GEMM test's acceptance rule (docs/audit.md): can a correct kernel fail it (static findings and false
    alarms over admissible orders and seeds), can a wrong kernel pass it (the power table over mutants), with
    fpcert's own verdict beside both.

    The check as people write it: ``op="matmul"`` with ``shape=(m, n, k)`` and ``dtype`` (a torch dtype or a tag);
    the rule as ``torch.testing.assert_close``'s ``rtol``/``atol`` (neither: torch's defaults for the dtype) or
    ``rule=`` ("maxabs:tol=T", "relfro:tol=T", "kref:k=2,p=bf16", "cosine:min=0.99", "fpcert"); the inputs as a
    generator spec (m, n, k and the seed are set per case). The kernel: ``fn(A, B) -> C`` as ``fpcert.certify``
    takes it (NumPy arrays, or torch tensors on ``device``) declaring ``traits_`` (default from dtype: its inputs,
    fp32 accumulation, its output; ``fpcert.torch_traits(dtype)`` for torch.matmul on a GPU); or no fn and
    ``traits_`` a registered kernel's name or a traits spec, computed by fpcert's emulator. sample_rows: "auto",
    "all" or a count (docs/audit.md, "Cost"). batch_invariant: declare that a row's result does not depend on the batch
    size or its position (checked bit for bit; docs/audit.md, "Batch invariance and reproducibility"); reproducibility
    over repeated calls is reported for every kernel. ``A``, ``B``: the test's own tensors (2-D NumPy arrays of float64,
    float32, float16, ml_dtypes bfloat16 or uint16 bfloat16 bits (``A_format="f16"``: float16 bits), or torch tensors
    of those dtypes, m x k and k x n) instead of the generator: their shapes give m, n, k (shape, inputs and seeds are
    refused beside them); one case, each value exact in its dtype, rounded into the input formats where they are
    narrower (docs/audit.md, "The test's own tensors"); NaN/Inf refused. ``allow``: arithmetic admitted as correct
    besides the declaration, ("tf32",) for fp32 inputs read as TF32 (docs/audit.md, "Allowed arithmetic").
    ``op="softmax"``, ``"log_softmax"``, ``"layernorm"``, ``"rmsnorm"``: a row operation's test instead (docs/audit.md,
    "Softmax" and "Normalisation"; python/fpcert/audit_rows.py): ``traits_`` a registered kernel of it or its
    declaration as a traits spec ("in=bf16,exp=expf"), which ``fn`` (a softmax fn(x[, mask=, scale=]) or a norm
    fn(x, weight, bias, eps), NumPy or torch on ``device``) declares when given, ``shape=(rows, cols)``, inputs a softmax or norm generator spec
    (defaults "softmax:spread=8", logits uniform in [-4, 4], and "norm"), softmax: ``A=`` the test's own logits (-inf:
    masked), ``rtol``/``atol`` or ``rule=`` given (no torch default). ``reference``: what the test compares with, "exact" (an fp64 GEMM), "f32" (an fp32 GEMM: sequential FMA in fp32)
    or "out" (the exact product rounded into the output dtype); the rule is applied against it (docs/audit.md, "The
    test's reference"). Returns the record as an ``Audit`` (print it for the tables)."""
    if op in ("softmax", "log_softmax", "layernorm", "rmsnorm"):  # python/fpcert/audit_rows.py
        from .audit_rows import audit_rows
        return audit_rows(fn, traits_, op, shape, rtol, atol, rule, inputs, seeds, mutants, A=A, A_format=A_format, device=device,
                          name=name)
    _check_op(op, "fpcert.audit")
    tensors = {}
    if A is not None or B is not None:
        if A is None or B is None:
            raise InputError("fpcert.audit: give both A and B (the test's own tensors), or neither")
        if shape is not None or inputs is not None or seeds is not None:
            raise InputError("fpcert.audit: shape, inputs and seeds do not go with A and B: the tensors give the inputs and "
                             "their shapes give m, n, k")
        for nm, x, fmt in (("A", A, A_format), ("B", B, B_format)):
            if fmt not in (None, "bf16", "f16"):
                raise InputError(f"fpcert.audit: {nm}_format={fmt!r}: the format of uint16 bits is bf16 or f16")
            try:
                a, tag = _to_numpy(x, fmt)
            except InputError as e:
                raise InputError(f"fpcert.audit: {nm} must be a 2-D float64, float32, float16 or bfloat16 array or tensor ({e})") from None
            if fmt is not None and a.dtype != np.uint16 and fmt != tag:
                raise InputError(f"fpcert.audit: {nm}_format={fmt!r} names the format of uint16 bits; {nm} holds {tag} values")
            tensors[nm.lower()] = _values(a, tag).reshape(-1)  # exact: every value of these formats is a double
            tensors[nm.lower() + "_rows"], tensors[nm.lower() + "_cols"] = int(a.shape[0]), int(a.shape[1])
            tensors[nm.lower() + "_format"] = tag
        shape = (tensors["a_rows"], tensors["b_cols"], tensors["a_cols"])
    inputs = "uniform" if inputs is None else inputs
    seeds = (1, 2, 3, 4, 5) if seeds is None else seeds
    m, n, k = (int(x) for x in ((64, 64, 64) if shape is None else shape))
    if traits_ is None:
        if dtype is None:
            raise InputError("fpcert.audit: give traits_ or dtype")
        tag = _TORCH_FORMAT.get(str(dtype).replace("torch.", ""), str(dtype))
        traits_ = f"in={tag},acc=f32,out={tag}"
    sr = {"auto": -1, "all": 0}.get(sample_rows, sample_rows)
    if not isinstance(sr, int) or sr < -1:
        raise InputError(f"fpcert.audit: sample_rows={sample_rows!r}: auto, all or a positive count")
    seeds = [int(s) for s in seeds]
    allow = [allow] if isinstance(allow, str) else [str(x) for x in allow]
    tensors["allow"] = allow
    if fn is None:
        if not isinstance(traits_, str):
            raise InputError("fpcert.audit: without fn, traits_ is a registered kernel's name or a traits spec (a string)")
        t = traits(traits_)
        kernel = traits_ if traits_ in kernel_names(True) else ""
        rec = _fpcert.audit(None, traits_, kernel, "", "", m, n, k, inputs, seeds, _rule_of(rule, rtol, atol, t.out),
                            bool(mutants), sr, "python: fpcert.audit(" + repr(traits_) + ")", bool(batch_invariant), reference=str(reference), **tensors)
        return Audit(_json.loads(rec))
    t = traits(traits_)
    kname = "python:" + (name or getattr(fn, "__qualname__", None) or getattr(fn, "__name__", "fn"))
    desc = f"Python callable {kname}" + (f" on {device}" if device is not None else " (NumPy)")
    rec = _fpcert.audit(_gemm_adapter(fn, t, device), t, "", kname, desc, m, n, k, inputs, seeds, _rule_of(rule, rtol, atol, t.out),
                        bool(mutants), sr, "python: fpcert.audit(" + kname + ")", bool(batch_invariant), reference=str(reference), **tensors)
    return Audit(_json.loads(rec))


# ---- generators ---------------------------------------------------------------------------------------
def generate(spec: str, with_info: bool = False):
    """The problem a generator spec describes (docs/generators.md): (A, B) as arrays in the problem's
    source format (float32 usually); with_info adds a dict (canonical spec, achieved condition numbers, ...)."""
    a, b, info = _fpcert.generate(spec)
    src = info["source"]
    conv = (lambda v: v.astype(_FLOAT_DTYPE[src])) if src in _FLOAT_DTYPE else (lambda v: _from_codes(_fpcert.encode(src, v), src))
    A, B = conv(a), conv(b)
    return (A, B, info) if with_info else (A, B)


# ---- elementwise math (docs/elementwise.md, "From Python") -----------------------------------------------
def check_elementwise(function: str, x, y, ulps: float | None = None, slope: float = 0.0, domain=None,
                      format: str | None = None) -> dict:
    """Judge a user's y = function(x) (exp, exp2, exp10, log, log2, log10, sqrt, rsqrt, expm1, log1p, tanh, sinh, cosh) on every element against the correctly
    rounded result: float32/float16 arrays (uint16: bfloat16 bits, or `format`), any shape. `ulps` None: the claim is
    "correctly rounded"; else at most ulps + floor(slope |x|) ulp, on `domain` = (lo, hi) when given. Returns the record
    (inputs, max_ulps, worst, above_claim, listed counterexamples, histogram: docs/elementwise.md)."""
    def codes(a):
        a = np.asarray(a)
        if a.dtype.name == "bfloat16":
            a = a.view(np.uint16)
        tag = {np.dtype(np.float32): "f32", np.dtype(np.float16): "f16", np.dtype(np.uint16): format or "bf16"}.get(a.dtype)
        if tag is None:
            raise InputError(f"fpcert: check_elementwise takes float32, float16 or uint16 (bfloat16 bits) arrays, not {a.dtype}")
        bits = np.ascontiguousarray(a).reshape(-1).view(np.uint32 if tag == "f32" else np.uint16)
        return bits.astype(np.uint64), tag
    xc, tin = codes(x)
    yc, tout = codes(y)
    lo, hi = domain if domain is not None else (-np.inf, np.inf)
    return _json.loads(_fpcert.check_elementwise(function, tin, tout, xc, yc, -1.0 if ulps is None else float(ulps),
                                                 float(slope), float(lo), float(hi)))


def check_elementwise2(function: str, x1, x2, z, ulps: float | None = None) -> dict:
    """Judge a user's z = function(x1, x2) (div, pow, atan2 as atan2(y=x1, x=x2), fmax, fmin) on every element against the
    correctly rounded result (MPFR, IEEE 754 9.2 special values): float32 arrays of one shape. `ulps` None: the claim is
    "correctly rounded"; else at most `ulps` ulp. Returns the record (docs/elementwise.md, "Binary functions")."""
    def codes(a):
        a = np.asarray(a)
        if a.dtype != np.float32:
            raise InputError(f"fpcert: check_elementwise2 takes float32 arrays, not {a.dtype}")
        return np.ascontiguousarray(a).reshape(-1).view(np.uint32).astype(np.uint64)
    return _json.loads(_fpcert.check_elementwise2(function, codes(x1), codes(x2), codes(z), -1.0 if ulps is None else float(ulps)))


# ---- softmax and normalisation (python/fpcert/rows.py; docs/python.md, "Softmax and normalisation") -------------------
# ---- a test function wrapped: its own assertion audited (docs/python.md, "A test function wrapped") -----------------------
#: numpy.testing.assert_allclose's and numpy.allclose's defaults (rtol, atol)
_NUMPY_DEFAULTS = {"assert_allclose": (1e-7, 0.0), "allclose": (1e-5, 1e-8)}


def _dtype_tag(x):
    return _TORCH_FORMAT.get(str(getattr(x, "dtype", "")).replace("torch.", ""), None)


class _Recorder:
    """Patches torch.testing.assert_close, numpy.testing.assert_allclose and numpy.allclose while a wrapped test runs:
    each call is recorded (rtol and atol as the call resolved them, the actual's shape and dtype), then passed on."""

    def __init__(self):
        self.calls, self._undo = [], []

    def _patch(self, owner, name, defaults):
        orig = getattr(owner, name)

        def recorded(actual, desired, *args, **kw):
            rtol = kw.get("rtol", args[0] if len(args) > 0 else None)
            atol = kw.get("atol", args[1] if len(args) > 1 else None)
            tag = _dtype_tag(actual)
            d_rtol, d_atol = defaults(tag)  # torch: the dtype's defaults (both or neither given); numpy: the function's own
            self.calls.append({"function": name, "rtol": float(d_rtol if rtol is None else rtol),
                               "atol": float(d_atol if atol is None else atol), "shape": tuple(getattr(actual, "shape", ())),
                               "dtype": tag})
            return orig(actual, desired, *args, **kw)

        setattr(owner, name, recorded)
        self._undo.append((owner, name, orig))

    def __enter__(self):
        self._patch(np.testing, "assert_allclose", lambda tag: _NUMPY_DEFAULTS["assert_allclose"])
        self._patch(np, "allclose", lambda tag: _NUMPY_DEFAULTS["allclose"])
        if "torch" in sys.modules:
            t = sys.modules["torch"]
            self._patch(t.testing, "assert_close", lambda tag: TORCH_DEFAULT_TOLERANCES.get(tag, (0.0, 0.0)))
        return self

    def __exit__(self, *exc):
        for owner, name, orig in reversed(self._undo):
            setattr(owner, name, orig)
        return False


def audited(*, k: int, op: str = "matmul", traits=None, inputs: str | None = None, seeds=None, mutants: bool = True,
            fail_on=("unsatisfiable", "false_alarms"), reference: str = "exact"):
    """Decorator for a test function as it is written (docs/python.md, "A test function wrapped"): the test runs
    unchanged; every ``torch.testing.assert_close``, ``numpy.testing.assert_allclose`` and ``numpy.allclose`` call it
    makes is recorded — rtol and atol as the call resolved them (the dtype's torch defaults, numpy's own), the actual's
    shape (m, n) and dtype — and afterwards each distinct rule is audited as ``fpcert.audit`` does for a GEMM of depth
    ``k`` (traits: given, else the actual's dtype in and out with fp32 accumulation). The audits are kept on the wrapper
    (``test_fn.fpcert_audits``). The test then fails, with the audit's tables, when a finding named in ``fail_on`` holds
    ("unsatisfiable": even the correctly rounded output fails the rule; "false_alarms": a correct order fails it;
    "mutants": the rule passes a mutant fpcert refuses) — and when its own assertion failed, the tables say whether a
    correct kernel could have passed it."""
    import functools

    bad = set(fail_on) - {"unsatisfiable", "false_alarms", "mutants"}
    if bad:
        raise InputError(f"fpcert.audited: fail_on={sorted(bad)}: expected unsatisfiable, false_alarms, mutants")

    def wrap(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kw):
            failure = None
            with _Recorder() as rec:
                try:
                    fn(*args, **kw)
                except AssertionError as e:
                    failure = e
            rules = []
            for c in rec.calls:
                if len(c["shape"]) != 2:
                    raise InputError(f"fpcert.audited: {c['function']} compared a {len(c['shape'])}-D output; a GEMM's is 2-D")
                key = (c["rtol"], c["atol"], c["shape"], c["dtype"])
                if key not in [r[0] for r in rules]:
                    rules.append((key, c))
            if not rules:
                raise InputError(f"fpcert.audited: {fn.__name__} made no assert_close / assert_allclose / allclose call")
            audits, findings = [], []
            for (rtol, atol, (m, n), tag), c in rules:
                t = traits if traits is not None else f"in={tag},acc=f32,out={tag}"
                a = audit(None, t, op=op, shape=(m, n, int(k)), rtol=rtol, atol=atol, inputs=inputs, seeds=seeds,
                          mutants=mutants, reference=reference)
                audits.append(a)
                missed = [r["mutant"] for r in a["power"] if r["rule_passed"] > 0 and r["fpcert_refused"] > 0] if mutants else []
                what = []
                if "unsatisfiable" in fail_on and a.unsatisfiable:
                    what.append("unsatisfiable: even the correctly rounded output fails it")
                if "false_alarms" in fail_on and a.flake_rate > 0:
                    what.append(f"false alarms: {a.flake_rate:.3g} of correct runs fail it")
                if "mutants" in fail_on and missed:
                    what.append("it passes mutants fpcert refuses: " + ", ".join(missed))
                if what or failure is not None:
                    findings.append(f"{c['function']}(rtol={rtol!r}, atol={atol!r}) on a {m} x {n} {tag} output, k = {k}: "
                                    + ("; ".join(what) or "audited") + "\n" + a.text())
            wrapper.fpcert_audits = audits
            if failure is not None:
                raise AssertionError(f"{failure}\n\nfpcert audit of this assertion:\n" + "\n".join(findings)) from failure
            if findings:
                raise AssertionError("fpcert audit of this test's assertion:\n" + "\n".join(findings))

        return wrapper

    return wrap


__all__ += ["audited"]


from .rows import certify_norm, certify_softmax  # noqa: E402  (rows.py reads this module's helpers)
from . import epilogue as _epilogue  # noqa: E402  (fused GEMM epilogues, issue 37)
from .epilogue import TORCH_EPILOGUE_TRAITS, torch_epilogue  # noqa: E402

__all__ += ["torch_epilogue", "TORCH_EPILOGUE_TRAITS"]
from .attention import SDPA_DECLARATIONS, certify_attention, sdpa, sdpa_declaration  # noqa: E402
from .norm_bwd import certify_norm_backward, torch_layer_norm_backward, torch_rms_norm_backward  # noqa: E402

__all__ += ["certify_softmax", "certify_norm", "certify_attention", "sdpa", "sdpa_declaration", "SDPA_DECLARATIONS"]
from .softmax_bwd import certify_softmax_backward, torch_softmax_backward  # noqa: E402  (issue 45)

__all__ += ["certify_softmax_backward", "torch_softmax_backward"]

# Attention backward (issue 45; docs/backward.md).
from .attention_bwd import SDPA_BWD_DECLARATIONS, certify_attention_backward, sdpa_backward, sdpa_backward_declaration  # noqa: E402
from .eltwise import certify_elementwise  # noqa: E402  (issue 42: a callable swept over every input)
from .mutate import MutationResults, mutate  # noqa: E402  (a Python kernel's mutation score: faults made around it)
__all__ += ["certify_elementwise"]

__all__ += ["certify_attention_backward", "sdpa_backward", "sdpa_backward_declaration", "SDPA_BWD_DECLARATIONS"]


# ---- diagnosis: rounding or a bug? (docs/diagnose.md; docs/python.md, "Diagnosing a kernel") -----------------------------
class Diagnosis(dict):
    """The diagnosis record (the JSON of ``fpcert diagnose --json``: ``kind``, ``verdict``, ``ranked`` hypotheses best
    first, each with ``id``, ``matched``/``elements``, ``fraction``, ``envelope_holds``, ``max_ulps``, ``same_as``;
    ``unexplained`` elements; ``separations``: the ties and the cases run to separate them, each with ``first``,
    ``second``, ``spec``, ``why``, ``outcome``; ``hint`` for a kernel more precise than declared). ``print(d)`` or
    ``d.text()``."""

    def text(self) -> str:
        return _fpcert.diagnosis_text(_json.dumps(self))

    __str__ = text

    top = property(lambda self: self["ranked"][0]["id"] if self["ranked"] else None, doc="the top-ranked hypothesis's id")

    def top_is(self, hypothesis: str) -> bool:
        """Whether the top hypothesis is ``hypothesis`` or indistinguishable from it on every case."""
        if not self["ranked"]:
            return False
        t = self["ranked"][0]
        return t["id"] == hypothesis or hypothesis in t["same_as"]


def diagnose(fn, case=None, *, declared=None, cases=(), suite: str = "certify", device=None,
             name: str | None = None, separate: bool = True, pairs: bool = True, top: int = 8) -> Diagnosis:
    """Which known arithmetic explains a GEMM kernel's output (docs/diagnose.md): the declared arithmetic with one change
    or two (inputs rounded to tf32/bf16/f16, products rounded, a narrower accumulator, truncation, another order, a
    dropped K tail, a fault of the catalogue), each computed bit for bit and compared with what the kernel wrote, ranked.

    ``fn``: a callable ``fn(A, B) -> C`` as ``fpcert.certify`` takes it (NumPy arrays, or torch tensors on ``device``)
    with ``declared`` its traits (a Traits, a spec such as ``"in=f32,acc=f32,out=f32"`` or a registered kernel's name;
    default f32 in, accumulator and out); or a registered kernel's name, with ``declared`` another kernel's name to judge
    it against that declaration (``fpcert diagnose --declared-as``). ``case``: a generator spec or a case id of ``suite``;
    ``cases``: more cases that separate look-alikes (default ``case``: "uniform:m=32,n=32,k=256,seed=1"). A registered
    reduction, softmax or norm kernel's name is diagnosed on its operation's suite (``suite`` "certify" or "quick"), on the
    case ids given (default: every case). Returns the record as a ``Diagnosis``."""
    rows = isinstance(fn, str) and any(fn.split("~")[0] in kernel_names(True, op) for op in ("reduction", "softmax", "norm"))
    if case is None and not rows:
        case = "uniform:m=32,n=32,k=256,seed=1"
    all_cases = ([] if case is None else [case]) + list(cases)
    if isinstance(fn, str):
        if declared is not None and not isinstance(declared, str):
            raise InputError("fpcert.diagnose: for a registered kernel, declared is another registered kernel's name")
        rec = _fpcert.diagnose(None, None, fn, "", "", all_cases, suite, declared or "", bool(separate), bool(pairs), int(top))
        return Diagnosis(_json.loads(rec))
    t = traits(declared if declared is not None else "in=f32,acc=f32,out=f32")
    kname = "python:" + (name or getattr(fn, "__qualname__", None) or getattr(fn, "__name__", "fn"))
    desc = f"Python callable {kname}" + (f" on {device}" if device is not None else " (NumPy)")
    rec = _fpcert.diagnose(_gemm_adapter(fn, t, device), t, "", kname, desc, all_cases, suite, "", bool(separate), bool(pairs),
                           int(top))
    return Diagnosis(_json.loads(rec))


__all__ += ["diagnose", "Diagnosis"]

# Reductions, softmax and normalisation diagnosed (issue 47; docs/python.md, "Diagnosing a kernel").
from .diagnose_rows import diagnose_norm, diagnose_reduction, diagnose_softmax  # noqa: E402
__all__ += ["diagnose_softmax", "diagnose_norm", "diagnose_reduction"]
