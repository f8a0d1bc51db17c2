"""fpcert.certify_attention_backward (docs/python.md, "Attention"; docs/backward.md): NumPy attention backward callables
through the runner on the suite attention_backward_quick. A float64 evaluation from the saved O and LSE rounded once into
f16 meets the math-like declaration (it is more accurate than it); the same with dQ's scale applied twice, or with D
never subtracted, is refused; a bad declaration raises InputError."""
import numpy as np
import pytest

import fpcert


def _backward(Q, K, V, O, G, L, mask, causal, scale, *, wrong=None):
    Q, K, V, O, G = (np.asarray(x, np.float64) for x in (Q, K, V, O, G))
    B, Hq, Lq, d = Q.shape
    Hkv, Lk = K.shape[1], K.shape[2]
    g = Hq // Hkv
    K, V = np.repeat(K, g, axis=1), np.repeat(V, g, axis=1)
    s = Q @ K.transpose(0, 1, 3, 2) * scale
    if mask is not None:
        s = s + np.asarray(mask, np.float64)
    if causal is not None:
        off = Lk - Lq if causal == "bottom_right" else 0
        i, j = np.arange(Lq)[:, None], np.arange(Lk)[None, :]
        s = np.where(j <= i + off, s, -np.inf)
    lse = np.asarray(L, np.float64)[..., None]
    with np.errstate(invalid="ignore", over="ignore"):
        P = np.where(np.isfinite(s) & np.isfinite(lse), np.exp(s - np.where(np.isfinite(lse), lse, 0)), 0.0)
    D = 0.0 if wrong == "no_d_subtract" else (G * O).sum(axis=-1, keepdims=True)
    dS = P * (G @ V.transpose(0, 1, 3, 2) - D)
    dQ = dS @ K * (scale * scale if wrong == "dq_scale_twice" else scale)
    dK = (dS.transpose(0, 1, 3, 2) @ Q * scale).reshape(B, Hkv, g, Lk, d).sum(axis=2)
    dV = (P.transpose(0, 1, 3, 2) @ G).reshape(B, Hkv, g, Lk, d).sum(axis=2)
    return dQ.astype(np.float16), dK.astype(np.float16), dV.astype(np.float16)


def declaration():
    d = fpcert.sdpa_backward_declaration("math", "f16")
    d.update(masks=("top_left", "bottom_right", "additive"), grouped_heads=True, reads_saved=True, masked_lse="+inf")
    return d


def test_float64_backward_rounded_once_passes_the_math_declaration():
    def exact(Q, K, V, O, G, L, mask=None, causal=None, scale=1.0):
        return _backward(Q, K, V, O, G, L, mask, causal, scale)
    r = fpcert.certify_attention_backward(exact, **declaration())
    assert r.passed, r
    assert len([c for c in r.cases if c["status"] == "pass"]) >= 3


@pytest.mark.parametrize("wrong", ["dq_scale_twice", "no_d_subtract"])
def test_wrong_backward_is_refused(wrong):
    def fn(Q, K, V, O, G, L, mask=None, causal=None, scale=1.0):
        return _backward(Q, K, V, O, G, L, mask, causal, scale, wrong=wrong)
    fn.__qualname__ = "attention_backward_" + wrong
    r = fpcert.certify_attention_backward(fn, **declaration())
    assert not r.passed
    assert any(c["status"] == "fail" for c in r.cases)


def test_bad_declaration_is_an_input_error():
    with pytest.raises(fpcert.InputError):
        fpcert.certify_attention_backward(lambda *a, **k: None, **dict(declaration(), exp_form="base3"))
