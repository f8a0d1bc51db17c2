"""fpcert.certify_elementwise: a Python elementwise function (numpy.exp, torch.exp on a device, a GELU, a binary
f(x, x2)) called on every input of its format (every 16-bit code; every fp32 code in chunks of 2^22) or on the special
and sampled inputs, each result judged against f(x) correctly rounded (MPFR where the fast reference cannot decide) and
the claim, through fpcert's runner (docs/elementwise.md, "From Python")."""
import numpy as np

from . import _fpcert
from .rows import _finish, _kname, _pkg

_BINARY = ("div", "pow", "atan2", "fmax", "fmin")


def _adapter(fn, fmt, out, device, binary):
    """adapter(x_codes, x2_codes or None) -> y codes, as the native part calls it: 1-D arrays in format fmt (float32,
    float16, bfloat16 as its uint16 bits; torch tensors on `device` when it is given, moved back after the call)."""
    p = _pkg()

    def arr(codes):
        a = p._from_codes(codes, fmt)
        return p._to_device(a, fmt, device) if device is not None else a

    def adapter(x_codes, x2_codes):
        r = fn(arr(x_codes), arr(x2_codes)) if binary else fn(arr(x_codes))
        if device is not None and str(device).startswith("cuda"):
            p._torch().cuda.synchronize()  # a failure inside the kernel surfaces here, in this case
        c, tc = p._to_numpy(r, out, ndim=1)
        return p._codes(c, tc, out).astype(p._CONTAINER[p._CONTAINER_BITS[out]])
    return adapter


def certify_elementwise(fn, function: str, dtype: str = "f16", ulps: float | None = None, *, slope: float = 0.0, domain=None,
                        bound: float | None = None, relative: bool = False, x2_domain=None, out: str | None = None,
                        inputs: str | None = None, device=None, daz: bool = False, ftz: bool = False, source: str = "",
                        name: str | None = None, json=None, junit=None, html=None):
    """Certify ``fn``, an elementwise ``function`` (exp, exp2, exp10, log, log2, log10, sqrt, rsqrt, expm1, log1p, tanh,
    sinh, cosh, cbrt, erf, erfc, sigmoid, silu, softplus, gelu, gelu_tanh, sin, cos, tan, sinpi, cospi; binary: div, pow,
    atan2 as atan2(y=x, x=x2), fmax, fmin), on inputs of format ``dtype`` (f16, bf16, f32; binary functions f32).

    ``fn(x)`` (binary: ``fn(x, x2)``) receives a 1-D array: NumPy float32 / float16, bfloat16 as uint16 bits; torch tensors
    on ``device`` when it is given (``device="cpu"``: torch CPU tensors; results moved back to the host after the call). It returns the results in format ``out``
    (default ``dtype``): a NumPy array or a torch tensor; values ``out`` cannot hold exactly are an error (fpcert never
    rounds a kernel's result for it).

    The claim: ``ulps`` None, correctly rounded; else at most ``ulps`` + floor(``slope`` |x|) ulp; ``bound`` an absolute
    (``relative``: relative) error bound, ``ulps`` then the claim outside ``domain``; ``domain`` = (lo, hi) the inputs
    it covers; ``x2_domain`` = (lo, hi) the |x2| it covers (binary); ``daz`` / ``ftz`` subnormal inputs read as 0 /
    subnormal results flushed; ``source`` where the claim comes from.

    ``inputs``: "all" (the default for unary functions): every input code, 65,536 for f16 and bf16 (suite elementwise),
    all 2^32 for f32 in chunks of 2^22 (suite elementwise_full; minutes on a CPU host); "sample" (the default for binary
    functions): the suite elementwise, for f32 the special and threshold inputs and a 2^19 Philox sample, for a binary
    function every pair of 27 special values and 2^18 designed pairs, for 16-bit formats still every code; "full": the
    suite elementwise_full (binary: 2^24 designed pairs). Returns the run's Results (``passed``, ``cases``; each case's
    ``elementwise`` record: max_ulps, worst, above_claim, listed counterexamples, histogram)."""
    binary = function in _BINARY
    inputs = inputs or ("sample" if binary else "all")
    if inputs not in ("all", "sample", "full"):
        raise _fpcert.InputError(f"fpcert: inputs must be 'all', 'sample' or 'full', not {inputs!r}")
    if binary and inputs == "all":
        raise _fpcert.InputError(f"fpcert: {function} takes two inputs, 2^64 pairs: inputs='sample' (729 special and 2^18 designed "
                                 "pairs) or 'full' (2^24 designed pairs)")
    suite = "elementwise_full" if inputs == "full" or (inputs == "all" and dtype == "f32") else "elementwise"
    out = out or dtype
    inf = float("inf")
    lo, hi = domain if domain is not None else (-inf, inf)
    x2_lo, x2_hi = x2_domain if x2_domain is not None else (0.0, inf)
    kname = _kname(fn, name)
    run = _fpcert.certify_elementwise(_adapter(fn, dtype, out, device, binary), function, dtype, out, -1.0 if ulps is None else float(ulps),
                                      float(slope), 0.0 if bound is None else float(bound), bool(relative), float(lo), float(hi),
                                      float(x2_lo), float(x2_hi), bool(daz), bool(ftz), source or "declared by the caller",
                                      kname, f"Python {function} {kname}", suite,
                                      f"python: fpcert.certify_elementwise({kname}, {function!r}, dtype={dtype!r}, inputs={inputs!r})")
    return _finish(run, json, junit, html)
