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
