"""fpcert.certify_attention (docs/python.md, "Attention"): NumPy attention callables through the runner on the suite
attention_quick. A float64 evaluation rounded once into f16 meets the math-like declaration (it is more accurate than
it); the same with the scale applied after the softmax, with the causal mask shifted by one, or in f16 arithmetic
throughout is refused; bad declarations raise InputError."""
import numpy as np
import pytest

import fpcert


def _attention(Q, K, V, mask, causal, scale, *, wrong=None):
    Q, K, V = (np.asarray(x, np.float64) for x in (Q, K, V))
    g = Q.shape[1] // K.shape[1]
    K, V = np.repeat(K, g, axis=1), np.repeat(V, g, axis=1)
    s = Q @ K.transpose(0, 1, 3, 2)
    s = s if wrong == "scale_after" else s * scale
    Lq, Lk = s.shape[-2:]
    if mask is not None:
        s = s + np.asarray(mask, np.float64)
    if causal is not None:
        off = (Lk - Lq if causal == "bottom_right" else 0) + (1 if wrong == "causal_off_by_one" else 0)
        i, j = np.arange(Lq)[:, None], np.arange(Lk)[None, :]
        s = np.where(j <= i + off, s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    full = ~np.isfinite(m)
    e = np.exp(np.where(full, 0, s - np.where(full, 0, m)))
    e = np.where(np.isfinite(s), e, 0.0)
    l = e.sum(axis=-1, keepdims=True)
    o = (e / np.where(l == 0, 1, l)) @ V
    if wrong == "scale_after":
        o = o * scale
    return np.where(full, 0.0, o)


def exact_f16(Q, K, V, mask=None, causal=None, scale=1.0):
    return _attention(Q, K, V, mask, causal, scale).astype(np.float16)


def declaration():
    d = fpcert.sdpa_declaration("math", "f16")
    d["masks"] = ("top_left", "bottom_right", "additive")  # the NumPy callables take every mask
    return d


def test_float64_attention_rounded_once_passes_the_math_declaration():
    r = fpcert.certify_attention(exact_f16, **declaration())
    assert r.passed, r
    ran = [c for c in r.cases if c["status"] == "pass"]
    assert len(ran) >= 3


@pytest.mark.parametrize("wrong", ["scale_after", "causal_off_by_one"])
def test_wrong_attention_is_refused(wrong):
    def fn(Q, K, V, mask=None, causal=None, scale=1.0):
        return _attention(Q, K, V, mask, causal, scale, wrong=wrong).astype(np.float16)
    fn.__qualname__ = "attention_" + wrong
    r = fpcert.certify_attention(fn, **declaration())
    assert not r.passed
    assert any(c["status"] == "fail" for c in r.cases)


def test_bad_declarations_raise():
    with pytest.raises(fpcert.InputError, match="unknown shift"):
        fpcert.certify_attention(exact_f16, shift="sideways")
    with pytest.raises(fpcert.InputError, match="unknown mask"):
        fpcert.certify_attention(exact_f16, masks=("diagonal",))
    with pytest.raises(fpcert.InputError, match="no declaration of backend"):
        fpcert.sdpa_declaration("sdpa_of_the_future", "f16")
    with pytest.raises(fpcert.InputError, match="qk"):
        fpcert.certify_attention(exact_f16, qk="in=f17")


# ---- FP8 with descale factors (docs/attention.md, "FP8 and descale factors") ----------------------------------------------
def _fp8_fn(use_dv=True):
    """A float64 attention of the descaled e4m3 inputs (codes in uint8), O rounded once into bf16 (its bits)."""
    def fn(Q, K, V, mask=None, causal=None, scale=1.0, descale=None):
        assert descale is not None, "a declaration with descales gets them"
        dq, dk, dv = descale
        dec = lambda x: fpcert._fpcert.decode("e4m3", np.ascontiguousarray(x).astype(np.uint64)).reshape(x.shape)  # noqa: E731
        o = _attention(dq * dec(Q), dk * dec(K), (dv if use_dv else 1.0) * dec(V), mask, causal, scale)
        return fpcert.encode("bf16", o.reshape(-1)).astype(np.uint16).reshape(o.shape)
    fn.__qualname__ = "fp8_attention" + ("" if use_dv else "_without_dv")
    return fn


def _fp8_declaration():
    return dict(dtype="e4m3", out="bf16", qk="in=e4m3,acc=f32,out=f32", pv="in=e4m3,acc=f32,out=f32", shift="online",
                key_block=64, exp_form="base2", exp="ulps:2", normalize="reciprocal", masks=("top_left", "bottom_right"),
                descales=True, descale_roundings=2, p_offset=8)


def test_fp8_descales_reach_the_callable_and_the_reference():
    # Every case of attention_quick is made in e4m3 with per-tensor descales (fp8_scale=amax): the callable gets them,
    # computes attention of the descaled tensors and passes; the same ignoring dv is refused.
    r = fpcert.certify_attention(_fp8_fn(), **_fp8_declaration())
    assert r.passed, r
    assert len([c for c in r.cases if c["status"] == "pass"]) >= 3
    bad = fpcert.certify_attention(_fp8_fn(use_dv=False), **_fp8_declaration())
    assert not bad.passed
    assert any(c["status"] == "fail" for c in bad.cases)


def test_fp8_bad_declarations_raise():
    d = _fp8_declaration()
    with pytest.raises(fpcert.InputError, match="p_offset > 0 needs exp_form='base2'"):
        fpcert.certify_attention(_fp8_fn(), **{**d, "exp_form": "natural"})
    with pytest.raises(fpcert.InputError, match="descale_roundings"):
        fpcert.certify_attention(_fp8_fn(), **{**d, "descales": False})
