"""fpcert.diagnose_softmax, diagnose_norm and diagnose_reduction: which known arithmetic explains a Python softmax,
LayerNorm/RMSNorm or reduction callable's output (docs/python.md, "Diagnosing a kernel"; docs/diagnose.md, "Reductions,
softmax and normalisation"). The callable is declared exactly as certify_softmax / certify_norm / certify_reduction
declare it (the same keywords, the same defaults: read from those functions' signatures, never written twice), registered
only while fpcert's row diagnosis runs it and every hypothesis on the operation's suite cases, and returned as the
fpcert.Diagnosis record fpcert.diagnose returns."""
import inspect
import json as _json
import sys

from . import _fpcert
from .rows import _norm_declaration, _softmax_declaration, certify_norm, certify_softmax

#: certify_*'s keywords that are not the declaration (the run's: where its results go, which suite).
_RUN_KEYWORDS = {"suite", "name", "device", "json", "junit", "html"}


def _pkg():
    return sys.modules[__package__]


def _declaration(certify, given: dict, who: str) -> dict:
    """The declaration keywords of `certify` (its keyword-only parameters but the run's), each as given or at certify's
    default; InputError naming the accepted ones for any other keyword."""
    params = [p for p in inspect.signature(certify).parameters.values()
              if p.kind is inspect.Parameter.KEYWORD_ONLY and p.name not in _RUN_KEYWORDS]
    unknown = sorted(set(given) - {p.name for p in params})
    if unknown:
        raise _fpcert.InputError(f"{who}: unknown keyword(s) {', '.join(unknown)}; the declaration's are those of "
                                 f"fpcert.{certify.__name__}: {', '.join(p.name for p in params)}")
    return {p.name: given.get(p.name, p.default) for p in params}


def _diagnose(declaration, suite: str, cases, top: int):
    if isinstance(cases, str):
        cases = [cases]
    rec = _fpcert.diagnose_declared(declaration, suite, [str(c) for c in cases], int(top))
    return _pkg().Diagnosis(_json.loads(rec))


def diagnose_softmax(fn, *, suite: str = "softmax_quick", cases=(), top: int = 8, device=None, name: str | None = None,
                     **declaration):
    """Which known arithmetic explains a softmax (``log=True``: log-softmax) callable's output: ``fn`` and the declaration
    keywords exactly as ``fpcert.certify_softmax`` takes them (``log``, ``x``, ``out``, ``compute``, ``shift``, ``block``,
    ``exp``, ``log_impl``, ``sum``, ``order``, ``reciprocal``, ``masked_rows``, ``accepts_mask``, ``accepts_scale``; the same
    defaults), run with every hypothesis on the cases ``cases`` (case ids; empty: every case) of the softmax suite
    ``suite``. The hypotheses are made from the CPU model declaring the same arithmetic (or, where none does, from the
    callable itself: then only the envelope judges it). Returns the ``fpcert.Diagnosis`` record."""
    kw = _declaration(certify_softmax, declaration, "fpcert.diagnose_softmax")
    return _diagnose(_softmax_declaration(fn, device=device, name=name, **kw), suite, cases, top)


def diagnose_norm(fn, kind: str = "layernorm", *, suite: str = "norm_quick", cases=(), top: int = 8, device=None,
                  name: str | None = None, **declaration):
    """Which known arithmetic explains a LayerNorm (``kind="layernorm"``) or RMSNorm (``kind="rmsnorm"``) callable's output:
    ``fn(x, weight, bias, eps)`` and the declaration keywords exactly as ``fpcert.certify_norm`` takes them (``variance``,
    ``parts``, ``x``, ``out``, ``compute``, ``acc``, ``rsqrt``), on the cases ``cases`` of the norm suite ``suite``.
    Returns the ``fpcert.Diagnosis`` record."""
    kw = _declaration(certify_norm, declaration, "fpcert.diagnose_norm")
    return _diagnose(_norm_declaration(fn, kind, device=device, name=name, **kw), suite, cases, top)


def diagnose_reduction(fn, kind: str = "sum", *, suite: str = "reduce_quick", cases=(), top: int = 8, name: str | None = None,
                       **declaration):
    """Which known arithmetic explains a reduction callable's output (``kind``: sum, dot, nrm2): ``fn`` and the declaration
    keywords exactly as ``fpcert.certify_reduction`` takes them (``x``, ``y``, ``acc``, ``out``, ``rounding``, ``fma``,
    ``order``, ``deterministic``, ``nrm2_scaled``), on the cases ``cases`` of the reduction suite ``suite``. Returns the
    ``fpcert.Diagnosis`` record."""
    p = _pkg()
    kw = _declaration(p.certify_reduction, declaration, "fpcert.diagnose_reduction")
    return _diagnose(p._reduction_declaration(fn, kind, name=name, **kw), suite, cases, top)
